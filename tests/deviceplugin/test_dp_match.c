/*
 * tests/deviceplugin/test_dp_match.c - reading the pending pods'
 * assignments for the device plugin (agent/dp_match.c): which pods count,
 * bind order (the scheduler's assigned-at stamp, else the creation time),
 * malformed annotations skipped, what matches, and the kubelet's sequence
 * (preference then Allocate per pod, in bind order) with and without the
 * stamps: the swaps a real kubelet showed (docs/agent.md) and their fix.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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

/* A share pod with an assigned-at stamp (at may be NULL: none). */
static cJSON *stamped(const char *name, const char *uid, const char *created, const char *at, const char *gpu,
		      const char *milli)
{
	char text[1024];
	snprintf(text, sizeof(text),
		 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"ns\",\"uid\":\"%s\",\"creationTimestamp\":\"%s\","
		 "\"annotations\":{\"gpufleet.io/assigned-gpu-uuids\":\"%s\",\"gpufleet.io/assigned-gpu-milli\":\"%s\"%s%s%s}},"
		 "\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"gpufleet.io/gpu-milli\":\"%s\"}}}]}}",
		 name, uid, created, gpu, milli, at ? ",\"gpufleet.io/assigned-at\":\"" : "", at ? at : "",
		 at ? "\"" : "", milli);
	cJSON *o = cJSON_Parse(text);
	assert_non_null(o);
	return o;
}

static void test_bind_order(void **state)
{
	(void)state;
	cJSON *doc = cJSON_CreateObject(), *items = cJSON_AddArrayToObject(doc, "items");
	/* Created in one second; UIDs in the opposite order of the bindings. */
	cJSON_AddItemToArray(items, stamped("b1", "u9", "2026-12-01T15:00:00Z", "2026-12-01T15:00:01.000200Z", "GPU-a", "250"));
	cJSON_AddItemToArray(items, stamped("b0", "u8", "2026-12-01T15:00:00Z", "2026-12-01T15:00:01.000100Z", "GPU-b", "250"));
	/* Unstamped, created at 15:00:01: between .000000 and .000100. */
	cJSON_AddItemToArray(items, stamped("old", "u1", "2026-12-01T15:00:01Z", NULL, "GPU-c", "250"));
	/* Stamped before the unstamped one's creation second. */
	cJSON_AddItemToArray(items, stamped("first", "u7", "2026-12-01T14:00:00Z", "2026-12-01T15:00:00.999999Z", "GPU-d", "250"));
	/* Malformed stamps: skipped like other malformed annotations. */
	cJSON_AddItemToArray(items, stamped("bad1", "u2", "2026-12-01T15:00:00Z", "2026-12-01T15:00:01Z", "GPU-a", "250"));
	cJSON_AddItemToArray(items, stamped("bad2", "u3", "2026-12-01T15:00:00Z", "yesterday", "GPU-a", "250"));
	struct gf_dp_pod pods[8];
	unsigned skipped;
	unsigned n = gf_dp_pods_decode(doc, "gpufleet.io/gpu-milli", pods, 8, &skipped);
	assert_int_equal(n, 4);
	assert_int_equal(skipped, 2);
	assert_string_equal(pods[0].name, "first");
	assert_string_equal(pods[1].name, "old");
	assert_string_equal(pods[2].name, "b0");
	assert_string_equal(pods[3].name, "b1");
	assert_string_equal(pods[1].order, "2026-12-01T15:00:01.000000Z");
	cJSON_Delete(doc);
}

/* The kubelet admits pods in bind order, one container at a time: it asks
 * the plugin's preference (the first pod in the plugin's order with a
 * container left and a request of that size: its GPU) and then Allocates
 * those IDs, which the plugin matches (gf_dp_find_pod).  The container
 * belongs to the kubelet's pod; the plugin's match must be that pod and
 * the GPU that pod's assignment.  Returns the containers that got another
 * pod's GPU or were refused. */
static unsigned kubelet_sequence(bool stamps)
{
	enum { N = 16 };
	cJSON *doc = cJSON_CreateObject(), *items = cJSON_AddArrayToObject(doc, "items");
	/* Pod i is bound i-th, all created in one second; UIDs are random with
	 * respect to the bind order (here: reversed in pairs, scrambled). */
	for (int i = 0; i < N; i++) {
		char name[16], uid[16], at[32], gpu[16];
		snprintf(name, sizeof(name), "share-%d", i);
		snprintf(uid, sizeof(uid), "u%02d", (i * 7 + 3) % N);
		snprintf(at, sizeof(at), "2026-12-01T15:00:02.%06dZ", 1000 + i * 37);
		snprintf(gpu, sizeof(gpu), "GPU-%d", i % 8);
		cJSON_AddItemToArray(items, stamped(name, uid, "2026-12-01T15:00:01Z", stamps ? at : NULL, gpu, "250"));
	}
	struct gf_dp_pod pods[N];
	unsigned skipped, used[N] = { 0 }, bad = 0;
	unsigned n = gf_dp_pods_decode(doc, "gpufleet.io/gpu-milli", pods, N, &skipped);
	assert_int_equal(n, N);
	for (int i = 0; i < N; i++) { /* the kubelet admits share-i */
		int pref = -1;
		for (unsigned k = 0; k < n && pref < 0; k++)
			if (used[k] < pods[k].containers && pods[k].milli == 250)
				pref = (int)k;
		assert_true(pref >= 0);
		const char *ids[1] = { pods[pref].uuids[0] };
		int k = gf_dp_find_pod(pods, n, used, ids, 1, 250);
		char mine[16];
		snprintf(mine, sizeof(mine), "GPU-%d", i % 8);
		if (k < 0) {
			bad++;
			continue;
		}
		used[k]++;
		if (strcmp(ids[0], mine) != 0)
			bad++;
	}
	cJSON_Delete(doc);
	return bad;
}

static void test_kubelet_sequence(void **state)
{
	(void)state;
	/* Without stamps the order is (creation second, UID): swaps, as seen with
	 * the real kubelet.  With them, none. */
	unsigned before = kubelet_sequence(false), after = kubelet_sequence(true);
	printf("kubelet sequence, 16 same-size pods created in one second: %u containers on another pod's GPU "
	       "without assigned-at, %u with it\n", before, after);
	assert_true(before > 0);
	assert_int_equal(after, 0);
}

static void test_find_pod_counts_containers(void **state)
{
	(void)state;
	struct gf_dp_pod pods[2] = { { .nuuids = 1, .milli = 250, .containers = 2 },
				     { .nuuids = 1, .milli = 250, .containers = 1 } };
	memcpy(pods[0].uuids[0], "GPU-a", 6);
	memcpy(pods[1].uuids[0], "GPU-a", 6);
	const char *a[] = { "GPU-a" };
	unsigned used[2] = { 0, 0 };
	assert_int_equal(gf_dp_find_pod(pods, 2, used, a, 1, 250), 0);
	used[0] = 1;
	assert_int_equal(gf_dp_find_pod(pods, 2, used, a, 1, 250), 0); /* a second container */
	used[0] = 2;
	assert_int_equal(gf_dp_find_pod(pods, 2, used, a, 1, 250), 1);
	used[1] = 1;
	assert_int_equal(gf_dp_find_pod(pods, 2, used, a, 1, 250), -1); /* all admitted: refused */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_sorts_and_filters),
		cmocka_unit_test(test_matches),
		cmocka_unit_test(test_bind_order),
		cmocka_unit_test(test_kubelet_sequence),
		cmocka_unit_test(test_find_pod_counts_containers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
