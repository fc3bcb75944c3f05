/*
 * queue/loop.c - the time loop: events, the pending queue, gangs, EASY
 * backfill with reservations, and kube-scheduler's per-pod control.
 *
 * One cycle.  gf_loop_cycle(now) is the only scheduling cycle: it applies
 * the queued events up to now and runs cycle() once, noting its decisions
 * (binds, evictions) for the caller.  The replay's driver (gf_loop_run)
 * calls it at the time of each next event; the live scheduler
 * (k8s/live.c) calls it with its own clock, submits jobs as pods arrive
 * with an open duration, and reports ends (gf_loop_end: pushes an end event
 * at that time) and failed binds (gf_loop_unbind).  Driven either way, the
 * same job stream gives the same decisions (tests/test_queue.c).
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
 * per-queue         each job as its quota queue's ordering says (strict,
 *                     skip-ahead or backfill; gf_loop_ordering()).
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
 * Quotas (queue/quota.c): a job that would make its queue borrow is not
 * tried in the walk but in the fair-share pass after it (queue by queue,
 * lowest weighted share first); under strict FIFO a head blocks only its
 * own queue.  History estimates: a running job past its expected end is
 * re-estimated at the start of the cycle (refresh_overdue).
 *
 * Reservations, backfill and their shadows live in queue/plan.c, preemption
 * in queue/preempt.c, quotas in queue/quota.c, the forecast in
 * queue/forecast.c; they share queue/loop_impl.h.
 */
#include <stdlib.h>
#include <string.h>

#include "core/hash.h"
#include "policy/topology.h"
#include "queue/loop_impl.h"

static const char *const qp_names[GF_QP_COUNT_] = {
	[GF_QP_KUBE] = "kube",
	[GF_QP_STRICT_FIFO] = "strict-fifo",
	[GF_QP_BEST_EFFORT_FIFO] = "best-effort-fifo",
	[GF_QP_BACKFILL] = "backfill",
	[GF_QP_CONSERVATIVE] = "conservative-backfill",
	[GF_QP_PER_QUEUE] = "per-queue",
};

const char *gf_queue_policy_name(enum gf_queue_policy qp)
{
	return (unsigned)qp < GF_QP_COUNT_ ? qp_names[qp] : NULL;
}

static const char *const why_names[GF_LOOP_WHY_COUNT_] = {
	[GF_LOOP_WHY_NONE] = "",
	[GF_LOOP_WHY_NO_ROOM] = "no room",
	[GF_LOOP_WHY_QUOTA] = "quota",
	[GF_LOOP_WHY_BLOCKED] = "blocked by the queue head",
	[GF_LOOP_WHY_RESERVED] = "would delay a reservation",
};

const char *gf_loop_why_name(enum gf_loop_why w)
{
	return (unsigned)w < GF_LOOP_WHY_COUNT_ ? why_names[w] : NULL;
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

static gf_err create(const struct gf_node_spec *nodes, size_t nnodes, gf_cluster *borrow,
		     const struct gf_policy_ops *ops, const struct gf_policy_env *env,
		     const struct gf_loop_config *cfg, gf_loop **out);

gf_err gf_loop_create(const struct gf_node_spec *nodes, size_t nnodes,
		      const struct gf_policy_ops *ops, const struct gf_policy_env *env,
		      const struct gf_loop_config *cfg, gf_loop **out)
{
	return create(nodes, nnodes, NULL, ops, env, cfg, out);
}

gf_err gf_loop_create_on(gf_cluster *c, const struct gf_policy_ops *ops, const struct gf_policy_env *env,
			 const struct gf_loop_config *cfg, gf_loop **out)
{
	size_t n = gf_cluster_nnodes(c);
	struct gf_node_spec *specs = malloc((n ? n : 1) * sizeof(*specs));
	gf_err err;

	if (!specs)
		return GF_NOMEM;
	for (size_t i = 0; i < n; i++)
		specs[i] = *gf_cluster_spec(c, i);
	err = create(specs, n, c, ops, env, cfg, out);
	free(specs);
	return err;
}

static gf_err create(const struct gf_node_spec *nodes, size_t nnodes, gf_cluster *borrow,
		     const struct gf_policy_ops *ops, const struct gf_policy_env *env,
		     const struct gf_loop_config *cfg, gf_loop **out)
{
	gf_loop *L;
	gf_err err;

	if (!nnodes || (unsigned)cfg->policy >= GF_QP_COUNT_ || cfg->horizon <= 0 ||
	    cfg->sample_every < 0 || cfg->preempt_wait < 0 || cfg->preempt_grace < 0 ||
	    cfg->backoff_initial < 0 || cfg->backoff_max < cfg->backoff_initial ||
	    (cfg->estimate_history && cfg->history_prior <= 0) ||
	    (cfg->preemption && cfg->policy == GF_QP_KUBE))
		return GF_INVAL;
	L = calloc(1, sizeof(*L));
	if (!L)
		return GF_NOMEM;
	L->cfg = *cfg;
	L->cat = env->cat;
	L->ops = ops;
	L->env = *env;
	L->nnodes = nnodes;
	L->mask_words = (nnodes + 63) / 64;
	L->max_res = cfg->policy == GF_QP_CONSERVATIVE ? MAX_RES : 1;
	for (size_t r = 0; r < MAX_RES; r++)
		L->prev[r].holder = NONE;
	gf_events_init(&L->events);
	gf_rng_init(&L->rng, cfg->seed);
	L->borrowed = borrow != NULL;
	L->real = borrow;
	if ((!borrow && (err = gf_cluster_create(nodes, nnodes, &L->real))) ||
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
	L->admit_mask = calloc(L->mask_words, sizeof(*L->admit_mask));
	L->specs = malloc(nnodes * sizeof(*L->specs));
	if (L->specs)
		memcpy(L->specs, nodes, nnodes * sizeof(*nodes));
	L->nslots = 1024;
	L->slots = calloc(L->nslots, sizeof(*L->slots));
	if (!L->real_ver || !L->scratch_ver || !L->node_slots || !L->slots_ver || !L->mask ||
	    !L->specs || !L->slots || !L->admit_mask) {
		err = GF_NOMEM;
		goto fail;
	}
	if ((err = gf_loop_quota_init(L, cfg)))
		goto fail;
	L->cfg.queues = NULL;	/* copied into L->queues */
	if ((err = gf_loop_set_budgets(L, cfg->budgets, cfg->nbudgets)))
		goto fail;
	L->cfg.budgets = NULL;	/* copied into L->budget_left */
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
	if (!L->borrowed)
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
	free(L->admit_mask);
	free(L->specs);
	free(L->prio);
	free(L->tmp_members);
	free(L->timeline);
	free(L->queues);
	free(L->q_state);
	free(L->q_next);
	free(L->borrowers);
	free(L->binds);
	free(L->tried);
	free(L->evicted);
	free(L->budget_left);
	gf_loop_spot_free(L);
	free(L);
}

gf_err gf_loop_set_budgets(gf_loop *L, const int32_t *allowed, size_t n)
{
	if (n > GF_LOOP_MAX_BUDGETS || (n > 0 && !allowed))
		return GF_INVAL;
	for (size_t b = 0; b < n; b++)
		if (allowed[b] < 0)
			return GF_INVAL;
	if (gf_grow(&L->budget_left, &L->budgets_cap, n, sizeof(*L->budget_left), 64))
		return GF_NOMEM;
	for (size_t b = 0; b < n; b++)
		L->budget_left[b] = allowed[b];
	L->nbudgets = n;
	return GF_OK;
}

void gf_loop_set_rng(gf_loop *L, const struct gf_rng *rng)
{
	L->rng = *rng;
}

void gf_loop_sched_stats(const gf_loop *L, uint64_t *computed, uint64_t *cached)
{
	gf_sched_stats(L->sched, computed, cached);
	*computed += L->sched_computed;
	*cached += L->sched_cached;
}

void gf_loop_set_node_priorities(gf_loop *L, const uint32_t *prio)
{
	gf_sched_set_priorities(L->sched, prio);
	gf_sched_set_priorities(L->planner, prio);
	if (!L->prio)
		L->prio = malloc(L->nnodes * sizeof(*L->prio));
	if (L->prio)	/* out of memory: a node added later forgets them (a tie-break only) */
		memcpy(L->prio, prio, L->nnodes * sizeof(*prio));
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
	int64_t f[7] = { s->cpu, s->mem, s->count, s->milli, s->spec, s->npods, (int64_t)s->served };
	return gf_fnv1a(GF_FNV64_OFFSET, f, sizeof(f));
}

static bool shape_eq(const struct shape *a, const struct shape *b)
{
	return a->cpu == b->cpu && a->mem == b->mem && a->count == b->count && a->served == b->served &&
	       a->milli == b->milli && a->spec == b->spec && a->npods == b->npods;
}

static gf_err rehash(gf_loop *L)
{
	size_t n = gf_grow_cap(L->nslots, L->nslots + 1, 1, sizeof(uint32_t));
	uint32_t *slots = n ? calloc(n, sizeof(*slots)) : NULL;

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
		.npods = L->cfg.policy == GF_QP_KUBE ? 1 : s->npods, .served = s->pod.served_model,
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
	if (gf_grow(&L->shapes, &L->shapes_cap, L->nshapes + 1, sizeof(*L->shapes), 64))
		return GF_NOMEM;
	L->shapes[L->nshapes] = k;
	L->slots[h] = (uint32_t)++L->nshapes;
	*id = (uint32_t)(L->nshapes - 1);
	if (L->nshapes * 2 > L->nslots)
		return rehash(L);
	return GF_OK;
}

/* ---- small helpers ---- */

/* How many pods like p fit on node state nd, greedily, at most cap. */
uint32_t gf_loop_node_slots(const struct gf_catalog *cat, const struct gf_node *nd,
			   const struct gf_pod_spec *p, uint32_t cap)
{
	struct gf_node tmp = *nd;
	int64_t cpu = nd->cpu_free, mem = nd->mem_free;
	uint32_t n = 0;

	if (nd->flags || (p->gpu_count > 0 && (nd->ngpus < p->gpu_count ||
						!gf_catalog_allows(cat, p->spec, nd->model))))
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

/*
 * may_fit for a job with an admission mask (its own memo, not its shape's):
 * it can fit again only on a node freed since it failed (the caller reports
 * nodes that now admit more, gf_loop_nodes_freed) that its mask allows.
 */
static bool masked_may_fit(gf_loop *L, struct job *j, const uint64_t *mask, const struct gf_pod_spec *p)
{
	if (j->fail_pos == NO_FAIL)
		return true;
	for (size_t k = j->fail_pos; k < L->nfreed; k++) {
		uint32_t n = L->freed[k];

		if ((mask[n / 64] >> (n % 64) & 1) && gf_cluster_fits(L->real, L->cat, n, p))
			return true;
	}
	j->fail_pos = L->nfreed;
	return false;
}

static void park(gf_loop *L, const struct job *j)
{
	L->shapes[j->shape].fail_pos = L->nfreed;
}

static bool has_topology(const struct gf_node_spec *s)
{
	for (int g = 0; g < s->ngpus; g++)
		if (s->topo[g].numa >= 0 || s->topo[g].nvlink_island >= 0)
			return true;
	return false;
}

/*
 * The topology-aware GPU choice (policy/topology.h), the live scheduler's
 * too: a multi-GPU pod the policy put on a node that publishes its GPU
 * topology takes gf_topo_pick()'s GPUs there (the smallest NVLink island,
 * else NUMA node, that holds it) instead of the policy's.  A node without
 * topology (every openb node: its CSV has no such columns) keeps the
 * policy's GPUs, so nothing changes there.
 */
static void topo_choice(const gf_cluster *c, uint32_t node, const struct gf_pod_spec *p, uint8_t *gpus)
{
	const struct gf_node_spec *spec = gf_cluster_spec(c, node);
	uint8_t g[GF_MAX_GPUS];

	if (p->gpu_count < 2 || !has_topology(spec))
		return;
	if (gf_topo_pick(gf_cluster_node(c, node), spec, p->gpu_count, p->gpu_milli, g, NULL) == p->gpu_count)
		memcpy(gpus, g, (size_t)p->gpu_count);
}

/* Place members [from, to) of a job like p on cluster c with scheduler s; all or none. */
bool gf_loop_place_pods(gf_loop *L, gf_sched *s, gf_cluster *c, const struct gf_pod_spec *p,
			  const uint64_t *allowed, struct member *m, uint32_t from, uint32_t to)
{
	for (uint32_t k = from; k < to; k++) {
		struct gf_placement pl;
		bool placed = gf_sched_place_masked(s, p, &L->rng, allowed, &pl) == GF_PLACED;

		if (placed)
			topo_choice(c, pl.node, p, pl.gpus);
		if (!placed || gf_cluster_bind(c, pl.node, p, pl.gpus) != GF_OK) {
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
bool gf_loop_bind_pods(gf_cluster *c, const struct gf_pod_spec *p, const struct member *m, uint32_t n)
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

void gf_loop_unbind_pods(gf_cluster *c, const struct gf_pod_spec *p, const struct member *m, uint32_t n)
{
	while (n-- > 0)
		gf_cluster_unbind(c, m[n].node, p, m[n].gpus);
}

/* ---- clock, integrals, timeline ---- */

static gf_err sample(gf_loop *L, int64_t t)
{
	if (gf_grow(&L->timeline, &L->timeline_cap, L->ntimeline + 1, sizeof(*L->timeline), 64))
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
	int64_t ea = gf_loop_expected_end(&L->jobs[a]), eb = gf_loop_expected_end(&L->jobs[b]);

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

/* Note members [from, to) of job id as bound by this cycle (its decisions). */
gf_err gf_loop_note_binds(gf_loop *L, uint32_t id, uint32_t from, uint32_t to)
{
	const struct job *j = &L->jobs[id];

	if (gf_grow(&L->binds, &L->binds_cap, L->nbinds + (to - from), sizeof(*L->binds), 64))
		return GF_NOMEM;
	for (uint32_t k = from; k < to; k++) {
		const struct member *m = &L->members[j->member0 + k];
		struct gf_loop_bind *b = &L->binds[L->nbinds++];

		b->job = id;
		b->member = k;
		b->node = m->node;
		memcpy(b->gpus, m->gpus, sizeof(b->gpus));
	}
	return GF_OK;
}

/*
 * confirm: every member is bound; the job runs from now (a preemptor: from
 * now + the victims' grace, holding their room meanwhile) for its duration
 * (an open one: until the caller ends it).  Outside kube mode its members
 * are this cycle's binds (kube mode notes each pod as it binds).
 */
static gf_err confirm(gf_loop *L, uint32_t id)
{
	struct job *j = &L->jobs[id];
	size_t pos;

	if (gf_grow(&L->running, &L->running_cap, L->nrunning + 1, sizeof(*L->running), 64))
		return GF_NOMEM;
	if (L->cfg.policy != GF_QP_KUBE && gf_loop_note_binds(L, id, 0, j->npods))
		return GF_NOMEM;
	j->state = GF_JOB_RUNNING;
	j->why = GF_LOOP_WHY_NONE;
	j->start = L->now + L->start_delay;
	L->start_delay = 0;
	L->stats.starts++;
	if (j->duration != GF_LOOP_OPEN && gf_events_push(&L->events, j->start + j->duration, GF_EV_END, id))
		return GF_NOMEM;
	pos = running_pos(L, id);
	memmove(&L->running[pos + 1], &L->running[pos], (L->nrunning - pos) * sizeof(*L->running));
	L->running[pos] = id;
	L->nrunning++;
	return GF_OK;
}

/* assume: members [from, to) were just bound in the real cluster. */
void gf_loop_assume(gf_loop *L, struct job *j, uint32_t n)
{
	gf_loop_quota_charge(L, j, &L->members[j->member0 + j->nbound], n, 1);
	j->nbound = (uint16_t)(j->nbound + n);
	L->used_cls[j->cls] += (int64_t)n * j->gpu_count * j->gpu_milli;
}

/* forget: undo the binds of a job that was assumed but may not start. */
void gf_loop_forget(gf_loop *L, struct job *j)
{
	struct gf_pod_spec p = gf_loop_pod_of(j);

	gf_loop_quota_charge(L, j, &L->members[j->member0], j->nbound, -1);
	gf_loop_unbind_pods(L->real, &p, &L->members[j->member0], j->nbound);
	L->used_cls[j->cls] -= (int64_t)j->nbound * j->gpu_count * j->gpu_milli;
	j->nbound = 0;
}

/* Unbind a running job's pods; its nodes go to the freed log (the requeue event). */
gf_err gf_loop_unbind_job(gf_loop *L, uint32_t id)
{
	struct job *j = &L->jobs[id];
	struct gf_pod_spec p = gf_loop_pod_of(j);
	size_t pos = running_pos(L, id);

	if (pos >= L->nrunning || L->running[pos] != id)
		return GF_STATE;
	if (L->spot && gf_loop_spot_run_ended(L, id))
		return GF_NOMEM;
	memmove(&L->running[pos], &L->running[pos + 1], (L->nrunning - pos - 1) * sizeof(*L->running));
	L->nrunning--;
	if (gf_grow(&L->freed, &L->freed_cap, L->nfreed + j->npods, sizeof(*L->freed), 64))
		return GF_NOMEM;
	gf_loop_quota_charge(L, j, &L->members[j->member0], j->npods, -1);
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
	if ((err = gf_loop_unbind_job(L, id)))
		return err;
	j->state = GF_JOB_DONE;
	L->hist_sum[j->cls] += (double)j->duration;
	L->hist_n[j->cls]++;
	/* the plan counted on this end at its expected time; only an earlier one changes it */
	if (L->now < gf_loop_expected_end(j))
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
			total += gf_loop_node_slots(L->cat, gf_cluster_node(L->empty, i), p, j->npods);
		s->resolvable = total >= j->npods;
	}
	return s->resolvable;
}

/* History estimates: the mean finished run time of j's class, else the prior. */
void gf_loop_history_estimate(gf_loop *L, struct job *j)
{
	if (!L->cfg.estimate_history)
		return;
	j->estimate = L->hist_n[j->cls] ? gf_loop_max64((int64_t)(L->hist_sum[j->cls] / (double)L->hist_n[j->cls]), 1)
					 : L->cfg.history_prior;
}

/* add: the job arrives and joins the queue (kube mode: one entry per pod). */
static gf_err add(gf_loop *L, uint32_t id)
{
	struct job *j = &L->jobs[id];
	struct gf_pod_spec p = gf_loop_pod_of(j);
	uint32_t n = L->cfg.policy == GF_QP_KUBE ? j->npods : 1;

	if (j->state != GF_JOB_FUTURE)
		return GF_OK;	/* withdrawn before it arrived */
	gf_loop_history_estimate(L, j);
	j->qseq = L->next_qseq++;
	if (!resolvable(L, j, &p)) {
		j->state = GF_JOB_UNRESOLVABLE;
		return GF_OK;
	}
	j->state = GF_JOB_PENDING;
	if (gf_grow(&L->incoming, &L->incoming_cap, L->nincoming + n, sizeof(*L->incoming), 64))
		return GF_NOMEM;
	for (uint32_t k = 0; k < n; k++)
		L->incoming[L->nincoming++] = (struct entry){ id, L->cfg.policy == GF_QP_KUBE ? k : WHOLE };
	return GF_OK;
}

gf_err gf_loop_requeue_unresolvable(gf_loop *L)
{
	for (size_t k = 0; k < L->nshapes; k++)
		if (L->shapes[k].resolvable == 0)
			L->shapes[k].resolvable = -1;
	for (size_t id = 0; id < L->njobs; id++) {
		struct job *j = &L->jobs[id];
		struct gf_pod_spec p = gf_loop_pod_of(j);
		uint32_t n = L->cfg.policy == GF_QP_KUBE ? j->npods : 1;

		if (j->state != GF_JOB_UNRESOLVABLE || !resolvable(L, j, &p))
			continue;
		if (gf_grow(&L->incoming, &L->incoming_cap, L->nincoming + n, sizeof(*L->incoming), 64))
			return GF_NOMEM;
		j->state = GF_JOB_PENDING;	/* its arrival sequence kept: its place in the queue */
		for (uint32_t k = 0; k < n; k++)
			L->incoming[L->nincoming++] = (struct entry){ (uint32_t)id,
								      L->cfg.policy == GF_QP_KUBE ? k : WHOLE };
	}
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
	if (gf_grow(&L->merge, &L->merge_cap, L->npend + n, sizeof(*L->merge), 64) ||
	    gf_grow(&L->pend, &L->pend_cap, L->npend + n, sizeof(*L->pend), 64))
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

/* ---- one cycle ---- */

/*
 * Try to bind the whole job j in the real cluster (all or nothing), within
 * its queue's quota: the total is checked first, the per-model quota on the
 * placement found (then undone if refused).  A quota refusal sets
 * L->quota_refused and parks nothing (room is not what is missing).
 */
/* allowed and job id's admission mask intersected (NULL: every node); memo: may the shape's memo be used? */
static const uint64_t *job_allowed(gf_loop *L, uint32_t id, const uint64_t *allowed, bool *memo)
{
	const uint64_t *a = gf_loop_admission(L, id);

	*memo = !a;
	if (!a)
		return allowed;
	if (!allowed)
		return a;
	for (size_t w = 0; w < L->mask_words; w++)
		L->admit_mask[w] = a[w] & allowed[w];
	return L->admit_mask;
}

/* Job id was tried in this cycle (room for it in L->tried: made at the cycle's start). */
static void note_tried(gf_loop *L, uint32_t id)
{
	struct job *j = &L->jobs[id];
	uint32_t c = (uint32_t)(L->stats.cycles % UINT32_MAX) + 1;	/* never 0 */

	if (j->tried_cycle == c || L->ntried >= L->tried_cap)
		return;
	j->tried_cycle = c;
	L->tried[L->ntried++] = id;
}

/*
 * The end of a cycle: the jobs it tried that did not start are failed[]
 * (in place in L->tried); with backoff each waits before its next try (a
 * wake-up event then), a started one's count is cleared.
 */
static gf_err settle_tried(gf_loop *L)
{
	size_t w = 0;

	for (size_t i = 0; i < L->ntried; i++) {
		uint32_t id = L->tried[i];
		struct job *j = &L->jobs[id];

		if (j->state != GF_JOB_PENDING) {
			j->failures = 0;
			continue;
		}
		L->tried[w++] = id;
		if (!L->cfg.backoff_initial)
			continue;
		int64_t d = L->cfg.backoff_initial;

		for (uint32_t k = 1; k < j->failures + 1 && d < L->cfg.backoff_max; k++)
			d *= 2;
		d = d < L->cfg.backoff_max ? d : L->cfg.backoff_max;
		if (j->failures < UINT32_MAX)
			j->failures++;
		j->not_before = L->now + d;
		gf_err err = gf_events_push(&L->events, j->not_before, GF_EV_WAKE, id);

		if (err)
			return err;
	}
	L->ntried = w;
	return GF_OK;
}

bool gf_loop_try_job(gf_loop *L, uint32_t id, const uint64_t *allowed)
{
	struct job *j = &L->jobs[id];
	struct gf_pod_spec p = gf_loop_pod_of(j);
	bool memo;

	bool whole = !allowed;	/* tried over every node its mask allows: its own memo applies */
	bool spot_ok;

	if (L->spot && gf_loop_spot_try(L, id, allowed, &spot_ok))
		return spot_ok;	/* pool by pool (queue/spot.c) */

	L->quota_refused = false;
	if (!L->quota_bypass && !gf_loop_quota_admits(L, j, NULL)) {
		L->quota_refused = true;
		L->stats.quota_blocked++;
		return false;
	}
	/* failed with a mask and nothing freed since: no room still (the mask is not even asked) */
	if (whole && j->fail_pos == L->nfreed)
		return false;
	allowed = job_allowed(L, id, allowed, &memo);	/* a job with a mask: never NULL, no park */
	bool own = whole && !memo;

	if (!allowed && !may_fit(L, j, &p))
		return false;
	if (own && !masked_may_fit(L, j, allowed, &p))
		return false;
	L->stats.tries++;
	note_tried(L, id);
	if (!gf_loop_place_pods(L, L->sched, L->real, &p, allowed, &L->members[j->member0], 0, j->npods)) {
		if (!allowed)
			park(L, j);
		else if (own)
			j->fail_pos = L->nfreed;
		return false;
	}
	if (!L->quota_bypass && !gf_loop_quota_admits(L, j, &L->members[j->member0])) {
		gf_loop_unbind_pods(L->real, &p, &L->members[j->member0], j->npods);
		L->quota_refused = true;
		L->stats.quota_blocked++;
		return false;
	}
	gf_loop_assume(L, j, j->npods);
	return true;
}

/* kube mode: bind one pod of job id; the job starts when its last pod binds. */
static gf_err try_pod(gf_loop *L, uint32_t id, uint32_t member, bool *bound)
{
	struct job *j = &L->jobs[id];
	struct gf_pod_spec p = gf_loop_pod_of(j);

	bool memo;
	const uint64_t *allowed = job_allowed(L, id, NULL, &memo);

	*bound = false;
	if (memo && !may_fit(L, j, &p))
		return GF_OK;
	L->stats.tries++;
	note_tried(L, id);
	if (!gf_loop_place_pods(L, L->sched, L->real, &p, allowed, &L->members[j->member0], member, member + 1)) {
		if (memo)
			park(L, j);
		return GF_OK;
	}
	*bound = true;
	gf_loop_assume(L, j, 1);
	if (gf_loop_note_binds(L, id, member, member + 1))
		return GF_NOMEM;
	if (j->nbound == j->npods)
		return confirm(L, id);
	if (j->nbound == 1 && j->npods > 1) {
		if (gf_grow(&L->partials, &L->partials_cap, L->npartials + 1, sizeof(*L->partials), 64))
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

/*
 * A job that would make its queue borrow waits for the fair-share pass (pend
 * index at); under strict FIFO so do the later jobs of its queue, in order;
 * a reservation it held is dropped (planned again once it no longer borrows).
 */
static gf_err defer_borrower(gf_loop *L, size_t at, uint32_t id, size_t nahead)
{
	if (gf_grow(&L->borrowers, &L->borrowers_cap, L->nborrowers + 1, sizeof(*L->borrowers), 64))
		return GF_NOMEM;
	L->borrowers[L->nborrowers++] = (uint32_t)at;
	if (gf_loop_ordering(L, id) == GF_ORDER_STRICT)
		L->q_state[L->jobs[id].queue] = Q_DEFERRED;
	if (nahead < L->nres && L->res[nahead].holder == id)
		return gf_loop_drop_reservations(L, nahead);
	return GF_OK;
}

/* The next untried borrower of queue q at or after q_next[q]; NONE if none. */
static uint32_t next_borrower(gf_loop *L, uint16_t q)
{
	while (L->q_next[q] < L->nborrowers) {
		uint32_t at = L->borrowers[L->q_next[q]];

		if (at != NONE && L->jobs[L->pend[at].job].queue == q)
			return L->q_next[q];
		L->q_next[q]++;
	}
	return NONE;
}

/*
 * The fair-share pass: the deferred borrowers are tried queue by queue,
 * always the queue whose share would be lowest with its next job admitted
 * (ties: the lower queue index); each is tried once.  Started ones leave
 * the pending array.  Cost O(borrowers x queues).
 */
static gf_err fair_pass(gf_loop *L)
{
	size_t started = 0;
	gf_err err;

	memset(L->q_next, 0, L->nqueues * sizeof(*L->q_next));
	for (;;) {
		uint32_t best = NONE;
		double best_share = 0;

		for (uint16_t q = 0; q < L->nqueues; q++) {
			uint32_t k = next_borrower(L, q);

			if (k == NONE)
				continue;
			const struct job *j = &L->jobs[L->pend[L->borrowers[k]].job];
			double sh = gf_loop_quota_share(L, q, (int64_t)j->npods * j->gpu_count * j->gpu_milli);

			if (best == NONE || sh < best_share) {
				best = k;
				best_share = sh;
			}
		}
		if (best == NONE)
			break;
		uint32_t id = L->pend[L->borrowers[best]].job;
		bool ok = L->cfg.policy == GF_QP_STRICT_FIFO || L->cfg.policy == GF_QP_BEST_EFFORT_FIFO
				  ? gf_loop_try_job(L, id, NULL)
				  : gf_loop_backfill_borrower(L, id);

		L->borrowers[best] = NONE;
		L->jobs[id].why = ok ? GF_LOOP_WHY_NONE : L->quota_refused ? GF_LOOP_WHY_QUOTA : GF_LOOP_WHY_NO_ROOM;
		if (ok) {
			if ((err = confirm(L, id)))
				return err;
			started++;
		} else if (gf_loop_ordering(L, id) == GF_ORDER_STRICT) {
			L->q_next[L->jobs[id].queue] = (uint32_t)L->nborrowers;	/* the head blocks the rest */
		}
	}
	L->nborrowers = 0;
	if (started) {
		size_t w = 0;

		for (size_t r = 0; r < L->npend; r++)
			if (L->jobs[L->pend[r].job].state == GF_JOB_PENDING)
				L->pend[w++] = L->pend[r];
		L->npend = w;
	}
	return GF_OK;
}

/*
 * History estimates run short: a running job past its expected end is now
 * expected to run twice as long as it has so far; the plans counted on its
 * end, so they are all dropped (not late: displaced) and made again.  The
 * running list is ordered by expected end, so the overdue jobs are its head.
 */
static gf_err refresh_overdue(gf_loop *L)
{
	size_t n = 0;

	while (L->nrunning && gf_loop_expected_end(&L->jobs[L->running[0]]) <= L->now) {
		uint32_t id = L->running[0];
		struct job *j = &L->jobs[id];
		size_t pos;

		memmove(&L->running[0], &L->running[1], (L->nrunning - 1) * sizeof(*L->running));
		L->nrunning--;
		j->estimate = gf_loop_max64(2 * (L->now - j->start), j->estimate + 1);
		pos = running_pos(L, id);
		memmove(&L->running[pos + 1], &L->running[pos], (L->nrunning - pos) * sizeof(*L->running));
		L->running[pos] = id;
		L->nrunning++;
		n++;
	}
	if (!n)
		return GF_OK;
	L->stats.short_estimates += n;
	for (size_t r = 0; r < L->nres; r++)
		L->res[r].displaced = true;
	return gf_loop_drop_reservations(L, 0);
}

static gf_err cycle(gf_loop *L)
{
	size_t w = 0, nahead = 0;
	bool stop = false;
	gf_err err;

	if ((err = merge_incoming(L)))
		return err;
	L->stats.cycles++;
	L->ntried = 0;
	if (gf_grow(&L->tried, &L->tried_cap, L->npend + 1, sizeof(*L->tried), 64))
		return GF_NOMEM;
	L->cycle_plans = 0;
	if (L->cfg.estimate_history && (err = refresh_overdue(L)))
		return err;
	if (L->q_state)
		memset(L->q_state, Q_OPEN, L->nqueues * sizeof(*L->q_state));
	/*
	 * A job ended before its expected end: EASY plans its one reservation
	 * again (it can only move earlier: the old plan is tried as a fallback).
	 * Conservative keeps its plans, all still valid since only room was
	 * freed; replanning them in order could push a later holder back behind
	 * an earlier one that moved up.  Its holders may still start early where
	 * the others' shadows allow (try_holder).
	 */
	if (L->plan_dirty && L->max_res == 1 && (err = gf_loop_drop_reservations(L, 0)))
		return err;
	L->plan_dirty = false;
	for (size_t r = 0; r < L->npend; r++) {
		struct entry e = L->pend[r];
		bool ok = false;

		uint8_t qs = L->q_state ? L->q_state[L->jobs[e.job].queue] : Q_OPEN;

		if (L->jobs[e.job].not_before > L->now && !(nahead < L->nres && L->res[nahead].holder == e.job)) {
			/* backing off: not tried now; a strict queue's head still blocks it */
			if (gf_loop_ordering(L, e.job) == GF_ORDER_STRICT && !stop && qs != Q_BLOCKED) {
				if (L->q_state)
					L->q_state[L->jobs[e.job].queue] = Q_BLOCKED;
				else
					stop = true;
			}
			L->pend[w++] = e;
			continue;
		}
		if (stop || qs == Q_BLOCKED) {
			L->jobs[e.job].why = GF_LOOP_WHY_BLOCKED;
			L->pend[w++] = e;
			continue;
		}
		if (qs == Q_DEFERRED || gf_loop_quota_borrows(L, &L->jobs[e.job])) {
			if ((err = defer_borrower(L, w, e.job, nahead)))
				return err;
			L->pend[w++] = e;
			continue;
		}
		L->why = GF_LOOP_WHY_NO_ROOM;
		switch (L->cfg.policy) {
		case GF_QP_KUBE:
			err = try_pod(L, e.job, e.member, &ok);
			break;
		case GF_QP_STRICT_FIFO:
		case GF_QP_BEST_EFFORT_FIFO:
			ok = gf_loop_try_job(L, e.job, NULL);
			if (!ok && (err = gf_loop_try_preempt(L, e.job, 0, &ok)))
				return err;
			/* strict FIFO: the head blocks its queue (every queue when there are no quotas) */
			if (!ok && L->cfg.policy == GF_QP_STRICT_FIFO) {
				if (L->q_state)
					L->q_state[L->jobs[e.job].queue] = Q_BLOCKED;
				else
					stop = true;
			}
			err = ok ? confirm(L, e.job) : GF_OK;
			break;
		default:
			/* per-queue: a job of a strict or skip-ahead queue holds no reservation */
			L->no_reserve = gf_loop_ordering(L, e.job) != GF_ORDER_BACKFILL;
			err = gf_loop_backfill_step(L, e.job, &nahead, &ok);
			L->no_reserve = false;
			if (!err && ok)
				err = confirm(L, e.job);
			else if (!err && gf_loop_ordering(L, e.job) == GF_ORDER_STRICT)
				L->q_state[L->jobs[e.job].queue] = Q_BLOCKED;	/* per-queue: only with queues */
			break;
		}
		if (err)
			return err;
		if (!ok) {
			L->jobs[e.job].why = L->why != GF_LOOP_WHY_NO_ROOM ? L->why
					     : L->quota_refused && L->cfg.policy != GF_QP_KUBE ? GF_LOOP_WHY_QUOTA
												 : GF_LOOP_WHY_NO_ROOM;
			L->pend[w++] = e;
		}
	}
	L->npend = w;
	/* reservations whose holders were not reached (cannot happen: holders are pending) */
	if (nahead < L->nres && (err = gf_loop_drop_reservations(L, nahead)))
		return err;
	if (L->nborrowers && (err = fair_pass(L)))
		return err;
	mark_partials(L);
	return settle_tried(L);
}

/* ---- submission and the run ---- */

static gf_err check_spec(const gf_loop *L, const struct gf_job_spec *s)
{
	const struct gf_pod_spec *p = &s->pod;

	if (s->npods < 1 || s->npods > GF_LOOP_MAX_GANG || s->cls >= GF_LOOP_MAX_CLASSES ||
	    s->arrival < 0 || (s->duration < 0 && s->duration != GF_LOOP_OPEN) || p->cpu_milli < 0 || p->mem_mib < 0 ||
	    p->gpu_count < 0 || p->gpu_count > GF_MAX_GPUS ||
	    (p->gpu_count == 0) != (p->gpu_milli == 0) || p->gpu_milli < 0 ||
	    p->gpu_milli > GF_MILLI_PER_GPU || p->spec < 0 || p->spec >= L->cat->nspecs ||
	    (L->nqueues > 0 && s->queue >= L->nqueues))
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
	if (gf_grow(&L->jobs, &L->jobs_cap, L->njobs + 1, sizeof(*L->jobs), 64) ||
	    gf_grow(&L->members, &L->members_cap, L->nmembers + s->npods, sizeof(*L->members), 64))
		return GF_NOMEM;
	j = &L->jobs[L->njobs];
	memset(j, 0, sizeof(*j));
	if ((err = intern_shape(L, s, &j->shape)))
		return err;
	j->cpu = s->pod.cpu_milli;
	j->mem = s->pod.mem_mib;
	j->served = s->pod.served_model;
	j->gpu_count = s->pod.gpu_count;
	j->gpu_milli = s->pod.gpu_milli;
	j->spec = s->pod.spec;
	j->priority = s->priority;
	j->arrival = s->arrival;
	j->duration = s->duration;
	j->estimate = s->estimate > 0 ? s->estimate
		      : s->duration == GF_LOOP_OPEN ? GF_LOOP_UNKNOWN_EST
						    : gf_loop_max64(s->duration, 1);
	j->start = j->promised = -1;
	j->fail_pos = NO_FAIL;
	j->member0 = (uint32_t)L->nmembers;
	j->npods = (uint16_t)s->npods;
	j->cls = s->cls;
	j->queue = s->queue;
	j->never_preempt = s->never_preempt;
	memcpy(j->budgets, s->budgets, sizeof(j->budgets));
	j->state = GF_JOB_FUTURE;
	memset(&L->members[L->nmembers], 0, s->npods * sizeof(*L->members));
	L->nmembers += s->npods;
	*id = (uint32_t)L->njobs++;
	return GF_OK;
}

gf_err gf_loop_submit(gf_loop *L, const struct gf_job_spec *spec, uint32_t *id)
{
	gf_err err;

	if (L->ran && spec->arrival < L->now)
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
	gf_loop_history_estimate(L, &L->jobs[*id]);
	L->quota_bypass = true;	/* already admitted: charged to its queue, never refused */
	*placed = gf_loop_try_job(L, *id, NULL);
	L->quota_bypass = false;
	if (!*placed) {
		L->jobs[*id].state = GF_JOB_DROPPED;
		return GF_OK;
	}
	L->plan_dirty = true;
	return confirm(L, *id);
}

gf_err gf_loop_place_at(gf_loop *L, const struct gf_job_spec *spec, const struct gf_loop_bind *where,
			uint32_t *id)
{
	gf_err err;

	for (uint32_t k = 0; k < spec->npods && k < GF_LOOP_MAX_GANG; k++)
		if (where[k].node >= L->nnodes)
			return GF_RANGE;
	if ((err = new_job(L, spec, id)))
		return err;
	struct job *j = &L->jobs[*id];
	struct gf_pod_spec p = gf_loop_pod_of(j);
	struct member *m = &L->members[j->member0];

	for (uint32_t k = 0; k < j->npods; k++) {
		m[k].node = where[k].node;
		memcpy(m[k].gpus, where[k].gpus, sizeof(m[k].gpus));
	}
	if (!gf_loop_bind_pods(L->real, &p, m, j->npods)) {
		L->njobs--;
		L->nmembers -= j->npods;
		return GF_EXISTS;
	}
	j->arrival = L->now;
	j->qseq = L->next_qseq++;
	gf_loop_history_estimate(L, j);
	gf_loop_assume(L, j, j->npods);	/* charged to its queue: admitted already */
	/* the plans did not count its room: made again, none counted late */
	for (size_t r = 0; r < L->nres; r++)
		L->res[r].displaced = true;
	if ((err = gf_loop_drop_reservations(L, 0)))
		return err;
	size_t nbinds = L->nbinds;

	err = confirm(L, *id);
	L->nbinds = nbinds;	/* not a decision of a cycle */
	return err;
}

gf_err gf_loop_place_on(gf_loop *L, const struct gf_job_spec *spec, uint32_t node, uint8_t gpus[GF_MAX_GPUS],
			uint32_t *id)
{
	const struct gf_pod_spec *p = &spec->pod;
	struct gf_loop_bind at = { .node = node };
	struct gf_job_spec s = *spec;
	int hint = -1;

	if (spec->npods != 1)
		return GF_INVAL;
	if (node >= L->nnodes)
		return GF_RANGE;
	const struct gf_node *st = gf_cluster_node(L->real, node);

	if (p->gpu_count == 1 && p->gpu_milli < GF_MILLI_PER_GPU && L->ops->score)
		(void)gf_sched_score(L->sched, p, node, &hint);
	if (hint >= 0 && hint < st->ngpus && st->gpu_free[hint] >= p->gpu_milli)
		at.gpus[0] = (uint8_t)hint;
	else if (p->gpu_count &&
		 gf_topo_pick(st, gf_cluster_spec(L->real, node), p->gpu_count, p->gpu_milli, at.gpus, NULL) <
			 p->gpu_count)
		return GF_EXISTS;
	s.pod.spec = 0;	/* the node is chosen: no model filter */
	gf_err err = gf_loop_place_at(L, &s, &at, id);

	if (!err)
		memcpy(gpus, at.gpus, GF_MAX_GPUS);
	return err;
}

static uint32_t count_stalled(const gf_loop *L)
{
	uint32_t n = 0;

	for (size_t i = 0; i < L->njobs; i++)
		n += L->jobs[i].state == GF_JOB_PENDING;
	return n;
}

/* Apply the queued events with time <= now, each at its own time (no cycle between). */
static gf_err apply_events(gf_loop *L, int64_t now)
{
	struct gf_event ev;
	gf_err err;

	while (gf_events_peek(&L->events, &ev) && ev.time <= now) {
		int64_t t = ev.time;

		if ((err = advance(L, t)))
			return err;
		L->now = t;
		while (gf_events_peek(&L->events, &ev) && ev.time == t) {
			gf_events_pop(&L->events, &ev);
			L->stats.events++;
			err = ev.job >= L->njobs ? GF_OK	/* of a job compacted away: it did nothing */
			      : ev.kind == GF_EV_ARRIVAL ? add(L, ev.job)
			      : ev.kind == GF_EV_END ? finish(L, ev.job)
						     : GF_OK;	/* a wake-up: only the cycle */
			if (err)
				return err;
		}
	}
	return GF_OK;
}

gf_err gf_loop_cycle(gf_loop *L, int64_t now, struct gf_loop_decisions *out)
{
	gf_err err;

	if (now < L->now || now < 0)
		return GF_STATE;
	L->ran = true;
	if ((err = apply_events(L, now)) || (err = advance(L, now)))
		return err;
	L->now = now;
	L->nbinds = L->nevicted = L->ntried = 0;
	if ((err = cycle(L)))
		return err;
	L->stats.now = L->now;
	if (out)
		*out = (struct gf_loop_decisions){ .binds = L->binds, .nbinds = L->nbinds,
						   .evicted = L->evicted, .nevicted = L->nevicted,
						   .failed = L->ntried ? L->tried : NULL, .nfailed = L->ntried };
	return GF_OK;
}

bool gf_loop_next_event(const gf_loop *L, int64_t *t)
{
	struct gf_event ev;

	if (!gf_events_peek(&L->events, &ev))
		return false;
	*t = ev.time;
	return true;
}

/* The virtual-time driver: a cycle at the time of each next event. */
gf_err gf_loop_run_until(gf_loop *L, int64_t until)
{
	struct gf_event ev;
	gf_err err;

	L->ran = true;
	while (gf_events_peek(&L->events, &ev) && ev.time <= until)
		if ((err = gf_loop_cycle(L, ev.time, NULL)))
			return err;
	if (L->events.n == 0) {
		if ((err = advance(L, gf_loop_max64(L->now, L->cfg.horizon))))
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

/* ---- the caller's reports (externally driven jobs) ---- */

/* Take job id's entries out of the queue (pending and incoming); O(pending). */
static void dequeue(gf_loop *L, uint32_t id)
{
	size_t w = 0;

	for (size_t r = 0; r < L->npend; r++)
		if (L->pend[r].job != id)
			L->pend[w++] = L->pend[r];
	L->npend = w;
	w = 0;
	for (size_t r = 0; r < L->nincoming; r++)
		if (L->incoming[r].job != id)
			L->incoming[w++] = L->incoming[r];
	L->nincoming = w;
}

/* Undo a pending job's partial binds (kube mode) as a real free: its nodes join the freed log. */
static gf_err release_partial(gf_loop *L, struct job *j)
{
	if (j->nbound == 0)
		return GF_OK;
	if (gf_grow(&L->freed, &L->freed_cap, L->nfreed + j->nbound, sizeof(*L->freed), 64))
		return GF_NOMEM;
	for (uint32_t k = 0; k < j->nbound; k++)
		L->freed[L->nfreed++] = L->members[j->member0 + k].node;
	gf_loop_forget(L, j);
	return GF_OK;
}

/* Is job id the holder of a reservation?  Then those from its on are planned again. */
static gf_err drop_if_holder(gf_loop *L, uint32_t id)
{
	for (size_t r = 0; r < L->nres; r++)
		if (L->res[r].holder == id)
			return gf_loop_drop_reservations(L, r);
	return GF_OK;
}

gf_err gf_loop_end(gf_loop *L, uint32_t id, int64_t now)
{
	gf_err err;

	if (id >= L->njobs)
		return GF_RANGE;
	struct job *j = &L->jobs[id];

	now = gf_loop_max64(now, L->now);
	switch (j->state) {
	case GF_JOB_RUNNING:
		/* ends at now (a preemptor still in its victims' grace: at its start) */
		j->duration = gf_loop_max64(now - j->start, 0);
		return gf_events_push(&L->events, j->start + j->duration, GF_EV_END, id);
	case GF_JOB_PENDING:
		dequeue(L, id);
		if ((err = release_partial(L, j)) || (err = drop_if_holder(L, id)))
			return err;
		j->state = GF_JOB_WITHDRAWN;
		return GF_OK;
	case GF_JOB_FUTURE:
		j->state = GF_JOB_WITHDRAWN;	/* its arrival event finds it so and does nothing */
		return GF_OK;
	default:
		return GF_OK;
	}
}

gf_err gf_loop_nodes_freed(gf_loop *L, const uint32_t *nodes, size_t n)
{
	if (gf_grow(&L->freed, &L->freed_cap, L->nfreed + n, sizeof(*L->freed), 64))
		return GF_NOMEM;
	for (size_t k = 0; k < n; k++)
		if (nodes[k] < L->nnodes)
			L->freed[L->nfreed++] = nodes[k];
	L->plan_dirty = true;
	return GF_OK;
}

/*
 * A member of running job id ends now: the job's pods are unbound at once
 * (the freed log notes their nodes), it is DONE, and its other members go
 * on as a new running job (*rest) where they are: same start, estimate,
 * queue place and the rest of the spec, so a gang that ends pod by pod
 * keeps its record, not its id.
 */
gf_err gf_loop_end_member(gf_loop *L, uint32_t id, uint32_t member, uint32_t *rest)
{
	gf_err err;

	*rest = NONE;
	if (id >= L->njobs || member >= L->jobs[id].npods)
		return GF_RANGE;
	if (L->jobs[id].state != GF_JOB_RUNNING)
		return GF_STATE;
	struct job old = L->jobs[id];
	uint32_t n = 0;

	if (gf_grow(&L->tmp_members, &L->tmp_cap, old.npods, sizeof(*L->tmp_members), 64))
		return GF_NOMEM;
	for (uint32_t k = 0; k < old.npods; k++)
		if (k != member)
			L->tmp_members[n++] = L->members[old.member0 + k];
	if ((err = gf_loop_unbind_job(L, id)))
		return err;
	L->jobs[id].state = GF_JOB_DONE;
	L->jobs[id].duration = gf_loop_max64(L->now - old.start, 0);	/* its end event, if any, is stale */
	L->plan_dirty = true;	/* the plans counted on its room until its expected end */
	if (!n)
		return GF_OK;
	struct gf_job_spec s = { .pod = gf_loop_pod_of(&old), .npods = n, .priority = old.priority, .cls = old.cls,
				 .arrival = old.arrival, .duration = old.duration, .estimate = old.estimate,
				 .queue = old.queue, .never_preempt = old.never_preempt };
	uint32_t nid;

	memcpy(s.budgets, old.budgets, sizeof(s.budgets));
	if ((err = new_job(L, &s, &nid)))
		return err;
	struct job *j = &L->jobs[nid];
	struct gf_pod_spec p = gf_loop_pod_of(j);

	memcpy(&L->members[j->member0], L->tmp_members, n * sizeof(*L->members));
	if (!gf_loop_bind_pods(L->real, &p, &L->members[j->member0], n))
		return GF_STATE;	/* the room it just freed: cannot happen */
	j->qseq = old.qseq;
	j->start = old.start;
	j->estimate = old.estimate;
	j->promised = old.promised;
	j->npreempted = old.npreempted;
	j->lost = old.lost;
	j->state = GF_JOB_RUNNING;
	gf_loop_assume(L, j, n);
	if (gf_grow(&L->running, &L->running_cap, L->nrunning + 1, sizeof(*L->running), 64))
		return GF_NOMEM;
	if (j->duration != GF_LOOP_OPEN && gf_events_push(&L->events, j->start + j->duration, GF_EV_END, nid))
		return GF_NOMEM;
	size_t pos = running_pos(L, nid);

	memmove(&L->running[pos + 1], &L->running[pos], (L->nrunning - pos) * sizeof(*L->running));
	L->running[pos] = nid;
	L->nrunning++;
	*rest = nid;
	return GF_OK;
}

/* Entries of v[0, *n) whose job goes (map NONE) are dropped, the others renamed. */
static void remap_entries(struct entry *v, size_t *n, const uint32_t *map)
{
	size_t w = 0;

	for (size_t r = 0; r < *n; r++)
		if (map[v[r].job] != NONE)
			v[w++] = (struct entry){ map[v[r].job], v[r].member };
	*n = w;
}

static void remap_ids(uint32_t *v, size_t *n, const uint32_t *map)
{
	size_t w = 0;

	for (size_t r = 0; r < *n; r++)
		if (map[v[r]] != NONE)
			v[w++] = map[v[r]];
	*n = w;
}

size_t gf_loop_njobs_over(const gf_loop *L)
{
	size_t n = 0;

	for (size_t id = 0; id < L->njobs; id++)
		n += L->jobs[id].state == GF_JOB_DONE || L->jobs[id].state == GF_JOB_WITHDRAWN ||
		     L->jobs[id].state == GF_JOB_DROPPED;
	return n;
}

void gf_loop_compact(gf_loop *L, uint32_t *map)
{
	uint32_t n = 0;
	size_t nm = 0, old = L->njobs;

	L->ntried = 0;	/* the last cycle's failed[] goes with its decisions */

	for (size_t id = 0; id < old; id++) {
		uint8_t st = L->jobs[id].state;

		map[id] = st == GF_JOB_DONE || st == GF_JOB_WITHDRAWN || st == GF_JOB_DROPPED ? NONE : n++;
	}
	for (size_t id = 0; id < old; id++) {
		struct job j = L->jobs[id];

		if (map[id] == NONE)
			continue;
		memmove(&L->members[nm], &L->members[j.member0], j.npods * sizeof(*L->members));
		j.member0 = (uint32_t)nm;
		nm += j.npods;
		L->jobs[map[id]] = j;
	}
	L->njobs = n;
	L->nmembers = nm;
	remap_entries(L->pend, &L->npend, map);
	remap_entries(L->incoming, &L->nincoming, map);
	remap_ids(L->running, &L->nrunning, map);	/* ids in the same order: (end, id) order kept */
	remap_ids(L->partials, &L->npartials, map);
	for (size_t r = 0; r < L->nres; r++)
		L->res[r].holder = map[L->res[r].holder];	/* a holder waits: kept */
	for (size_t r = 0; r < MAX_RES; r++)
		if (L->prev[r].holder != NONE)
			L->prev[r].holder = map[L->prev[r].holder];
	gf_events_remap(&L->events, map, old);
	L->nbinds = L->nevicted = 0;
	L->min_prio_n = 0;	/* preempt.c's lowest priority: counted again over the new ids */
}

gf_err gf_loop_unbind(gf_loop *L, uint32_t id)
{
	gf_err err;

	if (id >= L->njobs)
		return GF_RANGE;
	struct job *j = &L->jobs[id];
	uint32_t n = L->cfg.policy == GF_QP_KUBE ? j->npods : 1;

	if (j->state == GF_JOB_RUNNING) {
		if ((err = gf_loop_unbind_job(L, id)))
			return err;
		j->state = GF_JOB_PENDING;
		j->start = -1;
		L->plan_dirty = true;	/* the shadows still count it */
	} else if (j->state == GF_JOB_PENDING && j->nbound > 0) {
		dequeue(L, id);	/* kube mode: its unbound pods' entries, re-added whole below */
		if ((err = release_partial(L, j)))
			return err;
	} else {
		return GF_OK;
	}
	/* back into the queue at its old place (same arrival sequence) */
	if (gf_grow(&L->incoming, &L->incoming_cap, L->nincoming + n, sizeof(*L->incoming), 64))
		return GF_NOMEM;
	for (uint32_t k = 0; k < n; k++)
		L->incoming[L->nincoming++] = (struct entry){ id, L->cfg.policy == GF_QP_KUBE ? k : WHOLE };
	return GF_OK;
}

gf_err gf_loop_hold(gf_loop *L, uint32_t id, int64_t until)
{
	if (id >= L->njobs)
		return GF_RANGE;
	struct job *j = &L->jobs[id];

	if (j->state != GF_JOB_PENDING)
		return GF_STATE;
	if (until <= L->now || until <= j->not_before)
		return GF_OK;
	j->not_before = until;
	return gf_events_push(&L->events, until, GF_EV_WAKE, id);
}

void gf_loop_job(const gf_loop *L, uint32_t id, struct gf_job_info *out)
{
	const struct job *j = &L->jobs[id];

	out->state = (enum gf_job_state)j->state;
	out->cls = j->cls;
	out->npods = j->npods;
	out->arrival = j->arrival;
	out->start = j->state == GF_JOB_RUNNING || j->state == GF_JOB_DONE ? j->start : -1;
	out->end = out->start >= 0 && j->duration != GF_LOOP_OPEN ? j->start + j->duration : -1;
	out->why = j->state == GF_JOB_PENDING ? (enum gf_loop_why)j->why : GF_LOOP_WHY_NONE;
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
