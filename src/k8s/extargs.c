/*
 * k8s/extargs.c - the extender's request body (ExtenderArgs) decoded.
 *
 * kube-scheduler sends {"Pod": {...}, "Nodes": null, "NodeNames": [5,000
 * names]} for every pod; building a cJSON tree of 5,000 strings twice per pod
 * costs more than the decision.  The fast path walks the body with a small
 * JSON skipper (strings with escapes, nesting; no allocation), parses only
 * the Pod with cJSON, and points the names into one copy of the body.
 * Anything it does not expect (Node objects, escapes in names, odd shapes)
 * goes to the full parser, which also words the errors.  Keys match
 * case-insensitively, as Go's decoder does.  Cost: one pass over the body.
 */
#include "k8s/extargs.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define BAD(...) (snprintf(msg, msglen, __VA_ARGS__))

static const cJSON *get_ci(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItem(o, k); /* case-insensitive, like Go's decoder */
}

/* Append s as a JSON string (quotes, escapes). */
bool gf_json_plain(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x20 || c == '"' || c == '\\')
			return false;
	}
	return true;
}

void gf_json_put_str(struct gf_obuf *o, const char *s)
{
	size_t len = strlen(s);
	char buf[256];
	if (len + 2 <= sizeof(buf) && gf_json_plain(s, len)) { /* the common case: one append */
		buf[0] = '"';
		memcpy(buf + 1, s, len);
		buf[len + 1] = '"';
		gf_obuf_append(o, buf, len + 2);
		return;
	}
	gf_obuf_append(o, "\"", 1);
	const char *run = s;
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		gf_obuf_append(o, run, (size_t)(s - run));
		char esc[8];
		if (c == '"' || c == '\\')
			snprintf(esc, sizeof(esc), "\\%c", c);
		else
			snprintf(esc, sizeof(esc), "\\u%04x", c);
		gf_obuf_puts(o, esc);
		run = s + 1;
	}
	gf_obuf_append(o, run, (size_t)(s - run));
	gf_obuf_append(o, "\"", 1);
}

void gf_ext_args_release(struct gf_ext_args *a)
{
	cJSON_Delete(a->doc);
	free(a->copy);
	free(a->names);
	memset(a, 0, sizeof(*a));
}

/* ---- a JSON skipper for the fast path: no allocation, no unescaping ---- */

static const char *ws(const char *p, const char *e)
{
	while (p < e && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

static const char *skip_str(const char *p, const char *e)
{
	for (p++; p < e; p++) {
		if (*p == '\\')
			p++;
		else if (*p == '"')
			return p + 1;
	}
	return NULL;
}

static const char *skip_value(const char *p, const char *e)
{
	p = ws(p, e);
	if (p >= e)
		return NULL;
	if (*p == '"')
		return skip_str(p, e);
	if (*p == '{' || *p == '[') {
		int depth = 0;
		for (; p < e; p++) {
			if (*p == '"') {
				if (!(p = skip_str(p, e)))
					return NULL;
				p--;
			} else if (*p == '{' || *p == '[') {
				depth++;
			} else if ((*p == '}' || *p == ']') && --depth == 0) {
				return p + 1;
			}
		}
		return NULL;
	}
	while (p < e && *p != ',' && *p != '}' && *p != ']' && *p != ' ' && *p != '\n' && *p != '\r' && *p != '\t')
		p++;
	return p;
}

static bool key_is(const char *k, size_t n, const char *want)
{
	return strlen(want) == n && !strncasecmp(k, want, n); /* Go decodes keys case-insensitively */
}

/*
 * Fast path for the common request (NodeNames, Nodes null): find the Pod and
 * NodeNames spans with the skipper, parse only the Pod with cJSON, point the
 * names into a copy of the body.  false: use the full parser.
 */
static bool ext_args_fast(const char *body, size_t len, struct gf_ext_args *a, const char **pod,
			  size_t *podlen)
{
	const char *b = body, *e = b + len, *p = ws(b, e);
	const char *nn = NULL, *nne = NULL;
	*pod = NULL;
	if (p >= e || *p != '{')
		return false;
	for (p = ws(p + 1, e); p < e && *p != '}';) {
		if (*p != '"')
			return false;
		const char *k = p + 1, *ke = skip_str(p, e);
		if (!ke)
			return false;
		p = ws(ke, e);
		if (p >= e || *p != ':')
			return false;
		const char *v = ws(p + 1, e), *ve = skip_value(v, e);
		if (!ve)
			return false;
		size_t kl = (size_t)(ke - 1 - k);
		if (key_is(k, kl, "Pod"))
			*pod = v, *podlen = (size_t)(ve - v);
		else if (key_is(k, kl, "NodeNames"))
			nn = v, nne = ve;
		else if (key_is(k, kl, "Nodes") && !(ve - v == 4 && !memcmp(v, "null", 4)))
			return false; /* Node objects: the full parser */
		p = ws(ve, e);
		if (p < e && *p == ',')
			p = ws(p + 1, e);
	}
	if (!*pod || !nn || *nn != '[')
		return false;
	a->copy = malloc(len + 1);
	size_t cap = (size_t)(nne - nn) / 3 + 1;
	a->names = malloc(cap * sizeof(*a->names));
	if (!a->copy || !a->names)
		return false;
	memcpy(a->copy, b, len);
	a->copy[len] = '\0';
	char *q = a->copy + (nn - b) + 1, *qe = a->copy + (nne - b) - 1;
	for (;;) {
		while (q < qe && (*q == ' ' || *q == ',' || *q == '\n' || *q == '\r' || *q == '\t'))
			q++;
		if (q >= qe)
			break;
		if (*q != '"' || a->n == cap)
			return false;
		char *end = memchr(q + 1, '"', (size_t)(qe - q - 1));
		if (!end || memchr(q + 1, '\\', (size_t)(end - q - 1)))
			return false; /* escapes: the full parser */
		*end = '\0';
		a->names[a->n++] = q + 1;
		q = end + 1;
	}
	return true;
}

/* Parse ExtenderArgs: the pod and the node names (from NodeNames or Nodes.items). */
gf_err gf_ext_args_parse(const char *body, size_t len, struct gf_ext_args *a, struct gf_k8s_pod *p,
			 char *msg, size_t msglen)
{
	memset(a, 0, sizeof(*a));
	char err[300];
	const char *podtext = NULL;
	size_t podlen = 0;
	if (ext_args_fast(body, len, a, &podtext, &podlen)) {
		a->doc = cJSON_ParseWithLength(podtext, podlen);
		if (!cJSON_IsObject(a->doc)) {
			BAD("Pod: expected an object");
			return GF_PARSE;
		}
		if (gf_k8s_pod_decode(a->doc, p, err, sizeof(err))) {
			BAD("Pod.%s", err);
			return GF_PARSE;
		}
		return GF_OK;
	}
	gf_ext_args_release(a);
	a->doc = cJSON_ParseWithLength(body, len);
	if (!a->doc || !cJSON_IsObject(a->doc)) {
		BAD("the body is not a JSON object (ExtenderArgs)");
		return GF_PARSE;
	}
	const cJSON *pod = get_ci(a->doc, "Pod");
	if (!cJSON_IsObject(pod)) {
		BAD("Pod: expected an object");
		return GF_PARSE;
	}
	if (gf_k8s_pod_decode(pod, p, err, sizeof(err))) {
		BAD("Pod.%s", err);
		return GF_PARSE;
	}
	const cJSON *nn = get_ci(a->doc, "NodeNames");
	const cJSON *nodes = get_ci(a->doc, "Nodes");
	const cJSON *src = NULL;
	if (cJSON_IsArray(nn)) {
		src = nn;
	} else if (cJSON_IsObject(nodes)) {
		a->items = cJSON_GetObjectItem(nodes, "items");
		if (a->items && !cJSON_IsArray(a->items)) {
			BAD("Nodes.items: expected an array");
			return GF_PARSE;
		}
		src = a->items;
	} else if ((nn && !cJSON_IsNull(nn)) || (nodes && !cJSON_IsNull(nodes))) {
		BAD("NodeNames: expected an array, Nodes: expected a NodeList");
		return GF_PARSE;
	}
	int cnt = cJSON_GetArraySize(src);
	a->names = calloc(cnt ? (size_t)cnt : 1, sizeof(*a->names));
	if (!a->names) {
		snprintf(msg, msglen, "out of memory");
		return GF_NOMEM;
	}
	const cJSON *it;
	int i = 0;
	cJSON_ArrayForEach(it, src)
	{
		const char *s = src == nn ? cJSON_GetStringValue(it)
					  : cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(it, "metadata"), "name"));
		if (!s) {
			BAD("%s[%d]: expected a %s", src == nn ? "NodeNames" : "Nodes.items", i,
				    src == nn ? "string" : "Node with metadata.name");
			return GF_PARSE;
		}
		a->names[i++] = s;
	}
	a->n = (size_t)i;
	return GF_OK;
}
