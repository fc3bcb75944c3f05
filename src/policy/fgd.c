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
 * (feature DEDUP_GPU_CANDIDATES).  The cache and both scores are shared
 * with the policies built on FGD through policy/fgd.h.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/features.h"
#include "policy/fgd.h"

gf_err gf_fgd_cache_init(struct gf_fgd_cache *c, const struct gf_policy_env *env)
{
	memset(c, 0, sizeof(*c));
	c->n = gf_cluster_nnodes(env->cluster);
	c->version = calloc(c->n, sizeof(*c->version));
	c->before = calloc(c->n, sizeof(*c->before));
	if (!c->version || !c->before) {
		gf_fgd_cache_release(c);
		return GF_NOMEM;
	}
	c->dedup = env->features.on[GF_FEAT_DEDUP_GPU_CANDIDATES];
	return GF_OK;
}

void gf_fgd_cache_release(struct gf_fgd_cache *c)
{
	free(c->version);
	free(c->before);
	memset(c, 0, sizeof(*c));
}

double gf_fgd_measure(const struct gf_fgd_cache *c, const struct gf_target *t, int model,
		      int64_t cpu_free, const uint16_t *g, int ngpus)
{
	double f = gf_frag_node(t, model, cpu_free, g, ngpus);
	double s = 0;

	if (c->strand_r <= 0)
		return f;
	for (int i = 0; i < ngpus; i++)
		s += g[i];
	s -= (double)cpu_free / c->strand_r;
	return s > 0 ? f + s : f;
}

double gf_fgd_cache_before(struct gf_fgd_cache *c, const struct gf_target *t, size_t node,
			   const struct gf_node *nd)
{
	if (c->version[node] != nd->version) {
		c->before[node] = gf_fgd_measure(c, t, nd->model, nd->cpu_free, nd->gpu_free, nd->ngpus);
		c->version[node] = nd->version;
	}
	return c->before[node];
}

int64_t gf_fgd_quantise(double before, double after)
{
	double sig = 1.0 / (1.0 + exp(-(before - after) / 1000.0));

	return (int64_t)floor(100.0 * sig);
}

int64_t gf_fgd_sharing_score(const struct gf_fgd_cache *c, const struct gf_target *t,
			     const struct gf_node *nd, const struct gf_pod_spec *p, double before,
			     const double *waste, int *hint)
{
	uint16_t g[GF_MAX_GPUS], tried[GF_MAX_GPUS];
	int64_t cpu_after = nd->cpu_free - p->cpu_milli;
	int64_t best = -1;
	double best_growth = 0;
	int ntried = 0;

	memcpy(g, nd->gpu_free, sizeof(g));
	for (int i = 0; i < nd->ngpus; i++) {
		bool dup = false;
		double growth;
		int64_t s;

		if (g[i] < p->gpu_milli)
			continue;
		for (int k = 0; c->dedup && k < ntried; k++)
			dup |= tried[k] == g[i];
		if (dup)
			continue;	/* same multiset, same score; the lower index has it */
		tried[ntried++] = g[i];
		growth = waste ? waste[g[i] - p->gpu_milli] - waste[g[i]] : 0;
		g[i] -= (uint16_t)p->gpu_milli;
		s = gf_fgd_quantise(before, gf_fgd_measure(c, t, nd->model, cpu_after, g, nd->ngpus));
		g[i] += (uint16_t)p->gpu_milli;
		if (s > best || (s == best && growth < best_growth)) {
			best = s;
			best_growth = growth;
			*hint = i;
		}
	}
	return best;
}

int64_t gf_fgd_placed_score(const struct gf_fgd_cache *c, const struct gf_target *t,
			    const struct gf_node *nd, const struct gf_pod_spec *p, double before)
{
	uint16_t g[GF_MAX_GPUS];
	uint8_t pick[GF_MAX_GPUS];
	int n = gf_gpus_ascending_fit(nd, p->gpu_count, p->gpu_milli, pick);

	memcpy(g, nd->gpu_free, sizeof(g));
	for (int k = 0; k < n; k++)
		g[pick[k]] -= (uint16_t)p->gpu_milli;
	return gf_fgd_quantise(before, gf_fgd_measure(c, t, nd->model, nd->cpu_free - p->cpu_milli,
						      g, nd->ngpus));
}

static gf_err fgd_create(const struct gf_policy_env *env, void **out)
{
	struct gf_fgd_cache *c = malloc(sizeof(*c));
	gf_err e;

	if (!c)
		return GF_NOMEM;
	e = gf_fgd_cache_init(c, env);
	if (e != GF_OK) {
		free(c);
		return e;
	}
	*out = c;
	return GF_OK;
}

static void fgd_destroy(void *state)
{
	gf_fgd_cache_release(state);
	free(state);
}

static int64_t fgd_score(void *state, const struct gf_policy_env *env, size_t node,
			 const struct gf_pod_spec *p, int *hint)
{
	const struct gf_node *nd = gf_cluster_node(env->cluster, node);
	double before = gf_fgd_cache_before(state, env->target, node, nd);

	if (p->gpu_count == 1 && p->gpu_milli < GF_MILLI_PER_GPU)
		return gf_fgd_sharing_score(state, env->target, nd, p, before, NULL, hint);
	return gf_fgd_placed_score(state, env->target, nd, p, before);
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
