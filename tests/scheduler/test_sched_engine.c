/* tests/scheduler/test_sched_engine.c - engine additions: why-not reasons and topology-aware GPU choice. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "../testutil.h"
#include "cluster/cluster.h"
#include "cluster/whynot.h"
#include "core/rng.h"
#include "policy/topology.h"

/* why_not == FITS exactly when fits, on random states and pods. */
static void test_why_not_agrees_with_fits(void **st)
{
	(void)st;
	struct gf_catalog cat;
	assert_int_equal(gf_catalog_init(&cat), GF_OK);
	int a, b, spec_a, spec_ab;
	assert_int_equal(gf_catalog_model(&cat, "A", 1, &a), GF_OK);
	assert_int_equal(gf_catalog_model(&cat, "B", 1, &b), GF_OK);
	assert_int_equal(gf_catalog_spec(&cat, "A", 1, &spec_a), GF_OK);
	assert_int_equal(gf_catalog_spec(&cat, "A|B", 3, &spec_ab), GF_OK);
	struct gf_node_spec specs[8];
	for (int i = 0; i < 8; i++)
		specs[i] = tu_node("n", 8000 * (i + 1), 16000, i % 3 == 0 ? 0 : 2 * (i % 4) + 2, i % 2 ? a : b);
	for (int i = 0; i < 8; i++)
		if (!specs[i].ngpus)
			specs[i].model = -1;
	gf_cluster *c;
	assert_int_equal(gf_cluster_create(specs, 8, &c), GF_OK);
	struct gf_rng rng;
	gf_rng_init(&rng, 7);
	size_t seen[GF_WHY_COUNT_] = { 0 };
	for (int step = 0; step < 20000; step++) {
		int count = (int)gf_rng_below(&rng, 5);
		int milli = count == 0 ? 0 : gf_rng_below(&rng, 2) ? 1000 : 1 + (int)gf_rng_below(&rng, 999);
		int spec = count ? (int[]){ 0, spec_a, spec_ab }[gf_rng_below(&rng, 3)] : 0;
		struct gf_pod_spec p = tu_pod("p", (int64_t)gf_rng_below(&rng, 6000),
					      (int64_t)gf_rng_below(&rng, 4000), count, milli, spec);
		size_t i = gf_rng_below(&rng, 8);
		bool fits = gf_cluster_fits(c, &cat, i, &p);
		enum gf_why w = gf_cluster_why_not(c, &cat, i, &p);
		seen[w]++;
		assert_true(w <= GF_WHY_GPU_MILLI);
		if (fits != (w == GF_WHY_FITS))
			fail_msg("step %d node %zu: fits=%d why=%s", step, i, fits, gf_why_text(w));
		if (fits && gf_rng_below(&rng, 2)) {
			uint8_t g[GF_MAX_GPUS];
			if (count)
				assert_int_equal(gf_gpus_ascending_fit(gf_cluster_node(c, i), count, milli, g), count);
			assert_int_equal(gf_cluster_bind(c, i, &p, g), GF_OK);
		}
		if (step % 3000 == 2999)
			gf_cluster_reset(c);
	}
	for (int w = 0; w <= GF_WHY_GPU_MILLI; w++) /* the engine's reasons */
		if (!seen[w])
			fail_msg("reason %s never seen: the test does not cover it", gf_why_text((enum gf_why)w));
	gf_cluster_destroy(c);
	gf_catalog_release(&cat);
}

static void test_why_summary(void **st)
{
	(void)st;
	size_t counts[GF_WHY_COUNT_] = { 0 };
	counts[GF_WHY_GPU_MILLI] = 60;
	counts[GF_WHY_MODEL] = 40;
	char out[256];
	gf_why_summary(counts, 100, out, sizeof(out));
	assert_string_equal(out, "0/100 nodes are available: 60 Insufficient GPU milli, 40 GPU model mismatch.");
	counts[GF_WHY_CPU] = 40;
	gf_why_summary(counts, 140, out, sizeof(out));
	assert_string_equal(out, "0/140 nodes are available: 60 Insufficient GPU milli, 40 Insufficient cpu, "
				 "40 GPU model mismatch.");
	char tiny[10];
	gf_why_summary(counts, 140, tiny, sizeof(tiny));
	assert_int_equal(strlen(tiny), 9);
}

static void test_topology_pick(void **st)
{
	(void)st;
	/* 8 GPUs: islands {0,1,2,3} {4,5} {6,7}; NUMA {0..3}=0 {4..7}=1. */
	struct gf_node_spec s = tu_node("n", 64000, 64000, 8, 0);
	int8_t isl[8] = { 0, 0, 0, 0, 1, 1, 2, 2 };
	for (int g = 0; g < 8; g++)
		s.topo[g] = (struct gf_gpu_topo){ (int8_t)(g / 4), isl[g] };
	gf_cluster *c;
	assert_int_equal(gf_cluster_create(&s, 1, &c), GF_OK);
	uint8_t out[GF_MAX_GPUS];
	enum gf_topo_fit fit;
	/* 2 GPUs: the smallest island that holds them: {4,5}. */
	assert_int_equal(gf_topo_pick(gf_cluster_node(c, 0), &s, 2, 1000, out, &fit), 2);
	assert_int_equal(fit, GF_TOPO_NVLINK);
	assert_int_equal(out[0], 4);
	assert_int_equal(out[1], 5);
	/* 4 GPUs: island 0. */
	assert_int_equal(gf_topo_pick(gf_cluster_node(c, 0), &s, 4, 1000, out, &fit), 4);
	assert_int_equal(fit, GF_TOPO_NVLINK);
	for (int k = 0; k < 4; k++)
		assert_int_equal(out[k], k);
	/* Take GPUs 0,1,4: then 3 GPUs fit no island; NUMA 1 has {5,6,7}. */
	struct gf_pod_spec p = tu_pod("p", 0, 0, 3, 1000, 0);
	uint8_t taken[3] = { 0, 1, 4 };
	assert_int_equal(gf_cluster_bind(c, 0, &p, taken), GF_OK);
	assert_int_equal(gf_topo_pick(gf_cluster_node(c, 0), &s, 3, 1000, out, &fit), 3);
	assert_int_equal(fit, GF_TOPO_NUMA);
	assert_int_equal(out[0], 5);
	assert_int_equal(out[1], 6);
	assert_int_equal(out[2], 7);
	/* 5 GPUs: no group holds them; the default choice. */
	assert_int_equal(gf_topo_pick(gf_cluster_node(c, 0), &s, 5, 1000, out, &fit), 5);
	assert_int_equal(fit, GF_TOPO_NONE);
	/* 6 GPUs do not fit at all. */
	assert_true(gf_topo_pick(gf_cluster_node(c, 0), &s, 6, 1000, out, &fit) < 6);
	/* No topology published: exactly the engine's default. */
	struct gf_node_spec s2 = tu_node("m", 64000, 64000, 8, 0);
	gf_cluster *c2;
	assert_int_equal(gf_cluster_create(&s2, 1, &c2), GF_OK);
	uint8_t ref[GF_MAX_GPUS];
	assert_int_equal(gf_topo_pick(gf_cluster_node(c2, 0), &s2, 3, 1000, out, &fit), 3);
	assert_int_equal(gf_gpus_ascending_fit(gf_cluster_node(c2, 0), 3, 1000, ref), 3);
	assert_memory_equal(out, ref, 3);
	assert_int_equal(fit, GF_TOPO_NONE);
	gf_cluster_destroy(c);
	gf_cluster_destroy(c2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_why_not_agrees_with_fits),
		cmocka_unit_test(test_why_summary),
		cmocka_unit_test(test_topology_pick),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
