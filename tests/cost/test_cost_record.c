/*
 * tests/cost/test_cost_record.c - the allocation record on the scheduler's
 * /metrics (k8s/costrec.h): a series per pod and GPU share while the pod
 * holds it, gone when it is released; capacity per GPU with its spot kind.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "k8s/costrec.h"

static struct gf_k8s_node mknode(const char *name, int gpus, const char *labels)
{
	char json[2048];
	snprintf(json, sizeof(json),
		 "{\"metadata\":{\"name\":\"%s\",\"labels\":{\"nvidia.com/gpu.product\":\"H100\","
		 "\"nvidia.com/gpu.memory\":\"81559\"%s}},\"status\":{\"allocatable\":{\"cpu\":\"64\","
		 "\"memory\":\"512Gi\",\"nvidia.com/gpu\":\"%d\"},\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}",
		 name, labels, gpus);
	struct gf_k8s_node n;
	char err[256];
	if (gf_k8s_node_decode_text(json, strlen(json), &n, err, sizeof(err)))
		fail_msg("node: %s", err);
	return n;
}

static struct gf_k8s_pod mkpod(const char *name, const char *milli)
{
	char json[2048];
	snprintf(json, sizeof(json),
		 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"team-a\",\"uid\":\"%s\",\"resourceVersion\":\"1\","
		 "\"annotations\":{\"gpufleet.io/gpu-milli\":\"%s\"}},\"spec\":{\"schedulerName\":\"gpufleet\","
		 "\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}}}]}}",
		 name, name, milli);
	struct gf_k8s_pod p;
	char err[256];
	if (gf_k8s_pod_decode_text(json, strlen(json), &p, err, sizeof(err)))
		fail_msg("pod: %s", err);
	return p;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

static void test_record(void **state)
{
	(void)state;
	gf_live *l;
	assert_int_equal(gf_live_create(NULL, &l), GF_OK);
	struct gf_k8s_node spot = mknode("spot-n", 1, ",\"karpenter.sh/capacity-type\":\"spot\"");
	struct gf_k8s_node od = mknode("od-n", 2, "");
	assert_true(gf_costrec_node_spot(&spot));
	assert_false(gf_costrec_node_spot(&od));
	gf_live_node_set(l, &spot);
	gf_live_node_set(l, &od);
	struct gf_k8s_pod p = mkpod("quarter", "250"), q;
	gf_live_pod_set(l, &p);
	struct gf_live_decision d;
	assert_true(gf_live_schedule_next(l, &q, &d));
	assert_int_equal(d.result, GF_LIVE_PLACED);

	struct gf_obuf o;
	gf_obuf_init(&o, 1 << 20);
	assert_int_equal(gf_costrec_render(l, &o), GF_OK);
	assert_int_equal(count(o.data, "gpufleet_gpu_capacity{"), 3);
	assert_non_null(strstr(o.data, "gpufleet_gpu_capacity{node=\"spot-n\",gpu=\"0\",uuid=\"\",model=\"H100\","
				       "capacity_type=\"spot\"} 1\n"));
	assert_non_null(strstr(o.data, "gpufleet_gpu_capacity{node=\"od-n\",gpu=\"1\",uuid=\"\",model=\"H100\","
				       "capacity_type=\"on-demand\"} 1\n"));
	char want[512];
	snprintf(want, sizeof(want), "gpufleet_pod_gpu_allocation{namespace=\"team-a\",pod=\"quarter\",node=\"%s\","
		 "gpu=\"%d\",uuid=\"\",model=\"H100\",share=\"0.250\"} 0.250\n", d.node, d.gpus[0]);
	if (!strstr(o.data, want))
		fail_msg("missing %s in\n%s", want, o.data);
	assert_int_equal(count(o.data, "gpufleet_pod_gpu_allocation{"), 1);

	/* released: the series is gone */
	gf_live_pod_delete(l, "quarter");
	gf_obuf_reset(&o);
	assert_int_equal(gf_costrec_render(l, &o), GF_OK);
	assert_int_equal(count(o.data, "gpufleet_pod_gpu_allocation{"), 0);
	assert_int_equal(count(o.data, "gpufleet_gpu_capacity{"), 3);
	gf_obuf_release(&o);
	gf_live_destroy(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_record),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
