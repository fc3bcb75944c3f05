/*
 * tests/cost/test_cost_rules.c - the accounting rules of cost/cost.h, on
 * inputs small enough to compute by hand (the expected values are written
 * out with their arithmetic next to them).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "cost/cost.h"

#define H 3600
#define NEAR(a, b) assert_near_(#a, (a), (b), __LINE__)

static void assert_near_(const char *what, double got, double want, int line)
{
	if (fabs(got - want) > 1e-9 * (1 + fabs(want))) {
		print_error("line %d: %s = %.12g, want %.12g\n", line, what, got, want);
		fail();
	}
}

static struct gf_cost_prices prices(const char *text)
{
	struct gf_cost_prices p;
	char err[256];
	gf_err e = gf_cost_prices_parse(text, strlen(text), "prices.csv", &p, err, sizeof(err));
	if (e)
		print_error("%s\n", err);
	assert_int_equal(e, GF_OK);
	return p;
}

static const char *sheet = "model,on_demand_per_hour,spot_per_hour\n"
			   "H100,4.00,1.50\n"
			   "A100,2.00,0.80\n";

static struct gf_cost_report compute(const struct gf_cost_alloc *a, size_t na,
				     const struct gf_cost_gpu *g, size_t ng,
				     const struct gf_cost_prices *p, const char *agg, int64_t ws,
				     int64_t we)
{
	struct gf_cost_use u[32];
	assert_true(na <= 32);
	for (size_t i = 0; i < na; i++)
		u[i] = gf_cost_alloc_use(&a[i], ws, we);
	struct gf_cost_input in = { .start = ws, .end = we, .uses = u, .nuses = na, .gpus = g,
				    .ngpus = ng, .prices = p, .include_idle = true };
	char err[256];
	assert_int_equal(gf_cost_parse_aggregate(agg, &in.agg, err, sizeof(err)), GF_OK);
	struct gf_cost_report r;
	gf_err e = gf_cost_compute(&in, &r, err, sizeof(err));
	if (e)
		print_error("%s\n", err);
	assert_int_equal(e, GF_OK);
	return r;
}

static const struct gf_cost_row *row(const struct gf_cost_report *r, const char *name)
{
	for (size_t i = 0; i < r->nrows; i++)
		if (!strcmp(r->rows[i].name, name))
			return &r->rows[i];
	print_error("no row %s\n", name);
	fail();
	return NULL;
}

/* Four pods of 25 % on one GPU for one hour are 1.000 GPU-hour; whole-GPU billing says 4. */
static void test_four_quarters_one_gpu_hour(void **state)
{
	(void)state;
	struct gf_cost_prices p = prices(sheet);
	struct gf_cost_alloc a[4];
	const char *pods[] = { "p0", "p1", "p2", "p3" };
	for (int i = 0; i < 4; i++)
		a[i] = (struct gf_cost_alloc){ .ns = "team-a", .pod = pods[i], .node = "n1", .uuid = "GPU-1",
					       .model = "H100", .share = 0.25, .start = 0, .end = H, .util = -1 };
	struct gf_cost_gpu g = { "n1", "GPU-1", "H100", false, H, 0 };
	struct gf_cost_report r = compute(a, 4, &g, 1, &p, "namespace", 0, H);
	const struct gf_cost_row *t = row(&r, "team-a");
	NEAR(t->gpu_hours, 1.0);       /* 4 x 0.25 x 1 h */
	NEAR(t->whole_gpu_hours, 4.0); /* 4 x 1 x 1 h */
	NEAR(t->cost, 4.0);            /* 1 GPU-h x 4.00 */
	NEAR(t->whole_cost, 16.0);     /* 4 GPU-h x 4.00 */
	NEAR(r.idle_hours, 0);
	NEAR(r.saved_by_sharing, 12.0);
	assert_true(r.reconciled);
	assert_string_equal(r.rows[r.nrows - 1].name, "__idle__");
	gf_cost_report_release(&r);
	gf_cost_prices_release(&p);
}

/*
 * Two GPUs for 2 h (4 GPU-h capacity), one spot (A100) and one on-demand
 * (H100).  team-a: 0.5 of the H100 for 2 h; team-b: 0.3 of the A100 for
 * 1 h and a whole A100 share?  No: 0.3 for 1 h.  Idle: H100 2 - 1 = 1 h
 * (4.00), A100 2 - 0.3 = 1.7 h (spot 0.80 = 1.36).
 */
static void test_idle_spot_reconcile(void **state)
{
	(void)state;
	struct gf_cost_prices p = prices(sheet);
	struct gf_cost_alloc a[] = {
		{ .ns = "team-a", .pod = "a", .node = "n1", .uuid = "G1", .model = "H100", .share = 0.5,
		  .start = 0, .end = 2 * H, .util = 0.25 },
		{ .ns = "team-b", .pod = "b", .node = "n2", .uuid = "G2", .model = "A100", .share = 0.3,
		  .start = H, .end = 5 * H, .util = -1 }, /* 1 h inside the window */
	};
	struct gf_cost_gpu g[] = { { "n1", "G1", "H100", false, 2 * H, 0 }, { "n2", "G2", "A100", true, 2 * H, 0 } };
	struct gf_cost_report r = compute(a, 2, g, 2, &p, "namespace", 0, 2 * H);
	assert_int_equal(r.nrows, 3);
	const struct gf_cost_row *ta = row(&r, "team-a"), *tb = row(&r, "team-b"), *id = row(&r, "__idle__");
	NEAR(ta->gpu_hours, 1.0);    /* 0.5 x 2 h */
	NEAR(ta->cost, 4.0);         /* 1 x 4.00 */
	NEAR(ta->used_hours, 0.5);   /* 0.25 x 2 h */
	NEAR(gf_cost_row_efficiency(ta), 0.5); /* 0.5 used / 1.0 allocated */
	NEAR(tb->gpu_hours, 0.3);    /* 0.3 x 1 h */
	NEAR(tb->cost, 0.24);        /* 0.3 x 0.80 (spot) */
	NEAR(tb->on_demand_cost, 0.6);
	NEAR(gf_cost_row_efficiency(tb), 0);
	NEAR(id->gpu_hours, 2.7);    /* (2 - 1) + (2 - 0.3) */
	NEAR(id->cost, 4.0 + 1.7 * 0.8);
	NEAR(r.capacity_hours, 4.0);
	NEAR(r.capacity_cost, 2 * 4.0 + 2 * 0.8);
	NEAR(r.workload_hours + r.idle_hours, r.capacity_hours);
	NEAR(r.workload_cost + r.idle_cost, r.capacity_cost);
	/* saved by spot: team-b 0.3 h x (2.00 - 0.80) + idle A100 1.7 h x 1.20 */
	NEAR(r.saved_by_spot, 0.3 * 1.2 + 1.7 * 1.2);
	/* saved by sharing: whole = 2 h x 4.00 + 1 h x 0.80 = 8.80; shares = 4.00 + 0.24 */
	NEAR(r.saved_by_sharing, 8.8 - 4.24);
	assert_true(r.reconciled);
	/* idle per (node, model) */
	assert_int_equal(r.nidle, 2);
	assert_string_equal(r.idle[0].node, "n1");
	NEAR(r.idle[0].hours, 1.0);
	NEAR(r.idle[1].cost, 1.36);
	gf_cost_report_release(&r);
	gf_cost_prices_release(&p);
}

/* MIG: a 1g.10gb slice is 1/7 of the GPU, a 3g.40gb 3/7; seven 1g slices reconcile to the GPU. */
static void test_mig_fraction(void **state)
{
	(void)state;
	NEAR(gf_cost_mig_fraction("1g.10gb"), 1.0 / 7);
	NEAR(gf_cost_mig_fraction("3g.40gb"), 3.0 / 7);
	NEAR(gf_cost_mig_fraction("7g.80gb"), 1.0);
	NEAR(gf_cost_mig_fraction("1c.3g.40gb"), 3.0 / 7);
	NEAR(gf_cost_mig_fraction("8g.80gb"), -1);
	NEAR(gf_cost_mig_fraction("nvidia.com/gpu"), -1);
	NEAR(gf_cost_mig_fraction("1g.10"), -1);
	struct gf_cost_prices p = prices(sheet);
	struct gf_cost_alloc a[2] = {
		{ .ns = "x", .pod = "m1", .node = "n", .uuid = "G", .model = "A100",
		  .share = gf_cost_mig_fraction("1g.10gb"), .start = 0, .end = 7 * H, .util = -1 },
		{ .ns = "y", .pod = "m3", .node = "n", .uuid = "G", .model = "A100",
		  .share = gf_cost_mig_fraction("3g.40gb"), .start = 0, .end = 7 * H, .util = -1 },
	};
	struct gf_cost_gpu g = { "n", "G", "A100", false, 7 * H, 0 };
	struct gf_cost_report r = compute(a, 2, &g, 1, &p, "pod", 0, 7 * H);
	NEAR(row(&r, "x/m1")->gpu_hours, 1.0); /* 1/7 x 7 h */
	NEAR(row(&r, "y/m3")->gpu_hours, 3.0); /* 3/7 x 7 h */
	NEAR(row(&r, "__idle__")->gpu_hours, 3.0);
	NEAR(row(&r, "y/m3")->cost, 6.0);
	assert_true(r.reconciled);
	gf_cost_report_release(&r);
	gf_cost_prices_release(&p);
}

/* Memory shares: 20 GiB of an 80 GiB GPU is 0.25; the larger of milli and memory counts. */
static void test_memory_share(void **state)
{
	(void)state;
	NEAR(gf_cost_share(0, 20480, 81920), 0.25);
	NEAR(gf_cost_share(500, 20480, 81920), 0.5);
	NEAR(gf_cost_share(100, 40960, 81920), 0.5);
	NEAR(gf_cost_share(1000, 0, 0), 1.0);
	NEAR(gf_cost_share(0, 20480, 0), 0); /* GPU memory unknown: no memory share */
	NEAR(gf_cost_share(0, 200000, 81920), 1.0);
}

/* Labels: label:team groups, pods without it go to __unallocated__; comma lists join with '/'. */
static void test_aggregate_label(void **state)
{
	(void)state;
	struct gf_cost_prices p = prices(sheet);
	struct gf_cost_label la[] = { { "team", "ml" } }, lb[] = { { "app", "x" } };
	struct gf_cost_alloc a[] = {
		{ .ns = "n1", .pod = "a", .node = "k1", .uuid = "G1", .model = "H100", .labels = la,
		  .nlabels = 1, .share = 1, .start = 0, .end = H, .util = 1 },
		{ .ns = "n2", .pod = "b", .node = "k1", .uuid = "G2", .model = "H100", .labels = lb,
		  .nlabels = 1, .share = 0.5, .start = 0, .end = H, .util = 0.1 },
	};
	struct gf_cost_gpu g[] = { { "k1", "G1", "H100", false, H, 0 }, { "k1", "G2", "H100", false, H, 0 } };
	struct gf_cost_report r = compute(a, 2, g, 2, &p, "label:team", 0, H);
	NEAR(row(&r, "ml")->gpu_hours, 1.0);
	NEAR(row(&r, "__unallocated__")->gpu_hours, 0.5);
	NEAR(gf_cost_row_efficiency(row(&r, "__unallocated__")), 0.2); /* 0.1 h used / 0.5 h */
	NEAR(r.used_hours / r.known_hours, 1.1 / 1.5);
	gf_cost_report_release(&r);
	r = compute(a, 2, g, 2, &p, "node,namespace", 0, H);
	NEAR(row(&r, "k1/n2")->gpu_hours, 0.5);
	assert_string_equal(row(&r, "k1/n2")->node, "k1");
	gf_cost_report_release(&r);
	gf_cost_prices_release(&p);
}

/* A GPU handed out twice is overcommit, not negative idle; unknown GPUs break reconciliation. */
static void test_overcommit_unmatched(void **state)
{
	(void)state;
	struct gf_cost_prices p = prices(sheet);
	struct gf_cost_alloc a[] = {
		{ .ns = "a", .pod = "a", .node = "k", .uuid = "G", .model = "H100", .share = 0.75, .start = 0, .end = H, .util = -1 },
		{ .ns = "b", .pod = "b", .node = "k", .uuid = "G", .model = "H100", .share = 0.5, .start = 0, .end = H, .util = -1 },
	};
	struct gf_cost_gpu g = { "k", "G", "H100", false, H, 0 };
	struct gf_cost_report r = compute(a, 2, &g, 1, &p, "namespace", 0, H);
	NEAR(r.overcommit_hours, 0.25);
	NEAR(r.idle_hours, 0);
	assert_false(r.reconciled);
	gf_cost_report_release(&r);
	a[1].uuid = "OTHER";
	r = compute(a, 2, &g, 1, &p, "namespace", 0, H);
	NEAR(r.unmatched_hours, 0.5);
	NEAR(r.idle_hours, 0.25);
	assert_false(r.reconciled);
	gf_cost_report_release(&r);
	gf_cost_prices_release(&p);
}

/*
 * A pool of GPUs summed by the store (the pooled recording rules): two H100s, one given out
 * 1.25 times for an hour (0.25 h overcommit) and one idle.  The pool's sums alone (2 h of
 * capacity, 1.25 h of uses) would show 0.75 h idle; GPU by GPU it is 1 h, with 0.25 h over,
 * and the report says so - the same report as the two GPUs given one by one.
 */
static void test_pool_overcommit(void **state)
{
	(void)state;
	struct gf_cost_prices p = prices(sheet);
	struct gf_cost_alloc a[] = {
		{ .ns = "a", .pod = "a", .node = "k", .uuid = "G1", .model = "H100", .share = 0.75, .start = 0, .end = H, .util = -1 },
		{ .ns = "b", .pod = "b", .node = "k", .uuid = "G1", .model = "H100", .share = 0.5, .start = 0, .end = H, .util = -1 },
	};
	struct gf_cost_gpu g[] = { { "k", "G1", "H100", false, H, 0 }, { "k", "G2", "H100", false, H, 0 } };
	struct gf_cost_report per_gpu = compute(a, 2, g, 2, &p, "namespace", 0, H);
	struct gf_cost_alloc pooled[] = { a[0], a[1] };
	pooled[0].node = pooled[1].node = "";
	pooled[0].uuid = pooled[1].uuid = "on-demand/H100";
	struct gf_cost_gpu pool = { "", "on-demand/H100", "H100", false, 2 * H, 0.25 * H };
	struct gf_cost_report r = compute(pooled, 2, &pool, 1, &p, "namespace", 0, H);
	NEAR(r.idle_hours, 1.0);
	NEAR(r.overcommit_hours, 0.25);
	NEAR(r.capacity_hours, 2.0);
	NEAR(r.workload_hours, 1.25);
	assert_false(r.reconciled);
	NEAR(r.idle_hours, per_gpu.idle_hours);
	NEAR(r.overcommit_hours, per_gpu.overcommit_hours);
	NEAR(r.idle_cost, per_gpu.idle_cost);
	NEAR(row(&r, "a")->cost, row(&per_gpu, "a")->cost);
	gf_cost_report_release(&r);
	/* without overcommit the pool reconciles */
	pooled[1].share = 0.25;
	pool.overcommit_seconds = 0;
	r = compute(pooled, 2, &pool, 1, &p, "namespace", 0, H);
	NEAR(r.idle_hours, 1.0);
	assert_true(r.reconciled);
	gf_cost_report_release(&r);
	gf_cost_report_release(&per_gpu);
	gf_cost_prices_release(&p);
}

static void test_missing_price(void **state)
{
	(void)state;
	struct gf_cost_prices p = prices(sheet);
	struct gf_cost_alloc a = { .ns = "a", .pod = "a", .node = "k", .uuid = "G", .model = "T4", .share = 1, .start = 0, .end = H, .util = -1 };
	struct gf_cost_use u = gf_cost_alloc_use(&a, 0, H);
	struct gf_cost_input in = { .start = 0, .end = H, .uses = &u, .nuses = 1, .prices = &p };
	char err[256];
	assert_int_equal(gf_cost_parse_aggregate("namespace", &in.agg, err, sizeof(err)), GF_OK);
	struct gf_cost_report r;
	assert_int_equal(gf_cost_compute(&in, &r, err, sizeof(err)), GF_NOENT);
	assert_non_null(strstr(err, "no price for GPU model 'T4'"));
	gf_cost_prices_release(&p);
	p = prices("model,on_demand_per_hour,spot_per_hour\n*,1.5,\n");
	assert_int_equal(gf_cost_compute(&in, &r, err, sizeof(err)), GF_OK);
	NEAR(r.workload_cost, 1.5);
	gf_cost_report_release(&r);
	gf_cost_prices_release(&p);
}

static void expect_sheet_error(const char *text, const char *want)
{
	struct gf_cost_prices p;
	char err[256] = "";
	assert_int_not_equal(gf_cost_prices_parse(text, strlen(text), "p.csv", &p, err, sizeof(err)), GF_OK);
	if (!strstr(err, want)) {
		print_error("error '%s' does not contain '%s'\n", err, want);
		fail();
	}
	assert_null(p.v);
}

static void test_price_sheet(void **state)
{
	(void)state;
	struct gf_cost_prices p = prices("# comment\ncurrency,EUR\n\nmodel,on_demand_per_hour,spot_per_hour\r\n"
					 " H100 , 4.5 , 2 \r\nA100,3,\n");
	assert_string_equal(p.currency, "EUR");
	assert_int_equal(p.n, 2);
	NEAR(gf_cost_price_find(&p, "H100")->on_demand, 4.5);
	NEAR(gf_cost_price_find(&p, "H100")->spot, 2);
	NEAR(gf_cost_price_find(&p, "A100")->spot, 3); /* empty spot = on-demand */
	assert_null(gf_cost_price_find(&p, "T4"));
	gf_cost_prices_release(&p);
	expect_sheet_error("model,on_demand_per_hour,spot_per_hour\nH100,-1,0\n",
			   "p.csv:2: column 2 (on_demand_per_hour): negative price -1");
	expect_sheet_error("model,on_demand_per_hour,spot_per_hour\nH100,1,-0.5\n",
			   "p.csv:2: column 3 (spot_per_hour): negative price");
	expect_sheet_error("model,on_demand_per_hour,spot_per_hour\nH100,1x,1\n",
			   "p.csv:2: column 2 (on_demand_per_hour): expected a price");
	expect_sheet_error("model,on_demand_per_hour,spot_per_hour\nH100,inf,1\n", "expected a price");
	expect_sheet_error("model,on_demand_per_hour,spot_per_hour\nH100,1,1\nH100,2,2\n",
			   "p.csv:3: column 1 (model): 'H100' is listed twice");
	expect_sheet_error("H100,1,1\n", "p.csv:1: expected the header");
	expect_sheet_error("", "no header");
	expect_sheet_error("model,on_demand_per_hour,spot_per_hour\nH100,1,1,1\n", "expected 3 columns");
}

static void test_windows(void **state)
{
	(void)state;
	int64_t s, e;
	char err[256];
	/* now = 2026-12-01T15:04:22Z, a Tuesday */
	int64_t now = 1796137462;
	char buf[21];
	gf_rfc3339(now, buf);
	assert_string_equal(buf, "2026-12-01T15:04:22Z");
	assert_int_equal(gf_cost_parse_window("7d", now, &s, &e, err, sizeof(err)), GF_OK);
	assert_int_equal(e - s, 7 * 86400);
	assert_int_equal(e, now);
	assert_int_equal(gf_cost_parse_window("today", now, &s, &e, err, sizeof(err)), GF_OK);
	gf_rfc3339(s, buf);
	assert_string_equal(buf, "2026-12-01T00:00:00Z");
	assert_int_equal(gf_cost_parse_window("yesterday", now, &s, &e, err, sizeof(err)), GF_OK);
	assert_int_equal(e - s, 86400);
	assert_int_equal(gf_cost_parse_window("week", now, &s, &e, err, sizeof(err)), GF_OK);
	gf_rfc3339(s, buf);
	assert_string_equal(buf, "2026-11-29T00:00:00Z"); /* Sunday */
	assert_int_equal(gf_cost_parse_window("lastmonth", now, &s, &e, err, sizeof(err)), GF_OK);
	gf_rfc3339(s, buf);
	assert_string_equal(buf, "2026-11-01T00:00:00Z");
	gf_rfc3339(e, buf);
	assert_string_equal(buf, "2026-12-01T00:00:00Z");
	assert_int_equal(gf_cost_parse_window("2024-02-28T00:00:00Z,2024-03-01T00:00:00Z", now, &s, &e, err,
					      sizeof(err)), GF_OK);
	assert_int_equal(e - s, 2 * 86400); /* 2024 is a leap year */
	assert_int_equal(gf_cost_parse_window("1711382400,1711468800", now, &s, &e, err, sizeof(err)), GF_OK);
	assert_int_equal(s, 1711382400);
	assert_int_equal(gf_cost_parse_window("7x", now, &s, &e, err, sizeof(err)), GF_PARSE);
	assert_non_null(strstr(err, "window '7x': expected a duration"));
	assert_int_equal(gf_cost_parse_window("2024-02-30T00:00:00Z,2024-03-01T00:00:00Z", now, &s, &e, err,
					      sizeof(err)), GF_PARSE);
	assert_int_equal(gf_cost_parse_window("1711468800,1711382400", now, &s, &e, err, sizeof(err)), GF_PARSE);
	assert_non_null(strstr(err, "empty"));
	assert_int_equal(gf_cost_parse_window("", now, &s, &e, err, sizeof(err)), GF_PARSE);
	assert_int_equal(gf_cost_parse_window("0d", now, &s, &e, err, sizeof(err)), GF_PARSE);
	int64_t d;
	assert_int_equal(gf_cost_parse_duration("99999999999d", &d, err, sizeof(err)), GF_RANGE);
	assert_int_equal(gf_cost_parse_duration("1w", &d, err, sizeof(err)), GF_OK);
	assert_int_equal(d, 604800);
}

static void test_aggregate_parse(void **state)
{
	(void)state;
	struct gf_cost_aggregate a;
	char err[256];
	assert_int_equal(gf_cost_parse_aggregate("namespace,label:app", &a, err, sizeof(err)), GF_OK);
	assert_int_equal(a.nkeys, 2);
	assert_int_equal(a.keys[1].key, GF_COST_BY_LABEL);
	assert_string_equal(a.keys[1].label, "app");
	assert_int_equal(gf_cost_parse_aggregate("controller", &a, err, sizeof(err)), GF_PARSE);
	assert_non_null(strstr(err, "unknown aggregate 'controller'"));
	assert_int_equal(gf_cost_parse_aggregate("label:", &a, err, sizeof(err)), GF_PARSE);
	assert_int_equal(gf_cost_parse_aggregate("", &a, err, sizeof(err)), GF_PARSE);
	assert_int_equal(gf_cost_parse_aggregate("pod,", &a, err, sizeof(err)), GF_PARSE);
}

/* The OpenCost-shaped set: names, types, and values as computed. */
static void test_render_set(void **state)
{
	(void)state;
	struct gf_cost_prices p = prices(sheet);
	struct gf_cost_alloc a = { .ns = "team \"q\"", .pod = "p", .node = "n1", .uuid = "G1", .model = "H100",
				   .share = 0.25, .start = 0, .end = 2 * H, .util = 0.125 };
	struct gf_cost_gpu g = { "n1", "G1", "H100", false, 2 * H, 0 };
	struct gf_cost_report r = compute(&a, 1, &g, 1, &p, "namespace", 0, 2 * H);
	struct gf_obuf o;
	gf_obuf_init(&o, 1 << 20);
	assert_int_equal(gf_cost_render_set(&r, &o), GF_OK);
	assert_non_null(strstr(o.data, "\"team \\\"q\\\"\":{\"name\":\"team \\\"q\\\"\""));
	assert_non_null(strstr(o.data, "\"window\":{\"start\":\"1970-01-01T00:00:00Z\",\"end\":\"1970-01-01T02:00:00Z\"}"));
	assert_non_null(strstr(o.data, "\"minutes\":120,"));
	assert_non_null(strstr(o.data, "\"gpuCount\":0.25,\"gpuHours\":0.5,\"gpuCost\":2,"));
	assert_non_null(strstr(o.data, "\"gpuEfficiency\":0.5,\"totalCost\":2,"));
	assert_non_null(strstr(o.data, "\"__idle__\":{\"name\":\"__idle__\",\"properties\":{}"));
	assert_non_null(strstr(o.data, "\"gpuHours\":1.5,\"gpuCost\":6,"));
	gf_obuf_release(&o);
	gf_cost_report_release(&r);
	gf_cost_prices_release(&p);
}

/* An empty window is not called reconciled in the table: it says nothing was recorded. */
static void test_render_empty_window(void **state)
{
	(void)state;
	struct gf_cost_prices p = prices(sheet);
	struct gf_cost_report r = compute(NULL, 0, NULL, 0, &p, "namespace", 0, 2 * H);
	assert_true(r.capacity_hours == 0 && r.workload_hours == 0);
	struct gf_obuf o;
	gf_obuf_init(&o, 1 << 20);
	assert_int_equal(gf_cost_render_table(&r, "USD", &o), GF_OK);
	assert_non_null(strstr(o.data, "(nothing recorded in this window: no capacity, no workload)"));
	assert_null(strstr(o.data, "within 0.1 %"));
	gf_obuf_release(&o);
	gf_cost_report_release(&r);
	gf_cost_prices_release(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_four_quarters_one_gpu_hour),
		cmocka_unit_test(test_idle_spot_reconcile),
		cmocka_unit_test(test_mig_fraction),
		cmocka_unit_test(test_memory_share),
		cmocka_unit_test(test_aggregate_label),
		cmocka_unit_test(test_overcommit_unmatched),
		cmocka_unit_test(test_pool_overcommit),
		cmocka_unit_test(test_missing_price),
		cmocka_unit_test(test_price_sheet),
		cmocka_unit_test(test_windows),
		cmocka_unit_test(test_aggregate_parse),
		cmocka_unit_test(test_render_set),
		cmocka_unit_test(test_render_empty_window),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
