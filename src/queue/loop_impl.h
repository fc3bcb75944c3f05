/*
 * queue/loop_impl.h - internals shared by queue/loop.c (events, queue,
 * transitions, the cycle), queue/plan.c (reservations, backfill) and
 * queue/preempt.c (preemption).  Not a public header.
 */
#ifndef GF_QUEUE_LOOP_IMPL_H
#define GF_QUEUE_LOOP_IMPL_H

#include "core/grow.h"
#include "queue/events.h"
#include "queue/loop.h"

#define NONE UINT32_MAX
#define WHOLE 0xFFFFu	/* a queue entry for a whole job (not kube mode) */
#define NO_FAIL SIZE_MAX
enum { Q_OPEN, Q_BLOCKED, Q_DEFERRED };	/* a queue's head: not yet failed, failed, in the fair pass */

struct member {
	uint32_t node;
	uint8_t gpus[GF_MAX_GPUS];
};

/* The compact per-job record (the pod shape, times, state). */
struct job {
	int64_t cpu, mem;
	uint64_t served;	/* the model it serves (placement preference), 0: none */
	int64_t arrival, duration, estimate;
	int64_t start, promised;
	int32_t gpu_count, gpu_milli, spec, priority;
	uint32_t qseq;		/* arrival sequence: the queue's tie-break */
	uint32_t member0;	/* first of its npods members in L->members */
	uint32_t shape;
	uint16_t npods, nbound;
	uint8_t cls, state;
	bool partial;
	bool never_preempt;	/* preemptionPolicy: Never */
	uint8_t why;		/* enum gf_loop_why */
	uint16_t npreempted;	/* times evicted */
	uint16_t queue;		/* its quota queue (when the loop has queues) */
	uint16_t budgets[GF_JOB_MAX_BUDGETS];	/* 1 + disruption budget index; 0: none */
	double lost;		/* milli-GPU seconds of work lost to evictions */
	/* with an admission mask (not the shape's memo): freed-log length when a
	 * try over every node it may use last found no room; NO_FAIL: none */
	size_t fail_pos;
	/* backoff (config.backoff_initial): no try before not_before; failures: tried and not started in a row */
	int64_t not_before;
	uint32_t failures;
	uint32_t tried_cycle;	/* the last cycle that tried it (note_tried's stamp); 0: none */
	/* with an admission mask: no victim set found while starts and frees stood at these counts */
	bool nopre_valid;
	uint64_t nopre_starts;
	size_t nopre_freed;
};

struct entry {
	uint32_t job;
	uint32_t member;	/* WHOLE, or the pod's index in kube mode */
};

struct shape {
	int64_t cpu, mem;
	uint64_t served;
	int32_t count, milli, spec;
	uint32_t npods;
	size_t fail_pos;	/* freed-log length when it last failed to fit; NO_FAIL */
	int8_t resolvable;	/* -1 unknown, 0 no, 1 yes */
	/* found to delay the reservation under plan number inadm_plan with the
	 * freed log at inadm_freed: still so while neither moved (the cluster
	 * and the shadow only lost room since), for estimates >= inadm_est */
	uint64_t inadm_plan;
	size_t inadm_freed, inadm_nahead;
	/* no victim set found while starts and frees stood at these counts, over the
	 * nodes of spot pool nopreempt_pool (0: every node; queue/spot.c) */
	uint64_t nopreempt_starts;
	size_t nopreempt_freed;
	uint8_t nopreempt_pool;
	int64_t inadm_est;
};

#define MAX_RES 32	/* reservations at most (conservative backfill; EASY keeps 1) */
#define PLANS_PER_CYCLE 4	/* new reservations planned in one cycle at most */

/*
 * A reservation: holder starts at `time` on members[] (npods of them), and
 * is expected to end at `end`.  shadow is the cluster as planned at `time`:
 * jobs expected to run past it, the reservations active then, the holder,
 * and every job later admitted past it.
 */
struct reservation {
	uint32_t holder;
	int64_t time, end;
	struct member *members;
	size_t cap;
	gf_cluster *shadow;
	bool displaced;	/* a higher-priority start took room it counted on */
};

struct prev_plan {
	uint32_t holder;
	struct member *members;
	size_t cap;
};

/* A quota queue's definition and usage (queue/quota.c). */
struct qstate {
	struct gf_queue_quota d;
	int64_t used;				/* milli-GPU of its admitted jobs */
	int64_t used_model[GF_QUOTA_MAX_MODELS];
};

struct gf_loop {
	struct gf_loop_config cfg;
	const struct gf_catalog *cat;
	gf_cluster *real, *scratch, *empty;
	bool borrowed;		/* real is the caller's (gf_loop_create_on) */
	gf_sched *sched, *planner;
	const struct gf_policy_ops *ops;	/* to remake sched and planner when a node is added */
	struct gf_policy_env env;
	uint32_t *prio;			/* node priorities given (gf_loop_set_node_priorities); NULL: none */
	uint64_t sched_computed, sched_cached;	/* score counters of schedulers remade since */
	struct gf_rng rng;
	size_t nnodes, mask_words;

	struct job *jobs;
	size_t njobs, jobs_cap;
	struct member *members;
	size_t nmembers, members_cap;

	struct gf_events events;
	struct entry *pend, *incoming, *merge;
	size_t npend, pend_cap, nincoming, incoming_cap, merge_cap;
	uint32_t *running;	/* running jobs by (expected end, id) */
	size_t nrunning, running_cap;
	uint32_t *freed;	/* nodes freed by ends, in order */
	size_t nfreed, freed_cap;
	uint32_t *partials;	/* kube mode: gangs with some members bound */
	size_t npartials, partials_cap;

	struct shape *shapes;
	size_t nshapes, shapes_cap;
	uint32_t *slots;	/* shape hash: index + 1, 0 = empty */
	size_t nslots;

	/* planner */
	uint32_t *real_ver, *scratch_ver, *node_slots, *slots_ver;
	uint32_t slots_shape;	/* the shape node_slots[] counts (valid where slots_ver matches) */
	struct gf_node_spec *specs;	/* for the shadows */
	struct reservation res[MAX_RES];	/* in queue order of their holders = plan order */
	size_t nres, max_res;
	struct prev_plan prev[MAX_RES];	/* dropped plans, for "never later" */
	size_t nprev_next;
	bool plan_dirty;
	uint32_t cycle_plans;		/* plans made in the current cycle */
	uint64_t *mask;			/* scratch node mask */
	uint64_t *admit_mask;		/* a job's admission mask and a caller's, intersected */
	struct member *tmp_members;	/* a preemptor's planned pods */
	size_t tmp_cap;

	struct qstate *queues;	/* none: no quotas */
	size_t nqueues;
	bool quota_refused;	/* the last gf_loop_try_job failed on a quota, not on room */
	bool res_unadmitted;	/* bind_reserved: a planned node no longer admits the holder */
	bool quota_bypass;	/* preplace: a warm start's jobs are already admitted */
	uint8_t *q_state;	/* strict FIFO, per queue in this cycle: Q_OPEN, Q_BLOCKED, Q_DEFERRED */
	uint32_t *borrowers;	/* pend indexes of jobs that would borrow, for the fair-share pass */
	size_t nborrowers, borrowers_cap;
	uint32_t *q_next;	/* per queue: next borrowers[] index to look at */
	double hist_sum[GF_LOOP_MAX_CLASSES];	/* finished run times per class (history estimates) */
	uint64_t hist_n[GF_LOOP_MAX_CLASSES];
	uint8_t why;		/* what the last try refused on beyond room (try_backfill: GF_LOOP_WHY_RESERVED) */
	bool no_reserve;	/* per-queue: the job in the backfill step may not take a reservation */
	/* the current cycle's decisions (gf_loop_cycle's out) */
	struct gf_loop_bind *binds;
	size_t nbinds, binds_cap;
	uint32_t *evicted;
	size_t nevicted, evicted_cap;
	uint32_t *tried;	/* jobs this cycle tried (a placement attempted), then those that failed */
	size_t ntried, tried_cap;
	int64_t *budget_left;	/* disruptions each budget still allows (< 0: violated) */
	size_t nbudgets, budgets_cap;
	int64_t start_delay;	/* the next confirm starts the job this much later (a preemptor's grace) */
	int64_t now, last;
	uint32_t next_qseq;
	bool ran;
	int64_t used_cls[GF_LOOP_MAX_CLASSES];
	struct gf_loop_stats stats;
	struct gf_loop_sample *timeline;
	size_t ntimeline, timeline_cap;
	int64_t next_sample;
	struct gf_spot *spot;	/* capacity types, notices (queue/spot.c); NULL: spot off */
	int32_t min_prio;	/* lowest priority of jobs [0, min_prio_n) (preempt.c) */
	size_t min_prio_n;
};

static inline struct gf_pod_spec gf_loop_pod_of(const struct job *j)
{
	struct gf_pod_spec p = { .cpu_milli = j->cpu, .mem_mib = j->mem, .gpu_count = j->gpu_count,
				 .gpu_milli = j->gpu_milli, .spec = j->spec, .priority = j->priority,
				 .duration = j->duration };

	p.served_model = j->served;
	return p;
}

static inline int64_t gf_loop_expected_end(const struct job *j)
{
	return j->start + j->estimate;
}

static inline int64_t gf_loop_max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

/* loop.c */

/* How many pods like p fit on node state nd, greedily, at most cap. */
uint32_t gf_loop_node_slots(const struct gf_catalog *cat, const struct gf_node *nd,
			    const struct gf_pod_spec *p, uint32_t cap);
/* Place pods [from, to) like p on cluster c with scheduler s into m[]; all or none. */
bool gf_loop_place_pods(gf_loop *L, gf_sched *s, gf_cluster *c, const struct gf_pod_spec *p,
			const uint64_t *allowed, struct member *m, uint32_t from, uint32_t to);
/* Bind pods [0, n) exactly where m says; all or none. */
bool gf_loop_bind_pods(gf_cluster *c, const struct gf_pod_spec *p, const struct member *m, uint32_t n);
/* Unbind pods [0, n) (in reverse). */
void gf_loop_unbind_pods(gf_cluster *c, const struct gf_pod_spec *p, const struct member *m, uint32_t n);
/* assume / forget: n pods of j were just bound in the real cluster / undo all its binds. */
void gf_loop_assume(gf_loop *L, struct job *j, uint32_t n);
void gf_loop_forget(gf_loop *L, struct job *j);
/* With history estimates: set a pending job's estimate from its class's finished jobs. */
void gf_loop_history_estimate(gf_loop *L, struct job *j);
/* Jobs of shapes now resolvable that were UNRESOLVABLE join the queue (a node was added or grew). */
gf_err gf_loop_requeue_unresolvable(gf_loop *L);
/* Unbind a running job (freed-node log, running list, allocation); GF_STATE if inconsistent. */
gf_err gf_loop_unbind_job(gf_loop *L, uint32_t id);
/* Note members [from, to) of job id as bound by this cycle (gf_loop_cycle's decisions). */
gf_err gf_loop_note_binds(gf_loop *L, uint32_t id, uint32_t from, uint32_t to);
/* spot.c: the mask of job id's spot pool intersected with a (NULL: every node). */
const uint64_t *gf_loop_spot_admission(gf_loop *L, uint32_t id, const uint64_t *a);
/* spot.c: try job id pool by pool when it has a pool order (true: handled, *ok its result). */
bool gf_loop_spot_try(gf_loop *L, uint32_t id, const uint64_t *allowed, bool *ok);
/* spot.c: the spot pool whose mask gf_loop_admission gives job id (1..3), 0 for no mask, -1 for another mask. */
int gf_loop_spot_pool_key(gf_loop *L, uint32_t id);
/* spot.c: a run of job id ends now (finish, eviction, stop): charge it.  GF_NOMEM. */
gf_err gf_loop_spot_run_ended(gf_loop *L, uint32_t id);
void gf_loop_spot_free(gf_loop *L);
/* Job id's admission mask (config.admit, and its spot pool's), NULL: every node. */
static inline const uint64_t *gf_loop_admission(gf_loop *L, uint32_t id)
{
	const uint64_t *a = L->cfg.admit ? L->cfg.admit(L->cfg.admit_ud, id) : NULL;

	return L->spot ? gf_loop_spot_admission(L, id, a) : a;
}
/*
 * Job id's ordering: its queue's under GF_QP_PER_QUEUE (backfill without
 * queues), else the policy's (strict-fifo: strict, best-effort-fifo and
 * kube: skip-ahead, the backfills: backfill).
 */
static inline enum gf_queue_ordering gf_loop_ordering(const gf_loop *L, uint32_t id)
{
	switch (L->cfg.policy) {
	case GF_QP_STRICT_FIFO:
		return GF_ORDER_STRICT;
	case GF_QP_KUBE:
	case GF_QP_BEST_EFFORT_FIFO:
		return GF_ORDER_SKIP_AHEAD;
	case GF_QP_PER_QUEUE:
		return L->nqueues ? L->queues[L->jobs[id].queue].d.ordering : GF_ORDER_BACKFILL;
	default:
		return GF_ORDER_BACKFILL;
	}
}
/* Bind the whole job in the real cluster by the policy (allowed: node mask or NULL). */
bool gf_loop_try_job(gf_loop *L, uint32_t id, const uint64_t *allowed);

/* plan.c */

/* Refresh the scratch cluster from the real one where either changed. */
gf_err gf_loop_sync_scratch(gf_loop *L);
/* Drop reservations [from, nres): their holders are planned again when reached. */
gf_err gf_loop_drop_reservations(gf_loop *L, size_t from);
/* Bind pods m[0, n) into the shadows of reservations [from, to) starting before end; all or none. */
bool gf_loop_bind_in_shadows(gf_loop *L, const struct gf_pod_spec *p, const struct member *m, uint32_t n,
			     int64_t end, size_t from, size_t to);
/* A borrower in the fair-share pass: it may start only behind every reservation; *ok. */
bool gf_loop_backfill_borrower(gf_loop *L, uint32_t id);
/* One job of a backfill walk, *nahead reservations passed; *ok when it started (bound, not confirmed). */
gf_err gf_loop_backfill_step(gf_loop *L, uint32_t id, size_t *nahead, bool *ok);

/* quota.c */

/* Check queues[0, n) and copy them into fresh arrays (*out etc., caller frees); GF_INVAL, GF_NOMEM. */
gf_err gf_loop_quota_copy(const struct gf_queue_quota *queues, size_t n, struct qstate **out,
			  uint8_t **q_state, uint32_t **q_next);
/* Copy and check the config's queues; GF_INVAL, GF_NOMEM. */
gf_err gf_loop_quota_init(gf_loop *L, const struct gf_loop_config *cfg);
/* Are quotas enforced (there are queues and the policy is not kube)? */
static inline bool gf_loop_has_quotas(const gf_loop *L)
{
	return L->nqueues > 0;
}
/* Add (sign 1) or remove (-1) members m[0, n) of job j from its queue's usage. */
void gf_loop_quota_charge(gf_loop *L, const struct job *j, const struct member *m, uint32_t n, int sign);
/* Would job j's queue admit the whole job (m: its placement, NULL: the total only)?  Marks starvation. */
bool gf_loop_quota_admits(gf_loop *L, const struct job *j, const struct member *m);
/* Would job j make its queue borrow (usage above nominal, in a cohort)? */
bool gf_loop_quota_borrows(const gf_loop *L, const struct job *j);
/* Queue qi's weighted share (borrowed / weight) with r more milli-GPU admitted. */
double gf_loop_quota_share(const gf_loop *L, uint16_t qi, int64_t r);
/* Is job j's queue within its nominal quota with j admitted (a reclaimer)? */
bool gf_loop_quota_within_nominal(const gf_loop *L, const struct job *j);
/* May running job v be evicted for job j (priority, or reclaim from a borrowing queue)? */
bool gf_loop_quota_may_evict(const gf_loop *L, const struct job *j, const struct job *v, bool reclaim);

/* preempt.c */

/* Evict lower priorities if that makes job id fit now (reservations [0, nahead) ahead); *ok. */
gf_err gf_loop_try_preempt(gf_loop *L, uint32_t id, size_t nahead, bool *ok);

#endif /* GF_QUEUE_LOOP_IMPL_H */
