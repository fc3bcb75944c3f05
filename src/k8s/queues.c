/*
 * k8s/queues.c - GPUQueue objects from the API server (queues.h).
 *
 * A syntax mapper over cJSON: each level lists the keys it knows (anything
 * else is refused with its path: the CRD's schema makes the API server
 * prune unknown fields, so in a cluster that means a newer CRD than this
 * binary), numbers must be integers, strings strings, null is absent.  What
 * the values may be, and the defaults, are the one validator's
 * (queue/queuedef.c), which the replay's YAML file goes through too.
 */
#include "k8s/queues.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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

static bool given(const cJSON *v)
{
	return v && !cJSON_IsNull(v);
}

/* obj as an object whose keys are all in keys[0..n); hint added for an unknown key of that name. */
static gf_err known_keys(struct qdec *d, const cJSON *obj, const char *path, const char *const *keys, size_t n,
			 const char *hint_key, const char *hint)
{
	if (!cJSON_IsObject(obj))
		return qfail(d, path, "expected an object, got %s", kind_of(obj));
	for (const cJSON *c = obj->child; c; c = c->next) {
		const char *k = c->string ? c->string : "?";
		size_t i = 0;
		while (i < n && strcmp(k, keys[i]))
			i++;
		if (i == n) {
			char sub[160];
			bool h = hint_key && !strcmp(k, hint_key);
			snprintf(sub, sizeof(sub), "%.50s%s%.100s", path, *path ? "." : "", k);
			return qfail(d, sub, "unknown field%s%s", h ? " " : "", h ? hint : "");
		}
	}
	return GF_OK;
}

/* An integer (clamped to int64_t). */
static gf_err integer(struct qdec *d, const cJSON *v, const char *path, int64_t *out)
{
	if (!cJSON_IsNumber(v))
		return qfail(d, path, "expected an integer, got %s", kind_of(v));
	double x = v->valuedouble;
	if (!isfinite(x) || x != floor(x))
		return qfail(d, path, "expected an integer, got %g", x);
	*out = x >= 9.2e18 ? INT64_MAX : x <= -9.2e18 ? INT64_MIN : (int64_t)x;
	return GF_OK;
}

static gf_err string(struct qdec *d, const cJSON *v, const char *path, char out[GF_QUEUE_NAME_MAX + 1])
{
	if (!cJSON_IsString(v))
		return qfail(d, path, "expected a string, got %s", kind_of(v));
	gf_queue_object_str(out, v->valuestring, strlen(v->valuestring));
	return GF_OK;
}

static gf_err amount(struct qdec *d, const cJSON *v, const char *path, struct gf_queue_amount *a,
		     const char *hint_key, const char *hint)
{
	static const char *const keys[] = { "gpus", "gpuMilli" };
	char sub[160];
	gf_err e;
	if ((e = known_keys(d, v, path, keys, 2, hint_key, hint)))
		return e;
	a->set = true;
	const cJSON *g = cJSON_GetObjectItemCaseSensitive(v, "gpus");
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(v, "gpuMilli");
	snprintf(sub, sizeof(sub), "%.120s.gpus", path);
	if (given(g) && (e = integer(d, g, sub, &a->gpus)))
		return e;
	snprintf(sub, sizeof(sub), "%.120s.gpuMilli", path);
	if (given(m) && (e = integer(d, m, sub, &a->gpu_milli)))
		return e;
	return GF_OK;
}

static gf_err models(struct qdec *d, const cJSON *v, struct gf_queue_object *o)
{
	static const char *const keys[] = { "model", "nominalQuota" };
	char sub[96], sub2[128];
	gf_err e;
	if (!cJSON_IsArray(v))
		return qfail(d, "spec.models", "expected a list of {model, nominalQuota}, got %s", kind_of(v));
	for (const cJSON *it = v->child; it; it = it->next) {
		uint32_t i = o->nmodels++;
		if (i >= GF_QUEUE_MODELS_MAX)
			continue; /* counted: the validator refuses the list */
		snprintf(sub, sizeof(sub), "spec.models[%u]", i);
		if ((e = known_keys(d, it, sub, keys, 2, NULL, NULL)))
			return e;
		const cJSON *mo = cJSON_GetObjectItemCaseSensitive(it, "model");
		const cJSON *nq = cJSON_GetObjectItemCaseSensitive(it, "nominalQuota");
		snprintf(sub2, sizeof(sub2), "%s.model", sub);
		if (given(mo)) {
			if ((e = string(d, mo, sub2, o->models[i].model)))
				return e;
			o->models[i].has_model = true;
		}
		snprintf(sub2, sizeof(sub2), "%s.nominalQuota", sub);
		if (given(nq) && (e = amount(d, nq, sub2, &o->models[i].nominal, NULL, NULL)))
			return e;
	}
	return GF_OK;
}

static gf_err spec(struct qdec *d, const cJSON *s, struct gf_queue_object *o)
{
	static const char *const keys[] = { "nominalQuota", "borrowingLimit", "lendingLimit",
					     "cohort", "weight", "ordering", "models" };
	const cJSON *v;
	gf_err e;
	if ((e = known_keys(d, s, "spec", keys, 7, NULL, NULL)))
		return e;
	o->has_spec = true;
	if (given(v = cJSON_GetObjectItemCaseSensitive(s, "nominalQuota")) &&
	    (e = amount(d, v, "spec.nominalQuota", &o->nominal, "perModel",
			"(per-model quotas are spec.models: [{model, nominalQuota: {gpus, gpuMilli}}], "
			"the CRD's shape)")))
		return e;
	if (given(v = cJSON_GetObjectItemCaseSensitive(s, "borrowingLimit")) &&
	    (e = amount(d, v, "spec.borrowingLimit", &o->borrowing, NULL, NULL)))
		return e;
	if (given(v = cJSON_GetObjectItemCaseSensitive(s, "lendingLimit")) &&
	    (e = amount(d, v, "spec.lendingLimit", &o->lending, NULL, NULL)))
		return e;
	if (given(v = cJSON_GetObjectItemCaseSensitive(s, "cohort"))) {
		if ((e = string(d, v, "spec.cohort", o->cohort)))
			return e;
		o->has_cohort = true;
	}
	if (given(v = cJSON_GetObjectItemCaseSensitive(s, "weight"))) {
		if ((e = integer(d, v, "spec.weight", &o->weight)))
			return e;
		o->has_weight = true;
	}
	if (given(v = cJSON_GetObjectItemCaseSensitive(s, "ordering"))) {
		if ((e = string(d, v, "spec.ordering", o->ordering)))
			return e;
		o->has_ordering = true;
	}
	if (given(v = cJSON_GetObjectItemCaseSensitive(s, "models")) && (e = models(d, v, o)))
		return e;
	return GF_OK;
}

gf_err gf_k8s_queue_decode(const cJSON *obj, struct gf_queue_def *out, char *err, size_t errlen)
{
	struct qdec d = { err, errlen, NULL };
	struct gf_queue_object o;
	struct gf_queue_verr ve;
	memset(out, 0, sizeof(*out));
	memset(&o, 0, sizeof(o));
	if (!cJSON_IsObject(obj))
		return qfail(&d, "(object)", "expected a " GF_K8S_QUEUE_KIND " object, got %s", kind_of(obj));
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, "apiVersion");
	if (v && !(cJSON_IsString(v) && !strcmp(v->valuestring, "gpufleet.io/v1alpha1")))
		return qfail(&d, "apiVersion", "expected gpufleet.io/v1alpha1");
	v = cJSON_GetObjectItemCaseSensitive(obj, "kind");
	if (v && !(cJSON_IsString(v) && !strcmp(v->valuestring, GF_K8S_QUEUE_KIND)))
		return qfail(&d, "kind", "expected " GF_K8S_QUEUE_KIND);
	const cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	if (given(md)) {
		if (!cJSON_IsObject(md))
			return qfail(&d, "metadata", "expected an object, got %s", kind_of(md));
		/* metadata beyond the name is the API server's: not read */
		if (given(v = cJSON_GetObjectItemCaseSensitive(md, "name"))) {
			gf_err e = string(&d, v, "metadata.name", o.name);
			if (e)
				return e;
			o.has_name = true;
			d.name = o.name; /* named in later messages */
		}
	}
	v = cJSON_GetObjectItemCaseSensitive(obj, "spec");
	if (given(v)) {
		gf_err e = spec(&d, v, &o);
		if (e)
			return e;
	}
	if (gf_queue_validate(&o, out, &ve)) {
		if (!strcmp(ve.path, "metadata.name"))
			d.name = NULL; /* not a name to print */
		return qfail(&d, ve.path, "%s", ve.what);
	}
	return GF_OK;
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
