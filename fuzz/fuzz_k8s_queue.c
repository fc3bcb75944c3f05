/*
 * fuzz/fuzz_k8s_queue.c - libFuzzer harness for the Queue decoder
 * (k8s/queues.c): Queue objects (gpufleet.io/v1alpha1) as a watch delivers
 * them.
 *
 * The decoder must return GF_OK or GF_PARSE with a message; a decoded
 * Queue keeps the rules (a name, quantities in range, lendingLimit <=
 * nominal, limits only with a cohort, weight >= 1), and the engine quota
 * made from it (gf_queues_to_quota, no models known) fails only on a
 * per-model entry, with a message.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/model.h"
#include "fuzzutil.h"
#include "k8s/queues.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct gf_queue_def q;
	char err[300] = "";
	if (!gf_fuzz_decoded(gf_k8s_queue_decode_text((const char *)data, size, &q, err, sizeof(err)), err))
		return 0;
	if (!q.name[0] || q.nominal < 0 || q.weight < 1 || q.nmodels > GF_QUOTA_MAX_MODELS ||
	    q.borrowing_limit < 0 || q.lending_limit < 0 ||
	    (q.lending_limit != GF_QUOTA_UNLIMITED && q.lending_limit > q.nominal) ||
	    (!q.cohort[0] && (q.lending_limit != GF_QUOTA_UNLIMITED || q.borrowing_limit != GF_QUOTA_UNLIMITED)))
		abort();
	struct gf_catalog cat;
	if (gf_catalog_init(&cat))
		return 0;
	struct gf_queue_file f = { &q, 1 };
	struct gf_queue_quota out;
	struct gf_queues_error qe = { "", "" };
	gf_err e = gf_queues_to_quota(&f, &cat, "fuzz", &out, &qe);
	if ((e && (!qe.msg[0] || !q.nmodels)) || (!e && out.nominal != q.nominal))
		abort();
	gf_catalog_release(&cat);
	/* the pod rule on the name as a label value */
	static struct gf_k8s_pod p;
	memset(&p, 0, sizeof(p));
	memcpy(p.queue, q.name, strlen(q.name) < sizeof(p.queue) ? strlen(q.name) + 1 : 1);
	const char *r = gf_k8s_pod_queue(&p, NULL);
	if (p.queue[0] && (!r || strcmp(r, p.queue)))
		abort();
	return 0;
}
