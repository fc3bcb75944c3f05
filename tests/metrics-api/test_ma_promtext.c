/*
 * tests/metrics-api/test_ma_promtext.c - the Prometheus text reader: the
 * agent's dcgm-exporter lines, escapes, special values, timestamps,
 * comments, CRLF, and errors with line numbers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "metricsapi/promtext.h"

struct rec {
	int n;
	char name[8][64];
	double v[8];
	size_t nl[8];
	char l0[8][256]; /* "name=value;" of every label */
};

static gf_err on_sample(void *ud, const char *name, const struct gf_prom_label *labels, size_t nl,
			double v)
{
	struct rec *r = ud;
	if (r->n == 8)
		return GF_TOOBIG;
	snprintf(r->name[r->n], 64, "%s", name);
	r->v[r->n] = v;
	r->nl[r->n] = nl;
	size_t k = 0;
	for (size_t i = 0; i < nl; i++)
		k += (size_t)snprintf(r->l0[r->n] + k, 256 - k, "%s=%s;", labels[i].name, labels[i].value);
	r->n++;
	return GF_OK;
}

static gf_err parse(const char *t, struct rec *r, char *err)
{
	memset(r, 0, sizeof(*r));
	return gf_promtext_parse(t, strlen(t), on_sample, r, err, 256);
}

static void test_agent_lines(void **st)
{
	(void)st;
	struct rec r;
	char err[256];
	const char *t =
		"# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).\n"
		"# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n"
		"DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-1\",modelName=\"NVIDIA H100 80GB HBM3\",hostname=\"n\",pod=\"p\"} 87\n"
		"\n"
		"DCGM_FI_DEV_POWER_USAGE{gpu=\"0\"} 412.318000\r\n"
		"up 1 1700000000000\n"
		"x{a=\"q\\\"uote\\\\back\\nline\", b = \"\" ,} -Inf\n"
		"y NaN\n"
		"z{} +Inf";
	assert_int_equal(parse(t, &r, err), GF_OK);
	assert_int_equal(r.n, 6);
	assert_string_equal(r.name[0], "DCGM_FI_DEV_GPU_UTIL");
	assert_true(r.v[0] == 87);
	assert_int_equal(r.nl[0], 5);
	assert_string_equal(r.l0[0], "gpu=0;UUID=GPU-1;modelName=NVIDIA H100 80GB HBM3;hostname=n;pod=p;");
	assert_true(fabs(r.v[1] - 412.318) < 1e-9);
	assert_string_equal(r.name[2], "up");
	assert_true(r.v[2] == 1);
	assert_string_equal(r.l0[3], "a=q\"uote\\back\nline;b=;");
	assert_true(isinf(r.v[3]) && r.v[3] < 0);
	assert_true(isnan(r.v[4]));
	assert_true(isinf(r.v[5]) && r.v[5] > 0);
}

static void expect_err(const char *t, gf_err want, const char *msg)
{
	struct rec r;
	char err[256];
	assert_int_equal(parse(t, &r, err), want);
	if (!strstr(err, msg))
		fail_msg("'%s': error '%s' lacks '%s'", t, err, msg);
}

static void test_errors(void **st)
{
	(void)st;
	expect_err("a 1\nb{x=\"1} 2\n", GF_PARSE, "line 2: unterminated");
	expect_err("a{x=1} 2", GF_PARSE, "line 1: expected '\"'");
	expect_err("a{x=\"1\" y=\"2\"} 2", GF_PARSE, "expected ',' or '}'");
	expect_err("a{x=\"\\t\"} 2", GF_PARSE, "bad escape");
	expect_err("a", GF_PARSE, "expected '{' or a blank");
	expect_err("a{} ", GF_PARSE, "expected a sample value");
	expect_err("a{} abc", GF_PARSE, "expected a sample value");
	expect_err("a 1 2 3", GF_PARSE, "timestamp");
	expect_err("1a 1", GF_PARSE, "expected a metric name");
	expect_err("a{1=\"x\"} 1", GF_PARSE, "expected a label name");
	char big[70000];
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	expect_err(big, GF_TOOBIG, "longer than");
	/* The callback's error stops the parse and comes back. */
	struct rec r;
	char err[256];
	assert_int_equal(parse("a 1\na 1\na 1\na 1\na 1\na 1\na 1\na 1\na 1\n", &r, err), GF_TOOBIG);
	assert_int_equal(r.n, 8);
	/* A NUL inside the input is an error, not a silent truncation. */
	memset(&r, 0, sizeof(r));
	assert_int_equal(gf_promtext_parse("a 1\0 2\n", 7, on_sample, &r, err, sizeof(err)), GF_PARSE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_agent_lines),
		cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
