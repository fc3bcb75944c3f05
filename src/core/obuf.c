/*
 * core/obuf.c - growable output buffer with a hard cap (see obuf.h).
 *
 * Growth doubles the allocation (amortised O(1) per byte) but never past
 * cap + 1 (the NUL).  The first failure is remembered so that long render
 * loops need only one check at the end.
 */
#include "core/obuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void gf_obuf_init(struct gf_obuf *b, size_t cap)
{
	b->data = NULL;
	b->len = 0;
	b->alloc = 0;
	b->cap = cap;
	b->err = GF_OK;
}

void gf_obuf_release(struct gf_obuf *b)
{
	free(b->data);
	gf_obuf_init(b, b->cap);
}

void gf_obuf_reset(struct gf_obuf *b)
{
	b->len = 0;
	b->err = GF_OK;
	if (b->data)
		b->data[0] = '\0';
}

gf_err gf_obuf_error(const struct gf_obuf *b)
{
	return b->err;
}

/* Make room for len + extra bytes plus the NUL. */
static gf_err reserve(struct gf_obuf *b, size_t extra)
{
	if (b->err)
		return b->err;
	if (extra > b->cap || b->len > b->cap - extra)
		return b->err = GF_TOOBIG;
	size_t need = b->len + extra + 1;
	if (need <= b->alloc)
		return GF_OK;
	size_t n = b->alloc ? b->alloc : 256;
	while (n < need)
		n *= 2;
	if (n > b->cap + 1)
		n = b->cap + 1;
	char *p = realloc(b->data, n);
	if (!p)
		return b->err = GF_NOMEM;
	b->data = p;
	b->alloc = n;
	return GF_OK;
}

gf_err gf_obuf_append(struct gf_obuf *b, const void *p, size_t n)
{
	gf_err e = reserve(b, n);
	if (e)
		return e;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return GF_OK;
}

gf_err gf_obuf_puts(struct gf_obuf *b, const char *s)
{
	return gf_obuf_append(b, s, strlen(s));
}

gf_err gf_obuf_printf(struct gf_obuf *b, const char *fmt, ...)
{
	if (b->err)
		return b->err;
	va_list ap;
	size_t room = b->alloc > b->len ? b->alloc - b->len : 0;
	va_start(ap, fmt);
	int n = vsnprintf(room ? b->data + b->len : NULL, room, fmt, ap);
	va_end(ap);
	if (n < 0)
		return b->err = GF_INVAL;
	if ((size_t)n < room) {
		b->len += (size_t)n;
		return GF_OK;
	}
	gf_err e = reserve(b, (size_t)n);
	if (e) {
		if (b->data)
			b->data[b->len] = '\0';
		return e;
	}
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return GF_OK;
}

char *gf_obuf_space(struct gf_obuf *b, size_t n)
{
	return reserve(b, n) ? NULL : b->data + b->len;
}

void gf_obuf_commit(struct gf_obuf *b, size_t n)
{
	if (b->err || !b->data || n > b->alloc - 1 - b->len || n > b->cap - b->len)
		return;
	b->len += n;
	b->data[b->len] = '\0';
}

char *gf_obuf_detach(struct gf_obuf *b, size_t *len)
{
	char *p = b->data;
	if (len)
		*len = b->len;
	gf_obuf_init(b, b->cap);
	return p;
}
