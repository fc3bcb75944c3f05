/* tests/test_frag.c - cluster/frag: the fragmentation measure and the target workload. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "cluster/frag.h"
#include "sim/trace.h"
#include "testutil.h"

/* A target of n classes, every model allowed unless spec says otherwise. */
static void make_target(struct gf_target *t, const struct gf_frag_class *cls, int n,
			const struct gf_catalog *cat)
{
	t->nclasses = n;
	t->cls = malloc((size_t)n * sizeof(*cls));
	t->acc = malloc((size_t)n * (GF_MAX_MODELS + 1) * sizeof(bool));
	assert_non_null(t->cls);
	assert_non_null(t->acc);
	memcpy(t->cls, cls, (size_t)n * sizeof(*cls));
	for (int m = 0; m <= GF_MAX_MODELS; m++)
		for (int k = 0; k < n; k++)
			t->acc[m * n + k] = gf_catalog_allows(cat, cls[k].spec, m < GF_MAX_MODELS ? m : -1);
}

static void test_frag_vectors(void **state)
{
	struct gf_catalog cat;
	struct gf_target t;
	int m1080, mt4, spec_t4;

	(void)state;
	gf_catalog_init(&cat);
	gf_catalog_model(&cat, "1080", 4, &m1080);
	gf_catalog_model(&cat, "T4", 2, &mt4);
	gf_catalog_spec(&cat, "T4", 2, &spec_t4);

	/* The artifact's unit-test vector: the class lacks CPU, so all 2700 idle count. */
	struct gf_frag_class one = { .cpu_milli = 6000, .gpu_milli = 465, .gpu_count = 1, .p = 0.0933 };
	uint16_t g[] = { 200, 1000, 1000, 500 };

	make_target(&t, &one, 1, &cat);
	assert_float_equal(gf_frag_node(&t, m1080, 1000, g, 4), 251.91, 1e-9);
	/* With CPU to spare it fits: only the GPU too small for it (200) is fragment. */
	assert_float_equal(gf_frag_node(&t, m1080, 10000, g, 4), 0.0933 * 200, 1e-9);
	/* A node with nothing idle has no fragmentation. */
	uint16_t none[] = { 0, 0 };

	assert_float_equal(gf_frag_node(&t, m1080, 10000, none, 2), 0.0, 0);
	gf_target_release(&t);

	/* CPU-only classes count all idle GPU; whole-GPU classes count partial GPUs;
	 * a class the model cannot serve counts everything. */
	struct gf_frag_class three[] = {
		{ .cpu_milli = 1000, .gpu_milli = 0, .gpu_count = 0, .p = 0.5 },
		{ .cpu_milli = 1000, .gpu_milli = 1000, .gpu_count = 1, .p = 0.25 },
		{ .cpu_milli = 1000, .gpu_milli = 100, .gpu_count = 1, .spec = spec_t4, .p = 0.25 },
	};
	uint16_t h[] = { 1000, 300 };

	make_target(&t, three, 3, &cat);
	/* 0.5*1300 + 0.25*300 + 0.25*1300 (model mismatch) */
	assert_float_equal(gf_frag_node(&t, m1080, 4000, h, 2), 650 + 75 + 325, 1e-9);
	/* GPUs of no known model serve unconstrained classes only: as on the 1080. */
	assert_float_equal(gf_frag_node(&t, -1, 4000, h, 2), 650 + 75 + 325, 1e-9);
	/* On a T4 the third class fits and nothing is below 100: 0.5*1300 + 0.25*300 + 0 */
	assert_float_equal(gf_frag_node(&t, mt4, 4000, h, 2), 650 + 75, 1e-9);
	/* Two whole GPUs needed: lacks GPU, counts everything. */
	t.cls[1].gpu_count = 2;
	assert_float_equal(gf_frag_node(&t, mt4, 4000, h, 2), 650 + 325, 1e-9);
	/* GPU order does not matter, only the multiset. */
	uint16_t h2[] = { 300, 1000 };

	assert_float_equal(gf_frag_node(&t, mt4, 4000, h2, 2), 650 + 325, 1e-9);
	gf_target_release(&t);
	gf_catalog_release(&cat);
}

/* Check values of spec 4.6.1 on the bundled default workload. */
static void test_target_default_workload(void **state)
{
	struct gf_catalog cat;
	struct gf_trace_error err;
	struct gf_pod_spec *pods;
	struct gf_target t;
	size_t n, len;
	char *data = tu_slurp(GF_SOURCE_DIR "/data/openb/openb_pod_list_default.csv", &len);

	(void)state;
	gf_catalog_init(&cat);
	assert_int_equal(gf_trace_parse_pods(data, len, "default", &cat, &pods, &n, &err), GF_OK);
	assert_int_equal(n, 8152);
	assert_int_equal(gf_target_build(pods, n, &cat, 95, &t), GF_OK);
	assert_int_equal(t.ndistinct, 91);
	assert_int_equal(t.nclasses, 35);
	assert_int_equal(t.kept_pods, 7766);
	const struct { int64_t cpu; int milli, count; uint32_t pods; } top[] = {
		{ 3152, 810, 1, 1047 }, { 11300, 1000, 1, 874 }, { 11400, 1000, 1, 599 },
		{ 3152, 1000, 1, 470 }, { 11908, 470, 1, 388 },
	};
	double psum = 0;

	for (int k = 0; k < 5; k++) {
		assert_int_equal(t.cls[k].cpu_milli, top[k].cpu);
		assert_int_equal(t.cls[k].gpu_milli, top[k].milli);
		assert_int_equal(t.cls[k].gpu_count, top[k].count);
		assert_int_equal(t.cls[k].spec, 0);
		assert_int_equal(t.cls[k].pods, top[k].pods);
	}
	assert_float_equal(t.cls[0].p, 1047.0 / 7766.0, 1e-12);
	for (int k = 0; k < t.nclasses; k++)
		psum += t.cls[k].p;
	assert_float_equal(psum, 1.0, 1e-9);
	gf_target_release(&t);
	free(pods);
	free(data);
	gf_catalog_release(&cat);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frag_vectors),
		cmocka_unit_test(test_target_default_workload),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
