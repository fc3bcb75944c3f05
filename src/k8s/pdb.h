/*
 * k8s/pdb.h - PodDisruptionBudgets (policy/v1) as the live scheduler's
 * preemption reads them: which pods a budget covers and how many of them
 * may be disrupted now.
 *
 * Read: metadata.namespace (default "default") and name; spec.selector
 * (matchLabels, and matchExpressions with the operators In, NotIn, Exists,
 * DoesNotExist: what a LabelSelector allows); status.disruptionsAllowed
 * (kept by kube-controller-manager's disruption controller; absent: 0, as
 * kube-scheduler reads it).  spec.minAvailable / maxUnavailable are not
 * read: the status already counts them.  A null or absent selector selects
 * no pod, an empty one every pod of the namespace (policy/v1).  Limits:
 * matchLabels up to 512 bytes packed, GF_MATCH_MAX_EXPRS expressions, 192
 * bytes of values each, no empty value; past them the budget is refused
 * with its path.
 *
 * Errors name the JSON path and what is wrong ("pdb ns/name:
 * spec.selector.matchExpressions[1].operator: expected In, NotIn, Exists
 * or DoesNotExist, got \"Gt\""); a refused budget protects nothing.
 *
 * No I/O, no clock.
 */
#ifndef GF_K8S_PDB_H
#define GF_K8S_PDB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cluster/admit.h"
#include "core/error.h"
#include "k8s/codec.h"

struct cJSON;

struct gf_k8s_pdb {
	char ns[GF_K8S_NAME_MAX];
	char name[GF_K8S_NAME_MAX];
	bool selects;			/* spec.selector present (else it selects nothing) */
	char match[512];		/* matchLabels, packed "key\0value\0" */
	size_t match_len;
	struct gf_match_term exprs;	/* matchExpressions (all must hold) */
	int32_t allowed;		/* status.disruptionsAllowed, >= 0 */
};

/* Decode one PodDisruptionBudget (a list item or a watch event's object).  GF_PARSE: err as above. */
gf_err gf_k8s_pdb_decode(const struct cJSON *obj, struct gf_k8s_pdb *out, char *err, size_t errlen);

/* The same from JSON text[0..len) (fuzzing, tests). */
gf_err gf_k8s_pdb_decode_text(const char *text, size_t len, struct gf_k8s_pdb *out, char *err, size_t errlen);

/* Does b cover pod p (its namespace, its labels)? */
bool gf_k8s_pdb_covers(const struct gf_k8s_pdb *b, const struct gf_k8s_pod *p);

/* Do a and b select the same pods (namespace and selector; the count aside)? */
bool gf_k8s_pdb_same_selector(const struct gf_k8s_pdb *a, const struct gf_k8s_pdb *b);

#endif /* GF_K8S_PDB_H */
