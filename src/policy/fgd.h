/*
 * policy/fgd.h - FGD's building blocks, shared by the policies built on it
 * (policy/fgd.c, policy/fgd_fill.c).  Internal to src/policy.
 *
 * struct gf_fgd_cache keeps each node's measure at the node version it was
 * computed at, so a score computes the measure before placement once per node
 * change; the score functions compute it after placing the pod and quantise
 * the difference (gf_fgd_quantise, spec 4.6.3).  The measure is FGD's
 * fragmentation F_n (cluster/frag.h), plus, when strand_r > 0, FGD-Fill's
 * stranded GPU share S_n (policy/fgd_fill.c):
 *   S_n = max(0, G_n - cpu_free / strand_r)
 */
#ifndef GF_POLICY_FGD_H
#define GF_POLICY_FGD_H

#include "policy/policy.h"

/* Embeddable; gf_fgd_cache_init() / gf_fgd_cache_release(). */
struct gf_fgd_cache {
	size_t n;		/* nodes */
	uint32_t *version;	/* node version before[] was computed at; 0 = none */
	double *before;		/* F_n at that version */
	bool dedup;		/* feature DEDUP_GPU_CANDIDATES */
	double strand_r;	/* CPU milli per GPU milli for S_n; 0 = no S_n (FGD) */
};

/*
 * Sized for env's cluster, nothing computed yet, strand_r 0 (set it before
 * the first score).  Errors: GF_NOMEM (c left empty).
 */
gf_err gf_fgd_cache_init(struct gf_fgd_cache *c, const struct gf_policy_env *env);
void gf_fgd_cache_release(struct gf_fgd_cache *c);

/* The measure (F_n, plus S_n if c->strand_r > 0) of a node in the given state. */
double gf_fgd_measure(const struct gf_fgd_cache *c, const struct gf_target *t, int model,
		      int64_t cpu_free, const uint16_t *g, int ngpus);

/* The measure of node `node` (nd) in its current state, from the cache when unchanged. */
double gf_fgd_cache_before(struct gf_fgd_cache *c, const struct gf_target *t, size_t node,
			   const struct gf_node *nd);

/*
 * FGD's score of node nd for a GPU-sharing pod p (one GPU, share < 1000),
 * the measure before placement = before: the best quantised score over the GPUs that fit, and in
 * *hint the GPU reaching it.  Among GPUs with the best score the lowest
 * index wins, or, when waste is not NULL, the least waste[g - share] -
 * waste[g] (g the GPU's free milli; waste has GF_MILLI_PER_GPU + 1 entries),
 * then the lowest index.  GPUs with equal free amounts are tried once when
 * c->dedup.  -1 if no GPU fits.
 */
int64_t gf_fgd_sharing_score(const struct gf_fgd_cache *c, const struct gf_target *t,
			     const struct gf_node *nd, const struct gf_pod_spec *p, double before,
			     const double *waste, int *hint);

/*
 * FGD's score of node nd for a pod that is not GPU-sharing (CPU-only or
 * whole GPUs), placed on the GPUs binding would take (gf_gpus_ascending_fit).
 */
int64_t gf_fgd_placed_score(const struct gf_fgd_cache *c, const struct gf_target *t,
			    const struct gf_node *nd, const struct gf_pod_spec *p, double before);

#endif /* GF_POLICY_FGD_H */
