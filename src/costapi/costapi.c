/*
 * costapi/costapi.c - /allocation: parameters -> windows -> Prometheus ->
 * cost rules -> OpenCost-shaped JSON (costapi/costapi.h).
 *
 * A request with step S over a window W runs ceil(W / S) windows one after
 * the other (at most MAX_SETS), each with its own queries: Prometheus does
 * the integration over time (subqueries), we do the pricing, grouping and
 * idle.  The answer is built in the response buffer; an error discards it.
 */
#include "costapi/costapi.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "costapi/promsrc.h"

#define MAX_SETS 400
#define MAX_SAMPLES 20000 /* window / resolution */

#define DEFAULT_MAX_WINDOW (92 * 86400)
#define MAX_CACHED 256 /* answers */

/* A kept answer: the bytes gf_costapi_run appended for key. */
struct cached {
	char *key, *body;
	size_t len;
	struct gf_cost_timing t; /* sets, uses, gpus of the run that made it */
	int64_t expires;         /* Unix seconds; 0: a completed window, kept until evicted */
	uint64_t used;           /* last use, for least-recently-used eviction */
};

struct gf_costapi {
	struct gf_costapi_config cfg;
	char *url;
	pthread_mutex_t mu;      /* running and the cache */
	unsigned running;        /* requests reading Prometheus now */
	struct cached cache[MAX_CACHED];
	size_t ncache, cache_used;
	uint64_t tick;
};

gf_err gf_costapi_create(const struct gf_costapi_config *cfg, gf_costapi **out)
{
	*out = NULL;
	if (!cfg->prometheus_url || !*cfg->prometheus_url || !cfg->prices)
		return GF_INVAL;
	gf_costapi *a = calloc(1, sizeof(*a));
	if (!a)
		return GF_NOMEM;
	a->cfg = *cfg;
	if (!a->cfg.timeout_ms)
		a->cfg.timeout_ms = 30000;
	if (!a->cfg.max_window)
		a->cfg.max_window = DEFAULT_MAX_WINDOW;
	if (!a->cfg.cache_recent_s)
		a->cfg.cache_recent_s = 60;
	pthread_mutex_init(&a->mu, NULL);
	if (!(a->url = strdup(cfg->prometheus_url))) {
		free(a);
		return GF_NOMEM;
	}
	a->cfg.prometheus_url = a->url;
	*out = a;
	return GF_OK;
}

void gf_costapi_destroy(gf_costapi *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->ncache; i++) {
		free(a->cache[i].key);
		free(a->cache[i].body);
	}
	pthread_mutex_destroy(&a->mu);
	free(a->url);
	free(a);
}

static double mono(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

struct params {
	int64_t start, end, step, res;
	struct gf_cost_aggregate agg;
	bool idle;
};

static int64_t floor_hour(int64_t t)
{
	return t - ((t % 3600) + 3600) % 3600;
}

/* With recorded rules: whole hours (the window rounded down to them), whole-hour steps. */
static unsigned recorded(const struct gf_cost_request *r, struct params *p, char *err, size_t errlen)
{
	if (r->resolution && *r->resolution) {
		snprintf(err, errlen, "resolution: not used with the recorded hourly rules (--recorded)");
		return 400;
	}
	int64_t w = p->end - p->start;
	p->start = floor_hour(p->start);
	p->end = floor_hour(p->end);
	if (p->end <= p->start) {
		snprintf(err, errlen, "window: with the recorded hourly rules the window must hold a whole hour");
		return 400;
	}
	if (p->step == w)
		p->step = p->end - p->start;
	if (p->step % 3600) {
		snprintf(err, errlen, "step: with the recorded hourly rules, whole hours");
		return 400;
	}
	p->res = GF_COST_RES_RECORDED;
	return 200;
}

static unsigned parse(const gf_costapi *a, const struct gf_cost_request *r, struct params *p, char *err,
		      size_t errlen)
{
	if (!r->window || !*r->window) {
		snprintf(err, errlen, "window: required (e.g. 7d, today, or START,END)");
		return 400;
	}
	if (gf_cost_parse_window(r->window, r->now, &p->start, &p->end, err, errlen))
		return 400;
	if (gf_cost_parse_aggregate(r->aggregate && *r->aggregate ? r->aggregate : "namespace", &p->agg,
				    err, errlen))
		return 400;
	p->step = p->end - p->start;
	char sub[200];
	if (r->step && *r->step && gf_cost_parse_duration(r->step, &p->step, sub, sizeof(sub))) {
		snprintf(err, errlen, "step: %s", sub);
		return 400;
	}
	p->res = 300;
	if (r->resolution && *r->resolution && gf_cost_parse_duration(r->resolution, &p->res, sub, sizeof(sub))) {
		snprintf(err, errlen, "resolution: %s", sub);
		return 400;
	}
	p->idle = true;
	if (r->include_idle && *r->include_idle) {
		if (!strcmp(r->include_idle, "false"))
			p->idle = false;
		else if (strcmp(r->include_idle, "true")) {
			snprintf(err, errlen, "includeIdle: expected true or false, found '%.40s'", r->include_idle);
			return 400;
		}
	}
	int64_t w = p->end - p->start;
	if (w > a->cfg.max_window) {
		long long m = (long long)a->cfg.max_window;
		snprintf(err, errlen, "window: '%.60s' is longer than the %lld%s allowed (--max-window)",
			 r->window, m % 86400 ? m % 3600 ? m : m / 3600 : m / 86400, m % 86400 ? m % 3600 ? "s" : "h" : "d");
		return 400;
	}
	if (a->cfg.recorded) {
		unsigned code = recorded(r, p, err, errlen);
		if (code != 200)
			return code;
		w = p->end - p->start;
	}
	if ((w + p->step - 1) / p->step > MAX_SETS) {
		snprintf(err, errlen, "step: %s makes more than %d sets of the window", r->step, MAX_SETS);
		return 400;
	}
	if (p->res != GF_COST_RES_RECORDED && (p->res > (p->step < w ? p->step : w) || w / p->res > MAX_SAMPLES)) {
		snprintf(err, errlen, "resolution: %llds does not fit the window (%llds) and step (%llds): "
			 "between 1/%d of the window and the step", (long long)p->res, (long long)w,
			 (long long)p->step, MAX_SAMPLES);
		return 400;
	}
	return 200;
}

/* One set: fetch, account, render; adds its timings to t. */
static unsigned one_set(gf_costapi *a, const struct params *p, int64_t s, int64_t e, enum gf_cost_format f,
			struct gf_obuf *out, char *err, size_t errlen, struct gf_cost_timing *t)
{
	struct gf_cost_data d;
	double t0 = mono();
	gf_err ge = gf_cost_prom_fetch(a->cfg.prometheus_url, a->cfg.timeout_ms, s, e, p->res, &p->agg, &d,
				       err, errlen);
	double prom = d.prom_seconds;
	unsigned code = 200;
	if (ge) {
		code = ge == GF_UNAVAILABLE ? 503 : 500;
		goto out;
	}
	struct gf_cost_input in = { .start = d.start, .end = d.end, .uses = d.uses, .nuses = d.nuses, .gpus = d.gpus,
				    .ngpus = d.ngpus, .prices = a->cfg.prices, .agg = p->agg,
				    .include_idle = p->idle };
	struct gf_cost_report rep;
	if (gf_cost_compute(&in, &rep, err, errlen)) {
		code = 500; /* a model without a price, or a record that makes no sense */
		goto out;
	}
	if (f == GF_COST_JSON)
		gf_cost_render_set(&rep, out);
	else
		gf_cost_render_table(&rep, a->cfg.prices->currency, out);
	gf_cost_report_release(&rep);
	t->uses += d.nuses;
	t->gpus += d.ngpus;
out:
	gf_cost_data_release(&d);
	t->prom_seconds += prom;
	t->ours_seconds += mono() - t0 - prom;
	return code;
}

/* ---- bounds: the cache and the limit on queries at once ------------------------ */

/*
 * The cache key of a parsed request: everything the answer depends on.  A completed
 * window by its times; one that reaches into the last GF_COSTAPI_SETTLE seconds (or 2 h
 * with recorded rules) by the window as written ("7d" is then the same key for a
 * minute, though its times move), and it expires: after cache_recent_s, and at the
 * latest at the next UTC midnight (where "today" starts again).
 */
static bool cache_key(const gf_costapi *a, const struct gf_cost_request *r, const struct params *p,
		      enum gf_cost_format f, char *key, size_t n, int64_t *expires)
{
	int64_t settle = a->cfg.recorded ? 7200 : GF_COSTAPI_SETTLE + 2 * p->res;
	/* no step given: the whole window, 0 (its length moves with now for "today") */
	long long step = r->step && *r->step ? (long long)p->step : 0;
	size_t at = (size_t)snprintf(key, n, "%d|%lld|%lld|%d|", (int)f, step, (long long)p->res, (int)p->idle);
	for (int k = 0; k < p->agg.nkeys && at < n; k++)
		at += (size_t)snprintf(key + at, n - at, "%d:%zu:%s,", (int)p->agg.keys[k].key,
				       strlen(p->agg.keys[k].label), p->agg.keys[k].label); /* length: unambiguous */
	if (at >= n)
		return false;
	int w;
	if (p->end + settle <= r->now) {
		w = snprintf(key + at, n - at, "|%lld-%lld", (long long)p->start, (long long)p->end);
		*expires = 0;
	} else {
		w = snprintf(key + at, n - at, "|w=%s", r->window);
		/* Never past the UTC midnight after now: "today", "week", "month" then name
		 * other times, and yesterday's "today" must not answer for the new day. */
		int64_t midnight = (r->now - ((r->now % 86400) + 86400) % 86400) + 86400;
		*expires = r->now + a->cfg.cache_recent_s;
		if (*expires > midnight)
			*expires = midnight;
	}
	return w >= 0 && (size_t)w < n - at; /* a key cut short is not kept */
}

/* Copy the answer kept for key into out; false when there is none (or it expired). */
static bool cache_get(gf_costapi *a, const char *key, int64_t now, struct gf_obuf *out, struct gf_cost_timing *t)
{
	bool hit = false;
	pthread_mutex_lock(&a->mu);
	for (size_t i = 0; i < a->ncache; i++) {
		struct cached *c = &a->cache[i];
		if (strcmp(c->key, key) || (c->expires && c->expires <= now))
			continue;
		c->used = ++a->tick;
		*t = c->t;
		t->cached = true;
		hit = !gf_obuf_append(out, c->body, c->len);
		break;
	}
	pthread_mutex_unlock(&a->mu);
	return hit;
}

static void cache_drop(gf_costapi *a, size_t i)
{
	a->cache_used -= a->cache[i].len;
	free(a->cache[i].key);
	free(a->cache[i].body);
	a->cache[i] = a->cache[--a->ncache];
}

/* Keep an answer: expired entries go first, then the least recently used, until it fits. */
static void cache_put(gf_costapi *a, const char *key, const char *body, size_t len, int64_t expires,
		      int64_t now, const struct gf_cost_timing *t)
{
	if (len > a->cfg.cache_bytes / 4)
		return; /* one answer never takes more than a quarter of the room */
	char *k = strdup(key), *b = malloc(len ? len : 1);
	if (!k || !b) {
		free(k);
		free(b);
		return;
	}
	memcpy(b, body, len);
	pthread_mutex_lock(&a->mu);
	for (size_t i = a->ncache; i-- > 0;)
		if (!strcmp(a->cache[i].key, key) || (a->cache[i].expires && a->cache[i].expires <= now))
			cache_drop(a, i);
	while (a->ncache && (a->ncache == MAX_CACHED || a->cache_used + len > a->cfg.cache_bytes)) {
		size_t lru = 0;
		for (size_t i = 1; i < a->ncache; i++)
			if (a->cache[i].used < a->cache[lru].used)
				lru = i;
		cache_drop(a, lru);
	}
	a->cache[a->ncache++] = (struct cached){ k, b, len, *t, expires, ++a->tick };
	a->cache_used += len;
	pthread_mutex_unlock(&a->mu);
}

/* A place among the max_queries reading Prometheus; false when they are all taken. */
static bool slot_take(gf_costapi *a)
{
	if (!a->cfg.max_queries)
		return true;
	pthread_mutex_lock(&a->mu);
	bool ok = a->running < a->cfg.max_queries;
	a->running += ok;
	pthread_mutex_unlock(&a->mu);
	return ok;
}

static void slot_give(gf_costapi *a)
{
	if (!a->cfg.max_queries)
		return;
	pthread_mutex_lock(&a->mu);
	a->running--;
	pthread_mutex_unlock(&a->mu);
}

/* The sets of a parsed request, appended to out. */
static unsigned run_sets(gf_costapi *a, const struct params *pp, enum gf_cost_format f, struct gf_obuf *out,
			 char *err, size_t errlen, struct gf_cost_timing *tp)
{
	struct params p = *pp;
	struct gf_cost_timing t = { 0 };
	unsigned code = 200;
	if (f == GF_COST_JSON)
		gf_obuf_puts(out, "{\"code\":200,\"data\":[");
	for (int64_t s = p.start; s < p.end && code == 200; s += p.step) {
		int64_t e = s + p.step < p.end ? s + p.step : p.end;
		if (s != p.start)
			gf_obuf_puts(out, f == GF_COST_JSON ? "," : "\n");
		code = one_set(a, &p, s, e, f, out, err, errlen, &t);
		t.sets++;
	}
	if (code == 200 && f == GF_COST_JSON)
		gf_obuf_puts(out, "]}");
	if (code == 200 && gf_obuf_error(out)) {
		code = 500;
		snprintf(err, errlen, "the answer is larger than the response limit");
	}
	*tp = t;
	return code;
}

unsigned gf_costapi_run(gf_costapi *a, const struct gf_cost_request *r, enum gf_cost_format f,
			struct gf_obuf *out, char *err, size_t errlen, struct gf_cost_timing *timing)
{
	struct gf_cost_timing t = { 0 };
	struct params p;
	char key[1024];
	int64_t expires = 0;
	size_t at = out->len;
	if (errlen)
		err[0] = '\0';
	unsigned code = parse(a, r, &p, err, errlen);
	if (code != 200)
		goto out;
	bool cache = a->cfg.cache_bytes && cache_key(a, r, &p, f, key, sizeof(key), &expires);
	if (cache && cache_get(a, key, r->now, out, &t))
		goto out;
	if (!slot_take(a)) {
		snprintf(err, errlen, "%u cost queries are reading Prometheus already, the most this server runs at "
			 "once (--max-queries): retry in a moment", a->cfg.max_queries);
		code = 429;
		goto out;
	}
	code = run_sets(a, &p, f, out, err, errlen, &t);
	slot_give(a);
	if (code == 200 && cache)
		cache_put(a, key, out->data + at, out->len - at, expires, r->now, &t);
out:
	if (timing)
		*timing = t;
	return code;
}

/* ---- HTTP -------------------------------------------------------------------- */

static void json_error(struct gf_http_response *resp, unsigned code, const char *msg)
{
	gf_obuf_reset(&resp->body);
	resp->status = code;
	resp->content_type = "application/json";
	gf_obuf_printf(&resp->body, "{\"code\":%u,\"message\":\"", code);
	for (const unsigned char *p = (const unsigned char *)msg; *p; p++) {
		if (*p == '"' || *p == '\\')
			gf_obuf_printf(&resp->body, "\\%c", *p);
		else if (*p < 0x20)
			gf_obuf_printf(&resp->body, "\\u%04x", *p);
		else
			gf_obuf_append(&resp->body, p, 1);
	}
	gf_obuf_puts(&resp->body, "\"}\n");
}

static void on_allocation(void *ud, const struct gf_http_request *req, struct gf_http_response *resp)
{
	gf_costapi *a = ud;
	char cn[256];
	bool verified = gf_http_request_peer_cn(req, cn, sizeof(cn));
	if (!gf_http_auth_allows(&a->cfg.auth, verified, cn, gf_http_request_header(req, "Authorization"))) {
		json_error(resp, 401, "unauthorized: a verified client certificate or the bearer token is required");
		return;
	}
	struct gf_cost_request r = {
		.window = gf_http_request_query(req, "window"),
		.aggregate = gf_http_request_query(req, "aggregate"),
		.step = gf_http_request_query(req, "step"),
		.include_idle = gf_http_request_query(req, "includeIdle"),
		.resolution = gf_http_request_query(req, "resolution"),
		.now = (int64_t)time(NULL),
	};
	char err[512];
	struct gf_cost_timing t;
	resp->content_type = "application/json";
	unsigned code = gf_costapi_run(a, &r, GF_COST_JSON, &resp->body, err, sizeof(err), &t);
	if (code != 200)
		json_error(resp, code, err);
	if (a->cfg.log_requests)
		fprintf(stderr, "gpufleet cost: %u window=%s aggregate=%s: %zu set(s), %zu allocation series, "
				"%zu GPUs, %s%.3f s, accounting %.3f s%s%s\n",
			code, r.window ? r.window : "", r.aggregate ? r.aggregate : "", t.sets, t.uses, t.gpus,
			t.cached ? "cached: prometheus not asked, " : "prometheus ", t.prom_seconds, t.ours_seconds,
			code != 200 ? ": " : "", code != 200 ? err : "");
}

static void on_healthz(void *ud, const struct gf_http_request *req, struct gf_http_response *resp)
{
	(void)ud;
	(void)req;
	gf_obuf_puts(&resp->body, "ok\n");
}

size_t gf_costapi_routes(gf_costapi *a, struct gf_http_route *routes, size_t max)
{
	const struct gf_http_route all[] = {
		{ "GET", "/allocation", on_allocation, a },
		{ "GET", "/allocation/compute", on_allocation, a },
		{ "GET", "/healthz", on_healthz, a },
	};
	size_t n = 0;
	for (; n < sizeof(all) / sizeof(all[0]) && n < max; n++)
		routes[n] = all[n];
	return n;
}
