/*
 * tests/test_autoscale.c - sim/autoscale: how many nodes a job asks for, and
 * the bought nodes' lifecycle in a small replay whose GPUs LS pods hold for
 * 20 h (the burst cannot preempt them): nothing bought when never scaling,
 * the provisioning delay respected, the nodes held for their job, every
 * bought node gone by the end, and the scale-down delay billed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sim/autoscale.h"
#include "sim/trace.h"

struct world {
	struct gf_catalog cat;
	struct gf_node_spec *nodes;
	struct gf_pod_spec *pods;
	struct gf_pod_times *times;
	size_t nn, np;
	gf_replay *x;
};

static int setup(void **state)
{
	const char *nodes = "sn,cpu_milli,memory_mib,gpu,model\n"
			    "n0,96000,393216,8,G2\nn1,96000,393216,8,G2\nn2,96000,393216,8,G2\n"
			    "n3,96000,393216,8,G2\nn4,16000,65536,2,T4\n";
	const char *pods = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
			   "deletion_time,scheduled_time\n"
			   "ls0,8000,32768,8,1000,,LS,Running,0,72000,0\n"
			   "ls1,4000,16384,2,1000,,LS,Running,0,72000,0\n"
			   "ls2,8000,32768,8,1000,,LS,Running,0,3600,0\n";
	struct world *w = calloc(1, sizeof(*w));
	struct gf_trace_error err;

	assert_non_null(w);
	gf_catalog_init(&w->cat);
	assert_int_equal(gf_trace_parse_nodes(nodes, strlen(nodes), "n.csv", &w->cat, &w->nodes, &w->nn, &err), GF_OK);
	assert_int_equal(gf_trace_parse_pods_timed(pods, strlen(pods), "p.csv", &w->cat, &w->pods, &w->np, &w->times,
						   &err),
			 GF_OK);
	assert_int_equal(gf_replay_create(w->nodes, w->nn, w->pods, w->times, w->np, &w->cat, &w->x), GF_OK);
	*state = w;
	return 0;
}

static int teardown(void **state)
{
	struct world *w = *state;

	gf_replay_destroy(w->x);
	free(w->nodes);
	free(w->pods);
	free(w->times);
	gf_catalog_release(&w->cat);
	free(w);
	return 0;
}

static void test_nodes_for(void **state)
{
	(void)state;
	assert_int_equal(gf_as_nodes_for(4, 4 * 8000, 8), 4);	/* a gang of 4 x 8 GPUs: a node each */
	assert_int_equal(gf_as_nodes_for(1, 8000, 8), 1);
	assert_int_equal(gf_as_nodes_for(3, 3 * 3000, 8), 2);	/* two 3-GPU pods share a node */
	assert_int_equal(gf_as_nodes_for(4, 4 * 2000, 8), 1);
	assert_int_equal(gf_as_nodes_for(1, 500, 8), 1);	/* a shared pod: one node */
	assert_int_equal(gf_as_nodes_for(40, 40 * 500, 8), 3);	/* 16 half-GPU pods a node */
	assert_int_equal(gf_as_nodes_for(2, 2 * 16000, 8), 2);	/* bigger than a node: one each */
	assert_int_equal(gf_as_nodes_for(3, 0, 8), 0);	/* no GPU: nothing to buy */
	assert_int_equal(gf_as_nodes_for(0, 1000, 8), 0);
}

static struct gf_as_config cfg_of(enum gf_as_mode m)
{
	struct gf_as_config c = gf_as_config_default();

	c.mode = m;
	c.base.seed = 7;
	c.base.load = 0.9;
	c.base.horizon = 3 * 3600;
	c.base.burst_at = 3600;
	return c;
}

static void run(struct world *w, const struct gf_as_config *c, struct gf_as_result *r)
{
	assert_int_equal(gf_as_replay_run(w->x, gf_policy_find("fgd"), c, r), GF_OK);
	assert_int_equal(r->stalled, 0);
	assert_int_equal(r->cls[GF_RC_BURST].jobs, 24);
	assert_int_equal(r->cls[GF_RC_BURST].started, 24);
}

static void test_lifecycle(void **state)
{
	struct world *w = *state;
	struct gf_as_config c = cfg_of(GF_AS_NEVER);
	struct gf_as_result never, fleet, slow, every, lazy;

	run(w, &c, &never);
	assert_int_equal(never.requests, 0);
	assert_int_equal(never.nodes_bought, 0);
	assert_true(never.autoscaled_gpu_h == 0);
	assert_true(never.cls[GF_RC_BURST].wait_p95 > 6 * 3600);	/* behind 20 h of LS pods */

	c = cfg_of(GF_AS_GPUFLEET);
	run(w, &c, &fleet);
	assert_true(fleet.requests >= 20);	/* the burst's jobs (one may fit the warm cluster) */
	assert_int_equal(fleet.gave_up, 0);
	assert_int_equal(fleet.nodes_left, fleet.nodes_bought);	/* all gone by the end */
	/* whole gangs: 16 singles + 8 x 4, less the one that may fit */
	assert_true(fleet.nodes_bought >= 40);
	/* the delay, then at most a look (30 s) and the preemption grace later */
	assert_true(fleet.cls[GF_RC_BURST].wait_p95 >= 600);
	assert_true(fleet.cls[GF_RC_BURST].wait_p95 <= 600 + 30 + 30 + 60);
	/* the burst ran on bought nodes: 40 x 8 GPUs for 2 h at least */
	assert_true(fleet.autoscaled_gpu_h >= 320 * 2.0);
	assert_true(fleet.cost == fleet.autoscaled_gpu_h * c.price);

	c.delay = 1800;
	run(w, &c, &slow);
	assert_true(slow.cls[GF_RC_BURST].wait_p95 >= 1800);
	assert_true(slow.cls[GF_RC_BURST].wait_p95 <= 1800 + 30 + 30 + 60);

	/* a longer scale-down delay bills every bought node that much longer (the run outlasts it) */
	c = cfg_of(GF_AS_GPUFLEET);
	c.scale_down = 3600;
	run(w, &c, &lazy);
	assert_int_equal(lazy.nodes_bought, fleet.nodes_bought);
	assert_true(lazy.autoscaled_gpu_h - fleet.autoscaled_gpu_h >= 0.99 * 8.0 * 0.8333 * (double)fleet.nodes_bought);

	c = cfg_of(GF_AS_EVERY_POD);
	run(w, &c, &every);
	assert_true(every.nodes_bought >= 40);
	assert_int_equal(every.nodes_left, every.nodes_bought);
	assert_true(every.cls[GF_RC_BURST].wait_p95 <= 600 + 30 + 30 + 60);
}

static void test_bad_config(void **state)
{
	struct world *w = *state;
	struct gf_as_config c = cfg_of(GF_AS_GPUFLEET);
	struct gf_as_result r;

	c.check_every = 0;
	assert_int_equal(gf_as_replay_run(w->x, gf_policy_find("fgd"), &c, &r), GF_INVAL);
	c = cfg_of(GF_AS_MODE_COUNT);
	assert_int_equal(gf_as_replay_run(w->x, gf_policy_find("fgd"), &c, &r), GF_INVAL);
	c = cfg_of(GF_AS_GPUFLEET);
	c.delay = -1;
	assert_int_equal(gf_as_replay_run(w->x, gf_policy_find("fgd"), &c, &r), GF_INVAL);
	assert_string_equal(gf_as_mode_name(GF_AS_EVERY_POD), "every-pod");
	assert_string_equal(gf_as_mode_name(GF_AS_MODE_COUNT), "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nodes_for),
		cmocka_unit_test_setup_teardown(test_lifecycle, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_config, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
