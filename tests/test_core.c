/* tests/test_core.c - core/: error names and messages, the seeded generator. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "core/error.h"
#include "core/rng.h"

static void test_error_names(void **state)
{
	(void)state;
	assert_string_equal(gf_err_name(GF_OK), "GF_OK");
	assert_string_equal(gf_err_name(GF_PARSE), "GF_PARSE");
	assert_string_equal(gf_strerror(GF_NOMEM), "out of memory");
	assert_string_equal(gf_err_name((gf_err)999), "GF_UNKNOWN");
	assert_string_equal(gf_strerror((gf_err)-1), "unknown error");
}

static void test_rng_deterministic(void **state)
{
	struct gf_rng a, b, c;

	(void)state;
	gf_rng_init(&a, 42);
	gf_rng_init(&b, 42);
	gf_rng_init(&c, 43);
	int differ = 0;
	for (int i = 0; i < 1000; i++) {
		uint64_t x = gf_rng_next(&a);
		assert_int_equal(x, gf_rng_next(&b));
		differ += x != gf_rng_next(&c);
	}
	assert_true(differ > 990);
}

static void test_rng_below_uniform(void **state)
{
	struct gf_rng r;
	int hist[7] = { 0 };

	(void)state;
	gf_rng_init(&r, 1);
	for (int i = 0; i < 70000; i++) {
		uint64_t v = gf_rng_below(&r, 7);
		assert_true(v < 7);
		hist[v]++;
	}
	for (int i = 0; i < 7; i++) {
		assert_in_range(hist[i], 9500, 10500);
	}
	assert_int_equal(gf_rng_below(&r, 1), 0);
	double d = gf_rng_double(&r);
	assert_true(d >= 0.0 && d < 1.0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_error_names),
		cmocka_unit_test(test_rng_deterministic),
		cmocka_unit_test(test_rng_below_uniform),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
