/*
 * core/csv.h - the line and field reader under the engine's CSV parsers
 * (sim/trace.c's node and pod lists, autoscale/serving.c's serving traces).
 *
 * It reads a buffer the caller loaded, one non-blank line at a time, and
 * splits the line on ',' into slices of the buffer (no quoting, no copy).
 * Line endings \n or \r\n.  A line longer than the reader's limit, one with
 * a NUL byte, or one with more than GF_CSV_MAX_FIELDS fields is an error.
 * Errors are written as "FILE:LINE: what" into the caller's message buffer.
 * What the columns mean, and a byte-order mark, are the parsers' business.
 */
#ifndef GF_CORE_CSV_H
#define GF_CORE_CSV_H

#include <stddef.h>

#include "core/error.h"

#define GF_CSV_MAX_FIELDS 64

/* A field: len bytes at p, inside the parsed buffer (not NUL-terminated). */
struct gf_csv_field {
	const char *p;
	size_t len;
};

/* A reader; gf_csv_init sets it up, the fields are the current line's. */
struct gf_csv {
	const char *cur, *end;	/* what is left to read */
	const char *file;	/* names the input in messages */
	long lineno;		/* of the current line, 1-based; 0 before the first */
	size_t line_max;	/* longest accepted line in bytes, without its ending */
	struct gf_csv_field field[GF_CSV_MAX_FIELDS];
	int nfields;
	char *msg;		/* the caller's buffer for one error line */
	size_t msgsize;
};

/* A reader of data[0..len), errors into msg[0..msgsize) (msgsize > 0). */
void gf_csv_init(struct gf_csv *r, const char *data, size_t len, const char *file, size_t line_max,
		 char *msg, size_t msgsize);

/*
 * The next non-blank line, split into r->field[0..r->nfields): 1 with a
 * line, 0 at the end of the input, -1 on an error (said in r->msg; its code
 * in *code: GF_TOOBIG for a long line, GF_PARSE otherwise).
 */
int gf_csv_next(struct gf_csv *r, gf_err *code);

/* Write "FILE:LINE: " and the formatted text into r->msg; returns code. */
gf_err gf_csv_fail(struct gf_csv *r, gf_err code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The index of the current line's field equal to name (a header's column), or -1. */
int gf_csv_find(const struct gf_csv *r, const char *name);

/*
 * f for an error message: in double quotes, cut after 40 bytes (on a UTF-8
 * character boundary) with "..." when longer.  Writes buf; returns buf.
 */
const char *gf_csv_quote(const struct gf_csv_field *f, char *buf, size_t buflen);

#endif /* GF_CORE_CSV_H */
