/*
 * tests/serving/test_ma_forecast.c - the metrics API's forecast metric:
 * the history (metricsapi/history.h) fed in fast-forwarded time with a
 * daily peak, and `<metric>_forecast` served beside the metric.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>
#include <cjson/cJSON.h>

#include "metricsapi/agents.h"
#include "metricsapi/history.h"
#include "metricsapi/metricsapi.h"

#define DAY 86400
#define GV "/apis/external.metrics.k8s.io/v1beta1"

/* 1 GPU busy, 8 from 10:00 to 12:00 every day (the value an HPA would read every 15 s). */
static double demand(int64_t t)
{
	int64_t s = t % DAY;
	return s >= 10 * 3600 && s < 12 * 3600 ? 8.0 : 1.0;
}

static void forecast_leads_a_daily_peak(void **state)
{
	gf_ma_history *h;
	int64_t t0 = 1764547200; /* 2025-12-01 00:00:00 UTC, a whole day */
	double f;
	size_t held;

	(void)state;
	assert_int_equal(gf_ma_history_create(8 * 1440, &h), GF_OK);
	/* day 1, cold: at 09:50 the forecast is the current value */
	for (int64_t t = t0; t < t0 + 9 * 3600 + 50 * 60; t += 15)
		assert_int_equal(gf_ma_history_forecast(h, "ml/util?#0", t, demand(t), 600, &f, &held), GF_OK);
	assert_true(f < 1.5);
	/* run to day 4 09:50 (sync every 15 s) */
	for (int64_t t = t0 + 9 * 3600 + 50 * 60; t < t0 + 3 * DAY + 9 * 3600 + 50 * 60; t += 15)
		assert_int_equal(gf_ma_history_forecast(h, "ml/util?#0", t, demand(t), 600, &f, &held), GF_OK);
	/* ten minutes before the peak the metric already asks for it; the current value is 1 */
	if (f < 7.99 || f > 8.01)
		fail_msg("forecast at day 4 09:50 is %f, expected 8", f);
	assert_int_equal(held, 3 * 1440 + 9 * 60 + 49);
	/* another series is independent and cold */
	assert_int_equal(gf_ma_history_forecast(h, "ml/other?#0", t0 + 3 * DAY + 9 * 3600 + 50 * 60, 2.0, 600,
						&f, &held), GF_OK);
	assert_true(f == 2.0 && held == 0);
	gf_ma_history_destroy(h);
	assert_int_equal(gf_ma_history_create(10, &h), GF_INVAL);
}

static void bounded_keys_and_gaps(void **state)
{
	gf_ma_history *h;
	double f;
	size_t held;
	char key[32];

	(void)state;
	assert_int_equal(gf_ma_history_create(60, &h), GF_OK);
	/* a gap longer than the history fills it with the last mean, no more */
	assert_int_equal(gf_ma_history_forecast(h, "k", 0, 3.0, 600, &f, &held), GF_OK);
	assert_int_equal(gf_ma_history_forecast(h, "k", 100 * 60, 3.0, 600, &f, &held), GF_OK);
	assert_int_equal(held, 60);
	assert_true(f == 3.0);
	/* more series than GF_MA_HISTORY_KEYS: the least recently asked is forgotten */
	for (int i = 0; i <= GF_MA_HISTORY_KEYS; i++) {
		snprintf(key, sizeof(key), "s%d", i);
		assert_int_equal(gf_ma_history_forecast(h, key, 0, 1.0, 600, &f, &held), GF_OK);
	}
	assert_int_equal(gf_ma_history_forecast(h, "k", 101 * 60, 3.0, 600, &f, &held), GF_OK);
	assert_int_equal(held, 0); /* "k" was the oldest: evicted, now cold */
	gf_ma_history_destroy(h);
}

static cJSON *get(gf_metrics_api *a, const char *path, unsigned *code)
{
	struct gf_http_response resp = { .status = 200 };
	struct gf_ma_request r = { "GET", path, NULL, false, "", "tester" };

	gf_obuf_init(&resp.body, 1 << 20);
	gf_metrics_api_serve(a, &r, &resp);
	cJSON *doc = resp.body.data ? cJSON_Parse(resp.body.data) : NULL;
	*code = resp.status;
	gf_obuf_release(&resp.body);
	return doc;
}

static void served_beside_the_metric(void **state)
{
	const char *urls[] = { "http://a/metrics" };
	struct gf_ma_agents_config ac = { .urls = urls, .nurls = 1, .no_thread = true };
	gf_ma_agents *agents;
	gf_metrics_api *api;
	const char *text = "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-a0\",modelName=\"NVIDIA H100 80GB HBM3\","
			   "hostname=\"node-a\",container=\"c\",namespace=\"ml\",pod=\"llm-0\"} 42\n";
	char err[256];
	unsigned code;

	(void)state;
	assert_int_equal(gf_ma_agents_create(&ac, &agents), GF_OK);
	assert_int_equal(gf_ma_agents_ingest(agents, 0, text, strlen(text), (int64_t)time(NULL), err, sizeof(err)),
			 GF_OK);
	struct gf_metrics_api_config mc = { .source = GF_MA_SOURCE_AGENTS, .agents = agents,
					    .forecast_horizon_s = 300 };
	assert_int_equal(gf_metrics_api_create(&mc, &api), GF_OK);

	cJSON *doc = get(api, GV, &code);
	assert_int_equal(code, 200);
	bool listed = false;
	cJSON *res;
	cJSON_ArrayForEach(res, cJSON_GetObjectItem(doc, "resources"))
		listed |= !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(res, "name")), "dcgm_gpu_utilization_forecast");
	assert_true(listed);
	cJSON_Delete(doc);

	doc = get(api, GV "/namespaces/ml/dcgm_gpu_utilization_forecast", &code);
	assert_int_equal(code, 200);
	cJSON *item = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "items"), 0);
	assert_non_null(item);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(item, "metricName")), "dcgm_gpu_utilization_forecast");
	/* cold: the current value, and it says so */
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(item, "value")), "42");
	cJSON *labels = cJSON_GetObjectItem(item, "metricLabels");
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(labels, "forecast_history_min")), "0");
	cJSON_Delete(doc);

	doc = get(api, GV "/namespaces/ml/nonexistent_forecast", &code);
	assert_int_equal(code, 404);
	cJSON_Delete(doc);
	doc = get(api, GV "/namespaces/ml/_forecast", &code);
	assert_int_equal(code, 404);
	cJSON_Delete(doc);
	gf_metrics_api_destroy(api);
	gf_ma_agents_destroy(agents);
	mc.forecast_history_min = 5;
	assert_int_equal(gf_metrics_api_create(&mc, &api), GF_INVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(forecast_leads_a_daily_peak),
		cmocka_unit_test(bounded_keys_and_gaps),
		cmocka_unit_test(served_beside_the_metric),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
