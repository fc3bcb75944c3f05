/*
 * sim/trace_cost.h - what a pod trace costs in GPU-hours: by class, idle,
 * and what sharing saves against whole-GPU billing (the replays' cost
 * report; the rules are cost/cost.h's).
 *
 * Each GPU pod holds gpu_count GPUs at gpu_milli/1000 each from its arrival
 * for its duration (pods with no duration are left out and counted).  The
 * capacity is every GPU of the cluster over the trace's span (first arrival
 * to last end).  Classes: "shared" (gpu_milli < 1000), "whole" (one whole
 * GPU), "multi-GPU" (several whole GPUs), and, when pods carry tenants,
 * "tenant-N" rows too.  The peak of GPUs held at once is kept beside the
 * totals: a trace that lists a sample of a cluster's pods (openb's 8,152
 * pods over 149 days never hold more than about 66 GPUs at once) leaves most
 * of the capacity idle over its span, and the peak shows how much of the
 * cluster it covers.
 *
 * For a replay that placed pods on GPUs: build gf_cost_alloc intervals with
 * the node, GPU and model of each placement and call gf_cost_compute()
 * and gf_cost_render_table() directly; this file is the placement-free
 * view of the trace itself.
 */
#ifndef GF_SIM_TRACE_COST_H
#define GF_SIM_TRACE_COST_H

#include "cluster/model.h"
#include "core/obuf.h"
#include "cost/cost.h"

struct gf_trace_cost {
	int64_t start, end;        /* the span */
	int64_t ngpus;
	size_t pods_counted, pods_untimed, pods_cpu;
	double peak_gpus;          /* most GPUs held at once (shares count gpu_milli/1000) */
	int64_t peak_at;           /* when first held */
	struct gf_cost_report by_class;  /* rows: classes, then __idle__ */
	struct gf_cost_report by_tenant; /* rows: tenant-N (empty when no pod has a tenant) */
};

/*
 * Compute the report of pods[0..n) on a cluster of ngpus GPUs.  prices: a
 * price sheet to price GPU-hours (its "*" row is used: pods are not on a
 * model yet), NULL for 1 per GPU-hour (cost = GPU-hours).  Errors:
 * GF_INVAL (no timed GPU pod, an empty span, ngpus < 1), GF_NOENT (a sheet without "*"),
 * GF_NOMEM.  Release with gf_trace_cost_release().
 */
gf_err gf_trace_cost(const struct gf_pod_spec *pods, size_t n, int64_t ngpus,
		     const struct gf_cost_prices *prices, struct gf_trace_cost *out);
void gf_trace_cost_release(struct gf_trace_cost *c);

/* The text section simulate prints. */
gf_err gf_trace_cost_render(const struct gf_trace_cost *c, struct gf_obuf *out);

#endif /* GF_SIM_TRACE_COST_H */
