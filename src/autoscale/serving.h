/*
 * autoscale/serving.h - the serving replay: GPU demand from a trace, and
 * autoscalers (static, oracle, hpa, warm-pool:N, predictive, combinations)
 * replayed against it with a cold start.
 *
 * Model (docs/serving.md):
 *  - One replica = one GPU serving one request at a time.  Demand at time t
 *    is the number of busy GPUs the trace implies: for a request trace the
 *    requests in service if each started on arrival (arrival .. arrival +
 *    service time); for a sample trace (e.g. the duty-cycle trace's busy
 *    GPU-equivalents per tick) the latest sample, held until the next.
 *  - Time advances in GF_SERVING_STEP_S steps (the HPA's 15 s sync period);
 *    demand is averaged over each step.  Every scaler decides at the start of
 *    each step.  A replica asked for at t is charged from t and serves from
 *    t + cold start (fixed, or drawn from a distribution with the seeded RNG).
 *    Scaling down removes replicas still starting first (newest first), then
 *    ready ones.
 *  - The HPA's metric is the mean demand over the last metric_window_s, an
 *    External metric with an AverageValue target of target_util per replica;
 *    its rule and behavior are autoscale/hpa.h's.
 *  - A minute is under capacity when the mean demand over it exceeds the mean
 *    ready replicas.  SLO: for request traces a request misses when it waits
 *    longer than slo_wait_s for a free ready replica (FIFO, replayed request
 *    by request); for sample traces, the share of demand (GPU-seconds) above
 *    ready capacity.
 *
 * No I/O, no clock: parsers take buffers, results are values.
 */
#ifndef GF_AUTOSCALE_SERVING_H
#define GF_AUTOSCALE_SERVING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "autoscale/forecast.h"
#include "autoscale/hpa.h"
#include "core/error.h"
#include "core/obuf.h"

#define GF_SERVING_STEP_S 15
#define GF_SERVING_MAX_SPAN_S (400LL * 86400)	/* longest trace: 400 days */
#define GF_SERVING_MAX_ROWS 20000000
#define GF_SERVING_LINE_MAX 4096
#define GF_SERVING_MAX_SERVICE_S 604800.0	/* one request's service time: at most a week */

enum gf_serving_kind {
	GF_SERVING_REQUESTS, /* t = arrival, v = service time (s) */
	GF_SERVING_SAMPLES,  /* t = sample time, v = busy GPUs from t to the next sample */
};

/* A parsed trace: n rows in time order (owned; gf_serving_trace_release frees). */
struct gf_serving_trace {
	enum gf_serving_kind kind;
	size_t n;
	int64_t *t; /* Unix seconds */
	double *v;
};

/* One line, naming the file, line, column and what was expected. */
struct gf_serving_error {
	char msg[512];
};

/*
 * Parse a CSV with a header.  Columns found by name (others ignored):
 *   time:  timestamp (Unix seconds, may have a fraction, truncated) or
 *          gmt_create ("YYYY-MM-DD HH:MM:SS", read as UTC)
 *   value: service_s or exec_time_seconds (a request trace; >= 0), or
 *          busy_gpus (a sample trace; >= 0)
 * Rows must be in time order (a sample trace strictly increasing); a missing
 * value, a malformed number, a negative service time (or one over
 * GF_SERVING_MAX_SERVICE_S; busy_gpus over 1e9) or an earlier timestamp
 * than the row before is GF_PARSE with err naming line and column; GF_TOOBIG
 * past GF_SERVING_LINE_MAX / GF_SERVING_MAX_ROWS / GF_SERVING_MAX_SPAN_S;
 * GF_NOMEM.  On error out is empty.
 */
gf_err gf_serving_parse(const char *data, size_t len, const char *file, struct gf_serving_trace *out,
			struct gf_serving_error *err);

/* A list of durations in seconds from a CSV with a latency_s column (>= 0, any order). */
gf_err gf_serving_parse_latencies(const char *data, size_t len, const char *file, double **out,
				  size_t *n, struct gf_serving_error *err);

void gf_serving_trace_release(struct gf_serving_trace *tr);

/* Median service time of a request trace (0 for a sample trace or none). */
double gf_serving_median_service(const struct gf_serving_trace *tr);

/* Demand in GF_SERVING_STEP_S steps from t0 (the first timestamp floored to a minute). */
struct gf_serving_demand {
	int64_t t0;
	size_t nsteps;   /* a multiple of 60 / GF_SERVING_STEP_S */
	double *busy;    /* mean busy GPUs per step */
	size_t nminutes;
	double *minute;  /* mean busy GPUs per minute (the forecaster's history) */
};

/* GF_NOMEM, GF_INVAL for an empty trace.  A sample trace's last sample holds for the median gap. */
gf_err gf_serving_demand_build(const struct gf_serving_trace *tr, struct gf_serving_demand *out);
void gf_serving_demand_release(struct gf_serving_demand *d);

/*
 * GF_SCALER_ADAPTIVE ("adaptive:N"): the stock HPA plus a warm pool of N while
 * the history holds less than one season (+ the forecast's recent window),
 * then predictive with no pool: the pool covers the days the forecast cannot.
 *
 * "adaptive-rise:P:N:T": the same, with the pool sized from the trace
 * itself instead of fixed: what the reactive rule misses is the rise of
 * demand within one horizon (a replica asked for now serves then), so the
 * pool is P % of the mean rise of minute demand over the horizon seen so far
 * (rises below 0 count as 0), in replicas (/ target), rounded up.  With no
 * history yet the pool is a prior N that gives way linearly over the first
 * T minutes: pool = ceil((1 - w) N + w measured), w = min(1, minutes / T).
 */
enum gf_scaler_kind { GF_SCALER_STATIC, GF_SCALER_ORACLE, GF_SCALER_HPA, GF_SCALER_PREDICTIVE,
		      GF_SCALER_ADAPTIVE };

/* An autoscaler to replay: a kind, a warm pool on top (hpa and predictive), static's size. */
struct gf_scaler {
	enum gf_scaler_kind kind;
	int32_t warm;  /* replicas kept ready and idle beyond what the rule asks */
	int32_t fixed; /* static: replicas; 0 = the oracle's peak */
	int32_t rise_pct;   /* adaptive-rise: the pool is this % of the mean rise over the horizon */
	int32_t prior_min;  /* adaptive-rise: minutes over which the prior pool (warm) gives way */
	char name[48];
};

/*
 * "static", "static:N", "oracle", "hpa", "warm-pool:N" (hpa plus N),
 * "predictive", "predictive+warm-pool:N", "adaptive:N", "adaptive-rise:P:N:T".  GF_PARSE
 * otherwise (N 1..10000 (0..10000 in adaptive-rise), P 1..1000, T 1..100000,
 * static:N 1..100000).
 */
gf_err gf_scaler_parse(const char *s, struct gf_scaler *out);

struct gf_serving_config {
	double target_util;       /* busy share per replica the rule aims at (0.7) */
	int32_t min_replicas;     /* 2 */
	int32_t max_replicas;     /* 1000 */
	int32_t cold_start_s;     /* 600; used when ncold == 0 */
	const double *cold_dist;  /* not owned: each start draws one (seconds) */
	size_t ncold;
	uint64_t seed;            /* for the draws; each scaler starts from it */
	double tolerance;         /* 0.1 */
	struct gf_hpa_behavior behavior; /* gf_hpa_behavior_default(300) */
	int32_t metric_window_s;  /* 60 */
	int32_t horizon_s;        /* predictive: forecast at now + horizon (the cold start) */
	struct gf_forecast_params forecast;
	double slo_wait_s;        /* request traces: longest wait that meets the SLO */
	/*
	 * The model cache (the scheduler's served-model preference): 0 = off,
	 * every start is a full cold start.  Otherwise a ready replica removed
	 * at t leaves its node holding the model until t + cache_ttl_s (then it
	 * is assumed reused by other work and evicted); a start while such a
	 * node exists takes it (the latest freed first: the scheduler prefers
	 * it, and its GPU is assumed still free) and draws its cold start from
	 * warm_dist (not owned; seconds, nwarm > 0), a "hit".
	 */
	int32_t cache_ttl_s;
	const double *warm_dist;
	size_t nwarm;
};

/* The defaults above; horizon_s = cold_start_s = 600, slo_wait_s 0 (the caller sets it). */
struct gf_serving_config gf_serving_config_default(void);

struct gf_serving_result {
	struct gf_scaler scaler;
	double gpu_hours;     /* replicas (starting or ready) x time */
	int64_t minutes, under_min;
	double slo_miss_pct;
	int64_t starts;       /* replicas started (the initial fleet not counted) */
	int64_t cache_hits;   /* of those, started on a node holding the model (cache_ttl_s) */
	double mean_start_s;  /* their mean cold start, seconds (dynamic scalers) */
	int32_t *replicas;    /* per step: replicas held */
	int32_t *ready;       /* per step: replicas ready at the step's start */
};

/* Replay one scaler.  GF_NOMEM, GF_INVAL (bad config). out owns two arrays. */
gf_err gf_serving_run(const struct gf_serving_trace *tr, const struct gf_serving_demand *d,
		      const struct gf_serving_config *c, const struct gf_scaler *s,
		      struct gf_serving_result *out);
void gf_serving_result_release(struct gf_serving_result *r);

/* What a run was, for the printed outputs. */
struct gf_serving_report {
	const char *trace;  /* name shown */
	const struct gf_serving_trace *tr;
	const struct gf_serving_demand *d;
	const struct gf_serving_config *c;
	const char *cold_desc; /* e.g. "600 s" or "drawn from basemodel_switch_s.csv" */
	const char *warm_desc; /* cache hits' start, e.g. "drawn from ..."; NULL without the cache */
	const struct gf_serving_result *rows;
	size_t nrows;
};

/* The table printed by `gpufleet replay --serving` (GPU-hours vs the oracle row if any). */
void gf_serving_table(const struct gf_serving_report *r, struct gf_obuf *out);
/* scaler,gpu_hours,under_capacity_min,slo_miss_pct,starts */
void gf_serving_csv(const struct gf_serving_report *r, struct gf_obuf *out);
/* Per step: t (Unix seconds), demand, then replicas and ready per scaler (header names them). */
void gf_serving_timeline_csv(const struct gf_serving_report *r, struct gf_obuf *out);
/*
 * A self-contained HTML page (core/htmlrep.h): the table, each scaler's GPU-hours, and per scaler
 * demand, ready and replicas over time (inline SVG), each chart with a sentence from the figures.
 */
void gf_serving_html(const struct gf_serving_report *r, struct gf_obuf *out);

#endif /* GF_AUTOSCALE_SERVING_H */
