/*
 * cli/spottrace.h - spot availability traces in the format published with
 * "Can't Be Late" (NSDI'24): a JSON object
 *
 *   {"metadata": {"gap_seconds": 300, ...}, "data": [n0, n1, ...]}
 *
 * data[k] is the number of spot instances available at tick k (time
 * k x gap_seconds); other metadata members are ignored.  Every value must
 * be a whole number: gap_seconds in [1, 86400], each count in
 * [0, GF_SPOT_TRACE_MAX_NODES], at most GF_SPOT_TRACE_MAX_TICKS ticks, at
 * least one.
 */
#ifndef GF_CLI_SPOTTRACE_H
#define GF_CLI_SPOTTRACE_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

#define GF_SPOT_TRACE_MAX_TICKS 1000000
#define GF_SPOT_TRACE_MAX_NODES 4096

struct gf_spot_trace {
	int64_t gap;		/* seconds between ticks */
	int32_t *avail;		/* n counts, owned */
	size_t n;
};

/*
 * Parse len bytes of data (file names the input in messages).  Errors:
 * GF_PARSE with err = "FILE: what, where (the JSON path)" (not JSON, a
 * missing or mistyped member, a value out of range), GF_NOMEM.
 */
gf_err gf_spot_trace_parse(const char *data, size_t len, const char *file, struct gf_spot_trace *out,
			   char *err, size_t errlen);
void gf_spot_trace_release(struct gf_spot_trace *t);

#endif /* GF_CLI_SPOTTRACE_H */
