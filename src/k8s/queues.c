/*
 * k8s/queues.c - Queue objects from the API server (queues.h).
 *
 * A small walker over cJSON: each level lists the keys it knows, anything
 * else in spec is refused with its path (the CRD's schema makes the API
 * server prune unknown fields, so in a cluster that means a newer CRD than
 * this binary).  Numbers must be integers in range; the limits are the
 * YAML file's (sim/queues.c): gpus 0..1000000, gpuMilli 0..1000000000,
 * weight 1..1000000.  Names follow the YAML file's rule too.
 */
#include "k8s/queues.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define MAX_GPUS 1000000.0
#define MAX_MILLI 1000000000.0

struct qdec {
	char *err;
	size_t errlen;
	const char *name;	/* the Queue's, once known */
};

static gf_err qfail(struct qdec *d, const char *path, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static gf_err qfail(struct qdec *d, const char *path, const char *fmt, ...)
{
	char what[200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (d->name && d->name[0])
		snprintf(d->err, d->errlen, "queue %s: %s: %s", d->name, path, what);
	else
		snprintf(d->err, d->errlen, "%s: %s", path, what);
	return GF_PARSE;
}

static const char *kind_of(const cJSON *v)
{
	return cJSON_IsObject(v) ? "an object" : cJSON_IsArray(v) ? "an array" : cJSON_IsString(v) ? "a string"
	       : cJSON_IsNumber(v) ? "a number" : cJSON_IsBool(v) ? "a boolean" : "null";
}

/* Every key of obj is one of keys[0..n) (NULL-free list). */
static gf_err known_keys(struct qdec *d, const cJSON *obj, const char *path, const char *const *keys, size_t n)
{
	for (const cJSON *c = obj->child; c; c = c->next) {
		size_t k = 0;
		while (k < n && strcmp(c->string ? c->string : "", keys[k]))
			k++;
		if (k == n) {
			char sub[160];
			snprintf(sub, sizeof(sub), "%.50s.%.100s", path, c->string ? c->string : "?");
			return qfail(d, sub, "unknown field");
		}
	}
	return GF_OK;
}

/* obj[key] as an integer in [lo, hi]; absent: *out unchanged, *found false. */
static gf_err int_field(struct qdec *d, const cJSON *obj, const char *path, const char *key, double lo, double hi,
			int64_t *out, bool *found)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	char sub[160];
	if (found)
		*found = false;
	if (!v || cJSON_IsNull(v))
		return GF_OK;
	snprintf(sub, sizeof(sub), "%.50s.%.60s", path, key);
	if (!cJSON_IsNumber(v))
		return qfail(d, sub, "expected an integer, got %s", kind_of(v));
	double x = v->valuedouble;
	if (!isfinite(x) || x != floor(x))
		return qfail(d, sub, "expected an integer, got %g", x);
	if (x < lo || x > hi)
		return qfail(d, sub, "%.0f is outside %.0f..%.0f", x, lo, hi);
	*out = (int64_t)x;
	if (found)
		*found = true;
	return GF_OK;
}

/* A name: [a-z0-9]([-a-z0-9.]*[a-z0-9])?, 1..63 bytes (sim/queues.c's rule). */
static gf_err name_field(struct qdec *d, const cJSON *v, const char *path, char *out)
{
	if (!cJSON_IsString(v))
		return qfail(d, path, "expected a string, got %s", kind_of(v));
	const char *s = v->valuestring;
	size_t len = strlen(s);
	if (len == 0 || len >= GF_QUEUE_NAME_MAX)
		return qfail(d, path, "expected a name of 1 to 63 characters");
	for (size_t i = 0; i < len; i++) {
		char ch = s[i];
		bool alnum = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
		if (!alnum && !((ch == '-' || ch == '.') && i > 0 && i + 1 < len))
			return qfail(d, path, "expected lower-case letters, digits, '-' and '.' (not at the ends)");
	}
	memcpy(out, s, len + 1);
	return GF_OK;
}

/* {gpus, gpuMilli} (and, for the nominal quota, perModel) into milli-GPU. */
static gf_err quantity(struct qdec *d, const cJSON *v, const char *path, bool per_model, int64_t *out)
{
	static const char *const keys[] = { "gpus", "gpuMilli", "perModel" };
	if (!cJSON_IsObject(v))
		return qfail(d, path, "expected an object, got %s", kind_of(v));
	gf_err e;
	int64_t g = 0, m = 0;
	if ((e = known_keys(d, v, path, keys, per_model ? 3 : 2)) ||
	    (e = int_field(d, v, path, "gpus", 0, MAX_GPUS, &g, NULL)) ||
	    (e = int_field(d, v, path, "gpuMilli", 0, MAX_MILLI, &m, NULL)))
		return e;
	*out = g * 1000 + m;
	return GF_OK;
}

static gf_err per_model(struct qdec *d, const cJSON *v, const char *path, struct gf_queue_def *q)
{
	static const char *const keys[] = { "model", "gpus" };
	char sub[160];
	if (!v || cJSON_IsNull(v))
		return GF_OK;
	if (!cJSON_IsArray(v))
		return qfail(d, path, "expected a list of {model, gpus}, got %s", kind_of(v));
	for (const cJSON *e = v->child; e; e = e->next) {
		gf_err r;
		snprintf(sub, sizeof(sub), "%.100s[%u]", path, q->nmodels);
		if (q->nmodels == GF_QUOTA_MAX_MODELS)
			return qfail(d, sub, "more than %d models", GF_QUOTA_MAX_MODELS);
		if (!cJSON_IsObject(e))
			return qfail(d, sub, "expected an object, got %s", kind_of(e));
		if ((r = known_keys(d, e, sub, keys, 2)))
			return r;
		const cJSON *mo = cJSON_GetObjectItemCaseSensitive(e, "model");
		int64_t g = 0;
		bool has_g;
		if ((r = int_field(d, e, sub, "gpus", 0, MAX_GPUS, &g, &has_g)))
			return r;
		if (!mo || !cJSON_IsString(mo) || !mo->valuestring[0] ||
		    strlen(mo->valuestring) >= GF_QUEUE_NAME_MAX)
			return qfail(d, sub, "model: expected a GPU model name of 1 to 63 characters");
		if (!has_g)
			return qfail(d, sub, "gpus is missing");
		for (uint32_t k = 0; k < q->nmodels; k++)
			if (!strcmp(q->models[k].model, mo->valuestring))
				return qfail(d, sub, "the model is listed twice");
		snprintf(q->models[q->nmodels].model, GF_QUEUE_NAME_MAX, "%s", mo->valuestring);
		q->models[q->nmodels].nominal = g * 1000;
		q->models[q->nmodels].line = 0;
		q->nmodels++;
	}
	return GF_OK;
}

/*
 * The CRD's spec.models[{model, nominalQuota, borrowingLimit, lendingLimit}]
 * (deploy/crds/queue.yaml; the file's spec.nominalQuota.perModel is the same
 * quota).  The engine lends a model's quota whole and borrows it without
 * limit (queue/loop.h), so a per-model limit is refused, not ignored.
 */
static gf_err crd_models(struct qdec *d, const cJSON *v, struct gf_queue_def *q)
{
	static const char *const keys[] = { "model", "nominalQuota", "borrowingLimit", "lendingLimit" };
	char sub[160];
	if (!cJSON_IsArray(v))
		return qfail(d, "spec.models", "expected a list of {model, nominalQuota}, got %s", kind_of(v));
	unsigned i = 0;
	for (const cJSON *e = v->child; e; e = e->next, i++) {
		gf_err r;
		snprintf(sub, sizeof(sub), "spec.models[%u]", i);
		if (q->nmodels == GF_QUOTA_MAX_MODELS)
			return qfail(d, sub, "more than %d models", GF_QUOTA_MAX_MODELS);
		if (!cJSON_IsObject(e))
			return qfail(d, sub, "expected an object, got %s", kind_of(e));
		if ((r = known_keys(d, e, sub, keys, 4)))
			return r;
		for (int k = 2; k < 4; k++) {
			const cJSON *lim = cJSON_GetObjectItemCaseSensitive(e, keys[k]);
			if (lim && !cJSON_IsNull(lim))
				return qfail(d, sub, "%s per model is not supported (a model's quota is lent whole and "
					     "borrowed without limit in the cohort): leave it out", keys[k]);
		}
		const cJSON *mo = cJSON_GetObjectItemCaseSensitive(e, "model");
		if (!mo || !cJSON_IsString(mo) || !mo->valuestring[0] || strlen(mo->valuestring) >= GF_QUEUE_NAME_MAX)
			return qfail(d, sub, "model: expected a GPU model name of 1 to 63 characters");
		for (uint32_t k = 0; k < q->nmodels; k++)
			if (!strcmp(q->models[k].model, mo->valuestring))
				return qfail(d, sub, "the model is listed twice");
		const cJSON *nq = cJSON_GetObjectItemCaseSensitive(e, "nominalQuota");
		int64_t milli = 0;
		char np[180];
		snprintf(np, sizeof(np), "%s.nominalQuota", sub);
		if (nq && !cJSON_IsNull(nq) && (r = quantity(d, nq, np, false, &milli)))
			return r;
		snprintf(q->models[q->nmodels].model, GF_QUEUE_NAME_MAX, "%s", mo->valuestring);
		q->models[q->nmodels].nominal = milli;
		q->models[q->nmodels].line = 0;
		q->nmodels++;
	}
	return GF_OK;
}

static gf_err spec(struct qdec *d, const cJSON *s, struct gf_queue_def *q)
{
	static const char *const keys[] = { "nominalQuota", "borrowingLimit", "lendingLimit",
					     "cohort", "weight", "ordering", "models" };
	const cJSON *v;
	gf_err e;
	if (!cJSON_IsObject(s))
		return qfail(d, "spec", "expected an object, got %s", kind_of(s));
	if ((e = known_keys(d, s, "spec", keys, 7)))
		return e;
	if ((v = cJSON_GetObjectItemCaseSensitive(s, "nominalQuota")) && !cJSON_IsNull(v)) {
		if ((e = quantity(d, v, "spec.nominalQuota", true, &q->nominal)) ||
		    (e = per_model(d, cJSON_GetObjectItemCaseSensitive(v, "perModel"), "spec.nominalQuota.perModel", q)))
			return e;
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(s, "models")) && !cJSON_IsNull(v) && (e = crd_models(d, v, q)))
		return e;
	if ((v = cJSON_GetObjectItemCaseSensitive(s, "borrowingLimit")) && !cJSON_IsNull(v) &&
	    (e = quantity(d, v, "spec.borrowingLimit", false, &q->borrowing_limit)))
		return e;
	if ((v = cJSON_GetObjectItemCaseSensitive(s, "lendingLimit")) && !cJSON_IsNull(v) &&
	    (e = quantity(d, v, "spec.lendingLimit", false, &q->lending_limit)))
		return e;
	if ((v = cJSON_GetObjectItemCaseSensitive(s, "cohort")) && !cJSON_IsNull(v) &&
	    !(cJSON_IsString(v) && !v->valuestring[0]) && /* the CRD allows "": none */
	    (e = name_field(d, v, "spec.cohort", q->cohort)))
		return e;
	int64_t w = q->weight;
	if ((e = int_field(d, s, "spec", "weight", 1, 1000000, &w, NULL)))
		return e;
	q->weight = (uint32_t)w;
	if ((v = cJSON_GetObjectItemCaseSensitive(s, "ordering")) && !cJSON_IsNull(v)) {
		const char *o = cJSON_IsString(v) ? v->valuestring : "";
		if (!strcmp(o, "backfill"))
			q->ordering = GF_ORDER_BACKFILL;
		else if (!strcmp(o, "strict"))
			q->ordering = GF_ORDER_STRICT;
		else if (!strcmp(o, "skip-ahead"))
			q->ordering = GF_ORDER_SKIP_AHEAD;
		else
			return qfail(d, "spec.ordering", "expected strict, skip-ahead or backfill");
	}
	if (q->lending_limit != GF_QUOTA_UNLIMITED && q->lending_limit > q->nominal)
		return qfail(d, "spec.lendingLimit", "above the nominal quota");
	if (!q->cohort[0] && (q->lending_limit != GF_QUOTA_UNLIMITED || q->borrowing_limit != GF_QUOTA_UNLIMITED))
		return qfail(d, q->lending_limit != GF_QUOTA_UNLIMITED ? "spec.lendingLimit" : "spec.borrowingLimit",
			     "needs spec.cohort (a queue outside a cohort neither lends nor borrows)");
	return GF_OK;
}

gf_err gf_k8s_queue_decode(const cJSON *obj, struct gf_queue_def *out, char *err, size_t errlen)
{
	struct qdec d = { err, errlen, NULL };
	memset(out, 0, sizeof(*out));
	out->borrowing_limit = out->lending_limit = GF_QUOTA_UNLIMITED;
	out->weight = 1;
	out->ordering = GF_ORDER_SKIP_AHEAD; /* the CRD's default */
	if (!cJSON_IsObject(obj))
		return qfail(&d, "(object)", "expected a Queue object, got %s", kind_of(obj));
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, "apiVersion");
	if (v && !(cJSON_IsString(v) && !strcmp(v->valuestring, "gpufleet.io/v1alpha1")))
		return qfail(&d, "apiVersion", "expected gpufleet.io/v1alpha1");
	v = cJSON_GetObjectItemCaseSensitive(obj, "kind");
	if (v && !(cJSON_IsString(v) && !strcmp(v->valuestring, "Queue")))
		return qfail(&d, "kind", "expected Queue");
	const cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	if (!cJSON_IsObject(md))
		return qfail(&d, "metadata", md ? "expected an object" : "missing");
	v = cJSON_GetObjectItemCaseSensitive(md, "name");
	if (!v)
		return qfail(&d, "metadata.name", "missing");
	gf_err e = name_field(&d, v, "metadata.name", out->name);
	if (e)
		return e;
	d.name = out->name;
	v = cJSON_GetObjectItemCaseSensitive(obj, "spec");
	if (!v || cJSON_IsNull(v))
		return qfail(&d, "spec", "missing");
	return spec(&d, v, out);
}

gf_err gf_k8s_queue_decode_text(const char *text, size_t len, struct gf_queue_def *out, char *err, size_t errlen)
{
	cJSON *root = cJSON_ParseWithLength(text, len);
	if (!root) {
		snprintf(err, errlen, "(object): not valid JSON");
		memset(out, 0, sizeof(*out));
		return GF_PARSE;
	}
	gf_err e = gf_k8s_queue_decode(root, out, err, errlen);
	cJSON_Delete(root);
	return e;
}

const char *gf_k8s_queue_rule(const char *pod_label, const char *ns_label)
{
	if (pod_label && pod_label[0])
		return pod_label;
	return ns_label && ns_label[0] ? ns_label : NULL;
}

const char *gf_k8s_pod_queue(const struct gf_k8s_pod *p, const char *ns_queue)
{
	return p->kueue ? NULL : gf_k8s_queue_rule(p->queue, ns_queue);
}
