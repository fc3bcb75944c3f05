/*
 * metricsapi/authcfg.h - what an aggregated API server needs to trust the
 * aggregator, from the cluster itself, and a serving certificate when none
 * is given.
 *
 * kube-apiserver publishes ConfigMap kube-system/extension-apiserver-
 * authentication; its key requestheader-client-ca-file is the CA of the
 * aggregator's front-proxy client certificate and requestheader-allowed-names
 * a JSON array of the CNs allowed (empty: any).  Reading it needs the Role
 * extension-apiserver-authentication-reader in kube-system (deploy/).
 *
 * The self-signed certificate is what prometheus-adapter does without
 * --tls-cert-file: an ECDSA P-256 key and a certificate valid for a year for
 * the given DNS names; the APIService then needs insecureSkipTLSVerify
 * (or give a real certificate, e.g. from cert-manager, with caBundle).
 */
#ifndef GF_METRICSAPI_AUTHCFG_H
#define GF_METRICSAPI_AUTHCFG_H

#include <stddef.h>

#include "core/error.h"
#include "k8s/conn.h"

struct gf_ma_authcfg {
	char *client_ca_pem;   /* requestheader-client-ca-file (owned) */
	char **allowed_names;  /* requestheader-allowed-names (owned) */
	size_t nallowed;
};

/* Decode the ConfigMap JSON.  GF_NOENT when it has no
 * requestheader-client-ca-file (the cluster has no aggregation layer),
 * GF_PARSE (err names the field), GF_NOMEM. */
gf_err gf_ma_authcfg_decode(const char *json, size_t len, struct gf_ma_authcfg *out, char *err,
			    size_t errlen);

/* GET the ConfigMap and decode it.  GF_UNAVAILABLE (connection, non-200:
 * err has the status), or gf_ma_authcfg_decode's errors. */
gf_err gf_ma_authcfg_fetch(const struct gf_kube_conn *c, struct gf_ma_authcfg *out, char *err,
			   size_t errlen);

void gf_ma_authcfg_release(struct gf_ma_authcfg *a);

/* A self-signed serving certificate for the DNS names (the first is the
 * CN); *cert_pem and *key_pem are malloc'd PEM text.  GF_INVAL (no name),
 * GF_UNAVAILABLE (GnuTLS failed; err says where), GF_NOMEM. */
gf_err gf_ma_selfsigned(const char *const *dns, size_t ndns, char **cert_pem, char **key_pem,
			char *err, size_t errlen);

#endif /* GF_METRICSAPI_AUTHCFG_H */
