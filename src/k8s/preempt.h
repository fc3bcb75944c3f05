/*
 * k8s/preempt.h - the API writes of a preemption, as kube-scheduler makes
 * them (its DefaultPreemption plugin, Kubernetes 1.36): each victim pod
 * first gets the condition DisruptionTarget=True with reason
 * PreemptionByScheduler (pods/status), then is deleted gracefully (its own
 * terminationGracePeriodSeconds, a uid precondition so a pod recreated
 * under the name is not touched); the preemptor gets
 * status.nominatedNodeName.
 *
 * Used by `gpufleet schedule --preemption` (k8s/sched_writes.c: send_evict,
 * send_nominate; the victims are the engine loop's, k8s/live.c
 * "preemption").  Tested: k8s_preempt, sched_preempt_writes on the real API
 * server, sched_preemption (the whole of it).
 */
#ifndef GF_K8S_PREEMPT_H
#define GF_K8S_PREEMPT_H

#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"
#include "k8s/client.h"

/* The pods/status strategic-merge patch adding DisruptionTarget (ts: RFC 3339); NULL: out of memory. */
char *gf_kube_disruption_patch(const char *scheduler_name, const char *ts);
/* The DeleteOptions body with a uid precondition (uid "" : none); NULL: out of memory. */
char *gf_kube_delete_body(const char *uid);
/* The pods/status patch setting status.nominatedNodeName (node "": clears it); NULL: out of memory. */
char *gf_kube_nominate_patch(const char *node);

/*
 * Evict victim ns/name (uid): the condition, then the graceful delete.
 * GF_OK also when the pod is already gone or was replaced (404, 409 on the
 * uid precondition: *gone true).  GF_UNAVAILABLE / GF_STATE (another
 * status, err says which call and what) / GF_NOMEM.
 */
gf_err gf_kube_evict(gf_kube_client *k, const char *scheduler_name, const char *ns, const char *name,
		     const char *uid, const char *ts, bool *gone, char *err, size_t errlen);

/* Set status.nominatedNodeName of ns/name.  404: GF_OK.  Errors as gf_kube_evict. */
gf_err gf_kube_nominate(gf_kube_client *k, const char *ns, const char *name, const char *node, char *err,
			size_t errlen);

#endif /* GF_K8S_PREEMPT_H */
