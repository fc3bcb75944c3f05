/* tests/test_trace.c - sim/trace: CSV parsing, normalisation and error messages. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sim/reference.h"
#include "sim/trace.h"

static gf_err pods(const char *text, struct gf_catalog *cat, struct gf_pod_spec **out, size_t *n,
		   struct gf_trace_error *err)
{
	return gf_trace_parse_pods(text, strlen(text), "pods.csv", cat, out, n, err);
}

static void expect_pod_error(const char *text, const char *msg)
{
	struct gf_catalog cat;
	struct gf_trace_error err;
	struct gf_pod_spec *out = (void *)1;
	size_t n = 99;

	gf_catalog_init(&cat);
	assert_int_not_equal(pods(text, &cat, &out, &n, &err), GF_OK);
	assert_null(out);	/* nothing half-parsed comes back */
	assert_int_equal(n, 0);
	if (!strstr(err.msg, msg)) {
		print_error("message \"%s\" lacks \"%s\"\n", err.msg, msg);
		fail();
	}
	gf_catalog_release(&cat);
}

static void test_pods_parse_and_normalise(void **state)
{
	struct gf_catalog cat;
	struct gf_trace_error err;
	struct gf_pod_spec *p;
	size_t n;
	const char *text =
		"name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos\r\n"
		"p0,1000,2048,0,0,V100M16,LS\r\n"	/* CPU-only: spec dropped */
		"\n"
		"p1,2000,0,1,1000,|T4||,BE\n"		/* spec normalised */
		"p2,3000,10,2,1000,,LS\n";

	(void)state;
	gf_catalog_init(&cat);
	assert_int_equal(pods(text, &cat, &p, &n, &err), GF_OK);
	assert_int_equal(n, 3);
	assert_string_equal(p[0].name, "p0");
	assert_int_equal(p[0].gpu_count, 0);
	assert_int_equal(p[0].gpu_milli, 0);
	assert_int_equal(p[0].spec, 0);
	assert_int_equal(p[1].gpu_milli, 1000);
	assert_string_equal(cat.specs[p[1].spec].text, "T4");
	assert_int_equal(p[2].gpu_count, 2);
	assert_int_equal(p[2].cpu_milli, 3000);
	assert_int_equal(p[2].mem_mib, 10);
	free(p);

	/* The multigpu files have five columns only. */
	assert_int_equal(pods("name,cpu_milli,memory_mib,num_gpu,gpu_milli\nq,1,2,1,50\n", &cat, &p, &n, &err),
			 GF_OK);
	assert_int_equal(p[0].gpu_milli, 50);
	free(p);
	gf_catalog_release(&cat);
}

static void test_pods_errors(void **state)
{
	(void)state;
	expect_pod_error("", "pods.csv:1: file is empty");
	expect_pod_error("name,cpu_milli,memory_mib,num_gpu\n", "header lacks the column \"gpu_milli\"");
	expect_pod_error("name,cpu_milli,memory_mib,num_gpu,gpu_milli\n", "no pods");
	expect_pod_error("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1,2,x,4\n",
			 "pods.csv:2: column 4 (num_gpu): expected a non-negative integer, found \"x\"");
	expect_pod_error("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1,2,1,500\nq,-5,2,1,4\n",
			 "pods.csv:3: column 2 (cpu_milli): expected an integer in 0..");
	expect_pod_error("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1,2,17,500\n",
			 "column 4 (num_gpu): expected an integer in 0..16, found \"17\"");
	expect_pod_error("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1,2\n",
			 "pods.csv:2: column 4 (num_gpu) is missing: the line has 3 columns");
	/* a share without a GPU: refused (it was dropped silently) */
	expect_pod_error("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1,2,0,500\n",
			 "pods.csv:2: column 5 (gpu_milli): a pod with num_gpu 0 takes no GPU share, found 500");
	expect_pod_error("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1,2,1,0\n",
			 "column 5 (gpu_milli): a pod asking for 1 GPU(s) needs a share in 1..1000, found 0");
	/* Above one GPU's 1000 thousandths: rejected, not clamped (issue 10). */
	expect_pod_error("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1,2,1,1000\nq,1,2,1,1001\n",
			 "pods.csv:3: column 5 (gpu_milli): expected an integer in 0..1000, found \"1001\"");
	expect_pod_error("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1,2,2,1500\n",
			 "pods.csv:2: column 5 (gpu_milli): expected an integer in 0..1000, found \"1500\"");
	/* gf_gpu_milli_parse's rule (the scheduler's), 0 = no share added: signs, junk, huge values. */
	expect_pod_error("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1,2,1,-7\n",
			 "pods.csv:2: column 5 (gpu_milli): expected an integer in 0..1000, found \"-7\"");
	expect_pod_error("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1,2,1,+5\n",
			 "pods.csv:2: column 5 (gpu_milli): expected a non-negative integer, found \"+5\"");
	expect_pod_error("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1,2,1,5m\n",
			 "pods.csv:2: column 5 (gpu_milli): expected a non-negative integer, found \"5m\"");
	expect_pod_error("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1,2,1,99999999999999999999\n",
			 "pods.csv:2: column 5 (gpu_milli): expected an integer in 0..1000, found \"99999999999999999999\"");
	expect_pod_error("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1,2,0,1001\n",
			 "pods.csv:2: column 5 (gpu_milli): expected an integer in 0..1000, found \"1001\"");
	/* A value cut in the message is cut between UTF-8 characters: 39 'x' then a 2-byte 'é'. */
	expect_pod_error("name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
			 "p,xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\xC3\xA9tc,2,1,5\n",
			 "found \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...\"");
	expect_pod_error("name,cpu_milli,memory_mib,num_gpu,gpu_milli\n,1,2,1,5\n",
			 "column 1 (name): expected a name, found an empty field");
	expect_pod_error("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,99999999999999999999,2,1,5\n",
			 "column 2 (cpu_milli): expected an integer");
}

static void test_nodes(void **state)
{
	struct gf_catalog cat;
	struct gf_trace_error err;
	struct gf_node_spec *nd = (void *)1;
	size_t n;
	const char *ok = "sn,cpu_milli,memory_mib,gpu,model\na,96000,1024,8,G2\nb,1000,10,0,\nc,1,1,2,G2\n";

	(void)state;
	gf_catalog_init(&cat);
	assert_int_equal(gf_trace_parse_nodes(ok, strlen(ok), "nodes.csv", &cat, &nd, &n, &err), GF_OK);
	assert_int_equal(n, 3);
	assert_int_equal(nd[0].ngpus, 8);
	assert_int_equal(nd[0].model, nd[2].model);
	assert_int_equal(nd[1].model, -1);
	assert_int_equal(cat.nmodels, 1);
	free(nd);
	const char *bad = "sn,cpu_milli,memory_mib,gpu,model\na,96000,1024,4.5,G2\n";

	assert_int_equal(gf_trace_parse_nodes(bad, strlen(bad), "nodes.csv", &cat, &nd, &n, &err), GF_PARSE);
	assert_null(nd);
	assert_string_equal(err.msg, "nodes.csv:2: column 4 (gpu): expected a non-negative integer, found \"4.5\"");
	gf_catalog_release(&cat);
}

/* A UTF-8 byte-order mark (spreadsheets save one) is skipped, not read as part of the first column's name. */
static void test_byte_order_mark(void **state)
{
	struct gf_catalog cat;
	struct gf_trace_error err;
	struct gf_node_spec *nd;
	struct gf_pod_spec *p;
	struct gf_reference ref;
	size_t n;
	const char *nodes = "\xEF\xBB\xBFsn,cpu_milli,memory_mib,gpu,model\r\na,96000,1024,8,G2\r\n";
	const char *pods_bom = "\xEF\xBB\xBFname,cpu_milli,memory_mib,num_gpu,gpu_milli\nq,1,2,1,50\n";
	const char *refs = "\xEF\xBB\xBFworkload,policy,seeds,alloc_at_100,alloc_at_130,alloc_min_130,"
			   "alloc_max_130,frag_at_100,frag_at_130\nw,FGD,10,95.2,95.39,95.27,95.49,4.73,4.57\n";

	(void)state;
	gf_catalog_init(&cat);
	assert_int_equal(gf_trace_parse_nodes(nodes, strlen(nodes), "nodes.csv", &cat, &nd, &n, &err), GF_OK);
	assert_int_equal(n, 1);
	assert_string_equal(nd[0].name, "a");
	free(nd);
	assert_int_equal(pods(pods_bom, &cat, &p, &n, &err), GF_OK);
	assert_int_equal(n, 1);
	assert_string_equal(p[0].name, "q");
	free(p);
	assert_int_equal(gf_reference_parse(refs, strlen(refs), "ref.csv", &ref, &err), GF_OK);
	assert_int_equal(ref.n, 1);
	gf_reference_release(&ref);
	gf_catalog_release(&cat);
	/* Only at the start: a mark anywhere else is data (here: not a number). */
	expect_pod_error("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,\xEF\xBB\xBF" "1,2,1,5\n",
			 "pods.csv:2: column 2 (cpu_milli): expected a non-negative integer");
	/* A mark alone is an empty file. */
	expect_pod_error("\xEF\xBB\xBF", "pods.csv:1: file is empty");
}

static void test_reference(void **state)
{
	struct gf_reference ref;
	struct gf_trace_error err;
	const char *text =
		"workload,policy,seeds,alloc_at_100,alloc_at_130,alloc_min_130,alloc_max_130,frag_at_100,frag_at_130\n"
		"w,FGD,10,95.2,95.39,95.27,95.49,4.73,4.57\n";
	const char *bad =
		"workload,policy,seeds,alloc_at_100,alloc_at_130,alloc_min_130,alloc_max_130,frag_at_100,frag_at_130\n"
		"w,FGD,10,95.2,abc,95.27,95.49,4.73,4.57\n";

	(void)state;
	assert_int_equal(gf_reference_parse(text, strlen(text), "ref.csv", &ref, &err), GF_OK);
	assert_int_equal(ref.n, 1);
	assert_non_null(gf_reference_find(&ref, "w", "FGD"));
	assert_null(gf_reference_find(&ref, "w", "BestFit"));
	assert_float_equal(gf_reference_figures(gf_reference_find(&ref, "w", "FGD")).alloc130, 95.39, 1e-12);
	gf_reference_release(&ref);
	assert_int_equal(gf_reference_parse(bad, strlen(bad), "ref.csv", &ref, &err), GF_PARSE);
	assert_string_equal(err.msg, "ref.csv:2: column 5: expected a percentage 0..100, found \"abc\"");
}

#define TIMED_HDR "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"

static void expect_timed_error(const char *text, const char *msg)
{
	struct gf_catalog cat;
	struct gf_trace_error err;
	struct gf_pod_spec *out = (void *)1;
	struct gf_pod_times *times = (void *)1;
	size_t n = 99;

	gf_catalog_init(&cat);
	assert_int_not_equal(gf_trace_parse_pods_timed(text, strlen(text), "t.csv", &cat, &out, &n, &times, &err),
			     GF_OK);
	assert_null(out);
	assert_null(times);
	if (!strstr(err.msg, msg)) {
		print_error("message \"%s\" lacks \"%s\"\n", err.msg, msg);
		fail();
	}
	gf_catalog_release(&cat);
}

static void test_timed_pods(void **state)
{
	const char *text = TIMED_HDR
		"a,1000,1024,1,500,,LS,Running,10,110,20\n"
		"b,2000,2048,2,1000,,BE,Pending,30,90,\n"
		"c,0,0,0,0,,,Succeeded,40,40,40\n"
		"d,0,0,0,0,,Guaranteed,Running,41,50,41\n";
	struct gf_catalog cat;
	struct gf_trace_error err;
	struct gf_pod_spec *p;
	struct gf_pod_times *t;
	size_t n;

	(void)state;
	gf_catalog_init(&cat);
	assert_int_equal(gf_trace_parse_pods_timed(text, strlen(text), "t.csv", &cat, &p, &n, &t, &err), GF_OK);
	assert_int_equal(n, 4);
	assert_int_equal(p[0].arrival, 10);
	assert_int_equal(p[0].duration, 90);	/* deletion - scheduled */
	assert_int_equal(t[0].qos, GF_QOS_LS);
	assert_int_equal(t[1].scheduled, -1);
	assert_int_equal(p[1].duration, 60);	/* never scheduled: deletion - creation */
	assert_int_equal(t[1].qos, GF_QOS_BE);
	assert_int_equal(p[2].duration, 0);
	assert_int_equal(t[2].qos, GF_QOS_NONE);
	assert_int_equal(t[3].qos, GF_QOS_GUARANTEED);
	assert_int_equal(t[0].npods, 1);	/* no pods column: one pod each */
	free(p);
	free(t);
	/* the plain parser reads creation and deletion only (simulate's cost
	 * section bills deletion - creation; packing runs ignore both) */
	assert_int_equal(gf_trace_parse_pods(text, strlen(text), "t.csv", &cat, &p, &n, &err), GF_OK);
	assert_int_equal(p[0].arrival, 10);
	assert_int_equal(p[0].duration, 100);
	assert_int_equal(p[1].duration, 60);
	free(p);
	gf_catalog_release(&cat);
}

/* An untimed list's time columns: optional, may be empty, read by the timed lists' rules. */
static void test_untimed_time_columns(void **state)
{
	const char *text = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time,deletion_time\n"
			   "a,1,1,1,1000,10,110\n"
			   "b,1,1,1,1000,,\n"		/* no times: arrival 0, no duration */
			   "c,1,1,1,1000,20,\n";	/* no deletion: no duration */
	const char *none = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\na,1,1,1,1000\n";
	struct gf_catalog cat;
	struct gf_trace_error err;
	struct gf_pod_spec *p;
	size_t n;

	(void)state;
	gf_catalog_init(&cat);
	assert_int_equal(pods(text, &cat, &p, &n, &err), GF_OK);
	assert_int_equal(n, 3);
	assert_int_equal(p[0].arrival, 10);
	assert_int_equal(p[0].duration, 100);
	assert_int_equal(p[1].arrival, 0);
	assert_int_equal(p[1].duration, -1);
	assert_int_equal(p[2].arrival, 20);
	assert_int_equal(p[2].duration, -1);
	free(p);
	assert_int_equal(pods(none, &cat, &p, &n, &err), GF_OK);
	assert_int_equal(p[0].arrival, 0);
	assert_int_equal(p[0].duration, -1);
	free(p);
	gf_catalog_release(&cat);
	expect_pod_error("name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time,deletion_time\na,1,1,1,1000,100,50\n",
			 "pods.csv:2: column 7 (deletion_time): 50 is before the creation_time 100: a negative duration");
	expect_pod_error("name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time,deletion_time\na,1,1,1,1000,-1,50\n",
			 "pods.csv:2: column 6 (creation_time): expected an integer in 0..");
	expect_pod_error("name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time,deletion_time\na,1,1,1,1000,5\n",
			 "pods.csv:2: column 7 (deletion_time) is missing: the line has 6 columns");
}

static void test_timed_pods_errors(void **state)
{
	(void)state;
	expect_timed_error("name,cpu_milli,memory_mib,num_gpu,gpu_milli\na,1,1,0,0\n",
			   "t.csv:1: header lacks the column \"creation_time\" (a timed pod list needs");
	expect_timed_error(TIMED_HDR "a,1,1,0,0,,LS,Running,100,50,\n",
			   "t.csv:2: column 10 (deletion_time): 50 is before the creation_time 100: a negative duration");
	expect_timed_error(TIMED_HDR "a,1,1,0,0,,LS,Running,100,150,200\n",
			   "t.csv:2: column 10 (deletion_time): 150 is before the scheduled_time 200");
	expect_timed_error(TIMED_HDR "a,1,1,0,0,,LS,Running,100,150,50\n",
			   "t.csv:2: column 11 (scheduled_time): 50 is before the creation_time 100");
	expect_timed_error(TIMED_HDR "a,1,1,0,0,,LS,Running,-5,150,\n",
			   "t.csv:2: column 9 (creation_time): expected an integer in 0..");
	expect_timed_error(TIMED_HDR "a,1,1,0,0,,XL,Running,5,150,\n",
			   "t.csv:2: column 7 (qos): expected LS, BE, Burstable, Guaranteed or nothing, found \"XL\"");
	expect_timed_error(TIMED_HDR "a,1,1,0,0,,LS,Running,5\n",
			   "t.csv:2: column 10 (deletion_time) is missing: the line has 9 columns");
	/* the optional gang size (`gpufleet replay --as-listed`) */
	expect_timed_error("name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time,deletion_time,pods\na,1,1,1,1000,5,9,0\n",
			   "t.csv:2: column 8 (pods): expected an integer in 1..1024, found \"0\"");
	expect_timed_error("name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time,deletion_time,pods\na,1,1,1,1000,5,9,x\n",
			   "t.csv:2: column 8 (pods): expected a non-negative integer, found \"x\"");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pods_parse_and_normalise),
		cmocka_unit_test(test_pods_errors),
		cmocka_unit_test(test_nodes),
		cmocka_unit_test(test_byte_order_mark),
		cmocka_unit_test(test_reference),
		cmocka_unit_test(test_timed_pods),
		cmocka_unit_test(test_timed_pods_errors),
		cmocka_unit_test(test_untimed_time_columns),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
