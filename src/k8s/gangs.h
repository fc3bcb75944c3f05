/*
 * k8s/gangs.h - the coscheduling PodGroups the API server has, and which
 * gang a pod belongs to.
 *
 * Read side only: the scheduler's engine loop (issue 11/12) will ask it
 * which pods must be placed together; nothing here decides anything.  A
 * pod belongs to the PodGroup named by its GF_LABEL_POD_GROUP label in its
 * own namespace (gf_k8s_pod.pod_group).  The label may name a group that
 * does not exist (yet): the answer then says so (known false), and the
 * caller decides (kube-scheduler's coscheduling plugin makes such a pod
 * wait).
 *
 * Not thread-safe: the caller's lock (the daemon's mu) guards it.  Lookups
 * are O(1) on average (open addressing on namespace/name).
 */
#ifndef GF_K8S_GANGS_H
#define GF_K8S_GANGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "k8s/codec.h"

typedef struct gf_gangs gf_gangs;

gf_err gf_gangs_create(gf_gangs **out);
void gf_gangs_destroy(gf_gangs *g);

/* Add or replace a PodGroup (copied).  GF_NOMEM leaves the store as it was. */
gf_err gf_gangs_set(gf_gangs *g, const struct gf_k8s_podgroup *pg);
/* Forget ns/name; nothing if unknown. */
void gf_gangs_delete(gf_gangs *g, const char *ns, const char *name);
/* PodGroups held. */
size_t gf_gangs_count(const gf_gangs *g);

struct gf_gang_ref {
	bool known;			/* the PodGroup exists */
	int32_t min_member;		/* its spec.minMember (0 absent), when known */
	int32_t timeout_s;		/* spec.scheduleTimeoutSeconds (0 absent), when known */
	char ns[GF_K8S_NAME_MAX];	/* the pod's namespace */
	char name[GF_K8S_LABEL_VALUE_MAX]; /* the group's name (the label) */
};

/*
 * The gang of pod p: false when p carries no pod-group label; else true
 * with *out filled (out->known false when no such PodGroup is held).
 */
bool gf_gangs_of_pod(const gf_gangs *g, const struct gf_k8s_pod *p, struct gf_gang_ref *out);

#endif /* GF_K8S_GANGS_H */
