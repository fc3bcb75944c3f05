/* tests/scheduler/test_k8s_codec.c - quantities, Pod and Node decoding, JSON paths in errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
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
		"\"priority\":1000,"
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
	assert_int_equal(p.req.priority, 1000); /* spec.priority, from the PriorityClass */
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
		  "got \"-5\"" },
		/* the value as written, not clamped (it read "got 99999999") */
		{ "{\"metadata\":{\"name\":\"a\",\"annotations\":{\"gpufleet.io/gpu-milli\":\"12345678901234567890\"}}}",
		  "got \"12345678901234567890\"" },
		{ "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"containers\":[{\"resources\":{\"limits\":"
		  "{\"gpufleet.io/gpu-milli\":\"1234567890123456789012345678901234567890\"}}}]}}",
		  "got \"123456789012345678901234...\"" },
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
		{ "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"priority\":\"high\"}}",
		  "spec.priority: expected a number, got a string" },
		{ "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"priority\":1.5}}",
		  "spec.priority: expected a whole number" },
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
		{ "not json", NULL, "not valid JSON (at byte 0 of 8)" },
		{ "[1]", NULL, "not a JSON object" },
		{ "{\"Pod\":{\"metadata\":{\"name\":5}},\"NodeNames\":[]}", NULL, "Pod.metadata.name: expected a string" },
		{ "{\"Pod\":[],\"NodeNames\":[]}", NULL, "Pod: expected an object" },
		{ "{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"NodeNames\":[1]}", NULL, "NodeNames[0]: expected a string" },
		{ "{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"NodeNames\":\"a\"}", NULL, "NodeNames: expected an array" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct gf_ext_args a;
		static struct gf_k8s_pod p;
		char msg[400] = "";
		gf_err e = gf_ext_args_parse(cases[i].body, strlen(cases[i].body), NULL, &a, &p, msg, sizeof(msg));
		if (cases[i].names) {
			if (e != GF_OK)
				fail_msg("case %zu: %s", i, msg);
			char got[256] = "";
			for (size_t k = 0; k < a.n; k++) {
				snprintf(got + strlen(got), sizeof(got) - strlen(got), "%.*s", (int)a.lens[k], a.names[k]);
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

/* The fast path's word-at-a-time name scan: every length around the 8-byte steps, either spacing. */
static void test_extender_names_scan(void **st)
{
	(void)st;
	static const char alpha[] = "abcdefghijklmnopqrstuvwxyz";
	char body[4096], want[1024] = "";
	for (int spaced = 0; spaced < 2; spaced++) {
		size_t n = (size_t)snprintf(body, sizeof(body), "{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"NodeNames\":[");
		want[0] = '\0';
		for (int len = 0; len <= 26; len++) {
			n += (size_t)snprintf(body + n, sizeof(body) - n, "%s\"%.*s\"", len ? (spaced ? " ,\n " : ",") : "",
					      len, alpha);
			snprintf(want + strlen(want), sizeof(want) - strlen(want), "%.*s|", len, alpha);
		}
		n += (size_t)snprintf(body + n, sizeof(body) - n, "]}");
		struct gf_ext_args a;
		static struct gf_k8s_pod p;
		char msg[400] = "", got[1024] = "";
		assert_int_equal(gf_ext_args_parse(body, n, NULL, &a, &p, msg, sizeof(msg)), GF_OK);
		assert_true(a.plain);
		assert_int_equal(a.n, 27);
		for (size_t k = 0; k < a.n; k++)
			snprintf(got + strlen(got), sizeof(got) - strlen(got), "%.*s|", (int)a.lens[k], a.names[k]);
		assert_string_equal(got, want);
		assert_non_null(a.span);
		assert_int_equal(a.span[0], '[');
		assert_int_equal(a.span[a.span_len - 1], ']');
		gf_ext_args_release(&a);
	}
	/* a quote right after 8 plain bytes, an escape and a control byte after them: the full parser's answers */
	const char *esc = "{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"NodeNames\":[\"abcdefgh\",\"abcdefgh\\\"ij\"]}";
	struct gf_ext_args a;
	static struct gf_k8s_pod p;
	char msg[400] = "";
	assert_int_equal(gf_ext_args_parse(esc, strlen(esc), NULL, &a, &p, msg, sizeof(msg)), GF_OK);
	assert_false(a.plain);
	assert_int_equal(a.n, 2);
	assert_int_equal(a.lens[1], 11);
	assert_memory_equal(a.names[1], "abcdefgh\"ij", 11);
	gf_ext_args_release(&a);
	/* a raw control byte is not JSON (RFC 8259): a 400 on either path, never echoed */
	const char *ctl = "{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"NodeNames\":[\"abcdefgh\x01ij\"]}";
	assert_int_equal(gf_ext_args_parse(ctl, strlen(ctl), NULL, &a, &p, msg, sizeof(msg)), GF_PARSE);
	assert_non_null(strstr(msg, "not valid JSON (at byte 55 of"));
	gf_ext_args_release(&a);
}

/* Node objects (nodeCacheCapable: false) on the fast path: names and each object's text as sent. */
static void test_extender_node_objects(void **st)
{
	(void)st;
	const char *n1 = "{\"kind\":\"Node\",\"metadata\":{\"labels\":{\"a\":\"}{\"},\"name\":\"node-one\",\"uid\":\"x\"},"
			 "\"status\":{\"conditions\":[{\"type\":\"Ready\",\"message\":\"ok \\\"q\\\" ]\"}]}}";
	const char *n2 = "{\"metadata\":{\"name\":\"n2\"}}";
	char body[1024];
	snprintf(body, sizeof(body), "{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"Nodes\":{\"metadata\":{},\"items\":[%s, %s]},"
		 "\"NodeNames\":null}", n1, n2);
	struct gf_ext_args a;
	static struct gf_k8s_pod p;
	char msg[400] = "";
	assert_int_equal(gf_ext_args_parse(body, strlen(body), NULL, &a, &p, msg, sizeof(msg)), GF_OK);
	assert_true(a.node_objects);
	assert_non_null(a.item_text); /* the fast path */
	assert_int_equal(a.n, 2);
	assert_int_equal(a.lens[0], 8);
	assert_memory_equal(a.names[0], "node-one", 8);
	assert_memory_equal(a.names[1], "n2", 2);
	assert_int_equal(a.item_len[0], strlen(n1));
	assert_memory_equal(a.item_text[0], n1, strlen(n1));
	assert_int_equal(a.item_len[1], strlen(n2));
	assert_memory_equal(a.item_text[1], n2, strlen(n2));
	gf_ext_args_release(&a);
	/* an item without metadata.name, or a name with an escape: the full parser, with its words */
	const char *noname = "{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"Nodes\":{\"items\":[{\"metadata\":{\"name\":\"a\"}},"
			     "{\"metadata\":{}}]}}";
	assert_int_equal(gf_ext_args_parse(noname, strlen(noname), NULL, &a, &p, msg, sizeof(msg)), GF_PARSE);
	assert_non_null(strstr(msg, "Nodes.items[1]"));
	gf_ext_args_release(&a);
	const char *esc = "{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"Nodes\":{\"items\":[{\"metadata\":{\"name\":\"a\\\"b\"}}]}}";
	assert_int_equal(gf_ext_args_parse(esc, strlen(esc), NULL, &a, &p, msg, sizeof(msg)), GF_OK);
	assert_true(a.node_objects);
	assert_null(a.item_text);
	assert_int_equal(a.n, 1);
	assert_memory_equal(a.names[0], "a\"b", 3);
	gf_ext_args_release(&a);
	/* both lists: the full parser decides (NodeNames) */
	const char *both = "{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"Nodes\":{\"items\":[{\"metadata\":{\"name\":\"a\"}}]},"
			   "\"NodeNames\":[\"b\"]}";
	assert_int_equal(gf_ext_args_parse(both, strlen(both), NULL, &a, &p, msg, sizeof(msg)), GF_OK);
	assert_false(a.node_objects);
	assert_int_equal(a.n, 1);
	assert_memory_equal(a.names[0], "b", 1);
	gf_ext_args_release(&a);
}

/* The hint (filter's answer, sent back by prioritize): taken on an exact match only. */
static void test_extender_hint(void **st)
{
	(void)st;
	const char *span = "[\"n-1\",\"n-22\"]";
	const char *names[] = { span + 2, span + 8 };
	const size_t lens[] = { 3, 4 };
	struct gf_ext_hint h = { span, strlen(span), names, lens, 2 };
	const char *hit = "{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"Nodes\":null,\"NodeNames\":[\"n-1\",\"n-22\"]}";
	const char *miss = "{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"Nodes\":null,\"NodeNames\":[\"n-1\",\"n-23\"]}";
	const char *longer = "{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"NodeNames\":[\"n-1\",\"n-22\",\"x\"]}";
	struct gf_ext_args a;
	static struct gf_k8s_pod p;
	char msg[400] = "";
	assert_int_equal(gf_ext_args_parse(hit, strlen(hit), &h, &a, &p, msg, sizeof(msg)), GF_OK);
	assert_true(a.hit);
	assert_ptr_equal(a.names, names);
	assert_int_equal(a.n, 2);
	gf_ext_args_release(&a);
	assert_int_equal(gf_ext_args_parse(miss, strlen(miss), &h, &a, &p, msg, sizeof(msg)), GF_OK);
	assert_false(a.hit);
	assert_int_equal(a.n, 2);
	assert_memory_equal(a.names[1], "n-23", 4);
	gf_ext_args_release(&a);
	assert_int_equal(gf_ext_args_parse(longer, strlen(longer), &h, &a, &p, msg, sizeof(msg)), GF_OK);
	assert_false(a.hit);
	assert_int_equal(a.n, 3);
	gf_ext_args_release(&a);
}

/* The bulk writers, fast (plain names) and escaped (the full parser's names). */
static void test_extender_writers(void **st)
{
	(void)st;
	const char *plain = "{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"NodeNames\":[\"a\",\"bb\",\"ccc\"]}";
	const char *escd = "{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"NodeNames\":[\"a\",\"b\\\"b\",\"ccc\"]}";
	const char *skip[] = { NULL, "no", NULL };
	const int64_t sc[] = { 10, 0, -3 };
	struct { const char *body, *names, *all, *prio; } cases[] = {
		{ plain, "\"a\",\"ccc\"", "\"a\",\"bb\",\"ccc\"",
		  "[{\"Host\":\"a\",\"Score\":10},{\"Host\":\"ccc\",\"Score\":-3}]" },
		{ escd, "\"a\",\"ccc\"", "\"a\",\"b\\\"b\",\"ccc\"",
		  "[{\"Host\":\"a\",\"Score\":10},{\"Host\":\"ccc\",\"Score\":-3}]" },
	};
	for (size_t i = 0; i < 2; i++) {
		struct gf_ext_args a;
		static struct gf_k8s_pod p;
		char msg[400] = "";
		assert_int_equal(gf_ext_args_parse(cases[i].body, strlen(cases[i].body), NULL, &a, &p, msg, sizeof(msg)),
				 GF_OK);
		struct gf_obuf o;
		gf_obuf_init(&o, 4096);
		gf_ext_put_names(&o, &a, skip);
		assert_string_equal(o.data, cases[i].names);
		gf_obuf_reset(&o);
		gf_ext_put_names(&o, &a, NULL);
		assert_string_equal(o.data, cases[i].all);
		gf_obuf_reset(&o);
		gf_ext_put_priorities(&o, &a, sc);
		assert_string_equal(o.data, cases[i].prio);
		gf_obuf_reset(&o); /* zeros left out, the first one too */
		const int64_t sc2[] = { 0, 7, 0 }, sc0[] = { 0, 0, 0 };
		gf_ext_put_priorities(&o, &a, sc2);
		assert_string_equal(o.data, i ? "[{\"Host\":\"b\\\"b\",\"Score\":7}]" : "[{\"Host\":\"bb\",\"Score\":7}]");
		gf_obuf_reset(&o);
		gf_ext_put_priorities(&o, &a, sc0);
		assert_string_equal(o.data, "[]");
		gf_obuf_release(&o);
		/* past the buffer's cap: the error is kept, nothing is overrun */
		gf_obuf_init(&o, 8);
		gf_ext_put_priorities(&o, &a, sc);
		assert_int_equal(gf_obuf_error(&o), GF_TOOBIG);
		gf_obuf_release(&o);
		gf_ext_args_release(&a);
	}
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
		cmocka_unit_test(test_extender_names_scan),
		cmocka_unit_test(test_extender_node_objects),
		cmocka_unit_test(test_extender_hint),
		cmocka_unit_test(test_extender_writers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
