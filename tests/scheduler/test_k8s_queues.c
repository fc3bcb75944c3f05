/* tests/scheduler/test_k8s_queues.c - Queue objects (gpufleet.io/v1alpha1) read from the
 * API server (k8s/queues.h): the decoder's fields, defaults and errors naming the JSON
 * path; which Queue a pod is charged to (label, namespace label, Kueue's pods); and the
 * live scheduler's quotas (k8s/live.h, opts.queues): admission within nominal quota plus
 * borrowing limit in a cohort, bound pods counting, no thrash, a missing Queue making
 * its pods wait until it exists, Kueue's pods not counted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "k8s/live.h"
#include "k8s/queues.h"
#include "queue/loop.h"

#define QDATA GF_SOURCE_DIR "/tests/scheduler/data/queues/"

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	static char buf[65536];
	*len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[*len] = 0;
	return buf;
}

static void test_decode_file(void **st)
{
	(void)st;
	size_t len;
	char *t = slurp(QDATA "team-b.json", &len), err[256];
	struct gf_queue_def q;
	assert_int_equal(gf_k8s_queue_decode_text(t, len, &q, err, sizeof(err)), GF_OK);
	assert_string_equal(q.name, "team-b");
	assert_string_equal(q.cohort, "research");
	assert_int_equal(q.nominal, 4500);
	assert_int_equal(q.borrowing_limit, 4000);
	assert_true(q.lending_limit == GF_QUOTA_UNLIMITED);
	assert_int_equal(q.weight, 2);
	assert_int_equal(q.ordering, GF_ORDER_SKIP_AHEAD);
	assert_int_equal(q.nmodels, 1);
	assert_string_equal(q.models[0].model, "H100");
	assert_int_equal(q.models[0].nominal, 2000);
}

static void test_decode_errors(void **st)
{
	(void)st;
	static const struct {
		const char *doc, *want;
	} bad[] = {
		{ "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"nominalQuota\":{\"gpus\":-1}}}",
		  "queue a: spec.nominalQuota.gpus: -1 is outside 0..1000000" },
		{ "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"nominalQuota\":{\"gpus\":1.5}}}",
		  "queue a: spec.nominalQuota.gpus: expected an integer, got 1.5" },
		{ "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"nominalQuota\":{\"gpus\":\"4\"}}}",
		  "queue a: spec.nominalQuota.gpus: expected an integer, got a string" },
		{ "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"nominalQuota\":{\"cpus\":4}}}",
		  "queue a: spec.nominalQuota.cpus: unknown field" },
		{ "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"weight\":0}}", "queue a: spec.weight: 0 is outside 1..1000000" },
		{ "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"ordering\":\"lifo\"}}",
		  "queue a: spec.ordering: expected strict, skip-ahead or backfill" },
		{ "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"borrowingLimit\":{\"gpus\":2}}}",
		  "queue a: spec.borrowingLimit: needs spec.cohort" },
		{ "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"cohort\":\"c\",\"nominalQuota\":{\"gpus\":1},"
		  "\"lendingLimit\":{\"gpus\":2}}}", "queue a: spec.lendingLimit: above the nominal quota" },
		{ "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"nominalQuota\":{\"perModel\":[{\"model\":\"H100\"}]}}}",
		  "queue a: spec.nominalQuota.perModel: unknown field (per-model quotas are spec.models: [{model, "
		  "nominalQuota: {gpus, gpuMilli}}], the CRD's shape)" },
		{ "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"models\":[{\"model\":\"X\"},{\"model\":\"X\"}]}}",
		  "queue a: spec.models[1].model: the model is listed twice" },
		{ "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"models\":[{\"nominalQuota\":{\"gpus\":1}}]}}",
		  "queue a: spec.models[0].model: missing" },
		{ "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"models\":[{\"model\":\"H100\",\"borrowingLimit\":{\"gpus\":0}}]}}",
		  "queue a: spec.models[0].borrowingLimit: unknown field" },
		{ "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"weight\":1000001}}",
		  "queue a: spec.weight: 1000001 is outside 1..1000000" },
		{ "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"nominalQuota\":{\"gpuMilli\":1e30}}}",
		  "queue a: spec.nominalQuota.gpuMilli: out of range, expected 0..1000000000" },
		{ "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"models\":[{\"model\":\"H100\",\"nominalQuota\":{\"gpus\":-2}}]}}",
		  "queue a: spec.models[0].nominalQuota.gpus: -2 is outside" },
		{ "{\"metadata\":{\"name\":\"A\"},\"spec\":{}}", "metadata.name: expected lower-case" },
		{ "{\"metadata\":{},\"spec\":{}}", "metadata.name: missing" },
		{ "{\"metadata\":{\"name\":\"a\"}}", "queue a: spec: missing" },
		{ "{\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"a\"},\"spec\":{}}", "apiVersion: expected gpufleet.io/v1alpha1" },
		{ "[1]", "(object): expected a GPUQueue object, got an array" },
		{ "{\"kind\":\"Queue\",\"metadata\":{\"name\":\"a\"},\"spec\":{}}", "kind: expected GPUQueue" },
		{ "{", "(object): not valid JSON" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char err[256] = "";
		struct gf_queue_def q;
		assert_int_equal(gf_k8s_queue_decode_text(bad[i].doc, strlen(bad[i].doc), &q, err, sizeof(err)), GF_PARSE);
		if (!strstr(err, bad[i].want))
			fail_msg("case %zu: got \"%s\", want \"%s\"", i, err, bad[i].want);
	}
	/* the CRD's per-model form */
	const char *crd = "{\"metadata\":{\"name\":\"m\"},\"spec\":{\"models\":[{\"model\":\"NVIDIA-H100-80GB-HBM3\","
			  "\"nominalQuota\":{\"gpus\":32,\"gpuMilli\":500}},{\"model\":\"A100\"}]}}";
	struct gf_queue_def m;
	char merr[256];
	assert_int_equal(gf_k8s_queue_decode_text(crd, strlen(crd), &m, merr, sizeof(merr)), GF_OK);
	assert_int_equal(m.nmodels, 2);
	assert_string_equal(m.models[0].model, "NVIDIA-H100-80GB-HBM3");
	assert_int_equal(m.models[0].nominal, 32500);
	assert_int_equal(m.models[1].nominal, 0);
	/* defaults: no limits, weight 1, skip-ahead (the CRD's default), cohort "" = none */
	const char *min = "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"cohort\":\"\"}}";
	char err[256];
	struct gf_queue_def q;
	assert_int_equal(gf_k8s_queue_decode_text(min, strlen(min), &q, err, sizeof(err)), GF_OK);
	assert_int_equal(q.nominal, 0);
	assert_true(q.borrowing_limit == GF_QUOTA_UNLIMITED);
	assert_int_equal(q.weight, 1);
	assert_int_equal(q.ordering, GF_ORDER_SKIP_AHEAD);
	assert_string_equal(q.cohort, "");
}

/* A pending one-GPU pod in namespace ns with the given labels (JSON members, may be ""). */
static struct gf_k8s_pod qpod(const char *ns, const char *uid, const char *labels, int gpus)
{
	char json[2048], err[256];
	snprintf(json, sizeof(json),
		 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\",\"uid\":\"%s\",\"resourceVersion\":\"1\","
		 "\"labels\":{%s}},\"spec\":{\"schedulerName\":\"gpufleet\",\"containers\":[{\"resources\":"
		 "{\"limits\":{\"nvidia.com/gpu\":\"%d\"}}}]}}", uid, ns, uid, labels, gpus);
	struct gf_k8s_pod p;
	if (gf_k8s_pod_decode_text(json, strlen(json), &p, err, sizeof(err)))
		fail_msg("pod: %s", err);
	return p;
}

static void test_pod_queue_rule(void **st)
{
	(void)st;
	struct gf_k8s_pod p = qpod("ml", "p1", "\"gpufleet.io/queue\":\"team-a\"", 1);
	assert_string_equal(gf_k8s_pod_queue(&p, "team-b"), "team-a"); /* the pod's label first */
	p = qpod("ml", "p2", "", 1);
	assert_string_equal(gf_k8s_pod_queue(&p, "team-b"), "team-b"); /* else the namespace's */
	assert_null(gf_k8s_pod_queue(&p, ""));
	assert_null(gf_k8s_pod_queue(&p, NULL));
	p = qpod("ml", "p3", "\"gpufleet.io/queue\":\"team-a\",\"kueue.x-k8s.io/queue-name\":\"lq\"", 1);
	assert_true(p.kueue);
	assert_null(gf_k8s_pod_queue(&p, "team-b")); /* Kueue's: charged to none of ours */
	const char *bad = "{\"metadata\":{\"name\":\"p\",\"uid\":\"u\",\"labels\":{\"gpufleet.io/queue\":7}},\"spec\":{}}";
	char err[256] = "";
	assert_int_equal(gf_k8s_pod_decode_text(bad, strlen(bad), &p, err, sizeof(err)), GF_PARSE);
	assert_non_null(strstr(err, "gpufleet.io/queue"));
}

static struct gf_queue_def qdef(const char *json)
{
	struct gf_queue_def q;
	char err[256];
	if (gf_k8s_queue_decode_text(json, strlen(json), &q, err, sizeof(err)))
		fail_msg("queue: %s", err);
	return q;
}

static gf_live *quota_live(void)
{
	enum gf_queue_policy qp;
	assert_true(gf_queue_policy_find("best-effort-fifo", &qp));
	struct gf_live_opts o = { .queue_policy = (int)qp, .queues = true };
	gf_live *l;
	assert_int_equal(gf_live_create(&o, &l), GF_OK);
	char json[1024], err[256];
	for (int i = 0; i < 2; i++) {
		snprintf(json, sizeof(json),
			 "{\"metadata\":{\"name\":\"n%d\",\"labels\":{\"nvidia.com/gpu.product\":\"H100\","
			 "\"nvidia.com/gpu.memory\":\"81559\"}},\"status\":{\"allocatable\":{\"cpu\":\"64\","
			 "\"memory\":\"512Gi\",\"nvidia.com/gpu\":\"8\"},\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}",
			 i);
		struct gf_k8s_node n;
		if (gf_k8s_node_decode_text(json, strlen(json), &n, err, sizeof(err)))
			fail_msg("node: %s", err);
		gf_live_node_set(l, &n);
	}
	/* a: 8, of which it lends 6 (2 guaranteed); b: 4, lends none, borrows at most 4 */
	struct gf_queue_def a = qdef("{\"metadata\":{\"name\":\"a\"},\"spec\":{\"cohort\":\"c\",\"nominalQuota\":{\"gpus\":8},"
				     "\"lendingLimit\":{\"gpus\":6}}}");
	struct gf_queue_def b = qdef("{\"metadata\":{\"name\":\"b\"},\"spec\":{\"cohort\":\"c\",\"nominalQuota\":{\"gpus\":4},"
				     "\"lendingLimit\":{\"gpus\":0},\"borrowingLimit\":{\"gpus\":4}}}");
	assert_int_equal(gf_live_queue_set(l, &a, NULL), GF_OK);
	assert_int_equal(gf_live_queue_set(l, &b, NULL), GF_OK);
	return l;
}

/* Run the daemon's loop a few rounds; bound pods confirmed; returns pods placed, last message kept. */
static size_t rounds(gf_live *l, double *now, char *last, size_t lastlen)
{
	size_t placed = 0;
	for (int r = 0; r < 5; r++) {
		struct gf_k8s_pod p;
		struct gf_live_decision d;
		gf_live_requeue_due(l, *now);
		*now += 20;
		while (gf_live_schedule_next(l, &p, &d)) {
			if (d.result == GF_LIVE_PLACED) {
				snprintf(p.node, sizeof(p.node), "%s", d.node);
				p.assigned = true;
				snprintf(p.assigned_node, sizeof(p.assigned_node), "%s", d.node);
				p.assigned_ngpus = d.ngpus;
				memcpy(p.assigned_gpus, d.gpus, sizeof(p.assigned_gpus));
				p.assigned_milli = d.milli;
				gf_live_pod_set(l, &p);
				placed++;
			} else if (last) {
				snprintf(last, lastlen, "%s", d.message);
			}
		}
	}
	return placed;
}

static void test_live_quota_borrowing(void **st)
{
	(void)st;
	gf_live *l = quota_live();
	double now = 0;
	char last[512] = "", uid[32];
	/* b asks for 12 single GPUs: 4 nominal + 4 borrowed = 8 bound, 4 wait on the quota (16 GPUs free) */
	for (int i = 0; i < 12; i++) {
		snprintf(uid, sizeof(uid), "b%d", i);
		struct gf_k8s_pod p = qpod("ns-b", uid, "\"gpufleet.io/queue\":\"b\"", 1);
		gf_live_pod_set(l, &p);
	}
	assert_int_equal(rounds(l, &now, last, sizeof(last)), 8);
	assert_non_null(strstr(last, "quota"));
	int64_t used;
	assert_true(gf_live_queue_usage(l, "b", &used));
	assert_int_equal(used, 8000);
	/* no thrash: more rounds place nothing more and keep the usage */
	assert_int_equal(rounds(l, &now, NULL, 0), 0);
	assert_true(gf_live_queue_usage(l, "b", &used));
	assert_int_equal(used, 8000);
	/* a (the lender) asks 8: its 2 guaranteed and 2 of the 6 it lends (b draws 4): 4, without
	 * preemption (reclaiming the rest needs evicting b's pods: not done here) */
	for (int i = 0; i < 8; i++) {
		snprintf(uid, sizeof(uid), "a%d", i);
		struct gf_k8s_pod p = qpod("ns-a", uid, "\"gpufleet.io/queue\":\"a\"", 1);
		gf_live_pod_set(l, &p);
	}
	assert_int_equal(rounds(l, &now, NULL, 0), 4);
	assert_true(gf_live_queue_usage(l, "a", &used));
	assert_int_equal(used, 4000);
	/* two of b's bound pods end: the pool's 2 go to a (within its nominal: tried first), not to b's
	 * older waiting pods (borrowing) */
	gf_live_pod_delete(l, "b0");
	gf_live_pod_delete(l, "b1");
	assert_int_equal(rounds(l, &now, NULL, 0), 2);
	assert_true(gf_live_queue_usage(l, "a", &used));
	assert_int_equal(used, 6000);
	assert_true(gf_live_queue_usage(l, "b", &used));
	assert_int_equal(used, 6000);
	/* a Queue change (b's borrowing limit cut to 2) makes a new loop: the bound pods are charged
	 * into it again and nothing new is admitted */
	struct gf_queue_def b2 = qdef("{\"metadata\":{\"name\":\"b\"},\"spec\":{\"cohort\":\"c\",\"nominalQuota\":{\"gpus\":4},"
				      "\"lendingLimit\":{\"gpus\":0},\"borrowingLimit\":{\"gpus\":2}}}");
	assert_int_equal(gf_live_queue_set(l, &b2, NULL), GF_OK);
	assert_int_equal(rounds(l, &now, NULL, 0), 0);
	assert_true(gf_live_queue_usage(l, "b", &used));
	assert_int_equal(used, 6000);
	assert_true(gf_live_queue_usage(l, "a", &used));
	assert_int_equal(used, 6000);
	char why[256];
	assert_int_equal(gf_live_check(l, why, sizeof(why)), GF_OK);
	gf_live_destroy(l);
}

struct seen { char names[8][64]; int64_t used[8]; bool refused[8]; int n; };

static void each(void *ud, const char *name, int64_t used, int64_t nominal, const char *err)
{
	struct seen *s = ud;
	(void)nominal;
	if (s->n < 8) {
		snprintf(s->names[s->n], sizeof(s->names[0]), "%s", name);
		s->used[s->n] = used;
		s->refused[s->n++] = err[0] != 0;
	}
}

static void test_live_missing_queue_and_kueue(void **st)
{
	(void)st;
	gf_live *l = quota_live();
	double now = 0;
	char last[512] = "";
	/* a pod naming a Queue that does not exist waits, said so; the others are not disturbed */
	struct gf_k8s_pod x = qpod("ns-x", "x0", "\"gpufleet.io/queue\":\"nope\"", 1);
	struct gf_k8s_pod a = qpod("ns-a", "a0", "\"gpufleet.io/queue\":\"a\"", 1);
	gf_live_pod_set(l, &x);
	gf_live_pod_set(l, &a);
	assert_int_equal(rounds(l, &now, last, sizeof(last)), 1);
	assert_non_null(strstr(last, "GPUQueue \"nope\" (gpufleet.io/v1alpha1, from the pod's label gpufleet.io/queue) does not exist"));
	/* it appears: the pod goes */
	struct gf_queue_def nope = qdef("{\"metadata\":{\"name\":\"nope\"},\"spec\":{\"nominalQuota\":{\"gpus\":1}}}");
	assert_int_equal(gf_live_queue_set(l, &nope, NULL), GF_OK);
	assert_int_equal(rounds(l, &now, NULL, 0), 1);
	/* a refused Queue object: its pods wait with the decoder's message */
	struct gf_queue_def bad = { 0 };
	snprintf(bad.name, sizeof(bad.name), "broken");
	assert_int_equal(gf_live_queue_set(l, &bad, "queue broken: spec.weight: 0 is outside 1..1000000"), GF_OK);
	struct gf_k8s_pod y = qpod("ns-y", "y0", "", 1);
	assert_int_equal(gf_live_namespace_queue(l, "ns-y", "broken"), GF_OK);
	gf_live_pod_set(l, &y);
	assert_int_equal(rounds(l, &now, last, sizeof(last)), 0);
	if (!strstr(last, "GPUQueue \"broken\""))
		fail_msg("last: %s", last);
	assert_non_null(strstr(last, "GPUQueue \"broken\" cannot admit pods: queue broken: spec.weight"));
	/* Kueue's pods are placed without counting against any Queue of ours */
	struct gf_k8s_pod k = qpod("ns-y", "k0", "\"kueue.x-k8s.io/queue-name\":\"lq\"", 4);
	gf_live_pod_set(l, &k);
	assert_int_equal(rounds(l, &now, NULL, 0), 1);
	int64_t used;
	assert_true(gf_live_queue_usage(l, "broken", &used));
	assert_int_equal(used, 0);
	assert_true(gf_live_queue_usage(l, "a", &used));
	assert_int_equal(used, 1000);
	assert_false(gf_live_queue_usage(l, "none-such", &used));
	struct seen sn = { .n = 0 };
	gf_live_each_queue(l, each, &sn);
	assert_int_equal(sn.n, 4); /* a, b, nope, broken: first seen first */
	assert_string_equal(sn.names[0], "a");
	assert_int_equal(sn.used[0], 1000);
	assert_string_equal(sn.names[2], "nope");
	assert_int_equal(sn.used[2], 1000);
	assert_string_equal(sn.names[3], "broken");
	assert_true(sn.refused[3]);
	assert_false(sn.refused[0]);
	gf_live_queue_delete(l, "nope");
	sn.n = 0;
	gf_live_each_queue(l, each, &sn);
	assert_int_equal(sn.n, 3);
	assert_string_equal(sn.names[2], "broken");
	char why[256];
	assert_int_equal(gf_live_check(l, why, sizeof(why)), GF_OK);
	gf_live_destroy(l);
}

/* Per-model quotas (the CRD's spec.models): a model no node has makes the Queue refuse pods, said so;
 * a model's nominal quota caps that model's GPUs. */
static void test_live_per_model(void **st)
{
	(void)st;
	gf_live *l = quota_live();
	double now = 0;
	char last[512] = "";
	struct gf_queue_def m = qdef("{\"metadata\":{\"name\":\"m\"},\"spec\":{\"nominalQuota\":{\"gpus\":4},"
				     "\"models\":[{\"model\":\"A100\",\"nominalQuota\":{\"gpus\":2}}]}}");
	struct gf_queue_def h = qdef("{\"metadata\":{\"name\":\"h\"},\"spec\":{\"nominalQuota\":{\"gpus\":4},"
				     "\"models\":[{\"model\":\"H100\",\"nominalQuota\":{\"gpus\":1}}]}}");
	assert_int_equal(gf_live_queue_set(l, &m, NULL), GF_OK);
	assert_int_equal(gf_live_queue_set(l, &h, NULL), GF_OK);
	struct gf_k8s_pod pm = qpod("ns", "m0", "\"gpufleet.io/queue\":\"m\"", 1);
	gf_live_pod_set(l, &pm);
	assert_int_equal(rounds(l, &now, last, sizeof(last)), 0);
	if (!strstr(last, "GPUQueue \"m\" cannot admit pods: queue m: spec.models[0].model: no node has GPU model A100"))
		fail_msg("last: %s", last);
	struct gf_k8s_pod h0 = qpod("ns", "h0", "\"gpufleet.io/queue\":\"h\"", 1);
	struct gf_k8s_pod h1 = qpod("ns", "h1", "\"gpufleet.io/queue\":\"h\"", 1);
	gf_live_pod_set(l, &h0);
	gf_live_pod_set(l, &h1);
	assert_int_equal(rounds(l, &now, last, sizeof(last)), 1); /* 1 H100 GPU of quota, 4 in all */
	assert_non_null(strstr(last, "quota"));
	int64_t used;
	assert_true(gf_live_queue_usage(l, "h", &used));
	assert_int_equal(used, 1000);
	gf_live_destroy(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_file),
		cmocka_unit_test(test_decode_errors),
		cmocka_unit_test(test_pod_queue_rule),
		cmocka_unit_test(test_live_quota_borrowing),
		cmocka_unit_test(test_live_missing_queue_and_kueue),
		cmocka_unit_test(test_live_per_model),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
