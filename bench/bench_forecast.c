/*
 * bench/bench_forecast.c - cost of one forecast (gf_forecast_peak) per metric
 * series per sync with 30 days of minute history, and of the replay.
 *
 * Setup (fixed seed 42): a 30-day minute series (43,200 doubles) with a daily
 * wave, a weekly factor and noise.  Timed, best of 3 rounds:
 *   forecast   N calls (default 20,000) of gf_forecast_peak(horizon 600 s,
 *              width 60 s, default parameters), each at a different "now"
 *              in the last day (the history is always 29-30 days long)
 *   baseline   N passes summing the whole 30-day history once (the cost of
 *              touching every sample: what a forecaster that refits on the
 *              full history each sync would pay at least)
 * and the ratio.  Memory: the history itself, 8 bytes a minute (stated, not
 * measured: the forecaster allocates nothing).
 *
 * Reproduce: cmake --build build --target bench_forecast && ./build/bench/bench_forecast [N]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "autoscale/forecast.h"
#include "core/rng.h"

#define MINUTES (30 * 1440)

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 20000;
	struct gf_forecast_params p = gf_forecast_params_default();
	struct gf_rng rng;
	double *x = malloc(MINUTES * sizeof(*x));
	volatile double sink = 0;
	double best_f = INFINITY, best_b = INFINITY;

	if (!x || n < 1)
		return 1;
	gf_rng_init(&rng, 42);
	for (size_t i = 0; i < MINUTES; i++) {
		double day = 6.0 - 4.0 * cos(2.0 * 3.14159265358979323846 * (double)(i % 1440) / 1440);
		double week = (i / 1440) % 7 >= 5 ? 0.7 : 1.0;

		x[i] = day * week + 2.0 * gf_rng_double(&rng);
	}
	for (int round = 0; round < 3; round++) {
		double t0 = now_us();

		for (long k = 0; k < n; k++)
			sink += gf_forecast_peak(x, MINUTES - (size_t)(k % 1440), &p, 600, 60);
		double t1 = now_us();
		for (long k = 0; k < n; k++) {
			double s = 0;

			for (size_t i = 0; i < MINUTES - (size_t)(k % 1440); i++)
				s += x[i];
			sink += s;
		}
		double t2 = now_us();
		if ((t1 - t0) / (double)n < best_f)
			best_f = (t1 - t0) / (double)n;
		if ((t2 - t1) / (double)n < best_b)
			best_b = (t2 - t1) / (double)n;
	}
	printf("forecast with 30 days of minute history (%d samples, %.1f KiB per series), %ld calls, best of 3:\n",
	       MINUTES, MINUTES * sizeof(double) / 1024.0, n);
	printf("  gf_forecast_peak (horizon 600 s, width 60 s)  %8.2f us per call\n", best_f);
	printf("  baseline: one pass over the whole history    %8.2f us per call\n", best_b);
	printf("  ratio forecast / one pass                    %8.3f\n", best_f / best_b);
	free(x);
	return sink == 12345.678 ? 2 : 0;
}
