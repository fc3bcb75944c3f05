/*
 * tests/test_spot.c - capacity that comes and goes (queue/spot.h): the
 * capacity type read from node labels, spot-aware placement (pools, gangs
 * never straddling), and what a notice does to running jobs by their
 * checkpoint kind in each mode (stops, progress kept, lost work, place in
 * the queue, reclaim).
 *
 * Jobs are whole-GPU single pods or gangs of 1-GPU pods on 1-GPU nodes, so
 * where a job lands is decided by the pools, not the placement policy.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "queue/spot.h"
#include "testutil.h"

/* ---- labels ---- */

struct kv {
	const char *k, *v;
};

static const char *kv_label(const void *ud, const char *key)
{
	for (const struct kv *p = ud; p->k; p++)
		if (!strcmp(p->k, key))
			return p->v;
	return NULL;
}

static void capacity_type_from_labels(void **state)
{
	static const struct kv spot[][2] = {
		{ { "karpenter.sh/capacity-type", "spot" }, { 0, 0 } },
		{ { "eks.amazonaws.com/capacityType", "SPOT" }, { 0, 0 } },
		{ { "cloud.google.com/gke-spot", "true" }, { 0, 0 } },
		{ { "cloud.google.com/gke-preemptible", "true" }, { 0, 0 } },
		{ { "kubernetes.azure.com/scalesetpriority", "spot" }, { 0, 0 } },
		{ { "gpufleet.io/capacity-type", "spot" }, { 0, 0 } },
	};
	static const struct kv od[][2] = {
		{ { "karpenter.sh/capacity-type", "on-demand" }, { 0, 0 } },
		{ { "eks.amazonaws.com/capacityType", "spot" }, { 0, 0 } },	/* EKS spells it SPOT */
		{ { "cloud.google.com/gke-spot", "false" }, { 0, 0 } },
		{ { "kubernetes.azure.com/scalesetpriority", "regular" }, { 0, 0 } },
		{ { "node.kubernetes.io/instance-type", "p4d.24xlarge" }, { 0, 0 } },
		{ { 0, 0 }, { 0, 0 } },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(spot) / sizeof(spot[0]); i++)
		assert_int_equal(gf_capacity_type_of(kv_label, spot[i]), GF_CAPACITY_SPOT);
	for (size_t i = 0; i < sizeof(od) / sizeof(od[0]); i++)
		assert_int_equal(gf_capacity_type_of(kv_label, od[i]), GF_CAPACITY_ON_DEMAND);
}

static void names_round_trip(void **state)
{
	enum gf_spot_tolerance t;
	enum gf_checkpoint c;

	(void)state;
	assert_true(gf_spot_tolerance_find("preferred", &t));
	assert_int_equal(t, GF_SPOT_PREFERRED);
	assert_false(gf_spot_tolerance_find("yes", &t));
	assert_true(gf_checkpoint_find("periodic", &c));
	assert_int_equal(c, GF_CKPT_PERIODIC);
	assert_string_equal(gf_checkpoint_name(GF_CKPT_SIGNAL), "signal");
	assert_string_equal(gf_capacity_type_name(GF_CAPACITY_SPOT), "spot");
}

/* ---- the loop ---- */

struct fx {
	struct gf_catalog cat;
	gf_loop *L;
};

/* nod on-demand then nsp spot nodes of one GPU each ($2 and $1 per GPU-hour), backfill. */
static struct fx *fx_new(int nod, int nsp, enum gf_notice_mode mode)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct gf_node_spec n[16];
	struct gf_loop_config cfg = { .policy = GF_QP_BACKFILL, .seed = 1, .horizon = 1000000 };
	struct gf_policy_env env = { .features = gf_features_default() };
	struct gf_spot_config sc = { .mode = mode, .pools = true, .drain_grace = 30, .account_until = 1000000 };

	assert_non_null(f);
	assert_true(nod + nsp <= 16);
	for (int i = 0; i < nod + nsp; i++)
		n[i] = tu_node(i < nod ? "od" : "spot", 8000, 8192, 1, -1);
	gf_catalog_init(&f->cat);
	env.cat = &f->cat;
	assert_int_equal(gf_loop_create(n, (size_t)(nod + nsp), &gf_policy_best_fit, &env, &cfg, &f->L), GF_OK);
	assert_int_equal(gf_loop_spot_enable(f->L, &sc), GF_OK);
	for (int i = 0; i < nod + nsp; i++)
		assert_int_equal(gf_loop_node_capacity(f->L, (uint32_t)i, i < nod ? GF_CAPACITY_ON_DEMAND : GF_CAPACITY_SPOT,
						       i < nod ? 2.0 : 1.0),
				 GF_OK);
	return f;
}

static void fx_free(struct fx *f)
{
	gf_loop_destroy(f->L);
	gf_catalog_release(&f->cat);
	free(f);
}

static uint32_t submit(struct fx *f, uint32_t npods, int64_t arrival, int64_t duration, enum gf_spot_tolerance tol,
		       enum gf_checkpoint ck, int64_t ck_s)
{
	struct gf_job_spec s = { .pod = tu_pod("j", 1000, 1024, 1, 1000, 0), .npods = npods,
				 .arrival = arrival, .duration = duration };
	struct gf_job_spot sp = { tol, ck, ck_s };
	uint32_t id;

	assert_int_equal(gf_loop_submit(f->L, &s, &id), GF_OK);
	assert_int_equal(gf_loop_job_spot(f->L, id, &sp), GF_OK);
	return id;
}

static struct gf_job_info info(struct fx *f, uint32_t id)
{
	struct gf_job_info i;

	gf_loop_job(f->L, id, &i);
	return i;
}

static struct gf_spot_job_info sinfo(struct fx *f, uint32_t id)
{
	struct gf_spot_job_info i;

	gf_loop_spot_job(f->L, id, &i);
	return i;
}

/* A cycle at now; the nodes job id's members were bound to in it, as a bit set (0: none). */
static uint32_t cycle_nodes(struct fx *f, int64_t now, uint32_t id)
{
	struct gf_loop_decisions d;
	uint32_t set = 0;

	assert_int_equal(gf_loop_cycle(f->L, now, &d), GF_OK);
	for (size_t k = 0; k < d.nbinds; k++)
		if (d.binds[k].job == id)
			set |= 1u << d.binds[k].node;
	return set;
}

/* Drive the loop and its spot actions until nothing is left (the replay's order). */
static void run_out(struct fx *f)
{
	for (;;) {
		int64_t t = INT64_MAX, x;

		if (gf_loop_next_event(f->L, &x) && x < t)
			t = x;
		if (gf_loop_spot_next(f->L, &x) && x < t)
			t = x;
		if (t == INT64_MAX)
			return;
		assert_int_equal(gf_loop_cycle(f->L, t, NULL), GF_OK);
		assert_int_equal(gf_loop_spot_due(f->L), GF_OK);
		assert_int_equal(gf_loop_cycle(f->L, t, NULL), GF_OK);
	}
}

static void never_stays_off_spot_preferred_goes_first(void **state)
{
	struct fx *f = fx_new(2, 2, GF_NOTICE_CHECKPOINT);	/* nodes 0,1 on-demand; 2,3 spot */

	(void)state;
	uint32_t a = submit(f, 1, 0, 100, GF_SPOT_PREFERRED, GF_CKPT_NONE, 0);
	uint32_t b = submit(f, 1, 0, 100, GF_SPOT_NEVER, GF_CKPT_NONE, 0);
	uint32_t c = submit(f, 1, 0, 100, GF_SPOT_NEVER, GF_CKPT_NONE, 0);
	uint32_t d = submit(f, 1, 0, 100, GF_SPOT_NEVER, GF_CKPT_NONE, 0);
	struct gf_loop_decisions dec;

	assert_int_equal(gf_loop_cycle(f->L, 0, &dec), GF_OK);
	for (size_t k = 0; k < dec.nbinds; k++) {
		if (dec.binds[k].job == a)
			assert_true(dec.binds[k].node >= 2);
		else
			assert_true(dec.binds[k].node < 2);	/* never on spot */
	}
	/* a on spot, two of b, c, d on the on-demand nodes, the third waits although a spot node is free */
	assert_int_equal(info(f, a).state, GF_JOB_RUNNING);
	assert_int_equal((info(f, b).state == GF_JOB_RUNNING) + (info(f, c).state == GF_JOB_RUNNING) +
				 (info(f, d).state == GF_JOB_RUNNING),
			 2);
	fx_free(f);
}

static void gang_never_straddles_capacity_types(void **state)
{
	struct fx *f = fx_new(1, 1, GF_NOTICE_CHECKPOINT);	/* one on-demand, one spot node */

	(void)state;
	uint32_t g = submit(f, 2, 0, 100, GF_SPOT_ALLOWED, GF_CKPT_NONE, 0);

	assert_int_equal(cycle_nodes(f, 0, g), 0);	/* it would fit across both: it may not */
	assert_int_equal(info(f, g).state, GF_JOB_PENDING);
	fx_free(f);

	f = fx_new(1, 2, GF_NOTICE_CHECKPOINT);	/* two spot nodes: the gang goes there, whole */
	g = submit(f, 2, 0, 100, GF_SPOT_PREFERRED, GF_CKPT_NONE, 0);
	assert_int_equal(cycle_nodes(f, 0, g), (1u << 1) | (1u << 2));
	fx_free(f);
}

/* One preferred job of 1000 s on the spot node (node 1), a notice at 300 for 420, an on-demand node free. */
static struct fx *one_on_spot(enum gf_notice_mode mode, enum gf_checkpoint ck, int64_t ck_s, uint32_t *id)
{
	struct fx *f = fx_new(1, 1, mode);

	*id = submit(f, 1, 0, 1000, GF_SPOT_PREFERRED, ck, ck_s);
	assert_int_equal(cycle_nodes(f, 0, *id), 1u << 1);
	assert_int_equal(gf_loop_cycle(f->L, 300, NULL), GF_OK);
	assert_int_equal(gf_loop_spot_notice(f->L, 1, 420), GF_OK);
	assert_int_equal(gf_loop_cycle(f->L, 300, NULL), GF_OK);	/* what it stopped is placed again */
	return f;
}

static void signal_that_fits_keeps_all_its_progress(void **state)
{
	uint32_t id;
	struct fx *f = one_on_spot(GF_NOTICE_CHECKPOINT, GF_CKPT_SIGNAL, 60, &id);
	int64_t t;

	(void)state;
	/* it saves for 60 s after the notice, then stops; 700 s left, restarted on the on-demand node */
	assert_true(gf_loop_spot_next(f->L, &t));
	assert_int_equal(t, 360);
	run_out(f);
	struct gf_job_info ji = info(f, id);
	struct gf_spot_job_info si = sinfo(f, id);

	assert_int_equal(ji.state, GF_JOB_DONE);
	assert_int_equal(ji.start, 360);
	assert_int_equal(ji.end, 360 + 700);
	assert_true(si.lost_gpu_s == 0);
	assert_int_equal(si.stops, 1);
	assert_int_equal(si.first_start, 0);
	/* 360 GPU-s on spot at $1/h, 700 on-demand at $2/h */
	assert_true(si.gpu_s_spot == 360 && si.gpu_s_on_demand == 700);
	assert_true(si.cost > 0.1 + 0.3888 && si.cost < 0.1 + 0.3890);
	/* the node was reclaimed at 420 */
	assert_true(gf_cluster_node(gf_loop_cluster(f->L), 1)->flags & GF_NODE_GONE);
	fx_free(f);
}

static void signal_that_does_not_fit_stops_at_once(void **state)
{
	uint32_t id;
	struct fx *f = one_on_spot(GF_NOTICE_CHECKPOINT, GF_CKPT_SIGNAL, 200, &id);

	(void)state;
	run_out(f);
	/* 200 s of saving do not fit in 120: stopped at the notice, back to zero, 300 GPU-s lost */
	assert_int_equal(info(f, id).start, 300);
	assert_int_equal(info(f, id).end, 1300);
	assert_true(sinfo(f, id).lost_gpu_s == 300);
	fx_free(f);
}

static void periodic_runs_to_its_next_checkpoint(void **state)
{
	uint32_t id;
	struct fx *f = one_on_spot(GF_NOTICE_CHECKPOINT, GF_CKPT_PERIODIC, 100, &id);

	(void)state;
	run_out(f);
	/* progress 300 at the notice: the checkpoint at 400 comes at 400 <= 420; nothing lost */
	assert_int_equal(info(f, id).start, 400);
	assert_int_equal(info(f, id).end, 400 + 600);
	assert_true(sinfo(f, id).lost_gpu_s == 0);
	fx_free(f);

	/* interval 250: the next one (500) is after 420: stopped now, back to 250, 50 s lost */
	f = one_on_spot(GF_NOTICE_CHECKPOINT, GF_CKPT_PERIODIC, 250, &id);
	run_out(f);
	assert_int_equal(info(f, id).start, 300);
	assert_int_equal(info(f, id).end, 300 + 750);
	assert_true(sinfo(f, id).lost_gpu_s == 50);
	fx_free(f);
}

static void none_restarts_from_zero_and_short_jobs_are_left_alone(void **state)
{
	uint32_t id;
	struct fx *f = one_on_spot(GF_NOTICE_CHECKPOINT, GF_CKPT_NONE, 0, &id);

	(void)state;
	run_out(f);
	assert_int_equal(info(f, id).end, 300 + 1000);
	assert_true(sinfo(f, id).lost_gpu_s == 300);
	fx_free(f);

	/* a job that ends before the node leaves is not touched */
	f = fx_new(1, 1, GF_NOTICE_CHECKPOINT);
	id = submit(f, 1, 0, 400, GF_SPOT_PREFERRED, GF_CKPT_NONE, 0);
	assert_int_equal(cycle_nodes(f, 0, id), 1u << 1);
	assert_int_equal(gf_loop_cycle(f->L, 300, NULL), GF_OK);
	assert_int_equal(gf_loop_spot_notice(f->L, 1, 420), GF_OK);
	run_out(f);
	assert_int_equal(info(f, id).end, 400);
	assert_int_equal(sinfo(f, id).stops, 0);
	fx_free(f);
}

static void gang_stopped_whole_and_keeps_its_place(void **state)
{
	/* 2 spot nodes hold gang g (2 pods); later job b waits for them too (spot only... it is never) */
	struct fx *f = fx_new(2, 2, GF_NOTICE_CHECKPOINT);
	uint32_t g = submit(f, 2, 0, 1000, GF_SPOT_PREFERRED, GF_CKPT_SIGNAL, 30);
	uint32_t a = submit(f, 2, 0, 5000, GF_SPOT_NEVER, GF_CKPT_NONE, 0);	/* holds both on-demand nodes */
	uint32_t b = submit(f, 2, 100, 1000, GF_SPOT_ALLOWED, GF_CKPT_NONE, 0);

	(void)state;
	assert_int_equal(cycle_nodes(f, 0, g), (1u << 2) | (1u << 3));
	assert_int_equal(info(f, a).state, GF_JOB_RUNNING);
	assert_int_equal(gf_loop_cycle(f->L, 100, NULL), GF_OK);
	assert_int_equal(info(f, b).state, GF_JOB_PENDING);
	/* node 3 leaves: the whole gang stops at 330 (its member on node 2 too) */
	assert_int_equal(gf_loop_cycle(f->L, 300, NULL), GF_OK);
	assert_int_equal(gf_loop_spot_notice(f->L, 3, 420), GF_OK);
	assert_int_equal(gf_loop_cycle(f->L, 330, NULL), GF_OK);
	assert_int_equal(gf_loop_spot_due(f->L), GF_OK);
	assert_int_equal(info(f, g).state, GF_JOB_PENDING);
	assert_int_equal(gf_loop_cycle(f->L, 330, NULL), GF_OK);
	/* node 3 is gone at 420; a spot node comes back at 500: the gang (arrived first) takes it, not b */
	assert_int_equal(gf_loop_cycle(f->L, 420, NULL), GF_OK);
	assert_int_equal(gf_loop_spot_due(f->L), GF_OK);
	assert_int_equal(gf_loop_cycle(f->L, 500, NULL), GF_OK);
	struct gf_node_spec n = tu_node("spot2", 8000, 8192, 1, -1);
	uint32_t at;

	assert_int_equal(gf_loop_node_add(f->L, &n, &at), GF_OK);
	assert_int_equal(gf_loop_node_capacity(f->L, at, GF_CAPACITY_SPOT, 1.0), GF_OK);
	assert_int_equal(cycle_nodes(f, 500, g), (1u << 2) | (1u << at));
	assert_int_equal(info(f, b).state, GF_JOB_PENDING);
	run_out(f);
	/* 300 s saved by the signal: 700 left */
	assert_int_equal(info(f, g).end, 500 + 700);
	assert_true(sinfo(f, g).lost_gpu_s == 0);
	fx_free(f);
}

static void drain_evicts_blind_and_requeues_at_the_tail(void **state)
{
	uint32_t id;
	/* periodic 100 at progress 300: gpufleet would run to 400; drain kills at once (keeps 300) */
	struct fx *f = one_on_spot(GF_NOTICE_DRAIN, GF_CKPT_PERIODIC, 100, &id);

	(void)state;
	assert_int_equal(info(f, id).start, 300);	/* evicted at the notice, restarted on node 0 */
	assert_true(gf_cluster_node(gf_loop_cluster(f->L), 1)->flags & GF_NODE_LEAVING);
	run_out(f);
	assert_int_equal(info(f, id).end, 300 + 700);
	assert_true(sinfo(f, id).lost_gpu_s == 0);
	fx_free(f);

	/* signal 60 s does not fit drain's 30 s grace: killed, progress lost */
	f = one_on_spot(GF_NOTICE_DRAIN, GF_CKPT_SIGNAL, 60, &id);
	run_out(f);
	assert_true(sinfo(f, id).lost_gpu_s == 300);
	fx_free(f);
}

static void ignore_keeps_placing_until_the_reclaim_kills(void **state)
{
	uint32_t id;
	struct fx *f = one_on_spot(GF_NOTICE_IGNORE, GF_CKPT_SIGNAL, 60, &id);

	(void)state;
	/* not cordoned, still running at the notice */
	assert_false(gf_cluster_node(gf_loop_cluster(f->L), 1)->flags & GF_NODE_FLAGS);
	assert_int_equal(info(f, id).state, GF_JOB_RUNNING);
	run_out(f);
	/* killed at 420 without a signal: back to zero, 420 s lost */
	assert_int_equal(info(f, id).start, 420);
	assert_true(sinfo(f, id).lost_gpu_s == 420);
	fx_free(f);
}

static void kube_policy_partial_gang_lets_go_at_the_reclaim(void **state)
{
	/* kube-scheduler's per-pod queue, one pool mask for all (no pools): a gang of 2 binds one pod on
	 * the spot node and waits for the on-demand node; the reclaim unbinds it and removes the node */
	struct fx *f = calloc(1, sizeof(*f));
	struct gf_node_spec n[2] = { tu_node("od", 8000, 8192, 1, -1), tu_node("spot", 8000, 8192, 1, -1) };
	struct gf_loop_config cfg = { .policy = GF_QP_KUBE, .seed = 1, .horizon = 1000000 };
	struct gf_policy_env env = { .features = gf_features_default() };
	struct gf_spot_config sc = { .mode = GF_NOTICE_IGNORE, .account_until = 1000000 };

	(void)state;
	assert_non_null(f);
	gf_catalog_init(&f->cat);
	env.cat = &f->cat;
	assert_int_equal(gf_loop_create(n, 2, &gf_policy_best_fit, &env, &cfg, &f->L), GF_OK);
	assert_int_equal(gf_loop_spot_enable(f->L, &sc), GF_OK);
	assert_int_equal(gf_loop_node_capacity(f->L, 1, GF_CAPACITY_SPOT, 1.0), GF_OK);
	uint32_t a = submit(f, 1, 0, 5000, GF_SPOT_NEVER, GF_CKPT_NONE, 0);
	uint32_t g = submit(f, 2, 0, 100, GF_SPOT_ALLOWED, GF_CKPT_NONE, 0);

	assert_int_equal(gf_loop_cycle(f->L, 0, NULL), GF_OK);
	assert_int_equal(info(f, a).state, GF_JOB_RUNNING);
	assert_int_equal(info(f, g).state, GF_JOB_PENDING);
	assert_int_equal(gf_cluster_node(gf_loop_cluster(f->L), 1)->npods, 1);	/* g's first pod */
	assert_int_equal(gf_loop_spot_notice(f->L, 1, 200), GF_OK);
	assert_int_equal(gf_loop_cycle(f->L, 200, NULL), GF_OK);
	assert_int_equal(gf_loop_spot_due(f->L), GF_OK);
	assert_true(gf_cluster_node(gf_loop_cluster(f->L), 1)->flags & GF_NODE_GONE);
	assert_int_equal(info(f, g).state, GF_JOB_PENDING);
	fx_free(f);
}

static void bad_arguments(void **state)
{
	struct fx *f = fx_new(1, 1, GF_NOTICE_CHECKPOINT);
	struct gf_job_spot bad = { GF_SPOT_ALLOWED, GF_CKPT_PERIODIC, 0 };
	uint32_t id = submit(f, 1, 0, 10, GF_SPOT_NEVER, GF_CKPT_NONE, 0);
	struct gf_spot_config sc = { .mode = GF_NOTICE_CHECKPOINT };

	(void)state;
	assert_int_equal(gf_loop_job_spot(f->L, id, &bad), GF_INVAL);
	assert_int_equal(gf_loop_job_spot(f->L, id + 1, &bad), GF_RANGE);
	assert_int_equal(gf_loop_node_capacity(f->L, 9, GF_CAPACITY_SPOT, 1), GF_RANGE);
	assert_int_equal(gf_loop_node_capacity(f->L, 0, GF_CAPACITY_SPOT, -1), GF_INVAL);
	assert_int_equal(gf_loop_spot_enable(f->L, &sc), GF_STATE);
	assert_int_equal(gf_loop_cycle(f->L, 50, NULL), GF_OK);
	assert_int_equal(gf_loop_spot_notice(f->L, 1, 10), GF_INVAL);
	assert_int_equal(gf_loop_spot_notice(f->L, 7, 100), GF_RANGE);
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(capacity_type_from_labels),
		cmocka_unit_test(names_round_trip),
		cmocka_unit_test(never_stays_off_spot_preferred_goes_first),
		cmocka_unit_test(gang_never_straddles_capacity_types),
		cmocka_unit_test(signal_that_fits_keeps_all_its_progress),
		cmocka_unit_test(signal_that_does_not_fit_stops_at_once),
		cmocka_unit_test(periodic_runs_to_its_next_checkpoint),
		cmocka_unit_test(none_restarts_from_zero_and_short_jobs_are_left_alone),
		cmocka_unit_test(gang_stopped_whole_and_keeps_its_place),
		cmocka_unit_test(drain_evicts_blind_and_requeues_at_the_tail),
		cmocka_unit_test(ignore_keeps_placing_until_the_reclaim_kills),
		cmocka_unit_test(kube_policy_partial_gang_lets_go_at_the_reclaim),
		cmocka_unit_test(bad_arguments),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
