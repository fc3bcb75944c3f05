/*
 * tests/metrics-api/test_ma_quantity.c - canonical Kubernetes quantities:
 * the spec's table, zero, negatives, int64 extremes, rounding, non-finite.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <string.h>
#include <cmocka.h>

#include "metricsapi/quantity.h"

static void milli(int64_t m, const char *want)
{
	char q[GF_QUANTITY_MAX];
	gf_quantity_format_milli(m, q);
	assert_string_equal(q, want);
}

static void val(double v, const char *want)
{
	char q[GF_QUANTITY_MAX];
	assert_int_equal(gf_quantity_format(v, q), GF_OK);
	assert_string_equal(q, want);
}

static void test_spec_table(void **st)
{
	(void)st;
	val(70, "70");
	val(0.7, "700m");
	val(1.5, "1500m");
	val(1500, "1500");
	val(2000, "2k");
	val(0.001, "1m");
	val(12.345, "12345m");
	val(-3, "-3");
	val(2500000, "2500k");
	val(95, "95");
	val(0.95, "950m");
	val(12000, "12k");
}

static void test_edges(void **st)
{
	(void)st;
	milli(0, "0");
	milli(1, "1m");
	milli(-1, "-1m");
	milli(10, "10m");
	milli(100, "100m");
	milli(1000, "1");
	milli(10000, "10");
	milli(100000, "100");
	milli(1000000, "1k");
	milli(1010000, "1010");
	milli(999999, "999999m");
	milli(1000000000000LL, "1G");
	milli(1000000000000000000LL, "1P");
	milli(INT64_MAX, "9223372036854775807m");
	milli(INT64_MIN, "-9223372036854775808m");
	milli(-2000000, "-2k");
	val(0, "0");
	val(-0.0, "0");
	val(0.0004, "0");    /* below half a milli-unit */
	val(0.0005, "1m");   /* halves round away from zero */
	val(87.5, "87500m");
	val(33.3333333, "33333m");
	val(100, "100");
	val(1e15, "1P"); /* 10^18 milli */
}

static void test_non_finite(void **st)
{
	(void)st;
	char q[GF_QUANTITY_MAX];
	assert_int_equal(gf_quantity_format(NAN, q), GF_RANGE);
	assert_string_equal(q, "0");
	assert_int_equal(gf_quantity_format(INFINITY, q), GF_RANGE);
	assert_int_equal(gf_quantity_format(-INFINITY, q), GF_RANGE);
	assert_int_equal(gf_quantity_format(NAN, q), GF_RANGE);
}

/* Values from 9.2e15 on (issue 10: they were dropped silently): the
 * shortest decimal of the double in canonical form, parseable by
 * apimachinery's ParseQuantity to the same value. */
static void test_large(void **st)
{
	(void)st;
	val(9.1e15, "9100T");          /* the milli path, just below */
	val(9.2e15, "9200T");          /* the first value that was dropped */
	val(-9.2e15, "-9200T");
	val(1e16, "10P");
	val(1.5e17, "150P");
	val(1.2345e20, "123450P");
	val(2e18, "2E");
	val(1e20, "100E");
	val(1.1e20, "110E");
	val(9223372036854775807.0, "9223372036854776k"); /* 2^63: its shortest digits */
	val(18014398509481984.0, "18014398509481984");    /* 2^54: all 17 digits needed */
	val(1152921504606847232.0, "1152921504606847200"); /* 2^60 + 256: 17 digits, e 2 -> 0 */
	val(1e21, "1e21");             /* past E: DecimalExponent form */
	val(-1.23e25, "-12300e21");
	val(1e308, "100e306");
	val(1.7976931348623157e308, "179769313486231570e291"); /* DBL_MAX */
	char q[GF_QUANTITY_MAX];
	assert_int_equal(gf_quantity_format(-1.7976931348623157e308, q), GF_OK);
	assert_true(strlen(q) < GF_QUANTITY_MAX - 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spec_table),
		cmocka_unit_test(test_edges),
		cmocka_unit_test(test_non_finite),
		cmocka_unit_test(test_large),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
