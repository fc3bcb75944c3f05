/* tests/test_sim.c - sim/openb: determinism, feature switches, tuning, reports; sim/replay's as-listed run. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sim/openb.h"
#include "sim/replay.h"
#include "sim/report.h"
#include "sim/trace.h"
#include "testutil.h"

struct world {
	struct gf_catalog cat;
	struct gf_node_spec *nodes;
	struct gf_pod_spec *pods;
	size_t nn, np;
	gf_openb *x;
};

static int setup(void **state)
{
	struct world *w = calloc(1, sizeof(*w));
	struct gf_trace_error err;
	size_t len;
	char *d;

	gf_catalog_init(&w->cat);
	d = tu_slurp(GF_SOURCE_DIR "/data/openb/openb_node_list_gpu_node.csv", &len);
	assert_int_equal(gf_trace_parse_nodes(d, len, "nodes", &w->cat, &w->nodes, &w->nn, &err), GF_OK);
	free(d);
	d = tu_slurp(GF_SOURCE_DIR "/data/openb/openb_pod_list_gpuspec10.csv", &len);
	assert_int_equal(gf_trace_parse_pods(d, len, "pods", &w->cat, &w->pods, &w->np, &err), GF_OK);
	free(d);
	/* A quarter of the cluster keeps the sanitizer builds quick. */
	assert_int_equal(gf_openb_create(w->nodes, w->nn / 4, w->pods, w->np / 4, &w->cat, &w->x), GF_OK);
	*state = w;
	return 0;
}

static int teardown(void **state)
{
	struct world *w = *state;

	gf_openb_destroy(w->x);
	free(w->nodes);
	free(w->pods);
	gf_catalog_release(&w->cat);
	free(w);
	return 0;
}

static void assert_same(const struct gf_openb_result *a, const struct gf_openb_result *b)
{
	assert_int_equal(a->nbuckets, b->nbuckets);
	assert_int_equal(a->placed, b->placed);
	assert_int_equal(a->failed, b->failed);
	assert_int_equal(a->gpu_allocated, b->gpu_allocated);
	assert_memory_equal(a->alloc, b->alloc, (size_t)a->nbuckets * sizeof(double));
	assert_memory_equal(a->frag, b->frag, (size_t)a->nbuckets * sizeof(double));
}

/* Same seed: identical bytes; and no engine shortcut changes any result. */
static void test_deterministic_and_features_neutral(void **state)
{
	struct world *w = *state;
	size_t npol;
	const struct gf_policy_ops *const *all = gf_policy_all(&npol);

	for (size_t k = 0; k < npol; k++) {
		struct gf_openb_config cfg = gf_openb_config_default();
		struct gf_openb_result a, b, c;

		cfg.seed = 7;
		assert_int_equal(gf_openb_run(w->x, all[k], &cfg, &a), GF_OK);
		assert_int_equal(gf_openb_run(w->x, all[k], &cfg, &b), GF_OK);
		assert_same(&a, &b);
		cfg.features.on[GF_FEAT_SCORE_CACHE] = false;
		cfg.features.on[GF_FEAT_DEDUP_GPU_CANDIDATES] = false;
		assert_int_equal(gf_openb_run(w->x, all[k], &cfg, &c), GF_OK);
		assert_same(&a, &c);
		assert_int_equal(a.attempts, a.placed + a.failed);
		assert_true(a.gpu_allocated <= a.total_gpus * 1000);
		assert_true(a.nbuckets >= 131);
		/* tuning lands within one pod of 130 % */
		assert_in_range(a.gpu_requested, (int64_t)(1.3 * a.total_gpus * 1000) - 1000,
				(int64_t)(1.3 * a.total_gpus * 1000));
		gf_openb_result_release(&a);
		gf_openb_result_release(&b);
		gf_openb_result_release(&c);
	}
}

static void test_seeds_differ_and_fgd_leads(void **state)
{
	struct world *w = *state;
	struct gf_openb_config cfg = gf_openb_config_default();
	struct gf_openb_result f1, f2, bf;

	assert_int_equal(gf_openb_run(w->x, &gf_policy_fgd, &cfg, &f1), GF_OK);
	cfg.seed = 43;
	assert_int_equal(gf_openb_run(w->x, &gf_policy_fgd, &cfg, &f2), GF_OK);
	assert_memory_not_equal(f1.alloc, f2.alloc, 131 * sizeof(double));
	cfg.seed = 42;
	assert_int_equal(gf_openb_run(w->x, &gf_policy_best_fit, &cfg, &bf), GF_OK);
	assert_true(f1.alloc[130] > bf.alloc[130]);
	assert_true(f1.frag[130] < bf.frag[130]);

	/* The CSV has the paper's layout. */
	uint64_t seeds[] = { 42 };
	struct gf_report_series s = { .label = "FGD", .nruns = 1, .runs = &f1, .seeds = seeds,
				      .paper = { NAN, NAN, NAN, NAN } };
	struct gf_report r = { .workload = "w", .cluster = "c", .nnodes = 1, .ngpus = f1.total_gpus,
			       .tune = 1.3, .seeds = "42", .nseries = 1, .series = &s };
	struct gf_obuf b;

	gf_obuf_init(&b, 1 << 20);
	assert_int_equal(gf_report_curves_csv(&r, &b), GF_OK);
	assert_non_null(strstr(b.data, "workload,sc_policy,tune,seed,total_gpus,0,1,2,"));
	assert_non_null(strstr(b.data, ",129,130\nw,FGD,1.3,42,"));
	gf_obuf_release(&b);
	/* A workload name with a comma or a quote is quoted as RFC 4180 says (issue 10). */
	r.workload = "my \"big\", trace";
	gf_obuf_init(&b, 1 << 20);
	assert_int_equal(gf_report_curves_csv(&r, &b), GF_OK);
	assert_non_null(strstr(b.data, ",129,130\n\"my \"\"big\"\", trace\",FGD,1.3,42,"));
	gf_obuf_release(&b);
	r.workload = "w";
	gf_obuf_init(&b, 64);	/* the cap is enforced */
	assert_int_equal(gf_report_html(&r, &b), GF_TOOBIG);
	gf_obuf_release(&b);
	gf_obuf_init(&b, 1 << 22);
	assert_int_equal(gf_report_html(&r, &b), GF_OK);
	assert_non_null(strstr(b.data, "<svg"));
	assert_null(strstr(b.data, "<script"));	/* no scripts, nothing fetched */
	assert_null(strstr(b.data, "src=\"http"));
	/* a real table, not preformatted text wider than the page; a sentence per chart; a phone's viewport */
	assert_non_null(strstr(b.data, "<table>"));
	assert_null(strstr(b.data, "<pre"));
	assert_non_null(strstr(b.data, "<p class=\"s\">FGD: allocation "));
	assert_non_null(strstr(b.data, "<meta name=\"viewport\""));
	gf_obuf_release(&b);

	gf_openb_result_release(&f1);
	gf_openb_result_release(&f2);
	gf_openb_result_release(&bf);
}

/*
 * gpufleet replay --as-listed (gf_replay_listed): each row one job, hand-computed.
 * Two 8-GPU nodes, best-fit, EASY backfill, exact estimates:
 *   g: a gang of 2 x 8 GPUs at 0 for 10 s: n0 and n1 at 0, ends 10;
 *   s: 4 GPUs at 1 for 5 s: no room until 10, then n0 (equal nodes: the list's order), ends 15;
 *   t: 8 GPUs at 2 for 3 s: n0 holds s's 4, so n1 at 10, ends 13;
 *   u: a gang of 2 x 8 at 3 for 1 s: both nodes free only when s ends: 15 on n0 and n1.
 */
static void test_replay_as_listed(void **state)
{
	const char *nodes = "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,8,M\nn1,64000,262144,8,M\n";
	const char *jobs = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time,deletion_time,pods\n"
			   "g,1000,1024,8,1000,0,10,2\n"
			   "s,1000,1024,4,1000,1,6,\n"
			   "t,1000,1024,8,1000,2,5,1\n"
			   "u,1000,1024,8,1000,3,4,2\n";
	static const int64_t start[] = { 0, 10, 10, 15 }, end[] = { 10, 15, 13, 16 };
	static const uint32_t np[] = { 2, 1, 1, 2 }, node[][2] = { { 0, 1 }, { 0, 0 }, { 1, 1 }, { 0, 1 } };
	struct gf_catalog cat;
	struct gf_trace_error err;
	struct gf_node_spec *n;
	struct gf_pod_spec *p;
	struct gf_pod_times *t;
	struct gf_replay_job *out;
	struct gf_replay_config cfg = gf_replay_config_default();
	size_t nn, njobs;

	(void)state;
	gf_catalog_init(&cat);
	assert_int_equal(gf_trace_parse_nodes(nodes, strlen(nodes), "n.csv", &cat, &n, &nn, &err), GF_OK);
	assert_int_equal(gf_trace_parse_pods_timed(jobs, strlen(jobs), "j.csv", &cat, &p, &njobs, &t, &err), GF_OK);
	assert_int_equal(t[1].npods, 1);	/* empty: one pod */
	cfg.qp = GF_QP_BACKFILL;
	assert_int_equal(gf_replay_listed(n, nn, p, t, njobs, &cat, gf_policy_find("best-fit"), &cfg, &out), GF_OK);
	for (size_t i = 0; i < njobs; i++) {
		assert_int_equal(out[i].npods, np[i]);
		assert_int_equal(out[i].arrival, (int64_t)i);
		assert_int_equal(out[i].start, start[i]);
		assert_int_equal(out[i].end, end[i]);
		assert_int_equal(out[i].state, GF_JOB_DONE);
		for (uint32_t k = 0; k < np[i]; k++)
			assert_int_equal(out[i].nodes[k], node[i][k]);
	}
	gf_replay_jobs_free(out, njobs);
	free(n);
	free(p);
	free(t);
	gf_catalog_release(&cat);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_deterministic_and_features_neutral),
		cmocka_unit_test(test_seeds_differ_and_fgd_leads),
		cmocka_unit_test(test_replay_as_listed),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
