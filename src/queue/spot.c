/*
 * queue/spot.c - capacity types, spot-aware placement, notices and
 * checkpoint-aware stops (queue/spot.h has the rules).
 *
 * State.  struct gf_spot hangs off the loop (L->spot, NULL while spot is
 * off): per node its capacity type and price, per job its declaration, its
 * whole run time, its accounting and one "no room" memo per pool, and a
 * short list of pending actions (a stop at a time, a reclaim at a time).
 * Arrays grow lazily: a job or node never declared has the defaults
 * (never, none; on-demand at price 0).
 *
 * Hooks in the loop (three lines in queue/loop.c, one in loop_impl.h):
 *   - gf_loop_admission() intersects a job's admission mask with the mask of
 *     its pool (gf_loop_spot_admission), so the cycle, the planner and
 *     preemption all see the same rule;
 *   - gf_loop_try_job() hands a job with a pool order to gf_loop_spot_try,
 *     which tries each pool in turn (each with its own fail memo, swapped
 *     into the job's) and re-enters gf_loop_try_job for each;
 *   - gf_loop_unbind_job() (every end of a run: finish, eviction, stop)
 *     charges the run to the job's accounting (gf_loop_spot_run_ended).
 *
 * Progress.  A job of run time R that has saved s seconds of progress runs
 * R - s more (its loop duration); at time now in a run started at t0 its
 * progress is p = s + (now - t0).  A stop keeping progress s' >= 0 discards
 * p - s' seconds of every GPU it holds (lost work) and gives it R - s' to
 * run (at least 1 s).  Periodic checkpoints fall at multiples of the
 * interval P of progress: the last one at or before p is P floor(p / P).
 *
 * Actions are few (a notice touches the jobs of one node): an unsorted
 * array, scanned for the earliest (time, stops before reclaims, insertion
 * order).  O(running x npods) per notice to find the node's jobs.
 */
#include <stdlib.h>
#include <string.h>

#include "queue/loop_impl.h"
#include "queue/spot.h"

enum { POOL_DEFAULT, POOL_ANY, POOL_OD, POOL_SPOT, NPOOLS };
enum { ACT_STOP, ACT_RECLAIM };

struct sjob {
	uint8_t tol, ckpt;
	bool stopping;		/* a stop is pending */
	int64_t ckpt_s;
	int64_t total;		/* its whole run time; -1: not known yet (its duration) */
	size_t fail_pos[NPOOLS];
	double gpu_s_spot, gpu_s_od, cost, lost;
	uint32_t stops, lost_stops;
	int64_t first_start;
};

struct action {
	int64_t time;
	uint32_t what;		/* job (stop) or node (reclaim) */
	uint8_t kind;
	bool tail;		/* the stopped job rejoins the queue at its tail */
	int64_t run_start;	/* stop: the run it stops (a stale one is ignored) */
	int64_t saved;		/* stop: progress it keeps */
	int64_t idle;		/* stop: seconds before it that were a checkpoint's, not work */
	uint64_t seq;
};

struct gf_spot {
	struct gf_spot_config cfg;
	uint8_t *cap;		/* per node: enum gf_capacity_type */
	double *price;
	size_t nnodes_known;
	struct sjob *jobs;
	size_t njobs;
	struct action *acts;
	size_t nacts, acts_cap;
	uint64_t seq;
	/* pool masks over L->nnodes (rebuilt when the node count or a type changes) */
	uint64_t *od_mask, *spot_mask, *buf;
	size_t mask_nodes, mask_words;
	bool dirty;
	size_t nspot;		/* spot nodes present (not removed) */
	/* a pool try in progress */
	bool in_try;
	uint32_t cur_job;
	uint8_t cur_pool;
	uint32_t *tmp;		/* jobs on a node */
	size_t tmp_cap;
};

static const char *const cap_names[] = { "on-demand", "spot" };
static const char *const tol_names[] = { "never", "allowed", "preferred" };
static const char *const ckpt_names[] = { "none", "signal", "periodic" };

const char *gf_capacity_type_name(enum gf_capacity_type t)
{
	return (unsigned)t < 2 ? cap_names[t] : NULL;
}

const char *gf_spot_tolerance_name(enum gf_spot_tolerance t)
{
	return (unsigned)t < 3 ? tol_names[t] : NULL;
}

const char *gf_checkpoint_name(enum gf_checkpoint c)
{
	return (unsigned)c < 3 ? ckpt_names[c] : NULL;
}

bool gf_spot_tolerance_find(const char *name, enum gf_spot_tolerance *out)
{
	for (int i = 0; i < 3; i++)
		if (!strcmp(name, tol_names[i])) {
			*out = (enum gf_spot_tolerance)i;
			return true;
		}
	return false;
}

bool gf_checkpoint_find(const char *name, enum gf_checkpoint *out)
{
	for (int i = 0; i < 3; i++)
		if (!strcmp(name, ckpt_names[i])) {
			*out = (enum gf_checkpoint)i;
			return true;
		}
	return false;
}

enum gf_capacity_type gf_capacity_type_of(const char *(*label)(const void *ud, const char *key), const void *ud)
{
	static const struct {
		const char *key, *value;
	} spot[] = {
		{ "karpenter.sh/capacity-type", "spot" },
		{ "eks.amazonaws.com/capacityType", "SPOT" },
		{ "cloud.google.com/gke-spot", "true" },
		{ "cloud.google.com/gke-preemptible", "true" },
		{ "kubernetes.azure.com/scalesetpriority", "spot" },
		{ "gpufleet.io/capacity-type", "spot" },
	};

	for (size_t i = 0; i < sizeof(spot) / sizeof(spot[0]); i++) {
		const char *v = label(ud, spot[i].key);

		if (v && !strcmp(v, spot[i].value))
			return GF_CAPACITY_SPOT;
	}
	return GF_CAPACITY_ON_DEMAND;
}

gf_err gf_loop_spot_enable(gf_loop *L, const struct gf_spot_config *cfg)
{
	if (L->spot)
		return GF_STATE;
	if ((unsigned)cfg->mode > GF_NOTICE_IGNORE || cfg->drain_grace < 0 || cfg->account_until < 0)
		return GF_INVAL;
	if (!(L->spot = calloc(1, sizeof(*L->spot))))
		return GF_NOMEM;
	L->spot->cfg = *cfg;
	L->spot->cur_job = NONE;
	L->spot->dirty = true;
	return GF_OK;
}

void gf_loop_spot_free(gf_loop *L)
{
	struct gf_spot *S = L->spot;

	if (!S)
		return;
	free(S->cap);
	free(S->price);
	free(S->jobs);
	free(S->acts);
	free(S->od_mask);
	free(S->spot_mask);
	free(S->buf);
	free(S->tmp);
	free(S);
	L->spot = NULL;
}

static gf_err grow_nodes(struct gf_spot *S, size_t n)
{
	uint8_t *c;
	double *p;

	if (n <= S->nnodes_known)
		return GF_OK;
	if (!(c = realloc(S->cap, n)))
		return GF_NOMEM;
	S->cap = c;
	if (!(p = realloc(S->price, n * sizeof(*p))))
		return GF_NOMEM;
	S->price = p;
	memset(c + S->nnodes_known, GF_CAPACITY_ON_DEMAND, n - S->nnodes_known);
	for (size_t i = S->nnodes_known; i < n; i++)
		p[i] = 0;
	S->nnodes_known = n;
	return GF_OK;
}

static gf_err grow_jobs(struct gf_spot *S, size_t n)
{
	struct sjob *v;

	if (n <= S->njobs)
		return GF_OK;
	size_t cap = S->njobs * 2 > n ? S->njobs * 2 : n + 64;

	if (!(v = realloc(S->jobs, cap * sizeof(*v))))
		return GF_NOMEM;
	for (size_t i = S->njobs; i < cap; i++) {
		memset(&v[i], 0, sizeof(v[i]));
		v[i].total = -1;
		v[i].first_start = -1;
		for (int k = 0; k < NPOOLS; k++)
			v[i].fail_pos[k] = NO_FAIL;
	}
	S->jobs = v;
	S->njobs = cap;
	return GF_OK;
}

gf_err gf_loop_node_capacity(gf_loop *L, uint32_t i, enum gf_capacity_type type, double price_per_gpu_h)
{
	struct gf_spot *S = L->spot;
	gf_err err;

	if (!S)
		return GF_STATE;
	if (i >= L->nnodes)
		return GF_RANGE;
	if ((unsigned)type > GF_CAPACITY_SPOT || !(price_per_gpu_h >= 0))
		return GF_INVAL;
	if ((err = grow_nodes(S, L->nnodes)))
		return err;
	S->cap[i] = (uint8_t)type;
	S->price[i] = price_per_gpu_h;
	S->dirty = true;
	return GF_OK;
}

gf_err gf_loop_job_spot(gf_loop *L, uint32_t id, const struct gf_job_spot *s)
{
	struct gf_spot *S = L->spot;
	gf_err err;

	if (!S)
		return GF_STATE;
	if (id >= L->njobs)
		return GF_RANGE;
	if ((unsigned)s->tolerance > GF_SPOT_PREFERRED || (unsigned)s->checkpoint > GF_CKPT_PERIODIC ||
	    s->checkpoint_s < 0 || (s->checkpoint == GF_CKPT_PERIODIC && s->checkpoint_s <= 0))
		return GF_INVAL;
	if ((err = grow_jobs(S, id + 1)))
		return err;
	struct sjob *sj = &S->jobs[id];

	sj->tol = (uint8_t)s->tolerance;
	sj->ckpt = (uint8_t)s->checkpoint;
	sj->ckpt_s = s->checkpoint_s;
	if (sj->total < 0)
		sj->total = L->jobs[id].duration;
	return GF_OK;
}

/* ---- placement ---- */

static bool is_spot(const struct gf_spot *S, uint32_t n)
{
	return n < S->nnodes_known && S->cap[n] == GF_CAPACITY_SPOT;
}

/* Rebuild the pool masks over the loop's nodes; false when out of memory (then no mask is used). */
static bool rebuild_masks(gf_loop *L)
{
	struct gf_spot *S = L->spot;
	size_t words = (L->nnodes + 63) / 64;

	if (!S->dirty && S->mask_nodes == L->nnodes)
		return S->od_mask != NULL;
	if (words > S->mask_words) {
		uint64_t *a = realloc(S->od_mask, words * sizeof(*a));

		if (a)
			S->od_mask = a;
		uint64_t *b = realloc(S->spot_mask, words * sizeof(*b));

		if (b)
			S->spot_mask = b;
		uint64_t *c = realloc(S->buf, words * sizeof(*c));

		if (c)
			S->buf = c;
		if (!a || !b || !c)
			return false;
		S->mask_words = words;
	}
	memset(S->od_mask, 0, words * sizeof(uint64_t));
	memset(S->spot_mask, 0, words * sizeof(uint64_t));
	S->nspot = 0;
	for (uint32_t n = 0; n < L->nnodes; n++) {
		bool sp = is_spot(S, n);

		if (sp)
			S->spot_mask[n / 64] |= 1ull << (n % 64);
		else
			S->od_mask[n / 64] |= 1ull << (n % 64);
		S->nspot += sp && !(gf_cluster_node(L->real, n)->flags & GF_NODE_GONE);
	}
	S->mask_nodes = L->nnodes;
	S->dirty = false;
	return true;
}

static const struct sjob *sjob_of(const struct gf_spot *S, uint32_t id)
{
	static const struct sjob none = { .total = -1, .first_start = -1 };

	return id < S->njobs ? &S->jobs[id] : &none;
}

/* The pool a job is placed and planned in outside a pool try. */
static uint8_t default_pool(const gf_loop *L, uint32_t id)
{
	const struct gf_spot *S = L->spot;
	const struct sjob *sj = sjob_of(S, id);

	if (sj->tol == GF_SPOT_NEVER)
		return POOL_OD;
	if (S->cfg.pools && L->jobs[id].npods > 1)
		return POOL_OD;
	return POOL_ANY;
}

const uint64_t *gf_loop_spot_admission(gf_loop *L, uint32_t id, const uint64_t *a)
{
	struct gf_spot *S = L->spot;
	const uint64_t *m;
	uint8_t pool;

	if (!rebuild_masks(L))
		return a;
	pool = S->in_try && S->cur_job == id ? S->cur_pool : default_pool(L, id);
	if (pool == POOL_ANY || (pool == POOL_OD && S->nspot == 0))
		return a;
	m = pool == POOL_OD ? S->od_mask : S->spot_mask;
	if (!a)
		return m;
	for (size_t w = 0; w < (L->nnodes + 63) / 64; w++)
		S->buf[w] = a[w] & m[w];
	return S->buf;
}

int gf_loop_spot_pool_key(gf_loop *L, uint32_t id)
{
	struct gf_spot *S = L->spot;
	uint8_t pool;

	if (L->cfg.admit)
		return -1;	/* the caller's masks: not a pool's */
	if (!S || !rebuild_masks(L))
		return 0;
	pool = S->in_try && S->cur_job == id ? S->cur_pool : default_pool(L, id);
	if (pool == POOL_ANY || (pool == POOL_OD && S->nspot == 0))
		return 0;
	return pool;
}

bool gf_loop_spot_try(gf_loop *L, uint32_t id, const uint64_t *allowed, bool *ok)
{
	struct gf_spot *S = L->spot;
	struct job *j = &L->jobs[id];
	uint8_t order[2];
	int n = 0;

	if (S->in_try || !S->cfg.pools || id >= S->njobs || !rebuild_masks(L) || S->nspot == 0)
		return false;
	struct sjob *sj = &S->jobs[id];

	if (sj->tol == GF_SPOT_PREFERRED) {
		order[n++] = POOL_SPOT;
		order[n++] = j->npods > 1 ? POOL_OD : POOL_ANY;
	} else if (sj->tol == GF_SPOT_ALLOWED && j->npods > 1) {
		order[n++] = POOL_OD;
		order[n++] = POOL_SPOT;
	} else {
		return false;	/* one pool: the default path */
	}
	S->in_try = true;
	S->cur_job = id;
	*ok = false;
	for (int k = 0; k < n && !*ok; k++) {
		S->cur_pool = order[k];
		j->fail_pos = sj->fail_pos[order[k]];
		*ok = gf_loop_try_job(L, id, allowed);
		sj->fail_pos[order[k]] = j->fail_pos;
	}
	j->fail_pos = NO_FAIL;
	S->in_try = false;
	S->cur_job = NONE;
	return true;
}

/* ---- accounting ---- */

static double job_gpus(const struct job *j)
{
	return (double)j->npods * j->gpu_count * j->gpu_milli / GF_MILLI_PER_GPU;
}

gf_err gf_loop_spot_run_ended(gf_loop *L, uint32_t id)
{
	struct gf_spot *S = L->spot;
	const struct job *j = &L->jobs[id];
	gf_err err;

	if (!S)
		return GF_OK;
	if ((err = grow_jobs(S, id + 1)) || (err = grow_nodes(S, L->nnodes)))
		return err;
	struct sjob *sj = &S->jobs[id];
	int64_t from = gf_loop_max64(j->start, 0);
	int64_t to = L->now < S->cfg.account_until ? L->now : S->cfg.account_until;
	double per = (double)j->gpu_count * j->gpu_milli / GF_MILLI_PER_GPU;

	if (sj->total < 0)
		sj->total = j->duration;
	if (sj->first_start < 0 && j->start <= L->now)
		sj->first_start = j->start;
	if (to <= from)
		return GF_OK;
	for (uint32_t k = 0; k < j->npods; k++) {
		uint32_t n = L->members[j->member0 + k].node;
		double gs = per * (double)(to - from);

		if (is_spot(S, n))
			sj->gpu_s_spot += gs;
		else
			sj->gpu_s_od += gs;
		sj->cost += gs / 3600.0 * S->price[n];
	}
	return GF_OK;
}

void gf_loop_spot_job(const gf_loop *L, uint32_t id, struct gf_spot_job_info *out)
{
	memset(out, 0, sizeof(*out));
	out->first_start = -1;
	if (id >= L->njobs)
		return;
	out->run_time = L->jobs[id].duration;
	if (L->jobs[id].state == GF_JOB_RUNNING || L->jobs[id].state == GF_JOB_DONE)
		out->first_start = L->jobs[id].start;
	if (!L->spot || id >= L->spot->njobs)
		return;
	const struct sjob *sj = &L->spot->jobs[id];

	out->gpu_s_spot = sj->gpu_s_spot;
	out->gpu_s_on_demand = sj->gpu_s_od;
	out->cost = sj->cost;
	out->lost_gpu_s = sj->lost;
	out->stops = sj->stops;
	out->lost_stops = sj->lost_stops;
	if (sj->first_start >= 0)
		out->first_start = sj->first_start;
	if (sj->total >= 0)
		out->run_time = sj->total;
}

/* ---- stops ---- */

/* Progress of running job id now (saved before this run + this run so far). */
static int64_t progress(const gf_loop *L, const struct sjob *sj, const struct job *j)
{
	return sj->total - j->duration + gf_loop_max64(L->now - j->start, 0);
}

/* What a kill keeps: the last periodic checkpoint, or what it saved before this run. */
static int64_t kill_saved(const gf_loop *L, const struct sjob *sj, const struct job *j)
{
	int64_t p0 = sj->total - j->duration, p = progress(L, sj, j);

	if (sj->ckpt == GF_CKPT_NONE || L->spot->cfg.kill_from_zero)
		return 0;
	if (sj->ckpt == GF_CKPT_PERIODIC)
		return gf_loop_max64(p0, p / sj->ckpt_s * sj->ckpt_s);
	return p0;
}

/*
 * Stop running job id now keeping progress saved; back to the queue (its
 * tail, or its place).  idle: the last seconds of the run were spent saving
 * (a signal checkpoint), not progressing.
 */
static gf_err stop(gf_loop *L, uint32_t id, int64_t saved, int64_t idle, bool tail)
{
	struct gf_spot *S = L->spot;
	struct job *j = &L->jobs[id];
	struct sjob *sj = &S->jobs[id];
	int64_t p = progress(L, sj, j) - idle;
	uint32_t n = L->cfg.policy == GF_QP_KUBE ? j->npods : 1;
	gf_err err;

	if (saved > p)
		saved = p;
	if (saved < 0)
		saved = 0;
	sj->lost += (double)(p - saved) * job_gpus(j);
	sj->stops++;
	sj->lost_stops += p > saved;
	sj->stopping = false;
	if ((err = gf_loop_unbind_job(L, id)))
		return err;
	j->state = GF_JOB_PENDING;
	j->start = -1;
	j->duration = gf_loop_max64(sj->total - saved, 1);
	j->estimate = j->duration;
	gf_loop_history_estimate(L, j);
	j->fail_pos = NO_FAIL;
	for (int k = 0; k < NPOOLS; k++)
		sj->fail_pos[k] = NO_FAIL;
	if (tail)
		j->qseq = L->next_qseq++;
	L->plan_dirty = true;
	if (gf_grow(&L->incoming, &L->incoming_cap, L->nincoming + n, sizeof(*L->incoming), 64))
		return GF_NOMEM;
	for (uint32_t k = 0; k < n; k++)
		L->incoming[L->nincoming++] = (struct entry){ id, L->cfg.policy == GF_QP_KUBE ? k : WHOLE };
	return GF_OK;
}

static gf_err push_action(struct gf_spot *S, const struct action *a)
{
	if (gf_grow(&S->acts, &S->acts_cap, S->nacts + 1, sizeof(*S->acts), 16))
		return GF_NOMEM;
	S->acts[S->nacts] = *a;
	S->acts[S->nacts++].seq = S->seq++;
	return GF_OK;
}

/* Running jobs with a member on node i into S->tmp; their count. */
static gf_err jobs_on(gf_loop *L, uint32_t i, size_t *n)
{
	struct gf_spot *S = L->spot;

	*n = 0;
	for (size_t r = 0; r < L->nrunning; r++) {
		uint32_t id = L->running[r];
		const struct job *j = &L->jobs[id];

		for (uint32_t k = 0; k < j->npods; k++)
			if (L->members[j->member0 + k].node == i) {
				if (gf_grow(&S->tmp, &S->tmp_cap, *n + 1, sizeof(*S->tmp), 16))
					return GF_NOMEM;
				S->tmp[(*n)++] = id;
				break;
			}
	}
	return grow_jobs(S, L->njobs);
}

/* A stop of job id at time at (now: at once) keeping saved; idle: at - now is spent saving. */
static gf_err stop_at(gf_loop *L, uint32_t id, int64_t at, int64_t saved, bool idle, bool tail)
{
	struct gf_spot *S = L->spot;
	struct sjob *sj = &S->jobs[id];

	if (at <= L->now)
		return stop(L, id, saved, 0, tail);
	sj->stopping = true;
	return push_action(S, &(struct action){ .time = at, .what = id, .kind = ACT_STOP, .tail = tail,
						.run_start = L->jobs[id].start, .saved = saved,
						.idle = idle ? at - L->now : 0 });
}

/* gpufleet: each job's stop by its checkpoint kind, deadline t. */
static gf_err notice_checkpoint(gf_loop *L, uint32_t id, int64_t t)
{
	struct sjob *sj = &L->spot->jobs[id];
	const struct job *j = &L->jobs[id];
	int64_t now = L->now, p, p0;

	if (sj->total < 0)
		sj->total = j->duration;
	if (sj->stopping || (j->duration != GF_LOOP_OPEN && j->start + j->duration <= t))
		return GF_OK;	/* stopping already, or it ends in time */
	p = progress(L, sj, j);
	p0 = sj->total - j->duration;
	switch (sj->ckpt) {
	case GF_CKPT_SIGNAL:
		if (now + sj->ckpt_s <= t)
			return stop_at(L, id, now + sj->ckpt_s, p, true, false);
		return stop_at(L, id, now, p0, false, false);
	case GF_CKPT_PERIODIC: {
		int64_t next = (p / sj->ckpt_s + 1) * sj->ckpt_s;
		int64_t at = now + (next - p);

		/* the run starts later than now (a preemptor's grace): its first checkpoint moves too */
		if (j->start > now)
			at += j->start - now;
		if (at <= t)
			return stop_at(L, id, at, next, false, false);
		return stop_at(L, id, now, kill_saved(L, sj, j), false, false);
	}
	default:
		return stop_at(L, id, now, 0, false, false);
	}
}

/* drain: every job on the node evicted now; a single-pod signal job saves if S fits the grace. */
static gf_err notice_drain(gf_loop *L, uint32_t id, int64_t t)
{
	struct gf_spot *S = L->spot;
	struct sjob *sj = &S->jobs[id];
	const struct job *j = &L->jobs[id];
	int64_t grace = S->cfg.drain_grace < t - L->now ? S->cfg.drain_grace : t - L->now;

	if (sj->total < 0)
		sj->total = j->duration;
	if (sj->stopping)
		return GF_OK;
	if (sj->ckpt == GF_CKPT_SIGNAL && j->npods == 1 && sj->ckpt_s <= grace)
		return stop_at(L, id, L->now + sj->ckpt_s, progress(L, sj, j), true, true);
	return stop_at(L, id, L->now, kill_saved(L, sj, j), false, true);
}

gf_err gf_loop_spot_notice(gf_loop *L, uint32_t i, int64_t t)
{
	struct gf_spot *S = L->spot;
	size_t n;
	gf_err err;

	if (!S)
		return GF_STATE;
	if (i >= L->nnodes || (gf_cluster_node(L->real, i)->flags & GF_NODE_GONE))
		return GF_RANGE;
	if (t < L->now)
		return GF_INVAL;
	for (size_t a = 0; a < S->nacts; a++)
		if (S->acts[a].kind == ACT_RECLAIM && S->acts[a].what == i)
			return GF_OK;	/* the first notice stands */
	if ((err = push_action(S, &(struct action){ .time = t, .what = i, .kind = ACT_RECLAIM })))
		return err;
	if (S->cfg.mode == GF_NOTICE_IGNORE)
		return GF_OK;
	if ((err = gf_loop_node_notice(L, i, t)) || (err = jobs_on(L, i, &n)))
		return err;
	/* S->tmp is reused by nothing below: stops do not look for jobs */
	for (size_t k = 0; k < n; k++) {
		uint32_t id = S->tmp[k];

		if (L->jobs[id].state != GF_JOB_RUNNING)
			continue;
		err = S->cfg.mode == GF_NOTICE_CHECKPOINT ? notice_checkpoint(L, id, t) : notice_drain(L, id, t);
		if (err)
			return err;
	}
	return GF_OK;
}

bool gf_loop_spot_next(const gf_loop *L, int64_t *t)
{
	const struct gf_spot *S = L->spot;
	bool any = false;

	for (size_t a = 0; S && a < S->nacts; a++)
		if (!any || S->acts[a].time < *t) {
			*t = S->acts[a].time;
			any = true;
		}
	return any;
}

/* At t: kill what still runs on node i, remove it. */
static gf_err reclaim(gf_loop *L, uint32_t i)
{
	struct gf_spot *S = L->spot;
	bool tail = S->cfg.mode != GF_NOTICE_CHECKPOINT;
	char why[128];
	size_t n;
	gf_err err;

	if ((err = jobs_on(L, i, &n)))
		return err;
	for (size_t k = 0; k < n; k++) {
		uint32_t id = S->tmp[k];
		struct sjob *sj = &S->jobs[id];
		const struct job *j = &L->jobs[id];

		if (j->state != GF_JOB_RUNNING)
			continue;
		if (sj->total < 0)
			sj->total = j->duration;
		if ((err = stop(L, id, kill_saved(L, sj, j), 0, tail)))
			return err;
	}
	/* kube policy: gangs partly bound there let go of what they hold (their place kept) */
	for (size_t k = 0; k < L->npartials; k++) {
		struct job *j = &L->jobs[L->partials[k]];

		if (j->state != GF_JOB_PENDING)
			continue;
		for (uint32_t m = 0; m < j->nbound; m++)
			if (L->members[j->member0 + m].node == i) {
				if ((err = gf_loop_unbind(L, L->partials[k])))
					return err;
				break;
			}
	}
	if ((err = gf_loop_node_remove(L, i, why, sizeof(why))))
		return err;
	S->dirty = true;
	return GF_OK;
}

gf_err gf_loop_spot_due(gf_loop *L)
{
	struct gf_spot *S = L->spot;
	gf_err err;

	while (S) {
		size_t best = SIZE_MAX;

		for (size_t a = 0; a < S->nacts; a++) {
			const struct action *x = &S->acts[a];

			if (x->time > L->now)
				continue;
			if (best == SIZE_MAX)
				best = a;
			else {
				const struct action *b = &S->acts[best];

				if (x->time < b->time || (x->time == b->time && x->kind < b->kind) ||
				    (x->time == b->time && x->kind == b->kind && x->seq < b->seq))
					best = a;
			}
		}
		if (best == SIZE_MAX)
			return GF_OK;
		struct action act = S->acts[best];

		S->acts[best] = S->acts[--S->nacts];
		if (act.kind == ACT_RECLAIM) {
			if ((err = reclaim(L, act.what)))
				return err;
			continue;
		}
		struct job *j = &L->jobs[act.what];

		S->jobs[act.what].stopping = false;
		if (j->state != GF_JOB_RUNNING || j->start != act.run_start)
			continue;	/* it ended or was evicted since */
		if ((err = stop(L, act.what, act.saved, act.idle, act.tail)))
			return err;
	}
	return GF_OK;
}
