/*
 * sim/reference.h - the FGD paper's published openb results, for comparison.
 *
 * The file (data/openb/fgd-reference-results.csv, from the FGD artifact's
 * expected results) has the header
 *   workload,policy,seeds,alloc_at_100,alloc_at_130,alloc_min_130,alloc_max_130,frag_at_100,frag_at_130
 * and one row per workload and policy.  The parser reads a buffer (no I/O).
 */
#ifndef GF_SIM_REFERENCE_H
#define GF_SIM_REFERENCE_H

#include "sim/report.h"
#include "sim/trace.h"

struct gf_reference_row {
	char workload[GF_NAME_MAX];
	char policy[GF_NAME_MAX];
	int seeds;
	double alloc100, alloc130, alloc_min130, alloc_max130, frag100, frag130;
};

struct gf_reference {
	size_t n;
	struct gf_reference_row *rows;	/* owned */
};

/* Parse; errors as the trace parsers (GF_PARSE with file:line: in err). */
gf_err gf_reference_parse(const char *data, size_t len, const char *file, struct gf_reference *out,
			  struct gf_trace_error *err);
void gf_reference_release(struct gf_reference *ref);

/* The row of (workload, policy label), or NULL. */
const struct gf_reference_row *gf_reference_find(const struct gf_reference *ref,
						 const char *workload, const char *policy);

/* The paper figures of a row, or all NAN for NULL. */
struct gf_paper_figures gf_reference_figures(const struct gf_reference_row *row);

#endif /* GF_SIM_REFERENCE_H */
