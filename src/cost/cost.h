/*
 * cost/cost.h - what GPUs cost, per team, with shares counted right.
 *
 * The accounting rules of `gpufleet cost`, the cost API and the replays'
 * cost report, as pure functions (no I/O, no clock: "now" is an argument).
 * docs/cost.md states the rules for users; in short, per window [start, end):
 *
 *   A *use* is one pod holding part of one GPU for some seconds of the
 *   window.  Its share is the fraction of the GPU it was given (see
 *   gf_cost_share: milli-share, memory share, MIG slices), and it is billed
 *   share x seconds ("GPU-hours" below are always share-hours: four pods of
 *   25 % for an hour are 1.000 GPU-hour).  Whole-GPU billing (what OpenCost
 *   charges: requested GPUs x hours) is 1 x seconds per GPU held.
 *
 *   Capacity is every GPU's presence in the window (seconds), priced at the
 *   GPU model's on-demand or spot price per hour (spot when its node is
 *   labelled spot).  A use is priced as the GPU it sits on.
 *
 *   Idle = per GPU, capacity seconds minus the share-seconds of its uses
 *   (never below 0; the excess, GPUs given out more than once, is reported as
 *   overcommit).  Reported per (node, model) and in total as `__idle__`.
 *
 *   Reconciliation: workload GPU-hours + idle GPU-hours = capacity GPU-hours,
 *   exactly when no GPU is overcommitted and every use sits on a known GPU
 *   (uses on unknown GPUs are "unmatched": billed at their model's price, but
 *   outside capacity).  gf_cost_report.reconciled says whether it holds to
 *   0.1 %.
 *
 *   Efficiency = GPU-hours used (utilization integrated over time, in whole
 *   GPUs) / GPU-hours allocated, over the uses whose utilization is known.
 *
 *   Saved by sharing = whole-GPU billing - share billing, at the same prices.
 *   Saved by spot = what the same GPU-hours cost at on-demand prices - what
 *   they cost, for GPUs on spot nodes (workload and idle alike).
 *
 * Aggregation groups uses by namespace, pod ("namespace/pod"), node, GPU
 * model, or label:KEY (uses without the label go to "__unallocated__", as
 * in OpenCost), or a comma list of these (names joined with "/").  Rows are
 * sorted by name (byte order), the idle row last: output is deterministic.
 *
 * Complexity: O((uses + gpus) log(uses + gpus)) per window.
 */
#ifndef GF_COST_COST_H
#define GF_COST_COST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "core/obuf.h"
#include "core/time.h"

#define GF_COST_NAME_MAX 128    /* a model name in the price sheet, with the NUL */
#define GF_COST_MAX_PRICES 1024 /* rows of a price sheet */
#define GF_COST_MAX_KEYS 4      /* aggregation keys in one comma list */
#define GF_COST_IDLE "__idle__"
#define GF_COST_UNALLOCATED "__unallocated__"

/* ---- shares ---------------------------------------------------------------- */

/*
 * The fraction of one GPU a request holds: the larger of milli/1000 and
 * mem_mib/gpu_mem_mib (each counted when > 0; memory only when the GPU's
 * memory is known), capped at 1.  0 when neither is given.
 */
double gf_cost_share(int milli, int64_t mem_mib, int64_t gpu_mem_mib);

/*
 * The fraction of a GPU a MIG profile "<N>g.<M>gb" (also "<N>c.<N>g.<M>gb")
 * holds: N compute slices of the 7 an A100/H100/H200 has, N/7.  -1 when the
 * text is not a MIG profile.
 */
double gf_cost_mig_fraction(const char *profile);

/* ---- prices ---------------------------------------------------------------- */

struct gf_cost_price {
	char model[GF_COST_NAME_MAX]; /* as in the node label nvidia.com/gpu.product; "*" = default */
	double on_demand;             /* per GPU-hour */
	double spot;                  /* per GPU-hour on a spot node */
};

/* Embeddable; _release frees v. */
struct gf_cost_prices {
	struct gf_cost_price *v;
	size_t n;
	char currency[16]; /* "USD" unless the sheet says otherwise */
};

/*
 * Parse a price sheet (CSV, see data/prices/example.csv):
 *   # comments and blank lines are skipped
 *   currency,USD                       (optional, once, before the rows)
 *   model,on_demand_per_hour,spot_per_hour   (the header, required)
 *   NVIDIA-H100-80GB-HBM3,4.10,1.65
 *   *,2.00,0.80                        (the default for models not listed)
 * Prices are decimal numbers >= 0; an empty spot price means the on-demand
 * price.  Errors name file, line and column: GF_PARSE (bad content: a
 * negative or malformed price, a duplicate model, no header), GF_TOOBIG
 * (over GF_COST_MAX_PRICES rows or a name over GF_COST_NAME_MAX), GF_NOMEM.
 * On error out is empty.
 */
gf_err gf_cost_prices_parse(const char *data, size_t len, const char *file,
			    struct gf_cost_prices *out, char *err, size_t errlen);
void gf_cost_prices_release(struct gf_cost_prices *p);

/* The price row for model (exact match, else "*"), or NULL. */
const struct gf_cost_price *gf_cost_price_find(const struct gf_cost_prices *p, const char *model);

/* ---- windows --------------------------------------------------------------- */

/*
 * A positive duration in whole seconds, in the command line's one syntax
 * (core/duration.h: "30m", "12h", "1h30m", "7d", "2w"; no plain numbers).
 * GF_PARSE (err says what was expected) otherwise, GF_RANGE past 10 years.
 */
gf_err gf_cost_parse_duration(const char *s, int64_t *seconds, char *err, size_t errlen);

/*
 * A window as OpenCost accepts it, given now (Unix seconds, UTC):
 *   30m, 12h, 7d, 2w        the duration ending now
 *   today, yesterday        the UTC day (today: midnight to now)
 *   week, lastweek          since the last Sunday 00:00 UTC / the week before it
 *   month, lastmonth        since the first of the month / the month before
 *   S,E                     RFC3339 UTC times (2026-11-01T00:00:00Z) or Unix seconds
 * [*start, *end) with start < end.  GF_PARSE (err quotes the input and says
 * what was expected).
 */
gf_err gf_cost_parse_window(const char *s, int64_t now, int64_t *start, int64_t *end, char *err,
			    size_t errlen);

/* Timestamps: core/time.h (gf_rfc3339, gf_rfc3339_parse). */

/* ---- aggregation ----------------------------------------------------------- */

enum gf_cost_key { GF_COST_BY_NAMESPACE, GF_COST_BY_POD, GF_COST_BY_NODE, GF_COST_BY_MODEL,
		   GF_COST_BY_LABEL, GF_COST_BY_CLUSTER };

struct gf_cost_aggregate {
	int nkeys;
	struct {
		enum gf_cost_key key;
		char label[GF_COST_NAME_MAX]; /* GF_COST_BY_LABEL: the label key */
	} keys[GF_COST_MAX_KEYS];
};

/*
 * "namespace", "pod", "node", "model", "cluster", "label:KEY", or a comma
 * list of them.  GF_PARSE (err: "unknown aggregate 'x': expected namespace,
 * pod, node, model, cluster or label:KEY").
 */
gf_err gf_cost_parse_aggregate(const char *s, struct gf_cost_aggregate *out, char *err,
			       size_t errlen);

/* ---- inputs ---------------------------------------------------------------- */

struct gf_cost_label {
	const char *key, *value;
};

/* One pod's use of one GPU within a window (all strings borrowed). */
struct gf_cost_use {
	const char *ns, *pod, *node, *uuid, *model;
	const struct gf_cost_label *labels;
	size_t nlabels;
	double seconds;       /* how long it held the GPU within the window */
	double share_seconds; /* share x seconds: what it is billed */
	double used_seconds;  /* utilization integrated (whole-GPU seconds); < 0 = unknown */
};

/*
 * One GPU's presence within a window - or a pool of GPUs of one model and
 * capacity type whose sums a store already made (costapi's pooled recording
 * rules): then seconds is the pool's GPU-seconds and overcommit_seconds the
 * share-seconds its GPUs were given out above their capacity, GPU by GPU,
 * which the pool's sum of uses cannot show (0 for a single GPU: its
 * overcommit is found from its uses).
 */
struct gf_cost_gpu {
	const char *node, *uuid, *model;
	bool spot;
	double seconds;
	double overcommit_seconds;
};

/* An allocation as an interval, for callers that have them (replays, tests). */
struct gf_cost_alloc {
	const char *ns, *pod, *node, *uuid, *model;
	const struct gf_cost_label *labels;
	size_t nlabels;
	double share;         /* 0 < share <= 1 */
	int64_t start, end;   /* [start, end), Unix seconds (or virtual seconds) */
	double util;          /* mean utilization, fraction of a whole GPU; < 0 = unknown */
};

/* Seconds of [s, e) inside [ws, we) (0 when disjoint). */
double gf_cost_overlap(int64_t s, int64_t e, int64_t ws, int64_t we);

/* The use a makes of its GPU within [ws, we) (seconds 0 when outside). */
struct gf_cost_use gf_cost_alloc_use(const struct gf_cost_alloc *a, int64_t ws, int64_t we);

struct gf_cost_input {
	int64_t start, end;               /* the window (for the report; uses are already in it) */
	const struct gf_cost_use *uses;
	size_t nuses;
	const struct gf_cost_gpu *gpus;   /* capacity; one entry per GPU (node + uuid unique) */
	size_t ngpus;
	const struct gf_cost_prices *prices;
	struct gf_cost_aggregate agg;
	bool include_idle;                /* add the __idle__ row */
};

/* ---- the report ------------------------------------------------------------ */

struct gf_cost_row {
	char *name;                 /* owned; GF_COST_IDLE for the idle row */
	const char *ns, *pod, *node, *model; /* borrowed; NULL where the row's uses differ */
	bool idle;
	double gpu_hours;           /* share-hours */
	double whole_gpu_hours;     /* GPUs held x hours (whole-GPU billing) */
	double used_hours;          /* utilization, whole-GPU hours, of the known uses */
	double known_hours;         /* share-hours of the uses whose utilization is known */
	double cost;                /* share billing at the GPUs' prices */
	double whole_cost;          /* whole-GPU billing at the same prices */
	double on_demand_cost;      /* share billing at on-demand prices */
};

/* Efficiency of a row: used / known share-hours; 0 when nothing is known. */
double gf_cost_row_efficiency(const struct gf_cost_row *r);

struct gf_cost_idle {
	const char *node, *model;   /* borrowed */
	double hours, cost;
};

/* Embeddable; _release frees rows, names and idle. */
struct gf_cost_report {
	int64_t start, end;
	struct gf_cost_row *rows;   /* sorted by name; the idle row last */
	size_t nrows;
	struct gf_cost_idle *idle;  /* per (node, model), sorted; nonzero hours only */
	size_t nidle;
	double capacity_hours, workload_hours, idle_hours;
	double unmatched_hours;     /* workload on GPUs with no capacity record */
	double overcommit_hours;    /* share-hours above some GPU's capacity */
	double capacity_cost, workload_cost, idle_cost, whole_cost;
	double saved_by_sharing, saved_by_spot;
	double used_hours, known_hours; /* efficiency of the whole workload */
	bool reconciled;            /* |workload + idle - capacity| <= 0.1 % of capacity */
};

/*
 * Price, aggregate and reconcile.  GF_NOENT when a GPU model has no price
 * (and the sheet has no "*" row): err names the model.  GF_INVAL for a use
 * with share_seconds > seconds or negative amounts (err names the pod).
 * GF_NOMEM.  On error out is empty.
 */
gf_err gf_cost_compute(const struct gf_cost_input *in, struct gf_cost_report *out, char *err,
		       size_t errlen);
void gf_cost_report_release(struct gf_cost_report *r);

/* ---- rendering ------------------------------------------------------------- */

/*
 * A text table: one line per row (name, GPU-hours, whole-GPU-hours, cost,
 * efficiency), the idle row, a total, then the lines "saved by sharing",
 * "saved by spot" and the reconciliation.  Errors from out (sticky).
 */
gf_err gf_cost_render_table(const struct gf_cost_report *r, const char *currency,
			    struct gf_obuf *out);

/*
 * One allocation set in the shape of OpenCost's /allocation answer: an object
 * {"<name>": {name, properties, window{start,end}, start, end, minutes,
 * cpuCores, cpuCoreHours, cpuCost, ramBytes, ramByteHours, ramCost, gpuCount,
 * gpuHours, gpuCost, gpuCostAdjustment, gpuEfficiency, pvCost, networkCost,
 * sharedCost, externalCost, totalCost, totalEfficiency, and our additions
 * gpuWholeHours, gpuWholeCost, gpuSavedBySharing, gpuSavedBySpot}, ...}.
 * Numbers are JSON numbers (no NaN/Inf), times RFC3339.  Errors from out.
 */
gf_err gf_cost_render_set(const struct gf_cost_report *r, struct gf_obuf *out);

#endif /* GF_COST_COST_H */
