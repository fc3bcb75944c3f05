/* tests/test_cluster.c - cluster/: catalog, filter, bind/unbind, invariants. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cluster/cluster.h"
#include "testutil.h"

static void test_catalog_spec_normalised(void **state)
{
	struct gf_catalog cat;
	int a, b, c, d, m;

	(void)state;
	assert_int_equal(gf_catalog_init(&cat), GF_OK);
	assert_int_equal(gf_catalog_spec(&cat, "|V100M16||V100M32|", 18, &a), GF_OK);
	assert_int_equal(gf_catalog_spec(&cat, "V100M16|V100M32", 15, &b), GF_OK);
	assert_int_equal(a, b);
	assert_string_equal(cat.specs[a].text, "V100M16|V100M32");
	assert_int_equal(gf_catalog_spec(&cat, "||", 2, &c), GF_OK);
	assert_int_equal(c, 0);	/* empty after normalisation: any model */
	assert_int_equal(gf_catalog_spec(&cat, "V100M16|V100M32|V100M32", 23, &d), GF_OK);
	assert_int_not_equal(d, a);	/* duplicates are kept: a different key */
	assert_int_equal(gf_catalog_model(&cat, "V100M32", 7, &m), GF_OK);
	assert_true(gf_catalog_allows(&cat, a, m));
	assert_int_equal(gf_catalog_model(&cat, "T4", 2, &m), GF_OK);
	assert_false(gf_catalog_allows(&cat, a, m));
	assert_true(gf_catalog_allows(&cat, 0, m));
	assert_false(gf_catalog_allows(&cat, a, -1));	/* no model on the node */
	assert_int_equal(gf_catalog_model(&cat, "", 0, &m), GF_INVAL);
	gf_catalog_release(&cat);
}

static void test_filter_and_bind(void **state)
{
	struct gf_catalog cat;
	struct gf_node_spec specs[2];
	gf_cluster *c;
	int t4, spec_t4;
	char why[256];

	(void)state;
	gf_catalog_init(&cat);
	gf_catalog_model(&cat, "T4", 2, &t4);
	gf_catalog_spec(&cat, "T4", 2, &spec_t4);
	specs[0] = tu_node("a", 8000, 16000, 2, t4);
	specs[1] = tu_node("b", 8000, 16000, 0, -1);
	assert_int_equal(gf_cluster_create(specs, 2, &c), GF_OK);
	assert_int_equal(gf_cluster_gpu_capacity(c), 2000);

	struct gf_pod_spec share = tu_pod("s", 1000, 1000, 1, 600, spec_t4);
	struct gf_pod_spec two = tu_pod("w", 1000, 1000, 2, 1000, 0);
	struct gf_pod_spec fat = tu_pod("f", 9000, 1, 0, 0, 0);
	struct gf_pod_spec mem = tu_pod("m", 1, 17000, 0, 0, 0);
	uint8_t g0[] = { 0 }, g01[] = { 0, 1 }, g00[] = { 0, 0 }, g5[] = { 5 };

	assert_true(gf_cluster_fits(c, &cat, 0, &share));
	assert_false(gf_cluster_fits(c, &cat, 1, &share));	/* no GPUs */
	assert_false(gf_cluster_fits(c, &cat, 0, &fat));	/* CPU */
	assert_false(gf_cluster_fits(c, &cat, 0, &mem));	/* memory */
	assert_true(gf_cluster_fits(c, &cat, 0, &two));

	assert_int_equal(gf_cluster_bind(c, 0, &share, g0), GF_OK);
	const struct gf_node *nd = gf_cluster_node(c, 0);

	assert_int_equal(nd->gpu_free[0], 400);
	assert_int_equal(nd->nfull, 1);
	assert_int_equal(nd->max_free, 1000);
	assert_int_equal(nd->gpu_free_total, 1400);
	assert_int_equal(nd->cpu_free, 7000);
	assert_int_equal(nd->tag_pods[GF_TAG_SHARE], 1);
	assert_int_equal(gf_cluster_gpu_used(c), 600);
	assert_false(gf_cluster_fits(c, &cat, 0, &two));	/* only one whole GPU left */

	/* Over-commit, bad and repeated indices are refused and change nothing. */
	uint32_t v = nd->version;

	assert_int_equal(gf_cluster_bind(c, 0, &share, g0), GF_RANGE);
	assert_int_equal(gf_cluster_bind(c, 0, &two, g00), GF_RANGE);
	assert_int_equal(gf_cluster_bind(c, 0, &share, g5), GF_RANGE);
	assert_int_equal(gf_cluster_bind(c, 0, &two, g01), GF_RANGE);
	assert_int_equal(nd->version, v);
	assert_int_equal(gf_cluster_check(c, why, sizeof(why)), GF_OK);

	assert_int_equal(gf_cluster_unbind(c, 0, &share, g0), GF_OK);
	assert_int_equal(nd->gpu_free[0], 1000);
	assert_int_equal(nd->ntags, 0);
	assert_int_equal(gf_cluster_unbind(c, 0, &share, g0), GF_RANGE);	/* nothing to undo */
	assert_int_equal(gf_cluster_bind(c, 0, &two, g01), GF_OK);
	assert_int_equal(gf_cluster_gpu_used(c), 2000);
	assert_int_equal(gf_cluster_check(c, why, sizeof(why)), GF_OK);
	gf_cluster_reset(c);
	assert_int_equal(gf_cluster_gpu_used(c), 0);
	assert_true(gf_cluster_node(c, 0)->version > v);
	gf_cluster_destroy(c);
	gf_catalog_release(&cat);
}

static void test_create_rejects_bad_nodes(void **state)
{
	struct gf_node_spec s = tu_node("x", 1000, 1000, GF_MAX_GPUS + 1, -1);
	gf_cluster *c = NULL;

	(void)state;
	assert_int_equal(gf_cluster_create(&s, 1, &c), GF_INVAL);
	assert_null(c);
	assert_int_equal(gf_cluster_create(&s, 0, &c), GF_INVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_catalog_spec_normalised),
		cmocka_unit_test(test_filter_and_bind),
		cmocka_unit_test(test_create_rejects_bad_nodes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
