/*
 * core/zpack.h - zero-run packing of a fixed-size record.
 *
 * Records made of fixed-size buffers (a decoded Kubernetes Pod is 6.7 KB,
 * mostly the unused, zeroed tails of name, selector, toleration and affinity
 * buffers) are kept packed: the bytes as a sequence of (zero run, literal
 * run) pairs, each length a 16-bit number, the literal bytes after it.  A
 * zero run shorter than 8 bytes stays inside the literal (a pair costs 4
 * bytes).  Lossless for any bytes; the saving depends on the zeros.
 */
#ifndef GF_CORE_ZPACK_H
#define GF_CORE_ZPACK_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

/* Pack src[0..n) into a new buffer (*out, *outlen; free() it).  GF_NOMEM, GF_TOOBIG (n >= 2^32). */
gf_err gf_zpack(const void *src, size_t n, uint8_t **out, size_t *outlen);

/* Unpack p[0..len) into dst[0..n) (the size it was packed from).  GF_PARSE if it does not fit. */
gf_err gf_zunpack(const uint8_t *p, size_t len, void *dst, size_t n);

/*
 * Only the first `head` bytes of the record p[0..len) packs, into dst[0..head):
 * the unpacking stops there (a record's leading fields without the cost of
 * the rest).  GF_PARSE if p is malformed before that point.
 */
gf_err gf_zunpack_head(const uint8_t *p, size_t len, void *dst, size_t head);

#endif /* GF_CORE_ZPACK_H */
