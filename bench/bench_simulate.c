/*
 * bench/bench_simulate.c - how fast the engine replays the openb default trace.
 *
 * Prints, for one FGD replay (tune 1.3, seed 42), the CPU time of the engine
 * with its shortcuts switched off (the plain method: every feasible node
 * scored for every pod, every GPU tried) and on, best of REPS runs each, and
 * the ratio - both measured in this run on this machine.  It checks that
 * every configuration gives the same curves (a shortcut that changed a result
 * would be a bug).  Then the time of the six paper policies x 10 seeds on one
 * core.  Last, FGD-Fill (gpufleet's own policy) beside FGD: one replay each,
 * default engine, best of REPS, and the ratio (the goal is at most 5x).
 *
 * Reproduce: make bench   (or build/bench/bench_simulate [REPS])
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "sim/openb.h"

static bool same_curves(const struct gf_openb_result *a, const struct gf_openb_result *b)
{
	if (a->nbuckets != b->nbuckets || a->placed != b->placed || a->failed != b->failed)
		return false;
	for (int x = 0; x < a->nbuckets; x++) {
		if (memcmp(&a->alloc[x], &b->alloc[x], sizeof(double)) ||
		    memcmp(&a->frag[x], &b->frag[x], sizeof(double)))
			return false;
	}
	return true;
}

int main(int argc, char **argv)
{
	int reps = argc > 1 ? (int)strtol(argv[1], NULL, 10) : 3;
	struct bench_trace d;
	gf_openb *x;

	if (reps < 1)
		reps = 1;
	bench_trace_load("openb_pod_list_default.csv", false, &d);
	if (gf_openb_create(d.nodes, d.nnodes, d.pods, d.npods, &d.cat, &x))
		return 2;

	struct {
		const char *name;
		bool cache, dedup;
	} cfgs[] = {
		{ "plain (no shortcuts)", false, false },
		{ "+ DEDUP_GPU_CANDIDATES", false, true },
		{ "+ SCORE_CACHE", true, false },
		{ "both (default)", true, true },
	};
	enum { NCFG = sizeof(cfgs) / sizeof(cfgs[0]) };
	struct gf_openb_result res[NCFG];
	double best[NCFG];

	printf("FGD replay of openb_pod_list_default (%zu nodes, %zu pods, tune 1.3, seed 42), one core, best of %d\n\n",
	       d.nnodes, d.npods, reps);
	printf("%-24s %10s %14s %14s %8s\n", "engine", "seconds", "scores computed", "from cache", "speed-up");
	for (int c = 0; c < NCFG; c++) {
		struct gf_openb_config cfg = gf_openb_config_default();

		cfg.features.on[GF_FEAT_SCORE_CACHE] = cfgs[c].cache;
		cfg.features.on[GF_FEAT_DEDUP_GPU_CANDIDATES] = cfgs[c].dedup;
		best[c] = INFINITY;
		for (int r = 0; r < reps; r++) {
			struct gf_openb_result tmp;
			double t0 = bench_cpu_seconds();

			if (gf_openb_run(x, &gf_policy_fgd, &cfg, &tmp)) {
				fprintf(stderr, "bench: run failed\n");
				return 2;
			}
			double t = bench_cpu_seconds() - t0;

			if (t < best[c])
				best[c] = t;
			if (r == 0)
				res[c] = tmp;
			else
				gf_openb_result_release(&tmp);
		}
		printf("%-24s %10.3f %14llu %14llu %7.1fx\n", cfgs[c].name, best[c],
		       (unsigned long long)res[c].scores_computed, (unsigned long long)res[c].scores_cached,
		       best[0] / best[c]);
	}
	int mismatch = 0;

	for (int c = 1; c < NCFG; c++)
		mismatch += !same_curves(&res[0], &res[c]);
	printf("\nFGD alloc@130 %.2f %%; all configurations give identical curves: %s\n",
	       res[NCFG - 1].alloc[130], mismatch ? "NO (bug)" : "yes");

	size_t npol;
	const struct gf_policy_ops *const *all = gf_policy_all(&npol);
	double t0 = bench_cpu_seconds();
	int runs = 0;

	for (size_t k = 0; k < npol; k++) {
		if (!all[k]->in_paper)
			continue;
		for (uint64_t seed = 42; seed <= 51; seed++) {
			struct gf_openb_config cfg = gf_openb_config_default();
			struct gf_openb_result r;

			cfg.seed = seed;
			if (gf_openb_run(x, all[k], &cfg, &r))
				return 2;
			gf_openb_result_release(&r);
			runs++;
		}
	}
	printf("six paper policies x 10 seeds (%d runs) on one core: %.2f s\n", runs, bench_cpu_seconds() - t0);

	const struct gf_policy_ops *vs[] = { &gf_policy_fgd, &gf_policy_fgd_fill };
	double tv[2];

	printf("\n%-24s %10s %14s %10s\n", "policy (default engine)", "seconds", "scores computed",
	       "alloc@130");
	for (int k = 0; k < 2; k++) {
		struct gf_openb_config cfg = gf_openb_config_default();
		struct gf_openb_result r = { 0 };

		tv[k] = INFINITY;
		for (int rep = 0; rep < reps; rep++) {
			double t1 = bench_cpu_seconds();

			if (rep)
				gf_openb_result_release(&r);
			if (gf_openb_run(x, vs[k], &cfg, &r))
				return 2;
			double t = bench_cpu_seconds() - t1;

			if (t < tv[k])
				tv[k] = t;
		}
		printf("%-24s %10.3f %14llu %10.2f\n", vs[k]->label, tv[k],
		       (unsigned long long)r.scores_computed, r.alloc[130]);
		gf_openb_result_release(&r);
	}
	printf("FGD-Fill / FGD time: %.2fx (goal: at most 5x, and under 1 s)\n", tv[1] / tv[0]);
	for (int c = 0; c < NCFG; c++)
		gf_openb_result_release(&res[c]);
	gf_openb_destroy(x);
	bench_trace_release(&d);
	return mismatch ? 1 : 0;
}
