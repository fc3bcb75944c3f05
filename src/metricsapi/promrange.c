/*
 * metricsapi/promrange.c - query_range client and matrix decoder (see
 * promrange.h).  The HTTP part is promql.c's (gf_promql_get).
 *
 * Memory is bounded by the grid, not by what Prometheus (or whatever answers
 * in its place) sends:
 *  - the body is capped while it arrives at gf_promrange_body_cap(npoints):
 *    64 series x (npoints x 48 bytes + 32 KiB of labels) + 64 KiB of
 *    envelope.  48 bytes hold the longest pair Prometheus writes,
 *    [1700000000.123,"-1.2345678901234567e-308"], and its comma (44); for
 *    the forecast's 10,111 points that is 33 MB, where the old fixed cap was
 *    64 MiB;
 *  - the answer is never parsed whole: a lexical walk (no tree, nesting
 *    depth <= 64) finds status, data.resultType and each element of
 *    data.result; only one element at a time becomes a cJSON tree, and only
 *    when its text fits one series' share (npoints x 48 + 32 KiB), so the
 *    tree (about 5x the text) stays under 3 MB;
 *  - the series are counted as they are met (at most 64);
 *  - at most GF_MA_RANGE_IN_FLIGHT queries run at once in the process; one
 *    more waits up to its timeout for a turn, then fails GF_UNAVAILABLE.
 * Each series' [time, "value"] pairs are placed on the grid in one pass:
 * O(points); the walk is O(bytes).
 */
#include "metricsapi/promrange.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/obuf.h"
#include "metricsapi/promql.h"
#include "prom/promjson.h"

#define BYTES_PER_POINT 48u
#define SERIES_OVERHEAD (32u << 10)
#define ENVELOPE_BYTES (64u << 10)
#define MAX_DEPTH 64

size_t gf_promrange_series_cap(size_t npoints)
{
	return npoints * BYTES_PER_POINT + SERIES_OVERHEAD;
}

size_t gf_promrange_body_cap(size_t npoints)
{
	return GF_MA_RANGE_MAX_SERIES * gf_promrange_series_cap(npoints) + ENVELOPE_BYTES;
}

void gf_ma_range_release(struct gf_ma_range *r)
{
	for (size_t i = 0; i < r->n; i++) {
		cJSON_Delete(r->s[i].labels);
		free(r->s[i].v);
	}
	r->n = 0;
}

static gf_err rerr(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static gf_err rerr(char *err, size_t errlen, const char *fmt, ...)
{
	if (errlen) {
		int n = snprintf(err, errlen, "prometheus query_range response: ");
		if (n >= 0 && (size_t)n < errlen) {
			va_list ap;
			va_start(ap, fmt);
			vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
			va_end(ap);
		}
	}
	return GF_PARSE;
}

/* The lexical walk: a cursor over the body. */
struct lex {
	const char *p, *end;
};

static void ws(struct lex *l)
{
	while (l->p < l->end && (*l->p == ' ' || *l->p == '\t' || *l->p == '\n' || *l->p == '\r'))
		l->p++;
}

static bool lit(struct lex *l, char c)
{
	ws(l);
	if (l->p < l->end && *l->p == c) {
		l->p++;
		return true;
	}
	return false;
}

/* Skip a string whose opening quote is at l->p. */
static bool skip_string(struct lex *l)
{
	for (l->p++; l->p < l->end; l->p++) {
		if (*l->p == '\\') {
			l->p++;
		} else if (*l->p == '"') {
			l->p++;
			return true;
		} else if ((unsigned char)*l->p < 0x20) {
			return false;
		}
	}
	return false;
}

/* Skip one value (brackets matched by kind, strings terminated, scalars made of
 * scalar bytes; the tree parser validates the values that are used).  false:
 * malformed or nested deeper than MAX_DEPTH. */
static bool skip_value(struct lex *l)
{
	char stack[MAX_DEPTH];
	int depth = 0;

	ws(l);
	do {
		if (l->p >= l->end)
			return false;
		char c = *l->p;
		if (c == '"') {
			if (!skip_string(l))
				return false;
		} else if (c == '{' || c == '[') {
			if (depth == MAX_DEPTH)
				return false;
			stack[depth++] = c == '{' ? '}' : ']';
			l->p++;
		} else if (c == '}' || c == ']') {
			if (!depth || stack[depth - 1] != c)
				return false;
			depth--;
			l->p++;
		} else if (c == ',' || c == ':') {
			if (!depth)
				return false;
			l->p++;
		} else if (c && strchr("0123456789+-.eEtruefalsn", c)) {
			while (l->p < l->end && *l->p && strchr("0123456789+-.eEtruefalsn", *l->p))
				l->p++;
		} else {
			return false;
		}
		ws(l);
	} while (depth);
	return true;
}

/* Read an object key (no escapes are expected in the keys that matter; a key
 * with escapes reads as unknown) and its colon. */
static bool key(struct lex *l, const char **k, size_t *klen)
{
	ws(l);
	if (l->p >= l->end || *l->p != '"')
		return false;
	const char *s = l->p + 1;
	if (!skip_string(l))
		return false;
	*k = s;
	*klen = (size_t)(l->p - 1 - s);
	return lit(l, ':');
}

static bool is(const char *k, size_t klen, const char *want)
{
	return klen == strlen(want) && !memcmp(k, want, klen);
}

/* A slice of the body holding one value. */
struct slice {
	const char *p;
	size_t len;
};

static bool take(struct lex *l, struct slice *s)
{
	ws(l);
	const char *b = l->p;
	if (!skip_value(l))
		return false;
	s->p = b;
	s->len = (size_t)(l->p - b);
	return true;
}

/* A small value (status, resultType, error) as a string, or NULL. */
static cJSON *small_string(const struct slice *s)
{
	if (!s->p || s->len > ENVELOPE_BYTES)
		return NULL;
	cJSON *v = cJSON_ParseWithLength(s->p, s->len);
	if (v && !cJSON_IsString(v)) {
		cJSON_Delete(v);
		v = NULL;
	}
	return v;
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

/* Walk data.result (the cursor at its '['), one series tree at a time. */
static gf_err decode_result(struct lex *l, struct gf_ma_range *out, char *err, size_t errlen)
{
	size_t cap = gf_promrange_series_cap(out->npoints);

	if (!lit(l, '['))
		return rerr(err, errlen, "data.result: expected an array");
	if (lit(l, ']'))
		return GF_OK;
	do {
		struct slice s;
		if (!take(l, &s))
			return rerr(err, errlen, "data.result[%zu]: malformed or nested deeper than %d", out->n,
				    MAX_DEPTH);
		if (out->n == GF_MA_RANGE_MAX_SERIES) {
			if (errlen)
				snprintf(err, errlen, "prometheus returned more than %d series", GF_MA_RANGE_MAX_SERIES);
			return GF_TOOBIG;
		}
		if (s.len > cap) {
			if (errlen)
				snprintf(err, errlen,
					 "prometheus query_range response: data.result[%zu] is %zu bytes, more than the "
					 "%zu a series of %zu points may take",
					 out->n, s.len, cap, out->npoints);
			return GF_TOOBIG;
		}
		cJSON *it = cJSON_ParseWithLength(s.p, s.len);
		if (!it)
			return rerr(err, errlen, "data.result[%zu]: not JSON", out->n);
		gf_err e = decode_series(it, out, &out->s[out->n++], err, errlen);
		cJSON_Delete(it);
		if (e)
			return e;
	} while (lit(l, ','));
	return lit(l, ']') ? GF_OK : rerr(err, errlen, "data.result: expected ',' or ']'");
}

/* The values of the keys that matter, as slices of the body. */
struct envelope {
	struct slice status, error, data, rtype, result;
};

/* Walk the object at the cursor: the top level (status, error, data) or data
 * (resultType, result); other keys are skipped, a known key given twice is refused. */
static gf_err walk_object(struct lex *l, struct envelope *env, bool top, char *err, size_t errlen)
{
	const char *where = top ? "" : "data.";
	if (!lit(l, '{'))
		return rerr(err, errlen, "%s: expected an object", top ? "body" : "data");
	if (lit(l, '}'))
		return GF_OK;
	do {
		const char *k;
		size_t klen;
		if (!key(l, &k, &klen))
			return rerr(err, errlen, "%sexpected a key", where);
		struct slice *dst = NULL;
		if (top && is(k, klen, "status"))
			dst = &env->status;
		else if (top && is(k, klen, "error"))
			dst = &env->error;
		else if (top && is(k, klen, "data"))
			dst = &env->data;
		else if (!top && is(k, klen, "resultType"))
			dst = &env->rtype;
		else if (!top && is(k, klen, "result"))
			dst = &env->result;
		if (dst && dst->p)
			return rerr(err, errlen, "%s%.*s: given twice", where, (int)klen, k);
		struct slice tmp;
		if (!take(l, dst ? dst : &tmp))
			return rerr(err, errlen, "%s%.*s: malformed value or nested deeper than %d", where,
				    (int)(klen > 64 ? 64 : klen), k, MAX_DEPTH);
	} while (lit(l, ','));
	if (!lit(l, '}'))
		return rerr(err, errlen, "%sexpected ',' or '}'", where);
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
	if (len > gf_promrange_body_cap(npoints)) {
		if (errlen)
			snprintf(err, errlen, "prometheus query_range response: %zu bytes, more than the %zu that %d series "
				 "of %zu points may take", len, gf_promrange_body_cap(npoints), GF_MA_RANGE_MAX_SERIES,
				 npoints);
		return GF_TOOBIG;
	}

	struct envelope env = {0};
	struct lex l = {json, json + len};
	gf_err e = walk_object(&l, &env, true, err, errlen);
	if (!e) {
		ws(&l);
		if (l.p != l.end)
			e = rerr(err, errlen, "trailing bytes after the answer");
	}
	if (e)
		return e;
	cJSON *st = small_string(&env.status);
	if (!st) {
		return rerr(err, errlen, "status: expected a string");
	}
	if (strcmp(st->valuestring, "success")) {
		cJSON *m = small_string(&env.error);
		e = rerr(err, errlen, "query failed: %.300s", m ? m->valuestring : "status is not success");
		cJSON_Delete(m);
		cJSON_Delete(st);
		return e;
	}
	cJSON_Delete(st);
	if (!env.data.p)
		return rerr(err, errlen, "data: expected resultType matrix and a result");
	struct lex dl = {env.data.p, env.data.p + env.data.len};
	if ((e = walk_object(&dl, &env, false, err, errlen)))
		return e;
	cJSON *rt = small_string(&env.rtype);
	bool matrix = rt && !strcmp(rt->valuestring, "matrix");
	cJSON_Delete(rt);
	if (!matrix || !env.result.p)
		return rerr(err, errlen, "data: expected resultType matrix and a result");
	struct lex rl = {env.result.p, env.result.p + env.result.len};
	e = decode_result(&rl, out, err, errlen);
	if (e)
		gf_ma_range_release(out);
	return e;
}

/* The in-flight limit: a counter under a mutex, waited on with the query's
 * own timeout. */
static pthread_mutex_t flight_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t flight_cv = PTHREAD_COND_INITIALIZER;
static unsigned flight_n;

static bool flight_enter(long timeout_ms)
{
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += timeout_ms / 1000;
	until.tv_nsec += (timeout_ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	bool ok = true;
	pthread_mutex_lock(&flight_mu);
	while (flight_n >= GF_MA_RANGE_IN_FLIGHT && ok)
		ok = pthread_cond_timedwait(&flight_cv, &flight_mu, &until) != ETIMEDOUT;
	if (flight_n < GF_MA_RANGE_IN_FLIGHT) {
		flight_n++;
		ok = true;
	}
	pthread_mutex_unlock(&flight_mu);
	return ok;
}

static void flight_leave(void)
{
	pthread_mutex_lock(&flight_mu);
	flight_n--;
	pthread_cond_signal(&flight_cv);
	pthread_mutex_unlock(&flight_mu);
}

gf_err gf_promrange_query(const char *base_url, const char *promql, int64_t start, int32_t step,
			  size_t npoints, long timeout_ms, struct gf_ma_range *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (step < 1 || npoints < 1 || npoints > GF_MA_RANGE_MAX_POINTS)
		return GF_INVAL;
	if (!flight_enter(timeout_ms)) {
		if (errlen)
			snprintf(err, errlen, "prometheus query_range: %d queries already in flight",
				 GF_MA_RANGE_IN_FLIGHT);
		return GF_UNAVAILABLE;
	}
	char grid[96];
	snprintf(grid, sizeof(grid), "&start=%lld&end=%lld&step=%d", (long long)start,
		 (long long)(start + (int64_t)(npoints - 1) * step), step);
	struct gf_obuf body;
	size_t cap = gf_promrange_body_cap(npoints);
	gf_obuf_init(&body, cap);
	long code;
	gf_err e = gf_promql_get(base_url, "query_range", promql, grid, timeout_ms, &body, &code, err, errlen);
	if (e == GF_TOOBIG && errlen)
		snprintf(err, errlen,
			 "prometheus query_range response: more than the %zu bytes that %d series of %zu points may "
			 "take (stopped reading)",
			 cap, GF_MA_RANGE_MAX_SERIES, npoints);
	if (!e) {
		e = gf_promrange_decode(body.data ? body.data : "", body.len, start, step, npoints, out, err, errlen);
		if (e && code >= 500)
			e = GF_UNAVAILABLE;
	}
	gf_obuf_release(&body);
	flight_leave();
	return e;
}
