/*
 * cluster/admit.h - who a node admits: cordon, taints, node selector, node
 * affinity, pod count (kube-scheduler's NodeUnschedulable, TaintToleration,
 * NodeAffinity and the pods resource).
 *
 * Engine code (no I/O, no clock) so the live scheduler and the replay judge
 * admission by one rule.  The rules are data beside the cluster, never state
 * faked into it: gf_admit_mask() turns them into an allowed-node bitset for
 * gf_sched_place_masked() (bit i of allowed[i / 64] for cluster node i).
 *
 * Node and pod rules are views (pointers into the caller's objects, nothing
 * copied): labels and the node selector are packed "key\0value\0" pairs.
 * Taints with effect PreferNoSchedule are not rules (the decoder drops them).
 */
#ifndef GF_CLUSTER_ADMIT_H
#define GF_CLUSTER_ADMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cluster/cluster.h"
#include "cluster/whynot.h"

#define GF_LABEL_KEY_MAX 128
#define GF_LABEL_VAL_MAX 64
#define GF_MATCH_MAX_EXPRS 4

enum gf_effect { GF_EFFECT_ANY, GF_EFFECT_NO_SCHEDULE, GF_EFFECT_PREFER_NO_SCHEDULE,
		 GF_EFFECT_NO_EXECUTE };

struct gf_taint {
	char key[GF_LABEL_KEY_MAX];
	char value[GF_LABEL_VAL_MAX];
	uint8_t effect;			/* enum gf_effect (never ANY) */
};

struct gf_toleration {
	char key[GF_LABEL_KEY_MAX];	/* "" with exists: every taint */
	char value[GF_LABEL_VAL_MAX];
	uint8_t effect;			/* ANY: every effect */
	bool exists;			/* operator Exists (else Equal) */
};

enum gf_match_op { GF_OP_IN, GF_OP_NOT_IN, GF_OP_EXISTS, GF_OP_DOES_NOT_EXIST, GF_OP_GT, GF_OP_LT };

struct gf_match_expr {
	char key[GF_LABEL_KEY_MAX];
	uint8_t op;			/* enum gf_match_op */
	char values[192];		/* packed "v1\0v2\0", ending with an empty string */
};

struct gf_match_term {			/* all expressions must hold */
	int nexprs;
	struct gf_match_expr e[GF_MATCH_MAX_EXPRS];
};

/* Who a node admits (a view). */
struct gf_node_rules {
	const char *labels;		/* packed pairs */
	size_t labels_len;
	const struct gf_taint *taints;	/* NoSchedule / NoExecute */
	int ntaints;
	bool unschedulable;		/* cordoned */
	int64_t max_pods;		/* 0 = no limit */
};

/* What a pod asks of a node besides resources (a view). */
struct gf_pod_rules {
	const char *selector;		/* packed pairs, all must match */
	size_t selector_len;
	const struct gf_toleration *tols;
	int ntols;
	const struct gf_match_term *terms; /* any term must hold (none: no affinity) */
	int nterms;
};

/* The value of key in packed labels[0..len), or NULL. */
const char *gf_labels_get(const char *labels, size_t len, const char *key);

/*
 * Do labels[0..len) (packed pairs) satisfy a label selector: every pair of
 * match[0..match_len) (matchLabels) and every expression of t (NULL or no
 * expressions: none)?  The rule nodes and pods are matched by (the node
 * selector and affinity above; PodDisruptionBudget selectors, k8s/pdb.h).
 */
bool gf_labels_select(const char *labels, size_t len, const char *match, size_t match_len,
		      const struct gf_match_term *t);

/* Does the node's rules admit the pod (cordon, taints, selector, affinity; not the pod count)? */
enum gf_why gf_admits(const struct gf_node_rules *n, const struct gf_pod_rules *p);

/*
 * Why node i of c (rules[i]) may not take pod p: GF_WHY_PODS when its pod
 * count is reached, else gf_admits(); GF_WHY_FITS when it may.
 */
enum gf_why gf_admit_why(const gf_cluster *c, const struct gf_node_rules *rules, size_t i,
			 const struct gf_pod_rules *p);

/*
 * The allowed-node mask of pod p over every node of c (rules[i] for node i):
 * allowed has (nnodes + 63) / 64 words, bits past the last node clear.  Adds
 * one to counts[why] for each node refused (counts may be NULL).  Returns how
 * many nodes are refused.
 */
size_t gf_admit_mask(const gf_cluster *c, const struct gf_node_rules *rules,
		     const struct gf_pod_rules *p, uint64_t *allowed, size_t *counts);

/* Words of a mask for n nodes. */
static inline size_t gf_mask_words(size_t n)
{
	return (n + 63) / 64;
}

#endif /* GF_CLUSTER_ADMIT_H */
