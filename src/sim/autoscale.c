/*
 * sim/autoscale.c - the replay with capacity bought on request
 * (sim/autoscale.h): the openb scenario, an on-demand pool that joins after
 * a delay, three rules for asking.
 *
 * Event order.  At each time t, the earliest of: the loop's next event, a
 * request's nodes joining, a bought node's idle time running out, the next
 * look at the queue (while anything is pending, held or on its way): the
 * loop's cycle at t, then the joins due (gf_loop_node_add, held for their
 * job in gpufleet mode), the holds that end (their job runs elsewhere or
 * ended, or they waited scale_down since joining), one more cycle at t when
 * nodes joined, so they are used at once, then the look at the queue when
 * due (the requests), and the idle nodes that leave (gf_loop_node_remove).
 *
 * Holds are admission masks (gf_loop_config.admit): while any bought node
 * is present in gpufleet mode, every job gets a mask of the nodes not held
 * (a job's own held nodes added); with none, no mask (the loop's per-shape
 * memos work as usual).  A gpufleet node never widens anyone's admission:
 * once its job no longer needs it, it is closed to all and leaves when idle.
 *
 * Statistics as sim/replay.c's (wait = start - arrival over started jobs,
 * nearest rank); GPU allocation over the cluster's own capacity.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "core/sort.h"
#include "sim/autoscale.h"

#define NO_JOB UINT32_MAX
#define LEAVING (UINT32_MAX - 1)	/* held for no job: closed to all, leaves once idle */

static const char *const mode_names[GF_AS_MODE_COUNT] = { "never", "gpufleet", "every-pod" };

const char *gf_as_mode_name(enum gf_as_mode m)
{
	return (unsigned)m < GF_AS_MODE_COUNT ? mode_names[m] : "?";
}

struct gf_as_config gf_as_config_default(void)
{
	struct gf_as_config c = {
		.base = gf_replay_config_default(), .mode = GF_AS_GPUFLEET, .delay = 600, .threshold = 1800,
		.scale_down = 600, .check_every = 30, .price = 2.00,
	};

	c.base.sample_every = 0;
	return c;
}

uint32_t gf_as_nodes_for(uint32_t npods, int64_t gpu_milli, int gpus)
{
	int64_t per, ppn;

	if (npods == 0 || gpu_milli <= 0 || gpus <= 0)
		return 0;
	per = gpu_milli / npods;	/* one pod's: gpu_count x gpu_milli */
	if (per >= GF_MILLI_PER_GPU)
		ppn = gpus / ((per + GF_MILLI_PER_GPU - 1) / GF_MILLI_PER_GPU);
	else
		ppn = (int64_t)gpus * (GF_MILLI_PER_GPU / per);
	if (ppn < 1)
		ppn = 1;	/* more GPUs than a node has: one node a pod, it will not fit anyway */
	return (uint32_t)((npods + ppn - 1) / ppn);
}

/* ---- state ---- */

struct bnode {			/* a bought node */
	uint32_t node;
	uint32_t held_for;	/* gpufleet: the job it is held for, NO_JOB when none */
	uint32_t asked_by;	/* the job whose request bought it */
	int64_t join;
	int64_t idle_since;	/* -1: busy or held */
};

struct request {
	uint32_t job, nnodes;
	int64_t at;		/* when its nodes join */
};

enum { ASK_NONE, ASK_ON_WAY, ASK_JOINED, ASK_GAVE_UP };

struct run {
	const struct gf_as_config *cfg;
	gf_loop *L;
	struct gf_node_spec shape;
	struct bnode *nodes;	/* present bought nodes */
	size_t n, cap;
	struct request *reqs;	/* on their way */
	size_t nreq, reqcap;
	uint8_t *ask;		/* per job */
	size_t nask;
	int64_t *start;		/* forecast scratch */
	size_t nheld;
	uint64_t *base, *mask;	/* admission: nodes not held; base + one job's own */
	size_t words;
	bool base_stale;
	uint32_t names;
	bool asked_last;	/* the last look made a request */
	struct gf_as_result *out;
};

static gf_err grow_jobs(struct run *r)
{
	size_t nj = gf_loop_njobs(r->L);

	if (nj <= r->nask)
		return GF_OK;
	uint8_t *a = realloc(r->ask, nj);
	int64_t *s = realloc(r->start, nj * sizeof(*s));

	if (a)
		r->ask = a;
	if (s)
		r->start = s;
	if (!a || !s)
		return GF_NOMEM;
	memset(r->ask + r->nask, ASK_NONE, nj - r->nask);
	r->nask = nj;
	return GF_OK;
}

static gf_err remake_base(struct run *r)
{
	size_t nn = gf_loop_nnodes(r->L), w = (nn + 64 + 63) / 64;	/* a word to spare: a node being added */

	if (w > r->words) {
		uint64_t *b = realloc(r->base, w * sizeof(*b)), *m;

		if (!b)
			return GF_NOMEM;
		r->base = b;
		if (!(m = realloc(r->mask, w * sizeof(*m))))
			return GF_NOMEM;
		r->mask = m;
		r->words = w;
	}
	for (size_t i = 0; i < w; i++)
		r->base[i] = ~(uint64_t)0;
	for (size_t i = 0; i < r->n; i++)
		if (r->nodes[i].held_for != NO_JOB)
			r->base[r->nodes[i].node / 64] &= ~((uint64_t)1 << (r->nodes[i].node % 64));
	r->base_stale = false;
	return GF_OK;
}

static const uint64_t *admit(void *ud, uint32_t job)
{
	struct run *r = ud;
	size_t w = (gf_loop_nnodes(r->L) + 63) / 64;
	bool own = false;

	if (!r->nheld)
		return NULL;
	if ((r->base_stale || w > r->words) && remake_base(r))
		return NULL;	/* out of memory: no admission rather than a wrong one */
	for (size_t i = 0; i < r->n; i++)
		if (r->nodes[i].held_for == job) {
			if (!own)
				memcpy(r->mask, r->base, r->words * sizeof(*r->mask));
			own = true;
			r->mask[r->nodes[i].node / 64] |= (uint64_t)1 << (r->nodes[i].node % 64);
		}
	return own ? r->mask : r->base;
}

static int32_t present(const struct run *r)
{
	return (int32_t)r->n;
}

/* Bill node i of the bought list up to t and forget it (it left or the run ended). */
static void bill(struct run *r, size_t i, int64_t t)
{
	r->out->autoscaled_gpu_h += (double)r->shape.ngpus * (double)(t - r->nodes[i].join) / 3600.0;
}

/* Node i's job no longer needs it: it stays closed to every other job, and leaves once idle. */
static void release_hold(struct run *r, size_t i)
{
	r->nodes[i].held_for = LEAVING;
}

/* ---- the steps ---- */

static gf_err joins(struct run *r, int64_t t, bool *changed)
{
	size_t w = 0;
	gf_err err;

	for (size_t q = 0; q < r->nreq; q++) {
		struct request *rq = &r->reqs[q];

		if (rq->at > t) {
			r->reqs[w++] = *rq;
			continue;
		}
		for (uint32_t k = 0; k < rq->nnodes; k++) {
			struct gf_node_spec s = r->shape;
			uint32_t at;
			bool hold = r->cfg->mode == GF_AS_GPUFLEET;

			snprintf(s.name, sizeof(s.name), "bought-%u", r->names++);
			if (gf_grow(&r->nodes, &r->cap, r->n + 1, sizeof(*r->nodes), 16))
				return GF_NOMEM;
			/* the mask must cover the new node before the loop plans with it */
			r->nodes[r->n] = (struct bnode){ gf_loop_nnodes(r->L), hold ? rq->job : NO_JOB, rq->job, t, -1 };
			r->n++;
			r->nheld += hold;
			r->base_stale = true;
			if ((err = gf_loop_node_add(r->L, &s, &at)))
				return err;
			if (at != r->nodes[r->n - 1].node)
				return GF_STATE;
			r->out->nodes_bought++;
		}
		if (rq->job < r->nask)
			r->ask[rq->job] = ASK_JOINED;
		*changed = true;
		if (present(r) > r->out->nodes_max)
			r->out->nodes_max = present(r);
	}
	r->nreq = w;
	return GF_OK;
}

/* Holds whose job ended, runs elsewhere, or waited scale_down since they joined. */
static void holds(struct run *r, int64_t t)
{
	for (size_t i = 0; i < r->n; i++) {
		struct gf_job_info ji;
		uint32_t j = r->nodes[i].held_for;

		if (j == NO_JOB || j == LEAVING)
			continue;
		gf_loop_job(r->L, j, &ji);
		if (ji.state == GF_JOB_RUNNING) {
			if (!gf_cluster_node(gf_loop_cluster(r->L), r->nodes[i].node)->npods)
				release_hold(r, i);	/* it started elsewhere, or not on this one */
		} else if (ji.state != GF_JOB_PENDING) {
			release_hold(r, i);
		} else if (t - r->nodes[i].join >= r->cfg->scale_down) {
			if (r->ask[j] != ASK_GAVE_UP)
				r->out->gave_up++;
			r->ask[j] = ASK_GAVE_UP;
			release_hold(r, i);
		}
	}
}

static gf_err ask(struct run *r, uint32_t job, const struct gf_job_info *ji, int64_t t)
{
	uint32_t nn = gf_as_nodes_for(ji->npods, ji->gpu_milli, r->shape.ngpus);

	if (!nn)
		return GF_OK;
	if (gf_grow(&r->reqs, &r->reqcap, r->nreq + 1, sizeof(*r->reqs), 16))
		return GF_NOMEM;
	r->reqs[r->nreq++] = (struct request){ job, nn, t + r->cfg->delay };
	r->ask[job] = ASK_ON_WAY;
	r->out->requests++;
	r->asked_last = true;
	return GF_OK;
}

/* One look at the queue: the mode's requests.  *pending: jobs waiting. */
static gf_err look(struct run *r, int64_t t, size_t *pending)
{
	size_t nj = gf_loop_njobs(r->L);
	gf_err err;

	r->asked_last = false;
	*pending = 0;
	if ((err = grow_jobs(r)))
		return err;
	for (uint32_t id = 0; id < nj; id++) {
		struct gf_job_info ji;

		gf_loop_job(r->L, id, &ji);
		*pending += ji.state == GF_JOB_PENDING;
	}
	if (r->cfg->mode == GF_AS_NEVER || !*pending)
		return GF_OK;
	if (r->cfg->mode == GF_AS_GPUFLEET &&
	    (err = gf_loop_forecast_upto(r->L, r->start, t + r->cfg->threshold, SIZE_MAX)))
		return err;
	for (uint32_t id = 0; id < nj; id++) {
		struct gf_job_info ji;

		gf_loop_job(r->L, id, &ji);
		if (ji.state != GF_JOB_PENDING || ji.why == GF_LOOP_WHY_NONE || ji.cls == GF_RC_WARM)
			continue;
		if (r->cfg->mode == GF_AS_GPUFLEET) {
			if ((ji.cls == GF_RC_BE && !r->cfg->ask_best_effort) || r->ask[id] != ASK_NONE)
				continue;
			/* the forecast ignores admission (held nodes look free): waiting threshold asks too */
			if (r->start[id] >= 0 && r->start[id] <= t + r->cfg->threshold &&
			    t - ji.arrival < r->cfg->threshold)
				continue;
		} else if (r->ask[id] == ASK_ON_WAY || r->ask[id] == ASK_GAVE_UP) {
			continue;
		}
		if ((err = ask(r, id, &ji, t)))
			return err;
	}
	return GF_OK;
}

/* Idle bookkeeping after a cycle, and the idle nodes whose time ran out leave. */
static gf_err idle(struct run *r, int64_t t)
{
	const gf_cluster *c = gf_loop_cluster(r->L);
	size_t w = 0;
	gf_err err = GF_OK;

	for (size_t i = 0; i < r->n; i++) {
		struct bnode *b = &r->nodes[i];
		const struct gf_node *nd = gf_cluster_node(c, b->node);

		if (nd->npods || (b->held_for != NO_JOB && b->held_for != LEAVING)) {
			b->idle_since = -1;
		} else if (b->idle_since < 0) {
			b->idle_since = t;
		} else if (t - b->idle_since >= r->cfg->scale_down) {
			char why[128];

			if ((err = gf_loop_node_remove(r->L, b->node, why, sizeof(why))))
				return err;
			bill(r, i, t);
			r->out->nodes_left++;
			if (b->held_for != NO_JOB) {
				r->nheld--;
				r->base_stale = true;
			}
			if (b->asked_by < r->nask && r->ask[b->asked_by] == ASK_JOINED) {
				struct gf_job_info ji;

				gf_loop_job(r->L, b->asked_by, &ji);
				if (ji.state == GF_JOB_PENDING) {
					r->ask[b->asked_by] = ASK_GAVE_UP;	/* it could not use them */
					r->out->gave_up++;
				}
			}
			continue;
		}
		r->nodes[w++] = *b;
	}
	r->n = w;
	return err;
}

static gf_err drive(struct run *r)
{
	int64_t next_look = 0, last = 0;
	size_t pending = 1;
	gf_err err;

	for (;;) {
		int64_t t = INT64_MAX, x;
		bool changed = false, ev = gf_loop_next_event(r->L, &x);

		if (ev)
			t = x;
		for (size_t q = 0; q < r->nreq; q++)
			if (r->reqs[q].at < t)
				t = r->reqs[q].at;
		for (size_t i = 0; i < r->n; i++)
			if (r->nodes[i].idle_since >= 0 && r->nodes[i].idle_since + r->cfg->scale_down < t)
				t = r->nodes[i].idle_since + r->cfg->scale_down;
		if (r->cfg->mode != GF_AS_NEVER && pending && (ev || r->nreq || r->nheld || r->asked_last) &&
		    next_look < t)
			t = next_look;
		if (t == INT64_MAX)
			break;
		if (t < last)
			t = last;
		last = t;
		if ((err = gf_loop_cycle(r->L, t, NULL)) || (err = joins(r, t, &changed)) ||
		    (err = grow_jobs(r)))
			return err;
		holds(r, t);
		/* joined nodes used at once, before anyone looks at what is still pending */
		if (changed && (err = gf_loop_cycle(r->L, t, NULL)))
			return err;
		if (t >= next_look) {
			if ((err = look(r, t, &pending)))
				return err;
			next_look = t + r->cfg->check_every;
		}
		if ((err = idle(r, t)))
			return err;
	}
	for (size_t i = 0; i < r->n; i++)
		bill(r, i, last);
	return GF_OK;
}

/* ---- statistics ---- */

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static double rank(const int64_t *v, size_t n, double q)
{
	size_t k;

	if (!n)
		return 0;
	k = (size_t)ceil(q * (double)n);
	return (double)v[k > 0 ? k - 1 : 0];
}

static gf_err collect(struct run *r, int64_t capacity)
{
	size_t n = gf_loop_njobs(r->L);
	int64_t *waits = malloc((n ? n : 1) * sizeof(*waits));
	struct gf_loop_stats ls;
	double denom = (double)capacity * (double)r->cfg->base.horizon / 100.0;

	if (!waits)
		return GF_NOMEM;
	gf_loop_stats(r->L, &ls);
	r->out->stalled = ls.stalled;
	for (int c = 0; c < GF_RC_COUNT; c++) {
		struct gf_replay_class_stats *st = &r->out->cls[c];
		size_t k = 0;
		double jct = 0, ms;

		for (uint32_t id = 0; id < n; id++) {
			struct gf_job_info ji;

			gf_loop_job(r->L, id, &ji);
			if (ji.cls == GF_RC_WARM || (c == GF_RC_NONBURST && ji.cls == GF_RC_BURST) ||
			    (c != GF_RC_ALL && c != GF_RC_NONBURST && ji.cls != c))
				continue;
			st->jobs++;
			st->partial_gangs += ji.partial;
			st->preemptions += ji.preemptions;
			st->preempted_gpu_h += ji.preempted_gpu_s / 3600.0;
			if (ji.start < 0)
				continue;
			st->started++;
			waits[k++] = ji.start - ji.arrival;
			jct += (double)(ji.end - ji.arrival);
		}
		gf_qsort(waits, k, sizeof(*waits), cmp_i64);
		st->wait_p50 = rank(waits, k, 0.50);
		st->wait_p95 = rank(waits, k, 0.95);
		st->wait_max = k ? (double)waits[k - 1] : 0;
		st->jct_mean = k ? jct / (double)k : 0;
		ms = c == GF_RC_ALL ? ls.gpu_milli_s_all
		   : c == GF_RC_NONBURST ? ls.gpu_milli_s[GF_RC_LS] + ls.gpu_milli_s[GF_RC_BE]
					 : ls.gpu_milli_s[c];
		st->gpu_alloc_avg_pct = ms / denom;
	}
	free(waits);
	return GF_OK;
}

/* The cluster's GPU node type: the most common spec among the nodes with the most GPUs. */
static bool node_type(const struct gf_node_spec *nodes, size_t nn, struct gf_node_spec *out)
{
	int maxg = 0;
	size_t best = 0, bestn = 0;

	for (size_t i = 0; i < nn; i++)
		maxg = nodes[i].ngpus > maxg ? nodes[i].ngpus : maxg;
	if (!maxg)
		return false;
	for (size_t i = 0; i < nn; i++) {
		size_t k = 0;

		if (nodes[i].ngpus != maxg)
			continue;
		for (size_t j = 0; j < nn; j++)
			k += nodes[j].ngpus == maxg && nodes[j].cpu_milli == nodes[i].cpu_milli &&
			     nodes[j].mem_mib == nodes[i].mem_mib && nodes[j].model == nodes[i].model;
		if (k > bestn) {
			bestn = k;
			best = i;
		}
	}
	*out = nodes[best];
	return true;
}

gf_err gf_as_replay_run(const gf_replay *x, const struct gf_policy_ops *ops, const struct gf_as_config *cfg,
			struct gf_as_result *out)
{
	const struct gf_replay_config *b = &cfg->base;
	struct run r = { .cfg = cfg, .out = out };
	struct gf_loop_config lc = {
		.policy = b->qp, .seed = b->seed ^ 0x5bd1e995ULL, .horizon = b->horizon, .sample_every = 0,
		.preemption = b->preemption && b->qp != GF_QP_KUBE, .preempt_wait = b->preempt_wait,
		.preempt_grace = b->preempt_grace, .queues = b->queues, .nqueues = b->nqueues,
		.estimate_history = b->estimate == GF_EST_HISTORY, .history_prior = b->history_prior,
		.admit = admit, .admit_ud = &r,
	};
	struct gf_policy_env env = gf_replay_env(x, &b->features);
	struct gf_replay_result base;
	size_t nnodes;
	const struct gf_node_spec *nodes = gf_replay_nodes(x, &nnodes);
	int64_t capacity = 0;
	gf_err err;

	memset(out, 0, sizeof(*out));
	memset(&base, 0, sizeof(base));
	if ((unsigned)cfg->mode >= GF_AS_MODE_COUNT || cfg->delay < 0 || cfg->threshold < 0 || cfg->scale_down < 0 ||
	    cfg->check_every <= 0 || !(cfg->price >= 0) || !(b->load > 0 && b->load <= 2) || b->horizon <= 0)
		return GF_INVAL;
	if (!node_type(nodes, nnodes, &r.shape))
		return GF_INVAL;
	for (size_t i = 0; i < nnodes; i++)
		capacity += nodes[i].ngpus;
	if ((err = gf_loop_create(nodes, nnodes, ops, &env, &lc, &r.L)) ||
	    (err = gf_replay_populate(x, r.L, b, &base)) || (err = grow_jobs(&r)) || (err = remake_base(&r)) ||
	    (err = drive(&r)) || (err = collect(&r, capacity)))
		goto done;
	out->cost = out->autoscaled_gpu_h * cfg->price;
done:
	gf_replay_result_release(&base);
	gf_loop_destroy(r.L);
	free(r.nodes);
	free(r.reqs);
	free(r.ask);
	free(r.start);
	free(r.base);
	free(r.mask);
	if (err)
		memset(out, 0, sizeof(*out));
	return err;
}
