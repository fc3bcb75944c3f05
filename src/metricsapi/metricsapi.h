/*
 * metricsapi/metricsapi.h - `gpufleet metrics-api`: the Kubernetes external
 * metrics API (external.metrics.k8s.io/v1beta1) served to the API
 * aggregator, from the gpufleet agents or from Prometheus (docs/metrics-api.md).
 *
 * Requests (GET; paths as kube-aggregator forwards them):
 *   /apis, /apis/external.metrics.k8s.io, /apis/external.metrics.k8s.io/v1beta1
 *       discovery: APIGroupList, APIGroup, APIResourceList (one resource per metric)
 *   /apis/external.metrics.k8s.io/v1beta1/namespaces/{ns}/{metric}?labelSelector=...
 *       ExternalMetricValueList with one item (see query.h), or no item when
 *       nothing matches
 *   /apis/external.metrics.k8s.io/v1beta1/namespaces/{ns}/{metric}_forecast?labelSelector=...
 *       the same item, its value max(current, forecast at now + horizon) from
 *       the history of this server's own answers (history.h; in memory, cold
 *       after a restart), label forecast_history_min = minutes behind it
 *   /healthz, /livez (200), /readyz (200 once the source has data, else 503)
 * Errors are metav1.Status objects: 401 Unauthorized (no verified front-proxy
 * certificate with an allowed CN, when authenticate is set), 404 NotFound
 * (unknown path or metric), 400 BadRequest (malformed labelSelector, or a
 * selector the source cannot answer), 503 ServiceUnavailable (no data yet),
 * 500 InternalError ("unable to fetch metrics"; the details go to stderr).
 *
 * Authentication: kube-aggregator is an authenticating proxy: a request is
 * accepted when its TLS client certificate verifies against the front-proxy
 * CA (the HTTP server's client CA) and its CN is one of allowed_names (any
 * when none are given); X-Remote-User is then trusted and only logged.
 * There is no further authorization: the API server has already checked the
 * caller's RBAC for external.metrics.k8s.io before proxying.
 *
 * Thread-safety: gf_metrics_api_serve may run on several threads at once.
 */
#ifndef GF_METRICSAPI_METRICSAPI_H
#define GF_METRICSAPI_METRICSAPI_H

#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"
#include "http/server.h"
#include "k8s/conn.h"
#include "metricsapi/agents.h"

typedef struct gf_metrics_api gf_metrics_api;

enum gf_ma_source_kind { GF_MA_SOURCE_AGENTS, GF_MA_SOURCE_PROMETHEUS };

/* An extra (or overriding) metric of the Prometheus source. */
struct gf_ma_rule {
	const char *name;   /* external metric name: [A-Za-z0-9_.:-], <= 200 bytes */
	const char *promql; /* template with <<.LabelMatchers>> */
};

struct gf_metrics_api_config {
	enum gf_ma_source_kind source;
	gf_ma_agents *agents;          /* agents source (borrowed: must outlive the server) */
	const char *prometheus_url;    /* Prometheus source, e.g. http://prometheus:9090 (copied) */
	long prometheus_timeout_ms;    /* 0 = 5000 */
	const struct gf_ma_rule *rules; /* Prometheus source only (copied) */
	size_t nrules;
	const struct gf_kube_conn *kube; /* pod-label selectors (borrowed); NULL: refused with 400 */
	bool all_namespaces;           /* do not restrict series to the request namespace */
	bool authenticate;             /* require the front-proxy client certificate */
	const char *const *allowed_names; /* CNs accepted (copied); none = any verified CN */
	size_t nallowed;
	bool log_requests;             /* one stderr line per metric request */
	int32_t forecast_horizon_s;    /* <metric>_forecast: forecast at now + this (0 = 600) */
	int32_t forecast_history_min;  /* minutes of history kept per series (0 = 8 days) */
};

/* GF_INVAL (bad config: missing source, bad rule), GF_NOMEM. */
gf_err gf_metrics_api_create(const struct gf_metrics_api_config *cfg, gf_metrics_api **out);

/* NULL is a no-op.  Stop the HTTP server first. */
void gf_metrics_api_destroy(gf_metrics_api *a);

/* One request, independent of HTTP (the routes below call it; so do the
 * unit tests and the benchmark). */
struct gf_ma_request {
	const char *method;         /* "GET" */
	const char *path;           /* decoded path, no query string */
	const char *label_selector; /* decoded labelSelector or NULL */
	bool peer_verified;         /* TLS client certificate verified against the client CA */
	const char *peer_cn;        /* its CN ("" when none) */
	const char *remote_user;    /* X-Remote-User or NULL */
};

void gf_metrics_api_serve(gf_metrics_api *a, const struct gf_ma_request *r,
			  struct gf_http_response *resp);

/* Fill routes (room for max, 8 is enough) for gf_http_server_create; they
 * point at a.  Returns the number written. */
size_t gf_metrics_api_routes(gf_metrics_api *a, struct gf_http_route *routes, size_t max);

#endif /* GF_METRICSAPI_METRICSAPI_H */
