/*
 * core/sort.c - qsort that accepts an empty array given as NULL (sort.h).
 * Same order as qsort (not stable: callers that need a stable order break
 * ties in cmp).
 */
#include <stdlib.h>

#include "core/sort.h"

void gf_qsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}
