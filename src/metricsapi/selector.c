/*
 * metricsapi/selector.c - label selector parser and matcher.
 *
 * A hand-written lexer in the manner of apimachinery's labels.Lexer:
 * identifiers are runs of bytes that are not blanks or one of "!=,()<>";
 * "in" and "notin" are identifiers recognised by position.  A recursive
 * descent over requirements; every identifier is validated (key or value
 * syntax) before it is copied, so a parsed selector only holds legal text.
 * O(length of the input); no allocation.
 */
#include "metricsapi/selector.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum tok { T_END, T_IDENT, T_NOT, T_EQ, T_DEQ, T_NE, T_LP, T_RP, T_COMMA, T_GT, T_LT, T_BAD };

struct lexer {
	const char *s;
	size_t pos;    /* next byte */
	size_t tstart; /* start of the current token */
	size_t tlen;
	enum tok t;
	char *err;
	size_t errlen;
};

/* apimachinery's lexer's blanks: not isspace(), which also takes \v and \f. */
static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static bool special(char c)
{
	return c == '!' || c == '=' || c == ',' || c == '(' || c == ')' || c == '<' || c == '>';
}

static void next(struct lexer *l)
{
	while (l->s[l->pos] && blank(l->s[l->pos]))
		l->pos++;
	l->tstart = l->pos;
	char c = l->s[l->pos];
	if (!c) {
		l->t = T_END;
		l->tlen = 0;
		return;
	}
	if (!special(c)) {
		while (l->s[l->pos] && !special(l->s[l->pos]) && !blank(l->s[l->pos]))
			l->pos++;
		l->t = T_IDENT;
		l->tlen = l->pos - l->tstart;
		return;
	}
	char d = l->s[l->pos + 1];
	l->pos++;
	l->tlen = 1;
	switch (c) {
	case '!':
		if (d == '=') {
			l->pos++;
			l->tlen = 2;
			l->t = T_NE;
		} else {
			l->t = T_NOT;
		}
		break;
	case '=':
		if (d == '=') {
			l->pos++;
			l->tlen = 2;
			l->t = T_DEQ;
		} else {
			l->t = T_EQ;
		}
		break;
	case ',': l->t = T_COMMA; break;
	case '(': l->t = T_LP; break;
	case ')': l->t = T_RP; break;
	case '<': l->t = T_LT; break;
	case '>': l->t = T_GT; break;
	default: l->t = T_BAD; break;
	}
}

static gf_err fail(struct lexer *l, const char *what)
{
	if (l->errlen)
		snprintf(l->err, l->errlen, "labelSelector: at %zu: %s", l->tstart + 1, what);
	return GF_PARSE;
}

static bool name_char(char c)
{
	return isalnum((unsigned char)c) || c == '-' || c == '_' || c == '.';
}

/* <= max of [A-Za-z0-9._-], alphanumeric at both ends; empty allowed if allow_empty. */
static bool valid_name(const char *s, size_t n, size_t max, bool allow_empty)
{
	if (n == 0)
		return allow_empty;
	if (n > max || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!name_char(s[i]))
			return false;
	return true;
}

/* DNS subdomain: <= 253 of [a-z0-9.-], labels alphanumeric at both ends. */
static bool valid_subdomain(const char *s, size_t n)
{
	if (n == 0 || n > 253)
		return false;
	size_t start = 0;
	for (size_t i = 0; i <= n; i++) {
		if (i == n || s[i] == '.') {
			size_t len = i - start;
			if (len == 0 || len > 63 || !isalnum((unsigned char)s[start]) ||
			    !isalnum((unsigned char)s[i - 1]))
				return false;
			start = i + 1;
		} else if (!(islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]) ||
			     s[i] == '-')) {
			return false;
		}
	}
	return true;
}

static bool valid_key(const char *s, size_t n)
{
	const char *slash = memchr(s, '/', n);
	if (!slash)
		return valid_name(s, n, 63, false);
	size_t pl = (size_t)(slash - s);
	return valid_subdomain(s, pl) && valid_name(slash + 1, n - pl - 1, 63, false);
}

bool gf_label_value_valid(const char *s)
{
	return valid_name(s, strlen(s), 63, true);
}

static bool tok_is(const struct lexer *l, const char *word)
{
	return l->t == T_IDENT && l->tlen == strlen(word) && !memcmp(l->s + l->tstart, word, l->tlen);
}

/* Copy the current identifier (or "" when empty_ok and the token is not an
 * identifier: then the token is not consumed) as a value. */
static gf_err take_value(struct lexer *l, char out[GF_SEL_VALUE_MAX], bool empty_ok)
{
	if (l->t != T_IDENT) {
		if (!empty_ok)
			return fail(l, "expected a value");
		out[0] = '\0';
		return GF_OK;
	}
	if (!valid_name(l->s + l->tstart, l->tlen, 63, true))
		return fail(l, "invalid label value: at most 63 of [A-Za-z0-9._-], alphanumeric at both ends");
	memcpy(out, l->s + l->tstart, l->tlen);
	out[l->tlen] = '\0';
	next(l);
	return GF_OK;
}

static gf_err parse_set(struct lexer *l, struct gf_sel_req *r)
{
	if (l->t != T_LP)
		return fail(l, "expected '(' after in/notin");
	next(l);
	for (;;) {
		if (r->nvalues == GF_SEL_MAX_VALUES) {
			if (l->errlen)
				snprintf(l->err, l->errlen, "labelSelector: more than %d values in a set",
					 GF_SEL_MAX_VALUES);
			return GF_TOOBIG;
		}
		gf_err e = take_value(l, r->values[r->nvalues], true);
		if (e)
			return e;
		r->nvalues++;
		if (l->t == T_RP) {
			next(l);
			return GF_OK;
		}
		if (l->t != T_COMMA)
			return fail(l, "expected ',' or ')' in a value set");
		next(l);
	}
}

static gf_err parse_req(struct lexer *l, struct gf_sel_req *r)
{
	memset(r, 0, sizeof(*r));
	bool negated = false;
	if (l->t == T_NOT) {
		negated = true;
		next(l);
	}
	if (l->t != T_IDENT)
		return fail(l, "expected a label key");
	if (!valid_key(l->s + l->tstart, l->tlen))
		return fail(l, "invalid label key: [prefix/]name, name at most 63 of [A-Za-z0-9._-]");
	memcpy(r->key, l->s + l->tstart, l->tlen);
	r->key[l->tlen] = '\0';
	next(l);
	if (negated) {
		r->op = GF_SEL_NOTEXISTS;
		if (l->t != T_COMMA && l->t != T_END)
			return fail(l, "expected ',' or the end after !key");
		return GF_OK;
	}
	switch (l->t) {
	case T_END:
	case T_COMMA:
		r->op = GF_SEL_EXISTS;
		return GF_OK;
	case T_EQ:
	case T_DEQ:
	case T_NE:
		r->op = l->t == T_NE ? GF_SEL_NE : GF_SEL_EQ;
		next(l);
		r->nvalues = 1;
		return take_value(l, r->values[0], true);
	case T_GT:
	case T_LT: {
		/* An integer, not a label value: "-3" is fine. */
		r->op = l->t == T_GT ? GF_SEL_GT : GF_SEL_LT;
		next(l);
		if (l->t != T_IDENT)
			return fail(l, "expected a value");
		if (l->tlen >= GF_SEL_VALUE_MAX)
			return fail(l, "expected an integer after '>' or '<'");
		memcpy(r->values[0], l->s + l->tstart, l->tlen);
		r->values[0][l->tlen] = '\0';
		r->nvalues = 1;
		char *end;
		errno = 0;
		r->num = strtoll(r->values[0], &end, 10);
		if (errno || *end || end == r->values[0])
			return fail(l, "expected an integer after '>' or '<'");
		next(l);
		return GF_OK;
	}
	case T_IDENT:
		if (tok_is(l, "in"))
			r->op = GF_SEL_IN;
		else if (tok_is(l, "notin"))
			r->op = GF_SEL_NOTIN;
		else
			return fail(l, "expected an operator (=, ==, !=, in, notin, >, <)");
		next(l);
		return parse_set(l, r);
	default:
		return fail(l, "expected an operator (=, ==, !=, in, notin, >, <)");
	}
}

gf_err gf_selector_parse(const char *s, struct gf_selector *out, char *err, size_t errlen)
{
	out->nreqs = 0;
	if (errlen)
		err[0] = '\0';
	if (!s)
		return GF_OK;
	struct lexer l = { .s = s, .err = err, .errlen = errlen };
	next(&l);
	if (l.t == T_END)
		return GF_OK;
	for (;;) {
		if (out->nreqs == GF_SEL_MAX_REQS) {
			if (errlen)
				snprintf(err, errlen, "labelSelector: more than %d requirements",
					 GF_SEL_MAX_REQS);
			return GF_TOOBIG;
		}
		gf_err e = parse_req(&l, &out->reqs[out->nreqs]);
		if (e)
			return e;
		out->nreqs++;
		if (l.t == T_END)
			return GF_OK;
		if (l.t != T_COMMA)
			return fail(&l, "expected ',' between requirements");
		next(&l);
	}
}

static bool to_ll(const char *s, long long *v)
{
	char *end;
	errno = 0;
	*v = strtoll(s, &end, 10);
	return !errno && end != s && !*end;
}

bool gf_sel_req_match(const struct gf_sel_req *r, const char *value)
{
	long long v;
	switch (r->op) {
	case GF_SEL_EXISTS: return value != NULL;
	case GF_SEL_NOTEXISTS: return value == NULL;
	case GF_SEL_EQ: return value && !strcmp(value, r->values[0]);
	case GF_SEL_NE: return !value || strcmp(value, r->values[0]);
	case GF_SEL_IN:
	case GF_SEL_NOTIN: {
		bool in = false;
		for (unsigned i = 0; value && i < r->nvalues && !in; i++)
			in = !strcmp(value, r->values[i]);
		return r->op == GF_SEL_IN ? in : !in;
	}
	case GF_SEL_GT: return value && to_ll(value, &v) && v > r->num;
	case GF_SEL_LT: return value && to_ll(value, &v) && v < r->num;
	}
	return false;
}

bool gf_selector_match(const struct gf_selector *s, gf_sel_lookup_fn fn, void *ud)
{
	for (unsigned i = 0; i < s->nreqs; i++)
		if (!gf_sel_req_match(&s->reqs[i], fn(ud, s->reqs[i].key)))
			return false;
	return true;
}

gf_err gf_sel_req_format(const struct gf_sel_req *r, char *out, size_t n)
{
	size_t k = 0;
	int w = 0;
#define PUT(...)                                                             \
	do {                                                                 \
		w = snprintf(out + k, n > k ? n - k : 0, __VA_ARGS__);       \
		if (w < 0 || (size_t)w >= (n > k ? n - k : 0))               \
			goto toobig;                                         \
		k += (size_t)w;                                              \
	} while (0)
	switch (r->op) {
	case GF_SEL_EXISTS: PUT("%s", r->key); break;
	case GF_SEL_NOTEXISTS: PUT("!%s", r->key); break;
	case GF_SEL_EQ: PUT("%s=%s", r->key, r->values[0]); break;
	case GF_SEL_NE: PUT("%s!=%s", r->key, r->values[0]); break;
	case GF_SEL_GT: PUT("%s>%s", r->key, r->values[0]); break;
	case GF_SEL_LT: PUT("%s<%s", r->key, r->values[0]); break;
	case GF_SEL_IN:
	case GF_SEL_NOTIN:
		PUT("%s %s (", r->key, r->op == GF_SEL_IN ? "in" : "notin");
		for (unsigned i = 0; i < r->nvalues; i++)
			PUT("%s%s", i ? "," : "", r->values[i]);
		PUT(")");
		break;
	}
#undef PUT
	return GF_OK;
toobig:
	if (n)
		out[0] = '\0';
	return GF_TOOBIG;
}
