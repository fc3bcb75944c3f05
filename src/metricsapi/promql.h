/*
 * metricsapi/promql.h - the Prometheus source: a PromQL query per request,
 * built from the metric's template and the request's selector.
 *
 * Matchers (what replaces <<.LabelMatchers>>), all values escaped for a
 * PromQL double-quoted string, set values also escaped for the regex:
 *   request namespace ns        namespace="ns"
 *   k=v / k!=v                  L="v" / L!="v"
 *   k in (a,b) / k notin (a,b)  L=~"a|b" / L!~"a|b"
 *   k / !k                      L!="" / L=""
 *   gpu (model)                 modelName=~"<regex>": each '-' of the label-value
 *                               form matches '-' or a run of other characters
 *   pods of a workload selector pod=~"p1|p2|..."
 * with L the agents' label (gpu_index -> gpu, node -> hostname, UUID,
 * namespace, pod, container).  '>'/'<' have no PromQL label matcher:
 * GF_UNSUPPORTED.  No matcher at all gives __name__!="" (Prometheus refuses
 * an empty {}).
 */
#ifndef GF_METRICSAPI_PROMQL_H
#define GF_METRICSAPI_PROMQL_H

#include <stddef.h>

#include "core/error.h"
#include "core/obuf.h"
#include "metricsapi/query.h"

/* Append q's matchers to out.  GF_UNSUPPORTED (err says which requirement),
 * GF_TOOBIG/GF_NOMEM from out. */
gf_err gf_promql_matchers(const struct gf_ma_query *q, struct gf_obuf *out, char *err,
			  size_t errlen);

/* Append tmpl with every GF_MA_MATCHERS replaced by matchers. */
gf_err gf_promql_expand(const char *tmpl, const char *matchers, struct gf_obuf *out);

/* Append s escaped for a PromQL double-quoted string (\\ \" \n), or, with
 * regex, first with every regex metacharacter backslash-escaped. */
gf_err gf_promql_escape(struct gf_obuf *out, const char *s, int regex);

/* Decode a Prometheus /api/v1/query response (vector or scalar) into out:
 * one item per sample, labels = the sample's labels.  GF_PARSE (err: the
 * JSON path and what was expected, or Prometheus' own error message),
 * GF_TOOBIG past GF_MA_MAX_ITEMS, GF_NOMEM. */
gf_err gf_promql_decode(const char *json, size_t len, struct gf_ma_result *out, char *err,
			size_t errlen);

/*
 * The HTTP part of a query, shared by gf_promql_query and gf_promrange_query:
 * GET base_url/api/v1/ENDPOINT?query=<promql, URL-escaped>EXTRA ("" or
 * "&name=value..." already escaped), the answer appended to body (its cap is
 * the answer's limit), within timeout_ms; *code gets the HTTP status.  GF_OK
 * when an answer came, whatever its status (the caller decodes it);
 * GF_UNAVAILABLE (no answer: err "prometheus BASE_URL: why"), GF_TOOBIG (the
 * answer passed body's cap; err likewise), GF_NOMEM.  Thread-safe.
 */
gf_err gf_promql_get(const char *base_url, const char *endpoint, const char *promql, const char *extra,
		     long timeout_ms, struct gf_obuf *body, long *code, char *err, size_t errlen);

/* Run promql against base_url (e.g. "http://prometheus:9090") with
 * /api/v1/query and decode the answer.  GF_UNAVAILABLE (connection, timeout,
 * non-JSON answer), or gf_promql_decode's errors.  Thread-safe. */
gf_err gf_promql_query(const char *base_url, const char *promql, long timeout_ms,
		       struct gf_ma_result *out, char *err, size_t errlen);

#endif /* GF_METRICSAPI_PROMQL_H */
