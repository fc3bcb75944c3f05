/* tests/test_mig.c - cluster/mig (profiles, partitions, rules, slice fragmentation) and policy/mig_place. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "cluster/mig.h"
#include "policy/mig_place.h"
#include "sim/mig_exp.h"
#include "testutil.h"

static int prof(int model, const char *name)
{
	int k = gf_mig_profile_find(model, name);

	assert_true(k >= 0);
	return k;
}

static void test_tables(void **state)
{
	const struct gf_mig_model_info *h = gf_mig_model(GF_MIG_H100_80GB);
	const char *h100[] = { "1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb" };
	const uint8_t size[] = { 1, 2, 2, 4, 4, 8 }, compute[] = { 1, 1, 2, 3, 4, 7 };
	const uint8_t starts[] = { 0x7F, 0x55, 0x15, 0x11, 0x01, 0x01 };

	(void)state;
	assert_non_null(h);
	assert_int_equal(h->nslices, 8);
	assert_int_equal(h->ncompute, 7);
	assert_int_equal(h->nprofiles, 6);
	for (int k = 0; k < 6; k++) {
		assert_string_equal(h->profiles[k].name, h100[k]);
		assert_int_equal(h->profiles[k].size, size[k]);
		assert_int_equal(h->profiles[k].compute, compute[k]);
		assert_int_equal(h->profiles[k].starts, starts[k]);
		assert_int_equal(h->profiles[k].mem_mib, 10240 * size[k]);
	}
	assert_int_equal(gf_mig_model_find("H100-80GB"), GF_MIG_H100_80GB);
	assert_int_equal(gf_mig_model_find("A30-24GB"), GF_MIG_A30_24GB);
	assert_int_equal(gf_mig_model_find("V100"), -1);
	assert_string_equal(gf_mig_model(GF_MIG_A100_40GB)->profiles[0].name, "1g.5gb");
	assert_string_equal(gf_mig_model(GF_MIG_H200_141GB)->profiles[3].name, "3g.71gb");
	assert_int_equal(gf_mig_model(GF_MIG_A30_24GB)->nprofiles, 3);
	assert_int_equal(gf_mig_model(GF_MIG_A30_24GB)->nslices, 4);
	/* The device plugin's resource names are accepted as profile names. */
	assert_int_equal(gf_mig_profile_find(GF_MIG_H100_80GB, "nvidia.com/mig-3g.40gb"), 3);
	assert_int_equal(gf_mig_profile_find(GF_MIG_H100_80GB, "mig-1g.10gb"), 0);
	assert_int_equal(gf_mig_profile_find(GF_MIG_H100_80GB, "3g.20gb"), -1);
	assert_null(gf_mig_model(GF_MIG_NMODELS));
}

static void test_profile_for_mem(void **state)
{
	(void)state;
	assert_int_equal(gf_mig_profile_for_mem(GF_MIG_H100_80GB, 1), prof(GF_MIG_H100_80GB, "1g.10gb"));
	assert_int_equal(gf_mig_profile_for_mem(GF_MIG_H100_80GB, 10240), prof(GF_MIG_H100_80GB, "1g.10gb"));
	/* 1g.20gb before 2g.20gb: the same slices, less compute. */
	assert_int_equal(gf_mig_profile_for_mem(GF_MIG_H100_80GB, 10241), prof(GF_MIG_H100_80GB, "1g.20gb"));
	/* 3g.40gb before 4g.40gb. */
	assert_int_equal(gf_mig_profile_for_mem(GF_MIG_H100_80GB, 30000), prof(GF_MIG_H100_80GB, "3g.40gb"));
	assert_int_equal(gf_mig_profile_for_mem(GF_MIG_H100_80GB, 40961), prof(GF_MIG_H100_80GB, "7g.80gb"));
	assert_int_equal(gf_mig_profile_for_mem(GF_MIG_H100_80GB, 81921), -1);
	assert_int_equal(gf_mig_profile_for_mem(GF_MIG_H100_80GB, 0), -1);
	assert_int_equal(gf_mig_profile_for_mem(GF_MIG_A100_40GB, 5120), prof(GF_MIG_A100_40GB, "1g.5gb"));
	assert_int_equal(gf_mig_profile_for_mem(GF_MIG_A30_24GB, 7000), prof(GF_MIG_A30_24GB, "2g.12gb"));
	assert_int_equal(gf_mig_profile_for_mem(GF_MIG_H200_141GB, 20000), prof(GF_MIG_H200_141GB, "1g.35gb"));
}

/* The case: a 1g at a bad slot blocks a 4g while 6 of 7 compute slices are free. */
static void test_bad_slot_blocks_4g(void **state)
{
	struct gf_mig_gpu g;
	int m = GF_MIG_H100_80GB, p1 = prof(m, "1g.10gb"), p4 = prof(m, "4g.40gb"), p3 = prof(m, "3g.40gb");
	int idx;

	(void)state;
	assert_int_equal(gf_mig_gpu_init(&g, m, true), GF_OK);
	assert_true(gf_mig_can_create(&g, p4, 0));
	assert_int_equal(gf_mig_create(&g, p1, 1, &idx), GF_OK);
	assert_int_equal(gf_mig_free_compute(&g), 6);
	assert_int_equal(__builtin_popcount(gf_mig_free_mask(&g)), 7);
	assert_false(gf_mig_can_create(&g, p4, 0));
	assert_int_equal(gf_mig_create(&g, p4, 0, NULL), GF_STATE);
	assert_int_equal(gf_mig_fit_count(&g, p4), 0);
	assert_int_equal(gf_mig_fit_count(&g, p3), 1);	/* only at slot 4 */
	/* The same 1g at slot 4 leaves the 4g its room. */
	assert_int_equal(gf_mig_destroy(&g, idx), GF_OK);
	assert_int_equal(gf_mig_create(&g, p1, 4, NULL), GF_OK);
	assert_true(gf_mig_can_create(&g, p4, 0));
	assert_int_equal(gf_mig_fit_count(&g, p4), 1);
	assert_int_equal(gf_mig_check(&g, NULL, 0), GF_OK);
}

static void test_rules(void **state)
{
	struct gf_mig_gpu g, plain;
	int m = GF_MIG_H100_80GB, idx;
	char why[128];

	(void)state;
	gf_mig_gpu_init(&g, m, true);
	/* Starts the table does not allow: refused as the driver would. */
	assert_int_equal(gf_mig_create(&g, prof(m, "4g.40gb"), 4, NULL), GF_INVAL);
	assert_int_equal(gf_mig_create(&g, prof(m, "3g.40gb"), 2, NULL), GF_INVAL);
	assert_int_equal(gf_mig_create(&g, prof(m, "2g.20gb"), 6, NULL), GF_INVAL);
	assert_int_equal(gf_mig_create(&g, prof(m, "1g.20gb"), 1, NULL), GF_INVAL);
	assert_int_equal(gf_mig_create(&g, prof(m, "1g.10gb"), 7, NULL), GF_INVAL);
	assert_int_equal(gf_mig_create(&g, prof(m, "7g.80gb"), 1, NULL), GF_INVAL);
	assert_int_equal(g.ninst, 0);
	/* Overlaps refused. */
	assert_int_equal(gf_mig_create(&g, prof(m, "3g.40gb"), 4, &idx), GF_OK);
	assert_int_equal(gf_mig_create(&g, prof(m, "2g.20gb"), 4, NULL), GF_STATE);
	assert_int_equal(gf_mig_create(&g, prof(m, "1g.10gb"), 6, NULL), GF_STATE);
	assert_int_equal(gf_mig_create(&g, prof(m, "4g.40gb"), 0, NULL), GF_OK);
	assert_int_equal(gf_mig_free_mask(&g), 0u);
	assert_int_equal(gf_mig_free_compute(&g), 0);
	/* Never destroyed under a pod. */
	g.inst[idx].pods = 1;
	assert_int_equal(gf_mig_destroy(&g, idx), GF_STATE);
	assert_int_equal(gf_mig_destroy(&g, 5), GF_RANGE);
	g.inst[idx].pods = 0;
	assert_int_equal(gf_mig_destroy(&g, idx), GF_OK);
	assert_int_equal(g.ninst, 1);
	/* A hand-made bad partition is named by the check. */
	g.inst[g.ninst++] = (struct gf_mig_instance){ .profile = (int8_t)prof(m, "3g.40gb"), .start = 2 };
	assert_int_equal(gf_mig_check(&g, why, sizeof(why)), GF_STATE);
	assert_non_null(strstr(why, "may not start at slot 2"));
	g.inst[g.ninst - 1].start = 0;
	assert_int_equal(gf_mig_check(&g, why, sizeof(why)), GF_STATE);
	assert_non_null(strstr(why, "overlaps"));
	/* Outside MIG mode: no instance at all. */
	gf_mig_gpu_init(&plain, m, false);
	assert_int_equal(plain.milli_free, 1000);
	assert_int_equal(gf_mig_create(&plain, 0, 0, NULL), GF_INVAL);
	assert_false(gf_mig_can_create(&plain, 0, 0));
	/* A30: 4 slices, 2g at 0 and 2 only. */
	gf_mig_gpu_init(&g, GF_MIG_A30_24GB, true);
	assert_int_equal(gf_mig_create(&g, prof(GF_MIG_A30_24GB, "2g.12gb"), 1, NULL), GF_INVAL);
	assert_int_equal(gf_mig_create(&g, prof(GF_MIG_A30_24GB, "1g.6gb"), 2, NULL), GF_OK);
	assert_int_equal(gf_mig_fit_count(&g, prof(GF_MIG_A30_24GB, "2g.12gb")), 1);
	assert_int_equal(gf_mig_fit_count(&g, prof(GF_MIG_A30_24GB, "4g.24gb")), 0);
}

static void test_frag_and_best_start(void **state)
{
	struct gf_mig_gpu g;
	int m = GF_MIG_H100_80GB, p1 = prof(m, "1g.10gb"), p4 = prof(m, "4g.40gb");
	double w[GF_MIG_MAX_PROFILES] = { 0 }, f;

	(void)state;
	gf_mig_gpu_init(&g, m, true);
	w[p4] = 1.0;
	assert_float_equal(gf_mig_frag(&g, w, 0), 4.0, 1e-12);	/* slots 4-7: no 4g there */
	/* First free slot (dynamic-first) would be 0; the least-fragmenting one keeps 0-3 whole. */
	assert_int_equal(gf_mig_first_start(&g, p1), 0);
	assert_int_equal(gf_mig_best_start(&g, p1, w, 0, &f), 4);
	assert_float_equal(f, 3.0, 1e-12);
	gf_mig_create(&g, p1, 0, NULL);
	assert_float_equal(gf_mig_frag(&g, w, 0), 7.0, 1e-12);	/* every free slice is lost to a 4g */
	/* w_free counts every free slice. */
	w[p4] = 0;
	assert_float_equal(gf_mig_frag(&g, w, 0.5), 3.5, 1e-12);
	/* The table agrees with the function. */
	static uint8_t tab[256][GF_MIG_MAX_PROFILES];

	gf_mig_slack_table(m, tab);
	assert_int_equal(tab[0xFF][p4], 4);
	assert_int_equal(tab[0xFE][p4], 7);
	assert_int_equal(tab[0xFF][p1], 1);	/* slice 7 takes no 1g */
	assert_int_equal(tab[0x00][p1], 0);
}

static void test_layouts(void **state)
{
	struct gf_mig_layout l[GF_MIG_MAX_LAYOUTS];
	const char *names[] = { "all-1g.10gb", "all-1g.20gb", "all-2g.20gb", "all-3g.40gb",
				"all-4g.40gb", "all-7g.80gb", "all-balanced" };
	const int ninst[] = { 7, 4, 3, 2, 1, 1, 4 };
	int n = gf_mig_layouts(GF_MIG_H100_80GB, l, GF_MIG_MAX_LAYOUTS);

	(void)state;
	assert_int_equal(n, 7);
	for (int i = 0; i < n; i++) {
		struct gf_mig_gpu g;

		assert_string_equal(l[i].name, names[i]);
		gf_mig_gpu_init(&g, GF_MIG_H100_80GB, true);
		assert_int_equal(gf_mig_apply_layout(&g, &l[i]), GF_OK);
		assert_int_equal(g.ninst, ninst[i]);
		assert_int_equal(gf_mig_check(&g, NULL, 0), GF_OK);
		/* A layout goes on an empty GPU only. */
		assert_int_equal(gf_mig_apply_layout(&g, &l[i]), GF_STATE);
	}
	/* all-balanced: 2 x 1g.10gb + 2g.20gb + 3g.40gb fill the GPU. */
	struct gf_mig_gpu g;

	gf_mig_gpu_init(&g, GF_MIG_H100_80GB, true);
	gf_mig_apply_layout(&g, &l[6]);
	assert_int_equal(gf_mig_free_mask(&g), 0u);
	assert_int_equal(gf_mig_free_compute(&g), 0);
	assert_int_equal(gf_mig_layouts(GF_MIG_A30_24GB, l, GF_MIG_MAX_LAYOUTS), 4);
	assert_string_equal(l[3].name, "all-balanced");
	gf_mig_gpu_init(&g, GF_MIG_A30_24GB, true);
	assert_int_equal(gf_mig_apply_layout(&g, &l[3]), GF_OK);
	assert_int_equal(g.ninst, 3);
}

static struct gf_mig_node one_node(int ngpus, bool mig)
{
	struct gf_mig_node n;

	memset(&n, 0, sizeof(n));
	n.cpu_free = 64000;
	n.mem_free = 1 << 20;
	n.ngpus = ngpus;
	for (int i = 0; i < ngpus; i++)
		gf_mig_gpu_init(&n.gpu[i], GF_MIG_H100_80GB, mig);
	return n;
}

static struct gf_mig_ask mig_ask(int profile)
{
	return (struct gf_mig_ask){ .cpu_milli = 1000, .mem_mib = 1024, .count = 1,
				    .model = GF_MIG_H100_80GB, .profile = profile };
}

/* A 1g then a 4g on one GPU: the first free slot strands the 4g, gpufleet's slot does not. */
static void test_dynamic_keeps_4g(void **state)
{
	int m = GF_MIG_H100_80GB, p1 = prof(m, "1g.10gb"), p4 = prof(m, "4g.40gb");
	struct gf_mig_class cls[] = { { .cpu_milli = 1000, .profile = p1, .p = 0.5 },
				      { .cpu_milli = 1000, .profile = p4, .p = 0.5 } };
	struct gf_mig_target t;
	struct gf_mig_ask a1 = mig_ask(p1), a4 = mig_ask(p4);
	struct gf_mig_pick pk;

	(void)state;
	assert_int_equal(gf_mig_target_init(&t, m, cls, 2), GF_OK);
	for (int mode = GF_MIG_DYNAMIC_FIRST; mode <= GF_MIG_DYNAMIC; mode++) {
		struct gf_mig_node n = one_node(1, true);

		assert_int_equal(gf_mig_choose(&n, 1, NULL, (enum gf_mig_mode)mode, &t, &a1, &pk), GF_OK);
		assert_true(pk.create[0]);
		assert_int_equal(pk.start[0], mode == GF_MIG_DYNAMIC ? 4 : 0);
		assert_int_equal(gf_mig_bind(&n, &a1, &pk), GF_OK);
		assert_int_equal(gf_mig_choose(&n, 1, NULL, (enum gf_mig_mode)mode, &t, &a4, &pk),
				 mode == GF_MIG_DYNAMIC ? GF_OK : GF_NOENT);
		assert_int_equal(gf_mig_check(&n.gpu[0], NULL, 0), GF_OK);
	}
}

/* Dynamic prefers the node whose fragmentation grows least: the GPU already cut, not a whole one. */
static void test_dynamic_packs(void **state)
{
	int m = GF_MIG_H100_80GB, p1 = prof(m, "1g.10gb"), p7 = prof(m, "7g.80gb");
	struct gf_mig_class cls[] = { { .cpu_milli = 1000, .profile = p1, .p = 0.5 },
				      { .cpu_milli = 1000, .profile = p7, .p = 0.5 } };
	struct gf_mig_target t;
	struct gf_mig_node n[2] = { one_node(1, true), one_node(1, true) };
	struct gf_mig_ask a1 = mig_ask(p1);
	struct gf_mig_pick pk;
	uint32_t order[2] = { 1, 0 };

	(void)state;
	assert_int_equal(gf_mig_target_init(&t, m, cls, 2), GF_OK);
	/* Node 0 holds a 1g at 0 (its 7g is gone already); node 1 is whole and first in the order. */
	assert_int_equal(gf_mig_create(&n[0].gpu[0], p1, 0, NULL), GF_OK);
	n[0].gpu[0].inst[0].pods = 1;
	assert_float_equal(gf_mig_node_frag(&n[0], &t), 0.5 * 1 + 0.5 * 7, 1e-12);
	assert_float_equal(gf_mig_node_frag(&n[1], &t), 0.5 * 1, 1e-12);
	assert_int_equal(gf_mig_choose(n, 2, order, GF_MIG_DYNAMIC, &t, &a1, &pk), GF_OK);
	assert_int_equal(pk.node, 0);
	assert_int_equal(pk.start[0], 1);
	/* Dynamic-first takes the first node in the order: the whole GPU. */
	assert_int_equal(gf_mig_choose(n, 2, order, GF_MIG_DYNAMIC_FIRST, &t, &a1, &pk), GF_OK);
	assert_int_equal(pk.node, 1);
	/* CPU-only pods in dynamic: where they strand the least (node 1's CPU is short). */
	struct gf_mig_ask cpu = { .cpu_milli = 500, .mem_mib = 10, .profile = -1 };

	n[1].cpu_free = 1200;	/* after this pod it could take no GPU class */
	assert_int_equal(gf_mig_choose(n, 2, order, GF_MIG_DYNAMIC, &t, &cpu, &pk), GF_OK);
	assert_int_equal(pk.node, 0);
	assert_int_equal(gf_mig_choose(n, 2, order, GF_MIG_STATIC, NULL, &cpu, &pk), GF_OK);
	assert_int_equal(pk.node, 1);
}

/* MIG pods never on a GPU outside MIG mode, and whole or shared pods never on a MIG-mode GPU. */
static void test_modes_never_mix(void **state)
{
	int m = GF_MIG_H100_80GB, p1 = prof(m, "1g.10gb");
	struct gf_mig_node n = one_node(2, true);
	struct gf_mig_ask mig = mig_ask(p1);
	struct gf_mig_ask whole = { .cpu_milli = 1000, .mem_mib = 1, .count = 1, .profile = -1, .milli = 1000 };
	struct gf_mig_ask share = whole;
	struct gf_mig_pick pk;

	(void)state;
	share.milli = 300;
	gf_mig_gpu_init(&n.gpu[1], m, false);	/* GPU 1 out of MIG mode */
	/* The whole pod goes to GPU 1, the MIG pod to GPU 0. */
	assert_int_equal(gf_mig_choose(&n, 1, NULL, GF_MIG_DYNAMIC_FIRST, NULL, &whole, &pk), GF_OK);
	assert_int_equal(pk.gpu[0], 1);
	assert_int_equal(gf_mig_bind(&n, &whole, &pk), GF_OK);
	assert_int_equal(gf_mig_choose(&n, 1, NULL, GF_MIG_DYNAMIC_FIRST, NULL, &mig, &pk), GF_OK);
	assert_int_equal(pk.gpu[0], 0);
	/* No GPU outside MIG mode has room: the share fits nowhere, though GPU 0 is all free. */
	assert_int_equal(gf_mig_choose(&n, 1, NULL, GF_MIG_DYNAMIC_FIRST, NULL, &share, &pk), GF_NOENT);
	/* Forcing either onto the wrong kind of GPU is refused, and changes nothing. */
	struct gf_mig_node before = n;
	struct gf_mig_pick bad = { .node = 0, .n = 1, .gpu = { 0 }, .start = { -1 } };

	assert_int_equal(gf_mig_bind(&n, &share, &bad), GF_STATE);
	assert_memory_equal(&n, &before, sizeof(n));
	n.gpu[1].milli_free = 1000;	/* GPU 1 free again: still not for a MIG pod */
	before = n;
	bad = (struct gf_mig_pick){ .node = 0, .n = 1, .gpu = { 1 }, .start = { 0 }, .create = { true } };
	assert_int_equal(gf_mig_bind(&n, &mig, &bad), GF_STATE);
	assert_memory_equal(&n, &before, sizeof(n));
}

static void test_static_and_unbind(void **state)
{
	int m = GF_MIG_H100_80GB;
	struct gf_mig_layout l[GF_MIG_MAX_LAYOUTS];
	struct gf_mig_node n = one_node(1, true);
	struct gf_mig_ask a = mig_ask(gf_mig_profile_for_mem(m, 15000));	/* 1g.20gb */
	struct gf_mig_pick pk;

	(void)state;
	gf_mig_layouts(m, l, GF_MIG_MAX_LAYOUTS);
	assert_int_equal(gf_mig_apply_layout(&n.gpu[0], &l[6]), GF_OK);	/* all-balanced */
	/* Asked by memory: the smallest instance holding 15 GB is the 2g.20gb. */
	assert_int_equal(gf_mig_choose(&n, 1, NULL, GF_MIG_STATIC, NULL, &a, &pk), GF_OK);
	assert_false(pk.create[0]);
	int j;

	for (j = 0; j < n.gpu[0].ninst; j++)
		if (n.gpu[0].inst[j].start == pk.start[0])
			break;
	assert_string_equal(gf_mig_model(m)->profiles[n.gpu[0].inst[j].profile].name, "2g.20gb");
	/* Named exactly (nvidia.com/mig-1g.20gb): none in this layout. */
	a.exact = true;
	assert_int_equal(gf_mig_choose(&n, 1, NULL, GF_MIG_STATIC, NULL, &a, &pk), GF_NOENT);
	a.exact = false;
	assert_int_equal(gf_mig_choose(&n, 1, NULL, GF_MIG_STATIC, NULL, &a, &pk), GF_OK);
	assert_int_equal(gf_mig_bind(&n, &a, &pk), GF_OK);
	/* Static: the instance stays when its pod leaves. */
	assert_int_equal(gf_mig_unbind(&n, &a, &pk, false), GF_OK);
	assert_int_equal(n.gpu[0].ninst, 4);
	assert_int_equal(gf_mig_unbind(&n, &a, &pk, false), GF_RANGE);
	/* Dynamic: created for the pod, destroyed after it. */
	struct gf_mig_node d = one_node(1, true);

	assert_int_equal(gf_mig_choose(&d, 1, NULL, GF_MIG_DYNAMIC_FIRST, NULL, &a, &pk), GF_OK);
	assert_int_equal(gf_mig_bind(&d, &a, &pk), GF_OK);
	assert_int_equal(d.gpu[0].ninst, 1);
	assert_int_equal(d.cpu_free, 63000);
	assert_int_equal(gf_mig_unbind(&d, &a, &pk, true), GF_OK);
	assert_int_equal(d.gpu[0].ninst, 0);
	assert_int_equal(d.cpu_free, 64000);
}

/* A small experiment: every mode runs, places what it can, and dynamic is not below dynamic-first. */
static void test_experiment_small(void **state)
{
	int m = GF_MIG_H100_80GB;
	struct gf_node_spec nodes[4];
	struct gf_pod_spec pods[64];
	struct gf_mig_class cls[3];
	struct gf_mig_target t;
	struct gf_mig_exp_result r[3];
	const int milli[] = { 100, 500, 250, 1000, 120 };

	(void)state;
	for (int i = 0; i < 4; i++)
		nodes[i] = tu_node("n", 32000, 1 << 20, 2, 0);
	for (int i = 0; i < 64; i++)
		pods[i] = tu_pod("p", 1000, 1024, 1, milli[i % 5], 0);
	cls[0] = (struct gf_mig_class){ 1000, gf_mig_profile_for_mem(m, 8192), 0.6 };
	cls[1] = (struct gf_mig_class){ 1000, gf_mig_profile_for_mem(m, 40960), 0.2 };
	cls[2] = (struct gf_mig_class){ 1000, 5, 0.2 };
	assert_int_equal(gf_mig_target_init(&t, m, cls, 3), GF_OK);
	for (int mode = 0; mode < 3; mode++) {
		struct gf_mig_exp_config c = { .model = m, .mode = (enum gf_mig_mode)mode, .layout = 6, .seed = 42 };

		assert_int_equal(gf_mig_exp_run(nodes, 4, pods, 64, &t, &c, &r[mode]), GF_OK);
		assert_int_equal(r[mode].attempts, 64);
		assert_true(r[mode].placed > 0 && r[mode].placed < 64);
		assert_true(r[mode].held_end >= r[mode].placed_end);
	}
	assert_true(r[GF_MIG_DYNAMIC].placed_end >= r[GF_MIG_DYNAMIC_FIRST].placed_end);
	/* all-balanced has no 7g: whole-GPU pods never fit there. */
	assert_true(r[GF_MIG_STATIC].gpu_placed <= 64 - 64 / 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tables),
		cmocka_unit_test(test_profile_for_mem),
		cmocka_unit_test(test_bad_slot_blocks_4g),
		cmocka_unit_test(test_rules),
		cmocka_unit_test(test_frag_and_best_start),
		cmocka_unit_test(test_layouts),
		cmocka_unit_test(test_dynamic_keeps_4g),
		cmocka_unit_test(test_dynamic_packs),
		cmocka_unit_test(test_modes_never_mix),
		cmocka_unit_test(test_static_and_unbind),
		cmocka_unit_test(test_experiment_small),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
