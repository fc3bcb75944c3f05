/*
 * core/hash.h - the one FNV-1a (64-bit) of gpufleet.
 *
 * FNV-1a: h = offset basis; for each byte b: h = (h ^ b) * prime (mod 2^64).
 * Used for hash-table slots, memo keys and change detection, never for
 * anything an attacker could aim at (it is not keyed).  Callers chain
 * several fields by passing the last result as the next start value, so a
 * composite key (api, namespace, separator, name) hashes exactly as the
 * bytes one after the other would.  O(len), no allocation.
 */
#ifndef GF_CORE_HASH_H
#define GF_CORE_HASH_H

#include <stddef.h>
#include <stdint.h>

#define GF_FNV64_OFFSET 14695981039346656037ull
#define GF_FNV64_PRIME 1099511628211ull

/* One byte into the hash h. */
static inline uint64_t gf_fnv1a_byte(uint64_t h, unsigned char b)
{
	return (h ^ b) * GF_FNV64_PRIME;
}

/* len bytes at data into h (start with GF_FNV64_OFFSET). */
static inline uint64_t gf_fnv1a(uint64_t h, const void *data, size_t len)
{
	const unsigned char *b = data;
	for (size_t i = 0; i < len; i++)
		h = gf_fnv1a_byte(h, b[i]);
	return h;
}

/* The bytes of the NUL-terminated s (not the NUL) into h. */
static inline uint64_t gf_fnv1a_str(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = gf_fnv1a_byte(h, (unsigned char)*s);
	return h;
}

#endif
