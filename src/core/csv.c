/*
 * core/csv.c - one CSV line at a time from a buffer, split on ','.
 *
 * O(line length) per line: one memchr for the end of the line, one pass to
 * split it.  The fields are slices of the caller's buffer, valid until the
 * next gf_csv_next.  Blank lines are skipped but counted, so line numbers in
 * messages are the file's.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "core/csv.h"
#include "core/text.h"

void gf_csv_init(struct gf_csv *r, const char *data, size_t len, const char *file, size_t line_max,
		 char *msg, size_t msgsize)
{
	memset(r, 0, sizeof(*r));
	r->cur = data;
	r->end = data + len;
	r->file = file;
	r->line_max = line_max;
	r->msg = msg;
	r->msgsize = msgsize;
}

gf_err gf_csv_fail(struct gf_csv *r, gf_err code, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(r->msg, r->msgsize, "%s:%ld: ", r->file, r->lineno);

	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < r->msgsize)
		vsnprintf(r->msg + n, r->msgsize - (size_t)n, fmt, ap);
	va_end(ap);
	return code;
}

/* Split line[0..len) on ',' into r->field; false (said) past GF_CSV_MAX_FIELDS. */
static bool split(struct gf_csv *r, const char *line, size_t len, gf_err *code)
{
	r->nfields = 0;
	for (size_t i = 0, from = 0; i <= len; i++) {
		if (i < len && line[i] != ',')
			continue;
		if (r->nfields == GF_CSV_MAX_FIELDS) {
			*code = gf_csv_fail(r, GF_PARSE, "more than %d columns", GF_CSV_MAX_FIELDS);
			return false;
		}
		r->field[r->nfields].p = line + from;
		r->field[r->nfields].len = i - from;
		r->nfields++;
		from = i + 1;
	}
	return true;
}

int gf_csv_next(struct gf_csv *r, gf_err *code)
{
	while (r->cur < r->end) {
		const char *s = r->cur, *nl = memchr(s, '\n', (size_t)(r->end - s));
		size_t len = nl ? (size_t)(nl - s) : (size_t)(r->end - s);

		r->cur = nl ? nl + 1 : r->end;
		r->lineno++;
		if (len > 0 && s[len - 1] == '\r')
			len--;
		if (len > r->line_max) {
			*code = gf_csv_fail(r, GF_TOOBIG, "line is %zu bytes long; the limit is %zu", len,
					    r->line_max);
			return -1;
		}
		if (len == 0)
			continue;
		if (memchr(s, '\0', len)) {
			*code = gf_csv_fail(r, GF_PARSE, "line contains a NUL byte");
			return -1;
		}
		return split(r, s, len, code) ? 1 : -1;
	}
	return 0;
}

int gf_csv_find(const struct gf_csv *r, const char *name)
{
	size_t n = strlen(name);

	for (int i = 0; i < r->nfields; i++)
		if (r->field[i].len == n && !memcmp(r->field[i].p, name, n))
			return i;
	return -1;
}

const char *gf_csv_quote(const struct gf_csv_field *f, char *buf, size_t buflen)
{
	size_t n = gf_utf8_cut(f->p, f->len, 40);

	snprintf(buf, buflen, "\"%.*s%s\"", (int)n, f->p, f->len > n ? "..." : "");
	return buf;
}
