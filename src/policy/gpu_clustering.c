/*
 * policy/gpu_clustering.c - GpuClustering: keep pods of one kind together.
 *
 * FGD paper's `GpuClustering1000` (spec 4.3).  A GPU pod's tag is "share"
 * for GPU-sharing pods and "k-gpu" for pods of k whole GPUs; a node's tags are
 * those of its GPU pods.  With base = floor(25 * (8000 - G_n) / 8000):
 *
 *   node holds the pod's tag and no other      base + 75
 *   node holds the pod's tag and others        base + 50
 *   node holds no GPU pod                      base + 25
 *   node holds GPU pods, none with the tag     base
 *
 * CPU-only pods score 0 everywhere (the tie-break order decides).  GPU
 * choice: best fit.
 */
#include "policy/policy.h"

static int64_t gpu_clustering_score(void *state, const struct gf_policy_env *env, size_t node,
				    const struct gf_pod_spec *p, int *hint)
{
	const struct gf_node *nd = gf_cluster_node(env->cluster, node);
	int tag = gf_pod_tag(p);
	int64_t base;

	(void)state;
	(void)hint;
	if (tag < 0)
		return 0;
	base = 25 * (8000 - (int64_t)nd->gpu_free_total) / 8000;
	if (nd->tag_pods[tag] > 0)
		return base + (nd->ntags == 1 ? 75 : 50);
	if (nd->ntags == 0)
		return base + 25;
	return base;
}

const struct gf_policy_ops gf_policy_gpu_clustering = {
	.name = "gpu-clustering",
	.label = "GpuClustering",
	.summary = "prefer nodes already running GPU pods of the same kind",
	.in_paper = true,
	.gpu_select = GF_GPUSEL_BEST,
	.tie_break = GF_TIE_PRIORITY,
	.cacheable = true,
	.score = gpu_clustering_score,
};
