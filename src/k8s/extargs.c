/*
 * k8s/extargs.c - the extender's request body (ExtenderArgs) decoded.
 *
 * kube-scheduler sends {"Pod": {...}, "Nodes": null, "NodeNames": [5,000
 * names]} for every pod; building a cJSON tree of 5,000 strings twice per pod
 * costs more than the decision.  The fast path walks the body with a small
 * JSON skipper (strings with escapes, nesting; no allocation), parses only
 * the Pod with cJSON, and points the names into the body (pointer and
 * length, no copy); names are read 8 bytes at a time.  Anything it does not
 * expect (Node objects, escapes in names, odd shapes) goes to the full
 * parser, which also words the errors.  Keys match case-insensitively, as
 * Go's decoder does.  Cost: one pass over the body.
 *
 * Both paths accept exactly the bodies that are JSON by RFC 8259 (UTF-8,
 * escapes, numbers, no trailing commas or bytes after the object, at most
 * JSON_MAX_DEPTH levels) and that cJSON accepts: the skipper validates
 * what it skips (the Pod, unknown members, each Node object it may send
 * back as it came), names on the fast path are plain ASCII (anything else
 * goes to the full parser), and the full parser runs the same validator
 * before cJSON.  So nothing the fast path echoes (the NodeNames array, a
 * Node object) can be invalid JSON, and an invalid body is a 400 on both
 * paths.  fuzz/fuzz_k8s_extargs.c checks the fast path against cJSON.
 */
#include "k8s/extargs.h"
#include "core/grow.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define BAD(...) (snprintf(msg, msglen, __VA_ARGS__))

static const cJSON *get_ci(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItem(o, k); /* case-insensitive, like Go's decoder */
}

/* Does s[0..n) need no escaping inside a JSON string? */
static bool json_plain(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x20 || c == '"' || c == '\\')
			return false;
	}
	return true;
}

/* Append s[0..len) as a JSON string (quotes, escapes). */
static void put_strn(struct gf_obuf *o, const char *s, size_t len)
{
	char buf[256];
	if (len + 2 <= sizeof(buf) && json_plain(s, len)) { /* the common case: one append */
		buf[0] = '"';
		memcpy(buf + 1, s, len);
		buf[len + 1] = '"';
		gf_obuf_append(o, buf, len + 2);
		return;
	}
	gf_obuf_append(o, "\"", 1);
	const char *run = s, *e = s + len;
	for (; s < e; s++) {
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

void gf_json_put_str(struct gf_obuf *o, const char *s)
{
	put_strn(o, s, strlen(s));
}

void gf_ext_put_name(struct gf_obuf *o, const struct gf_ext_args *a, size_t i, const char *pre,
		     const char *post)
{
	char buf[320];
	size_t pl = strlen(pre), sl = strlen(post), nl = a->lens[i];
	if (pl + nl + sl + 2 > sizeof(buf) || (!a->plain && !json_plain(a->names[i], nl))) {
		gf_obuf_append(o, pre, pl);
		put_strn(o, a->names[i], nl);
		gf_obuf_append(o, post, sl);
		return;
	}
	memcpy(buf, pre, pl);
	buf[pl] = '"';
	memcpy(buf + pl + 1, a->names[i], nl);
	buf[pl + 1 + nl] = '"';
	memcpy(buf + pl + 2 + nl, post, sl);
	gf_obuf_append(o, buf, pl + nl + sl + 2);
}

/*
 * The bulk writers: plain names are copied straight into the buffer, a
 * word at a time (names are short; a memcpy call per name showed in
 * profiles), into room reserved with 8 bytes of slack for the last word.
 */
static char *put_plain(char *w, const char *s, size_t n)
{
	if (n < 8) {
		memcpy(w, s, n);
		return w + n;
	}
	for (size_t i = 0; i + 8 < n; i += 8)
		memcpy(w + i, s + i, 8);
	memcpy(w + n - 8, s + n - 8, 8); /* the last word, overlapping: no byte loop */
	return w + n;
}

void gf_ext_put_names(struct gf_obuf *o, const struct gf_ext_args *a, const char *const *skip)
{
	size_t need = 8;
	for (size_t i = 0; i < a->n; i++)
		need += a->lens[i] + 3;
	char *w = a->plain ? gf_obuf_space(o, need) : NULL, *w0 = w;
	bool first = true;
	for (size_t i = 0; i < a->n; i++) {
		if (skip && skip[i])
			continue;
		if (!w) {
			gf_ext_put_name(o, a, i, first ? "" : ",", "");
		} else {
			memcpy(w, ",\"", 2); /* the comma dropped before the first */
			w += 2 - first;
			if (first)
				w[-1] = '"';
			w = put_plain(w, a->names[i], a->lens[i]);
			*w++ = '"';
		}
		first = false;
	}
	if (w)
		gf_obuf_commit(o, (size_t)(w - w0));
}

void gf_ext_put_priorities(struct gf_obuf *o, const struct gf_ext_args *a, const int64_t *scores)
{
	static const char host[17] = ",{\"Host\":\"", score[16] = "\",\"Score\":";
	size_t need = 2 + 16;
	for (size_t i = 0; i < a->n; i++)
		need += a->lens[i] + 16 + 16 + 22;
	char *w = a->plain ? gf_obuf_space(o, need) : NULL, *w0 = w;
	bool first = true;
	if (!w) {
		gf_obuf_append(o, "[", 1);
		for (size_t i = 0; i < a->n; i++) {
			char sv[32];
			if (!scores[i])
				continue;
			snprintf(sv, sizeof(sv), ",\"Score\":%lld}", (long long)scores[i]);
			gf_ext_put_name(o, a, i, first ? "{\"Host\":" : ",{\"Host\":", sv);
			first = false;
		}
		gf_obuf_append(o, "]", 1);
		return;
	}
	*w++ = '[';
	for (size_t i = 0; i < a->n; i++) {
		if (!scores[i])
			continue; /* kube-scheduler adds nothing for a host it is not told about */
		memcpy(w, host + first, 16); /* fixed-size copies: the slack takes the excess */
		w += 10 - first;
		first = false;
		w = put_plain(w, a->names[i], a->lens[i]);
		memcpy(w, score, 16);
		w += 10;
		int64_t v = scores[i];
		if (v >= 0 && v <= 9) { /* the extender's scores are 0..10 */
			*w++ = (char)('0' + v);
		} else if (v == 10) {
			memcpy(w, "10", 2);
			w += 2;
		} else {
			uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
			char dig[20];
			int nd = 0;
			do
				dig[nd++] = (char)('0' + u % 10);
			while (u /= 10);
			if (v < 0)
				*w++ = '-';
			while (nd)
				*w++ = dig[--nd];
		}
		*w++ = '}';
	}
	*w++ = ']';
	gf_obuf_commit(o, (size_t)(w - w0));
}

void gf_ext_args_release(struct gf_ext_args *a)
{
	cJSON_Delete(a->doc);
	free(a->names_buf);
	free(a->lens_buf);
	free(a->item_buf);
	free(a->item_len_buf);
	memset(a, 0, sizeof(*a));
}

/* ---- a JSON skipper for the fast path: validates, no allocation, no unescaping ---- */

#define JSON_MAX_DEPTH 512

static const char *ws(const char *p, const char *e)
{
	while (p < e && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

/* Four hex digits at p into *u; false if not there. */
static bool hex4(const char *p, const char *e, unsigned *u)
{
	if (e - p < 4)
		return false;
	*u = 0;
	for (int i = 0; i < 4; i++) {
		char c = p[i];
		unsigned v = c >= '0' && c <= '9' ? (unsigned)(c - '0')
			     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
			     : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10) : 16u;
		if (v == 16)
			return false;
		*u = *u << 4 | v;
	}
	return true;
}

/* The length of the well-formed UTF-8 sequence at p (a byte >= 0x80), or 0. */
static size_t utf8_len(const char *p, const char *e)
{
	const unsigned char *u = (const unsigned char *)p;
	size_t n = u[0] >= 0xc2 && u[0] <= 0xdf ? 2 : u[0] >= 0xe0 && u[0] <= 0xef ? 3
		 : u[0] >= 0xf0 && u[0] <= 0xf4 ? 4 : 0;
	if (!n || (size_t)(e - p) < n)
		return 0;
	unsigned lo = 0x80, hi = 0xbf; /* the second byte: no overlongs, surrogates, or past U+10FFFF */
	if (u[0] == 0xe0)
		lo = 0xa0;
	else if (u[0] == 0xed)
		hi = 0x9f;
	else if (u[0] == 0xf0)
		lo = 0x90;
	else if (u[0] == 0xf4)
		hi = 0x8f;
	if (u[1] < lo || u[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (u[i] < 0x80 || u[i] > 0xbf)
			return 0;
	return n;
}

/*
 * The string at p ('"'): past its closing quote, or NULL (*bad: where)
 * for a control character, a bad escape (unknown, short \u, a lone
 * surrogate), bad UTF-8 or no end.
 */
static const char *skip_str(const char *p, const char *e, const char **bad)
{
	for (p++; p < e;) {
		unsigned char c = (unsigned char)*p;
		if (c == '"')
			return p + 1;
		if (c >= 0x20 && c < 0x80 && c != '\\') {
			p++;
			continue;
		}
		*bad = p;
		if (c < 0x20)
			return NULL;
		if (c >= 0x80) {
			size_t n = utf8_len(p, e);
			if (!n)
				return NULL;
			p += n;
			continue;
		}
		if (e - p < 2)
			return NULL;
		if (p[1] != 'u') {
			if (!memchr("\"\\/bfnrt", p[1], 8))
				return NULL;
			p += 2;
			continue;
		}
		unsigned u, l;
		if (!hex4(p + 2, e, &u) || (u >= 0xdc00 && u <= 0xdfff))
			return NULL;
		p += 6;
		if (u >= 0xd800 && u <= 0xdbff) { /* a high surrogate: its low one must follow */
			if (e - p < 6 || p[0] != '\\' || p[1] != 'u' || !hex4(p + 2, e, &l) || l < 0xdc00 || l > 0xdfff)
				return NULL;
			p += 6;
		}
	}
	*bad = p;
	return NULL;
}

static const char *digits(const char *p, const char *e)
{
	const char *s = p;
	while (p < e && *p >= '0' && *p <= '9')
		p++;
	return p > s ? p : NULL;
}

/* A string, number or literal at p (< e): its end, or NULL (*bad: where). */
static const char *skip_scalar(const char *p, const char *e, const char **bad)
{
	*bad = p;
	if (*p == '"')
		return skip_str(p, e, bad);
	if (*p == '-' || (*p >= '0' && *p <= '9')) {
		if (*p == '-' && ++p >= e)
			return NULL;
		if (*p == '0')
			p++;
		else if (!(p = digits(p, e)))
			return NULL;
		if (p < e && *p == '.' && !(p = digits(p + 1, e)))
			return NULL;
		if (p < e && (*p == 'e' || *p == 'E')) {
			p++;
			if (p < e && (*p == '+' || *p == '-'))
				p++;
			if (!(p = digits(p, e)))
				return NULL;
		}
		return p;
	}
	static const char *const lit[] = { "true", "false", "null" };
	for (int i = 0; i < 3; i++) {
		size_t n = strlen(lit[i]);
		if ((size_t)(e - p) >= n && !memcmp(p, lit[i], n))
			return p + n;
	}
	return NULL;
}

/* At p an object's key: past the ':' and the spaces after it, or NULL. */
static const char *skip_key(const char *p, const char *e, const char **bad)
{
	*bad = p;
	if (p >= e || *p != '"' || !(p = skip_str(p, e, bad)))
		return NULL;
	p = ws(p, e);
	*bad = p;
	return p < e && *p == ':' ? ws(p + 1, e) : NULL;
}

/*
 * The JSON value at p (after spaces): its end, or NULL with *bad where it
 * stopped being JSON.  Iterative: a stack of the open containers, at most
 * JSON_MAX_DEPTH.
 */
static const char *skip_value_at(const char *p, const char *e, const char **bad)
{
	char open[JSON_MAX_DEPTH];
	int depth = 0;
	for (p = ws(p, e);; p = ws(p, e)) {
		*bad = p;
		if (p >= e)
			return NULL;
		if (*p == '{' || *p == '[') {
			if (depth == JSON_MAX_DEPTH)
				return NULL;
			char c = open[depth++] = *p;
			p = ws(p + 1, e);
			if (p < e && *p == (c == '{' ? '}' : ']')) {
				depth--;
				p++;
			} else {
				if (c == '{' && !(p = skip_key(p, e, bad)))
					return NULL;
				continue; /* to the first value */
			}
		} else if (!(p = skip_scalar(p, e, bad))) {
			return NULL;
		}
		/* after a value: a comma and the next one, or the containers' ends */
		for (;;) {
			if (!depth)
				return p;
			p = ws(p, e);
			*bad = p;
			if (p >= e)
				return NULL;
			char c = open[depth - 1];
			if (*p == (c == '{' ? '}' : ']')) {
				depth--;
				p++;
				continue;
			}
			if (*p != ',')
				return NULL;
			p = ws(p + 1, e);
			if (c == '{' && !(p = skip_key(p, e, bad)))
				return NULL;
			break;
		}
	}
}

static const char *skip_value(const char *p, const char *e)
{
	const char *bad;
	return skip_value_at(p, e, &bad);
}

bool gf_json_valid(const char *s, size_t len, size_t *at)
{
	const char *bad = s, *e = s + len, *p = skip_value_at(s, e, &bad);
	if (p && ws(p, e) == e)
		return true;
	if (p)
		bad = ws(p, e);
	if (at)
		*at = (size_t)(bad - s);
	return false;
}

static bool key_is(const char *k, size_t n, const char *want)
{
	return strlen(want) == n && !strncasecmp(k, want, n); /* Go decodes keys case-insensitively */
}

/*
 * Per-byte masks of an 8-byte word (bit 7 of each byte): the lowest set
 * byte is exact (higher ones may be false hits after a borrow), which is
 * all the scanner uses.  has_byte: bytes equal to c; has_ctl: bytes below
 * 0x20.
 */
#define ONES 0x0101010101010101ull
#define HIGH 0x8080808080808080ull

static uint64_t has_byte(uint64_t w, unsigned char c)
{
	uint64_t x = w ^ (ONES * c);
	return (x - ONES) & ~x & HIGH;
}

static uint64_t has_ctl(uint64_t w)
{
	return (w - ONES * 0x20) & ~w & HIGH;
}

/* Index of the lowest flagged byte of a non-zero mask, in memory order. */
static size_t first_byte(uint64_t m)
{
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return (size_t)__builtin_ctzll(m) / 8;
#else
	unsigned char b[8];
	memcpy(b, &m, 8);
	size_t i = 0;
	while (!(b[i] & 0x80))
		i++;
	return i;
#endif
}

/*
 * The end of the plain JSON string whose contents start at s (its closing
 * quote), or NULL if it has an escape, a control character or a byte
 * over 0x7f (UTF-8 is the full parser's to check) or does not end before
 * e.  A word at a time: node names are short.
 */
static const char *plain_str_end(const char *s, const char *e)
{
	for (; e - s >= 8; s += 8) {
		uint64_t w;
		memcpy(&w, s, 8);
		uint64_t q = has_byte(w, '"'), bad = has_byte(w, '\\') | has_ctl(w) | (w & HIGH);
		if (!(q | bad))
			continue;
		size_t qi = q ? first_byte(q) : 8, bi = bad ? first_byte(bad) : 8;
		return qi < bi ? s + qi : NULL;
	}
	for (; s < e; s++) {
		if (*s == '"')
			return s;
		if (*s == '\\' || (unsigned char)*s < 0x20 || (unsigned char)*s >= 0x80)
			return NULL;
	}
	return NULL;
}

/*
 * Record a name (and, for Node objects, the object's text) in a, growing
 * its arrays by doubling; *cap is their capacity.  false: out of memory.
 */
static bool push_name(struct gf_ext_args *a, size_t *cap, const char *name, size_t len, const char *item,
		      size_t item_len)
{
	if (a->n == *cap) {
		size_t nc = gf_grow_cap(*cap, *cap + 1, 1024, sizeof(const char *));
		if (!nc)
			return false;
		const char **nn = realloc(a->names_buf, nc * sizeof(*nn));
		if (!nn)
			return false;
		a->names = a->names_buf = nn;
		size_t *nl = realloc(a->lens_buf, nc * sizeof(*nl));
		if (!nl)
			return false;
		a->lens = a->lens_buf = nl;
		if (item) {
			const char **it = realloc(a->item_buf, nc * sizeof(*it));
			if (!it)
				return false;
			a->item_text = a->item_buf = it;
			size_t *il = realloc(a->item_len_buf, nc * sizeof(*il));
			if (!il)
				return false;
			a->item_len = a->item_len_buf = il;
		}
		*cap = nc;
	}
	if (item) {
		a->item_buf[a->n] = item;
		a->item_len_buf[a->n] = item_len;
	}
	a->names_buf[a->n] = name;
	a->lens_buf[a->n++] = len;
	return true;
}

/*
 * The NodeNames array at p ('['): each name's start and length recorded in
 * a, the array's span too.  Returns the end of the array, or NULL for
 * anything but an array of plain strings (the full parser).
 */
static const char *scan_names(const char *p, const char *e, struct gf_ext_args *a, size_t *cap)
{
	const char *open = p;
	for (p = ws(p + 1, e); p < e && *p != ']';) {
		if (*p != '"')
			return NULL;
		const char *s = ++p, *q = plain_str_end(s, e);
		if (!q)
			return NULL;
		if (!push_name(a, cap, s, (size_t)(q - s), NULL, 0))
			return NULL;
		if (e - q >= 3 && q[1] == ',' && q[2] == '"') { /* compact JSON, as Go writes it */
			p = q + 2;
			continue;
		}
		p = ws(q + 1, e);
		if (p < e && *p == ',') {
			if ((p = ws(p + 1, e)) >= e || *p != '"')
				return NULL; /* no trailing comma */
		} else if (p < e && *p != ']') {
			return NULL;
		}
	}
	if (p >= e)
		return NULL;
	a->span = open;
	a->span_len = (size_t)(p + 1 - open);
	return p + 1;
}

/*
 * One member of an object: at p (the key's opening quote) read the key and
 * return its value's start (*k, *kl: the key without quotes), or NULL.
 */
static const char *member(const char *p, const char *e, const char **k, size_t *kl)
{
	const char *bad;
	if (p >= e || *p != '"')
		return NULL;
	const char *ke = skip_str(p, e, &bad);
	if (!ke)
		return NULL;
	*k = p + 1;
	*kl = (size_t)(ke - 1 - *k);
	p = ws(ke, e);
	if (p >= e || *p != ':')
		return NULL;
	return ws(p + 1, e);
}

/* After a member's value (at ve): past the comma to the next key, or at the '}'; NULL on bad JSON. */
static const char *next_member(const char *ve, const char *e)
{
	const char *p = ws(ve, e);
	if (p < e && *p == ',') {
		p = ws(p + 1, e);
		return p < e && *p == '"' ? p : NULL; /* no trailing comma */
	}
	return p < e && *p == '}' ? p : NULL;
}

/* The object at p ('{') is metadata: its (first) name, plain, into *name and *len; its end, or NULL. */
static const char *scan_metadata(const char *p, const char *e, const char **name, size_t *len)
{
	for (p = ws(p + 1, e); p < e && *p != '}';) {
		const char *k, *v, *ve;
		size_t kl;
		if (!(v = member(p, e, &k, &kl)))
			return NULL;
		if (key_is(k, kl, "name") && !*name) { /* the first, a plain string, as the full parser reads it */
			if (v >= e || *v != '"' || !(ve = plain_str_end(v + 1, e)))
				return NULL;
			*name = v + 1;
			*len = (size_t)(ve++ - *name);
		} else if (!(ve = skip_value(v, e))) {
			return NULL;
		}
		if (!(p = next_member(ve, e)))
			return NULL;
	}
	return p < e ? p + 1 : NULL;
}

/* A Node object at p ('{'): metadata.name into *name and *len; its end, or NULL (no name too). */
static const char *scan_node(const char *p, const char *e, const char **name, size_t *len)
{
	bool meta = false;
	*name = NULL;
	*len = 0;
	for (p = ws(p + 1, e); p < e && *p != '}';) {
		const char *k, *v, *ve;
		size_t kl;
		if (!(v = member(p, e, &k, &kl)))
			return NULL;
		if (key_is(k, kl, "metadata") && !meta) { /* the first one, as the full parser reads it */
			meta = true;
			ve = v < e && *v == '{' ? scan_metadata(v, e, name, len) : NULL;
		} else {
			ve = skip_value(v, e);
		}
		if (!ve || !(p = next_member(ve, e)))
			return NULL;
	}
	return p < e && *name ? p + 1 : NULL;
}

/* The items array at p ('['): each Node object's text and name pushed into a; its end, or NULL. */
static const char *scan_items(const char *p, const char *e, struct gf_ext_args *a)
{
	size_t cap = 0;
	for (p = ws(p + 1, e); p < e && *p != ']';) {
		const char *name, *end;
		size_t len;
		if (*p != '{' || !(end = scan_node(p, e, &name, &len)) ||
		    !push_name(a, &cap, name, len, p, (size_t)(end - p)))
			return NULL;
		p = ws(end, e);
		if (p < e && *p == ',') {
			if ((p = ws(p + 1, e)) >= e || *p != '{')
				return NULL; /* no trailing comma */
		} else if (p < e && *p != ']') {
			return NULL;
		}
	}
	return p < e ? p + 1 : NULL;
}

/*
 * A NodeList at p ('{'), nodeCacheCapable: false: each item's text and its
 * metadata.name recorded in a.  Its end, or NULL for anything unusual.
 */
static const char *scan_nodes(const char *p, const char *e, struct gf_ext_args *a)
{
	bool seen = false;
	for (p = ws(p + 1, e); p < e && *p != '}';) {
		const char *k, *v, *ve;
		size_t kl;
		if (!(v = member(p, e, &k, &kl)))
			return NULL;
		if (key_is(k, kl, "items") && !seen) { /* the first, an array */
			seen = true;
			ve = v < e && *v == '[' ? scan_items(v, e, a) : NULL;
		} else {
			ve = skip_value(v, e);
		}
		if (!ve || !(p = next_member(ve, e)))
			return NULL;
	}
	if (p >= e || !seen)
		return NULL;
	a->node_objects = true;
	return p + 1;
}

/*
 * Fast path for the common requests (NodeNames, or Node objects in
 * Nodes.items, the other one null): one pass over the body that skips what
 * it does not need, finds the Pod's span (parsed alone with cJSON) and reads
 * the names (and the Node objects' spans) where they are.  false: use the
 * full parser.
 */
static bool ext_args_fast(const char *body, size_t len, const struct gf_ext_hint *hint,
			  struct gf_ext_args *a, const char **pod, size_t *podlen)
{
	const char *b = body, *e = b + len, *p = ws(b, e);
	bool have_names = false, have_nodes = false;
	int seen_names = 0, seen_nodes = 0; /* a key twice: the full parser (it reads the first) */
	size_t cap = 0;
	*pod = NULL;
	if (p >= e || *p != '{')
		return false;
	for (p = ws(p + 1, e); p < e && *p != '}';) {
		const char *k, *v, *ve;
		size_t kl;
		if (!(v = member(p, e, &k, &kl)))
			return false;
		bool null = e - v >= 4 && !memcmp(v, "null", 4);
		if ((key_is(k, kl, "NodeNames") && seen_names++) || (key_is(k, kl, "Nodes") && seen_nodes++) ||
		    (key_is(k, kl, "Pod") && *pod))
			return false;
		if (key_is(k, kl, "NodeNames") && !null) {
			if (have_names || have_nodes || v >= e || *v != '[')
				return false;
			if (hint && hint->span_len > 1 && hint->span[0] == '[' &&
			    hint->span[hint->span_len - 1] == ']' && (size_t)(e - v) >= hint->span_len &&
			    !memcmp(v, hint->span, hint->span_len)) {
				a->names = hint->names, a->lens = hint->lens, a->n = hint->n;
				a->span = v, a->span_len = hint->span_len, a->hit = true;
				ve = v + hint->span_len;
			} else if (!(ve = scan_names(v, e, a, &cap))) {
				return false;
			}
			have_names = true;
		} else if (key_is(k, kl, "Nodes") && !null) {
			if (have_names || have_nodes || v >= e || *v != '{' || !(ve = scan_nodes(v, e, a)))
				return false; /* odd shapes: the full parser */
			have_nodes = true;
		} else if (!(ve = skip_value(v, e))) {
			return false;
		} else if (key_is(k, kl, "Pod")) {
			*pod = v, *podlen = (size_t)(ve - v);
		}
		if (!(p = next_member(ve, e)))
			return false;
	}
	if (!*pod || !(have_names || have_nodes) || p >= e || ws(p + 1, e) != e)
		return false; /* nothing but spaces after the object */
	a->plain = true;
	return true;
}

/* Parse ExtenderArgs: the pod and the node names (from NodeNames or Nodes.items). */
gf_err gf_ext_args_parse(const char *body, size_t len, const struct gf_ext_hint *hint,
			 struct gf_ext_args *a, struct gf_k8s_pod *p, char *msg, size_t msglen)
{
	memset(a, 0, sizeof(*a));
	char err[300];
	const char *podtext = NULL;
	size_t podlen = 0;
	if (ext_args_fast(body, len, hint, a, &podtext, &podlen)) {
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
	size_t at;
	if (!gf_json_valid(body, len, &at)) {
		BAD("the body is not valid JSON (at byte %zu of %zu)", at, len);
		return GF_PARSE;
	}
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
		a->node_objects = true;
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
	a->names = a->names_buf = calloc(cnt ? (size_t)cnt : 1, sizeof(*a->names_buf));
	a->lens = a->lens_buf = calloc(cnt ? (size_t)cnt : 1, sizeof(*a->lens_buf));
	if (!a->names_buf || !a->lens_buf) {
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
		a->lens_buf[i] = strlen(s);
		a->names_buf[i++] = s;
	}
	a->n = (size_t)i;
	return GF_OK;
}
