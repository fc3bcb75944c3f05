/*
 * policy/fgd.c - FGD: Fragmentation Gradient Descent (Weng et al., ATC'23).
 *
 * Place each pod where the target-workload fragmentation F_n
 * (cluster/frag.h) grows least, through the reference artifact's sigmoid
 * quantisation (spec 4.6.3):
 *
 *   score = floor(100 * sigmoid((F_before - F_after) / 1000))
 *
 * where F_after is F_n of the node with the pod placed.  A GPU-sharing pod is
 * tried on every GPU that fits; the node's score is the best of them and the
 * GPU is the lowest index reaching it.  Other pods are placed on the GPUs
 * binding would take (ascending free, stable).  Quantisation makes many nodes
 * tie (Delta = 0 gives 50): the framework's fixed priority order breaks them,
 * and both details are needed to reproduce the paper (spec 7.2).
 *
 * Cost: F_n is O(classes x GPUs).  F_before is cached per node version; GPUs
 * with equal free amounts give the same F_after and are evaluated once
 * (feature DEDUP_GPU_CANDIDATES).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/features.h"
#include "policy/policy.h"

struct fgd_state {
	size_t n;
	uint32_t *version;	/* node version F_before was computed at; 0 = none */
	double *before;
	bool dedup;
};

static gf_err fgd_create(const struct gf_policy_env *env, void **out)
{
	struct fgd_state *st = calloc(1, sizeof(*st));

	if (!st)
		return GF_NOMEM;
	st->n = gf_cluster_nnodes(env->cluster);
	st->version = calloc(st->n, sizeof(*st->version));
	st->before = calloc(st->n, sizeof(*st->before));
	if (!st->version || !st->before) {
		free(st->version);
		free(st->before);
		free(st);
		return GF_NOMEM;
	}
	st->dedup = env->features.on[GF_FEAT_DEDUP_GPU_CANDIDATES];
	*out = st;
	return GF_OK;
}

static void fgd_destroy(void *state)
{
	struct fgd_state *st = state;

	free(st->version);
	free(st->before);
	free(st);
}

int64_t gf_fgd_quantise(double before, double after)
{
	double sig = 1.0 / (1.0 + exp(-(before - after) / 1000.0));

	return (int64_t)floor(100.0 * sig);
}

static int64_t fgd_score(void *state, const struct gf_policy_env *env, size_t node,
			 const struct gf_pod_spec *p, int *hint)
{
	struct fgd_state *st = state;
	const struct gf_node *nd = gf_cluster_node(env->cluster, node);
	const struct gf_target *t = env->target;
	uint16_t g[GF_MAX_GPUS];
	int64_t cpu_after = nd->cpu_free - p->cpu_milli;
	double before;

	if (st->version[node] != nd->version) {
		st->before[node] = gf_frag_node(t, nd->model, nd->cpu_free, nd->gpu_free, nd->ngpus);
		st->version[node] = nd->version;
	}
	before = st->before[node];
	memcpy(g, nd->gpu_free, sizeof(g));

	if (p->gpu_count == 1 && p->gpu_milli < GF_MILLI_PER_GPU) {
		int64_t best = -1;
		uint16_t tried[GF_MAX_GPUS];
		int ntried = 0;

		for (int i = 0; i < nd->ngpus; i++) {
			bool dup = false;
			int64_t s;

			if (g[i] < p->gpu_milli)
				continue;
			for (int k = 0; st->dedup && k < ntried; k++)
				dup |= tried[k] == g[i];
			if (dup)
				continue;	/* same multiset, same score; the lower index has it */
			tried[ntried++] = g[i];
			g[i] -= (uint16_t)p->gpu_milli;
			s = gf_fgd_quantise(before, gf_frag_node(t, nd->model, cpu_after, g, nd->ngpus));
			g[i] += (uint16_t)p->gpu_milli;
			if (s > best) {
				best = s;
				*hint = i;
			}
		}
		return best;
	}

	uint8_t pick[GF_MAX_GPUS];
	int n = gf_gpus_ascending_fit(nd, p->gpu_count, p->gpu_milli, pick);

	for (int k = 0; k < n; k++)
		g[pick[k]] -= (uint16_t)p->gpu_milli;
	return gf_fgd_quantise(before, gf_frag_node(t, nd->model, cpu_after, g, nd->ngpus));
}

const struct gf_policy_ops gf_policy_fgd = {
	.name = "fgd",
	.label = "FGD",
	.summary = "least growth of expected fragmentation (FGD, USENIX ATC'23)",
	.in_paper = true,
	.needs_target = true,
	.gpu_select = GF_GPUSEL_POLICY,
	.tie_break = GF_TIE_PRIORITY,
	.cacheable = true,
	.create = fgd_create,
	.destroy = fgd_destroy,
	.score = fgd_score,
};
