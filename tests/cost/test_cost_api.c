/*
 * tests/cost/test_cost_api.c - the cost API's pieces without a network:
 * the PromQL it sends, the decoding of Prometheus' answers into uses and
 * capacity (GPU keys, utilization split by share, pod labels, errors), the
 * access rule (http/auth.h), and the parameter errors of gf_costapi_run.
 */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "costapi/costapi.h"
#include "costapi/promsrc.h"
#include "http/auth.h"
#include "http/server.h"

static void test_queries(void **state)
{
	(void)state;
	struct gf_cost_aggregate agg;
	char err[256];
	assert_int_equal(gf_cost_parse_aggregate("namespace,label:app.kubernetes.io/team", &agg, err, sizeof(err)), GF_OK);
	struct gf_cost_queries q;
	assert_int_equal(gf_cost_queries_build(0, 86400, 60, &agg, &q), GF_OK);
	/* 86400 s - 30 s, in ms; step 60 s */
	assert_string_equal(q.q[GF_COSTQ_ALLOC], "sum by (node,gpu,uuid,model,share,namespace,pod) "
						 "(sum_over_time((max by (namespace,pod,node,gpu,uuid,model,share) "
						 "(gpufleet_pod_gpu_allocation))[86370000ms:60s]))");
	assert_string_equal(q.q[GF_COSTQ_CAP], "count_over_time((max by (node,gpu,uuid,model,capacity_type) "
						"(gpufleet_gpu_capacity))[86370000ms:60s])");
	assert_non_null(strstr(q.q[GF_COSTQ_UTIL], "DCGM_FI_DEV_GPU_UTIL{pod!=\"\"}[86370000ms:60s]"));
	assert_null(q.labels[0]);
	assert_string_equal(q.labels[1], "max by (namespace,pod,label_app_kubernetes_io_team) "
					 "(last_over_time(kube_pod_labels{label_app_kubernetes_io_team!=\"\"}[86400s]))");
	gf_cost_queries_release(&q);
	assert_int_equal(gf_cost_parse_aggregate("namespace", &agg, err, sizeof(err)), GF_OK);
	assert_int_equal(gf_cost_queries_build(0, 3600, 300, &agg, &q), GF_OK);
	assert_string_equal(q.q[GF_COSTQ_ALLOC], "sum by (node,gpu,uuid,model,share,namespace) "
						 "(sum_over_time((max by (namespace,pod,node,gpu,uuid,model,share) "
						 "(gpufleet_pod_gpu_allocation))[3450000ms:300s]))");
	assert_string_equal(q.q[GF_COSTQ_UTIL], "sum by (UUID,gpu,hostname,Hostname,namespace) "
						"(sum_over_time(DCGM_FI_DEV_GPU_UTIL{pod!=\"\"}[3450000ms:300s]))");
	gf_cost_queries_release(&q);
	/* the hourly recording rules: values are seconds, range W - 30 min, evaluated at end; a
	 * namespace report reads the pools */
	assert_true(gf_cost_pooled(GF_COST_RES_RECORDED, &agg));
	assert_false(gf_cost_pooled(300, &agg));
	assert_int_equal(gf_cost_queries_build(0, 7200, GF_COST_RES_RECORDED, &agg, &q), GF_OK);
	assert_string_equal(q.q[GF_COSTQ_ALLOC], "sum_over_time(gpufleet:pool_gpu_allocation:seconds_1h[5400s])");
	assert_string_equal(q.q[GF_COSTQ_CAP], "sum_over_time(gpufleet:pool_gpu_capacity:seconds_1h[5400s])");
	assert_string_equal(q.q[GF_COSTQ_UTIL], "sum_over_time(gpufleet:pool_gpu_used:seconds_1h[5400s])");
	gf_cost_queries_release(&q);
	assert_int_equal(gf_cost_parse_aggregate("node", &agg, err, sizeof(err)), GF_OK);
	assert_false(gf_cost_pooled(GF_COST_RES_RECORDED, &agg));
	assert_int_equal(gf_cost_queries_build(0, 7200, GF_COST_RES_RECORDED, &agg, &q), GF_OK);
	assert_string_equal(q.q[GF_COSTQ_ALLOC], "sum by (node,gpu,uuid,model,share) "
						 "(sum_over_time(gpufleet:namespace_gpu_allocation:share_seconds_1h[5400s]))");
	assert_string_equal(q.q[GF_COSTQ_CAP], "sum_over_time(gpufleet:gpu_capacity:seconds_1h[5400s])");
	gf_cost_queries_release(&q);
	assert_int_equal(gf_cost_queries_build(0, 3600, 300, &agg, &q), GF_OK);
	assert_string_equal(q.q[GF_COSTQ_ALLOC], "sum by (node,gpu,uuid,model,share) "
						 "(sum_over_time((max by (namespace,pod,node,gpu,uuid,model,share) "
						 "(gpufleet_pod_gpu_allocation))[3450000ms:300s]))");
	gf_cost_queries_release(&q);
}

#define OK_VEC(items) "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[" items "]}}"

static void test_decode(void **state)
{
	(void)state;
	const char *alloc = OK_VEC(
		"{\"metric\":{\"namespace\":\"a\",\"pod\":\"p\",\"node\":\"n\",\"gpu\":\"3\",\"uuid\":\"\",\"model\":\"H100\",\"share\":\"0.250\"},\"value\":[1,\"30\"]},"
		"{\"metric\":{\"namespace\":\"b\",\"pod\":\"q\",\"node\":\"n\",\"gpu\":\"1\",\"uuid\":\"G-1\",\"model\":\"H100\",\"share\":\"1.000\"},\"value\":[1,\"60\"]}");
	const char *cap = OK_VEC(
		"{\"metric\":{\"node\":\"n\",\"gpu\":\"3\",\"uuid\":\"\",\"model\":\"H100\",\"capacity_type\":\"spot\"},\"value\":[1,\"120\"]}");
	/* 120 samples x 50 % = 60 (percent-samples) for p; none for q */
	const char *util = OK_VEC(
		"{\"metric\":{\"namespace\":\"a\",\"pod\":\"p\",\"UUID\":\"\",\"gpu\":\"3\",\"Hostname\":\"n\"},\"value\":[1,\"6000\"]}");
	const char *labels = OK_VEC("{\"metric\":{\"namespace\":\"a\",\"pod\":\"p\",\"label_team\":\"ml\"},\"value\":[1,\"1\"]}");
	struct gf_cost_aggregate agg;
	char err[256];
	assert_int_equal(gf_cost_parse_aggregate("label:team", &agg, err, sizeof(err)), GF_OK);
	const char *ans[] = { alloc, cap, util, labels };
	size_t lens[] = { strlen(alloc), strlen(cap), strlen(util), strlen(labels) };
	struct gf_cost_data d;
	gf_err e = gf_cost_data_decode(ans, lens, 60, &agg, &d, err, sizeof(err));
	if (e)
		fail_msg("%s", err);
	assert_int_equal(d.nuses, 2);
	assert_int_equal(d.ngpus, 1);
	assert_string_equal(d.gpus[0].uuid, "gpu3"); /* no UUID: known by index */
	assert_true(d.gpus[0].spot);
	assert_true(fabs(d.gpus[0].seconds - 7200) < 1e-9);
	const struct gf_cost_use *p = &d.uses[0], *q = &d.uses[1];
	assert_string_equal(p->uuid, "gpu3");
	assert_true(fabs(p->share_seconds - 1800) < 1e-9); /* 30 x 60 s */
	assert_true(fabs(p->seconds - 7200) < 1e-9);       /* / 0.25 */
	/* busy 6000 / 100 x 60 s = 3600 s of the device, x share 0.25 = 900 s */
	assert_true(fabs(p->used_seconds - 900) < 1e-9);
	assert_true(fabs(q->used_seconds - 0) < 1e-9); /* other pods have series: q's is 0, not unknown */
	assert_int_equal(p->nlabels, 1);
	assert_string_equal(p->labels[0].value, "ml");
	assert_null(q->labels[0].value);
	gf_cost_data_release(&d);

	/* no utilization series at all: unknown */
	const char *none = OK_VEC("");
	ans[2] = none;
	lens[2] = strlen(none);
	assert_int_equal(gf_cost_data_decode(ans, lens, 60, &agg, &d, err, sizeof(err)), GF_OK);
	assert_true(d.uses[0].used_seconds < 0);
	gf_cost_data_release(&d);
}

/* The pools' answers: one use per (namespace, pool), one "GPU" per pool, exact sums. */
static void test_decode_pooled(void **state)
{
	(void)state;
	const char *alloc = OK_VEC(
		"{\"metric\":{\"namespace\":\"a\",\"model\":\"H100\",\"capacity_type\":\"spot\",\"kind\":\"share\"},\"value\":[1,\"1800\"]},"
		"{\"metric\":{\"namespace\":\"a\",\"model\":\"H100\",\"capacity_type\":\"spot\",\"kind\":\"whole\"},\"value\":[1,\"7200\"]},"
		"{\"metric\":{\"namespace\":\"b\",\"model\":\"H100\",\"kind\":\"share\"},\"value\":[1,\"360\"]},"
		"{\"metric\":{\"namespace\":\"b\",\"model\":\"H100\",\"kind\":\"whole\"},\"value\":[1,\"360\"]}");
	const char *cap = OK_VEC(
		"{\"metric\":{\"model\":\"H100\",\"capacity_type\":\"spot\",\"kind\":\"capacity\"},\"value\":[1,\"14400\"]},"
		"{\"metric\":{\"model\":\"H100\",\"capacity_type\":\"spot\",\"kind\":\"overcommit\"},\"value\":[1,\"60\"]}");
	const char *util = OK_VEC(
		"{\"metric\":{\"namespace\":\"a\",\"model\":\"H100\",\"capacity_type\":\"spot\"},\"value\":[1,\"900\"]}");
	struct gf_cost_aggregate agg;
	char err[256];
	assert_int_equal(gf_cost_parse_aggregate("namespace", &agg, err, sizeof(err)), GF_OK);
	const char *ans[] = { alloc, cap, util, NULL };
	size_t lens[] = { strlen(alloc), strlen(cap), strlen(util), 0 };
	struct gf_cost_data d;
	gf_err e = gf_cost_data_decode(ans, lens, GF_COST_RES_RECORDED, &agg, &d, err, sizeof(err));
	if (e)
		fail_msg("%s", err);
	assert_int_equal(d.ngpus, 1);
	assert_string_equal(d.gpus[0].uuid, "spot/H100");
	assert_string_equal(d.gpus[0].node, "");
	assert_true(d.gpus[0].spot);
	assert_true(d.gpus[0].seconds == 14400 && d.gpus[0].overcommit_seconds == 60);
	assert_int_equal(d.nuses, 2);
	assert_string_equal(d.uses[0].ns, "a");
	assert_string_equal(d.uses[0].uuid, "spot/H100");
	assert_true(d.uses[0].share_seconds == 1800 && d.uses[0].seconds == 7200 && d.uses[0].used_seconds == 900);
	/* b's allocation had no capacity type (a GPU without a capacity series): its own pool, unmatched */
	assert_string_equal(d.uses[1].uuid, "/H100");
	assert_true(d.uses[1].share_seconds == 360 && d.uses[1].used_seconds == 0);
	struct gf_cost_price h100 = { .model = "H100", .on_demand = 4, .spot = 1 };
	struct gf_cost_prices p = { .v = &h100, .n = 1, .currency = "USD" };
	struct gf_cost_input in = { .start = 0, .end = 7200, .uses = d.uses, .nuses = d.nuses, .gpus = d.gpus,
				    .ngpus = d.ngpus, .prices = &p, .agg = agg, .include_idle = true };
	struct gf_cost_report r;
	assert_int_equal(gf_cost_compute(&in, &r, err, sizeof(err)), GF_OK);
	assert_true(fabs(r.idle_hours - (14400 - 1800 + 60) / 3600.0) < 1e-9);
	assert_true(fabs(r.unmatched_hours - 0.1) < 1e-9);
	/* workload 0.5 share-hours and the idle, at 4 - 1 */
	assert_true(fabs(r.saved_by_spot - (0.5 + r.idle_hours) * 3) < 1e-9);
	gf_cost_report_release(&r);
	gf_cost_data_release(&d);

	/* share-seconds above the seconds held: refused */
	const char *bad = OK_VEC(
		"{\"metric\":{\"namespace\":\"a\",\"model\":\"H100\",\"capacity_type\":\"spot\",\"kind\":\"share\"},\"value\":[1,\"1800\"]}");
	ans[0] = bad;
	lens[0] = strlen(bad);
	assert_int_equal(gf_cost_data_decode(ans, lens, GF_COST_RES_RECORDED, &agg, &d, err, sizeof(err)), GF_PARSE);
	assert_non_null(strstr(err, "namespace 'a', pool 'spot/H100': 1800 share-seconds in 0 seconds held"));
}

static void expect_decode_error(const char *alloc, const char *want)
{
	struct gf_cost_aggregate agg;
	char err[256] = "";
	assert_int_equal(gf_cost_parse_aggregate("namespace", &agg, err, sizeof(err)), GF_OK);
	const char *empty = OK_VEC("");
	const char *ans[] = { alloc, empty, empty, NULL };
	size_t lens[] = { strlen(alloc), strlen(empty), strlen(empty), 0 };
	struct gf_cost_data d;
	assert_int_equal(gf_cost_data_decode(ans, lens, 60, &agg, &d, err, sizeof(err)), GF_PARSE);
	if (!strstr(err, want))
		fail_msg("error '%s' does not contain '%s'", err, want);
	assert_null(d.uses);
}

static void test_decode_errors(void **state)
{
	(void)state;
	expect_decode_error("nope", "prometheus allocation answer: not JSON");
	expect_decode_error("{\"status\":\"error\",\"errorType\":\"bad_data\",\"error\":\"parse error at char 3\"}",
			    "prometheus allocation answer: query failed: parse error at char 3");
	expect_decode_error(OK_VEC("{\"metric\":{\"share\":\"2\"},\"value\":[1,\"1\"]}"),
			    "data.result[0].metric.share: expected a number in (0, 1], found \"2\"");
	expect_decode_error(OK_VEC("{\"metric\":{\"share\":\"0.5\"},\"value\":[1,\"-1\"]}"),
			    "data.result[0].value: expected a number >= 0");
	expect_decode_error(OK_VEC("{\"metric\":{\"share\":\"0.5\"},\"value\":[1,\"NaN\"]}"),
			    "data.result[0].value");
	expect_decode_error("{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[]}}",
			    "expected resultType vector");
}

static void test_auth(void **state)
{
	(void)state;
	const char *cns[] = { "front-proxy-client" };
	struct gf_http_auth off = { .required = false };
	struct gf_http_auth certs = { .required = true, .client_certs = true, .allowed_cns = cns, .nallowed = 1 };
	struct gf_http_auth any_cert = { .required = true, .client_certs = true };
	struct gf_http_auth token = { .required = true, .token = "s3cret" };
	assert_true(gf_http_auth_allows(&off, false, NULL, NULL));
	assert_true(gf_http_auth_allows(&certs, true, "front-proxy-client", NULL));
	assert_false(gf_http_auth_allows(&certs, true, "someone-else", NULL));
	assert_false(gf_http_auth_allows(&certs, false, "front-proxy-client", NULL));
	assert_true(gf_http_auth_allows(&any_cert, true, "", NULL));
	assert_false(gf_http_auth_allows(&any_cert, false, NULL, "Bearer x"));
	assert_true(gf_http_auth_allows(&token, false, NULL, "Bearer s3cret"));
	assert_false(gf_http_auth_allows(&token, false, NULL, "Bearer s3cre"));
	assert_false(gf_http_auth_allows(&token, false, NULL, "Bearer s3cret2"));
	assert_false(gf_http_auth_allows(&token, false, NULL, "bearer s3cret"));
	assert_false(gf_http_auth_allows(&token, true, "x", NULL)); /* certificates not accepted here */
	struct gf_http_auth empty_token = { .required = true, .token = "" };
	assert_false(gf_http_auth_allows(&empty_token, false, NULL, "Bearer "));
}

/* Parameter errors never reach Prometheus (the URL is unreachable on purpose). */
static void test_run_params(void **state)
{
	(void)state;
	struct gf_cost_price star = { .model = "*", .on_demand = 1, .spot = 1 };
	struct gf_cost_prices p = { .v = &star, .n = 1, .currency = "USD" };
	struct gf_costapi_config cfg = { .prometheus_url = "http://127.0.0.1:1", .timeout_ms = 500, .prices = &p };
	gf_costapi *a;
	assert_int_equal(gf_costapi_create(&cfg, &a), GF_OK);
	struct {
		struct gf_cost_request r;
		unsigned code;
		const char *msg;
	} cases[] = {
		{ { .window = NULL }, 400, "window: required" },
		{ { .window = "7d", .aggregate = "controller" }, 400, "unknown aggregate 'controller'" },
		{ { .window = "7d", .step = "1m" }, 400, "step: 1m makes more than 400 sets" },
		{ { .window = "30d", .resolution = "1s" }, 400, "resolution: 1s does not fit" },
		{ { .window = "1h", .resolution = "2h" }, 400, "resolution: 7200s does not fit" },
		{ { .window = "1h", .include_idle = "yes" }, 400, "includeIdle: expected true or false" },
		{ { .window = "1h" }, 503, "prometheus http://127.0.0.1:1: " },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct gf_obuf o;
		char err[512];
		gf_obuf_init(&o, 1 << 20);
		cases[i].r.now = 1796137462;
		unsigned code = gf_costapi_run(a, &cases[i].r, GF_COST_JSON, &o, err, sizeof(err), NULL);
		if (code != cases[i].code || !strstr(err, cases[i].msg))
			fail_msg("case %zu: %u '%s', want %u '%s'", i, code, err, cases[i].code, cases[i].msg);
		gf_obuf_release(&o);
	}
	gf_costapi_destroy(a);
}

/*
 * A FAKE Prometheus - our own HTTP server, not Prometheus - for the bounds of the API: it answers
 * the three queries of a namespace report with fixed vectors, counts the queries it gets, and
 * can hold them at a gate (to keep a request reading "Prometheus" while another arrives).
 */
static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int queries, waiting;
	bool hold;
} fake = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, false };

static void fake_query(void *ud, const struct gf_http_request *req, struct gf_http_response *resp)
{
	(void)ud;
	pthread_mutex_lock(&fake.mu);
	fake.queries++;
	fake.waiting++;
	pthread_cond_broadcast(&fake.cv);
	while (fake.hold)
		pthread_cond_wait(&fake.cv, &fake.mu);
	fake.waiting--;
	pthread_mutex_unlock(&fake.mu);
	resp->content_type = "application/json";
	if (strstr(req->body, "gpufleet_pod_gpu_allocation"))
		gf_obuf_puts(&resp->body, OK_VEC("{\"metric\":{\"namespace\":\"a\",\"node\":\"n\",\"gpu\":\"0\","
						 "\"uuid\":\"G\",\"model\":\"H100\",\"share\":\"0.500\"},\"value\":[1,\"30\"]}"));
	else if (strstr(req->body, "gpufleet_gpu_capacity"))
		gf_obuf_puts(&resp->body, OK_VEC("{\"metric\":{\"node\":\"n\",\"gpu\":\"0\",\"uuid\":\"G\","
						 "\"model\":\"H100\",\"capacity_type\":\"on-demand\"},\"value\":[1,\"60\"]}"));
	else
		gf_obuf_puts(&resp->body, OK_VEC(""));
}

static int fake_queries(void)
{
	pthread_mutex_lock(&fake.mu);
	int n = fake.queries;
	pthread_mutex_unlock(&fake.mu);
	return n;
}

struct bg_run {
	gf_costapi *a;
	struct gf_cost_request r;
	unsigned code;
};

static unsigned run(gf_costapi *a, const struct gf_cost_request *r, struct gf_obuf *o, char *err, size_t errlen,
		    struct gf_cost_timing *t)
{
	gf_obuf_init(o, 1 << 20);
	return gf_costapi_run(a, r, GF_COST_JSON, o, err, errlen, t);
}

static void *bg(void *p)
{
	struct bg_run *b = p;
	struct gf_obuf o;
	char err[512];
	b->code = run(b->a, &b->r, &o, err, sizeof(err), NULL);
	gf_obuf_release(&o);
	return NULL;
}

/*
 * `cost --serve`'s bounds against a client repeating month-long queries: a window longer than
 * max_window is a 400; an answer asked again is copied from the cache (completed windows until
 * evicted, recent ones for cache_recent_s) without a query; past max_queries reading Prometheus
 * at once a request gets 429 - and a cached answer is still given meanwhile.
 */
static void test_bounds(void **state)
{
	(void)state;
	struct gf_http_route routes[] = { { "POST", "/api/v1/query", fake_query, NULL } };
	struct gf_http_config hc = { .bind_addr = "127.0.0.1", .routes = routes, .nroutes = 1, .threads = 4 };
	gf_http_server *srv;
	assert_int_equal(gf_http_server_create(&hc, &srv), GF_OK);
	char url[64];
	snprintf(url, sizeof(url), "http://127.0.0.1:%u", gf_http_server_port(srv));
	struct gf_cost_price star = { .model = "*", .on_demand = 2, .spot = 1 };
	struct gf_cost_prices p = { .v = &star, .n = 1, .currency = "USD" };
	struct gf_costapi_config cfg = { .prometheus_url = url, .timeout_ms = 10000, .prices = &p, .max_queries = 1,
					 .cache_bytes = 1 << 20 };
	gf_costapi *a;
	assert_int_equal(gf_costapi_create(&cfg, &a), GF_OK);
	struct gf_obuf o1, o2;
	char err[512];
	struct gf_cost_timing t;
	const int64_t now = 1796100000;

	/* longer than the default 92 days: refused before Prometheus */
	struct gf_cost_request longer = { .window = "100d", .now = now };
	assert_int_equal(run(a, &longer, &o1, err, sizeof(err), &t), 400);
	assert_non_null(strstr(err, "window: '100d' is longer than the 92d allowed (--max-window)"));
	gf_obuf_release(&o1);
	assert_int_equal(fake_queries(), 0);

	/* a completed hour: asked once, then copied */
	struct gf_cost_request done = { .window = "1796000000,1796003600", .resolution = "1m", .now = now };
	assert_int_equal(run(a, &done, &o1, err, sizeof(err), &t), 200);
	assert_false(t.cached);
	assert_int_equal(fake_queries(), 3);
	assert_non_null(strstr(o1.data, "\"gpuHours\":0.5"));
	done.now = now + 86400; /* a day later: still kept */
	assert_int_equal(run(a, &done, &o2, err, sizeof(err), &t), 200);
	assert_true(t.cached);
	assert_int_equal(t.sets, 1);
	assert_int_equal(fake_queries(), 3);
	assert_string_equal(o1.data, o2.data);
	gf_obuf_release(&o1);
	gf_obuf_release(&o2);
	/* another aggregate is another answer */
	done.aggregate = "cluster";
	assert_int_equal(run(a, &done, &o1, err, sizeof(err), &t), 200);
	assert_false(t.cached);
	assert_int_equal(fake_queries(), 6);
	gf_obuf_release(&o1);

	/* "1h" ending now: the same answer for a minute, then asked again */
	struct gf_cost_request recent = { .window = "1h", .resolution = "1m", .now = now };
	assert_int_equal(run(a, &recent, &o1, err, sizeof(err), &t), 200);
	gf_obuf_release(&o1);
	recent.now = now + 59;
	assert_int_equal(run(a, &recent, &o1, err, sizeof(err), &t), 200);
	assert_true(t.cached);
	gf_obuf_release(&o1);
	assert_int_equal(fake_queries(), 9);
	recent.now = now + 61;
	assert_int_equal(run(a, &recent, &o1, err, sizeof(err), &t), 200);
	assert_false(t.cached);
	gf_obuf_release(&o1);
	assert_int_equal(fake_queries(), 12);

	/* "today" asked 30 s before a UTC midnight, again a second before it (kept: the same
	 * window as written, the whole of it as the step) and 20 s after it: the new day is asked
	 * of Prometheus, not served the day before's answer (whose minute of cache_recent_s would
	 * still run).  The same with an explicit step. */
	const int64_t midnight = 1796169600; /* 2026-12-02T00:00:00Z */
	const char *steps[] = { NULL, "1h" };
	for (int k = 0; k < 2; k++) {
		struct gf_cost_request today = { .window = "today", .step = steps[k], .resolution = "10s",
						 .now = midnight - 30 };
		int before = fake_queries();
		assert_int_equal(run(a, &today, &o1, err, sizeof(err), &t), 200);
		assert_false(t.cached);
		assert_non_null(strstr(o1.data, "\"start\":\"2026-12-01T00:00:00Z\""));
		gf_obuf_release(&o1);
		assert_int_not_equal(fake_queries(), before);
		before = fake_queries();
		today.now = midnight - 1;
		assert_int_equal(run(a, &today, &o1, err, sizeof(err), &t), 200);
		assert_true(t.cached);
		gf_obuf_release(&o1);
		assert_int_equal(fake_queries(), before);
		today.now = midnight + 20;
		assert_int_equal(run(a, &today, &o1, err, sizeof(err), &t), 200);
		assert_false(t.cached);
		assert_null(strstr(o1.data, "2026-12-01T00:00:00Z"));
		assert_non_null(strstr(o1.data, "\"start\":\"2026-12-02T00:00:00Z\""));
		gf_obuf_release(&o1);
		assert_int_equal(fake_queries(), before + 3);
	}

	/* one request held reading Prometheus: a second one gets 429, a cached one its answer */
	pthread_mutex_lock(&fake.mu);
	fake.hold = true;
	pthread_mutex_unlock(&fake.mu);
	struct bg_run b = { .a = a, .r = { .window = "1796003600,1796007200", .resolution = "1m", .now = now } };
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, bg, &b), 0);
	pthread_mutex_lock(&fake.mu);
	while (fake.waiting < 1)
		pthread_cond_wait(&fake.cv, &fake.mu);
	pthread_mutex_unlock(&fake.mu);
	struct gf_cost_request other = { .window = "1796007200,1796010800", .resolution = "1m", .now = now };
	assert_int_equal(run(a, &other, &o1, err, sizeof(err), &t), 429);
	assert_non_null(strstr(err, "1 cost queries are reading Prometheus already"));
	gf_obuf_release(&o1);
	done.aggregate = NULL;
	assert_int_equal(run(a, &done, &o1, err, sizeof(err), &t), 200);
	assert_true(t.cached);
	gf_obuf_release(&o1);
	pthread_mutex_lock(&fake.mu);
	fake.hold = false;
	pthread_cond_broadcast(&fake.cv);
	pthread_mutex_unlock(&fake.mu);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(b.code, 200);
	/* the place is free again */
	assert_int_equal(run(a, &other, &o1, err, sizeof(err), &t), 200);
	gf_obuf_release(&o1);

	gf_costapi_destroy(a);
	/* a longer limit lets a longer window through (to Prometheus: here the fake) */
	cfg.max_window = 200 * 86400;
	assert_int_equal(gf_costapi_create(&cfg, &a), GF_OK);
	longer.resolution = "1h";
	assert_int_equal(run(a, &longer, &o1, err, sizeof(err), &t), 200);
	gf_obuf_release(&o1);
	gf_costapi_destroy(a);
	cfg.max_window = 36 * 3600;
	assert_int_equal(gf_costapi_create(&cfg, &a), GF_OK);
	struct gf_cost_request two_days = { .window = "2d", .now = now };
	assert_int_equal(run(a, &two_days, &o1, err, sizeof(err), &t), 400);
	assert_string_equal(err, "window: '2d' is longer than the 36h allowed (--max-window)");
	gf_obuf_release(&o1);
	gf_costapi_destroy(a);
	gf_http_server_destroy(srv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_queries),
		cmocka_unit_test(test_decode),
		cmocka_unit_test(test_decode_pooled),
		cmocka_unit_test(test_decode_errors),
		cmocka_unit_test(test_auth),
		cmocka_unit_test(test_run_params),
		cmocka_unit_test(test_bounds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
