/*
 * cli/experiment.h - what `gpufleet simulate` and `gpufleet replay` share:
 * the node and pod lists read from files and parsed, and the runs of an
 * experiment spread over a small pool of threads.
 */
#ifndef GF_CLI_EXPERIMENT_H
#define GF_CLI_EXPERIMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/trace.h"

/* A cluster and a workload from two CSV files; owns everything it points to. */
struct gf_cli_trace {
	struct gf_catalog cat;
	struct gf_node_spec *nodes;
	size_t nnodes;
	struct gf_pod_spec *pods;
	struct gf_pod_times *times;	/* one per pod when loaded timed; else NULL */
	size_t npods;
	int64_t ngpus;			/* GPUs of all nodes together, > 0 */
};

/*
 * Read and parse the node list at nodes_path and the pod list at pods_path
 * (timed: gf_trace_parse_pods_timed, else gf_trace_parse_pods) into *t.  A
 * cluster without a GPU is an error.  Returns 0, or -1 after one message on
 * stderr ("gpufleet CMD: ..." or gf_read_file's); *t is then released.
 */
int gf_cli_trace_load(const char *cmd, const char *nodes_path, const char *pods_path, bool timed,
		      struct gf_cli_trace *t);

/* Free what *t holds and zero it; a zeroed *t is fine. */
void gf_cli_trace_release(struct gf_cli_trace *t);

/* Seconds on the monotonic clock (differences only: wall time of a run, progress). */
double gf_cli_seconds(void);

/*
 * Call run(ctx, i) once for each i in [0, n) on up to nthreads threads
 * (clamped to 1..64 and to n; the calling thread runs them all when no
 * thread can be started).  The calls share ctx, so each must touch only its
 * own i's state: the results then do not depend on the thread count or the
 * order.  While they run, the calling thread calls progress(pctx, done,
 * seconds since the start) about every 100 ms until all n are done (NULL:
 * it just waits).  Returns when every call has returned.
 */
void gf_cli_run_parallel(size_t n, int nthreads, void (*run)(void *ctx, size_t i), void *ctx,
			 void (*progress)(void *pctx, size_t done, double elapsed), void *pctx);

#endif /* GF_CLI_EXPERIMENT_H */
