/*
 * core/buf.h - a growable byte buffer with a hard cap.
 *
 * Embeddable: gf_buf_init() / gf_buf_release().  The buffer owns data, which
 * is always NUL-terminated once anything was appended.  Appends past `limit`
 * bytes fail with GF_TOOBIG and leave the buffer as it was; after any failed
 * append the buffer remembers the first error (gf_buf_error()), so a writer
 * may append many pieces and check once at the end.
 */
#ifndef GF_CORE_BUF_H
#define GF_CORE_BUF_H

#include <stdarg.h>
#include <stddef.h>

#include "core/error.h"

struct gf_buf {
	char *data;	/* owned; NULL until the first append */
	size_t len;
	size_t cap;
	size_t limit;	/* hard cap on len */
	gf_err err;	/* first failed append, GF_OK if none */
};

void gf_buf_init(struct gf_buf *b, size_t limit);
void gf_buf_release(struct gf_buf *b);

gf_err gf_buf_append(struct gf_buf *b, const void *data, size_t len);
gf_err gf_buf_puts(struct gf_buf *b, const char *s);
gf_err gf_buf_printf(struct gf_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
gf_err gf_buf_vprintf(struct gf_buf *b, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

/* The first error of any append so far. */
static inline gf_err gf_buf_error(const struct gf_buf *b)
{
	return b->err;
}

#endif /* GF_CORE_BUF_H */
