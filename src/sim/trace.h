/*
 * sim/trace.h - node and pod lists from CSV traces (Alibaba openb format).
 *
 * The parsers read a buffer the caller loaded (they do no I/O), so they are
 * pure functions of their bytes: fuzzable and testable on strings.
 *
 * Format: a header line naming the columns, then one record per line; the
 * columns are found by name, so their order may vary and extra columns are
 * ignored.  Line endings \n or \r\n; blank lines are skipped; no quoting; a
 * UTF-8 byte-order mark at the start is skipped.
 *   nodes: sn, cpu_milli, memory_mib, gpu, model
 *   pods:  name, cpu_milli, memory_mib, num_gpu, gpu_milli [, gpu_spec]
 *          [, creation_time [, deletion_time]] (seconds: arrival, duration)
 * Pod rows are normalised as the FGD artifact does (spec 1.2): a pod with
 * num_gpu = 0 is CPU-only whatever gpu_milli says; gpu_spec is split on '|'
 * with empty tokens dropped.  gpu_milli must lie in 0..1000 (a share of one
 * GPU): the artifact reads a larger value as one whole GPU, which hides a
 * typo or a unit mistake, so it is an error here (no openb file has one).
 *
 * Errors name the file, line and column and say what was expected, e.g.
 *   pods.csv:17: column 3 (memory_mib): expected a non-negative integer, found "12x"
 */
#ifndef GF_SIM_TRACE_H
#define GF_SIM_TRACE_H

#include "cluster/model.h"

#define GF_TRACE_LINE_MAX 4096	/* longest accepted line, in bytes */
#define GF_TRACE_MAX_ROWS 10000000

/* Where and what went wrong; msg is one line without the trailing newline. */
struct gf_trace_error {
	char msg[512];
};

/*
 * Parse a node list.  `file` names the input in error messages.  On success
 * *out (malloc'ed, caller frees) holds *n >= 1 nodes and GPU models are
 * interned in cat.  Errors: GF_PARSE (bad content; err says where and what),
 * GF_TOOBIG (a line, a name or the catalog over its cap), GF_NOMEM.  On error
 * *out is NULL.
 */
gf_err gf_trace_parse_nodes(const char *data, size_t len, const char *file, struct gf_catalog *cat,
			    struct gf_node_spec **out, size_t *n, struct gf_trace_error *err);

/* Parse a pod list; as gf_trace_parse_nodes, constraints interned in cat. */
gf_err gf_trace_parse_pods(const char *data, size_t len, const char *file, struct gf_catalog *cat,
			   struct gf_pod_spec **out, size_t *n, struct gf_trace_error *err);

/* A pod's quality-of-service class as the openb trace writes it. */
enum gf_qos {
	GF_QOS_NONE,		/* empty field or no qos column */
	GF_QOS_LS,		/* latency-sensitive */
	GF_QOS_BE,		/* best effort */
	GF_QOS_BURSTABLE,
	GF_QOS_GUARANTEED,
	GF_QOS_COUNT
};

/* The time columns of one pod of a timed pod list, in the trace's seconds. */
struct gf_pod_times {
	int64_t creation;
	int64_t deletion;
	int64_t scheduled;	/* -1: never scheduled (empty field or no column) */
	enum gf_qos qos;
	uint32_t npods;		/* the optional `pods` column (a gang of that many identical
				 * pods, 1..GF_TRACE_MAX_GANG): 1 when absent or empty */
};

#define GF_TRACE_MAX_GANG 1024	/* the engine loop's GF_LOOP_MAX_GANG */

/*
 * Parse a pod list with time columns (the openb default list has them):
 * as gf_trace_parse_pods, plus creation_time and deletion_time (required),
 * scheduled_time (optional, may be empty: never scheduled) and qos
 * (optional: LS, BE, Burstable, Guaranteed or empty) and pods (optional: the
 * row is a gang of that many pods; `gpufleet replay --as-listed` reads it, the
 * resampling replay ignores it).  Each pod's arrival is
 * its creation_time and its duration deletion_time - scheduled_time, or
 * deletion_time - creation_time for a pod never scheduled; a negative
 * duration is an error naming the line and column.  *times (malloc'ed,
 * caller frees) gets one entry per pod; NULL on error.
 */
gf_err gf_trace_parse_pods_timed(const char *data, size_t len, const char *file,
				 struct gf_catalog *cat, struct gf_pod_spec **out, size_t *n,
				 struct gf_pod_times **times, struct gf_trace_error *err);

#endif /* GF_SIM_TRACE_H */
