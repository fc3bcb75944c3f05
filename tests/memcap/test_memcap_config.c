/*
 * tests/memcap/test_memcap_config.c - the memory cap's limit-file parser:
 * the accepted forms, per-device overrides, and each error naming its line
 * and field.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "memcap/memcap_config.h"

static bool parse(const char *text, struct gf_memcap_config *c, char *err)
{
	return gf_memcap_config_parse(text, strlen(text), c, err, 256);
}

static void test_all_devices(void **state)
{
	(void)state;
	struct gf_memcap_config c;
	char err[256];
	assert_true(parse("# written by gpufleet agent\nlimit_bytes = 10737418240\n", &c, err));
	for (int d = 0; d < GF_MEMCAP_MAX_DEVICES; d++)
		assert_int_equal(c.limit[d], UINT64_C(10737418240));
	assert_true(parse("\tlimit_bytes=1   # one byte\r\n", &c, err));
	assert_int_equal(c.limit[0], 1);
	assert_true(parse("limit_bytes = 4611686018427387904", &c, err)); /* 2^62, no newline */
	assert_int_equal(c.limit[15], UINT64_C(1) << 62);
}

static void test_per_device_overrides_in_any_order(void **state)
{
	(void)state;
	struct gf_memcap_config c;
	char err[256];
	assert_true(parse("limit_bytes.1 = 5\nlimit_bytes = 7\nlimit_bytes.15 = 9\n", &c, err));
	assert_int_equal(c.limit[0], 7);
	assert_int_equal(c.limit[1], 5);
	assert_int_equal(c.limit[2], 7);
	assert_int_equal(c.limit[15], 9);
	assert_true(parse("limit_bytes.3 = 5\n", &c, err));
	assert_int_equal(c.limit[3], 5);
	assert_int_equal(c.limit[0], 0); /* uncapped */
}

static void test_errors_name_line_and_field(void **state)
{
	(void)state;
	struct gf_memcap_config c;
	char err[256];
	static const struct {
		const char *text, *err;
	} bad[] = {
		{ "limit_bytes = 10G\n", "line 1: field `limit_bytes`: expected a byte count 1..2^62 in decimal, got `10G`" },
		{ "# x\n\nlimit_bytes = 0\n", "line 3: field `limit_bytes`: expected a byte count" },
		{ "limit_bytes = 4611686018427387905\n", "line 1: field `limit_bytes`: expected" },
		{ "limit_bytes = -1\n", "line 1: field `limit_bytes`: expected" },
		{ "limit_bytes =\n", "line 1: field `limit_bytes`: expected" },
		{ "limit_bytes.16 = 5\n", "line 1: unknown key `limit_bytes.16`" },
		{ "limit_bytes. = 5\n", "line 1: unknown key `limit_bytes.`" },
		{ "limit_bytes.x = 5\n", "line 1: unknown key" },
		{ "limit = 5\n", "line 1: unknown key `limit`" },
		{ "limit_bytes 5\n", "line 1: expected `limit_bytes = BYTES`" },
		{ "# nothing\n\n", "line 2: no limit_bytes setting in the file" },
		{ "", "line 0: no limit_bytes setting" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_false(parse(bad[i].text, &c, err));
		if (strncmp(err, bad[i].err, strlen(bad[i].err)) != 0)
			fail_msg("input %zu: got \"%s\", want a message starting \"%s\"", i, err, bad[i].err);
	}
	static const char nul[] = "limit_bytes = 5\0\n";
	assert_false(gf_memcap_config_parse(nul, sizeof(nul) - 1, &c, err, sizeof(err)));
	assert_string_equal(err, "line 1: NUL byte");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_devices),
		cmocka_unit_test(test_per_device_overrides_in_any_order),
		cmocka_unit_test(test_errors_name_line_and_field),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
