/* tests/scheduler/test_k8s_lease.c - leader election's decisions (k8s/lease.h), with
 * the clock passed in: create when absent, wait while another holder's record keeps
 * changing or has not yet been unchanged for a lease duration, take it over after that
 * (acquireTime new, leaseTransitions + 1), renew keeping both, a released lease taken at
 * once, leadership lost at the renew deadline or as soon as another holder is seen, the
 * Lease codec (fields, types, lengths) and the release record. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "k8s/lease.h"

static struct gf_lease_record rec(const char *holder, int dur, const char *acq, const char *ren, int tr)
{
	struct gf_lease_record r;
	memset(&r, 0, sizeof(r));
	snprintf(r.holder, sizeof(r.holder), "%s", holder);
	r.duration_s = dur;
	snprintf(r.acquire_time, sizeof(r.acquire_time), "%s", acq);
	snprintf(r.renew_time, sizeof(r.renew_time), "%s", ren);
	r.transitions = tr;
	return r;
}

static void test_create_when_absent(void **st)
{
	(void)st;
	struct gf_lease_elector e;
	struct gf_lease_record w;
	gf_lease_elector_init(&e, "me", 0, 0, 0);
	assert_int_equal(e.lease_s, 15);
	assert_int_equal(e.renew_s, 10);
	assert_int_equal(e.retry_s, 2);
	assert_true(gf_lease_expires_in(&e, 0) < 0); /* nothing seen */
	assert_int_equal(gf_lease_plan(&e, NULL, 100.0, "T1", &w), GF_LEASE_CREATE);
	assert_string_equal(w.holder, "me");
	assert_int_equal(w.duration_s, 15);
	assert_string_equal(w.acquire_time, "T1");
	assert_string_equal(w.renew_time, "T1");
	assert_int_equal(w.transitions, 0);
	assert_false(gf_lease_leading(&e, 100.0));
	gf_lease_written(&e, true, 100.0, &w);
	assert_true(gf_lease_leading(&e, 100.0));
	assert_true(gf_lease_leading(&e, 109.9));
	assert_false(gf_lease_leading(&e, 110.0)); /* renew deadline: 10 s after the write was sent */
}

static void test_other_holder_expires_on_our_clock(void **st)
{
	(void)st;
	struct gf_lease_elector e;
	struct gf_lease_record w;
	gf_lease_elector_init(&e, "me", 15, 10, 2);
	struct gf_lease_record r1 = rec("other", 15, "A0", "R1", 3);
	/* first seen at t=1000: valid until 1015 on our clock, whatever renewTime says */
	assert_int_equal(gf_lease_plan(&e, &r1, 1000.0, "S", &w), GF_LEASE_WAIT);
	assert_int_equal(gf_lease_plan(&e, &r1, 1014.9, "S", &w), GF_LEASE_WAIT);
	/* renewed at 1010 (record changed): the clock restarts */
	struct gf_lease_record r2 = rec("other", 15, "A0", "R2", 3);
	assert_int_equal(gf_lease_plan(&e, &r2, 1010.0, "S", &w), GF_LEASE_WAIT);
	assert_int_equal(gf_lease_plan(&e, &r2, 1024.9, "S", &w), GF_LEASE_WAIT);
	assert_true(gf_lease_expires_in(&e, 1020.0) > 4.99 && gf_lease_expires_in(&e, 1020.0) < 5.01);
	assert_true(gf_lease_expires_in(&e, 1030.0) == 0);
	/* unchanged for its duration: taken over */
	assert_int_equal(gf_lease_plan(&e, &r2, 1025.0, "T", &w), GF_LEASE_UPDATE);
	assert_string_equal(w.holder, "me");
	assert_string_equal(w.acquire_time, "T");
	assert_string_equal(w.renew_time, "T");
	assert_int_equal(w.transitions, 4);
	assert_int_equal(w.duration_s, 15);
	/* the holder's own duration counts, not ours */
	struct gf_lease_elector e2;
	gf_lease_elector_init(&e2, "me", 15, 10, 2);
	struct gf_lease_record r3 = rec("other", 60, "A0", "R", 0);
	assert_int_equal(gf_lease_plan(&e2, &r3, 0.0, "S", &w), GF_LEASE_WAIT);
	assert_int_equal(gf_lease_plan(&e2, &r3, 59.0, "S", &w), GF_LEASE_WAIT);
	assert_int_equal(gf_lease_plan(&e2, &r3, 60.0, "S", &w), GF_LEASE_UPDATE);
}

static void test_renew_keeps_acquire_and_transitions(void **st)
{
	(void)st;
	struct gf_lease_elector e;
	struct gf_lease_record w;
	gf_lease_elector_init(&e, "me", 15, 10, 2);
	struct gf_lease_record mine = rec("me", 15, "A7", "R7", 5);
	assert_int_equal(gf_lease_plan(&e, &mine, 50.0, "R8", &w), GF_LEASE_UPDATE);
	assert_string_equal(w.acquire_time, "A7");
	assert_string_equal(w.renew_time, "R8");
	assert_int_equal(w.transitions, 5);
	gf_lease_written(&e, true, 50.0, &w);
	assert_true(gf_lease_leading(&e, 55.0));
	/* a failed renewal (409, timeout) does not end leadership before the deadline ... */
	gf_lease_written(&e, false, 52.0, &w);
	assert_true(gf_lease_leading(&e, 59.9));
	assert_false(gf_lease_leading(&e, 60.0));
	/* ... but seeing another holder does, at once */
	gf_lease_written(&e, true, 60.0, &w);
	assert_true(gf_lease_leading(&e, 61.0));
	struct gf_lease_record taken = rec("other", 15, "X", "X", 6);
	assert_int_equal(gf_lease_plan(&e, &taken, 61.0, "S", &w), GF_LEASE_WAIT);
	assert_false(gf_lease_leading(&e, 61.0));
}

static void test_released_is_free(void **st)
{
	(void)st;
	struct gf_lease_elector e;
	struct gf_lease_record w, rel;
	gf_lease_elector_init(&e, "me", 15, 10, 2);
	struct gf_lease_record cur = rec("old", 15, "A", "R", 2);
	gf_lease_release_record(&cur, "Z", &rel);
	assert_string_equal(rel.holder, "");
	assert_int_equal(rel.duration_s, 1);
	assert_int_equal(rel.transitions, 2);
	assert_string_equal(rel.renew_time, "Z");
	/* an empty holder is free at once, even just observed */
	assert_int_equal(gf_lease_plan(&e, &rel, 5.0, "T", &w), GF_LEASE_UPDATE);
	assert_true(gf_lease_expires_in(&e, 5.0) < 0); /* released: no holder to wait for */
	assert_int_equal(w.transitions, 3);
	assert_string_equal(w.acquire_time, "T");
}

static void test_codec(void **st)
{
	(void)st;
	const char *doc = "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\","
			  "\"metadata\":{\"name\":\"l\",\"namespace\":\"ns\",\"resourceVersion\":\"4711\"},"
			  "\"spec\":{\"holderIdentity\":\"h_1\",\"leaseDurationSeconds\":15,"
			  "\"acquireTime\":\"2026-12-01T15:44:04.123456Z\",\"renewTime\":\"2026-12-01T15:44:06.000001Z\","
			  "\"leaseTransitions\":7}}";
	struct gf_lease_record r;
	char rv[32], err[200] = "";
	assert_int_equal(gf_lease_decode_text(doc, strlen(doc), &r, rv, sizeof(rv), err, sizeof(err)), GF_OK);
	assert_string_equal(rv, "4711");
	assert_string_equal(r.holder, "h_1");
	assert_int_equal(r.duration_s, 15);
	assert_string_equal(r.acquire_time, "2026-12-01T15:44:04.123456Z");
	assert_string_equal(r.renew_time, "2026-12-01T15:44:06.000001Z");
	assert_int_equal(r.transitions, 7);
	/* round trip */
	cJSON *o = gf_lease_encode("ns", "l", "4711", &r);
	assert_non_null(o);
	struct gf_lease_record r2;
	char rv2[32];
	assert_int_equal(gf_lease_decode(o, &r2, rv2, sizeof(rv2), err, sizeof(err)), GF_OK);
	assert_memory_equal(&r, &r2, sizeof(r));
	assert_string_equal(rv2, "4711");
	cJSON_Delete(o);
	/* a new Lease has no resourceVersion */
	o = gf_lease_encode("ns", "l", "", &r);
	assert_null(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "metadata"), "resourceVersion"));
	cJSON_Delete(o);
	/* empty spec: all absent */
	const char *empty = "{\"metadata\":{\"resourceVersion\":\"1\"},\"spec\":{}}";
	assert_int_equal(gf_lease_decode_text(empty, strlen(empty), &r, rv, sizeof(rv), err, sizeof(err)), GF_OK);
	assert_string_equal(r.holder, "");
	assert_int_equal(r.duration_s, 0);
	/* wrong types and sizes name the field */
	static const struct {
		const char *doc, *want;
	} bad[] = {
		{ "{\"spec\":{\"holderIdentity\":5}}", "spec.holderIdentity" },
		{ "{\"spec\":{\"leaseDurationSeconds\":\"15\"}}", "spec.leaseDurationSeconds" },
		{ "{\"spec\":{\"leaseDurationSeconds\":-1}}", "spec.leaseDurationSeconds" },
		{ "{\"spec\":{\"leaseTransitions\":1.5}}", "spec.leaseTransitions" },
		{ "{\"spec\":{\"renewTime\":\"2026-12-01T15:44:06.000001Z-and-far-too-long-for-a-time\"}}",
		  "spec.renewTime" },
		{ "{\"metadata\":{\"resourceVersion\":\"123456789012345678901234567890123456\"}}",
		  "metadata.resourceVersion" },
		{ "[]", "expected a JSON object" },
		{ "{\"spec\":[]}", "must be objects" },
		{ "{", "not JSON" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(gf_lease_decode_text(bad[i].doc, strlen(bad[i].doc), &r, rv, sizeof(rv), err,
						      sizeof(err)), GF_PARSE);
		if (!strstr(err, bad[i].want))
			fail_msg("%s: error '%s' does not name '%s'", bad[i].doc, err, bad[i].want);
	}
}

static void test_stamp_format(void **st)
{
	(void)st;
	char s[GF_LEASE_TIME_MAX];
	gf_lease_stamp(s);
	assert_int_equal(strlen(s), 27); /* 2026-12-01T15:44:04.123456Z */
	assert_int_equal(s[10], 'T');
	assert_int_equal(s[19], '.');
	assert_int_equal(s[26], 'Z');
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_when_absent),
		cmocka_unit_test(test_other_holder_expires_on_our_clock),
		cmocka_unit_test(test_renew_keeps_acquire_and_transitions),
		cmocka_unit_test(test_released_is_free),
		cmocka_unit_test(test_codec),
		cmocka_unit_test(test_stamp_format),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
