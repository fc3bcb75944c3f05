/*
 * tests/metrics-api/test_ma_serve.c - the request handler over the agents
 * source fed with scripted /metrics text: discovery documents, values
 * (averaged per distinct GPU, shared GPUs counted once), every selector
 * key, namespaces, Status errors (400/401/404/500/503), the front-proxy
 * check, staleness, and a Prometheus-source configuration's discovery.
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
#include "metricsapi/metricsapi.h"

#define GV "/apis/external.metrics.k8s.io/v1beta1"
#define L(gpu, uuid, host, extra) \
	"{gpu=\"" gpu "\",UUID=\"" uuid "\",modelName=\"NVIDIA H100 80GB HBM3\",hostname=\"" host "\"" extra "}"

static const char *node_a =
	"# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n"
	"DCGM_FI_DEV_GPU_UTIL" L("0", "GPU-a0", "node-a", ",container=\"server\",namespace=\"ml\",pod=\"llm-0\"") " 87\n"
	"DCGM_FI_DEV_GPU_UTIL" L("1", "GPU-a1", "node-a", ",container=\"main\",namespace=\"research\",pod=\"trainer-0\"") " 55\n"
	"DCGM_FI_DEV_GPU_UTIL" L("1", "GPU-a1", "node-a", ",container=\"jupyter\",namespace=\"team-b\",pod=\"notebook-x\"") " 55\n"
	"DCGM_FI_DEV_FB_USED" L("0", "GPU-a0", "node-a", ",container=\"server\",namespace=\"ml\",pod=\"llm-0\"") " 61234\n"
	"gpufleet_gpu_up" L("0", "GPU-a0", "node-a", "") " 1\n";
static const char *node_b =
	"DCGM_FI_DEV_GPU_UTIL" L("0", "GPU-b0", "node-b", ",container=\"c\",namespace=\"ml\",pod=\"llama-7b-a\"") " 95\n"
	"DCGM_FI_DEV_GPU_UTIL" L("1", "GPU-b1", "node-b", ",container=\"c\",namespace=\"ml\",pod=\"llama-7b-b\"") " 10\n"
	"DCGM_FI_DEV_GPU_UTIL{gpu=\"2\",UUID=\"GPU-b2\",modelName=\"NVIDIA A100-SXM4-40GB\",hostname=\"node-b\"} 0\n";

static gf_ma_agents *agents;
static gf_metrics_api *api;
static cJSON *doc;

static int setup(void **st)
{
	(void)st;
	const char *urls[] = { "http://a/metrics", "http://b/metrics" };
	struct gf_ma_agents_config ac = { .urls = urls, .nurls = 2, .no_thread = true };
	assert_int_equal(gf_ma_agents_create(&ac, &agents), GF_OK);
	struct gf_metrics_api_config mc = { .source = GF_MA_SOURCE_AGENTS, .agents = agents };
	assert_int_equal(gf_metrics_api_create(&mc, &api), GF_OK);
	return 0;
}

static int teardown(void **st)
{
	(void)st;
	gf_metrics_api_destroy(api);
	gf_ma_agents_destroy(agents);
	cJSON_Delete(doc);
	doc = NULL;
	return 0;
}

/* GET path?labelSelector=sel through a; returns the status, doc = the body. */
static unsigned get_with(gf_metrics_api *a, const char *path, const char *sel, bool verified,
			 const char *cn)
{
	struct gf_http_response resp = { .status = 200 };
	gf_obuf_init(&resp.body, 1 << 20);
	struct gf_ma_request r = { "GET", path, sel, verified, cn, "tester" };
	gf_metrics_api_serve(a, &r, &resp);
	cJSON_Delete(doc);
	doc = resp.body.data ? cJSON_Parse(resp.body.data) : NULL;
	if (resp.status != 200 || strncmp(path, "/apis", 5) == 0) {
		if (!doc)
			fail_msg("%s: body is not JSON: %s", path, resp.body.data ? resp.body.data : "");
		assert_string_equal(resp.content_type, "application/json");
	}
	gf_obuf_release(&resp.body);
	return resp.status;
}

static unsigned get(const char *path, const char *sel)
{
	return get_with(api, path, sel, false, "");
}

static const char *str(const cJSON *o, const char *path)
{
	/* "a.b.0.c": objects by key, arrays by index */
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", path);
	const cJSON *cur = o;
	for (char *save = NULL, *t = strtok_r(buf, ".", &save); t && cur; t = strtok_r(NULL, ".", &save))
		cur = cJSON_IsArray(cur) ? cJSON_GetArrayItem(cur, (int)strtol(t, NULL, 10))
					 : cJSON_GetObjectItemCaseSensitive(cur, t);
	if (!cur)
		return NULL;
	static char out[256];
	if (cJSON_IsString(cur))
		return cur->valuestring;
	if (cJSON_IsNumber(cur)) {
		snprintf(out, sizeof(out), "%g", cur->valuedouble);
		return out;
	}
	if (cJSON_IsBool(cur))
		return cJSON_IsTrue(cur) ? "true" : "false";
	return "?";
}

static void check_value(const char *metric, const char *sel, const char *want)
{
	char path[256];
	snprintf(path, sizeof(path), GV "/namespaces/ml/%s", metric);
	unsigned s = get(path, sel);
	if (s != 200)
		fail_msg("%s?%s: status %u: %s", metric, sel ? sel : "", s, str(doc, "message"));
	assert_string_equal(str(doc, "kind"), "ExternalMetricValueList");
	const cJSON *items = cJSON_GetObjectItem(doc, "items");
	if (!want) {
		assert_int_equal(cJSON_GetArraySize(items), 0);
		return;
	}
	assert_int_equal(cJSON_GetArraySize(items), 1);
	if (strcmp(str(doc, "items.0.value"), want))
		fail_msg("%s?%s: value %s, want %s", metric, sel ? sel : "", str(doc, "items.0.value"), want);
	assert_string_equal(str(doc, "items.0.metricName"), metric);
	assert_int_equal(strlen(str(doc, "items.0.timestamp")), 20);
}

static void check_status(const char *path, const char *sel, unsigned code, const char *reason,
			  const char *msg)
{
	unsigned s = get(path, sel);
	if (s != code)
		fail_msg("%s?%s: status %u, want %u", path, sel ? sel : "", s, code);
	assert_string_equal(str(doc, "kind"), "Status");
	assert_string_equal(str(doc, "apiVersion"), "v1");
	assert_string_equal(str(doc, "status"), "Failure");
	assert_string_equal(str(doc, "reason"), reason);
	char c[16];
	snprintf(c, sizeof(c), "%u", code);
	assert_string_equal(str(doc, "code"), c);
	if (msg && !strstr(str(doc, "message"), msg))
		fail_msg("%s: message '%s' lacks '%s'", path, str(doc, "message"), msg);
}

static void ingest_all(void)
{
	char err[256];
	int64_t now = (int64_t)time(NULL);
	assert_int_equal(gf_ma_agents_ingest(agents, 0, node_a, strlen(node_a), now, err, sizeof(err)), GF_OK);
	assert_int_equal(gf_ma_agents_ingest(agents, 1, node_b, strlen(node_b), now, err, sizeof(err)), GF_OK);
}

static void test_not_ready_then_values(void **st)
{
	(void)st;
	check_status(GV "/namespaces/ml/dcgm_gpu_utilization", NULL, 503, "ServiceUnavailable", "no scrape");
	struct gf_http_response resp = { .status = 200 };
	gf_obuf_init(&resp.body, 1000);
	struct gf_ma_request r = { "GET", "/readyz", NULL, false, "", NULL };
	gf_metrics_api_serve(api, &r, &resp);
	assert_int_equal(resp.status, 503);
	gf_obuf_release(&resp.body);

	ingest_all();
	/* namespace ml: GPUs a0 (87), b0 (95), b1 (10) */
	check_value("dcgm_gpu_utilization", NULL, "64");
	assert_string_equal(str(doc, "items.0.metricLabels.namespace"), "ml");
	assert_null(str(doc, "items.0.metricLabels.node"));
	check_value("DCGM_FI_DEV_GPU_UTIL", "", "64");
	check_value("dcgm_gpu_utilization", "node=node-b", "52500m");
	assert_string_equal(str(doc, "items.0.metricLabels.node"), "node-b");
	check_value("dcgm_gpu_utilization", "pod=llm-0", "87");
	assert_string_equal(str(doc, "items.0.metricLabels.pod"), "llm-0");
	assert_string_equal(str(doc, "items.0.metricLabels.container"), "server");
	assert_string_equal(str(doc, "items.0.metricLabels.gpu"), "NVIDIA-H100-80GB-HBM3");
	check_value("dcgm_gpu_utilization", "pod in (llama-7b-a,llama-7b-b)", "52500m");
	check_value("dcgm_gpu_utilization", "gpu=NVIDIA-H100-80GB-HBM3", "64");
	check_value("dcgm_gpu_utilization", "gpu_index=0", "91");
	check_value("dcgm_gpu_utilization", "gpu_index in (0),node!=node-a", "95");
	check_value("dcgm_gpu_utilization", "UUID=GPU-b1", "10");
	check_value("dcgm_gpu_utilization", "hostname=node-a", "87");
	check_value("dcgm_gpu_utilization", "container=c,pod", "52500m");
	check_value("dcgm_gpu_utilization_max", NULL, "95");
	check_value("dcgm_gpu_count", NULL, "3");
	check_value("DCGM_FI_DEV_FB_USED", NULL, "61234");
	/* nothing matches: no item (the HPA then keeps the replicas as they are) */
	check_value("dcgm_gpu_utilization", "pod=nope", NULL);
	check_value("dcgm_gpu_utilization", "!pod", NULL);
	check_value("DCGM_FI_DEV_ENC_UTIL", NULL, NULL);

	r.path = "/readyz";
	gf_obuf_init(&resp.body, 1000);
	resp.status = 200;
	gf_metrics_api_serve(api, &r, &resp);
	assert_int_equal(resp.status, 200);
	gf_obuf_release(&resp.body);
}

static void test_all_namespaces_shared_gpu(void **st)
{
	(void)st;
	struct gf_metrics_api_config mc = { .source = GF_MA_SOURCE_AGENTS, .agents = agents,
					    .all_namespaces = true };
	gf_metrics_api *all;
	assert_int_equal(gf_metrics_api_create(&mc, &all), GF_OK);
	ingest_all();
	/* node-a: GPU a0 87, GPU a1 55 shared by two pods: counted once */
	assert_int_equal(get_with(all, GV "/namespaces/default/dcgm_gpu_utilization", "node=node-a", false, ""), 200);
	assert_string_equal(str(doc, "items.0.value"), "71");
	assert_int_equal(get_with(all, GV "/namespaces/default/dcgm_gpu_count", NULL, false, ""), 200);
	assert_string_equal(str(doc, "items.0.value"), "5");
	/* the idle A100 (no pod): selectable by model and node */
	assert_int_equal(get_with(all, GV "/namespaces/default/dcgm_gpu_count", "gpu=NVIDIA-A100-SXM4-40GB", false, ""), 200);
	assert_string_equal(str(doc, "items.0.value"), "1");
	assert_int_equal(get_with(all, GV "/namespaces/default/dcgm_gpu_utilization", "namespace=research", false, ""), 200);
	assert_string_equal(str(doc, "items.0.value"), "55");
	gf_metrics_api_destroy(all);
}

static void test_errors(void **st)
{
	(void)st;
	ingest_all();
	check_status(GV "/namespaces/ml/no_such_metric", NULL, 404, "NotFound",
		      "could not find the metric no_such_metric");
	check_status(GV "/namespaces/ml/dcgm_gpu_utilization", "app=", 400, "BadRequest", NULL);
	check_status(GV "/namespaces/ml/dcgm_gpu_utilization", "pod in (a", 400, "BadRequest",
		      "labelSelector: at");
	check_status(GV "/namespaces/ml/dcgm_gpu_utilization", "gpu=70%", 400, "BadRequest",
		      "invalid label value");
	/* a pod label needs the API server: this server has none */
	check_status(GV "/namespaces/ml/dcgm_gpu_utilization", "app=llama-7b", 400, "BadRequest",
		      "label 'app' is not a series label");
	check_status(GV "/namespaces/ML/dcgm_gpu_utilization", NULL, 400, "BadRequest", "invalid namespace");
	check_status(GV "/namespaces/ml", NULL, 404, "NotFound", NULL);
	check_status(GV "/namespaces/ml/a/b", NULL, 404, "NotFound", NULL);
	check_status(GV "/foo", NULL, 404, "NotFound", NULL);
	check_status("/apis/other.group", NULL, 404, "NotFound", NULL);
	check_status(GV "/namespaces/ml/..", NULL, 404, "NotFound", NULL);
	/* every agent stale: 500 with the generic message */
	char err[256];
	assert_int_equal(gf_ma_agents_ingest(agents, 0, node_a, strlen(node_a), 1000, err, sizeof(err)), GF_OK);
	assert_int_equal(gf_ma_agents_ingest(agents, 1, node_b, strlen(node_b), 1000, err, sizeof(err)), GF_OK);
	check_status(GV "/namespaces/ml/dcgm_gpu_utilization", NULL, 500, "InternalError",
		      "unable to fetch metrics");
	/* a bad body keeps the agent's previous series */
	ingest_all();
	assert_int_equal(gf_ma_agents_ingest(agents, 1, "x{", 2, (int64_t)time(NULL), err, sizeof(err)), GF_PARSE);
	size_t n;
	assert_int_equal(gf_ma_agents_failing(agents, &n), 1);
	assert_int_equal(n, 2);
	check_value("dcgm_gpu_utilization", NULL, "64");
}

static void test_discovery(void **st)
{
	(void)st;
	assert_int_equal(get("/apis", NULL), 200);
	assert_string_equal(str(doc, "kind"), "APIGroupList");
	assert_string_equal(str(doc, "groups.0.name"), "external.metrics.k8s.io");
	assert_string_equal(str(doc, "groups.0.preferredVersion.groupVersion"), "external.metrics.k8s.io/v1beta1");
	assert_int_equal(get("/apis/external.metrics.k8s.io", NULL), 200);
	assert_string_equal(str(doc, "kind"), "APIGroup");
	assert_string_equal(str(doc, "versions.0.version"), "v1beta1");
	assert_int_equal(get(GV, NULL), 200);
	assert_string_equal(str(doc, "kind"), "APIResourceList");
	assert_string_equal(str(doc, "groupVersion"), "external.metrics.k8s.io/v1beta1");
	assert_string_equal(str(doc, "resources.0.name"), "dcgm_gpu_utilization");
	assert_string_equal(str(doc, "resources.0.singularName"), "");
	assert_string_equal(str(doc, "resources.0.namespaced"), "true");
	assert_string_equal(str(doc, "resources.0.kind"), "ExternalMetricValueList");
	assert_string_equal(str(doc, "resources.0.verbs.0"), "get");
	assert_int_equal(get("/healthz", NULL), 200);
}

static void test_front_proxy_check(void **st)
{
	(void)st;
	const char *names[] = { "front-proxy-client" };
	struct gf_metrics_api_config mc = { .source = GF_MA_SOURCE_AGENTS, .agents = agents,
					    .authenticate = true, .allowed_names = names, .nallowed = 1 };
	gf_metrics_api *sec;
	assert_int_equal(gf_metrics_api_create(&mc, &sec), GF_OK);
	ingest_all();
	const char *p = GV "/namespaces/ml/dcgm_gpu_utilization";
	assert_int_equal(get_with(sec, p, NULL, false, ""), 401);
	assert_string_equal(str(doc, "reason"), "Unauthorized");
	assert_int_equal(get_with(sec, p, NULL, true, "someone-else"), 401);
	assert_int_equal(get_with(sec, GV, NULL, false, ""), 401);
	assert_int_equal(get_with(sec, p, NULL, true, "front-proxy-client"), 200);
	assert_string_equal(str(doc, "items.0.value"), "64");
	assert_int_equal(get_with(sec, "/healthz", NULL, false, ""), 200); /* probes need no cert */
	gf_metrics_api_destroy(sec);
	/* no allowed names: any verified certificate */
	mc.nallowed = 0;
	assert_int_equal(gf_metrics_api_create(&mc, &sec), GF_OK);
	assert_int_equal(get_with(sec, p, NULL, true, "someone-else"), 200);
	assert_int_equal(get_with(sec, p, NULL, false, ""), 401);
	gf_metrics_api_destroy(sec);
}

static void test_prometheus_config(void **st)
{
	(void)st;
	struct gf_ma_rule rules[] = { { "llm_queue_depth", "sum(vllm_num_requests_waiting{<<.LabelMatchers>>})" } };
	struct gf_metrics_api_config mc = { .source = GF_MA_SOURCE_PROMETHEUS,
					    .prometheus_url = "http://127.0.0.1:1",
					    .prometheus_timeout_ms = 2000,
					    .rules = rules, .nrules = 1 };
	gf_metrics_api *p;
	assert_int_equal(gf_metrics_api_create(&mc, &p), GF_OK);
	assert_int_equal(get_with(p, GV, NULL, false, ""), 200);
	assert_string_equal(str(doc, "resources.0.name"), "llm_queue_depth");
	assert_string_equal(str(doc, "resources.1.name"), "dcgm_gpu_utilization");
	/* nothing listens on port 1: 500, generic message */
	assert_int_equal(get_with(p, GV "/namespaces/ml/llm_queue_depth", NULL, false, ""), 500);
	assert_string_equal(str(doc, "message"), "Internal error occurred: unable to fetch metrics");
	/* '>' cannot be a PromQL matcher: 400 */
	assert_int_equal(get_with(p, GV "/namespaces/ml/dcgm_gpu_utilization", "gpu_index>0", false, ""), 400);
	gf_metrics_api_destroy(p);
	/* bad configurations */
	struct gf_ma_rule bad[] = { { "a/b", "x" } };
	mc.rules = bad;
	assert_int_equal(gf_metrics_api_create(&mc, &p), GF_INVAL);
	mc.rules = NULL;
	mc.nrules = 0;
	mc.prometheus_url = NULL;
	assert_int_equal(gf_metrics_api_create(&mc, &p), GF_INVAL);
	struct gf_metrics_api_config ma = { .source = GF_MA_SOURCE_AGENTS };
	assert_int_equal(gf_metrics_api_create(&ma, &p), GF_INVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_not_ready_then_values, setup, teardown),
		cmocka_unit_test_setup_teardown(test_all_namespaces_shared_gpu, setup, teardown),
		cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_discovery, setup, teardown),
		cmocka_unit_test_setup_teardown(test_front_proxy_check, setup, teardown),
		cmocka_unit_test_setup_teardown(test_prometheus_config, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
