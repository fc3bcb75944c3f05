/*
 * sim/spot.h - `gpufleet replay --spot`: the openb replay's scenario on a
 * cluster split into an on-demand part and spot pools whose capacity follows
 * availability traces, under four ways of handling spot notices
 * (docs/spot.md has the reasoning and the figures).
 *
 * The scenario (on top of sim/replay.h's, same seeds, same jobs):
 *   - Spot pools: pool p (one availability trace: data[k] instances at
 *     k x gap) takes max(data) nodes of the cluster: the last 8-GPU nodes
 *     of the node list, in list order from the end, so the on-demand part is
 *     the rest.  At time 0 data[0] of them are present.  A drop at tick k
 *     (time T = k x gap) gives that many present nodes (drawn, seeded) a
 *     notice at T - notice and reclaims them at T; a rise adds nodes of the
 *     pool's shape at T.  Trace events stop at spot_until.
 *   - Training jobs (class training): a Poisson stream over [0, horizon)
 *     offering training_load x capacity of GPU load: 8-GPU pods (64 cores,
 *     256 GiB), 1 pod (60 %), a gang of 2 (25 %) or 4 (15 %), run time
 *     uniform in 1-6 h, priority 1 (as the burst), spot preferred;
 *     checkpoint signal with S uniform in 30-90 s (50 %), periodic every
 *     30 min (35 %), none (15 %).
 *   - The burst's jobs: spot allowed; single pods signal (S = 60 s), gangs
 *     periodic (20 min).
 *   - LS, BE and warm-start jobs: no spot toleration, no checkpoint.
 *   - Deadlines (training and burst): arrival + deadline_factor x run time.
 * Modes:
 *   on-demand  the spot pools' nodes are on-demand nodes, always present;
 *   kube       notices ignored: jobs killed at reclaim (their last periodic
 *              checkpoint kept, or nothing with kube_from_zero), back at
 *              the tail of the queue;
 *   drain      cordon and evict at the notice (queue/spot.h GF_NOTICE_DRAIN);
 *   gpufleet   checkpoint-aware stops, place kept (GF_NOTICE_CHECKPOINT).
 * The three spot modes place alike (queue/spot.h's pools): only what a
 * notice does differs.  Costs: every GPU-hour held in [0, spot_until) at its
 * node's price.
 */
#ifndef GF_SIM_SPOT_H
#define GF_SIM_SPOT_H

#include "sim/replay.h"

enum gf_spot_mode { GF_SPOT_MODE_ON_DEMAND, GF_SPOT_MODE_KUBE, GF_SPOT_MODE_DRAIN, GF_SPOT_MODE_GPUFLEET,
		    GF_SPOT_MODE_COUNT };
enum gf_spot_class { GF_SC_TRAINING, GF_SC_BURST, GF_SC_LS, GF_SC_BE, GF_SC_ALL, GF_SC_COUNT };

/* "on-demand", "kube", "drain", "gpufleet"; "training", "burst", "LS", "BE", "all"; "?" out of range. */
const char *gf_spot_mode_name(enum gf_spot_mode m);
const char *gf_spot_class_name(enum gf_spot_class c);

struct gf_spot_pool {
	const int32_t *avail;	/* instances available per tick */
	size_t n;		/* ticks, >= 1 */
	int64_t gap;		/* seconds between ticks, > 0 */
};

struct gf_spot_replay_config {
	struct gf_replay_config base;	/* the openb replay's (queue policy, seed, load, horizon, burst) */
	enum gf_spot_mode mode;
	const struct gf_spot_pool *pools;
	size_t npools;
	int64_t notice;		/* seconds from notice to reclaim, >= 0 */
	int64_t drain_grace;	/* drain: an evicted pod's grace, seconds */
	double price_on_demand;	/* per GPU-hour */
	double price_spot;
	double training_load;	/* [0, 1] */
	double deadline_factor;	/* >= 1 */
	int64_t spot_until;	/* trace events and accounting over [0, spot_until) */
	int64_t sample_every;	/* cost/lost timeline period, seconds; 0: none */
	bool kube_from_zero;	/* kube: a killed job restarts from zero (its periodic checkpoints unused) */
};

/* Defaults: backfill at load 0.8, 12 h, burst at 4 h, notice 120 s, drain grace 30 s, $2.50 and
 * $1.00 per GPU-hour, training load 0.08, deadline factor 3, spot_until 36 h, samples every 10 min. */
struct gf_spot_replay_config gf_spot_replay_config_default(void);

struct gf_spot_class_stats {
	int64_t jobs, started, done;
	double wait_p95_s;	/* first start - arrival, nearest rank over started jobs */
	double jct_mean_s;	/* end - arrival over finished jobs */
	double gpu_h_spot, gpu_h_on_demand, cost, lost_gpu_h;
	int64_t restarts;	/* stops and kills by notices, plus priority preemptions */
	int64_t deadline_misses;	/* jobs with a deadline not finished by it */
};

struct gf_spot_sample {
	int64_t time;
	double cost_per_h;	/* GPUs held now x their price */
	double lost_gpu_h;	/* lost work so far */
	int32_t spot_nodes;	/* spot nodes present */
};

struct gf_spot_result {
	struct gf_spot_class_stats cls[GF_SC_COUNT];
	int64_t notices, reclaimed, added;	/* spot nodes noticed, reclaimed, added */
	double lost_fit_gpu_h;	/* lost work of signal jobs whose S fits in the notice */
	double lost_by_kind_gpu_h[3];	/* lost work by checkpoint kind (enum gf_checkpoint) */
	int64_t preemptions;	/* priority evictions (not spot's) */
	uint32_t stalled;	/* jobs never started when nothing was left to happen */
	struct gf_spot_sample *timeline;	/* owned */
	size_t ntimeline;
};

/*
 * One run of mode cfg->mode.  Errors: GF_INVAL (a bad config; more pool
 * nodes than the cluster has 8-GPU nodes), GF_NOMEM, GF_STATE (an engine
 * invariant broke).  Thread-safe for distinct results.
 */
gf_err gf_spot_replay_run(const gf_replay *x, const struct gf_policy_ops *ops,
			  const struct gf_spot_replay_config *cfg, struct gf_spot_result *out);
void gf_spot_result_release(struct gf_spot_result *r);

#endif /* GF_SIM_SPOT_H */
