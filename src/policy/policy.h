/*
 * policy/policy.h - the placement framework's policy interface and registry.
 *
 * A policy is a const ops table (one file per policy, one line in
 * policy/registry.c).  The framework (policy/sched.h) runs the shared filter,
 * then asks the policy to score each feasible node, takes the best score
 * (ties: see enum gf_tie_break), and picks the GPUs inside the chosen node.
 *
 * Policies only read: the cluster through const pointers, the pod, their own
 * private state.  Extension points a policy does not use are NULL.
 */
#ifndef GF_POLICY_POLICY_H
#define GF_POLICY_POLICY_H

#include "cluster/cluster.h"
#include "cluster/frag.h"
#include "core/features.h"
#include "core/rng.h"

/* How the GPUs of a GPU-sharing pod are chosen inside the chosen node. */
enum gf_gpu_select {
	GF_GPUSEL_BEST,		/* smallest free >= request; ties: lowest index */
	GF_GPUSEL_RANDOM,	/* uniform among GPUs with free >= request */
	GF_GPUSEL_POLICY,	/* the policy's own choice, from its score (hint) */
};

/* How equal best scores are broken. */
enum gf_tie_break {
	GF_TIE_PRIORITY,	/* lowest node priority number (a fixed order) */
	GF_TIE_RANDOM,		/* uniformly at random (kube-scheduler's selectHost) */
};

/* What a policy may read.  All pointers outlive the policy's state. */
struct gf_policy_env {
	const gf_cluster *cluster;
	const struct gf_catalog *cat;
	const struct gf_target *target;	/* target workload; NULL if none */
	struct gf_features features;	/* the GF_FEATURE switches in force */
};

struct gf_policy_ops {
	const char *name;	/* what a user types: "fgd" */
	const char *label;	/* display name: "FGD" */
	const char *summary;	/* one line for --help */
	bool in_paper;		/* one of the six policies of the FGD paper's openb experiment */
	bool ours;		/* gpufleet's own policy: listed beside the paper's, marked */
	bool needs_target;	/* needs env->target */
	enum gf_gpu_select gpu_select;
	enum gf_tie_break tie_break;
	/*
	 * The score is a pure function of (node state, pod shape), so the
	 * framework may cache it per node until the node changes.
	 */
	bool cacheable;

	/* Optional private state; *state stays NULL if create is NULL. */
	gf_err (*create)(const struct gf_policy_env *env, void **state);
	void (*destroy)(void *state);

	/*
	 * Optional: choose among feasible[0..n-1] (n >= 2) directly, without
	 * scoring; returns an index into feasible[].  Random uses it.
	 */
	size_t (*choose)(void *state, const struct gf_policy_env *env, const uint32_t *feasible,
			 size_t n, const struct gf_pod_spec *p, struct gf_rng *rng);

	/*
	 * Score feasible node `node` for pod p; higher is better.  May set
	 * *hint (initialised to -1) to the GPU the policy would give a
	 * GPU-sharing pod; GF_GPUSEL_POLICY policies must.
	 */
	int64_t (*score)(void *state, const struct gf_policy_env *env, size_t node,
			 const struct gf_pod_spec *p, int *hint);
};

/* Registered policies, in display order; sets *n. */
const struct gf_policy_ops *const *gf_policy_all(size_t *n);

/* Look up a policy by the name a user types; NULL if unknown. */
const struct gf_policy_ops *gf_policy_find(const char *name);

/* The policies, each defined in its own file. */
extern const struct gf_policy_ops gf_policy_random;
extern const struct gf_policy_ops gf_policy_dot_product;
extern const struct gf_policy_ops gf_policy_gpu_clustering;
extern const struct gf_policy_ops gf_policy_gpu_packing;
extern const struct gf_policy_ops gf_policy_best_fit;
extern const struct gf_policy_ops gf_policy_fgd;
extern const struct gf_policy_ops gf_policy_fgd_fill;
extern const struct gf_policy_ops gf_policy_k8s_least_allocated;
extern const struct gf_policy_ops gf_policy_k8s_most_allocated;

/* Helpers shared by policies. */

/*
 * GPUs a pod would take on node nd: `count` GPUs with free >= milli, visiting
 * GPUs by ascending free amount (stable: equal amounts in index order).  For
 * whole-GPU pods these are the lowest-indexed fully free GPUs.  Writes the
 * indices to out[] and returns how many were found (< count: does not fit).
 */
int gf_gpus_ascending_fit(const struct gf_node *nd, int count, int milli, uint8_t *out);

/*
 * FGD's node score from the node's fragmentation before and after placing
 * the pod (spec 4.6.3): floor(100 * sigmoid((before - after) / 1000)).
 */
int64_t gf_fgd_quantise(double before, double after);

/*
 * FGD-Fill's expected eventual waste W(g) of a GPU with g milli free under
 * target t, for g = 0..GF_MILLI_PER_GPU, into w[] (policy/fgd_fill.c).
 */
void gf_fill_waste_table(const struct gf_target *t, double *w);

/*
 * FGD-Fill's CPU need per GPU share: the CPU milli per GPU milli that pods of
 * target t's GPU classes ask on average (weights p_k); 0 if t has no GPU
 * class (policy/fgd_fill.c).
 */
double gf_fill_strand_ratio(const struct gf_target *t);

#endif /* GF_POLICY_POLICY_H */
