/*
 * core/zpack.c - zero-run packing (see zpack.h).
 *
 * Two passes over the source: one to size the output exactly, one to write
 * it; both walk the same runs (next_run()).
 */
#include "core/zpack.h"

#include <stdlib.h>
#include <string.h>

#define MIN_ZERO_RUN 8
#define RUN_MAX 65535

/* From i: the zero run z, then the literal run l (up to a zero run of MIN_ZERO_RUN or the end). */
static void next_run(const uint8_t *s, size_t n, size_t i, size_t *z, size_t *l)
{
	size_t j = i;
	while (j < n && !s[j] && j - i < RUN_MAX)
		j++;
	*z = j - i;
	size_t k = j, zeros = 0;
	while (k < n && k - j < RUN_MAX) {
		zeros = s[k] ? 0 : zeros + 1;
		k++;
		if (zeros == MIN_ZERO_RUN) {
			k -= MIN_ZERO_RUN;
			break;
		}
	}
	if (k == n || k - j == RUN_MAX) /* trailing zeros of the literal go back to the next zero run */
		while (k > j && !s[k - 1] && zeros) {
			k--;
			zeros--;
		}
	*l = k - j;
}

static void put16(uint8_t *p, size_t v)
{
	p[0] = (uint8_t)(v & 0xff);
	p[1] = (uint8_t)(v >> 8);
}

gf_err gf_zpack(const void *src, size_t n, uint8_t **out, size_t *outlen)
{
	const uint8_t *s = src;
	size_t total = 0, z, l;
	if ((uint64_t)n >= (1ull << 32))
		return GF_TOOBIG;
	for (size_t i = 0; i < n; i += z + l) {
		next_run(s, n, i, &z, &l);
		total += 4 + l;
	}
	uint8_t *p = malloc(total ? total : 1);
	if (!p)
		return GF_NOMEM;
	size_t at = 0;
	for (size_t i = 0; i < n; i += z + l) {
		next_run(s, n, i, &z, &l);
		put16(p + at, z);
		put16(p + at + 2, l);
		memcpy(p + at + 4, s + i + z, l);
		at += 4 + l;
	}
	*out = p;
	*outlen = total;
	return GF_OK;
}

gf_err gf_zunpack(const uint8_t *p, size_t len, void *dst, size_t n)
{
	uint8_t *d = dst;
	size_t at = 0, i = 0;
	memset(d, 0, n);
	while (at < len) {
		if (len - at < 4)
			return GF_PARSE;
		size_t z = p[at] | (size_t)p[at + 1] << 8, l = p[at + 2] | (size_t)p[at + 3] << 8;
		at += 4;
		if (z > n - i || l > n - i - z || l > len - at)
			return GF_PARSE;
		i += z;
		memcpy(d + i, p + at, l);
		i += l;
		at += l;
	}
	return GF_OK;
}

gf_err gf_zunpack_head(const uint8_t *p, size_t len, void *dst, size_t head)
{
	uint8_t *d = dst;
	size_t at = 0, i = 0;
	memset(d, 0, head);
	while (at < len && i < head) {
		if (len - at < 4)
			return GF_PARSE;
		size_t z = p[at] | (size_t)p[at + 1] << 8, l = p[at + 2] | (size_t)p[at + 3] << 8;
		at += 4;
		if (l > len - at)
			return GF_PARSE;
		i += z;
		if (i < head)
			memcpy(d + i, p + at, l < head - i ? l : head - i);
		i += l;
		at += l;
	}
	return GF_OK;
}
