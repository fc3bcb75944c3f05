/* tests/scheduler/test_k8s_codec.c - quantities, Pod and Node decoding, JSON paths in errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "k8s/codec.h"
#include "k8s/extargs.h"

static void test_quantity(void **st)
{
	(void)st;
	struct { const char *s; int64_t want; } ok[] = {
		{ "2", 2000 }, { "500m", 500 }, { "0.5", 500 }, { "1Ki", 1024000 },
		{ "64Gi", 64LL * 1024 * 1024 * 1024 * 1000 }, { "1e3", 1000000 }, { "1E3", 1000000 },
		{ "1k", 1000000 }, { "1M", 1000000000 }, { "-3", -3000 }, { "+4", 4000 },
		{ "0", 0 }, { "0.0001", 1 }, { "1n", 1 }, { "1u", 1 }, { "1.5", 1500 }, { ".5", 500 },
		{ "100Mi", 104857600000LL }, { "2P", 2000000000000000000LL },
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		int64_t v = -42;
		if (gf_k8s_quantity_milli(ok[i].s, &v) != GF_OK)
			fail_msg("%s does not parse", ok[i].s);
		if (v != ok[i].want)
			fail_msg("%s: got %lld want %lld", ok[i].s, (long long)v, (long long)ok[i].want);
	}
	const char *bad[] = { "", "m", "1x", "1Gb", "1..2", "abc", "1e", "1 ", " 1", "1Ki2" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int64_t v;
		if (gf_k8s_quantity_milli(bad[i], &v) != GF_PARSE)
			fail_msg("'%s' should not parse", bad[i]);
	}
	int64_t v;
	assert_int_equal(gf_k8s_quantity_milli("9E", &v), GF_RANGE);
	assert_int_equal(gf_k8s_quantity_milli("99999999999999999999999", &v), GF_RANGE);
}

static struct gf_k8s_pod pod_of(const char *json, gf_err want, char *err, size_t errlen)
{
	struct gf_k8s_pod p;
	gf_err e = gf_k8s_pod_decode_text(json, strlen(json), &p, err, errlen);
	if (e != want)
		fail_msg("decode: got %d want %d (%s) for %s", e, want, err, json);
	return p;
}

static void test_pod_whole_gpus(void **st)
{
	(void)st;
	char err[256] = "";
	struct gf_k8s_pod p = pod_of(
		"{\"metadata\":{\"name\":\"train-0\",\"namespace\":\"ml\",\"uid\":\"u1\","
		"\"resourceVersion\":\"17\"},"
		"\"spec\":{\"schedulerName\":\"gpufleet\",\"nodeSelector\":{\"nvidia.com/gpu.product\":\"H100\"},"
		"\"containers\":[{\"name\":\"a\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"2\",\"memory\":\"64Gi\"},"
		"\"requests\":{\"cpu\":\"16\",\"memory\":\"64Gi\"}}},"
		"{\"name\":\"b\",\"resources\":{\"limits\":{\"cpu\":\"500m\"}}}],"
		"\"initContainers\":[{\"name\":\"i\",\"resources\":{\"requests\":{\"cpu\":\"32\"}}}]},"
		"\"status\":{\"phase\":\"Pending\"}}",
		GF_OK, err, sizeof(err));
	assert_string_equal(p.ns, "ml");
	assert_string_equal(p.name, "train-0");
	assert_string_equal(p.uid, "u1");
	assert_string_equal(p.rv, "17");
	assert_string_equal(p.scheduler, "gpufleet");
	assert_string_equal(p.node, "");
	assert_int_equal(p.phase, GF_PHASE_PENDING);
	assert_int_equal(p.req.cpu_milli, 32000); /* init container max wins over 16.5 */
	assert_int_equal(p.req.mem_mib, 65536);
	assert_int_equal(p.req.gpu_count, 2);
	assert_int_equal(p.req.gpu_milli, 1000);
	assert_string_equal(p.model, "H100");
	assert_string_equal(p.invalid, "");
	assert_false(p.assigned);
}

static void test_pod_share_and_annotations(void **st)
{
	(void)st;
	char err[256] = "";
	struct gf_k8s_pod p = pod_of(
		"{\"metadata\":{\"name\":\"s\",\"annotations\":{\"gpufleet.io/gpu-milli\":\"250\","
		"\"gpufleet.io/gpu-model\":\"A100|V100\",\"gpufleet.io/assigned-node\":\"n1\","
		"\"gpufleet.io/assigned-gpus\":\"3\",\"gpufleet.io/assigned-gpu-milli\":\"250\"}},"
		"\"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"resources\":{}}]},"
		"\"status\":{\"phase\":\"Running\"}}",
		GF_OK, err, sizeof(err));
	assert_string_equal(p.ns, "default");
	assert_string_equal(p.scheduler, "default-scheduler");
	assert_int_equal(p.req.gpu_count, 1);
	assert_int_equal(p.req.gpu_milli, 250);
	assert_true(p.milli_given);
	assert_string_equal(p.model, "A100|V100");
	assert_true(p.assigned);
	assert_string_equal(p.assigned_node, "n1");
	assert_int_equal(p.assigned_ngpus, 1);
	assert_int_equal(p.assigned_gpus[0], 3);
	assert_int_equal(p.assigned_milli, 250);
	assert_int_equal(p.phase, GF_PHASE_RUNNING);

	/* Share by resources: milli + memory + count; affinity model. */
	p = pod_of("{\"metadata\":{\"name\":\"s2\"},\"spec\":{\"affinity\":{\"nodeAffinity\":"
		   "{\"requiredDuringSchedulingIgnoredDuringExecution\":{\"nodeSelectorTerms\":[{"
		   "\"matchExpressions\":[{\"key\":\"nvidia.com/gpu.product\",\"operator\":\"In\","
		   "\"values\":[\"L4\",\"T4\"]}]}]}}},\"containers\":[{\"resources\":{\"limits\":{"
		   "\"gpufleet.io/gpu-memory-mib\":\"8000\",\"gpufleet.io/gpu-count\":\"2\"}}}]}}",
		   GF_OK, err, sizeof(err));
	assert_int_equal(p.req.gpu_count, 2);
	assert_int_equal(p.req.gpu_mem_mib, 8000);
	assert_false(p.milli_given);
	assert_int_equal(p.req.gpu_milli, 1000); /* memory only: the scheduler converts */
	assert_string_equal(p.model, "L4|T4");
	/* A malformed assignment is ignored, not an error. */
	p = pod_of("{\"metadata\":{\"name\":\"x\",\"annotations\":{\"gpufleet.io/assigned-node\":\"n\","
		   "\"gpufleet.io/assigned-gpus\":\"1,1\",\"gpufleet.io/assigned-gpu-milli\":\"1000\"}}}",
		   GF_OK, err, sizeof(err));
	assert_false(p.assigned);
}

static void test_pod_invalid_requests(void **st)
{
	(void)st;
	char err[256] = "";
	struct { const char *json; const char *want; } cases[] = {
		{ "{\"metadata\":{\"name\":\"a\",\"annotations\":{\"gpufleet.io/gpu-milli\":\"0\"}}}",
		  "gpufleet.io/gpu-milli must be 1..1000" },
		{ "{\"metadata\":{\"name\":\"a\",\"annotations\":{\"gpufleet.io/gpu-milli\":\"-5\"}}}",
		  "got -5" },
		{ "{\"metadata\":{\"name\":\"a\",\"annotations\":{\"gpufleet.io/gpu-milli\":\"1001\"}}}",
		  "must be 1..1000" },
		{ "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"containers\":[{\"resources\":{\"limits\":"
		  "{\"gpufleet.io/gpu-mili\":\"5\"}}}]}}", "unknown resource gpufleet.io/gpu-mili" },
		{ "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"containers\":[{\"resources\":{\"limits\":"
		  "{\"nvidia.com/gpu\":\"17\"}}}]}}", "asks 17 GPUs" },
		{ "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"containers\":[{\"resources\":{\"limits\":"
		  "{\"nvidia.com/gpu\":\"1\",\"gpufleet.io/gpu-milli\":\"5\"}}}]}}", "ask one" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct gf_k8s_pod p = pod_of(cases[i].json, GF_OK, err, sizeof(err));
		if (!strstr(p.invalid, cases[i].want))
			fail_msg("case %zu: invalid='%s' lacks '%s'", i, p.invalid, cases[i].want);
		assert_int_equal(p.req.gpu_count, 0);
	}
}

static void test_pod_parse_errors(void **st)
{
	(void)st;
	char err[256];
	struct { const char *json; const char *want; } cases[] = {
		{ "{\"metadata\":", "not valid JSON" },
		{ "[1]", "expected a Pod object" },
		{ "{\"spec\":{}}", "needs metadata" },
		{ "{\"metadata\":{\"name\":5}}", "metadata.name: expected a string, got a number" },
		{ "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"containers\":[{\"resources\":{\"limits\":"
		  "{\"nvidia.com/gpu\":\"1.5\"}}}]}}",
		  "spec.containers[0].resources.limits[\"nvidia.com/gpu\"]: expected a whole number" },
		{ "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"containers\":[{},{\"resources\":{\"requests\":"
		  "{\"cpu\":\"lots\"}}}]}}", "spec.containers[1].resources.requests.cpu: expected a quantity" },
		{ "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"containers\":{}}}",
		  "spec.containers: expected an array, got an object" },
		{ "{\"metadata\":{\"name\":\"a\",\"annotations\":{\"gpufleet.io/gpu-milli\":\"half\"}}}",
		  "metadata.annotations[\"gpufleet.io/gpu-milli\"]: expected a whole number" },
		{ "{\"metadata\":{\"name\":\"a\",\"annotations\":{\"k\":1}}}",
		  "metadata.annotations.k: expected a string" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = '\0';
		pod_of(cases[i].json, GF_PARSE, err, sizeof(err));
		if (!strstr(err, cases[i].want))
			fail_msg("case %zu: err='%s' lacks '%s'", i, err, cases[i].want);
	}
}

static void test_node(void **st)
{
	(void)st;
	const char *json =
		"{\"metadata\":{\"name\":\"gpu-node-b\",\"resourceVersion\":\"9\",\"labels\":{"
		"\"nvidia.com/gpu.product\":\"NVIDIA-H100-80GB-HBM3\",\"nvidia.com/gpu.memory\":\"81559\"},"
		"\"annotations\":{\"gpufleet.io/gpu-topology\":\"{\\\"version\\\":1,\\\"gpus\\\":["
		"{\\\"index\\\":0,\\\"uuid\\\":\\\"GPU-a\\\",\\\"numa_node\\\":0},"
		"{\\\"index\\\":1,\\\"uuid\\\":\\\"GPU-b\\\",\\\"numa_node\\\":0},"
		"{\\\"index\\\":2,\\\"uuid\\\":\\\"GPU-c\\\",\\\"numa_node\\\":1},"
		"{\\\"index\\\":3,\\\"uuid\\\":\\\"GPU-d\\\",\\\"numa_node\\\":1}],"
		"\\\"topology\\\":{\\\"links\\\":[[0,4,0,0],[4,0,0,0],[0,0,0,4],[0,0,4,0]]}}\"}},"
		"\"spec\":{\"unschedulable\":true},"
		"\"status\":{\"allocatable\":{\"cpu\":\"222\",\"memory\":\"2090000Mi\",\"nvidia.com/gpu\":\"4\"},"
		"\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}";
	struct gf_k8s_node n;
	char err[256] = "";
	assert_int_equal(gf_k8s_node_decode_text(json, strlen(json), &n, err, sizeof(err)), GF_OK);
	assert_string_equal(n.name, "gpu-node-b");
	assert_string_equal(n.model, "NVIDIA-H100-80GB-HBM3");
	assert_int_equal(n.spec.cpu_milli, 222000);
	assert_int_equal(n.spec.mem_mib, 2090000);
	assert_int_equal(n.spec.ngpus, 4);
	assert_int_equal(n.spec.gpu_mem_mib, 81559);
	assert_true(n.ready);
	assert_true(n.unschedulable);
	assert_string_equal(n.topo_err, "");
	assert_int_equal(n.nuuids, 4);
	assert_string_equal(n.uuids[2], "GPU-c");
	assert_int_equal(n.spec.topo[0].numa, 0);
	assert_int_equal(n.spec.topo[3].numa, 1);
	assert_int_equal(n.spec.topo[0].nvlink_island, n.spec.topo[1].nvlink_island);
	assert_int_equal(n.spec.topo[2].nvlink_island, n.spec.topo[3].nvlink_island);
	assert_int_not_equal(n.spec.topo[0].nvlink_island, n.spec.topo[2].nvlink_island);
	assert_int_equal(n.spec.topo[4].nvlink_island, -1);

	const char *bad = "{\"metadata\":{\"name\":\"n\"},\"status\":{\"allocatable\":"
			  "{\"nvidia.com/gpu\":\"eight\"}}}";
	assert_int_equal(gf_k8s_node_decode_text(bad, strlen(bad), &n, err, sizeof(err)), GF_PARSE);
	assert_non_null(strstr(err, "status.allocatable[\"nvidia.com/gpu\"]: expected a quantity"));
	const char *badtopo = "{\"metadata\":{\"name\":\"n\",\"annotations\":{\"gpufleet.io/gpu-topology\":"
			      "\"{nope\"}},\"status\":{\"allocatable\":{\"nvidia.com/gpu\":\"2\"}}}";
	assert_int_equal(gf_k8s_node_decode_text(badtopo, strlen(badtopo), &n, err, sizeof(err)), GF_OK);
	assert_non_null(strstr(n.topo_err, "not JSON"));
	assert_int_equal(n.spec.topo[0].numa, -1);
	const char *big = "{\"metadata\":{\"name\":\"n\"},\"status\":{\"allocatable\":{\"nvidia.com/gpu\":\"64\"}}}";
	assert_int_equal(gf_k8s_node_decode_text(big, strlen(big), &n, err, sizeof(err)), GF_OK);
	assert_int_equal(n.spec.ngpus, GF_MAX_GPUS);
	assert_true(n.capped);
}

/* ExtenderArgs: fast path (NodeNames), full parser (Nodes, escapes, any key case), errors. */
static void test_extender_args(void **st)
{
	(void)st;
	struct { const char *body; const char *names; const char *err; } cases[] = {
		{ "{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"Nodes\":null,\"NodeNames\":[\"a\", \"b\" ,\"c\"]}", "a,b,c,", NULL },
		{ "{\"nodenames\":[\"x\"],\"pod\":{\"metadata\":{\"name\":\"p\",\"annotations\":{\"k\":\"{[\\\"]}\"}}}}", "x,", NULL },
		{ "{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"NodeNames\":[\"a\\\"b\"]}", "a\"b,", NULL },
		{ "{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"Nodes\":{\"items\":[{\"metadata\":{\"name\":\"n1\"}},"
		  "{\"metadata\":{\"name\":\"n2\"}}]},\"NodeNames\":null}", "n1,n2,", NULL },
		{ "{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"Nodes\":null,\"NodeNames\":null}", "", NULL },
		{ "not json", NULL, "not a JSON object" },
		{ "{\"Pod\":{\"metadata\":{\"name\":5}},\"NodeNames\":[]}", NULL, "Pod.metadata.name: expected a string" },
		{ "{\"Pod\":[],\"NodeNames\":[]}", NULL, "Pod: expected an object" },
		{ "{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"NodeNames\":[1]}", NULL, "NodeNames[0]: expected a string" },
		{ "{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"NodeNames\":\"a\"}", NULL, "NodeNames: expected an array" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct gf_ext_args a;
		static struct gf_k8s_pod p;
		char msg[400] = "";
		gf_err e = gf_ext_args_parse(cases[i].body, strlen(cases[i].body), &a, &p, msg, sizeof(msg));
		if (cases[i].names) {
			if (e != GF_OK)
				fail_msg("case %zu: %s", i, msg);
			char got[256] = "";
			for (size_t k = 0; k < a.n; k++) {
				strncat(got, a.names[k], sizeof(got) - strlen(got) - 1); /* test only */
				strncat(got, ",", sizeof(got) - strlen(got) - 1);
			}
			assert_string_equal(got, cases[i].names);
			assert_string_equal(p.name, "p");
		} else {
			assert_int_equal(e, GF_PARSE);
			if (!strstr(msg, cases[i].err))
				fail_msg("case %zu: '%s' lacks '%s'", i, msg, cases[i].err);
		}
		gf_ext_args_release(&a);
	}
	struct gf_obuf o;
	gf_obuf_init(&o, 1024);
	gf_json_put_str(&o, "a\"b\\c\n");
	assert_string_equal(o.data, "\"a\\\"b\\\\c\\u000a\"");
	gf_obuf_release(&o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quantity),
		cmocka_unit_test(test_pod_whole_gpus),
		cmocka_unit_test(test_pod_share_and_annotations),
		cmocka_unit_test(test_pod_invalid_requests),
		cmocka_unit_test(test_pod_parse_errors),
		cmocka_unit_test(test_node),
		cmocka_unit_test(test_extender_args),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
