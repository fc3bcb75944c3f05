/*
 * tests/metrics-api/test_ma_promql.c - the Prometheus source's pure parts:
 * matchers from a request (escaping, regex sets, the GPU model regex, pod
 * sets, the empty case), template expansion, and the /api/v1/query decoder
 * (vector, scalar, errors).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "metricsapi/promql.h"

static struct gf_selector sel;

static const char *matchers(const char *ns, const char *selector, char **pods, size_t npods,
			    bool podf, gf_err want)
{
	static char out[4096];
	char err[256] = "";
	assert_int_equal(gf_selector_parse(selector, &sel, err, sizeof(err)), GF_OK);
	struct gf_ma_query q = { .ns = ns, .series_sel = &sel, .pod_filter = podf, .pods = pods,
				 .npods = npods };
	struct gf_obuf b;
	gf_obuf_init(&b, 4000);
	gf_err e = gf_promql_matchers(&q, &b, err, sizeof(err));
	if (e != want)
		fail_msg("'%s': %s (%s)", selector, gf_err_name(e), err);
	snprintf(out, sizeof(out), "%s", e ? err : b.data ? b.data : "");
	gf_obuf_release(&b);
	return out;
}

static void test_matchers(void **st)
{
	(void)st;
	assert_string_equal(matchers("ml", "", NULL, 0, false, GF_OK), "namespace=\"ml\"");
	assert_string_equal(matchers(NULL, "", NULL, 0, false, GF_OK), "__name__!=\"\"");
	assert_string_equal(matchers("ml", "pod=llm-0,container!=side", NULL, 0, false, GF_OK),
			    "namespace=\"ml\",pod=\"llm-0\",container!=\"side\"");
	assert_string_equal(matchers(NULL, "node in (n.1,n-2),gpu_index notin (0)", NULL, 0, false, GF_OK),
			    "hostname=~\"n\\\\.1|n-2\",gpu!~\"0\"");
	assert_string_equal(matchers(NULL, "UUID,!pod", NULL, 0, false, GF_OK),
			    "UUID!=\"\",pod=\"\"");
	assert_string_equal(matchers(NULL, "gpu=NVIDIA-H100-80GB-HBM3", NULL, 0, false, GF_OK),
			    "modelName=~\"[^A-Za-z0-9]*NVIDIA(-|[^A-Za-z0-9._-]+)H100(-|[^A-Za-z0-9._-]+)"
			    "80GB(-|[^A-Za-z0-9._-]+)HBM3[^A-Za-z0-9]*\"");
	char *pods[] = { "llama-7b-1", "llama-7b.2" };
	assert_string_equal(matchers("ml", "", pods, 2, true, GF_OK),
			    "namespace=\"ml\",pod=~\"llama-7b-1|llama-7b\\\\.2\"");
	assert_string_equal(matchers(NULL, "", pods, 0, true, GF_OK), "pod=~\"\"");
	const char *e = matchers("ml", "gpu_index>1", NULL, 0, false, GF_UNSUPPORTED);
	assert_non_null(strstr(e, "cannot express"));
}

static void test_escape(void **st)
{
	(void)st;
	struct gf_obuf b;
	gf_obuf_init(&b, 1000);
	assert_int_equal(gf_promql_escape(&b, "a\"b\\c\nd", 0), GF_OK);
	assert_string_equal(b.data, "a\\\"b\\\\c\\nd");
	gf_obuf_reset(&b);
	assert_int_equal(gf_promql_escape(&b, "a.b|c(", 1), GF_OK);
	assert_string_equal(b.data, "a\\\\.b\\\\|c\\\\(");
	gf_obuf_reset(&b);
	/* A hostile namespace cannot close the string and add a matcher. */
	struct gf_ma_query q = { .ns = "x\",evil=\"1" };
	char err[64];
	assert_int_equal(gf_promql_matchers(&q, &b, err, sizeof(err)), GF_OK);
	assert_string_equal(b.data, "namespace=\"x\\\",evil=\\\"1\"");
	gf_obuf_release(&b);
}

static void test_expand(void **st)
{
	(void)st;
	struct gf_obuf b;
	gf_obuf_init(&b, 1000);
	assert_int_equal(gf_promql_expand("avg(x{<<.LabelMatchers>>}) / max(y{<<.LabelMatchers>>})",
					  "a=\"1\"", &b),
			 GF_OK);
	assert_string_equal(b.data, "avg(x{a=\"1\"}) / max(y{a=\"1\"})");
	gf_obuf_reset(&b);
	assert_int_equal(gf_promql_expand("vector(1)", "a", &b), GF_OK);
	assert_string_equal(b.data, "vector(1)");
	gf_obuf_release(&b);
	size_t n;
	const struct gf_ma_metric *cat = gf_ma_catalog(&n);
	assert_true(n > 5);
	assert_string_equal(cat[0].name, "dcgm_gpu_utilization");
	for (size_t i = 0; i < n; i++)
		assert_non_null(strstr(cat[i].promql, GF_MA_MATCHERS));
}

static void test_decode(void **st)
{
	(void)st;
	struct gf_ma_result r;
	char err[256];
	gf_ma_result_init(&r);
	const char *vec = "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
			  "{\"metric\":{\"__name__\":\"x\",\"pod\":\"p\"},\"value\":[1700000000.5,\"87.5\"]},"
			  "{\"metric\":{},\"value\":[1700000001,\"NaN\"]}]}}";
	assert_int_equal(gf_promql_decode(vec, strlen(vec), &r, err, sizeof(err)), GF_OK);
	assert_int_equal(r.n, 2);
	assert_true(r.items[0].value == 87.5);
	assert_int_equal(r.items[0].ts, 1700000000);
	assert_string_equal(cJSON_GetObjectItem(r.items[0].labels, "pod")->valuestring, "p");
	assert_null(cJSON_GetObjectItem(r.items[0].labels, "__name__"));
	assert_true(isnan(r.items[1].value));
	/* rendering skips the NaN item and writes the quantity */
	struct gf_obuf b;
	gf_obuf_init(&b, 10000);
	assert_int_equal(gf_ma_render_list("m", &r, &b), GF_OK);
	assert_string_equal(b.data,
			    "{\"kind\":\"ExternalMetricValueList\",\"apiVersion\":\"external.metrics.k8s.io/v1beta1\","
			    "\"metadata\":{},\"items\":[{\"metricName\":\"m\",\"metricLabels\":{\"pod\":\"p\"},"
			    "\"timestamp\":\"2023-11-14T22:13:20Z\",\"value\":\"87500m\"}]}");
	gf_obuf_release(&b);
	gf_ma_result_release(&r);

	/* 9.2e15 and above are written, not dropped (issue 10): 1e20 is 100E */
	const char *big = "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
			  "{\"metric\":{},\"value\":[1700000000,\"1e20\"]},"
			  "{\"metric\":{},\"value\":[1700000000,\"9.2e15\"]}]}}";
	assert_int_equal(gf_promql_decode(big, strlen(big), &r, err, sizeof(err)), GF_OK);
	gf_obuf_init(&b, 10000);
	assert_int_equal(gf_ma_render_list("m", &r, &b), GF_OK);
	assert_non_null(strstr(b.data, "\"value\":\"100E\"}"));
	assert_non_null(strstr(b.data, "\"value\":\"9200T\"}"));
	gf_obuf_release(&b);
	gf_ma_result_release(&r);

	const char *sc = "{\"status\":\"success\",\"data\":{\"resultType\":\"scalar\",\"result\":[1,\"3\"]}}";
	assert_int_equal(gf_promql_decode(sc, strlen(sc), &r, err, sizeof(err)), GF_OK);
	assert_int_equal(r.n, 1);
	assert_true(r.items[0].value == 3);
	gf_ma_result_release(&r);

	struct {
		const char *json, *msg;
	} bad[] = {
		{ "nope", "not JSON" },
		{ "{}", "status" },
		{ "{\"status\":\"error\",\"errorType\":\"bad_data\",\"error\":\"parse error at char 5\"}",
		  "prometheus response: query failed: parse error at char 5" },
		{ "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[]}}", "vector or scalar" },
		{ "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[{\"metric\":{},\"value\":[1]}]}}",
		  "expected [time" },
		{ "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[{\"metric\":{},\"value\":[1,\"x\"]}]}}",
		  "not a number" },
		{ "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[{\"value\":[1,\"1\"]}]}}",
		  "metric" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(gf_promql_decode(bad[i].json, strlen(bad[i].json), &r, err, sizeof(err)),
				 GF_PARSE);
		if (!strstr(err, bad[i].msg))
			fail_msg("'%s': '%s' lacks '%s'", bad[i].json, err, bad[i].msg);
		gf_ma_result_release(&r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_matchers),
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_expand),
		cmocka_unit_test(test_decode),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
