/*
 * sim/openb.h - the FGD paper's openb packing experiment.
 *
 * One run (spec shared/specs/openb-fgd-experiment.md, section 2.2): sort the
 * pods by name and shuffle them; append pods sampled with replacement until
 * the GPU request reaches `tune` x the cluster's GPU capacity (or remove pods
 * at random if it is above); give the nodes a random priority order for
 * tie-breaks; then place the pods one by one with the policy, never retrying
 * a pod that fits nowhere, and never releasing one that was placed.  After
 * every attempt it samples (arrived request, allocated GPU, fragmentation)
 * and reduces the samples to curves over "arrived load in % of capacity".
 *
 * Everything random comes from one generator seeded with the run's seed, in
 * this order: shuffle, tuning draws, node priorities, then the policy's own
 * draws.  Same inputs and seed: byte-identical results.
 */
#ifndef GF_SIM_OPENB_H
#define GF_SIM_OPENB_H

#include "cluster/frag.h"
#include "core/features.h"
#include "policy/policy.h"

typedef struct gf_openb gf_openb;

struct gf_openb_config {
	double tune;		/* target GPU request / capacity; 1.3 in the paper */
	uint64_t seed;
	bool shuffle;		/* shuffle the name-sorted pods (the paper does) */
	struct gf_features features;
};

/* The paper's setting: tune 1.3, shuffled, default features; seed 42. */
struct gf_openb_config gf_openb_config_default(void);

/*
 * Curves over the arrived GPU request x = 0..nbuckets-1 (% of capacity,
 * rounded half to even).  Column x is the mean over the attempts whose
 * arrived request rounds to x (or, if there are none, over those rounding to
 * x-1..x+1; NAN if none either).
 */
struct gf_openb_result {
	int nbuckets;
	double *alloc;		/* GPU allocation, % of capacity, 2 decimals */
	double *frag;		/* fragmentation amount, % of capacity, 2 decimals */
	double *frag_ratio;	/* fragmentation, % of idle GPU capacity */
	int64_t total_gpus;
	int64_t attempts, placed, failed;
	int64_t first_failed;	/* attempt index (0-based) of the first pod that failed; -1 if none */
	int64_t gpu_requested;	/* milli-GPU, all attempted pods */
	int64_t gpu_allocated;	/* milli-GPU at the end */
	uint64_t scores_computed, scores_cached;
};

/*
 * Prepare an experiment over nodes[] and pods[] (copied; pods in any order,
 * they are sorted by name).  The target workload for FGD and the
 * fragmentation measure is built from pods[] with the 95 % popularity cut.
 * cat must be the catalog the lists were parsed with, and outlive x.
 * Errors: GF_INVAL (empty lists), GF_NOMEM.
 */
gf_err gf_openb_create(const struct gf_node_spec *nodes, size_t nnodes,
		       const struct gf_pod_spec *pods, size_t npods, const struct gf_catalog *cat,
		       gf_openb **out);
void gf_openb_destroy(gf_openb *x);

/* The target workload the experiment built (read-only). */
const struct gf_target *gf_openb_target(const gf_openb *x);

/* GPUs in the cluster. */
int64_t gf_openb_ngpus(const gf_openb *x);

/*
 * One run of policy ops.  Thread-safe for distinct results: runs share x
 * read-only.  Fills *out (release with gf_openb_result_release()).  Errors:
 * GF_INVAL (tune <= 0), GF_NOMEM, GF_STATE (the engine broke an invariant:
 * a bug, reported instead of a figure).
 */
gf_err gf_openb_run(const gf_openb *x, const struct gf_policy_ops *ops,
		    const struct gf_openb_config *cfg, struct gf_openb_result *out);
void gf_openb_result_release(struct gf_openb_result *r);

/*
 * The pods a run with cfg attempts, in attempt order (spec 2.2 steps 3-4,
 * the same draws as gf_openb_run): *pods gets a malloc'ed array of copies
 * (the caller frees it), *n its length.  For offline analysis (the bound in
 * bench/).  Errors: GF_INVAL (tune <= 0), GF_NOMEM.
 */
gf_err gf_openb_attempts(const gf_openb *x, const struct gf_openb_config *cfg,
			 struct gf_pod_spec **pods, size_t *n);

/* Value of a curve at x, NAN if x is past the end or the column is blank. */
double gf_openb_at(const struct gf_openb_result *r, const double *curve, int x);

#endif /* GF_SIM_OPENB_H */
