/*
 * bench/bench_memcap.c - what the GPU-memory cap (libgpufleet-memcap.so)
 * adds to one cuMemAlloc_v2 and one cuMemFree_v2.
 *
 *   bench_memcap FAKE_LIBCUDA MEMCAP_SO [ROUNDS]
 *
 * One process loads the FAKE driver (tests/memcap: an allocation is a
 * counter, ~tens of ns) and the cap; the cap finds the already-loaded
 * libcuda.so.1 by its soname.  Each round times a batch of 64 allocations
 * and then the 64 frees, alternately straight into the fake (the baseline)
 * and through the cap's functions (limit file and ledger in a fresh /tmp
 * folder, cap 40 GiB, never reached).  Per-call time = batch time / 64;
 * printed: the median and p99 over the rounds for both, and the
 * difference of the medians, the cap's own cost.  Goal (issue 13): under
 * 1 us median per cuMemAlloc.  The real driver's own allocation time (us
 * to ms) is not included.
 */
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef int (*alloc_fn)(unsigned long long *, size_t);
typedef int (*free_fn)(unsigned long long);

#define BATCH 64

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void *must(void *p, const char *what)
{
	if (!p) {
		fprintf(stderr, "bench_memcap: %s: %s\n", what, dlerror());
		exit(1);
	}
	return p;
}

/* One batch: BATCH allocations, then BATCH frees; ns per call of each. */
static void batch(alloc_fn a, free_fn f, double *alloc_ns, double *free_ns)
{
	unsigned long long p[BATCH];
	double t0 = now_ns();
	for (int i = 0; i < BATCH; i++)
		if (a(&p[i], 1u << 20) != 0) {
			fprintf(stderr, "bench_memcap: allocation refused\n");
			exit(1);
		}
	double t1 = now_ns();
	for (int i = 0; i < BATCH; i++)
		f(p[i]);
	double t2 = now_ns();
	*alloc_ns = (t1 - t0) / BATCH;
	*free_ns = (t2 - t1) / BATCH;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: bench_memcap FAKE_LIBCUDA MEMCAP_SO [ROUNDS]\n");
		return 2;
	}
	long rounds = argc > 3 ? strtol(argv[3], NULL, 10) : 20000;
	if (rounds < 100)
		rounds = 100;

	char dir[] = "/tmp/gf-memcap-bench.XXXXXX", path[128];
	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/limit", dir);
	FILE *lf = fopen(path, "w");
	if (!lf)
		return 1;
	fprintf(lf, "limit_bytes = %llu\n", 40ULL << 30);
	fclose(lf);
	setenv("GPUFLEET_MEMCAP_LIMIT_FILE", path, 1);
	snprintf(path, sizeof(path), "%s/ledger", dir);
	setenv("GPUFLEET_MEMCAP_LEDGER", path, 1);

	void *fake = must(dlopen(argv[1], RTLD_NOW | RTLD_LOCAL), argv[1]);
	void *cap = must(dlopen(argv[2], RTLD_NOW | RTLD_LOCAL), argv[2]);
	alloc_fn base_a, cap_a;
	free_fn base_f, cap_f;
	*(void **)&base_a = must(dlsym(fake, "cuMemAlloc_v2"), "fake cuMemAlloc_v2");
	*(void **)&base_f = must(dlsym(fake, "cuMemFree_v2"), "fake cuMemFree_v2");
	*(void **)&cap_a = must(dlsym(cap, "cuMemAlloc_v2"), "memcap cuMemAlloc_v2");
	*(void **)&cap_f = must(dlsym(cap, "cuMemFree_v2"), "memcap cuMemFree_v2");

	double *ba = malloc(sizeof(double) * (size_t)rounds), *bf = malloc(sizeof(double) * (size_t)rounds);
	double *ca = malloc(sizeof(double) * (size_t)rounds), *cf = malloc(sizeof(double) * (size_t)rounds);
	if (!ba || !bf || !ca || !cf)
		return 1;
	for (int w = 0; w < 100; w++) { /* warm-up: maps grown, pages touched */
		batch(base_a, base_f, &ba[0], &bf[0]);
		batch(cap_a, cap_f, &ca[0], &cf[0]);
	}
	for (long r = 0; r < rounds; r++) {
		batch(base_a, base_f, &ba[r], &bf[r]);
		batch(cap_a, cap_f, &ca[r], &cf[r]);
	}
	qsort(ba, (size_t)rounds, sizeof(double), cmp);
	qsort(bf, (size_t)rounds, sizeof(double), cmp);
	qsort(ca, (size_t)rounds, sizeof(double), cmp);
	qsort(cf, (size_t)rounds, sizeof(double), cmp);
	size_t med = (size_t)rounds / 2, p99 = (size_t)rounds * 99 / 100;
	printf("bench_memcap: %ld rounds of %d calls, ns per call (median / p99)\n", rounds, BATCH);
	printf("  cuMemAlloc_v2  fake driver alone %7.1f / %7.1f   through the cap %7.1f / %7.1f   cap's cost %7.1f ns median\n",
	       ba[med], ba[p99], ca[med], ca[p99], ca[med] - ba[med]);
	printf("  cuMemFree_v2   fake driver alone %7.1f / %7.1f   through the cap %7.1f / %7.1f   cap's cost %7.1f ns median\n",
	       bf[med], bf[p99], cf[med], cf[p99], cf[med] - bf[med]);
	printf("  goal: cap's cost per cuMemAlloc under 1000 ns median: %s\n",
	       ca[med] - ba[med] < 1000.0 ? "met" : "NOT met");
	snprintf(path, sizeof(path), "%s/limit", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/ledger", dir);
	unlink(path);
	rmdir(dir);
	return 0;
}
