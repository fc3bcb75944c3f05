/*
 * metricsapi/metricsapi.c - the external metrics API front end: discovery
 * documents, the metric query, metav1.Status errors, the front-proxy check.
 *
 * A metric request runs: authenticate -> parse path (namespace, metric) ->
 * find the metric (Prometheus rules first, then the catalog) -> parse the
 * labelSelector -> split it into series requirements (query.h vocabulary)
 * and pod-label requirements -> resolve the latter to pod names through the
 * API server -> ask the source -> render.  Every failure maps to exactly one
 * Status code (see metricsapi.h); nothing is cached between requests, so
 * the handler is reentrant (the HTTP server may run it on several threads).
 */
#include "metricsapi/metricsapi.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "autoscale/forecast.h"
#include "core/kstatus.h"
#include "metricsapi/history.h"
#include "http/auth.h"
#include "metricsapi/pods.h"
#include "metricsapi/promql.h"
#include "metricsapi/promrange.h"
#include "metricsapi/query.h"
#include "metricsapi/selector.h"

#define GROUP "external.metrics.k8s.io"
#define GV GROUP "/v1beta1"
#define JSON "application/json"
#define MAX_RULES 256

struct gf_metrics_api {
	struct gf_metrics_api_config cfg;
	char *prom_url;
	struct gf_ma_metric *rules; /* names/templates owned */
	size_t nrules;
	char **allowed;
	size_t nallowed;
	gf_ma_history *history; /* for the _forecast metrics */
};

/* ---- helpers ------------------------------------------------------------------- */

static void status(struct gf_http_response *resp, unsigned code, const char *reason,
		   const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void status(struct gf_http_response *resp, unsigned code, const char *reason,
		   const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	resp->status = code;
	resp->content_type = JSON;
	gf_obuf_reset(&resp->body);
	gf_kstatus_render(&resp->body, code, reason, msg);
}

/* A DNS-1123 label: <= 63 of [a-z0-9-], alphanumeric at both ends. */
static bool valid_namespace(const char *s, size_t n)
{
	if (n == 0 || n > 63 || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!(islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]) || s[i] == '-'))
			return false;
	return true;
}

static bool valid_metric_name(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 200 || !strcmp(s, ".") || !strcmp(s, ".."))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!(isalnum((unsigned char)s[i]) || strchr("_.:-", s[i])))
			return false;
	return true;
}

static const struct gf_ma_metric *find_metric(const gf_metrics_api *a, const char *name)
{
	for (size_t i = 0; i < a->nrules; i++)
		if (!strcmp(a->rules[i].name, name))
			return &a->rules[i];
	size_t n;
	const struct gf_ma_metric *cat = gf_ma_catalog(&n);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(cat[i].name, name))
			return a->cfg.source == GF_MA_SOURCE_AGENTS && !cat[i].series ? NULL : &cat[i];
	return NULL;
}

/* name = <base>_forecast with base a metric: that metric, *forecast set. */
static const struct gf_ma_metric *find_forecast(const gf_metrics_api *a, const char *name, bool *forecast)
{
	size_t n = strlen(name), k = strlen(GF_MA_FORECAST_SUFFIX);
	char base[256];

	if (n <= k || n - k >= sizeof(base) || strcmp(name + n - k, GF_MA_FORECAST_SUFFIX))
		return NULL;
	memcpy(base, name, n - k);
	base[n - k] = '\0';
	const struct gf_ma_metric *m = find_metric(a, base);
	*forecast = m != NULL;
	return m;
}

/* Prometheus mode's history: 7 days and 30 minutes of minute points ending at now's minute. */
#define RANGE_POINTS (7 * 1440 + 30 + 1)

/* The forecast of item from its series in range (same labels): max(value, forecast); *held minutes. */
static double range_forecast(const struct gf_ma_range *range, const struct gf_ma_item *item, int32_t horizon,
			     size_t *held)
{
	struct gf_forecast_params p = gf_forecast_params_default();

	*held = 0;
	for (size_t j = 0; j < range->n; j++) {
		if (!cJSON_Compare(range->s[j].labels, item->labels, true))
			continue;
		size_t f0 = 0;
		while (f0 < range->npoints && isnan(range->s[j].v[f0]))
			f0++;
		*held = range->npoints - f0;
		double f = gf_forecast_peak(range->s[j].v + f0, *held, &p, horizon, 60);
		return f > item->value ? f : item->value;
	}
	return item->value;
}

/* Replace each item's value by the forecast metric: from range (Prometheus mode), else from the
 * server's own history, key = namespace, metric, selector, item. */
static gf_err apply_forecast(gf_metrics_api *a, const char *ns, const char *metric, const char *selector,
			     const struct gf_ma_range *range, struct gf_ma_result *res)
{
	int32_t horizon = a->cfg.forecast_horizon_s ? a->cfg.forecast_horizon_s : 600;

	for (size_t i = 0; i < res->n; i++) {
		char key[1024], held_s[32];
		size_t held;
		double f;

		if (range) {
			f = range_forecast(range, &res->items[i], horizon, &held);
		} else {
			snprintf(key, sizeof(key), "%s/%s?%.900s#%zu", ns, metric, selector ? selector : "", i);
			gf_err e = gf_ma_history_forecast(a->history, key, res->items[i].ts, res->items[i].value,
							  horizon, &f, &held);
			if (e)
				return e;
		}
		res->items[i].value = f;
		snprintf(held_s, sizeof(held_s), "%zu", held);
		if (res->items[i].labels && !cJSON_AddStringToObject(res->items[i].labels, "forecast_history_min", held_s))
			return GF_NOMEM;
	}
	return GF_OK;
}

/* ---- discovery ----------------------------------------------------------------- */

static cJSON *group_version(void)
{
	cJSON *v = cJSON_CreateObject();
	cJSON_AddStringToObject(v, "groupVersion", GV);
	cJSON_AddStringToObject(v, "version", "v1beta1");
	return v;
}

static cJSON *api_group(bool with_kind)
{
	cJSON *g = cJSON_CreateObject();
	if (with_kind) {
		cJSON_AddStringToObject(g, "kind", "APIGroup");
		cJSON_AddStringToObject(g, "apiVersion", "v1");
	}
	cJSON_AddStringToObject(g, "name", GROUP);
	cJSON *vs = cJSON_AddArrayToObject(g, "versions");
	cJSON_AddItemToArray(vs, group_version());
	cJSON_AddItemToObject(g, "preferredVersion", group_version());
	return g;
}

static void send_json(struct gf_http_response *resp, cJSON *doc)
{
	char *s = doc ? cJSON_PrintUnformatted(doc) : NULL;
	cJSON_Delete(doc);
	if (!s) {
		status(resp, 500, "InternalError", "Internal error occurred: out of memory");
		return;
	}
	resp->content_type = JSON;
	gf_obuf_puts(&resp->body, s);
	cJSON_free(s);
}

static void add_resource(cJSON *res, const char *name)
{
	cJSON *r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "name", name);
	cJSON_AddStringToObject(r, "singularName", "");
	cJSON_AddBoolToObject(r, "namespaced", true);
	cJSON_AddStringToObject(r, "kind", "ExternalMetricValueList");
	cJSON *verbs = cJSON_AddArrayToObject(r, "verbs");
	cJSON_AddItemToArray(verbs, cJSON_CreateString("get"));
	cJSON_AddItemToArray(res, r);
}

static void resource_list(const gf_metrics_api *a, struct gf_http_response *resp)
{
	cJSON *doc = cJSON_CreateObject();
	cJSON_AddStringToObject(doc, "kind", "APIResourceList");
	cJSON_AddStringToObject(doc, "apiVersion", "v1");
	cJSON_AddStringToObject(doc, "groupVersion", GV);
	cJSON *res = cJSON_AddArrayToObject(doc, "resources");
	for (size_t i = 0; i < a->nrules; i++)
		add_resource(res, a->rules[i].name);
	size_t n;
	const struct gf_ma_metric *cat = gf_ma_catalog(&n);
	for (size_t i = 0; i < n; i++) {
		bool overridden = false;
		for (size_t j = 0; j < a->nrules && !overridden; j++)
			overridden = !strcmp(a->rules[j].name, cat[i].name);
		if (!overridden)
			add_resource(res, cat[i].name);
	}
	/* then each one's forecast, after them all (the first entries stay as they were) */
	int nres = cJSON_GetArraySize(res);
	for (int i = 0; i < nres; i++) {
		const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(res, i), "name"));
		char f[256];

		if (name && strlen(name) + strlen(GF_MA_FORECAST_SUFFIX) < sizeof(f)) {
			snprintf(f, sizeof(f), "%s%s", name, GF_MA_FORECAST_SUFFIX);
			add_resource(res, f);
		}
	}
	send_json(resp, doc);
}

/* ---- the metric query ------------------------------------------------------------ */

static void serve_metric(gf_metrics_api *a, const struct gf_ma_request *r, const char *rest,
			 struct gf_http_response *resp)
{
	/* rest = "namespaces/{ns}/{metric}" */
	const char *ns = rest + strlen("namespaces/");
	const char *slash = strncmp(rest, "namespaces/", 11) ? NULL : strchr(ns, '/');
	if (!slash || strchr(slash + 1, '/')) {
		status(resp, 404, "NotFound", "the server could not find the requested resource");
		return;
	}
	size_t nslen = (size_t)(slash - ns);
	const char *metric = slash + 1;
	if (!valid_namespace(ns, nslen)) {
		status(resp, 400, "BadRequest", "invalid namespace '%.*s'", (int)(nslen > 100 ? 100 : nslen), ns);
		return;
	}
	char nsbuf[64];
	memcpy(nsbuf, ns, nslen);
	nsbuf[nslen] = '\0';
	const struct gf_ma_metric *m = valid_metric_name(metric) ? find_metric(a, metric) : NULL;
	bool forecast = false;
	if (!m && valid_metric_name(metric))
		m = find_forecast(a, metric, &forecast);
	if (!m) {
		status(resp, 404, "NotFound", "the server could not find the metric %.200s for namespace %s",
		       metric, nsbuf);
		return;
	}
	char err[1024] = "";
	struct gf_selector *sel = malloc(2 * sizeof(*sel));
	if (!sel) {
		status(resp, 500, "InternalError", "Internal error occurred: out of memory");
		return;
	}
	struct gf_selector *series = &sel[0], *podsel = &sel[1];
	gf_err e = gf_selector_parse(r->label_selector, series, err, sizeof(err));
	if (e) {
		status(resp, 400, "BadRequest", "%s", err);
		free(sel);
		return;
	}
	/* Split: series requirements stay in series, pod-label ones go to podsel. */
	podsel->nreqs = 0;
	unsigned k = 0;
	for (unsigned i = 0; i < series->nreqs; i++) {
		if (gf_ma_key_of(series->reqs[i].key) >= 0) {
			if (k != i)
				series->reqs[k] = series->reqs[i];
			k++;
		} else {
			podsel->reqs[podsel->nreqs++] = series->reqs[i];
		}
	}
	series->nreqs = k;

	struct gf_ma_query q = { .ns = a->cfg.all_namespaces ? NULL : nsbuf, .metric = m,
				 .series_sel = series };
	struct gf_ma_range *range = NULL; /* Prometheus mode's history for a _forecast metric */
	struct gf_ma_result *res = malloc(sizeof(*res));
	if (!res) {
		free(sel);
		status(resp, 500, "InternalError", "Internal error occurred: out of memory");
		return;
	}
	gf_ma_result_init(res);
	if (podsel->nreqs) {
		if (!a->cfg.kube) {
			status(resp, 400, "BadRequest",
			       "label '%s' is not a series label (gpu, gpu_index, UUID, node, namespace, "
			       "pod, container); selecting pods by their labels needs API server access, "
			       "which this server was started without",
			       podsel->reqs[0].key);
			goto out;
		}
		char selstr[8192];
		size_t off = 0;
		for (unsigned i = 0; i < podsel->nreqs; i++) {
			if (i)
				selstr[off++] = ',';
			if (gf_sel_req_format(&podsel->reqs[i], selstr + off, sizeof(selstr) - off - 1)) {
				status(resp, 400, "BadRequest", "labelSelector too long");
				goto out;
			}
			off += strlen(selstr + off);
		}
		selstr[off] = '\0';
		e = gf_ma_pods_list(a->cfg.kube, nsbuf, selstr, 5000, &q.pods, &q.npods, err,
				    sizeof(err));
		if (e) {
			fprintf(stderr, "gpufleet metrics-api: %s/%s: %s\n", nsbuf, metric, err);
			status(resp, 500, "InternalError",
			       "Internal error occurred: unable to fetch metrics");
			goto out;
		}
		q.pod_filter = true;
	}

	if (a->cfg.source == GF_MA_SOURCE_AGENTS) {
		e = gf_ma_agents_query(a->cfg.agents, &q, (int64_t)time(NULL), res, err, sizeof(err));
	} else if (q.pod_filter && !q.npods) {
		e = GF_OK; /* no pod: no series, no need to ask */
	} else {
		struct gf_obuf mb, pq;
		gf_obuf_init(&mb, 1u << 20);
		gf_obuf_init(&pq, 2u << 20);
		e = gf_promql_matchers(&q, &mb, err, sizeof(err));
		if (!e)
			e = gf_promql_expand(m->promql, mb.data ? mb.data : "", &pq);
		if (!e)
			e = gf_promql_query(a->prom_url, pq.data, a->cfg.prometheus_timeout_ms, res, err,
					    sizeof(err));
		if (!e && forecast && res->n) {
			int64_t end = (int64_t)time(NULL) / 60 * 60;

			if (!(range = malloc(sizeof(*range))))
				e = GF_NOMEM;
			else
				e = gf_promrange_query(a->prom_url, pq.data, end - (RANGE_POINTS - 1) * 60, 60,
						       RANGE_POINTS, a->cfg.prometheus_timeout_ms, range, err,
						       sizeof(err));
			if (e) {
				free(range);
				range = NULL;
			}
		}
		gf_obuf_release(&mb);
		gf_obuf_release(&pq);
	}
	switch (e) {
	case GF_OK:
		break;
	case GF_UNSUPPORTED:
	case GF_INVAL:
		status(resp, 400, "BadRequest", "%s", err);
		goto out;
	case GF_UNAVAILABLE:
		if (a->cfg.source == GF_MA_SOURCE_AGENTS) {
			status(resp, 503, "ServiceUnavailable", "%s", err);
			goto out;
		}
		__attribute__((fallthrough));
	default:
		fprintf(stderr, "gpufleet metrics-api: %s/%s: %s (%s)\n", nsbuf, metric,
			err[0] ? err : gf_strerror(e), gf_err_name(e));
		status(resp, 500, "InternalError", "Internal error occurred: unable to fetch metrics");
		goto out;
	}
	if (forecast && (e = apply_forecast(a, nsbuf, metric, r->label_selector, range, res))) {
		status(resp, 500, "InternalError", "Internal error occurred: %s", gf_strerror(e));
		goto out;
	}
	e = gf_ma_render_list(metric, res, &resp->body);
	if (e) {
		status(resp, 500, "InternalError", "Internal error occurred: %s", gf_strerror(e));
		goto out;
	}
	resp->content_type = JSON;
	if (a->cfg.log_requests)
		fprintf(stderr, "gpufleet metrics-api: GET %s/%s selector='%s' user=%s: %zu item(s)%s%s\n",
			nsbuf, metric, r->label_selector ? r->label_selector : "",
			r->remote_user ? r->remote_user : "-", res->n, res->n ? ", " : "",
			res->n ? "ok" : "");
out:
	if (range) {
		gf_ma_range_release(range);
		free(range);
	}
	gf_ma_result_release(res);
	free(res);
	gf_ma_pods_free(q.pods, q.npods);
	free(sel);
}

static bool authenticated(const gf_metrics_api *a, const struct gf_ma_request *r)
{
	struct gf_http_auth au = { .required = a->cfg.authenticate, .client_certs = true,
				   .allowed_cns = (const char *const *)a->allowed, .nallowed = a->nallowed };
	return gf_http_auth_allows(&au, r->peer_verified, r->peer_cn, NULL);
}

void gf_metrics_api_serve(gf_metrics_api *a, const struct gf_ma_request *r,
			  struct gf_http_response *resp)
{
	const char *p = r->path;
	if (!strcmp(p, "/healthz") || !strcmp(p, "/livez")) {
		gf_obuf_puts(&resp->body, "ok");
		return;
	}
	if (!strcmp(p, "/readyz")) {
		bool ready = a->cfg.source != GF_MA_SOURCE_AGENTS || gf_ma_agents_ready(a->cfg.agents);
		resp->status = ready ? 200 : 503;
		gf_obuf_puts(&resp->body, ready ? "ok" : "no scrape of the agents has finished yet");
		return;
	}
	if (!authenticated(a, r)) {
		status(resp, 401, "Unauthorized",
		       "Unauthorized: a client certificate of the front proxy (requestheader CA, "
		       "allowed names) is required");
		return;
	}
	if (r->method && strcmp(r->method, "GET") && strcmp(r->method, "HEAD")) {
		status(resp, 405, "MethodNotAllowed", "the server does not allow this method on the requested resource");
		return;
	}
	if (!strcmp(p, "/apis")) {
		cJSON *doc = cJSON_CreateObject();
		cJSON_AddStringToObject(doc, "kind", "APIGroupList");
		cJSON_AddStringToObject(doc, "apiVersion", "v1");
		cJSON *groups = cJSON_AddArrayToObject(doc, "groups");
		cJSON_AddItemToArray(groups, api_group(false));
		send_json(resp, doc);
	} else if (!strcmp(p, "/apis/" GROUP)) {
		send_json(resp, api_group(true));
	} else if (!strcmp(p, "/apis/" GV)) {
		resource_list(a, resp);
	} else if (!strncmp(p, "/apis/" GV "/", strlen("/apis/" GV "/"))) {
		serve_metric(a, r, p + strlen("/apis/" GV "/"), resp);
	} else {
		status(resp, 404, "NotFound", "the server could not find the requested resource");
	}
}

/* ---- HTTP glue ------------------------------------------------------------------- */

static void on_http(void *ud, const struct gf_http_request *req, struct gf_http_response *resp)
{
	char cn[256];
	struct gf_ma_request r = {
		.method = req->method,
		.path = req->path,
		.label_selector = gf_http_request_query(req, "labelSelector"),
		.remote_user = gf_http_request_header(req, "X-Remote-User"),
		.peer_cn = cn,
	};
	r.peer_verified = gf_http_request_peer_cn(req, cn, sizeof(cn));
	gf_metrics_api_serve(ud, &r, resp);
}

size_t gf_metrics_api_routes(gf_metrics_api *a, struct gf_http_route *routes, size_t max)
{
	static const char *const paths[] = { "/apis", "/apis/" GROUP, "/apis/" GV, "/apis/" GV "/*",
					     "/healthz", "/livez", "/readyz" };
	size_t n = 0;
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]) && n < max; i++)
		routes[n++] = (struct gf_http_route){ "GET", paths[i], on_http, a };
	return n;
}

/* ---- lifecycle -------------------------------------------------------------------- */

gf_err gf_metrics_api_create(const struct gf_metrics_api_config *cfg, gf_metrics_api **out)
{
	*out = NULL;
	if (!cfg || (cfg->source == GF_MA_SOURCE_AGENTS && !cfg->agents) ||
	    (cfg->source == GF_MA_SOURCE_PROMETHEUS && !cfg->prometheus_url) ||
	    cfg->nrules > MAX_RULES || (cfg->nrules && !cfg->rules) || cfg->forecast_horizon_s < 0 ||
	    cfg->forecast_horizon_s > 86400 ||
	    (cfg->forecast_history_min && (cfg->forecast_history_min < 60 || cfg->forecast_history_min > 60 * 1440)))
		return GF_INVAL;
	for (size_t i = 0; i < cfg->nrules; i++)
		if (!cfg->rules[i].name || !valid_metric_name(cfg->rules[i].name) ||
		    !cfg->rules[i].promql || !cfg->rules[i].promql[0])
			return GF_INVAL;
	gf_metrics_api *a = calloc(1, sizeof(*a));
	if (!a)
		return GF_NOMEM;
	a->cfg = *cfg;
	a->cfg.rules = NULL;
	a->cfg.allowed_names = NULL;
	a->cfg.prometheus_url = NULL;
	if (!a->cfg.prometheus_timeout_ms)
		a->cfg.prometheus_timeout_ms = 5000;
	if (cfg->prometheus_url && !(a->prom_url = strdup(cfg->prometheus_url)))
		goto nomem;
	if (gf_ma_history_create(cfg->forecast_history_min ? cfg->forecast_history_min : GF_MA_HISTORY_DEFAULT_MIN,
				 &a->history))
		goto nomem;
	if (cfg->nrules) {
		if (!(a->rules = calloc(cfg->nrules, sizeof(*a->rules))))
			goto nomem;
		for (size_t i = 0; i < cfg->nrules; i++) {
			a->nrules++;
			a->rules[i].agg = GF_MA_AVG;
			if (!(a->rules[i].name = strdup(cfg->rules[i].name)) ||
			    !(a->rules[i].promql = strdup(cfg->rules[i].promql)))
				goto nomem;
		}
	}
	if (cfg->nallowed) {
		if (!(a->allowed = calloc(cfg->nallowed, sizeof(char *))))
			goto nomem;
		for (size_t i = 0; i < cfg->nallowed; i++) {
			a->nallowed++;
			if (!(a->allowed[i] = strdup(cfg->allowed_names[i])))
				goto nomem;
		}
	}
	*out = a;
	return GF_OK;
nomem:
	gf_metrics_api_destroy(a);
	return GF_NOMEM;
}

void gf_metrics_api_destroy(gf_metrics_api *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->nrules; i++) {
		free((char *)a->rules[i].name);
		free((char *)a->rules[i].promql);
	}
	free(a->rules);
	for (size_t i = 0; i < a->nallowed; i++)
		free(a->allowed[i]);
	free(a->allowed);
	free(a->prom_url);
	gf_ma_history_destroy(a->history);
	free(a);
}
