/*
 * core/obuf.h - a growable output buffer with a hard cap (the one buffer type of gpufleet).
 *
 * Used for HTTP response bodies, request bodies and rendered documents
 * (Prometheus text, JSON).  A buffer never grows past its cap: an append
 * that would exceed it fails with GF_TOOBIG and leaves the buffer marked
 * "overflowed" (sticky), so a renderer can append freely and check once
 * at the end with gf_obuf_error().
 *
 * Ownership: the buffer owns data; gf_obuf_release() frees it,
 * gf_obuf_detach() hands it to the caller (free() it).  data is always
 * NUL-terminated when non-NULL (the NUL does not count in len).
 */
#ifndef GF_CORE_OBUF_H
#define GF_CORE_OBUF_H

#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"

struct gf_obuf {
	char *data;   /* NULL until the first append */
	size_t len;   /* bytes used, excluding the NUL */
	size_t alloc; /* bytes allocated */
	size_t cap;   /* hard limit on len */
	gf_err err;   /* first error (GF_TOOBIG or GF_NOMEM), sticky */
};

/* Initialise an empty buffer that will hold at most cap bytes.  No allocation. */
void gf_obuf_init(struct gf_obuf *b, size_t cap);

/* Free the memory; the buffer is empty (and reusable) afterwards. */
void gf_obuf_release(struct gf_obuf *b);

/* Forget the contents and the sticky error, keep the memory. */
void gf_obuf_reset(struct gf_obuf *b);

/* Append n bytes.  GF_TOOBIG past the cap, GF_NOMEM; both sticky. */
gf_err gf_obuf_append(struct gf_obuf *b, const void *p, size_t n);

/* Append a NUL-terminated string. */
gf_err gf_obuf_puts(struct gf_obuf *b, const char *s);

/* Append formatted text (vsnprintf rules). */
gf_err gf_obuf_printf(struct gf_obuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Room to write up to n bytes in place (for long loops that would otherwise
 * append piece by piece): a pointer to the end of the contents, or NULL on
 * error (sticky, as for an append of n bytes).  gf_obuf_commit(b, k), k <= n,
 * then adds the k bytes written.
 */
char *gf_obuf_space(struct gf_obuf *b, size_t n);
void gf_obuf_commit(struct gf_obuf *b, size_t k);

/* The first error since init/reset, GF_OK if none. */
gf_err gf_obuf_error(const struct gf_obuf *b);

/* Take the data (caller free()s it; may be NULL when empty); the buffer is empty after. */
char *gf_obuf_detach(struct gf_obuf *b, size_t *len);

#endif /* GF_CORE_OBUF_H */
