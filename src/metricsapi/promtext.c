/*
 * metricsapi/promtext.c - Prometheus text format reader.
 *
 * Line by line: each line is copied into one scratch buffer (malloc'd once
 * per call, GF_PROMTEXT_MAX_LINE + 1 bytes) where names and values are
 * NUL-terminated and label values unescaped in place (an unescaped value is
 * never longer than its escaped form), so the callback gets plain C strings
 * without further allocation.  O(input).
 */
#include "metricsapi/promtext.h"

#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static bool name_start(char c)
{
	return isalpha((unsigned char)c) || c == '_' || c == ':';
}

static bool name_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == ':';
}

static gf_err perr(char *err, size_t errlen, size_t line, const char *what)
{
	if (errlen)
		snprintf(err, errlen, "line %zu: %s", line, what);
	return GF_PARSE;
}

static bool parse_value(char *s, double *v)
{
	if (!strcmp(s, "+Inf") || !strcmp(s, "Inf")) {
		*v = INFINITY;
		return true;
	}
	if (!strcmp(s, "-Inf")) {
		*v = -INFINITY;
		return true;
	}
	if (!strcmp(s, "NaN")) {
		*v = NAN;
		return true;
	}
	char *end;
	*v = strtod(s, &end);
	return end != s && !*end;
}

/* Parse one line (NUL-terminated, in scratch). */
static gf_err parse_line(char *p, size_t lineno, gf_prom_sample_fn fn, void *ud, char *err,
			 size_t errlen)
{
	struct gf_prom_label labels[GF_PROMTEXT_MAX_LABELS];
	size_t nl = 0;
	while (*p == ' ' || *p == '\t')
		p++;
	if (!*p || *p == '#')
		return GF_OK;
	if (!name_start(*p))
		return perr(err, errlen, lineno, "expected a metric name");
	char *name = p;
	while (name_char(*p))
		p++;
	char *name_end = p;
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p == '{') {
		*name_end = '\0';
		p++;
		for (;;) {
			while (*p == ' ' || *p == '\t')
				p++;
			if (*p == '}') {
				p++;
				break;
			}
			if (!name_start(*p) || *p == ':')
				return perr(err, errlen, lineno, "expected a label name or '}'");
			char *ln = p;
			while (name_char(*p) && *p != ':')
				p++;
			char *ln_end = p;
			while (*p == ' ' || *p == '\t')
				p++;
			if (*p != '=')
				return perr(err, errlen, lineno, "expected '=' after a label name");
			*ln_end = '\0';
			p++;
			while (*p == ' ' || *p == '\t')
				p++;
			if (*p != '"')
				return perr(err, errlen, lineno, "expected '\"' to open a label value");
			p++;
			char *val = p, *w = p;
			for (;;) {
				if (!*p)
					return perr(err, errlen, lineno, "unterminated label value");
				if (*p == '"')
					break;
				if (*p == '\\') {
					p++;
					if (*p == 'n')
						*w++ = '\n';
					else if (*p == '\\' || *p == '"')
						*w++ = *p;
					else
						return perr(err, errlen, lineno, "bad escape in a label value");
					p++;
					continue;
				}
				*w++ = *p++;
			}
			p++; /* the closing quote */
			*w = '\0';
			if (nl == GF_PROMTEXT_MAX_LABELS) {
				if (errlen)
					snprintf(err, errlen, "line %zu: more than %d labels", lineno,
						 GF_PROMTEXT_MAX_LABELS);
				return GF_TOOBIG;
			}
			labels[nl].name = ln;
			labels[nl].value = val;
			nl++;
			while (*p == ' ' || *p == '\t')
				p++;
			if (*p == ',') {
				p++;
				continue;
			}
			if (*p == '}') {
				p++;
				break;
			}
			return perr(err, errlen, lineno, "expected ',' or '}' after a label");
		}
	} else if (p == name_end) {
		return perr(err, errlen, lineno, "expected '{' or a blank after the metric name");
	} else {
		*name_end = '\0';
	}
	while (*p == ' ' || *p == '\t')
		p++;
	char *vs = p;
	while (*p && *p != ' ' && *p != '\t')
		p++;
	char *ve = p;
	while (*p == ' ' || *p == '\t')
		p++;
	/* optional timestamp: an integer */
	if (*p) {
		char *ts = p;
		if (*p == '-')
			p++;
		while (isdigit((unsigned char)*p))
			p++;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p || p == ts)
			return perr(err, errlen, lineno, "expected an integer timestamp or the end of the line");
	}
	*ve = '\0';
	double v;
	if (vs == ve || !parse_value(vs, &v))
		return perr(err, errlen, lineno, "expected a sample value");
	return fn(ud, name, labels, nl, v);
}

gf_err gf_promtext_parse(const char *text, size_t len, gf_prom_sample_fn fn, void *ud, char *err,
			 size_t errlen)
{
	if (errlen)
		err[0] = '\0';
	char *scratch = malloc(GF_PROMTEXT_MAX_LINE + 1);
	if (!scratch)
		return GF_NOMEM;
	gf_err e = GF_OK;
	size_t lineno = 0, off = 0;
	while (off < len && !e) {
		lineno++;
		const char *nl = memchr(text + off, '\n', len - off);
		size_t n = nl ? (size_t)(nl - (text + off)) : len - off;
		if (n && text[off + n - 1] == '\r')
			n--;
		if (n > GF_PROMTEXT_MAX_LINE) {
			if (errlen)
				snprintf(err, errlen, "line %zu: longer than %d bytes", lineno,
					 GF_PROMTEXT_MAX_LINE);
			e = GF_TOOBIG;
			break;
		}
		if (memchr(text + off, '\0', n)) {
			e = perr(err, errlen, lineno, "NUL byte in the line");
			break;
		}
		memcpy(scratch, text + off, n);
		scratch[n] = '\0';
		e = parse_line(scratch, lineno, fn, ud, err, errlen);
		off += (nl ? (size_t)(nl - (text + off)) + 1 : len - off);
	}
	free(scratch);
	return e;
}
