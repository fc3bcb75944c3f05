/*
 * policy/dot_product.c - DotProd: Tetris-style alignment of free and requested.
 *
 * FGD paper's `DotProd1000`, dimExt merge, norm max (spec 4.2).  With the
 * node's free vector and the pod's request normalised by a fixed "largest
 * machine" (128 cores, 8 GPUs):
 *
 *   v_n = (c_n / 128000, G_n / 8000)        v_q = (cpu_q / 128000, gpu_q / 8000)
 *   score = floor(100 * (1 - (v_n . v_q) / 2))
 *
 * The smallest dot product wins: nodes with little free capacity in the
 * dimensions the pod uses.  GPU choice: best fit.
 */
#include <math.h>

#include "policy/policy.h"

static int64_t dot_product_score(void *state, const struct gf_policy_env *env, size_t node,
				 const struct gf_pod_spec *p, int *hint)
{
	const struct gf_node *nd = gf_cluster_node(env->cluster, node);
	double dot = ((double)nd->cpu_free / 128000.0) * ((double)p->cpu_milli / 128000.0) +
		     ((double)nd->gpu_free_total / 8000.0) * ((double)gf_pod_gpu_request(p) / 8000.0);

	(void)state;
	(void)hint;
	return (int64_t)floor(100.0 * (1.0 - dot / 2.0));
}

const struct gf_policy_ops gf_policy_dot_product = {
	.name = "dot-product",
	.label = "DotProd",
	.summary = "smallest dot product of free and requested (CPU, GPU) vectors (Tetris)",
	.in_paper = true,
	.gpu_select = GF_GPUSEL_BEST,
	.tie_break = GF_TIE_PRIORITY,
	.cacheable = true,
	.score = dot_product_score,
};
