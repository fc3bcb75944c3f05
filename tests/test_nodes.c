/*
 * tests/test_nodes.c - node verbs: the cluster's (add, remove, update,
 * cordon, notice), the scheduler's node classes following them, and the
 * loop's (a node change never destroys the loop: jobs, queue and quotas
 * carry on), plus quotas replaced in place.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cluster/cluster.h"
#include "cluster/whynot.h"
#include "core/rng.h"
#include "policy/sched.h"
#include "queue/loop.h"
#include "testutil.h"

static void check(const gf_cluster *c)
{
	char why[256] = "";

	if (gf_cluster_check(c, why, sizeof(why)))
		fail_msg("%s", why);
}

/* ---- the cluster's verbs ---- */

static void cluster_add_appends_and_grows(void **state)
{
	struct gf_node_spec n = tu_node("a", 8000, 8192, 2, -1);
	gf_cluster *c;
	size_t at;

	(void)state;
	assert_int_equal(gf_cluster_create(&n, 1, &c), GF_OK);
	uint64_t seq = gf_cluster_journal_seq(c);

	for (int k = 1; k < 100; k++) {
		struct gf_node_spec m = tu_node("b", 4000, 4096, 1, -1);

		assert_int_equal(gf_cluster_add_node(c, &m, &at), GF_OK);
		assert_int_equal(at, (size_t)k);
	}
	assert_int_equal(gf_cluster_nnodes(c), 100);
	assert_int_equal(gf_cluster_ngpus(c), 2 + 99);
	assert_int_equal(gf_cluster_gpu_capacity(c), (2 + 99) * 1000);
	assert_string_equal(gf_cluster_spec(c, 0)->name, "a");
	/* readers with per-node arrays must reread: the journal cannot say */
	assert_int_equal(gf_cluster_changed_node(c, seq + 1), SIZE_MAX);
	struct gf_pod_spec p = tu_pod("p", 1000, 1024, 1, 1000, 0);
	uint8_t g = 0;

	assert_true(gf_cluster_fits(c, NULL, 99, &p));
	assert_int_equal(gf_cluster_bind(c, 99, &p, &g), GF_OK);
	check(c);
	n.ngpus = GF_MAX_GPUS + 1;
	assert_int_equal(gf_cluster_add_node(c, &n, &at), GF_INVAL);
	assert_int_equal(gf_cluster_nnodes(c), 100);
	gf_cluster_destroy(c);
}

static void cluster_remove_only_when_empty(void **state)
{
	struct gf_node_spec n[3] = { tu_node("a", 8000, 8192, 2, -1), tu_node("b", 8000, 8192, 4, -1),
				     tu_node("c", 8000, 8192, 2, -1) };
	struct gf_pod_spec p = tu_pod("p", 1000, 1024, 1, 500, 0);
	uint8_t g = 1;
	char why[256] = "";
	gf_cluster *c;

	(void)state;
	assert_int_equal(gf_cluster_create(n, 3, &c), GF_OK);
	assert_int_equal(gf_cluster_bind(c, 1, &p, &g), GF_OK);
	assert_int_equal(gf_cluster_remove_node(c, 1, why, sizeof(why)), GF_STATE);
	assert_non_null(strstr(why, "node b: 1 pods bound"));
	assert_non_null(strstr(why, "500 milli-GPU"));
	assert_int_equal(gf_cluster_gpu_capacity(c), 8000);
	assert_int_equal(gf_cluster_unbind(c, 1, &p, &g), GF_OK);
	assert_int_equal(gf_cluster_remove_node(c, 1, why, sizeof(why)), GF_OK);
	assert_int_equal(gf_cluster_remove_node(c, 1, why, sizeof(why)), GF_OK);	/* again: nothing */
	/* a tombstone: indices stay, the name stays, no capacity, nothing fits or binds */
	assert_int_equal(gf_cluster_nnodes(c), 3);
	assert_string_equal(gf_cluster_spec(c, 1)->name, "b");
	assert_string_equal(gf_cluster_spec(c, 2)->name, "c");
	assert_true(gf_cluster_node(c, 1)->flags & GF_NODE_GONE);
	assert_int_equal(gf_cluster_gpu_capacity(c), 4000);
	assert_int_equal(gf_cluster_ngpus(c), 4);
	struct gf_pod_spec cpu = tu_pod("q", 0, 0, 0, 0, 0);

	assert_false(gf_cluster_fits(c, NULL, 1, &cpu));
	assert_int_equal(gf_cluster_bind(c, 1, &cpu, NULL), GF_RANGE);
	assert_int_equal(gf_cluster_cordon(c, 1, true), GF_RANGE);
	assert_int_equal(gf_cluster_remove_node(c, 3, why, sizeof(why)), GF_RANGE);
	check(c);
	gf_cluster_reset(c);	/* the tombstone survives a reset */
	assert_true(gf_cluster_node(c, 1)->flags & GF_NODE_GONE);
	check(c);
	gf_cluster_destroy(c);
}

static void cluster_update_refuses_what_bound_pods_exceed(void **state)
{
	struct gf_node_spec n = tu_node("a", 8000, 8192, 4, 0), m;
	struct gf_pod_spec p = tu_pod("p", 3000, 2048, 1, 1000, 0);
	uint8_t g = 2;
	char why[256] = "";
	gf_cluster *c;

	(void)state;
	assert_int_equal(gf_cluster_create(&n, 1, &c), GF_OK);
	assert_int_equal(gf_cluster_bind(c, 0, &p, &g), GF_OK);
	m = n;
	m.cpu_milli = 2000;	/* below the 3000 bound */
	assert_int_equal(gf_cluster_update_node(c, 0, &m, why, sizeof(why)), GF_STATE);
	assert_non_null(strstr(why, "above the new capacity"));
	m = n;
	m.ngpus = 2;	/* GPU 2 is in use */
	assert_int_equal(gf_cluster_update_node(c, 0, &m, why, sizeof(why)), GF_STATE);
	m = n;
	m.model = 1;	/* a GPU pod runs under model 0 */
	assert_int_equal(gf_cluster_update_node(c, 0, &m, why, sizeof(why)), GF_STATE);
	assert_int_equal(gf_cluster_spec(c, 0)->cpu_milli, 8000);
	/* within what is bound: applied, the bound pod kept */
	m = n;
	m.cpu_milli = 3000;
	m.ngpus = 8;
	uint32_t v = gf_cluster_node(c, 0)->version;

	assert_int_equal(gf_cluster_update_node(c, 0, &m, why, sizeof(why)), GF_OK);
	assert_true(gf_cluster_node(c, 0)->version > v);
	assert_int_equal(gf_cluster_node(c, 0)->cpu_free, 0);
	assert_int_equal(gf_cluster_node(c, 0)->ngpus, 8);
	assert_int_equal(gf_cluster_node(c, 0)->nfull, 7);
	assert_int_equal(gf_cluster_gpu_capacity(c), 8000);
	assert_int_equal(gf_cluster_gpu_used(c), 1000);
	check(c);
	assert_int_equal(gf_cluster_unbind(c, 0, &p, &g), GF_OK);
	m.ngpus = 1;
	assert_int_equal(gf_cluster_update_node(c, 0, &m, why, sizeof(why)), GF_OK);
	assert_int_equal(gf_cluster_gpu_capacity(c), 1000);
	check(c);
	gf_cluster_destroy(c);
}

static void cluster_cordon_and_notice_are_flag_bits(void **state)
{
	struct gf_node_spec n[2] = { tu_node("a", 8000, 8192, 2, -1), tu_node("b", 8000, 8192, 2, -1) };
	struct gf_pod_spec p = tu_pod("p", 1000, 1024, 1, 1000, 0);
	uint8_t g = 0;
	gf_cluster *c;

	(void)state;
	assert_int_equal(gf_cluster_create(n, 2, &c), GF_OK);
	assert_int_equal(gf_cluster_bind(c, 0, &p, &g), GF_OK);
	assert_int_equal(gf_cluster_cordon(c, 0, true), GF_OK);
	assert_false(gf_cluster_fits(c, NULL, 0, &p));
	assert_int_equal(gf_cluster_why_not(c, NULL, 0, &p), GF_WHY_UNSCHEDULABLE);
	assert_int_equal(gf_cluster_node(c, 0)->npods, 1);	/* what is bound stays */
	g = 0;
	assert_int_equal(gf_cluster_unbind(c, 0, &p, &g), GF_OK);	/* and may end */
	assert_int_equal(gf_cluster_cordon(c, 0, false), GF_OK);
	assert_true(gf_cluster_fits(c, NULL, 0, &p));
	assert_int_equal(gf_cluster_leave_at(c, 1), INT64_MAX);
	assert_int_equal(gf_cluster_notice(c, 1, 3600), GF_OK);
	assert_int_equal(gf_cluster_leave_at(c, 1), 3600);
	assert_false(gf_cluster_fits(c, NULL, 1, &p));
	assert_int_equal(gf_cluster_cordon(c, 1, false), GF_OK);	/* uncordon leaves the notice */
	assert_false(gf_cluster_fits(c, NULL, 1, &p));
	check(c);
	gf_cluster_destroy(c);
}

/* The scheduler's node classes follow every verb but add (which needs a new scheduler). */
static void sched_classes_follow_node_verbs(void **state)
{
	enum { N = 40 };
	struct gf_node_spec n[N];
	struct gf_catalog cat;
	struct gf_policy_env env = { .features = gf_features_default() };
	gf_cluster *c;
	gf_sched *s;
	struct gf_rng rng;
	char why[256] = "";

	(void)state;
	gf_catalog_init(&cat);
	for (int i = 0; i < N; i++)
		n[i] = tu_node("n", 16000, 65536, 4 + 4 * (i % 2), -1);
	assert_int_equal(gf_cluster_create(n, N, &c), GF_OK);
	env.cluster = c;
	env.cat = &cat;
	assert_int_equal(gf_sched_create(&gf_policy_best_fit, &env, &s), GF_OK);
	gf_rng_init(&rng, 3);
	for (int step = 0; step < 600; step++) {
		struct gf_pod_spec p = tu_pod("p", 1000, 1024, 1 + (int)gf_rng_below(&rng, 2), 1000, 0);
		struct gf_placement pl;
		uint32_t i = (uint32_t)gf_rng_below(&rng, N);

		switch (gf_rng_below(&rng, 4)) {
		case 0:
			assert_int_equal(gf_cluster_cordon(c, i, gf_cluster_node(c, i)->flags == 0) == GF_OK ||
					 (gf_cluster_node(c, i)->flags & GF_NODE_GONE), true);
			break;
		case 1:
			if (gf_rng_below(&rng, 8) == 0)
				(void)gf_cluster_notice(c, i, step);
			else if (gf_rng_below(&rng, 8) == 0)
				(void)gf_cluster_remove_node(c, i, why, sizeof(why));
			break;
		case 2: {
			struct gf_node_spec m = *gf_cluster_spec(c, i);

			m.cpu_milli += 1000;
			(void)gf_cluster_update_node(c, i, &m, why, sizeof(why));
			break;
		}
		default:
			break;
		}
		if (gf_sched_place(s, &p, &rng, &pl) == GF_PLACED) {
			assert_int_equal(gf_cluster_node(c, pl.node)->flags, 0);
			assert_int_equal(gf_cluster_bind(c, pl.node, &p, pl.gpus), GF_OK);
		}
		if (step % 50 == 0 && gf_sched_check_classes(s, why, sizeof(why)))
			fail_msg("step %d: %s", step, why);
	}
	assert_true(gf_sched_nclasses(s) > 0);
	if (gf_sched_check_classes(s, why, sizeof(why)))
		fail_msg("%s", why);
	check(c);
	gf_sched_destroy(s);
	gf_cluster_destroy(c);
	gf_catalog_release(&cat);
}

/* ---- the loop's verbs ---- */

struct fx {
	struct gf_catalog cat;
	gf_loop *L;
};

static struct fx *fx_new(enum gf_queue_policy qp, const struct gf_node_spec *nodes, size_t n,
			 const struct gf_queue_quota *q, size_t nq)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct gf_loop_config cfg = { .policy = qp, .seed = 1, .horizon = 1000000, .queues = q, .nqueues = nq };
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

static uint32_t submit(struct fx *f, int gpus, int64_t arrival, int64_t duration, uint16_t queue)
{
	struct gf_job_spec s = { .pod = tu_pod("j", 1000, 1024, gpus, 1000, 0), .npods = 1,
				 .arrival = arrival, .duration = duration, .queue = queue };
	uint32_t id;

	assert_int_equal(gf_loop_submit(f->L, &s, &id), GF_OK);
	return id;
}

static struct gf_job_info info(struct fx *f, uint32_t id)
{
	struct gf_job_info i;

	gf_loop_job(f->L, id, &i);
	return i;
}

/* The node job id's first member went to, from the cycle's decisions (NONE if not bound). */
static uint32_t cycle_node(struct fx *f, int64_t now, uint32_t id)
{
	struct gf_loop_decisions d;

	assert_int_equal(gf_loop_cycle(f->L, now, &d), GF_OK);
	for (size_t k = 0; k < d.nbinds; k++)
		if (d.binds[k].job == id)
			return d.binds[k].node;
	return UINT32_MAX;
}

static const enum gf_queue_policy policies[] = { GF_QP_KUBE, GF_QP_STRICT_FIFO, GF_QP_BEST_EFFORT_FIFO,
						 GF_QP_BACKFILL, GF_QP_CONSERVATIVE };

static void loop_node_added_mid_run_takes_the_waiting_job(void **state)
{
	(void)state;
	for (size_t q = 0; q < sizeof(policies) / sizeof(policies[0]); q++) {
		struct gf_node_spec n = tu_node("a", 8000, 8192, 1, -1);
		struct fx *f = fx_new(policies[q], &n, 1, NULL, 0);
		uint32_t a = submit(f, 1, 0, 100, 0), b = submit(f, 1, 0, 100, 0);
		uint32_t big = submit(f, 4, 0, 50, 0), at;

		assert_int_equal(cycle_node(f, 0, a), 0);
		assert_int_equal(info(f, b).state, GF_JOB_PENDING);
		assert_int_equal(info(f, big).state, GF_JOB_UNRESOLVABLE);
		(void)cycle_node(f, 5, b);	/* parked: nothing freed */
		struct gf_node_spec m = tu_node("b", 8000, 8192, 4, -1);

		assert_int_equal(gf_loop_node_add(f->L, &m, &at), GF_OK);
		assert_int_equal(at, 1);
		assert_int_equal(gf_loop_nnodes(f->L), 2);
		/* the waiting job starts on the new node at once; the unresolvable one is back in the queue */
		assert_int_equal(cycle_node(f, 10, b), 1);
		assert_int_equal(info(f, b).start, 10);
		assert_int_equal(info(f, a).state, GF_JOB_RUNNING);
		assert_int_not_equal(info(f, big).state, GF_JOB_UNRESOLVABLE);
		assert_int_equal(gf_loop_run(f->L), GF_OK);
		assert_int_equal(info(f, big).state, GF_JOB_DONE);
		assert_int_equal(info(f, big).start, 110);	/* after b leaves the 4-GPU node */
		char why[256];

		assert_int_equal(gf_cluster_check(gf_loop_cluster(f->L), why, sizeof(why)), GF_OK);
		fx_free(f);
	}
}

static void loop_remove_refused_with_pods_then_done_when_empty(void **state)
{
	struct gf_node_spec n[2] = { tu_node("a", 8000, 8192, 1, -1), tu_node("b", 8000, 8192, 1, -1) };
	struct fx *f = fx_new(GF_QP_BACKFILL, n, 2, NULL, 0);
	uint32_t a = submit(f, 1, 0, 100, 0);
	char why[256] = "";

	(void)state;
	assert_int_equal(cycle_node(f, 0, a), 0);
	assert_int_equal(gf_loop_node_remove(f->L, 0, why, sizeof(why)), GF_STATE);
	assert_non_null(strstr(why, "node a: 1 pods bound"));
	assert_int_equal(gf_loop_node_remove(f->L, 1, why, sizeof(why)), GF_OK);
	assert_int_equal(gf_loop_node_remove(f->L, 2, why, sizeof(why)), GF_RANGE);
	/* the removed node takes nothing; the running job carries on, a new one waits for node a */
	uint32_t b = submit(f, 1, 10, 10, 0);

	assert_int_equal(cycle_node(f, 10, b), UINT32_MAX);
	assert_int_equal(gf_loop_run(f->L), GF_OK);
	assert_int_equal(info(f, a).end, 100);
	assert_int_equal(info(f, b).start, 100);
	/* a later arrival needing two nodes' worth is unresolvable now */
	uint32_t c = submit(f, 2, 300, 10, 0);

	assert_int_equal(gf_loop_run(f->L), GF_OK);
	assert_int_equal(info(f, c).state, GF_JOB_UNRESOLVABLE);
	fx_free(f);
}

static void loop_cordon_stops_placements_uncordon_resumes(void **state)
{
	(void)state;
	for (size_t q = 0; q < sizeof(policies) / sizeof(policies[0]); q++) {
		struct gf_node_spec n[2] = { tu_node("a", 8000, 8192, 2, -1), tu_node("b", 8000, 8192, 2, -1) };
		struct fx *f = fx_new(policies[q], n, 2, NULL, 0);

		assert_int_equal(gf_loop_node_cordon(f->L, 0, true), GF_OK);
		uint32_t a = submit(f, 1, 0, 100, 0);

		assert_int_equal(cycle_node(f, 0, a), 1);	/* best fit alone would pick node 0 */
		assert_int_equal(gf_loop_node_cordon(f->L, 1, true), GF_OK);
		uint32_t b = submit(f, 1, 1, 100, 0);

		assert_int_equal(cycle_node(f, 1, b), UINT32_MAX);
		assert_int_equal(cycle_node(f, 2, b), UINT32_MAX);
		assert_int_equal(info(f, a).state, GF_JOB_RUNNING);	/* a cordon evicts nothing */
		assert_int_equal(gf_loop_node_cordon(f->L, 0, false), GF_OK);
		assert_int_equal(cycle_node(f, 3, b), 0);
		fx_free(f);
	}
}

static void loop_notice_stops_placements_and_keeps_the_time(void **state)
{
	struct gf_node_spec n[2] = { tu_node("a", 8000, 8192, 2, -1), tu_node("b", 8000, 8192, 2, -1) };
	struct fx *f = fx_new(GF_QP_BACKFILL, n, 2, NULL, 0);
	uint32_t a = submit(f, 1, 0, 100, 0);

	(void)state;
	assert_int_equal(cycle_node(f, 0, a), 0);
	assert_int_equal(gf_loop_node_notice(f->L, 0, 500), GF_OK);
	assert_int_equal(gf_cluster_leave_at(gf_loop_cluster(f->L), 0), 500);
	uint32_t b = submit(f, 1, 10, 100, 0);

	assert_int_equal(cycle_node(f, 10, b), 1);	/* best fit would pack it beside a */
	assert_int_equal(info(f, a).state, GF_JOB_RUNNING);
	/* the only node left with room is under notice: a job waits */
	uint32_t c = submit(f, 2, 20, 100, 0);

	assert_int_equal(cycle_node(f, 20, c), UINT32_MAX);
	assert_int_equal(gf_loop_run(f->L), GF_OK);
	assert_int_equal(info(f, c).start, 110);	/* on node b once b ends, never on a */
	fx_free(f);
}

static void loop_update_grows_and_refuses_to_shrink(void **state)
{
	struct gf_node_spec n = tu_node("a", 8000, 8192, 1, -1), m;
	struct fx *f = fx_new(GF_QP_BACKFILL, &n, 1, NULL, 0);
	uint32_t a = submit(f, 1, 0, 100, 0), b = submit(f, 1, 0, 100, 0);
	char why[256] = "";

	(void)state;
	assert_int_equal(cycle_node(f, 0, a), 0);
	m = n;
	m.ngpus = 0;
	assert_int_equal(gf_loop_node_update(f->L, 0, &m, why, sizeof(why)), GF_STATE);
	m.ngpus = 2;
	assert_int_equal(gf_loop_node_update(f->L, 0, &m, why, sizeof(why)), GF_OK);
	assert_int_equal(cycle_node(f, 5, b), 0);
	assert_int_equal(info(f, b).start, 5);
	fx_free(f);
}

static void loop_quotas_replaced_in_place(void **state)
{
	struct gf_node_spec n = tu_node("a", 8000, 8192, 4, -1);
	struct gf_queue_quota q = { .nominal = 1000, .borrowing_limit = 0, .lending_limit = GF_QUOTA_UNLIMITED,
				    .cohort = -1, .weight = 1 };
	struct fx *f = fx_new(GF_QP_BEST_EFFORT_FIFO, &n, 1, &q, 1);
	uint32_t a = submit(f, 1, 0, 100, 0), b = submit(f, 1, 0, 100, 0);

	(void)state;
	assert_int_equal(cycle_node(f, 0, a), 0);
	assert_int_equal(info(f, b).state, GF_JOB_PENDING);
	assert_int_equal(info(f, b).why, GF_LOOP_WHY_QUOTA);
	assert_int_equal(gf_loop_queue_usage(f->L, 0), 1000);
	q.nominal = 2000;
	assert_int_equal(gf_loop_set_quotas(f->L, &q, 1), GF_OK);
	assert_int_equal(gf_loop_queue_usage(f->L, 0), 1000);	/* recounted from the running job */
	assert_int_equal(cycle_node(f, 1, b), 0);
	assert_int_equal(gf_loop_queue_usage(f->L, 0), 2000);
	/* a job names queue 0: an empty list may not drop it... */
	assert_int_equal(gf_loop_set_quotas(f->L, &q, 0), GF_OK);	/* n = 0: no quotas at all */
	q.weight = 0;
	assert_int_equal(gf_loop_set_quotas(f->L, &q, 1), GF_INVAL);
	fx_free(f);
}

static void loop_quota_index_beyond_the_new_list_refused(void **state)
{
	struct gf_node_spec n = tu_node("a", 8000, 8192, 4, -1);
	struct gf_queue_quota q[2] = {
		{ .nominal = 1000, .lending_limit = GF_QUOTA_UNLIMITED, .cohort = -1, .weight = 1 },
		{ .nominal = 1000, .lending_limit = GF_QUOTA_UNLIMITED, .cohort = -1, .weight = 1 },
	};
	struct fx *f = fx_new(GF_QP_BACKFILL, &n, 1, q, 2);
	uint32_t a = submit(f, 1, 0, 100, 1);

	(void)state;
	assert_int_equal(cycle_node(f, 0, a), 0);
	assert_int_equal(gf_loop_set_quotas(f->L, q, 1), GF_RANGE);
	assert_int_equal(gf_loop_queue_usage(f->L, 1), 1000);	/* unchanged */
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cluster_add_appends_and_grows),
		cmocka_unit_test(cluster_remove_only_when_empty),
		cmocka_unit_test(cluster_update_refuses_what_bound_pods_exceed),
		cmocka_unit_test(cluster_cordon_and_notice_are_flag_bits),
		cmocka_unit_test(sched_classes_follow_node_verbs),
		cmocka_unit_test(loop_node_added_mid_run_takes_the_waiting_job),
		cmocka_unit_test(loop_remove_refused_with_pods_then_done_when_empty),
		cmocka_unit_test(loop_cordon_stops_placements_uncordon_resumes),
		cmocka_unit_test(loop_notice_stops_placements_and_keeps_the_time),
		cmocka_unit_test(loop_update_grows_and_refuses_to_shrink),
		cmocka_unit_test(loop_quotas_replaced_in_place),
		cmocka_unit_test(loop_quota_index_beyond_the_new_list_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
