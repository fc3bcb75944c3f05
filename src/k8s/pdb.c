/*
 * k8s/pdb.c - PodDisruptionBudget objects from the API server (pdb.h).
 *
 * A small walker over cJSON (as k8s/queues.c): each error names the path.
 * Only the fields pdb.h lists are read; others (spec.minAvailable, the rest
 * of status) are ignored, never refused: the API server validated them.
 * Matching reuses the engine's label selector rule (cluster/admit.h).
 */
#include "k8s/pdb.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

struct pdec {
	char *err;
	size_t errlen;
	const struct gf_k8s_pdb *b;	/* its name, once known */
};

static gf_err pfail(struct pdec *d, const char *path, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static gf_err pfail(struct pdec *d, const char *path, const char *fmt, ...)
{
	char what[200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (d->b->name[0])
		snprintf(d->err, d->errlen, "pdb %.60s/%.60s: %s: %s", d->b->ns, d->b->name, path, what);
	else
		snprintf(d->err, d->errlen, "pdb: %s: %s", path, what);
	return GF_PARSE;
}

static const char *kind_of(const cJSON *v)
{
	return !v ? "nothing" : cJSON_IsObject(v) ? "an object" : cJSON_IsArray(v) ? "an array"
	       : cJSON_IsString(v) ? "a string" : cJSON_IsNumber(v) ? "a number"
	       : cJSON_IsBool(v) ? "a boolean" : "null";
}

/* obj[key] as a string into out[cap] (absent or null: ""). */
static gf_err str_field(struct pdec *d, const cJSON *obj, const char *path, const char *key, char *out, size_t cap)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	char sub[96];
	out[0] = '\0';
	if (!v || cJSON_IsNull(v))
		return GF_OK;
	snprintf(sub, sizeof(sub), "%s.%s", path, key);
	if (!cJSON_IsString(v))
		return pfail(d, sub, "expected a string, got %s", kind_of(v));
	if (strlen(v->valuestring) >= cap)
		return pfail(d, sub, "longer than %zu bytes", cap - 1);
	memcpy(out, v->valuestring, strlen(v->valuestring) + 1);
	return GF_OK;
}

static const char *const OPS[] = { "In", "NotIn", "Exists", "DoesNotExist" };	/* enum gf_match_op order */

static gf_err expression(struct pdec *d, const cJSON *x, int i, struct gf_match_expr *e)
{
	char path[96], sub[128];
	const cJSON *op = cJSON_GetObjectItemCaseSensitive(x, "operator");
	const cJSON *vals = cJSON_GetObjectItemCaseSensitive(x, "values"), *v;
	gf_err err;
	size_t n = 0;
	int k = 0;

	snprintf(path, sizeof(path), "spec.selector.matchExpressions[%d]", i);
	if (!cJSON_IsObject(x))
		return pfail(d, path, "expected an object, got %s", kind_of(x));
	if ((err = str_field(d, x, path, "key", e->key, sizeof(e->key))))
		return err;
	snprintf(sub, sizeof(sub), "%s.key", path);
	if (!e->key[0])
		return pfail(d, sub, "expected a label key");
	snprintf(sub, sizeof(sub), "%s.operator", path);
	if (!cJSON_IsString(op))
		return pfail(d, sub, "expected In, NotIn, Exists or DoesNotExist, got %s", kind_of(op));
	while (k < 4 && strcmp(op->valuestring, OPS[k]))
		k++;
	if (k == 4)
		return pfail(d, sub, "expected In, NotIn, Exists or DoesNotExist, got \"%.40s\"", op->valuestring);
	e->op = (uint8_t)k;
	snprintf(sub, sizeof(sub), "%s.values", path);
	if (vals && !cJSON_IsNull(vals) && !cJSON_IsArray(vals))
		return pfail(d, sub, "expected an array, got %s", kind_of(vals));
	if (!cJSON_IsArray(vals))
		vals = NULL;
	cJSON_ArrayForEach(v, vals)
	{
		size_t l;
		if (!cJSON_IsString(v))
			return pfail(d, sub, "expected strings, got %s", kind_of(v));
		l = strlen(v->valuestring) + 1;
		if (l == 1)
			return pfail(d, sub, "an empty value is not supported by gpufleet");
		if (n + l + 1 > sizeof(e->values))
			return pfail(d, sub, "longer than %zu bytes (gpufleet's limit)", sizeof(e->values) - 1);
		memcpy(e->values + n, v->valuestring, l);
		n += l;
	}
	e->values[n] = '\0';
	if ((e->op == GF_OP_IN || e->op == GF_OP_NOT_IN) != (n > 0))
		return pfail(d, sub, n ? "must be empty for %s" : "must not be empty for %s", OPS[k]);
	return GF_OK;
}

static gf_err selector(struct pdec *d, const cJSON *sel, struct gf_k8s_pdb *b)
{
	const cJSON *ml, *me, *kv, *x;
	int i = 0;
	gf_err err;

	if (!sel || cJSON_IsNull(sel))
		return GF_OK;	/* selects nothing */
	if (!cJSON_IsObject(sel))
		return pfail(d, "spec.selector", "expected an object, got %s", kind_of(sel));
	b->selects = true;
	ml = cJSON_GetObjectItemCaseSensitive(sel, "matchLabels");
	me = cJSON_GetObjectItemCaseSensitive(sel, "matchExpressions");
	if (ml && !cJSON_IsNull(ml) && !cJSON_IsObject(ml))
		return pfail(d, "spec.selector.matchLabels", "expected an object, got %s", kind_of(ml));
	if (!cJSON_IsObject(ml))
		ml = NULL;
	cJSON_ArrayForEach(kv, ml)
	{
		size_t kl = strlen(kv->string) + 1, vl;
		if (!cJSON_IsString(kv))
			return pfail(d, "spec.selector.matchLabels", "%.60s: expected a string, got %s", kv->string,
				     kind_of(kv));
		vl = strlen(kv->valuestring) + 1;
		for (const cJSON *o = ml->child; o != kv; o = o->next)
			if (!strcmp(o->string, kv->string)) /* JSON the API server never sends */
				return pfail(d, "spec.selector.matchLabels", "%.60s: a key given twice", kv->string);
		if (b->match_len + kl + vl > sizeof(b->match))
			return pfail(d, "spec.selector.matchLabels", "more than %zu bytes (gpufleet's limit)",
				     sizeof(b->match));
		memcpy(b->match + b->match_len, kv->string, kl);
		memcpy(b->match + b->match_len + kl, kv->valuestring, vl);
		b->match_len += kl + vl;
	}
	if (me && !cJSON_IsNull(me) && !cJSON_IsArray(me))
		return pfail(d, "spec.selector.matchExpressions", "expected an array, got %s", kind_of(me));
	if (!cJSON_IsArray(me))
		me = NULL;
	cJSON_ArrayForEach(x, me)
	{
		if (b->exprs.nexprs == GF_MATCH_MAX_EXPRS)
			return pfail(d, "spec.selector.matchExpressions", "more than %d expressions (gpufleet's limit)",
				     GF_MATCH_MAX_EXPRS);
		if ((err = expression(d, x, i++, &b->exprs.e[b->exprs.nexprs])))
			return err;
		b->exprs.nexprs++;
	}
	return GF_OK;
}

gf_err gf_k8s_pdb_decode(const cJSON *obj, struct gf_k8s_pdb *out, char *err, size_t errlen)
{
	struct pdec d = { err, errlen, out };
	const cJSON *md, *spec, *status, *a;
	gf_err e;

	memset(out, 0, sizeof(*out));
	if (!cJSON_IsObject(obj))
		return pfail(&d, "(object)", "expected a PodDisruptionBudget object, got %s", kind_of(obj));
	md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	spec = cJSON_GetObjectItemCaseSensitive(obj, "spec");
	status = cJSON_GetObjectItemCaseSensitive(obj, "status");
	if (!cJSON_IsObject(md))
		return pfail(&d, "metadata", "expected an object, got %s", kind_of(md));
	if ((e = str_field(&d, md, "metadata", "namespace", out->ns, sizeof(out->ns))) ||
	    (e = str_field(&d, md, "metadata", "name", out->name, sizeof(out->name))))
		return e;
	if (!out->ns[0])
		snprintf(out->ns, sizeof(out->ns), "default");
	if (!out->name[0])
		return pfail(&d, "metadata.name", "expected a name");
	if (spec && !cJSON_IsNull(spec) && !cJSON_IsObject(spec))
		return pfail(&d, "spec", "expected an object, got %s", kind_of(spec));
	if ((e = selector(&d, cJSON_GetObjectItemCaseSensitive(spec, "selector"), out)))
		return e;
	if (status && !cJSON_IsNull(status) && !cJSON_IsObject(status))
		return pfail(&d, "status", "expected an object, got %s", kind_of(status));
	a = cJSON_GetObjectItemCaseSensitive(status, "disruptionsAllowed");
	if (a && !cJSON_IsNull(a)) {
		if (!cJSON_IsNumber(a) || !isfinite(a->valuedouble) || a->valuedouble != floor(a->valuedouble) ||
		    a->valuedouble < 0 || a->valuedouble > INT32_MAX)
			return pfail(&d, "status.disruptionsAllowed", "expected a non-negative integer, got %s",
				     kind_of(a));
		out->allowed = (int32_t)a->valuedouble;
	}
	return GF_OK;
}

gf_err gf_k8s_pdb_decode_text(const char *text, size_t len, struct gf_k8s_pdb *out, char *err, size_t errlen)
{
	cJSON *root = cJSON_ParseWithLength(text, len);
	gf_err e;

	if (!root) {
		memset(out, 0, sizeof(*out));
		snprintf(err, errlen, "pdb: not JSON");
		return GF_PARSE;
	}
	e = gf_k8s_pdb_decode(root, out, err, errlen);
	cJSON_Delete(root);
	return e;
}

bool gf_k8s_pdb_covers(const struct gf_k8s_pdb *b, const struct gf_k8s_pod *p)
{
	return b->selects && !strcmp(b->ns, p->ns) &&
	       gf_labels_select(p->labels, p->labels_len, b->match, b->match_len, &b->exprs);
}

bool gf_k8s_pdb_same_selector(const struct gf_k8s_pdb *a, const struct gf_k8s_pdb *b)
{
	return a->selects == b->selects && !strcmp(a->ns, b->ns) && a->match_len == b->match_len &&
	       !memcmp(a->match, b->match, a->match_len) && a->exprs.nexprs == b->exprs.nexprs &&
	       !memcmp(&a->exprs, &b->exprs, sizeof(a->exprs));
}
