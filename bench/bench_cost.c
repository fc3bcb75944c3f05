/*
 * bench/bench_cost.c - our part of a 30-day, namespace-aggregated cost query
 * over 5,000 GPUs: decoding Prometheus' answers, accounting (prices, shares,
 * idle, reconciliation) and rendering OpenCost's JSON.  The Prometheus part
 * is measured separately by bench/cost-prom-bench.sh and bench/cost-prom-pools.sh.
 *
 *   cmake --build build --target bench_cost &&
 *   ./build/bench/bench_cost [GPUS [DAYS [MEAN_HOURS [pools|random]]]]
 *
 * The synthetic record (seed 42): GPUS GPUs on 8-GPU nodes, 4 models, one
 * node in 5 spot; along each GPU, back-to-back allocations of mean length
 * MEAN_HOURS (uniform 0.5x..1.5x) with 10 % gaps; half the GPUs shared by
 * 1-4 pods at a time (shares 0.25/0.5), the rest whole; 40 namespaces, each
 * allocation's drawn from 4 per node ("pools": node pools per team) or from
 * all 40 ("random": the worst case for the answer's size).  The answers are
 * what the namespace query returns (costapi/promsrc.h: Prometheus sums per
 * namespace, GPU and share), a utilization series beside each, a capacity
 * series per GPU, as JSON text exactly as Prometheus prints it; the timing
 * covers everything after the bytes arrived.  Best of 3 runs.  The first
 * run's report is checked against the GPU-hours generated (capacity, each
 * namespace's share-hours, to 1e-6, and that it reconciles): the bench fails
 * on a difference, on an empty record or on a namespace that reads 0.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/rng.h"
#include "cost/cost.h"
#include "costapi/promsrc.h"

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static const char *const models[] = { "NVIDIA-H100-80GB-HBM3", "NVIDIA-A100-SXM4-80GB", "NVIDIA-L40S", "NVIDIA-L4" };

static bool near(double got, double want)
{
	return fabs(got - want) <= 1e-6 * (want > 1 ? want : 1);
}

/* The report against what was generated; prints what differs.  An empty record fails. */
static bool check(const struct gf_cost_report *r, const double want_ns[40], double capacity)
{
	bool ok = capacity > 0 && near(r->capacity_hours, capacity) && r->reconciled;
	double work = 0;
	size_t nns = 0;
	for (int ns = 0; ns < 40; ns++) {
		if (want_ns[ns] <= 0)
			continue;
		char name[16];
		snprintf(name, sizeof(name), "team-%02d", ns);
		const struct gf_cost_row *row = NULL;
		for (size_t i = 0; i < r->nrows && !row; i++)
			if (!strcmp(r->rows[i].name, name))
				row = &r->rows[i];
		if (!row || row->gpu_hours <= 0 || !near(row->gpu_hours, want_ns[ns])) {
			fprintf(stderr, "bench_cost: WRONG ANSWER: %s %.6f GPU-hours, want %.6f\n", name,
				row ? row->gpu_hours : 0, want_ns[ns]);
			ok = false;
		}
		work += want_ns[ns];
		nns++;
	}
	if (capacity <= 0 || work <= 0) {
		fprintf(stderr, "bench_cost: the generated record is empty (capacity %.0f, workload %.0f GPU-hours): "
				"nothing to measure\n", capacity, work);
		return false;
	}
	if (!ok || !near(r->workload_hours, work) || r->nrows != nns + 1) {
		fprintf(stderr, "bench_cost: WRONG ANSWER: capacity %.6f (want %.6f), workload %.6f (want %.6f), "
				"%zu rows (want %zu), %s\n", r->capacity_hours, capacity, r->workload_hours, work, r->nrows,
			nns + 1, r->reconciled ? "reconciled" : "NOT reconciled");
		return false;
	}
	printf("checked: capacity, workload and each of %zu namespaces equal the GPU-hours generated\n", nns);
	return true;
}

#define HEAD "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
#define TAIL "]}}"

int main(int argc, char **argv)
{
	long ngpus = argc > 1 ? strtol(argv[1], NULL, 10) : 5000;
	long days = argc > 2 ? strtol(argv[2], NULL, 10) : 30;
	double mean_h = argc > 3 ? atof(argv[3]) : 12;
	bool pools = !(argc > 4 && !strcmp(argv[4], "random"));
	const int64_t res = 300, w = days * 86400, at = 1796000000;
	struct gf_rng rng;
	gf_rng_init(&rng, 42);
	struct gf_obuf al, cap, ut;
	gf_obuf_init(&al, (size_t)4 << 30);
	gf_obuf_init(&cap, 1u << 30);
	gf_obuf_init(&ut, (size_t)4 << 30);
	gf_obuf_puts(&al, HEAD);
	gf_obuf_puts(&cap, HEAD);
	gf_obuf_puts(&ut, HEAD);
	long series = 0, allocations = 0;
	double want_ns[40] = { 0 }; /* the share-hours generated per namespace */
	static const char *const shares[] = { "1.000", "0.500", "0.250" };
	for (long g = 0; g < ngpus; g++) {
		long node = g / 8;
		const char *model = models[node % 4];
		bool spot = node % 5 == 0, shared = g % 2;
		gf_obuf_printf(&cap, "%s{\"metric\":{\"node\":\"node-%05ld\",\"gpu\":\"%ld\",\"uuid\":\"GPU-%08ld\","
				     "\"model\":\"%s\",\"capacity_type\":\"%s\"},\"value\":[%lld,\"%lld\"]}",
			       g ? "," : "", node, g % 8, g, model, spot ? "spot" : "on-demand", (long long)at,
			       (long long)(w / res));
		/* what the namespace query returns: sums per (namespace, share) on this GPU */
		double steps_of[40][3];
		memset(steps_of, 0, sizeof(steps_of));
		int lanes = shared ? 1 + (int)gf_rng_below(&rng, 4) : 1;
		for (int lane = 0; lane < lanes; lane++) {
			int si = !shared ? 0 : lanes > 2 ? 2 : 1;
			for (int64_t t = 0; t < w;) {
				int64_t len = (int64_t)(mean_h * 3600 * (0.5 + gf_rng_double(&rng)));
				if (t + len > w)
					len = w - t;
				long ns = pools ? (node % 10) * 4 + (long)gf_rng_below(&rng, 4) : (long)gf_rng_below(&rng, 40);
				steps_of[ns][si] += (double)(len / res);
				allocations += len >= res;
				t += len + (int64_t)(len * 0.1);
			}
		}
		for (int ns = 0; ns < 40; ns++) {
			for (int si = 0; si < 3; si++) {
				if (!steps_of[ns][si])
					continue;
				gf_obuf_printf(&al, "%s{\"metric\":{\"namespace\":\"team-%02d\",\"node\":\"node-%05ld\","
						    "\"gpu\":\"%ld\",\"uuid\":\"GPU-%08ld\",\"model\":\"%s\",\"share\":\"%s\"},"
						    "\"value\":[%lld,\"%.3f\"]}",
					       series ? "," : "", ns, node, g % 8, g, model, shares[si], (long long)at,
					       atof(shares[si]) * steps_of[ns][si]);
				gf_obuf_printf(&ut, "%s{\"metric\":{\"namespace\":\"team-%02d\",\"UUID\":\"GPU-%08ld\","
						    "\"gpu\":\"%ld\",\"hostname\":\"node-%05ld\"},\"value\":[%lld,\"%.0f\"]}",
					       series ? "," : "", ns, g, g % 8, node, (long long)at, 40 * steps_of[ns][si]);
				want_ns[ns] += atof(shares[si]) * steps_of[ns][si] * (double)res / 3600;
				series++;
			}
		}
	}
	gf_obuf_puts(&al, TAIL);
	gf_obuf_puts(&cap, TAIL);
	gf_obuf_puts(&ut, TAIL);
	if (gf_obuf_error(&al) || gf_obuf_error(&cap) || gf_obuf_error(&ut)) {
		fprintf(stderr, "bench_cost: out of memory building the answers\n");
		return 1;
	}
	struct gf_cost_price pr[5] = { { "NVIDIA-H100-80GB-HBM3", 4, 1.8 }, { "NVIDIA-A100-SXM4-80GB", 2.5, 1 },
				       { "NVIDIA-L40S", 1.5, 0.65 }, { "NVIDIA-L4", 0.8, 0.3 }, { "*", 2, 0.8 } };
	struct gf_cost_prices prices = { .v = pr, .n = 5, .currency = "USD" };
	struct gf_cost_aggregate agg;
	char err[512];
	gf_cost_parse_aggregate("namespace", &agg, err, sizeof(err));
	double best[3] = { 1e9, 1e9, 1e9 };
	size_t json_len = 0;
	bool ok = true;
	for (int run = 0; run < 3; run++) {
		const char *ans[] = { al.data, cap.data, ut.data, NULL };
		size_t lens[] = { al.len, cap.len, ut.len, 0 };
		double t0 = now();
		struct gf_cost_data d;
		if (gf_cost_data_decode(ans, lens, res, &agg, &d, err, sizeof(err))) {
			fprintf(stderr, "bench_cost: %s\n", err);
			return 1;
		}
		double t1 = now();
		struct gf_cost_input in = { .start = at + res - w, .end = at + res, .uses = d.uses, .nuses = d.nuses,
					    .gpus = d.gpus, .ngpus = d.ngpus, .prices = &prices, .agg = agg,
					    .include_idle = true };
		struct gf_cost_report r;
		if (gf_cost_compute(&in, &r, err, sizeof(err))) {
			fprintf(stderr, "bench_cost: %s\n", err);
			return 1;
		}
		double t2 = now();
		struct gf_obuf o;
		gf_obuf_init(&o, 64u << 20);
		gf_cost_render_set(&r, &o);
		double t3 = now();
		json_len = o.len;
		if (run == 0)
			printf("record: %ld GPUs, %ld days, %ld allocations from %s; namespace query answers: %ld "
			       "allocation series (+ as many utilization series), %.1f MB; report: %zu rows, capacity "
			       "%.0f GPU-h, workload %.0f, idle %.0f, %s\n",
			       ngpus, days, allocations, pools ? "4 namespaces per node" : "any of 40 namespaces", series, (double)(al.len + cap.len + ut.len) / 1e6, r.nrows, r.capacity_hours,
			       r.workload_hours, r.idle_hours, r.reconciled ? "reconciled" : "NOT reconciled");
		gf_obuf_release(&o);
		ok = run > 0 || check(&r, want_ns, (double)(ngpus * w) / 3600);
		gf_cost_report_release(&r);
		gf_cost_data_release(&d);
		if (!ok) /* the record is released below */
			break;
		double t[3] = { t1 - t0, t2 - t1, t3 - t2 };
		for (int k = 0; k < 3; k++)
			if (t[k] < best[k])
				best[k] = t[k];
	}
	if (ok)
		printf("our part, best of 3: decode %.3f s + account %.3f s + render %.4f s = %.3f s (JSON %zu bytes)\n",
		       best[0], best[1], best[2], best[0] + best[1] + best[2], json_len);
	gf_obuf_release(&al);
	gf_obuf_release(&cap);
	gf_obuf_release(&ut);
	return ok ? 0 : 1;
}
