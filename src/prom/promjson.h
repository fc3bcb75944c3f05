/*
 * prom/promjson.h - a Prometheus HTTP API answer (/api/v1/query,
 * /api/v1/query_range), decoded once for every reader: the envelope
 *
 *   {"status":"success","data":{"resultType":"vector","result":[...]}}
 *   {"status":"error","errorType":"bad_data","error":"parse error ..."}
 *
 * its samples ([<unix time>, "<value>"], values as Prometheus writes them:
 * decimal, NaN, +Inf, -Inf) and its series' labels.  The readers
 * (metricsapi/promql.c, metricsapi/promrange.c, costapi/promsrc.c) walk the
 * result array themselves: what a series means is theirs.
 *
 * Errors are one line naming which answer and what was expected:
 *   prometheus <what>: not JSON
 *   prometheus <what>: status: expected a string
 *   prometheus <what>: query failed: <Prometheus' own error text>
 *   prometheus <what>: data: expected resultType <kinds> and a result
 * with <what> the caller's name for the answer ("response", "allocation
 * answer", ...).
 */
#ifndef GF_PROM_PROMJSON_H
#define GF_PROM_PROMJSON_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"

/* Result types, as a mask of those a reader accepts. */
enum gf_prom_type { GF_PROM_VECTOR = 1, GF_PROM_SCALAR = 2, GF_PROM_MATRIX = 4 };

struct gf_prom_answer {
	cJSON *doc;           /* the whole answer (owned) */
	enum gf_prom_type type;
	const cJSON *result;  /* data.result: an array (vector, matrix) or a [time, "value"] pair (scalar) */
};

/*
 * Parse json and check its envelope: status "success", data.resultType one
 * of want (vector and matrix with an array result).  GF_PARSE with err as
 * above, GF_NOMEM.  On error out holds nothing.
 */
gf_err gf_prom_answer_parse(const char *json, size_t len, unsigned want, const char *what,
			    struct gf_prom_answer *out, char *err, size_t errlen);

/* Free the document; out may then be parsed into again. */
void gf_prom_answer_release(struct gf_prom_answer *a);

/* Take the document out of a (the caller frees it with cJSON_Delete). */
cJSON *gf_prom_answer_detach(struct gf_prom_answer *a);

/* A sample value: a decimal number, "NaN", "+Inf" or "-Inf" (the whole string). */
bool gf_prom_value(const char *s, double *v);

/* What gf_prom_sample found. */
enum gf_prom_sample_check { GF_PROM_SAMPLE_OK, GF_PROM_SAMPLE_SHAPE, GF_PROM_SAMPLE_VALUE };

/*
 * A sample [<unix time>, "<value>"]: GF_PROM_SAMPLE_OK, GF_PROM_SAMPLE_SHAPE
 * (not a [number, string] pair) or GF_PROM_SAMPLE_VALUE (the string is not a
 * value).  gf_prom_sample_error says it in words for the caller's message.
 */
enum gf_prom_sample_check gf_prom_sample(const cJSON *pair, double *t, double *v);
const char *gf_prom_sample_error(enum gf_prom_sample_check c);

/* A series' labels (its "metric" object) without __name__, as a new object;
 * NULL when metric is not an object or memory ran out (*nomem says which). */
cJSON *gf_prom_labels(const cJSON *metric, bool *nomem);

#endif /* GF_PROM_PROMJSON_H */
