/*
 * costapi/promsrc.c - Prometheus as the store of the allocation record
 * (costapi/promsrc.h): the queries, the client (libcurl), the decoder (the answers'
 * envelopes: prom/promjson.h).
 *
 * The queries of a window run at once (curl multi: Prometheus evaluates them in
 * parallel).  The queries are evaluated at end - R, so the subquery samples land on
 * start, start + R, ..., end - R when the window is aligned to R: each
 * sample stands for the R seconds that follow it.  Decoding is O(series);
 * matching utilization and labels to uses sorts them once and binary-searches,
 * O((uses + series) log series).  Answers are capped at 1 GiB each.
 */
#include "core/sort.h"
#include "costapi/promsrc.h"

#include <curl/curl.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/obuf.h"
#include "prom/promjson.h"

#define ANSWER_CAP (1u << 30)

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

/* kube-state-metrics' spelling of a label key: label_ + [A-Za-z0-9_], others '_'. */
static void ksm_label(const char *key, char *out, size_t n)
{
	size_t at = (size_t)snprintf(out, n, "label_");
	for (; *key && at + 1 < n; key++, at++) {
		char c = *key;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
		out[at] = ok ? c : '_';
	}
	out[at < n ? at : n - 1] = '\0';
}

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));

static char *fmt(const char *f, ...)
{
	va_list ap;
	va_start(ap, f);
	int n = vsnprintf(NULL, 0, f, ap);
	va_end(ap);
	char *out = n < 0 ? NULL : malloc((size_t)n + 1);
	if (out) {
		va_start(ap, f);
		vsnprintf(out, (size_t)n + 1, f, ap);
		va_end(ap);
	}
	return out;
}

/*
 * Each GPU and each pod's share counted once: every scheduler replica (--leader-elect) renders
 * the whole record and each is scraped, so a point of the record is the max by its own labels
 * (what identifies a pod's share of a GPU, or a GPU) over whichever replicas served it, before
 * any sum over time.  The scrape's labels (instance, job, the replica's own pod) go; a failover
 * leaves no gap, since the standby rendered the record all along.  The recording rules
 * (data/prometheus/gpufleet-cost.rules.yml) do the same.
 */
#define ALLOC_ONCE "max by (namespace,pod,node,gpu,uuid,model,share) (gpufleet_pod_gpu_allocation)"
#define CAP_ONCE "max by (node,gpu,uuid,model,capacity_type) (gpufleet_gpu_capacity)"

gf_err gf_cost_queries_build(int64_t start, int64_t end, int64_t res,
			     const struct gf_cost_aggregate *agg, struct gf_cost_queries *out)
{
	memset(out, 0, sizeof(*out));
	long long w = (long long)(end - start), r = (long long)res;
	/* Keep only the labels the aggregate needs: pods (pod, label:KEY) need every series;
	 * namespace needs the namespace per GPU; node, model and cluster only the GPU. */
	bool pods = false, ns = false;
	for (int k = 0; k < agg->nkeys; k++) {
		enum gf_cost_key key = agg->keys[k].key;
		pods |= key == GF_COST_BY_POD || key == GF_COST_BY_LABEL;
		ns |= key == GF_COST_BY_NAMESPACE;
	}
	const char *keep = pods ? ",namespace,pod" : ns ? ",namespace" : "";
	if (gf_cost_pooled(res, agg)) {
		/* The pools' rules (evaluated at end, as below): a few series per namespace. */
		long long wr = w - 1800;
		out->q[GF_COSTQ_ALLOC] = fmt("sum_over_time(gpufleet:pool_gpu_allocation:seconds_1h[%llds])", wr);
		out->q[GF_COSTQ_CAP] = fmt("sum_over_time(gpufleet:pool_gpu_capacity:seconds_1h[%llds])", wr);
		out->q[GF_COSTQ_UTIL] = fmt("sum_over_time(gpufleet:pool_gpu_used:seconds_1h[%llds])", wr);
	} else if (res == GF_COST_RES_RECORDED) {
		/* Evaluated at end: the hourly samples end - W + 1 h, ..., end, each the hour before
		 * it; a range of W - 30 min takes exactly those under either range convention. */
		long long wr = w - 1800;
		const char *lvl = pods ? "pod" : "namespace"; /* the per-namespace rules when pods do not matter */
		out->q[GF_COSTQ_ALLOC] = fmt("sum by (node,gpu,uuid,model,share%s) "
					     "(sum_over_time(gpufleet:%s_gpu_allocation:share_seconds_1h[%llds]))", keep, lvl,
					     wr);
		out->q[GF_COSTQ_CAP] = fmt("sum_over_time(gpufleet:gpu_capacity:seconds_1h[%llds])", wr);
		out->q[GF_COSTQ_UTIL] = fmt("sum by (UUID,gpu,hostname,Hostname%s) "
					    "(sum_over_time(gpufleet:%s_util:busy_percent_seconds_1h[%llds]))", keep,
					    pods ? "gpu" : "namespace_gpu", wr);
	} else {
		/* Evaluated at end - R: a range of W - R/2 reaches back to start - R/2, so it holds
		 * the samples start, start + R, ..., end - R whether the range is closed on the left
		 * (Prometheus 2) or open (Prometheus 3). */
		long long wm = w * 1000 - r * 500;
		out->q[GF_COSTQ_ALLOC] = fmt("sum by (node,gpu,uuid,model,share%s) (sum_over_time((" ALLOC_ONCE
					     ")[%lldms:%llds]))", keep, wm, r);
		out->q[GF_COSTQ_CAP] = fmt("count_over_time((" CAP_ONCE ")[%lldms:%llds])", wm, r);
		out->q[GF_COSTQ_UTIL] = fmt("sum by (UUID,gpu,hostname,Hostname%s) "
					    "(sum_over_time(DCGM_FI_DEV_GPU_UTIL{pod!=\"\"}[%lldms:%llds]))", keep, wm, r);
	}
	bool bad = !out->q[0] || !out->q[1] || !out->q[2];
	for (int k = 0; k < agg->nkeys; k++) {
		if (agg->keys[k].key != GF_COST_BY_LABEL)
			continue;
		char l[GF_COST_NAME_MAX + 8];
		ksm_label(agg->keys[k].label, l, sizeof(l));
		out->labels[k] = fmt("max by (namespace,pod,%s) (last_over_time(kube_pod_labels{%s!=\"\"}[%llds]))",
				     l, l, w);
		bad |= !out->labels[k];
	}
	if (bad) {
		gf_cost_queries_release(out);
		return GF_NOMEM;
	}
	return GF_OK;
}

void gf_cost_queries_release(struct gf_cost_queries *q)
{
	for (int i = 0; i < GF_COSTQ_LABELS; i++)
		free(q->q[i]);
	for (int i = 0; i < GF_COST_MAX_KEYS; i++)
		free(q->labels[i]);
	memset(q, 0, sizeof(*q));
}

/* ---- decoding ---------------------------------------------------------------- */

static const char *const qname[] = { "allocation", "capacity", "utilization", "labels" };

/* The result array of a decoded vector answer (parse_all checked the envelope). */
static const cJSON *vector_of(const cJSON *doc)
{
	return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "data"), "result");
}

/* One sample: its metric object and value; false (err set) if malformed. */
static bool sample_of(const cJSON *it, const char *what, size_t i, const cJSON **metric, double *v,
		      char *err, size_t errlen)
{
	*metric = cJSON_GetObjectItemCaseSensitive(it, "metric");
	const cJSON *val = cJSON_GetObjectItemCaseSensitive(it, "value");
	double t;
	enum gf_prom_sample_check c = gf_prom_sample(val, &t, v);
	if (!cJSON_IsObject(*metric) || c == GF_PROM_SAMPLE_SHAPE) {
		fail(err, errlen, GF_PARSE, "prometheus %s answer: data.result[%zu]: expected metric and value", what, i);
		return false;
	}
	if (c != GF_PROM_SAMPLE_OK || !isfinite(*v) || *v < 0) {
		fail(err, errlen, GF_PARSE, "prometheus %s answer: data.result[%zu].value: expected a number >= 0, "
		     "found \"%.40s\"", what, i, cJSON_GetArrayItem(val, 1)->valuestring);
		return false;
	}
	return true;
}

static const char *lab(const cJSON *metric, const char *name)
{
	const cJSON *l = cJSON_GetObjectItemCaseSensitive(metric, name);
	return cJSON_IsString(l) ? l->valuestring : "";
}

/* A GPU's key within its node: the uuid, or "gpu<index>" (stored in keys). */
static const char *gpu_key(const char *uuid, const char *index, char **keys, size_t *at, size_t cap)
{
	if (*uuid)
		return uuid;
	char *k = *keys + *at;
	int w = snprintf(k, cap - *at, "gpu%.16s", index);
	if (w < 0 || (size_t)w >= cap - *at)
		return "";
	*at += (size_t)w + 1;
	return k;
}

struct util_ix {
	const char *ns, *pod, *node, *gpu; /* gpu: the key as for uses */
	double busy;                       /* seconds the GPU was busy while the pod was on it */
};

static int cmp_util(const void *pa, const void *pb)
{
	const struct util_ix *a = pa, *b = pb;
	int c = strcmp(a->ns, b->ns);
	if (!c)
		c = strcmp(a->pod, b->pod);
	if (!c)
		c = strcmp(a->node, b->node);
	return c ? c : strcmp(a->gpu, b->gpu);
}

struct label_ix {
	const char *ns, *pod, *value;
};

static int cmp_label(const void *pa, const void *pb)
{
	const struct label_ix *a = pa, *b = pb;
	int c = strcmp(a->ns, b->ns);
	return c ? c : strcmp(a->pod, b->pod);
}

/* Parse every answer and check its envelope (prom/promjson.h); out->docs keeps them. */
static gf_err parse_all(const char *const *answers, const size_t *lens, const struct gf_cost_aggregate *agg,
			struct gf_cost_data *out, char *err, size_t errlen)
{
	for (int i = 0; i < GF_COSTQ_LABELS + agg->nkeys; i++) {
		if (!answers[i] || (i >= GF_COSTQ_LABELS && agg->keys[i - GF_COSTQ_LABELS].key != GF_COST_BY_LABEL))
			continue;
		char what[32];
		snprintf(what, sizeof(what), "%s answer", qname[i < GF_COSTQ_LABELS ? i : GF_COSTQ_LABELS]);
		struct gf_prom_answer a;
		gf_err e = gf_prom_answer_parse(answers[i], lens[i], GF_PROM_VECTOR, what, &a, err, errlen);
		if (e)
			return e;
		out->docs[i] = gf_prom_answer_detach(&a);
	}
	return GF_OK;
}

static gf_err decode_util(const cJSON *doc, char **keys, size_t *kat, size_t kcap, struct util_ix **out,
			  size_t *n, char *err, size_t errlen)
{
	const cJSON *res = vector_of(doc);
	size_t cnt = (size_t)cJSON_GetArraySize(res);
	*out = calloc(cnt ? cnt : 1, sizeof(**out));
	if (!*out)
		return GF_NOMEM;
	const cJSON *it;
	size_t i = 0;
	cJSON_ArrayForEach(it, res)
	{
		const cJSON *m;
		double v;
		if (!sample_of(it, "utilization", i, &m, &v, err, errlen))
			return GF_PARSE;
		const char *node = lab(m, "hostname");
		if (!*node)
			node = lab(m, "Hostname");
		(*out)[i++] = (struct util_ix){ lab(m, "namespace"), lab(m, "pod"), node,
						gpu_key(lab(m, "UUID"), lab(m, "gpu"), keys, kat, kcap), v / 100 };
	}
	*n = i;
	gf_qsort(*out, *n, sizeof(**out), cmp_util);
	return GF_OK;
}

/* The pods' values of one label key, sorted by (namespace, pod). */
static gf_err decode_labels(const cJSON *doc, const char *key, struct label_ix **out, size_t *n,
			    char *err, size_t errlen)
{
	const cJSON *res = vector_of(doc);
	char l[GF_COST_NAME_MAX + 8];
	ksm_label(key, l, sizeof(l));
	size_t cnt = (size_t)cJSON_GetArraySize(res);
	*out = calloc(cnt ? cnt : 1, sizeof(**out));
	if (!*out)
		return GF_NOMEM;
	const cJSON *it;
	size_t i = 0;
	cJSON_ArrayForEach(it, res)
	{
		const cJSON *m;
		double v;
		if (!sample_of(it, "labels", i, &m, &v, err, errlen))
			return GF_PARSE;
		(*out)[i++] = (struct label_ix){ lab(m, "namespace"), lab(m, "pod"), lab(m, l) };
	}
	*n = i;
	gf_qsort(*out, *n, sizeof(**out), cmp_label);
	return GF_OK;
}

/* ---- pools (GF_COST_RES_RECORDED for namespace, model and cluster reports) ----------------- */

bool gf_cost_pooled(int64_t resolution, const struct gf_cost_aggregate *agg)
{
	if (resolution != GF_COST_RES_RECORDED)
		return false;
	for (int k = 0; k < agg->nkeys; k++) {
		enum gf_cost_key key = agg->keys[k].key;
		if (key != GF_COST_BY_NAMESPACE && key != GF_COST_BY_MODEL && key != GF_COST_BY_CLUSTER)
			return false;
	}
	return true;
}

/* One series of a pooled answer: its pool "<capacity type>/<model>" (in keys), namespace, kind. */
struct pool_ix {
	const char *ns, *pool, *model, *kind;
	double v;
};

static int cmp_pool(const void *pa, const void *pb)
{
	const struct pool_ix *a = pa, *b = pb;
	int c = strcmp(a->ns, b->ns);
	return c ? c : strcmp(a->pool, b->pool);
}

/* The series of one pooled answer, sorted by (namespace, pool); pool names appended to keys. */
static gf_err pool_series(const cJSON *doc, const char *what, char **keys, size_t *kat, size_t kcap,
			  struct pool_ix **out, size_t *n, char *err, size_t errlen)
{
	const cJSON *res = vector_of(doc), *it;
	size_t cnt = (size_t)cJSON_GetArraySize(res), i = 0;
	if (!(*out = calloc(cnt ? cnt : 1, sizeof(**out))))
		return GF_NOMEM;
	cJSON_ArrayForEach(it, res)
	{
		const cJSON *m;
		double v;
		if (!sample_of(it, what, i, &m, &v, err, errlen))
			return GF_PARSE;
		const char *type = lab(m, "capacity_type"), *model = lab(m, "model");
		char *k = *keys + *kat;
		int w = snprintf(k, kcap - *kat, "%s/%s", type, model);
		if (w < 0 || (size_t)w >= kcap - *kat)
			return GF_NOMEM; /* cannot happen: kcap counts every label */
		*kat += (size_t)w + 1;
		(*out)[i++] = (struct pool_ix){ lab(m, "namespace"), k, model, lab(m, "kind"), v };
	}
	*n = i;
	qsort(*out, *n, sizeof(**out), cmp_pool);
	return GF_OK;
}

/* Room for the pool names of an answer's series. */
static size_t pool_room(const cJSON *doc)
{
	size_t n = 0;
	const cJSON *it;
	cJSON_ArrayForEach(it, vector_of(doc))
	{
		const cJSON *m = cJSON_GetObjectItemCaseSensitive(it, "metric");
		n += strlen(lab(m, "capacity_type")) + strlen(lab(m, "model")) + 2;
	}
	return n;
}

/*
 * The pooled answers (data/prometheus/gpufleet-cost.rules.yml, "Pools"): one use per
 * (namespace, model, capacity type) with its share-seconds (kind share), seconds held (kind
 * whole) and used seconds; one "GPU" per (model, capacity type) with its capacity and
 * overcommit.  A use's GPU is its pool; an allocation without a capacity type is unmatched.
 */
static gf_err decode_pooled(struct gf_cost_data *out, char *err, size_t errlen)
{
	struct pool_ix *a = NULL, *c = NULL, *u = NULL;
	size_t na = 0, nc = 0, nu = 0, kat = 0;
	size_t kcap = pool_room(out->docs[GF_COSTQ_ALLOC]) + pool_room(out->docs[GF_COSTQ_CAP]) +
		      pool_room(out->docs[GF_COSTQ_UTIL]) + 1;
	gf_err e = GF_NOMEM;
	if (!(out->keys = malloc(kcap)))
		goto out;
	if ((e = pool_series(out->docs[GF_COSTQ_ALLOC], "allocation", &out->keys, &kat, kcap, &a, &na, err, errlen)) ||
	    (e = pool_series(out->docs[GF_COSTQ_CAP], "capacity", &out->keys, &kat, kcap, &c, &nc, err, errlen)) ||
	    (e = pool_series(out->docs[GF_COSTQ_UTIL], "utilization", &out->keys, &kat, kcap, &u, &nu, err, errlen)))
		goto out;
	e = GF_NOMEM;
	if (!(out->uses = calloc(na ? na : 1, sizeof(*out->uses))) || !(out->gpus = calloc(nc ? nc : 1, sizeof(*out->gpus))))
		goto out;
	e = GF_OK;
	for (size_t i = 0; i < nc; i++) {
		if (!out->ngpus || strcmp(out->gpus[out->ngpus - 1].uuid, c[i].pool))
			out->gpus[out->ngpus++] = (struct gf_cost_gpu){ "", c[i].pool, c[i].model,
									!strncmp(c[i].pool, "spot/", 5), 0, 0 };
		struct gf_cost_gpu *g = &out->gpus[out->ngpus - 1];
		if (!strcmp(c[i].kind, "overcommit"))
			g->overcommit_seconds += c[i].v;
		else if (!strcmp(c[i].kind, "capacity"))
			g->seconds += c[i].v; /* other kinds (none yet) are not ours to count */
	}
	for (size_t i = 0; i < na; i++) {
		if (!out->nuses || cmp_pool(&a[i], &a[i - 1]))
			out->uses[out->nuses++] = (struct gf_cost_use){ .ns = a[i].ns, .pod = "", .node = "",
									.uuid = a[i].pool, .model = a[i].model,
									.used_seconds = -1 };
		struct gf_cost_use *x = &out->uses[out->nuses - 1];
		if (!strcmp(a[i].kind, "whole"))
			x->seconds += a[i].v;
		else if (!strcmp(a[i].kind, "share"))
			x->share_seconds += a[i].v;
	}
	for (size_t i = 0; i < out->nuses; i++) {
		struct gf_cost_use *x = &out->uses[i];
		if (x->share_seconds > x->seconds * (1 + 1e-9) + 1e-6) {
			e = fail(err, errlen, GF_PARSE, "prometheus allocation answer: namespace '%.100s', pool '%.200s': "
				 "%g share-seconds in %g seconds held", x->ns, x->uuid, x->share_seconds, x->seconds);
			goto out;
		}
		if (!nu)
			continue; /* no utilization at all: unknown */
		struct pool_ix want = { x->ns, x->uuid, NULL, NULL, 0 };
		struct pool_ix *f = bsearch(&want, u, nu, sizeof(*u), cmp_pool);
		x->used_seconds = f ? f->v : 0;
		if (x->used_seconds > x->share_seconds)
			x->used_seconds = x->share_seconds;
	}
out:
	free(a);
	free(c);
	free(u);
	return e;
}

gf_err gf_cost_data_decode(const char *const *answers, const size_t *lens, int64_t res,
			   const struct gf_cost_aggregate *agg, struct gf_cost_data *out, char *err,
			   size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (errlen)
		err[0] = '\0';
	struct util_ix *util = NULL;
	size_t nutil = 0;
	struct label_ix *lx[GF_COST_MAX_KEYS] = { 0 };
	size_t nlx[GF_COST_MAX_KEYS] = { 0 };
	gf_err e = parse_all(answers, lens, agg, out, err, errlen);
	if (e)
		goto out;
	for (int k = 0; k < GF_COSTQ_LABELS; k++) {
		if (!out->docs[k]) {
			e = fail(err, errlen, GF_PARSE, "prometheus %s answer: missing", qname[k]);
			goto out;
		}
	}
	if (gf_cost_pooled(res, agg)) {
		e = decode_pooled(out, err, errlen);
		goto out;
	}
	double scale = res == GF_COST_RES_RECORDED ? 1 : (double)res; /* the rules' values are seconds */
	const cJSON *ra = vector_of(out->docs[GF_COSTQ_ALLOC]), *rc = vector_of(out->docs[GF_COSTQ_CAP]);
	size_t na = (size_t)cJSON_GetArraySize(ra), nc = (size_t)cJSON_GetArraySize(rc);
	size_t nu = (size_t)cJSON_GetArraySize(vector_of(out->docs[GF_COSTQ_UTIL]));
	size_t kcap = (na + nc + nu + 1) * 24;
	out->keys = malloc(kcap);
	out->uses = calloc(na ? na : 1, sizeof(*out->uses));
	out->gpus = calloc(nc ? nc : 1, sizeof(*out->gpus));
	out->labels = calloc((na ? na : 1) * (size_t)(agg->nkeys ? agg->nkeys : 1), sizeof(*out->labels));
	size_t kat = 0;
	if (!out->keys || !out->uses || !out->gpus || !out->labels) {
		e = GF_NOMEM;
		goto out;
	}
	if ((e = decode_util(out->docs[GF_COSTQ_UTIL], &out->keys, &kat, kcap, &util, &nutil, err, errlen)))
		goto out;
	for (int k = 0; k < agg->nkeys; k++) {
		if (agg->keys[k].key != GF_COST_BY_LABEL)
			continue;
		if (!out->docs[GF_COSTQ_LABELS + k]) {
			e = fail(err, errlen, GF_PARSE, "prometheus labels answer for label:%s: missing", agg->keys[k].label);
			goto out;
		}
		if ((e = decode_labels(out->docs[GF_COSTQ_LABELS + k], agg->keys[k].label, &lx[k], &nlx[k], err, errlen)))
			goto out;
	}
	const cJSON *it;
	size_t i = 0;
	cJSON_ArrayForEach(it, rc)
	{
		const cJSON *m;
		double v;
		if (!sample_of(it, "capacity", i, &m, &v, err, errlen)) {
			e = GF_PARSE;
			goto out;
		}
		out->gpus[i++] = (struct gf_cost_gpu){
			lab(m, "node"), gpu_key(lab(m, "uuid"), lab(m, "gpu"), &out->keys, &kat, kcap),
			lab(m, "model"), !strcmp(lab(m, "capacity_type"), "spot"), v * scale, 0 };
	}
	out->ngpus = i;
	i = 0;
	cJSON_ArrayForEach(it, ra)
	{
		const cJSON *m;
		double v;
		if (!sample_of(it, "allocation", i, &m, &v, err, errlen)) {
			e = GF_PARSE;
			goto out;
		}
		char *end;
		const char *sl = lab(m, "share");
		double share = strtod(sl, &end);
		if (end == sl || *end || !(share > 0) || share > 1) {
			e = fail(err, errlen, GF_PARSE, "prometheus allocation answer: data.result[%zu].metric.share: "
				 "expected a number in (0, 1], found \"%.40s\"", i, sl);
			goto out;
		}
		struct gf_cost_use *u = &out->uses[i];
		*u = (struct gf_cost_use){ .ns = lab(m, "namespace"), .pod = lab(m, "pod"), .node = lab(m, "node"),
					   .uuid = gpu_key(lab(m, "uuid"), lab(m, "gpu"), &out->keys, &kat, kcap),
					   .model = lab(m, "model"), .share_seconds = v * scale,
					   .used_seconds = -1 };
		u->seconds = u->share_seconds / share;
		if (nutil) {
			struct util_ix want = { u->ns, u->pod, u->node, u->uuid, 0 };
			struct util_ix *f = bsearch(&want, util, nutil, sizeof(*util), cmp_util);
			u->used_seconds = f ? f->busy * scale * share : 0;
			if (u->used_seconds > u->share_seconds)
				u->used_seconds = u->share_seconds; /* a rounding step of the two series */
		}
		u->labels = &out->labels[i * (size_t)agg->nkeys];
		u->nlabels = 0;
		for (int k = 0; k < agg->nkeys; k++) {
			if (agg->keys[k].key != GF_COST_BY_LABEL)
				continue;
			struct label_ix want = { u->ns, u->pod, NULL };
			struct label_ix *f = bsearch(&want, lx[k], nlx[k], sizeof(*lx[k]), cmp_label);
			out->labels[i * (size_t)agg->nkeys + u->nlabels++] =
				(struct gf_cost_label){ agg->keys[k].label, f ? f->value : NULL };
		}
		i++;
	}
	out->nuses = i;
out:
	free(util);
	for (int k = 0; k < GF_COST_MAX_KEYS; k++)
		free(lx[k]);
	if (e)
		gf_cost_data_release(out);
	return e;
}

void gf_cost_data_release(struct gf_cost_data *d)
{
	for (size_t i = 0; i < sizeof(d->docs) / sizeof(d->docs[0]); i++)
		cJSON_Delete(d->docs[i]);
	free(d->uses);
	free(d->gpus);
	free(d->labels);
	free(d->keys);
	memset(d, 0, sizeof(*d));
}

/* ---- the client -------------------------------------------------------------- */

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
	return gf_obuf_append(ud, p, sz * n) ? 0 : sz * n;
}

/* Prepare h to POST /api/v1/query (query, time) into body; *url and *form (malloc'd) must
 * outlive the transfer. */
static gf_err setup(CURL *h, const char *base, const char *promql, int64_t at, long timeout_ms,
		    struct gf_obuf *body, char **url, char **form)
{
	struct gf_obuf u, f;
	gf_obuf_init(&u, 1u << 16);
	gf_obuf_init(&f, 1u << 20);
	size_t bl = strlen(base);
	while (bl && base[bl - 1] == '/')
		bl--;
	gf_obuf_append(&u, base, bl);
	gf_obuf_puts(&u, "/api/v1/query");
	char *q = curl_easy_escape(h, promql, 0);
	if (!q) {
		gf_obuf_release(&u);
		return GF_NOMEM;
	}
	gf_obuf_printf(&f, "query=%s&time=%lld", q, (long long)at);
	curl_free(q);
	gf_err e = gf_obuf_error(&u) ? gf_obuf_error(&u) : gf_obuf_error(&f);
	if (e) {
		gf_obuf_release(&u);
		gf_obuf_release(&f);
		return e;
	}
	*url = gf_obuf_detach(&u, NULL);
	*form = gf_obuf_detach(&f, NULL);
	curl_easy_reset(h);
	curl_easy_setopt(h, CURLOPT_URL, *url);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, *form);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, body);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
	return GF_OK;
}

/* What a finished transfer means: GF_OK for 200 (or 400/422: Prometheus' own error is in the
 * JSON), GF_UNAVAILABLE / GF_TOOBIG with err set. */
static gf_err outcome(CURL *h, CURLcode cc, const char *base, const struct gf_obuf *body, char *err,
		      size_t errlen)
{
	long code = 0;
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	if (cc != CURLE_OK) {
		gf_err e = gf_obuf_error(body) ? GF_TOOBIG : GF_UNAVAILABLE;
		return fail(err, errlen, e, "prometheus %.200s: %s", base,
			    e == GF_TOOBIG ? "an answer over 1 GiB" : curl_easy_strerror(cc));
	}
	if (code >= 500 || code == 404 || code == 0)
		return fail(err, errlen, GF_UNAVAILABLE, "prometheus %.200s: HTTP %ld from /api/v1/query", base, code);
	return GF_OK;
}

/* One query, waited for. */
static gf_err query(CURL *h, const char *base, const char *promql, int64_t at, long timeout_ms,
		    struct gf_obuf *body, char *err, size_t errlen)
{
	char *url = NULL, *form = NULL;
	gf_err e = setup(h, base, promql, at, timeout_ms, body, &url, &form);
	if (!e)
		e = outcome(h, curl_easy_perform(h), base, body, err, errlen);
	free(url);
	free(form);
	return e;
}

/*
 * Several queries at once (Prometheus runs them in parallel): texts[i] NULL is skipped.
 * The first failure in query order is the one reported.
 */
static gf_err query_all(const char *base, const char *const *texts, int n, int64_t at, long timeout_ms,
			struct gf_obuf *bodies, char *err, size_t errlen)
{
	CURLM *m = curl_multi_init();
	CURL *h[GF_COSTQ_LABELS + GF_COST_MAX_KEYS] = { 0 };
	char *url[GF_COSTQ_LABELS + GF_COST_MAX_KEYS] = { 0 }, *form[GF_COSTQ_LABELS + GF_COST_MAX_KEYS] = { 0 };
	CURLcode cc[GF_COSTQ_LABELS + GF_COST_MAX_KEYS];
	gf_err e = m ? GF_OK : GF_NOMEM;
	for (int i = 0; i < n && !e; i++) {
		cc[i] = CURLE_OK;
		if (!texts[i])
			continue;
		if (!(h[i] = curl_easy_init()))
			e = GF_NOMEM;
		else if (!(e = setup(h[i], base, texts[i], at, timeout_ms, &bodies[i], &url[i], &form[i])))
			curl_multi_add_handle(m, h[i]);
	}
	int running = 1;
	while (!e && running) {
		if (curl_multi_perform(m, &running) != CURLM_OK || (running && curl_multi_poll(m, NULL, 0, 1000, NULL) != CURLM_OK))
			e = fail(err, errlen, GF_UNAVAILABLE, "prometheus %.200s: the transfers failed", base);
	}
	CURLMsg *msg;
	int left;
	while (m && (msg = curl_multi_info_read(m, &left)))
		for (int i = 0; i < n; i++)
			if (msg->msg == CURLMSG_DONE && h[i] == msg->easy_handle)
				cc[i] = msg->data.result;
	for (int i = 0; i < n && !e; i++)
		if (h[i])
			e = outcome(h[i], cc[i], base, &bodies[i], err, errlen);
	for (int i = 0; i < n; i++) {
		if (h[i]) {
			curl_multi_remove_handle(m, h[i]);
			curl_easy_cleanup(h[i]);
		}
		free(url[i]);
		free(form[i]);
	}
	curl_multi_cleanup(m);
	return e;
}

/*
 * How far before end the rule group's latest evaluation lies, modulo an hour: the last
 * sample time of gpufleet:cost_rules:evaluated_1h (one series, one sample an hour).
 */
static gf_err rules_shift(CURL *h, const char *base, int64_t end, long timeout_ms, int64_t *shift, char *err,
			  size_t errlen)
{
	struct gf_obuf body;
	gf_obuf_init(&body, 1u << 20);
	gf_err e = query(h, base, "gpufleet:cost_rules:evaluated_1h[2h]", end, timeout_ms, &body, err, errlen);
	struct gf_prom_answer a = { 0 };
	if (!e)
		e = gf_prom_answer_parse(body.data ? body.data : "", body.len, GF_PROM_MATRIX, "recording rules answer",
					 &a, err, errlen);
	const cJSON *vals = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(a.result, 0), "values");
	const cJSON *last = cJSON_GetArrayItem(cJSON_GetArrayItem(vals, cJSON_GetArraySize(vals) - 1), 0);
	if (e) {
		/* said */
	} else if (!cJSON_IsNumber(last)) {
		e = fail(err, errlen, GF_NOENT, "no evaluation of the recording rules (gpufleet:cost_rules:evaluated_1h) "
			 "in the 2 hours before the window's end: are data/prometheus/gpufleet-cost.rules.yml loaded?");
	} else {
		int64_t t = (int64_t)ceil(last->valuedouble); /* the sample lies in [t - 1 s, t] */
		*shift = ((end - t) % 3600 + 3600) % 3600;
	}
	gf_prom_answer_release(&a);
	gf_obuf_release(&body);
	return e;
}

static double mono(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

gf_err gf_cost_prom_fetch(const char *base_url, long timeout_ms, int64_t start, int64_t end,
			  int64_t resolution, const struct gf_cost_aggregate *agg,
			  struct gf_cost_data *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	struct gf_cost_queries q;
	gf_err e = gf_cost_queries_build(start, end, resolution, agg, &q);
	if (e)
		return e;
	struct gf_obuf bodies[GF_COSTQ_LABELS + GF_COST_MAX_KEYS];
	const char *answers[GF_COSTQ_LABELS + GF_COST_MAX_KEYS] = { 0 };
	size_t lens[GF_COSTQ_LABELS + GF_COST_MAX_KEYS] = { 0 };
	int n = GF_COSTQ_LABELS + agg->nkeys;
	for (int i = 0; i < n; i++)
		gf_obuf_init(&bodies[i], ANSWER_CAP);
	CURL *h = curl_easy_init();
	double t0 = mono();
	if (!h) {
		e = GF_NOMEM;
		goto out;
	}
	if (resolution == GF_COST_RES_RECORDED) {
		int64_t shift = 0;
		if ((e = rules_shift(h, base_url, end, timeout_ms, &shift, err, errlen)))
			goto out;
		start -= shift;
		end -= shift;
		gf_cost_queries_release(&q);
		if ((e = gf_cost_queries_build(start, end, resolution, agg, &q)))
			goto out;
	}
	const char *texts[GF_COSTQ_LABELS + GF_COST_MAX_KEYS];
	for (int i = 0; i < n; i++)
		texts[i] = i < GF_COSTQ_LABELS ? q.q[i] : q.labels[i - GF_COSTQ_LABELS];
	e = query_all(base_url, texts, n, resolution == GF_COST_RES_RECORDED ? end : end - resolution, timeout_ms,
		      bodies, err, errlen);
	for (int i = 0; i < n; i++) {
		answers[i] = texts[i] ? (bodies[i].data ? bodies[i].data : "") : NULL;
		lens[i] = bodies[i].len;
	}
	double prom = mono() - t0;
	if (!e)
		e = gf_cost_data_decode(answers, lens, resolution, agg,
					out, err, errlen);
	out->prom_seconds = prom;
	out->start = start;
	out->end = end;
out:
	curl_easy_cleanup(h);
	for (int i = 0; i < n; i++)
		gf_obuf_release(&bodies[i]);
	gf_cost_queries_release(&q);
	return e;
}
