/*
 * k8s/codec.c - Pod/Node JSON decoding (see codec.h for what is read).
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

struct dec {
	char path[512];
	size_t len;
	char *err;
	size_t errlen;
};

static size_t push(struct dec *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static size_t push(struct dec *d, const char *fmt, ...)
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

static void pop(struct dec *d, size_t old)
{
	d->len = old;
	d->path[old] = '\0';
}

/* Push ".key" (or "key" at the root), or ["key"] when key has a dot or slash. */
static size_t push_key(struct dec *d, const char *key)
{
	if (strpbrk(key, "./"))
		return push(d, "[\"%s\"]", key);
	return push(d, "%s%s", d->len ? "." : "", key);
}

static gf_err fail(struct dec *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static gf_err fail(struct dec *d, const char *fmt, ...)
{
	char what[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(d->err, d->errlen, "%s: %s", d->len ? d->path : "(document)", what);
	return GF_PARSE;
}

static const char *type_name(const cJSON *v)
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
static gf_err member(struct dec *d, const cJSON *obj, const char *key, int kind, const cJSON **out)
{
	*out = NULL;
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (!v || cJSON_IsNull(v))
		return GF_OK;
	if (!(v->type & kind)) {
		size_t o = push_key(d, key);
		gf_err e = fail(d, "expected %s, got %s",
				kind == cJSON_Object ? "an object" : kind == cJSON_Array ? "an array"
				: kind == cJSON_String ? "a string" : kind == cJSON_True ? "a boolean"
				: kind == cJSON_Number ? "a number" : "a value",
				type_name(v));
		pop(d, o);
		return e;
	}
	*out = v;
	return GF_OK;
}

static gf_err str_member(struct dec *d, const cJSON *obj, const char *key, char *out, size_t cap)
{
	const cJSON *v;
	gf_err e = member(d, obj, key, cJSON_String, &v);
	if (e || !v)
		return e;
	size_t n = strlen(v->valuestring);
	if (n >= cap) {
		size_t o = push_key(d, key);
		e = fail(d, "longer than %zu bytes", cap - 1);
		pop(d, o);
		return e;
	}
	memcpy(out, v->valuestring, n + 1);
	return GF_OK;
}

/* A string value of map[key] or NULL; an error if present and not a string. */
static gf_err map_str(struct dec *d, const cJSON *map, const char *key, const char **out)
{
	*out = NULL;
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(map, key);
	if (!v)
		return GF_OK;
	if (!cJSON_IsString(v)) {
		size_t o = push_key(d, key);
		gf_err e = fail(d, "expected a string, got %s", type_name(v));
		pop(d, o);
		return e;
	}
	*out = v->valuestring;
	return GF_OK;
}

/* Every value of a string map must be a string (labels, annotations, quantities). */
static gf_err check_str_map(struct dec *d, const cJSON *map)
{
	const cJSON *v;
	cJSON_ArrayForEach(v, map)
	{
		if (!v->string || !cJSON_IsString(v)) {
			size_t o = push_key(d, v->string ? v->string : "?");
			gf_err e = fail(d, "expected a string, got %s", type_name(v));
			pop(d, o);
			return e;
		}
	}
	return GF_OK;
}

static gf_err quantity(struct dec *d, const cJSON *map, const char *key, int64_t *milli, bool *found)
{
	const char *s;
	gf_err e = map_str(d, map, key, &s);
	*found = false;
	if (e || !s)
		return e;
	e = gf_k8s_quantity_milli(s, milli);
	if (e) {
		size_t o = push_key(d, key);
		e = fail(d, "expected a quantity (\"2\", \"500m\", \"64Gi\"), got \"%.40s\"%s", s,
			 e == GF_RANGE ? " (out of range)" : "");
		pop(d, o);
		return e;
	}
	*found = true;
	return GF_OK;
}

/* ---- constraints: labels, taints, tolerations, node affinity ----------- */

static bool pack_kv(char *buf, size_t cap, size_t *len, const char *k, const char *v)
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

static bool effect_of(const char *s, uint8_t *out)
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

static const char *obj_str(const cJSON *o, const char *k)
{
	const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
	return s ? s : "";
}

/* Sets p->invalid for what the scheduler cannot represent; GF_PARSE for wrong types. */
static gf_err pod_tolerations(struct dec *d, const cJSON *spec, struct gf_k8s_pod *p)
{
	const cJSON *arr;
	gf_err e = member(d, spec, "tolerations", cJSON_Array, &arr);
	if (e || !arr)
		return e;
	int i = 0;
	const cJSON *t;
	cJSON_ArrayForEach(t, arr)
	{
		size_t o = push(d, ".tolerations[%d]", i++);
		if (!cJSON_IsObject(t)) {
			e = fail(d, "expected an object, got %s", type_name(t));
			pop(d, o);
			return e;
		}
		const char *key = obj_str(t, "key"), *op = obj_str(t, "operator");
		const char *val = obj_str(t, "value"), *eff = obj_str(t, "effect");
		uint8_t ef;
		pop(d, o);
		if (!p->invalid[0] && (p->ntols == GF_K8S_MAX_TOLS || strlen(key) >= GF_K8S_KEY_MAX ||
				       strlen(val) >= GF_K8S_VAL_MAX || !effect_of(eff, &ef) ||
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
static void pod_affinity(const cJSON *spec, struct gf_k8s_pod *p)
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
			const char *key = obj_str(x, "key");
			uint8_t op;
			if (term->nexprs == GF_K8S_MAX_EXPRS || strlen(key) >= GF_K8S_KEY_MAX || !*key ||
			    !op_of(obj_str(x, "operator"), &op)) {
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

/* ---- pods -------------------------------------------------------------- */

struct req {
	int64_t cpu, mem_bytes_milli, gpu, milli, gmem, count;
	bool has_gpu, has_milli, has_gmem, has_count;
	const char *milli_text; /* milli as written (in the pod's JSON), for messages */
};

static bool our_namespace(const char *k)
{
	return !strncmp(k, "gpufleet.io/", 12) || !strncmp(k, "nvidia.com/", 11);
}

/*
 * gpufleet.io/gpu-milli's text, as a resource or an annotation: the one rule
 * (gf_gpu_milli_parse).  Junk is a decode error here; digits outside
 * 1..1000 come back as the value, for the pod's `invalid` message.
 */
static gf_err milli_text(struct dec *d, const char *key, const char *s, int64_t *v)
{
	int m;
	if (gf_gpu_milli_parse(s, strlen(s), &m) == GF_PARSE) {
		size_t o = push_key(d, key);
		gf_err e = fail(d, "expected a whole number of milli-GPU in digits, 1..1000, got \"%.40s\"", s);
		pop(d, o);
		return e;
	}
	*v = m;
	return GF_OK;
}

static gf_err resource_map(struct dec *d, const cJSON *map, struct req *r, struct gf_k8s_pod *p)
{
	gf_err e = check_str_map(d, map);
	if (e)
		return e;
	bool f;
	int64_t v;
	const cJSON *it;
	cJSON_ArrayForEach(it, map)
	{
		const char *k = it->string;
		if (!strcmp(k, GF_RES_MILLI)) { /* not a quantity: the one rule for milli */
			if ((e = milli_text(d, k, it->valuestring, &v)))
				return e;
			r->milli = v, r->has_milli = true, r->milli_text = it->valuestring;
			continue;
		}
		if ((e = quantity(d, map, k, &v, &f)))
			return e;
		if (!strcmp(k, "cpu")) {
			r->cpu = v;
		} else if (!strcmp(k, "memory")) {
			r->mem_bytes_milli = v;
		} else if (!strcmp(k, GF_RES_GPU) || !strcmp(k, GF_RES_GPU_MEM) || !strcmp(k, GF_RES_COUNT)) {
			if (v % 1000) {
				size_t o = push_key(d, k);
				e = fail(d, "expected a whole number, got \"%.40s\"", it->valuestring);
				pop(d, o);
				return e;
			}
			v /= 1000;
			if (!strcmp(k, GF_RES_GPU))
				r->gpu = v, r->has_gpu = true;
			else if (!strcmp(k, GF_RES_GPU_MEM))
				r->gmem = v, r->has_gmem = true;
			else
				r->count = v, r->has_count = true;
		} else if (our_namespace(k) && !p->invalid[0]) {
			snprintf(p->invalid, sizeof(p->invalid),
				 "unknown resource %.60s (known: " GF_RES_GPU ", " GF_RES_MILLI ", "
				 GF_RES_GPU_MEM ", " GF_RES_COUNT ")", k);
		}
	}
	return GF_OK;
}

/* One container's request: requests, with limits filling what requests lack. */
static gf_err container(struct dec *d, const cJSON *c, struct req *r, struct gf_k8s_pod *p)
{
	memset(r, 0, sizeof(*r));
	if (!cJSON_IsObject(c))
		return fail(d, "expected an object, got %s", type_name(c));
	const cJSON *res, *lim, *rq;
	gf_err e = member(d, c, "resources", cJSON_Object, &res);
	if (e || !res)
		return e;
	size_t o = push(d, ".resources");
	if ((e = member(d, res, "limits", cJSON_Object, &lim)) ||
	    (e = member(d, res, "requests", cJSON_Object, &rq)))
		goto out;
	struct req rl = { 0 };
	if (lim) {
		size_t o2 = push(d, ".limits");
		e = resource_map(d, lim, &rl, p);
		pop(d, o2);
		if (e)
			goto out;
	}
	if (rq) {
		size_t o2 = push(d, ".requests");
		e = resource_map(d, rq, r, p);
		pop(d, o2);
		if (e)
			goto out;
	}
	const cJSON *x;
	if (!r->cpu && lim && (x = cJSON_GetObjectItemCaseSensitive(lim, "cpu")))
		r->cpu = rl.cpu;
	if (!r->mem_bytes_milli && lim && (x = cJSON_GetObjectItemCaseSensitive(lim, "memory")))
		r->mem_bytes_milli = rl.mem_bytes_milli;
	/* Extended resources: limits are the truth (requests default to them). */
	if (rl.has_gpu)
		r->gpu = rl.gpu, r->has_gpu = true;
	if (rl.has_milli)
		r->milli = rl.milli, r->has_milli = true, r->milli_text = rl.milli_text;
	if (rl.has_gmem)
		r->gmem = rl.gmem, r->has_gmem = true;
	if (rl.has_count)
		r->count = rl.count, r->has_count = true;
out:
	pop(d, o);
	return e;
}

static gf_err containers(struct dec *d, const cJSON *spec, const char *key, bool init,
			 struct req *total, struct gf_k8s_pod *p)
{
	const cJSON *arr;
	gf_err e = member(d, spec, key, cJSON_Array, &arr);
	if (e || !arr)
		return e;
	int i = 0;
	const cJSON *c;
	cJSON_ArrayForEach(c, arr)
	{
		struct req r;
		size_t o = push(d, ".%s[%d]", key, i++);
		e = container(d, c, &r, p);
		pop(d, o);
		if (e)
			return e;
		if (init) {
			/* Init containers run one at a time: the max counts. */
			if (r.cpu > total->cpu) total->cpu = r.cpu;
			if (r.mem_bytes_milli > total->mem_bytes_milli) total->mem_bytes_milli = r.mem_bytes_milli;
			if (r.gpu > total->gpu) total->gpu = r.gpu;
		} else {
			total->cpu += r.cpu;
			total->mem_bytes_milli += r.mem_bytes_milli;
			total->gpu += r.gpu;
		}
		total->has_gpu |= r.has_gpu;
		if (r.has_milli && (!total->has_milli || r.milli > total->milli))
			total->milli = r.milli, total->has_milli = true, total->milli_text = r.milli_text;
		if (r.has_gmem && (!total->has_gmem || r.gmem > total->gmem))
			total->gmem = r.gmem, total->has_gmem = true;
		if (r.has_count && (!total->has_count || r.count > total->count))
			total->count = r.count, total->has_count = true;
	}
	return GF_OK;
}

/* An annotation holding a whole number; *found false if absent. */
static gf_err ann_int(struct dec *d, const cJSON *ann, const char *key, int64_t *v, bool *found)
{
	const char *s;
	*found = false;
	gf_err e = map_str(d, ann, key, &s);
	if (e || !s)
		return e;
	char *end;
	long long x = strtoll(s, &end, 10);
	if (end == s || *end) {
		size_t o = push_key(d, key);
		e = fail(d, "expected a whole number, got \"%.40s\"", s);
		pop(d, o);
		return e;
	}
	*v = x;
	*found = true;
	return GF_OK;
}

/* The model constraint from node affinity: required terms, key product, operator In. */
static gf_err affinity_model(struct dec *d, const cJSON *spec, char *out, size_t cap)
{
	const cJSON *aff = cJSON_GetObjectItemCaseSensitive(spec, "affinity");
	const cJSON *na = cJSON_GetObjectItemCaseSensitive(aff, "nodeAffinity");
	const cJSON *req = cJSON_GetObjectItemCaseSensitive(
		na, "requiredDuringSchedulingIgnoredDuringExecution");
	const cJSON *terms = cJSON_GetObjectItemCaseSensitive(req, "nodeSelectorTerms");
	const cJSON *t;
	(void)d;
	if (!cJSON_IsArray(terms))
		return GF_OK;
	cJSON_ArrayForEach(t, terms)
	{
		const cJSON *exprs = cJSON_GetObjectItemCaseSensitive(t, "matchExpressions"), *x;
		if (!cJSON_IsArray(exprs))
			continue;
		cJSON_ArrayForEach(x, exprs)
		{
			const char *key = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(x, "key"));
			const char *op = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(x, "operator"));
			const cJSON *vals = cJSON_GetObjectItemCaseSensitive(x, "values"), *v;
			if (!key || !op || strcmp(key, GF_LABEL_PRODUCT) || strcmp(op, "In") ||
			    !cJSON_IsArray(vals))
				continue;
			size_t n = 0;
			out[0] = '\0';
			cJSON_ArrayForEach(v, vals)
			{
				if (!cJSON_IsString(v))
					continue;
				int k = snprintf(out + n, cap - n, "%s%s", n ? "|" : "", v->valuestring);
				if (k < 0 || (size_t)k >= cap - n)
					break;
				n += (size_t)k;
			}
			return GF_OK; /* the first matching expression decides */
		}
	}
	return GF_OK;
}

/* "0,3,5" -> gpus; false if malformed. */
static bool parse_gpu_list(const char *s, uint8_t *gpus, int *n)
{
	*n = 0;
	uint32_t seen = 0;
	while (*s) {
		if (!isdigit((unsigned char)*s))
			return false;
		char *end;
		long g = strtol(s, &end, 10);
		if (g < 0 || g >= GF_MAX_GPUS || (seen >> g) & 1 || *n >= GF_MAX_GPUS)
			return false;
		seen |= 1u << g;
		gpus[(*n)++] = (uint8_t)g;
		s = end;
		if (*s == ',')
			s++;
		else if (*s)
			return false;
	}
	return *n > 0;
}

size_t gf_k8s_served_identity(const cJSON *pod, char *out, size_t n)
{
	const cJSON *md = cJSON_GetObjectItemCaseSensitive(pod, "metadata");
	const cJSON *spec = cJSON_GetObjectItemCaseSensitive(pod, "spec");
	const char *id = cJSON_GetStringValue(
		cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(md, "labels"),
						 GF_LABEL_SERVED_MODEL));
	if (!id || !*id) {
		const cJSON *cs = cJSON_GetObjectItemCaseSensitive(spec, "containers");
		id = cJSON_IsArray(cs) ? obj_str(cJSON_GetArrayItem(cs, 0), "image") : "";
	}
	size_t len = strlen(id);
	if (!n || len >= n || strchr(id, ',')) {
		if (n)
			out[0] = '\0';
		return 0;
	}
	memcpy(out, id, len + 1);
	return len;
}

/* spec.schedulingGroup.podGroupName (the Workload API's group), under "spec". */
static gf_err sched_group(struct dec *d, const cJSON *spec, struct gf_k8s_pod *p)
{
	const cJSON *sg;
	gf_err e = member(d, spec, "schedulingGroup", cJSON_Object, &sg);
	if (e || !sg)
		return e;
	size_t o = push(d, ".schedulingGroup");
	e = str_member(d, sg, "podGroupName", p->sched_group, sizeof(p->sched_group));
	pop(d, o);
	return e;
}

static gf_err int32_member(struct dec *d, const cJSON *obj, const char *key, int32_t lo, int32_t *out);

/* spec.preemptionPolicy (filled from the PriorityClass by the API server's admission). */
static gf_err preemption_policy(struct dec *d, const cJSON *spec, struct gf_k8s_pod *p)
{
	const cJSON *v;
	gf_err e = member(d, spec, "preemptionPolicy", cJSON_String, &v);
	if (e || !v)
		return e;
	if (!strcmp(v->valuestring, "Never"))
		p->preempt_never = true;
	else if (strcmp(v->valuestring, "PreemptLowerPriority")) {
		size_t o = push_key(d, "preemptionPolicy");
		e = fail(d, "expected Never or PreemptLowerPriority");
		pop(d, o);
	}
	return e;
}

/* spec.activeDeadlineSeconds: a whole number of seconds >= 1 (the API server's rule), up to 2^53. */
static gf_err active_deadline(struct dec *d, const cJSON *spec, struct gf_k8s_pod *p)
{
	const cJSON *v;
	gf_err e = member(d, spec, "activeDeadlineSeconds", cJSON_Number, &v);
	if (e || !v)
		return e;
	double x = v->valuedouble;
	if (!(x >= 1 && x <= 9007199254740992.0) || x != (double)(int64_t)x) {
		size_t o = push_key(d, "activeDeadlineSeconds");
		e = fail(d, "expected a whole number of seconds 1..9007199254740992, got %g", x);
		pop(d, o);
		return e;
	}
	p->deadline_s = (int64_t)x;
	return GF_OK;
}

static gf_err pod_decode(struct dec *d, const cJSON *obj, struct gf_k8s_pod *p)
{
	memset(p, 0, sizeof(*p));
	p->req.duration = -1;
	if (!cJSON_IsObject(obj))
		return fail(d, "expected a Pod object, got %s", type_name(obj));
	const cJSON *md, *spec, *status, *ann = NULL, *labels = NULL, *x;
	gf_err e;
	if ((e = member(d, obj, "metadata", cJSON_Object, &md)) ||
	    (e = member(d, obj, "spec", cJSON_Object, &spec)) ||
	    (e = member(d, obj, "status", cJSON_Object, &status)))
		return e;
	if (!md)
		return fail(d, "a Pod needs metadata");
	size_t o = push(d, "metadata");
	if ((e = str_member(d, md, "namespace", p->ns, sizeof(p->ns))) ||
	    (e = str_member(d, md, "name", p->name, sizeof(p->name))) ||
	    (e = str_member(d, md, "uid", p->uid, sizeof(p->uid))) ||
	    (e = str_member(d, md, "resourceVersion", p->rv, sizeof(p->rv))) ||
	    (e = member(d, md, "annotations", cJSON_Object, &ann)) ||
	    (e = member(d, md, "labels", cJSON_Object, &labels)) ||
	    (e = member(d, md, "deletionTimestamp", cJSON_String, &x)))
		goto out;
	p->deleting = x != NULL;
	if (labels) {
		size_t o2 = push(d, ".labels");
		e = str_member(d, labels, GF_LABEL_POD_GROUP, p->pod_group, sizeof(p->pod_group));
		if (!e)
			e = str_member(d, labels, GF_LABEL_QUEUE, p->queue, sizeof(p->queue));
		if (!e)
			e = member(d, labels, GF_LABEL_KUEUE_QUEUE, cJSON_String, &x);
		p->kueue = !e && x != NULL;
		pop(d, o2);
		if (e)
			goto out;
	}
	if (!p->name[0]) {
		e = fail(d, "a Pod needs metadata.name");
		goto out;
	}
	if (!p->ns[0])
		snprintf(p->ns, sizeof(p->ns), "default");
	if (ann) {
		size_t o2 = push(d, ".annotations");
		e = check_str_map(d, ann);
		pop(d, o2);
		if (e)
			goto out;
	}
	if (labels) {
		size_t o2 = push(d, ".labels");
		e = check_str_map(d, labels);
		pop(d, o2);
		if (e)
			goto out;
		const cJSON *kv;
		cJSON_ArrayForEach(kv, labels)
		{
			if (!pack_kv(p->labels, sizeof(p->labels), &p->labels_len, kv->string, kv->valuestring))
				p->labels_truncated = true;
		}
	}
	pop(d, o);
	snprintf(p->req.name, sizeof(p->req.name), "%.20s/%.40s", p->ns, p->name);
	snprintf(p->scheduler, sizeof(p->scheduler), "default-scheduler");

	struct req tot = { 0 };
	if (spec) {
		o = push(d, "spec");
		if ((e = str_member(d, spec, "nodeName", p->node, sizeof(p->node))) ||
		    (e = str_member(d, spec, "schedulerName", p->scheduler, sizeof(p->scheduler))) ||
		    (e = sched_group(d, spec, p)) ||
		    /* filled from the PriorityClass by the API server's admission */
		    (e = int32_member(d, spec, "priority", INT32_MIN, &p->req.priority)) ||
		    (e = containers(d, spec, "containers", false, &tot, p)))
			goto out;
		struct req init = { 0 };
		if ((e = containers(d, spec, "initContainers", true, &init, p)))
			goto out;
		if ((e = preemption_policy(d, spec, p)) || (e = active_deadline(d, spec, p)))
			goto out;
		if (init.cpu > tot.cpu) tot.cpu = init.cpu;
		if (init.mem_bytes_milli > tot.mem_bytes_milli) tot.mem_bytes_milli = init.mem_bytes_milli;
		if (init.gpu > tot.gpu) tot.gpu = init.gpu;
		tot.has_gpu |= init.has_gpu;
#define TAKE_MAX(f) if (init.has_##f && (!tot.has_##f || init.f > tot.f)) tot.f = init.f, tot.has_##f = true
		TAKE_MAX(milli);
		TAKE_MAX(gmem);
		TAKE_MAX(count);
#undef TAKE_MAX
		const cJSON *sel;
		if ((e = member(d, spec, "nodeSelector", cJSON_Object, &sel)))
			goto out;
		if (sel) {
			size_t o2 = push(d, ".nodeSelector");
			const char *m;
			e = map_str(d, sel, GF_LABEL_PRODUCT, &m);
			if (!e)
				e = check_str_map(d, sel);
			pop(d, o2);
			if (e)
				goto out;
			if (m)
				snprintf(p->model, sizeof(p->model), "%s", m);
			const cJSON *kv;
			cJSON_ArrayForEach(kv, sel)
			{
				if (!pack_kv(p->selector, sizeof(p->selector), &p->selector_len, kv->string,
					     kv->valuestring) && !p->invalid[0])
					snprintf(p->invalid, sizeof(p->invalid),
						 "spec.nodeSelector: more than %zu bytes are not supported by gpufleet",
						 sizeof(p->selector));
			}
		}
		if ((e = pod_tolerations(d, spec, p)))
			goto out;
		pod_affinity(spec, p);
		if (!p->model[0] && (e = affinity_model(d, spec, p->model, sizeof(p->model))))
			goto out;
		pop(d, o);
	}
	if (status) {
		o = push(d, "status");
		char phase[32] = "";
		if ((e = str_member(d, status, "phase", phase, sizeof(phase))))
			goto out;
		pop(d, o);
		p->phase = !strcmp(phase, "Running") ? GF_PHASE_RUNNING
			   : !strcmp(phase, "Succeeded") ? GF_PHASE_SUCCEEDED
			   : !strcmp(phase, "Failed") ? GF_PHASE_FAILED
			   : !strcmp(phase, "Unknown") ? GF_PHASE_UNKNOWN : GF_PHASE_PENDING;
	}

	{
		char id[GF_K8S_SERVED_MAX];
		size_t len = gf_k8s_served_identity(obj, id, sizeof(id));
		p->req.served_model = gf_served_model_key(id, len);
	}

	/* Annotations may carry the GPU request too (they win over resources). */
	if (ann) {
		o = push(d, "metadata.annotations");
		bool f;
		int64_t v;
		const char *ms;
		if ((e = map_str(d, ann, GF_RES_MILLI, &ms)) || (ms && (e = milli_text(d, GF_RES_MILLI, ms, &v))))
			goto out;
		if (ms)
			tot.milli = v, tot.has_milli = true, tot.milli_text = ms;
		if ((e = ann_int(d, ann, GF_RES_GPU_MEM, &v, &f)))
			goto out;
		if (f)
			tot.gmem = v, tot.has_gmem = true;
		if ((e = ann_int(d, ann, GF_RES_COUNT, &v, &f)))
			goto out;
		if (f)
			tot.count = v, tot.has_count = true;
		const char *m;
		if ((e = map_str(d, ann, GF_ANN_MODEL, &m)))
			goto out;
		if (m)
			snprintf(p->model, sizeof(p->model), "%s", m);
		pop(d, o);

		/* The assignment (malformed = absent: the pod is then re-read as unassigned). */
		const char *an = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ann, GF_ANN_NODE));
		const char *ag = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ann, GF_ANN_GPUS));
		const char *am = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ann, GF_ANN_AMILLI));
		const char *amem = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ann, GF_ANN_AMEM));
		int mm;
		if (an && ag && am && strlen(an) < sizeof(p->assigned_node)) {
			if (gf_gpu_milli_parse(am, strlen(am), &mm) == GF_OK &&
			    parse_gpu_list(ag, p->assigned_gpus, &p->assigned_ngpus)) {
				p->assigned = true;
				p->assigned_milli = mm;
				snprintf(p->assigned_node, sizeof(p->assigned_node), "%s", an);
				p->assigned_mem_mib = amem ? strtoll(amem, NULL, 10) : 0;
			}
		}
	}

	/* The request. */
	p->req.cpu_milli = tot.cpu;
	p->req.mem_mib = (tot.mem_bytes_milli + 1048576000LL - 1) / 1048576000LL;
	bool share = tot.has_milli || tot.has_gmem;
	if (tot.has_gpu && share && !p->invalid[0])
		snprintf(p->invalid, sizeof(p->invalid),
			 "asks both whole GPUs (" GF_RES_GPU ") and a GPU share (" GF_RES_MILLI
			 " or " GF_RES_GPU_MEM "); ask one");
	if (tot.has_gpu) {
		p->req.gpu_count = (int)(tot.gpu > 1000000 ? 1000000 : tot.gpu < -1 ? -1 : tot.gpu);
		p->req.gpu_milli = GF_MILLI_PER_GPU;
	} else if (share) {
		p->req.gpu_count = tot.has_count ? (int)(tot.count > 1000000 ? 1000000 : tot.count < -1 ? -1 : tot.count) : 1;
		p->req.gpu_milli = tot.has_milli ? (int)(tot.milli > 1000000 ? 1000000 : tot.milli < -1 ? -1 : tot.milli) : 0;
		p->milli_given = tot.has_milli;
		p->req.gpu_mem_mib = tot.has_gmem ? tot.gmem : 0;
		if (!p->invalid[0] && tot.has_milli && (tot.milli < 1 || tot.milli > GF_MILLI_PER_GPU))
			snprintf(p->invalid, sizeof(p->invalid),
				 GF_RES_MILLI " must be 1..1000 (thousandths of one GPU), got \"%.24s%s\"",
				 tot.milli_text ? tot.milli_text : "?",
				 tot.milli_text && strlen(tot.milli_text) > 24 ? "..." : "");
		if (!p->invalid[0] && tot.has_gmem && tot.gmem < 1)
			snprintf(p->invalid, sizeof(p->invalid),
				 GF_RES_GPU_MEM " must be >= 1 (MiB per GPU), got %lld", (long long)tot.gmem);
		if (!p->invalid[0] && !tot.has_milli)
			p->req.gpu_milli = GF_MILLI_PER_GPU; /* memory-only: the caller converts */
	}
	if (!p->invalid[0] && (p->req.gpu_count < 0 || (share && p->req.gpu_count < 1)))
		snprintf(p->invalid, sizeof(p->invalid), "GPU count must be >= %d, got %d",
			 share ? 1 : 0, p->req.gpu_count);
	if (!p->invalid[0] && p->req.gpu_count > GF_MAX_GPUS)
		snprintf(p->invalid, sizeof(p->invalid),
			 "asks %d GPUs; no node can have more than %d", p->req.gpu_count, GF_MAX_GPUS);
	if (!p->invalid[0] && (p->req.cpu_milli < 0 || p->req.mem_mib < 0))
		snprintf(p->invalid, sizeof(p->invalid), "negative CPU or memory request");
	if (p->invalid[0]) {
		p->req.gpu_count = 0;
		p->req.gpu_milli = 0;
		p->req.gpu_mem_mib = 0;
	}
	if (p->req.gpu_count == 0)
		p->req.gpu_milli = 0;
	return GF_OK;
out:
	return e;
}

gf_err gf_k8s_pod_decode(const cJSON *obj, struct gf_k8s_pod *out, char *err, size_t errlen)
{
	struct dec d = { .err = err, .errlen = errlen };
	return pod_decode(&d, obj, out);
}

/* ---- pod groups ------------------------------------------------------- */

/* An optional int32 member in lo..INT32_MAX (0 when absent). */
static gf_err int32_member(struct dec *d, const cJSON *obj, const char *key, int32_t lo, int32_t *out)
{
	const cJSON *v;
	*out = 0;
	gf_err e = member(d, obj, key, cJSON_Number, &v);
	if (e || !v)
		return e;
	double x = v->valuedouble;
	if (!(x >= lo && x <= 2147483647.0) || x != (double)(int64_t)x) {
		size_t o = push_key(d, key);
		e = fail(d, "expected a whole number %d..2147483647, got %g", (int)lo, x);
		pop(d, o);
		return e;
	}
	*out = (int32_t)x;
	return GF_OK;
}

/* metadata of a group: ns (default "default"), name (required), uid, rv. */
static gf_err group_meta(struct dec *d, const cJSON *md, struct gf_k8s_podgroup *g)
{
	if (!md)
		return fail(d, "a PodGroup needs metadata");
	size_t o = push(d, "metadata");
	gf_err e;
	if ((e = str_member(d, md, "namespace", g->ns, sizeof(g->ns))) ||
	    (e = str_member(d, md, "name", g->name, sizeof(g->name))) ||
	    (e = str_member(d, md, "uid", g->uid, sizeof(g->uid))) ||
	    (e = str_member(d, md, "resourceVersion", g->rv, sizeof(g->rv))))
		return e;
	if (!g->name[0])
		return fail(d, "a PodGroup needs metadata.name");
	pop(d, o);
	if (!g->ns[0])
		snprintf(g->ns, sizeof(g->ns), "default");
	return GF_OK;
}

static gf_err podgroup_decode(struct dec *d, const cJSON *obj, struct gf_k8s_podgroup *g)
{
	memset(g, 0, sizeof(*g));
	if (!cJSON_IsObject(obj))
		return fail(d, "expected a PodGroup object, got %s", type_name(obj));
	const cJSON *md, *spec, *status;
	gf_err e;
	if ((e = member(d, obj, "metadata", cJSON_Object, &md)) ||
	    (e = member(d, obj, "spec", cJSON_Object, &spec)) ||
	    (e = member(d, obj, "status", cJSON_Object, &status)) || (e = group_meta(d, md, g)))
		return e;
	size_t o;
	if (spec) {
		o = push(d, "spec");
		if ((e = int32_member(d, spec, "minMember", 1, &g->min_member)) ||
		    (e = int32_member(d, spec, "scheduleTimeoutSeconds", 1, &g->timeout_s)))
			return e;
		pop(d, o);
	}
	if (status) {
		o = push(d, "status");
		if ((e = str_member(d, status, "phase", g->phase, sizeof(g->phase))))
			return e;
		pop(d, o);
	}
	return GF_OK;
}

gf_err gf_k8s_podgroup_decode(const cJSON *obj, struct gf_k8s_podgroup *out, char *err, size_t errlen)
{
	struct dec d = { .err = err, .errlen = errlen };
	return podgroup_decode(&d, obj, out);
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

/* ---- Workload API PodGroups (scheduling.k8s.io/v1alpha2) ---------------- */

/* spec.schedulingPolicy: exactly one of gang {minCount >= 1} and basic {}. */
static gf_err wl_policy(struct dec *d, const cJSON *spec, struct gf_k8s_podgroup *g)
{
	const cJSON *pol, *gang, *basic;
	gf_err e;
	if ((e = member(d, spec, "schedulingPolicy", cJSON_Object, &pol)))
		return e;
	if (!pol)
		return fail(d, "needs schedulingPolicy (gang or basic)");
	size_t o = push(d, ".schedulingPolicy");
	if ((e = member(d, pol, "gang", cJSON_Object, &gang)) || (e = member(d, pol, "basic", cJSON_Object, &basic)))
		return e;
	if (!gang == !basic)
		return fail(d, "expected exactly one of gang and basic");
	if (basic) {
		g->basic = true;
		g->min_member = 1;
	} else {
		size_t o2 = push(d, ".gang");
		if ((e = int32_member(d, gang, "minCount", 1, &g->min_member)))
			return e;
		if (!g->min_member)
			return fail(d, "needs minCount");
		pop(d, o2);
	}
	pop(d, o);
	return GF_OK;
}

/* spec.podGroupTemplateRef.workload {workloadName, podGroupTemplateName}, optional. */
static gf_err wl_template_ref(struct dec *d, const cJSON *spec, struct gf_k8s_podgroup *g)
{
	const cJSON *ref, *wl;
	gf_err e;
	if ((e = member(d, spec, "podGroupTemplateRef", cJSON_Object, &ref)) || !ref)
		return e;
	size_t o = push(d, ".podGroupTemplateRef");
	if ((e = member(d, ref, "workload", cJSON_Object, &wl)))
		return e;
	if (wl) {
		size_t o2 = push(d, ".workload");
		if ((e = str_member(d, wl, "workloadName", g->workload, sizeof(g->workload))) ||
		    (e = str_member(d, wl, "podGroupTemplateName", g->template_name, sizeof(g->template_name))))
			return e;
		pop(d, o2);
	}
	pop(d, o);
	return GF_OK;
}

/* status.conditions[type=PodGroupScheduled]: "Scheduled" if True, else its reason. */
static gf_err wl_status(struct dec *d, const cJSON *status, struct gf_k8s_podgroup *g)
{
	const cJSON *conds, *c;
	gf_err e;
	if ((e = member(d, status, "conditions", cJSON_Array, &conds)) || !conds)
		return e;
	int i = 0;
	cJSON_ArrayForEach(c, conds)
	{
		size_t o = push(d, ".conditions[%d]", i++);
		if (!cJSON_IsObject(c))
			return fail(d, "expected an object, got %s", type_name(c));
		char type[64] = "", st[16] = "", reason[sizeof(g->phase)] = "";
		if ((e = str_member(d, c, "type", type, sizeof(type))) ||
		    (e = str_member(d, c, "status", st, sizeof(st))) ||
		    (e = str_member(d, c, "reason", reason, sizeof(reason))))
			return e;
		pop(d, o);
		if (strcmp(type, "PodGroupScheduled"))
			continue;
		snprintf(g->phase, sizeof(g->phase), "%s",
			 !strcmp(st, "True") ? "Scheduled" : reason[0] ? reason : "NotScheduled");
	}
	return GF_OK;
}

static gf_err wl_podgroup_decode(struct dec *d, const cJSON *obj, struct gf_k8s_podgroup *g)
{
	memset(g, 0, sizeof(*g));
	g->api = GF_GANG_WORKLOAD;
	if (!cJSON_IsObject(obj))
		return fail(d, "expected a PodGroup object, got %s", type_name(obj));
	const cJSON *md, *spec, *status;
	gf_err e;
	if ((e = member(d, obj, "metadata", cJSON_Object, &md)) ||
	    (e = member(d, obj, "spec", cJSON_Object, &spec)) ||
	    (e = member(d, obj, "status", cJSON_Object, &status)) || (e = group_meta(d, md, g)))
		return e;
	if (!spec)
		return fail(d, "a PodGroup needs spec.schedulingPolicy");
	size_t o = push(d, "spec");
	if ((e = wl_policy(d, spec, g)) || (e = wl_template_ref(d, spec, g)))
		return e;
	pop(d, o);
	if (status) {
		o = push(d, "status");
		if ((e = wl_status(d, status, g)))
			return e;
		pop(d, o);
	}
	return GF_OK;
}

gf_err gf_k8s_wl_podgroup_decode(const cJSON *obj, struct gf_k8s_podgroup *out, char *err, size_t errlen)
{
	struct dec d = { .err = err, .errlen = errlen };
	return wl_podgroup_decode(&d, obj, out);
}

gf_err gf_k8s_wl_podgroup_decode_text(const char *text, size_t len, struct gf_k8s_podgroup *out, char *err,
				      size_t errlen)
{
	return decode_text(text, len, dec_wl_podgroup, "not JSON", out, sizeof(*out), err, errlen);
}

/* ---- nodes ------------------------------------------------------------- */

gf_err gf_k8s_topology_decode(const char *text, struct gf_k8s_node *n, char *err, size_t errlen)
{
	struct dec d = { .err = err, .errlen = errlen };
	cJSON *doc = cJSON_Parse(text);
	gf_err e = GF_OK;
	int ngpu = n->spec.ngpus;
	int8_t numa[GF_MAX_GPUS], island[GF_MAX_GPUS];
	char uuids[GF_MAX_GPUS][GF_K8S_UUID_MAX];
	memset(uuids, 0, sizeof(uuids));
	for (int g = 0; g < GF_MAX_GPUS; g++)
		numa[g] = island[g] = -1;
	if (!doc) {
		e = fail(&d, "not JSON");
		goto out;
	}
	const cJSON *gpus, *topo = NULL, *links = NULL;
	if ((e = member(&d, doc, "gpus", cJSON_Array, &gpus)) ||
	    (e = member(&d, doc, "topology", cJSON_Object, &topo)))
		goto out;
	if (topo && (e = member(&d, topo, "links", cJSON_Array, &links)))
		goto out;
	int i = 0;
	const cJSON *g;
	cJSON_ArrayForEach(g, gpus)
	{
		size_t o = push(&d, "gpus[%d]", i);
		const cJSON *idx = cJSON_GetObjectItemCaseSensitive(g, "index");
		const cJSON *nn = cJSON_GetObjectItemCaseSensitive(g, "numa_node");
		const char *uuid = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(g, "uuid"));
		int k = cJSON_IsNumber(idx) ? idx->valueint : i;
		if (k < 0 || k >= GF_MAX_GPUS) {
			e = fail(&d, "index %d out of range 0..%d", k, GF_MAX_GPUS - 1);
			pop(&d, o);
			goto out;
		}
		if (cJSON_IsNumber(nn) && nn->valuedouble >= 0 && nn->valuedouble < 127)
			numa[k] = (int8_t)nn->valueint;
		if (uuid && strlen(uuid) < GF_K8S_UUID_MAX)
			snprintf(uuids[k], GF_K8S_UUID_MAX, "%s", uuid);
		pop(&d, o);
		i++;
	}
	/* Islands: connected components of the NVLink graph (links[i][j] > 0). */
	int nl = cJSON_GetArraySize(links);
	if (nl > GF_MAX_GPUS)
		nl = GF_MAX_GPUS;
	uint32_t adj[GF_MAX_GPUS] = { 0 };
	for (int a = 0; a < nl; a++) {
		const cJSON *row = cJSON_GetArrayItem(links, a);
		int nr = cJSON_GetArraySize(row);
		for (int b = 0; b < nr && b < GF_MAX_GPUS; b++) {
			const cJSON *x = cJSON_GetArrayItem(row, b);
			if (a != b && cJSON_IsNumber(x) && x->valuedouble > 0)
				adj[a] |= 1u << b, adj[b] |= 1u << a;
		}
	}
	int8_t next = 0;
	for (int a = 0; a < nl; a++) {
		if (island[a] >= 0 || !adj[a])
			continue;
		uint32_t comp = 1u << a, grow;
		do {
			grow = comp;
			for (int b = 0; b < GF_MAX_GPUS; b++)
				if ((comp >> b) & 1)
					grow |= adj[b];
			if (grow == comp)
				break;
			comp = grow;
		} while (1);
		for (int b = 0; b < GF_MAX_GPUS; b++)
			if ((comp >> b) & 1)
				island[b] = next;
		next++;
	}
	for (int k = 0; k < GF_MAX_GPUS; k++) {
		n->spec.topo[k].numa = k < ngpu ? numa[k] : -1;
		n->spec.topo[k].nvlink_island = k < ngpu ? island[k] : -1;
	}
	n->nuuids = 0;
	if (i >= ngpu && ngpu > 0) {
		bool all = true;
		for (int k = 0; k < ngpu; k++)
			all &= uuids[k][0] != '\0';
		if (all) {
			memcpy(n->uuids, uuids, sizeof(uuids));
			n->nuuids = ngpu;
		}
	}
out:
	cJSON_Delete(doc);
	return e;
}

/*
 * GF_ANN_MODELS_SEEN: served model identities, comma separated, the most
 * recent first; the first GF_SERVED_SEEN_MAX non-empty ones are kept (as
 * keys), the rest ignored.  A hint, never an error: any text is accepted.
 */
static void served_seen(const char *list, struct gf_k8s_node *n)
{
	int k = 0;

	while (list && *list && k < GF_SERVED_SEEN_MAX) {
		size_t len = strcspn(list, ",");
		uint64_t key = gf_served_model_key(list, len);

		if (key)
			n->spec.served_seen[k++] = key;
		list += len + (list[len] == ',');
	}
}

gf_err gf_k8s_node_decode(const cJSON *obj, struct gf_k8s_node *n, char *err, size_t errlen)
{
	struct dec d = { .err = err, .errlen = errlen };
	memset(n, 0, sizeof(*n));
	n->spec.model = -1;
	for (int g = 0; g < GF_MAX_GPUS; g++)
		n->spec.topo[g] = (struct gf_gpu_topo){ -1, -1 };
	if (!cJSON_IsObject(obj))
		return fail(&d, "expected a Node object, got %s", type_name(obj));
	const cJSON *md, *spec, *status, *labels = NULL, *ann = NULL, *alloc = NULL, *conds = NULL;
	gf_err e;
	if ((e = member(&d, obj, "metadata", cJSON_Object, &md)) ||
	    (e = member(&d, obj, "spec", cJSON_Object, &spec)) ||
	    (e = member(&d, obj, "status", cJSON_Object, &status)))
		return e;
	if (!md)
		return fail(&d, "a Node needs metadata");
	size_t o = push(&d, "metadata");
	if ((e = str_member(&d, md, "name", n->name, sizeof(n->name))) ||
	    (e = str_member(&d, md, "resourceVersion", n->rv, sizeof(n->rv))) ||
	    (e = member(&d, md, "labels", cJSON_Object, &labels)) ||
	    (e = member(&d, md, "annotations", cJSON_Object, &ann)))
		return e;
	if (!n->name[0])
		return fail(&d, "a Node needs metadata.name");
	size_t o2 = push(&d, ".labels");
	if (labels && (e = check_str_map(&d, labels)))
		return e;
	pop(&d, o2);
	o2 = push(&d, ".annotations");
	if (ann && (e = check_str_map(&d, ann)))
		return e;
	pop(&d, o2);
	pop(&d, o);
	served_seen(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ann, GF_ANN_MODELS_SEEN)), n);
	snprintf(n->spec.name, sizeof(n->spec.name), "%.*s", GF_NAME_MAX - 1, n->name);
	const char *model = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(labels, GF_LABEL_PRODUCT));
	if (!model)
		model = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(labels, "gpufleet.io/gpu.product"));
	if (model)
		snprintf(n->model, sizeof(n->model), "%.*s", GF_NAME_MAX - 1, model);
	const char *gmem = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(labels, GF_LABEL_GPU_MEM));
	if (gmem) {
		char *end;
		long long v = strtoll(gmem, &end, 10);
		if (end != gmem && !*end && v > 0)
			n->spec.gpu_mem_mib = v;
	}
	const cJSON *kv;
	cJSON_ArrayForEach(kv, labels)
	{
		if (!pack_kv(n->labels, sizeof(n->labels), &n->labels_len, kv->string, kv->valuestring))
			n->labels_truncated = true;
	}
	if (spec) {
		const cJSON *u = cJSON_GetObjectItemCaseSensitive(spec, "unschedulable");
		n->unschedulable = cJSON_IsTrue(u);
		const cJSON *taints = cJSON_GetObjectItemCaseSensitive(spec, "taints"), *t;
		if (!cJSON_IsArray(taints))
			taints = NULL;
		cJSON_ArrayForEach(t, taints)
		{
			uint8_t ef;
			const char *key = obj_str(t, "key"), *val = obj_str(t, "value");
			bool ok = effect_of(obj_str(t, "effect"), &ef);
			if (ok && (ef == GF_EFFECT_PREFER_NO_SCHEDULE || ef == GF_EFFECT_ANY))
				continue; /* preferences do not filter */
			struct gf_taint *dst = &n->taints[n->ntaints < GF_K8S_MAX_TAINTS ? n->ntaints
										    : GF_K8S_MAX_TAINTS - 1];
			if (!ok || n->ntaints == GF_K8S_MAX_TAINTS || strlen(key) >= GF_K8S_KEY_MAX ||
			    strlen(val) >= GF_K8S_VAL_MAX) {
				/* Cannot be represented: only a pod tolerating everything passes. */
				snprintf(dst->key, sizeof(dst->key), "gpufleet.io/unrepresentable-taint");
				dst->value[0] = '\0';
				dst->effect = GF_EFFECT_NO_SCHEDULE;
				n->ntaints = GF_K8S_MAX_TAINTS;
				continue;
			}
			snprintf(dst->key, sizeof(dst->key), "%s", key);
			snprintf(dst->value, sizeof(dst->value), "%s", val);
			dst->effect = ef;
			n->ntaints++;
		}
	}
	if (status) {
		o = push(&d, "status");
		if ((e = member(&d, status, "allocatable", cJSON_Object, &alloc)) ||
		    (e = member(&d, status, "conditions", cJSON_Array, &conds)))
			return e;
		if (alloc) {
			o2 = push(&d, ".allocatable");
			bool f;
			int64_t v;
			if ((e = quantity(&d, alloc, "cpu", &v, &f)))
				return e;
			n->spec.cpu_milli = f ? v : 0;
			if ((e = quantity(&d, alloc, "memory", &v, &f)))
				return e;
			n->spec.mem_mib = f ? v / 1048576000LL : 0;
			if ((e = quantity(&d, alloc, "pods", &v, &f)))
				return e;
			n->max_pods = f && v > 0 ? v / 1000 : 0;
			if ((e = quantity(&d, alloc, GF_RES_GPU, &v, &f)))
				return e;
			if (f) {
				if (v < 0 || v % 1000) {
					size_t o3 = push_key(&d, GF_RES_GPU);
					e = fail(&d, "expected a whole number >= 0");
					pop(&d, o3);
					return e;
				}
				v /= 1000;
				n->capped = v > GF_MAX_GPUS;
				n->spec.ngpus = (int)(v > GF_MAX_GPUS ? GF_MAX_GPUS : v);
			}
			pop(&d, o2);
		}
		const cJSON *c;
		cJSON_ArrayForEach(c, conds)
		{
			const char *t = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "type"));
			const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "status"));
			if (t && s && !strcmp(t, "Ready"))
				n->ready = !strcmp(s, "True");
		}
		pop(&d, o);
	}
	if (n->spec.cpu_milli < 0)
		n->spec.cpu_milli = 0;
	if (n->spec.mem_mib < 0)
		n->spec.mem_mib = 0;
	const char *topo = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ann, GF_ANN_TOPOLOGY));
	if (topo && n->spec.ngpus > 0) {
		char terr[160];
		if (gf_k8s_topology_decode(topo, n, terr, sizeof(terr)))
			snprintf(n->topo_err, sizeof(n->topo_err), "%s: %.120s", GF_ANN_TOPOLOGY, terr);
	}
	return GF_OK;
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
