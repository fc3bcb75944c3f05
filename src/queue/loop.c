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
	size_t inadm_freed;
	int64_t inadm_est;
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
	uint32_t holder;	/* job holding the reservation; NONE */
	bool res_have, plan_dirty;
	bool res_displaced;	/* a higher-priority job took room the current plan counted on */
	int64_t res_time;
	struct member *res_members;
	size_t res_cap;
	uint64_t *res_allowed;	/* every node but the reservation's */

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
	    cfg->sample_every < 0)
		return GF_INVAL;
	L = calloc(1, sizeof(*L));
	if (!L)
		return GF_NOMEM;
	L->cfg = *cfg;
	L->cat = env->cat;
	L->nnodes = nnodes;
	L->mask_words = (nnodes + 63) / 64;
	L->holder = NONE;
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
	L->res_allowed = calloc(L->mask_words, sizeof(*L->res_allowed));
	L->nslots = 1024;
	L->slots = calloc(L->nslots, sizeof(*L->slots));
	if (!L->real_ver || !L->scratch_ver || !L->node_slots || !L->slots_ver || !L->res_allowed ||
	    !L->slots) {
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
	free(L->res_members);
	free(L->res_allowed);
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

/* finish: a running job ends; its nodes go to the freed log (requeue event). */
static gf_err finish(gf_loop *L, uint32_t id)
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

/* ---- planning: reservation and shadow ---- */

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

static void set_allowed(gf_loop *L, uint32_t npods)
{
	memset(L->res_allowed, 0xff, L->mask_words * sizeof(*L->res_allowed));
	for (uint32_t k = 0; k < npods; k++)
		L->res_allowed[L->res_members[k].node / 64] &= ~(1ULL << (L->res_members[k].node % 64));
}

/* Give job h the reservation: the earliest time it fits as running jobs end. */
static gf_err plan(gf_loop *L, uint32_t h)
{
	struct job *j = &L->jobs[h];
	struct gf_pod_spec p = pod_of(j);
	uint32_t k = j->npods;
	bool had = L->res_have && L->holder == h;
	struct member *prev = NULL;
	uint64_t total = 0;
	size_t idx = 0;
	int64_t t = L->now;
	gf_err err;

	L->stats.plans++;
	if (grow(&L->res_members, &L->res_cap, k, sizeof(*L->res_members)))
		return GF_NOMEM;
	if (had) {
		prev = malloc(k * sizeof(*prev));
		if (!prev)
			return GF_NOMEM;
		memcpy(prev, L->res_members, k * sizeof(*prev));
	}
	L->res_have = false;
	L->holder = h;
	L->plan_dirty = false;
	L->res_displaced = false;
	if ((err = sync_scratch(L)))
		goto out;
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
		if (total >= k && place_members(L, L->planner, L->scratch, &p, NULL, L->res_members, 0, k))
			break;
		/* the previous plan's nodes and GPUs, if still free: a promise is never moved later */
		if (prev && bind_exact(L->scratch, &p, prev, k)) {
			memcpy(L->res_members, prev, k * sizeof(*prev));
			break;
		}
		if (idx >= L->nrunning)
			goto out;	/* never fits: no reservation (gf_loop_start_time says so) */
		t = max64(L->now, expected_end(&L->jobs[L->running[idx]]));
		while (idx < L->nrunning && max64(L->now, expected_end(&L->jobs[L->running[idx]])) <= t) {
			const struct job *r = &L->jobs[L->running[idx++]];
			struct gf_pod_spec rp = pod_of(r);

			for (uint32_t m = r->nbound; m-- > 0;) {
				uint32_t node = L->members[r->member0 + m].node;

				if (gf_cluster_unbind(L->scratch, node, &rp, L->members[r->member0 + m].gpus)) {
					err = GF_STATE;
					goto out;
				}
				total -= L->node_slots[node];
				L->node_slots[node] = node_slots(L->cat, gf_cluster_node(L->scratch, node), &p, k);
				L->slots_ver[node] = gf_cluster_node(L->scratch, node)->version;
				total += L->node_slots[node];
			}
		}
	}
	L->res_have = true;
	L->res_time = t;
	if (j->promised < 0)
		j->promised = t;
	set_allowed(L, k);
out:
	free(prev);
	return err;
}

/* Would job j, bound now, leave the reservation intact?  If so it joins the shadow. */
static bool admissible(gf_loop *L, const struct job *j)
{
	struct gf_pod_spec p;

	if (L->now + j->estimate <= L->res_time)
		return true;
	p = pod_of(j);
	return bind_exact(L->scratch, &p, &L->members[j->member0], j->npods);
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

/* The holder's turn: its own placement, else exactly what was reserved for it. */
static bool bind_reserved(gf_loop *L, uint32_t id)
{
	struct job *j = &L->jobs[id];
	struct gf_pod_spec p = pod_of(j);

	if (!bind_exact(L->real, &p, L->res_members, j->npods))
		return false;
	memcpy(&L->members[j->member0], L->res_members, j->npods * sizeof(*L->res_members));
	assume(L, j, j->npods);
	return true;
}

static bool try_holder(gf_loop *L, uint32_t id)
{
	if (try_job(L, id, NULL))
		return true;
	if (L->holder != id || !L->res_have || L->res_time > L->now)
		return false;
	if (bind_reserved(L, id))
		return true;
	if (!L->res_displaced)
		L->stats.late++;	/* a promise broken without a higher priority taking it: a bug */
	return false;
}

/* A job behind the holder: start it only if it does not delay the reservation. */
static bool try_backfill(gf_loop *L, uint32_t id)
{
	struct job *j = &L->jobs[id];
	struct shape *s = &L->shapes[j->shape];

	bool memo = s->inadm_plan == L->stats.plans && s->inadm_freed == L->nfreed;

	if (memo && j->estimate >= s->inadm_est)
		return false;
	if (!try_job(L, id, NULL))
		return false;
	if (admissible(L, j))
		return true;
	forget(L, j);
	if (try_job(L, id, L->res_allowed)) {
		if (admissible(L, j))
			return true;
		forget(L, j);
	}
	if (!memo || j->estimate < s->inadm_est) {
		s->inadm_plan = L->stats.plans;
		s->inadm_freed = L->nfreed;
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

static gf_err cycle(gf_loop *L)
{
	size_t w = 0;
	bool stop = false, blocked = false, started_ahead = false;
	gf_err err;

	if ((err = merge_incoming(L)))
		return err;
	L->stats.cycles++;
	for (size_t r = 0; r < L->npend; r++) {
		struct entry e = L->pend[r];
		bool ok = false;

		if (stop) {
			L->pend[w++] = e;
			continue;
		}
		if (L->cfg.policy == GF_QP_KUBE) {
			if ((err = try_pod(L, e.job, e.member, &ok)))
				return err;
		} else if (!blocked) {
			ok = try_holder(L, e.job);
			if (ok) {
				if (L->holder == e.job) {
					L->holder = NONE;
					L->res_have = false;
				} else if (!L->res_have || !admissible(L, &L->jobs[e.job])) {
					/* a job ahead of the holder took room the plan counted on */
					started_ahead = true;
					L->res_displaced = true;
				}
			} else if (L->cfg.policy == GF_QP_STRICT_FIFO) {
				stop = true;
			} else if (L->cfg.policy == GF_QP_BACKFILL) {
				blocked = true;
				if (L->holder != e.job || !L->res_have || L->plan_dirty || started_ahead)
					if ((err = plan(L, e.job)))
						return err;
				if (!L->res_have) {
					blocked = false;	/* no plan possible: skip ahead as best-effort */
				} else if (L->res_time <= L->now && bind_reserved(L, e.job)) {
					ok = true;	/* the fresh plan says now */
					blocked = false;
					L->holder = NONE;
					L->res_have = false;
				}
			}
			if (ok && (err = confirm(L, e.job)))
				return err;
		} else {
			ok = try_backfill(L, e.job);
			if (ok) {
				L->stats.backfilled++;
				if ((err = confirm(L, e.job)))
					return err;
			}
		}
		if (!ok)
			L->pend[w++] = e;
	}
	L->npend = w;
	if (!blocked && L->holder != NONE && L->jobs[L->holder].state != GF_JOB_PENDING) {
		L->holder = NONE;
		L->res_have = false;
	}
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
	j->estimate = s->estimate > 0 ? s->estimate : s->duration;
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
			err = ev.kind == GF_EV_ARRIVAL ? add(L, ev.job) : finish(L, ev.job);
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
	if (j->state == GF_JOB_PENDING && L->holder == id && L->res_have) {
		*t = L->res_time;
		return GF_OK;
	}
	return GF_NOENT;
}

const struct gf_loop_sample *gf_loop_timeline(const gf_loop *L, size_t *n)
{
	*n = L->ntimeline;
	return L->timeline;
}
