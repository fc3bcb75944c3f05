/*
 * sim/autoscale.h - `gpufleet replay --autoscale`: the openb replay's
 * scenario (sim/replay.h, same seeds, same jobs) on a cluster that can buy
 * on-demand nodes, under three ways of asking for them (docs/replay.md,
 * "Capacity on request").
 *
 * The on-demand pool: nodes of the cluster's GPU node type (the most common
 * node spec among those with the most GPUs), joining `delay` seconds after
 * they are asked for, billed per GPU-hour from the moment they join until
 * they leave, and leaving once idle (nothing bound, not held) for
 * `scale_down` seconds.  A job needs ceil(npods / pods per node) of them,
 * pods per node from its GPU request alone (whole-GPU pods: GPUs per node /
 * GPUs per pod; shared pods: GPUs per node x pods per GPU).  Modes:
 *   never     nothing is bought;
 *   gpufleet  every check_every seconds, each pending job (best effort
 *             only with ask_best_effort) whose forecast start
 *             (gf_loop_forecast_upto, cut at now + threshold) is later than
 *             now + threshold, or that has waited threshold already (the
 *             forecast does not see the holds), asks once for its whole
 *             gang (as a ProvisioningRequest would); the nodes that join are
 *             its own (admission masks: no other job may use them) while it
 *             waits (at most scale_down seconds after they joined) and while
 *             it runs there; then they take nothing new and leave once idle;
 *   every-pod cluster-autoscaler's rule: every check_every seconds, each
 *             pending job the last cycle could not start gets its nodes
 *             unless some are already on their way for it; nothing is held
 *             (any job may take them), and once they joined a job still
 *             pending asks again.
 * A job whose bought nodes left it still pending (it could not use them:
 * a GPU model constraint) asks no more, in both modes.
 */
#ifndef GF_SIM_AUTOSCALE_H
#define GF_SIM_AUTOSCALE_H

#include "sim/replay.h"

enum gf_as_mode { GF_AS_NEVER, GF_AS_GPUFLEET, GF_AS_EVERY_POD, GF_AS_MODE_COUNT };

/* "never", "gpufleet", "every-pod"; "?" out of range. */
const char *gf_as_mode_name(enum gf_as_mode m);

struct gf_as_config {
	struct gf_replay_config base;	/* the openb replay's (queue policy, seed, load, horizon, burst) */
	enum gf_as_mode mode;
	int64_t delay;		/* seconds from the request to the nodes joining, >= 0 */
	int64_t threshold;	/* gpufleet: a forecast start later than now + this asks, >= 0 */
	int64_t scale_down;	/* seconds idle before a bought node leaves, >= 0 */
	int64_t check_every;	/* seconds between two looks at the queue, > 0 */
	double price;		/* per GPU-hour of a bought node, >= 0 */
	bool ask_best_effort;	/* gpufleet: BE jobs ask too (by default only LS and the burst do) */
};

/* Defaults: the replay's, gpufleet, 10 min delay, 30 min threshold, 10 min scale-down, checks every
 * 30 s, $2.00 per GPU-hour (data/prices/example.csv's "*" row: openb's G2 is not listed). */
struct gf_as_config gf_as_config_default(void);

struct gf_as_result {
	struct gf_replay_class_stats cls[GF_RC_COUNT];	/* as gf_replay_run's (gpu_alloc over the base capacity) */
	double autoscaled_gpu_h;	/* GPU-hours of bought nodes, join to leave (or the run's end) */
	double cost;			/* autoscaled_gpu_h x price */
	int64_t requests;		/* requests made (one per job and ask) */
	int64_t nodes_bought, nodes_left;
	int32_t nodes_max;		/* bought nodes present at once, at most */
	int64_t gave_up;		/* jobs that could not use the nodes bought for them */
	uint32_t stalled;
};

/*
 * One run.  Errors: GF_INVAL (a bad config, no GPU node), GF_NOMEM,
 * GF_STATE (an engine invariant broke).  Thread-safe for distinct results.
 */
gf_err gf_as_replay_run(const gf_replay *x, const struct gf_policy_ops *ops, const struct gf_as_config *cfg,
			struct gf_as_result *out);

/* The number of nodes of gpus GPUs that job of npods pods asking gpu_milli in all needs (>= 1), 0 for no GPU. */
uint32_t gf_as_nodes_for(uint32_t npods, int64_t gpu_milli, int gpus);

#endif /* GF_SIM_AUTOSCALE_H */
