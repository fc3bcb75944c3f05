/*
 * bench/bench_util.h - what the engine benchmarks share: the CPU-time timer,
 * reading a data file whole, and the bundled openb traces parsed.
 *
 * Header-only (static inline), so a benchmark needs no extra source in its
 * bench/<area>.cmake.  Benchmarks are not the product: any failure here
 * prints "bench: ..." and exits with status 2.
 */
#ifndef GF_BENCH_UTIL_H
#define GF_BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "sim/trace.h"

/* CPU seconds of this process (all its threads), for timing one-core runs. */
static inline double bench_cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The whole file at path, NUL-terminated (caller frees); its length in *len. */
static inline char *bench_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		fprintf(stderr, "bench: cannot read %s\n", path);
		exit(2);
	}
	buf = malloc((size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "bench: cannot read %s\n", path);
		exit(2);
	}
	fclose(f);
	buf[n] = '\0';
	*len = (size_t)n;
	return buf;
}

/* A bundled openb cluster and pod list, parsed. */
struct bench_trace {
	struct gf_catalog cat;
	struct gf_node_spec *nodes;
	size_t nnodes;
	struct gf_pod_spec *pods;
	struct gf_pod_times *times;	/* timed loads only; else NULL */
	size_t npods;
};

/*
 * data/openb/openb_node_list_gpu_node.csv and data/openb/<pods_file> of the
 * source tree (GF_SOURCE_DIR), the pods timed (gf_trace_parse_pods_timed) or
 * not.
 */
static inline void bench_trace_load(const char *pods_file, bool timed, struct bench_trace *t)
{
	struct gf_trace_error terr;
	char path[4096];
	size_t len;
	char *buf;
	gf_err err;

	t->times = NULL;
	if (gf_catalog_init(&t->cat))
		exit(2);
	buf = bench_slurp(GF_SOURCE_DIR "/data/openb/openb_node_list_gpu_node.csv", &len);
	err = gf_trace_parse_nodes(buf, len, "nodes", &t->cat, &t->nodes, &t->nnodes, &terr);
	free(buf);
	if (err) {
		fprintf(stderr, "bench: %s\n", terr.msg);
		exit(2);
	}
	snprintf(path, sizeof(path), "%s/data/openb/%s", GF_SOURCE_DIR, pods_file);
	buf = bench_slurp(path, &len);
	err = timed ? gf_trace_parse_pods_timed(buf, len, "pods", &t->cat, &t->pods, &t->npods, &t->times, &terr)
		    : gf_trace_parse_pods(buf, len, "pods", &t->cat, &t->pods, &t->npods, &terr);
	free(buf);
	if (err) {
		fprintf(stderr, "bench: %s\n", terr.msg);
		exit(2);
	}
}

static inline void bench_trace_release(struct bench_trace *t)
{
	free(t->nodes);
	free(t->pods);
	free(t->times);
	gf_catalog_release(&t->cat);
}

#endif /* GF_BENCH_UTIL_H */
