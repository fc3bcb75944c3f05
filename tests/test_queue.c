/*
 * tests/test_queue.c - queue/: the event heap's order, and the time loop's
 * rules on hand-built cases (gang atomicity, strict FIFO blocking, skip-ahead,
 * reservation times, backfill admissibility, the kube control's partial
 * gangs), then thousands of seeded random small cases checking that backfill
 * never starts a reservation holder later than its first promise (or, with
 * priorities, than its reservation unless a higher priority took the room)
 * and that no gang-aware policy deadlocks, and determinism.  One cycle: the
 * caller-driven mode the live scheduler uses (open durations, gf_loop_end,
 * gf_loop_unbind, why-not) on hand-built cases, and on the random cases the
 * same job stream driven both ways (the replay's events, and jobs submitted
 * on arrival and ended by the caller) gives the same decisions pod by pod.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/rng.h"
#include "queue/events.h"
#include "queue/loop.h"
#include "testutil.h"

/* ---- the event heap ---- */

static void events_pop_by_time_then_push_order(void **state)
{
	struct gf_events h;
	struct gf_event e;
	const int64_t times[] = { 5, 1, 5, 3, 1, 5, 0 };
	const uint32_t want[] = { 6, 1, 4, 3, 0, 2, 5 };	/* job ids, popped */

	(void)state;
	gf_events_init(&h);
	for (uint32_t i = 0; i < 7; i++)
		assert_int_equal(gf_events_push(&h, times[i], GF_EV_ARRIVAL, i), GF_OK);
	for (int i = 0; i < 7; i++) {
		assert_true(gf_events_pop(&h, &e));
		assert_int_equal(e.job, want[i]);
	}
	assert_false(gf_events_pop(&h, &e));
	gf_events_release(&h);
}

static void events_many_sorted(void **state)
{
	struct gf_events h;
	struct gf_event e, prev = { 0 };
	struct gf_rng rng;

	(void)state;
	gf_events_init(&h);
	gf_rng_init(&rng, 7);
	for (uint32_t i = 0; i < 5000; i++)
		assert_int_equal(gf_events_push(&h, (int64_t)gf_rng_below(&rng, 100), GF_EV_END, i), GF_OK);
	for (int i = 0; i < 5000; i++) {
		assert_true(gf_events_pop(&h, &e));
		if (i > 0)
			assert_true(e.time > prev.time || (e.time == prev.time && e.seq > prev.seq));
		prev = e;
	}
	gf_events_release(&h);
}

/* ---- loop fixtures ---- */

struct fx {
	struct gf_catalog cat;
	gf_loop *L;
};

static struct fx *fx_new(enum gf_queue_policy qp, const struct gf_node_spec *nodes, size_t n)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct gf_loop_config cfg = { .policy = qp, .seed = 1, .horizon = 1000000, .sample_every = 0 };
	struct gf_policy_env env = { .features = gf_features_default() };

	assert_non_null(f);
	gf_catalog_init(&f->cat);
	env.cat = &f->cat;
	assert_int_equal(gf_loop_create(nodes, n, &gf_policy_best_fit, &env, &cfg, &f->L), GF_OK);
	return f;
}

static void fx_free(struct fx *f)
{
	gf_loop_destroy(f->L);
	gf_catalog_release(&f->cat);
	free(f);
}

static struct gf_job_spec job(int gpus, int milli, uint32_t npods, int64_t arrival, int64_t duration)
{
	struct gf_job_spec s = {
		.pod = tu_pod("j", 1000, 1024, gpus, milli, 0), .npods = npods,
		.arrival = arrival, .duration = duration,
	};
	return s;
}

static uint32_t submit(struct fx *f, struct gf_job_spec s)
{
	uint32_t id;

	assert_int_equal(gf_loop_submit(f->L, &s, &id), GF_OK);
	return id;
}

static struct gf_job_info info(struct fx *f, uint32_t id)
{
	struct gf_job_info ji;

	gf_loop_job(f->L, id, &ji);
	return ji;
}

static void two_nodes(struct gf_node_spec *n)
{
	n[0] = tu_node("n0", 64000, 262144, 8, -1);
	n[1] = tu_node("n1", 64000, 262144, 8, -1);
}

/* ---- rules ---- */

static void gang_is_all_or_nothing(void **state)
{
	struct gf_node_spec n[2];
	struct fx *f;
	uint32_t a, g, big;

	(void)state;
	two_nodes(n);
	f = fx_new(GF_QP_BEST_EFFORT_FIFO, n, 2);
	a = submit(f, job(4, 1000, 1, 0, 100));
	g = submit(f, job(8, 1000, 2, 1, 50));
	big = submit(f, job(8, 1000, 3, 2, 50));	/* 3 x 8 GPUs: never fits 2 nodes */
	assert_int_equal(gf_loop_run_until(f->L, 50), GF_OK);
	/* the gang found one free node but not two: nothing of it is bound */
	assert_int_equal(gf_cluster_gpu_used(gf_loop_cluster(f->L)), 4000);
	assert_int_equal(info(f, g).state, GF_JOB_PENDING);
	assert_int_equal(info(f, big).state, GF_JOB_UNRESOLVABLE);
	assert_int_equal(gf_loop_run(f->L), GF_OK);
	assert_int_equal(info(f, a).start, 0);
	assert_int_equal(info(f, g).start, 100);
	assert_false(info(f, g).partial);
	assert_int_equal(gf_cluster_gpu_used(gf_loop_cluster(f->L)), 0);
	fx_free(f);
}

/* One 8-GPU node, 7 GPUs busy until 100; B (8 GPUs) arrives at 1, C (1 GPU, run c_run) at 2. */
static void blocked_head(enum gf_queue_policy qp, int64_t c_run, int64_t *b_start, int64_t *c_start,
			 int64_t *promised_b)
{
	struct gf_node_spec n = tu_node("n0", 64000, 262144, 8, -1);
	struct fx *f = fx_new(qp, &n, 1);
	uint32_t b, c;
	int64_t t = -1;

	submit(f, job(7, 1000, 1, 0, 100));
	b = submit(f, job(8, 1000, 1, 1, 100));
	c = submit(f, job(1, 1000, 1, 2, c_run));
	assert_int_equal(gf_loop_run_until(f->L, 5), GF_OK);
	*promised_b = gf_loop_start_time(f->L, b, &t) == GF_OK ? t : -1;
	assert_int_equal(gf_loop_run(f->L), GF_OK);
	*b_start = info(f, b).start;
	*c_start = info(f, c).start;
	fx_free(f);
}

static void strict_fifo_blocks_everything_behind_the_head(void **state)
{
	int64_t b, c, p;

	(void)state;
	blocked_head(GF_QP_STRICT_FIFO, 50, &b, &c, &p);
	assert_int_equal(b, 100);
	assert_int_equal(c, 200);
	assert_int_equal(p, -1);	/* strict FIFO makes no reservation */
}

static void best_effort_skips_ahead_and_delays_the_head(void **state)
{
	int64_t b, c, p;

	(void)state;
	blocked_head(GF_QP_BEST_EFFORT_FIFO, 500, &b, &c, &p);
	assert_int_equal(c, 2);
	assert_int_equal(b, 502);	/* C, started ahead, held a GPU B needed */
}

static void backfill_reserves_and_admits_only_what_ends_in_time(void **state)
{
	int64_t b, c, p;

	(void)state;
	blocked_head(GF_QP_BACKFILL, 50, &b, &c, &p);
	assert_int_equal(p, 100);	/* "when will I start?" while pending */
	assert_int_equal(c, 2);		/* ends at 52 <= 100: backfilled */
	assert_int_equal(b, 100);
	blocked_head(GF_QP_BACKFILL, 500, &b, &c, &p);
	assert_int_equal(p, 100);
	assert_int_equal(b, 100);	/* C would end at 502: not admitted */
	assert_int_equal(c, 200);
}

static void backfill_admits_long_jobs_off_the_reserved_nodes(void **state)
{
	struct gf_node_spec n[2];
	struct fx *f;
	uint32_t b, c;
	int64_t t;

	(void)state;
	two_nodes(n);
	f = fx_new(GF_QP_BACKFILL, n, 2);
	submit(f, job(8, 1000, 1, 0, 100));		/* fills one node until 100 */
	submit(f, job(1, 1000, 1, 0, 10000));		/* a GPU of the other until 10000 */
	b = submit(f, job(8, 1000, 1, 1, 100));		/* reserved: the first node at 100 */
	c = submit(f, job(1, 1000, 1, 2, 5000));	/* long, but fits beside the 1-GPU job */
	assert_int_equal(gf_loop_run_until(f->L, 5), GF_OK);
	assert_int_equal(gf_loop_start_time(f->L, b, &t), GF_OK);
	assert_int_equal(t, 100);
	assert_int_equal(info(f, c).start, 2);
	assert_int_equal(gf_loop_run(f->L), GF_OK);
	assert_int_equal(info(f, b).start, 100);
	assert_int_equal(info(f, b).promised, 100);
	fx_free(f);
}

static void kube_binds_members_one_by_one(void **state)
{
	struct gf_node_spec n[2];
	struct fx *f;
	uint32_t g;
	struct gf_loop_stats st;

	(void)state;
	two_nodes(n);
	f = fx_new(GF_QP_KUBE, n, 2);
	submit(f, job(8, 1000, 1, 0, 100));
	g = submit(f, job(8, 1000, 2, 1, 50));
	assert_int_equal(gf_loop_run_until(f->L, 50), GF_OK);
	/* one member holds a whole node while its gang is incomplete */
	assert_int_equal(gf_cluster_gpu_used(gf_loop_cluster(f->L)), 16000);
	assert_int_equal(gf_loop_run(f->L), GF_OK);
	assert_true(info(f, g).partial);
	assert_int_equal(info(f, g).start, 100);
	gf_loop_stats(f->L, &st);
	assert_int_equal(st.stalled, 0);
	fx_free(f);
}

/* Gang A (low priority) holds one node; B (higher) takes the next one freed: neither completes. */
static void deadlock_case(enum gf_queue_policy qp, struct gf_loop_stats *st)
{
	struct gf_node_spec n[2];
	struct fx *f;
	struct gf_job_spec b = job(8, 1000, 2, 5, 50);

	two_nodes(n);
	f = fx_new(qp, n, 2);
	submit(f, job(8, 1000, 1, 0, 10));
	submit(f, job(8, 1000, 2, 1, 50));
	b.priority = 1;
	submit(f, b);
	assert_int_equal(gf_loop_run(f->L), GF_OK);
	gf_loop_stats(f->L, st);
	fx_free(f);
}

static void kube_gangs_deadlock_and_are_reported(void **state)
{
	struct gf_loop_stats st;

	(void)state;
	deadlock_case(GF_QP_KUBE, &st);
	assert_int_equal(st.stalled, 2);	/* reported, not looped on */
	for (int qp = GF_QP_STRICT_FIFO; qp < GF_QP_COUNT_; qp++) {
		deadlock_case((enum gf_queue_policy)qp, &st);
		assert_int_equal(st.stalled, 0);
	}
}

/* H1 and H2 (8 GPUs each) blocked behind two nearly full nodes; C (1 GPU, long) could run now. */
static void conservative_protects_every_blocked_job(void **state)
{
	struct gf_node_spec n[2];
	int64_t h2_start[2], c_start[2], h2_promised[2];

	(void)state;
	two_nodes(n);
	for (int k = 0; k < 2; k++) {
		struct fx *f = fx_new(k ? GF_QP_CONSERVATIVE : GF_QP_BACKFILL, n, 2);
		uint32_t h2, c;

		submit(f, job(7, 1000, 1, 0, 100));	/* n0 until 100 */
		submit(f, job(7, 1000, 1, 0, 200));	/* n1 until 200 */
		submit(f, job(8, 1000, 1, 1, 1000));	/* H1: n0 at 100 */
		h2 = submit(f, job(8, 1000, 1, 2, 100));	/* H2 */
		c = submit(f, job(1, 1000, 1, 3, 500));
		assert_int_equal(gf_loop_run(f->L), GF_OK);
		h2_start[k] = info(f, h2).start;
		h2_promised[k] = info(f, h2).promised;
		c_start[k] = info(f, c).start;
		fx_free(f);
	}
	/* EASY: C backfills beside the second node's job and H2 waits for C */
	assert_int_equal(c_start[0], 3);
	assert_int_equal(h2_start[0], 503);
	/* conservative: H2 holds the second node from 200, C may not take it */
	assert_int_equal(h2_promised[1], 200);
	assert_int_equal(h2_start[1], 200);
	assert_true(c_start[1] >= 300);
}

static struct fx *fx_preempt_wg(enum gf_queue_policy qp, const struct gf_node_spec *nodes, size_t n,
				 int64_t wait, int64_t grace)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct gf_loop_config cfg = { .policy = qp, .seed = 1, .horizon = 1000000, .preemption = true,
				      .preempt_wait = wait, .preempt_grace = grace };
	struct gf_policy_env env = { .features = gf_features_default() };

	assert_non_null(f);
	gf_catalog_init(&f->cat);
	env.cat = &f->cat;
	assert_int_equal(gf_loop_create(nodes, n, &gf_policy_best_fit, &env, &cfg, &f->L), GF_OK);
	return f;
}

static struct fx *fx_preempt(enum gf_queue_policy qp, const struct gf_node_spec *nodes, size_t n)
{
	return fx_preempt_wg(qp, nodes, n, 0, 0);
}

/*
 * The rule under backfill: evict only when the reservation is later than
 * now + wait ("the only way it fits soon"); then the preemptor holds the
 * victims' room at once but starts after their grace period.
 */
static void preemption_only_when_not_soon_and_after_the_grace(void **state)
{
	struct gf_node_spec n[1] = { tu_node("n0", 64000, 262144, 8, -1) };
	struct gf_job_spec hs = job(8, 1000, 1, 10, 100);
	const int64_t waits[2] = { 90, 89 };	/* the reservation is at 100, 90 s after H arrives */
	struct fx *f;
	uint32_t a, h;

	(void)state;
	hs.priority = 1;
	for (int k = 0; k < 2; k++) {
		f = fx_preempt_wg(GF_QP_BACKFILL, n, 1, waits[k], 5);
		a = submit(f, job(8, 1000, 1, 0, 100));
		h = submit(f, hs);
		assert_int_equal(gf_loop_run(f->L), GF_OK);
		if (k == 0) {	/* soon enough: H waits for A's end */
			assert_int_equal(info(f, h).start, 100);
			assert_int_equal(info(f, h).promised, 100);
			assert_int_equal(info(f, a).preemptions, 0);
		} else {	/* not soon: A is evicted at 10, H runs from 10 + 5 */
			assert_int_equal(info(f, a).preemptions, 1);
			assert_true(info(f, a).preempted_gpu_s == 80.0);	/* 10 s x 8 GPUs */
			assert_int_equal(info(f, h).start, 15);
			assert_int_equal(info(f, h).end, 115);
			assert_int_equal(info(f, a).start, 115);	/* A starts over after H */
		}
		fx_free(f);
	}
}

static void preemption_evicts_the_cheapest_and_requeues_it(void **state)
{
	struct gf_node_spec n[2];
	struct gf_job_spec hs = job(8, 1000, 1, 10, 100);
	struct fx *f;
	uint32_t a, b, h;

	(void)state;
	two_nodes(n);
	f = fx_preempt(GF_QP_BEST_EFFORT_FIFO, n, 2);
	a = submit(f, job(8, 1000, 1, 0, 1000));	/* 10 s of work at t = 10 */
	b = submit(f, job(8, 1000, 1, 5, 1000));	/* 5 s: the cheaper victim */
	hs.priority = 1;
	h = submit(f, hs);
	assert_int_equal(gf_loop_run(f->L), GF_OK);
	assert_int_equal(info(f, h).start, 10);
	assert_int_equal(info(f, a).preemptions, 0);
	assert_int_equal(info(f, b).preemptions, 1);
	assert_true(info(f, b).preempted_gpu_s == 40.0);	/* 5 s x 8 GPUs */
	assert_int_equal(info(f, b).start, 110);	/* back in the queue, runs when H ends */
	assert_int_equal(info(f, b).state, GF_JOB_DONE);
	fx_free(f);
}

static void preemption_evicts_gangs_whole_and_never_for_equal_priority(void **state)
{
	struct gf_node_spec n[3];
	struct gf_job_spec hs = job(8, 1000, 1, 10, 100);
	struct fx *f;
	uint32_t g, s, h;

	(void)state;
	two_nodes(n);
	n[2] = tu_node("n2", 64000, 262144, 8, -1);
	f = fx_preempt(GF_QP_BACKFILL, n, 3);
	s = submit(f, job(8, 1000, 1, 0, 1000));	/* 80 GPU-s lost at t = 10 */
	g = submit(f, job(8, 1000, 2, 8, 1000));	/* a gang: 2 x 8 x 2 s = 32 GPU-s */
	hs.priority = 1;
	h = submit(f, hs);
	assert_int_equal(gf_loop_run_until(f->L, 10), GF_OK);
	assert_int_equal(info(f, h).start, 10);
	assert_int_equal(info(f, g).preemptions, 1);
	assert_int_equal(info(f, s).preemptions, 0);
	/* the whole gang left: H's 8 GPUs and S's 8 are all that is bound */
	assert_int_equal(gf_cluster_gpu_used(gf_loop_cluster(f->L)), 16000);
	fx_free(f);

	/* an equal priority waits instead */
	f = fx_preempt(GF_QP_BEST_EFFORT_FIFO, n, 3);
	submit(f, job(8, 1000, 1, 0, 1000));
	submit(f, job(8, 1000, 2, 8, 1000));
	h = submit(f, job(8, 1000, 1, 10, 100));
	assert_int_equal(gf_loop_run(f->L), GF_OK);
	assert_int_equal(info(f, h).start, 1000);
	fx_free(f);
}

/* ---- disruption budgets in preemption ---- */

static struct fx *fx_budgets(const struct gf_node_spec *nodes, size_t n, const int32_t *budgets, size_t nb)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct gf_loop_config cfg = { .policy = GF_QP_BEST_EFFORT_FIFO, .seed = 1, .horizon = 1000000,
				      .preemption = true, .budgets = budgets, .nbudgets = nb };
	struct gf_policy_env env = { .features = gf_features_default() };

	assert_non_null(f);
	gf_catalog_init(&f->cat);
	env.cat = &f->cat;
	assert_int_equal(gf_loop_create(nodes, n, &gf_policy_best_fit, &env, &cfg, &f->L), GF_OK);
	return f;
}

static struct gf_job_spec in_budget(struct gf_job_spec s, uint16_t budget)
{
	s.budgets[0] = budget;
	return s;
}

/*
 * A and B fill two nodes and cost the same (8 GPUs, 10 s run at t = 10);
 * without budgets the tie goes to A (the first node).  With A's budget at 0
 * allowed disruptions B goes instead, and no budget is violated.
 */
static void budget_spares_the_protected_of_equal_victims(void **state)
{
	struct gf_node_spec n[2];
	struct gf_job_spec hs = job(8, 1000, 1, 10, 100);
	const int32_t allowed[1] = { 0 };
	struct gf_loop_stats st;

	(void)state;
	two_nodes(n);
	hs.priority = 1;
	for (int k = 0; k < 2; k++) {
		struct fx *f = fx_budgets(n, 2, allowed, k);	/* k = 0: no budgets */
		uint32_t a = submit(f, in_budget(job(8, 1000, 1, 0, 1000), 1));
		uint32_t b = submit(f, job(8, 1000, 1, 0, 1000));
		uint32_t h = submit(f, hs);

		assert_int_equal(gf_loop_run_until(f->L, 10), GF_OK);
		assert_int_equal(info(f, h).start, 10);
		assert_int_equal(info(f, a).preemptions, k == 0 ? 1 : 0);
		assert_int_equal(info(f, b).preemptions, k == 0 ? 0 : 1);
		gf_loop_stats(f->L, &st);
		assert_int_equal(st.preemptions, 1);
		assert_int_equal(st.budget_violations, 0);
		fx_free(f);
	}
}

/*
 * On one node: A (4 GPUs from 5, 20 GPU-s at t = 10: the cheaper) and B
 * (4 GPUs from 0, 40 GPU-s); H needs 4.  Without budgets A goes; with A's
 * budget at 0 B goes, within the node, and nothing is violated.
 */
static void budget_spares_the_protected_on_one_node(void **state)
{
	struct gf_node_spec n[1] = { tu_node("n0", 64000, 262144, 8, -1) };
	struct gf_job_spec hs = job(4, 1000, 1, 10, 100);
	const int32_t allowed[1] = { 0 };
	struct gf_loop_stats st;

	(void)state;
	hs.priority = 1;
	for (int k = 0; k < 2; k++) {
		struct fx *f = fx_budgets(n, 1, allowed, k);	/* k = 0: no budgets */
		uint32_t b = submit(f, job(4, 1000, 1, 0, 1000));
		uint32_t a = submit(f, in_budget(job(4, 1000, 1, 5, 1000), 1));
		uint32_t h = submit(f, hs);

		assert_int_equal(gf_loop_run_until(f->L, 10), GF_OK);
		assert_int_equal(info(f, h).start, 10);
		assert_int_equal(info(f, a).preemptions, k == 0 ? 1 : 0);
		assert_int_equal(info(f, b).preemptions, k == 0 ? 0 : 1);
		gf_loop_stats(f->L, &st);
		assert_int_equal(st.preemptions, 1);
		assert_int_equal(st.budget_violations, 0);
		fx_free(f);
	}
}

/*
 * Best effort: A and B share one budget allowing 1 disruption.  H1 at 10
 * evicts one of them within it (A: the first node); H2 at 20 finds the
 * budget spent and B the only room: B is still evicted, one violation.
 */
static void budget_is_best_effort_and_counts_down(void **state)
{
	struct gf_node_spec n[2];
	struct gf_job_spec h1s = job(8, 1000, 1, 10, 1000), h2s = job(8, 1000, 1, 20, 1000);
	const int32_t allowed[1] = { 1 };
	struct gf_loop_stats st;
	struct fx *f;
	uint32_t a, b, h1, h2;

	(void)state;
	two_nodes(n);
	h1s.priority = h2s.priority = 1;
	f = fx_budgets(n, 2, allowed, 1);
	a = submit(f, in_budget(job(8, 1000, 1, 0, 1000), 1));
	b = submit(f, in_budget(job(8, 1000, 1, 0, 1000), 1));
	h1 = submit(f, h1s);
	h2 = submit(f, h2s);
	assert_int_equal(gf_loop_run_until(f->L, 10), GF_OK);
	assert_int_equal(info(f, h1).start, 10);
	assert_int_equal(info(f, a).preemptions, 1);
	gf_loop_stats(f->L, &st);
	assert_int_equal(st.budget_violations, 0);
	assert_int_equal(gf_loop_run_until(f->L, 20), GF_OK);
	assert_int_equal(info(f, h2).start, 20);
	assert_int_equal(info(f, b).preemptions, 1);
	gf_loop_stats(f->L, &st);
	assert_int_equal(st.preemptions, 2);
	assert_int_equal(st.budget_violations, 1);
	/* new counts (the live scheduler's next cycle) replace the spent ones */
	assert_int_equal(gf_loop_set_budgets(f->L, allowed, 1), GF_OK);
	assert_int_equal(gf_loop_set_budgets(f->L, (const int32_t[]){ -1 }, 1), GF_INVAL);
	fx_free(f);
}

/*
 * A gang counts each member: G (2 x 8 GPUs on n0 and n1, 160 GPU-s at
 * t = 10) in budget 1, S (8 GPUs on n2 from 5: 40 GPU-s, the cheaper) in
 * budget 2 with 0 allowed.  Budget 1 allowing 1: evicting G violates it
 * once, as S violates its own: equal, so the cost decides (S).  Allowing 2:
 * G goes within its budget, S is spared although cheaper.
 */
static void budget_counts_each_gang_member(void **state)
{
	struct gf_node_spec n[3];
	struct gf_job_spec hs = job(8, 1000, 1, 10, 100);
	struct gf_loop_stats st;

	(void)state;
	two_nodes(n);
	n[2] = tu_node("n2", 64000, 262144, 8, -1);
	hs.priority = 1;
	for (int32_t g_allowed = 1; g_allowed <= 2; g_allowed++) {
		const int32_t allowed[2] = { g_allowed, 0 };
		struct fx *f = fx_budgets(n, 3, allowed, 2);
		uint32_t g = submit(f, in_budget(job(8, 1000, 2, 0, 1000), 1));
		uint32_t s = submit(f, in_budget(job(8, 1000, 1, 5, 1000), 2));
		uint32_t h = submit(f, hs);

		assert_int_equal(gf_loop_run_until(f->L, 10), GF_OK);
		assert_int_equal(info(f, h).start, 10);
		assert_int_equal(info(f, g).preemptions, g_allowed == 2);
		assert_int_equal(info(f, s).preemptions, g_allowed == 1);
		gf_loop_stats(f->L, &st);
		assert_int_equal(st.budget_violations, g_allowed == 1 ? 1 : 0);
		fx_free(f);
	}
}

/* ---- history estimates and the forecast ---- */

/*
 * History: C's estimate is the mean of its class's finished run times (A's
 * 100 s), so B's reservation behind C is at 110 + 100; when C outruns it at
 * 210 it is expected to run twice as long as it has (200 s): B's answer
 * moves to 310, and B starts at C's real end.
 */
static void history_estimates_from_finished_jobs(void **state)
{
	struct gf_node_spec n[1] = { tu_node("n0", 64000, 262144, 8, -1) };
	struct gf_loop_config cfg = { .policy = GF_QP_BACKFILL, .seed = 1, .horizon = 100000,
				      .estimate_history = true, .history_prior = 50 };
	struct gf_policy_env env = { .features = gf_features_default() };
	struct gf_loop_stats st;
	struct fx f;
	uint32_t b;
	int64_t t;

	(void)state;
	gf_catalog_init(&f.cat);
	env.cat = &f.cat;
	assert_int_equal(gf_loop_create(n, 1, &gf_policy_best_fit, &env, &cfg, &f.L), GF_OK);
	submit(&f, job(8, 1000, 1, 0, 100));	/* A: its estimate is the prior (50), it runs 100 */
	submit(&f, job(8, 1000, 1, 110, 300));	/* C */
	b = submit(&f, job(8, 1000, 1, 120, 10));
	assert_int_equal(gf_loop_run_until(f.L, 120), GF_OK);
	assert_int_equal(gf_loop_start_time(f.L, b, &t), GF_OK);
	assert_int_equal(t, 210);
	assert_int_equal(gf_loop_run_until(f.L, 210), GF_OK);
	assert_int_equal(gf_loop_start_time(f.L, b, &t), GF_OK);
	assert_int_equal(t, 310);
	assert_int_equal(gf_loop_run(f.L), GF_OK);
	assert_int_equal(info(&f, b).start, 410);
	gf_loop_stats(f.L, &st);
	assert_int_equal(st.short_estimates, 2);	/* C at 210 and 310 (A ended before a cycle saw it late) */
	assert_int_equal(st.late, 0);
	gf_loop_destroy(f.L);
	gf_catalog_release(&f.cat);
}

/*
 * The forecast: one 8-GPU node busy until 100; pending in order: H (8 GPUs,
 * 50 s; the reservation holder: 100), J (8 GPUs, 30 s: after H, 150), K
 * (8 GPUs: after J, 180).
 */
static void forecast_answers_every_pending_job(void **state)
{
	struct gf_node_spec n[1] = { tu_node("n0", 64000, 262144, 8, -1) };
	struct fx *f;
	uint32_t a, h, j, k;
	int64_t start[4];

	(void)state;
	f = fx_new(GF_QP_BACKFILL, n, 1);
	a = submit(f, job(8, 1000, 1, 0, 100));
	h = submit(f, job(8, 1000, 1, 1, 50));
	j = submit(f, job(8, 1000, 1, 2, 30));
	k = submit(f, job(8, 1000, 1, 3, 30));
	assert_int_equal(gf_loop_run_until(f->L, 3), GF_OK);
	assert_int_equal(gf_loop_forecast(f->L, start), GF_OK);
	assert_int_equal(start[a], 0);
	assert_int_equal(start[h], 100);
	assert_int_equal(start[j], 150);
	assert_int_equal(start[k], 180);
	assert_int_equal(gf_loop_run(f->L), GF_OK);
	/* exact estimates, one node: the forecast is what happened */
	assert_int_equal(info(f, j).start, 150);
	assert_int_equal(info(f, k).start, 180);
	fx_free(f);
}

/*
 * The forecast cut short, on the same queue: A runs until 100; H (the
 * holder) 100, J 150, K 180 in the whole forecast.  Horizon 160: K would
 * start at 180, so K and nothing after it; horizon 99: H's start (100) is
 * past it, but H keeps its reservation; two jobs: H and J; one: H.
 */
static void forecast_upto_stops_at_horizon_or_count(void **state)
{
	struct gf_node_spec n[1] = { tu_node("n0", 64000, 262144, 8, -1) };
	struct fx *f;
	uint32_t a, h, j, k;
	int64_t start[4];

	(void)state;
	f = fx_new(GF_QP_BACKFILL, n, 1);
	a = submit(f, job(8, 1000, 1, 0, 100));
	h = submit(f, job(8, 1000, 1, 1, 50));
	j = submit(f, job(8, 1000, 1, 2, 30));
	k = submit(f, job(8, 1000, 1, 3, 30));
	assert_int_equal(gf_loop_run_until(f->L, 3), GF_OK);
	assert_int_equal(gf_loop_forecast_upto(f->L, start, 160, SIZE_MAX), GF_OK);
	assert_int_equal(start[a], 0);
	assert_int_equal(start[h], 100);
	assert_int_equal(start[j], 150);
	assert_int_equal(start[k], -1);
	assert_int_equal(gf_loop_forecast_upto(f->L, start, 180, SIZE_MAX), GF_OK);
	assert_int_equal(start[k], 180);	/* at the horizon is within it */
	assert_int_equal(gf_loop_forecast_upto(f->L, start, 99, SIZE_MAX), GF_OK);
	assert_int_equal(start[a], 0);
	assert_int_equal(start[h], 100);
	assert_int_equal(start[j], -1);
	assert_int_equal(start[k], -1);
	assert_int_equal(gf_loop_forecast_upto(f->L, start, INT64_MAX, 2), GF_OK);
	assert_int_equal(start[h], 100);
	assert_int_equal(start[j], 150);
	assert_int_equal(start[k], -1);
	assert_int_equal(gf_loop_forecast_upto(f->L, start, INT64_MAX, 1), GF_OK);
	assert_int_equal(start[h], 100);
	assert_int_equal(start[j], -1);
	assert_int_equal(start[k], -1);
	assert_int_equal(gf_loop_forecast_upto(f->L, start, INT64_MAX, 0), GF_OK);
	assert_int_equal(start[a], 0);	/* started: its start */
	assert_int_equal(start[h], 100);	/* the holder: its reservation */
	assert_int_equal(start[j], -1);
	fx_free(f);
}

/*
 * The forecast's no-room memo (a blocked job tried again only when a
 * released node fits one of its pods): one 8-GPU node, four 2-GPU jobs
 * running until 10, 20, 30, 40; pending H (8 GPUs, 50 s: room only at 40,
 * the releases at 10, 20 and 30 leave no node that fits it), J (4 GPUs:
 * after H, 90), K (2 GPUs: beside J, 90).  The memo's skipped tries would
 * have failed: the answers are the in-order schedule's.
 */
static void forecast_memo_keeps_answers(void **state)
{
	struct gf_node_spec n[1] = { tu_node("n0", 64000, 262144, 8, -1) };
	struct fx *f;
	uint32_t h, j, k;
	int64_t start[7];

	(void)state;
	f = fx_new(GF_QP_BACKFILL, n, 1);
	for (int r = 1; r <= 4; r++)
		submit(f, job(2, 1000, 1, 0, 10 * r));
	h = submit(f, job(8, 1000, 1, 1, 50));
	j = submit(f, job(4, 1000, 1, 2, 10));
	k = submit(f, job(2, 1000, 1, 3, 10));
	assert_int_equal(gf_loop_run_until(f->L, 3), GF_OK);
	assert_int_equal(gf_loop_forecast(f->L, start), GF_OK);
	assert_int_equal(start[h], 40);
	assert_int_equal(start[j], 90);
	assert_int_equal(start[k], 90);
	assert_int_equal(gf_loop_run(f->L), GF_OK);
	assert_int_equal(info(f, h).start, 40);	/* the promise held (backfill starts K, J sooner) */
	fx_free(f);
}
/* ---- quotas ---- */

static struct gf_queue_quota quota(int64_t nominal_gpus, int32_t cohort)
{
	struct gf_queue_quota q = {
		.nominal = nominal_gpus * 1000, .borrowing_limit = GF_QUOTA_UNLIMITED,
		.lending_limit = GF_QUOTA_UNLIMITED, .cohort = cohort, .weight = 1,
	};
	return q;
}

static struct fx *fx_quota(enum gf_queue_policy qp, const struct gf_node_spec *nodes, size_t n,
			   const struct gf_queue_quota *q, size_t nq, bool preemption)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct gf_loop_config cfg = { .policy = qp, .seed = 1, .horizon = 1000000, .preemption = preemption,
				      .queues = q, .nqueues = nq };
	struct gf_policy_env env = { .features = gf_features_default() };

	assert_non_null(f);
	gf_catalog_init(&f->cat);
	env.cat = &f->cat;
	assert_int_equal(gf_loop_create(nodes, n, &gf_policy_best_fit, &env, &cfg, &f->L), GF_OK);
	return f;
}

static uint32_t submit_q(struct fx *f, struct gf_job_spec s, uint16_t queue)
{
	s.queue = queue;
	return submit(f, s);
}

/*
 * Queue A (8 GPUs) borrows B's unused 8 in their cohort; not when B lends
 * nothing, nor beyond A's borrowing limit, nor without a cohort.
 */
static void quota_borrows_within_the_limits(void **state)
{
	struct gf_node_spec n[2];
	struct gf_queue_quota q[2];

	(void)state;
	two_nodes(n);
	for (int k = 0; k < 4; k++) {
		struct fx *f;
		uint32_t a2;

		q[0] = quota(8, 0);
		q[1] = quota(8, 0);
		if (k == 1)
			q[1].lending_limit = 0;
		if (k == 2)
			q[0].borrowing_limit = 4000;
		if (k == 3)
			q[0].cohort = q[1].cohort = -1;
		f = fx_quota(GF_QP_BEST_EFFORT_FIFO, n, 2, q, 2, false);
		submit_q(f, job(8, 1000, 1, 0, 100), 0);
		a2 = submit_q(f, job(8, 1000, 1, 0, 100), 0);
		assert_int_equal(gf_loop_run_until(f->L, 0), GF_OK);
		assert_int_equal(gf_loop_queue_usage(f->L, 0), k == 0 ? 16000 : 8000);
		assert_int_equal(gf_loop_run(f->L), GF_OK);
		assert_int_equal(info(f, a2).start, k == 0 ? 0 : 100);
		fx_free(f);
	}
}

/*
 * B, within its nominal quota, reclaims the room A borrowed: one of A's jobs
 * is evicted (equal priorities), B starts at once; A's job, back in the
 * queue, cannot reclaim in turn (A would borrow) and waits for B's end.
 */
static void quota_reclaims_borrowed_room_without_cycles(void **state)
{
	struct gf_node_spec n[2];
	struct gf_queue_quota q[2] = { quota(8, 0), quota(8, 0) };
	struct gf_loop_stats st;
	struct fx *f;
	uint32_t a1, a2, b;

	(void)state;
	two_nodes(n);
	for (int qp = GF_QP_STRICT_FIFO; qp < GF_QP_COUNT_; qp++) {
		f = fx_quota((enum gf_queue_policy)qp, n, 2, q, 2, true);
		a1 = submit_q(f, job(8, 1000, 1, 0, 1000), 0);
		a2 = submit_q(f, job(8, 1000, 1, 0, 1000), 0);
		b = submit_q(f, job(8, 1000, 1, 10, 100), 1);
		assert_int_equal(gf_loop_run(f->L), GF_OK);
		gf_loop_stats(f->L, &st);
		assert_int_equal(info(f, b).start, 10);
		assert_int_equal(info(f, b).preemptions, 0);
		assert_int_equal(info(f, a1).preemptions + info(f, a2).preemptions, 1);
		assert_int_equal(st.preemptions, 1);
		assert_int_equal(st.reclaims, 1);
		/* the evicted one runs again when B's job has ended */
		assert_int_equal(info(f, a1).start + info(f, a2).start, 110);
		fx_free(f);
	}
}

/*
 * Fair share: A (weight 1) and B (weight 3) borrow all of C's 16 GPUs in
 * 2-GPU jobs; B gets 3x A's share: 12 GPUs against 4, whatever the order.
 */
static void quota_fair_share_among_borrowers(void **state)
{
	struct gf_node_spec n[2];
	struct gf_queue_quota q[3] = { quota(0, 0), quota(0, 0), quota(16, 0) };

	(void)state;
	two_nodes(n);
	q[1].weight = 3;
	for (int qp = GF_QP_STRICT_FIFO; qp < GF_QP_COUNT_; qp++) {
		struct fx *f = fx_quota((enum gf_queue_policy)qp, n, 2, q, 3, false);

		for (int k = 0; k < 8; k++)
			submit_q(f, job(2, 1000, 1, 0, 100), 0);
		for (int k = 0; k < 8; k++)
			submit_q(f, job(2, 1000, 1, 0, 100), 1);
		assert_int_equal(gf_loop_run_until(f->L, 0), GF_OK);
		assert_int_equal(gf_loop_queue_usage(f->L, 0), 4000);
		assert_int_equal(gf_loop_queue_usage(f->L, 1), 12000);
		assert_int_equal(gf_loop_run(f->L), GF_OK);
		fx_free(f);
	}
}

/* ---- per-queue ordering ---- */

/* Four queues of 100 GPUs each, outside any cohort (so quotas never refuse), with these orderings. */
static struct fx *fx_orderings(enum gf_queue_policy qp, const struct gf_node_spec *n, struct gf_queue_quota *q,
			       const enum gf_queue_ordering ord[4])
{
	for (int k = 0; k < 4; k++) {
		q[k] = quota(100, -1);
		q[k].ordering = ord[k];
	}
	return fx_quota(qp, n, 2, q, 4, false);
}

/*
 * One queue's ordering, by hand: queue 0 runs R (8 GPUs to t=100, n0) and S
 * (4 GPUs to t=50, n1).  Queue 1 then gets H (a gang of two 8-GPU pods,
 * t=1, runs 100), T (4 GPUs, t=2, runs 200) and V (4 GPUs, t=3, runs 40).
 *   strict:     H blocks T and V; H starts at 100 (R's end), T and V at 200.
 *   skip-ahead: T starts at 2 (n1's free half), V at 50 (S's end), H at 202
 *               (T's end: it needs both nodes whole; no reservation).
 *   backfill:   H holds a reservation at 100; T (ends 202) would delay it,
 *               waits to 200; V (ends 43) backfills at 3.
 * per-queue with queue 1's ordering gives each, and the same as the
 * matching policy applied to every queue.
 */
static void per_queue_ordering_one_queue(void **state)
{
	static const struct {
		enum gf_queue_ordering ord;
		enum gf_queue_policy same;
		int64_t h, t, v;
	} cases[] = {
		{ GF_ORDER_STRICT, GF_QP_STRICT_FIFO, 100, 200, 200 },
		{ GF_ORDER_SKIP_AHEAD, GF_QP_BEST_EFFORT_FIFO, 202, 2, 50 },
		{ GF_ORDER_BACKFILL, GF_QP_BACKFILL, 100, 200, 3 },
	};
	struct gf_node_spec n[2];
	struct gf_queue_quota q[4];

	(void)state;
	two_nodes(n);
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		for (int k = 0; k < 2; k++) {
			enum gf_queue_ordering ord[4] = { GF_ORDER_BACKFILL, cases[c].ord, GF_ORDER_BACKFILL,
							  GF_ORDER_BACKFILL };
			struct fx *f = fx_orderings(k ? cases[c].same : GF_QP_PER_QUEUE, n, q, ord);
			uint32_t r, s, h, t, v;

			r = submit_q(f, job(8, 1000, 1, 0, 100), 0);
			s = submit_q(f, job(4, 1000, 1, 0, 50), 0);
			h = submit_q(f, job(8, 1000, 2, 1, 100), 1);
			t = submit_q(f, job(4, 1000, 1, 2, 200), 1);
			v = submit_q(f, job(4, 1000, 1, 3, 40), 1);
			assert_int_equal(gf_loop_run(f->L), GF_OK);
			assert_int_equal(info(f, r).start, 0);
			assert_int_equal(info(f, s).start, 0);
			assert_int_equal(info(f, h).start, cases[c].h);
			assert_int_equal(info(f, t).start, cases[c].t);
			assert_int_equal(info(f, v).start, cases[c].v);
			fx_free(f);
		}
	}
}

/*
 * Three orderings in one loop (per-queue), by hand: queue 3 runs R (8 GPUs
 * to t=100, n0) and S (4 GPUs to t=50, n1).  Queue 0 (backfill): H, a gang
 * of two 8-GPU pods at t=1 (runs 100): reservation at 100.  Queue 2
 * (strict): Z, the same gang at t=1 (runs 100): no room, no reservation, it
 * blocks Y (4 GPUs at t=3, runs 10) although Y would backfill (ends 13).
 * Queue 1 (skip-ahead): T (4 GPUs at t=2, runs 200) fits n1 but would delay
 * H's reservation: a skip-ahead queue still honours reservations.  So H
 * starts at 100, Z at 200 (H's end), T and Y at 300 (Z's end); at t=3 Z
 * has no room, T would delay a reservation and Y is blocked by its head.
 * No global policy gives this: backfill starts Y at 3, the FIFOs T at 2.
 */
static void per_queue_orderings_mixed(void **state)
{
	const enum gf_queue_ordering ord[4] = { GF_ORDER_BACKFILL, GF_ORDER_SKIP_AHEAD, GF_ORDER_STRICT,
						GF_ORDER_BACKFILL };
	struct gf_node_spec n[2];
	struct gf_queue_quota q[4];
	struct fx *f;
	uint32_t h, z, t, y;

	(void)state;
	two_nodes(n);
	for (int qp = 0; qp < 4; qp++) {
		static const enum gf_queue_policy qps[4] = { GF_QP_PER_QUEUE, GF_QP_BACKFILL, GF_QP_STRICT_FIFO,
							     GF_QP_BEST_EFFORT_FIFO };
		f = fx_orderings(qps[qp], n, q, ord);
		submit_q(f, job(8, 1000, 1, 0, 100), 3);
		submit_q(f, job(4, 1000, 1, 0, 50), 3);
		h = submit_q(f, job(8, 1000, 2, 1, 100), 0);
		z = submit_q(f, job(8, 1000, 2, 1, 100), 2);
		t = submit_q(f, job(4, 1000, 1, 2, 200), 1);
		y = submit_q(f, job(4, 1000, 1, 3, 10), 2);
		assert_int_equal(gf_loop_run_until(f->L, 3), GF_OK);
		if (qp == 0) {
			assert_int_equal(info(f, z).why, GF_LOOP_WHY_NO_ROOM);
			assert_int_equal(info(f, t).why, GF_LOOP_WHY_RESERVED);
			assert_int_equal(info(f, y).why, GF_LOOP_WHY_BLOCKED);
		}
		assert_int_equal(gf_loop_run(f->L), GF_OK);
		if (qp == 0) {
			assert_int_equal(info(f, h).start, 100);
			assert_int_equal(info(f, z).start, 200);
			assert_int_equal(info(f, t).start, 300);
			assert_int_equal(info(f, y).start, 300);
		} else if (qp == 1) {
			assert_int_equal(info(f, y).start, 3);	/* the orderings are ignored */
		} else {
			assert_int_equal(info(f, t).start, 2);
		}
		fx_free(f);
	}
}

/* ---- topology ---- */

/*
 * One 8-GPU node whose GPUs form two NVLink islands, 0-3 and 4-7.  A 1-GPU
 * pod takes GPU 0; then a 4-GPU pod: the policy alone (best fit, lowest
 * free GPUs first) would take 1-4, across both islands; the loop takes
 * island 4-7 (policy/topology.h), as the live scheduler does.  The same
 * node without topology keeps the policy's 1-4.
 */
static void multi_gpu_pods_take_one_nvlink_island(void **state)
{
	(void)state;
	for (int topo = 0; topo < 2; topo++) {
		struct gf_node_spec n = tu_node("n0", 64000, 262144, 8, -1);
		struct gf_loop_decisions d;
		struct fx *f;

		for (int g = 0; g < 8; g++)
			n.topo[g] = topo ? (struct gf_gpu_topo){ 0, (int8_t)(g / 4) } : (struct gf_gpu_topo){ -1, -1 };
		f = fx_new(GF_QP_BACKFILL, &n, 1);
		submit(f, job(1, 1000, 1, 0, 100));
		assert_int_equal(gf_loop_cycle(f->L, 0, &d), GF_OK);
		assert_int_equal(d.nbinds, 1);
		assert_int_equal(d.binds[0].gpus[0], 0);
		submit(f, job(4, 1000, 1, 1, 100));
		assert_int_equal(gf_loop_cycle(f->L, 1, &d), GF_OK);
		assert_int_equal(d.nbinds, 1);
		for (int k = 0; k < 4; k++)
			assert_int_equal(d.binds[0].gpus[k], topo ? 4 + k : 1 + k);
		assert_int_equal(gf_loop_run(f->L), GF_OK);
		fx_free(f);
	}
}

static void bad_specs_are_refused(void **state)
{
	struct gf_node_spec n[2];
	struct fx *f;
	struct gf_job_spec s;
	uint32_t id;

	(void)state;
	two_nodes(n);
	f = fx_new(GF_QP_BACKFILL, n, 2);
	s = job(1, 1000, 0, 0, 10);
	assert_int_equal(gf_loop_submit(f->L, &s, &id), GF_INVAL);
	s = job(1, 1000, 1, -1, 10);
	assert_int_equal(gf_loop_submit(f->L, &s, &id), GF_INVAL);
	s = job(1, 1000, 1, 0, -5);
	assert_int_equal(gf_loop_submit(f->L, &s, &id), GF_INVAL);
	s = job(1, 1500, 1, 0, 5);
	assert_int_equal(gf_loop_submit(f->L, &s, &id), GF_INVAL);
	s = job(1, 1000, 1, 0, 5);
	s.cls = GF_LOOP_MAX_CLASSES;
	assert_int_equal(gf_loop_submit(f->L, &s, &id), GF_INVAL);
	assert_int_equal(gf_loop_njobs(f->L), 0);
	fx_free(f);
}

/* ---- randomized ---- */

struct scenario {
	struct gf_node_spec nodes[4];
	size_t nnodes;
	struct gf_job_spec jobs[24];
	size_t njobs;
};

static void make_scenario(uint64_t seed, struct scenario *sc, bool overestimate, bool priorities)
{
	struct gf_rng r;

	gf_rng_init(&r, seed);
	sc->nnodes = 2 + gf_rng_below(&r, 3);
	for (size_t i = 0; i < sc->nnodes; i++) {
		char name[24];

		snprintf(name, sizeof(name), "n%zu", i);
		sc->nodes[i] = tu_node(name, 64000, 262144, 1 + (int)gf_rng_below(&r, 8), -1);
	}
	sc->njobs = 10 + gf_rng_below(&r, 15);
	for (size_t k = 0; k < sc->njobs; k++) {
		int gpus = 1 + (int)gf_rng_below(&r, 8);
		int milli = gf_rng_below(&r, 4) == 0 ? 100 * (1 + (int)gf_rng_below(&r, 9)) : 1000;

		if (milli < 1000)
			gpus = 1;
		sc->jobs[k] = job(gpus, milli, 1 + (uint32_t)gf_rng_below(&r, 3),
				  (int64_t)gf_rng_below(&r, 50), 1 + (int64_t)gf_rng_below(&r, 100));
		sc->jobs[k].pod.cpu_milli = 1000 * (1 + (int64_t)gf_rng_below(&r, 16));
		if (overestimate)
			sc->jobs[k].estimate = sc->jobs[k].duration * (1 + (int64_t)gf_rng_below(&r, 3));
		if (priorities)
			sc->jobs[k].priority = (int32_t)gf_rng_below(&r, 3);
	}
}

static gf_loop *run_scenario_p(const struct scenario *sc, enum gf_queue_policy qp, struct gf_catalog *cat,
				bool preemption)
{
	struct gf_loop_config cfg = { .policy = qp, .seed = 3, .horizon = 1000, .preemption = preemption,
				      .preempt_wait = 20, .preempt_grace = preemption ? 3 : 0 };
	struct gf_policy_env env = { .cat = cat, .features = gf_features_default() };
	gf_loop *L;
	uint32_t id;

	assert_int_equal(gf_loop_create(sc->nodes, sc->nnodes, &gf_policy_best_fit, &env, &cfg, &L), GF_OK);
	for (size_t k = 0; k < sc->njobs; k++)
		assert_int_equal(gf_loop_submit(L, &sc->jobs[k], &id), GF_OK);
	assert_int_equal(gf_loop_run(L), GF_OK);
	return L;
}

static gf_loop *run_scenario(const struct scenario *sc, enum gf_queue_policy qp, struct gf_catalog *cat)
{
	return run_scenario_p(sc, qp, cat, false);
}

/*
 * With equal priorities a reservation holder stays the holder until it
 * starts, so it must start by its first promise; with priorities a
 * higher-priority arrival may take the room (then the loop does not count
 * it late), and no holder may ever be late otherwise.
 */
static void check_outcome(gf_loop *L, enum gf_queue_policy qp, uint64_t seed, bool priorities)
{
	struct gf_loop_stats st;
	char why[256];

	gf_loop_stats(L, &st);
	if (qp != GF_QP_KUBE && st.stalled != 0)
		fail_msg("seed %llu, %s: %u jobs stalled (gang deadlock)", (unsigned long long)seed,
			 gf_queue_policy_name(qp), st.stalled);
	for (uint32_t id = 0; id < gf_loop_njobs(L); id++) {
		struct gf_job_info ji;

		gf_loop_job(L, id, &ji);
		if (ji.state == GF_JOB_UNRESOLVABLE)
			continue;
		if (qp != GF_QP_KUBE && ji.state != GF_JOB_DONE)
			fail_msg("seed %llu, %s: job %u never ran", (unsigned long long)seed,
				 gf_queue_policy_name(qp), id);
		if (qp != GF_QP_KUBE && ji.partial)
			fail_msg("seed %llu: job %u was partially placed", (unsigned long long)seed, id);
		if (!priorities && ji.promised >= 0 && ji.start > ji.promised)
			fail_msg("seed %llu, %s: job %u promised %lld, started %lld", (unsigned long long)seed,
				 gf_queue_policy_name(qp), id, (long long)ji.promised, (long long)ji.start);
	}
	if (st.late != 0)
		fail_msg("seed %llu, %s: %llu reservations kept late", (unsigned long long)seed,
			 gf_queue_policy_name(qp), (unsigned long long)st.late);
	assert_int_equal(gf_cluster_check(gf_loop_cluster(L), why, sizeof(why)), GF_OK);
	if (st.stalled == 0)
		assert_int_equal(gf_cluster_gpu_used(gf_loop_cluster(L)), 0);
}

static void random_backfill_never_delays_a_reservation(void **state)
{
	uint64_t promises = 0;

	(void)state;
	for (uint64_t seed = 0; seed < 4000; seed++) {
		struct scenario sc;
		struct gf_catalog cat;
		bool prio = seed % 4 >= 2;

		gf_catalog_init(&cat);
		make_scenario(seed, &sc, seed % 2 == 1, prio);
		for (int qp = 0; qp < GF_QP_COUNT_; qp++) {
			gf_loop *L = run_scenario(&sc, (enum gf_queue_policy)qp, &cat);

			check_outcome(L, (enum gf_queue_policy)qp, seed, prio);
			for (uint32_t id = 0; qp >= GF_QP_BACKFILL && !prio && id < gf_loop_njobs(L); id++) {
				struct gf_job_info ji;

				gf_loop_job(L, id, &ji);
				promises += ji.promised >= 0;
			}
			gf_loop_destroy(L);
		}
		gf_catalog_release(&cat);
	}
	print_message("%llu first promises checked (equal priorities, both backfills)\n",
		      (unsigned long long)promises);
	/* the check above is not vacuous: many jobs were given reservations */
	assert_true(promises > 3000);
}

static void random_preemption_keeps_every_rule(void **state)
{
	uint64_t evictions = 0;

	(void)state;
	for (uint64_t seed = 0; seed < 2000; seed++) {
		struct scenario sc;
		struct gf_catalog cat;

		gf_catalog_init(&cat);
		make_scenario(seed, &sc, seed % 2 == 1, true);
		for (int qp = GF_QP_STRICT_FIFO; qp < GF_QP_COUNT_; qp++) {
			gf_loop *L = run_scenario_p(&sc, (enum gf_queue_policy)qp, &cat, true);
			struct gf_loop_stats st;

			check_outcome(L, (enum gf_queue_policy)qp, seed, true);
			gf_loop_stats(L, &st);
			evictions += st.preemptions;
			for (uint32_t id = 0; id < gf_loop_njobs(L); id++) {
				struct gf_job_info ji;

				gf_loop_job(L, id, &ji);
				/* an evicted job went back to the queue and ran to its end */
				if (ji.preemptions > 0 && ji.state != GF_JOB_DONE)
					fail_msg("seed %llu: evicted job %u never finished", (unsigned long long)seed, id);
			}
			gf_loop_destroy(L);
		}
		gf_catalog_release(&cat);
	}
	print_message("%llu evictions in the random cases\n", (unsigned long long)evictions);
	assert_true(evictions > 1000);
}

/* Does every queue keep within its quota (see queue/quota.c)? */
static void check_quotas(gf_loop *L, const struct gf_queue_quota *q, size_t nq, uint64_t seed)
{
	int64_t pool = 0, drawn = 0;

	for (uint16_t i = 0; i < nq; i++) {
		int64_t u = gf_loop_queue_usage(L, i);
		int64_t ll = q[i].lending_limit < q[i].nominal ? q[i].lending_limit : q[i].nominal;
		int64_t cap = q[i].cohort < 0 ? q[i].nominal
			      : q[i].borrowing_limit == GF_QUOTA_UNLIMITED ? INT64_MAX
									  : q[i].nominal + q[i].borrowing_limit;

		if (u > cap)
			fail_msg("seed %llu: queue %u uses %lld > %lld", (unsigned long long)seed, i, (long long)u,
				 (long long)cap);
		if (q[i].cohort == 0) {
			pool += ll;
			drawn += u > q[i].nominal - ll ? u - (q[i].nominal - ll) : 0;
		}
	}
	if (drawn > pool)
		fail_msg("seed %llu: the cohort drew %lld > its pool %lld", (unsigned long long)seed,
			 (long long)drawn, (long long)pool);
}

/*
 * Random cases with quotas and preemption: two queues in a cohort (random
 * nominal, lending and borrowing limits) and one alone (under per-queue
 * with every mix of the three orderings); every job runs,
 * nothing stalls, no queue ever exceeds its quota (checked every 7 s), and
 * no job is evicted over and over (a reclaim cycle would).
 */
static void random_quotas_keep_every_rule(void **state)
{
	uint64_t reclaims = 0, borrowed = 0;

	(void)state;
	for (uint64_t seed = 0; seed < 600; seed++) {
		struct scenario sc;
		struct gf_catalog cat;
		struct gf_rng r;
		struct gf_queue_quota q[3] = { quota(0, 0), quota(24, 0), quota(24, -1) };

		gf_rng_init(&r, seed ^ 0xabcdefULL);
		q[0].nominal = 1000 * (int64_t)gf_rng_below(&r, 25);
		q[0].lending_limit = gf_rng_below(&r, 2) ? GF_QUOTA_UNLIMITED : 1000 * (int64_t)gf_rng_below(&r, 9);
		q[1].lending_limit = gf_rng_below(&r, 2) ? GF_QUOTA_UNLIMITED : 24000;
		q[1].borrowing_limit = gf_rng_below(&r, 2) ? GF_QUOTA_UNLIMITED : 1000 * (int64_t)gf_rng_below(&r, 9);
		q[0].weight = 1 + (uint32_t)gf_rng_below(&r, 3);
		for (int i = 0; i < 3; i++)	/* per-queue: every mix of orderings (no draw: the rest unchanged) */
			q[i].ordering = (enum gf_queue_ordering)((seed / 2 + (uint64_t)i * (seed % 7 + 1)) % 3);
		gf_catalog_init(&cat);
		make_scenario(seed, &sc, seed % 2 == 1, seed % 4 >= 2);
		for (size_t k = 0; k < sc.njobs; k++)
			sc.jobs[k].queue = (uint16_t)gf_rng_below(&r, 3);
		for (int qp = GF_QP_STRICT_FIFO; qp < GF_QP_COUNT_; qp++) {
			struct gf_loop_config cfg = { .policy = (enum gf_queue_policy)qp, .seed = 3, .horizon = 1000,
						      .preemption = seed % 3 != 0, .preempt_wait = 20,
						      .preempt_grace = seed % 5 == 0 ? 2 : 0, .queues = q, .nqueues = 3 };
			struct gf_policy_env env = { .cat = &cat, .features = gf_features_default() };
			struct gf_loop_stats st;
			gf_loop *L;
			uint32_t id;

			assert_int_equal(gf_loop_create(sc.nodes, sc.nnodes, &gf_policy_best_fit, &env, &cfg, &L), GF_OK);
			for (size_t k = 0; k < sc.njobs; k++)
				assert_int_equal(gf_loop_submit(L, &sc.jobs[k], &id), GF_OK);
			for (int64_t t = 0; t < 3000; t += 7) {
				assert_int_equal(gf_loop_run_until(L, t), GF_OK);
				check_quotas(L, q, 3, seed);
				borrowed += gf_loop_queue_usage(L, 0) > q[0].nominal;
			}
			assert_int_equal(gf_loop_run(L), GF_OK);
			check_outcome(L, (enum gf_queue_policy)qp, seed, true);
			gf_loop_stats(L, &st);
			reclaims += st.reclaims;
			for (uint32_t k = 0; k < gf_loop_njobs(L); k++)
				if (info(&(struct fx){ .L = L }, k).preemptions > sc.njobs)
					fail_msg("seed %llu: job %u evicted over and over", (unsigned long long)seed, k);
			gf_loop_destroy(L);
		}
		gf_catalog_release(&cat);
	}
	print_message("%llu reclaim evictions, %llu samples with queue 0 borrowing\n",
		      (unsigned long long)reclaims, (unsigned long long)borrowed);
	assert_true(reclaims > 100);
	assert_true(borrowed > 100);
}

/*
 * Random cases with history estimates (which run short): every job runs,
 * nothing stalls, no reservation is late without a cause, the cluster ends
 * empty; and the forecast answers every pending job at some point.
 */
static void random_history_estimates_keep_every_rule(void **state)
{
	uint64_t shorts = 0, answers = 0;

	(void)state;
	for (uint64_t seed = 0; seed < 800; seed++) {
		struct scenario sc;
		struct gf_catalog cat;

		gf_catalog_init(&cat);
		make_scenario(seed, &sc, false, seed % 2 == 1);
		for (int qp = GF_QP_STRICT_FIFO; qp < GF_QP_COUNT_; qp++) {
			struct gf_loop_config cfg = { .policy = (enum gf_queue_policy)qp, .seed = 3, .horizon = 1000,
						      .preemption = seed % 3 == 0, .preempt_wait = 20,
						      .estimate_history = true, .history_prior = 1 + (int64_t)(seed % 60) };
			struct gf_policy_env env = { .cat = &cat, .features = gf_features_default() };
			struct gf_loop_stats st;
			int64_t start[24];
			gf_loop *L;
			uint32_t id;

			assert_int_equal(gf_loop_create(sc.nodes, sc.nnodes, &gf_policy_best_fit, &env, &cfg, &L), GF_OK);
			for (size_t k = 0; k < sc.njobs; k++)
				assert_int_equal(gf_loop_submit(L, &sc.jobs[k], &id), GF_OK);
			assert_int_equal(gf_loop_run_until(L, 40), GF_OK);
			assert_int_equal(gf_loop_forecast(L, start), GF_OK);
			gf_loop_stats(L, &st);	/* st.now: the last event's time, <= 40 */
			for (uint32_t k = 0; k < gf_loop_njobs(L); k++) {
				struct gf_job_info ji;

				gf_loop_job(L, k, &ji);
				if (ji.state == GF_JOB_PENDING && ji.arrival <= 40) {
					if (start[k] < st.now)
						fail_msg("seed %llu: pending job %u forecast at %lld", (unsigned long long)seed,
							 k, (long long)start[k]);
					answers++;
				}
			}
			assert_int_equal(gf_loop_run(L), GF_OK);
			check_outcome(L, (enum gf_queue_policy)qp, seed, true);
			gf_loop_stats(L, &st);
			shorts += st.short_estimates;
			gf_loop_destroy(L);
		}
		gf_catalog_release(&cat);
	}
	print_message("%llu estimates ran short, %llu pending jobs forecast\n", (unsigned long long)shorts,
		      (unsigned long long)answers);
	assert_true(shorts > 1000);
	assert_true(answers > 1000);
}

static void same_seed_same_replay(void **state)
{
	struct scenario sc;
	struct gf_catalog cat;

	(void)state;
	gf_catalog_init(&cat);
	make_scenario(99, &sc, false, true);
	for (int qp = 0; qp < GF_QP_COUNT_; qp++) {
		gf_loop *a = run_scenario(&sc, (enum gf_queue_policy)qp, &cat);
		gf_loop *b = run_scenario(&sc, (enum gf_queue_policy)qp, &cat);

		for (uint32_t id = 0; id < gf_loop_njobs(a); id++) {
			struct gf_job_info ja, jb;

			gf_loop_job(a, id, &ja);
			gf_loop_job(b, id, &jb);
			assert_int_equal(ja.start, jb.start);
			assert_int_equal(ja.promised, jb.promised);
		}
		gf_loop_destroy(a);
		gf_loop_destroy(b);
	}
	gf_catalog_release(&cat);
}

/* An open job (the live scheduler's pod): it runs until the caller ends it. */
static struct gf_job_spec open_job(int gpus, uint32_t npods, int64_t arrival)
{
	struct gf_job_spec s = job(gpus, 1000, npods, arrival, GF_LOOP_OPEN);

	return s;
}

static void caller_driven_jobs_end_unbind_and_withdraw(void **state)
{
	struct gf_node_spec n[2];
	struct gf_loop_decisions d;
	struct fx *f;
	uint32_t a, g, c, fut;

	(void)state;
	two_nodes(n);
	f = fx_new(GF_QP_BACKFILL, n, 2);
	a = submit(f, open_job(8, 1, 0));
	g = submit(f, open_job(8, 2, 0));	/* needs both nodes */
	assert_int_equal(gf_loop_cycle(f->L, 0, &d), GF_OK);
	/* a is bound on one node: the decision names it, member 0, 8 GPUs */
	assert_int_equal(d.nbinds, 1);
	assert_int_equal(d.binds[0].job, a);
	assert_int_equal(d.binds[0].member, 0);
	assert_int_equal(info(f, a).state, GF_JOB_RUNNING);
	assert_int_equal(info(f, a).end, -1);	/* open: nobody knows yet */
	assert_int_equal(info(f, g).state, GF_JOB_PENDING);
	assert_int_equal(info(f, g).why, GF_LOOP_WHY_NO_ROOM);
	/* the loop has no end for a: the gang's reservation is at "unknown" (its wake-up too) */
	int64_t t;

	assert_int_equal(gf_loop_start_time(f->L, g, &t), GF_OK);
	assert_int_equal(t, GF_LOOP_UNKNOWN_EST);
	assert_true(gf_loop_next_event(f->L, &t));
	assert_int_equal(t, GF_LOOP_UNKNOWN_EST);
	/* binding a failed: it goes back and is bound again in the next cycle */
	assert_int_equal(gf_loop_unbind(f->L, a), GF_OK);
	assert_int_equal(info(f, a).state, GF_JOB_PENDING);
	assert_int_equal(gf_cluster_gpu_used(gf_loop_cluster(f->L)), 0);
	assert_int_equal(gf_loop_cycle(f->L, 5, &d), GF_OK);
	assert_int_equal(d.nbinds, 1);
	assert_int_equal(d.binds[0].job, a);	/* its place in the queue kept: ahead of the gang */
	assert_int_equal(info(f, a).start, 5);
	/* a later 1-GPU job fits on the free node, but an open job is expected to
	 * run past any reservation: backfill keeps the gang's room */
	c = submit(f, open_job(1, 1, 6));
	fut = submit(f, open_job(1, 1, 100));
	assert_int_equal(gf_loop_cycle(f->L, 6, &d), GF_OK);
	assert_int_equal(d.nbinds, 0);
	assert_int_equal(info(f, c).state, GF_JOB_PENDING);
	assert_int_equal(info(f, c).why, GF_LOOP_WHY_RESERVED);
	/* c's pod deleted while pending, the future job withdrawn before it arrives */
	assert_int_equal(gf_loop_end(f->L, c, 8), GF_OK);
	assert_int_equal(gf_loop_end(f->L, fut, 8), GF_OK);
	assert_int_equal(info(f, c).state, GF_JOB_WITHDRAWN);
	assert_int_equal(info(f, fut).state, GF_JOB_WITHDRAWN);
	/* a ends: the next cycle frees it and binds the whole gang at once */
	assert_int_equal(gf_loop_end(f->L, a, 10), GF_OK);
	assert_int_equal(gf_loop_cycle(f->L, 10, &d), GF_OK);
	assert_int_equal(info(f, a).state, GF_JOB_DONE);
	assert_int_equal(info(f, a).end, 10);
	assert_int_equal(d.nbinds, 2);
	assert_int_equal(d.binds[0].job, g);
	assert_int_equal(d.binds[1].job, g);
	assert_int_not_equal(d.binds[0].node, d.binds[1].node);
	assert_int_equal(info(f, g).start, 10);
	/* the withdrawn job's arrival does nothing */
	assert_int_equal(gf_loop_cycle(f->L, 100, &d), GF_OK);
	assert_int_equal(d.nbinds, 0);
	assert_int_equal(info(f, fut).state, GF_JOB_WITHDRAWN);
	/* a clock going back is refused; an unknown job too */
	assert_int_equal(gf_loop_cycle(f->L, 99, &d), GF_STATE);
	assert_int_equal(gf_loop_end(f->L, 999, 100), GF_RANGE);
	assert_int_equal(gf_loop_unbind(f->L, 999), GF_RANGE);
	fx_free(f);
}

static void pending_jobs_say_why_and_leave_when_deleted(void **state)
{
	struct gf_node_spec n[1] = { tu_node("n0", 64000, 262144, 8, -1) };
	struct gf_loop_decisions d;
	struct fx *f;
	uint32_t a, b, c;

	(void)state;
	f = fx_new(GF_QP_STRICT_FIFO, n, 1);
	a = submit(f, open_job(4, 1, 0));
	b = submit(f, open_job(8, 1, 0));
	c = submit(f, open_job(1, 1, 0));
	assert_int_equal(gf_loop_cycle(f->L, 0, &d), GF_OK);
	assert_int_equal(info(f, a).state, GF_JOB_RUNNING);
	assert_int_equal(info(f, b).why, GF_LOOP_WHY_NO_ROOM);
	assert_int_equal(info(f, c).why, GF_LOOP_WHY_BLOCKED);
	assert_string_equal(gf_loop_why_name(GF_LOOP_WHY_BLOCKED), "blocked by the queue head");
	/* the head's pod is deleted: c is no longer blocked */
	assert_int_equal(gf_loop_end(f->L, b, 1), GF_OK);
	assert_int_equal(info(f, b).state, GF_JOB_WITHDRAWN);
	assert_int_equal(gf_loop_cycle(f->L, 1, &d), GF_OK);
	assert_int_equal(d.nbinds, 1);
	assert_int_equal(d.binds[0].job, c);
	fx_free(f);

	/* backfill: a job that fits but would delay the reservation says so */
	f = fx_new(GF_QP_BACKFILL, n, 1);
	struct gf_job_spec s = job(4, 1000, 1, 0, 100);

	a = submit(f, s);
	b = submit(f, job(8, 1000, 1, 0, 10));
	c = submit(f, job(2, 1000, 1, 0, 500));	/* would end after a: delays b */
	assert_int_equal(gf_loop_cycle(f->L, 0, &d), GF_OK);
	assert_int_equal(info(f, a).state, GF_JOB_RUNNING);
	assert_int_equal(info(f, b).why, GF_LOOP_WHY_NO_ROOM);
	assert_int_equal(info(f, c).why, GF_LOOP_WHY_RESERVED);
	fx_free(f);

	/* kube mode: a gang deleted while partly bound gives its pods' room back */
	struct gf_node_spec two[2];

	two_nodes(two);
	f = fx_new(GF_QP_KUBE, two, 2);
	a = submit(f, open_job(8, 1, 0));
	b = submit(f, open_job(8, 2, 0));
	assert_int_equal(gf_loop_cycle(f->L, 0, &d), GF_OK);
	assert_int_equal(d.nbinds, 2);	/* a, and one member of b */
	assert_int_equal(d.binds[1].job, b);
	assert_int_equal(gf_cluster_gpu_used(gf_loop_cluster(f->L)), 16000);
	assert_int_equal(gf_loop_end(f->L, b, 1), GF_OK);
	assert_int_equal(gf_cluster_gpu_used(gf_loop_cluster(f->L)), 8000);
	assert_int_equal(gf_loop_cycle(f->L, 1, &d), GF_OK);
	assert_int_equal(d.nbinds, 0);
	fx_free(f);
}

/* ---- admission (the live scheduler's taints and selectors) and pods placed by others ---- */

struct admit_table {
	uint64_t mask[16];	/* per job: the nodes it may use (one word: small clusters) */
	bool has[16];
};

static const uint64_t *admit_cb(void *ud, uint32_t job)
{
	struct admit_table *t = ud;

	return job < 16 && t->has[job] ? &t->mask[job] : NULL;
}

static struct fx *fx_admit(enum gf_queue_policy qp, const struct gf_node_spec *nodes, size_t n,
			   struct admit_table *t, bool preemption)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct gf_loop_config cfg = { .policy = qp, .seed = 1, .horizon = 1000000, .preemption = preemption,
				      .admit = admit_cb, .admit_ud = t };
	struct gf_policy_env env = { .features = gf_features_default() };

	assert_non_null(f);
	gf_catalog_init(&f->cat);
	env.cat = &f->cat;
	assert_int_equal(gf_loop_create(nodes, n, &gf_policy_best_fit, &env, &cfg, &f->L), GF_OK);
	return f;
}

/*
 * A job with an admission mask that found no room is not tried again in
 * every cycle (the storm of the live scheduler's non-kube policies): only
 * when a node its mask allows was freed (or reported with
 * gf_loop_nodes_freed) since.  Two nodes: a runs on n0; b may use n0 only.
 */
static void masked_jobs_are_not_retried_without_a_change(void **state)
{
	struct gf_node_spec n[2];
	struct gf_loop_decisions d;
	struct gf_loop_stats st;

	(void)state;
	two_nodes(n);
	for (int qp = GF_QP_STRICT_FIFO; qp < GF_QP_COUNT_; qp++) {
		struct admit_table t = { 0 };
		struct fx *f = fx_admit((enum gf_queue_policy)qp, n, 2, &t, false);
		uint32_t a, b, one = 1, zero = 0;

		a = submit(f, open_job(8, 1, 0));
		t.has[1] = true;
		t.mask[1] = 1;	/* n0 */
		b = submit(f, open_job(4, 1, 0));
		for (int64_t now = 0; now < 100; now++)
			assert_int_equal(gf_loop_cycle(f->L, now, &d), GF_OK);
		gf_loop_stats(f->L, &st);
		assert_int_equal(st.tries, 2);	/* a once, b once: not 101 */
		/* n1 reported (its admission widened, say): b may not use it: no try */
		assert_int_equal(gf_loop_nodes_freed(f->L, &one, 1), GF_OK);
		assert_int_equal(gf_loop_cycle(f->L, 100, &d), GF_OK);
		gf_loop_stats(f->L, &st);
		assert_int_equal(st.tries, 2);
		/* n0 reported but still full: no try either */
		assert_int_equal(gf_loop_nodes_freed(f->L, &zero, 1), GF_OK);
		assert_int_equal(gf_loop_cycle(f->L, 101, &d), GF_OK);
		gf_loop_stats(f->L, &st);
		assert_int_equal(st.tries, 2);
		/* a ends: n0 freed, b is tried and placed there */
		assert_int_equal(gf_loop_end(f->L, a, 102), GF_OK);
		assert_int_equal(gf_loop_cycle(f->L, 102, &d), GF_OK);
		assert_int_equal(d.nbinds, 1);
		assert_int_equal(d.binds[0].job, b);
		assert_int_equal(d.binds[0].node, 0);
		gf_loop_stats(f->L, &st);
		assert_int_equal(st.tries, 3);
		assert_int_equal(gf_loop_end(f->L, b, 103), GF_OK);
		assert_int_equal(gf_loop_run(f->L), GF_OK);
		fx_free(f);
	}
}

static void admission_masks_every_placement(void **state)
{
	struct gf_node_spec n[2];
	struct gf_loop_decisions d;

	(void)state;
	two_nodes(n);
	for (int qp = 0; qp < GF_QP_COUNT_; qp++) {
		struct admit_table t = { 0 };
		struct fx *f = fx_admit((enum gf_queue_policy)qp, n, 2, &t, false);
		uint32_t a, x, y;

		/* a takes 4 GPUs of n0; x may use only n0 (4 free: too few), y (same shape) anywhere */
		a = submit(f, open_job(4, 1, 0));
		t.has[1] = true;
		t.mask[1] = 1u << 0;
		x = submit(f, open_job(8, 1, 1));
		y = submit(f, open_job(8, 1, 1));
		assert_int_equal(gf_loop_cycle(f->L, 0, &d), GF_OK);
		assert_int_equal(d.nbinds, 1);
		assert_int_equal(d.binds[0].node, 0);	/* best fit: the first of two equal nodes */
		assert_int_equal(gf_loop_cycle(f->L, 1, &d), GF_OK);
		assert_int_equal(info(f, x).state, GF_JOB_PENDING);
		/* x's failure on its one node did not park the shape: y still got n1 at once
		 * (strict FIFO: y waits behind x, as it should) */
		if (qp == GF_QP_STRICT_FIFO) {
			assert_int_equal(info(f, y).state, GF_JOB_PENDING);
			assert_int_equal(info(f, y).why, GF_LOOP_WHY_BLOCKED);
		} else {
			assert_int_equal(info(f, y).state, GF_JOB_RUNNING);
			assert_int_equal(d.binds[0].job, y);
			assert_int_equal(d.binds[0].node, 1);
		}
		/* a ends: x goes to n0, its only node */
		assert_int_equal(gf_loop_end(f->L, a, 2), GF_OK);
		assert_int_equal(gf_loop_cycle(f->L, 2, &d), GF_OK);
		assert_int_equal(info(f, x).state, GF_JOB_RUNNING);
		assert_int_equal(d.binds[0].job, x);
		assert_int_equal(d.binds[0].node, 0);
		fx_free(f);
	}
}

static void admission_holds_for_reservations_and_preemption(void **state)
{
	struct gf_node_spec n[2];
	struct admit_table t = { 0 };
	struct fx *f;
	uint32_t a, b, h;
	int64_t when;

	(void)state;
	two_nodes(n);
	/* backfill: a (n0, ends 100) and b (n1, ends 300) run; holder h may use only n1: reserved at 300, not 100 */
	f = fx_admit(GF_QP_BACKFILL, n, 2, &t, false);
	a = submit(f, job(8, 1000, 1, 0, 100));
	b = submit(f, job(8, 1000, 1, 0, 300));
	t.has[2] = true;
	t.mask[2] = 1u << 1;
	h = submit(f, job(8, 1000, 1, 1, 10));
	assert_int_equal(gf_loop_run_until(f->L, 1), GF_OK);
	assert_int_equal(gf_loop_start_time(f->L, h, &when), GF_OK);
	assert_int_equal(when, 300);
	assert_int_equal(gf_loop_run(f->L), GF_OK);
	assert_int_equal(info(f, a).end, 100);
	assert_int_equal(info(f, b).end, 300);
	assert_int_equal(info(f, h).start, 300);
	fx_free(f);

	/* preemption: h (priority 5) may use only n1: it evicts the job there, not the cheaper one on n0 */
	memset(&t, 0, sizeof(t));
	f = fx_admit(GF_QP_BEST_EFFORT_FIFO, n, 2, &t, true);
	struct gf_job_spec s = job(8, 1000, 1, 0, 1000);

	a = submit(f, s);	/* n0, started first: the least work lost at 50 */
	s.arrival = 0;
	b = submit(f, s);	/* n1 */
	s = job(8, 1000, 1, 50, 10);
	s.priority = 5;
	t.has[2] = true;
	t.mask[2] = 1u << 1;
	h = submit(f, s);
	assert_int_equal(gf_loop_run_until(f->L, 50), GF_OK);
	assert_int_equal(info(f, h).state, GF_JOB_RUNNING);
	assert_int_equal(info(f, a).preemptions, 0);
	assert_int_equal(info(f, b).preemptions, 1);
	fx_free(f);
}

/*
 * A reservation is planned on the nodes its holder may use then; when its
 * time comes it is bound there only if the holder's admission mask still
 * allows them (a node tainted or cordoned for it since): else it is planned
 * again.  a (ends at 100) and b (ends at 200) fill n0 and n1; h, blocked,
 * gets a reservation on a's node at 100; then h may use only b's node: it
 * starts at 200 there, never on a's node.
 */
static void reservation_bound_only_where_admitted(void **state)
{
	struct gf_node_spec n[2];
	struct gf_loop_decisions d;

	(void)state;
	two_nodes(n);
	for (int qp = GF_QP_BACKFILL; qp <= GF_QP_CONSERVATIVE; qp++) {
		struct admit_table t = { 0 };
		struct fx *f = fx_admit((enum gf_queue_policy)qp, n, 2, &t, false);
		uint32_t a, b, h, anode = 0, bnode = 0;

		a = submit(f, job(8, 1000, 1, 0, 100));
		b = submit(f, job(8, 1000, 1, 0, 200));
		h = submit(f, job(8, 1000, 1, 1, 10));
		assert_int_equal(gf_loop_cycle(f->L, 0, &d), GF_OK);
		assert_int_equal(d.nbinds, 2);
		for (size_t i = 0; i < d.nbinds; i++) {
			if (d.binds[i].job == a)
				anode = d.binds[i].node;
			if (d.binds[i].job == b)
				bnode = d.binds[i].node;
		}
		assert_int_not_equal(anode, bnode);
		assert_int_equal(gf_loop_cycle(f->L, 1, &d), GF_OK);
		int64_t at;
		assert_int_equal(gf_loop_start_time(f->L, h, &at), GF_OK);
		assert_int_equal(at, 100);
		t.has[h] = true;
		t.mask[h] = 1u << bnode;	/* a's node no longer admits h */
		assert_int_equal(gf_loop_cycle(f->L, 100, &d), GF_OK);
		assert_int_equal(d.nbinds, 0);
		assert_int_equal(info(f, h).state, GF_JOB_PENDING);
		assert_int_equal(gf_loop_cycle(f->L, 200, &d), GF_OK);
		assert_int_equal(d.nbinds, 1);
		assert_int_equal(d.binds[0].job, h);
		assert_int_equal(d.binds[0].node, bnode);
		struct gf_loop_stats st;
		gf_loop_stats(f->L, &st);
		assert_int_equal(st.late, 0);
		assert_int_equal(gf_loop_run(f->L), GF_OK);
		fx_free(f);
	}
}

static struct fx *fx_backoff(enum gf_queue_policy qp, const struct gf_node_spec *nodes, size_t n, int64_t b0,
			     int64_t bmax)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct gf_loop_config cfg = { .policy = qp, .seed = 1, .horizon = 1000000,
				      .backoff_initial = b0, .backoff_max = bmax };
	struct gf_policy_env env = { .features = gf_features_default() };

	assert_non_null(f);
	gf_catalog_init(&f->cat);
	env.cat = &f->cat;
	assert_int_equal(gf_loop_create(nodes, n, &gf_policy_best_fit, &env, &cfg, &f->L), GF_OK);
	return f;
}

static uint64_t tries(struct fx *f)
{
	struct gf_loop_stats st;

	gf_loop_stats(f->L, &st);
	return st.tries;
}

/*
 * The cycle reports the jobs it tried and did not start (failed[]); a job
 * parked by the memo (nothing freed where it could fit) is not tried and not
 * reported.  n0 is full (a), n1 holds 6 of 8 GPUs (b), x asks 4.
 */
static void failed_jobs_reported(void **state)
{
	struct gf_node_spec n[2];
	struct gf_loop_decisions d;

	(void)state;
	two_nodes(n);
	for (int qp = 0; qp < GF_QP_COUNT_; qp++) {
		struct fx *f = fx_new((enum gf_queue_policy)qp, n, 2);
		uint32_t x;

		submit(f, open_job(8, 1, 0));
		submit(f, open_job(6, 1, 0));
		assert_int_equal(gf_loop_cycle(f->L, 0, &d), GF_OK);
		assert_int_equal(d.nbinds, 2);
		assert_int_equal(d.nfailed, 0);
		x = submit(f, open_job(4, 1, 1));
		assert_int_equal(gf_loop_cycle(f->L, 1, &d), GF_OK);
		assert_int_equal(d.nfailed, 1);
		assert_int_equal(d.failed[0], x);
		assert_int_equal(tries(f), 3);
		assert_int_equal(gf_loop_cycle(f->L, 2, &d), GF_OK);
		assert_int_equal(d.nfailed, 0);
		assert_int_equal(tries(f), 3);
		fx_free(f);
	}
}

/*
 * With backoff (10 s doubling to 40 s) a job that failed is not tried again
 * before its backoff ends, even when room it could use is freed in every
 * cycle; without backoff it is tried in each.  a holds 4 GPUs of one node,
 * b 6 of the other; x is a gang of two 4-GPU pods: a pod fits beside a, the
 * gang does not.
 */
static void failed_jobs_back_off(void **state)
{
	struct gf_node_spec n[2];
	struct gf_loop_decisions d;

	(void)state;
	two_nodes(n);
	for (int qp = GF_QP_STRICT_FIFO; qp <= GF_QP_BEST_EFFORT_FIFO; qp++) {
		for (int bo = 0; bo < 2; bo++) {
			struct fx *f = fx_backoff((enum gf_queue_policy)qp, n, 2, bo ? 10 : 0, bo ? 40 : 0);
			uint32_t a = submit(f, open_job(4, 1, 0));
			uint32_t anode = 0, x;
			int64_t t;

			submit(f, open_job(6, 1, 0));
			assert_int_equal(gf_loop_cycle(f->L, 0, &d), GF_OK);
			assert_int_equal(d.nbinds, 2);
			for (size_t i = 0; i < d.nbinds; i++)
				if (d.binds[i].job == a)
					anode = d.binds[i].node;
			x = submit(f, open_job(4, 2, 1));
			assert_int_equal(gf_loop_cycle(f->L, 1, &d), GF_OK);
			assert_int_equal(d.nfailed, 1);
			assert_int_equal(d.failed[0], x);
			uint64_t want = tries(f);
			if (bo) {
				assert_true(gf_loop_next_event(f->L, &t));
				assert_int_equal(t, 11);	/* its backoff's end */
			}
			for (int64_t now = 2; now <= 80; now++) {
				assert_int_equal(gf_loop_nodes_freed(f->L, &anode, 1), GF_OK);
				assert_int_equal(gf_loop_cycle(f->L, now, &d), GF_OK);
				bool due = !bo || now == 11 || now == 31 || now == 71;
				want += due;
				if (d.nfailed != (due ? 1u : 0u) || tries(f) != want)
					fail_msg("%s backoff %d at %lld: %zu failed, %llu tries (want %llu)",
						 gf_queue_policy_name((enum gf_queue_policy)qp), bo, (long long)now,
						 d.nfailed, (unsigned long long)tries(f), (unsigned long long)want);
			}
			/* a ends: x starts, its count cleared */
			assert_int_equal(gf_loop_end(f->L, a, 120), GF_OK);
			assert_int_equal(gf_loop_cycle(f->L, 120, &d), GF_OK);
			assert_int_equal(d.nbinds, 2);
			assert_int_equal(d.binds[0].job, x);
			assert_int_equal(d.nfailed, 0);
			fx_free(f);
		}
	}
}

/* Under strict FIFO a head backing off still blocks the job behind it; best-effort lets it go. */
static void backoff_keeps_strict_head_blocking(void **state)
{
	struct gf_node_spec n[2];
	struct gf_loop_decisions d;

	(void)state;
	two_nodes(n);
	for (int k = 0; k < 2; k++) {
		enum gf_queue_policy qp = k ? GF_QP_BEST_EFFORT_FIFO : GF_QP_STRICT_FIFO;
		struct fx *f = fx_backoff(qp, n, 2, 10, 40);
		uint32_t x, y;

		submit(f, open_job(8, 1, 0));
		submit(f, open_job(4, 1, 0));
		assert_int_equal(gf_loop_cycle(f->L, 0, &d), GF_OK);
		x = submit(f, open_job(8, 1, 1));
		assert_int_equal(gf_loop_cycle(f->L, 1, &d), GF_OK);
		assert_int_equal(d.nfailed, 1);
		assert_int_equal(d.failed[0], x);
		y = submit(f, open_job(2, 1, 2));
		assert_int_equal(gf_loop_cycle(f->L, 2, &d), GF_OK);
		assert_int_equal(d.nbinds, k ? 1 : 0);
		if (k)
			assert_int_equal(d.binds[0].job, y);
		else
			assert_int_equal(info(f, y).why, GF_LOOP_WHY_BLOCKED);
		fx_free(f);
	}
}

static void pods_placed_by_others_hold_their_room(void **state)
{
	struct gf_node_spec n[2];
	struct gf_loop_decisions d;
	struct gf_loop_bind at[2] = { { .node = 0, .gpus = { 0, 1, 2, 3 } }, { .node = 1, .gpus = { 4, 5, 6, 7 } } };
	struct fx *f;
	uint32_t o, o2, x;

	(void)state;
	two_nodes(n);
	f = fx_new(GF_QP_BACKFILL, n, 2);
	/* a 2-pod job already running (bound before the loop knew it): GPUs 0-3 of n0, 4-7 of n1 */
	assert_int_equal(gf_loop_place_at(f->L, &(struct gf_job_spec){ .pod = tu_pod("o", 1000, 1024, 4, 1000, 0),
						 .npods = 2, .duration = GF_LOOP_OPEN }, at, &o), GF_OK);
	assert_int_equal(info(f, o).state, GF_JOB_RUNNING);
	assert_int_equal(gf_cluster_gpu_used(gf_loop_cluster(f->L)), 8000);
	/* the same GPUs again: refused, nothing changed */
	assert_int_equal(gf_loop_place_at(f->L, &(struct gf_job_spec){ .pod = tu_pod("o", 1000, 1024, 1, 1000, 0),
						 .npods = 1, .duration = GF_LOOP_OPEN }, at, &o2), GF_EXISTS);
	assert_int_equal(gf_loop_njobs(f->L), 1);
	at[0].node = 7;
	assert_int_equal(gf_loop_place_at(f->L, &(struct gf_job_spec){ .pod = tu_pod("o", 1000, 1024, 1, 1000, 0),
						 .npods = 1, .duration = GF_LOOP_OPEN }, at, &o2), GF_RANGE);
	/* an 8-GPU job does not fit until the caller ends it */
	x = submit(f, open_job(8, 1, 0));
	assert_int_equal(gf_loop_cycle(f->L, 0, &d), GF_OK);
	assert_int_equal(d.nbinds, 0);
	assert_int_equal(info(f, x).why, GF_LOOP_WHY_NO_ROOM);
	assert_int_equal(gf_loop_end(f->L, o, 3), GF_OK);
	assert_int_equal(gf_loop_cycle(f->L, 3, &d), GF_OK);
	assert_int_equal(d.nbinds, 1);
	assert_int_equal(d.binds[0].job, x);
	assert_int_equal(gf_cluster_gpu_used(gf_loop_cluster(f->L)), 8000);
	/* a gang ending pod by pod: that member's GPUs free at once, the others run on as one job */
	uint32_t other = 1 - d.binds[0].node, rest = 0;
	struct gf_loop_bind three[3] = { { .node = other, .gpus = { 0, 1 } }, { .node = other, .gpus = { 2, 3 } },
					 { .node = other, .gpus = { 4, 5 } } };

	assert_int_equal(gf_loop_place_at(f->L, &(struct gf_job_spec){ .pod = tu_pod("g", 1000, 1024, 2, 1000, 0),
						 .npods = 3, .duration = GF_LOOP_OPEN }, three, &o), GF_OK);
	assert_int_equal(gf_cluster_gpu_used(gf_loop_cluster(f->L)), 14000);
	assert_int_equal(gf_loop_end_member(f->L, o, 1, &rest), GF_OK);
	assert_int_equal(info(f, o).state, GF_JOB_DONE);
	assert_int_equal(info(f, rest).state, GF_JOB_RUNNING);
	assert_int_equal(info(f, rest).npods, 2);
	assert_int_equal(gf_cluster_gpu_used(gf_loop_cluster(f->L)), 12000);
	assert_int_equal(gf_cluster_node(gf_loop_cluster(f->L), other)->gpu_free[2], 1000);
	assert_int_equal(gf_cluster_node(gf_loop_cluster(f->L), other)->gpu_free[4], 0);
	uint32_t done = o, none = 0;

	o = rest;
	assert_int_equal(gf_loop_end_member(f->L, done, 0, &none), GF_STATE);
	assert_int_equal(none, GF_LOOP_NO_JOB);
	assert_int_equal(gf_loop_end_member(f->L, o, 1, &rest), GF_OK);
	assert_int_equal(gf_loop_end_member(f->L, rest, 0, &rest), GF_OK);
	assert_int_equal(rest, GF_LOOP_NO_JOB);
	assert_int_equal(gf_cluster_gpu_used(gf_loop_cluster(f->L)), 8000);
	/* on a node the caller chose, the loop chooses the GPUs: the lowest free ones there (no topology) */
	uint8_t g[GF_MAX_GPUS] = { 0 };
	uint32_t on;

	assert_int_equal(gf_loop_place_on(f->L, &(struct gf_job_spec){ .pod = tu_pod("e", 1000, 1024, 3, 1000, 0),
						.npods = 1, .duration = GF_LOOP_OPEN }, other, g, &on), GF_OK);
	assert_int_equal(info(f, on).state, GF_JOB_RUNNING);
	assert_int_equal(g[0], 0);
	assert_int_equal(g[1], 1);
	assert_int_equal(g[2], 2);
	assert_int_equal(gf_cluster_gpu_used(gf_loop_cluster(f->L)), 11000);
	assert_int_equal(gf_loop_place_on(f->L, &(struct gf_job_spec){ .pod = tu_pod("e", 1000, 1024, 6, 1000, 0),
						.npods = 1, .duration = GF_LOOP_OPEN }, other, g, &on), GF_EXISTS);
	assert_int_equal(gf_loop_place_on(f->L, &(struct gf_job_spec){ .pod = tu_pod("e", 1000, 1024, 1, 1000, 0),
						.npods = 2, .duration = GF_LOOP_OPEN }, other, g, &on), GF_INVAL);
	assert_int_equal(gf_cluster_gpu_used(gf_loop_cluster(f->L)), 11000);
	char why[256];

	assert_int_equal(gf_cluster_check(gf_loop_cluster(f->L), why, sizeof(why)), GF_OK);
	fx_free(f);
}

/* The live scheduler's arrangement: the loop decides on the caller's cluster, the caller keeps the pods. */
static void loop_on_the_callers_cluster(void **state)
{
	struct gf_node_spec n[2];
	struct gf_catalog cat;
	struct gf_policy_env env = { .features = gf_features_default() };
	struct gf_loop_config cfg = { .policy = GF_QP_KUBE, .seed = 1, .horizon = 1000000 };
	struct gf_pod_spec four = tu_pod("f", 1000, 1024, 4, 1000, 0);
	const uint8_t g0[GF_MAX_GPUS] = { 0, 1, 2, 3 }, g1[GF_MAX_GPUS] = { 4, 5, 6, 7 };
	struct gf_loop_decisions d;
	gf_cluster *c;
	gf_loop *L;
	uint32_t x, y, z;
	struct gf_job_spec s = job(8, 1000, 1, 0, GF_LOOP_OPEN);

	(void)state;
	two_nodes(n);
	gf_catalog_init(&cat);
	env.cat = &cat;
	assert_int_equal(gf_cluster_create(n, 2, &c), GF_OK);
	/* pods the caller holds: 4 GPUs on each node */
	assert_int_equal(gf_cluster_bind(c, 0, &four, g0), GF_OK);
	assert_int_equal(gf_cluster_bind(c, 1, &four, g1), GF_OK);
	assert_int_equal(gf_loop_create_on(c, &gf_policy_best_fit, &env, &cfg, &L), GF_OK);
	assert_ptr_equal(gf_loop_cluster(L), c);
	assert_int_equal(gf_loop_submit(L, &s, &x), GF_OK);
	assert_int_equal(gf_loop_cycle(L, 0, &d), GF_OK);
	assert_int_equal(d.nbinds, 0);	/* 4 free GPUs per node: an 8-GPU pod fits nowhere (its shape parks) */
	assert_int_equal(gf_loop_end(L, x, 0), GF_OK);	/* kube's way: the failed pod leaves, backs off */
	/* the caller frees n1 but does not say so: the parked shape is not tried */
	assert_int_equal(gf_cluster_unbind(c, 1, &four, g1), GF_OK);
	s.arrival = 1;
	assert_int_equal(gf_loop_submit(L, &s, &y), GF_OK);
	assert_int_equal(gf_loop_cycle(L, 1, &d), GF_OK);
	assert_int_equal(d.nbinds, 0);
	assert_int_equal(gf_loop_end(L, y, 1), GF_OK);
	/* told: tried again, bound on n1 in the caller's cluster */
	uint32_t freed = 1;

	assert_int_equal(gf_loop_nodes_freed(L, &freed, 1), GF_OK);
	s.arrival = 2;
	assert_int_equal(gf_loop_submit(L, &s, &z), GF_OK);
	assert_int_equal(gf_loop_cycle(L, 2, &d), GF_OK);
	assert_int_equal(d.nbinds, 1);
	assert_int_equal(d.binds[0].node, 1);
	assert_int_equal(gf_cluster_gpu_used(c), 12000);
	/* its pod ends: unbound at once, before any cycle (the caller reads the cluster) */
	uint32_t rest = 0;

	assert_int_equal(gf_loop_end_member(L, z, 0, &rest), GF_OK);
	assert_int_equal(rest, GF_LOOP_NO_JOB);
	assert_int_equal(gf_cluster_gpu_used(c), 4000);
	assert_int_equal(gf_loop_end_member(L, z, 0, &rest), GF_STATE);
	assert_int_equal(gf_loop_end_member(L, 99, 0, &rest), GF_RANGE);
	gf_loop_destroy(L);	/* the cluster is the caller's */
	assert_int_equal(gf_cluster_gpu_used(c), 4000);
	gf_cluster_destroy(c);
	gf_catalog_release(&cat);
}

/* ---- one cycle: the caller-driven mode (the live scheduler's) agrees with the replay ---- */

struct rec {
	struct gf_loop_bind *b;
	size_t n, cap;
};

static void rec_add(struct rec *r, const struct gf_loop_decisions *d)
{
	if (d->nbinds == 0)
		return;	/* binds may be NULL then */
	if (r->n + d->nbinds > r->cap) {
		r->cap = (r->n + d->nbinds) * 2;
		r->b = realloc(r->b, r->cap * sizeof(*r->b));
		assert_non_null(r->b);
	}
	memcpy(&r->b[r->n], d->binds, d->nbinds * sizeof(*d->binds));
	r->n += d->nbinds;
}

static gf_loop *new_loop(const struct scenario *sc, enum gf_queue_policy qp, struct gf_catalog *cat,
			 bool preemption)
{
	struct gf_loop_config cfg = { .policy = qp, .seed = 3, .horizon = 1000, .preemption = preemption,
				      .preempt_wait = 20, .preempt_grace = preemption ? 3 : 0 };
	struct gf_policy_env env = { .cat = cat, .features = gf_features_default() };
	gf_loop *L;

	assert_int_equal(gf_loop_create(sc->nodes, sc->nnodes, &gf_policy_best_fit, &env, &cfg, &L), GF_OK);
	return L;
}

/* The replay's driver spelled out: every job submitted ahead, a cycle at each next event. */
/* compact: job records compacted after every cycle (binds recorded by scenario job, as drive_live). */
static gf_loop *drive_replay(const struct scenario *sc, enum gf_queue_policy qp, struct gf_catalog *cat,
			     bool preemption, struct rec *r, bool compact)
{
	gf_loop *L = new_loop(sc, qp, cat, preemption);
	struct gf_loop_decisions d;
	uint32_t id, orig[24], map[24], n;
	int64_t t;

	for (size_t k = 0; k < sc->njobs; k++) {
		assert_int_equal(gf_loop_submit(L, &sc->jobs[k], &id), GF_OK);
		orig[id] = (uint32_t)k;
	}
	while (gf_loop_next_event(L, &t)) {
		size_t from = r->n;

		assert_int_equal(gf_loop_cycle(L, t, &d), GF_OK);
		rec_add(r, &d);
		for (size_t k = from; k < r->n; k++)
			r->b[k].job = orig[r->b[k].job];
		if (!compact)
			continue;
		n = (uint32_t)gf_loop_njobs(L);
		gf_loop_compact(L, map);
		for (uint32_t k = 0; k < n; k++)
			if (map[k] != GF_LOOP_NO_JOB)
				orig[map[k]] = orig[k];	/* map[k] <= k: in place, ascending */
	}
	assert_int_equal(gf_loop_run(L), GF_OK);	/* nothing left: closes the statistics */
	return L;
}

/*
 * The live scheduler's way: jobs submitted when they arrive with an open
 * duration (the loop never learns it), ended by the caller when it sees them
 * end, a cycle whenever something happened or the loop asks for one
 * (gf_loop_next_event: a reservation's time).  Evicted jobs' old ends still
 * tick (the replay's stale end events run a cycle too).
 */
/*
 * compact: the job records of ended jobs are compacted (gf_loop_compact)
 * after every cycle, as the live scheduler does now and then; binds are
 * recorded by scenario job, so they compare with the uncompacted run's.
 */
static gf_loop *drive_live(const struct scenario *sc, enum gf_queue_policy qp, struct gf_catalog *cat,
			   bool preemption, struct rec *r, bool compact)
{
	gf_loop *L = new_loop(sc, qp, cat, preemption);
	struct { int64_t t; uint32_t job; bool live; } ends[256];
	size_t nends = 0, next = 0;
	bool scheduled[24] = { false };
	uint32_t cur[24], orig[24], map[24];	/* scenario job -> loop id -> scenario job */

	for (;;) {
		int64_t t = INT64_MAX, ev;
		struct gf_loop_decisions d;
		size_t w = 0, from = r->n;

		if (next < sc->njobs)
			t = sc->jobs[next].arrival;
		for (size_t e = 0; e < nends; e++)
			t = ends[e].t < t ? ends[e].t : t;
		if (gf_loop_next_event(L, &ev) && ev < t)
			t = ev;
		if (t == INT64_MAX)
			break;
		for (; next < sc->njobs && sc->jobs[next].arrival == t; next++) {
			struct gf_job_spec s = sc->jobs[next];
			uint32_t id;

			s.estimate = s.estimate > 0 ? s.estimate : s.duration;
			s.duration = GF_LOOP_OPEN;
			assert_int_equal(gf_loop_submit(L, &s, &id), GF_OK);
			if (!compact)
				assert_int_equal(id, next);
			cur[next] = id;
			orig[id] = (uint32_t)next;
		}
		for (size_t e = 0; e < nends; e++) {
			if (ends[e].t != t)
				ends[w++] = ends[e];
			else if (ends[e].live)
				assert_int_equal(gf_loop_end(L, cur[ends[e].job], t), GF_OK);
		}
		nends = w;
		assert_int_equal(gf_loop_cycle(L, t, &d), GF_OK);
		rec_add(r, &d);
		for (size_t k = from; k < r->n; k++)
			r->b[k].job = orig[r->b[k].job];
		for (size_t k = 0; k < d.nevicted; k++) {
			uint32_t j = orig[d.evicted[k]];

			scheduled[j] = false;
			for (size_t e = 0; e < nends; e++)
				if (ends[e].job == j)
					ends[e].live = false;
		}
		for (size_t k = 0; k < d.nbinds; k++) {
			uint32_t id = d.binds[k].job, j = orig[id];
			struct gf_job_info ji;

			gf_loop_job(L, id, &ji);
			if (ji.state != GF_JOB_RUNNING || scheduled[j])
				continue;
			assert_true(nends < 256);
			ends[nends].t = ji.start + sc->jobs[j].duration;
			ends[nends].job = j;
			ends[nends++].live = true;
			scheduled[j] = true;
		}
		if (compact) {
			size_t before = gf_loop_njobs(L), over = gf_loop_njobs_over(L);

			gf_loop_compact(L, map);
			assert_int_equal(gf_loop_njobs(L), before - over);
			for (size_t j = 0; j < next; j++) {
				cur[j] = cur[j] == GF_LOOP_NO_JOB ? GF_LOOP_NO_JOB : map[cur[j]];
				if (cur[j] != GF_LOOP_NO_JOB)
					orig[cur[j]] = (uint32_t)j;
			}
		}
	}
	assert_int_equal(gf_loop_run(L), GF_OK);
	return L;
}

static void sort_by_arrival(struct scenario *sc)
{
	for (size_t i = 1; i < sc->njobs; i++) {
		struct gf_job_spec s = sc->jobs[i];
		size_t k = i;

		for (; k > 0 && sc->jobs[k - 1].arrival > s.arrival; k--)
			sc->jobs[k] = sc->jobs[k - 1];
		sc->jobs[k] = s;
	}
}

static void same_outcome(gf_loop *a, gf_loop *b, const char *what, uint64_t seed)
{
	struct gf_loop_stats sa, sb;

	assert_int_equal(gf_loop_njobs(a), gf_loop_njobs(b));
	for (uint32_t id = 0; id < gf_loop_njobs(a); id++) {
		struct gf_job_info ja, jb;

		gf_loop_job(a, id, &ja);
		gf_loop_job(b, id, &jb);
		if (ja.state != jb.state || ja.start != jb.start || ja.end != jb.end || ja.promised != jb.promised ||
		    ja.preemptions != jb.preemptions || ja.partial != jb.partial)
			fail_msg("seed %llu, %s: job %u: state %d/%d start %lld/%lld end %lld/%lld promised %lld/%lld",
				 (unsigned long long)seed, what, id, ja.state, jb.state, (long long)ja.start,
				 (long long)jb.start, (long long)ja.end, (long long)jb.end, (long long)ja.promised,
				 (long long)jb.promised);
	}
	gf_loop_stats(a, &sa);
	gf_loop_stats(b, &sb);
	assert_int_equal(sa.cycles, sb.cycles);
	assert_int_equal(sa.tries, sb.tries);
	assert_int_equal(sa.starts, sb.starts);
	assert_int_equal(sa.preemptions, sb.preemptions);
	assert_int_equal(sa.backfilled, sb.backfilled);
	assert_int_equal(sa.plans, sb.plans);
	assert_int_equal(sa.stalled, sb.stalled);
	assert_true(sa.gpu_milli_s_all == sb.gpu_milli_s_all);
}

static void live_driven_cycle_agrees_with_the_replay(void **state)
{
	uint64_t binds = 0, evictions = 0;

	(void)state;
	for (uint64_t seed = 0; seed < 600; seed++) {
		struct scenario sc;
		struct gf_catalog cat;

		gf_catalog_init(&cat);
		make_scenario(seed, &sc, seed % 2 == 1, seed % 4 >= 2);
		sort_by_arrival(&sc);	/* the live side submits in arrival order: same ids */
		for (int qp = 0; qp < GF_QP_COUNT_; qp++) {
			for (int pre = 0; pre < (qp == GF_QP_KUBE ? 1 : 2); pre++) {
				struct rec ra = { 0 }, rb = { 0 };
				gf_loop *run = run_scenario_p(&sc, (enum gf_queue_policy)qp, &cat, pre);
				gf_loop *rep = drive_replay(&sc, (enum gf_queue_policy)qp, &cat, pre, &ra, false);
				gf_loop *live = drive_live(&sc, (enum gf_queue_policy)qp, &cat, pre, &rb, false);
				struct rec rc = { 0 };
				gf_loop *packed = drive_live(&sc, (enum gf_queue_policy)qp, &cat, pre, &rc, true);
				char what[64];
				struct gf_loop_stats st;

				snprintf(what, sizeof(what), "%s%s", gf_queue_policy_name((enum gf_queue_policy)qp),
					 pre ? " +preemption" : "");
				same_outcome(run, rep, what, seed);
				same_outcome(rep, live, what, seed);
				/* the same decisions, pod by pod: node and GPUs */
				assert_int_equal(ra.n, rb.n);
				for (size_t k = 0; k < ra.n; k++)
					if (ra.b[k].job != rb.b[k].job || ra.b[k].member != rb.b[k].member ||
					    ra.b[k].node != rb.b[k].node ||
					    memcmp(ra.b[k].gpus, rb.b[k].gpus, (size_t)sc.jobs[ra.b[k].job].pod.gpu_count))
						fail_msg("seed %llu, %s: bind %zu differs (job %u/%u node %u/%u)",
							 (unsigned long long)seed, what, k, ra.b[k].job, rb.b[k].job,
							 ra.b[k].node, rb.b[k].node);
				/* compacting the job records as it goes changes no decision */
				assert_int_equal(rc.n, rb.n);
				for (size_t k = 0; k < rb.n; k++)
					if (rb.b[k].job != rc.b[k].job || rb.b[k].member != rc.b[k].member ||
					    rb.b[k].node != rc.b[k].node ||
					    memcmp(rb.b[k].gpus, rc.b[k].gpus, (size_t)sc.jobs[rb.b[k].job].pod.gpu_count))
						fail_msg("seed %llu, %s: compacted, bind %zu differs (job %u/%u node %u/%u)",
							 (unsigned long long)seed, what, k, rb.b[k].job, rc.b[k].job,
							 rb.b[k].node, rc.b[k].node);
				free(rc.b);
				gf_loop_destroy(packed);
				rc = (struct rec){ 0 };
				packed = drive_replay(&sc, (enum gf_queue_policy)qp, &cat, pre, &rc, true);
				assert_int_equal(rc.n, ra.n);
				for (size_t k = 0; k < ra.n; k++)
					if (ra.b[k].job != rc.b[k].job || ra.b[k].member != rc.b[k].member ||
					    ra.b[k].node != rc.b[k].node ||
					    memcmp(ra.b[k].gpus, rc.b[k].gpus, (size_t)sc.jobs[ra.b[k].job].pod.gpu_count))
						fail_msg("seed %llu, %s: replay compacted, bind %zu differs (job %u/%u)",
							 (unsigned long long)seed, what, k, ra.b[k].job, rc.b[k].job);
				free(rc.b);
				gf_loop_destroy(packed);
				binds += ra.n;
				gf_loop_stats(live, &st);
				evictions += st.preemptions;
				free(ra.b);
				free(rb.b);
				gf_loop_destroy(run);
				gf_loop_destroy(rep);
				gf_loop_destroy(live);
			}
		}
		gf_catalog_release(&cat);
	}
	print_message("%llu pod binds, %llu evictions agreed\n", (unsigned long long)binds,
		      (unsigned long long)evictions);
	assert_true(binds > 10000);
	assert_true(evictions > 100);
}

static void per_pod_state_is_compact(void **state)
{
	(void)state;
	/* the bound; live.c held ~6.9 KB per pod */
	assert_true(gf_loop_bytes_per_pod() < 512);
	print_message("loop state per pod: %zu bytes\n", gf_loop_bytes_per_pod());
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(events_pop_by_time_then_push_order),
		cmocka_unit_test(events_many_sorted),
		cmocka_unit_test(gang_is_all_or_nothing),
		cmocka_unit_test(strict_fifo_blocks_everything_behind_the_head),
		cmocka_unit_test(best_effort_skips_ahead_and_delays_the_head),
		cmocka_unit_test(backfill_reserves_and_admits_only_what_ends_in_time),
		cmocka_unit_test(backfill_admits_long_jobs_off_the_reserved_nodes),
		cmocka_unit_test(conservative_protects_every_blocked_job),
		cmocka_unit_test(preemption_only_when_not_soon_and_after_the_grace),
		cmocka_unit_test(history_estimates_from_finished_jobs),
		cmocka_unit_test(forecast_answers_every_pending_job),
		cmocka_unit_test(forecast_upto_stops_at_horizon_or_count),
		cmocka_unit_test(forecast_memo_keeps_answers),
		cmocka_unit_test(random_history_estimates_keep_every_rule),
		cmocka_unit_test(quota_borrows_within_the_limits),
		cmocka_unit_test(quota_reclaims_borrowed_room_without_cycles),
		cmocka_unit_test(quota_fair_share_among_borrowers),
		cmocka_unit_test(per_queue_ordering_one_queue),
		cmocka_unit_test(per_queue_orderings_mixed),
		cmocka_unit_test(multi_gpu_pods_take_one_nvlink_island),
		cmocka_unit_test(random_quotas_keep_every_rule),
		cmocka_unit_test(preemption_evicts_the_cheapest_and_requeues_it),
		cmocka_unit_test(preemption_evicts_gangs_whole_and_never_for_equal_priority),
		cmocka_unit_test(budget_spares_the_protected_of_equal_victims),
		cmocka_unit_test(budget_spares_the_protected_on_one_node),
		cmocka_unit_test(budget_is_best_effort_and_counts_down),
		cmocka_unit_test(budget_counts_each_gang_member),
		cmocka_unit_test(kube_binds_members_one_by_one),
		cmocka_unit_test(kube_gangs_deadlock_and_are_reported),
		cmocka_unit_test(bad_specs_are_refused),
		cmocka_unit_test(random_backfill_never_delays_a_reservation),
		cmocka_unit_test(random_preemption_keeps_every_rule),
		cmocka_unit_test(same_seed_same_replay),
		cmocka_unit_test(caller_driven_jobs_end_unbind_and_withdraw),
		cmocka_unit_test(pending_jobs_say_why_and_leave_when_deleted),
		cmocka_unit_test(masked_jobs_are_not_retried_without_a_change),
		cmocka_unit_test(admission_masks_every_placement),
		cmocka_unit_test(admission_holds_for_reservations_and_preemption),
		cmocka_unit_test(reservation_bound_only_where_admitted),
		cmocka_unit_test(failed_jobs_reported),
		cmocka_unit_test(failed_jobs_back_off),
		cmocka_unit_test(backoff_keeps_strict_head_blocking),
		cmocka_unit_test(pods_placed_by_others_hold_their_room),
		cmocka_unit_test(loop_on_the_callers_cluster),
		cmocka_unit_test(live_driven_cycle_agrees_with_the_replay),
		cmocka_unit_test(per_pod_state_is_compact),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
