/*
 * metricsapi/promrange.h - Prometheus /api/v1/query_range for the forecast
 * metrics in Prometheus mode: the history of a metric's PromQL on a minute
 * grid, per series.
 *
 * A matrix answer is laid on the grid start + k x step, k < npoints: each
 * grid point takes the series' sample at that time, a point with no sample
 * the previous point's value (NaN before the first sample).  Labels as in
 * gf_promql_decode (the series' labels without __name__).
 */
#ifndef GF_METRICSAPI_PROMRANGE_H
#define GF_METRICSAPI_PROMRANGE_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

#define GF_MA_RANGE_MAX_SERIES 64
#define GF_MA_RANGE_MAX_POINTS 11000 /* Prometheus answers at most 11,000 points per series */
#define GF_MA_RANGE_IN_FLIGHT 2      /* query_range requests at once per process (each holds its body) */

struct gf_ma_range_series {
	cJSON *labels; /* owned */
	double *v;     /* npoints values (owned) */
};

struct gf_ma_range {
	int64_t start;
	int32_t step;
	size_t npoints, n;
	struct gf_ma_range_series s[GF_MA_RANGE_MAX_SERIES];
};

void gf_ma_range_release(struct gf_ma_range *r);

/* The most bytes one series (npoints x 48 + 32 KiB of labels) and a whole
 * answer (GF_MA_RANGE_MAX_SERIES series + 64 KiB) of npoints points may take. */
size_t gf_promrange_series_cap(size_t npoints);
size_t gf_promrange_body_cap(size_t npoints);

/* Decode a query_range answer (resultType matrix) onto the grid, one series
 * tree at a time (never the whole answer).  GF_INVAL (bad grid), GF_PARSE
 * (err: what and where, or Prometheus' own error), GF_TOOBIG past
 * GF_MA_RANGE_MAX_SERIES, past gf_promrange_body_cap or for a series past
 * gf_promrange_series_cap (err: the sizes), GF_NOMEM.  On error out holds nothing. */
gf_err gf_promrange_decode(const char *json, size_t len, int64_t start, int32_t step, size_t npoints,
			   struct gf_ma_range *out, char *err, size_t errlen);

/* GET base_url/api/v1/query_range for promql over the grid and decode it.
 * The body is cut off at gf_promrange_body_cap(npoints) as it arrives
 * (GF_TOOBIG, err naming the cap).  At most GF_MA_RANGE_IN_FLIGHT run at once;
 * a caller waits up to timeout_ms for a turn.  GF_UNAVAILABLE (connection,
 * timeout, 5xx, no turn), or the decoder's errors.  Thread-safe. */
gf_err gf_promrange_query(const char *base_url, const char *promql, int64_t start, int32_t step,
			  size_t npoints, long timeout_ms, struct gf_ma_range *out, char *err, size_t errlen);

#endif /* GF_METRICSAPI_PROMRANGE_H */
