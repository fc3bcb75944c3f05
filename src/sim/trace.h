/*
 * sim/trace.h - node and pod lists from CSV traces (Alibaba openb format).
 *
 * The parsers read a buffer the caller loaded (they do no I/O), so they are
 * pure functions of their bytes: fuzzable and testable on strings.
 *
 * Format: a header line naming the columns, then one record per line; the
 * columns are found by name, so their order may vary and extra columns are
 * ignored.  Line endings \n or \r\n; blank lines are skipped; no quoting.
 *   nodes: sn, cpu_milli, memory_mib, gpu, model
 *   pods:  name, cpu_milli, memory_mib, num_gpu, gpu_milli [, gpu_spec]
 *          [, creation_time [, deletion_time]] (seconds: arrival, duration)
 * Pod rows are normalised as the FGD artifact does (spec 1.2): a pod with
 * num_gpu = 0 is CPU-only whatever gpu_milli says; gpu_milli > 1000 means one
 * whole GPU; gpu_spec is split on '|' with empty tokens dropped.
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

#endif /* GF_SIM_TRACE_H */
