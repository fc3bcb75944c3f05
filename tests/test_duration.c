/* tests/test_duration.c - core/duration: the command line's one duration syntax, and the build-info gauge. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "core/build_info.h"
#include "core/duration.h"
#include "core/obuf.h"

/* s parses, with a plain number worth bare ms, to want ms. */
static void ok(const char *s, int64_t bare, int64_t want)
{
	int64_t ms = -7;
	if (!gf_duration_parse(s, bare, &ms))
		fail_msg("\"%s\" (bare %lld): refused, expected %lld ms", s ? s : "(null)", (long long)bare, (long long)want);
	if (ms != want)
		fail_msg("\"%s\" (bare %lld): %lld ms, expected %lld", s, (long long)bare, (long long)ms, (long long)want);
}

static void refused(const char *s, int64_t bare)
{
	int64_t ms = -7;
	if (gf_duration_parse(s, bare, &ms))
		fail_msg("\"%s\" (bare %lld): accepted as %lld ms, expected a refusal", s ? s : "(null)", (long long)bare,
			 (long long)ms);
	assert_int_equal(ms, -7); /* left alone */
}

static void test_units(void **state)
{
	(void)state;
	ok("30s", 1000, 30000);
	ok("5m", 1000, 300000);
	ok("12h", 1000, 43200000);
	ok("250ms", 1000, 250);
	ok("2d", 1000, 2 * 86400000LL);
	ok("1w", 1000, 7 * 86400000LL);
	ok("0s", 1000, 0);
	ok("0", 1000, 0);
}

static void test_combinations(void **state)
{
	(void)state;
	ok("1h30m", 1000, 5400000);
	ok("30m1h", 1000, 5400000); /* any order */
	ok("1m30s", 1000, 90000);
	ok("1h1ms", 1000, 3600001);
	ok("1d2h3m4s5ms", 1000, 86400000LL + 7200000 + 180000 + 4000 + 5);
	ok("1.5h", 1000, 5400000);
	ok("0.25s", 1000, 250);
	ok("1.0006s", 1000, 1001); /* rounded to the millisecond */
}

static void test_plain_numbers(void **state)
{
	(void)state;
	ok("600", 1000, 600000); /* seconds, as the options without a suffix read them */
	ok("500", 1, 500);       /* milliseconds, as the -ms options read them */
	ok("1.5", 1000, 1500);
	refused("600", 0); /* where a plain number means nothing */
	refused("1h30", 1000); /* a plain number only alone */
}

static void test_malformed(void **state)
{
	(void)state;
	static const char *const bad[] = { "", "s", "h1", "-5s", "+5s", "5 s", " 5s", "5s ", "5x", "5min", "5sec",
					   "1h1h", "5ms5ms", "1.s", ".5s", "1..5s", "5S", "1e3", "0x10", "5mss", "soon",
					   "99999999999999999999s", "101000d" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		refused(bad[i], 1000);
	refused(NULL, 1000);
	ok("36500d", 1000, 36500 * 86400000LL);
	refused("36501d", 1000); /* past the 100-year cap */
}

static void test_format(void **state)
{
	(void)state;
	char b[32];
	assert_string_equal(gf_duration_format(0, b, sizeof(b)), "0s");
	assert_string_equal(gf_duration_format(5400000, b, sizeof(b)), "1h30m");
	assert_string_equal(gf_duration_format(3600001, b, sizeof(b)), "1h1ms");
	assert_string_equal(gf_duration_format(60000, b, sizeof(b)), "1m");
	assert_string_equal(gf_duration_format(8 * 86400000LL, b, sizeof(b)), "1w1d");
	assert_string_equal(gf_duration_format(-3, b, sizeof(b)), "-3ms");
	assert_string_equal(gf_duration_format(5400000, b, 3), "1h"); /* truncated, terminated */
	/* What it writes reads back as the same duration. */
	static const int64_t v[] = { 1, 999, 1000, 61000, 3599999, 90061001, GF_DURATION_MAX_MS };
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		ok(gf_duration_format(v[i], b, sizeof(b)), 0, v[i]);
}

static void test_build_info(void **state)
{
	(void)state;
	struct gf_obuf o;
	gf_obuf_init(&o, 4096);
	gf_build_info_render(&o);
	char want[256];
	snprintf(want, sizeof(want), "gpufleet_build_info{version=\"%s\",commit=\"%s\"} 1\n", gf_build_version(),
		 gf_build_commit());
	assert_non_null(strstr(o.data, "# TYPE gpufleet_build_info gauge\n"));
	assert_non_null(strstr(o.data, want));
	assert_string_not_equal(gf_build_version(), "unknown"); /* CMake's project version reached the code */
	gf_obuf_release(&o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_units),       cmocka_unit_test(test_combinations), cmocka_unit_test(test_plain_numbers),
		cmocka_unit_test(test_malformed),   cmocka_unit_test(test_format),       cmocka_unit_test(test_build_info),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
