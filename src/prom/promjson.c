/*
 * prom/promjson.c - the Prometheus answer decoder (prom/promjson.h), on
 * cJSON.  Checks only the envelope and single samples: O(1) beyond the
 * parse; the readers walk the series.
 */
#include "prom/promjson.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static gf_err perr(char *err, size_t errlen, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static gf_err perr(char *err, size_t errlen, const char *what, const char *fmt, ...)
{
	if (errlen) {
		int n = snprintf(err, errlen, "prometheus %s: ", what);
		if (n >= 0 && (size_t)n < errlen) {
			va_list ap;
			va_start(ap, fmt);
			vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
			va_end(ap);
		}
	}
	return GF_PARSE;
}

static const char *kinds(unsigned want)
{
	switch (want) {
	case GF_PROM_VECTOR: return "vector";
	case GF_PROM_SCALAR: return "scalar";
	case GF_PROM_MATRIX: return "matrix";
	case GF_PROM_VECTOR | GF_PROM_SCALAR: return "vector or scalar";
	}
	return "vector, scalar or matrix";
}

static unsigned type_of(const char *s)
{
	return !strcmp(s, "vector") ? GF_PROM_VECTOR
	       : !strcmp(s, "scalar") ? GF_PROM_SCALAR
	       : !strcmp(s, "matrix") ? GF_PROM_MATRIX
				      : 0;
}

gf_err gf_prom_answer_parse(const char *json, size_t len, unsigned want, const char *what,
			    struct gf_prom_answer *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (errlen)
		err[0] = '\0';
	cJSON *doc = cJSON_ParseWithLength(json, len);
	if (!doc)
		return perr(err, errlen, what, "not JSON");
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(doc, "status");
	gf_err e = GF_OK;
	if (!cJSON_IsString(st)) {
		e = perr(err, errlen, what, "status: expected a string");
		goto out;
	}
	if (strcmp(st->valuestring, "success")) {
		const cJSON *m = cJSON_GetObjectItemCaseSensitive(doc, "error");
		e = perr(err, errlen, what, "query failed: %.300s",
			 cJSON_IsString(m) ? m->valuestring : "status is not success");
		goto out;
	}
	const cJSON *data = cJSON_GetObjectItemCaseSensitive(doc, "data");
	const cJSON *rt = cJSON_GetObjectItemCaseSensitive(data, "resultType");
	const cJSON *res = cJSON_GetObjectItemCaseSensitive(data, "result");
	unsigned t = cJSON_IsString(rt) ? type_of(rt->valuestring) : 0;
	if (!cJSON_IsObject(data) || !(t & want) || !res || (t != GF_PROM_SCALAR && !cJSON_IsArray(res))) {
		e = perr(err, errlen, what, "data: expected resultType %s and a result", kinds(want));
		goto out;
	}
	out->doc = doc;
	out->type = (enum gf_prom_type)t;
	out->result = res;
	return GF_OK;
out:
	cJSON_Delete(doc);
	return e;
}

void gf_prom_answer_release(struct gf_prom_answer *a)
{
	cJSON_Delete(a->doc);
	memset(a, 0, sizeof(*a));
}

cJSON *gf_prom_answer_detach(struct gf_prom_answer *a)
{
	cJSON *d = a->doc;
	memset(a, 0, sizeof(*a));
	return d;
}

bool gf_prom_value(const char *s, double *v)
{
	if (!strcmp(s, "NaN")) {
		*v = (double)NAN;
		return true;
	}
	if (!strcmp(s, "+Inf") || !strcmp(s, "-Inf")) {
		*v = s[0] == '+' ? (double)INFINITY : -(double)INFINITY;
		return true;
	}
	char *end;
	*v = strtod(s, &end);
	return end != s && !*end;
}

enum gf_prom_sample_check gf_prom_sample(const cJSON *pair, double *t, double *v)
{
	const cJSON *ts = cJSON_GetArrayItem(pair, 0), *s = cJSON_GetArrayItem(pair, 1);
	if (!cJSON_IsArray(pair) || cJSON_GetArraySize(pair) != 2 || !cJSON_IsNumber(ts) || !cJSON_IsString(s))
		return GF_PROM_SAMPLE_SHAPE;
	*t = ts->valuedouble;
	return gf_prom_value(s->valuestring, v) ? GF_PROM_SAMPLE_OK : GF_PROM_SAMPLE_VALUE;
}

const char *gf_prom_sample_error(enum gf_prom_sample_check c)
{
	switch (c) {
	case GF_PROM_SAMPLE_OK: return "ok";
	case GF_PROM_SAMPLE_SHAPE: return "expected [time, \"value\"]";
	case GF_PROM_SAMPLE_VALUE: return "not a number";
	}
	return "?";
}

cJSON *gf_prom_labels(const cJSON *metric, bool *nomem)
{
	*nomem = false;
	if (!cJSON_IsObject(metric))
		return NULL;
	cJSON *labels = cJSON_CreateObject();
	const cJSON *l;
	cJSON_ArrayForEach(l, metric)
	{
		if (!labels)
			break;
		if (cJSON_IsString(l) && l->string && strcmp(l->string, "__name__") &&
		    !cJSON_AddStringToObject(labels, l->string, l->valuestring)) {
			cJSON_Delete(labels);
			labels = NULL;
		}
	}
	*nomem = !labels;
	return labels;
}
