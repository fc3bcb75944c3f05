/*
 * k8s/gangs.h - the gangs the API server has, and which gang a pod belongs
 * to: coscheduling PodGroups (scheduling.x-k8s.io/v1alpha1) and the
 * Workload API's PodGroups (scheduling.k8s.io/v1alpha2, KEP-4671), behind
 * one interface (struct gf_k8s_podgroup, codec.h).
 *
 * Read side only: the scheduler's engine loop (issue 11/12) will ask it
 * which pods must be placed together; nothing here decides anything.  A
 * pod belongs to the Workload API PodGroup its spec.schedulingGroup names
 * (gf_k8s_pod.sched_group), else to the coscheduling PodGroup named by its
 * GF_LABEL_POD_GROUP label (gf_k8s_pod.pod_group), in its own namespace: a
 * pod with both is in the Workload API's group (Kubernetes' own field, the
 * one kube-scheduler's GangScheduling plugin reads).  The reference may
 * name a group that does not exist (yet): the answer then says so (known
 * false), and the caller decides (kube-scheduler makes such a pod wait).
 *
 * Not thread-safe: the caller's lock (the daemon's mu) guards it.  Lookups
 * are O(1) on average (open addressing on api/namespace/name).
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
/* Forget the coscheduling PodGroup ns/name; nothing if unknown. */
void gf_gangs_delete(gf_gangs *g, const char *ns, const char *name);
/* Forget the group pg names (its api, ns and name); nothing if unknown. */
void gf_gangs_unset(gf_gangs *g, const struct gf_k8s_podgroup *pg);
/* Groups held, of both APIs. */
size_t gf_gangs_count(const gf_gangs *g);
/* The i-th group held (first-seen order), NULL past the end (valid until the next change). */
const struct gf_k8s_podgroup *gf_gangs_at(const gf_gangs *g, size_t i);
/* Groups held of one API. */
size_t gf_gangs_count_api(const gf_gangs *g, enum gf_k8s_gang_api api);
/* The group api/ns/name, or NULL (valid until the next set, unset or delete). */
const struct gf_k8s_podgroup *gf_gangs_get(const gf_gangs *g, enum gf_k8s_gang_api api, const char *ns,
					  const char *name);

struct gf_gang_ref {
	bool known;			/* the PodGroup exists */
	enum gf_k8s_gang_api api;	/* which API the pod's reference is for */
	int32_t min_member;		/* minMember / gang.minCount (0 absent; basic: 1), when known */
	int32_t timeout_s;		/* spec.scheduleTimeoutSeconds (0 absent), when known */
	char ns[GF_K8S_NAME_MAX];	/* the pod's namespace */
	char name[GF_K8S_NAME_MAX];	/* the group's name (the label or schedulingGroup) */
};

/*
 * The gang of pod p: false when p names no group (no schedulingGroup, no
 * pod-group label); else true with *out filled (out->known false when no
 * such group is held).
 */
bool gf_gangs_of_pod(const gf_gangs *g, const struct gf_k8s_pod *p, struct gf_gang_ref *out);

/*
 * The gang view for /metrics (Prometheus text, appended to o): the groups
 * held per API (gpufleet_gangs{api}) and, for at most `max_series` groups
 * (in the order they were first seen), one gpufleet_gang_min_member{api,
 * namespace,name,workload} series each.  Label values are escaped.
 */
struct gf_obuf;
void gf_gangs_render(const gf_gangs *g, struct gf_obuf *o, size_t max_series);

#endif /* GF_K8S_GANGS_H */
