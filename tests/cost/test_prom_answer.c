/*
 * tests/cost/test_prom_answer.c - the Prometheus answer decoder shared by the
 * metrics API and the cost API (prom/promjson.h): the envelope of each result
 * type, Prometheus' own error, samples (NaN, infinities, malformed), labels
 * without __name__, and the one-line errors naming the answer.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "prom/promjson.h"

static void test_envelope(void **state)
{
	(void)state;
	struct gf_prom_answer a;
	char err[256];
	const char *vec = "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
			  "{\"metric\":{\"__name__\":\"x\",\"pod\":\"p\"},\"value\":[1700000000.5,\"87.5\"]}]}}";
	assert_int_equal(gf_prom_answer_parse(vec, strlen(vec), GF_PROM_VECTOR, "test answer", &a, err, sizeof(err)),
			 GF_OK);
	assert_int_equal(a.type, GF_PROM_VECTOR);
	assert_int_equal(cJSON_GetArraySize(a.result), 1);
	const cJSON *it = cJSON_GetArrayItem(a.result, 0);
	bool nomem = true;
	cJSON *l = gf_prom_labels(cJSON_GetObjectItemCaseSensitive(it, "metric"), &nomem);
	assert_false(nomem);
	assert_null(cJSON_GetObjectItemCaseSensitive(l, "__name__"));
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(l, "pod")->valuestring, "p");
	cJSON_Delete(l);
	double t = 0, v = 0;
	assert_int_equal(gf_prom_sample(cJSON_GetObjectItemCaseSensitive(it, "value"), &t, &v), GF_PROM_SAMPLE_OK);
	assert_true(t == 1700000000.5 && v == 87.5);
	cJSON *doc = gf_prom_answer_detach(&a);
	assert_non_null(doc);
	assert_null(a.doc);
	cJSON_Delete(doc);

	const char *sc = "{\"status\":\"success\",\"data\":{\"resultType\":\"scalar\",\"result\":[1,\"-Inf\"]}}";
	assert_int_equal(gf_prom_answer_parse(sc, strlen(sc), GF_PROM_VECTOR | GF_PROM_SCALAR, "x", &a, err,
					      sizeof(err)), GF_OK);
	assert_int_equal(a.type, GF_PROM_SCALAR);
	assert_int_equal(gf_prom_sample(a.result, &t, &v), GF_PROM_SAMPLE_OK);
	assert_true(isinf(v) && v < 0);
	gf_prom_answer_release(&a);

	const char *mx = "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[]}}";
	assert_int_equal(gf_prom_answer_parse(mx, strlen(mx), GF_PROM_MATRIX, "x", &a, err, sizeof(err)), GF_OK);
	assert_int_equal(a.type, GF_PROM_MATRIX);
	gf_prom_answer_release(&a);
}

static void test_errors(void **state)
{
	(void)state;
	struct {
		const char *json;
		unsigned want;
		const char *msg;
	} bad[] = {
		{ "nope", GF_PROM_VECTOR, "prometheus allocation answer: not JSON" },
		{ "{}", GF_PROM_VECTOR, "prometheus allocation answer: status: expected a string" },
		{ "{\"status\":\"error\",\"errorType\":\"bad_data\",\"error\":\"parse error at char 3\"}", GF_PROM_VECTOR,
		  "prometheus allocation answer: query failed: parse error at char 3" },
		{ "{\"status\":\"error\"}", GF_PROM_VECTOR, "query failed: status is not success" },
		{ "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[]}}", GF_PROM_VECTOR,
		  "prometheus allocation answer: data: expected resultType vector and a result" },
		{ "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[]}}",
		  GF_PROM_VECTOR | GF_PROM_SCALAR, "expected resultType vector or scalar" },
		{ "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":{}}}", GF_PROM_VECTOR,
		  "expected resultType vector and a result" },
		{ "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\"}}", GF_PROM_VECTOR, "and a result" },
		{ "{\"status\":\"success\",\"data\":[]}", GF_PROM_MATRIX, "expected resultType matrix" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct gf_prom_answer a;
		char err[256];
		assert_int_equal(gf_prom_answer_parse(bad[i].json, strlen(bad[i].json), bad[i].want, "allocation answer",
						      &a, err, sizeof(err)), GF_PARSE);
		assert_null(a.doc);
		if (!strstr(err, bad[i].msg))
			fail_msg("'%s': '%s' lacks '%s'", bad[i].json, err, bad[i].msg);
	}
}

static void test_samples(void **state)
{
	(void)state;
	struct {
		const char *json;
		enum gf_prom_sample_check want;
		double v;
	} cases[] = {
		{ "[1,\"2.5\"]", GF_PROM_SAMPLE_OK, 2.5 },
		{ "[1,\"+Inf\"]", GF_PROM_SAMPLE_OK, INFINITY },
		{ "[1,\"1e3\"]", GF_PROM_SAMPLE_OK, 1000 },
		{ "[1,\"x\"]", GF_PROM_SAMPLE_VALUE, 0 },
		{ "[1,\"1 \"]", GF_PROM_SAMPLE_VALUE, 0 },
		{ "[1,\"\"]", GF_PROM_SAMPLE_VALUE, 0 },
		{ "[1,2]", GF_PROM_SAMPLE_SHAPE, 0 },
		{ "[\"1\",\"2\"]", GF_PROM_SAMPLE_SHAPE, 0 },
		{ "[1]", GF_PROM_SAMPLE_SHAPE, 0 },
		{ "[1,\"2\",3]", GF_PROM_SAMPLE_SHAPE, 0 },
		{ "{}", GF_PROM_SAMPLE_SHAPE, 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *j = cJSON_Parse(cases[i].json);
		double t, v = 0;
		enum gf_prom_sample_check c = gf_prom_sample(j, &t, &v);
		if (c != cases[i].want || (c == GF_PROM_SAMPLE_OK && v != cases[i].v))
			fail_msg("%s: %d %g, want %d %g", cases[i].json, (int)c, v, (int)cases[i].want, cases[i].v);
		cJSON_Delete(j);
	}
	double v;
	assert_true(gf_prom_value("NaN", &v) && isnan(v));
	assert_string_equal(gf_prom_sample_error(GF_PROM_SAMPLE_SHAPE), "expected [time, \"value\"]");
	assert_string_equal(gf_prom_sample_error(GF_PROM_SAMPLE_VALUE), "not a number");
	bool nomem = true;
	assert_null(gf_prom_labels(NULL, &nomem));
	assert_false(nomem);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_envelope),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_samples),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
