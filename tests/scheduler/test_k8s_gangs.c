/* tests/scheduler/test_k8s_gangs.c - coscheduling PodGroups read by the k8s adapter: the
 * PodGroup codec (fields, defaults, errors naming the JSON path), the pod's
 * scheduling.x-k8s.io/pod-group label, and the store that tells a pod's gang (k8s/gangs.h):
 * known and unknown groups, other namespaces, replace, delete, growth past many groups. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "k8s/codec.h"
#include "k8s/gangs.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_podgroup_codec),
		cmocka_unit_test(test_pod_label),
		cmocka_unit_test(test_store),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
