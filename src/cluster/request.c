/*
 * cluster/request.c - GPU-memory-to-share resolution (see request.h).
 *
 * The share of a memory request on GPUs of M MiB is ceil(mem * 1000 / M),
 * capped at a whole GPU; 64-bit arithmetic (mem and M are MiB, so no
 * overflow).  With no node given, M is the smallest memory among the allowed
 * models that hold `mem`: the share is then an upper bound on what the pod
 * needs on any GPU it may land on (a larger GPU gives it more memory than it
 * asked, never less), and the narrowed constraint keeps it off smaller GPUs.
 * The narrowed constraint lists the models in catalog order, so the same
 * cluster gives the same interned text whatever order pods arrive in.
 * O(models); the only allocation is the catalog's interning.
 */
#include <stdio.h>
#include <string.h>

#include "cluster/request.h"

enum gf_request_result gf_request_resolve(struct gf_catalog *cat, const int64_t *model_mem, size_t nnodes,
					  const struct gf_request *rq, int64_t node_gpu_mem,
					  struct gf_pod_spec *eff, char *msg, size_t msglen)
{
	const char *model = rq->model ? rq->model : "";

	*eff = *rq->req;
	eff->spec = 0;
	if (rq->invalid && rq->invalid[0]) {
		snprintf(msg, msglen, "invalid GPU request: %s", rq->invalid);
		return GF_REQUEST_INVALID;
	}
	if (!eff->gpu_count)
		return GF_REQUEST_OK;
	if (model[0] && gf_catalog_spec(cat, model, strlen(model), &eff->spec)) {
		snprintf(msg, msglen, "invalid GPU request: model constraint '%.100s' not usable "
				      "(too long or too many distinct constraints)", model);
		return GF_REQUEST_INVALID;
	}
	if (!rq->req->gpu_mem_mib)
		return GF_REQUEST_OK;
	int64_t mem = rq->req->gpu_mem_mib, best = 0;
	if (node_gpu_mem > 0) {
		/* On a known node (accounting a bound pod): that node's GPUs. */
		best = node_gpu_mem;
	} else {
		char text[GF_SPEC_MAX];
		size_t n = 0;
		text[0] = '\0';
		for (int m = 0; m < cat->nmodels; m++) {
			if (model_mem[m] < mem || !gf_catalog_allows(cat, eff->spec, m))
				continue;
			int k = snprintf(text + n, sizeof(text) - n, "%s%s", n ? "|" : "", cat->models[m]);
			if (k < 0 || (size_t)k >= sizeof(text) - n)
				break;
			n += (size_t)k;
			if (!best || model_mem[m] < best)
				best = model_mem[m];
		}
		if (!best) {
			snprintf(msg, msglen, "0/%zu nodes are available: no GPU model%s with %lld MiB "
					      "per GPU.", nnodes,
				 model[0] ? " allowed by the model constraint" : "", (long long)mem);
			return GF_REQUEST_UNSCHEDULABLE;
		}
		if (gf_catalog_spec(cat, text, n, &eff->spec)) {
			snprintf(msg, msglen, "invalid GPU request: too many distinct model constraints");
			return GF_REQUEST_INVALID;
		}
	}
	int64_t need = (mem * GF_MILLI_PER_GPU + best - 1) / best;
	if (need > GF_MILLI_PER_GPU)
		need = GF_MILLI_PER_GPU;
	if (!rq->milli_given || need > eff->gpu_milli)
		eff->gpu_milli = (int)need;
	return GF_REQUEST_OK;
}
