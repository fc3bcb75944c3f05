/* tests/scheduler/test_k8s_gangs.c - gangs read by the k8s adapter: the coscheduling
 * PodGroup codec (fields, defaults, errors naming the JSON path), the pod's
 * scheduling.x-k8s.io/pod-group label, and the store that tells a pod's gang (k8s/gangs.h):
 * known and unknown groups, other namespaces, replace, delete, growth past many groups.
 * The Workload API (scheduling.k8s.io/v1alpha2, KEP-4671): PodGroups and a pod recorded
 * from the real 1.36.3 API server (tests/scheduler/data/workload/), the decoder's errors,
 * both APIs in one store, and the /metrics gang view. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <stdlib.h>

#include "core/obuf.h"
#include "k8s/codec.h"
#include "k8s/gangs.h"
#include "../testutil.h"

#define WL_DATA GF_SOURCE_DIR "/tests/scheduler/data/workload/"

static struct gf_k8s_podgroup pg(const char *ns, const char *name, int min)
{
	char json[512], err[256];
	snprintf(json, sizeof(json),
		 "{\"apiVersion\":\"scheduling.x-k8s.io/v1alpha1\",\"kind\":\"PodGroup\","
		 "\"metadata\":{\"namespace\":\"%s\",\"name\":\"%s\",\"uid\":\"u-%s\",\"resourceVersion\":\"3\"},"
		 "\"spec\":{\"minMember\":%d,\"scheduleTimeoutSeconds\":60,\"minResources\":{\"nvidia.com/gpu\":\"32\"}},"
		 "\"status\":{\"phase\":\"Pending\"}}", ns, name, name, min);
	struct gf_k8s_podgroup g;
	if (gf_k8s_podgroup_decode_text(json, strlen(json), &g, err, sizeof(err)))
		fail_msg("podgroup: %s", err);
	return g;
}

static struct gf_k8s_pod pod(const char *ns, const char *name, const char *labels)
{
	char json[1024], err[256];
	snprintf(json, sizeof(json),
		 "{\"metadata\":{\"namespace\":\"%s\",\"name\":\"%s\",\"uid\":\"%s\",\"labels\":{%s}},"
		 "\"spec\":{\"containers\":[{\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"8\"}}}]}}",
		 ns, name, name, labels);
	struct gf_k8s_pod p;
	if (gf_k8s_pod_decode_text(json, strlen(json), &p, err, sizeof(err)))
		fail_msg("pod: %s", err);
	return p;
}

static void test_podgroup_codec(void **st)
{
	(void)st;
	struct gf_k8s_podgroup g = pg("ml", "train", 4);
	assert_string_equal(g.ns, "ml");
	assert_string_equal(g.name, "train");
	assert_string_equal(g.uid, "u-train");
	assert_string_equal(g.rv, "3");
	assert_int_equal(g.min_member, 4);
	assert_int_equal(g.timeout_s, 60);
	assert_string_equal(g.phase, "Pending");
	char err[256];
	const char *min = "{\"metadata\":{\"name\":\"x\"}}";
	assert_int_equal(gf_k8s_podgroup_decode_text(min, strlen(min), &g, err, sizeof(err)), GF_OK);
	assert_string_equal(g.ns, "default");
	assert_int_equal(g.min_member, 0); /* absent */
	static const struct {
		const char *doc, *want;
	} bad[] = {
		{ "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"minMember\":0}}", "spec.minMember: expected a whole number 1.." },
		{ "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"minMember\":-3}}", "spec.minMember" },
		{ "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"minMember\":2.5}}", "spec.minMember" },
		{ "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"minMember\":3e10}}", "spec.minMember" },
		{ "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"minMember\":\"4\"}}", "spec.minMember" },
		{ "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"scheduleTimeoutSeconds\":0}}", "spec.scheduleTimeoutSeconds" },
		{ "{\"metadata\":{\"name\":\"x\"},\"status\":{\"phase\":7}}", "status.phase" },
		{ "{\"metadata\":{}}", "needs metadata.name" },
		{ "{\"spec\":{}}", "needs metadata" },
		{ "[]", "expected a PodGroup object" },
		{ "{", "not JSON" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(gf_k8s_podgroup_decode_text(bad[i].doc, strlen(bad[i].doc), &g, err, sizeof(err)),
				 GF_PARSE);
		if (!strstr(err, bad[i].want))
			fail_msg("%s: error '%s' does not say '%s'", bad[i].doc, err, bad[i].want);
	}
}

static void test_pod_label(void **st)
{
	(void)st;
	struct gf_k8s_pod p = pod("ml", "w0", "\"scheduling.x-k8s.io/pod-group\":\"train\",\"app\":\"x\"");
	assert_string_equal(p.pod_group, "train");
	p = pod("ml", "w1", "\"app\":\"x\"");
	assert_string_equal(p.pod_group, "");
	char json[512], err[256];
	snprintf(json, sizeof(json), "{\"metadata\":{\"name\":\"w\",\"labels\":{\"scheduling.x-k8s.io/pod-group\":5}}}");
	assert_int_equal(gf_k8s_pod_decode_text(json, strlen(json), &p, err, sizeof(err)), GF_PARSE);
	assert_non_null(strstr(err, "metadata.labels[\"scheduling.x-k8s.io/pod-group\"]"));
	snprintf(json, sizeof(json), "{\"metadata\":{\"name\":\"w\",\"labels\":{\"scheduling.x-k8s.io/pod-group\":"
		 "\"%064d\"}}}", 0);
	assert_int_equal(gf_k8s_pod_decode_text(json, strlen(json), &p, err, sizeof(err)), GF_PARSE);
	assert_non_null(strstr(err, "longer than 63 bytes"));
}

static void test_store(void **st)
{
	(void)st;
	gf_gangs *g;
	assert_int_equal(gf_gangs_create(&g), GF_OK);
	struct gf_k8s_podgroup a = pg("ml", "train", 4);
	assert_int_equal(gf_gangs_set(g, &a), GF_OK);
	struct gf_gang_ref r;
	struct gf_k8s_pod p = pod("ml", "w0", "\"scheduling.x-k8s.io/pod-group\":\"train\"");
	assert_true(gf_gangs_of_pod(g, &p, &r));
	assert_true(r.known);
	assert_int_equal(r.min_member, 4);
	assert_int_equal(r.timeout_s, 60);
	assert_string_equal(r.ns, "ml");
	assert_string_equal(r.name, "train");
	/* the same name in another namespace is another group */
	struct gf_k8s_pod q = pod("other", "w0", "\"scheduling.x-k8s.io/pod-group\":\"train\"");
	assert_true(gf_gangs_of_pod(g, &q, &r));
	assert_false(r.known);
	assert_string_equal(r.name, "train");
	/* no label: no gang */
	struct gf_k8s_pod solo = pod("ml", "s", "");
	assert_false(gf_gangs_of_pod(g, &solo, &r));
	/* replace */
	a.min_member = 8;
	assert_int_equal(gf_gangs_set(g, &a), GF_OK);
	assert_int_equal(gf_gangs_count(g), 1);
	assert_true(gf_gangs_of_pod(g, &p, &r));
	assert_int_equal(r.min_member, 8);
	/* many groups (growth, rehash), then delete every other one */
	char name[32];
	for (int i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "g%d", i);
		struct gf_k8s_podgroup x = pg("ml", name, i % 7 + 1);
		assert_int_equal(gf_gangs_set(g, &x), GF_OK);
	}
	assert_int_equal(gf_gangs_count(g), 1001);
	for (int i = 0; i < 1000; i += 2) {
		snprintf(name, sizeof(name), "g%d", i);
		gf_gangs_delete(g, "ml", name);
	}
	gf_gangs_delete(g, "ml", "never-there");
	assert_int_equal(gf_gangs_count(g), 501);
	for (int i = 0; i < 1000; i++) {
		char lab[96];
		snprintf(lab, sizeof(lab), "\"scheduling.x-k8s.io/pod-group\":\"g%d\"", i);
		struct gf_k8s_pod m = pod("ml", "m", lab);
		assert_true(gf_gangs_of_pod(g, &m, &r));
		if (r.known != (i % 2 == 1))
			fail_msg("g%d: known %d", i, r.known);
		if (r.known)
			assert_int_equal(r.min_member, i % 7 + 1);
	}
	assert_true(gf_gangs_of_pod(g, &p, &r) && r.known && r.min_member == 8);
	gf_gangs_destroy(g);
}

/* The recorded PodGroupList's items, decoded, by name. */
static void recorded_groups(struct gf_k8s_podgroup *basic, struct gf_k8s_podgroup *gang)
{
	size_t len;
	char *text = tu_slurp(WL_DATA "podgroups.json", &len);
	assert_non_null(text);
	cJSON *doc = cJSON_ParseWithLength(text, len);
	assert_non_null(doc);
	const cJSON *it;
	int n = 0;
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(doc, "items"))
	{
		struct gf_k8s_podgroup g;
		char err[256] = "";
		if (gf_k8s_wl_podgroup_decode(it, &g, err, sizeof(err)))
			fail_msg("recorded PodGroup %d: %s", n, err);
		if (!strcmp(g.name, "basic"))
			*basic = g;
		else if (!strcmp(g.name, "train-workers"))
			*gang = g;
		else
			fail_msg("unexpected PodGroup %s", g.name);
		n++;
	}
	assert_int_equal(n, 2);
	cJSON_Delete(doc);
	free(text);
}

static void test_wl_codec(void **st)
{
	(void)st;
	struct gf_k8s_podgroup b, g;
	recorded_groups(&b, &g);
	assert_int_equal(g.api, GF_GANG_WORKLOAD);
	assert_string_equal(g.ns, "default");
	assert_string_equal(g.uid, "434ff509-cd43-4700-abf3-aa439992d599");
	assert_string_equal(g.rv, "258");
	assert_int_equal(g.min_member, 4);
	assert_false(g.basic);
	assert_string_equal(g.workload, "train");
	assert_string_equal(g.template_name, "workers");
	assert_string_equal(g.phase, "");
	assert_int_equal(b.api, GF_GANG_WORKLOAD);
	assert_true(b.basic);
	assert_int_equal(b.min_member, 1); /* no gang: each pod on its own */
	assert_string_equal(b.workload, ""); /* "podGroupTemplateRef": null */
	/* the PodGroupScheduled condition */
	char err[256];
	const char *sch = "{\"metadata\":{\"name\":\"x\",\"namespace\":\"ml\"},\"spec\":{\"schedulingPolicy\":"
			  "{\"gang\":{\"minCount\":2}}},\"status\":{\"conditions\":[{\"type\":\"Other\",\"status\":"
			  "\"True\"},{\"type\":\"PodGroupScheduled\",\"status\":\"False\",\"reason\":\"Unschedulable\"}]}}";
	assert_int_equal(gf_k8s_wl_podgroup_decode_text(sch, strlen(sch), &g, err, sizeof(err)), GF_OK);
	assert_string_equal(g.phase, "Unschedulable");
	assert_string_equal(g.ns, "ml");
	const char *ok = "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"schedulingPolicy\":{\"gang\":{\"minCount\":2}}},"
			 "\"status\":{\"conditions\":[{\"type\":\"PodGroupScheduled\",\"status\":\"True\"}]}}";
	assert_int_equal(gf_k8s_wl_podgroup_decode_text(ok, strlen(ok), &g, err, sizeof(err)), GF_OK);
	assert_string_equal(g.phase, "Scheduled");
	assert_string_equal(g.ns, "default");
	static const struct {
		const char *doc, *want;
	} bad[] = {
		{ "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"schedulingPolicy\":{\"gang\":{\"minCount\":0}}}}",
		  "spec.schedulingPolicy.gang.minCount: expected a whole number 1.." },
		{ "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"schedulingPolicy\":{\"gang\":{}}}}",
		  "spec.schedulingPolicy.gang: needs minCount" },
		{ "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"schedulingPolicy\":{\"gang\":{\"minCount\":\"4\"}}}}",
		  "spec.schedulingPolicy.gang.minCount" },
		{ "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"schedulingPolicy\":{}}}",
		  "spec.schedulingPolicy: expected exactly one of gang and basic" },
		{ "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"schedulingPolicy\":{\"basic\":{},\"gang\":{\"minCount\":1}}}}",
		  "spec.schedulingPolicy: expected exactly one of gang and basic" },
		{ "{\"metadata\":{\"name\":\"x\"},\"spec\":{}}", "spec: needs schedulingPolicy" },
		{ "{\"metadata\":{\"name\":\"x\"}}", "needs spec.schedulingPolicy" },
		{ "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"schedulingPolicy\":{\"basic\":{}},"
		  "\"podGroupTemplateRef\":{\"workload\":{\"workloadName\":7}}}}",
		  "spec.podGroupTemplateRef.workload.workloadName: expected a string" },
		{ "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"schedulingPolicy\":{\"basic\":{}}},"
		  "\"status\":{\"conditions\":[{\"type\":\"PodGroupScheduled\",\"status\":true}]}}",
		  "status.conditions[0].status: expected a string" },
		{ "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"schedulingPolicy\":{\"basic\":{}}},"
		  "\"status\":{\"conditions\":[3]}}", "status.conditions[0]: expected an object" },
		{ "{\"metadata\":{},\"spec\":{\"schedulingPolicy\":{\"basic\":{}}}}", "needs metadata.name" },
		{ "[]", "expected a PodGroup object" },
		{ "{", "not JSON" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(gf_k8s_wl_podgroup_decode_text(bad[i].doc, strlen(bad[i].doc), &g, err, sizeof(err)),
				 GF_PARSE);
		if (!strstr(err, bad[i].want))
			fail_msg("%s: error '%s' does not say '%s'", bad[i].doc, err, bad[i].want);
	}
}

static void test_wl_pod_and_store(void **st)
{
	(void)st;
	size_t len;
	char *text = tu_slurp(WL_DATA "pod.json", &len);
	assert_non_null(text);
	struct gf_k8s_pod p;
	char err[256];
	if (gf_k8s_pod_decode_text(text, len, &p, err, sizeof(err)))
		fail_msg("recorded pod: %s", err);
	free(text);
	assert_string_equal(p.name, "w0");
	assert_string_equal(p.sched_group, "train-workers");
	assert_string_equal(p.pod_group, "");
	assert_int_equal(p.req.gpu_count, 8);
	struct gf_k8s_pod bad;
	const char *badpod = "{\"metadata\":{\"name\":\"w\"},\"spec\":{\"schedulingGroup\":{\"podGroupName\":1}}}";
	assert_int_equal(gf_k8s_pod_decode_text(badpod, strlen(badpod), &bad, err, sizeof(err)), GF_PARSE);
	assert_non_null(strstr(err, "spec.schedulingGroup.podGroupName: expected a string"));

	gf_gangs *g;
	assert_int_equal(gf_gangs_create(&g), GF_OK);
	struct gf_gang_ref r;
	assert_true(gf_gangs_of_pod(g, &p, &r)); /* the reference, before the group exists */
	assert_false(r.known);
	assert_int_equal(r.api, GF_GANG_WORKLOAD);
	assert_string_equal(r.name, "train-workers");
	struct gf_k8s_podgroup b, w;
	recorded_groups(&b, &w);
	assert_int_equal(gf_gangs_set(g, &b), GF_OK);
	assert_int_equal(gf_gangs_set(g, &w), GF_OK);
	/* a coscheduling PodGroup of the same namespace and name is another group */
	struct gf_k8s_podgroup co = pg("default", "train-workers", 2);
	assert_int_equal(gf_gangs_set(g, &co), GF_OK);
	assert_int_equal(gf_gangs_count(g), 3);
	assert_int_equal(gf_gangs_count_api(g, GF_GANG_WORKLOAD), 2);
	assert_int_equal(gf_gangs_count_api(g, GF_GANG_COSCHEDULING), 1);
	assert_true(gf_gangs_of_pod(g, &p, &r));
	assert_true(r.known);
	assert_int_equal(r.api, GF_GANG_WORKLOAD);
	assert_int_equal(r.min_member, 4);
	/* a pod with both references is in the Workload API's group */
	struct gf_k8s_pod both = p;
	snprintf(both.pod_group, sizeof(both.pod_group), "train-workers");
	assert_true(gf_gangs_of_pod(g, &both, &r) && r.api == GF_GANG_WORKLOAD && r.min_member == 4);
	/* the label alone: the coscheduling group */
	struct gf_k8s_pod lab = pod("default", "l", "\"scheduling.x-k8s.io/pod-group\":\"train-workers\"");
	assert_true(gf_gangs_of_pod(g, &lab, &r) && r.known && r.api == GF_GANG_COSCHEDULING && r.min_member == 2);
	/* the /metrics view, in first-seen order */
	struct gf_obuf o;
	gf_obuf_init(&o, 1 << 16);
	gf_gangs_render(g, &o, 2);
	assert_int_equal(gf_obuf_error(&o), GF_OK);
	assert_non_null(strstr(o.data, "gpufleet_gangs{api=\"coscheduling\"} 1\n"));
	assert_non_null(strstr(o.data, "gpufleet_gangs{api=\"workload\"} 2\n"));
	assert_non_null(strstr(o.data, "gpufleet_gang_min_member{api=\"workload\",namespace=\"default\",name=\"basic\","
				       "workload=\"\"} 1\n"));
	assert_non_null(strstr(o.data, "gpufleet_gang_min_member{api=\"workload\",namespace=\"default\",name=\"train-workers\","
				       "workload=\"train\"} 4\n"));
	assert_null(strstr(o.data, "api=\"coscheduling\",namespace")); /* the third: past max_series */
	/* unset forgets one API's group only; delete is the coscheduling one */
	gf_gangs_unset(g, &w);
	assert_false(gf_gangs_of_pod(g, &p, &r) && r.known);
	assert_true(gf_gangs_of_pod(g, &lab, &r) && r.known);
	gf_obuf_reset(&o);
	gf_gangs_render(g, &o, 10);
	assert_non_null(strstr(o.data, "name=\"basic\",workload=\"\"} 1\ngpufleet_gang_min_member{api=\"coscheduling\","
				       "namespace=\"default\",name=\"train-workers\",workload=\"\"} 2\n"));
	gf_gangs_delete(g, "default", "basic"); /* no coscheduling "basic": nothing */
	assert_int_equal(gf_gangs_count(g), 2);
	gf_gangs_delete(g, "default", "train-workers");
	assert_int_equal(gf_gangs_count(g), 1);
	assert_non_null(gf_gangs_get(g, GF_GANG_WORKLOAD, "default", "basic"));
	gf_obuf_release(&o);
	gf_gangs_destroy(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_podgroup_codec),
		cmocka_unit_test(test_pod_label),
		cmocka_unit_test(test_store),
		cmocka_unit_test(test_wl_codec),
		cmocka_unit_test(test_wl_pod_and_store),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
