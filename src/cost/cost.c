/*
 * cost/cost.c - the accounting rules of cost/cost.h: shares, the price
 * sheet, windows, aggregation keys, and gf_cost_compute().
 *
 * gf_cost_compute, for n uses and g GPUs:
 *   1. index the GPUs by (node, uuid): one sort, O(g log g);
 *   2. find each use's GPU (binary search), add its share-seconds to the
 *      GPU, price it at the GPU's model and node kind: O(n log g);
 *   3. build each use's aggregation key, sort the uses by (key, input
 *      order) and sum runs of equal keys into rows: O(n log n);
 *   4. idle per GPU = capacity - share-seconds (>= 0), summed per (node,
 *      model) after a sort: O(g log g).
 * Sums run in input order within a row, so the same input gives the same
 * bits.  Hours are seconds / 3600 at the end of each sum.
 */
#include "core/duration.h"
#include "core/grow.h"
#include "core/sort.h"
#include "core/time.h"
#include "cost/cost.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEY_MAX 1024 /* an aggregation key, with the NUL */

static gf_err fail(char *err, size_t errlen, gf_err e, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static gf_err fail(char *err, size_t errlen, gf_err e, const char *fmt, ...)
{
	if (errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return e;
}

/* ---- shares ---------------------------------------------------------------- */

double gf_cost_share(int milli, int64_t mem_mib, int64_t gpu_mem_mib)
{
	double s = 0;
	if (milli > 0)
		s = milli / 1000.0;
	if (mem_mib > 0 && gpu_mem_mib > 0) {
		double m = (double)mem_mib / (double)gpu_mem_mib;
		if (m > s)
			s = m;
	}
	return s > 1 ? 1 : s;
}

double gf_cost_mig_fraction(const char *p)
{
	/* optional "<N>c." (compute-instance part of a CI profile) */
	const char *g = strchr(p, 'g');
	if (!g)
		return -1;
	const char *c = strchr(p, 'c');
	if (c && c < g)
		p = c + 2; /* past "c." */
	char *end;
	errno = 0;
	long n = strtol(p, &end, 10);
	if (end == p || errno || *end != 'g' || end[1] != '.' || n < 1 || n > 7 || !isdigit((unsigned char)*p))
		return -1;
	const char *m = end + 2;
	char *mend;
	long gb = strtol(m, &mend, 10);
	if (mend == m || gb < 1 || strcmp(mend, "gb"))
		return -1;
	return (double)n / 7.0;
}

/* ---- prices ---------------------------------------------------------------- */

void gf_cost_prices_release(struct gf_cost_prices *p)
{
	free(p->v);
	memset(p, 0, sizeof(*p));
}

const struct gf_cost_price *gf_cost_price_find(const struct gf_cost_prices *p, const char *model)
{
	const struct gf_cost_price *def = NULL;
	for (size_t i = 0; i < p->n; i++) {
		if (model && !strcmp(p->v[i].model, model))
			return &p->v[i];
		if (!strcmp(p->v[i].model, "*"))
			def = &p->v[i];
	}
	return def;
}

/* Trim spaces at both ends in place (s has len bytes); returns the start, *n the new length. */
static const char *trim(const char *s, size_t *n)
{
	while (*n && (*s == ' ' || *s == '\t')) {
		s++;
		(*n)--;
	}
	while (*n && (s[*n - 1] == ' ' || s[*n - 1] == '\t' || s[*n - 1] == '\r'))
		(*n)--;
	return s;
}

/* A price: a decimal >= 0, the whole field. */
static bool parse_price(const char *f, size_t n, double *out)
{
	char buf[64];
	if (!n || n >= sizeof(buf))
		return false;
	memcpy(buf, f, n);
	buf[n] = '\0';
	for (size_t i = 0; i < n; i++)
		if (!isdigit((unsigned char)buf[i]) && buf[i] != '.' && buf[i] != '-' && buf[i] != '+')
			return false; /* no "inf", "nan", hex or exponents */
	char *end;
	errno = 0;
	double v = strtod(buf, &end);
	if (*end || errno || !isfinite(v))
		return false;
	*out = v;
	return true;
}

struct field {
	const char *p;
	size_t n;
};

/* Split a line into at most max comma-separated, trimmed fields; returns the count (max+1 if more). */
static int split(const char *line, size_t len, struct field *f, int max)
{
	int k = 0;
	size_t at = 0;
	for (;;) {
		size_t e = at;
		while (e < len && line[e] != ',')
			e++;
		if (k == max)
			return max + 1;
		f[k].n = e - at;
		f[k].p = trim(line + at, &f[k].n);
		k++;
		if (e >= len)
			return k;
		at = e + 1;
	}
}

static const char *const price_cols[] = { "model", "on_demand_per_hour", "spot_per_hour" };

static gf_err price_row(const struct field *f, int nf, const char *file, unsigned line,
			struct gf_cost_prices *out, char *err, size_t errlen)
{
	if (nf < 2 || nf > 3)
		return fail(err, errlen, GF_PARSE, "%s:%u: expected 3 columns (model,on_demand_per_hour,"
			    "spot_per_hour), found %d", file, line, nf > 3 ? 4 : nf);
	if (!f[0].n)
		return fail(err, errlen, GF_PARSE, "%s:%u: column 1 (model): empty", file, line);
	if (f[0].n >= GF_COST_NAME_MAX)
		return fail(err, errlen, GF_TOOBIG, "%s:%u: column 1 (model): longer than %d bytes",
			    file, line, GF_COST_NAME_MAX - 1);
	if (out->n == GF_COST_MAX_PRICES)
		return fail(err, errlen, GF_TOOBIG, "%s:%u: more than %d prices", file, line,
			    GF_COST_MAX_PRICES);
	struct gf_cost_price p;
	memset(&p, 0, sizeof(p));
	memcpy(p.model, f[0].p, f[0].n);
	for (size_t i = 0; i < out->n; i++)
		if (!strcmp(out->v[i].model, p.model))
			return fail(err, errlen, GF_PARSE, "%s:%u: column 1 (model): '%s' is listed twice",
				    file, line, p.model);
	for (int c = 1; c < 3; c++) {
		double *dst = c == 1 ? &p.on_demand : &p.spot;
		if (c == 2 && (nf < 3 || !f[2].n)) {
			p.spot = p.on_demand;
			break;
		}
		if (!parse_price(f[c].p, f[c].n, dst))
			return fail(err, errlen, GF_PARSE, "%s:%u: column %d (%s): expected a price "
				    "(a decimal number), found \"%.*s\"", file, line, c + 1, price_cols[c],
				    (int)(f[c].n > 40 ? 40 : f[c].n), f[c].p);
		if (*dst < 0)
			return fail(err, errlen, GF_PARSE, "%s:%u: column %d (%s): negative price %.*s",
				    file, line, c + 1, price_cols[c], (int)(f[c].n > 40 ? 40 : f[c].n), f[c].p);
	}
	if (!(out->n & (out->n - 1)) || !out->v) { /* grow at powers of two */
		size_t cap = out->n ? out->n * 2 : 8;
		struct gf_cost_price *v = realloc(out->v, cap * sizeof(*v));
		if (!v)
			return GF_NOMEM;
		out->v = v;
	}
	out->v[out->n++] = p;
	return GF_OK;
}

gf_err gf_cost_prices_parse(const char *data, size_t len, const char *file,
			    struct gf_cost_prices *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	snprintf(out->currency, sizeof(out->currency), "USD");
	bool header = false;
	unsigned line = 0;
	gf_err e = GF_OK;
	size_t at = 0;
	while (at < len) {
		size_t e0 = at;
		while (e0 < len && data[e0] != '\n')
			e0++;
		line++;
		size_t n = e0 - at;
		const char *l = trim(data + at, &n);
		at = e0 + 1;
		if (!n || l[0] == '#')
			continue;
		if (memchr(l, '\0', n)) {
			e = fail(err, errlen, GF_PARSE, "%s:%u: a NUL byte", file, line);
			break;
		}
		struct field f[4];
		int nf = split(l, n, f, 3);
		if (!header && nf == 2 && f[0].n == 8 && !memcmp(f[0].p, "currency", 8)) {
			if (!f[1].n || f[1].n >= sizeof(out->currency)) {
				e = fail(err, errlen, GF_PARSE, "%s:%u: column 2 (currency): expected a "
					 "currency code of 1-15 bytes", file, line);
				break;
			}
			memcpy(out->currency, f[1].p, f[1].n);
			out->currency[f[1].n] = '\0';
			continue;
		}
		if (!header) {
			for (int c = 0; c < 3; c++) {
				if (nf != 3 || f[c].n != strlen(price_cols[c]) ||
				    memcmp(f[c].p, price_cols[c], f[c].n)) {
					e = fail(err, errlen, GF_PARSE, "%s:%u: expected the header "
						 "model,on_demand_per_hour,spot_per_hour", file, line);
					goto out;
				}
			}
			header = true;
			continue;
		}
		if ((e = price_row(f, nf, file, line, out, err, errlen)))
			break;
	}
	if (!e && !header)
		e = fail(err, errlen, GF_PARSE, "%s: no header model,on_demand_per_hour,spot_per_hour",
			 file);
out:
	if (e)
		gf_cost_prices_release(out);
	return e;
}

/* ---- windows --------------------------------------------------------------- */

gf_err gf_cost_parse_duration(const char *s, int64_t *seconds, char *err, size_t errlen)
{
	int64_t ms;
	if (gf_duration_parse(s, 0, &ms)) { /* the command line's one syntax: 30m, 12h, 1h30m, 7d, 2w */
		if (ms <= 0 || ms % GF_MS_PER_S)
			return fail(err, errlen, GF_PARSE, "duration '%.40s': expected a positive whole number "
				    "of seconds (e.g. 30m, 12h, 1h30m, 7d)", s);
		if (ms > 10LL * 366 * GF_MS_PER_DAY)
			return fail(err, errlen, GF_RANGE, "duration '%.40s': longer than 10 years", s);
		*seconds = ms / GF_MS_PER_S;
		return GF_OK;
	}
	/* Not that syntax: say why in the words of the older one (a plain number, a huge one, junk). */
	size_t n = strlen(s);
	int64_t v = 0;
	size_t i = 0;
	for (; i < n && isdigit((unsigned char)s[i]); i++) {
		if (v > 100000000)
			return fail(err, errlen, GF_RANGE, "duration '%.40s': too long", s);
		v = v * 10 + (s[i] - '0');
	}
	int64_t unit = 0;
	if (i + 1 == n) {
		switch (s[i]) {
		case 's': unit = 1; break;
		case 'm': unit = 60; break;
		case 'h': unit = 3600; break;
		case 'd': unit = 86400; break;
		case 'w': unit = 7 * 86400; break;
		}
	}
	if (!i || !unit || v <= 0)
		return fail(err, errlen, GF_PARSE, "duration '%.40s': expected a positive whole number "
			    "and a unit s, m, h, d or w (e.g. 30m, 12h, 7d)", s);
	if (v * unit > 10LL * 366 * 86400)
		return fail(err, errlen, GF_RANGE, "duration '%.40s': longer than 10 years", s);
	*seconds = v * unit;
	return GF_OK;
}

/* A time bound of a pair: RFC3339 or Unix seconds. */
static bool parse_bound(const char *s, int64_t *t)
{
	if (gf_rfc3339_parse(s, t))
		return true;
	size_t n = strlen(s);
	if (!n || n > 12)
		return false;
	int64_t v = 0;
	for (size_t i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return false;
		v = v * 10 + (s[i] - '0');
	}
	*t = v;
	return true;
}

gf_err gf_cost_parse_window(const char *s, int64_t now, int64_t *start, int64_t *end, char *err,
			    size_t errlen)
{
	int64_t day = gf_floor_div(now, 86400) * 86400;
	int64_t y;
	int m, d;
	gf_civil_from_days(gf_floor_div(now, 86400), &y, &m, &d);
	/* 1970-01-01 was a Thursday: days since the last Sunday. */
	int64_t wday = ((gf_floor_div(now, 86400) + 4) % 7 + 7) % 7;
	int64_t week = day - wday * 86400;
	int64_t month = gf_days_from_civil(y, m, 1) * 86400;
	int64_t prev_month = gf_days_from_civil(m == 1 ? y - 1 : y, m == 1 ? 12 : m - 1, 1) * 86400;
	const char *comma = strchr(s, ',');
	if (!strcmp(s, "today")) {
		*start = day, *end = now;
	} else if (!strcmp(s, "yesterday")) {
		*start = day - 86400, *end = day;
	} else if (!strcmp(s, "week")) {
		*start = week, *end = now;
	} else if (!strcmp(s, "lastweek")) {
		*start = week - 7 * 86400, *end = week;
	} else if (!strcmp(s, "month")) {
		*start = month, *end = now;
	} else if (!strcmp(s, "lastmonth")) {
		*start = prev_month, *end = month;
	} else if (comma) {
		char a[64], b[64];
		size_t la = (size_t)(comma - s), lb = strlen(comma + 1);
		if (la >= sizeof(a) || lb >= sizeof(b))
			return fail(err, errlen, GF_PARSE, "window '%.80s': a bound is too long", s);
		memcpy(a, s, la);
		a[la] = '\0';
		memcpy(b, comma + 1, lb + 1);
		if (!parse_bound(a, start) || !parse_bound(b, end))
			return fail(err, errlen, GF_PARSE, "window '%.80s': expected two RFC3339 UTC times "
				    "(2026-11-01T00:00:00Z,2026-11-02T00:00:00Z) or Unix seconds", s);
	} else {
		int64_t secs;
		char derr[160];
		if (gf_cost_parse_duration(s, &secs, derr, sizeof(derr)))
			return fail(err, errlen, GF_PARSE, "window '%.80s': expected a duration (30m, 12h, "
				    "7d), today, yesterday, week, lastweek, month, lastmonth, or START,END", s);
		*start = now - secs, *end = now;
	}
	if (*start >= *end)
		return fail(err, errlen, GF_PARSE, "window '%.80s': empty (its start is not before its end)", s);
	return GF_OK;
}

/* ---- aggregation ----------------------------------------------------------- */

gf_err gf_cost_parse_aggregate(const char *s, struct gf_cost_aggregate *out, char *err,
			       size_t errlen)
{
	static const struct {
		const char *name;
		enum gf_cost_key key;
	} names[] = {
		{ "namespace", GF_COST_BY_NAMESPACE }, { "pod", GF_COST_BY_POD },
		{ "node", GF_COST_BY_NODE },           { "model", GF_COST_BY_MODEL },
		{ "cluster", GF_COST_BY_CLUSTER },
	};
	memset(out, 0, sizeof(*out));
	const char *p = s;
	for (;;) {
		const char *c = strchr(p, ',');
		size_t n = c ? (size_t)(c - p) : strlen(p);
		if (out->nkeys == GF_COST_MAX_KEYS)
			return fail(err, errlen, GF_PARSE, "aggregate '%.80s': more than %d keys", s,
				    GF_COST_MAX_KEYS);
		bool ok = false;
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			if (n == strlen(names[i].name) && !memcmp(p, names[i].name, n)) {
				out->keys[out->nkeys++].key = names[i].key;
				ok = true;
			}
		}
		if (!ok && n > 6 && n - 6 < GF_COST_NAME_MAX && !memcmp(p, "label:", 6)) {
			out->keys[out->nkeys].key = GF_COST_BY_LABEL;
			memcpy(out->keys[out->nkeys].label, p + 6, n - 6);
			out->keys[out->nkeys].label[n - 6] = '\0';
			ok = !memchr(p + 6, '\0', n - 6);
			out->nkeys++;
		}
		if (!ok)
			return fail(err, errlen, GF_PARSE, "unknown aggregate '%.*s': expected namespace, pod, "
				    "node, model, cluster or label:KEY (or a comma list of them)",
				    (int)(n > 80 ? 80 : n), p);
		if (!c)
			break;
		p = c + 1;
	}
	return GF_OK;
}

/* ---- inputs ---------------------------------------------------------------- */

double gf_cost_overlap(int64_t s, int64_t e, int64_t ws, int64_t we)
{
	int64_t a = s > ws ? s : ws, b = e < we ? e : we;
	return b > a ? (double)(b - a) : 0;
}

struct gf_cost_use gf_cost_alloc_use(const struct gf_cost_alloc *a, int64_t ws, int64_t we)
{
	double sec = gf_cost_overlap(a->start, a->end, ws, we);
	return (struct gf_cost_use){
		.ns = a->ns, .pod = a->pod, .node = a->node, .uuid = a->uuid, .model = a->model,
		.labels = a->labels, .nlabels = a->nlabels, .seconds = sec,
		.share_seconds = a->share * sec, .used_seconds = a->util < 0 ? -1 : a->util * sec,
	};
}

/* ---- compute --------------------------------------------------------------- */

static int cmp_str(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

struct gpu_ix {
	const struct gf_cost_gpu *g;
	size_t i;
};

static int cmp_gpu(const void *pa, const void *pb)
{
	const struct gpu_ix *a = pa, *b = pb;
	int c = cmp_str(a->g->node, b->g->node);
	if (!c)
		c = cmp_str(a->g->uuid, b->g->uuid);
	return c ? c : (a->i > b->i) - (a->i < b->i);
}

static long find_gpu(const struct gpu_ix *ix, size_t n, const char *node, const char *uuid)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = cmp_str(ix[mid].g->node, node);
		if (!c)
			c = cmp_str(ix[mid].g->uuid, uuid);
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < n && !cmp_str(ix[lo].g->node, node) && !cmp_str(ix[lo].g->uuid, uuid))
		return (long)ix[lo].i;
	return -1;
}

static const char *label_of(const struct gf_cost_use *u, const char *key)
{
	for (size_t i = 0; i < u->nlabels; i++)
		if (u->labels[i].key && !strcmp(u->labels[i].key, key))
			return u->labels[i].value;
	return NULL;
}

static void key_of(const struct gf_cost_aggregate *agg, const struct gf_cost_use *u, char *out)
{
	size_t at = 0;
	out[0] = '\0';
	for (int k = 0; k < agg->nkeys; k++) {
		const char *v = NULL, *v2 = NULL;
		switch (agg->keys[k].key) {
		case GF_COST_BY_NAMESPACE: v = u->ns; break;
		case GF_COST_BY_POD: v = u->ns, v2 = u->pod; break;
		case GF_COST_BY_NODE: v = u->node; break;
		case GF_COST_BY_MODEL: v = u->model; break;
		case GF_COST_BY_CLUSTER: v = "cluster"; break;
		case GF_COST_BY_LABEL: v = label_of(u, agg->keys[k].label); break;
		}
		if (!v || !*v)
			v = GF_COST_UNALLOCATED, v2 = NULL;
		int w = snprintf(out + at, KEY_MAX - at, "%s%s%s%s", k ? "/" : "", v, v2 ? "/" : "",
				 v2 ? v2 : "");
		if (w < 0 || (size_t)w >= KEY_MAX - at)
			return; /* truncated keys still group deterministically */
		at += (size_t)w;
	}
}

struct use_ix {
	char *key;
	size_t i;
};

static int cmp_use(const void *pa, const void *pb)
{
	const struct use_ix *a = pa, *b = pb;
	int c = strcmp(a->key, b->key);
	return c ? c : (a->i > b->i) - (a->i < b->i);
}

struct priced {
	long gpu;          /* index into gpus, -1 unmatched */
	double price, od;  /* per hour: as billed, at on-demand */
};

static gf_err price_of(const struct gf_cost_prices *p, const char *model, bool spot, double *price,
		       double *od, char *err, size_t errlen)
{
	const struct gf_cost_price *r = gf_cost_price_find(p, model);
	if (!r)
		return fail(err, errlen, GF_NOENT, "no price for GPU model '%s' in the price sheet "
			    "(add a row for it, or a '*' row)", model ? model : "");
	*od = r->on_demand;
	*price = spot ? r->spot : r->on_demand;
	return GF_OK;
}

static void same_or_null(const char **dst, const char *v)
{
	if (*dst && cmp_str(*dst, v))
		*dst = NULL;
}

static gf_err add_row(struct gf_cost_report *r, const char *name, size_t *cap)
{
	if (gf_grow(&r->rows, cap, r->nrows + 1, sizeof(*r->rows), 16))
		return GF_NOMEM;
	struct gf_cost_row *row = &r->rows[r->nrows];
	memset(row, 0, sizeof(*row));
	row->name = strdup(name);
	if (!row->name)
		return GF_NOMEM;
	r->nrows++;
	return GF_OK;
}

static gf_err validate(const struct gf_cost_input *in, char *err, size_t errlen)
{
	for (size_t i = 0; i < in->nuses; i++) {
		const struct gf_cost_use *u = &in->uses[i];
		if (!(u->seconds >= 0) || !(u->share_seconds >= 0) || !isfinite(u->seconds) ||
		    u->share_seconds > u->seconds * (1 + 1e-9) + 1e-9 || !isfinite(u->used_seconds))
			return fail(err, errlen, GF_INVAL, "allocation of pod %s/%s on GPU %s: share-seconds "
				    "%g not within 0..%g", u->ns ? u->ns : "", u->pod ? u->pod : "",
				    u->uuid ? u->uuid : "", u->share_seconds, u->seconds);
	}
	for (size_t i = 0; i < in->ngpus; i++)
		if (!(in->gpus[i].seconds >= 0) || !isfinite(in->gpus[i].seconds) ||
		    !(in->gpus[i].overcommit_seconds >= 0) || !isfinite(in->gpus[i].overcommit_seconds))
			return fail(err, errlen, GF_INVAL, "GPU %s on %s: negative capacity",
				    in->gpus[i].uuid ? in->gpus[i].uuid : "", in->gpus[i].node ? in->gpus[i].node : "");
	return GF_OK;
}

/* Rows of the workload, from uses sorted by key. */
static gf_err workload_rows(const struct gf_cost_input *in, const struct use_ix *ux,
			    const struct priced *pr, struct gf_cost_report *r, size_t *cap)
{
	for (size_t k = 0; k < in->nuses; k++) {
		const struct gf_cost_use *u = &in->uses[ux[k].i];
		const struct priced *p = &pr[ux[k].i];
		if (!k || strcmp(ux[k].key, ux[k - 1].key)) {
			gf_err e = add_row(r, ux[k].key, cap);
			if (e)
				return e;
			struct gf_cost_row *row = &r->rows[r->nrows - 1];
			row->ns = u->ns, row->pod = u->pod, row->node = u->node, row->model = u->model;
		}
		struct gf_cost_row *row = &r->rows[r->nrows - 1];
		same_or_null(&row->ns, u->ns);
		same_or_null(&row->pod, u->pod);
		same_or_null(&row->node, u->node);
		same_or_null(&row->model, u->model);
		row->gpu_hours += u->share_seconds / 3600;
		row->whole_gpu_hours += u->seconds / 3600;
		row->cost += u->share_seconds / 3600 * p->price;
		row->whole_cost += u->seconds / 3600 * p->price;
		row->on_demand_cost += u->share_seconds / 3600 * p->od;
		if (u->used_seconds >= 0) {
			row->used_hours += u->used_seconds / 3600;
			row->known_hours += u->share_seconds / 3600;
		}
	}
	return GF_OK;
}

static int cmp_idle(const void *pa, const void *pb)
{
	const struct gf_cost_idle *a = pa, *b = pb;
	int c = cmp_str(a->node, b->node);
	return c ? c : cmp_str(a->model, b->model);
}

/* Idle per GPU, per (node, model), and the idle row. */
static gf_err idle_rows(const struct gf_cost_input *in, const double *alloc, struct gf_cost_report *r,
			size_t *cap, char *err, size_t errlen)
{
	r->idle = calloc(in->ngpus ? in->ngpus : 1, sizeof(*r->idle));
	if (!r->idle)
		return GF_NOMEM;
	struct gf_cost_row idle;
	memset(&idle, 0, sizeof(idle));
	for (size_t g = 0; g < in->ngpus; g++) {
		const struct gf_cost_gpu *gp = &in->gpus[g];
		double price = 0, od = 0;
		gf_err e = price_of(in->prices, gp->model, gp->spot, &price, &od, err, errlen);
		if (e)
			return e;
		/* a pool: its GPUs' idle is its capacity minus its uses plus what some GPUs were over */
		double idle_s = gp->seconds - alloc[g] + gp->overcommit_seconds;
		r->overcommit_hours += gp->overcommit_seconds / 3600;
		if (idle_s < 0) {
			r->overcommit_hours += -idle_s / 3600;
			idle_s = 0;
		}
		r->capacity_hours += gp->seconds / 3600;
		r->capacity_cost += gp->seconds / 3600 * price;
		idle.gpu_hours += idle_s / 3600;
		idle.cost += idle_s / 3600 * price;
		idle.on_demand_cost += idle_s / 3600 * od;
		r->idle[r->nidle++] = (struct gf_cost_idle){ gp->node, gp->model, idle_s / 3600,
							     idle_s / 3600 * price };
	}
	gf_qsort(r->idle, r->nidle, sizeof(*r->idle), cmp_idle);
	size_t w = 0; /* merge equal (node, model), drop zeros */
	for (size_t i = 0; i < r->nidle; i++) {
		if (w && !cmp_idle(&r->idle[w - 1], &r->idle[i])) {
			r->idle[w - 1].hours += r->idle[i].hours;
			r->idle[w - 1].cost += r->idle[i].cost;
		} else {
			r->idle[w++] = r->idle[i];
		}
	}
	r->nidle = w;
	w = 0;
	for (size_t i = 0; i < r->nidle; i++)
		if (r->idle[i].hours > 0)
			r->idle[w++] = r->idle[i];
	r->nidle = w;
	r->idle_hours = idle.gpu_hours;
	r->idle_cost = idle.cost;
	r->saved_by_spot += idle.on_demand_cost - idle.cost;
	if (!in->include_idle)
		return GF_OK;
	gf_err e = add_row(r, GF_COST_IDLE, cap);
	if (e)
		return e;
	struct gf_cost_row *row = &r->rows[r->nrows - 1];
	char *name = row->name;
	*row = idle;
	row->name = name;
	row->idle = true;
	row->whole_gpu_hours = idle.gpu_hours;
	row->whole_cost = idle.cost;
	return GF_OK;
}

gf_err gf_cost_compute(const struct gf_cost_input *in, struct gf_cost_report *out, char *err,
		       size_t errlen)
{
	memset(out, 0, sizeof(*out));
	out->start = in->start;
	out->end = in->end;
	if (errlen)
		err[0] = '\0';
	gf_err e = validate(in, err, errlen);
	if (e)
		return e;
	struct gpu_ix *gx = malloc((in->ngpus ? in->ngpus : 1) * sizeof(*gx));
	double *alloc = calloc(in->ngpus ? in->ngpus : 1, sizeof(*alloc));
	struct priced *pr = malloc((in->nuses ? in->nuses : 1) * sizeof(*pr));
	struct use_ix *ux = calloc(in->nuses ? in->nuses : 1, sizeof(*ux));
	char key[KEY_MAX];
	size_t cap = 0;
	if (!gx || !alloc || !pr || !ux) {
		e = GF_NOMEM;
		goto out;
	}
	for (size_t g = 0; g < in->ngpus; g++)
		gx[g] = (struct gpu_ix){ &in->gpus[g], g };
	gf_qsort(gx, in->ngpus, sizeof(*gx), cmp_gpu);
	for (size_t i = 0; i < in->nuses; i++) {
		const struct gf_cost_use *u = &in->uses[i];
		long g = find_gpu(gx, in->ngpus, u->node, u->uuid);
		const struct gf_cost_gpu *gp = g >= 0 ? &in->gpus[g] : NULL;
		pr[i].gpu = g;
		if ((e = price_of(in->prices, gp ? gp->model : u->model, gp && gp->spot, &pr[i].price,
				  &pr[i].od, err, errlen)))
			goto out;
		if (gp)
			alloc[g] += u->share_seconds;
		else
			out->unmatched_hours += u->share_seconds / 3600;
		out->workload_hours += u->share_seconds / 3600;
		out->workload_cost += u->share_seconds / 3600 * pr[i].price;
		out->whole_cost += u->seconds / 3600 * pr[i].price;
		out->saved_by_spot += u->share_seconds / 3600 * (pr[i].od - pr[i].price);
		if (u->used_seconds >= 0) {
			out->used_hours += u->used_seconds / 3600;
			out->known_hours += u->share_seconds / 3600;
		}
		key_of(&in->agg, u, key);
		ux[i].i = i;
		if (!(ux[i].key = strdup(key))) {
			e = GF_NOMEM;
			goto out;
		}
	}
	out->saved_by_sharing = out->whole_cost - out->workload_cost;
	gf_qsort(ux, in->nuses, sizeof(*ux), cmp_use);
	if ((e = workload_rows(in, ux, pr, out, &cap)))
		goto out;
	if ((e = idle_rows(in, alloc, out, &cap, err, errlen)))
		goto out;
	double tot = out->workload_hours + out->idle_hours;
	out->reconciled = fabs(tot - out->capacity_hours) <= 0.001 * out->capacity_hours ||
			  (out->capacity_hours == 0 && tot == 0);
out:
	free(gx);
	free(alloc);
	free(pr);
	for (size_t i = 0; ux && i < in->nuses; i++)
		free(ux[i].key);
	free(ux);
	if (e)
		gf_cost_report_release(out);
	return e;
}

void gf_cost_report_release(struct gf_cost_report *r)
{
	for (size_t i = 0; i < r->nrows; i++)
		free(r->rows[i].name);
	free(r->rows);
	free(r->idle);
	memset(r, 0, sizeof(*r));
}

double gf_cost_row_efficiency(const struct gf_cost_row *r)
{
	return r->known_hours > 0 ? r->used_hours / r->known_hours : 0;
}
