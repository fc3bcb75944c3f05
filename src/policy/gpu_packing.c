/*
 * policy/gpu_packing.c - GpuPacking: fill partly used GPUs first.
 *
 * FGD paper's `GpuPacking1000` (spec 4.4).  CPU-only pods score 0.  For a
 * GPU pod, with ff = fully free GPUs on the node, the first case that holds:
 *
 *   1. every GPU fully free:               max(33 - ff, ff)       (<= 32)
 *   2. simulate the pick (ascending free, stable); u = picked GPUs that
 *      were fully free; u > 0:            max(50 - u, 33)        (33..49)
 *   3. only partly used GPUs picked; S = sum floor(g * 100 / 1000) over them:
 *                                          max(100 - S / 10, 50)  (50..100)
 *
 * So: a partly used GPU, then free GPUs of a node already in use, then an
 * untouched node (smaller nodes first).  GPU choice: best fit.
 */
#include "policy/policy.h"

static int64_t imax(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

static int64_t gpu_packing_score(void *state, const struct gf_policy_env *env, size_t node,
				 const struct gf_pod_spec *p, int *hint)
{
	const struct gf_node *nd = gf_cluster_node(env->cluster, node);
	uint8_t pick[GF_MAX_GPUS];
	int n, u = 0;
	int64_t sum = 0;

	(void)state;
	(void)hint;
	if (p->gpu_count == 0)
		return 0;
	if (nd->nfull == nd->ngpus)
		return imax(33 - nd->nfull, nd->nfull);
	n = gf_gpus_ascending_fit(nd, p->gpu_count, p->gpu_milli, pick);
	for (int k = 0; k < n; k++) {
		uint16_t g = nd->gpu_free[pick[k]];

		u += g == GF_MILLI_PER_GPU;
		sum += g * 100 / GF_MILLI_PER_GPU;
	}
	if (u > 0)
		return imax(50 - u, 33);
	return imax(100 - sum / 10, 50);
}

const struct gf_policy_ops gf_policy_gpu_packing = {
	.name = "gpu-packing",
	.label = "GpuPacking",
	.summary = "fill partly used GPUs, then used nodes, then untouched small nodes",
	.in_paper = true,
	.gpu_select = GF_GPUSEL_BEST,
	.tie_break = GF_TIE_PRIORITY,
	.cacheable = true,
	.score = gpu_packing_score,
};
