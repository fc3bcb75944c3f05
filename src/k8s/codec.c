/*
 * k8s/codec.c - the Kubernetes JSON decoders' common part (see codec.h for
 * what is read): quantities, the path stack every error is named by, the
 * member readers, tolerations and node affinity, and the *_text entry
 * points.  The objects themselves: codec_pod.c, codec_node.c,
 * codec_group.c (both PodGroup APIs), sharing codec_impl.h.
 *
 * Design: cJSON parses the whole object; decoding walks it with a path
 * stack so every error names where it happened.  Quantities are parsed
 * exactly with 128-bit integers: value = mantissa * 10^(exp - frac) *
 * 1024^k, thousandths rounded up (a request of "0.0001" CPU is 1 milli,
 * never 0).  Nothing here allocates except cJSON's tree in the *_text
 * variants, freed before return.  Cost: linear in the object's size.
 */
#include "k8s/codec.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "k8s/codec_impl.h"

#define MILLI_MAX ((int64_t)1 << 62)

gf_err gf_k8s_quantity_milli(const char *s, int64_t *out)
{
	if (!s)
		return GF_PARSE;
	bool neg = false;
	if (*s == '+' || *s == '-')
		neg = *s++ == '-';
	unsigned __int128 mant = 0;
	int frac = 0, digits = 0, sig = 0;
	bool dot = false;
	for (;; s++) {
		if (isdigit((unsigned char)*s)) {
			digits++;
			if (mant || *s != '0')
				sig++;
			if (sig > 30)
				return GF_RANGE;
			mant = mant * 10 + (unsigned)(*s - '0');
			frac += dot;
		} else if (*s == '.' && !dot) {
			dot = true;
		} else {
			break;
		}
	}
	if (!digits)
		return GF_PARSE;
	int dexp = 0, bexp = 0;
	if (!*s) {
	} else if (s[1] == 'i' && !s[2] && strchr("KMGTPE", s[0])) {
		bexp = 10 * (int)(strchr("KMGTPE", s[0]) - "KMGTPE" + 1);
	} else if ((s[0] == 'e' || s[0] == 'E') && s[1] &&
		   (isdigit((unsigned char)s[1]) || ((s[1] == '-' || s[1] == '+') && isdigit((unsigned char)s[2])))) {
		char *end;
		long e = strtol(s + 1, &end, 10);
		if (*end || e > 60 || e < -60)
			return *end ? GF_PARSE : GF_RANGE;
		dexp = (int)e;
	} else if (!s[1]) {
		switch (s[0]) {
		case 'n': dexp = -9; break;
		case 'u': dexp = -6; break;
		case 'm': dexp = -3; break;
		case 'k': dexp = 3; break;
		case 'M': dexp = 6; break;
		case 'G': dexp = 9; break;
		case 'T': dexp = 12; break;
		case 'P': dexp = 15; break;
		case 'E': dexp = 18; break;
		default: return GF_PARSE;
		}
	} else {
		return GF_PARSE;
	}
	int d = dexp - frac + 3; /* thousandths */
	unsigned __int128 lim = (unsigned __int128)MILLI_MAX;
	if (mant == 0) {
		*out = 0;
		return GF_OK;
	}
	for (int k = 0; k < bexp; k++) {
		mant <<= 1;
		if (mant > lim * 1000000000000ull)
			return GF_RANGE;
	}
	unsigned __int128 den = 1;
	for (; d > 0; d--) {
		mant *= 10;
		if (mant > lim)
			return GF_RANGE;
	}
	for (; d < 0; d++) {
		den *= 10;
		if (den > lim * 1000000000000ull) {
			/* A tiny positive value: rounds up to one thousandth. */
			*out = neg ? 0 : 1;
			return GF_OK;
		}
	}
	unsigned __int128 q = (mant + den - 1) / den;
	if (q > lim)
		return GF_RANGE;
	*out = neg ? -(int64_t)q : (int64_t)q;
	return GF_OK;
}

/* ---- the path stack ---------------------------------------------------- */


size_t gf_kdec_push(struct dec *d, const char *fmt, ...)
{
	size_t old = d->len;
	if (d->len < sizeof(d->path)) {
		va_list ap;
		va_start(ap, fmt);
		int n = vsnprintf(d->path + d->len, sizeof(d->path) - d->len, fmt, ap);
		va_end(ap);
		if (n > 0)
			d->len += (size_t)n;
		if (d->len >= sizeof(d->path))
			d->len = sizeof(d->path) - 1;
	}
	return old;
}

void gf_kdec_pop(struct dec *d, size_t old)
{
	d->len = old;
	d->path[old] = '\0';
}

/* Push ".key" (or "key" at the root), or ["key"] when key has a dot or slash. */
size_t gf_kdec_push_key(struct dec *d, const char *key)
{
	if (strpbrk(key, "./"))
		return gf_kdec_push(d, "[\"%s\"]", key);
	return gf_kdec_push(d, "%s%s", d->len ? "." : "", key);
}

gf_err gf_kdec_fail(struct dec *d, const char *fmt, ...)
{
	char what[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(d->err, d->errlen, "%s: %s", d->len ? d->path : "(document)", what);
	return GF_PARSE;
}

const char *gf_kdec_type_name(const cJSON *v)
{
	if (cJSON_IsString(v)) return "a string";
	if (cJSON_IsNumber(v)) return "a number";
	if (cJSON_IsObject(v)) return "an object";
	if (cJSON_IsArray(v)) return "an array";
	if (cJSON_IsBool(v)) return "a boolean";
	if (cJSON_IsNull(v)) return "null";
	return "something else";
}

/* An optional member of the given kind (null counts as absent). */
gf_err gf_kdec_member(struct dec *d, const cJSON *obj, const char *key, int kind, const cJSON **out)
{
	*out = NULL;
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (!v || cJSON_IsNull(v))
		return GF_OK;
	if (!(v->type & kind)) {
		size_t o = gf_kdec_push_key(d, key);
		gf_err e = gf_kdec_fail(d, "expected %s, got %s",
				kind == cJSON_Object ? "an object" : kind == cJSON_Array ? "an array"
				: kind == cJSON_String ? "a string" : kind == cJSON_True ? "a boolean"
				: kind == cJSON_Number ? "a number" : "a value",
				gf_kdec_type_name(v));
		gf_kdec_pop(d, o);
		return e;
	}
	*out = v;
	return GF_OK;
}

gf_err gf_kdec_str_member(struct dec *d, const cJSON *obj, const char *key, char *out, size_t cap)
{
	const cJSON *v;
	gf_err e = gf_kdec_member(d, obj, key, cJSON_String, &v);
	if (e || !v)
		return e;
	size_t n = strlen(v->valuestring);
	if (n >= cap) {
		size_t o = gf_kdec_push_key(d, key);
		e = gf_kdec_fail(d, "longer than %zu bytes", cap - 1);
		gf_kdec_pop(d, o);
		return e;
	}
	memcpy(out, v->valuestring, n + 1);
	return GF_OK;
}

/* A string value of map[key] or NULL; an error if present and not a string. */
gf_err gf_kdec_map_str(struct dec *d, const cJSON *map, const char *key, const char **out)
{
	*out = NULL;
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(map, key);
	if (!v)
		return GF_OK;
	if (!cJSON_IsString(v)) {
		size_t o = gf_kdec_push_key(d, key);
		gf_err e = gf_kdec_fail(d, "expected a string, got %s", gf_kdec_type_name(v));
		gf_kdec_pop(d, o);
		return e;
	}
	*out = v->valuestring;
	return GF_OK;
}

/* Every value of a string map must be a string (labels, annotations, quantities). */
gf_err gf_kdec_check_str_map(struct dec *d, const cJSON *map)
{
	const cJSON *v;
	cJSON_ArrayForEach(v, map)
	{
		if (!v->string || !cJSON_IsString(v)) {
			size_t o = gf_kdec_push_key(d, v->string ? v->string : "?");
			gf_err e = gf_kdec_fail(d, "expected a string, got %s", gf_kdec_type_name(v));
			gf_kdec_pop(d, o);
			return e;
		}
	}
	return GF_OK;
}

gf_err gf_kdec_quantity(struct dec *d, const cJSON *map, const char *key, int64_t *milli, bool *found)
{
	const char *s;
	gf_err e = gf_kdec_map_str(d, map, key, &s);
	*found = false;
	if (e || !s)
		return e;
	e = gf_k8s_quantity_milli(s, milli);
	if (e) {
		size_t o = gf_kdec_push_key(d, key);
		e = gf_kdec_fail(d, "expected a quantity (\"2\", \"500m\", \"64Gi\"), got \"%.40s\"%s", s,
			 e == GF_RANGE ? " (out of range)" : "");
		gf_kdec_pop(d, o);
		return e;
	}
	*found = true;
	return GF_OK;
}


/* An optional int32 member in lo..INT32_MAX (0 when absent). */
gf_err gf_kdec_int32_member(struct dec *d, const cJSON *obj, const char *key, int32_t lo, int32_t *out)
{
	const cJSON *v;
	*out = 0;
	gf_err e = gf_kdec_member(d, obj, key, cJSON_Number, &v);
	if (e || !v)
		return e;
	double x = v->valuedouble;
	if (!(x >= lo && x <= 2147483647.0) || x != (double)(int64_t)x) {
		size_t o = gf_kdec_push_key(d, key);
		e = gf_kdec_fail(d, "expected a whole number %d..2147483647, got %g", (int)lo, x);
		gf_kdec_pop(d, o);
		return e;
	}
	*out = (int32_t)x;
	return GF_OK;
}

/* ---- constraints: labels, taints, tolerations, node affinity ----------- */

bool gf_kdec_pack_kv(char *buf, size_t cap, size_t *len, const char *k, const char *v)
{
	size_t kl = strlen(k) + 1, vl = strlen(v) + 1;
	if (*len + kl + vl > cap)
		return false;
	memcpy(buf + *len, k, kl);
	memcpy(buf + *len + kl, v, vl);
	*len += kl + vl;
	return true;
}

const char *gf_k8s_node_label(const struct gf_k8s_node *n, const char *key)
{
	return gf_labels_get(n->labels, n->labels_len, key);
}

bool gf_kdec_effect_of(const char *s, uint8_t *out)
{
	if (!s || !*s)
		*out = GF_EFFECT_ANY;
	else if (!strcmp(s, "NoSchedule"))
		*out = GF_EFFECT_NO_SCHEDULE;
	else if (!strcmp(s, "PreferNoSchedule"))
		*out = GF_EFFECT_PREFER_NO_SCHEDULE;
	else if (!strcmp(s, "NoExecute"))
		*out = GF_EFFECT_NO_EXECUTE;
	else
		return false;
	return true;
}

const char *gf_kdec_obj_str(const cJSON *o, const char *k)
{
	const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
	return s ? s : "";
}

/* Sets p->invalid for what the scheduler cannot represent; GF_PARSE for wrong types. */
gf_err gf_kdec_pod_tolerations(struct dec *d, const cJSON *spec, struct gf_k8s_pod *p)
{
	const cJSON *arr;
	gf_err e = gf_kdec_member(d, spec, "tolerations", cJSON_Array, &arr);
	if (e || !arr)
		return e;
	int i = 0;
	const cJSON *t;
	cJSON_ArrayForEach(t, arr)
	{
		size_t o = gf_kdec_push(d, ".tolerations[%d]", i++);
		if (!cJSON_IsObject(t)) {
			e = gf_kdec_fail(d, "expected an object, got %s", gf_kdec_type_name(t));
			gf_kdec_pop(d, o);
			return e;
		}
		const char *key = gf_kdec_obj_str(t, "key"), *op = gf_kdec_obj_str(t, "operator");
		const char *val = gf_kdec_obj_str(t, "value"), *eff = gf_kdec_obj_str(t, "effect");
		uint8_t ef;
		gf_kdec_pop(d, o);
		if (!p->invalid[0] && (p->ntols == GF_K8S_MAX_TOLS || strlen(key) >= GF_K8S_KEY_MAX ||
				       strlen(val) >= GF_K8S_VAL_MAX || !gf_kdec_effect_of(eff, &ef) ||
				       (*op && strcmp(op, "Exists") && strcmp(op, "Equal")))) {
			snprintf(p->invalid, sizeof(p->invalid),
				 "spec.tolerations[%d]: not supported by gpufleet (at most %d tolerations, "
				 "keys < %d bytes, operator Exists or Equal)", i - 1, GF_K8S_MAX_TOLS, GF_K8S_KEY_MAX);
			continue;
		}
		if (p->invalid[0])
			continue;
		struct gf_toleration *tl = &p->tols[p->ntols++];
		snprintf(tl->key, sizeof(tl->key), "%s", key);
		snprintf(tl->value, sizeof(tl->value), "%s", val);
		tl->effect = ef;
		tl->exists = !strcmp(op, "Exists");
	}
	return GF_OK;
}

static bool op_of(const char *s, uint8_t *out)
{
	static const char *const ops[] = { "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt" };
	for (uint8_t i = 0; i < 6; i++)
		if (!strcmp(s, ops[i])) {
			*out = i;
			return true;
		}
	return false;
}

/* spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms */
void gf_kdec_pod_affinity(const cJSON *spec, struct gf_k8s_pod *p)
{
	const cJSON *terms = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(spec, "affinity"),
						 "nodeAffinity"),
		"requiredDuringSchedulingIgnoredDuringExecution"), "nodeSelectorTerms");
	if (!cJSON_IsArray(terms))
		return;
	int ti = 0;
	const cJSON *t;
	cJSON_ArrayForEach(t, terms)
	{
		const cJSON *exprs = cJSON_GetObjectItemCaseSensitive(t, "matchExpressions"), *x;
		if (p->nterms == GF_K8S_MAX_TERMS) {
			snprintf(p->invalid, sizeof(p->invalid),
				 "spec.affinity.nodeAffinity: more than %d nodeSelectorTerms are not supported by gpufleet",
				 GF_K8S_MAX_TERMS);
			return;
		}
		struct gf_match_term *term = &p->terms[p->nterms++];
		memset(term, 0, sizeof(*term));
		int xi = 0;
		if (!cJSON_IsArray(exprs))
			exprs = NULL;
		cJSON_ArrayForEach(x, exprs)
		{
			const char *key = gf_kdec_obj_str(x, "key");
			uint8_t op;
			if (term->nexprs == GF_K8S_MAX_EXPRS || strlen(key) >= GF_K8S_KEY_MAX || !*key ||
			    !op_of(gf_kdec_obj_str(x, "operator"), &op)) {
				snprintf(p->invalid, sizeof(p->invalid),
					 "spec.affinity.nodeAffinity...nodeSelectorTerms[%d].matchExpressions[%d]: "
					 "not supported by gpufleet (at most %d expressions, keys < %d bytes, a known operator)",
					 ti, xi, GF_K8S_MAX_EXPRS, GF_K8S_KEY_MAX);
				return;
			}
			struct gf_match_expr *ex = &term->e[term->nexprs++];
			snprintf(ex->key, sizeof(ex->key), "%s", key);
			ex->op = op;
			size_t n = 0;
			const cJSON *v;
			cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(x, "values"))
			{
				const char *sv = cJSON_GetStringValue(v);
				size_t l = sv ? strlen(sv) + 1 : 0;
				if (!sv || n + l + 1 > sizeof(ex->values)) {
					snprintf(p->invalid, sizeof(p->invalid),
						 "spec.affinity.nodeAffinity: values of '%.60s' longer than %zu bytes "
						 "are not supported by gpufleet", key, sizeof(ex->values) - 1);
					return;
				}
				memcpy(ex->values + n, sv, l);
				n += l;
			}
			ex->values[n] = '\0';
			xi++;
		}
		ti++;
	}
}


/*
 * Parse text as JSON and hand the document to one of the object decoders
 * (pods, nodes, both PodGroup APIs).  Text that is not JSON leaves *out
 * zeroed (outsize bytes) and err "(document): <bad>".
 */
typedef gf_err (*obj_decoder)(const cJSON *obj, void *out, char *err, size_t errlen);

static gf_err decode_text(const char *text, size_t len, obj_decoder dec, const char *bad, void *out,
			  size_t outsize, char *err, size_t errlen)
{
	cJSON *doc = cJSON_ParseWithLength(text, len);
	if (!doc) {
		memset(out, 0, outsize);
		snprintf(err, errlen, "(document): %s", bad);
		return GF_PARSE;
	}
	gf_err e = dec(doc, out, err, errlen);
	cJSON_Delete(doc);
	return e;
}

static gf_err dec_pod(const cJSON *o, void *out, char *err, size_t errlen)
{
	return gf_k8s_pod_decode(o, out, err, errlen);
}

static gf_err dec_node(const cJSON *o, void *out, char *err, size_t errlen)
{
	return gf_k8s_node_decode(o, out, err, errlen);
}

static gf_err dec_podgroup(const cJSON *o, void *out, char *err, size_t errlen)
{
	return gf_k8s_podgroup_decode(o, out, err, errlen);
}

static gf_err dec_wl_podgroup(const cJSON *o, void *out, char *err, size_t errlen)
{
	return gf_k8s_wl_podgroup_decode(o, out, err, errlen);
}

gf_err gf_k8s_podgroup_decode_text(const char *text, size_t len, struct gf_k8s_podgroup *out, char *err,
				   size_t errlen)
{
	return decode_text(text, len, dec_podgroup, "not JSON", out, sizeof(*out), err, errlen);
}

gf_err gf_k8s_wl_podgroup_decode_text(const char *text, size_t len, struct gf_k8s_podgroup *out, char *err,
				      size_t errlen)
{
	return decode_text(text, len, dec_wl_podgroup, "not JSON", out, sizeof(*out), err, errlen);
}


gf_err gf_k8s_pod_decode_text(const char *text, size_t len, struct gf_k8s_pod *out, char *err,
			      size_t errlen)
{
	return decode_text(text, len, dec_pod, "not valid JSON", out, sizeof(*out), err, errlen);
}

gf_err gf_k8s_node_decode_text(const char *text, size_t len, struct gf_k8s_node *out, char *err,
			       size_t errlen)
{
	return decode_text(text, len, dec_node, "not valid JSON", out, sizeof(*out), err, errlen);
}
