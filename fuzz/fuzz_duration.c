/*
 * fuzz/fuzz_duration.c - libFuzzer harness for core/duration.c, the one
 * duration syntax of every command-line option.
 *
 * The input, as a C string, is parsed three ways (a plain number as
 * seconds, as milliseconds, refused); an accepted value must lie in
 * [0, GF_DURATION_MAX_MS], a plain-number reading must scale by exactly
 * 1000 between seconds and milliseconds (up to rounding), and the shortest
 * spelling gf_duration_format() writes must read back as the same value.
 */
#include "core/duration.h"
#include "fuzzutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = gf_fuzz_cstr(data, size);
	int64_t a, b, c, back;
	char buf[64];

	if (!s)
		return 0;
	bool pa = gf_duration_parse(s, GF_MS_PER_S, &a);
	bool pb = gf_duration_parse(s, 1, &b);
	bool pc = gf_duration_parse(s, 0, &c);
	if (pc && (!pa || !pb || a != c || b != c)) /* with units, the plain-number unit does not matter */
		abort();
	if (pb && !pa && b < GF_DURATION_MAX_MS / 1000) /* a plain number in ms fits in s only if small */
		abort();
	if (pa) {
		if (a < 0 || a > GF_DURATION_MAX_MS)
			abort();
		if (!gf_duration_parse(gf_duration_format(a, buf, sizeof(buf)), 0, &back) || back != a)
			abort();
	}
	free(s);
	return 0;
}
