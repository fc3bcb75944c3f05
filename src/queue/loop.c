/*
 * queue/loop.c - the time loop: events, the pending queue, gangs, EASY
 * backfill with reservations, and kube-scheduler's per-pod control.
 *
 * Event order.  Events pop by (time, push sequence) (queue/events.h).  All
 * the events of one time are applied (arrivals join the queue, ends unbind
 * their members), then one scheduling cycle runs.  Time integrals
 * (allocation) and timeline samples are taken as the clock moves, with the
 * state constant between two event times.
 *
 * Queue order.  One comparator: priority (higher first), then arrival
 * sequence (the order in which arrival events popped), then member index
 * (kube mode queues pods, the other policies whole jobs).  New arrivals are
 * sorted and merged into the ordered pending array at the start of a cycle.
 *
 * A cycle walks the pending jobs in order and tries each:
 *   strict-fifo       stops at the first job that does not fit;
 *   best-effort-fifo  skips it;
 *   backfill          gives the first job that does not fit (the holder) a
 *                     reservation, then starts a later job only if it does
 *                     not delay it (below);
 *   kube              tries pods, not jobs: a gang's members bind one by one
 *                     and hold their GPUs while the gang is incomplete; the
 *                     job starts when its last member binds.
 * A gang (npods > 1) outside kube mode is placed all or nothing: each member
 * is placed by the policy and bound (assume); if one fails, the bound ones
 * are unbound in reverse (forget) and the cluster is exactly as before, since
 * bind and unbind are exact inverses.
 *
 * Park and requeue.  When a job (a pod shape) fails to fit, the shape
 * remembers the length of the freed-node log at that moment.  Binds only
 * take resources away, so the shape can fit again only on a node freed since
 * (an end event appends its members' nodes to the log); the next try first
 * checks just those nodes with gf_cluster_fits() and parks the job again at
 * once if none fits.  This is kube-scheduler's requeue on a cluster event,
 * exact here because the engine sees every change.  A cycle costs
 * O(pending) plus the placements actually tried.
 *
 * Reservation (EASY backfill).  The planner keeps a scratch copy of the
 * cluster, refreshed node by node where either side changed.  For holder h
 * it releases the running jobs from the scratch in order of expected end
 * (start + estimate, never before now), and after each batch of equal
 * expected ends checks h: first a cheap bound (per node, how many of h's
 * pods fit, greedily; their sum must reach npods), then the policy's own
 * placement on the scratch.  The first time t at which h fits is the
 * reservation, with the nodes and GPUs h would use; the scratch, with h
 * bound, is then the shadow: the cluster as it will be at t.  A later job j
 * that fits now may start iff it is expected to end by t, or its binds (the
 * same nodes and GPUs) also fit in the shadow, where they are then added.
 * If j's first placement conflicts, it is tried once more with the
 * reservation's nodes masked out (gf_sched_place_masked).  When h's turn
 * comes and the policy's own placement fails, the reserved nodes and GPUs are
 * bound exactly, so with estimates that never under-run a reservation is
 * never late.  The plan is redone when a job ended before its expected end
 * (an end on time is already in the plan), a job ahead of the holder (a
 * higher priority) started on room the shadow counted on (one that fits the
 * shadow is added to it instead), or the holder changed.
 */
#include <stdlib.h>
#include <string.h>

#include "queue/events.h"
#include "queue/loop.h"

#define NONE UINT32_MAX
#define WHOLE 0xFFFFu	/* a queue entry for a whole job (not kube mode) */
#define NO_FAIL SIZE_MAX

struct member {
	uint32_t node;
	uint8_t gpus[GF_MAX_GPUS];
};

/* The compact per-job record (the pod shape, times, state). */
struct job {
	int64_t cpu, mem;
	int64_t arrival, duration, estimate;
	int64_t start, promised;
	int32_t gpu_count, gpu_milli, spec, priority;
	uint32_t qseq;		/* arrival sequence: the queue's tie-break */
	uint32_t member0;	/* first of its npods members in L->members */
	uint32_t shape;
	uint16_t npods, nbound;
	uint8_t cls, state;
	bool partial;
	uint16_t npreempted;	/* times evicted */
	double lost;		/* milli-GPU seconds of work lost to evictions */
};

struct entry {
	uint32_t job;
	uint32_t member;	/* WHOLE, or the pod's index in kube mode */
};

struct shape {
	int64_t cpu, mem;
	int32_t count, milli, spec;
	uint32_t npods;
	size_t fail_pos;	/* freed-log length when it last failed to fit; NO_FAIL */
	int8_t resolvable;	/* -1 unknown, 0 no, 1 yes */
	/* found to delay the reservation under plan number inadm_plan with the
	 * freed log at inadm_freed: still so while neither moved (the cluster
	 * and the shadow only lost room since), for estimates >= inadm_est */
	uint64_t inadm_plan;
	size_t inadm_freed, inadm_nahead;
	/* no victim set found while starts and frees stood at these counts */
	uint64_t nopreempt_starts;
	size_t nopreempt_freed;
	int64_t inadm_est;
};

#define MAX_RES 32	/* reservations at most (conservative backfill; EASY keeps 1) */

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

struct gf_loop {
	struct gf_loop_config cfg;
	const struct gf_catalog *cat;
	gf_cluster *real, *scratch, *empty;
	gf_sched *sched, *planner;
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
	uint64_t *mask;			/* scratch node mask */
	struct member *tmp_members;	/* a preemptor's planned pods */
	size_t tmp_cap;

	int64_t now, last;
	uint32_t next_qseq;
	bool ran;
	int64_t used_cls[GF_LOOP_MAX_CLASSES];
	struct gf_loop_stats stats;
	struct gf_loop_sample *timeline;
	size_t ntimeline, timeline_cap;
	int64_t next_sample;
};

static const char *const qp_names[GF_QP_COUNT_] = {
	[GF_QP_KUBE] = "kube",
	[GF_QP_STRICT_FIFO] = "strict-fifo",
	[GF_QP_BEST_EFFORT_FIFO] = "best-effort-fifo",
	[GF_QP_BACKFILL] = "backfill",
	[GF_QP_CONSERVATIVE] = "conservative-backfill",
};

const char *gf_queue_policy_name(enum gf_queue_policy qp)
{
	return (unsigned)qp < GF_QP_COUNT_ ? qp_names[qp] : NULL;
}

bool gf_queue_policy_find(const char *name, enum gf_queue_policy *out)
{
	for (int i = 0; i < GF_QP_COUNT_; i++) {
		if (!strcmp(name, qp_names[i])) {
			*out = (enum gf_queue_policy)i;
			return true;
		}
	}
	return false;
}

size_t gf_loop_bytes_per_pod(void)
{
	/* job record, member placement, queue entry (+ merge copy), arrival and
	 * end events, running list and freed-log slots */
	return sizeof(struct job) + sizeof(struct member) + 2 * sizeof(struct entry) +
	       2 * sizeof(struct gf_event) + 2 * sizeof(uint32_t);
}

/* Grow *arr (elem-size items, capacity *cap) to hold at least need. */
static gf_err grow(void *arr, size_t *cap, size_t need, size_t elem)
{
	void **p = arr;

	if (need <= *cap)
		return GF_OK;
	size_t ncap = *cap ? *cap : 64;

	while (ncap < need)
		ncap *= 2;
	void *n = realloc(*p, ncap * elem);

	if (!n)
		return GF_NOMEM;
	*p = n;
	*cap = ncap;
	return GF_OK;
}

gf_err gf_loop_create(const struct gf_node_spec *nodes, size_t nnodes,
		      const struct gf_policy_ops *ops, const struct gf_policy_env *env,
		      const struct gf_loop_config *cfg, gf_loop **out)
{
	gf_loop *L;
	gf_err err;

	if (!nnodes || (unsigned)cfg->policy >= GF_QP_COUNT_ || cfg->horizon <= 0 ||
	    cfg->sample_every < 0 || cfg->preempt_wait < 0 ||
	    (cfg->preemption && cfg->policy == GF_QP_KUBE))
		return GF_INVAL;
	L = calloc(1, sizeof(*L));
	if (!L)
		return GF_NOMEM;
	L->cfg = *cfg;
	L->cat = env->cat;
	L->nnodes = nnodes;
	L->mask_words = (nnodes + 63) / 64;
	L->max_res = cfg->policy == GF_QP_CONSERVATIVE ? MAX_RES : 1;
	for (size_t r = 0; r < MAX_RES; r++)
		L->prev[r].holder = NONE;
	gf_events_init(&L->events);
	gf_rng_init(&L->rng, cfg->seed);
	if ((err = gf_cluster_create(nodes, nnodes, &L->real)) ||
	    (err = gf_cluster_create(nodes, nnodes, &L->scratch)) ||
	    (err = gf_cluster_create(nodes, nnodes, &L->empty)))
		goto fail;
	struct gf_policy_env e = *env;

	e.cluster = L->real;
	if ((err = gf_sched_create(ops, &e, &L->sched)))
		goto fail;
	e.cluster = L->scratch;
	if ((err = gf_sched_create(ops, &e, &L->planner)))
		goto fail;
	L->real_ver = calloc(nnodes, sizeof(*L->real_ver));
	L->scratch_ver = calloc(nnodes, sizeof(*L->scratch_ver));
	L->node_slots = calloc(nnodes, sizeof(*L->node_slots));
	L->slots_ver = calloc(nnodes, sizeof(*L->slots_ver));
	L->slots_shape = NONE;
	L->mask = calloc(L->mask_words, sizeof(*L->mask));
	L->specs = malloc(nnodes * sizeof(*L->specs));
	if (L->specs)
		memcpy(L->specs, nodes, nnodes * sizeof(*nodes));
	L->nslots = 1024;
	L->slots = calloc(L->nslots, sizeof(*L->slots));
	if (!L->real_ver || !L->scratch_ver || !L->node_slots || !L->slots_ver || !L->mask ||
	    !L->specs || !L->slots) {
		err = GF_NOMEM;
		goto fail;
	}
	L->stats.gpu_capacity = gf_cluster_gpu_capacity(L->real);
	*out = L;
	return GF_OK;
fail:
	gf_loop_destroy(L);
	return err;
}

void gf_loop_destroy(gf_loop *L)
{
	if (!L)
		return;
	gf_sched_destroy(L->sched);
	gf_sched_destroy(L->planner);
	gf_cluster_destroy(L->real);
	gf_cluster_destroy(L->scratch);
	gf_cluster_destroy(L->empty);
	gf_events_release(&L->events);
	free(L->jobs);
	free(L->members);
	free(L->pend);
	free(L->incoming);
	free(L->merge);
	free(L->running);
	free(L->freed);
	free(L->partials);
	free(L->shapes);
	free(L->slots);
	free(L->real_ver);
	free(L->scratch_ver);
	free(L->node_slots);
	free(L->slots_ver);
	for (size_t r = 0; r < MAX_RES; r++) {
		free(L->res[r].members);
		gf_cluster_destroy(L->res[r].shadow);
		free(L->prev[r].members);
	}
	free(L->mask);
	free(L->specs);
	free(L->tmp_members);
	free(L->timeline);
	free(L);
}

void gf_loop_set_node_priorities(gf_loop *L, const uint32_t *prio)
{
	gf_sched_set_priorities(L->sched, prio);
	gf_sched_set_priorities(L->planner, prio);
}

const gf_cluster *gf_loop_cluster(const gf_loop *L)
{
	return L->real;
}

size_t gf_loop_njobs(const gf_loop *L)
{
	return L->njobs;
}

/* ---- shapes: interned pod requests, with the park memo ---- */

static uint64_t shape_hash(const struct shape *s)
{
	int64_t f[6] = { s->cpu, s->mem, s->count, s->milli, s->spec, s->npods };
	const unsigned char *b = (const unsigned char *)f;
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < sizeof(f); i++) {
		h ^= b[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

static bool shape_eq(const struct shape *a, const struct shape *b)
{
	return a->cpu == b->cpu && a->mem == b->mem && a->count == b->count &&
	       a->milli == b->milli && a->spec == b->spec && a->npods == b->npods;
}

static gf_err rehash(gf_loop *L)
{
	size_t n = L->nslots * 2;
	uint32_t *slots = calloc(n, sizeof(*slots));

	if (!slots)
		return GF_NOMEM;
	for (size_t i = 0; i < L->nshapes; i++) {
		size_t h = shape_hash(&L->shapes[i]) & (n - 1);

		while (slots[h])
			h = (h + 1) & (n - 1);
		slots[h] = (uint32_t)i + 1;
	}
	free(L->slots);
	L->slots = slots;
	L->nslots = n;
	return GF_OK;
}

static gf_err intern_shape(gf_loop *L, const struct gf_job_spec *s, uint32_t *id)
{
	struct shape k = {
		.cpu = s->pod.cpu_milli, .mem = s->pod.mem_mib, .count = s->pod.gpu_count,
		.milli = s->pod.gpu_milli, .spec = s->pod.spec,
		.npods = L->cfg.policy == GF_QP_KUBE ? 1 : s->npods,
		.fail_pos = NO_FAIL, .resolvable = -1, .inadm_plan = UINT64_MAX,
		.nopreempt_starts = UINT64_MAX,
	};
	size_t h = shape_hash(&k) & (L->nslots - 1);

	while (L->slots[h]) {
		if (shape_eq(&L->shapes[L->slots[h] - 1], &k)) {
			*id = L->slots[h] - 1;
			return GF_OK;
		}
		h = (h + 1) & (L->nslots - 1);
	}
	if (grow(&L->shapes, &L->shapes_cap, L->nshapes + 1, sizeof(*L->shapes)))
		return GF_NOMEM;
	L->shapes[L->nshapes] = k;
	L->slots[h] = (uint32_t)++L->nshapes;
	*id = (uint32_t)(L->nshapes - 1);
	if (L->nshapes * 2 > L->nslots)
		return rehash(L);
	return GF_OK;
}

/* ---- small helpers ---- */

static struct gf_pod_spec pod_of(const struct job *j)
{
	struct gf_pod_spec p;

	memset(&p, 0, sizeof(p));
	p.cpu_milli = j->cpu;
	p.mem_mib = j->mem;
	p.gpu_count = j->gpu_count;
	p.gpu_milli = j->gpu_milli;
	p.spec = j->spec;
	p.priority = j->priority;
	p.duration = j->duration;
	return p;
}

static int64_t expected_end(const struct job *j)
{
	return j->start + j->estimate;
}

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

/* How many pods like p fit on node state nd, greedily, at most cap. */
static uint32_t node_slots(const struct gf_catalog *cat, const struct gf_node *nd,
			   const struct gf_pod_spec *p, uint32_t cap)
{
	struct gf_node tmp = *nd;
	int64_t cpu = nd->cpu_free, mem = nd->mem_free;
	uint32_t n = 0;

	if (p->gpu_count > 0 && (nd->ngpus < p->gpu_count || !gf_catalog_allows(cat, p->spec, nd->model)))
		return 0;
	if (p->cpu_milli == 0 && p->mem_mib == 0 && p->gpu_count == 0)
		return cap;
	while (n < cap && cpu >= p->cpu_milli && mem >= p->mem_mib) {
		if (p->gpu_count > 0) {
			uint8_t pick[GF_MAX_GPUS];

			if (gf_gpus_ascending_fit(&tmp, p->gpu_count, p->gpu_milli, pick) < p->gpu_count)
				break;
			for (int k = 0; k < p->gpu_count; k++)
				tmp.gpu_free[pick[k]] -= (uint16_t)p->gpu_milli;
		}
		cpu -= p->cpu_milli;
		mem -= p->mem_mib;
		n++;
	}
	return n;
}

/* Could the job's shape fit now?  False only when provably not (see "Park and requeue"). */
static bool may_fit(gf_loop *L, const struct job *j, const struct gf_pod_spec *p)
{
	struct shape *s = &L->shapes[j->shape];

	if (s->fail_pos == NO_FAIL)
		return true;
	for (size_t k = s->fail_pos; k < L->nfreed; k++)
		if (gf_cluster_fits(L->real, L->cat, L->freed[k], p))
			return true;
	s->fail_pos = L->nfreed;	/* still no room: parked again, nothing tried */
	return false;
}

static void park(gf_loop *L, const struct job *j)
{
	L->shapes[j->shape].fail_pos = L->nfreed;
}

/* Place members [from, to) of a job like p on cluster c with scheduler s; all or none. */
static bool place_members(gf_loop *L, gf_sched *s, gf_cluster *c, const struct gf_pod_spec *p,
			  const uint64_t *allowed, struct member *m, uint32_t from, uint32_t to)
{
	for (uint32_t k = from; k < to; k++) {
		struct gf_placement pl;

		if (gf_sched_place_masked(s, p, &L->rng, allowed, &pl) != GF_PLACED ||
		    gf_cluster_bind(c, pl.node, p, pl.gpus) != GF_OK) {
			while (k-- > from)
				gf_cluster_unbind(c, m[k].node, p, m[k].gpus);
			return false;
		}
		m[k].node = pl.node;
		memcpy(m[k].gpus, pl.gpus, sizeof(m[k].gpus));
	}
	return true;
}

/* Bind members [0, n) exactly where m says; all or none. */
static bool bind_exact(gf_cluster *c, const struct gf_pod_spec *p, const struct member *m, uint32_t n)
{
	for (uint32_t k = 0; k < n; k++) {
		if (gf_cluster_bind(c, m[k].node, p, m[k].gpus) != GF_OK) {
			while (k-- > 0)
				gf_cluster_unbind(c, m[k].node, p, m[k].gpus);
			return false;
		}
	}
	return true;
}

static void unbind_members(gf_cluster *c, const struct gf_pod_spec *p, const struct member *m, uint32_t n)
{
	while (n-- > 0)
		gf_cluster_unbind(c, m[n].node, p, m[n].gpus);
}

/* ---- clock, integrals, timeline ---- */

static gf_err sample(gf_loop *L, int64_t t)
{
	if (grow(&L->timeline, &L->timeline_cap, L->ntimeline + 1, sizeof(*L->timeline)))
		return GF_NOMEM;
	L->timeline[L->ntimeline++] = (struct gf_loop_sample){
		.time = t, .gpu_used = gf_cluster_gpu_used(L->real),
		.pending = (uint32_t)(L->npend + L->nincoming), .running = (uint32_t)L->nrunning,
	};
	return GF_OK;
}

/* Move the clock to t: integrate the (constant) state over [last, t) within the horizon. */
static gf_err advance(gf_loop *L, int64_t t)
{
	int64_t a = L->last < L->cfg.horizon ? L->last : L->cfg.horizon;
	int64_t b = t < L->cfg.horizon ? t : L->cfg.horizon;

	if (b > a) {
		for (int c = 0; c < GF_LOOP_MAX_CLASSES; c++)
			L->stats.gpu_milli_s[c] += (double)L->used_cls[c] * (double)(b - a);
		L->stats.gpu_milli_s_all += (double)gf_cluster_gpu_used(L->real) * (double)(b - a);
	}
	while (L->cfg.sample_every > 0 && L->next_sample <= t && L->next_sample < L->cfg.horizon) {
		if (sample(L, L->next_sample))
			return GF_NOMEM;
		L->next_sample += L->cfg.sample_every;
	}
	if (t > L->last)
		L->last = t;
	return GF_OK;
}

/* ---- the running list, ordered by (expected end, id) ---- */

static bool runs_before(const gf_loop *L, uint32_t a, uint32_t b)
{
	int64_t ea = expected_end(&L->jobs[a]), eb = expected_end(&L->jobs[b]);

	return ea < eb || (ea == eb && a < b);
}

static size_t running_pos(const gf_loop *L, uint32_t id)
{
	size_t lo = 0, hi = L->nrunning;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (runs_before(L, L->running[mid], id))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* ---- transitions ---- */

/* confirm: every member is bound; the job runs until now + duration. */
static gf_err confirm(gf_loop *L, uint32_t id)
{
	struct job *j = &L->jobs[id];
	size_t pos;

	if (grow(&L->running, &L->running_cap, L->nrunning + 1, sizeof(*L->running)))
		return GF_NOMEM;
	j->state = GF_JOB_RUNNING;
	j->start = L->now;
	L->stats.starts++;
	if (gf_events_push(&L->events, L->now + j->duration, GF_EV_END, id))
		return GF_NOMEM;
	pos = running_pos(L, id);
	memmove(&L->running[pos + 1], &L->running[pos], (L->nrunning - pos) * sizeof(*L->running));
	L->running[pos] = id;
	L->nrunning++;
	return GF_OK;
}

/* assume: members [from, to) were just bound in the real cluster. */
static void assume(gf_loop *L, struct job *j, uint32_t n)
{
	j->nbound = (uint16_t)(j->nbound + n);
	L->used_cls[j->cls] += (int64_t)n * j->gpu_count * j->gpu_milli;
}

/* forget: undo the binds of a job that was assumed but may not start. */
static void forget(gf_loop *L, struct job *j)
{
	struct gf_pod_spec p = pod_of(j);

	unbind_members(L->real, &p, &L->members[j->member0], j->nbound);
	L->used_cls[j->cls] -= (int64_t)j->nbound * j->gpu_count * j->gpu_milli;
	j->nbound = 0;
}

/* Unbind a running job's pods; its nodes go to the freed log (the requeue event). */
static gf_err release(gf_loop *L, uint32_t id)
{
	struct job *j = &L->jobs[id];
	struct gf_pod_spec p = pod_of(j);
	size_t pos = running_pos(L, id);

	if (pos >= L->nrunning || L->running[pos] != id)
		return GF_STATE;
	memmove(&L->running[pos], &L->running[pos + 1], (L->nrunning - pos - 1) * sizeof(*L->running));
	L->nrunning--;
	if (grow(&L->freed, &L->freed_cap, L->nfreed + j->npods, sizeof(*L->freed)))
		return GF_NOMEM;
	for (uint32_t k = j->npods; k-- > 0;) {
		const struct member *m = &L->members[j->member0 + k];

		if (gf_cluster_unbind(L->real, m->node, &p, m->gpus))
			return GF_STATE;
		L->freed[L->nfreed++] = m->node;
	}
	L->used_cls[j->cls] -= (int64_t)j->npods * j->gpu_count * j->gpu_milli;
	j->nbound = 0;
	return GF_OK;
}

/* finish: a running job ends (an end event of an evicted run is stale and ignored). */
static gf_err finish(gf_loop *L, uint32_t id)
{
	struct job *j = &L->jobs[id];
	gf_err err;

	if (j->state != GF_JOB_RUNNING || L->now != j->start + j->duration)
		return GF_OK;
	if ((err = release(L, id)))
		return err;
	j->state = GF_JOB_DONE;
	/* the plan counted on this end at its expected time; only an earlier one changes it */
	if (L->now < expected_end(j))
		L->plan_dirty = true;
	return GF_OK;
}

/* Does a job like this fit in the empty cluster at all? */
static bool resolvable(gf_loop *L, const struct job *j, const struct gf_pod_spec *p)
{
	struct shape *s = &L->shapes[j->shape];

	if (s->resolvable < 0) {
		uint64_t total = 0;

		for (size_t i = 0; i < L->nnodes && total < j->npods; i++)
			total += node_slots(L->cat, gf_cluster_node(L->empty, i), p, j->npods);
		s->resolvable = total >= j->npods;
	}
	return s->resolvable;
}

/* add: the job arrives and joins the queue (kube mode: one entry per pod). */
static gf_err add(gf_loop *L, uint32_t id)
{
	struct job *j = &L->jobs[id];
	struct gf_pod_spec p = pod_of(j);
	uint32_t n = L->cfg.policy == GF_QP_KUBE ? j->npods : 1;

	j->qseq = L->next_qseq++;
	if (!resolvable(L, j, &p)) {
		j->state = GF_JOB_UNRESOLVABLE;
		return GF_OK;
	}
	j->state = GF_JOB_PENDING;
	if (grow(&L->incoming, &L->incoming_cap, L->nincoming + n, sizeof(*L->incoming)))
		return GF_NOMEM;
	for (uint32_t k = 0; k < n; k++)
		L->incoming[L->nincoming++] = (struct entry){ id, L->cfg.policy == GF_QP_KUBE ? k : WHOLE };
	return GF_OK;
}

/* ---- the queue ---- */

static int entry_cmp_L(const gf_loop *L, const struct entry *a, const struct entry *b)
{
	const struct job *ja = &L->jobs[a->job], *jb = &L->jobs[b->job];

	if (ja->priority != jb->priority)
		return ja->priority > jb->priority ? -1 : 1;
	if (ja->qseq != jb->qseq)
		return ja->qseq < jb->qseq ? -1 : 1;
	return a->member < b->member ? -1 : a->member > b->member;
}

/* Insertion sort of the new arrivals (few per cycle), then one merge pass. */
static gf_err merge_incoming(gf_loop *L)
{
	size_t n = L->nincoming;

	if (n == 0)
		return GF_OK;
	for (size_t i = 1; i < n; i++) {
		struct entry e = L->incoming[i];
		size_t k = i;

		while (k > 0 && entry_cmp_L(L, &e, &L->incoming[k - 1]) < 0) {
			L->incoming[k] = L->incoming[k - 1];
			k--;
		}
		L->incoming[k] = e;
	}
	if (grow(&L->merge, &L->merge_cap, L->npend + n, sizeof(*L->merge)) ||
	    grow(&L->pend, &L->pend_cap, L->npend + n, sizeof(*L->pend)))
		return GF_NOMEM;
	size_t a = 0, b = 0, w = 0;

	/* arrivals usually go last: skip the common prefix without copying */
	while (a < L->npend && entry_cmp_L(L, &L->pend[a], &L->incoming[0]) < 0)
		a++;
	size_t keep = a;

	w = 0;
	while (a < L->npend || b < n) {
		if (b == n || (a < L->npend && entry_cmp_L(L, &L->pend[a], &L->incoming[b]) < 0))
			L->merge[w++] = L->pend[a++];
		else
			L->merge[w++] = L->incoming[b++];
	}
	memcpy(&L->pend[keep], L->merge, w * sizeof(*L->merge));
	L->npend = keep + w;
	L->nincoming = 0;
	return GF_OK;
}

/* ---- planning: reservations and their shadows ---- */

static gf_err sync_scratch(gf_loop *L)
{
	for (size_t i = 0; i < L->nnodes; i++) {
		uint32_t rv = gf_cluster_node(L->real, i)->version;

		if (rv == L->real_ver[i] && gf_cluster_node(L->scratch, i)->version == L->scratch_ver[i])
			continue;
		if (gf_cluster_copy_node(L->scratch, L->real, i))
			return GF_STATE;
		L->real_ver[i] = rv;
		L->scratch_ver[i] = gf_cluster_node(L->scratch, i)->version;
	}
	return GF_OK;
}

/* A reservation's start and end in the planner's timeline: never before now. */
static int64_t res_start(const gf_loop *L, const struct reservation *r)
{
	return max64(r->time, L->now);
}

static int64_t res_end(const gf_loop *L, const struct reservation *r)
{
	return res_start(L, r) + (r->end - r->time);
}

/* Keep a dropped plan's nodes and GPUs for its holder's next plan. */
static gf_err save_prev(gf_loop *L, const struct reservation *r)
{
	uint32_t n = L->jobs[r->holder].npods;
	size_t slot = L->nprev_next;

	for (size_t k = 0; k < MAX_RES; k++)
		if (L->prev[k].holder == r->holder)
			slot = k;
	if (slot == L->nprev_next)
		L->nprev_next = (L->nprev_next + 1) % MAX_RES;
	if (grow(&L->prev[slot].members, &L->prev[slot].cap, n, sizeof(struct member)))
		return GF_NOMEM;
	memcpy(L->prev[slot].members, r->members, n * sizeof(struct member));
	L->prev[slot].holder = r->holder;
	return GF_OK;
}

static const struct member *find_prev(const gf_loop *L, uint32_t holder)
{
	for (size_t k = 0; k < MAX_RES; k++)
		if (L->prev[k].holder == holder)
			return L->prev[k].members;
	return NULL;
}

/* Drop reservations [from, nres) (their holders will be planned again when reached). */
static gf_err drop_from(gf_loop *L, size_t from)
{
	gf_err err;

	for (size_t r = from; r < L->nres; r++)
		if ((err = save_prev(L, &L->res[r])))
			return err;
	if (from < L->nres)
		L->stats.dropped += L->nres - from;
	L->nres = from < L->nres ? from : L->nres;
	return GF_OK;
}

/* Remove reservation i (its holder started); the slot's buffers move to the end. */
static void remove_res(gf_loop *L, size_t i)
{
	struct reservation r = L->res[i];

	memmove(&L->res[i], &L->res[i + 1], (L->nres - i - 1) * sizeof(L->res[0]));
	L->res[--L->nres] = r;
}

/* Bind job j's members (on their nodes and GPUs) into the shadows of reservations
 * [from, to) that start before j is expected to end; all or none. */
static bool bind_in_shadows(gf_loop *L, const struct gf_pod_spec *p, const struct member *m, uint32_t n,
			    int64_t end, size_t from, size_t to)
{
	for (size_t r = from; r < to; r++) {
		if (L->res[r].time >= end)
			continue;
		if (!bind_exact(L->res[r].shadow, p, m, n)) {
			while (r-- > from)
				if (L->res[r].time < end)
					unbind_members(L->res[r].shadow, p, m, n);
			return false;
		}
	}
	return true;
}

/* Would job j, just bound in the real cluster, leave reservations [from, to) intact?
 * If so it joins their shadows. */
static bool admissible(gf_loop *L, const struct job *j, size_t from, size_t to)
{
	struct gf_pod_spec p = pod_of(j);

	return bind_in_shadows(L, &p, &L->members[j->member0], j->npods, L->now + j->estimate, from, to);
}

static void refresh_slots(gf_loop *L, uint32_t node, const struct gf_pod_spec *p, uint32_t k, uint64_t *total)
{
	const struct gf_node *nd = gf_cluster_node(L->scratch, node);

	*total -= L->node_slots[node];
	L->node_slots[node] = node_slots(L->cat, nd, p, k);
	L->slots_ver[node] = nd->version;
	*total += L->node_slots[node];
}

/* Apply one reservation's start (bind) or end (unbind) to the scratch. */
static gf_err apply_res(gf_loop *L, const struct reservation *r, bool bind, const struct gf_pod_spec *hp,
			uint32_t k, uint64_t *total)
{
	const struct job *rj = &L->jobs[r->holder];
	struct gf_pod_spec rp = pod_of(rj);

	if (bind && !bind_exact(L->scratch, &rp, r->members, rj->npods))
		return GF_STATE;
	if (!bind)
		unbind_members(L->scratch, &rp, r->members, rj->npods);
	for (uint32_t m = 0; m < rj->npods; m++)
		refresh_slots(L, r->members[m].node, hp, k, total);
	return GF_OK;
}

/* Release the running job r from the scratch. */
static gf_err release_running(gf_loop *L, const struct job *r, const struct gf_pod_spec *hp, uint32_t k,
			      uint64_t *total)
{
	struct gf_pod_spec rp = pod_of(r);

	for (uint32_t m = r->nbound; m-- > 0;) {
		uint32_t node = L->members[r->member0 + m].node;

		if (gf_cluster_unbind(L->scratch, node, &rp, L->members[r->member0 + m].gpus))
			return GF_STATE;
		refresh_slots(L, node, hp, k, total);
	}
	return GF_OK;
}

/*
 * Placement m of the planned job (start t, end t + estimate) is fine for the
 * reservations planned before it that start inside (t, end): bound into their
 * shadows.  On failure nothing stays bound.
 */
static bool fits_later_shadows(gf_loop *L, const struct gf_pod_spec *p, const struct member *m, uint32_t n,
			       int64_t t, int64_t end)
{
	for (size_t r = 0; r < L->nres; r++) {
		int64_t rt = res_start(L, &L->res[r]);

		if (rt <= t || rt >= end)
			continue;
		if (!bind_exact(L->res[r].shadow, p, m, n)) {
			while (r-- > 0) {
				rt = res_start(L, &L->res[r]);
				if (rt > t && rt < end)
					unbind_members(L->res[r].shadow, p, m, n);
			}
			return false;
		}
	}
	return true;
}

/* The next time something changes in the plan's timeline after t; INT64_MAX if nothing. */
static int64_t next_change(const gf_loop *L, size_t idx, int64_t t)
{
	int64_t next = INT64_MAX;

	if (idx < L->nrunning)
		next = max64(L->now, expected_end(&L->jobs[L->running[idx]]));
	for (size_t r = 0; r < L->nres; r++) {
		int64_t rt = res_start(L, &L->res[r]), re = res_end(L, &L->res[r]);

		if (rt > t && rt < next)
			next = rt;
		if (re > t && re < next)
			next = re;
	}
	return next;
}

/* Try the planned job at time t on the scratch: the policy's placement, else its previous plan. */
static bool try_plan_at(gf_loop *L, const struct job *j, const struct gf_pod_spec *p, uint64_t total,
			const struct member *prev, int64_t t, struct member *out)
{
	uint32_t k = j->npods;
	int64_t end = t + j->estimate;

	if (total >= k && place_members(L, L->planner, L->scratch, p, NULL, out, 0, k)) {
		if (fits_later_shadows(L, p, out, k, t, end))
			return true;
		unbind_members(L->scratch, p, out, k);
	}
	if (prev && bind_exact(L->scratch, p, prev, k)) {
		if (fits_later_shadows(L, p, prev, k, t, end)) {
			memcpy(out, prev, k * sizeof(*out));
			return true;
		}
		unbind_members(L->scratch, p, prev, k);
	}
	return false;
}

/*
 * Plan job h behind reservations res[0..nres): on the scratch, release the
 * running jobs in order of expected end and start/end the earlier
 * reservations at their times; the first time h fits (and fits every earlier
 * reservation's shadow it would overlap) is its reservation, appended as
 * res[nres].  No time found (cannot happen for a resolvable job): nothing
 * appended.
 */
static gf_err plan(gf_loop *L, uint32_t h)
{
	struct job *j = &L->jobs[h];
	struct gf_pod_spec p = pod_of(j);
	uint32_t k = j->npods;
	const struct member *prev = find_prev(L, h);
	struct reservation *res = &L->res[L->nres];
	uint64_t total = 0;
	size_t idx = 0;
	int64_t t = L->now;
	gf_err err;

	L->stats.plans++;
	if (grow(&res->members, &res->cap, k, sizeof(*res->members)))
		return GF_NOMEM;
	if (!res->shadow && (err = gf_cluster_create(L->specs, L->nnodes, &res->shadow)))
		return err;
	if ((err = sync_scratch(L)))
		return err;
	/* per-node counts are kept from the last plan for the same shape where the node is unchanged */
	if (L->slots_shape != j->shape)
		memset(L->slots_ver, 0, L->nnodes * sizeof(*L->slots_ver));
	L->slots_shape = j->shape;
	for (size_t i = 0; i < L->nnodes; i++) {
		const struct gf_node *nd = gf_cluster_node(L->scratch, i);

		if (L->slots_ver[i] != nd->version) {
			L->node_slots[i] = node_slots(L->cat, nd, &p, k);
			L->slots_ver[i] = nd->version;
		}
		total += L->node_slots[i];
	}
	for (;;) {
		/* everything that happens at t: ends (running jobs, earlier reservations), then starts */
		while (idx < L->nrunning && max64(L->now, expected_end(&L->jobs[L->running[idx]])) <= t)
			if ((err = release_running(L, &L->jobs[L->running[idx++]], &p, k, &total)))
				return err;
		for (size_t r = 0; r < L->nres; r++)
			if (res_end(L, &L->res[r]) == t && res_start(L, &L->res[r]) < t &&
			    (err = apply_res(L, &L->res[r], false, &p, k, &total)))
				return err;
		for (size_t r = 0; r < L->nres; r++)
			if (res_start(L, &L->res[r]) == t && (err = apply_res(L, &L->res[r], true, &p, k, &total)))
				return err;
		if (try_plan_at(L, j, &p, total, prev, t, res->members))
			break;
		t = next_change(L, idx, t);
		if (t == INT64_MAX)
			return GF_OK;	/* never fits: no reservation (gf_loop_start_time says so) */
	}
	res->holder = h;
	res->time = t;
	res->end = t + j->estimate;
	res->displaced = false;
	for (size_t i = 0; i < L->nnodes; i++)
		if (gf_cluster_copy_node(res->shadow, L->scratch, i))
			return GF_STATE;
	L->nres++;
	if (j->promised < 0)
		j->promised = t;
	/* a cycle runs at t even if no job ends exactly then */
	return t > L->now ? gf_events_push(&L->events, t, GF_EV_WAKE, h) : GF_OK;
}

/* Every node but those of reservations [0, n). */
static const uint64_t *mask_without(gf_loop *L, size_t n)
{
	memset(L->mask, 0xff, L->mask_words * sizeof(*L->mask));
	for (size_t r = 0; r < n; r++)
		for (uint32_t m = 0; m < L->jobs[L->res[r].holder].npods; m++)
			L->mask[L->res[r].members[m].node / 64] &= ~(1ULL << (L->res[r].members[m].node % 64));
	return L->mask;
}

/* ---- one cycle ---- */

/* Try to bind the whole job j in the real cluster (all or nothing). */
static bool try_job(gf_loop *L, uint32_t id, const uint64_t *allowed)
{
	struct job *j = &L->jobs[id];
	struct gf_pod_spec p = pod_of(j);

	if (!allowed && !may_fit(L, j, &p))
		return false;
	L->stats.tries++;
	if (!place_members(L, L->sched, L->real, &p, allowed, &L->members[j->member0], 0, j->npods)) {
		if (!allowed)
			park(L, j);
		return false;
	}
	assume(L, j, j->npods);
	return true;
}

/* Bind reservation i's planned nodes and GPUs for its holder in the real cluster. */
static bool bind_reserved(gf_loop *L, size_t i)
{
	const struct reservation *r = &L->res[i];
	struct job *j = &L->jobs[r->holder];
	struct gf_pod_spec p = pod_of(j);

	if (!bind_exact(L->real, &p, r->members, j->npods))
		return false;
	memcpy(&L->members[j->member0], r->members, j->npods * sizeof(*r->members));
	assume(L, j, j->npods);
	return true;
}

/* Does reservation x's shadow hold reservation i's planned binds? (index order = plan order) */
static bool shadow_holds(const gf_loop *L, size_t x, size_t i)
{
	int64_t ti = L->res[i].time, tx = L->res[x].time;

	return tx < L->res[i].end && (x > i ? ti <= tx : ti < tx);
}

/* Move holder i's binds in the other shadows from planned (from) to actual (to, ending at end). */
static bool move_in_shadows(gf_loop *L, size_t i, const struct gf_pod_spec *p, const struct member *from,
			    const struct member *to, uint32_t n, int64_t end)
{
	size_t x;

	for (x = 0; x < L->nres; x++)
		if (x != i && shadow_holds(L, x, i))
			unbind_members(L->res[x].shadow, p, from, n);
	for (x = 0; x < L->nres; x++) {
		if (x == i || L->res[x].time >= end)
			continue;
		if (!bind_exact(L->res[x].shadow, p, to, n))
			break;
	}
	if (x == L->nres)
		return true;
	while (x-- > 0)
		if (x != i && L->res[x].time < end)
			unbind_members(L->res[x].shadow, p, to, n);
	for (x = 0; x < L->nres; x++)
		if (x != i && shadow_holds(L, x, i))
			bind_exact(L->res[x].shadow, p, from, n);
	return false;
}

/*
 * Holder of reservation i (= the next one in queue order) may start: on the
 * policy's placement if the other reservations still hold with it there
 * instead of where it was planned, else on its planned nodes once its time
 * has come.  *replan: it started later than planned (the other plans
 * assumed an earlier end).
 */
static bool try_holder(gf_loop *L, size_t i, bool *replan)
{
	struct reservation *r = &L->res[i];
	struct job *j = &L->jobs[r->holder];
	struct gf_pod_spec p = pod_of(j);

	*replan = false;
	if (try_job(L, r->holder, NULL)) {
		if (move_in_shadows(L, i, &p, r->members, &L->members[j->member0], j->npods,
				    L->now + j->estimate))
			return true;
		forget(L, j);
	}
	if (r->time > L->now)
		return false;
	if (bind_reserved(L, i)) {
		*replan = L->now > r->time;
		return true;
	}
	if (!r->displaced)
		L->stats.late++;	/* a promise broken without a higher priority taking it: a bug */
	return false;
}

/* A job behind reservations [0, nahead): start it only if it delays none of them. */
static bool try_backfill(gf_loop *L, uint32_t id, size_t nahead)
{
	struct job *j = &L->jobs[id];
	struct shape *s = &L->shapes[j->shape];
	bool memo = s->inadm_plan == L->stats.plans && s->inadm_freed == L->nfreed &&
		    nahead >= s->inadm_nahead;

	if (memo && j->estimate >= s->inadm_est)
		return false;
	if (!try_job(L, id, NULL))
		return false;
	if (admissible(L, j, 0, nahead))
		return true;
	forget(L, j);
	if (try_job(L, id, mask_without(L, nahead))) {
		if (admissible(L, j, 0, nahead))
			return true;
		forget(L, j);
	}
	if (!memo || j->estimate < s->inadm_est) {
		s->inadm_plan = L->stats.plans;
		s->inadm_freed = L->nfreed;
		s->inadm_nahead = nahead;
		s->inadm_est = j->estimate;
	}
	return false;
}

/* kube mode: bind one pod of job id; the job starts when its last pod binds. */
static gf_err try_pod(gf_loop *L, uint32_t id, uint32_t member, bool *bound)
{
	struct job *j = &L->jobs[id];
	struct gf_pod_spec p = pod_of(j);

	*bound = false;
	if (!may_fit(L, j, &p))
		return GF_OK;
	L->stats.tries++;
	if (!place_members(L, L->sched, L->real, &p, NULL, &L->members[j->member0], member, member + 1)) {
		park(L, j);
		return GF_OK;
	}
	*bound = true;
	assume(L, j, 1);
	if (j->nbound == j->npods)
		return confirm(L, id);
	if (j->nbound == 1 && j->npods > 1) {
		if (grow(&L->partials, &L->partials_cap, L->npartials + 1, sizeof(*L->partials)))
			return GF_NOMEM;
		L->partials[L->npartials++] = id;
	}
	return GF_OK;
}

static void mark_partials(gf_loop *L)
{
	size_t w = 0;

	for (size_t i = 0; i < L->npartials; i++) {
		struct job *j = &L->jobs[L->partials[i]];

		if (j->state == GF_JOB_PENDING && j->nbound > 0 && j->nbound < j->npods) {
			j->partial = true;
			L->partials[w++] = L->partials[i];
		}
	}
	L->npartials = w;
}

/* ---- preemption ---- */

/* evict: a running job loses its place and goes back to the queue (same arrival sequence). */
static gf_err evict(gf_loop *L, uint32_t id)
{
	struct job *j = &L->jobs[id];
	gf_err err;

	j->lost += (double)(L->now - j->start) * (double)j->npods * j->gpu_count * j->gpu_milli;
	if ((err = release(L, id)))
		return err;
	j->state = GF_JOB_PENDING;
	j->start = -1;
	j->npreempted++;
	L->stats.preemptions++;
	L->plan_dirty = true;	/* the shadows still count it */
	if (grow(&L->incoming, &L->incoming_cap, L->nincoming + 1, sizeof(*L->incoming)))
		return GF_NOMEM;
	L->incoming[L->nincoming++] = (struct entry){ id, WHOLE };
	return GF_OK;
}

struct victim {
	uint32_t node, job;
	int32_t priority;
	double lost;	/* milli-GPU seconds it would lose */
};

static int victim_cmp(const void *a, const void *b)
{
	const struct victim *x = a, *y = b;

	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	if (x->priority != y->priority)
		return x->priority < y->priority ? -1 : 1;
	if (x->lost != y->lost)
		return x->lost < y->lost ? -1 : 1;
	return x->job < y->job ? -1 : x->job > y->job;
}

struct pick {
	int32_t worst;	/* highest victim priority */
	double lost;
	size_t n;
};

static bool pick_better(const struct pick *a, const struct pick *b)
{
	if (a->worst != b->worst)
		return a->worst < b->worst;
	if (a->lost != b->lost)
		return a->lost < b->lost;
	return a->n < b->n;
}

static bool in_list(const uint32_t *v, size_t n, uint32_t id)
{
	for (size_t k = 0; k < n; k++)
		if (v[k] == id)
			return true;
	return false;
}

/* Evict (or, undo, restore) job id in the scratch. */
static void scratch_evict(gf_loop *L, uint32_t id, bool undo)
{
	const struct job *v = &L->jobs[id];
	struct gf_pod_spec p = pod_of(v);

	if (undo)
		bind_exact(L->scratch, &p, &L->members[v->member0], v->npods);
	else
		unbind_members(L->scratch, &p, &L->members[v->member0], v->npods);
}

/*
 * For node n's candidates c[0..nc) (cheapest first): evict them in the
 * scratch one by one until p fits there; fills *pk and returns how many are
 * needed (0 if evicting them all does not help).  The scratch is restored.
 */
static size_t node_victims(gf_loop *L, const struct victim *c, size_t nc, const struct gf_pod_spec *p,
			   const uint32_t *chosen, size_t nchosen, struct pick *pk)
{
	size_t k, used = 0;
	bool fits = false;

	*pk = (struct pick){ INT32_MIN, 0, 0 };
	for (k = 0; k < nc && !fits; k++) {
		if ((k > 0 && c[k - 1].job == c[k].job) || in_list(chosen, nchosen, c[k].job))
			continue;	/* two of its pods here, or already out */
		scratch_evict(L, c[k].job, false);
		used = k + 1;
		if (c[k].priority > pk->worst)
			pk->worst = c[k].priority;
		pk->lost += c[k].lost;
		pk->n++;
		fits = gf_cluster_fits(L->scratch, L->cat, c[k].node, p);
	}
	for (size_t q = k; q-- > 0;)
		if (!(q > 0 && c[q - 1].job == c[q].job) && !in_list(chosen, nchosen, c[q].job))
			scratch_evict(L, c[q].job, true);
	return fits ? used : 0;
}

/*
 * Preemption for job id (reservations [0, nahead) ahead of it): plan on the
 * scratch member by member, each where it fits or else on the node whose
 * cheapest sufficient victims cost least; then check the reservations ahead,
 * evict the victims for real and bind the job as planned.  Sets *ok.
 */
static gf_err try_preempt(gf_loop *L, uint32_t id, size_t nahead, bool *ok)
{
	struct job *j = &L->jobs[id];
	struct shape *s = &L->shapes[j->shape];
	struct gf_pod_spec p = pod_of(j);
	struct victim *cand = NULL;
	uint32_t *chosen = NULL;
	size_t ncand = 0, nchosen = 0;
	gf_err err = GF_OK;

	*ok = false;
	if (!L->cfg.preemption ||
	    (s->nopreempt_starts == L->stats.starts && s->nopreempt_freed == L->nfreed))
		return GF_OK;
	for (size_t r = 0; r < L->nrunning; r++) {
		const struct job *v = &L->jobs[L->running[r]];

		if (v->priority < j->priority)
			ncand += v->npods;
	}
	if (ncand == 0 || grow(&L->tmp_members, &L->tmp_cap, j->npods, sizeof(*L->tmp_members)))
		goto none;
	cand = malloc(ncand * sizeof(*cand));
	chosen = malloc(ncand * sizeof(*chosen));
	if (!cand || !chosen) {
		err = GF_NOMEM;
		goto out;
	}
	ncand = 0;
	for (size_t r = 0; r < L->nrunning; r++) {
		const struct job *v = &L->jobs[L->running[r]];
		double lost = (double)(L->now - v->start) * (double)v->npods * v->gpu_count * v->gpu_milli;

		for (uint32_t m = 0; v->priority < j->priority && m < v->npods; m++)
			cand[ncand++] = (struct victim){ L->members[v->member0 + m].node, L->running[r],
							 v->priority, lost };
	}
	qsort(cand, ncand, sizeof(*cand), victim_cmp);
	if ((err = sync_scratch(L)))
		goto out;
	for (uint32_t m = 0; m < j->npods; m++) {
		struct pick best = { 0 }, pk;
		size_t best_at = 0, best_n = 0;
		bool found = false;

		if (place_members(L, L->planner, L->scratch, &p, NULL, L->tmp_members, m, m + 1))
			continue;
		for (size_t a = 0, b; a < ncand; a = b) {
			size_t need;

			for (b = a; b < ncand && cand[b].node == cand[a].node; b++)
				;
			need = node_victims(L, &cand[a], b - a, &p, chosen, nchosen, &pk);
			if (need && (!found || pick_better(&pk, &best))) {
				best = pk;
				best_at = a;
				best_n = need;
				found = true;
			}
		}
		if (!found)
			goto none_undo;
		for (size_t k = best_at; k < best_at + best_n; k++) {
			if (in_list(chosen, nchosen, cand[k].job))
				continue;
			scratch_evict(L, cand[k].job, false);
			chosen[nchosen++] = cand[k].job;
		}
		memset(L->mask, 0, L->mask_words * sizeof(*L->mask));
		L->mask[cand[best_at].node / 64] |= 1ULL << (cand[best_at].node % 64);
		if (!place_members(L, L->planner, L->scratch, &p, L->mask, L->tmp_members, m, m + 1))
			goto none_undo;
	}
	/* never against a reservation ahead; the planned binds join their shadows */
	if (!bind_in_shadows(L, &p, L->tmp_members, j->npods, L->now + j->estimate, 0, nahead))
		goto none_undo;
	for (size_t k = 0; k < nchosen; k++)
		if ((err = evict(L, chosen[k])))
			goto out;
	if (!bind_exact(L->real, &p, L->tmp_members, j->npods)) {
		err = GF_STATE;	/* the scratch said it fits once the victims are gone */
		goto out;
	}
	memcpy(&L->members[j->member0], L->tmp_members, j->npods * sizeof(*L->tmp_members));
	assume(L, j, j->npods);
	*ok = true;
	goto out;
none_undo:
	/* the scratch is re-synchronised from the real cluster before its next use */
none:
	s->nopreempt_starts = L->stats.starts;
	s->nopreempt_freed = L->nfreed;
out:
	free(cand);
	free(chosen);
	return err;
}

/*
 * One job in a backfill walk, nahead reservations passed so far (their
 * holders are ahead of it in queue order).  Sets *ok when it started.
 */
static gf_err backfill_step(gf_loop *L, uint32_t id, size_t *nahead, bool *ok)
{
	gf_err err;

	if (*nahead < L->nres && L->res[*nahead].holder == id) {
		bool replan;

		*ok = try_holder(L, *nahead, &replan);
		if (!*ok) {
			(*nahead)++;
			return GF_OK;
		}
		remove_res(L, *nahead);
		return replan ? drop_from(L, *nahead) : GF_OK;
	}
	*ok = *nahead == 0 ? try_job(L, id, NULL) : try_backfill(L, id, *nahead);
	if (*ok) {
		if (*nahead > 0)
			L->stats.backfilled++;
		/* ahead of the later reservations (a higher priority): they give way if it conflicts */
		if (*nahead < L->nres && !admissible(L, &L->jobs[id], *nahead, L->nres)) {
			for (size_t r = *nahead; r < L->nres; r++)
				L->res[r].displaced = true;
			return drop_from(L, *nahead);
		}
		return GF_OK;
	}
	if (*nahead >= L->max_res)	/* EASY: one reservation; conservative: MAX_RES */
		return try_preempt(L, id, *nahead, ok);
	/* blocked: it takes the next reservation; those behind it are planned again when reached */
	if ((err = drop_from(L, *nahead)) || (err = plan(L, id)))
		return err;
	if (L->nres > *nahead && L->res[*nahead].time <= L->now && bind_reserved(L, *nahead)) {
		*ok = true;	/* the fresh plan says now */
		remove_res(L, *nahead);
		return GF_OK;
	}
	/* not soon: evict lower priorities if that makes it fit now */
	if (L->nres == *nahead || L->res[*nahead].time > L->now + L->cfg.preempt_wait) {
		if ((err = try_preempt(L, id, *nahead, ok)))
			return err;
		if (*ok) {
			if (L->nres > *nahead)
				remove_res(L, *nahead);
			return GF_OK;
		}
	}
	if (L->nres > *nahead)
		(*nahead)++;
	return GF_OK;
}

static gf_err cycle(gf_loop *L)
{
	size_t w = 0, nahead = 0;
	bool stop = false;
	gf_err err;

	if ((err = merge_incoming(L)))
		return err;
	L->stats.cycles++;
	/*
	 * A job ended before its expected end: EASY plans its one reservation
	 * again (it can only move earlier: the old plan is tried as a fallback).
	 * Conservative keeps its plans, all still valid since only room was
	 * freed; replanning them in order could push a later holder back behind
	 * an earlier one that moved up.  Its holders may still start early where
	 * the others' shadows allow (try_holder).
	 */
	if (L->plan_dirty && L->max_res == 1 && (err = drop_from(L, 0)))
		return err;
	L->plan_dirty = false;
	for (size_t r = 0; r < L->npend; r++) {
		struct entry e = L->pend[r];
		bool ok = false;

		if (stop) {
			L->pend[w++] = e;
			continue;
		}
		switch (L->cfg.policy) {
		case GF_QP_KUBE:
			err = try_pod(L, e.job, e.member, &ok);
			break;
		case GF_QP_STRICT_FIFO:
		case GF_QP_BEST_EFFORT_FIFO:
			ok = try_job(L, e.job, NULL);
			if (!ok && (err = try_preempt(L, e.job, 0, &ok)))
				return err;
			stop = !ok && L->cfg.policy == GF_QP_STRICT_FIFO;
			err = ok ? confirm(L, e.job) : GF_OK;
			break;
		default:
			err = backfill_step(L, e.job, &nahead, &ok);
			if (!err && ok)
				err = confirm(L, e.job);
			break;
		}
		if (err)
			return err;
		if (!ok)
			L->pend[w++] = e;
	}
	L->npend = w;
	/* reservations whose holders were not reached (cannot happen: holders are pending) */
	if (nahead < L->nres && (err = drop_from(L, nahead)))
		return err;
	mark_partials(L);
	return GF_OK;
}

/* ---- submission and the run ---- */

static gf_err check_spec(const gf_loop *L, const struct gf_job_spec *s)
{
	const struct gf_pod_spec *p = &s->pod;

	if (s->npods < 1 || s->npods > GF_LOOP_MAX_GANG || s->cls >= GF_LOOP_MAX_CLASSES ||
	    s->arrival < 0 || s->duration < 0 || p->cpu_milli < 0 || p->mem_mib < 0 ||
	    p->gpu_count < 0 || p->gpu_count > GF_MAX_GPUS ||
	    (p->gpu_count == 0) != (p->gpu_milli == 0) || p->gpu_milli < 0 ||
	    p->gpu_milli > GF_MILLI_PER_GPU || p->spec < 0 || p->spec >= L->cat->nspecs)
		return GF_INVAL;
	return GF_OK;
}

static gf_err new_job(gf_loop *L, const struct gf_job_spec *s, uint32_t *id)
{
	struct job *j;
	gf_err err;

	if ((err = check_spec(L, s)))
		return err;
	if (L->njobs >= UINT32_MAX - 1 || L->nmembers + s->npods >= UINT32_MAX)
		return GF_TOOBIG;
	if (grow(&L->jobs, &L->jobs_cap, L->njobs + 1, sizeof(*L->jobs)) ||
	    grow(&L->members, &L->members_cap, L->nmembers + s->npods, sizeof(*L->members)))
		return GF_NOMEM;
	j = &L->jobs[L->njobs];
	memset(j, 0, sizeof(*j));
	if ((err = intern_shape(L, s, &j->shape)))
		return err;
	j->cpu = s->pod.cpu_milli;
	j->mem = s->pod.mem_mib;
	j->gpu_count = s->pod.gpu_count;
	j->gpu_milli = s->pod.gpu_milli;
	j->spec = s->pod.spec;
	j->priority = s->priority;
	j->arrival = s->arrival;
	j->duration = s->duration;
	j->estimate = max64(s->estimate > 0 ? s->estimate : s->duration, 1);
	j->start = j->promised = -1;
	j->member0 = (uint32_t)L->nmembers;
	j->npods = (uint16_t)s->npods;
	j->cls = s->cls;
	j->state = GF_JOB_FUTURE;
	memset(&L->members[L->nmembers], 0, s->npods * sizeof(*L->members));
	L->nmembers += s->npods;
	*id = (uint32_t)L->njobs++;
	return GF_OK;
}

gf_err gf_loop_submit(gf_loop *L, const struct gf_job_spec *spec, uint32_t *id)
{
	gf_err err;

	if (L->ran && spec->arrival <= L->now)
		return GF_STATE;
	if ((err = new_job(L, spec, id)))
		return err;
	if ((err = gf_events_push(&L->events, spec->arrival, GF_EV_ARRIVAL, *id))) {
		L->njobs--;
		L->nmembers -= spec->npods;
		return err;
	}
	return GF_OK;
}

gf_err gf_loop_preplace(gf_loop *L, const struct gf_job_spec *spec, uint32_t *id, bool *placed)
{
	gf_err err;

	*placed = false;
	if (L->ran)
		return GF_STATE;
	if ((err = new_job(L, spec, id)))
		return err;
	L->jobs[*id].arrival = 0;
	L->jobs[*id].qseq = L->next_qseq++;
	if (!try_job(L, *id, NULL)) {
		L->jobs[*id].state = GF_JOB_DROPPED;
		return GF_OK;
	}
	*placed = true;
	L->plan_dirty = true;
	return confirm(L, *id);
}

static uint32_t count_stalled(const gf_loop *L)
{
	uint32_t n = 0;

	for (size_t i = 0; i < L->njobs; i++)
		n += L->jobs[i].state == GF_JOB_PENDING;
	return n;
}

gf_err gf_loop_run_until(gf_loop *L, int64_t until)
{
	struct gf_event ev;
	gf_err err;

	L->ran = true;
	while (gf_events_peek(&L->events, &ev) && ev.time <= until) {
		int64_t t = ev.time;

		if ((err = advance(L, t)))
			return err;
		L->now = t;
		while (gf_events_peek(&L->events, &ev) && ev.time == t) {
			gf_events_pop(&L->events, &ev);
			L->stats.events++;
			err = ev.kind == GF_EV_ARRIVAL ? add(L, ev.job)
			      : ev.kind == GF_EV_END ? finish(L, ev.job)
						     : GF_OK;	/* a wake-up: only the cycle */
			if (err)
				return err;
		}
		if ((err = cycle(L)))
			return err;
	}
	if (L->events.n == 0) {
		if ((err = advance(L, max64(L->now, L->cfg.horizon))))
			return err;
		L->stats.stalled = count_stalled(L);
	}
	L->stats.now = L->now;
	return GF_OK;
}

gf_err gf_loop_run(gf_loop *L)
{
	return gf_loop_run_until(L, INT64_MAX);
}

void gf_loop_job(const gf_loop *L, uint32_t id, struct gf_job_info *out)
{
	const struct job *j = &L->jobs[id];

	out->state = (enum gf_job_state)j->state;
	out->cls = j->cls;
	out->npods = j->npods;
	out->arrival = j->arrival;
	out->start = j->state == GF_JOB_RUNNING || j->state == GF_JOB_DONE ? j->start : -1;
	out->end = out->start >= 0 ? j->start + j->duration : -1;
	out->promised = j->promised;
	out->gpu_milli = (int64_t)j->npods * j->gpu_count * j->gpu_milli;
	out->partial = j->partial;
	out->preemptions = j->npreempted;
	out->preempted_gpu_s = j->lost / GF_MILLI_PER_GPU;
}

void gf_loop_stats(const gf_loop *L, struct gf_loop_stats *out)
{
	*out = L->stats;
}

gf_err gf_loop_start_time(const gf_loop *L, uint32_t id, int64_t *t)
{
	if (id >= L->njobs)
		return GF_RANGE;
	const struct job *j = &L->jobs[id];

	if (j->state == GF_JOB_RUNNING || j->state == GF_JOB_DONE) {
		*t = j->start;
		return GF_OK;
	}
	for (size_t r = 0; j->state == GF_JOB_PENDING && r < L->nres; r++) {
		if (L->res[r].holder == id) {
			*t = L->res[r].time;
			return GF_OK;
		}
	}
	return GF_NOENT;
}

const struct gf_loop_sample *gf_loop_timeline(const gf_loop *L, size_t *n)
{
	*n = L->ntimeline;
	return L->timeline;
}
