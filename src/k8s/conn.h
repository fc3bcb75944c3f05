/*
 * k8s/conn.h - how to reach the Kubernetes API server.
 *
 * One connection description for every component of the binary (scheduler,
 * node agent, external metrics API).
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
#ifndef GF_K8S_CONN_H
#define GF_K8S_CONN_H

#include <curl/curl.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"

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

/*
 * The access a command was given: the kubeconfig at path (its --kubeconfig),
 * or with path NULL the in-cluster service account.  The errors (and the
 * message in err) of gf_kube_conn_from_kubeconfig() or gf_kube_conn_in_cluster().
 */
gf_err gf_kube_conn_open(struct gf_kube_conn *c, const char *path, char *err, size_t errlen);

void gf_kube_conn_release(struct gf_kube_conn *c);

/*
 * Put c's TLS settings (CA, client certificate and key, insecure) on the
 * easy handle h and append the bearer-token header (if any) to *hdr (the
 * caller sets CURLOPT_HTTPHEADER and frees the list).  c must outlive the
 * transfers of h only for the file paths; blobs are copied.  GF_NOMEM.
 */
gf_err gf_kube_conn_curl(const struct gf_kube_conn *c, CURL *h, struct curl_slist **hdr);

#endif /* GF_K8S_CONN_H */
