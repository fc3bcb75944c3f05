/*
 * queue/spot.h - capacity that comes and goes: capacity types, prices,
 * spot-aware placement and notices with checkpoint-aware requeue, on the
 * loop's node verbs (queue/loop.h).
 *
 * A loop knows nothing of spot until gf_loop_spot_enable().  Then every node
 * has a capacity type (on-demand unless said otherwise) and a price per
 * GPU-hour, and every job a spot tolerance and a checkpoint kind (never and
 * none unless said otherwise: a job that declares nothing never lands on
 * spot).  Placement:
 *   never      on-demand nodes only;
 *   allowed    any node; a gang (npods > 1) all on on-demand nodes, else all
 *              on spot nodes (with `pools`; it never straddles);
 *   preferred  spot nodes first, then (a single pod) any node, (a gang) the
 *              on-demand nodes.
 * Reservations and preemption plan a job on its fallback pool (a single
 * pod: every node it tolerates; a gang: on-demand).
 *
 * A notice (gf_loop_spot_notice) says a node leaves at t.  What happens
 * depends on the mode:
 *   GF_NOTICE_CHECKPOINT (gpufleet): from the notice on nothing new is
 *     placed there; each running job with a member there that would not end
 *     by t is stopped whole (its members on other nodes too) with deadline t:
 *       signal S     stops at now + S when that is <= t, keeping the progress
 *                    it had at the notice; else at once, keeping what it saved
 *                    before;
 *       periodic P   stops right after its next checkpoint when that comes by
 *                    t (nothing lost), else at once, keeping its last
 *                    checkpoint (progress is checkpointed every P seconds of
 *                    run time);
 *       none         stops at once, back to zero.
 *     A stopped job goes back to the queue at its old place (its arrival
 *     order), its run time now what is left.
 *   GF_NOTICE_DRAIN (Node Termination Handler, Karpenter): the node is
 *     cordoned and every pod on it evicted at once with drain_grace seconds
 *     of grace, blind to checkpoints and gangs: a single-pod `signal` job
 *     whose S fits in the grace (and before t) keeps its progress; every
 *     other job is killed, keeping only its last periodic checkpoint (none:
 *     zero).  A killed gang restarts whole.  It rejoins the queue at its
 *     tail (the workload's controller makes new pods).
 *   GF_NOTICE_IGNORE (a scheduler that reads no notice): nothing happens
 *     until t; new pods may still land on the node.
 * At t (gf_loop_spot_due), in every mode, what still runs there is killed
 * as a drain kills it (its last periodic checkpoint kept; tail of the
 * queue in the ignore and drain modes, its place in checkpoint mode) and the
 * node is removed (gf_loop_node_remove).
 *
 * Accounting: each run of a job (start to its end, stop or eviction) is
 * charged GPU-seconds on spot or on-demand nodes and their price, clipped
 * to [0, account_until); lost work is the progress a stop or kill
 * discarded (GPU-seconds of run time to do again), counted at the stop.
 * Priority preemptions are not spot's: the loop counts them
 * (gf_job_info.preemptions, preempted_gpu_s).
 *
 * Engine code: no I/O, no clock.  Times are the loop's clock (seconds): a
 * caller moves it with gf_loop_cycle() before a notice, calls
 * gf_loop_spot_due() whenever gf_loop_spot_next() says an action is due,
 * and runs one more gf_loop_cycle() at the same time after either, so the
 * jobs they stopped are placed again at once.
 */
#ifndef GF_QUEUE_SPOT_H
#define GF_QUEUE_SPOT_H

#include "queue/loop.h"

enum gf_capacity_type { GF_CAPACITY_ON_DEMAND, GF_CAPACITY_SPOT };
enum gf_spot_tolerance { GF_SPOT_NEVER, GF_SPOT_ALLOWED, GF_SPOT_PREFERRED };
enum gf_checkpoint { GF_CKPT_NONE, GF_CKPT_SIGNAL, GF_CKPT_PERIODIC };
enum gf_notice_mode { GF_NOTICE_CHECKPOINT, GF_NOTICE_DRAIN, GF_NOTICE_IGNORE };

/* "on-demand", "spot"; "never", "allowed", "preferred"; "none", "signal", "periodic"; NULL if out of range. */
const char *gf_capacity_type_name(enum gf_capacity_type t);
const char *gf_spot_tolerance_name(enum gf_spot_tolerance t);
const char *gf_checkpoint_name(enum gf_checkpoint c);
/* The value a user names (the names above, as annotations spell them); false if unknown. */
bool gf_spot_tolerance_find(const char *name, enum gf_spot_tolerance *out);
bool gf_checkpoint_find(const char *name, enum gf_checkpoint *out);

/*
 * A node's capacity type from its labels, the ones users' clusters carry:
 * spot when one of karpenter.sh/capacity-type=spot,
 * eks.amazonaws.com/capacityType=SPOT, cloud.google.com/gke-spot=true,
 * cloud.google.com/gke-preemptible=true,
 * kubernetes.azure.com/scalesetpriority=spot, gpufleet.io/capacity-type=spot
 * is present (values compared exactly), else on-demand.  label(ud, key) gives
 * a label's value or NULL.
 */
enum gf_capacity_type gf_capacity_type_of(const char *(*label)(const void *ud, const char *key), const void *ud);

struct gf_spot_config {
	enum gf_notice_mode mode;
	bool pools;		/* placement by pools as above (gpufleet); false: one mask of every
				 * node a job tolerates, gangs may straddle (kube-scheduler) */
	int64_t drain_grace;	/* GF_NOTICE_DRAIN: an evicted pod's grace, seconds (>= 0) */
	int64_t account_until;	/* GPU-hours and cost are counted over [0, account_until) */
	bool kill_from_zero;	/* a kill keeps nothing, not even periodic checkpoints (a workload
				 * that does not resume from them) */
};

/* Turn spot on (once, before the loop runs).  Errors: GF_INVAL (a bad config), GF_STATE (on already), GF_NOMEM. */
gf_err gf_loop_spot_enable(gf_loop *L, const struct gf_spot_config *cfg);

/* Node i's capacity type and price per GPU-hour (>= 0).  Errors: GF_RANGE, GF_INVAL, GF_STATE (spot off), GF_NOMEM. */
gf_err gf_loop_node_capacity(gf_loop *L, uint32_t i, enum gf_capacity_type type, double price_per_gpu_h);

struct gf_job_spot {
	enum gf_spot_tolerance tolerance;
	enum gf_checkpoint checkpoint;
	int64_t checkpoint_s;	/* signal: seconds it needs to save on SIGTERM; periodic: the interval (> 0) */
};

/* Job id's spot declaration (before it runs).  Errors: GF_RANGE, GF_INVAL, GF_STATE (spot off), GF_NOMEM. */
gf_err gf_loop_job_spot(gf_loop *L, uint32_t id, const struct gf_job_spot *s);

/*
 * Node i leaves at t (>= the loop's clock), told now (the loop's clock):
 * the mode's rules above.  A second notice for the node replaces nothing
 * (the first one stands).  Errors: GF_RANGE (no node i, or removed),
 * GF_INVAL (t before now), GF_STATE (spot off), GF_NOMEM.
 */
gf_err gf_loop_spot_notice(gf_loop *L, uint32_t i, int64_t t);

/* The time of the earliest pending stop or reclaim; false if none. */
bool gf_loop_spot_next(const gf_loop *L, int64_t *t);

/* Carry out the stops and reclaims due by the loop's clock.  Errors: GF_NOMEM, GF_STATE (a broken invariant). */
gf_err gf_loop_spot_due(gf_loop *L);

struct gf_spot_job_info {
	double gpu_s_spot, gpu_s_on_demand;	/* GPU-seconds it held, by capacity type (clipped) */
	double cost;				/* those GPU-hours at their nodes' prices */
	double lost_gpu_s;			/* progress discarded by stops and kills, GPU-seconds */
	uint32_t stops;				/* times stopped or killed by a notice or reclaim */
	uint32_t lost_stops;			/* of which lost some progress */
	int64_t first_start;			/* -1: never started */
	int64_t run_time;			/* its whole run time (the duration submitted) */
};

/* What spot did to job id (zeros with spot off or no such job). */
void gf_loop_spot_job(const gf_loop *L, uint32_t id, struct gf_spot_job_info *out);

#endif /* GF_QUEUE_SPOT_H */
