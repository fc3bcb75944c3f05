/*
 * bench/bench_replay.c - how fast the time loop runs.
 *
 * 1. Replay speed: `gpufleet replay`'s default scenario (openb default trace,
 *    load 0.9, 12 h, the burst at 4 h, FGD), one run per queue policy, seed 42,
 *    best of REPS: CPU seconds and events per CPU second; then the CPU time of
 *    the whole default replay (4 policies x seeds 42-51) on one core.
 * 2. Cycle cost against the queue's length: the openb cluster filled with
 *    1-GPU pods (one of them ends at t = 10), N GPU pods drawn from the trace
 *    arriving at t = 1 (none fits), then one end event frees one GPU: the CPU
 *    time of the arrival cycle (N new jobs merged and tried) and of the cycle
 *    after the end (N pending jobs walked), for N = 1k, 10k, 100k.
 *
 * Reproduce: cmake --build build --target bench_replay && build/bench/bench_replay [REPS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "sim/replay.h"

static void replay_speed(const struct bench_trace *d, int reps)
{
	gf_replay *x;
	double total = 0;
	uint64_t total_events = 0;

	if (gf_replay_create(d->nodes, d->nnodes, d->pods, d->times, d->npods, &d->cat, &x))
		exit(2);
	printf("replay speed: default scenario, FGD, seed 42, best of %d (CPU seconds, one core)\n", reps);
	printf("%-21s %10s %12s %14s %8s %9s %8s\n", "queue policy", "seconds", "events", "events/s", "cycles",
	       "tries", "plans");
	for (int qp = 0; qp < GF_QP_COUNT_; qp++) {
		struct gf_replay_config cfg = gf_replay_config_default();
		double best = 1e30;
		struct gf_replay_result r;

		cfg.qp = (enum gf_queue_policy)qp;
		for (int k = 0; k < reps; k++) {
			double t0 = bench_cpu_seconds();

			if (gf_replay_run(x, &gf_policy_fgd, &cfg, &r))
				exit(1);
			double t = bench_cpu_seconds() - t0;

			if (t < best)
				best = t;
			if (k + 1 < reps)
				gf_replay_result_release(&r);
		}
		printf("%-21s %10.3f %12llu %14.0f %8llu %9llu %8llu\n", gf_queue_policy_name(cfg.qp), best,
		       (unsigned long long)r.loop.events, (double)r.loop.events / best,
		       (unsigned long long)r.loop.cycles, (unsigned long long)r.loop.tries,
		       (unsigned long long)r.loop.plans);
		gf_replay_result_release(&r);
	}
	double t0 = bench_cpu_seconds();

	for (int qp = 0; qp < GF_QP_CONSERVATIVE; qp++) {	/* the default replay's four */
		for (uint64_t seed = 42; seed <= 51; seed++) {
			struct gf_replay_config cfg = gf_replay_config_default();
			struct gf_replay_result r;

			cfg.qp = (enum gf_queue_policy)qp;
			cfg.seed = seed;
			if (gf_replay_run(x, &gf_policy_fgd, &cfg, &r))
				exit(1);
			total_events += r.loop.events;
			gf_replay_result_release(&r);
		}
	}
	total = bench_cpu_seconds() - t0;
	printf("default replay, 4 policies x seeds 42-51: %.2f CPU seconds on one core, %llu events, %.0f events/s\n\n",
	       total, (unsigned long long)total_events, (double)total_events / total);
	gf_replay_destroy(x);
}

static void cycle_cost(const struct bench_trace *d)
{
	static const size_t sizes[] = { 1000, 10000, 100000 };
	size_t *gpu_pods = malloc(d->npods * sizeof(*gpu_pods)), ngpu = 0;

	for (size_t i = 0; i < d->npods; i++)
		if (d->pods[i].gpu_count > 0)
			gpu_pods[ngpu++] = i;
	printf("cycle cost against queue length: openb cluster full, N pending GPU pods (CPU ms, one core)\n");
	printf("%-21s %9s %16s %14s %16s\n", "queue policy", "pending", "arrival cycle", "end cycle",
	       "end ns/pending");
	for (int qp = 0; qp < GF_QP_COUNT_; qp++) {
		for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
			struct gf_loop_config cfg = { .policy = (enum gf_queue_policy)qp, .seed = 1,
						      .horizon = 100 };
			struct gf_policy_env env = { .cat = &d->cat, .features = gf_features_default() };
			struct gf_rng rng;
			gf_loop *L;
			bool placed = true;
			uint32_t id;

			if (gf_loop_create(d->nodes, d->nnodes, &gf_policy_best_fit, &env, &cfg, &L))
				exit(1);
			for (int k = 0; placed; k++) {
				struct gf_job_spec j = { .npods = 1, .duration = k == 0 ? 10 : 1000000 };

				j.pod.cpu_milli = 1;
				j.pod.mem_mib = 1;
				j.pod.gpu_count = 1;
				j.pod.gpu_milli = 1000;
				if (gf_loop_preplace(L, &j, &id, &placed))
					exit(1);
			}
			gf_rng_init(&rng, 7);
			for (size_t k = 0; k < sizes[s]; k++) {
				const struct gf_pod_spec *p = &d->pods[gpu_pods[gf_rng_below(&rng, ngpu)]];
				struct gf_job_spec j = { .pod = *p, .npods = 1, .arrival = 1, .duration = 100 };

				j.pod.gpu_milli = 1000;	/* whole GPUs: nothing fits a full cluster */
				if (gf_loop_submit(L, &j, &id))
					exit(1);
			}
			double t0 = bench_cpu_seconds();

			if (gf_loop_run_until(L, 1))
				exit(1);
			double t1 = bench_cpu_seconds();

			if (gf_loop_run_until(L, 10))
				exit(1);
			double t2 = bench_cpu_seconds();

			printf("%-21s %9zu %16.3f %14.3f %16.1f\n", gf_queue_policy_name(cfg.policy), sizes[s],
			       (t1 - t0) * 1e3, (t2 - t1) * 1e3, (t2 - t1) * 1e9 / (double)sizes[s]);
			gf_loop_destroy(L);
		}
	}
	free(gpu_pods);
}

int main(int argc, char **argv)
{
	struct bench_trace d;
	int reps = argc > 1 ? (int)strtol(argv[1], NULL, 10) : 3;

	if (reps < 1)
		reps = 1;
	bench_trace_load("openb_pod_list_default.csv", true, &d);
	printf("loop state per pod: %zu bytes\n\n", gf_loop_bytes_per_pod());
	replay_speed(&d, reps);
	cycle_cost(&d);
	bench_trace_release(&d);
	return 0;
}
