/*
 * metricsapi/promrange.c - query_range client and matrix decoder (see
 * promrange.h).  The HTTP part is promql.c's (gf_promql_get).  The answer is read whole (capped at 64 MiB: 64 series x
 * 11,000 points at ~30 bytes each fits), its envelope checked by prom/promjson.h, and each series'
 * [time, "value"] pairs are placed on the grid in one pass: O(points).
 */
#include "metricsapi/promrange.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/obuf.h"
#include "metricsapi/promql.h"
#include "prom/promjson.h"

#define RANGE_RESPONSE_CAP (64u << 20)

void gf_ma_range_release(struct gf_ma_range *r)
{
	for (size_t i = 0; i < r->n; i++) {
		cJSON_Delete(r->s[i].labels);
		free(r->s[i].v);
	}
	r->n = 0;
}

static gf_err rerr(char *err, size_t errlen, const char *what)
{
	if (errlen)
		snprintf(err, errlen, "prometheus query_range response: %s", what);
	return GF_PARSE;
}

static gf_err decode_series(const cJSON *it, const struct gf_ma_range *g, struct gf_ma_range_series *s,
			    char *err, size_t errlen)
{
	const cJSON *metric = cJSON_GetObjectItemCaseSensitive(it, "metric");
	const cJSON *values = cJSON_GetObjectItemCaseSensitive(it, "values");
	const cJSON *pair;
	size_t k = 0;
	double last = NAN;

	if (!cJSON_IsObject(metric) || !cJSON_IsArray(values))
		return rerr(err, errlen, "data.result[]: expected metric and values");
	bool nomem;
	if (!(s->labels = gf_prom_labels(metric, &nomem)) || !(s->v = malloc(g->npoints * sizeof(double))))
		return GF_NOMEM;
	cJSON_ArrayForEach(pair, values)
	{
		double t, v;

		if (gf_prom_sample(pair, &t, &v) != GF_PROM_SAMPLE_OK)
			return rerr(err, errlen, "data.result[].values[]: expected [time, \"value\"]");
		double at = (t - (double)g->start) / g->step;
		if (!(at > -1e12 && at < 1e12))
			return rerr(err, errlen, "data.result[].values[]: time out of range");
		int64_t idx = (int64_t)llround(at);
		if (idx < 0 || idx >= (int64_t)g->npoints)
			continue;
		for (; k < (size_t)idx; k++)
			s->v[k] = last;
		if (k == (size_t)idx) {
			s->v[k++] = v;
			last = v;
		}
	}
	for (; k < g->npoints; k++)
		s->v[k] = last;
	return GF_OK;
}

gf_err gf_promrange_decode(const char *json, size_t len, int64_t start, int32_t step, size_t npoints,
			   struct gf_ma_range *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (errlen)
		err[0] = '\0';
	if (step < 1 || npoints < 1 || npoints > GF_MA_RANGE_MAX_POINTS)
		return GF_INVAL;
	out->start = start;
	out->step = step;
	out->npoints = npoints;
	struct gf_prom_answer a;
	gf_err e = gf_prom_answer_parse(json, len, GF_PROM_MATRIX, "query_range response", &a, err, errlen);
	if (e)
		return e;
	const cJSON *it;
	cJSON_ArrayForEach(it, a.result)
	{
		if (out->n == GF_MA_RANGE_MAX_SERIES) {
			if (errlen)
				snprintf(err, errlen, "prometheus returned more than %d series", GF_MA_RANGE_MAX_SERIES);
			e = GF_TOOBIG;
			goto out;
		}
		e = decode_series(it, out, &out->s[out->n++], err, errlen);
		if (e)
			goto out;
	}
out:
	gf_prom_answer_release(&a);
	if (e)
		gf_ma_range_release(out);
	return e;
}

gf_err gf_promrange_query(const char *base_url, const char *promql, int64_t start, int32_t step,
			  size_t npoints, long timeout_ms, struct gf_ma_range *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (step < 1 || npoints < 1 || npoints > GF_MA_RANGE_MAX_POINTS)
		return GF_INVAL;
	char grid[96];
	snprintf(grid, sizeof(grid), "&start=%lld&end=%lld&step=%d", (long long)start,
		 (long long)(start + (int64_t)(npoints - 1) * step), step);
	struct gf_obuf body;
	gf_obuf_init(&body, RANGE_RESPONSE_CAP);
	long code;
	gf_err e = gf_promql_get(base_url, "query_range", promql, grid, timeout_ms, &body, &code, err, errlen);
	if (!e) {
		e = gf_promrange_decode(body.data ? body.data : "", body.len, start, step, npoints, out, err, errlen);
		if (e && code >= 500)
			e = GF_UNAVAILABLE;
	}
	gf_obuf_release(&body);
	return e;
}
