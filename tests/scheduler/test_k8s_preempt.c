/* tests/scheduler/test_k8s_preempt.c - the building blocks of preemption live (issue 12
 * step 2, not wired into the scheduler yet): spec.preemptionPolicy in the pod decoder, and
 * the bodies of a preemption's API writes (k8s/preempt.h) as kube-scheduler writes them:
 * the DisruptionTarget condition with reason PreemptionByScheduler, the graceful delete with
 * a uid precondition, status.nominatedNodeName. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "k8s/codec.h"
#include "k8s/preempt.h"

static gf_err decode(const char *policy, struct gf_k8s_pod *p, char *err, size_t n)
{
	char json[1024];
	snprintf(json, sizeof(json),
		 "{\"metadata\":{\"name\":\"p\",\"namespace\":\"t\",\"uid\":\"u\"},\"spec\":{\"priority\":1000%s%s%s,"
		 "\"containers\":[{\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"1\"}}}]}}",
		 policy ? ",\"preemptionPolicy\":\"" : "", policy ? policy : "", policy ? "\"" : "");
	return gf_k8s_pod_decode_text(json, strlen(json), p, err, n);
}

static void test_preemption_policy(void **st)
{
	(void)st;
	struct gf_k8s_pod p;
	char err[256] = "";
	assert_int_equal(decode(NULL, &p, err, sizeof(err)), GF_OK);
	assert_false(p.preempt_never);
	assert_int_equal(decode("PreemptLowerPriority", &p, err, sizeof(err)), GF_OK);
	assert_false(p.preempt_never);
	assert_int_equal(decode("Never", &p, err, sizeof(err)), GF_OK);
	assert_true(p.preempt_never);
	assert_int_equal(p.req.priority, 1000);
	assert_int_equal(decode("Sometimes", &p, err, sizeof(err)), GF_PARSE);
	assert_non_null(strstr(err, "spec.preemptionPolicy: expected Never or PreemptLowerPriority"));
}

static const cJSON *at(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	assert_non_null(v);
	return v;
}

static void test_bodies(void **st)
{
	(void)st;
	char *s = gf_kube_disruption_patch("gpu\"fleet", "2026-12-01T19:00:00Z");
	assert_non_null(s);
	cJSON *o = cJSON_Parse(s);
	assert_non_null(o);
	const cJSON *conds = at(at(o, "status"), "conditions");
	assert_int_equal(cJSON_GetArraySize(conds), 1);
	const cJSON *c = cJSON_GetArrayItem(conds, 0);
	assert_string_equal(at(c, "type")->valuestring, "DisruptionTarget");
	assert_string_equal(at(c, "status")->valuestring, "True");
	assert_string_equal(at(c, "reason")->valuestring, "PreemptionByScheduler");
	assert_string_equal(at(c, "message")->valuestring, "gpu\"fleet: preempting to accommodate a higher priority pod");
	assert_string_equal(at(c, "lastTransitionTime")->valuestring, "2026-12-01T19:00:00Z");
	cJSON_Delete(o);
	free(s);

	s = gf_kube_delete_body("9b1d-uid");
	o = cJSON_Parse(s);
	assert_string_equal(at(o, "kind")->valuestring, "DeleteOptions");
	assert_string_equal(at(at(o, "preconditions"), "uid")->valuestring, "9b1d-uid");
	assert_null(cJSON_GetObjectItemCaseSensitive(o, "gracePeriodSeconds")); /* the pod's own grace */
	cJSON_Delete(o);
	free(s);
	s = gf_kube_delete_body("");
	o = cJSON_Parse(s);
	assert_null(cJSON_GetObjectItemCaseSensitive(o, "preconditions"));
	cJSON_Delete(o);
	free(s);

	s = gf_kube_nominate_patch("gpu-node-3");
	o = cJSON_Parse(s);
	assert_string_equal(at(at(o, "status"), "nominatedNodeName")->valuestring, "gpu-node-3");
	cJSON_Delete(o);
	free(s);
	s = gf_kube_nominate_patch("");
	o = cJSON_Parse(s);
	assert_true(cJSON_IsNull(at(at(o, "status"), "nominatedNodeName")));
	cJSON_Delete(o);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_preemption_policy),
		cmocka_unit_test(test_bodies),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
