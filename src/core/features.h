/*
 * core/features.h - the engine's named heuristics and shortcuts, one list.
 *
 * Each entry is GF_FEATURE(NAME, default) with the reason it exists.  The
 * simulator and the benchmarks switch them off to measure what each is worth
 * (gf_feature_set()); production code only reads them with gf_feature().
 * Like the kernel's sched_features, the list is the documentation.
 */
#ifndef GF_CORE_FEATURES_H
#define GF_CORE_FEATURES_H

#include <stdbool.h>

#define GF_FEATURE_LIST(GF_FEATURE)                                          \
	/* Reuse a node's score for a pod shape until the node changes: a      \
	 * placement touches one node, so all others keep their scores.  Off:  \
	 * every feasible node is scored for every pod (the plain method). */  \
	GF_FEATURE(SCORE_CACHE, true)                                          \
	/* Score a node's GPUs once per distinct free amount: GPUs with the    \
	 * same free milli give the same hypothetical state, so FGD evaluates  \
	 * the fragmentation once for each value instead of once per GPU. */   \
	GF_FEATURE(DEDUP_GPU_CANDIDATES, true)                                 \
	/* Score each class of nodes in the same state once per decision, not  \
	 * every node: the cost of a decision follows the number of distinct   \
	 * node states, not the number of nodes, with the same choice.  Off:    \
	 * every node is filtered and scored (policy/sched.c). */               \
	GF_FEATURE(NODE_CLASSES, true)

enum gf_feature {
#define GF_FEATURE_ENUM_(name, dflt) GF_FEAT_##name,
	GF_FEATURE_LIST(GF_FEATURE_ENUM_)
#undef GF_FEATURE_ENUM_
	GF_FEAT_COUNT_
};

/* A set of feature switches, passed by value into the engine's contexts. */
struct gf_features {
	bool on[GF_FEAT_COUNT_];
};

/* The defaults of GF_FEATURE_LIST. */
struct gf_features gf_features_default(void);

/* Name of a feature ("SCORE_CACHE"); NULL if out of range. */
const char *gf_feature_name(enum gf_feature f);

/* Look up a feature by name (case-sensitive); returns false if unknown. */
bool gf_feature_lookup(const char *name, enum gf_feature *out);

#endif /* GF_CORE_FEATURES_H */
