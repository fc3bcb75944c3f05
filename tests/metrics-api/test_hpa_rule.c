/*
 * tests/metrics-api/test_hpa_rule.c - autoscale/hpa: the HPA replica rule
 * against the spec's worked examples (External Value and AverageValue, the
 * default behavior's scale-up and scale-down), the policies (Pods/Percent,
 * Max/Min/Disabled) and the sequence the end-to-end test observes from the
 * real controller (2 -> 3 -> 5 -> 6, back to 2 after the 30 s window).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "autoscale/hpa.h"

static void test_external_value(void **st)
{
	(void)st;
	/* spec §3.1: target 70, two series 80 + 75, current 3, ready 3 -> 7 */
	assert_int_equal(gf_hpa_external_value(155000, 70000, 3, 3, 0.1), 7);
	/* tolerance: ratio 1.05 keeps current */
	assert_int_equal(gf_hpa_external_value(73500, 70000, 4, 4, 0.1), 4);
	/* ready pods, not current, multiply */
	assert_int_equal(gf_hpa_external_value(95000, 70000, 6, 2, 0.1), 3);
	/* 10% on 6 pods -> 1 (min applies later) */
	assert_int_equal(gf_hpa_external_value(10000, 70000, 6, 6, 0.1), 1);
	assert_int_equal(gf_hpa_external_value(1e30, 1, 1, 1, 0.1), INT32_MAX);
	assert_int_equal(gf_hpa_external_value(5, 0, 3, 3, 0.1), 3);
}

static void test_external_average(void **st)
{
	(void)st;
	/* spec §3.2: averageValue 50, usage 155, n 3 -> within tolerance -> 3; usage 200 -> 4 */
	assert_int_equal(gf_hpa_external_average(155000, 50000, 3, 0.1), 3);
	assert_int_equal(gf_hpa_external_average(200000, 50000, 3, 0.1), 4);
	/* an average metric under AverageValue divides again by replicas: 95 / 70 on 2 pods -> 2 */
	assert_int_equal(gf_hpa_external_average(95000, 70000, 2, 0.1), 2);
}

static void test_default_behavior(void **st)
{
	(void)st;
	struct gf_hpa_behavior b = gf_hpa_behavior_default(300);
	struct gf_hpa_state s;
	memset(&s, 0, sizeof(s));
	/* spec §6.2: current 3, desired 7 -> Pods 3+4=7, Percent 6, Max -> 7 at once */
	assert_int_equal(gf_hpa_normalize(&s, &b, 1, 16, 3, 7, 1000), 7);
	/* desired drops to 2: stays 7 while a 7 is in the 300 s window */
	int64_t t = 1015;
	int32_t cur = 7;
	for (; t < 1300; t += 15) {
		cur = gf_hpa_normalize(&s, &b, 1, 16, cur, 2, t);
		assert_int_equal(cur, 7);
	}
	/* once the 7 aged out: straight to 2 (Percent 100 per 15 s) */
	cur = gf_hpa_normalize(&s, &b, 1, 16, cur, 2, 1300);
	assert_int_equal(cur, 2);
	/* min/max bound the result */
	memset(&s, 0, sizeof(s));
	assert_int_equal(gf_hpa_normalize(&s, &b, 1, 5, 3, 7, 0), 5);
	memset(&s, 0, sizeof(s));
	b.down.window_s = 0;
	assert_int_equal(gf_hpa_normalize(&s, &b, 2, 5, 3, 1, 0), 2);
}

static void test_policies(void **st)
{
	(void)st;
	struct gf_hpa_behavior b = gf_hpa_behavior_default(0);
	struct gf_hpa_state s;
	/* Min of {Pods 4, Percent 100} on 10 -> 14 */
	memset(&s, 0, sizeof(s));
	b.up.select = GF_HPA_SELECT_MIN;
	assert_int_equal(gf_hpa_normalize(&s, &b, 1, 100, 10, 40, 0), 14);
	/* Disabled: no scale-up */
	memset(&s, 0, sizeof(s));
	b.up.select = GF_HPA_SELECT_DISABLED;
	assert_int_equal(gf_hpa_normalize(&s, &b, 1, 100, 10, 40, 0), 10);
	/* down: Pods 1 per 120 s: 10 -> 9, then no more within the period */
	memset(&s, 0, sizeof(s));
	b.down.npolicies = 1;
	b.down.policies[0] = (struct gf_hpa_policy){ GF_HPA_PODS, 1, 120 };
	assert_int_equal(gf_hpa_normalize(&s, &b, 1, 100, 10, 2, 0), 9);
	assert_int_equal(gf_hpa_normalize(&s, &b, 1, 100, 9, 2, 60), 9);
	assert_int_equal(gf_hpa_normalize(&s, &b, 1, 100, 9, 2, 121), 8);
	/* Percent 50 down: trunc(8 x 0.5) = 4 */
	memset(&s, 0, sizeof(s));
	b.down.policies[0] = (struct gf_hpa_policy){ GF_HPA_PERCENT, 50, 60 };
	assert_int_equal(gf_hpa_normalize(&s, &b, 1, 100, 8, 1, 0), 4);
	/* scale-up window: every recommendation of the window must exceed current */
	memset(&s, 0, sizeof(s));
	b = gf_hpa_behavior_default(0);
	b.up.window_s = 60;
	assert_int_equal(gf_hpa_normalize(&s, &b, 1, 100, 4, 4, 0), 4);
	assert_int_equal(gf_hpa_normalize(&s, &b, 1, 100, 4, 8, 30), 4);
	assert_int_equal(gf_hpa_normalize(&s, &b, 1, 100, 4, 8, 61), 8);
}

/* What ma_hpa_e2e sees from kube-controller-manager: min 2, max 6, target
 * 70, scaleUp {window 0, Pods 4 / 15 s}, scaleDown {window 30, Percent 100 /
 * 15 s}, sync every 5 s, new pods Ready by the next pass. */
static void test_e2e_sequence(void **st)
{
	(void)st;
	struct gf_hpa_behavior b = gf_hpa_behavior_default(30);
	b.up.npolicies = 1;
	b.up.policies[0] = (struct gf_hpa_policy){ GF_HPA_PODS, 4, 15 };
	struct gf_hpa_state s;
	memset(&s, 0, sizeof(s));
	int32_t cur = 2, seen[8], n = 0;
	int64_t t = 0;
	for (; t < 60; t += 5) {
		int32_t d = gf_hpa_external_value(95000, 70000, cur, cur, 0.1);
		int32_t next = gf_hpa_normalize(&s, &b, 2, 6, cur, d, t);
		if (next != cur && n < 8)
			seen[n++] = next;
		cur = next;
	}
	assert_int_equal(n, 3);
	assert_int_equal(seen[0], 3);
	assert_int_equal(seen[1], 5);
	assert_int_equal(seen[2], 6);
	/* 10% from the pass at `drop` on: back to 2 once the last high
	 * recommendation (the pass before) left the 30 s window */
	int64_t drop = t, down = -1;
	for (; t < drop + 120 && down < 0; t += 5) {
		int32_t d = gf_hpa_external_value(10000, 70000, cur, cur, 0.1);
		cur = gf_hpa_normalize(&s, &b, 2, 6, cur, d, t);
		if (cur != 6)
			down = t;
	}
	assert_int_equal(cur, 2);
	assert_int_equal(down - (drop - 5), 30);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_external_value),
		cmocka_unit_test(test_external_average),
		cmocka_unit_test(test_default_behavior),
		cmocka_unit_test(test_policies),
		cmocka_unit_test(test_e2e_sequence),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
