/*
 * fuzz/fuzz_k8s_pdb.c - libFuzzer harness for the PodDisruptionBudget
 * decoder (k8s/pdb.c): policy/v1 objects as a watch delivers them.
 *
 * The decoder must return GF_OK or GF_PARSE with a message; a decoded
 * budget has a name and a namespace, a non-negative count, at most
 * GF_MATCH_MAX_EXPRS expressions with a key and a known operator (values
 * for In/NotIn only), and selects the same pods as itself; matching a pod
 * whose labels are the budget's own matchLabels never crashes, and it
 * covers that pod when it has no expressions.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzzutil.h"
#include "k8s/pdb.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct gf_k8s_pdb b;
	static struct gf_k8s_pod p;
	char err[300] = "";

	if (!gf_fuzz_decoded(gf_k8s_pdb_decode_text((const char *)data, size, &b, err, sizeof(err)), err))
		return 0;
	if (!b.name[0] || !b.ns[0] || b.allowed < 0 || b.exprs.nexprs < 0 || b.exprs.nexprs > GF_MATCH_MAX_EXPRS ||
	    b.match_len > sizeof(b.match) || !gf_k8s_pdb_same_selector(&b, &b))
		abort();
	for (int x = 0; x < b.exprs.nexprs; x++) {
		const struct gf_match_expr *e = &b.exprs.e[x];
		if (!e->key[0] || e->op > GF_OP_DOES_NOT_EXIST ||
		    (e->op == GF_OP_IN || e->op == GF_OP_NOT_IN) != (e->values[0] != '\0'))
			abort();
	}
	memset(&p, 0, sizeof(p));
	memcpy(p.ns, b.ns, sizeof(p.ns));
	if (b.match_len <= sizeof(p.labels)) {
		memcpy(p.labels, b.match, b.match_len);
		p.labels_len = b.match_len;
	}
	bool covers = gf_k8s_pdb_covers(&b, &p);
	if (b.selects && !b.exprs.nexprs && b.match_len <= sizeof(p.labels) && !covers)
		abort();
	if (!b.selects && covers)
		abort();
	return 0;
}
