/*
 * queue/loop.h - the engine's time loop: pending queue, gangs, reservations
 * with EASY backfill, and the kube-scheduler-like per-pod control.
 *
 * gf_loop is an opaque handle owning a cluster (created from a node list),
 * the placement policy bound to it, a scratch copy for planning, the jobs,
 * the pending queue and the event heap.  It does no I/O and reads no clock:
 * time is a number (seconds) carried by the events the caller submits, and
 * the virtual clock moves only when an event is popped.  Randomness (the
 * policy's draws) comes from a generator seeded by the config.
 *
 * A job is npods identical pods (a gang when npods > 1).  Its lifecycle is a
 * set of named transitions: add (arrival), pop (tried by a cycle), park (it
 * did not fit: remembered per pod shape until a node that could take it is
 * freed, kube-scheduler's requeue on a cluster event), assume (bound in the
 * cluster: a gang's members all in one cycle or none), confirm (running,
 * its end event queued), forget (a gang's tentative binds undone, in
 * reverse), finish (ended, its resources freed).
 *
 * Ownership: the loop copies every spec it is given; pointers it returns
 * (cluster, timeline) stay valid until the next call that changes the loop.
 */
#ifndef GF_QUEUE_LOOP_H
#define GF_QUEUE_LOOP_H

#include "policy/sched.h"

#define GF_LOOP_MAX_CLASSES 8	/* caller-defined job classes, for statistics */
#define GF_LOOP_MAX_GANG 1024	/* pods in one job */

enum gf_queue_policy {
	GF_QP_KUBE,		/* per-pod skip-ahead FIFO, no gang awareness (kube-scheduler) */
	GF_QP_STRICT_FIFO,	/* the first job that does not fit blocks every later one */
	GF_QP_BEST_EFFORT_FIFO,	/* a job that does not fit is skipped (Kueue BestEffortFIFO) */
	GF_QP_BACKFILL,		/* the first blocked job gets a reservation; EASY backfill */
	GF_QP_CONSERVATIVE,	/* every blocked job (up to 32) gets one; conservative backfill */
	GF_QP_PER_QUEUE,	/* each quota queue's own ordering (gf_queue_quota.ordering); EASY
				 * reservations; with no queues: backfill */
	GF_QP_COUNT_
};

/*
 * A queue's ordering under GF_QP_PER_QUEUE (the Queue object's `ordering`);
 * every start still honours the reservations ahead of it in queue order:
 *   backfill: its first blocked job may hold the (EASY) reservation;
 *   strict: a job that does not start blocks the later jobs of its queue
 *           (Kueue StrictFIFO), and holds no reservation;
 *   skip-ahead: a job that does not start is skipped (Kueue BestEffortFIFO)
 *           and holds no reservation.
 * Blocked jobs without a reservation evict lower priorities at once (as in
 * the FIFO policies) when preemption is on.
 */
enum gf_queue_ordering { GF_ORDER_BACKFILL, GF_ORDER_STRICT, GF_ORDER_SKIP_AHEAD };

/* "kube", "strict-fifo", "best-effort-fifo", "backfill", "conservative-backfill", "per-queue"; NULL if out of range. */
const char *gf_queue_policy_name(enum gf_queue_policy qp);

/* The policy a user names; false if unknown. */
bool gf_queue_policy_find(const char *name, enum gf_queue_policy *out);

/*
 * Quotas: the semantics of Kueue's ClusterQueue over one resource, GPUs in
 * milli-GPU (a whole GPU is 1000), optionally split per GPU model (Kueue's
 * resource flavors).  A queue admits a job while its usage stays within its
 * nominal quota; in a cohort it may also borrow the unused quota others
 * lend: its usage above its guaranteed part (nominal - lending limit) draws
 * on the cohort's pool (the sum of the members' lending limits), at most
 * borrowing_limit above its nominal.  A queue within its nominal quota
 * reclaims borrowed room by evicting jobs of borrowing queues of its cohort
 * (whatever their priority); among queues that borrow, the one with the
 * lowest weighted share (borrowed / weight) goes first.  Per model: the
 * job's GPUs on nodes of a model the queue lists count against that model's
 * quota (borrowable in the cohort, no limits); a queue that lists models
 * may use no other.
 */
#define GF_LOOP_MAX_QUEUES 256
#define GF_QUOTA_MAX_MODELS 8
#define GF_QUOTA_UNLIMITED INT64_MAX

struct gf_queue_quota {
	int64_t nominal;		/* milli-GPU, >= 0 */
	int64_t borrowing_limit;	/* milli-GPU above nominal; GF_QUOTA_UNLIMITED: none */
	int64_t lending_limit;		/* milli-GPU of its nominal others may borrow; GF_QUOTA_UNLIMITED: all */
	int32_t cohort;			/* cohort id, -1: none (it neither borrows nor lends) */
	uint32_t weight;		/* fair share weight, >= 1 */
	uint32_t nmodels;		/* 0: any GPU model */
	struct {
		int32_t model;		/* catalog model id */
		int64_t nominal;	/* milli-GPU */
	} models[GF_QUOTA_MAX_MODELS];
	enum gf_queue_ordering ordering;	/* used by GF_QP_PER_QUEUE only (0: backfill) */
};

/*
 * A job's duration when the caller, not the loop, knows when it ends (a live
 * pod runs until it finishes or is deleted): no end event is queued when it
 * starts; gf_loop_end() ends it.  Its estimate, unless the spec or history
 * estimates give one, is GF_LOOP_UNKNOWN_EST: the planner then expects it to
 * outlast every reservation (a reservation behind it is never promised its
 * room; backfill stays safe).
 */
#define GF_LOOP_OPEN (-1)
#define GF_JOB_MAX_BUDGETS 4	/* disruption budgets one job counts against */
#define GF_LOOP_MAX_BUDGETS 65535
#define GF_LOOP_UNKNOWN_EST ((int64_t)1 << 50)	/* seconds: ~35 million years */

struct gf_job_spec {
	struct gf_pod_spec pod;	/* each member's request; name, arrival, duration unused */
	uint32_t npods;		/* 1..GF_LOOP_MAX_GANG */
	int32_t priority;	/* higher first; equal priorities by arrival, then submission */
	uint8_t cls;		/* < GF_LOOP_MAX_CLASSES: whose statistics it counts in */
	int64_t arrival;	/* >= 0, seconds */
	int64_t duration;	/* >= 0: run time once every member is bound; GF_LOOP_OPEN: until gf_loop_end */
	int64_t estimate;	/* run time the planner expects; <= 0: the duration (open: GF_LOOP_UNKNOWN_EST) */
	uint16_t queue;		/* index into config.queues (when there are any) */
	bool never_preempt;	/* it never evicts others (Kubernetes' preemptionPolicy: Never): it waits */
	/*
	 * Disruption budgets it counts against (Kubernetes' PodDisruptionBudgets
	 * whose selector matches it): 1 + an index into the loop's budgets
	 * (config.budgets, gf_loop_set_budgets); 0: an unused slot.  An index
	 * beyond the loop's current budgets counts against none.
	 */
	uint16_t budgets[GF_JOB_MAX_BUDGETS];
};

enum gf_job_state {
	GF_JOB_FUTURE,		/* submitted, not arrived yet */
	GF_JOB_PENDING,		/* in the queue (in kube mode maybe partly bound) */
	GF_JOB_RUNNING,
	GF_JOB_DONE,
	GF_JOB_UNRESOLVABLE,	/* cannot fit even in the empty cluster: reported, never tried */
	GF_JOB_DROPPED,		/* gf_loop_preplace() found no room */
	GF_JOB_WITHDRAWN,	/* ended by gf_loop_end() before it started (a deleted pending pod) */
};

/* Why a pending job did not start in the last cycle that looked at it. */
enum gf_loop_why {
	GF_LOOP_WHY_NONE,		/* not tried yet (or started) */
	GF_LOOP_WHY_NO_ROOM,		/* no set of nodes has room for it (all of it, for a gang) */
	GF_LOOP_WHY_QUOTA,		/* its queue's quota refuses it */
	GF_LOOP_WHY_BLOCKED,		/* strict FIFO: behind a job that does not fit */
	GF_LOOP_WHY_RESERVED,	/* backfill: it fits, but would delay a reservation ahead of it */
	GF_LOOP_WHY_COUNT_
};

/* "", "no room", "quota", "blocked by the queue head", "would delay a reservation"; NULL if out of range. */
const char *gf_loop_why_name(enum gf_loop_why w);

struct gf_job_info {
	enum gf_job_state state;
	uint8_t cls;
	uint32_t npods;
	int64_t arrival;
	int64_t start;		/* every member bound; -1 before */
	int64_t end;		/* start + duration; -1 before start */
	int64_t promised;	/* first reservation time given to it; -1 if never a reservation holder */
	int64_t gpu_milli;	/* GPU request of the whole job */
	bool partial;		/* at the end of some cycle it held some but not all members */
	uint32_t preemptions;	/* times it was evicted */
	double preempted_gpu_s;	/* GPU-seconds of its work lost to evictions */
	enum gf_loop_why why;	/* pending: why the last cycle did not start it */
};

struct gf_loop_config {
	enum gf_queue_policy policy;
	uint64_t seed;		/* the policy's random draws */
	int64_t horizon;	/* statistics window [0, horizon) for time averages; > 0 */
	int64_t sample_every;	/* timeline period in seconds; 0 = no timeline */
	/*
	 * Preemption (not in kube mode): a job that does not fit evicts running
	 * jobs of lower priority when that is the only way it fits soon: in the
	 * gang-aware FIFOs at once, under backfill when its reservation (its
	 * earliest start from expected ends) is later than now + preempt_wait
	 * (or it has none), checked in every cycle it stays blocked.  Victims:
	 * per node the cheapest (lowest priority, then least work lost) until
	 * the pod fits, on the node whose victims cost least; gangs are evicted
	 * whole and go back to the queue; the preemptor's place must leave every
	 * reservation ahead of it intact.  The victims take preempt_grace
	 * seconds to terminate (Kubernetes' terminationGracePeriodSeconds): the
	 * preemptor holds their room at once but starts running (its start, its
	 * wait) only grace seconds later.
	 *
	 * Disruption budgets (best effort, as kube-scheduler's DefaultPreemption
	 * treats PodDisruptionBudgets): budgets[b] is how many more pods the
	 * jobs naming budget b may lose now (>= 0).  Evicting a job takes npods
	 * from each budget it names (a gang counts each member); what goes
	 * below 0 is a violation.  Victim choice minimises violations first:
	 * per node the candidates whose eviction stays within their budgets are
	 * taken first (cheapest first), the others only if the pod still does
	 * not fit; among nodes the fewest violations win, then the cost order.
	 * A job is still evicted when only a violation makes room
	 * (stats.budget_violations counts those).  Copied; the counts go down
	 * with each eviction until gf_loop_set_budgets gives new ones.
	 */
	bool preemption;
	int64_t preempt_wait;
	int64_t preempt_grace;	/* >= 0; 0: victims vanish at once */
	const int32_t *budgets;	/* allowed disruptions per budget, >= 0 */
	size_t nbudgets;	/* <= GF_LOOP_MAX_BUDGETS */
	/*
	 * History estimates: a job's estimate (set when it arrives or comes back
	 * after an eviction, kept while it runs) is the mean run time of the jobs
	 * of its class that have finished so far, or history_prior seconds (> 0)
	 * before any has; the specs' estimates are then ignored.  A running job
	 * that outruns its estimate is then expected to run twice as long as it
	 * has so far, and every reservation is planned again (they counted on its
	 * end): stats.short_estimates counts those.
	 */
	bool estimate_history;
	int64_t history_prior;
	/* quotas (copied); none: every job may use the whole cluster */
	const struct gf_queue_quota *queues;
	size_t nqueues;		/* <= GF_LOOP_MAX_QUEUES */
	/*
	 * Admission (the live scheduler's taints, selectors, affinity;
	 * cluster/admit.h): admit(admit_ud, job) gives the nodes job may use,
	 * a mask of (nodes + 63) / 64 words valid until the next call, or NULL
	 * for every node.  Every placement of the job honours it: the cycle's,
	 * the reservation's and the preemption's.  A job with a mask never
	 * writes or reads the per-shape memos (park, inadmissible, no victims):
	 * its failure says nothing about other jobs of its shape; it keeps its
	 * own: after a try over every node its mask allows found no room, it is
	 * tried again only when a node it may use was freed since (so the
	 * caller reports a node whose admission widened with
	 * gf_loop_nodes_freed).  The loop's own statistics (resolvable, the
	 * forecast) ignore it.  NULL: no admission.
	 */
	const uint64_t *(*admit)(void *ud, uint32_t job);
	void *admit_ud;
	/*
	 * Backoff (kube-scheduler's podInitialBackoff / podMaxBackoff): a job a
	 * cycle tried (a placement was attempted for it: stats.tries; a job
	 * parked by the per-shape or its own memo is not tried) and did not
	 * start is not tried again before now + backoff_initial * 2^(n - 1)
	 * after n such cycles in a row, at most backoff_max; a wake-up event
	 * runs a cycle then.  It keeps its place in the queue meanwhile: under
	 * a strict ordering it blocks the jobs behind it as a head that does
	 * not fit does; otherwise they go on.  A reservation holder is tried
	 * regardless.  A start clears the count.
	 * 0: no backoff (the replay's default).
	 */
	int64_t backoff_initial;	/* >= 0 */
	int64_t backoff_max;		/* >= backoff_initial */
};

struct gf_loop_sample {
	int64_t time;
	int64_t gpu_used;	/* milli-GPU bound, all classes */
	uint32_t pending;	/* jobs waiting (in kube mode: pods) */
	uint32_t running;
};

struct gf_loop_stats {
	uint64_t events, cycles, tries, plans;
	uint64_t backfilled;	/* jobs started past a blocked reservation holder */
	uint64_t dropped;	/* reservations dropped to be planned again */
	uint64_t starts;	/* jobs started (a restart after an eviction counts again) */
	uint64_t preemptions;	/* jobs evicted */
	uint64_t reclaims;	/* of which evicted to give a queue back its nominal quota */
	uint64_t budget_violations;	/* pod evictions beyond a disruption budget (per budget named) */
	uint64_t quota_blocked;	/* tries refused by a quota (not by room) */
	uint64_t late;		/* holders not started at their reservation time although no
				 * higher-priority job took the room: always 0 unless a bug */
	uint64_t short_estimates;	/* running jobs that outran their estimate (history) */
	uint32_t stalled;	/* jobs still pending when no event was left (deadlock) */
	int64_t now;		/* virtual time of the last event */
	/* integral of bound milli-GPU over [0, horizon), per class and in all */
	double gpu_milli_s[GF_LOOP_MAX_CLASSES];
	double gpu_milli_s_all;
	int64_t gpu_capacity;	/* milli-GPU */
};

typedef struct gf_loop gf_loop;

/*
 * Create a loop over a cluster of nodes[0..nnodes) (copied), placing with
 * policy ops over env's catalog, target and features (env->cluster is
 * ignored: the loop makes its own).  cat and target must outlive the loop.
 * Errors: GF_INVAL (bad config, empty node list), GF_NOMEM, the policy's
 * create() error.
 */
gf_err gf_loop_create(const struct gf_node_spec *nodes, size_t nnodes,
		      const struct gf_policy_ops *ops, const struct gf_policy_env *env,
		      const struct gf_loop_config *cfg, gf_loop **out);
void gf_loop_destroy(gf_loop *L);

/*
 * A loop over the caller's cluster c instead of its own (the live
 * scheduler's, which reads it between cycles): not copied, not destroyed
 * by the loop; nodes are c's.  What is bound in c when the loop is made
 * stays, unknown to the loop; pods bound later by others enter with
 * gf_loop_place_at.  Room the caller frees itself is reported with
 * gf_loop_nodes_freed().
 */
gf_err gf_loop_create_on(gf_cluster *c, const struct gf_policy_ops *ops, const struct gf_policy_env *env,
			 const struct gf_loop_config *cfg, gf_loop **out);

/*
 * Room was freed on nodes[0..n) outside the loop, or they now admit jobs
 * they did not (config.admit: a taint or cordon gone): jobs parked for want
 * of room look there again.
 */
gf_err gf_loop_nodes_freed(gf_loop *L, const uint32_t *nodes, size_t n);

/*
 * Job records of jobs that are over (done, withdrawn, dropped) go, in
 * place: every other job keeps its state, its place in the queue and in
 * the running list, its reservation and events, and gets a new id, in the
 * same order: map[id] (gf_loop_njobs() entries before the call) is the new
 * id of job id, GF_LOOP_NO_JOB for one that went.  Decisions after it are
 * those the loop would have made without it (the order of ids is kept);
 * the last cycle's decisions (gf_loop_decisions) are gone.  O(jobs +
 * members + events); no allocation.  Events of the jobs gone stay, doing
 * nothing (a cycle still runs at their time, as it would have).  gf_loop_njobs_over() counts the
 * records it would drop.
 */
void gf_loop_compact(gf_loop *L, uint32_t *map);
size_t gf_loop_njobs_over(const gf_loop *L);

/*
 * The disruption budgets now (config.budgets): allowed[b] more pods of the
 * jobs naming budget b may be evicted; copied, replacing the previous counts
 * (the live scheduler gives each cycle the PodDisruptionBudgets' current
 * status.disruptionsAllowed).  Errors: GF_INVAL (n > GF_LOOP_MAX_BUDGETS, a
 * negative count), GF_NOMEM.
 */
gf_err gf_loop_set_budgets(gf_loop *L, const int32_t *allowed, size_t n);

/*
 * Node verbs: the loop's node set changes in place; jobs, the queue, the
 * per-shape memos, budgets and quotas stay.  Node indices never move (a
 * removed node leaves a tombstone), so running jobs' members, the caller's
 * index maps and tie-breaks by index stay valid.  On a loop made with
 * gf_loop_create_on these are the only way to change the caller's cluster's
 * node set (the loop keeps planning copies of it); the caller's admission
 * masks (config.admit) cover the new node count from the call on.
 *
 * What each invalidates, exactly:
 *   add: the placement schedulers' per-node caches and node classes are
 *     remade over the new node count (O(nodes); the new node's tie-break
 *     priority is its index); reservations are planned again (the node may bring a
 *     start forward); the node counts as freed room (parked shapes look
 *     there); shapes found unresolvable are checked again, and their
 *     UNRESOLVABLE jobs that now fit the empty cluster join the queue in
 *     their arrival order.
 *   remove: only a node with nothing bound (GF_STATE otherwise, why names
 *     what is bound); reservations and their "never later" plans are
 *     dropped; the resolvable memo is recomputed for later arrivals
 *     (pending jobs stay pending).
 *   update (new capacity, GPUs, model, labels in the spec): refused when
 *     what is bound would not fit (GF_STATE, why says what); reservations
 *     dropped, the resolvable memo recomputed, the node counted as freed.
 *   cordon (on/off): no new placement there (pods bound stay, end and are
 *     evicted as before); reservations using the node are dropped (all of
 *     them, with their "never later" plans); uncordon counts as freed room.
 *   notice (the node leaves at time t, a number of the caller's clock): as
 *     a cordon from now on; t is kept (gf_cluster_leave_at) for planners
 *     that move work off it before t.
 * Errors: GF_RANGE (no node i, or removed), GF_INVAL (a bad spec),
 * GF_STATE (as above), GF_NOMEM (the loop stays usable: a failed add leaves
 * the node set as it was, in every copy).
 */
gf_err gf_loop_node_add(gf_loop *L, const struct gf_node_spec *spec, uint32_t *index);
gf_err gf_loop_node_remove(gf_loop *L, uint32_t i, char *why, size_t whylen);
gf_err gf_loop_node_update(gf_loop *L, uint32_t i, const struct gf_node_spec *spec, char *why, size_t whylen);
gf_err gf_loop_node_cordon(gf_loop *L, uint32_t i, bool on);
gf_err gf_loop_node_notice(gf_loop *L, uint32_t i, int64_t t);

/*
 * The policy's target workload (gf_policy_env.target: FGD's, which the live
 * scheduler rebuilds as the pods it sees change) is now *target, which must
 * outlive the loop (or the next call): the placement schedulers are made
 * anew over it (their score caches go) and reservations are planned again;
 * jobs, the queue, the per-shape memos and the random draws stay.  Errors:
 * GF_NOMEM, the policy's create() error; the old target stays then.
 */
gf_err gf_loop_set_target(gf_loop *L, const struct gf_target *target);

/* Nodes of the loop's cluster, removed ones included (indices < this are valid). */
size_t gf_loop_nnodes(const gf_loop *L);

/*
 * Replace the quota queues in place (config.queues; copied): jobs keep
 * their queue index, usage is recounted from the jobs holding room, and
 * the next cycle applies the new limits (nothing running is evicted by the
 * change itself; reclaim and preemption act as usual).  Ignored
 * (GF_OK) in kube mode, which has no quotas.  Errors: GF_INVAL (a bad
 * definition, more than GF_LOOP_MAX_QUEUES), GF_RANGE (a pending, future or
 * running job names a queue index >= n while n > 0), GF_NOMEM; the quotas
 * are then unchanged.
 */
gf_err gf_loop_set_quotas(gf_loop *L, const struct gf_queue_quota *queues, size_t n);

/*
 * Job id's quota queue and disruption budgets change (the caller's Queue
 * or PodDisruptionBudget objects changed, and with them their indices): the
 * queue index refers to the list the following gf_loop_set_quotas gives,
 * which must follow (it recounts usage); the budgets as
 * gf_job_spec.budgets.  Errors: GF_RANGE (no such job).
 */
gf_err gf_loop_job_relabel(gf_loop *L, uint32_t id, uint16_t queue, const uint16_t budgets[GF_JOB_MAX_BUDGETS]);

/* Tie-break priorities of the nodes (as gf_sched_set_priorities), for placement and planning. */
void gf_loop_set_node_priorities(gf_loop *L, const uint32_t *prio);

/*
 * The policy's draws continue *rng's state (copied) instead of a generator
 * seeded with config.seed: a caller that drew from one generator before
 * (gpufleet simulate: shuffle, tuning, node priorities, then the policy)
 * keeps its sequence.  Before the loop runs.
 */
void gf_loop_set_rng(gf_loop *L, const struct gf_rng *rng);

/* The placement scheduler's score counters (gf_sched_stats). */
void gf_loop_sched_stats(const gf_loop *L, uint64_t *computed, uint64_t *cached);

/*
 * Submit a job that arrives at spec->arrival.  Sets *id (0, 1, 2... in
 * submission order).  Errors: GF_INVAL (npods, class, a negative arrival or
 * duration other than GF_LOOP_OPEN, a GPU share out of range), GF_STATE (the
 * loop's clock is already past the arrival), GF_NOMEM.
 */
gf_err gf_loop_submit(gf_loop *L, const struct gf_job_spec *spec, uint32_t *id);

/*
 * A job already running at time 0 (a warm start): placed now by the policy,
 * all members or none; if it does not fit it is GF_JOB_DROPPED (*placed
 * false).  Only before the loop runs.  Errors as gf_loop_submit.
 */
gf_err gf_loop_preplace(gf_loop *L, const struct gf_job_spec *spec, uint32_t *id, bool *placed);

/*
 * THE scheduling cycle, the only one: the virtual-time driver below
 * (gf_loop_run) and the live scheduler (k8s/live.c) both run it.
 *
 * gf_loop_cycle(L, now, out) moves the clock to now, applies the queued
 * events with time <= now (arrivals join the queue, ends free their
 * resources; events before now each at its own time, with no cycle in
 * between), then runs one cycle at now.  *out (NULL: not wanted) lists what
 * the cycle decided, valid until the next call that changes the loop:
 * binds[] the pods it bound (job, member, node, GPUs; a whole gang at once
 * outside kube mode), in the order bound, and evicted[] the running jobs it
 * preempted (back in the queue; their pods must go), failed[] the pending
 * jobs it tried and did not start (the caller's FailedScheduling reports:
 * a job parked by a memo, or backing off, is not tried).  A bound job runs from
 * now (a preemptor from now + preempt_grace).  Pending jobs not started say
 * why in gf_job_info.why.  Several cycles at the same now are allowed.
 * Errors: GF_STATE (now before the loop's clock, or a broken invariant: a
 * bug), GF_NOMEM.
 */
struct gf_loop_bind {
	uint32_t job, member;	/* member: the pod's index in its job, < npods */
	uint32_t node;		/* index in the loop's node list */
	uint8_t gpus[GF_MAX_GPUS];	/* the GPUs, first pod.gpu_count entries */
};

struct gf_loop_decisions {
	const struct gf_loop_bind *binds;	/* NULL when nbinds is 0 (likewise evicted, failed) */
	size_t nbinds;
	const uint32_t *evicted;
	size_t nevicted;
	/* jobs the cycle tried (a placement attempted) that are still pending, in the order tried */
	const uint32_t *failed;
	size_t nfailed;
};

gf_err gf_loop_cycle(gf_loop *L, int64_t now, struct gf_loop_decisions *out);

/*
 * The caller's reports for externally driven jobs (submitted with
 * gf_loop_submit, arrival = the caller's now):
 *
 * gf_loop_end: job id ended at now (its pods finished or were deleted).  A
 * running job frees its resources in the next gf_loop_cycle (at now, or at
 * its start if a preemptor's grace had not passed); a pending or future one
 * leaves the queue (GF_JOB_WITHDRAWN, partial binds undone); a finished one:
 * nothing.  A now before the loop's clock counts as the clock.
 *
 * gf_loop_unbind: binding job id failed: every pod of it the loop bound is
 * unbound and it goes back to the queue (its place in it kept), to be tried
 * in the next cycle.  A job that is neither running nor partly bound:
 * nothing.
 *
 * Errors: GF_RANGE (no such job), GF_NOMEM, GF_STATE (a broken invariant).
 */
gf_err gf_loop_end(gf_loop *L, uint32_t id, int64_t now);
gf_err gf_loop_unbind(gf_loop *L, uint32_t id);

/*
 * Pending job id is not tried before `until` (loop time), keeping its place
 * in the queue as a job backing off does (config.backoff_initial: under a
 * strict ordering it still blocks the jobs behind it; a reservation holder
 * is tried regardless); a wake-up event runs a cycle then.  The caller's
 * backoff after a binding the API refused (kube-scheduler's backoff queue),
 * given after gf_loop_unbind.  An until not after the clock: nothing.
 * Errors: GF_RANGE (no such job), GF_STATE (not pending), GF_NOMEM.
 */
gf_err gf_loop_hold(gf_loop *L, uint32_t id, int64_t until);

/*
 * The time of the earliest queued event (an arrival, an end, a reservation's
 * wake-up): a caller driving the loop runs a cycle then at the latest.
 * false if none is queued.
 */
bool gf_loop_next_event(const gf_loop *L, int64_t *t);

/*
 * The virtual-time driver: until no event is left, gf_loop_cycle() at the
 * time of the next event.  Errors: GF_NOMEM, GF_STATE (an engine invariant
 * broke: a bug, reported instead of a figure).
 */
gf_err gf_loop_run(gf_loop *L);

/* Run events with time <= until (then the loop can be extended and run again). */
gf_err gf_loop_run_until(gf_loop *L, int64_t until);

size_t gf_loop_njobs(const gf_loop *L);
void gf_loop_job(const gf_loop *L, uint32_t id, struct gf_job_info *out);
void gf_loop_stats(const gf_loop *L, struct gf_loop_stats *out);
const gf_cluster *gf_loop_cluster(const gf_loop *L);

/* Queue q's GPU usage now (milli-GPU, admitted jobs); 0 for an unknown queue. */
int64_t gf_loop_queue_usage(const gf_loop *L, uint16_t q);

/*
 * A job already running where the caller says (a pod bound before the loop
 * knew it, or by someone else): its members bound exactly at where[0..npods)
 * (node, GPUs; job and member ignored), running from the loop's clock, for
 * spec->duration (GF_LOOP_OPEN: until gf_loop_end), charged to its queue
 * without a quota check (it is admitted already).  Not a decision of any
 * cycle.  Errors: as gf_loop_submit; GF_RANGE (a node out of range),
 * GF_EXISTS (it does not fit there: nothing changed).
 */
gf_err gf_loop_place_at(gf_loop *L, const struct gf_job_spec *spec, const struct gf_loop_bind *where,
			uint32_t *id);

/*
 * Member `member` of running job id ended now (its pod finished, was
 * deleted or bound elsewhere): the job's pods are unbound at once, not at
 * the next cycle (the caller reads the cluster meanwhile), and its nodes
 * count as freed room; the job is GF_JOB_DONE.  Its other members, if any,
 * go on as a new running job *rest (GF_LOOP_NO_JOB when none) where they
 * are, with the job's start, estimate, queue place, priority, queue and
 * budgets: a gang ending pod by pod.  Errors: GF_RANGE (no such job or
 * member), GF_STATE (not running), GF_NOMEM.
 */
#define GF_LOOP_NO_JOB UINT32_MAX
gf_err gf_loop_end_member(gf_loop *L, uint32_t id, uint32_t member, uint32_t *rest);

/*
 * A job of one pod on the node the caller chose (kube-scheduler's extender
 * bind: it chose the node): the loop chooses the GPUs there (the policy's
 * GPU for a shared one-GPU pod, else the topology's choice, else the lowest
 * that fit; gpus[] gets them) and it runs as gf_loop_place_at's.  Errors:
 * as gf_loop_place_at; GF_INVAL (npods != 1), GF_EXISTS (it does not fit
 * there: nothing changed).
 */
gf_err gf_loop_place_on(gf_loop *L, const struct gf_job_spec *spec, uint32_t node, uint8_t gpus[GF_MAX_GPUS],
			uint32_t *id);

/*
 * "When will I start?" for a pending job: its reservation time if it is the
 * reservation holder (backfill), its start if it started.  Errors: GF_NOENT
 * (pending without a reservation: EASY backfill plans only for the first
 * blocked job), GF_RANGE (no such job).
 */
gf_err gf_loop_start_time(const gf_loop *L, uint32_t id, int64_t *t);

/*
 * "When will I start?" for every job at once: start[id] (njobs entries) is
 * the start of a started job, the reservation time of a reservation holder
 * (a promise), and for every other pending job its start in the in-order
 * schedule of the queue from the expected ends (queue/forecast.c: an
 * estimate; backfill may start it sooner, higher priorities later); -1 for
 * a job not arrived, unresolvable, or behind a job that never fits.
 * Errors: GF_NOMEM, GF_STATE.
 */
gf_err gf_loop_forecast(gf_loop *L, int64_t *start);

/*
 * gf_loop_forecast cut short: the in-order schedule stops at the first
 * pending job that would start after horizon (it and every job after it,
 * whose starts are no earlier, get -1) or after max_jobs pending jobs have
 * their start (the rest get -1).  Every answer given is the one
 * gf_loop_forecast gives (a job's start depends only on the jobs before it);
 * a reservation holder still gets its reservation, wherever it is.
 * gf_loop_forecast is gf_loop_forecast_upto(L, start, INT64_MAX, SIZE_MAX).
 */
gf_err gf_loop_forecast_upto(gf_loop *L, int64_t *start, int64_t horizon, size_t max_jobs);

/* The timeline sampled every config.sample_every seconds over [0, horizon). */
const struct gf_loop_sample *gf_loop_timeline(const gf_loop *L, size_t *n);

/* Bytes the loop keeps per pod for its job record, member placement, queue entry and events. */
size_t gf_loop_bytes_per_pod(void);

#endif /* GF_QUEUE_LOOP_H */
