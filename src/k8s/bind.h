/*
 * k8s/bind.h - bind a pod with its GPU assignment, and what a failed binding means.
 *
 * The Binding's metadata carries the assignment annotations (codec.h
 * GF_ANN_*); the API server copies them onto the pod in the same write that
 * sets spec.nodeName.  metadata.uid is set, so a pod deleted and recreated
 * under the same name is never bound by mistake (the API server answers 409).
 */
#ifndef GF_K8S_BIND_H
#define GF_K8S_BIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "k8s/client.h"
#include "k8s/live.h"

/* Outcomes of gf_kube_bind(). */
enum {
	B_OK,			/* 200/201: bound */
	B_CONFLICT_DONE,	/* 409, and the pod is bound to our node with our GPUs (an earlier try went through) */
	B_CONFLICT_RETRY,	/* 409, and the pod is still unbound (or could not be read): try again */
	B_GONE,			/* 404, another pod under that name, or bound elsewhere: forget it */
	B_ERROR,		/* transport failure after the retries (*retry) or a refusal such as 422 (err) */
	B_COUNT
};

/*
 * The Binding body for pod ns/name (uid may be "") and decision dc; NULL on
 * out of memory; the caller free()s it.
 */
char *gf_kube_binding_body(const char *ns, const char *name, const char *uid,
			   const struct gf_live_decision *dc);

/*
 * The GF_ANN_ASSIGNED_AT value for us microseconds since the epoch (UTC);
 * out holds GF_ASSIGNED_AT_LEN + 1 bytes.
 */
void gf_kube_assigned_at_format(int64_t us, char *out);

/*
 * Whether GPU bindings to one node are serialised (the stamp order is the
 * write order, what gpufleet's device plugin needs to match pods: the
 * default) or posted in parallel (no device plugin of ours reads the stamp:
 * `gpufleet schedule --bind-order none`).  Process-wide; set before binding.
 */
void gf_kube_bind_node_order(bool on);

/*
 * POST the binding; on 409 re-read the pod and decide.  Returns B_*; *retry
 * says the pod should go back to the queue; err says why on B_ERROR.
 */
int gf_kube_bind(gf_kube_client *k, const char *ns, const char *name, const char *uid,
		 const struct gf_live_decision *dc, bool *retry, char *err, size_t errlen);

#endif /* GF_K8S_BIND_H */
