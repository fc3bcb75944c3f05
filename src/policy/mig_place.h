/*
 * policy/mig_place.h - where a pod goes on nodes whose GPUs may be in MIG mode.
 *
 * Beside the milli-share placement (policy.h), not through it: a node here
 * is CPU, memory and GPUs each either in MIG mode (a partition of GPU
 * instances, cluster/mig.h) or not (a milli share free).  A MIG pod asks for
 * one instance per GPU of a profile; every other GPU pod (whole GPUs,
 * shares) asks for milli on GPUs outside MIG mode.  Neither ever lands on
 * the other kind of GPU.
 *
 * Three modes for MIG pods:
 *   static         only the instances the nodes have (a layout applied
 *                  beforehand, as NVIDIA's GPU Operator does per node): the
 *                  smallest free instance holding the pod's memory (or of
 *                  the very profile it named), then the node order;
 *   dynamic-first  an instance of the pod's profile is created for it at
 *                  the first legal free start of the first GPU of the first
 *                  node (in node order) that has one; empty instances are
 *                  destroyed when their pod leaves;
 *   dynamic        created as dynamic-first, but at the node, GPU and start
 *                  where the slice-level fragmentation of the node grows
 *                  least (FGD's rule one level down): nodes ranked by
 *                  floor(100 sigma(delta / 32)), delta the growth in
 *                  slices (quantised as FGD's score is); ties: node order;
 *                  inside the node the least growth, then GPU index, then
 *                  the lowest start.
 *
 * Fragmentation of a node with cpu_free CPU, for a target workload T of
 * classes c (CPU, profile or none, share p_c):
 *   F(node) = sum over its MIG GPUs g of
 *             sum_k W_k x_k(free_g) + W_0 free(free_g)
 *   W_k = sum of p_c over GPU classes of profile k whose CPU fits cpu_free,
 *   W_0 = sum of p_c over CPU-only classes and classes whose CPU does not fit,
 * x_k as in cluster/mig.h.  A class of several GPUs counts as its profile
 * on each GPU (an approximation).  Cost of one decision: O(nodes x
 * (classes + distinct GPU states x starts x profiles)).
 *
 * CPU-only pods: dynamic puts them where F grows least too; the other two
 * modes on the first node that fits.  Pods asking milli shares: the first
 * node and GPUs that fit, in every mode.
 */
#ifndef GF_POLICY_MIG_PLACE_H
#define GF_POLICY_MIG_PLACE_H

#include <stddef.h>
#include <stdint.h>

#include "cluster/mig.h"
#include "cluster/model.h"

/* A node for MIG placement.  Value type; change it through gf_mig_bind/unbind. */
struct gf_mig_node {
	int64_t cpu_free;
	int64_t mem_free;
	int ngpus;
	struct gf_mig_gpu gpu[GF_MAX_GPUS];
};

enum gf_mig_mode { GF_MIG_STATIC, GF_MIG_DYNAMIC_FIRST, GF_MIG_DYNAMIC };

/* What a pod asks. */
struct gf_mig_ask {
	int64_t cpu_milli;
	int64_t mem_mib;
	int count;		/* GPUs; 0 = CPU-only */
	int model;		/* MIG pod: the GPU model (enum gf_mig_model) profile is of */
	int profile;		/* MIG pod: profile on each GPU; -1 = not a MIG pod */
	bool exact;		/* static: only that profile (the pod named it); else any
				 * instance with at least its memory */
	int milli;		/* not a MIG pod: share of each GPU, 1..1000 */
};

/* One class of the target workload, for the fragmentation. */
struct gf_mig_class {
	int64_t cpu_milli;
	int profile;		/* -1: CPU-only */
	double p;		/* share of the target's pods */
};

/* The target workload on one GPU model; embeddable, no heap. */
#define GF_MIG_MAX_CLASSES 256
struct gf_mig_target {
	int model;
	int nclasses;
	struct gf_mig_class cls[GF_MIG_MAX_CLASSES];
	uint8_t slack[256][GF_MIG_MAX_PROFILES];	/* gf_mig_slack_table(model) */
};

/*
 * Prepare *t for model from n classes (copied; more than
 * GF_MIG_MAX_CLASSES: GF_TOOBIG).  GF_INVAL for an unknown model or a
 * profile out of its range.
 */
gf_err gf_mig_target_init(struct gf_mig_target *t, int model, const struct gf_mig_class *cls, int n);

/* Where a pod goes: the node and, per GPU used, which instance (by start). */
struct gf_mig_pick {
	size_t node;
	int n;				/* GPUs used: the ask's count */
	uint8_t gpu[GF_MAX_GPUS];
	int8_t start[GF_MAX_GPUS];	/* MIG: the instance's start slot; -1 otherwise */
	bool create[GF_MAX_GPUS];	/* MIG: the instance is to be created at start */
};

/*
 * Choose for ask a among nodes[0..n-1].  order lists node indices in
 * tie-break order (NULL: index order); t is needed by GF_MIG_DYNAMIC only
 * (may be NULL otherwise).  GF_OK with *out filled; GF_NOENT when no node
 * can take the pod; GF_INVAL for an ask that asks nothing coherent.
 * Reads only: nothing changes until gf_mig_bind().
 */
gf_err gf_mig_choose(const struct gf_mig_node *nodes, size_t n, const uint32_t *order,
		     enum gf_mig_mode mode, const struct gf_mig_target *t, const struct gf_mig_ask *a,
		     struct gf_mig_pick *out);

/*
 * Bind a to node as pk says: creates the instances marked create, counts
 * the pod on each instance, takes CPU, memory and milli.  Errors: GF_RANGE
 * or GF_STATE when it does not fit as said (node then unchanged).
 */
gf_err gf_mig_bind(struct gf_mig_node *node, const struct gf_mig_ask *a, const struct gf_mig_pick *pk);

/*
 * Undo a bind; destroy_empty (dynamic modes): an instance left without a pod
 * is destroyed.  Errors: GF_RANGE when the node does not hold it (node then
 * unchanged).
 */
gf_err gf_mig_unbind(struct gf_mig_node *node, const struct gf_mig_ask *a, const struct gf_mig_pick *pk,
		     bool destroy_empty);

/* F(node) above, for t (tests and reports). */
double gf_mig_node_frag(const struct gf_mig_node *node, const struct gf_mig_target *t);

#endif /* GF_POLICY_MIG_PLACE_H */
