/*
 * fuzz/fuzz_k8s_podgroup.c - libFuzzer harness for the PodGroup decoder
 * (k8s/codec.c) and the gang store (k8s/gangs.c).
 *
 * The input is a PodGroup as a watch would deliver it.  The decoder must
 * return GF_OK or GF_PARSE with a message naming where; a decoded group has
 * a name and counts within their ranges, and once stored it is found again
 * for a pod of its namespace labelled with its name (names that fit a
 * label value).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzzutil.h"
#include "k8s/codec.h"
#include "k8s/gangs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct gf_k8s_podgroup g;
	char err[300] = "";
	if (!gf_fuzz_decoded(gf_k8s_podgroup_decode_text((const char *)data, size, &g, err, sizeof(err)), err))
		return 0;
	if (!g.name[0] || !g.ns[0] || g.min_member < 0 || g.timeout_s < 0)
		abort();
	gf_gangs *s;
	if (gf_gangs_create(&s))
		return 0;
	if (!gf_gangs_set(s, &g) && strlen(g.name) < GF_K8S_LABEL_VALUE_MAX) {
		static struct gf_k8s_pod p;
		memset(&p, 0, sizeof(p));
		memcpy(p.ns, g.ns, sizeof(p.ns));
		memcpy(p.pod_group, g.name, strlen(g.name) + 1);
		struct gf_gang_ref r;
		if (!gf_gangs_of_pod(s, &p, &r) || !r.known || r.min_member != g.min_member)
			abort();
		gf_gangs_delete(s, g.ns, g.name);
		if (gf_gangs_count(s) != 0 || !gf_gangs_of_pod(s, &p, &r) || r.known)
			abort();
	}
	gf_gangs_destroy(s);
	return 0;
}
