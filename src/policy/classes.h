/*
 * policy/classes.h - node classes: nodes in the same state as a cacheable
 * policy sees it, scored once per class (feature NODE_CLASSES).  Internal to
 * src/policy: policy/sched.c decides through it when the policy allows
 * (gf_classes_usable); the design, the cost and why it picks exactly the
 * node the per-node loop picks are in policy/classes.c.
 *
 * A gf_classes handle follows one cluster (env->cluster, through its change
 * journal) for one policy and its state; it owns the classes, the change list
 * and, per pod shape, the classes' scores and the shape's view.  Pod shapes
 * are the caller's (sched.c interns them): an index below the capacity given
 * to gf_classes_reserve_shapes(), or SIZE_MAX for "no cache".
 */
#ifndef GF_POLICY_CLASSES_H
#define GF_POLICY_CLASSES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/sched.h"

struct gf_classes;

/*
 * May ops decide over classes under env's features?  A score that is a pure
 * function of (node state, pod shape), no choose(), the fixed priority
 * tie-break, and NODE_CLASSES on.
 */
bool gf_classes_usable(const struct gf_policy_ops *ops, const struct gf_policy_env *env);

/*
 * Classes for ops (with its state) over env's cluster (env, ops and state
 * must outlive them).  Ranks start as the node indices; nothing is built until
 * the first gf_classes_sync().  Errors: GF_NOMEM.
 */
gf_err gf_classes_create(const struct gf_policy_ops *ops, const struct gf_policy_env *env, void *state,
			 struct gf_classes **out);
void gf_classes_destroy(struct gf_classes *s);

/*
 * The tie order: node i's rank is its position in (prio[i], i) order; the
 * classes are rebuilt at the next sync.  Errors: GF_NOMEM (nothing changed;
 * the caller should stop deciding through the classes).
 */
gf_err gf_classes_set_priorities(struct gf_classes *s, const uint32_t *prio);

/*
 * Room for the per-shape state of shapes 0..cap-1 (new ones empty).
 * Errors: GF_NOMEM (shapes below the previous capacity keep theirs).
 */
gf_err gf_classes_reserve_shapes(struct gf_classes *s, size_t cap);

/*
 * Bring the classes up to the cluster's state (the journal since the last
 * sync, or a rebuild).  Errors: GF_NOMEM (decide with the per-node loop;
 * the next sync rebuilds).
 */
gf_err gf_classes_sync(struct gf_classes *s);

/*
 * The unmasked decision through shape's view (needs the score cache): sets
 * *best, *best_hint and out->nfeasible; false if nothing is feasible.  On
 * failure *err is GF_NOMEM (shape SIZE_MAX or out of memory) or GF_STATE (the
 * view lost count; it rebuilds next time): decide with gf_classes_choose().
 * After a successful gf_classes_sync() only.
 */
bool gf_classes_choose_view(struct gf_classes *s, size_t shape, const struct gf_pod_spec *p,
			    struct gf_placement *out, uint32_t *best, int *best_hint, gf_err *err);

/*
 * The decision walking the live classes, under a mask (allowed as in
 * gf_sched_place_masked; NULL = every node): same outputs as
 * gf_classes_choose_view; scores kept in shape's row (SIZE_MAX: not kept).
 * After a successful gf_classes_sync() only.
 */
bool gf_classes_choose(struct gf_classes *s, size_t shape, const struct gf_pod_spec *p, const uint64_t *allowed,
		       struct gf_placement *out, uint32_t *best, int *best_hint);

/* gf_sched_check_classes() for these classes (sched.h). */
gf_err gf_classes_check(struct gf_classes *s, char *why, size_t whylen);

/* Live classes, 0 if not built (or lost to out-of-memory). */
uint32_t gf_classes_count(const struct gf_classes *s);

/* Scores computed and read from the classes' rows. */
void gf_classes_stats(const struct gf_classes *s, uint64_t *computed, uint64_t *cached);

#endif /* GF_POLICY_CLASSES_H */
