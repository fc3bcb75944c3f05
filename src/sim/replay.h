/*
 * sim/replay.h - `gpufleet replay`'s experiment: a trace's jobs through the
 * engine's time loop (queue/loop.h) in virtual time, per queue policy.
 *
 * The scenario (docs/replay.md has the reasoning and the figures):
 *   - Warm start: the cluster begins in the steady state of the offered
 *     load: trace pods drawn with probability proportional to their run time
 *     (as a snapshot of a busy cluster holds them), each with a uniform
 *     residual of its run time, placed by the policy at time 0 until their
 *     GPU request reaches load x capacity.  They are class WARM, not in the
 *     per-class statistics, but in the allocation.
 *   - Arrivals over [0, horizon): a Poisson process whose rate makes the
 *     offered GPU load (rate x mean GPU-seconds per pod / capacity) equal
 *     to `load`; each arrival is a trace pod drawn uniformly (or, with
 *     trace_order, the trace's pods in creation_time order, cycling), keeping
 *     its shape, its qos and its run time (deletion - scheduled time).  The
 *     trace's own arrival rate loads the cluster ~150x less; compressing its
 *     34-day window cannot reach 90 % since its pods add up to ~1.0x the
 *     capacity (measured in docs/replay.md), hence the resampling.
 *   - The weekly validation burst at burst_at: 16 jobs of one 8-GPU pod and
 *     8 gangs of four 8-GPU pods (64 cores, 256 GiB each pod), run times
 *     uniform in 2-6 h, arrivals uniform within 10 minutes.
 *   - Priorities: LS (and Guaranteed) 2 > burst 1 > BE (and Burstable,
 *     unknown) 0.
 *   - Estimates (what the planner believes about run times): exact, or
 *     run time x (1 + (F - 1) u) with u uniform, seeded (overestimate:F).
 * Independent generators (derived from the seed) draw the warm set, the
 * arrivals, the burst, the estimates, the node tie-break order and the
 * policy's draws, so changing the estimate mode does not change the jobs.
 */
#ifndef GF_SIM_REPLAY_H
#define GF_SIM_REPLAY_H

#include "queue/loop.h"
#include "sim/trace.h"

/* Table rows: the three job classes, every job but the burst's, and every job. */
enum gf_replay_class { GF_RC_BURST, GF_RC_LS, GF_RC_BE, GF_RC_NONBURST, GF_RC_ALL, GF_RC_COUNT };
#define GF_RC_WARM 7	/* the loop's class index of warm-start jobs (not a table row) */

/* "burst", "LS", "BE", "non-burst", "all". */
const char *gf_replay_class_name(enum gf_replay_class c);

enum gf_estimate { GF_EST_EXACT, GF_EST_OVER, GF_EST_HISTORY };

struct gf_replay_config {
	enum gf_queue_policy qp;
	uint64_t seed;
	double load;		/* offered GPU load / capacity, (0, 2] */
	int64_t horizon;	/* seconds of arrivals and of the statistics window */
	bool burst;
	int64_t burst_at;	/* seconds; the burst arrives within [burst_at, burst_at + 600) */
	enum gf_estimate estimate;
	double over;		/* F >= 1 for GF_EST_OVER */
	int64_t sample_every;	/* timeline period, seconds; 0: none */
	bool preemption;	/* higher priorities evict lower ones (gf_loop_config) */
	int64_t preempt_wait;	/* under backfill: only when the reservation is further away */
	int64_t preempt_grace;	/* victims' termination grace: the preemptor starts this much later */
	int64_t history_prior;
	int64_t forecast_at;	/* >= 0: ask every pending job "when will I start?" then (-1: never) */	/* GF_EST_HISTORY: the estimate before any job of the class finished */
	bool trace_order;	/* arrivals take the trace's pods in creation_time order (cycling), not drawn */
	/* quotas (gf_loop_config; kube ignores them): a job of class c goes to queue class_queue[c] */
	const struct gf_queue_quota *queues;
	size_t nqueues;
	uint16_t class_queue[GF_RC_COUNT];
	struct gf_features features;
};

/* The defaults: backfill, seed 42, load 0.9, 12 h, burst at 4 h, exact estimates, 60 s samples,
 * preemption on (priorities above BE evict BE; backfill: only when the reservation is more than
 * 30 s away), victims terminate in 30 s (Kubernetes' default grace period). */
struct gf_replay_config gf_replay_config_default(void);

struct gf_replay_class_stats {
	int64_t jobs, started;
	double wait_p50, wait_p95, wait_max;	/* seconds, over started jobs */
	double jct_mean;			/* seconds: wait + run time, over started jobs */
	double gpu_alloc_avg_pct;		/* time-averaged over [0, horizon), % of capacity */
	int64_t partial_gangs;
	int64_t preemptions;			/* evictions of the class's jobs */
	double preempted_gpu_h;			/* their lost work, GPU-hours */
};

struct gf_replay_result {
	struct gf_replay_class_stats cls[GF_RC_COUNT];
	struct gf_loop_stats loop;
	int64_t warm_jobs, warm_dropped, unresolvable;
	double warm_gpu_pct;		/* GPU allocation at time 0, % */
	double offered_load;		/* as computed from the arrival rate */
	double rate_per_s;		/* Poisson arrival rate */
	struct gf_loop_sample *timeline;	/* owned */
	size_t ntimeline;
	/* the burst's jobs: arrival and start (-1: never started), in arrival order */
	int64_t *burst_arrival, *burst_start;	/* owned */
	uint32_t *burst_npods;			/* owned */
	size_t nburst;
	/* the forecast at forecast_at, against what happened (jobs that then started) */
	int64_t forecast_jobs;		/* pending jobs answered */
	double forecast_mae_s;		/* mean |forecast - actual start| */
	double forecast_bias_s;		/* mean (forecast - actual start) */
	double forecast_within_10m_pct;	/* % answered within 10 minutes */
};

typedef struct gf_replay gf_replay;

/*
 * Prepare a replay of pods[0..npods) with times[] (from
 * gf_trace_parse_pods_timed) on nodes[] (copied).  FGD's target workload is
 * built from the pods as the openb experiment builds it.  cat must outlive x.
 * Errors: GF_INVAL (no node, no pod, or no pod with a GPU and a positive run
 * time, so no load can be offered), GF_NOMEM.
 */
gf_err gf_replay_create(const struct gf_node_spec *nodes, size_t nnodes,
			const struct gf_pod_spec *pods, const struct gf_pod_times *times, size_t npods,
			const struct gf_catalog *cat, gf_replay **out);
void gf_replay_destroy(gf_replay *x);

/*
 * One replay under queue policy cfg->qp and placement ops.  Thread-safe for
 * distinct results.  Errors: GF_INVAL (bad config), GF_NOMEM, GF_STATE
 * (an engine invariant broke).
 */
gf_err gf_replay_run(const gf_replay *x, const struct gf_policy_ops *ops,
		     const struct gf_replay_config *cfg, struct gf_replay_result *out);
void gf_replay_result_release(struct gf_replay_result *r);

/*
 * The scenario's jobs into loop L, made over x's nodes in their order and
 * not run yet: the node tie-break order, the warm start, the arrivals and
 * the burst, drawn exactly as gf_replay_run draws them (same seed, same
 * jobs).  For a caller that changes the loop around them (the spot replay,
 * sim/spot.h).  Fills out's warm and arrival figures.  Errors: the loop's.
 */
gf_err gf_replay_populate(const gf_replay *x, gf_loop *L, const struct gf_replay_config *cfg,
			  struct gf_replay_result *out);
/* The placement environment gf_replay_run gives the policy (x's catalog and target workload). */
struct gf_policy_env gf_replay_env(const gf_replay *x, const struct gf_features *features);
/* x's nodes (as given to gf_replay_create), *n of them. */
const struct gf_node_spec *gf_replay_nodes(const gf_replay *x, size_t *n);

/*
 * The as-listed replay (`gpufleet replay --as-listed`): a scenario written
 * out row by row, run once through the loop, for a caller to compare with
 * another run of the same jobs (the live scheduler's: tests/scheduler/
 * sched-agree).  Row i of a timed pod list is job i: npods = times[i].npods
 * identical pods (a gang when > 1) asking pods[i]'s resources, arriving at
 * pods[i].arrival (creation_time), running pods[i].duration seconds from
 * the moment its last member is bound (the parser's rule: deletion_time -
 * scheduled_time, else - creation_time), priority 2 for LS and Guaranteed,
 * 0 otherwise (as the resampling replay).  No warm start, no resampling, no
 * burst; nodes keep the list's order as their tie-break order (as the live
 * scheduler keeps the order it lists them in), no shuffle.  Used from cfg:
 * qp, seed, estimate and over (estimates drawn as the resampling replay
 * draws them), preemption, preempt_wait, preempt_grace, features; not the
 * load, horizon, burst, quotas or forecast.  FGD's target workload is built
 * from every row (as gf_replay_create builds it).
 */
struct gf_replay_job {
	int64_t arrival;
	int64_t start, end;	/* of its last start; -1 if it never started */
	uint32_t npods;
	enum gf_job_state state;	/* at the end: GF_JOB_DONE, or why not */
	uint32_t preemptions;
	uint32_t *nodes;	/* npods node indices (into the list) of its last start, in
				 * member order; NULL if it never started; owned (gf_replay_jobs_free) */
};

/*
 * Run it: *out (njobs = npods entries, caller frees with gf_replay_jobs_free)
 * in row order.  Errors: GF_INVAL (no node or row, a bad config), GF_NOMEM,
 * GF_STATE (an engine invariant broke), the loop's submit errors.
 */
gf_err gf_replay_listed(const struct gf_node_spec *nodes, size_t nnodes,
			const struct gf_pod_spec *pods, const struct gf_pod_times *times, size_t npods,
			const struct gf_catalog *cat, const struct gf_policy_ops *ops,
			const struct gf_replay_config *cfg, struct gf_replay_job **out);
void gf_replay_jobs_free(struct gf_replay_job *jobs, size_t n);

#endif /* GF_SIM_REPLAY_H */
