/*
 * tests/serving/test_serving.c - the serving replay's parser, demand model
 * and scalers on small traces whose answers are worked out by hand.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "autoscale/serving.h"

static gf_err parse(const char *text, struct gf_serving_trace *tr, struct gf_serving_error *err)
{
	return gf_serving_parse(text, strlen(text), "t.csv", tr, err);
}

static void expect_error(const char *text, const char *want)
{
	struct gf_serving_trace tr;
	struct gf_serving_error err;

	assert_int_equal(parse(text, &tr, &err), GF_PARSE);
	if (strcmp(err.msg, want))
		fail_msg("error \"%s\", expected \"%s\"", err.msg, want);
	assert_int_equal(tr.n, 0);
	assert_null(tr.t);
}

static void bad_input_names_line_and_field(void **state)
{
	(void)state;
	expect_error("timestamp,service_s\n100,5\n90,5\n",
		     "t.csv:3: column 1 (timestamp): 90 is earlier than line 2's 100; rows must be in time order");
	expect_error("timestamp,service_s\n100,5\n,5\n", "t.csv:3: column 1 (timestamp): missing timestamp");
	expect_error("timestamp,service_s\n100,5\n101\n", "t.csv:3: column 2 (service_s): missing value");
	expect_error("timestamp,service_s\n100,-3\n", "t.csv:2: column 2 (service_s): negative service time \"-3\"");
	expect_error("gmt_create,exec_time_seconds\n2024-11-15 16:57:50,3\n2024-11-15 16:57:49,3\n",
		     "t.csv:3: column 1 (gmt_create): 1731689869 is earlier than line 2's 1731689870; rows must be in time order");
	expect_error("gmt_create,exec_time_seconds\n2024-13-15 16:57:50,3\n",
		     "t.csv:2: column 1 (gmt_create): expected YYYY-MM-DD HH:MM:SS, found \"2024-13-15 16:57:50\"");
	expect_error("timestamp,busy_gpus\n100,1\n100,2\n",
		     "t.csv:3: column 1 (timestamp): 100 is the same as line 2's 100; rows must be in time order");
	expect_error("timestamp,service_s\n100,abc\n",
		     "t.csv:2: column 2 (service_s): expected a number up to 604800, found \"abc\"");
	expect_error("timestamp,service_s\n100,1e7\n",
		     "t.csv:2: column 2 (service_s): expected a number up to 604800, found \"1e7\"");
	expect_error("timestamp,busy_gpus\n100,2e9\n",
		     "t.csv:2: column 2 (busy_gpus): expected a number up to 1e+09, found \"2e9\"");
	expect_error("time,service_s\n1,1\n",
		     "t.csv:1: header lacks a time column; expected columns timestamp (or gmt_create) and service_s (or exec_time_seconds, or busy_gpus)");
	expect_error("", "t.csv:1: file is empty; expected a header naming timestamp and service_s or busy_gpus");
	expect_error("timestamp,service_s\n", "t.csv:1: no rows after the header");
}

static void original_columns_and_utc_dates(void **state)
{
	struct gf_serving_trace tr;
	struct gf_serving_error err;

	(void)state;
	assert_int_equal(parse("gmt_create,predict_type,exec_time_seconds\r\n2024-11-15 16:57:50,X,32.0\r\n"
			       "2024-11-15 18:16:14,Y,43.0\r\n", &tr, &err), GF_OK);
	assert_int_equal(tr.kind, GF_SERVING_REQUESTS);
	assert_int_equal(tr.n, 2);
	assert_int_equal(tr.t[0], 1731689870); /* date -u -d '2024-11-15 16:57:50' +%s */
	assert_int_equal(tr.t[1], 1731694574);
	assert_true(tr.v[1] == 43.0);
	gf_serving_trace_release(&tr);
}

static void demand_from_requests_is_overlap(void **state)
{
	struct gf_serving_trace tr;
	struct gf_serving_error err;
	struct gf_serving_demand d;

	(void)state;
	/* t0 = 60; one request 60..90 (two full steps), one 75..105 */
	assert_int_equal(parse("timestamp,service_s\n60,30\n75,30\n", &tr, &err), GF_OK);
	assert_int_equal(gf_serving_demand_build(&tr, &d), GF_OK);
	assert_int_equal(d.t0, 60);
	assert_int_equal(d.nminutes, 1);
	assert_int_equal(d.nsteps, 4);
	assert_true(fabs(d.busy[0] - 1) < 1e-12);
	assert_true(fabs(d.busy[1] - 2) < 1e-12);
	assert_true(fabs(d.busy[2] - 1) < 1e-12);
	assert_true(fabs(d.busy[3] - 0) < 1e-12);
	assert_true(fabs(d.minute[0] - 1) < 1e-12);
	assert_true(gf_serving_median_service(&tr) == 30);
	gf_serving_demand_release(&d);
	gf_serving_trace_release(&tr);
}

/* 1.4 busy GPUs for an hour, then 7 for an hour: samples every minute. */
static void step_trace(struct gf_serving_trace *tr)
{
	char *text = malloc(64 * 130);
	size_t len = 0;
	struct gf_serving_error err;

	assert_non_null(text);
	len += (size_t)snprintf(text + len, 64, "timestamp,busy_gpus\n");
	for (int m = 0; m < 120; m++)
		len += (size_t)snprintf(text + len, 64, "%d,%s\n", m * 60, m < 60 ? "1.4" : "7");
	assert_int_equal(gf_serving_parse(text, len, "step", tr, &err), GF_OK);
	assert_int_equal(tr->kind, GF_SERVING_SAMPLES);
	free(text);
}

static void oracle_and_static(void **state)
{
	struct gf_serving_trace tr;
	struct gf_serving_demand d;
	struct gf_serving_config c = gf_serving_config_default();
	struct gf_scaler s;
	struct gf_serving_result r;

	(void)state;
	step_trace(&tr);
	assert_int_equal(gf_serving_demand_build(&tr, &d), GF_OK);
	c.min_replicas = 1;
	assert_int_equal(gf_scaler_parse("oracle", &s), GF_OK);
	assert_int_equal(gf_serving_run(&tr, &d, &c, &s, &r), GF_OK);
	/* need 2 (1.4 / 0.7) for an hour, 10 for the next (the last sample, at 7140, holds for the median gap) */
	if (fabs(r.gpu_hours - (2.0 + 10.0)) > 1e-9)
		fail_msg("oracle GPU-hours %.12f", r.gpu_hours);
	assert_int_equal(r.under_min, 0);
	assert_int_equal(r.starts, 8);
	assert_int_equal(r.minutes, 120);
	gf_serving_result_release(&r);
	assert_int_equal(gf_scaler_parse("static", &s), GF_OK);
	assert_int_equal(gf_serving_run(&tr, &d, &c, &s, &r), GF_OK);
	assert_true(fabs(r.gpu_hours - 10.0 * 2) < 1e-9);
	assert_int_equal(r.starts, 0);
	gf_serving_result_release(&r);
	assert_int_equal(gf_scaler_parse("static:3", &s), GF_OK);
	assert_int_equal(gf_serving_run(&tr, &d, &c, &s, &r), GF_OK);
	assert_int_equal(r.under_min, 60);
	/* demand above 3 ready: 4 of 7 GPUs for 60 minutes, of 1.4 x 60 + 7 x 60 GPU-minutes */
	assert_true(fabs(r.slo_miss_pct - 100.0 * 4 * 60 / (1.4 * 60 + 7 * 60)) < 1e-9);
	gf_serving_result_release(&r);
	gf_serving_demand_release(&d);
	gf_serving_trace_release(&tr);
}

/*
 * The HPA on the step: syncs every 15 s on the mean of the last minute.
 * At 3615 the metric is (7 + 3 x 1.4) / 4 = 2.8 -> ceil(2.8 / 0.7) = 4;
 * 3630: 4.2 -> 6; 3645: 5.6 -> 8; 3660: 7 -> 10.  Each start is ready 600 s
 * later: ready 2 until 4215, then 4, 6 (4230), 8 (4245), 10 (4260).  Minutes
 * 60..69 have 2 ready for 7 busy; minute 70 has 2+4+6+8 = 20 ready-steps for
 * 28 busy-steps; minute 71 on has 10.  So 11 minutes under capacity, 8 starts.
 */
static void hpa_follows_the_rule_with_a_cold_start(void **state)
{
	struct gf_serving_trace tr;
	struct gf_serving_demand d;
	struct gf_serving_config c = gf_serving_config_default();
	struct gf_scaler s;
	struct gf_serving_result r;

	(void)state;
	step_trace(&tr);
	assert_int_equal(gf_serving_demand_build(&tr, &d), GF_OK);
	c.min_replicas = 1;
	assert_int_equal(gf_scaler_parse("hpa", &s), GF_OK);
	assert_int_equal(gf_serving_run(&tr, &d, &c, &s, &r), GF_OK);
	assert_int_equal(r.ready[3600 / 15], 2);
	assert_int_equal(r.replicas[3615 / 15], 4);
	assert_int_equal(r.replicas[3660 / 15], 10);
	assert_int_equal(r.ready[4200 / 15], 2);
	assert_int_equal(r.ready[4215 / 15], 4);
	assert_int_equal(r.ready[4260 / 15], 10);
	assert_int_equal(r.under_min, 11);
	assert_int_equal(r.starts, 8);
	gf_serving_result_release(&r);

	/* a warm pool of 5 on top: 7 ready at the step, short only until 10 are ready at 3615 + 0 */
	assert_int_equal(gf_scaler_parse("warm-pool:5", &s), GF_OK);
	assert_int_equal(gf_serving_run(&tr, &d, &c, &s, &r), GF_OK);
	assert_int_equal(r.ready[3600 / 15], 7);
	assert_int_equal(r.under_min, 0);
	gf_serving_result_release(&r);

	/* a 60 s cold start: ready 4 at 3675, 6, 8, 10 at 3720; minute 60 (2+2+2+2) and
	 * minute 61 (2+4+6+8 = 20 ready-steps for 28 busy) are short, 62 on is not */
	c.cold_start_s = 60;
	assert_int_equal(gf_scaler_parse("hpa", &s), GF_OK);
	assert_int_equal(gf_serving_run(&tr, &d, &c, &s, &r), GF_OK);
	assert_int_equal(r.ready[3675 / 15], 4);
	assert_int_equal(r.ready[3720 / 15], 10);
	assert_int_equal(r.under_min, 2);
	gf_serving_result_release(&r);
	gf_serving_demand_release(&d);
	gf_serving_trace_release(&tr);
}

/*
 * The model cache: 7 busy GPUs for an hour, 1.4 for 30 minutes, 7 again.  The
 * HPA (min 1) holds 10 replicas, scales down to 2 after its 300 s window
 * (8 ready replicas removed over 65:00..65:45), and back to 10 at 90:15..91:00
 * (4, 6, 8, 10: 8 starts).  Kept 3600 s, all 8 start on nodes holding the
 * model, 30 s each: ready 4 at 90:45, 6 at 91:00, 8, 10 at 91:30, so only
 * minute 90 (2+2+2+4 ready-steps for 28 busy) is short.  Kept 600 s, the
 * nodes expired by 75:45: 8 full 600 s starts, minutes 90..100 short (11),
 * as without the cache.
 */
static void model_cache_shortens_starts(void **state)
{
	char text[64 * 160];
	size_t len = 0;
	struct gf_serving_trace tr;
	struct gf_serving_error err;
	struct gf_serving_demand d;
	struct gf_serving_config c = gf_serving_config_default();
	struct gf_scaler s;
	struct gf_serving_result r;
	const double warm[] = { 30 };

	(void)state;
	len += (size_t)snprintf(text + len, 64, "timestamp,busy_gpus\n");
	for (int m = 0; m < 150; m++)
		len += (size_t)snprintf(text + len, 64, "%d,%s\n", m * 60, m >= 60 && m < 90 ? "1.4" : "7");
	assert_int_equal(gf_serving_parse(text, len, "cache", &tr, &err), GF_OK);
	assert_int_equal(gf_serving_demand_build(&tr, &d), GF_OK);
	c.min_replicas = 1;
	c.warm_dist = warm;
	c.nwarm = 1;
	assert_int_equal(gf_scaler_parse("hpa", &s), GF_OK);

	assert_int_equal(gf_serving_run(&tr, &d, &c, &s, &r), GF_OK);	/* cache off */
	assert_int_equal(r.starts, 8);
	assert_int_equal(r.cache_hits, 0);
	assert_int_equal(r.under_min, 11);
	assert_true(fabs(r.mean_start_s - 600) < 1e-9);
	gf_serving_result_release(&r);

	c.cache_ttl_s = 3600;
	assert_int_equal(gf_serving_run(&tr, &d, &c, &s, &r), GF_OK);
	assert_int_equal(r.replicas[65 * 4 - 1], 10);
	assert_int_equal(r.replicas[65 * 4], 8);
	assert_int_equal(r.replicas[(65 * 60 + 45) / 15], 2);
	assert_int_equal(r.starts, 8);
	assert_int_equal(r.cache_hits, 8);
	assert_int_equal(r.ready[(90 * 60 + 45) / 15], 4);
	assert_int_equal(r.ready[(91 * 60 + 30) / 15], 10);
	assert_int_equal(r.under_min, 1);
	assert_true(fabs(r.mean_start_s - 30) < 1e-9);
	gf_serving_result_release(&r);

	c.cache_ttl_s = 600;
	assert_int_equal(gf_serving_run(&tr, &d, &c, &s, &r), GF_OK);
	assert_int_equal(r.cache_hits, 0);
	assert_int_equal(r.under_min, 11);
	gf_serving_result_release(&r);

	c.nwarm = 0;	/* a cache without warm start times is refused */
	assert_int_equal(gf_serving_run(&tr, &d, &c, &s, &r), GF_INVAL);
	gf_serving_demand_release(&d);
	gf_serving_trace_release(&tr);
}

/* A trace that repeats a daily peak: predictive is ready for it, the HPA is not. */
static void predictive_is_ready_for_a_daily_peak(void **state)
{
	struct gf_serving_trace tr = { 0 };
	struct gf_serving_demand d;
	struct gf_serving_config c = gf_serving_config_default();
	struct gf_scaler s;
	struct gf_serving_result hpa, pred;
	size_t n = 4 * 1440;

	(void)state;
	tr.kind = GF_SERVING_SAMPLES;
	tr.n = n;
	tr.t = malloc(n * sizeof(*tr.t));
	tr.v = malloc(n * sizeof(*tr.v));
	assert_true(tr.t && tr.v);
	for (size_t m = 0; m < n; m++) {
		tr.t[m] = (int64_t)m * 60;
		tr.v[m] = (m % 1440 >= 600 && m % 1440 < 720) ? 8.0 : 1.0; /* 10:00-12:00 */
	}
	assert_int_equal(gf_serving_demand_build(&tr, &d), GF_OK);
	assert_int_equal(gf_scaler_parse("hpa", &s), GF_OK);
	assert_int_equal(gf_serving_run(&tr, &d, &c, &s, &hpa), GF_OK);
	assert_int_equal(gf_scaler_parse("predictive", &s), GF_OK);
	assert_int_equal(gf_serving_run(&tr, &d, &c, &s, &pred), GF_OK);
	/* the HPA is 10 minutes late each of the 4 days (plus the sync lag); predictive only on day 1 */
	if (hpa.under_min < 40 || pred.under_min > hpa.under_min / 4 + 2)
		fail_msg("hpa %lld minutes under capacity, predictive %lld", (long long)hpa.under_min,
			 (long long)pred.under_min);
	/* on day 4 predictive holds 12 replicas (8 / 0.7) by 10:00 */
	assert_true(pred.ready[(3 * 1440 + 600) * 4] >= 12);
	gf_serving_result_release(&hpa);
	gf_serving_result_release(&pred);
	gf_serving_demand_release(&d);
	gf_serving_trace_release(&tr);
}

static void fifo_slo_counts_waits(void **state)
{
	struct gf_serving_trace tr;
	struct gf_serving_error err;
	struct gf_serving_demand d;
	struct gf_serving_config c = gf_serving_config_default();
	struct gf_scaler s;
	struct gf_serving_result r;

	(void)state;
	/* five 100 s requests at once on 2 static replicas: starts 0, 0, 100, 100, 200 */
	assert_int_equal(parse("timestamp,service_s\n0,100\n0,100\n0,100\n0,100\n0,100\n", &tr, &err), GF_OK);
	assert_int_equal(gf_serving_demand_build(&tr, &d), GF_OK);
	c.slo_wait_s = 100;
	c.max_replicas = 2;
	assert_int_equal(gf_scaler_parse("static:2", &s), GF_OK);
	assert_int_equal(gf_serving_run(&tr, &d, &c, &s, &r), GF_OK);
	assert_true(fabs(r.slo_miss_pct - 20.0) < 1e-9); /* only the one waiting 200 s */
	gf_serving_result_release(&r);
	gf_serving_demand_release(&d);
	gf_serving_trace_release(&tr);
}

static void scaler_names(void **state)
{
	struct gf_scaler s;

	(void)state;
	assert_int_equal(gf_scaler_parse("predictive+warm-pool:3", &s), GF_OK);
	assert_int_equal(s.kind, GF_SCALER_PREDICTIVE);
	assert_int_equal(s.warm, 3);
	assert_int_equal(gf_scaler_parse("adaptive:4", &s), GF_OK);
	assert_int_equal(s.kind, GF_SCALER_ADAPTIVE);
	assert_int_equal(gf_scaler_parse("warm-pool:0", &s), GF_PARSE);
	assert_int_equal(gf_scaler_parse("warm-pool:", &s), GF_PARSE);
	assert_int_equal(gf_scaler_parse("warm-pool:-1", &s), GF_PARSE);
	assert_int_equal(gf_scaler_parse("keda", &s), GF_PARSE);
	assert_int_equal(gf_scaler_parse("adaptive-rise:150:4:60", &s), GF_OK);
	assert_int_equal(s.kind, GF_SCALER_ADAPTIVE);
	assert_int_equal(s.rise_pct, 150);
	assert_int_equal(s.warm, 4);
	assert_int_equal(s.prior_min, 60);
	assert_int_equal(gf_scaler_parse("adaptive-rise:150:0:60", &s), GF_OK);
	assert_int_equal(gf_scaler_parse("adaptive-rise:150:4", &s), GF_PARSE);
	assert_int_equal(gf_scaler_parse("adaptive-rise:0:4:60", &s), GF_PARSE);
	assert_int_equal(gf_scaler_parse("adaptive-rise:150:4:0", &s), GF_PARSE);
	assert_int_equal(gf_scaler_parse("adaptive-rise:150:4:60x", &s), GF_PARSE);
}

/*
 * adaptive-rise:100:4:30 on the step (1.4 busy for 60 min, then 7; 600 s
 * cold start, so rises over 10 minutes; min 1 replica).  The HPA holds 2
 * until the step.  The pool: the prior 4 at minute 0 (6 replicas), at
 * minute 15 half the prior and half the measured mean rise 0 = 2 (4
 * replicas), at minute 60 all measured (50 rises of 0): 0 (2 replicas).  At
 * minute 70 the rises of minutes 61..70 are 7 - 1.4 = 5.6 each: mean
 * 56 / 60, / 0.7 = 1.33, a pool of 2 on the HPA's 10: 12 replicas.
 */
static void adaptive_rise_sizes_the_pool_from_rises(void **state)
{
	struct gf_serving_trace tr;
	struct gf_serving_demand d;
	struct gf_serving_config c = gf_serving_config_default();
	struct gf_scaler s;
	struct gf_serving_result r;

	(void)state;
	step_trace(&tr);
	assert_int_equal(gf_serving_demand_build(&tr, &d), GF_OK);
	c.min_replicas = 1;
	assert_int_equal(gf_scaler_parse("adaptive-rise:100:4:30", &s), GF_OK);
	assert_int_equal(gf_serving_run(&tr, &d, &c, &s, &r), GF_OK);
	assert_int_equal(r.replicas[0], 6);
	assert_int_equal(r.replicas[15 * 4], 4);
	assert_int_equal(r.replicas[60 * 4], 2);
	assert_int_equal(r.replicas[70 * 4], 12);
	gf_serving_result_release(&r);
	gf_serving_demand_release(&d);
	gf_serving_trace_release(&tr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(bad_input_names_line_and_field),
		cmocka_unit_test(original_columns_and_utc_dates),
		cmocka_unit_test(demand_from_requests_is_overlap),
		cmocka_unit_test(oracle_and_static),
		cmocka_unit_test(hpa_follows_the_rule_with_a_cold_start),
		cmocka_unit_test(predictive_is_ready_for_a_daily_peak),
		cmocka_unit_test(model_cache_shortens_starts),
		cmocka_unit_test(adaptive_rise_sizes_the_pool_from_rises),
		cmocka_unit_test(fifo_slo_counts_waits),
		cmocka_unit_test(scaler_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
