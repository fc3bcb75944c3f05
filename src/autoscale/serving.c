/*
 * autoscale/serving.c - serving trace parser, demand model and the replay of
 * one autoscaler (see serving.h for the model).
 *
 * Replay, per step k (t = t0 + 15 k):
 *   static:     replicas = ready = N (the oracle's peak unless given).
 *   oracle:     replicas = ready = need(demand[k]), need(x) = max(min, ceil(x / target)).
 *   hpa:        metric u = mean demand over the last metric window;
 *               desired = gf_hpa_external_average(u, target, spec); spec =
 *               gf_hpa_normalize(...); the fleet is spec + warm.
 *   predictive: as hpa with u = max(u, forecast peak over [t + H, t + H + 60 s])
 *               from the minute history before t: the HPA on "the larger of
 *               forecast and current", so never below the reactive rule.
 * Starting replicas are kept as their ready times in a small array; ready
 * count O(replicas) per step: O(steps x replicas) per scaler.
 * The request-level SLO replays a FIFO queue over the ready replicas with a
 * min-heap of finish times: O(requests x log replicas) plus one iteration
 * per step boundary crossed while everything is busy.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autoscale/serving.h"
#include "core/csv.h"
#include "core/grow.h"
#include "core/rng.h"
#include "core/sort.h"
#include "core/time.h"

/* ---- parsing ---- */

/* A finite decimal number, the whole field. */
static bool parse_double(const struct gf_csv_field *s, double *out)
{
	char buf[64], *end;

	if (!s->len || s->len >= sizeof(buf))
		return false;
	memcpy(buf, s->p, s->len);
	buf[s->len] = '\0';
	if (!((buf[0] >= '0' && buf[0] <= '9') || buf[0] == '-' || buf[0] == '+' || buf[0] == '.'))
		return false;
	errno = 0;
	*out = strtod(buf, &end);
	return !errno && *end == '\0' && isfinite(*out);
}

static bool digits(const char *p, int n, int *out)
{
	*out = 0;
	for (int i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return false;
		*out = *out * 10 + (p[i] - '0');
	}
	return true;
}

/* "YYYY-MM-DD HH:MM:SS" as UTC -> Unix seconds. */
static bool parse_datetime(const struct gf_csv_field *s, int64_t *out)
{
	const char *p = s->p;
	int y, mo, d, h, mi, se;

	if (s->len != 19 || p[4] != '-' || p[7] != '-' || p[10] != ' ' || p[13] != ':' || p[16] != ':')
		return false;
	if (!digits(p, 4, &y) || !digits(p + 5, 2, &mo) || !digits(p + 8, 2, &d) || !digits(p + 11, 2, &h) ||
	    !digits(p + 14, 2, &mi) || !digits(p + 17, 2, &se))
		return false;
	if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60)
		return false;
	*out = gf_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se;
	return true;
}

void gf_serving_trace_release(struct gf_serving_trace *tr)
{
	free(tr->t);
	free(tr->v);
	memset(tr, 0, sizeof(*tr));
}

static gf_err push(struct gf_serving_trace *tr, size_t *cap, int64_t t, double v)
{
	if (tr->n == *cap) {
		size_t nc = gf_grow_cap(*cap, *cap + 1, 1024, sizeof(int64_t));
		if (!nc)
			return GF_NOMEM;
		int64_t *nt = realloc(tr->t, nc * sizeof(*nt));

		if (!nt)
			return GF_NOMEM;
		tr->t = nt;
		double *nv = realloc(tr->v, nc * sizeof(*nv));
		if (!nv)
			return GF_NOMEM;
		tr->v = nv;
		*cap = nc;
	}
	tr->t[tr->n] = t;
	tr->v[tr->n] = v;
	tr->n++;
	return GF_OK;
}

static gf_err parse_row(struct gf_csv *r, int tcol, bool datetime, int vcol, const char *vname,
			enum gf_serving_kind kind, int64_t prev, long prev_line, int64_t *t, double *v)
{
	char q[64];
	double x;

	if (tcol >= r->nfields || !r->field[tcol].len)
		return gf_csv_fail(r, GF_PARSE, "column %d (%s): missing timestamp", tcol + 1,
				   datetime ? "gmt_create" : "timestamp");
	if (datetime) {
		if (!parse_datetime(&r->field[tcol], t))
			return gf_csv_fail(r, GF_PARSE, "column %d (gmt_create): expected YYYY-MM-DD HH:MM:SS, found %s",
					   tcol + 1, gf_csv_quote(&r->field[tcol], q, sizeof(q)));
	} else {
		if (!parse_double(&r->field[tcol], &x) || x < 0 || x > 1e12)
			return gf_csv_fail(r, GF_PARSE,
					   "column %d (timestamp): expected Unix seconds (0 to 1e12), found %s",
					   tcol + 1, gf_csv_quote(&r->field[tcol], q, sizeof(q)));
		*t = (int64_t)x;
	}
	if (prev_line && (*t < prev || (kind == GF_SERVING_SAMPLES && *t == prev)))
		return gf_csv_fail(r, GF_PARSE, "column %d (%s): %lld is %s line %ld's %lld; rows must be in time order",
				   tcol + 1, datetime ? "gmt_create" : "timestamp", (long long)*t,
				   *t == prev ? "the same as" : "earlier than", prev_line, (long long)prev);
	if (vcol >= r->nfields || !r->field[vcol].len)
		return gf_csv_fail(r, GF_PARSE, "column %d (%s): missing value", vcol + 1, vname);
	double most = kind == GF_SERVING_REQUESTS ? GF_SERVING_MAX_SERVICE_S : 1e9;
	if (!parse_double(&r->field[vcol], v) || *v > most)
		return gf_csv_fail(r, GF_PARSE, "column %d (%s): expected a number up to %g, found %s", vcol + 1,
				   vname, most, gf_csv_quote(&r->field[vcol], q, sizeof(q)));
	if (*v < 0)
		return gf_csv_fail(r, GF_PARSE, "column %d (%s): negative %s %s", vcol + 1, vname,
				   kind == GF_SERVING_REQUESTS ? "service time" : "value", gf_csv_quote(&r->field[vcol], q, sizeof(q)));
	return GF_OK;
}

gf_err gf_serving_parse(const char *data, size_t len, const char *file, struct gf_serving_trace *out,
			struct gf_serving_error *err)
{
	struct gf_csv r;
	gf_err code = GF_OK;
	size_t cap = 0;
	long prev_line = 0;
	int got;

	gf_csv_init(&r, data, len, file, GF_SERVING_LINE_MAX, err->msg, sizeof(err->msg));
	memset(out, 0, sizeof(*out));
	err->msg[0] = '\0';
	got = gf_csv_next(&r, &code);
	if (got < 0)
		return code;
	if (!got) {
		r.lineno = 1;
		return gf_csv_fail(&r, GF_PARSE, "file is empty; expected a header naming timestamp and service_s or busy_gpus");
	}
	int tcol = gf_csv_find(&r, "timestamp");
	bool datetime = false;
	if (tcol < 0) {
		tcol = gf_csv_find(&r, "gmt_create");
		datetime = tcol >= 0;
	}
	const char *vname = "service_s";
	int vcol = gf_csv_find(&r, vname);
	out->kind = GF_SERVING_REQUESTS;
	if (vcol < 0 && (vcol = gf_csv_find(&r, "exec_time_seconds")) >= 0)
		vname = "exec_time_seconds";
	if (vcol < 0 && (vcol = gf_csv_find(&r, "busy_gpus")) >= 0) {
		vname = "busy_gpus";
		out->kind = GF_SERVING_SAMPLES;
	}
	if (tcol < 0 || vcol < 0)
		return gf_csv_fail(&r, GF_PARSE,
				   "header lacks %s; expected columns timestamp (or gmt_create) and service_s (or exec_time_seconds, or busy_gpus)",
				   tcol < 0 ? "a time column" : "a value column");
	while ((got = gf_csv_next(&r, &code)) > 0) {
		int64_t t = 0;
		double v = 0;

		if (out->n == GF_SERVING_MAX_ROWS) {
			code = gf_csv_fail(&r, GF_TOOBIG, "more than %d rows", GF_SERVING_MAX_ROWS);
			goto fail;
		}
		code = parse_row(&r, tcol, datetime, vcol, vname, out->kind, out->n ? out->t[out->n - 1] : 0,
				 prev_line, &t, &v);
		if (code)
			goto fail;
		if (out->n && t - out->t[0] > GF_SERVING_MAX_SPAN_S) {
			code = gf_csv_fail(&r, GF_TOOBIG, "the trace spans more than %lld days",
					   GF_SERVING_MAX_SPAN_S / 86400);
			goto fail;
		}
		if ((code = push(out, &cap, t, v)))
			goto fail;
		prev_line = r.lineno;
	}
	if (got < 0)
		goto fail;
	if (!out->n) {
		code = gf_csv_fail(&r, GF_PARSE, "no rows after the header");
		goto fail;
	}
	return GF_OK;
fail:
	gf_serving_trace_release(out);
	return code;
}

gf_err gf_serving_parse_latencies(const char *data, size_t len, const char *file, double **out,
				  size_t *n, struct gf_serving_error *err)
{
	struct gf_csv r;
	struct gf_serving_trace tr = { 0 };
	gf_err code = GF_OK;
	size_t cap = 0;
	int got, col;

	gf_csv_init(&r, data, len, file, GF_SERVING_LINE_MAX, err->msg, sizeof(err->msg));
	*out = NULL;
	*n = 0;
	got = gf_csv_next(&r, &code);
	if (got < 0)
		return code;
	if (!got || (col = gf_csv_find(&r, "latency_s")) < 0) {
		r.lineno = r.lineno ? r.lineno : 1;
		return gf_csv_fail(&r, GF_PARSE, "expected a header with a latency_s column");
	}
	while ((got = gf_csv_next(&r, &code)) > 0) {
		char q[64];
		double v;

		if (tr.n == GF_SERVING_MAX_ROWS) {
			code = gf_csv_fail(&r, GF_TOOBIG, "more than %d rows", GF_SERVING_MAX_ROWS);
			goto fail;
		}
		if (col >= r.nfields || !parse_double(&r.field[col], &v) || v < 0 || v > 1e6) {
			code = gf_csv_fail(&r, GF_PARSE, "column %d (latency_s): expected seconds from 0 to 1e6, found %s",
					   col + 1, col < r.nfields ? gf_csv_quote(&r.field[col], q, sizeof(q)) : "nothing");
			goto fail;
		}
		if ((code = push(&tr, &cap, 0, v)))
			goto fail;
	}
	if (got < 0)
		goto fail;
	if (!tr.n) {
		code = gf_csv_fail(&r, GF_PARSE, "no rows after the header");
		goto fail;
	}
	free(tr.t);
	*out = tr.v;
	*n = tr.n;
	return GF_OK;
fail:
	gf_serving_trace_release(&tr);
	return code;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double gf_serving_median_service(const struct gf_serving_trace *tr)
{
	if (tr->kind != GF_SERVING_REQUESTS || !tr->n)
		return 0;
	double *v = malloc(tr->n * sizeof(*v));
	if (!v)
		return 0;
	memcpy(v, tr->v, tr->n * sizeof(*v));
	gf_qsort(v, tr->n, sizeof(*v), cmp_double);
	double m = tr->n % 2 ? v[tr->n / 2] : (v[tr->n / 2 - 1] + v[tr->n / 2]) / 2;
	free(v);
	return m;
}

/* ---- demand ---- */

#define STEPS_PER_MIN (60 / GF_SERVING_STEP_S)

/* Add `level` busy GPUs over [a, b) (seconds since t0) to the per-step sums of GPU-seconds. */
static void spread(double *busy, size_t nsteps, double a, double b, double level)
{
	if (b <= a || level <= 0)
		return;
	size_t k = (size_t)(a / GF_SERVING_STEP_S);

	for (; k < nsteps; k++) {
		double lo = (double)k * GF_SERVING_STEP_S, hi = lo + GF_SERVING_STEP_S;
		double from = a > lo ? a : lo, to = b < hi ? b : hi;

		if (from >= b)
			break;
		if (to > from)
			busy[k] += (to - from) * level;
	}
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* Median gap between samples (60 s with fewer than two). */
static int64_t median_gap(const struct gf_serving_trace *tr)
{
	if (tr->n < 2)
		return 60;
	int64_t *g = malloc((tr->n - 1) * sizeof(*g));
	if (!g)
		return 60;
	for (size_t i = 1; i < tr->n; i++)
		g[i - 1] = tr->t[i] - tr->t[i - 1];
	gf_qsort(g, tr->n - 1, sizeof(*g), cmp_i64);
	int64_t m = g[(tr->n - 1) / 2];
	free(g);
	return m > 0 ? m : 60;
}

void gf_serving_demand_release(struct gf_serving_demand *d)
{
	free(d->busy);
	free(d->minute);
	memset(d, 0, sizeof(*d));
}

gf_err gf_serving_demand_build(const struct gf_serving_trace *tr, struct gf_serving_demand *out)
{
	int64_t end = 0, gap = 0;

	memset(out, 0, sizeof(*out));
	if (!tr->n)
		return GF_INVAL;
	out->t0 = tr->t[0] - tr->t[0] % 60;
	if (tr->kind == GF_SERVING_SAMPLES) {
		gap = median_gap(tr);
		end = tr->t[tr->n - 1] + gap;
	} else {
		for (size_t i = 0; i < tr->n; i++) {
			int64_t e = tr->t[i] + (int64_t)ceil(tr->v[i]);
			if (e > end)
				end = e;
		}
	}
	out->nminutes = (size_t)((end - out->t0 + 59) / 60);
	if (!out->nminutes)
		out->nminutes = 1;
	out->nsteps = out->nminutes * STEPS_PER_MIN;
	out->busy = calloc(out->nsteps, sizeof(double));
	out->minute = calloc(out->nminutes, sizeof(double));
	if (!out->busy || !out->minute) {
		gf_serving_demand_release(out);
		return GF_NOMEM;
	}
	for (size_t i = 0; i < tr->n; i++) {
		double a = (double)(tr->t[i] - out->t0);

		if (tr->kind == GF_SERVING_REQUESTS)
			spread(out->busy, out->nsteps, a, a + tr->v[i], 1.0);
		else
			spread(out->busy, out->nsteps, a,
			       (double)((i + 1 < tr->n ? tr->t[i + 1] : tr->t[i] + gap) - out->t0), tr->v[i]);
	}
	for (size_t k = 0; k < out->nsteps; k++) {
		out->busy[k] /= GF_SERVING_STEP_S;
		out->minute[k / STEPS_PER_MIN] += out->busy[k] / STEPS_PER_MIN;
	}
	return GF_OK;
}

/* ---- scalers ---- */

gf_err gf_scaler_parse(const char *s, struct gf_scaler *out)
{
	unsigned long n = 0;
	char *end;

	memset(out, 0, sizeof(*out));
	if (strlen(s) >= sizeof(out->name))
		return GF_PARSE;
	snprintf(out->name, sizeof(out->name), "%s", s);
	if (!strcmp(s, "static")) {
		out->kind = GF_SCALER_STATIC;
		return GF_OK;
	}
	if (!strcmp(s, "oracle")) {
		out->kind = GF_SCALER_ORACLE;
		return GF_OK;
	}
	if (!strcmp(s, "hpa")) {
		out->kind = GF_SCALER_HPA;
		return GF_OK;
	}
	if (!strcmp(s, "predictive")) {
		out->kind = GF_SCALER_PREDICTIVE;
		return GF_OK;
	}
	const char *num = NULL;
	unsigned long max = 10000;
	if (!strncmp(s, "static:", 7)) {
		out->kind = GF_SCALER_STATIC;
		num = s + 7;
		max = 100000;
	} else if (!strncmp(s, "warm-pool:", 10)) {
		out->kind = GF_SCALER_HPA;
		num = s + 10;
	} else if (!strncmp(s, "adaptive:", 9)) {
		out->kind = GF_SCALER_ADAPTIVE;
		num = s + 9;
	} else if (!strncmp(s, "adaptive-rise:", 14)) {
		int p = 0, n0 = 0, tm = 0, used = 0;

		out->kind = GF_SCALER_ADAPTIVE;
		if (sscanf(s + 14, "%d:%d:%d%n", &p, &n0, &tm, &used) != 3 || s[14 + used] || p < 1 ||
		    p > 1000 || n0 < 0 || n0 > 10000 || tm < 1 || tm > 100000)
			return GF_PARSE;
		out->rise_pct = p;
		out->warm = n0;
		out->prior_min = tm;
		return GF_OK;
	} else if (!strncmp(s, "predictive+warm-pool:", 21)) {
		out->kind = GF_SCALER_PREDICTIVE;
		num = s + 21;
	} else {
		return GF_PARSE;
	}
	if (*num < '0' || *num > '9')
		return GF_PARSE;
	errno = 0;
	n = strtoul(num, &end, 10);
	if (errno || *end || n < 1 || n > max)
		return GF_PARSE;
	if (out->kind == GF_SCALER_STATIC)
		out->fixed = (int32_t)n;
	else
		out->warm = (int32_t)n;
	return GF_OK;
}

struct gf_serving_config gf_serving_config_default(void)
{
	struct gf_serving_config c = {
		.target_util = 0.7,
		.min_replicas = 2,
		.max_replicas = 1000,
		.cold_start_s = 600,
		.seed = 42,
		.tolerance = 0.1,
		.behavior = gf_hpa_behavior_default(300),
		.metric_window_s = 60,
		.horizon_s = 600,
		.forecast = gf_forecast_params_default(),
	};
	return c;
}

static int32_t need(const struct gf_serving_config *c, double busy)
{
	double r = ceil(busy / c->target_util - 1e-9);
	int32_t n = r > c->max_replicas ? c->max_replicas : (int32_t)r;

	return n < c->min_replicas ? c->min_replicas : n;
}

/*
 * The fleet of one dynamic scaler: replicas as the times they become ready,
 * and (model cache on) the nodes that still hold the model: the times
 * ready replicas were removed, oldest first, at most cap of them.
 */
struct fleet {
	int64_t *ready_at;
	int32_t n, cap;
	struct gf_rng rng;
	int64_t *freed_at;
	int32_t nfreed;
	int64_t hits;
	double start_sum;	/* seconds of cold start over the starts */
};

/* Take a node freed within the cache's retention, the latest first; false if none. */
static bool cache_take(struct fleet *f, const struct gf_serving_config *c, int64_t t)
{
	int32_t keep = 0;

	if (!c->cache_ttl_s)
		return false;
	while (keep < f->nfreed && t - f->freed_at[keep] > c->cache_ttl_s)
		keep++;	/* expired: assumed reused by other work, evicted */
	memmove(f->freed_at, f->freed_at + keep, (size_t)(f->nfreed - keep) * sizeof(int64_t));
	f->nfreed -= keep;
	if (!f->nfreed)
		return false;
	f->nfreed--;
	f->hits++;
	return true;
}

/* A ready replica removed at t leaves its node holding the model. */
static void cache_free(struct fleet *f, const struct gf_serving_config *c, int64_t t)
{
	if (!c->cache_ttl_s)
		return;
	if (f->nfreed == f->cap) {	/* full: forget the oldest */
		memmove(f->freed_at, f->freed_at + 1, (size_t)(f->cap - 1) * sizeof(int64_t));
		f->nfreed--;
	}
	f->freed_at[f->nfreed++] = t;
}

static int64_t cold_start(struct fleet *f, const struct gf_serving_config *c, int64_t t)
{
	if (cache_take(f, c, t))
		return (int64_t)ceil(c->warm_dist[gf_rng_below(&f->rng, c->nwarm)]);
	if (c->ncold)
		return (int64_t)ceil(c->cold_dist[gf_rng_below(&f->rng, c->ncold)]);
	return c->cold_start_s;
}

/* Grow or shrink the fleet to n at time t; returns replicas started. */
static int32_t fleet_resize(struct fleet *f, const struct gf_serving_config *c, int32_t n, int64_t t)
{
	int32_t started = 0;

	if (n > f->cap)
		n = f->cap;
	while (f->n < n) {
		int64_t cs = cold_start(f, c, t);

		f->ready_at[f->n++] = t + cs;
		f->start_sum += (double)cs;
		started++;
	}
	while (f->n > n) {	/* remove the replica that would be ready last (starting ones first) */
		int32_t last = 0;

		for (int32_t i = 1; i < f->n; i++)
			if (f->ready_at[i] >= f->ready_at[last])
				last = i;
		if (f->ready_at[last] <= t)
			cache_free(f, c, t);
		f->ready_at[last] = f->ready_at[--f->n];
	}
	return started;
}

static int32_t fleet_ready(const struct fleet *f, int64_t t)
{
	int32_t r = 0;

	for (int32_t i = 0; i < f->n; i++)
		r += f->ready_at[i] <= t;
	return r;
}

/* Mean demand over the metric window before step k (the first step's own at k = 0). */
static double metric(const struct gf_serving_demand *d, size_t k, int32_t window_s)
{
	size_t w = (size_t)(window_s / GF_SERVING_STEP_S), from;
	double s = 0;

	if (!w)
		w = 1;
	if (!k)
		return d->busy[0];
	from = k > w ? k - w : 0;
	for (size_t i = from; i < k; i++)
		s += d->busy[i];
	return s / (double)(k - from);
}

static gf_err run_dynamic(const struct gf_serving_demand *d, const struct gf_serving_config *c,
			  const struct gf_scaler *s, struct fleet *f, struct gf_serving_result *out)
{
	struct gf_hpa_state *st = calloc(1, sizeof(*st));
	int32_t spec = need(c, d->busy[0]);
	double target_m = c->target_util * 1000.0;

	/* adaptive-rise: the rises of minute demand over the horizon seen so far (sum, count) */
	size_t hmin = (size_t)(c->horizon_s + 59) / 60, nrises = 0;
	double rise_sum = 0;

	if (!st)
		return GF_NOMEM;
	size_t learnt = (size_t)((c->forecast.season_s + c->forecast.recent_s) / 60);

	fleet_resize(f, c, spec + s->warm, INT64_MIN / 2);	/* the initial fleet is ready */
	f->start_sum = 0;
	for (size_t k = 0; k < d->nsteps; k++) {
		int64_t t = (int64_t)k * GF_SERVING_STEP_S;
		bool adaptive_forecasts = s->kind == GF_SCALER_ADAPTIVE && k / STEPS_PER_MIN >= learnt;
		int32_t warm = s->kind == GF_SCALER_ADAPTIVE && adaptive_forecasts ? 0 : s->warm;

		if (s->rise_pct && !adaptive_forecasts) {
			size_t now_m = k / STEPS_PER_MIN;

			if (k % STEPS_PER_MIN == 0 && now_m > hmin) {
				double r = d->minute[now_m - 1] - d->minute[now_m - 1 - hmin];

				rise_sum += r > 0 ? r : 0;
				nrises++;
			}
			double measured = nrises ? rise_sum / (double)nrises * s->rise_pct / 100.0 /
						   c->target_util : 0;
			double w = (double)now_m / s->prior_min;

			w = w > 1 ? 1 : w;
			warm = (int32_t)ceil((1 - w) * s->warm + w * measured - 1e-9);
		}
		if (k) {
			double u = metric(d, k, c->metric_window_s);

			if (s->kind == GF_SCALER_PREDICTIVE || adaptive_forecasts) {
				double fc = gf_forecast_peak(d->minute, k / STEPS_PER_MIN, &c->forecast,
							     c->horizon_s, 60);
				if (fc > u)
					u = fc;
			}
			int32_t desired = gf_hpa_external_average(ceil(u * 1000.0), target_m, spec, c->tolerance);
			spec = gf_hpa_normalize(st, &c->behavior, c->min_replicas, c->max_replicas, spec,
						desired, t);
			out->starts += fleet_resize(f, c, spec + warm, t);
		}
		out->replicas[k] = f->n;
		out->ready[k] = fleet_ready(f, t);
	}
	free(st);
	return GF_OK;
}

/* ---- SLO: FIFO over the ready replicas ---- */

struct heap {
	double *v;
	size_t n;
};

static void heap_push(struct heap *h, double x)
{
	size_t i = h->n++;

	while (i && h->v[(i - 1) / 2] > x) {
		h->v[i] = h->v[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->v[i] = x;
}

static void heap_pop(struct heap *h)
{
	double x = h->v[--h->n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && h->v[c + 1] < h->v[c])
			c++;
		if (h->v[c] >= x)
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	if (h->n)
		h->v[i] = x;
}

static int64_t fifo_misses(const struct gf_serving_trace *tr, const struct gf_serving_demand *d,
			   const int32_t *ready, double slo_wait_s, bool *ok)
{
	int32_t most = 0;
	int64_t misses = 0;
	double last = 0;
	struct heap h = { 0 };

	for (size_t k = 0; k < d->nsteps; k++)
		if (ready[k] > most)
			most = ready[k];
	h.v = malloc(((size_t)most + 1) * sizeof(double));
	*ok = h.v != NULL;
	if (!h.v)
		return 0;
	for (size_t i = 0; i < tr->n; i++) {
		double a = (double)(tr->t[i] - d->t0), t = a > last ? a : last;

		for (;;) {
			while (h.n && h.v[0] <= t)
				heap_pop(&h);
			size_t k = (size_t)(t / GF_SERVING_STEP_S);
			if (k >= d->nsteps)
				k = d->nsteps - 1;
			if ((int32_t)h.n < ready[k])
				break;
			double nb = k + 1 < d->nsteps ? (double)(k + 1) * GF_SERVING_STEP_S : INFINITY;
			double nf = h.n ? h.v[0] : INFINITY;
			t = nf < nb ? nf : nb;
			if (isinf(t))
				break;	/* never served: nothing ready and nothing finishing */
		}
		if (isinf(t) || t - a > slo_wait_s)
			misses++;
		if (isinf(t))
			continue;
		if ((int32_t)h.n < most + 1)
			heap_push(&h, t + tr->v[i]);
		last = t;
	}
	free(h.v);
	return misses;
}

void gf_serving_result_release(struct gf_serving_result *r)
{
	free(r->replicas);
	free(r->ready);
	r->replicas = r->ready = NULL;
}

gf_err gf_serving_run(const struct gf_serving_trace *tr, const struct gf_serving_demand *d,
		      const struct gf_serving_config *c, const struct gf_scaler *s,
		      struct gf_serving_result *out)
{
	memset(out, 0, sizeof(*out));
	out->scaler = *s;
	if (!d->nsteps || !(c->target_util > 0 && c->target_util <= 1) || c->min_replicas < 0 ||
	    c->max_replicas < c->min_replicas || c->max_replicas > 100000 || s->warm < 0 ||
	    c->cache_ttl_s < 0 || (c->cache_ttl_s && !c->nwarm))
		return GF_INVAL;
	out->replicas = calloc(d->nsteps, sizeof(int32_t));
	out->ready = calloc(d->nsteps, sizeof(int32_t));
	if (!out->replicas || !out->ready)
		goto nomem;
	if (s->kind == GF_SCALER_STATIC || s->kind == GF_SCALER_ORACLE) {
		int32_t peak = 0, prev = 0;

		for (size_t k = 0; k < d->nsteps; k++)
			if (need(c, d->busy[k]) > peak)
				peak = need(c, d->busy[k]);
		for (size_t k = 0; k < d->nsteps; k++) {
			int32_t n = s->kind == GF_SCALER_ORACLE ? need(c, d->busy[k]) : s->fixed ? s->fixed : peak;

			out->replicas[k] = out->ready[k] = n;
			if (k && n > prev)
				out->starts += n - prev;
			prev = n;
		}
	} else {
		struct fleet f = { .cap = c->max_replicas + s->warm };

		f.ready_at = malloc((size_t)f.cap * sizeof(int64_t) + 1);
		f.freed_at = malloc((size_t)f.cap * sizeof(int64_t) + 1);
		if (!f.ready_at || !f.freed_at) {
			free(f.ready_at);
			free(f.freed_at);
			goto nomem;
		}
		gf_rng_init(&f.rng, c->seed);
		gf_err e = run_dynamic(d, c, s, &f, out);
		out->cache_hits = f.hits;
		out->mean_start_s = out->starts ? f.start_sum / (double)out->starts : 0;
		free(f.ready_at);
		free(f.freed_at);
		if (e)
			goto nomem;
	}
	double demand = 0, short_gs = 0;
	for (size_t m = 0; m < d->nminutes; m++) {
		double dm = 0, rm = 0;

		for (size_t k = m * STEPS_PER_MIN; k < (m + 1) * STEPS_PER_MIN; k++) {
			dm += d->busy[k];
			rm += out->ready[k];
			out->gpu_hours += out->replicas[k] * (double)GF_SERVING_STEP_S / 3600.0;
			demand += d->busy[k];
			if (d->busy[k] > out->ready[k])
				short_gs += d->busy[k] - out->ready[k];
		}
		out->under_min += dm > rm + 1e-9;
	}
	out->minutes = (int64_t)d->nminutes;
	if (tr->kind == GF_SERVING_REQUESTS) {
		bool ok;
		int64_t miss = fifo_misses(tr, d, out->ready, c->slo_wait_s, &ok);

		if (!ok)
			goto nomem;
		out->slo_miss_pct = tr->n ? 100.0 * (double)miss / (double)tr->n : 0;
	} else {
		out->slo_miss_pct = demand > 0 ? 100.0 * short_gs / demand : 0;
	}
	return GF_OK;
nomem:
	gf_serving_result_release(out);
	return GF_NOMEM;
}
