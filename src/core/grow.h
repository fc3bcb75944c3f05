/*
 * core/grow.h - the one growth rule for gpufleet's arrays.
 *
 * gf_grow(&arr, &cap, need, elem, first): make room for at least need
 * items of elem bytes.  Capacity doubles from first (or from cap when it
 * is non-zero) until it reaches need, so n appends cost O(n) amortised.
 * Every product is checked: a capacity whose size in bytes would not fit
 * a size_t is GF_NOMEM, as is a failed realloc; on any error *arr and
 * *cap are unchanged (the old array is still valid and owned by the
 * caller).  need <= *cap is a no-op.
 *
 * gf_grow_cap is the rule alone, for a caller that allocates itself (a
 * hash table rehashed into a new block, parallel arrays sharing one
 * capacity, a power-of-two table size).
 */
#ifndef GF_CORE_GROW_H
#define GF_CORE_GROW_H

#include <stddef.h>

#include "core/error.h"

/* The smallest (cap ? cap : first) * 2^k >= need (cap when need <= cap);
 * 0 when that does not fit a size_t, or fits but elem bytes of it would not
 * (elem 0: no byte limit). */
size_t gf_grow_cap(size_t cap, size_t need, size_t first, size_t elem);

/* arr: the address of the array pointer (any T **, passed as void *). */
gf_err gf_grow(void *arr, size_t *cap, size_t need, size_t elem, size_t first);

#endif
