/* tests/scheduler/test_sched_live.c - the live scheduler state without an API server:
 * placement, assumption and confirmation, restart rebuild from annotations, conflicts,
 * why-not messages, GPU memory requests, topology, and the extender's filter/prioritize/bind. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/frag.h"
#include "k8s/gangs.h"
#include "k8s/live.h"
#include "k8s/pdb.h"
#include "queue/loop.h"
#include "queue/queuedef.h"

static struct gf_k8s_node mknode(const char *name, int gpus, const char *model, int gpu_mem, bool topo)
{
	char json[4096], ann[2048] = "";
	if (topo) /* islands {0,1,2,3} {4,5,6,7}; NUMA = island */
		snprintf(ann, sizeof(ann),
			 ",\"annotations\":{\"gpufleet.io/gpu-topology\":\"{\\\"gpus\\\":["
			 "{\\\"index\\\":0,\\\"uuid\\\":\\\"GPU-0\\\",\\\"numa_node\\\":0},{\\\"index\\\":1,\\\"uuid\\\":\\\"GPU-1\\\",\\\"numa_node\\\":0},"
			 "{\\\"index\\\":2,\\\"uuid\\\":\\\"GPU-2\\\",\\\"numa_node\\\":0},{\\\"index\\\":3,\\\"uuid\\\":\\\"GPU-3\\\",\\\"numa_node\\\":0},"
			 "{\\\"index\\\":4,\\\"uuid\\\":\\\"GPU-4\\\",\\\"numa_node\\\":1},{\\\"index\\\":5,\\\"uuid\\\":\\\"GPU-5\\\",\\\"numa_node\\\":1},"
			 "{\\\"index\\\":6,\\\"uuid\\\":\\\"GPU-6\\\",\\\"numa_node\\\":1},{\\\"index\\\":7,\\\"uuid\\\":\\\"GPU-7\\\",\\\"numa_node\\\":1}],"
			 "\\\"topology\\\":{\\\"links\\\":[[0,1,1,1,0,0,0,0],[1,0,1,1,0,0,0,0],[1,1,0,1,0,0,0,0],[1,1,1,0,0,0,0,0],"
			 "[0,0,0,0,0,1,1,1],[0,0,0,0,1,0,1,1],[0,0,0,0,1,1,0,1],[0,0,0,0,1,1,1,0]]}}\"}");
	snprintf(json, sizeof(json),
		 "{\"metadata\":{\"name\":\"%s\",\"labels\":{\"nvidia.com/gpu.product\":\"%s\","
		 "\"nvidia.com/gpu.memory\":\"%d\"}%s},\"status\":{\"allocatable\":{\"cpu\":\"64\","
		 "\"memory\":\"512Gi\",\"nvidia.com/gpu\":\"%d\"},\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}",
		 name, model, gpu_mem, ann, gpus);
	struct gf_k8s_node n;
	char err[256];
	if (gf_k8s_node_decode_text(json, strlen(json), &n, err, sizeof(err)))
		fail_msg("node: %s", err);
	return n;
}

/* A pod; extra is spliced into metadata (e.g. annotations), res into limits. */
static struct gf_k8s_pod mkpod(const char *name, const char *uid, const char *node, const char *ann,
			       const char *res, const char *sched)
{
	char json[4096];
	snprintf(json, sizeof(json),
		 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"t\",\"uid\":\"%s\",\"resourceVersion\":\"1\","
		 "\"annotations\":{%s}},\"spec\":{\"schedulerName\":\"%s\",\"nodeName\":\"%s\","
		 "\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":\"1Gi\"},\"limits\":{%s}}}]}}",
		 name, uid, ann, sched, node, res);
	struct gf_k8s_pod p;
	char err[256];
	if (gf_k8s_pod_decode_text(json, strlen(json), &p, err, sizeof(err)))
		fail_msg("pod: %s", err);
	return p;
}

/* The bound pod as the API server would echo it back: node + our annotations. */
static struct gf_k8s_pod bound_copy(const struct gf_k8s_pod *p, const struct gf_live_decision *d)
{
	struct gf_k8s_pod b = *p;
	snprintf(b.node, sizeof(b.node), "%s", d->node);
	b.assigned = true;
	snprintf(b.assigned_node, sizeof(b.assigned_node), "%s", d->node);
	b.assigned_ngpus = d->ngpus;
	memcpy(b.assigned_gpus, d->gpus, sizeof(b.assigned_gpus));
	b.assigned_milli = d->milli;
	snprintf(b.rv, sizeof(b.rv), "2");
	return b;
}

static gf_live *fleet(void)
{
	gf_live *l;
	assert_int_equal(gf_live_create(NULL, &l), GF_OK);
	struct gf_k8s_node a = mknode("h100-a", 8, "H100", 81559, true);
	struct gf_k8s_node b = mknode("a100-b", 4, "A100", 40960, false);
	struct gf_k8s_node c = mknode("cpu-c", 0, "", 0, false);
	gf_live_node_set(l, &a);
	gf_live_node_set(l, &b);
	gf_live_node_set(l, &c);
	return l;
}

/* Schedule everything queued; bound pods are confirmed as the watch would. */
static size_t drain(gf_live *l, struct gf_k8s_pod *bound, size_t *nbound, struct gf_live_decision *last)
{
	struct gf_k8s_pod p;
	struct gf_live_decision d;
	size_t n = 0;
	while (gf_live_schedule_next(l, &p, &d)) {
		n++;
		if (last)
			*last = d;
		if (d.result == GF_LIVE_PLACED) {
			struct gf_k8s_pod b = bound_copy(&p, &d);
			gf_live_pod_set(l, &b);
			if (bound)
				bound[(*nbound)++] = b;
		}
	}
	return n;
}

static void test_place_and_restart(void **st)
{
	(void)st;
	gf_live *l = fleet();
	struct gf_k8s_pod bound[64];
	size_t nb = 0;
	char uid[32], name[32];
	/* 4 x 2 whole H100 GPUs, 8 x half a GPU, 2 whole A100 */
	for (int i = 0; i < 4; i++) {
		snprintf(uid, sizeof(uid), "w%d", i), snprintf(name, sizeof(name), "whole-%d", i);
		struct gf_k8s_pod p = mkpod(name, uid, "", "\"gpufleet.io/gpu-model\":\"H100\"", "\"nvidia.com/gpu\":\"2\"", "gpufleet");
		gf_live_pod_set(l, &p);
	}
	struct gf_live_decision d;
	assert_int_equal(drain(l, bound, &nb, &d), 4);
	assert_int_equal(nb, 4);
	/* Topology: each 2-GPU pod within one island. */
	for (size_t i = 0; i < nb; i++) {
		assert_int_equal(bound[i].assigned_ngpus, 2);
		assert_int_equal(bound[i].assigned_gpus[0] / 4, bound[i].assigned_gpus[1] / 4);
		assert_string_equal(bound[i].node, "h100-a");
	}
	assert_int_equal(d.fit, GF_TOPO_NVLINK);
	assert_non_null(strstr(d.uuids, "GPU-"));
	for (int i = 0; i < 8; i++) {
		snprintf(uid, sizeof(uid), "s%d", i), snprintf(name, sizeof(name), "share-%d", i);
		struct gf_k8s_pod p = mkpod(name, uid, "", "\"gpufleet.io/gpu-milli\":\"500\"", "", "gpufleet");
		gf_live_pod_set(l, &p);
	}
	assert_int_equal(drain(l, bound, &nb, &d), 8);
	assert_int_equal(nb, 12); /* 4 A100 GPUs hold 8 halves */
	struct gf_live_stats s;
	gf_live_stats(l, &s);
	assert_int_equal(s.gpu_capacity_milli, 12000);
	assert_int_equal(s.gpu_used_milli, 12000);
	assert_int_equal(s.pods_bound, 12);
	assert_int_equal(s.conflicts, 0);
	char why[256];
	assert_int_equal(gf_live_check(l, why, sizeof(why)), GF_OK);

	/* Full: a new pod is unschedulable with a kube-scheduler-style message. */
	struct gf_k8s_pod p = mkpod("late", "late", "", "\"gpufleet.io/gpu-milli\":\"100\"", "", "gpufleet");
	gf_live_pod_set(l, &p);
	assert_int_equal(drain(l, NULL, NULL, &d), 1);
	assert_int_equal(d.result, GF_LIVE_UNSCHEDULABLE);
	assert_string_equal(d.message, "0/3 nodes are available: 2 Insufficient GPU milli, 1 too few GPUs on the node.");
	/* Deleting a pod frees room: the parked pod goes back and is placed. */
	gf_live_pod_delete(l, "s0");
	assert_true(gf_live_take_freed(l));
	assert_int_equal(gf_live_requeue_parked(l), 1);
	assert_int_equal(drain(l, bound, &nb, &d), 1);
	assert_int_equal(d.result, GF_LIVE_PLACED);
	assert_string_equal(d.node, "a100-b");
	gf_live_destroy(l);

	/* Restart: a new state fed the bound pods (minus s0) rebuilds the same allocation. */
	l = fleet();
	for (size_t i = 0; i < nb; i++)
		if (strcmp(bound[i].uid, "s0"))
			gf_live_pod_set(l, &bound[i]);
	gf_live_stats(l, &s);
	assert_int_equal(s.gpu_used_milli, 12000 - 500 + 100);
	assert_int_equal(s.pods_bound, 12);
	assert_int_equal(s.conflicts, 0);
	/* And a new pod gets only the 400 left. */
	p = mkpod("x", "x", "", "\"gpufleet.io/gpu-milli\":\"401\"", "", "gpufleet");
	gf_live_pod_set(l, &p);
	assert_int_equal(drain(l, NULL, NULL, &d), 1);
	assert_int_equal(d.result, GF_LIVE_UNSCHEDULABLE);
	p = mkpod("y", "y", "", "\"gpufleet.io/gpu-milli\":\"400\"", "", "gpufleet");
	gf_live_pod_set(l, &p);
	assert_int_equal(drain(l, NULL, NULL, &d), 1);
	assert_int_equal(d.result, GF_LIVE_PLACED);
	assert_int_equal(gf_live_check(l, why, sizeof(why)), GF_OK);
	gf_live_destroy(l);
}

static void test_conflicts_forget_and_foreign(void **st)
{
	(void)st;
	gf_live *l = fleet();
	/* Two pods claim GPU 0 of h100-a whole: the second is a conflict, not an over-commit. */
	struct gf_k8s_pod a = mkpod("a", "a", "h100-a", "\"gpufleet.io/assigned-node\":\"h100-a\","
				   "\"gpufleet.io/assigned-gpus\":\"0\",\"gpufleet.io/assigned-gpu-milli\":\"1000\"",
				   "\"nvidia.com/gpu\":\"1\"", "gpufleet");
	struct gf_k8s_pod b = a;
	snprintf(b.uid, sizeof(b.uid), "b");
	gf_live_pod_set(l, &a);
	gf_live_pod_set(l, &b);
	struct gf_live_stats s;
	gf_live_stats(l, &s);
	assert_int_equal(s.gpu_used_milli, 1000);
	assert_int_equal(s.conflicts, 1);
	/* A pod bound by kube-scheduler with nvidia.com/gpu and no annotations is accounted too. */
	struct gf_k8s_pod f = mkpod("f", "f", "a100-b", "", "\"nvidia.com/gpu\":\"3\"", "default-scheduler");
	gf_live_pod_set(l, &f);
	gf_live_stats(l, &s);
	assert_int_equal(s.gpu_used_milli, 4000);
	/* Pods of other schedulers are never scheduled by us. */
	struct gf_k8s_pod o = mkpod("o", "o", "", "", "\"nvidia.com/gpu\":\"1\"", "default-scheduler");
	gf_live_pod_set(l, &o);
	struct gf_k8s_pod out;
	struct gf_live_decision d;
	assert_false(gf_live_schedule_next(l, &out, &d));
	/* A failed binding gives the resources back and requeues. */
	struct gf_k8s_pod p = mkpod("p", "p", "", "", "\"nvidia.com/gpu\":\"7\"", "gpufleet");
	gf_live_pod_set(l, &p);
	assert_true(gf_live_schedule_next(l, &out, &d));
	assert_int_equal(d.result, GF_LIVE_PLACED);
	gf_live_stats(l, &s);
	assert_int_equal(s.gpu_used_milli, 11000);
	assert_int_equal(s.pods_assumed, 1);
	gf_live_forget(l, "p", true);
	gf_live_stats(l, &s);
	assert_int_equal(s.gpu_used_milli, 4000);
	assert_true(gf_live_schedule_next(l, &out, &d));
	assert_int_equal(d.result, GF_LIVE_PLACED);
	/* Node removed and re-added: the rebuild keeps the assumption. */
	gf_live_node_delete(l, "cpu-c");
	gf_live_stats(l, &s);
	assert_int_equal(s.gpu_used_milli, 11000);
	assert_int_equal(s.nodes, 2);
	char why[256];
	assert_int_equal(gf_live_check(l, why, sizeof(why)), GF_OK);
	gf_live_destroy(l);
}

static void test_bad_requests_and_memory(void **st)
{
	(void)st;
	gf_live *l = fleet();
	struct gf_k8s_pod out;
	struct gf_live_decision d;
	struct gf_k8s_pod p = mkpod("nine", "9", "", "", "\"nvidia.com/gpu\":\"9\"", "gpufleet");
	gf_live_pod_set(l, &p);
	assert_true(gf_live_schedule_next(l, &out, &d));
	assert_int_equal(d.result, GF_LIVE_UNSCHEDULABLE);
	assert_string_equal(d.message, "0/3 nodes are available: 3 too few GPUs on the node.");
	p = mkpod("zero", "0", "", "\"gpufleet.io/gpu-milli\":\"0\"", "", "gpufleet");
	gf_live_pod_set(l, &p);
	assert_true(gf_live_schedule_next(l, &out, &d));
	assert_int_equal(d.result, GF_LIVE_INVALID);
	assert_non_null(strstr(d.message, "invalid GPU request: gpufleet.io/gpu-milli must be 1..1000"));
	p = mkpod("model", "m", "", "\"gpufleet.io/gpu-model\":\"B200\"", "\"nvidia.com/gpu\":\"1\"", "gpufleet");
	gf_live_pod_set(l, &p);
	assert_true(gf_live_schedule_next(l, &out, &d));
	assert_string_equal(d.message, "0/3 nodes are available: 2 GPU model mismatch, 1 too few GPUs on the node.");
	/* Invalid pods stay parked on requeue. */
	assert_int_equal(gf_live_requeue_parked(l), 2);
	assert_true(gf_live_schedule_next(l, &out, &d));
	assert_true(gf_live_schedule_next(l, &out, &d));
	assert_false(gf_live_schedule_next(l, &out, &d));
	/* GPU memory: 40000 MiB fits an H100 (81559) at ceil(40000000/81559) = 491 milli...
	 * ...and A100 (40960) too; the smallest qualifying memory sets the milli. */
	p = mkpod("mem", "mem", "", "\"gpufleet.io/gpu-memory-mib\":\"40000\"", "", "gpufleet");
	gf_live_pod_set(l, &p);
	assert_true(gf_live_schedule_next(l, &out, &d));
	assert_int_equal(d.result, GF_LIVE_PLACED);
	assert_int_equal(d.milli, (40000 * 1000 + 40959) / 40960);
	assert_int_equal(d.mem_mib, 40000);
	p = mkpod("mem2", "mem2", "", "\"gpufleet.io/gpu-memory-mib\":\"60000\"", "", "gpufleet");
	gf_live_pod_set(l, &p);
	assert_true(gf_live_schedule_next(l, &out, &d));
	assert_int_equal(d.result, GF_LIVE_PLACED);
	assert_string_equal(d.node, "h100-a");
	assert_int_equal(d.milli, (60000 * 1000 + 81558) / 81559);
	p = mkpod("mem3", "mem3", "", "\"gpufleet.io/gpu-memory-mib\":\"90000\"", "", "gpufleet");
	gf_live_pod_set(l, &p);
	assert_true(gf_live_schedule_next(l, &out, &d));
	assert_int_equal(d.result, GF_LIVE_UNSCHEDULABLE);
	assert_non_null(strstr(d.message, "no GPU model with 90000 MiB per GPU"));
	/* Event dedupe: the same message within the period is not reported again. */
	assert_true(gf_live_should_report(l, "mem3", "m1", 1000.0, 300));
	assert_false(gf_live_should_report(l, "mem3", "m1", 1010.0, 300));
	assert_true(gf_live_should_report(l, "mem3", "m2", 1020.0, 300));
	assert_false(gf_live_should_report(l, "mem3", "m2", 1319.0, 300));
	assert_true(gf_live_should_report(l, "mem3", "m2", 1321.0, 300));
	assert_true(gf_live_should_report(l, "unknown-uid", "m2", 1321.0, 300));
	gf_live_destroy(l);
}

static void test_extender(void **st)
{
	(void)st;
	gf_live *l = fleet();
	struct gf_k8s_pod p = mkpod("e", "e", "", "", "\"nvidia.com/gpu\":\"5\"", "default-scheduler");
	const char *names[] = { "h100-a", "a100-b", "cpu-c", "ghost" };
	const char *why[4];
	char msg[256];
	int32_t ci[4];
	uint64_t ep, ep2;
	assert_int_equal(gf_live_resolve(l, names, NULL, 4, ci, &ep), GF_OK);
	assert_int_equal(gf_live_filter_at(l, &p, ep, ci, 4, why, msg, sizeof(msg)), GF_OK);
	assert_null(why[0]);
	assert_string_equal(why[1], "too few GPUs on the node");
	assert_string_equal(why[2], "too few GPUs on the node");
	assert_string_equal(why[3], "node not known to gpufleet");
	struct gf_k8s_pod q = mkpod("q", "q", "", "", "\"nvidia.com/gpu\":\"1\"", "default-scheduler");
	int64_t sc[4];
	assert_int_equal(gf_live_prioritize_at(l, &q, ep, ci, 4, 0, sc), GF_OK);
	for (int i = 0; i < 4; i++)
		assert_true(sc[i] >= 0 && sc[i] <= 10);
	assert_int_equal(sc[2], 0);
	assert_int_equal(sc[3], 0);
	assert_true(sc[0] == 10 || sc[1] == 10);
	struct gf_live_decision d;
	assert_int_equal(gf_live_assume_on(l, &p, "h100-a", &d), GF_OK);
	assert_int_equal(d.ngpus, 5);
	assert_int_equal(gf_live_assume_on(l, &p, "h100-a", &d), GF_EXISTS);
	struct gf_k8s_pod r = mkpod("r", "r", "", "", "\"nvidia.com/gpu\":\"4\"", "default-scheduler");
	assert_int_equal(gf_live_assume_on(l, &r, "h100-a", &d), GF_RANGE);
	assert_non_null(strstr(d.message, "Insufficient GPU"));
	struct gf_k8s_pod bad = mkpod("bad", "bad", "", "\"gpufleet.io/gpu-milli\":\"-1\"", "", "default-scheduler");
	assert_int_equal(gf_live_filter_at(l, &bad, ep, ci, 4, why, msg, sizeof(msg)), GF_INVAL);
	assert_non_null(strstr(msg, "must be 1..1000"));
	/* in parts (as the extender's helper thread does): the same answers as filter_at */
	struct gf_live_judge j;
	assert_int_equal(gf_live_judge_begin(l, &bad, &j, msg, sizeof(msg)), GF_INVAL);
	assert_int_equal(gf_live_judge_begin(l, &p, &j, msg, sizeof(msg)), GF_OK);
	assert_int_equal(j.epoch, ep);
	const char *why2[4];
	int32_t ci2[4];
	gf_live_judge_names(l, &j, names, NULL, 1, ci2, why2);
	gf_live_judge_names(l, &j, names + 1, NULL, 3, ci2 + 1, why2 + 1);
	assert_int_equal(gf_live_filter_at(l, &p, ep, ci, 4, why, msg, sizeof(msg)), GF_OK);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(ci2[i], ci[i]);
		if (why[i])
			assert_string_equal(why2[i], why[i]);
		else
			assert_null(why2[i]);
	}
	/* indices valid for one epoch; a node gone leaves the epoch (indices never move in place):
	 * its old index answers "not known", as its name does (the extender's memo holds old
	 * indices across a delete) */
	const size_t lens[] = { 6, 6, 5, 5 };
	assert_int_equal(gf_live_resolve(l, names, lens, 4, ci, &ep), GF_OK);
	assert_true(ci[0] >= 0 && ci[1] >= 0 && ci[2] >= 0 && ci[0] != ci[1]);
	assert_int_equal(ci[3], -1);
	assert_int_equal(gf_live_filter_at(l, &q, ep, ci, 4, why, msg, sizeof(msg)), GF_OK);
	assert_string_equal(why[2], "too few GPUs on the node");
	gf_live_node_delete(l, "cpu-c");
	assert_int_equal(gf_live_filter_at(l, &q, ep, ci, 4, why, msg, sizeof(msg)), GF_OK);
	assert_string_equal(why[2], "node not known to gpufleet"); /* the old index: a tombstone */
	assert_int_equal(gf_live_epoch(l, &ep2), GF_OK);
	assert_true(ep2 == ep);
	assert_int_equal(gf_live_resolve(l, names, lens, 4, ci, &ep), GF_OK);
	assert_int_equal(ep, ep2);
	assert_int_equal(ci[2], -1);
	assert_int_equal(gf_live_filter_at(l, &q, ep, ci, 4, why, msg, sizeof(msg)), GF_OK);
	assert_string_equal(why[2], "node not known to gpufleet");
	assert_int_equal(gf_live_prioritize_at(l, &q, ep, ci, 4, 0, sc), GF_OK);
	assert_int_equal(sc[2], 0);
	assert_true(sc[0] == 10 || sc[1] == 10);
	/* the state: the same until a bind (or unbind, or nodes coming and going) */
	uint64_t state = gf_live_state(l);
	assert_true(state != 0);
	int64_t sc_known[4];
	assert_true(sc[0] > 0 || sc[1] > 0); /* both fit q: the fit check can be skipped... */
	assert_int_equal(gf_live_prioritize_at(l, &q, ep, ci, 4, state, sc_known), GF_OK);
	for (int i = 0; i < 4; i++) /* ...and the scores are the same without it */
		assert_int_equal(sc_known[i], sc[i]);
	assert_int_equal(gf_live_state(l), state);
	struct gf_k8s_pod s1 = mkpod("s1", "s1", "", "", "\"nvidia.com/gpu\":\"1\"", "default-scheduler");
	assert_int_equal(gf_live_assume_on(l, &s1, "a100-b", &d), GF_OK);
	assert_true(gf_live_state(l) != state);
	gf_live_destroy(l);
}

/*
 * The extender's ranking, computed by hand.  Policy BestFit (policy/best_fit.c):
 *   score = floor(100 * (1 - d)),  d = 0.5 (cpu_free - cpu_q) / 128000 + 0.5 (gpu_free - gpu_q) / 8000
 * then prioritize maps the fitting nodes' scores to 0..10: (s - lo) * 10 / (hi - lo), integer.
 * Four 64-core H100 nodes, a pod asking 1 CPU and 1 GPU:
 *   n8 (8 free GPUs):        d = 0.5 * 63000/128000 + 0.5 * 7000/8000 = 0.68359375 -> 31
 *   n4 (4 free):             d = 0.24609375 + 0.1875                 = 0.43359375 -> 56
 *   n2 (2 free):             d = 0.24609375 + 0.0625                 = 0.30859375 -> 69
 *   n1 (8 GPUs, 7 taken by a bound pod asking 1 CPU: 63 cores, 1 GPU free):
 *                            d = 0.5 * 62000/128000 + 0                = 0.2421875  -> 75
 * lo 31, hi 75: n8 0, n4 250/44 = 5, n2 380/44 = 8, n1 10; a GPU-less node and an unknown
 * one 0.  The tightest node ranks first, in that order.
 */
static void test_extender_ranking(void **st)
{
	(void)st;
	gf_live *l;
	struct gf_live_opts o = { .policy = gf_policy_find("best-fit") };
	assert_non_null(o.policy);
	assert_int_equal(gf_live_create(&o, &l), GF_OK);
	const char *nn[] = { "n8", "n4", "n2", "n1" };
	const int ng[] = { 8, 4, 2, 8 };
	for (int i = 0; i < 4; i++) {
		struct gf_k8s_node n = mknode(nn[i], ng[i], "H100", 81559, false);
		gf_live_node_set(l, &n);
	}
	struct gf_k8s_node c = mknode("cpu-c", 0, "", 0, false);
	gf_live_node_set(l, &c);
	struct gf_k8s_pod b = mkpod("b7", "b7", "n1", "", "\"nvidia.com/gpu\":\"7\"", "default-scheduler");
	gf_live_pod_set(l, &b);
	/* the names in an order unrelated to the ranking */
	const char *names[] = { "n4", "cpu-c", "n1", "ghost", "n8", "n2" };
	const int64_t want[] = { 5, 0, 10, 0, 0, 8 };
	int32_t ci[6];
	uint64_t ep;
	int64_t sc[6];
	struct gf_k8s_pod q = mkpod("q", "q", "", "", "\"nvidia.com/gpu\":\"1\"", "default-scheduler");
	assert_int_equal(gf_live_resolve(l, names, NULL, 6, ci, &ep), GF_OK);
	assert_int_equal(gf_live_prioritize_at(l, &q, ep, ci, 6, 0, sc), GF_OK);
	for (int i = 0; i < 6; i++)
		if (sc[i] != want[i])
			fail_msg("%s scored %lld, want %lld", names[i], (long long)sc[i], (long long)want[i]);
	/* after a bind on n2 (1 GPU left, CPU 62 cores): n2 the tightest; recomputed
	 *   n2: d = 0.5 * 62000/128000 + 0.5 * 0/8000 = 0.2421875 -> 75, the same as n1 -> both 10 */
	struct gf_live_decision d;
	struct gf_k8s_pod s1 = mkpod("s1", "s1", "", "", "\"nvidia.com/gpu\":\"1\"", "default-scheduler");
	assert_int_equal(gf_live_assume_on(l, &s1, "n2", &d), GF_OK);
	const int64_t want2[] = { 5, 0, 10, 0, 0, 10 };
	assert_int_equal(gf_live_prioritize_at(l, &q, ep, ci, 6, 0, sc), GF_OK);
	for (int i = 0; i < 6; i++)
		if (sc[i] != want2[i])
			fail_msg("after the bind: %s scored %lld, want %lld", names[i], (long long)sc[i],
				 (long long)want2[i]);
	gf_live_destroy(l);
}

/*
 * A stale copy of a bound pod (a watch behind the list the new leader read on
 * taking over) arrives unbound: spec.nodeName is never unset, so the pod stays
 * bound and its GPUs stay taken; it does not go back into the queue.
 */
static void test_stale_unbound_copy(void **st)
{
	(void)st;
	gf_live *l = fleet();
	struct gf_k8s_pod p = mkpod("w", "w", "", "", "\"nvidia.com/gpu\":\"8\"", "gpufleet");
	struct gf_k8s_pod bound = mkpod("w", "w", "h100-a", "", "\"nvidia.com/gpu\":\"8\"", "gpufleet");
	gf_live_pod_set(l, &bound);
	struct gf_live_stats s;
	gf_live_stats(l, &s);
	assert_int_equal(s.pods_bound, 1);
	assert_int_equal(s.gpu_used_milli, 8000);
	gf_live_pod_set(l, &p); /* older, unbound */
	gf_live_stats(l, &s);
	assert_int_equal(s.pods_bound, 1);
	assert_int_equal(s.pods_queued, 0);
	assert_int_equal(s.gpu_used_milli, 8000);
	struct gf_k8s_pod out;
	struct gf_live_decision d;
	assert_false(gf_live_schedule_next(l, &out, &d));
	/* and another 8-GPU pod does not fit where w is */
	struct gf_k8s_pod x = mkpod("x", "x", "", "", "\"nvidia.com/gpu\":\"8\"", "gpufleet");
	gf_live_pod_set(l, &x);
	assert_true(gf_live_schedule_next(l, &out, &d));
	assert_int_equal(d.result, GF_LIVE_UNSCHEDULABLE);
	gf_live_pod_delete(l, "w");
	gf_live_stats(l, &s);
	assert_int_equal(s.gpu_used_milli, 0);
	gf_live_destroy(l);
}

static struct gf_k8s_node rawnode(const char *name, const char *labels, const char *spec)
{
	char json[2048];
	snprintf(json, sizeof(json),
		 "{\"metadata\":{\"name\":\"%s\",\"labels\":{\"nvidia.com/gpu.product\":\"H100\"%s}},"
		 "\"spec\":{%s},\"status\":{\"allocatable\":{\"cpu\":\"64\",\"memory\":\"512Gi\","
		 "\"nvidia.com/gpu\":\"8\"}}}", name, labels, spec);
	struct gf_k8s_node n;
	char err[256];
	if (gf_k8s_node_decode_text(json, strlen(json), &n, err, sizeof(err)))
		fail_msg("node: %s", err);
	return n;
}

static struct gf_k8s_pod rawpod(const char *name, const char *spec_extra)
{
	char json[2048];
	snprintf(json, sizeof(json),
		 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"t\",\"uid\":\"%s\"},"
		 "\"spec\":{\"schedulerName\":\"gpufleet\"%s,\"containers\":[{\"resources\":"
		 "{\"limits\":{\"nvidia.com/gpu\":\"1\"}}}]}}", name, name, spec_extra);
	struct gf_k8s_pod p;
	char err[256];
	if (gf_k8s_pod_decode_text(json, strlen(json), &p, err, sizeof(err)))
		fail_msg("pod: %s", err);
	return p;
}

/*
 * The served-model cache preference: two equal nodes, the second annotated
 * by the agent as having run llama-7b.  A pod labelled gpufleet.io/model:
 * llama-7b goes there; a pod of another model and a pod whose image no node
 * ran go where FGD alone puts them (the first); a pod whose image is in the
 * annotation goes to the second.  A later annotation change is picked up.
 */
#define SERVED_NODE \
	"{\"metadata\":{\"name\":\"%s\",\"labels\":{\"nvidia.com/gpu.product\":\"H100\"}%s}," \
	"\"status\":{\"allocatable\":{\"cpu\":\"64\",\"memory\":\"512Gi\",\"nvidia.com/gpu\":\"8\"}}}"

static void test_served_model_preference(void **st)
{
	(void)st;
	gf_live *l;
	struct gf_k8s_pod out;
	struct gf_live_decision d;
	char err[256];
	char json[1024];
	struct gf_k8s_node a, b;

	assert_int_equal(gf_live_create(NULL, &l), GF_OK);
	snprintf(json, sizeof(json), SERVED_NODE, "plain-a", "");
	assert_int_equal(gf_k8s_node_decode_text(json, strlen(json), &a, err, sizeof(err)), GF_OK);
	snprintf(json, sizeof(json), SERVED_NODE, "cached-b",
		 ",\"annotations\":{\"gpufleet.io/models-seen\":\"llama-7b,,registry.example/vllm:0.6\"}");
	assert_int_equal(gf_k8s_node_decode_text(json, strlen(json), &b, err, sizeof(err)), GF_OK);
	assert_true(gf_node_served(&b.spec, gf_served_model_key("llama-7b", 8)));
	assert_true(gf_node_served(&b.spec, gf_served_model_key("registry.example/vllm:0.6", 25)));
	assert_false(gf_node_served(&a.spec, gf_served_model_key("llama-7b", 8)));
	gf_live_node_set(l, &a);
	gf_live_node_set(l, &b);

	const char *pods[][3] = {
		/* name, metadata extra, expected node */
		{ "llama", ",\"labels\":{\"gpufleet.io/model\":\"llama-7b\"}", "cached-b" },
		{ "qwen", ",\"labels\":{\"gpufleet.io/model\":\"qwen-14b\"}", "plain-a" },
		{ "none", "", "plain-a" },
	};
	for (int i = 0; i < 3; i++) {
		struct gf_k8s_pod p;
		snprintf(json, sizeof(json),
			 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"t\",\"uid\":\"%s\"%s},"
			 "\"spec\":{\"schedulerName\":\"gpufleet\",\"containers\":[{\"image\":\"%s\","
			 "\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"8\"}}}]}}",
			 pods[i][0], pods[i][0], pods[i][1], i == 2 ? "busybox" : "registry.example/vllm:0.6");
		assert_int_equal(gf_k8s_pod_decode_text(json, strlen(json), &p, err, sizeof(err)), GF_OK);
		gf_live_pod_set(l, &p);
		assert_true(gf_live_schedule_next(l, &out, &d));
		assert_int_equal(d.result, GF_LIVE_PLACED);
		assert_string_equal(d.node, pods[i][2]);
		gf_live_forget(l, p.uid, false);	/* not bound: the nodes stay empty */
		gf_live_pod_delete(l, p.uid);
	}

	/* Unlabelled, the image is the identity: the annotation lists it. */
	struct gf_k8s_pod img;
	snprintf(json, sizeof(json),
		 "{\"metadata\":{\"name\":\"img\",\"namespace\":\"t\",\"uid\":\"img\"},"
		 "\"spec\":{\"schedulerName\":\"gpufleet\",\"containers\":[{\"image\":"
		 "\"registry.example/vllm:0.6\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"8\"}}}]}}");
	assert_int_equal(gf_k8s_pod_decode_text(json, strlen(json), &img, err, sizeof(err)), GF_OK);
	assert_int_equal(img.req.served_model, gf_served_model_key("registry.example/vllm:0.6", 25));
	gf_live_pod_set(l, &img);
	assert_true(gf_live_schedule_next(l, &out, &d));
	assert_string_equal(d.node, "cached-b");
	gf_live_forget(l, img.uid, false);
	gf_live_pod_delete(l, img.uid);

	/* The agent moves llama-7b to node a: the next llama pod follows. */
	snprintf(json, sizeof(json), SERVED_NODE, "plain-a",
		 ",\"annotations\":{\"gpufleet.io/models-seen\":\"llama-7b\"}");
	assert_int_equal(gf_k8s_node_decode_text(json, strlen(json), &a, err, sizeof(err)), GF_OK);
	snprintf(json, sizeof(json), SERVED_NODE, "cached-b", "");
	assert_int_equal(gf_k8s_node_decode_text(json, strlen(json), &b, err, sizeof(err)), GF_OK);
	gf_live_node_set(l, &a);
	gf_live_node_set(l, &b);
	struct gf_k8s_pod again;
	snprintf(json, sizeof(json),
		 "{\"metadata\":{\"name\":\"again\",\"namespace\":\"t\",\"uid\":\"again\","
		 "\"labels\":{\"gpufleet.io/model\":\"llama-7b\"}},\"spec\":{\"schedulerName\":\"gpufleet\","
		 "\"containers\":[{\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"1\"}}}]}}");
	assert_int_equal(gf_k8s_pod_decode_text(json, strlen(json), &again, err, sizeof(err)), GF_OK);
	gf_live_pod_set(l, &again);
	assert_true(gf_live_schedule_next(l, &out, &d));
	assert_string_equal(d.node, "plain-a");
	gf_live_destroy(l);
}

/* Cordon, taints and tolerations, node selector and required node affinity. */
static void test_constraints(void **st)
{
	(void)st;
	gf_live *l;
	assert_int_equal(gf_live_create(NULL, &l), GF_OK);
	struct gf_k8s_node ns[] = {
		rawnode("cordoned", ",\"zone\":\"a\"", "\"unschedulable\":true"),
		rawnode("tainted", ",\"zone\":\"a\"",
			"\"taints\":[{\"key\":\"dedicated\",\"value\":\"ml\",\"effect\":\"NoSchedule\"},"
			"{\"key\":\"soft\",\"effect\":\"PreferNoSchedule\"}]"),
		rawnode("zone-b", ",\"zone\":\"b\",\"rack\":\"7\"", ""),
	};
	for (int i = 0; i < 3; i++)
		gf_live_node_set(l, &ns[i]);
	assert_int_equal(ns[1].ntaints, 1); /* PreferNoSchedule does not filter */
	struct gf_k8s_pod out;
	struct gf_live_decision d;
	/* Plain pod: only zone-b admits it. */
	struct gf_k8s_pod p = rawpod("plain", "");
	gf_live_pod_set(l, &p);
	assert_true(gf_live_schedule_next(l, &out, &d));
	assert_int_equal(d.result, GF_LIVE_PLACED);
	assert_string_equal(d.node, "zone-b");
	/* Tolerating the taint, selecting zone a: the tainted node (cordoned is not tolerated). */
	p = rawpod("tol", ",\"nodeSelector\":{\"zone\":\"a\"},\"tolerations\":[{\"key\":\"dedicated\","
		      "\"operator\":\"Equal\",\"value\":\"ml\",\"effect\":\"NoSchedule\"}]");
	gf_live_pod_set(l, &p);
	assert_true(gf_live_schedule_next(l, &out, &d));
	assert_string_equal(d.node, "tainted");
	/* Tolerating everything + zone a: cordoned or tainted (unschedulable needs its own toleration). */
	p = rawpod("all", ",\"nodeSelector\":{\"zone\":\"a\"},\"tolerations\":[{\"operator\":\"Exists\"}]");
	gf_live_pod_set(l, &p);
	assert_true(gf_live_schedule_next(l, &out, &d));
	assert_int_equal(d.result, GF_LIVE_PLACED);
	/* Affinity: rack Gt 5 and zone NotIn [a]: zone-b. */
	p = rawpod("aff", ",\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
		      "{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"rack\",\"operator\":\"Gt\","
		      "\"values\":[\"5\"]},{\"key\":\"zone\",\"operator\":\"NotIn\",\"values\":[\"a\"]}]}]}}}");
	gf_live_pod_set(l, &p);
	assert_true(gf_live_schedule_next(l, &out, &d));
	assert_string_equal(d.node, "zone-b");
	/* Nowhere: the message names each node's reason, like kube-scheduler. */
	p = rawpod("none", ",\"nodeSelector\":{\"zone\":\"c\"}");
	gf_live_pod_set(l, &p);
	assert_true(gf_live_schedule_next(l, &out, &d));
	assert_int_equal(d.result, GF_LIVE_UNSCHEDULABLE);
	assert_string_equal(d.message, "0/3 nodes are available: 1 node(s) were unschedulable, "
				       "1 node(s) had untolerated taint, 1 node(s) didn't match Pod's node affinity/selector.");
	/* Nothing was bound to keep pods off nodes: the state is what the bound pods make it. */
	struct gf_live_stats s;
	gf_live_stats(l, &s);
	assert_int_equal(s.gpu_used_milli, 4000);
	char why[256];
	assert_int_equal(gf_live_check(l, why, sizeof(why)), GF_OK);
	/* A taint added later: no engine rebuild (same epoch), and the next decision sees it. */
	uint64_t ep1, ep2;
	assert_int_equal(gf_live_epoch(l, &ep1), GF_OK);
	(void)gf_live_take_freed(l);
	struct gf_k8s_node tb = rawnode("zone-b", ",\"zone\":\"b\",\"rack\":\"7\"",
					"\"taints\":[{\"key\":\"maint\",\"effect\":\"NoSchedule\"}]");
	gf_live_node_set(l, &tb);
	assert_true(gf_live_take_freed(l)); /* parked pods are looked at again */
	assert_int_equal(gf_live_epoch(l, &ep2), GF_OK);
	assert_true(ep1 == ep2);
	p = rawpod("late", "");
	gf_live_pod_set(l, &p);
	assert_true(gf_live_schedule_next(l, &out, &d));
	assert_int_equal(d.result, GF_LIVE_UNSCHEDULABLE);
	assert_non_null(strstr(d.message, "2 node(s) had untolerated taint"));
	/* and removed again: the parked pod goes to zone-b */
	gf_live_node_set(l, &ns[2]);
	assert_true(gf_live_take_freed(l));
	assert_int_equal(gf_live_requeue_parked(l), 2); /* "none" (still nowhere) and "late" */
	bool placed = false;
	while (gf_live_schedule_next(l, &out, &d))
		if (!strcmp(out.name, "late")) {
			assert_int_equal(d.result, GF_LIVE_PLACED);
			assert_string_equal(d.node, "zone-b");
			placed = true;
		}
	assert_true(placed);
	assert_int_equal(gf_live_epoch(l, &ep2), GF_OK);
	assert_true(ep1 == ep2);
	gf_live_destroy(l);
}

/* FGD's target workload is built from every pod, CPU-only ones too, as the simulator builds it. */
static void test_target_every_pod(void **st)
{
	(void)st;
	gf_live *l;
	assert_int_equal(gf_live_create(NULL, &l), GF_OK);
	struct gf_k8s_node n = mknode("a100", 8, "A100", 40960, false);
	gf_live_node_set(l, &n);
	/* bound by someone else: 3 one-GPU pods, 5 CPU-only pods (1 cpu, 1 Gi each) */
	struct gf_pod_spec specs[8];
	for (int i = 0; i < 8; i++) {
		char name[16];
		snprintf(name, sizeof(name), "b%d", i);
		struct gf_k8s_pod p = mkpod(name, name, "a100", "", i < 3 ? "\"nvidia.com/gpu\":\"1\"" : "",
					    "default-scheduler");
		gf_live_pod_set(l, &p);
		specs[i] = p.req;
	}
	struct gf_live_stats s;
	gf_live_stats(l, &s);
	/* the same node state, judged with the simulator's target (every pod) and with GPU pods only */
	struct gf_catalog cat;
	int model;
	assert_int_equal(gf_catalog_init(&cat), GF_OK);
	assert_int_equal(gf_catalog_model(&cat, "A100", 4, &model), GF_OK);
	uint16_t g[8] = { 0, 0, 0, 1000, 1000, 1000, 1000, 1000 };
	int64_t cpu_free = 64000 - 8 * 1000;
	struct gf_target all, gpu_only;
	assert_int_equal(gf_target_build(specs, 8, &cat, 95, &all), GF_OK);
	assert_int_equal(gf_target_build(specs, 3, &cat, 95, &gpu_only), GF_OK);
	double want = gf_frag_node(&all, model, cpu_free, g, 8);
	double gpu_rule = gf_frag_node(&gpu_only, model, cpu_free, g, 8);
	assert_true(want != gpu_rule); /* the two rules disagree here */
	assert_true(s.frag_milli == want);
	gf_target_release(&all);
	gf_target_release(&gpu_only);
	gf_catalog_release(&cat);
	gf_live_destroy(l);
}

/* A pod asking nothing at all still keeps off the nodes it may not use (the mask, not full-looking nodes). */
static void test_empty_pod_masked(void **st)
{
	(void)st;
	gf_live *l;
	assert_int_equal(gf_live_create(NULL, &l), GF_OK);
	struct gf_k8s_node n = rawnode("cordoned", "", "\"unschedulable\":true");
	gf_live_node_set(l, &n);
	const char *json = "{\"metadata\":{\"name\":\"empty\",\"namespace\":\"t\",\"uid\":\"empty\"},"
			   "\"spec\":{\"schedulerName\":\"gpufleet\",\"containers\":[{}]}}";
	struct gf_k8s_pod p, out;
	struct gf_live_decision d;
	char err[256];
	assert_int_equal(gf_k8s_pod_decode_text(json, strlen(json), &p, err, sizeof(err)), GF_OK);
	gf_live_pod_set(l, &p);
	assert_true(gf_live_schedule_next(l, &out, &d));
	assert_int_equal(d.result, GF_LIVE_UNSCHEDULABLE);
	assert_string_equal(d.message, "0/1 nodes are available: 1 node(s) were unschedulable.");
	n.unschedulable = false;
	gf_live_node_set(l, &n);
	assert_int_equal(gf_live_requeue_parked(l), 1);
	assert_true(gf_live_schedule_next(l, &out, &d));
	assert_int_equal(d.result, GF_LIVE_PLACED);
	gf_live_destroy(l);
}

/* The node's allocatable pod count is a limit like kube-scheduler's "Too many pods". */
static void test_pod_count_limit(void **st)
{
	(void)st;
	gf_live *l;
	assert_int_equal(gf_live_create(NULL, &l), GF_OK);
	const char *json = "{\"metadata\":{\"name\":\"small\"},\"status\":{\"allocatable\":{\"cpu\":\"64\","
			   "\"memory\":\"64Gi\",\"pods\":\"2\",\"nvidia.com/gpu\":\"8\"}}}";
	struct gf_k8s_node n;
	char err[256];
	assert_int_equal(gf_k8s_node_decode_text(json, strlen(json), &n, err, sizeof(err)), GF_OK);
	assert_int_equal(n.max_pods, 2);
	gf_live_node_set(l, &n);
	struct gf_k8s_pod out;
	struct gf_live_decision d;
	for (int i = 0; i < 3; i++) {
		char name[16];
		snprintf(name, sizeof(name), "p%d", i);
		struct gf_k8s_pod p = rawpod(name, "");
		gf_live_pod_set(l, &p);
		assert_true(gf_live_schedule_next(l, &out, &d));
		if (i < 2) {
			assert_int_equal(d.result, GF_LIVE_PLACED);
		} else {
			assert_int_equal(d.result, GF_LIVE_UNSCHEDULABLE);
			assert_string_equal(d.message, "0/1 nodes are available: 1 Too many pods.");
		}
	}
	gf_live_destroy(l);
}

/* One 8-GPU node, the queue policy given; pods a (4 GPUs, bound), b (8), c (1), then d (1, priority 10). */
static void queue_policy_case(int qp, bool *c_placed_first, bool *d_before_c)
{
	gf_live *l;
	struct gf_live_opts o = { .queue_policy = qp };
	assert_int_equal(gf_live_create(&o, &l), GF_OK);
	struct gf_k8s_node n = mknode("n8", 8, "H100", 81559, false);
	gf_live_node_set(l, &n);
	struct gf_k8s_pod a = mkpod("a", "ua", "", "", "\"nvidia.com/gpu\":\"4\"", "gpufleet");
	gf_live_pod_set(l, &a);
	struct gf_k8s_pod bound[8];
	size_t nb = 0;
	struct gf_live_decision last;
	drain(l, bound, &nb, &last);
	assert_int_equal(nb, 1);
	struct gf_k8s_pod b = mkpod("b", "ub", "", "", "\"nvidia.com/gpu\":\"8\"", "gpufleet");
	struct gf_k8s_pod c = mkpod("c", "uc", "", "", "\"nvidia.com/gpu\":\"1\"", "gpufleet");
	gf_live_pod_set(l, &b);
	gf_live_pod_set(l, &c);
	nb = 0;
	drain(l, bound, &nb, &last);
	*c_placed_first = nb == 1 && !strcmp(bound[0].uid, "uc");
	if (!*c_placed_first) {
		assert_int_equal(nb, 0);
		assert_non_null(strstr(last.message, "blocked by the queue head")); /* c's decision */
	}
	/* d (priority 10) arrives; a ends: b takes the node (strict) ... */
	struct gf_k8s_pod dp = mkpod("d", "ud", "", "", "\"nvidia.com/gpu\":\"1\"", "gpufleet");
	dp.req.priority = 10;
	gf_live_pod_set(l, &dp);
	gf_live_pod_delete(l, "ua");
	size_t from = nb;
	for (int i = 0; i < 40; i++) { /* the daemon's loop: requeue, decide (virtual seconds) */
		gf_live_requeue_due(l, 20.0 * i);
		drain(l, bound, &nb, NULL);
	}
	/* the first pod bound once a's room is free */
	*d_before_c = nb > from && !strcmp(bound[from].uid, "ud");
	char why[256];
	assert_int_equal(gf_live_check(l, why, sizeof(why)), GF_OK);
	gf_live_destroy(l);
}

static void test_queue_policy_live(void **st)
{
	(void)st;
	bool c_first, d_first;
	/* kube (default): c skips ahead of b; strict FIFO: c waits behind b, and d (priority 10,
	 * last to arrive) is the queue's head once a's room is free: it goes first, b blocks c */
	queue_policy_case(0, &c_first, &d_first);
	assert_true(c_first);
	enum gf_queue_policy qp;
	assert_true(gf_queue_policy_find("strict-fifo", &qp));
	queue_policy_case((int)qp, &c_first, &d_first);
	assert_false(c_first);
	assert_true(d_first);
}

/* A pod asking for gpus whole GPUs with spec.activeDeadlineSeconds `deadline` (absent when 0). */
static struct gf_k8s_pod deadline_pod(const char *name, int gpus, int64_t deadline)
{
	char json[1024], ads[64] = "";
	if (deadline)
		snprintf(ads, sizeof(ads), "\"activeDeadlineSeconds\":%lld,", (long long)deadline);
	snprintf(json, sizeof(json),
		 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"t\",\"uid\":\"u%s\",\"resourceVersion\":\"1\"},"
		 "\"spec\":{%s\"schedulerName\":\"gpufleet\",\"containers\":[{\"resources\":{\"limits\":"
		 "{\"nvidia.com/gpu\":\"%d\"}}}]}}", name, name, ads, gpus);
	struct gf_k8s_pod p;
	char err[256];
	if (gf_k8s_pod_decode_text(json, strlen(json), &p, err, sizeof(err)))
		fail_msg("pod: %s", err);
	assert_int_equal(p.deadline_s, deadline);
	return p;
}

/*
 * One backfill cycle on a node of 2 GPUs: a (1 GPU) starts, b (2 GPUs) must
 * wait for a's end, c (1 GPU) may take the free GPU only if it ends before
 * that: a's and c's spec.activeDeadlineSeconds are the loop's estimates.
 * Returns whether c was placed; c_why: c's message.
 */
static bool deadline_case(int64_t a_s, int64_t c_s, char *c_why, size_t len)
{
	enum gf_queue_policy qp;
	assert_true(gf_queue_policy_find("backfill", &qp));
	struct gf_live_opts o = { .queue_policy = (int)qp };
	gf_live *l;
	assert_int_equal(gf_live_create(&o, &l), GF_OK);
	struct gf_k8s_node n = mknode("n2", 2, "H100", 81559, false);
	gf_live_node_set(l, &n);
	struct gf_k8s_pod a = deadline_pod("a", 1, a_s), b = deadline_pod("b", 2, 0), c = deadline_pod("c", 1, c_s);
	gf_live_pod_set(l, &a);
	gf_live_pod_set(l, &b);
	gf_live_pod_set(l, &c);
	struct gf_k8s_pod p;
	struct gf_live_decision d;
	bool a_placed = false, c_placed = false;
	c_why[0] = '\0';
	while (gf_live_schedule_next(l, &p, &d)) {
		if (!strcmp(p.name, "a"))
			a_placed = d.result == GF_LIVE_PLACED;
		if (!strcmp(p.name, "b"))
			assert_int_equal(d.result, GF_LIVE_UNSCHEDULABLE);
		if (!strcmp(p.name, "c")) {
			c_placed = d.result == GF_LIVE_PLACED;
			snprintf(c_why, len, "%s", d.message);
		}
	}
	assert_true(a_placed);
	gf_live_destroy(l);
	return c_placed;
}

/* spec.activeDeadlineSeconds is the live loop job's estimate (issue 12): backfill plans from it. */
static void test_deadline_estimate(void **st)
{
	(void)st;
	char why[512];
	/* c ends (50 s) before a's end (100 s), where b's reservation lies: it backfills */
	assert_true(deadline_case(100, 50, why, sizeof(why)));
	/* c could run past a's end: it would delay b */
	assert_false(deadline_case(100, 500, why, sizeof(why)));
	assert_non_null(strstr(why, "would delay a reservation"));
	/* c gives no deadline: its run time is unknown, it waits too */
	assert_false(deadline_case(100, 0, why, sizeof(why)));
	assert_non_null(strstr(why, "would delay a reservation"));
	/* the codec refuses what the API server would: named field, whole seconds >= 1 */
	const char *bad[] = { "0", "-5", "1.5", "\"60\"" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char json[512], err[256] = "";
		struct gf_k8s_pod p;
		snprintf(json, sizeof(json), "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"activeDeadlineSeconds\":%s,"
			 "\"containers\":[]}}", bad[i]);
		assert_int_not_equal(gf_k8s_pod_decode_text(json, strlen(json), &p, err, sizeof(err)), GF_OK);
		assert_non_null(strstr(err, "activeDeadlineSeconds"));
	}
}

static int64_t gpus_used(gf_live *l);

/* The note of the pod named `name` among notes[0..n); fails if absent. */
static const struct gf_live_note *note_of(const struct gf_live_note *notes, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(notes[i].name, name))
			return &notes[i];
	fail_msg("no note for %s", name);
	return NULL;
}

/*
 * Bound pods stay in the live loop as running jobs (issue 12), so their ends
 * count in later cycles: on 2 GPUs, a (1 GPU, deadline 100 s) is placed at
 * t=0 and bound; at t=10 b (2 GPUs) arrives and waits for a's end: its note
 * gives the estimated start 100; at t=20 c (1 GPU, deadline c_s) arrives, in
 * a cycle after a's: it backfills only if it ends before 100.  Before, a
 * left the loop when bound and neither b's estimate nor c's backfill could
 * use its end.  Returns whether c was placed.
 */
static bool running_case(int64_t c_s, double *b_start)
{
	enum gf_queue_policy qp;
	assert_true(gf_queue_policy_find("backfill", &qp));
	struct gf_live_opts o = { .queue_policy = (int)qp };
	gf_live *l;
	assert_int_equal(gf_live_create(&o, &l), GF_OK);
	struct gf_k8s_node n = mknode("n2", 2, "H100", 81559, false);
	gf_live_node_set(l, &n);
	struct gf_k8s_pod a = deadline_pod("a", 1, 100), b = deadline_pod("b", 2, 0), c = deadline_pod("c", 1, c_s);
	struct gf_k8s_pod got[4];
	size_t nb = 0;
	gf_live_pod_set(l, &a);
	assert_int_equal(drain(l, got, &nb, NULL), 1);
	assert_int_equal(nb, 1);
	gf_live_requeue_due(l, 10.0);
	gf_live_pod_set(l, &b);
	struct gf_live_decision last;
	assert_int_equal(drain(l, got, &nb, &last), 1);
	assert_int_equal(last.result, GF_LIVE_UNSCHEDULABLE);
	struct gf_live_note notes[4];
	size_t nn = gf_live_notes_due(l, notes, 4);
	assert_int_equal(nn, 1);
	*b_start = note_of(notes, nn, "b")->start;
	gf_live_requeue_due(l, 20.0);
	gf_live_pod_set(l, &c);
	assert_int_equal(drain(l, got, &nb, &last), 1);
	gf_live_destroy(l);
	return nb == 2 && !strcmp(got[1].name, "c");
}

/*
 * Not kube: a pod whose binding failed goes back into the loop's queue at
 * its place (gf_loop_unbind), ahead of a pod that came after it and waits
 * for the same room; its room is free at once.
 */
static void test_forget_keeps_queue_place(void **st)
{
	(void)st;
	enum gf_queue_policy qp;
	assert_true(gf_queue_policy_find("backfill", &qp));
	struct gf_live_opts o = { .queue_policy = (int)qp };
	gf_live *l;
	assert_int_equal(gf_live_create(&o, &l), GF_OK);
	struct gf_k8s_node n = mknode("n1", 1, "H100", 81559, false);
	gf_live_node_set(l, &n);
	gf_live_requeue_due(l, 1.0);
	struct gf_k8s_pod a = deadline_pod("a", 1, 0), b = deadline_pod("b", 1, 0), p;
	struct gf_live_decision d;
	gf_live_pod_set(l, &a);
	assert_true(gf_live_schedule_next(l, &p, &d));
	assert_int_equal(d.result, GF_LIVE_PLACED);
	assert_string_equal(p.name, "a");
	gf_live_requeue_due(l, 2.0);
	gf_live_pod_set(l, &b);
	assert_true(gf_live_schedule_next(l, &p, &d));
	assert_string_equal(p.name, "b");
	assert_int_equal(d.result, GF_LIVE_UNSCHEDULABLE); /* waits in the loop's queue */
	assert_false(gf_live_schedule_next(l, &p, &d));
	gf_live_forget(l, a.uid, false); /* a's binding failed */
	assert_int_equal(gpus_used(l), 0);
	gf_live_requeue_due(l, 3.0);
	assert_true(gf_live_schedule_next(l, &p, &d));
	assert_int_equal(d.result, GF_LIVE_PLACED);
	assert_string_equal(p.name, "a"); /* its place kept: ahead of b */
	char why[256];
	assert_int_equal(gf_live_check(l, why, sizeof(why)), GF_OK);
	gf_live_destroy(l);
}

/*
 * kube mode too: a pod whose binding failed goes back to the loop's queue at
 * its place (gf_loop_unbind), ahead of a pod that came after it, instead of
 * waiting out a backoff while the later pod takes its room.
 */
static void test_forget_keeps_queue_place_kube(void **st)
{
	(void)st;
	/* requeue: a binding to retry at once (scheduler.c: a transient error, a lost lease) */
	gf_live *l;
	assert_int_equal(gf_live_create(NULL, &l), GF_OK);
	struct gf_k8s_node n = mknode("n1", 1, "H100", 81559, false);
	gf_live_node_set(l, &n);
	gf_live_requeue_due(l, 1.0);
	struct gf_k8s_pod a = deadline_pod("a", 1, 0), b = deadline_pod("b", 1, 0), p;
	struct gf_live_decision d;
	gf_live_pod_set(l, &a);
	assert_true(gf_live_schedule_next(l, &p, &d));
	assert_int_equal(d.result, GF_LIVE_PLACED);
	assert_string_equal(p.name, "a");
	assert_false(gf_live_schedule_next(l, &p, &d));
	gf_live_forget(l, a.uid, true); /* a's binding failed, to be retried */
	assert_int_equal(gpus_used(l), 0);
	gf_live_requeue_due(l, 1.5);
	gf_live_pod_set(l, &b);
	assert_true(gf_live_schedule_next(l, &p, &d));
	assert_string_equal(p.name, "a"); /* its place kept: ahead of b */
	assert_int_equal(d.result, GF_LIVE_PLACED);
	assert_true(gf_live_schedule_next(l, &p, &d));
	assert_string_equal(p.name, "b");
	assert_int_equal(d.result, GF_LIVE_UNSCHEDULABLE);
	assert_int_equal(gpus_used(l), 1);
	char why[256];
	assert_int_equal(gf_live_check(l, why, sizeof(why)), GF_OK);
	gf_live_destroy(l);
}

/*
 * Kube mode, a binding the API refused (not to be retried at once): the
 * pod backs off as kube-scheduler's backoff queue holds it (1 s after the
 * first failure), so the cycles meanwhile do not bind it again and again;
 * b gets the node; after the backoff a is tried again.
 */
/*
 * Backfill, a binding the API refused: the job keeps its place in the
 * loop's queue but is not tried (so not bound again) until the pod's
 * backoff ends; then it is placed again.
 */
static void test_refused_bind_backs_off_loop(void **st)
{
	(void)st;
	enum gf_queue_policy qp;
	assert_true(gf_queue_policy_find("backfill", &qp));
	struct gf_live_opts o = { .queue_policy = (int)qp };
	gf_live *l;
	assert_int_equal(gf_live_create(&o, &l), GF_OK);
	struct gf_k8s_node n = mknode("n1", 1, "H100", 81559, false);
	gf_live_node_set(l, &n);
	gf_live_requeue_due(l, 1.0);
	struct gf_k8s_pod a = deadline_pod("a", 1, 0), p;
	struct gf_live_decision d;
	gf_live_pod_set(l, &a);
	assert_true(gf_live_schedule_next(l, &p, &d));
	assert_string_equal(p.name, "a");
	assert_int_equal(d.result, GF_LIVE_PLACED);
	gf_live_forget(l, a.uid, false); /* refused */
	for (double t = 1.1; t < 1.95; t += 0.2) {
		gf_live_requeue_due(l, t);
		assert_false(gf_live_schedule_next(l, &p, &d)); /* backing off: not bound again */
	}
	gf_live_requeue_due(l, 2.1);
	assert_true(gf_live_schedule_next(l, &p, &d));
	assert_string_equal(p.name, "a");
	assert_int_equal(d.result, GF_LIVE_PLACED);
	assert_int_equal(gpus_used(l), 1);
	char why[256];
	assert_int_equal(gf_live_check(l, why, sizeof(why)), GF_OK);
	gf_live_destroy(l);
}

static void test_refused_bind_backs_off_kube(void **st)
{
	(void)st;
	gf_live *l;
	assert_int_equal(gf_live_create(NULL, &l), GF_OK);
	struct gf_k8s_node n = mknode("n1", 1, "H100", 81559, false);
	gf_live_node_set(l, &n);
	gf_live_requeue_due(l, 1.0);
	struct gf_k8s_pod a = deadline_pod("a", 1, 0), b = deadline_pod("b", 1, 0), p;
	struct gf_live_decision d;
	gf_live_pod_set(l, &a);
	assert_true(gf_live_schedule_next(l, &p, &d));
	assert_string_equal(p.name, "a");
	assert_int_equal(d.result, GF_LIVE_PLACED);
	gf_live_forget(l, a.uid, false); /* refused */
	gf_live_requeue_due(l, 1.2);
	assert_false(gf_live_schedule_next(l, &p, &d)); /* backing off: not bound again */
	gf_live_pod_set(l, &b);
	gf_live_requeue_due(l, 1.5);
	assert_true(gf_live_schedule_next(l, &p, &d));
	assert_string_equal(p.name, "b"); /* skips ahead of a, which backs off */
	assert_int_equal(d.result, GF_LIVE_PLACED);
	assert_false(gf_live_schedule_next(l, &p, &d));
	gf_live_requeue_due(l, 2.5); /* a's backoff is over: tried at its place, b holds the GPU */
	assert_true(gf_live_schedule_next(l, &p, &d));
	assert_string_equal(p.name, "a");
	assert_int_equal(d.result, GF_LIVE_UNSCHEDULABLE);
	assert_false(gf_live_schedule_next(l, &p, &d));
	gf_live_pod_delete(l, b.uid);
	gf_live_requeue_due(l, 5.0); /* the GPU freed, the second backoff (2 s) over: placed */
	assert_true(gf_live_schedule_next(l, &p, &d));
	assert_string_equal(p.name, "a");
	assert_int_equal(d.result, GF_LIVE_PLACED);
	char why[256];
	assert_int_equal(gf_live_check(l, why, sizeof(why)), GF_OK);
	gf_live_destroy(l);
}

/*
 * Not kube: the extender binds a pod that waits in the loop's queue (the
 * node freed, before the next cycle): the pod leaves the loop's queue, so a
 * node that joins later does not get it a second time.
 */
static void test_extender_binds_queued_pod(void **st)
{
	(void)st;
	enum gf_queue_policy qp;
	assert_true(gf_queue_policy_find("backfill", &qp));
	struct gf_live_opts o = { .queue_policy = (int)qp };
	gf_live *l;
	assert_int_equal(gf_live_create(&o, &l), GF_OK);
	struct gf_k8s_node n1 = mknode("n1", 1, "H100", 81559, false);
	gf_live_node_set(l, &n1);
	gf_live_requeue_due(l, 1.0);
	struct gf_k8s_pod a = deadline_pod("a", 1, 0), b = deadline_pod("b", 1, 0);
	struct gf_live_decision d;
	gf_live_pod_set(l, &a);
	assert_int_equal(drain(l, NULL, NULL, NULL), 1);
	gf_live_requeue_due(l, 2.0);
	gf_live_pod_set(l, &b);
	assert_int_equal(drain(l, NULL, NULL, &d), 1);
	assert_int_equal(d.result, GF_LIVE_UNSCHEDULABLE); /* b waits in the loop's queue */
	gf_live_pod_delete(l, a.uid);
	assert_int_equal(gf_live_assume_on(l, &b, "n1", &d), GF_OK);
	assert_int_equal(gpus_used(l), 1);
	struct gf_k8s_node n2 = mknode("n2", 1, "H100", 81559, false);
	gf_live_node_set(l, &n2);
	gf_live_requeue_due(l, 3.0);
	assert_int_equal(drain(l, NULL, NULL, NULL), 0); /* no second placement of b */
	assert_int_equal(gpus_used(l), 1);
	struct gf_live_stats s;
	gf_live_stats(l, &s);
	assert_int_equal(s.running_pods, 1);
	char why[256];
	assert_int_equal(gf_live_check(l, why, sizeof(why)), GF_OK);
	gf_live_destroy(l);
}

static void test_running_jobs(void **st)
{
	(void)st;
	double b_start = -1;
	/* c ends at 70, before b's reservation at 100: it backfills, a cycle after a was bound */
	assert_true(running_case(50, &b_start));
	assert_true(b_start >= 99.0 && b_start <= 101.0);
	/* c would run to 520: it waits for b */
	assert_false(running_case(500, &b_start));
	assert_true(b_start >= 99.0 && b_start <= 101.0);
	/* without a deadline c's end is unknown: it waits too */
	assert_false(running_case(0, &b_start));

	/* A pod bound by someone else enters the loop where it is (gf_loop_place_at), its deadline
	 * counted from when it was seen; a rebuild (a node added) re-enters it with the same end. */
	enum gf_queue_policy qp;
	assert_true(gf_queue_policy_find("backfill", &qp));
	struct gf_live_opts o = { .queue_policy = (int)qp };
	gf_live *l;
	assert_int_equal(gf_live_create(&o, &l), GF_OK);
	struct gf_k8s_node n = mknode("n2", 2, "H100", 81559, false);
	gf_live_node_set(l, &n);
	gf_live_requeue_due(l, 5.0);
	struct gf_k8s_pod x = deadline_pod("x", 1, 200);
	snprintf(x.node, sizeof(x.node), "n2");
	snprintf(x.scheduler, sizeof(x.scheduler), "default-scheduler");
	gf_live_pod_set(l, &x);
	assert_int_equal(gpus_used(l), 1);
	gf_live_requeue_due(l, 10.0);
	struct gf_k8s_pod b = deadline_pod("b", 2, 0);
	gf_live_pod_set(l, &b);
	assert_int_equal(drain(l, NULL, NULL, NULL), 1);
	struct gf_live_note notes[4];
	size_t nn = gf_live_notes_due(l, notes, 4);
	assert_int_equal(nn, 1);
	assert_true(notes[0].start >= 204.0 && notes[0].start <= 206.0);
	gf_live_requeue_due(l, 60.0);
	struct gf_k8s_node cpu = mknode("cpu", 0, "", 0, false);
	gf_live_node_set(l, &cpu); /* the engine is rebuilt, the loop made again */
	drain(l, NULL, NULL, NULL);
	nn = gf_live_notes_due(l, notes, 4);
	for (size_t i = 0; i < nn; i++) /* due again only if it moved by more than a minute */
		assert_true(notes[i].start >= 204.0 && notes[i].start <= 206.0);
	assert_int_equal(gpus_used(l), 1);
	/* x ends: b starts in the next cycle */
	gf_live_pod_delete(l, x.uid);
	gf_live_requeue_due(l, 61.0);
	struct gf_k8s_pod got[2];
	size_t nb = 0;
	drain(l, got, &nb, NULL);
	assert_int_equal(nb, 1);
	assert_string_equal(got[0].name, "b");
	assert_int_equal(gpus_used(l), 2);
	char why[256];
	assert_int_equal(gf_live_check(l, why, sizeof(why)), GF_OK);
	gf_live_destroy(l);
}

/* A pod asking for gpus whole GPUs at spec.priority prio (preemptionPolicy: Never when never). */
static struct gf_k8s_pod prio_pod(const char *name, int gpus, int prio, bool never)
{
	char json[1024];
	snprintf(json, sizeof(json),
		 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"t\",\"uid\":\"u%s\",\"resourceVersion\":\"1\"},"
		 "\"spec\":{\"priority\":%d,%s\"schedulerName\":\"gpufleet\",\"containers\":[{\"resources\":"
		 "{\"limits\":{\"nvidia.com/gpu\":\"%d\"}}}]}}", name, name, prio,
		 never ? "\"preemptionPolicy\":\"Never\"," : "", gpus);
	struct gf_k8s_pod p;
	char err[256];
	if (gf_k8s_pod_decode_text(json, strlen(json), &p, err, sizeof(err)))
		fail_msg("pod: %s", err);
	return p;
}

/* Decisions until none: the last one for `name` into *d (result -1 if none); placed ones echoed bound. */
static void decide_echo(gf_live *l, const char *name, struct gf_live_decision *d)
{
	struct gf_k8s_pod p;
	struct gf_live_decision x;
	d->result = (enum gf_live_result)-1;
	while (gf_live_schedule_next(l, &p, &x)) {
		if (!strcmp(p.name, name))
			*d = x;
		if (x.result == GF_LIVE_PLACED) {
			struct gf_k8s_pod b = bound_copy(&p, &x);
			gf_live_pod_set(l, &b);
		}
	}
}

/*
 * Preemption live (issue 12): two 2-GPU nodes filled by pods of priority 5
 * (n0) and 1 (n1); the engine chooses the cheapest victims, the preemptor
 * is held (NOMINATED, its room its own) until they are gone, then PLACED;
 * preemptionPolicy: Never evicts nobody; a wait that runs out gives the
 * room back to the victims and tries the preemptor again.
 */
static void test_preemption_live(void **st)
{
	(void)st;
	enum gf_queue_policy qp;
	assert_true(gf_queue_policy_find("best-effort-fifo", &qp));
	struct gf_live_opts o = { .queue_policy = (int)qp, .preemption = true, .preempt_wait_s = 30 };
	gf_live *l;
	assert_int_equal(gf_live_create(&o, &l), GF_OK);
	struct gf_k8s_node n0 = mknode("n0", 2, "H100", 81559, false), n1 = mknode("n1", 2, "H100", 81559, false);
	gf_live_node_set(l, &n0);
	gf_live_node_set(l, &n1);
	/* n0: two pods of priority 5; n1: two of priority 1 (the cheaper victims) */
	struct gf_k8s_pod lo[4] = { prio_pod("mid0", 1, 5, false), prio_pod("mid1", 1, 5, false),
				    prio_pod("low0", 1, 1, false), prio_pod("low1", 1, 1, false) };
	struct gf_live_decision d;
	for (int i = 0; i < 4; i++) {
		gf_live_pod_set(l, &lo[i]);
		decide_echo(l, lo[i].name, &d);
		assert_int_equal(d.result, GF_LIVE_PLACED);
	}
	assert_int_equal(gpus_used(l), 4);
	/* a Never pod of priority 100 waits and evicts nobody */
	struct gf_k8s_pod nv = prio_pod("never", 2, 100, true);
	gf_live_requeue_due(l, 1.0);
	gf_live_pod_set(l, &nv);
	decide_echo(l, "never", &d);
	assert_int_equal(d.result, GF_LIVE_UNSCHEDULABLE);
	struct gf_live_eviction ev[8];
	assert_int_equal(gf_live_evictions(l, ev, 8), 0);
	gf_live_pod_delete(l, nv.uid);
	/* a 2-GPU pod of priority 10: the cheapest victims are low0 and low1, on one node */
	struct gf_k8s_pod hi = prio_pod("hi", 2, 10, false);
	gf_live_requeue_due(l, 2.0);
	gf_live_pod_set(l, &hi);
	decide_echo(l, "hi", &d);
	assert_int_equal(d.result, GF_LIVE_NOMINATED);
	assert_string_equal(d.node, "n1");
	size_t ne = gf_live_evictions(l, ev, 8);
	assert_int_equal(ne, 2);
	for (size_t i = 0; i < ne; i++) {
		assert_true(!strcmp(ev[i].name, "low0") || !strcmp(ev[i].name, "low1"));
		assert_string_equal(ev[i].node, "n1");
		assert_string_equal(ev[i].by_name, "hi");
	}
	assert_int_equal(gf_live_evictions(l, ev, 8), 0); /* each once */
	assert_int_equal(gpus_used(l), 4); /* mid0, mid1 and hi's held room: nothing double-booked */
	/* one victim gone: still held; both gone: placed */
	gf_live_pod_delete(l, "ulow0");
	decide_echo(l, "hi", &d);
	assert_int_equal((int)d.result, -1);
	gf_live_pod_delete(l, "ulow1");
	decide_echo(l, "hi", &d);
	assert_int_equal(d.result, GF_LIVE_PLACED);
	assert_string_equal(d.node, "n1");
	assert_int_equal(gpus_used(l), 4);
	char why[256];
	assert_int_equal(gf_live_check(l, why, sizeof(why)), GF_OK);

	/* hi2 (priority 10) evicts mid0 and mid1 on n0; they do not go within the wait: hi2 is
	 * released, tried again, and the room is theirs again */
	struct gf_k8s_pod hi2 = prio_pod("hi2", 2, 10, false);
	gf_live_requeue_due(l, 3.0);
	gf_live_pod_set(l, &hi2);
	decide_echo(l, "hi2", &d);
	assert_int_equal(d.result, GF_LIVE_NOMINATED);
	assert_string_equal(d.node, "n0");
	assert_int_equal(gf_live_evictions(l, ev, 8), 2);
	/* the extender may not bind on n0 while mid0 and mid1 are still there */
	struct gf_k8s_pod ext = mkpod("ext", "uext", "", "", "\"nvidia.com/gpu\":\"1\"", "default-scheduler");
	struct gf_live_decision xd;
	assert_int_equal(gf_live_assume_on(l, &ext, "n0", &xd), GF_RANGE);
	assert_non_null(strstr(xd.message, "still terminating"));
	gf_live_requeue_due(l, 40.0);
	struct gf_k8s_pod p;
	assert_true(gf_live_schedule_next(l, &p, &d));
	assert_string_equal(p.name, "hi2");
	assert_int_equal(d.result, GF_LIVE_UNSCHEDULABLE);
	assert_non_null(strstr(d.message, "still there after 30 s"));
	assert_int_equal(gpus_used(l), 4); /* mid0, mid1 accounted again, hi */
	assert_int_equal(gf_live_check(l, why, sizeof(why)), GF_OK);

	/* hi2 tries again: held on n0 again (mid0 and mid1 asked to go again); then top (priority
	 * 100) takes the cheapest running pod of priority 10, hi2, the later started: hi2 was never
	 * bound, so it is released (back to the queue), not evicted */
	gf_live_requeue_due(l, 41.0);
	decide_echo(l, "hi2", &d);
	assert_int_equal(d.result, GF_LIVE_NOMINATED);
	assert_int_equal(gf_live_evictions(l, ev, 8), 2);
	struct gf_k8s_pod top = prio_pod("top", 2, 100, false);
	gf_live_requeue_due(l, 42.0);
	gf_live_pod_set(l, &top);
	decide_echo(l, "top", &d);
	assert_int_equal(d.result, GF_LIVE_NOMINATED);
	assert_string_equal(d.node, "n0");
	assert_int_equal(gf_live_evictions(l, ev, 8), 0); /* hi2 is not deleted */
	assert_int_equal(gpus_used(l), 4); /* hi on n1, top's held room on n0 */
	gf_live_pod_delete(l, "umid0");
	gf_live_pod_delete(l, "umid1");
	decide_echo(l, "top", &d);
	assert_int_equal(d.result, GF_LIVE_PLACED);
	assert_int_equal(gf_live_check(l, why, sizeof(why)), GF_OK);
	gf_live_destroy(l);
}

/*
 * PodDisruptionBudgets in live preemption (issue 12): two 1-GPU nodes run
 * a (priority 1, labelled app=train) and b (priority 2).  Without a budget
 * hi (priority 10) evicts a, the cheaper; with a PodDisruptionBudget over
 * app=train allowing 0 disruptions it evicts b instead (fewest violations
 * first, as kube-scheduler); then hi2 finds only a and evicts it anyway
 * (best effort).
 */
static void test_pdb_live(void **st)
{
	(void)st;
	enum gf_queue_policy qp;
	assert_true(gf_queue_policy_find("best-effort-fifo", &qp));
	for (int k = 0; k < 2; k++) {
		struct gf_live_opts o = { .queue_policy = (int)qp, .preemption = true, .preempt_wait_s = 30 };
		gf_live *l;
		assert_int_equal(gf_live_create(&o, &l), GF_OK);
		struct gf_k8s_node n0 = mknode("n0", 1, "H100", 81559, false), n1 = mknode("n1", 1, "H100", 81559, false);
		gf_live_node_set(l, &n0);
		gf_live_node_set(l, &n1);
		if (k == 1) {
			static const char doc[] = "{\"metadata\":{\"name\":\"train\",\"namespace\":\"t\"},\"spec\":"
						  "{\"minAvailable\":1,\"selector\":{\"matchLabels\":{\"app\":\"train\"}}},"
						  "\"status\":{\"disruptionsAllowed\":0}}";
			struct gf_k8s_pdb b;
			char err[300];
			assert_int_equal(gf_k8s_pdb_decode_text(doc, strlen(doc), &b, err, sizeof(err)), GF_OK);
			assert_int_equal(gf_live_pdb_set(l, &b), GF_OK);
			assert_int_equal(gf_live_pdb_count(l), 1);
		}
		struct gf_k8s_pod a = prio_pod("a", 1, 1, false), b = prio_pod("b", 1, 2, false);
		memcpy(a.labels, "app\0train", 10);
		a.labels_len = 10;
		struct gf_live_decision d;
		gf_live_pod_set(l, &a);
		decide_echo(l, "a", &d);
		assert_int_equal(d.result, GF_LIVE_PLACED);
		gf_live_pod_set(l, &b);
		decide_echo(l, "b", &d);
		assert_int_equal(d.result, GF_LIVE_PLACED);
		struct gf_k8s_pod hi = prio_pod("hi", 1, 10, false);
		gf_live_requeue_due(l, 1.0);
		gf_live_pod_set(l, &hi);
		decide_echo(l, "hi", &d);
		assert_int_equal(d.result, GF_LIVE_NOMINATED);
		struct gf_live_eviction ev[4];
		assert_int_equal(gf_live_evictions(l, ev, 4), 1);
		assert_string_equal(ev[0].name, k == 0 ? "a" : "b");
		gf_live_pod_delete(l, k == 0 ? "ua" : "ub");
		decide_echo(l, "hi", &d);
		assert_int_equal(d.result, GF_LIVE_PLACED);
		if (k == 1) { /* only the protected pod is left below priority 10: it goes (best effort) */
			struct gf_k8s_pod hi2 = prio_pod("hi2", 1, 10, false);
			gf_live_requeue_due(l, 2.0);
			gf_live_pod_set(l, &hi2);
			decide_echo(l, "hi2", &d);
			assert_int_equal(d.result, GF_LIVE_NOMINATED);
			assert_int_equal(gf_live_evictions(l, ev, 4), 1);
			assert_string_equal(ev[0].name, "a");
			gf_live_pdb_delete(l, "t", "train");
			assert_int_equal(gf_live_pdb_count(l), 0);
		}
		char why[256];
		assert_int_equal(gf_live_check(l, why, sizeof(why)), GF_OK);
		gf_live_destroy(l);
	}
}

/* A member of coscheduling PodGroup `group` asking for 8 GPUs. */
static struct gf_k8s_pod gang_pod(const char *name, const char *group)
{
	char uid[64];
	snprintf(uid, sizeof(uid), "u-%s", name);
	struct gf_k8s_pod p = mkpod(name, uid, "", "", "\"nvidia.com/gpu\":\"8\"", "gpufleet");
	snprintf(p.pod_group, sizeof(p.pod_group), "%s", group);
	return p;
}

static void set_group(gf_gangs *g, const char *name, int min)
{
	struct gf_k8s_podgroup pg;
	memset(&pg, 0, sizeof(pg));
	pg.api = GF_GANG_COSCHEDULING;
	snprintf(pg.ns, sizeof(pg.ns), "t");
	snprintf(pg.name, sizeof(pg.name), "%s", name);
	pg.min_member = min;
	assert_int_equal(gf_gangs_set(g, &pg), GF_OK);
}

/* Decisions until none; placed ones into got[] (not confirmed); the last message. */
static size_t decide_all(gf_live *l, struct gf_k8s_pod *got, struct gf_live_decision *gd, size_t *n,
			 char *last, size_t lastlen)
{
	struct gf_k8s_pod p;
	struct gf_live_decision d;
	size_t k = 0;
	while (gf_live_schedule_next(l, &p, &d)) {
		k++;
		if (d.result == GF_LIVE_PLACED) {
			got[*n] = p;
			gd[(*n)++] = d;
		} else if (last) {
			snprintf(last, lastlen, "%s", d.message);
		}
	}
	return k;
}

static int64_t gpus_used(gf_live *l)
{
	struct gf_live_stats s;
	gf_live_stats(l, &s);
	return s.gpu_used_milli / 1000;
}

/* Gangs live (issue 12): a PodGroup's members placed all or none, never holding GPUs while waiting. */
static void test_gangs_live(void **st)
{
	(void)st;
	enum gf_queue_policy qp;
	assert_true(gf_queue_policy_find("best-effort-fifo", &qp));
	struct gf_live_opts o = { .queue_policy = (int)qp };
	gf_live *l;
	gf_gangs *g;
	assert_int_equal(gf_live_create(&o, &l), GF_OK);
	assert_int_equal(gf_gangs_create(&g), GF_OK);
	gf_live_set_gangs(l, g);
	for (int i = 0; i < 4; i++) {
		char nm[16];
		snprintf(nm, sizeof(nm), "n%d", i);
		struct gf_k8s_node n = mknode(nm, 8, "H100", 81559, false);
		gf_live_node_set(l, &n);
	}
	struct gf_k8s_pod got[16];
	struct gf_live_decision gd[16];
	size_t n = 0;
	char last[512] = "";
	/* gang a (minMember 3): two members wait, "gang incomplete", no GPU held */
	set_group(g, "a", 3);
	struct gf_k8s_pod a[3] = { gang_pod("a-0", "a"), gang_pod("a-1", "a"), gang_pod("a-2", "a") };
	gf_live_pod_set(l, &a[0]);
	gf_live_pod_set(l, &a[1]);
	decide_all(l, got, gd, &n, last, sizeof(last));
	assert_int_equal(n, 0);
	assert_string_equal(last, "gang incomplete: 2 of 3 pods");
	assert_int_equal(gpus_used(l), 0);
	/* the third: all three placed in one cycle, on three nodes, before any is bound */
	gf_live_pod_set(l, &a[2]);
	decide_all(l, got, gd, &n, NULL, 0);
	assert_int_equal(n, 3);
	assert_int_equal(gpus_used(l), 24);
	for (size_t i = 0; i < n; i++) {
		struct gf_k8s_pod b = bound_copy(&got[i], &gd[i]);
		gf_live_pod_set(l, &b);
	}
	struct gf_k8s_podgroup pa;
	memset(&pa, 0, sizeof(pa));
	snprintf(pa.ns, sizeof(pa.ns), "t");
	snprintf(pa.name, sizeof(pa.name), "a");
	struct gf_live_gang_count gc;
	gf_live_gang_count(l, &pa, &gc); /* PodGroup status: 3 members, 3 scheduled, none running yet */
	assert_int_equal(gc.members, 3);
	assert_int_equal(gc.scheduled, 3);
	assert_int_equal(gc.running + gc.succeeded + gc.failed, 0);
	pa.api = GF_GANG_WORKLOAD; /* a Workload-API group of the same name has no member */
	gf_live_gang_count(l, &pa, &gc);
	assert_int_equal(gc.members, 0);
	/* gangs b and c (minMember 2 each, 16 GPUs; 8 free): neither takes the free node */
	set_group(g, "b", 2);
	set_group(g, "c", 2);
	struct gf_k8s_pod b[2] = { gang_pod("b-0", "b"), gang_pod("b-1", "b") };
	struct gf_k8s_pod c[2] = { gang_pod("c-0", "c"), gang_pod("c-1", "c") };
	for (int i = 0; i < 2; i++) {
		gf_live_pod_set(l, &b[i]);
		gf_live_pod_set(l, &c[i]);
	}
	n = 0;
	decide_all(l, got, gd, &n, last, sizeof(last));
	assert_int_equal(n, 0);
	assert_non_null(strstr(last, "gang of 2 pods: no room for all of them together"));
	assert_int_equal(gpus_used(l), 24);
	/* their notes (annotations): all four once, with no estimate (the running pods' ends are
	 * unknown), then nothing until something changes */
	struct gf_live_note notes[8];
	assert_int_equal(gf_live_notes_due(l, notes, 8), 4);
	for (int i = 0; i < 4; i++) {
		assert_string_equal(notes[i].reason, "gang of 2 pods: no room for all of them together");
		assert_true(notes[i].start < 0);
		assert_string_equal(notes[i].ns, "t");
	}
	assert_int_equal(gf_live_notes_due(l, notes, 8), 0);
	/* two of a's pods end: 24 free, room for one gang (each is more than half of it): one is
	 * placed whole, the other waits whole (no deadlock, nothing partial) */
	gf_live_pod_delete(l, "u-a-0");
	gf_live_pod_delete(l, "u-a-1");
	for (int i = 0; i < 5; i++) {
		gf_live_requeue_due(l, 20.0 * (i + 1));
		decide_all(l, got, gd, &n, NULL, 0);
	}
	assert_int_equal(n, 2);
	assert_string_equal(got[0].pod_group, got[1].pod_group);
	char first = got[0].pod_group[0];
	/* a member's binding fails: it alone is placed again (the other is bound) */
	struct gf_k8s_pod bb = bound_copy(&got[0], &gd[0]);
	gf_live_pod_set(l, &bb);
	gf_live_forget(l, got[1].uid, true);
	assert_int_equal(gpus_used(l), 16); /* a-2 and the bound member */
	n = 0;
	decide_all(l, got, gd, &n, NULL, 0);
	assert_int_equal(n, 1);
	assert_int_equal(got[0].pod_group[0], first);
	bb = bound_copy(&got[0], &gd[0]);
	gf_live_pod_set(l, &bb);
	assert_int_equal(gpus_used(l), 24);
	/* the first gang ends: the other is placed whole */
	char u[64];
	snprintf(u, sizeof(u), "u-%c-0", first);
	gf_live_pod_delete(l, u);
	snprintf(u, sizeof(u), "u-%c-1", first);
	gf_live_pod_delete(l, u);
	n = 0;
	for (int i = 0; i < 5; i++) {
		gf_live_requeue_due(l, 200.0 + 20.0 * i);
		decide_all(l, got, gd, &n, NULL, 0);
	}
	assert_int_equal(n, 2);
	assert_int_not_equal(got[0].pod_group[0], first);
	assert_string_equal(got[0].pod_group, got[1].pod_group);
	/* a pod naming a PodGroup not (yet) known waits; the group's arrival lets it go */
	struct gf_k8s_pod x = gang_pod("x-0", "x");
	gf_live_pod_set(l, &x);
	n = 0;
	decide_all(l, got, gd, &n, last, sizeof(last));
	assert_int_equal(n, 0);
	assert_string_equal(last, "waiting for its PodGroup t/x (scheduling.x-k8s.io): not found");
	set_group(g, "x", 1);
	assert_int_equal(gf_live_gangs_changed(l), 1);
	decide_all(l, got, gd, &n, NULL, 0);
	assert_int_equal(n, 1);
	char why[256];
	assert_int_equal(gf_live_check(l, why, sizeof(why)), GF_OK);
	gf_live_destroy(l);
	gf_gangs_destroy(g);
}

/* Members beyond minMember wait for the first minMember (by name), then are placed one by one. */
static void test_gangs_extra_member(void **st)
{
	(void)st;
	enum gf_queue_policy qp;
	assert_true(gf_queue_policy_find("strict-fifo", &qp));
	struct gf_live_opts o = { .queue_policy = (int)qp };
	gf_live *l;
	gf_gangs *g;
	assert_int_equal(gf_live_create(&o, &l), GF_OK);
	assert_int_equal(gf_gangs_create(&g), GF_OK);
	gf_live_set_gangs(l, g);
	for (int i = 0; i < 4; i++) {
		char nm[16];
		snprintf(nm, sizeof(nm), "n%d", i);
		struct gf_k8s_node n = mknode(nm, 8, "H100", 81559, false);
		gf_live_node_set(l, &n);
	}
	set_group(g, "e", 2);
	struct gf_k8s_pod e[3] = { gang_pod("e-2", "e"), gang_pod("e-1", "e"), gang_pod("e-0", "e") };
	for (int i = 0; i < 3; i++)
		gf_live_pod_set(l, &e[i]);
	struct gf_k8s_pod got[4];
	struct gf_live_decision gd[4];
	size_t n = 0;
	decide_all(l, got, gd, &n, NULL, 0);
	assert_int_equal(n, 3);
	assert_string_equal(got[0].name, "e-0"); /* the gang: the first two by name, together */
	assert_string_equal(got[1].name, "e-1");
	assert_string_equal(got[2].name, "e-2"); /* then the extra member alone */
	char why[256];
	assert_int_equal(gf_live_check(l, why, sizeof(why)), GF_OK);
	gf_live_destroy(l);
	gf_gangs_destroy(g);
}

/* kube mode does not look at gangs: each member alone, so a gang may be placed in part. */
static void test_gangs_kube_mode_partial(void **st)
{
	(void)st;
	gf_live *l;
	gf_gangs *g;
	assert_int_equal(gf_live_create(NULL, &l), GF_OK);
	assert_int_equal(gf_gangs_create(&g), GF_OK);
	gf_live_set_gangs(l, g);
	struct gf_k8s_node nd = mknode("n0", 8, "H100", 81559, false);
	gf_live_node_set(l, &nd);
	set_group(g, "a", 2);
	struct gf_k8s_pod a0 = gang_pod("a-0", "a"), a1 = gang_pod("a-1", "a");
	gf_live_pod_set(l, &a0);
	gf_live_pod_set(l, &a1);
	struct gf_k8s_pod got[4];
	struct gf_live_decision gd[4];
	size_t n = 0;
	decide_all(l, got, gd, &n, NULL, 0);
	assert_int_equal(n, 1);
	gf_live_destroy(l);
	gf_gangs_destroy(g);
}

/*
 * Running jobs over a long life (issue 12): 6,000 pods placed, bound and
 * deleted one after another under backfill; the ended jobs' records are
 * dropped by making the loop again, so they stay bounded.  And a gang's
 * bound members: one running job; a member ending leaves the others in
 * the loop; an engine rebuild re-enters the rest.
 */
static void test_running_jobs_churn(void **st)
{
	(void)st;
	enum gf_queue_policy qp;
	assert_true(gf_queue_policy_find("backfill", &qp));
	struct gf_live_opts o = { .queue_policy = (int)qp };
	gf_live *l;
	assert_int_equal(gf_live_create(&o, &l), GF_OK);
	struct gf_k8s_node n = mknode("n8", 8, "H100", 81559, false);
	gf_live_node_set(l, &n);
	struct gf_live_stats s;
	size_t most = 0;
	for (int i = 0; i < 6000; i++) {
		char nm[32];
		snprintf(nm, sizeof(nm), "c%d", i);
		struct gf_k8s_pod p = deadline_pod(nm, 1, 0);
		gf_live_pod_set(l, &p);
		struct gf_k8s_pod got[2];
		size_t nb = 0;
		drain(l, got, &nb, NULL);
		assert_int_equal(nb, 1);
		gf_live_stats(l, &s);
		assert_int_equal(s.running_pods, 1);
		most = s.loop_jobs > most ? s.loop_jobs : most;
		gf_live_pod_delete(l, got[0].uid);
	}
	gf_live_stats(l, &s);
	assert_int_equal(s.running_pods, 0);
	assert_true(most <= 4097 + 1); /* compacted in place once they passed 4,096 */
	/* neither the compactions nor the new targets (the pods doubled) made a new loop */
	assert_int_equal(s.loops_made, 1);
	assert_true(s.resets > 1);
	assert_int_equal(gpus_used(l), 0);
	char why[256];
	assert_int_equal(gf_live_check(l, why, sizeof(why)), GF_OK);
	gf_live_destroy(l);

	/* a gang of two, bound: one job of two running pods */
	gf_gangs *g;
	assert_true(gf_queue_policy_find("best-effort-fifo", &qp));
	o.queue_policy = (int)qp;
	assert_int_equal(gf_live_create(&o, &l), GF_OK);
	assert_int_equal(gf_gangs_create(&g), GF_OK);
	gf_live_set_gangs(l, g);
	struct gf_k8s_node a = mknode("a", 8, "H100", 81559, false), b = mknode("b", 8, "H100", 81559, false);
	gf_live_node_set(l, &a);
	gf_live_node_set(l, &b);
	set_group(g, "pg", 2);
	struct gf_k8s_pod m0 = gang_pod("m0", "pg"), m1 = gang_pod("m1", "pg");
	gf_live_pod_set(l, &m0);
	gf_live_pod_set(l, &m1);
	struct gf_k8s_pod got[4];
	size_t nb = 0;
	drain(l, got, &nb, NULL);
	assert_int_equal(nb, 2);
	gf_live_stats(l, &s);
	assert_int_equal(s.running_pods, 2);
	/* an engine rebuild (a node added) re-enters both, as one gang job */
	struct gf_k8s_node c = mknode("c", 8, "H100", 81559, false);
	gf_live_node_set(l, &c);
	gf_live_stats(l, &s);
	assert_int_equal(s.running_pods, 2);
	assert_int_equal(s.loop_jobs, 1);
	/* one member ends: the other stays a running job */
	gf_live_pod_delete(l, got[0].uid);
	gf_live_stats(l, &s);
	assert_int_equal(s.running_pods, 1);
	assert_int_equal(gpus_used(l), 8);
	assert_int_equal(gf_live_check(l, why, sizeof(why)), GF_OK);
	gf_live_destroy(l);
	gf_gangs_destroy(g);
}

/*
 * The gang index (live.c: gang key -> its pods) under churn: pods join gangs,
 * move to another, leave one, are deleted and their slots reused; after every
 * step gf_live_gang_count agrees with a count kept here, for every group of
 * both APIs (a Workload-API group of the same name is another gang).
 */
static void test_gang_index_churn(void **st)
{
	(void)st;
	enum { NPODS = 300, NGROUPS = 12, STEPS = 3000 };
	gf_live *l;
	assert_int_equal(gf_live_create(NULL, &l), GF_OK);
	int group[NPODS]; /* -1: no pod; NGROUPS: a pod in no gang; else g-<i> (coscheduling) */
	bool bound[NPODS];
	for (int i = 0; i < NPODS; i++)
		group[i] = -1, bound[i] = false;
	uint64_t x = 12345;
	for (int step = 0; step < STEPS; step++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		int i = (int)((x >> 33) % NPODS), what = (int)((x >> 20) % 4);
		char uid[32], name[32];
		snprintf(uid, sizeof(uid), "c-%d", i);
		if (what == 0) {
			gf_live_pod_delete(l, uid);
			group[i] = -1;
			bound[i] = false;
		} else {
			int gi = (int)((x >> 40) % (NGROUPS + 1));
			snprintf(name, sizeof(name), "p-%d", i);
			struct gf_k8s_pod p = mkpod(name, uid, what == 3 ? "n0" : "", "", "", "other");
			if (gi < NGROUPS)
				snprintf(p.pod_group, sizeof(p.pod_group), "g-%d", gi);
			gf_live_pod_set(l, &p);
			if (what == 3 || !bound[i]) /* an unbound copy of a bound pod is older: ignored */
				group[i] = gi;
			bound[i] |= what == 3;
		}
		if (step % 50 && step != STEPS - 1)
			continue;
		for (int g = 0; g < NGROUPS; g++) {
			uint32_t want = 0;
			for (int k = 0; k < NPODS; k++)
				want += group[k] == g;
			struct gf_k8s_podgroup pg;
			memset(&pg, 0, sizeof(pg));
			pg.api = GF_GANG_COSCHEDULING;
			snprintf(pg.ns, sizeof(pg.ns), "t");
			snprintf(pg.name, sizeof(pg.name), "g-%d", g);
			struct gf_live_gang_count gc;
			gf_live_gang_count(l, &pg, &gc);
			if (gc.members != want)
				fail_msg("step %d: group g-%d has %u members, want %u", step, g, gc.members, want);
			pg.api = GF_GANG_WORKLOAD;
			gf_live_gang_count(l, &pg, &gc);
			assert_int_equal(gc.members, 0);
		}
	}
	gf_live_destroy(l);
}

/* An engine failure is reported as what it is and what was being done, not as "out of memory". */
static void test_engine_error_message(void **st)
{
	(void)st;
	gf_live *l;
	assert_int_equal(gf_live_create(NULL, &l), GF_OK);
	struct gf_k8s_node n = mknode("n0", 8, "H100", 81559, false);
	n.spec.ngpus = GF_MAX_GPUS + 1; /* no decoder makes this: the engine refuses the node */
	gf_live_node_set(l, &n);
	struct gf_k8s_pod p = mkpod("p", "u-p", "", "", "\"nvidia.com/gpu\":\"1\"", "gpufleet");
	gf_live_pod_set(l, &p);
	struct gf_k8s_pod got;
	struct gf_live_decision d;
	assert_true(gf_live_schedule_next(l, &got, &d));
	assert_int_equal(d.result, GF_LIVE_UNSCHEDULABLE);
	assert_string_equal(d.message, "internal error: rebuilding the engine from 1 nodes and their bound pods: "
				       "invalid argument (GF_INVAL)");
	gf_live_destroy(l);
}

/*
 * Node churn (autoscaled nodes coming and going over days): 100,000 nodes of
 * distinct names each added, then deleted, the engine brought up to date
 * after some of them (a rebuild frees the absent nodes' slots) and not after
 * the others (a new node takes a freed slot before the array grows).  The
 * node slots and hash tables stay at the peak, not at the number ever seen;
 * a node a bound pod still names keeps its slot and, back, its pod's GPUs;
 * new nodes on reused slots are placed on by their own names.
 */
static void test_node_churn(void **st)
{
	(void)st;
	gf_live *l;
	assert_int_equal(gf_live_create(NULL, &l), GF_OK);
	struct gf_k8s_node keep = mknode("keep", 8, "H100", 81559, false);
	struct gf_k8s_node gone = mknode("gone", 8, "H100", 81559, false);
	gf_live_node_set(l, &keep);
	gf_live_node_set(l, &gone);
	struct gf_k8s_pod b = mkpod("b", "u-b", "gone", "", "\"nvidia.com/gpu\":\"2\"", "other");
	gf_live_pod_set(l, &b);
	assert_int_equal(gpus_used(l), 2);
	gf_live_node_delete(l, "gone");
	assert_int_equal(gpus_used(l), 0);
	struct gf_k8s_node n = mknode("churn", 4, "A100", 40960, false);
	struct gf_live_stats s;
	for (int i = 0; i < 100000; i++) {
		snprintf(n.name, sizeof(n.name), "churn-%d", i);
		gf_live_node_set(l, &n);
		gf_live_node_delete(l, n.name);
		if (i < 50000 && i % 100 == 0)
			gf_live_stats(l, &s); /* brings the engine up to date: a rebuild */
	}
	gf_live_stats(l, &s);
	assert_int_equal(s.nodes, 1);
	if (s.node_slots > 64 || s.index_slots > 512) /* the array's first 64; names map sized 4 x those */
		fail_msg("after 100,000 nodes came and went: %zu node slots, %zu hash slots", s.node_slots,
			 s.index_slots);
	gf_live_node_set(l, &gone); /* back: its bound pod is accounted again */
	assert_int_equal(gpus_used(l), 2);
	snprintf(n.name, sizeof(n.name), "final");
	gf_live_node_set(l, &n);
	struct gf_k8s_pod p = mkpod("a", "u-a", "", "\"gpufleet.io/gpu-model\":\"A100\"", "\"nvidia.com/gpu\":\"4\"",
				    "gpufleet");
	gf_live_pod_set(l, &p);
	struct gf_live_decision d;
	assert_int_equal(drain(l, NULL, NULL, &d), 1);
	assert_int_equal(d.result, GF_LIVE_PLACED);
	assert_string_equal(d.node, "final");
	assert_int_equal(gpus_used(l), 6);
	gf_live_stats(l, &s);
	assert_int_equal(s.nodes, 3);
	char why[256];
	assert_int_equal(gf_live_check(l, why, sizeof(why)), GF_OK);
	gf_live_destroy(l);
}

/*
 * Node verbs, not rebuilds: under backfill (the loop owns pending and
 * running pods), nodes join, leave and change GPU count while pods wait and
 * run; the engine is built once (the first nodes) and every later change is
 * applied in place.  Pods waiting for room start on a node that joins or
 * grows; a node that leaves takes its pods out of the accounting.
 */
static void test_node_verbs_no_rebuild(void **st)
{
	(void)st;
	enum gf_queue_policy qp;
	assert_true(gf_queue_policy_find("backfill", &qp));
	struct gf_live_opts o = { .queue_policy = (int)qp };
	gf_live *l;
	char name[32], uid[32], why[256];
	assert_int_equal(gf_live_create(&o, &l), GF_OK);
	for (int i = 0; i < 10; i++) {
		snprintf(name, sizeof(name), "n%d", i);
		struct gf_k8s_node n = mknode(name, 2, "H100", 81559, false);
		gf_live_node_set(l, &n);
	}
	for (int i = 0; i < 26; i++) {
		snprintf(name, sizeof(name), "p%d", i);
		snprintf(uid, sizeof(uid), "u%d", i);
		struct gf_k8s_pod p = mkpod(name, uid, "", "", "\"nvidia.com/gpu\":\"1\"", "gpufleet");
		gf_live_pod_set(l, &p);
	}
	struct gf_k8s_pod bound[64];
	size_t nb = 0;
	drain(l, bound, &nb, NULL);
	assert_int_equal(nb, 20); /* 6 wait */
	assert_int_equal(gpus_used(l), 20);
	/* three nodes join: the six waiting pods start there */
	for (int i = 10; i < 13; i++) {
		snprintf(name, sizeof(name), "n%d", i);
		struct gf_k8s_node n = mknode(name, 2, "H100", 81559, false);
		gf_live_node_set(l, &n);
	}
	drain(l, bound, &nb, NULL);
	assert_int_equal(nb, 26);
	assert_int_equal(gpus_used(l), 26);
	/* n12 grows to 4 GPUs; two more pods start there */
	struct gf_k8s_node g = mknode("n12", 4, "H100", 81559, false);
	gf_live_node_set(l, &g);
	for (int i = 26; i < 28; i++) {
		snprintf(name, sizeof(name), "p%d", i);
		snprintf(uid, sizeof(uid), "u%d", i);
		struct gf_k8s_pod p = mkpod(name, uid, "", "", "\"nvidia.com/gpu\":\"1\"", "gpufleet");
		gf_live_pod_set(l, &p);
	}
	drain(l, bound, &nb, NULL);
	assert_int_equal(nb, 28);
	assert_int_equal(gpus_used(l), 28);
	/* two nodes leave (with their pods): their GPUs no longer counted */
	gf_live_node_delete(l, "n0");
	gf_live_node_delete(l, "n1");
	assert_int_equal(gpus_used(l), 24);
	struct gf_live_stats s;
	gf_live_stats(l, &s);
	assert_int_equal(s.nodes, 11);
	print_message("node churn: %llu rebuilds, %llu node changes in place\n", (unsigned long long)s.rebuilds,
		      (unsigned long long)s.node_verbs);
	assert_int_equal(s.rebuilds, 1);	/* the first nodes only */
	assert_int_equal(s.node_verbs, 6);
	assert_int_equal(gf_live_check(l, why, sizeof(why)), GF_OK);
	gf_live_destroy(l);
}

/*
 * Queue and budget changes in place: a Queue's quota raised lets its
 * waiting pods start, a PodDisruptionBudget added relabels the jobs, and
 * neither makes a new loop (gf_live_stats.loops_made: the loop made once,
 * its pods never re-adopted).
 */
static void test_queue_change_in_place(void **st)
{
	(void)st;
	enum gf_queue_policy qp;
	assert_true(gf_queue_policy_find("best-effort-fifo", &qp));
	struct gf_live_opts o = { .queue_policy = (int)qp, .queues = true };
	gf_live *l;
	char name[32], uid[32], why[256];
	assert_int_equal(gf_live_create(&o, &l), GF_OK);
	struct gf_k8s_node nd = mknode("n0", 8, "H100", 81559, false);
	gf_live_node_set(l, &nd);
	struct gf_queue_def d;
	memset(&d, 0, sizeof(d));
	snprintf(d.name, sizeof(d.name), "q");
	d.nominal = 2000;
	d.borrowing_limit = d.lending_limit = GF_QUOTA_UNLIMITED;
	d.weight = 1;
	assert_int_equal(gf_live_queue_set(l, &d, NULL), GF_OK);
	assert_int_equal(gf_live_namespace_queue(l, "t", "q"), GF_OK);
	for (int i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "p%d", i);
		snprintf(uid, sizeof(uid), "u%d", i);
		struct gf_k8s_pod p = mkpod(name, uid, "", "", "\"nvidia.com/gpu\":\"1\"", "gpufleet");
		gf_live_pod_set(l, &p);
	}
	struct gf_k8s_pod bound[8];
	size_t nb = 0;
	drain(l, bound, &nb, NULL);
	assert_int_equal(nb, 2); /* the quota: two GPUs */
	struct gf_live_stats s0, s;
	gf_live_stats(l, &s0);
	d.nominal = 4000;
	assert_int_equal(gf_live_queue_set(l, &d, NULL), GF_OK);
	gf_live_requeue_due(l, 20.0);
	drain(l, bound, &nb, NULL);
	assert_int_equal(nb, 4);
	static const char doc[] = "{\"metadata\":{\"name\":\"b\",\"namespace\":\"t\"},\"spec\":"
				  "{\"minAvailable\":1,\"selector\":{\"matchLabels\":{\"app\":\"x\"}}},"
				  "\"status\":{\"disruptionsAllowed\":0}}";
	struct gf_k8s_pdb b;
	char err[300];
	assert_int_equal(gf_k8s_pdb_decode_text(doc, strlen(doc), &b, err, sizeof(err)), GF_OK);
	assert_int_equal(gf_live_pdb_set(l, &b), GF_OK);
	struct gf_k8s_pod p4 = mkpod("p4", "u4", "", "", "\"nvidia.com/gpu\":\"1\"", "gpufleet");
	gf_live_pod_set(l, &p4);
	gf_live_requeue_due(l, 40.0);
	drain(l, bound, &nb, NULL); /* the engine brought up to date: p4 waits for the quota */
	assert_int_equal(nb, 4);
	gf_live_stats(l, &s);
	print_message("queue and budget changes: loops made %llu before, %llu after\n",
		      (unsigned long long)s0.loops_made, (unsigned long long)s.loops_made);
	assert_int_equal(s.loops_made, s0.loops_made);
	assert_int_equal(gf_live_check(l, why, sizeof(why)), GF_OK);
	gf_live_destroy(l);
}

static void count_queue(void *ud, const char *name, int64_t used, int64_t nominal, const char *err)
{
	(void)name, (void)used, (void)nominal, (void)err;
	++*(int *)ud;
}

/*
 * Queues and namespaces found by name (live.c's hash maps, not a scan): 200
 * Queues and 3,000 namespaces; Queues deleted first, in the middle and last,
 * the others still found under their names (their indices moved down); a
 * namespace relabelled; a pod whose namespace names a deleted Queue waits,
 * said so, and one whose namespace names a live one is placed.
 */
static void test_queue_lookups(void **st)
{
	(void)st;
	enum gf_queue_policy qp;
	assert_true(gf_queue_policy_find("best-effort-fifo", &qp));
	struct gf_live_opts o = { .queue_policy = (int)qp, .queues = true };
	gf_live *l;
	assert_int_equal(gf_live_create(&o, &l), GF_OK);
	struct gf_k8s_node nd = mknode("n0", 8, "H100", 81559, false);
	gf_live_node_set(l, &nd);
	char name[64], q[64];
	for (int i = 0; i < 200; i++) {
		struct gf_queue_def d;
		memset(&d, 0, sizeof(d));
		snprintf(d.name, sizeof(d.name), "q-%d", i);
		d.nominal = 8000;
		d.borrowing_limit = d.lending_limit = GF_QUOTA_UNLIMITED;
		d.weight = 1;
		assert_int_equal(gf_live_queue_set(l, &d, i == 150 ? "refused for the test" : NULL), GF_OK);
	}
	for (int i = 0; i < 3000; i++) {
		snprintf(name, sizeof(name), "ns-%d", i);
		snprintf(q, sizeof(q), "q-%d", i % 200);
		assert_int_equal(gf_live_namespace_queue(l, name, q), GF_OK);
	}
	assert_int_equal(gf_live_namespace_queue(l, "ns-1", "q-7"), GF_OK); /* relabelled */
	gf_live_queue_delete(l, "q-0");
	gf_live_queue_delete(l, "q-100");
	gf_live_queue_delete(l, "q-199");
	gf_live_queue_delete(l, "q-none"); /* not held: nothing */
	int64_t used;
	for (int i = 0; i < 200; i++) {
		snprintf(q, sizeof(q), "q-%d", i);
		bool gone = i == 0 || i == 100 || i == 199;
		if (gf_live_queue_usage(l, q, &used) == gone)
			fail_msg("%s: %s", q, gone ? "deleted, still found" : "held, not found");
	}
	int nq = 0;
	gf_live_each_queue(l, count_queue, &nq);
	assert_int_equal(nq, 197);
	struct gf_k8s_pod a = mkpod("a", "u-a", "", "", "\"nvidia.com/gpu\":\"1\"", "gpufleet");
	struct gf_k8s_pod b = mkpod("b", "u-b", "", "", "\"nvidia.com/gpu\":\"1\"", "gpufleet");
	snprintf(a.ns, sizeof(a.ns), "ns-1");	/* -> q-7 */
	snprintf(b.ns, sizeof(b.ns), "ns-300"); /* -> q-100, deleted */
	struct gf_k8s_pod c = mkpod("c", "u-c", "", "", "\"nvidia.com/gpu\":\"1\"", "gpufleet");
	snprintf(c.ns, sizeof(c.ns), "ns-150"); /* -> q-150, refused (two Queues before it deleted) */
	gf_live_pod_set(l, &a);
	gf_live_pod_set(l, &b);
	gf_live_pod_set(l, &c);
	struct gf_k8s_pod got;
	struct gf_live_decision d;
	int placed = 0, waiting = 0;
	while (gf_live_schedule_next(l, &got, &d)) {
		if (d.result == GF_LIVE_PLACED) {
			placed++;
			assert_string_equal(got.name, "a");
		} else if (!strcmp(got.name, "b")) {
			waiting++;
			assert_non_null(strstr(d.message, "GPUQueue \"q-100\" (gpufleet.io/v1alpha1, from its namespace's label "
							 "gpufleet.io/queue) does not exist"));
		} else {
			waiting++;
			assert_string_equal(d.message, "GPUQueue \"q-150\" cannot admit pods: refused for the test.");
		}
	}
	assert_int_equal(placed, 1);
	assert_int_equal(waiting, 2);
	assert_true(gf_live_queue_usage(l, "q-7", &used));
	assert_int_equal(used, 1000);
	gf_live_destroy(l);
}

/* A gang is charged to its own Queue (its namespace's), not to the first one. */
static void test_gang_charged_to_its_queue(void **st)
{
	(void)st;
	enum gf_queue_policy qp;
	assert_true(gf_queue_policy_find("best-effort-fifo", &qp));
	struct gf_live_opts o = { .queue_policy = (int)qp, .queues = true };
	gf_live *l;
	gf_gangs *g;
	assert_int_equal(gf_live_create(&o, &l), GF_OK);
	assert_int_equal(gf_gangs_create(&g), GF_OK);
	gf_live_set_gangs(l, g);
	struct gf_k8s_node n0 = mknode("n0", 8, "H100", 81559, false), n1 = mknode("n1", 8, "H100", 81559, false);
	gf_live_node_set(l, &n0);
	gf_live_node_set(l, &n1);
	const char *names[2] = { "q-a", "q-b" };
	for (int i = 0; i < 2; i++) {
		struct gf_queue_def d;
		memset(&d, 0, sizeof(d));
		snprintf(d.name, sizeof(d.name), "%s", names[i]);
		d.nominal = 16000;
		d.borrowing_limit = d.lending_limit = GF_QUOTA_UNLIMITED;
		d.weight = 1;
		assert_int_equal(gf_live_queue_set(l, &d, NULL), GF_OK);
	}
	assert_int_equal(gf_live_namespace_queue(l, "t", "q-b"), GF_OK);
	set_group(g, "gq", 2);
	struct gf_k8s_pod m[2] = { gang_pod("gq-0", "gq"), gang_pod("gq-1", "gq") };
	gf_live_pod_set(l, &m[0]);
	gf_live_pod_set(l, &m[1]);
	struct gf_k8s_pod got[4];
	struct gf_live_decision gd[4];
	size_t n = 0;
	decide_all(l, got, gd, &n, NULL, 0);
	assert_int_equal(n, 2);
	int64_t used = -1;
	assert_true(gf_live_queue_usage(l, "q-b", &used));
	assert_int_equal(used, 16000);
	assert_true(gf_live_queue_usage(l, "q-a", &used));
	assert_int_equal(used, 0);
	gf_live_destroy(l);
	gf_gangs_destroy(g);
}

static uint64_t cycles(gf_live *l)
{
	struct gf_live_stats s;
	gf_live_stats(l, &s);
	return s.cycles;
}

/*
 * Not kube: a cycle with nothing new to decide from is not run again (live.c,
 * idle_skip; the loop would try its waiting jobs again) until something
 * changes (room freed: the waiting pod is placed at once) or 10 s of the
 * caller's clock have passed.
 */
static void test_idle_cycle_skipped(void **st)
{
	(void)st;
	enum gf_queue_policy qp;
	assert_true(gf_queue_policy_find("best-effort-fifo", &qp));
	struct gf_live_opts o = { .queue_policy = (int)qp };
	gf_live *l;
	assert_int_equal(gf_live_create(&o, &l), GF_OK);
	struct gf_k8s_node nd = mknode("n0", 8, "H100", 81559, false);
	gf_live_node_set(l, &nd);
	struct gf_k8s_pod a = mkpod("a", "u-a", "", "", "\"nvidia.com/gpu\":\"8\"", "gpufleet");
	struct gf_k8s_pod b = mkpod("b", "u-b", "", "", "\"nvidia.com/gpu\":\"8\"", "gpufleet");
	gf_live_pod_set(l, &a);
	gf_live_pod_set(l, &b);
	struct gf_k8s_pod bound[2];
	size_t nb = 0;
	assert_int_equal(drain(l, bound, &nb, NULL), 2); /* a placed (and bound), b waits in the loop */
	assert_int_equal(nb, 1);
	uint64_t c = cycles(l);
	struct gf_k8s_pod p;
	struct gf_live_decision d;
	gf_live_requeue_due(l, 5.0);
	for (int i = 0; i < 5; i++)
		assert_false(gf_live_schedule_next(l, &p, &d));
	assert_int_equal(cycles(l), c); /* nothing changed: no cycle */
	gf_live_requeue_due(l, 11.0);
	assert_false(gf_live_schedule_next(l, &p, &d));
	assert_int_equal(cycles(l), c + 1); /* 10 s on: one cycle anyway */
	assert_false(gf_live_schedule_next(l, &p, &d));
	assert_int_equal(cycles(l), c + 1); /* and none right after it */
	gf_live_pod_delete(l, bound[0].uid); /* room freed: the next cycle runs and places b */
	assert_true(gf_live_schedule_next(l, &p, &d));
	assert_int_equal(d.result, GF_LIVE_PLACED);
	assert_string_equal(p.name, "b");
	assert_int_equal(cycles(l), c + 2);
	struct gf_live_stats s;
	gf_live_stats(l, &s);
	assert_true(s.idle_skips >= 6);
	gf_live_destroy(l);
}

/* Place one rule-less 1-GPU pod named name; the node it went to ("" when unschedulable). */
static void place_one(gf_live *l, const char *name, char *node, size_t len)
{
	char uid[32];
	snprintf(uid, sizeof(uid), "u-%s", name);
	struct gf_k8s_pod p = mkpod(name, uid, "", "", "\"nvidia.com/gpu\":\"1\"", "gpufleet");
	gf_live_pod_set(l, &p);
	struct gf_k8s_pod got;
	struct gf_live_decision d;
	node[0] = '\0';
	while (gf_live_schedule_next(l, &got, &d))
		if (d.result == GF_LIVE_PLACED && !strcmp(got.name, name)) {
			snprintf(node, len, "%s", d.node);
			struct gf_k8s_pod b = bound_copy(&got, &d);
			gf_live_pod_set(l, &b);
		}
}

/*
 * Pods without rules share one admission mask (live.c, plain_mask), kept
 * between changes: each change that narrows or widens it (a cordon, a taint,
 * a node's pod count reached, a pod leaving it) is seen by the next pod.
 */
static void test_plain_mask_follows_changes(void **st)
{
	(void)st;
	gf_live *l;
	char node[GF_K8S_NAME_MAX];
	assert_int_equal(gf_live_create(NULL, &l), GF_OK);
	struct gf_k8s_node a = mknode("a", 8, "H100", 81559, false), b = mknode("b", 8, "H100", 81559, false);
	a.max_pods = 2;
	a.unschedulable = true; /* cordoned: b only */
	gf_live_node_set(l, &a);
	gf_live_node_set(l, &b);
	place_one(l, "p0", node, sizeof(node));
	assert_string_equal(node, "b");
	a.unschedulable = false; /* a back, b tainted: a only */
	gf_live_node_set(l, &a);
	b.ntaints = 1;
	snprintf(b.taints[0].key, sizeof(b.taints[0].key), "dedicated");
	b.taints[0].effect = GF_EFFECT_NO_SCHEDULE;
	gf_live_node_set(l, &b);
	place_one(l, "p1", node, sizeof(node));
	assert_string_equal(node, "a");
	place_one(l, "p2", node, sizeof(node)); /* a's second pod: its last */
	assert_string_equal(node, "a");
	place_one(l, "p3", node, sizeof(node)); /* a full, b tainted: nowhere */
	assert_string_equal(node, "");
	b.ntaints = 0; /* only b's admission changes (no bind since): p3 goes there */
	gf_live_node_set(l, &b);
	gf_live_requeue_due(l, 20.0);
	struct gf_k8s_pod got;
	struct gf_live_decision d;
	bool placed = false;
	while (gf_live_schedule_next(l, &got, &d))
		placed |= d.result == GF_LIVE_PLACED && !strcmp(got.name, "p3") && !strcmp(d.node, "b");
	assert_true(placed);
	b.ntaints = 1;
	gf_live_node_set(l, &b);
	place_one(l, "p4", node, sizeof(node)); /* a full, b tainted again: nowhere */
	assert_string_equal(node, "");
	gf_live_pod_delete(l, "u-p1"); /* a pod leaves a: p4 goes there */
	gf_live_requeue_due(l, 40.0);
	placed = false;
	while (gf_live_schedule_next(l, &got, &d))
		placed |= d.result == GF_LIVE_PLACED && !strcmp(got.name, "p4") && !strcmp(d.node, "a");
	assert_true(placed);
	gf_live_destroy(l);
}

static uint64_t forecasts(gf_live *l)
{
	struct gf_live_stats s;
	gf_live_stats(l, &s);
	return s.forecasts;
}

/*
 * The notes' forecast is made again only when the loop changed, at most
 * every 10 s of the caller's clock: rounds with nothing new make none, a pod
 * that joined the loop since the last one gets its note with the next.
 */
static void test_notes_forecast_kept(void **st)
{
	(void)st;
	enum gf_queue_policy qp;
	assert_true(gf_queue_policy_find("best-effort-fifo", &qp));
	struct gf_live_opts o = { .queue_policy = (int)qp };
	gf_live *l;
	assert_int_equal(gf_live_create(&o, &l), GF_OK);
	struct gf_k8s_node nd = mknode("n0", 8, "H100", 81559, false);
	gf_live_node_set(l, &nd);
	struct gf_k8s_pod a = mkpod("a", "u-a", "", "", "\"nvidia.com/gpu\":\"8\"", "gpufleet");
	struct gf_k8s_pod b = mkpod("b", "u-b", "", "", "\"nvidia.com/gpu\":\"8\"", "gpufleet");
	struct gf_k8s_pod c = mkpod("c", "u-c", "", "", "\"nvidia.com/gpu\":\"8\"", "gpufleet");
	gf_live_pod_set(l, &a);
	gf_live_pod_set(l, &b);
	assert_int_equal(drain(l, NULL, NULL, NULL), 2); /* a bound, b waits */
	struct gf_live_note notes[4];
	assert_int_equal(gf_live_notes_due(l, notes, 4), 1);
	assert_string_equal(notes[0].name, "b");
	assert_int_equal(forecasts(l), 1);
	for (int i = 1; i <= 5; i++) { /* nothing new, the clock on: no forecast, no note */
		gf_live_requeue_due(l, 20.0 * i);
		assert_int_equal(gf_live_notes_due(l, notes, 4), 0);
	}
	assert_int_equal(forecasts(l), 1);
	gf_live_pod_set(l, &c); /* c joins the loop at 100 s, the last forecast 100 s old: one now */
	drain(l, NULL, NULL, NULL);
	assert_int_equal(gf_live_notes_due(l, notes, 4), 1);
	assert_string_equal(notes[0].name, "c");
	assert_int_equal(forecasts(l), 2);
	gf_live_pod_delete(l, "u-c"); /* changed again at 105 s: the forecast stays until 110 s */
	gf_live_requeue_due(l, 105.0);
	gf_live_pod_set(l, &c);
	drain(l, NULL, NULL, NULL);
	assert_int_equal(gf_live_notes_due(l, notes, 4), 0);
	assert_int_equal(forecasts(l), 2);
	gf_live_requeue_due(l, 111.0);
	assert_int_equal(gf_live_notes_due(l, notes, 4), 1);
	assert_string_equal(notes[0].name, "c");
	assert_int_equal(forecasts(l), 3);
	gf_live_destroy(l);
}

/*
 * The notes' forecast covers the first 1,000 waiting jobs in queue order
 * (NOTES_FORECAST_JOBS): x (8 GPUs, bound by another scheduler at 5 s,
 * deadline 100 s) holds the one node until 105 s; w0..w1001 (8 GPUs, 10 s
 * each) wait in order: wK starts at 105 + 10 K, w1000 and w1001 get no
 * estimate.
 */
static void test_notes_forecast_first_jobs(void **st)
{
	(void)st;
	enum gf_queue_policy qp;
	assert_true(gf_queue_policy_find("best-effort-fifo", &qp));
	struct gf_live_opts o = { .queue_policy = (int)qp };
	gf_live *l;
	assert_int_equal(gf_live_create(&o, &l), GF_OK);
	struct gf_k8s_node n = mknode("n0", 8, "H100", 81559, false);
	gf_live_node_set(l, &n);
	gf_live_requeue_due(l, 5.0);
	struct gf_k8s_pod x = deadline_pod("x", 8, 100);
	snprintf(x.node, sizeof(x.node), "n0");
	snprintf(x.scheduler, sizeof(x.scheduler), "default-scheduler");
	gf_live_pod_set(l, &x);
	enum { NW = 1002 };
	for (int k = 0; k < NW; k++) {
		char name[16];
		snprintf(name, sizeof(name), "w%04d", k);
		struct gf_k8s_pod w = deadline_pod(name, 8, 10);
		gf_live_pod_set(l, &w);
	}
	assert_int_equal(drain(l, NULL, NULL, NULL), NW);
	struct gf_live_note *notes = calloc(NW + 8, sizeof(*notes));
	assert_non_null(notes);
	size_t nn = gf_live_notes_due(l, notes, NW + 8), dated = 0;
	assert_int_equal(nn, NW);
	for (size_t i = 0; i < nn; i++) {
		int k = (int)strtol(notes[i].name + 1, NULL, 10);
		if (k < 1000) {
			double want = 105.0 + 10.0 * k;
			if (notes[i].start < want - 1.0 || notes[i].start > want + 1.0)
				fail_msg("%s: start %.1f, want %.0f", notes[i].name, notes[i].start, want);
			dated++;
		} else {
			assert_true(notes[i].start < 0);
		}
	}
	assert_int_equal(dated, 1000);
	free(notes);
	gf_live_destroy(l);
}

/* A PodGroup event sends every gang member parked here back to the queue (the gang index, 300 members
 * over several words of its bitmap), not the other parked pods. */
static void test_gangs_changed_many(void **st)
{
	(void)st;
	enum gf_queue_policy qp;
	assert_true(gf_queue_policy_find("best-effort-fifo", &qp));
	struct gf_live_opts o = { .queue_policy = (int)qp };
	gf_live *l;
	gf_gangs *g;
	assert_int_equal(gf_live_create(&o, &l), GF_OK);
	assert_int_equal(gf_gangs_create(&g), GF_OK);
	gf_live_set_gangs(l, g);
	struct gf_k8s_node nd = mknode("n0", 8, "H100", 81559, false);
	gf_live_node_set(l, &nd);
	char name[32], group[32];
	for (int i = 0; i < 150; i++) { /* 150 gangs of minMember 3 with 2 pods each: all wait, incomplete */
		snprintf(group, sizeof(group), "g%d", i);
		set_group(g, group, 3);
		for (int k = 0; k < 2; k++) {
			snprintf(name, sizeof(name), "g%d-%d", i, k);
			struct gf_k8s_pod p = gang_pod(name, group);
			gf_live_pod_set(l, &p);
		}
		if (i % 50 == 0) { /* and a pod of no gang that cannot fit anywhere, between them */
			snprintf(name, sizeof(name), "big-%d", i);
			char uid[40];
			snprintf(uid, sizeof(uid), "u-%s", name);
			struct gf_k8s_pod p = mkpod(name, uid, "", "", "\"nvidia.com/gpu\":\"9\"", "gpufleet");
			gf_live_pod_set(l, &p);
		}
	}
	struct gf_k8s_pod got[4];
	struct gf_live_decision gd[4];
	size_t n = 0;
	decide_all(l, got, gd, &n, NULL, 0);
	assert_int_equal(n, 0);
	assert_int_equal(gf_live_gangs_changed(l), 300);
	assert_int_equal(gf_live_gangs_changed(l), 0); /* queued now, no longer parked */
	gf_live_destroy(l);
	gf_gangs_destroy(g);
}

/*
 * A new loop (an engine rebuild: here a node joins) keeps the waiting pods'
 * order (strict-fifo): w0..w3 wait, in that order, behind `hold` on a 1-GPU
 * node; w2 and w3 arrived last but took pod slots freed before them (d0, d1
 * deleted), and the rebuild used to queue them again in slot order, so w2
 * went first when hold ended.  Now w0, w1, w2, w3 bind in arrival order.
 */
static void test_new_loop_keeps_order(void **st)
{
	(void)st;
	enum gf_queue_policy qp;
	assert_true(gf_queue_policy_find("strict-fifo", &qp));
	struct gf_live_opts o = { .queue_policy = (int)qp };
	gf_live *l;
	assert_int_equal(gf_live_create(&o, &l), GF_OK);
	struct gf_k8s_node n = mknode("n1", 1, "H100", 81559, false);
	gf_live_node_set(l, &n);
	struct gf_k8s_pod hold = deadline_pod("hold", 1, 0), d0 = deadline_pod("d0", 1, 0),
			  d1 = deadline_pod("d1", 1, 0);
	struct gf_k8s_pod got[8];
	size_t nb = 0;
	gf_live_pod_set(l, &hold);
	drain(l, got, &nb, NULL);
	assert_int_equal(nb, 1);
	gf_live_pod_set(l, &d0);
	gf_live_pod_set(l, &d1);
	const char *names[] = { "w0", "w1", "w2", "w3" };
	for (int i = 0; i < 4; i++) {
		if (i == 2) { /* d0 and d1 leave: w2 and w3 take their slots */
			gf_live_pod_delete(l, d0.uid);
			gf_live_pod_delete(l, d1.uid);
		}
		struct gf_k8s_pod w = deadline_pod(names[i], 1, 0);
		gf_live_pod_set(l, &w);
		drain(l, got, &nb, NULL);
		assert_int_equal(nb, 1); /* it waits */
	}
	struct gf_k8s_node cpu = mknode("cpu", 0, "", 0, false); /* a node joins: a new engine and loop */
	gf_live_node_set(l, &cpu);
	drain(l, got, &nb, NULL);
	assert_int_equal(nb, 1);
	for (int i = 0; i < 4; i++) {
		gf_live_pod_delete(l, got[nb - 1].uid); /* the GPU's holder ends: the next one binds */
		size_t before = nb;
		drain(l, got, &nb, NULL);
		assert_int_equal(nb, before + 1);
		assert_string_equal(got[nb - 1].name, names[i]);
	}
	gf_live_destroy(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_place_and_restart),
		cmocka_unit_test(test_conflicts_forget_and_foreign),
		cmocka_unit_test(test_forget_keeps_queue_place),
		cmocka_unit_test(test_bad_requests_and_memory),
		cmocka_unit_test(test_extender),
		cmocka_unit_test(test_extender_ranking),
		cmocka_unit_test(test_stale_unbound_copy),
		cmocka_unit_test(test_constraints),
		cmocka_unit_test(test_served_model_preference),
		cmocka_unit_test(test_pod_count_limit),
		cmocka_unit_test(test_empty_pod_masked),
		cmocka_unit_test(test_target_every_pod),
		cmocka_unit_test(test_queue_policy_live),
		cmocka_unit_test(test_gang_charged_to_its_queue),
		cmocka_unit_test(test_extender_binds_queued_pod),
		cmocka_unit_test(test_forget_keeps_queue_place_kube),
		cmocka_unit_test(test_refused_bind_backs_off_kube),
		cmocka_unit_test(test_refused_bind_backs_off_loop),
		cmocka_unit_test(test_gangs_live),
		cmocka_unit_test(test_gangs_extra_member),
		cmocka_unit_test(test_gangs_kube_mode_partial),
		cmocka_unit_test(test_deadline_estimate),
		cmocka_unit_test(test_running_jobs),
		cmocka_unit_test(test_preemption_live),
		cmocka_unit_test(test_pdb_live),
		cmocka_unit_test(test_running_jobs_churn),
		cmocka_unit_test(test_new_loop_keeps_order),
		cmocka_unit_test(test_gang_index_churn),
		cmocka_unit_test(test_engine_error_message),
		cmocka_unit_test(test_node_churn),
		cmocka_unit_test(test_node_verbs_no_rebuild),
		cmocka_unit_test(test_queue_change_in_place),
		cmocka_unit_test(test_queue_lookups),
		cmocka_unit_test(test_idle_cycle_skipped),
		cmocka_unit_test(test_plain_mask_follows_changes),
		cmocka_unit_test(test_notes_forecast_kept),
		cmocka_unit_test(test_notes_forecast_first_jobs),
		cmocka_unit_test(test_gangs_changed_many),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
