/*
 * core/grow.c - doubling growth with overflow checks (see grow.h).
 *
 * The new capacity is the smallest first * 2^k (or cap * 2^k) >= need;
 * the loop stops with GF_NOMEM before a doubling or the byte count could
 * wrap.  realloc either succeeds or leaves the old block alone, so the
 * caller's array stays valid on failure.
 */
#include "core/grow.h"

#include <stdint.h>
#include <stdlib.h>

gf_err gf_grow(void *arr, size_t *cap, size_t need, size_t elem, size_t first)
{
	void **p = arr;

	if (need <= *cap)
		return GF_OK;
	if (!elem)
		return GF_INVAL;
	size_t ncap = *cap ? *cap : (first ? first : 1);
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return GF_NOMEM;
		ncap *= 2;
	}
	if (ncap > SIZE_MAX / elem)
		return GF_NOMEM;
	void *n = realloc(*p, ncap * elem);
	if (!n)
		return GF_NOMEM;
	*p = n;
	*cap = ncap;
	return GF_OK;
}
