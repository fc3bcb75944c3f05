/*
 * policy/sched.h - one placement decision: filter, score, select, pick GPUs.
 *
 * gf_sched is an opaque handle binding one policy to one cluster.  It owns
 * the policy's private state, scratch buffers and the score cache; it never
 * changes the cluster (the caller binds the placement it returns).
 *
 * The decision for pod p (spec: shared/specs/openb-fgd-experiment.md 2.2, 3):
 *   1. F = nodes passing gf_cluster_fits(), in node order.
 *   2. F empty: GF_UNSCHEDULABLE.  |F| = 1: that node, unscored.
 *   3. Otherwise the policy's choose(), or the maximum score, ties broken
 *      first, for a pod with served_model != 0, in favour of nodes that ran
 *      that model (gf_node_served: a model cache preference, a lexicographic
 *      second score term), then by the lowest node priority
 *      (GF_TIE_PRIORITY) or uniformly at random (GF_TIE_RANDOM, drawing from
 *      the caller's generator).  A pod with served_model == 0 gets exactly
 *      the policy's choice.  choose() policies (Random) ignore the preference.
 *   4. GPUs: CPU-only pods none; whole-GPU pods the lowest-indexed fully free
 *      GPUs; sharing pods by the policy's gpu_select.
 *
 * Node classes (feature NODE_CLASSES): for policies whose score depends only
 * on the node's state and the pod's shape, with the fixed priority
 * tie-break, a decision scores each class of nodes in the same state once
 * and picks the same node as the per-node loop (policy/classes.c).
 *
 * Score cache (feature SCORE_CACHE): scores of cacheable policies are kept
 * per (pod shape, node) with the node's version, and reused while the node is
 * unchanged.  A pod shape is (cpu, memory, GPU count, milli, constraint).
 */
#ifndef GF_POLICY_SCHED_H
#define GF_POLICY_SCHED_H

#include "core/features.h"
#include "policy/policy.h"

enum gf_outcome {
	GF_PLACED,
	GF_UNSCHEDULABLE,	/* no node passes the filter */
};

struct gf_placement {
	uint32_t node;
	int ngpus;
	uint8_t gpus[GF_MAX_GPUS];
	uint32_t nfeasible;	/* nodes that passed the filter */
};

typedef struct gf_sched gf_sched;

/*
 * Create a scheduler for policy ops over env (env's pointers must outlive
 * it).  Node priorities start as the node indices.  Errors: GF_INVAL (the
 * policy needs a target workload and env->target is NULL), GF_NOMEM, or the
 * policy's create() error.
 */
gf_err gf_sched_create(const struct gf_policy_ops *ops, const struct gf_policy_env *env,
		       gf_sched **out);
void gf_sched_destroy(gf_sched *s);

/* Set the tie-break priority of every node (prio[i] for node i; copied). */
void gf_sched_set_priorities(gf_sched *s, const uint32_t *prio);

/*
 * Decide where pod p goes.  Fills *out on GF_PLACED.  rng is used by random
 * policies and random tie-breaks (may be NULL for policies that use neither).
 */
enum gf_outcome gf_sched_place(gf_sched *s, const struct gf_pod_spec *p, struct gf_rng *rng,
			       struct gf_placement *out);

/*
 * gf_sched_place() restricted to the nodes whose bit is set in allowed
 * (bit i of allowed[i / 64] for node i; NULL = every node): "may not use this
 * node" is data passed into the decision, never state faked into the cluster.
 * The queue's backfill uses it to keep a job off the nodes a reservation holds.
 */
enum gf_outcome gf_sched_place_masked(gf_sched *s, const struct gf_pod_spec *p, struct gf_rng *rng,
				      const uint64_t *allowed, struct gf_placement *out);

/*
 * The policy's score of node `node` for pod p, through the same cache as
 * gf_sched_place() (for callers that rank nodes someone else filtered, such
 * as a kube-scheduler extender's prioritize).  The node must pass the filter.
 * Sets *hint as the policy's score does (-1 if none).  A policy without a
 * score function (one that chooses directly, like Random) gives 0 everywhere.
 */
int64_t gf_sched_score(gf_sched *s, const struct gf_pod_spec *p, size_t node, int *hint);

/* gf_sched_score for each of nodes[0..n) into out[0..n), the pod's cache row found once. */
void gf_sched_score_nodes(gf_sched *s, const struct gf_pod_spec *p, const uint32_t *nodes, size_t n,
			 int64_t *out);

/*
 * Check the node classes against a from-scratch grouping of the nodes by
 * state (after following the cluster's changes): every node in the one
 * class of its state, members in tie-break order, one class per distinct
 * state.  GF_OK; GF_STATE with the first discrepancy in why; GF_INVAL if s
 * does not use classes (the policy or the features rule them out); GF_NOMEM.
 * For tests: O(n log n).
 */
gf_err gf_sched_check_classes(gf_sched *s, char *why, size_t whylen);

/* Live node classes as of the last decision; 0 if s does not use them. */
uint32_t gf_sched_nclasses(const gf_sched *s);

/* Scores computed / served from the cache since creation (for benchmarks). */
void gf_sched_stats(const gf_sched *s, uint64_t *computed, uint64_t *cached);

#endif /* GF_POLICY_SCHED_H */
