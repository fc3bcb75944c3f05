/*
 * fuzz/fuzzutil.h - what the libFuzzer harnesses of fuzz/ share (header
 * only: each harness is one translation unit, linked alone with libFuzzer).
 *
 * The entry point's prototype (the harnesses build with
 * -Wmissing-prototypes), the rule every decoder of API objects is held to
 * (it returns GF_OK, or GF_PARSE with a message; nothing else), and a
 * NUL-terminated copy of the input for parsers that take C strings.
 * Every check that fails calls abort(): that is how libFuzzer is told.
 */
#ifndef GF_FUZZUTIL_H
#define GF_FUZZUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * A decoder's answer e with its message err: true when it decoded (GF_OK:
 * go on checking the object), false when it refused with a message
 * (GF_PARSE and err not empty); any other answer, or a refusal without a
 * message, aborts.
 */
static inline bool gf_fuzz_decoded(gf_err e, const char *err)
{
	if (e == GF_OK)
		return true;
	if (e != GF_PARSE || !err[0])
		abort();
	return false;
}

/* The n bytes at data with a NUL after them, in memory of its own (free() it); NULL when out of memory. */
static inline char *gf_fuzz_cstr(const void *data, size_t n)
{
	char *s = malloc(n + 1);
	if (!s)
		return NULL;
	if (n)
		memcpy(s, data, n);
	s[n] = '\0';
	return s;
}

#endif /* GF_FUZZUTIL_H */
