/*
 * metricsapi/pods.h - workload label selectors: which pods of a namespace
 * carry some labels, asked of the API server.
 *
 * The agents label GPU series with the pod's name, not its labels, so a
 * selector such as app=llama-7b is answered in two steps: list the pods of
 * the request namespace matching the pod-label requirements
 * (GET /api/v1/namespaces/{ns}/pods?labelSelector=...), then keep the
 * series whose pod is one of them.  Needs RBAC get/list on pods.
 *
 * Thread-safe (one curl handle per call).
 */
#ifndef GF_METRICSAPI_PODS_H
#define GF_METRICSAPI_PODS_H

#include <stddef.h>

#include "core/error.h"
#include "k8s/conn.h"

/* List the names of the pods in ns matching selector (selector syntax).
 * On success *names is a sorted (strcmp) array of *n strings: free with
 * gf_ma_pods_free.  GF_UNAVAILABLE (connection or non-200; err has the
 * status and the start of the answer), GF_PARSE, GF_TOOBIG, GF_NOMEM. */
gf_err gf_ma_pods_list(const struct gf_kube_conn *c, const char *ns, const char *selector,
		       long timeout_ms, char ***names, size_t *n, char *err, size_t errlen);

void gf_ma_pods_free(char **names, size_t n);

/* Decode a PodList JSON into sorted names (as above).  GF_PARSE, GF_NOMEM. */
gf_err gf_ma_pods_decode(const char *json, size_t len, char ***names, size_t *n, char *err,
			 size_t errlen);

#endif /* GF_METRICSAPI_PODS_H */
