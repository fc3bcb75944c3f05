/* tests/test_policy.c - policy/: each policy's score and GPU choice on hand-computed cases. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "policy/sched.h"
#include "policy/target.h"
#include "testutil.h"

struct fixture {
	struct gf_catalog cat;
	gf_cluster *c;
	struct gf_target t;
	struct gf_policy_env env;
};

static struct fixture *fx_new(const struct gf_node_spec *nodes, size_t n)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	gf_catalog_init(&f->cat);
	assert_int_equal(gf_cluster_create(nodes, n, &f->c), GF_OK);
	/* FGD's target: one class, 1000 mCPU x 500 mGPU x 1, any model. */
	f->t.nclasses = 1;
	f->t.cls = calloc(1, sizeof(*f->t.cls));
	f->t.acc = malloc((GF_MAX_MODELS + 1) * sizeof(bool));
	f->t.cls[0] = (struct gf_frag_class){ .cpu_milli = 1000, .gpu_milli = 500, .gpu_count = 1, .p = 1.0 };
	for (int m = 0; m <= GF_MAX_MODELS; m++)
		f->t.acc[m] = true;
	f->env = (struct gf_policy_env){ .cluster = f->c, .cat = &f->cat, .target = &f->t,
					 .features = gf_features_default() };
	return f;
}

static void fx_free(struct fixture *f)
{
	gf_target_release(&f->t);
	gf_cluster_destroy(f->c);
	gf_catalog_release(&f->cat);
	free(f);
}

static int64_t score(struct fixture *f, const struct gf_policy_ops *ops, size_t node,
		     const struct gf_pod_spec *p, int *hint)
{
	void *st = NULL;
	int h = -1;
	int64_t s;

	if (ops->create)
		assert_int_equal(ops->create(&f->env, &st), GF_OK);
	s = ops->score(st, &f->env, node, p, &h);
	if (ops->destroy)
		ops->destroy(st);
	if (hint)
		*hint = h;
	return s;
}

static void bind(struct fixture *f, size_t node, const struct gf_pod_spec *p, const uint8_t *g)
{
	assert_int_equal(gf_cluster_bind(f->c, node, p, g), GF_OK);
}

static void test_best_fit_and_dot_product(void **state)
{
	struct gf_node_spec n = tu_node("n", 64000, 256000, 8, -1);
	struct fixture *f = fx_new(&n, 1);
	struct gf_pod_spec p = tu_pod("p", 4000, 1000, 1, 500, 0);

	(void)state;
	/* d = 0.5*60000/128000 + 0.5*7500/8000 = 0.703125 -> floor(29.6875) */
	assert_int_equal(score(f, &gf_policy_best_fit, 0, &p, NULL), 29);
	/* v_n.v_q = 0.5*0.03125 + 1*0.0625 = 0.078125 -> floor(100*(1-0.0390625)) */
	assert_int_equal(score(f, &gf_policy_dot_product, 0, &p, NULL), 96);
	fx_free(f);
}

static void test_gpu_packing(void **state)
{
	struct gf_node_spec n[3] = {
		tu_node("eight", 64000, 256000, 8, -1),
		tu_node("two", 64000, 256000, 2, -1),
		tu_node("used", 64000, 256000, 4, -1),
	};
	struct fixture *f = fx_new(n, 3);
	struct gf_pod_spec share = tu_pod("s", 1000, 1000, 1, 400, 0);
	struct gf_pod_spec big = tu_pod("b", 1000, 1000, 1, 600, 0);
	struct gf_pod_spec cpu = tu_pod("c", 1000, 1000, 0, 0, 0);
	struct gf_pod_spec half = tu_pod("h", 1000, 1000, 1, 500, 0);
	uint8_t g0[] = { 0 };

	(void)state;
	bind(f, 2, &half, g0);	/* "used": g = [500, 1000, 1000, 1000] */
	assert_int_equal(score(f, &gf_policy_gpu_packing, 0, &share, NULL), 25);	/* max(33-8, 8) */
	assert_int_equal(score(f, &gf_policy_gpu_packing, 1, &share, NULL), 31);	/* max(33-2, 2) */
	/* partly used GPU (500 free): S = 50, 100 - 5 */
	assert_int_equal(score(f, &gf_policy_gpu_packing, 2, &share, NULL), 95);
	/* 600 does not fit the partly used GPU: one fully free GPU used, 50 - 1 */
	assert_int_equal(score(f, &gf_policy_gpu_packing, 2, &big, NULL), 49);
	assert_int_equal(score(f, &gf_policy_gpu_packing, 2, &cpu, NULL), 0);
	fx_free(f);
}

static void test_gpu_clustering(void **state)
{
	struct gf_node_spec n = tu_node("n", 64000, 256000, 8, -1);
	struct fixture *f = fx_new(&n, 1);
	struct gf_pod_spec share = tu_pod("s", 1000, 1000, 1, 600, 0);
	struct gf_pod_spec whole = tu_pod("w", 1000, 1000, 1, 1000, 0);
	struct gf_pod_spec cpu = tu_pod("c", 1000, 1000, 0, 0, 0);
	uint8_t g0[] = { 0 }, g1[] = { 1 };

	(void)state;
	assert_int_equal(score(f, &gf_policy_gpu_clustering, 0, &share, NULL), 25);	/* idle node */
	bind(f, 0, &share, g0);	/* G = 7400: base = 25*600/8000 = 1 */
	assert_int_equal(score(f, &gf_policy_gpu_clustering, 0, &share, NULL), 76);	/* only its tag */
	assert_int_equal(score(f, &gf_policy_gpu_clustering, 0, &whole, NULL), 1);	/* other tags only */
	bind(f, 0, &whole, g1);	/* G = 6400: base = 25*1600/8000 = 5 */
	assert_int_equal(score(f, &gf_policy_gpu_clustering, 0, &share, NULL), 55);	/* mixed tags */
	assert_int_equal(score(f, &gf_policy_gpu_clustering, 0, &cpu, NULL), 0);
	fx_free(f);
}

static void test_fgd_score_and_gpu(void **state)
{
	struct gf_node_spec n[2] = { tu_node("a", 8000, 64000, 2, -1), tu_node("b", 8000, 64000, 2, -1) };
	struct fixture *f = fx_new(n, 2);
	struct gf_pod_spec p500 = tu_pod("p5", 1000, 100, 1, 500, 0);
	struct gf_pod_spec p400 = tu_pod("p4", 1000, 100, 1, 400, 0);
	struct gf_pod_spec p600 = tu_pod("p6", 1000, 100, 1, 600, 0);
	uint8_t g1[] = { 1 };
	int hint;

	(void)state;
	/* Empty node: F_before = 0.  500 on a full GPU leaves 500 (fits the class): Delta 0 -> 50. */
	assert_int_equal(score(f, &gf_policy_fgd, 0, &p500, &hint), 50);
	assert_int_equal(hint, 0);
	/* 600 leaves 400 < 500: F_after = 400, sigmoid(-0.4) = 0.4013 -> 40. */
	assert_int_equal(score(f, &gf_policy_fgd, 0, &p600, &hint), 40);
	/* Node b: g = [1000, 600].  A 600 pod: on GPU 1 -> [1000, 0]: F stays 0 (50); on GPU 0
	 * -> [400, 600]: F = 400 (40).  FGD takes the higher-indexed, partly used GPU. */
	bind(f, 1, &p400, g1);
	assert_int_equal(score(f, &gf_policy_fgd, 1, &p600, &hint), 50);
	assert_int_equal(hint, 1);

	/* Through the framework: both nodes score 50 for p600?  Node a scores 40, node b 50. */
	gf_sched *s;
	struct gf_placement pl;

	assert_int_equal(gf_sched_create(&gf_policy_fgd, &f->env, &s), GF_OK);
	assert_int_equal(gf_sched_place(s, &p600, NULL, &pl), GF_PLACED);
	assert_int_equal(pl.node, 1);
	assert_int_equal(pl.ngpus, 1);
	assert_int_equal(pl.gpus[0], 1);
	gf_sched_destroy(s);
	fx_free(f);
}

/*
 * FGD-Fill's rules, on the fixture's target (one class: 1000 mCPU x 500 mGPU).
 * W(g): g < 500 fits nothing, so W(g) = g; 500 <= g < 1000 takes one pod, so
 * W(g) = W(g - 500) = g - 500; W(1000) = W(500) = W(0) = 0.
 */
static void test_fgd_fill_waste_table(void **state)
{
	struct gf_node_spec n[1] = { tu_node("a", 8000, 64000, 1, -1) };
	struct fixture *f = fx_new(n, 1);
	double w[GF_MILLI_PER_GPU + 1];

	(void)state;
	gf_fill_waste_table(&f->t, w);
	assert_float_equal(w[0], 0.0, 0.0);
	assert_float_equal(w[499], 499.0, 0.0);
	assert_float_equal(w[500], 0.0, 0.0);
	assert_float_equal(w[600], 100.0, 0.0);
	assert_float_equal(w[999], 499.0, 0.0);
	assert_float_equal(w[1000], 0.0, 0.0);
	fx_free(f);
}

/*
 * Rule 0, the stranded GPU share S_n = max(0, G_n - cpu_free / r).  The
 * fixture's one class (1000 mCPU x 500 mGPU) gives r = 1000 / 500 = 2.
 */
static void test_fgd_fill_stranded(void **state)
{
	struct gf_node_spec n[2] = { tu_node("b", 4000, 64000, 2, -1), tu_node("a", 16000, 64000, 2, -1) };
	struct fixture *f = fx_new(n, 2);
	struct gf_pod_spec whole = tu_pod("w", 1000, 100, 1, 1000, 0);
	struct gf_pod_spec cpu = tu_pod("c", 2000, 100, 0, 0, 0);
	uint8_t g0[] = { 0 };
	int hint;
	gf_sched *s;
	struct gf_placement pl;

	(void)state;
	assert_float_equal(gf_fill_strand_ratio(&f->t), 2.0, 0.0);
	bind(f, 0, &whole, g0);	/* b: 3000 mCPU, G = 1000; a: 16000 mCPU, G = 2000 */
	/* FGD: both nodes still serve the class after the CPU-only pod (b keeps
	 * 1000 mCPU), F stays 0: 50 on both, and priority takes b. */
	assert_int_equal(score(f, &gf_policy_fgd, 0, &cpu, &hint), 50);
	assert_int_equal(score(f, &gf_policy_fgd, 1, &cpu, &hint), 50);
	/* FGD-Fill on b: S before = max(0, 1000 - 3000/2) = 0, after = 1000 - 1000/2
	 * = 500: floor(100 * sigmoid(-0.5)) = 37; rule 1 adds INT32_MAX - 1000.
	 * On a: S = max(0, 2000 - 14000/2) = 0 after: 50, then INT32_MAX - 2000. */
	assert_int_equal(score(f, &gf_policy_fgd_fill, 0, &cpu, &hint),
			 37 * ((int64_t)1 << 32) + INT32_MAX - 1000);
	assert_int_equal(score(f, &gf_policy_fgd_fill, 1, &cpu, &hint),
			 50 * ((int64_t)1 << 32) + INT32_MAX - 2000);
	assert_int_equal(gf_sched_create(&gf_policy_fgd, &f->env, &s), GF_OK);
	assert_int_equal(gf_sched_place(s, &cpu, NULL, &pl), GF_PLACED);
	assert_int_equal(pl.node, 0);
	gf_sched_destroy(s);
	assert_int_equal(gf_sched_create(&gf_policy_fgd_fill, &f->env, &s), GF_OK);
	assert_int_equal(gf_sched_place(s, &cpu, NULL, &pl), GF_PLACED);
	assert_int_equal(pl.node, 1);
	gf_sched_destroy(s);
	/* A whole-GPU pod with 3000 mCPU on b: G 1000 -> 0, S stays 0, and F stays
	 * 0 (no GPU left to fragment): 50.  On a: G 2000 -> 1000, CPU 16000 ->
	 * 13000, S 0: 50 as well; the tie goes to b by priority. */
	struct gf_pod_spec hungry = tu_pod("h", 3000, 100, 1, 1000, 0);

	assert_int_equal(score(f, &gf_policy_fgd_fill, 0, &hungry, &hint), 50 * ((int64_t)1 << 32));
	assert_int_equal(score(f, &gf_policy_fgd_fill, 1, &hungry, &hint), 50 * ((int64_t)1 << 32));
	fx_free(f);
}

/* A target without GPU classes has no ratio: rule 0 is off. */
static void test_fgd_fill_strand_ratio_no_gpu_class(void **state)
{
	struct gf_frag_class cls = { .cpu_milli = 1000, .p = 1.0 };
	struct gf_target t = { .nclasses = 1, .cls = &cls };

	(void)state;
	assert_float_equal(gf_fill_strand_ratio(&t), 0.0, 0.0);
}

/* A CPU-only pod that FGD scores 50 everywhere goes where the GPUs are spent. */
static void test_fgd_fill_cpu_pod(void **state)
{
	struct gf_node_spec n[2] = { tu_node("a", 8000, 64000, 2, -1), tu_node("b", 8000, 64000, 2, -1) };
	struct fixture *f = fx_new(n, 2);
	struct gf_pod_spec whole = tu_pod("w", 1000, 100, 1, 1000, 0);
	struct gf_pod_spec cpu = tu_pod("c", 1000, 100, 0, 0, 0);
	uint8_t g0[] = { 0 };
	int hint;
	gf_sched *s;
	struct gf_placement pl;

	(void)state;
	bind(f, 1, &whole, g0);	/* b: GPU 0 taken, 1000 mGPU free; a: 2000 free */
	/* Both nodes keep 6000+ mCPU and a free GPU: F stays 0, FGD says 50 on both. */
	assert_int_equal(score(f, &gf_policy_fgd, 0, &cpu, &hint), 50);
	assert_int_equal(score(f, &gf_policy_fgd, 1, &cpu, &hint), 50);
	/* FGD-Fill: 50 in the high bits, then INT32_MAX - free GPU share. */
	assert_int_equal(score(f, &gf_policy_fgd_fill, 0, &cpu, &hint),
			 50 * ((int64_t)1 << 32) + INT32_MAX - 2000);
	assert_int_equal(score(f, &gf_policy_fgd_fill, 1, &cpu, &hint),
			 50 * ((int64_t)1 << 32) + INT32_MAX - 1000);
	/* FGD takes node a (priority 0 wins the tie); FGD-Fill takes node b. */
	assert_int_equal(gf_sched_create(&gf_policy_fgd, &f->env, &s), GF_OK);
	assert_int_equal(gf_sched_place(s, &cpu, NULL, &pl), GF_PLACED);
	assert_int_equal(pl.node, 0);
	gf_sched_destroy(s);
	assert_int_equal(gf_sched_create(&gf_policy_fgd_fill, &f->env, &s), GF_OK);
	assert_int_equal(gf_sched_place(s, &cpu, NULL, &pl), GF_PLACED);
	assert_int_equal(pl.node, 1);
	gf_sched_destroy(s);
	/* A whole-GPU pod is scored as FGD scores it: on a = [1000, 1000] it leaves
	 * [0, 1000], F stays 0 -> 50 in the high bits, nothing below. */
	assert_int_equal(score(f, &gf_policy_fgd_fill, 0, &whole, &hint), 50 * ((int64_t)1 << 32));
	fx_free(f);
}

/* A sharing pod that FGD scores 50 on both GPUs goes to the GPU whose W grows least. */
static void test_fgd_fill_sharing_gpu(void **state)
{
	struct gf_node_spec n[1] = { tu_node("a", 8000, 64000, 2, -1) };
	struct fixture *f = fx_new(n, 1);
	struct gf_pod_spec p300 = tu_pod("p3", 1000, 100, 1, 300, 0);
	struct gf_pod_spec p200 = tu_pod("p2", 1000, 100, 1, 200, 0);
	uint8_t g1[] = { 1 };
	int hint;
	gf_sched *s;
	struct gf_placement pl;

	(void)state;
	bind(f, 0, &p300, g1);	/* g = [1000, 700] */
	/* p200 on GPU 0 -> [800, 700], on GPU 1 -> [1000, 500]: both GPUs still fit
	 * the 500 class, F stays 0, FGD scores 50 on both and takes the lower index. */
	assert_int_equal(score(f, &gf_policy_fgd, 0, &p200, &hint), 50);
	assert_int_equal(hint, 0);
	/* W growth: GPU 0: W(800) - W(1000) = 300 - 0 = 300; GPU 1: W(500) - W(700)
	 * = 0 - 200 = -200.  FGD-Fill takes GPU 1; below FGD's 50, rule 3's key for
	 * it: (10^6 - 1000 W(500)) x 1024 + (1000 - 500) = 10^6 x 1024 + 500. */
	assert_int_equal(score(f, &gf_policy_fgd_fill, 0, &p200, &hint),
			 50 * ((int64_t)1 << 32) + 1024000500);
	assert_int_equal(hint, 1);
	assert_int_equal(gf_sched_create(&gf_policy_fgd_fill, &f->env, &s), GF_OK);
	assert_int_equal(gf_sched_place(s, &p200, NULL, &pl), GF_PLACED);
	assert_int_equal(pl.ngpus, 1);
	assert_int_equal(pl.gpus[0], 1);
	gf_sched_destroy(s);
	fx_free(f);
}

/*
 * Rule 3: a sharing pod that FGD scores 50 on two nodes goes to the node whose
 * GPU it leaves with the least expected eventual waste W(g - m).
 */
static void test_fgd_fill_sharing_node(void **state)
{
	struct gf_node_spec n[2] = { tu_node("a", 8000, 64000, 1, -1), tu_node("b", 8000, 64000, 1, -1) };
	struct fixture *f = fx_new(n, 2);
	struct gf_pod_spec p300 = tu_pod("p3", 1000, 100, 1, 300, 0);
	struct gf_pod_spec p200 = tu_pod("p2", 1000, 100, 1, 200, 0);
	uint8_t g0[] = { 0 };
	int hint;
	gf_sched *s;
	struct gf_placement pl;

	(void)state;
	bind(f, 1, &p300, g0);	/* a: g = [1000], 8000 mCPU; b: g = [700], 7000 mCPU */
	/* p200 on a -> [800], on b -> [500]: both still fit the 500 class and keep
	 * CPU for it (S stays 0), F stays 0: FGD scores 50 on both and takes a by
	 * priority. */
	assert_int_equal(score(f, &gf_policy_fgd, 0, &p200, &hint), 50);
	assert_int_equal(score(f, &gf_policy_fgd, 1, &p200, &hint), 50);
	assert_int_equal(gf_sched_create(&gf_policy_fgd, &f->env, &s), GF_OK);
	assert_int_equal(gf_sched_place(s, &p200, NULL, &pl), GF_PLACED);
	assert_int_equal(pl.node, 0);
	gf_sched_destroy(s);
	/* FGD-Fill: 50 in the high bits, then (10^6 - 1000 W(rest)) x 1024 + (1000 -
	 * rest): on a W(800) = 800 - 500 = 300 -> 700000 x 1024 + 200; on b W(500) =
	 * W(0) = 0 -> 10^6 x 1024 + 500.  It takes b, where the 500 class fills the
	 * GPU exactly. */
	assert_int_equal(score(f, &gf_policy_fgd_fill, 0, &p200, &hint),
			 50 * ((int64_t)1 << 32) + 716800200);
	assert_int_equal(hint, 0);
	assert_int_equal(score(f, &gf_policy_fgd_fill, 1, &p200, &hint),
			 50 * ((int64_t)1 << 32) + 1024000500);
	assert_int_equal(hint, 0);
	assert_int_equal(gf_sched_create(&gf_policy_fgd_fill, &f->env, &s), GF_OK);
	assert_int_equal(gf_sched_place(s, &p200, NULL, &pl), GF_PLACED);
	assert_int_equal(pl.node, 1);
	assert_int_equal(pl.gpus[0], 0);
	gf_sched_destroy(s);
	fx_free(f);
}

/*
 * Rule 3's tie-break: where W(g - m) ties, the node whose GPU keeps the least
 * share.  Target: two classes of 1000 mCPU, 500 and 200 mGPU, p = 0.5 each.
 * W(g) = g mod 200 below 500 (only the 200 class fits there); W(300) = W(100)
 * = 100, W(500) = 0.5 W(0) + 0.5 W(300) = 50, W(600) = 0.5 W(100) + 0.5 W(400)
 * = 50 + 0 = 50: a remainder of 500 and one of 600 expect the same waste.
 */
static void test_fgd_fill_sharing_node_rest(void **state)
{
	struct gf_node_spec n[2] = { tu_node("a", 8000, 64000, 1, -1), tu_node("b", 8000, 64000, 1, -1) };
	struct fixture *f = fx_new(n, 2);
	struct gf_pod_spec p100 = tu_pod("p1", 1000, 100, 1, 100, 0);
	struct gf_pod_spec p200 = tu_pod("p2", 1000, 100, 1, 200, 0);
	struct gf_pod_spec p300 = tu_pod("p3", 1000, 100, 1, 300, 0);
	uint8_t g0[] = { 0 };
	double w[GF_MILLI_PER_GPU + 1];
	int hint;
	gf_sched *s;
	struct gf_placement pl;

	(void)state;
	f->t.nclasses = 2;
	f->t.cls = realloc(f->t.cls, 2 * sizeof(*f->t.cls));
	f->t.acc = realloc(f->t.acc, 2 * (GF_MAX_MODELS + 1) * sizeof(bool));
	assert_non_null(f->t.cls);
	assert_non_null(f->t.acc);
	f->t.cls[0] = (struct gf_frag_class){ .cpu_milli = 1000, .gpu_milli = 500, .gpu_count = 1, .p = 0.5 };
	f->t.cls[1] = (struct gf_frag_class){ .cpu_milli = 1000, .gpu_milli = 200, .gpu_count = 1, .p = 0.5 };
	for (int m = 0; m < 2 * (GF_MAX_MODELS + 1); m++)
		f->t.acc[m] = true;
	gf_fill_waste_table(&f->t, w);
	assert_float_equal(w[500], 50.0, 0.0);
	assert_float_equal(w[600], 50.0, 0.0);
	bind(f, 0, &p100, g0);	/* a: g = [900], 7000 mCPU */
	bind(f, 1, &p200, g0);	/* b: g = [800], 7000 mCPU */
	/* p300 on a -> [600], on b -> [500]: both still fit both classes (F stays
	 * 0) with CPU to spare (r = 2000 / 700, S stays 0): FGD scores 50 on both
	 * and takes a by priority. */
	assert_int_equal(score(f, &gf_policy_fgd, 0, &p300, &hint), 50);
	assert_int_equal(score(f, &gf_policy_fgd, 1, &p300, &hint), 50);
	/* FGD-Fill: equal levels, 10^6 - 1000 x 50 = 950000; below them 1000 - rest:
	 * a 950000 x 1024 + 400, b 950000 x 1024 + 500.  It takes b. */
	assert_int_equal(score(f, &gf_policy_fgd_fill, 0, &p300, &hint),
			 50 * ((int64_t)1 << 32) + 972800400);
	assert_int_equal(score(f, &gf_policy_fgd_fill, 1, &p300, &hint),
			 50 * ((int64_t)1 << 32) + 972800500);
	assert_int_equal(gf_sched_create(&gf_policy_fgd_fill, &f->env, &s), GF_OK);
	assert_int_equal(gf_sched_place(s, &p300, NULL, &pl), GF_PLACED);
	assert_int_equal(pl.node, 1);
	assert_int_equal(pl.gpus[0], 0);
	gf_sched_destroy(s);
	fx_free(f);
}

static void test_k8s_resources_fit(void **state)
{
	struct gf_node_spec n = tu_node("n", 8000, 16000, 2, -1);
	struct fixture *f = fx_new(&n, 1);
	struct gf_pod_spec p = tu_pod("p", 2000, 4000, 1, 1000, 0);
	struct gf_pod_spec cpu = tu_pod("c", 2000, 4000, 0, 0, 0);

	(void)state;
	/* least: cpu 75, memory 75, GPU (2000-1000)*100/2000 = 50 -> 200/3 = 66 */
	assert_int_equal(score(f, &gf_policy_k8s_least_allocated, 0, &p, NULL), 66);
	/* most: 25, 25, 50 -> 33 */
	assert_int_equal(score(f, &gf_policy_k8s_most_allocated, 0, &p, NULL), 33);
	/* a CPU-only pod is not scored on the GPU: (75 + 75) / 2 */
	assert_int_equal(score(f, &gf_policy_k8s_least_allocated, 0, &cpu, NULL), 75);
	fx_free(f);
}

/* gf_sched_score ranks a given node through the cache, and agrees with the policy. */
static void test_sched_score_cached(void **state)
{
	struct gf_node_spec n[2] = { tu_node("a", 8000, 64000, 2, -1), tu_node("b", 8000, 64000, 2, -1) };
	struct fixture *f = fx_new(n, 2);
	struct gf_pod_spec p600 = tu_pod("p6", 1000, 100, 1, 600, 0);
	struct gf_pod_spec p400 = tu_pod("p4", 1000, 100, 1, 400, 0);
	uint64_t computed, cached;
	uint8_t g1[] = { 1 };
	gf_sched *s;
	int hint;

	(void)state;
	bind(f, 1, &p400, g1);
	assert_int_equal(gf_sched_create(&gf_policy_fgd, &f->env, &s), GF_OK);
	assert_int_equal(gf_sched_score(s, &p600, 1, &hint), 50);	/* as test_fgd_score_and_gpu */
	assert_int_equal(hint, 1);
	assert_int_equal(gf_sched_score(s, &p600, 1, &hint), 50);
	assert_int_equal(hint, 1);
	assert_int_equal(gf_sched_score(s, &p600, 0, &hint), 40);
	gf_sched_stats(s, &computed, &cached);
	assert_int_equal(computed, 2);
	assert_int_equal(cached, 1);
	gf_sched_destroy(s);
	assert_int_equal(gf_sched_create(&gf_policy_random, &f->env, &s), GF_OK);
	assert_int_equal(gf_sched_score(s, &p600, 0, &hint), 0);	/* no score function */
	gf_sched_destroy(s);
	fx_free(f);
}

/* Equal scores go to the lowest priority number, whatever the node order. */
static void test_tie_break_priority(void **state)
{
	struct gf_node_spec n[3] = {
		tu_node("a", 8000, 16000, 2, -1), tu_node("b", 8000, 16000, 2, -1),
		tu_node("c", 8000, 16000, 2, -1),
	};
	struct fixture *f = fx_new(n, 3);
	struct gf_pod_spec cpu = tu_pod("c", 1000, 1000, 0, 0, 0);
	uint32_t prio[3] = { 2, 0, 1 };
	struct gf_placement pl;
	gf_sched *s;

	(void)state;
	assert_int_equal(gf_sched_create(&gf_policy_gpu_packing, &f->env, &s), GF_OK);
	assert_int_equal(gf_sched_place(s, &cpu, NULL, &pl), GF_PLACED);
	assert_int_equal(pl.node, 0);	/* default priorities: node order */
	gf_sched_set_priorities(s, prio);
	assert_int_equal(gf_sched_place(s, &cpu, NULL, &pl), GF_PLACED);
	assert_int_equal(pl.node, 1);
	assert_int_equal(pl.nfeasible, 3);
	gf_sched_destroy(s);
	fx_free(f);
}

/*
 * The model cache preference: among equal best scores, a pod serving a model
 * goes to a node that ran it; a pod serving none (or another model) gets the
 * policy's own choice, and a better score still wins over the cache.
 */
static void test_served_model_tie_break(void **state)
{
	struct gf_node_spec n[3] = {
		tu_node("a", 8000, 16000, 2, -1), tu_node("b", 8000, 16000, 2, -1),
		tu_node("c", 8000, 16000, 2, -1),
	};
	uint64_t llama = gf_served_model_key("llama-7b", 8);
	struct gf_pod_spec plain = tu_pod("p", 1000, 1000, 1, 1000, 0);
	struct gf_pod_spec served = plain, other = plain;
	struct gf_placement pl;
	struct fixture *f;
	gf_sched *s;
	uint8_t g0[] = { 0 };

	(void)state;
	assert_int_not_equal(llama, 0);
	assert_int_equal(gf_served_model_key("", 0), 0);
	n[2].served_seen[3] = llama;
	served.served_model = llama;
	other.served_model = gf_served_model_key("qwen-14b", 8);
	f = fx_new(n, 3);
	assert_true(gf_node_served(gf_cluster_spec(f->c, 2), llama));
	assert_false(gf_node_served(gf_cluster_spec(f->c, 1), llama));
	assert_int_equal(gf_sched_create(&gf_policy_fgd, &f->env, &s), GF_OK);
	assert_int_equal(gf_sched_place(s, &plain, NULL, &pl), GF_PLACED);
	assert_int_equal(pl.node, 0);	/* three equal nodes: priority */
	assert_int_equal(gf_sched_place(s, &other, NULL, &pl), GF_PLACED);
	assert_int_equal(pl.node, 0);	/* a model no node ran: the same */
	assert_int_equal(gf_sched_place(s, &served, NULL, &pl), GF_PLACED);
	assert_int_equal(pl.node, 2);	/* equal scores: the node that ran it */
	gf_sched_destroy(s);

	/* Unequal scores: the cache does not override the policy. */
	assert_int_equal(gf_sched_create(&gf_policy_best_fit, &f->env, &s), GF_OK);
	bind(f, 1, &plain, g0);		/* b is now the tightest fit */
	assert_int_equal(gf_sched_place(s, &plain, NULL, &pl), GF_PLACED);
	assert_int_equal(pl.node, 1);
	assert_int_equal(gf_sched_place(s, &served, NULL, &pl), GF_PLACED);
	assert_int_equal(pl.node, 1);
	gf_sched_destroy(s);
	fx_free(f);
}

/* Whole-GPU pods take the lowest-indexed fully free GPUs; sharing pods best fit. */
static void test_gpu_choice(void **state)
{
	struct gf_node_spec n = tu_node("n", 64000, 256000, 4, -1);
	struct fixture *f = fx_new(&n, 1);
	struct gf_pod_spec p600 = tu_pod("a", 1000, 1000, 1, 600, 0);
	struct gf_pod_spec p300 = tu_pod("b", 1000, 1000, 1, 300, 0);
	struct gf_pod_spec p200 = tu_pod("d", 1000, 1000, 1, 200, 0);
	struct gf_pod_spec two = tu_pod("c", 1000, 1000, 2, 1000, 0);
	struct gf_pod_spec three = tu_pod("e", 1000, 1000, 3, 1000, 0);
	struct gf_placement pl;
	gf_sched *s;
	uint8_t g1[] = { 1 }, g3[] = { 3 };

	(void)state;
	bind(f, 0, &p600, g1);	/* g = [1000, 400, 1000, 1000] */
	bind(f, 0, &p300, g3);	/* g = [1000, 400, 1000, 700] */
	assert_int_equal(gf_sched_create(&gf_policy_best_fit, &f->env, &s), GF_OK);
	assert_int_equal(gf_sched_place(s, &two, NULL, &pl), GF_PLACED);
	assert_int_equal(pl.ngpus, 2);
	assert_int_equal(pl.gpus[0], 0);
	assert_int_equal(pl.gpus[1], 2);
	assert_int_equal(gf_sched_place(s, &p200, NULL, &pl), GF_PLACED);
	assert_int_equal(pl.gpus[0], 1);	/* smallest free that fits: 400 */
	assert_int_equal(gf_sched_place(s, &three, NULL, &pl), GF_UNSCHEDULABLE);
	assert_int_equal(pl.nfeasible, 0);
	gf_sched_destroy(s);
	fx_free(f);
}

/* Random draws only feasible nodes, reproducibly, and roughly uniformly. */
static void test_random(void **state)
{
	struct gf_node_spec n[3] = {
		tu_node("a", 8000, 16000, 2, -1), tu_node("b", 500, 16000, 2, -1),
		tu_node("c", 8000, 16000, 2, -1),
	};
	struct fixture *f = fx_new(n, 3);
	struct gf_pod_spec p = tu_pod("p", 1000, 10, 1, 100, 0);
	int hits[3] = { 0 };
	struct gf_rng r1, r2;
	gf_sched *s;

	(void)state;
	assert_int_equal(gf_sched_create(&gf_policy_random, &f->env, &s), GF_OK);
	gf_rng_init(&r1, 7);
	gf_rng_init(&r2, 7);
	for (int i = 0; i < 2000; i++) {
		struct gf_placement a, b;

		assert_int_equal(gf_sched_place(s, &p, &r1, &a), GF_PLACED);
		assert_int_equal(gf_sched_place(s, &p, &r2, &b), GF_PLACED);
		assert_int_equal(a.node, b.node);
		assert_int_equal(a.gpus[0], b.gpus[0]);
		hits[a.node]++;
	}
	assert_int_equal(hits[1], 0);	/* node b lacks CPU */
	assert_in_range(hits[0], 850, 1150);
	gf_sched_destroy(s);
	fx_free(f);
}


/*
 * Node classes (feature NODE_CLASSES) against the per-node loop: two copies
 * of one cluster, one scheduler each, the same seeded mix of placements (some
 * masked, some of pods serving a model), binds, unbinds, bursts of changes
 * longer than the cluster's journal, resets and new priorities.  Every
 * decision must agree field by field, and the classes must match a
 * from-scratch grouping of the nodes after every step.
 */
struct twin {
	gf_cluster *c[2];
	gf_sched *s[2];
	struct gf_policy_env env[2];
	struct bound {
		uint32_t node;
		int pod;
		uint8_t gpus[GF_MAX_GPUS];
	} *bound;
	size_t nbound;
};

static void twin_unbind_one(struct twin *t, struct gf_rng *rng, const struct gf_pod_spec *pods)
{
	size_t k = (size_t)gf_rng_below(rng, t->nbound);
	struct bound b = t->bound[k];

	for (int w = 0; w < 2; w++)
		assert_int_equal(gf_cluster_unbind(t->c[w], b.node, &pods[b.pod], b.gpus), GF_OK);
	t->bound[k] = t->bound[--t->nbound];
}

static void classes_match_per_node(const struct gf_policy_ops *ops, bool score_cache, uint64_t seed)
{
	enum { NNODES = 90, NPODS = 12, STEPS = 2500 };
	struct gf_node_spec nodes[NNODES];
	struct gf_catalog cat;
	struct gf_target tgt;
	struct gf_pod_spec pods[NPODS];
	struct twin t = { 0 };
	struct gf_rng rng;
	uint64_t allowed[(NNODES + 63) / 64];
	uint32_t prio[NNODES];
	char why[256];
	int m0, m1, spec1;
	uint64_t model_key = gf_served_model_key("llama", 5);

	gf_catalog_init(&cat);
	assert_int_equal(gf_catalog_model(&cat, "A100", 4, &m0), GF_OK);
	assert_int_equal(gf_catalog_model(&cat, "T4", 2, &m1), GF_OK);
	assert_int_equal(gf_catalog_spec(&cat, "T4", 2, &spec1), GF_OK);
	/* few node types, so that classes hold many nodes, and a few loners */
	for (int i = 0; i < NNODES; i++) {
		char name[16];

		snprintf(name, sizeof(name), "n%d", i);
		switch (i % 5) {
		case 0: nodes[i] = tu_node(name, 32000, 128000, 8, m0); break;
		case 1: nodes[i] = tu_node(name, 16000, 64000, 4, m1); break;
		case 2: nodes[i] = tu_node(name, 64000, 256000, 2, m1); break;
		case 3: nodes[i] = tu_node(name, 96000, 512000, 0, -1); break;
		default: nodes[i] = tu_node(name, 8000 + i, 32000, 1, m0); break;
		}
		if (i % 7 == 0)
			nodes[i].served_seen[0] = model_key;
	}
	pods[0] = tu_pod("cpu", 4000, 8000, 0, 0, 0);
	pods[1] = tu_pod("cpu-big", 30000, 60000, 0, 0, 0);
	pods[2] = tu_pod("s250", 2000, 4000, 1, 250, 0);
	pods[3] = tu_pod("s500", 4000, 8000, 1, 500, 0);
	pods[4] = tu_pod("s750", 1000, 2000, 1, 750, spec1);
	pods[5] = tu_pod("g1", 8000, 16000, 1, 1000, 0);
	pods[6] = tu_pod("g2", 8000, 32000, 2, 1000, 0);
	pods[7] = tu_pod("g4", 16000, 64000, 4, 1000, 0);
	pods[8] = tu_pod("g2-share", 2000, 4000, 2, 300, 0);
	pods[9] = tu_pod("g8", 24000, 64000, 8, 1000, 0);
	pods[10] = tu_pod("served", 2000, 4000, 1, 500, 0);
	pods[10].served_model = model_key;
	pods[11] = tu_pod("s100", 500, 1000, 1, 100, spec1);
	assert_int_equal(gf_target_build(pods, NPODS - 1, &cat, 100, &tgt), GF_OK);
	t.bound = malloc(8 * STEPS * sizeof(*t.bound));
	assert_non_null(t.bound);
	for (int w = 0; w < 2; w++) {
		assert_int_equal(gf_cluster_create(nodes, NNODES, &t.c[w]), GF_OK);
		t.env[w] = (struct gf_policy_env){ .cluster = t.c[w], .cat = &cat, .target = &tgt,
						   .features = gf_features_default() };
		t.env[w].features.on[GF_FEAT_SCORE_CACHE] = score_cache;
	}
	t.env[1].features.on[GF_FEAT_NODE_CLASSES] = false;	/* the per-node loop */
	for (int w = 0; w < 2; w++)
		assert_int_equal(gf_sched_create(ops, &t.env[w], &t.s[w]), GF_OK);
	gf_rng_init(&rng, seed);
	for (int step = 0; step < STEPS; step++) {
		uint64_t r = gf_rng_below(&rng, 1000);

		if (r < 8) {	/* new priorities, with repeats: ties go to the lower index */
			for (int i = 0; i < NNODES; i++)
				prio[i] = (uint32_t)gf_rng_below(&rng, NNODES / 2);
			for (int w = 0; w < 2; w++)
				gf_sched_set_priorities(t.s[w], prio);
		} else if (r < 10) {	/* reset: every node changes */
			for (int w = 0; w < 2; w++)
				gf_cluster_reset(t.c[w]);
			t.nbound = 0;
		} else if (r < 12) {	/* more changes than the journal keeps, no decision between */
			const uint8_t g0[1] = { 0 };
			struct gf_pod_spec none = tu_pod("none", 0, 0, 0, 0, 0);	/* always fits */

			for (int k = 0; k < GF_CLUSTER_JOURNAL + 10; k++) {
				for (int w = 0; w < 2; w++)
					assert_int_equal(gf_cluster_bind(t.c[w], 3, &none, g0), GF_OK);
				for (int w = 0; w < 2; w++)
					assert_int_equal(gf_cluster_unbind(t.c[w], 3, &none, g0), GF_OK);
			}
		} else if (r < 400 && t.nbound > 0) {
			twin_unbind_one(&t, &rng, pods);
		} else {
			int pi = (int)gf_rng_below(&rng, NPODS);
			bool masked = gf_rng_below(&rng, 5) == 0;
			struct gf_placement pl[2];
			enum gf_outcome out[2];

			for (size_t k = 0; k < sizeof(allowed) / sizeof(allowed[0]); k++)
				allowed[k] = gf_rng_below(&rng, UINT64_MAX) | gf_rng_below(&rng, UINT64_MAX);
			memset(pl, 0, sizeof(pl));
			for (int w = 0; w < 2; w++)
				out[w] = gf_sched_place_masked(t.s[w], &pods[pi], NULL, masked ? allowed : NULL, &pl[w]);
			if (out[0] != out[1] || pl[0].nfeasible != pl[1].nfeasible ||
			    (out[0] == GF_PLACED && (pl[0].node != pl[1].node || pl[0].ngpus != pl[1].ngpus ||
						     memcmp(pl[0].gpus, pl[1].gpus, (size_t)pl[0].ngpus))))
				fail_msg("%s seed %llu step %d pod %s%s: classes %d node %u gpu %d feasible %u, "
					 "per node %d node %u gpu %d feasible %u",
					 ops->name, (unsigned long long)seed, step, pods[pi].name,
					 masked ? " masked" : "", out[0], pl[0].node, pl[0].gpus[0],
					 pl[0].nfeasible, out[1], pl[1].node, pl[1].gpus[0], pl[1].nfeasible);
			if (out[0] == GF_PLACED) {
				struct bound *b = &t.bound[t.nbound++];

				b->node = pl[0].node;
				b->pod = pi;
				memcpy(b->gpus, pl[0].gpus, sizeof(b->gpus));
				for (int w = 0; w < 2; w++)
					assert_int_equal(gf_cluster_bind(t.c[w], pl[0].node, &pods[pi], pl[0].gpus), GF_OK);
			} else if (t.nbound > 0)
				twin_unbind_one(&t, &rng, pods);	/* make room */
		}
		if (gf_sched_check_classes(t.s[0], why, sizeof(why)) != GF_OK)
			fail_msg("%s seed %llu step %d: %s", ops->name, (unsigned long long)seed, step, why);
	}
	assert_true(gf_sched_nclasses(t.s[0]) > 0);
	assert_true(gf_sched_nclasses(t.s[0]) < NNODES);	/* some nodes do share a class */
	assert_int_equal(gf_sched_check_classes(t.s[1], why, sizeof(why)), GF_INVAL);
	for (int w = 0; w < 2; w++) {
		gf_sched_destroy(t.s[w]);
		gf_cluster_destroy(t.c[w]);
	}
	free(t.bound);
	gf_target_release(&tgt);
	gf_catalog_release(&cat);
}

static void test_node_classes_match_per_node(void **state)
{
	const struct gf_policy_ops *ops[] = {
		&gf_policy_fgd, &gf_policy_fgd_fill, &gf_policy_best_fit,
		&gf_policy_dot_product, &gf_policy_gpu_packing, &gf_policy_gpu_clustering,
	};

	(void)state;
	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
		classes_match_per_node(ops[k], true, 42 + k);
		classes_match_per_node(ops[k], false, 7 + k);	/* the walk over classes */
	}
}

/* Two targets with the same classes in the same order, the same p. */
static void assert_same_target(const struct gf_target *a, const struct gf_target *b)
{
	assert_int_equal(a->nclasses, b->nclasses);
	assert_int_equal(a->ndistinct, b->ndistinct);
	assert_int_equal(a->kept_pods, b->kept_pods);
	for (int k = 0; k < a->nclasses; k++) {
		assert_int_equal(a->cls[k].cpu_milli, b->cls[k].cpu_milli);
		assert_int_equal(a->cls[k].gpu_milli, b->cls[k].gpu_milli);
		assert_int_equal(a->cls[k].gpu_count, b->cls[k].gpu_count);
		assert_int_equal(a->cls[k].spec, b->cls[k].spec);
		assert_true(a->cls[k].p == b->cls[k].p);
	}
}

/*
 * FGD's target from the pods seen (policy/target.h): every pod by its
 * shape, CPU-only ones too; a GPU pod of unknown share left out; nothing
 * left: one whole GPU.
 */
static void test_target_from_pods(void **state)
{
	struct gf_catalog cat;
	struct gf_pod_spec pods[6] = {
		{ .cpu_milli = 8000, .gpu_count = 1, .gpu_milli = 500 },
		{ .cpu_milli = 8000, .gpu_count = 1, .gpu_milli = 500 },
		{ .cpu_milli = 16000, .gpu_count = 2, .gpu_milli = 1000 },
		{ .cpu_milli = 4000 },						/* CPU-only: counts */
		{ .cpu_milli = 2000, .gpu_count = 1, .gpu_milli = 0 },		/* share unknown */
		{ .cpu_milli = 2000, .gpu_count = 1, .gpu_milli = 0 },
	};
	struct gf_target got, want;
	size_t counted = 99;

	(void)state;
	assert_int_equal(gf_catalog_init(&cat), GF_OK);

	/* all count: the very target of gf_target_build over them */
	assert_int_equal(gf_target_from_pods(pods, 4, &cat, GF_TARGET_PCT, &got, &counted), GF_OK);
	assert_int_equal(gf_target_build(pods, 4, &cat, GF_TARGET_PCT, &want), GF_OK);
	assert_int_equal(counted, 4);
	assert_same_target(&got, &want);
	gf_target_release(&got);

	/* the two of unknown share are left out: the same target, 4 pods counted */
	assert_int_equal(gf_target_from_pods(pods, 6, &cat, GF_TARGET_PCT, &got, &counted), GF_OK);
	assert_int_equal(counted, 4);
	assert_same_target(&got, &want);
	assert_int_equal(got.kept_pods, 4);	/* gf_target_build over all 6 would keep 6 */
	gf_target_release(&got);
	gf_target_release(&want);

	/* nothing that counts (none seen, or none resolved): one pod of one whole GPU */
	for (size_t n = 0; n <= 2; n += 2) {
		assert_int_equal(gf_target_from_pods(&pods[4], n, &cat, GF_TARGET_PCT, &got, &counted), GF_OK);
		assert_int_equal(counted, 0);
		assert_int_equal(got.nclasses, 1);
		assert_int_equal(got.cls[0].gpu_count, 1);
		assert_int_equal(got.cls[0].gpu_milli, GF_MILLI_PER_GPU);
		assert_int_equal(got.cls[0].cpu_milli, 0);
		assert_int_equal(got.cls[0].spec, 0);
		assert_true(got.cls[0].p == 1.0);
		gf_target_release(&got);
	}

	/* the threshold is checked as gf_target_build checks it */
	assert_int_equal(gf_target_from_pods(pods, 6, &cat, 0, &got, NULL), GF_INVAL);
	assert_int_equal(gf_target_from_pods(pods, 4, &cat, 101, &got, NULL), GF_INVAL);
	gf_catalog_release(&cat);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_best_fit_and_dot_product),
		cmocka_unit_test(test_gpu_packing),
		cmocka_unit_test(test_gpu_clustering),
		cmocka_unit_test(test_fgd_score_and_gpu),
		cmocka_unit_test(test_fgd_fill_waste_table),
		cmocka_unit_test(test_fgd_fill_stranded),
		cmocka_unit_test(test_fgd_fill_strand_ratio_no_gpu_class),
		cmocka_unit_test(test_fgd_fill_cpu_pod),
		cmocka_unit_test(test_fgd_fill_sharing_gpu),
		cmocka_unit_test(test_fgd_fill_sharing_node),
		cmocka_unit_test(test_fgd_fill_sharing_node_rest),
		cmocka_unit_test(test_k8s_resources_fit),
		cmocka_unit_test(test_sched_score_cached),
		cmocka_unit_test(test_tie_break_priority),
		cmocka_unit_test(test_served_model_tie_break),
		cmocka_unit_test(test_gpu_choice),
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_node_classes_match_per_node),
		cmocka_unit_test(test_target_from_pods),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
