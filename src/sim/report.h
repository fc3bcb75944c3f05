/*
 * sim/report.h - what `gpufleet simulate` shows: a table, curves CSV, an HTML report.
 *
 * The writers render into a capped gf_obuf (no I/O); the caller decides where
 * the bytes go.  Means are over the seeds of a series, skipping blank columns.
 */
#ifndef GF_SIM_REPORT_H
#define GF_SIM_REPORT_H

#include "core/obuf.h"
#include "sim/openb.h"

enum gf_curve { GF_CURVE_ALLOC, GF_CURVE_FRAG, GF_CURVE_FRAG_RATIO };

/* The published figures for one policy; NAN where the paper has none. */
struct gf_paper_figures {
	double alloc100, alloc130, frag100, frag130;
};

/* One policy's runs: nruns results (one per seed, seeds[i] for runs[i]). */
struct gf_report_series {
	const char *label;
	int nruns;
	const struct gf_openb_result *runs;
	const uint64_t *seeds;
	struct gf_paper_figures paper;
	bool ours;		/* gpufleet's own policy: the table marks it "(ours)" */
};

struct gf_report {
	const char *workload;	/* e.g. "openb_pod_list_default" */
	const char *cluster;	/* e.g. "openb_node_list_gpu_node" */
	size_t nnodes;
	int64_t ngpus;
	double tune;
	const char *seeds;	/* as the user gave them, e.g. "42-51" */
	int nseries;
	const struct gf_report_series *series;
};

/* Mean over the series' runs of curve c at x; NAN if no run has a value there. */
double gf_report_mean(const struct gf_report_series *s, enum gf_curve c, int x);

/* The plain-text comparison table (policy, alloc and frag at 100 and 130, paper beside). */
gf_err gf_report_table(const struct gf_report *r, struct gf_obuf *out);

/*
 * Allocation curves in the layout of the paper's result files: a header
 * "workload,sc_policy,tune,seed,total_gpus,0,1,...,N" and one row per policy
 * and seed, values in % with 2 decimals, blank where a column is blank.
 */
gf_err gf_report_curves_csv(const struct gf_report *r, struct gf_obuf *out);

/* A self-contained HTML page (inline SVG charts, no scripts, no network). */
gf_err gf_report_html(const struct gf_report *r, struct gf_obuf *out);

#endif /* GF_SIM_REPORT_H */
