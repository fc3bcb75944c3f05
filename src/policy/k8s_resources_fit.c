/*
 * policy/k8s_resources_fit.c - kube-scheduler's NodeResourcesFit scoring.
 *
 * The baseline a Kubernetes user has today: NodeResourcesFit with the
 * LeastAllocated strategy (kube-scheduler's default: spread) or
 * MostAllocated (its bin-packing option), over CPU, memory and GPU with
 * weight 1 each.  For each resource r the node can offer (capacity > 0):
 *
 *   requested_r = in use on the node + the pod's request
 *   least_r = (capacity_r - requested_r) * 100 / capacity_r  (0 if over)
 *   most_r  = min(requested_r, capacity_r) * 100 / capacity_r
 *   score   = sum_r weight_r * s_r / sum_r weight_r           (integers)
 *
 * As in kube-scheduler, the GPU (an extended resource) is skipped for pods
 * that do not request it, and a zero CPU or memory request counts as 100
 * milli-CPU / 200 MiB.  The GPU is measured in milli-GPU so that shared GPUs
 * count by their share.  Ties go to a uniformly random top node, as
 * kube-scheduler's selectHost does.  The GPU inside the node: best fit.
 */
#include "policy/policy.h"

#define NONZERO_CPU_MILLI 100
#define NONZERO_MEM_MIB 200

static int64_t least_requested(int64_t requested, int64_t capacity)
{
	if (requested > capacity)
		return 0;
	return (capacity - requested) * 100 / capacity;
}

static int64_t most_requested(int64_t requested, int64_t capacity)
{
	if (requested > capacity)
		requested = capacity;
	return requested * 100 / capacity;
}

static int64_t resources_fit_score(const struct gf_policy_env *env, size_t node,
				   const struct gf_pod_spec *p,
				   int64_t (*fn)(int64_t requested, int64_t capacity))
{
	const struct gf_node_spec *s = gf_cluster_spec(env->cluster, node);
	const struct gf_node *nd = gf_cluster_node(env->cluster, node);
	int64_t cpu_req = p->cpu_milli ? p->cpu_milli : NONZERO_CPU_MILLI;
	int64_t mem_req = p->mem_mib ? p->mem_mib : NONZERO_MEM_MIB;
	int64_t sum = 0, weights = 0;

	if (s->cpu_milli > 0) {
		sum += fn(s->cpu_milli - nd->cpu_free + cpu_req, s->cpu_milli);
		weights++;
	}
	if (s->mem_mib > 0) {
		sum += fn(s->mem_mib - nd->mem_free + mem_req, s->mem_mib);
		weights++;
	}
	if (p->gpu_count > 0 && s->ngpus > 0) {
		int64_t cap = (int64_t)s->ngpus * GF_MILLI_PER_GPU;

		sum += fn(cap - nd->gpu_free_total + gf_pod_gpu_request(p), cap);
		weights++;
	}
	return weights ? sum / weights : 0;
}

static int64_t least_allocated_score(void *state, const struct gf_policy_env *env, size_t node,
				     const struct gf_pod_spec *p, int *hint)
{
	(void)state;
	(void)hint;
	return resources_fit_score(env, node, p, least_requested);
}

static int64_t most_allocated_score(void *state, const struct gf_policy_env *env, size_t node,
				    const struct gf_pod_spec *p, int *hint)
{
	(void)state;
	(void)hint;
	return resources_fit_score(env, node, p, most_requested);
}

const struct gf_policy_ops gf_policy_k8s_least_allocated = {
	.name = "k8s-least-allocated",
	.label = "K8sLeastAllocated",
	.summary = "kube-scheduler default: NodeResourcesFit LeastAllocated (spread)",
	.gpu_select = GF_GPUSEL_BEST,
	.tie_break = GF_TIE_RANDOM,
	.cacheable = true,
	.score = least_allocated_score,
};

const struct gf_policy_ops gf_policy_k8s_most_allocated = {
	.name = "k8s-most-allocated",
	.label = "K8sMostAllocated",
	.summary = "kube-scheduler bin-packing: NodeResourcesFit MostAllocated",
	.gpu_select = GF_GPUSEL_BEST,
	.tie_break = GF_TIE_RANDOM,
	.cacheable = true,
	.score = most_allocated_score,
};
