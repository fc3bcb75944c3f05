/*
 * sim/spot.c - the spot replay (sim/spot.h): the openb scenario, a training
 * stream, spot pools driven by availability traces, one run per mode.
 *
 * Event order.  Three sources of events: the loop's (arrivals, ends), the
 * spot module's (stops, reclaims: queue/spot.h) and the traces' (notices
 * at T - notice, additions at T), all in virtual seconds.  At each time t,
 * the earliest of the three: the loop's cycle at t (its events applied
 * first), then the spot actions due, then the trace events of time t (pool
 * by pool, in trace order), then one more cycle at t when anything of the
 * two last happened, so requeued jobs and added nodes are used at once.
 * A drop picks the nodes to notice uniformly among the pool's present
 * nodes not under notice, from a generator seeded by the run's seed and
 * the pool's index: the same seed gives the same nodes in every mode.
 *
 * Statistics are over the jobs that arrived (warm-start jobs excluded):
 * wait = first start - arrival, nearest-rank p95; JCT = end of the last run
 * - arrival over finished jobs; GPU-hours and cost from queue/spot.h's
 * accounting, clipped to [0, spot_until).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "core/sort.h"
#include "queue/spot.h"
#include "sim/spot.h"

#define CLS_TRAINING 3	/* the loop's class index of training jobs (replay.c uses 0, 1, 2, 7) */
#define TRAIN_POD_GPUS 8

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

static const char *const mode_names[GF_SPOT_MODE_COUNT] = { "on-demand", "kube", "drain", "gpufleet" };
static const char *const class_names[GF_SC_COUNT] = { "training", "burst", "LS", "BE", "all" };

const char *gf_spot_mode_name(enum gf_spot_mode m)
{
	return (unsigned)m < GF_SPOT_MODE_COUNT ? mode_names[m] : "?";
}

const char *gf_spot_class_name(enum gf_spot_class c)
{
	return (unsigned)c < GF_SC_COUNT ? class_names[c] : "?";
}

struct gf_spot_replay_config gf_spot_replay_config_default(void)
{
	struct gf_spot_replay_config c = {
		.base = gf_replay_config_default(), .mode = GF_SPOT_MODE_GPUFLEET, .notice = 120,
		.drain_grace = 30, .price_on_demand = 2.50, .price_spot = 1.00, .training_load = 0.08,
		.deadline_factor = 3.0, .spot_until = 36 * 3600, .sample_every = 600,
	};

	c.base.load = 0.8;
	c.base.sample_every = 0;
	return c;
}

void gf_spot_result_release(struct gf_spot_result *r)
{
	free(r->timeline);
	memset(r, 0, sizeof(*r));
}

/* ---- pools ---- */

struct pnode {
	uint32_t node;
	bool noticed;
};

struct pool {
	const struct gf_spot_pool *t;
	struct gf_node_spec shape;
	struct pnode *nodes;	/* present (noticed ones too, until reclaimed) */
	size_t n, cap;
	size_t tick;		/* next tick whose change is not applied yet (>= 1) */
	bool notice_done;	/* the drop of tick `tick` has had its notices */
	struct gf_rng rng;
};

struct run {
	const struct gf_spot_replay_config *cfg;
	gf_loop *L;
	struct pool *pools;
	size_t npools;
	double *price;		/* per node */
	size_t nprice;
	uint32_t added_names;
	struct gf_spot_result *out;
};

static gf_err pool_push(struct pool *p, uint32_t node)
{
	if (gf_grow(&p->nodes, &p->cap, p->n + 1, sizeof(*p->nodes), 16))
		return GF_NOMEM;
	p->nodes[p->n++] = (struct pnode){ node, false };
	return GF_OK;
}

static gf_err set_price(struct run *r, uint32_t node, enum gf_capacity_type t)
{
	double pr = t == GF_CAPACITY_SPOT ? r->cfg->price_spot : r->cfg->price_on_demand;

	if (node >= r->nprice) {
		size_t n = (size_t)node + 64;
		double *v = realloc(r->price, n * sizeof(*v));

		if (!v)
			return GF_NOMEM;
		for (size_t i = r->nprice; i < n; i++)
			v[i] = 0;
		r->price = v;
		r->nprice = n;
	}
	r->price[node] = pr;
	return gf_loop_node_capacity(r->L, node, t, pr);
}

/* The time of pool p's next trace event (a notice or a rise), INT64_MAX if none before spot_until. */
static int64_t pool_next(const struct run *r, const struct pool *p)
{
	/* ticks in order: the first that changes anything (a notice never comes before the previous
	 * tick's change: with notices longer than a tick it comes at that tick) */
	for (size_t k = p->tick; k < p->t->n; k++) {
		int64_t T = (int64_t)k * p->t->gap;
		int32_t d = p->t->avail[k] - p->t->avail[k - 1];

		if (T >= r->cfg->spot_until)
			return INT64_MAX;
		if (d < 0 && !p->notice_done)
			return max64(T - r->cfg->notice, 0);
		if (d != 0)
			return T;
	}
	return INT64_MAX;
}

/* Apply pool p's trace events of time <= now. */
static gf_err pool_apply(struct run *r, struct pool *p, int64_t now)
{
	gf_err err;

	while (p->tick < p->t->n) {
		size_t k = p->tick;
		int64_t T = (int64_t)k * p->t->gap;
		int32_t d = p->t->avail[k] - p->t->avail[k - 1];

		if (T >= r->cfg->spot_until)
			return GF_OK;
		if (d == 0) {
			p->tick++;	/* nothing changes at this tick */
			continue;
		}
		if (d < 0 && !p->notice_done) {
			if (max64(T - r->cfg->notice, 0) > now)
				return GF_OK;
			for (int32_t c = 0; c < -d; c++) {
				size_t free_n = 0, pick;

				for (size_t i = 0; i < p->n; i++)
					free_n += !p->nodes[i].noticed;
				if (!free_n)
					break;
				pick = (size_t)gf_rng_below(&p->rng, free_n);
				for (size_t i = 0; i < p->n; i++) {
					if (p->nodes[i].noticed)
						continue;
					if (pick-- == 0) {
						if ((err = gf_loop_spot_notice(r->L, p->nodes[i].node, max64(T, now))))
							return err;
						p->nodes[i].noticed = true;
						r->out->notices++;
						break;
					}
				}
			}
			p->notice_done = true;
			continue;
		}
		if (T > now)
			return GF_OK;
		for (int32_t c = 0; c < d; c++) {
			struct gf_node_spec s = p->shape;
			uint32_t at;

			snprintf(s.name, sizeof(s.name), "spot-%u", r->added_names++);
			if ((err = gf_loop_node_add(r->L, &s, &at)) || (err = set_price(r, at, GF_CAPACITY_SPOT)) ||
			    (err = pool_push(p, at)))
				return err;
			r->out->added++;
		}
		p->tick++;
		p->notice_done = false;
	}
	return GF_OK;
}

/* Forget the pools' nodes the loop removed (reclaimed). */
static void pools_prune(struct run *r)
{
	const gf_cluster *c = gf_loop_cluster(r->L);

	for (size_t q = 0; q < r->npools; q++) {
		struct pool *p = &r->pools[q];
		size_t w = 0;

		for (size_t i = 0; i < p->n; i++) {
			if (gf_cluster_node(c, p->nodes[i].node)->flags & GF_NODE_GONE)
				r->out->reclaimed++;
			else
				p->nodes[w++] = p->nodes[i];
		}
		p->n = w;
	}
}

/* Split the cluster: each pool takes max(data) of the last 8-GPU nodes; absent ones removed. */
static gf_err make_pools(struct run *r, const struct gf_node_spec *nodes, size_t nnodes)
{
	size_t next = nnodes;
	gf_err err;

	for (uint32_t i = 0; i < nnodes; i++)
		if ((err = set_price(r, i, GF_CAPACITY_ON_DEMAND)))
			return err;
	for (size_t q = 0; q < r->npools; q++) {
		struct pool *p = &r->pools[q];
		int32_t max = 0;

		p->t = &r->cfg->pools[q];
		p->tick = 1;
		gf_rng_init(&p->rng, r->cfg->base.seed * 8 + 7 + (uint64_t)q * 1000003);
		for (size_t k = 0; k < p->t->n; k++)
			max = p->t->avail[k] > max ? p->t->avail[k] : max;
		for (int32_t c = 0; c < max; c++) {
			while (next > 0 && nodes[next - 1].ngpus != TRAIN_POD_GPUS)
				next--;
			if (next == 0)
				return GF_INVAL;	/* more pool nodes than 8-GPU nodes */
			next--;
			p->shape = nodes[next];
			if (r->cfg->mode == GF_SPOT_MODE_ON_DEMAND)
				continue;	/* the pool's nodes bought on-demand, always there */
			if (c < p->t->avail[0]) {
				if ((err = set_price(r, (uint32_t)next, GF_CAPACITY_SPOT)) ||
				    (err = pool_push(p, (uint32_t)next)))
					return err;
			} else {
				char why[128];

				if ((err = set_price(r, (uint32_t)next, GF_CAPACITY_SPOT)) ||
				    (err = gf_loop_node_remove(r->L, (uint32_t)next, why, sizeof(why))))
					return err;
			}
		}
	}
	return GF_OK;
}

/* ---- jobs ---- */

static gf_err add_training(const gf_replay *x, gf_loop *L, const struct gf_spot_replay_config *cfg,
			   struct gf_rng *rng)
{
	size_t nn;
	const struct gf_node_spec *nodes = gf_replay_nodes(x, &nn);
	double cap = 0, mean_gpus = TRAIN_POD_GPUS * (0.60 * 1 + 0.25 * 2 + 0.15 * 4), mean_run = 3.5 * 3600;
	double rate, t = 0;
	struct gf_pod_spec pod;

	if (cfg->training_load <= 0)
		return GF_OK;
	for (size_t i = 0; i < nn; i++)
		cap += nodes[i].ngpus;
	rate = cfg->training_load * cap / (mean_gpus * mean_run);
	memset(&pod, 0, sizeof(pod));
	pod.cpu_milli = 64000;
	pod.mem_mib = 262144;
	pod.gpu_count = TRAIN_POD_GPUS;
	pod.gpu_milli = GF_MILLI_PER_GPU;
	for (;;) {
		double u;
		uint32_t id;
		gf_err err;

		t += -log(1.0 - gf_rng_double(rng)) / rate;
		if (t >= (double)cfg->base.horizon)
			return GF_OK;
		u = gf_rng_double(rng);
		struct gf_job_spec s = {
			.pod = pod, .npods = u < 0.60 ? 1 : u < 0.85 ? 2 : 4, .priority = 1,
			.never_preempt = true, .cls = CLS_TRAINING,
			.arrival = (int64_t)t, .duration = 3600 + (int64_t)gf_rng_below(rng, 5 * 3600 + 1),
		};

		s.estimate = s.duration;
		if ((err = gf_loop_submit(L, &s, &id)))
			return err;
	}
}

/* Every job's spot declaration by class (the scenario's mix, drawn from rng in id order); kind[id] its checkpoint. */
static gf_err declare(gf_loop *L, struct gf_rng *rng, uint8_t *kind)
{
	size_t n = gf_loop_njobs(L);
	gf_err err;

	for (uint32_t id = 0; id < n; id++) {
		struct gf_job_info ji;
		struct gf_job_spot s = { GF_SPOT_NEVER, GF_CKPT_NONE, 0 };
		double u = gf_rng_double(rng), v = gf_rng_double(rng);

		gf_loop_job(L, id, &ji);
		if (ji.cls == CLS_TRAINING) {
			s.tolerance = GF_SPOT_PREFERRED;
			if (u < 0.50) {
				s.checkpoint = GF_CKPT_SIGNAL;
				s.checkpoint_s = 30 + (int64_t)(v * 60);
			} else if (u < 0.85) {
				s.checkpoint = GF_CKPT_PERIODIC;
				s.checkpoint_s = 1800;
			}
		} else if (ji.cls == GF_RC_BURST) {
			s.tolerance = GF_SPOT_ALLOWED;
			s.checkpoint = ji.npods > 1 ? GF_CKPT_PERIODIC : GF_CKPT_SIGNAL;
			s.checkpoint_s = ji.npods > 1 ? 1200 : 60;
		}
		kind[id] = (uint8_t)s.checkpoint;
		if ((err = gf_loop_job_spot(L, id, &s)))
			return err;
	}
	return GF_OK;
}

/* ---- the run ---- */

/* The state at time t: cost rate, lost work so far, spot nodes present. */
static struct gf_spot_sample take_sample(const struct run *r, int64_t t)
{
	const gf_cluster *c = gf_loop_cluster(r->L);
	size_t nn = gf_loop_nnodes(r->L), nj = gf_loop_njobs(r->L);
	struct gf_spot_sample s = { .time = t };

	for (size_t i = 0; i < nn; i++) {
		const struct gf_node *nd = gf_cluster_node(c, i);

		if (nd->flags & GF_NODE_GONE)
			continue;
		s.cost_per_h += ((double)nd->ngpus * GF_MILLI_PER_GPU - nd->gpu_free_total) / GF_MILLI_PER_GPU *
				(i < r->nprice ? r->price[i] : 0);
	}
	for (size_t q = 0; q < r->npools; q++)
		s.spot_nodes += (int32_t)r->pools[q].n;
	for (uint32_t id = 0; id < nj; id++) {
		struct gf_spot_job_info si;

		gf_loop_spot_job(r->L, id, &si);
		s.lost_gpu_h += si.lost_gpu_s / 3600.0;
	}
	return s;
}

static gf_err drive(struct run *r)
{
	const struct gf_spot_replay_config *cfg = r->cfg;
	int64_t next_sample = 0, last = 0;
	size_t tl_cap = 0, tl_n = 0;
	struct gf_spot_sample *tl = NULL;
	gf_err err = GF_OK;

	for (;;) {
		int64_t t = INT64_MAX, x;
		bool more = false;

		if (gf_loop_next_event(r->L, &x) && x < t)
			t = x;
		if (gf_loop_spot_next(r->L, &x) && x < t)
			t = x;
		for (size_t q = 0; q < r->npools; q++)
			if ((x = pool_next(r, &r->pools[q])) < t)
				t = x;
		if (t == INT64_MAX)
			break;
		/* a notice longer than a trace's tick falls before the tick already applied: now */
		t = max64(t, last);
		last = t;
		while (cfg->sample_every > 0 && next_sample <= t && next_sample < cfg->spot_until) {
			if (gf_grow(&tl, &tl_cap, tl_n + 1, sizeof(*tl), 64)) {
				err = GF_NOMEM;
				goto done;
			}
			tl[tl_n++] = take_sample(r, next_sample);
			next_sample += cfg->sample_every;
		}
		if ((err = gf_loop_cycle(r->L, t, NULL)))
			goto done;
		if (gf_loop_spot_next(r->L, &x) && x <= t) {
			if ((err = gf_loop_spot_due(r->L)))
				goto done;
			more = true;
		}
		for (size_t q = 0; q < r->npools; q++) {
			if (pool_next(r, &r->pools[q]) > t)
				continue;
			if ((err = pool_apply(r, &r->pools[q], t)))
				goto done;
			more = true;
		}
		if (more) {
			if ((err = gf_loop_spot_due(r->L)) || (err = gf_loop_cycle(r->L, t, NULL)))
				goto done;
			pools_prune(r);
		}
	}
done:
	r->out->timeline = tl;
	r->out->ntimeline = tl_n;
	return err;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static int class_of(uint8_t cls)
{
	switch (cls) {
	case CLS_TRAINING:
		return GF_SC_TRAINING;
	case GF_RC_BURST:
		return GF_SC_BURST;
	case GF_RC_LS:
		return GF_SC_LS;
	case GF_RC_BE:
		return GF_SC_BE;
	default:
		return -1;	/* warm start */
	}
}

static gf_err collect(struct run *r)
{
	gf_loop *L = r->L;
	size_t n = gf_loop_njobs(L);
	int64_t *waits = malloc((n ? n : 1) * sizeof(*waits));
	struct gf_spot_result *o = r->out;
	struct gf_loop_stats ls;

	if (!waits)
		return GF_NOMEM;
	gf_loop_stats(L, &ls);
	o->stalled = ls.stalled;
	for (int c = 0; c < GF_SC_COUNT; c++) {
		struct gf_spot_class_stats *st = &o->cls[c];
		size_t k = 0;
		double jct = 0;

		for (uint32_t id = 0; id < n; id++) {
			struct gf_job_info ji;
			struct gf_spot_job_info si;
			int jc;

			gf_loop_job(L, id, &ji);
			jc = class_of(ji.cls);
			if (jc < 0 || (c != GF_SC_ALL && jc != c))
				continue;
			gf_loop_spot_job(L, id, &si);
			st->jobs++;
			st->gpu_h_spot += si.gpu_s_spot / 3600.0;
			st->gpu_h_on_demand += si.gpu_s_on_demand / 3600.0;
			st->cost += si.cost;
			st->lost_gpu_h += si.lost_gpu_s / 3600.0;
			st->restarts += si.stops + ji.preemptions;
			if (c == GF_SC_ALL)
				o->preemptions += ji.preemptions;
			if (si.first_start >= 0) {
				st->started++;
				waits[k++] = si.first_start - ji.arrival;
			}
			if (ji.state == GF_JOB_DONE) {
				st->done++;
				jct += (double)(ji.end - ji.arrival);
			}
			if (jc == GF_SC_TRAINING || jc == GF_SC_BURST) {
				double dl = (double)ji.arrival + r->cfg->deadline_factor * (double)si.run_time;

				st->deadline_misses += ji.state != GF_JOB_DONE || (double)ji.end > dl;
			}
		}
		gf_qsort(waits, k, sizeof(*waits), cmp_i64);
		if (k) {
			size_t rk = (size_t)ceil(0.95 * (double)k);

			st->wait_p95_s = (double)waits[rk > 0 ? rk - 1 : 0];
		}
		st->jct_mean_s = st->done ? jct / (double)st->done : 0;
	}
	free(waits);
	return GF_OK;
}

/* Lost work of signal jobs whose S fits in the notice, and by checkpoint kind. */
static void lost_fit(struct run *r, const uint8_t *fit, const uint8_t *kind)
{
	size_t n = gf_loop_njobs(r->L);

	for (uint32_t id = 0; id < n; id++) {
		struct gf_spot_job_info si;

		gf_loop_spot_job(r->L, id, &si);
		r->out->lost_by_kind_gpu_h[kind[id] % 3] += si.lost_gpu_s / 3600.0;
		if (fit[id])
			r->out->lost_fit_gpu_h += si.lost_gpu_s / 3600.0;
	}
}

gf_err gf_spot_replay_run(const gf_replay *x, const struct gf_policy_ops *ops,
			  const struct gf_spot_replay_config *cfg, struct gf_spot_result *out)
{
	const struct gf_replay_config *b = &cfg->base;
	struct gf_loop_config lc = {
		.policy = b->qp, .seed = b->seed ^ 0x5bd1e995ULL, .horizon = b->horizon, .sample_every = 0,
		.preemption = b->preemption && b->qp != GF_QP_KUBE, .preempt_wait = b->preempt_wait,
		.preempt_grace = b->preempt_grace, .queues = b->queues, .nqueues = b->nqueues,
		.estimate_history = b->estimate == GF_EST_HISTORY, .history_prior = b->history_prior,
	};
	struct gf_spot_config sc = {
		.mode = cfg->mode == GF_SPOT_MODE_GPUFLEET ? GF_NOTICE_CHECKPOINT
			: cfg->mode == GF_SPOT_MODE_DRAIN  ? GF_NOTICE_DRAIN
							   : GF_NOTICE_IGNORE,
		.pools = true, .drain_grace = cfg->drain_grace, .account_until = cfg->spot_until,
		.kill_from_zero = cfg->kube_from_zero && cfg->mode == GF_SPOT_MODE_KUBE,
	};
	struct gf_policy_env env = gf_replay_env(x, &b->features);
	struct gf_replay_result base;
	struct run r = { .cfg = cfg, .npools = cfg->npools, .out = out };
	struct gf_rng train, decl;
	size_t nnodes;
	const struct gf_node_spec *nodes = gf_replay_nodes(x, &nnodes);
	uint8_t *fit = NULL, *kind = NULL;
	gf_err err;

	memset(out, 0, sizeof(*out));
	memset(&base, 0, sizeof(base));
	if ((unsigned)cfg->mode >= GF_SPOT_MODE_COUNT || cfg->notice < 0 || cfg->drain_grace < 0 ||
	    !(cfg->price_on_demand >= 0) || !(cfg->price_spot >= 0) || !(cfg->training_load >= 0) ||
	    cfg->training_load > 1 || !(cfg->deadline_factor >= 1) || cfg->spot_until < 0 || cfg->sample_every < 0 ||
	    !(b->load > 0 && b->load <= 2) || b->horizon <= 0)
		return GF_INVAL;
	for (size_t q = 0; q < cfg->npools; q++)
		if (!cfg->pools[q].n || cfg->pools[q].gap <= 0 || !cfg->pools[q].avail)
			return GF_INVAL;
	if (cfg->npools && !(r.pools = calloc(cfg->npools, sizeof(*r.pools))))
		return GF_NOMEM;
	gf_rng_init(&train, b->seed * 8 + 6);
	gf_rng_init(&decl, b->seed * 8 + 7);
	if ((err = gf_loop_create(nodes, nnodes, ops, &env, &lc, &r.L)) || (err = gf_loop_spot_enable(r.L, &sc)) ||
	    (err = make_pools(&r, nodes, nnodes)) || (err = gf_replay_populate(x, r.L, b, &base)) ||
	    (err = add_training(x, r.L, cfg, &train)))
		goto done;
	size_t nj = gf_loop_njobs(r.L);

	if (!(fit = calloc(nj ? nj : 1, 1)) || !(kind = calloc(nj ? nj : 1, 1))) {
		err = GF_NOMEM;
		goto done;
	}
	if ((err = declare(r.L, &decl, kind)))
		goto done;
	/* which jobs are signal jobs whose S fits the notice (drawn again: declare's stream) */
	{
		struct gf_rng d2;

		gf_rng_init(&d2, b->seed * 8 + 7);
		for (uint32_t id = 0; id < nj; id++) {
			struct gf_job_info ji;
			double u = gf_rng_double(&d2), v = gf_rng_double(&d2);

			gf_loop_job(r.L, id, &ji);
			if (ji.cls == CLS_TRAINING && u < 0.50)
				fit[id] = 30 + (int64_t)(v * 60) <= cfg->notice;
			else if (ji.cls == GF_RC_BURST && ji.npods == 1)
				fit[id] = 60 <= cfg->notice;
		}
	}
	if (cfg->mode == GF_SPOT_MODE_ON_DEMAND)
		r.npools = 0;	/* no trace events: the pools' nodes stay, on-demand */
	if ((err = drive(&r)) || (err = collect(&r)))
		goto done;
	lost_fit(&r, fit, kind);
done:
	free(fit);
	free(kind);
	gf_replay_result_release(&base);
	gf_loop_destroy(r.L);
	for (size_t q = 0; q < r.npools; q++)
		free(r.pools[q].nodes);
	free(r.pools);
	free(r.price);
	if (err)
		gf_spot_result_release(out);
	return err;
}
