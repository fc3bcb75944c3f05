/*
 * metricsapi/promql.c - PromQL matchers and templates, the /api/v1/query
 * client (libcurl) and its decoder (the answer's envelope: prom/promjson.h).
 *
 * Injection safety: every value put in a query passes gf_promql_escape, even
 * though the selector parser already restricts values to [A-Za-z0-9._-]:
 * the namespace comes from the URL path and the pod names from the API
 * server.  Responses are capped at 16 MiB.
 */
#include "metricsapi/promql.h"

#include <curl/curl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prom/promjson.h"

#define RESPONSE_CAP (16u << 20)

gf_err gf_promql_escape(struct gf_obuf *out, const char *s, int regex)
{
	for (; *s; s++) {
		char c = *s;
		if (regex && strchr(".+*?()|[]{}^$\\", c))
			gf_obuf_puts(out, "\\\\"); /* regex backslash, escaped for the string */
		if (c == '\\')
			gf_obuf_puts(out, "\\\\");
		else if (c == '"')
			gf_obuf_puts(out, "\\\"");
		else if (c == '\n')
			gf_obuf_puts(out, "\\n");
		else
			gf_obuf_append(out, &c, 1);
	}
	return gf_obuf_error(out);
}

/* The regex (already string-escaped) matching model names whose label-value
 * form is v (see gf_kube_label_value in agent/). */
static void model_regex(struct gf_obuf *out, const char *v)
{
	gf_obuf_puts(out, "[^A-Za-z0-9]*");
	for (; *v; v++) {
		if (*v == '-') {
			gf_obuf_puts(out, "(-|[^A-Za-z0-9._-]+)");
		} else {
			char c[2] = { *v, 0 };
			gf_promql_escape(out, c, 1);
		}
	}
	gf_obuf_puts(out, "[^A-Za-z0-9]*");
}

static const char *prom_label(int key)
{
	switch (key) {
	case GF_MA_K_GPU: return "modelName";
	case GF_MA_K_GPU_INDEX: return "gpu";
	case GF_MA_K_UUID: return "UUID";
	case GF_MA_K_NODE: return "hostname";
	case GF_MA_K_NAMESPACE: return "namespace";
	case GF_MA_K_POD: return "pod";
	case GF_MA_K_CONTAINER: return "container";
	}
	return NULL;
}

static void sep(struct gf_obuf *out, bool *first)
{
	if (!*first)
		gf_obuf_puts(out, ",");
	*first = false;
}

gf_err gf_promql_matchers(const struct gf_ma_query *q, struct gf_obuf *out, char *err,
			  size_t errlen)
{
	bool first = true;
	if (q->ns) {
		sep(out, &first);
		gf_obuf_puts(out, "namespace=\"");
		gf_promql_escape(out, q->ns, 0);
		gf_obuf_puts(out, "\"");
	}
	for (unsigned i = 0; q->series_sel && i < q->series_sel->nreqs; i++) {
		const struct gf_sel_req *r = &q->series_sel->reqs[i];
		int key = gf_ma_key_of(r->key);
		const char *L = prom_label(key);
		if (!L) {
			if (errlen)
				snprintf(err, errlen, "label %s is not a series label", r->key);
			return GF_INVAL;
		}
		bool model = key == GF_MA_K_GPU;
		sep(out, &first);
		gf_obuf_puts(out, L);
		switch (r->op) {
		case GF_SEL_EXISTS: gf_obuf_puts(out, "!=\"\""); continue;
		case GF_SEL_NOTEXISTS: gf_obuf_puts(out, "=\"\""); continue;
		case GF_SEL_GT:
		case GF_SEL_LT:
			if (errlen)
				snprintf(err, errlen,
					 "labelSelector: '%s' uses '%c', which the Prometheus source "
					 "cannot express as a label matcher",
					 r->key, r->op == GF_SEL_GT ? '>' : '<');
			return GF_UNSUPPORTED;
		case GF_SEL_EQ:
		case GF_SEL_NE:
			if (!model) {
				gf_obuf_puts(out, r->op == GF_SEL_EQ ? "=\"" : "!=\"");
				gf_promql_escape(out, r->values[0], 0);
				gf_obuf_puts(out, "\"");
				continue;
			}
			__attribute__((fallthrough)); /* a model is a one-value regex set */
		case GF_SEL_IN:
		case GF_SEL_NOTIN: {
			bool pos = r->op == GF_SEL_EQ || r->op == GF_SEL_IN;
			gf_obuf_puts(out, pos ? "=~\"" : "!~\"");
			for (unsigned j = 0; j < r->nvalues; j++) {
				if (j)
					gf_obuf_puts(out, "|");
				if (model)
					model_regex(out, r->values[j]);
				else
					gf_promql_escape(out, r->values[j], 1);
			}
			gf_obuf_puts(out, "\"");
			continue;
		}
		}
	}
	if (q->pod_filter) {
		sep(out, &first);
		gf_obuf_puts(out, "pod=~\"");
		for (size_t j = 0; j < q->npods; j++) {
			if (j)
				gf_obuf_puts(out, "|");
			gf_promql_escape(out, q->pods[j], 1);
		}
		gf_obuf_puts(out, "\"");
	}
	if (first)
		gf_obuf_puts(out, "__name__!=\"\"");
	return gf_obuf_error(out);
}

gf_err gf_promql_expand(const char *tmpl, const char *matchers, struct gf_obuf *out)
{
	size_t ml = strlen(GF_MA_MATCHERS);
	for (;;) {
		const char *p = strstr(tmpl, GF_MA_MATCHERS);
		if (!p)
			break;
		gf_obuf_append(out, tmpl, (size_t)(p - tmpl));
		gf_obuf_puts(out, matchers);
		tmpl = p + ml;
	}
	gf_obuf_puts(out, tmpl);
	return gf_obuf_error(out);
}

static gf_err derr(char *err, size_t errlen, const char *what, const char *detail)
{
	if (errlen)
		snprintf(err, errlen, "prometheus response: %s: %s", what, detail);
	return GF_PARSE;
}

/* [ <unix time>, "<value>" ] */
static gf_err decode_sample(const cJSON *pair, double *v, int64_t *ts, char *err, size_t errlen)
{
	double tt;
	enum gf_prom_sample_check c = gf_prom_sample(pair, &tt, v);
	if (c != GF_PROM_SAMPLE_OK)
		return derr(err, errlen, "value", gf_prom_sample_error(c));
	*ts = (tt > -1e15 && tt < 1e15) ? (int64_t)tt : 0;
	return GF_OK;
}

gf_err gf_promql_decode(const char *json, size_t len, struct gf_ma_result *out, char *err,
			size_t errlen)
{
	struct gf_prom_answer a;
	gf_err e = gf_prom_answer_parse(json, len, GF_PROM_VECTOR | GF_PROM_SCALAR, "response", &a, err, errlen);
	if (e)
		return e;
	double v;
	int64_t ts;
	if (a.type == GF_PROM_SCALAR) {
		e = decode_sample(a.result, &v, &ts, err, errlen);
		if (!e)
			e = gf_ma_result_add(out, cJSON_CreateObject(), v, ts);
		goto out;
	}
	const cJSON *it;
	cJSON_ArrayForEach(it, a.result)
	{
		bool nomem;
		const cJSON *metric = cJSON_GetObjectItemCaseSensitive(it, "metric");
		if (!cJSON_IsObject(metric)) {
			e = derr(err, errlen, "data.result[].metric", "expected an object");
			goto out;
		}
		e = decode_sample(cJSON_GetObjectItemCaseSensitive(it, "value"), &v, &ts, err, errlen);
		if (e)
			goto out;
		cJSON *labels = gf_prom_labels(metric, &nomem);
		if (!labels) {
			e = GF_NOMEM;
			goto out;
		}
		e = gf_ma_result_add(out, labels, v, ts);
		if (e) {
			if (errlen)
				snprintf(err, errlen, "prometheus returned more than %d series",
					 GF_MA_MAX_ITEMS);
			goto out;
		}
	}
out:
	gf_prom_answer_release(&a);
	return e;
}

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
	struct gf_obuf *b = ud;
	return gf_obuf_append(b, p, sz * n) ? 0 : sz * n;
}

gf_err gf_promql_get(const char *base_url, const char *endpoint, const char *promql, const char *extra,
		     long timeout_ms, struct gf_obuf *body, long *code, char *err, size_t errlen)
{
	*code = 0;
	CURL *h = curl_easy_init();
	if (!h)
		return GF_NOMEM;
	gf_err e = GF_OK;
	struct gf_obuf url;
	gf_obuf_init(&url, 1u << 20);
	char *q = curl_easy_escape(h, promql, 0);
	if (!q) {
		e = GF_NOMEM;
		goto out;
	}
	size_t bl = strlen(base_url);
	while (bl && base_url[bl - 1] == '/')
		bl--;
	gf_obuf_append(&url, base_url, bl);
	gf_obuf_printf(&url, "/api/v1/%s?query=%s%s", endpoint, q, extra);
	curl_free(q);
	if ((e = gf_obuf_error(&url)))
		goto out;
	curl_easy_setopt(h, CURLOPT_URL, url.data);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, body);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	CURLcode cc = curl_easy_perform(h);
	if (cc != CURLE_OK) {
		if (errlen)
			snprintf(err, errlen, "prometheus %s: %s", base_url, curl_easy_strerror(cc));
		e = gf_obuf_error(body) ? GF_TOOBIG : GF_UNAVAILABLE;
		goto out;
	}
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, code);
out:
	gf_obuf_release(&url);
	curl_easy_cleanup(h);
	return e;
}

gf_err gf_promql_query(const char *base_url, const char *promql, long timeout_ms,
		       struct gf_ma_result *out, char *err, size_t errlen)
{
	struct gf_obuf body;
	gf_obuf_init(&body, RESPONSE_CAP);
	long code;
	gf_err e = gf_promql_get(base_url, "query", promql, "", timeout_ms, &body, &code, err, errlen);
	if (!e) {
		e = gf_promql_decode(body.data ? body.data : "", body.len, out, err, errlen);
		if (e && code >= 500)
			e = GF_UNAVAILABLE;
	}
	gf_obuf_release(&body);
	return e;
}
