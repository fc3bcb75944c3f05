/*
 * agent/kube.h - publish the GPU inventory on the agent's Node object.
 *
 * One request: PATCH /api/v1/nodes/<node> with
 * Content-Type application/merge-patch+json, setting the labels listed in
 * docs/agent.md (gpufleet.io/gpu.*) and the annotation
 * gpufleet.io/gpu-topology (the inventory/topology JSON of
 * gf_agent_render_inventory).  A merge patch touches only those keys.
 *
 * Access: the in-cluster service account (KUBERNETES_SERVICE_HOST/PORT,
 * /var/run/secrets/kubernetes.io/serviceaccount/{token,ca.crt}) or a
 * kubeconfig file.  The kubeconfig reader is deliberately small: it takes
 * the cluster and user of the current-context when the file names them,
 * else the first ones, and understands server, certificate-authority[-data],
 * client-certificate[-data], client-key[-data], token and
 * insecure-skip-tls-verify.  exec/auth-provider plugins are not supported.
 *
 * Ownership: struct gf_kube_conn is embeddable (_release frees its strings).
 */
#ifndef GF_AGENT_KUBE_H
#define GF_AGENT_KUBE_H

#include <stdbool.h>
#include <stddef.h>

#include "agent/agent.h"
#include "core/error.h"
#include "http/obuf.h"

struct gf_kube_conn {
	char *server;                  /* "https://host:port" (no trailing '/') */
	char *token;                   /* bearer token or NULL */
	char *ca_file, *cert_file, *key_file; /* paths or NULL */
	char *ca_data, *cert_data, *key_data; /* PEM bytes or NULL */
	size_t ca_len, cert_len, key_len;
	bool insecure;                 /* insecure-skip-tls-verify */
};

/* Service-account access.  GF_UNAVAILABLE (not in a cluster), GF_IO, GF_NOMEM. */
gf_err gf_kube_conn_in_cluster(struct gf_kube_conn *c, char *err, size_t errlen);

/* Read a kubeconfig.  GF_IO (unreadable), GF_PARSE ("path:line: ..."), GF_NOMEM. */
gf_err gf_kube_conn_from_kubeconfig(struct gf_kube_conn *c, const char *path, char *err,
				    size_t errlen);

void gf_kube_conn_release(struct gf_kube_conn *c);

/* The merge-patch body for node (labels + topology annotation). */
gf_err gf_agent_node_patch_body(gf_agent *a, const char *node, struct gf_obuf *out);

/* Build the body and send it.  GF_INVAL (bad node name), GF_UNAVAILABLE
 * (connection failed or non-2xx answer; err has the status and the start
 * of the API server's message), GF_NOMEM. */
gf_err gf_agent_publish_node(gf_agent *a, const struct gf_kube_conn *c, const char *node,
			     char *err, size_t errlen);

/* Label value rule of Kubernetes: <= 63 of [A-Za-z0-9._-], alphanumeric at
 * both ends; other characters become '-'.  out has room for 64 bytes. */
void gf_kube_label_value(char out[64], const char *in);

#endif /* GF_AGENT_KUBE_H */
