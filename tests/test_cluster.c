/* tests/test_cluster.c - cluster/: catalog, filter, bind/unbind, invariants, admission. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "cluster/admit.h"
#include "cluster/cluster.h"
#include "cluster/request.h"
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

/* Admission, one rule at a time: cordon, taints and tolerations, selector, affinity. */
static void test_admission_rules(void **state)
{
	static const char labels[] = "zone\0a\0gen\0" "5\0";
	struct gf_taint taint = { "gpu", "yes", GF_EFFECT_NO_SCHEDULE };
	struct gf_node_rules n = { labels, sizeof(labels) - 1, NULL, 0, false, 0 };
	struct gf_pod_rules p = { 0 };

	(void)state;
	assert_string_equal(gf_labels_get(labels, sizeof(labels) - 1, "gen"), "5");
	assert_null(gf_labels_get(labels, sizeof(labels) - 1, "a"));	/* a value, not a key */
	assert_int_equal(gf_admits(&n, &p), GF_WHY_FITS);
	n.unschedulable = true;
	assert_int_equal(gf_admits(&n, &p), GF_WHY_UNSCHEDULABLE);
	struct gf_toleration cordon = { "node.kubernetes.io/unschedulable", "", GF_EFFECT_ANY, true };
	p.tols = &cordon;
	p.ntols = 1;
	assert_int_equal(gf_admits(&n, &p), GF_WHY_FITS);
	n.unschedulable = false;
	n.taints = &taint;
	n.ntaints = 1;
	assert_int_equal(gf_admits(&n, &p), GF_WHY_TAINT);
	struct gf_toleration tols[2] = { { "gpu", "no", GF_EFFECT_ANY, false },
					 { "gpu", "yes", GF_EFFECT_NO_EXECUTE, false } };
	p.tols = tols;
	p.ntols = 2;	/* wrong value, wrong effect */
	assert_int_equal(gf_admits(&n, &p), GF_WHY_TAINT);
	tols[1].effect = GF_EFFECT_NO_SCHEDULE;
	assert_int_equal(gf_admits(&n, &p), GF_WHY_FITS);
	struct gf_toleration all = { "", "", GF_EFFECT_ANY, true };
	p.tols = &all;
	p.ntols = 1;
	assert_int_equal(gf_admits(&n, &p), GF_WHY_FITS);
	static const char sel_ok[] = "zone\0a\0", sel_bad[] = "zone\0b\0";
	p.selector = sel_ok;
	p.selector_len = sizeof(sel_ok) - 1;
	assert_int_equal(gf_admits(&n, &p), GF_WHY_FITS);
	p.selector = sel_bad;
	assert_int_equal(gf_admits(&n, &p), GF_WHY_AFFINITY);
	p.selector_len = 0;
	struct gf_match_term t[2] = { { 1, { { "gen", GF_OP_GT, "7" } } },
				      { 2, { { "zone", GF_OP_IN, "b\0a\0" }, { "gpu", GF_OP_DOES_NOT_EXIST, "" } } } };
	p.terms = t;
	p.nterms = 1;	/* 5 > 7 fails */
	assert_int_equal(gf_admits(&n, &p), GF_WHY_AFFINITY);
	p.nterms = 2;	/* any term: the second holds */
	assert_int_equal(gf_admits(&n, &p), GF_WHY_FITS);
	t[0].e[0].op = GF_OP_LT;
	t[1].e[1].op = GF_OP_EXISTS;
	assert_int_equal(gf_admits(&n, &p), GF_WHY_FITS);	/* 5 < 7 */
	memcpy(t[0].e[0].values, "x7", 3);	/* not a number: never matches */
	assert_int_equal(gf_admits(&n, &p), GF_WHY_AFFINITY);
}

/* The allowed-node mask: bits per node, reasons counted, pod count from the cluster. */
static void test_admit_mask(void **state)
{
	enum { N = 70 };	/* more than one mask word */
	struct gf_node_spec specs[N];
	struct gf_node_rules rules[N];
	struct gf_pod_rules p = { 0 };
	static const char labels[] = "pool\0gpu\0";
	gf_cluster *c;
	uint64_t allowed[2];
	size_t counts[GF_WHY_COUNT_] = { 0 };

	(void)state;
	for (int i = 0; i < N; i++) {
		specs[i] = tu_node("n", 8000, 16000, 1, -1);
		rules[i] = (struct gf_node_rules){ labels, i % 2 ? sizeof(labels) - 1 : 0, NULL, 0, i == 65, 0 };
	}
	rules[3].max_pods = 1;
	assert_int_equal(gf_cluster_create(specs, N, &c), GF_OK);
	struct gf_pod_spec one = { .cpu_milli = 100 };
	assert_int_equal(gf_cluster_bind(c, 3, &one, NULL), GF_OK);
	static const char sel[] = "pool\0gpu\0";
	p.selector = sel;
	p.selector_len = sizeof(sel) - 1;
	/* refused: the 35 even nodes (no label), 65 (cordoned), 3 (pods full) */
	assert_int_equal(gf_admit_mask(c, rules, &p, allowed, counts), 37);
	assert_int_equal(counts[GF_WHY_AFFINITY], 35);
	assert_int_equal(counts[GF_WHY_UNSCHEDULABLE], 1);
	assert_int_equal(counts[GF_WHY_PODS], 1);
	for (int i = 0; i < N; i++)
		assert_int_equal((int)((allowed[i / 64] >> (i % 64)) & 1), i % 2 && i != 65 && i != 3);
	assert_int_equal(allowed[1] >> (N - 64), 0);	/* past the last node: clear */
	assert_int_equal(gf_cluster_unbind(c, 3, &one, NULL), GF_OK);
	assert_int_equal(gf_admit_why(c, rules, 3, &p), GF_WHY_FITS);
	gf_cluster_destroy(c);
}

/*
 * GPU memory -> share: on a given node, against that node's GPUs; otherwise
 * against the smallest allowed model that holds the memory, the constraint
 * narrowed to the models that do; a share asked too is a floor.
 */
static void test_request_resolve(void **state)
{
	struct gf_catalog cat;
	int t4, a100, h100;
	int64_t model_mem[GF_MAX_MODELS] = { 0 };
	struct gf_pod_spec req = { .cpu_milli = 4000, .mem_mib = 1024, .gpu_count = 1, .gpu_milli = 1000 };
	struct gf_request rq = { &req, "", false, "" };
	struct gf_pod_spec eff;
	char msg[256];

	(void)state;
	assert_int_equal(gf_catalog_init(&cat), GF_OK);
	assert_int_equal(gf_catalog_model(&cat, "T4", 2, &t4), GF_OK);
	assert_int_equal(gf_catalog_model(&cat, "A100", 4, &a100), GF_OK);
	assert_int_equal(gf_catalog_model(&cat, "H100", 4, &h100), GF_OK);
	assert_int_equal(gf_catalog_model(&cat, "L4", 2, &(int){ 0 }), GF_OK);	/* memory unknown: 0 */
	model_mem[t4] = 16384;
	model_mem[a100] = 40960;
	model_mem[h100] = 81920;

	/* no memory asked: the request as it is, any model */
	assert_int_equal(gf_request_resolve(&cat, model_mem, 3, &rq, 0, &eff, msg, sizeof(msg)), GF_REQUEST_OK);
	assert_int_equal(eff.gpu_milli, 1000);
	assert_int_equal(eff.spec, 0);
	assert_int_equal(eff.cpu_milli, 4000);

	/* 20000 MiB: A100 and H100 hold it, sized on the A100: ceil(20000 * 1000 / 40960) = 489 */
	req.gpu_mem_mib = 20000;
	assert_int_equal(gf_request_resolve(&cat, model_mem, 3, &rq, 0, &eff, msg, sizeof(msg)), GF_REQUEST_OK);
	assert_int_equal(eff.gpu_milli, 489);
	assert_string_equal(cat.specs[eff.spec].text, "A100|H100");
	assert_false(gf_catalog_allows(&cat, eff.spec, t4));

	/* a model constraint: only H100 of "H100|T4" holds it: ceil(20000 * 1000 / 81920) = 245 */
	rq.model = "H100|T4";
	assert_int_equal(gf_request_resolve(&cat, model_mem, 3, &rq, 0, &eff, msg, sizeof(msg)), GF_REQUEST_OK);
	assert_int_equal(eff.gpu_milli, 245);
	assert_string_equal(cat.specs[eff.spec].text, "H100");

	/* a share asked as well is a floor: 600 > 245 stays, 200 < 245 is raised */
	rq.milli_given = true;
	req.gpu_milli = 600;
	assert_int_equal(gf_request_resolve(&cat, model_mem, 3, &rq, 0, &eff, msg, sizeof(msg)), GF_REQUEST_OK);
	assert_int_equal(eff.gpu_milli, 600);
	req.gpu_milli = 200;
	assert_int_equal(gf_request_resolve(&cat, model_mem, 3, &rq, 0, &eff, msg, sizeof(msg)), GF_REQUEST_OK);
	assert_int_equal(eff.gpu_milli, 245);

	/* on a given node: its GPUs' memory, model_mem not read; capped at a whole GPU */
	rq.milli_given = false;
	rq.model = NULL;
	assert_int_equal(gf_request_resolve(&cat, NULL, 3, &rq, 16384, &eff, msg, sizeof(msg)), GF_REQUEST_OK);
	assert_int_equal(eff.gpu_milli, 1000);	/* ceil(20000000 / 16384) = 1221: a whole GPU */
	req.gpu_mem_mib = 8000;
	assert_int_equal(gf_request_resolve(&cat, NULL, 3, &rq, 16384, &eff, msg, sizeof(msg)), GF_REQUEST_OK);
	assert_int_equal(eff.gpu_milli, 489);	/* ceil(8000000 / 16384) = 489 (488.28) */
	assert_int_equal(eff.spec, 0);

	/* no model with the memory: unschedulable, in kube-scheduler's words */
	req.gpu_mem_mib = 100000;
	assert_int_equal(gf_request_resolve(&cat, model_mem, 3, &rq, 0, &eff, msg, sizeof(msg)),
			 GF_REQUEST_UNSCHEDULABLE);
	assert_string_equal(msg, "0/3 nodes are available: no GPU model with 100000 MiB per GPU.");
	req.gpu_mem_mib = 40000;
	rq.model = "T4";
	assert_int_equal(gf_request_resolve(&cat, model_mem, 3, &rq, 0, &eff, msg, sizeof(msg)),
			 GF_REQUEST_UNSCHEDULABLE);
	assert_string_equal(msg, "0/3 nodes are available: no GPU model allowed by the model constraint "
				 "with 40000 MiB per GPU.");

	/* the decoder's verdict and an unusable constraint: invalid */
	rq.invalid = "gpu-milli must be 1..1000";
	assert_int_equal(gf_request_resolve(&cat, model_mem, 3, &rq, 0, &eff, msg, sizeof(msg)),
			 GF_REQUEST_INVALID);
	assert_string_equal(msg, "invalid GPU request: gpu-milli must be 1..1000");
	rq.invalid = NULL;
	char lng[GF_SPEC_MAX + 8];
	memset(lng, 'A', sizeof(lng) - 1);
	lng[sizeof(lng) - 1] = '\0';
	rq.model = lng;
	assert_int_equal(gf_request_resolve(&cat, model_mem, 3, &rq, 0, &eff, msg, sizeof(msg)),
			 GF_REQUEST_INVALID);

	/* CPU-only: nothing to resolve, even with a constraint */
	req.gpu_count = 0;
	req.gpu_milli = 0;
	assert_int_equal(gf_request_resolve(&cat, model_mem, 3, &rq, 0, &eff, msg, sizeof(msg)), GF_REQUEST_OK);
	assert_int_equal(eff.spec, 0);
	gf_catalog_release(&cat);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_catalog_spec_normalised),
		cmocka_unit_test(test_filter_and_bind),
		cmocka_unit_test(test_create_rejects_bad_nodes),
		cmocka_unit_test(test_admission_rules),
		cmocka_unit_test(test_admit_mask),
		cmocka_unit_test(test_request_resolve),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
