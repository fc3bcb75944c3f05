/*
 * tests/deviceplugin/test_dp_match.c - reading the pending pods'
 * assignments for the device plugin (agent/dp_match.c): which pods count,
 * oldest first, malformed annotations skipped, and what matches.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <cjson/cJSON.h>

#include "agent/dp_match.h"

#define POD(name, uid, ts, uuids, milli, res, qty)                                                            \
	"{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"ns\",\"uid\":\"" uid "\",\"creationTimestamp\":\"" ts \
	"\",\"annotations\":{\"gpufleet.io/assigned-gpu-uuids\":\"" uuids "\",\"gpufleet.io/assigned-gpu-milli\":\"" \
	milli "\"}},\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"" res "\":\"" qty "\"}}}]}}"

static void test_decode_sorts_and_filters(void **state)
{
	(void)state;
	const char *text = "{\"items\":["
		POD("late", "u3", "2026-12-01T15:00:02Z", "GPU-b", "250", "gpufleet.io/gpu-milli", "250") ","
		POD("early", "u1", "2026-12-01T15:00:00Z", "GPU-a", "250", "gpufleet.io/gpu-milli", "250") ","
		POD("whole", "u2", "2026-12-01T15:00:01Z", "GPU-a,GPU-c", "1000,1000", "nvidia.com/gpu", "2") ","
		POD("bad-milli", "u4", "2026-12-01T15:00:00Z", "GPU-a", "half", "gpufleet.io/gpu-milli", "500") ","
		POD("uneven", "u5", "2026-12-01T15:00:00Z", "GPU-a,GPU-b", "250,500", "gpufleet.io/gpu-milli", "250") ","
		"{\"metadata\":{\"name\":\"no-annotations\",\"namespace\":\"ns\",\"uid\":\"u6\"},"
		"\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"gpufleet.io/gpu-milli\":\"1\"}}}]}}"
		"]}";
	cJSON *doc = cJSON_Parse(text);
	assert_non_null(doc);
	struct gf_dp_pod pods[8];
	unsigned skipped;
	unsigned n = gf_dp_pods_decode(doc, "gpufleet.io/gpu-milli", pods, 8, &skipped);
	assert_int_equal(n, 2);
	assert_int_equal(skipped, 2); /* "half" and uneven shares; no annotations is not a gpufleet pod */
	assert_string_equal(pods[0].name, "early");
	assert_string_equal(pods[1].name, "late");
	assert_int_equal(pods[0].milli, 250);
	assert_int_equal(pods[0].containers, 1);
	n = gf_dp_pods_decode(doc, "nvidia.com/gpu", pods, 8, &skipped);
	assert_int_equal(n, 1);
	assert_string_equal(pods[0].name, "whole");
	assert_int_equal(pods[0].nuuids, 2);
	assert_int_equal(pods[0].milli, 1000);
	cJSON_Delete(doc);
}

static void test_matches(void **state)
{
	(void)state;
	struct gf_dp_pod share = { .nuuids = 1, .milli = 250, .containers = 1 };
	memcpy(share.uuids[0], "GPU-a", 6);
	const char *a[] = { "GPU-a" }, *b[] = { "GPU-b" }, *ab[] = { "GPU-b", "GPU-a" };
	assert_true(gf_dp_pod_matches(&share, a, 1, 250));
	assert_false(gf_dp_pod_matches(&share, a, 1, 251)); /* another size */
	assert_false(gf_dp_pod_matches(&share, b, 1, 250)); /* another GPU */
	assert_false(gf_dp_pod_matches(&share, a, 1, 0));   /* whole GPU asked */
	struct gf_dp_pod whole = { .nuuids = 2, .milli = 1000, .containers = 1 };
	memcpy(whole.uuids[0], "GPU-a", 6);
	memcpy(whole.uuids[1], "GPU-b", 6);
	assert_true(gf_dp_pod_matches(&whole, ab, 2, 0)); /* any order */
	assert_false(gf_dp_pod_matches(&whole, a, 1, 0));
	assert_false(gf_dp_pod_matches(&whole, ab, 2, 1000)); /* a share of 1000 units is not 2 GPUs */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_sorts_and_filters),
		cmocka_unit_test(test_matches),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
