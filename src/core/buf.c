/*
 * core/buf.c - capped growable buffer (doubling growth, amortised O(1) append).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"

void gf_buf_init(struct gf_buf *b, size_t limit)
{
	memset(b, 0, sizeof(*b));
	b->limit = limit;
}

void gf_buf_release(struct gf_buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

static gf_err reserve(struct gf_buf *b, size_t extra)
{
	size_t need;

	if (b->err)
		return b->err;
	if (extra > b->limit - b->len) {
		b->err = GF_TOOBIG;
		return b->err;
	}
	need = b->len + extra + 1;
	if (need > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		char *p;

		while (cap < need)
			cap *= 2;
		p = realloc(b->data, cap);
		if (!p) {
			b->err = GF_NOMEM;
			return b->err;
		}
		b->data = p;
		b->cap = cap;
	}
	return GF_OK;
}

gf_err gf_buf_append(struct gf_buf *b, const void *data, size_t len)
{
	gf_err err = reserve(b, len);

	if (err)
		return err;
	memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
	return GF_OK;
}

gf_err gf_buf_puts(struct gf_buf *b, const char *s)
{
	return gf_buf_append(b, s, strlen(s));
}

gf_err gf_buf_vprintf(struct gf_buf *b, const char *fmt, va_list ap)
{
	va_list ap2;
	int n;
	gf_err err;

	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0) {
		b->err = b->err ? b->err : GF_INVAL;
		return b->err;
	}
	err = reserve(b, (size_t)n);
	if (err)
		return err;
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return GF_OK;
}

gf_err gf_buf_printf(struct gf_buf *b, const char *fmt, ...)
{
	va_list ap;
	gf_err err;

	va_start(ap, fmt);
	err = gf_buf_vprintf(b, fmt, ap);
	va_end(ap);
	return err;
}
