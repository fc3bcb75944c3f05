/*
 * costapi/costapi.h - the cost of GPUs over HTTP in the shape of OpenCost's
 * /allocation, and the same numbers as the table `gpufleet cost` prints
 * (docs/cost.md).
 *
 * Requests (GET):
 *   /allocation, /allocation/compute
 *       window (required: 7d, today, START,END... see gf_cost_parse_window),
 *       aggregate (namespace | pod | node | model | cluster | label:KEY, or a
 *       comma list; default namespace), step (a duration: one allocation
 *       set per step; default the whole window), includeIdle (true|false,
 *       default true), resolution (the sampling step of the record, default
 *       5m; at least 1/20000 of the window)
 *       -> 200 {"code":200,"data":[{"<name>":{...}}, ...]} one set per step
 *          (cost/cost.h gf_cost_render_set)
 *       -> 400 {"code":400,"message":"..."} for a bad parameter
 *       -> 503 {"code":503,"message":"..."} when Prometheus cannot be
 *          reached or answers 5xx (not the client's fault: retry)
 *       -> 500 for anything else (out of memory, Prometheus' error text)
 *   /healthz -> 200 "ok" (no authentication)
 * Every error leaves the server serving.
 *
 * Authentication (http/auth.h): a verified client certificate (with an
 * allowed CN) or the bearer token; otherwise 401 {"code":401,...}.
 *
 * Thread-safety: gf_costapi_run may run on several threads at once.
 */
#ifndef GF_COSTAPI_COSTAPI_H
#define GF_COSTAPI_COSTAPI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "core/obuf.h"
#include "cost/cost.h"
#include "http/auth.h"
#include "http/server.h"

typedef struct gf_costapi gf_costapi;

struct gf_costapi_config {
	const char *prometheus_url;          /* copied */
	long timeout_ms;                     /* per Prometheus query; 0 = 30000 */
	const struct gf_cost_prices *prices; /* borrowed: must outlive the API */
	struct gf_http_auth auth;            /* borrowed strings */
	bool log_requests;                   /* one stderr line per request, with timings */
	bool recorded;                       /* read the hourly recording rules (promsrc.h
					      * GF_COST_RES_RECORDED): windows rounded down to
					      * whole hours, steps in whole hours, no resolution */
	/* Bounds on what a client can make Prometheus do (an authenticated client could
	 * otherwise send month-long queries back to back): */
	int64_t max_window;                  /* seconds; longer windows are a 400 (0 = 92 days) */
	unsigned max_queries;                /* requests reading Prometheus at once; more get
					      * 429 (0 = no limit) */
	size_t cache_bytes;                  /* answers kept (0 = none): a completed window's
					      * answer (its end GF_COSTAPI_SETTLE before now, 2 h
					      * with recorded rules) is kept until evicted (least
					      * recently used first), one reaching into that recent
					      * part for cache_recent_s */
	int64_t cache_recent_s;              /* 0 = 60 s */
};

/* How long after its end a window's record is taken as final (scrapes, staleness). */
#define GF_COSTAPI_SETTLE 600

/* GF_INVAL (no URL or prices), GF_NOMEM. */
gf_err gf_costapi_create(const struct gf_costapi_config *cfg, gf_costapi **out);
void gf_costapi_destroy(gf_costapi *a);

/* One query, whatever carries it.  Strings may be NULL (defaults). */
struct gf_cost_request {
	const char *window, *aggregate, *step, *include_idle, *resolution;
	int64_t now;           /* Unix seconds: what "7d" ends at */
};

struct gf_cost_timing {
	double prom_seconds;   /* in Prometheus (queries and transfer) */
	double ours_seconds;   /* decoding, accounting and rendering */
	size_t sets, uses, gpus;
	bool cached;           /* answered from the cache: nothing asked of Prometheus */
};

enum gf_cost_format { GF_COST_JSON, GF_COST_TABLE };

/*
 * Run r: parse, fetch each step's window, account, render into out (the
 * whole JSON answer, or the tables one after the other).  Returns the HTTP
 * status: 200, 400 (err: which parameter and why; a window over max_window),
 * 429 (max_queries already reading Prometheus), 503 (Prometheus
 * unavailable), 500.  With cache_bytes, an answer kept for the same
 * parameters (the same window, aggregate, step, includeIdle, resolution and
 * format) is copied instead of asking Prometheus again.  timing may be NULL.
 */
unsigned gf_costapi_run(gf_costapi *a, const struct gf_cost_request *r, enum gf_cost_format f,
			struct gf_obuf *out, char *err, size_t errlen, struct gf_cost_timing *timing);

/* Fill routes (room for max; 4 is enough) for gf_http_server_create. */
size_t gf_costapi_routes(gf_costapi *a, struct gf_http_route *routes, size_t max);

#endif /* GF_COSTAPI_COSTAPI_H */
