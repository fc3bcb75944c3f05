/*
 * core/sort.h - qsort for arrays that may be empty.
 */
#ifndef GF_CORE_SORT_H
#define GF_CORE_SORT_H

#include <stddef.h>

/*
 * qsort(base, n, size, cmp), and nothing at all when n < 2, so base may be
 * NULL for an empty array (one never allocated).  C's qsort wants a valid
 * pointer even for zero elements: qsort(NULL, 0, ...) is undefined behaviour
 * that UBSan reports ("null pointer passed as argument 1, which is declared
 * to never be null").  Use this instead of qsort everywhere in src/.
 */
void gf_qsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));

#endif /* GF_CORE_SORT_H */
