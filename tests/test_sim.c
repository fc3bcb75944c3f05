/* tests/test_sim.c - sim/openb: determinism, feature switches, tuning, reports. */
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
	gf_obuf_release(&b);

	gf_openb_result_release(&f1);
	gf_openb_result_release(&f2);
	gf_openb_result_release(&bf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_deterministic_and_features_neutral),
		cmocka_unit_test(test_seeds_differ_and_fgd_leads),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
