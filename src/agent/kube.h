/*
 * agent/kube.h - publish the GPU inventory on the agent's Node object.
 *
 * One request: PATCH /api/v1/nodes/<node> with
 * Content-Type application/merge-patch+json, setting the labels listed in
 * docs/agent.md (gpufleet.io/gpu.*) and the annotation
 * gpufleet.io/gpu-topology (the inventory/topology JSON of
 * gf_agent_render_inventory).  A merge patch touches only those keys.
 *
 * The connection (kubeconfig or service account) is the shared one of
 * k8s/conn.h.
 */
#ifndef GF_AGENT_KUBE_H
#define GF_AGENT_KUBE_H

#include <stdbool.h>
#include <stddef.h>

#include "agent/agent.h"
#include "core/error.h"
#include "core/obuf.h"
#include "k8s/conn.h"

/*
 * MIG (agent/mig.h): the layout the scheduler wants on this node is the
 * node annotation gpufleet.io/mig-layout; the agent reports what it applied
 * in gpufleet.io/mig-state, carried by the node patch below whenever a
 * layout was applied or a GPU is in MIG mode.
 */
#define GF_ANN_MIG_LAYOUT "gpufleet.io/mig-layout"
#define GF_ANN_MIG_STATE "gpufleet.io/mig-state"

struct gf_nodemig_layout;
/* GET /api/v1/nodes/<node> and parse its gpufleet.io/mig-layout
 * annotation into out.  GF_OK with *present false when the node has no
 * such annotation; GF_INVAL for a bad node name or a bad layout (err names
 * the annotation and the JSON path); GF_UNAVAILABLE when the API server
 * could not be asked (err says why); GF_NOMEM. */
gf_err gf_agent_fetch_mig_layout(const struct gf_kube_conn *c, const char *node, struct gf_nodemig_layout *out,
				 bool *present, char *err, size_t errlen);

/* The merge-patch body for node (labels + topology annotation). */
gf_err gf_agent_node_patch_body(gf_agent *a, const char *node, struct gf_obuf *out);

/* Build the body and send it.  GF_INVAL (bad node name), GF_UNAVAILABLE
 * (connection failed or non-2xx answer; err has the status and the start
 * of the API server's message), GF_NOMEM. */
gf_err gf_agent_publish_node(gf_agent *a, const struct gf_kube_conn *c, const char *node,
			     char *err, size_t errlen);

/*
 * Served models (the scheduler's model cache preference, policy/sched.h):
 * the agent keeps the identities of the models served by the pods it saw on
 * its GPUs (gf_k8s_served_identity: label gpufleet.io/model, else the first
 * container's image), at most GF_SERVED_SEEN_MAX, most recent first, and the
 * node patch carries them as the annotation gpufleet.io/models-seen
 * ("a,b,c").  In memory only: after a restart the list starts again from
 * the pods running then.
 */

/* Put identity id first (moving it up if known, dropping the oldest if full). */
void gf_agent_served_add(gf_agent *a, const char *id);

/* The annotation's value ("" when none); out has n bytes. */
void gf_agent_served_render(gf_agent *a, char *out, size_t n);

/*
 * Look up, with GET /api/v1/namespaces/NS/pods/NAME, each pod now using a
 * GPU that was not looked up yet, and add its served model; all of one call
 * on one keep-alive connection (k8s/client.h, no retries within the call).
 * Returns how many pods were looked up; a request that failed (transport,
 * 429, 5xx, an answer over 1 MiB) is logged to stderr and asked again at the
 * next call, one answered 404 or 4xx is not.
 */
int gf_agent_learn_served(gf_agent *a, const struct gf_kube_conn *c);

/* Label value rule of Kubernetes: <= 63 of [A-Za-z0-9._-], alphanumeric at
 * both ends; other characters become '-'.  out has room for 64 bytes. */
void gf_kube_label_value(char out[64], const char *in);

#endif /* GF_AGENT_KUBE_H */
