/*
 * policy/best_fit.c - BestFit: leave the least free capacity behind.
 *
 * FGD paper's `BestFit1000` (spec 4.5).  The weighted free capacity left
 * after placement, normalised by the largest machine (128 cores, 8 GPUs):
 *
 *   d = 0.5 * (c_n - cpu_q) / 128000 + 0.5 * (G_n - gpu_q) / 8000
 *   score = floor(100 * (1 - d))
 *
 * Memory is not scored.  The reference's min-max normalisation to 0..100
 * keeps the arg-max and is skipped.  GPU choice: best fit.
 */
#include <math.h>

#include "policy/policy.h"

static int64_t best_fit_score(void *state, const struct gf_policy_env *env, size_t node,
			      const struct gf_pod_spec *p, int *hint)
{
	const struct gf_node *nd = gf_cluster_node(env->cluster, node);
	double d = 0.5 * (double)(nd->cpu_free - p->cpu_milli) / 128000.0 +
		   0.5 * (double)(nd->gpu_free_total - gf_pod_gpu_request(p)) / 8000.0;

	(void)state;
	(void)hint;
	return (int64_t)floor(100.0 * (1.0 - d));
}

const struct gf_policy_ops gf_policy_best_fit = {
	.name = "best-fit",
	.label = "BestFit",
	.summary = "the node left with the least free CPU and GPU after placement",
	.in_paper = true,
	.gpu_select = GF_GPUSEL_BEST,
	.tie_break = GF_TIE_PRIORITY,
	.cacheable = true,
	.score = best_fit_score,
};
