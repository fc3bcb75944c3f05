/* tests/scheduler/test_sched_storm.c - requeueing without storms: the backoff, the change
 * log and Event aggregation (queue/requeue.h) as units, then the two storms of issue 11 played
 * through gf_live with a virtual clock, by the daemon's loop as it was (every parked pod back on
 * any change and every 30 s, Events keyed by message) and as it is (gf_live_requeue_due,
 * gf_live_report_due).  The test bounds attempts and Events of the loop as it is, and checks
 * that the old loop, on the same scenario, storms (so the bounds can fail). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "k8s/live.h"
#include "queue/loop.h"
#include "queue/podstate.h"
#include "queue/requeue.h"

static void test_backoff_and_reports(void **st)
{
	(void)st;
	static const double want[] = { 1, 2, 4, 8, 10, 10, 10 };
	for (uint32_t n = 1; n <= 7; n++)
		assert_true(gf_backoff_delay(n) == want[n - 1]);
	struct gf_retry r = { 0 };
	gf_retry_failed(&r, 100.0, 7);
	gf_retry_failed(&r, 101.0, 7);
	assert_int_equal(r.failures, 2);
	assert_true(r.not_before == 103.0);
	gf_retry_reset(&r, 9);
	assert_int_equal(r.failures, 0);
	assert_true(r.not_before == 0);

	size_t a[GF_WHY_COUNT_] = { 0 }, b[GF_WHY_COUNT_] = { 0 }, c[GF_WHY_COUNT_] = { 0 };
	a[GF_WHY_TAINT] = 200, a[GF_WHY_GPU] = 104;
	b[GF_WHY_TAINT] = 199, b[GF_WHY_GPU] = 105; /* other counts, same reasons */
	c[GF_WHY_GPU] = 304;
	assert_true(gf_report_key(a) == gf_report_key(b));
	assert_true(gf_report_key(a) != gf_report_key(c));
	struct gf_report rep = { 0 };
	assert_true(gf_report_due(&rep, gf_report_key(a), 0, 300));
	assert_false(gf_report_due(&rep, gf_report_key(b), 10, 300));
	assert_true(gf_report_due(&rep, gf_report_key(c), 20, 300));
	assert_false(gf_report_due(&rep, gf_report_key(c), 319, 300));
	assert_true(gf_report_due(&rep, gf_report_key(c), 320, 300));
}

/* The change log: only a logged node that admits and fits the pod now makes an attempt worth it. */
static void test_changelog(void **st)
{
	(void)st;
	struct gf_node_spec specs[2];
	struct gf_node_rules rules[2] = { { 0 }, { 0 } };
	struct gf_pod_rules pr = { 0 };
	struct gf_catalog cat;
	gf_cluster *c;
	static struct gf_changelog g; /* 4 KiB */
	memset(&g, 0, sizeof(g));
	gf_catalog_init(&cat);
	for (int i = 0; i < 2; i++) {
		memset(&specs[i], 0, sizeof(specs[i]));
		snprintf(specs[i].name, sizeof(specs[i].name), "n%d", i);
		specs[i].cpu_milli = 1000;
		specs[i].mem_mib = 1000;
		specs[i].ngpus = 1;
		specs[i].model = -1;
		for (int k = 0; k < GF_MAX_GPUS; k++)
			specs[i].topo[k] = (struct gf_gpu_topo){ -1, -1 };
	}
	assert_int_equal(gf_cluster_create(specs, 2, &c), GF_OK);
	struct gf_pod_spec gpu = { .cpu_milli = 100, .mem_mib = 100, .gpu_count = 1, .gpu_milli = 1000 };
	assert_int_equal(gf_cluster_bind(c, 0, &gpu, (uint8_t[]){ 0 }), GF_OK);
	rules[1].unschedulable = true;
	struct gf_retry r = { 0 };
	gf_retry_failed(&r, 0, g.end);
	assert_false(gf_changelog_since(&g, &r));
	gf_changelog_add(&g, 1); /* node 1 changed, but is cordoned */
	assert_true(gf_changelog_since(&g, &r));
	assert_false(gf_requeue_worth_trying(&g, &r, c, &cat, rules, &pr, &gpu));
	assert_false(gf_changelog_since(&g, &r)); /* judged: seen moved on */
	rules[1].unschedulable = false;
	gf_changelog_add(&g, 1); /* uncordoned: fits */
	assert_true(gf_requeue_worth_trying(&g, &r, c, &cat, rules, &pr, &gpu));
	assert_false(gf_requeue_worth_trying(&g, &r, c, &cat, rules, &pr, NULL)); /* no request: only ALL */
	gf_changelog_add(&g, GF_CHANGE_ALL);
	assert_true(gf_requeue_worth_trying(&g, &r, c, &cat, rules, &pr, NULL));
	struct gf_retry old = r;
	for (int i = 0; i < GF_CHANGELOG_CAP + 1; i++)
		gf_changelog_add(&g, 0); /* node 0 is full, but the pod is too far behind: try */
	assert_true(gf_requeue_worth_trying(&g, &old, c, &cat, rules, &pr, &gpu));
	gf_cluster_destroy(c);
	gf_catalog_release(&cat);
}

/* The pod state machine's verbs and the FIFO (queue/podstate.h). */
static struct gf_pod_rec recs[4];

static struct gf_pod_rec *rec_of(void *ud, uint32_t id)
{
	(void)ud;
	return id < 4 ? &recs[id] : NULL;
}

static void test_podstate_verbs(void **st)
{
	(void)st;
	struct gf_podq q = { 0 };
	struct gf_changelog *g = calloc(1, sizeof(*g));
	uint32_t id;
	assert_non_null(g);
	assert_true(sizeof(struct gf_pod_rec) < 512); /* the engine's per-pod state (issue 11) */
	for (uint32_t i = 0; i < 4; i++) {
		gf_pod_init(&recs[i]);
		assert_int_equal(recs[i].st, GF_POD_IGNORED);
		assert_int_equal(gf_pod_want(&q, &recs[i], i), GF_OK);
	}
	assert_int_equal(gf_pod_want(&q, &recs[0], 0), GF_OK); /* queued once only */
	gf_pod_ignore(&recs[1]);				/* leaves by a flag */
	assert_true(gf_podq_take(&q, rec_of, NULL, &id));
	assert_int_equal(id, 0);
	assert_false(recs[0].queued);
	assert_true(gf_podq_take(&q, rec_of, NULL, &id));
	assert_int_equal(id, 2);				/* 1 skipped */
	gf_pod_failed(&recs[0], false, 100.0, g->end);
	assert_true(recs[0].parked);
	assert_true(recs[0].retry.not_before == 101.0);
	gf_pod_assume(&recs[2], 7, 100.0, g->end);
	assert_int_equal(recs[2].st, GF_POD_ASSUMED);
	assert_int_equal(recs[2].node, 7);
	gf_pod_confirm(&recs[2]);
	assert_int_equal(recs[2].st, GF_POD_BOUND);
	assert_true(gf_podq_take(&q, rec_of, NULL, &id));
	assert_int_equal(id, 3);
	assert_false(gf_podq_take(&q, rec_of, NULL, &id));	/* the duplicate of 0 is stale */
	/* due: nothing changed -> no (wake at the sweep); a change inside the backoff -> no
	 * (wake at its end); after it -> change; long untried -> sweep */
	double wake = 1e9;
	assert_int_equal(gf_pod_due(&recs[0], g, 100.5, 300, &wake), GF_DUE_NO);
	assert_true(wake == 400.0);
	gf_changelog_add(g, 3);
	assert_int_equal(gf_pod_due(&recs[0], g, 100.5, 300, &wake), GF_DUE_NO);
	assert_true(wake == 101.0);
	assert_int_equal(gf_pod_due(&recs[0], g, 101.0, 300, &wake), GF_DUE_CHANGE);
	assert_int_equal(gf_pod_due(&recs[0], g, 400.0, 300, &wake), GF_DUE_SWEEP);
	/* forget: requeued at once, or parked as after a failure, or ignored when not ours */
	gf_pod_assume(&recs[3], 1, 200.0, g->end);
	gf_pod_forget(&q, &recs[3], 3, true, true, 200.0, g->end);
	assert_int_equal(recs[3].st, GF_POD_PENDING);
	assert_true(recs[3].queued);
	assert_int_equal(recs[3].node, -1);
	gf_pod_assume(&recs[2], 1, 200.0, g->end);
	gf_pod_forget(&q, &recs[2], 2, true, false, 200.0, g->end);
	assert_true(recs[2].parked);
	assert_int_equal(recs[2].retry.failures, 1);
	gf_pod_assume(&recs[1], 1, 200.0, g->end);
	gf_pod_forget(&q, &recs[1], 1, false, true, 200.0, g->end);
	assert_int_equal(recs[1].st, GF_POD_IGNORED);
	assert_true(gf_podq_take(&q, rec_of, NULL, &id));
	assert_int_equal(id, 3);
	assert_false(gf_podq_take(&q, rec_of, NULL, &id));
	gf_podq_release(&q);
	free(g);
}

/* ---- the storms ------------------------------------------------------------ */

static struct gf_k8s_node node(int i, int gpus, bool tainted, bool cordoned)
{
	char json[1024];
	snprintf(json, sizeof(json),
		 "{\"metadata\":{\"name\":\"n%03d\",\"labels\":{\"nvidia.com/gpu.product\":\"A100\"}},"
		 "\"spec\":{\"unschedulable\":%s%s},\"status\":{\"allocatable\":{\"cpu\":\"64\","
		 "\"memory\":\"512Gi\",\"nvidia.com/gpu\":\"%d\"}}}",
		 i, cordoned ? "true" : "false",
		 tainted ? ",\"taints\":[{\"key\":\"node.kubernetes.io/not-ready\",\"effect\":\"NoSchedule\"}]" : "",
		 gpus);
	struct gf_k8s_node n;
	char err[256];
	if (gf_k8s_node_decode_text(json, strlen(json), &n, err, sizeof(err)))
		fail_msg("node: %s", err);
	return n;
}

static struct gf_k8s_pod pod(int i, int gpus)
{
	char json[1024];
	snprintf(json, sizeof(json),
		 "{\"metadata\":{\"name\":\"p%d\",\"namespace\":\"t\",\"uid\":\"u%d\"},"
		 "\"spec\":{\"schedulerName\":\"gpufleet\",\"containers\":[{\"resources\":"
		 "{\"requests\":{\"cpu\":\"1\",\"memory\":\"1Gi\"},\"limits\":{\"nvidia.com/gpu\":\"%d\"}}}]}}",
		 i, i, gpus);
	struct gf_k8s_pod p;
	char err[256];
	if (gf_k8s_pod_decode_text(json, strlen(json), &p, err, sizeof(err)))
		fail_msg("pod: %s", err);
	return p;
}

/* A node update at a time. */
struct change {
	double at;
	struct gf_k8s_node n;
};

struct run {
	size_t attempts, events, placed;
	uint64_t skips;
	uint64_t tries;	/* placements the engine's loop tried */
};

/*
 * The scheduling thread of k8s/scheduler.c with a virtual clock: an attempt
 * costs `cost` seconds; with nothing queued the thread waits until the next
 * change (or 100 ms).  old: the loop as it was.
 */
static struct run play(gf_live *l, const struct change *ch, size_t nch, double until, double cost, bool old)
{
	struct run r = { 0 };
	double t = 0, last_sweep = 0;
	size_t next = 0;
	static struct gf_k8s_pod p;
	struct gf_live_decision d;
	while (t < until) {
		while (next < nch && ch[next].at <= t)
			gf_live_node_set(l, &ch[next++].n);
		if (old) {
			if (gf_live_take_freed(l) || t - last_sweep > 30) {
				gf_live_requeue_parked(l);
				last_sweep = t;
			}
		} else {
			gf_live_requeue_due(l, t);
		}
		if (!gf_live_schedule_next(l, &p, &d)) {
			double wake = t + 0.1;
			t = next < nch && ch[next].at < wake ? ch[next].at : wake;
			continue;
		}
		r.attempts++;
		t += cost;
		if (d.result == GF_LIVE_PLACED) {
			snprintf(p.node, sizeof(p.node), "%s", d.node);
			gf_live_pod_set(l, &p); /* the watch confirms the binding */
			r.placed++;
		} else if (old ? gf_live_should_report(l, p.uid, d.message, t, 300)
			       : gf_live_report_due(l, p.uid, d.reason, t, 300)) {
			r.events++;
		}
	}
	struct gf_live_stats s;
	gf_live_stats(l, &s);
	r.skips = s.requeue_skips;
	r.tries = s.loop_tries;
	return r;
}

/* 304 nodes lose their not-ready taints one by one over two minutes while 2,210 8-GPU pods wait;
 * o: the daemon's options (NULL: the defaults, queue policy kube). */
static struct run storm_taints_with(bool old, const struct gf_live_opts *o)
{
	enum { NODES = 304, PODS = 2210 };
	gf_live *l;
	assert_int_equal(gf_live_create(o, &l), GF_OK);
	struct change *ch = calloc(NODES, sizeof(*ch));
	assert_non_null(ch);
	for (int i = 0; i < NODES; i++) {
		struct gf_k8s_node n = node(i, 8, true, false);
		gf_live_node_set(l, &n);
		ch[i].at = 1.0 + i * (118.0 / NODES);
		ch[i].n = node(i, 8, false, false);
	}
	for (int i = 0; i < PODS; i++) {
		struct gf_k8s_pod p = pod(i, 8);
		gf_live_pod_set(l, &p);
	}
	struct run r = play(l, ch, NODES, 120.0, 0.002, old);
	struct gf_live_stats s;
	gf_live_stats(l, &s);
	assert_int_equal(s.pod_records, PODS);
	print_message("memory: %zu bytes per pod in live.c (its slot, holding the engine's %zu-byte record, "
		      "and the packed Pod)\n", s.pod_bytes / s.pod_records, sizeof(struct gf_pod_rec));
	assert_true(s.pod_bytes / s.pod_records < 1024); /* was 6,912 (a whole decoded Pod per slot) */
	char why[256];
	assert_int_equal(gf_live_check(l, why, sizeof(why)), GF_OK);
	gf_live_destroy(l);
	free(ch);
	return r;
}

static struct run storm_taints(bool old)
{
	return storm_taints_with(old, NULL);
}

/* 20 cordon/uncordon cycles of a full node with 50 pods parked (the cluster is full); o as above. */
static struct run storm_cordon_with(bool old, const struct gf_live_opts *o)
{
	enum { NODES = 10, CYCLES = 20, PARKED = 50 };
	gf_live *l;
	assert_int_equal(gf_live_create(o, &l), GF_OK);
	for (int i = 0; i < NODES; i++) {
		struct gf_k8s_node n = node(i, 8, false, false);
		gf_live_node_set(l, &n);
	}
	static struct gf_k8s_pod p;
	struct gf_live_decision d;
	for (int i = 0; i < NODES * 8; i++) { /* fill the cluster */
		p = pod(i, 1);
		gf_live_pod_set(l, &p);
		assert_true(gf_live_schedule_next(l, &p, &d));
		assert_int_equal(d.result, GF_LIVE_PLACED);
		snprintf(p.node, sizeof(p.node), "%s", d.node);
		gf_live_pod_set(l, &p);
	}
	for (int i = 0; i < PARKED; i++) {
		p = pod(1000 + i, 1);
		gf_live_pod_set(l, &p);
	}
	struct change ch[2 * CYCLES];
	for (int c = 0; c < CYCLES; c++) {
		ch[2 * c].at = 1.0 + 6.0 * c;
		ch[2 * c].n = node(0, 8, false, true);
		ch[2 * c + 1].at = 4.0 + 6.0 * c;
		ch[2 * c + 1].n = node(0, 8, false, false);
	}
	struct run r = play(l, ch, 2 * CYCLES, 121.0, 0.002, old);
	gf_live_destroy(l);
	return r;
}

static struct run storm_cordon(bool old)
{
	return storm_cordon_with(old, NULL);
}

static void test_storm_taints(void **st)
{
	(void)st;
	struct run now = storm_taints(false), before = storm_taints(true);
	print_message("taints, 304 nodes, 2210 pods, 120 s: before %zu attempts %zu Events; "
		      "now %zu attempts %zu Events (%llu skipped without an attempt), %zu placed\n",
		      before.attempts, before.events, now.attempts, now.events,
		      (unsigned long long)now.skips, now.placed);
	/* every node got its pod, as before */
	assert_int_equal(now.placed, 304);
	assert_int_equal(before.placed, 304);
	/* at most one attempt per pod plus one per node event, one Event per pod and reason set */
	assert_true(now.attempts <= 2210 + 2 * 304);
	assert_true(now.events <= 2 * 2210);
	assert_true(before.attempts > 10 * now.attempts); /* the old loop storms */
	assert_true(before.events > 5 * now.events);
}

static void test_storm_cordon(void **st)
{
	(void)st;
	struct run now = storm_cordon(false), before = storm_cordon(true);
	print_message("cordon, 20 cycles, 50 parked, 121 s: before %zu attempts %zu Events; "
		      "now %zu attempts %zu Events (%llu skipped without an attempt)\n",
		      before.attempts, before.events, now.attempts, now.events,
		      (unsigned long long)now.skips);
	assert_int_equal(now.placed, 0);
	assert_true(now.attempts <= 2 * 50);
	assert_true(now.events <= 50);
	assert_true(before.attempts > 10 * now.attempts);
	assert_true(before.events > 10 * now.events);
}

/*
 * The same storms under the queue policies that keep pods in the engine's
 * loop (every pod handed out waits in its queue; a cycle at least every
 * 100 ms): each pod has an admission mask (tainted or cordoned nodes), so
 * the loop's per-shape park memo does not apply to it; its per-job memo
 * (queue/loop.c) tries it again only when a node it may use was freed or
 * changed since it last failed.  Bound, in loop placements: taints as the
 * kube bound above (one per pod plus two per node event); cordon one per pod
 * and loop (a new target makes a new loop, which takes every pod again) plus
 * one per node event.  Without the memo: 3,025,562 and 31,631 (best-effort
 * and backfill), 1,778 and 712 (strict).
 */
static void test_storm_queue_policies(void **st)
{
	(void)st;
	static const int qps[] = { GF_QP_STRICT_FIFO, GF_QP_BEST_EFFORT_FIFO, GF_QP_BACKFILL };
	bool ok = true;
	for (size_t k = 0; k < sizeof(qps) / sizeof(qps[0]); k++) {
		struct gf_live_opts o = { .queue_policy = qps[k] };
		struct run t = storm_taints_with(false, &o), c = storm_cordon_with(false, &o);
		print_message("%s: taints %zu decisions %zu Events %llu loop tries, %zu placed; "
			      "cordon %zu decisions %zu Events %llu loop tries\n",
			      gf_queue_policy_name((enum gf_queue_policy)qps[k]), t.attempts, t.events,
			      (unsigned long long)t.tries, t.placed, c.attempts, c.events, (unsigned long long)c.tries);
		ok = ok && t.placed == 304 && c.placed == 0 && t.tries <= 2210 + 2 * 304 && c.tries <= 2 * 50 + 2 * 20 &&
		     t.events <= 2 * 2210 && c.events <= 50;
	}
	assert_true(ok);	/* checked after every policy's figures are printed */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_backoff_and_reports),
		cmocka_unit_test(test_changelog),
		cmocka_unit_test(test_podstate_verbs),
		cmocka_unit_test(test_storm_taints),
		cmocka_unit_test(test_storm_cordon),
		cmocka_unit_test(test_storm_queue_policies),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
