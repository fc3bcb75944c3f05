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

size_t gf_grow_cap(size_t cap, size_t need, size_t first, size_t elem)
{
	size_t ncap = cap ? cap : (first ? first : 1);
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return 0;
		ncap *= 2;
	}
	return elem && ncap > SIZE_MAX / elem ? 0 : ncap;
}

gf_err gf_grow(void *arr, size_t *cap, size_t need, size_t elem, size_t first)
{
	void **p = arr;

	if (need <= *cap)
		return GF_OK;
	if (!elem)
		return GF_INVAL;
	size_t ncap = gf_grow_cap(*cap, need, first, elem);
	if (!ncap)
		return GF_NOMEM;
	void *n = realloc(*p, ncap * elem);
	if (!n)
		return GF_NOMEM;
	*p = n;
	*cap = ncap;
	return GF_OK;
}
