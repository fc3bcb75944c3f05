/*
 * sim/replay.c - build a replay scenario, run it through the time loop,
 * reduce the jobs to per-class statistics.
 *
 * Offered load.  With pods drawn uniformly from the trace, the mean work per
 * arrival is W = mean over pods of (GPU request x run time), in milli-GPU
 * seconds; a Poisson process of rate lambda offers lambda W / capacity, so
 * lambda = load x capacity / W.  The warm start holds what that process
 * holds in equilibrium: a pod is present with probability proportional to
 * its run time, with a residual uniform over it, and the GPUs present add up
 * to load x capacity on average (Little's law), which is where the warm set
 * stops.
 *
 * Percentiles are nearest-rank over the started jobs of a class: the value
 * at rank ceil(q n).  Waits are start - arrival; completion time is wait +
 * run time (nothing is preempted, so a start fixes the end).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/sort.h"
#include "policy/target.h"
#include "sim/replay.h"

#define BURST_SINGLES 16
#define BURST_GANGS 8
#define BURST_GANG_PODS 4
#define BURST_WINDOW 600
#define BURST_RUN_MIN (2 * 3600)
#define BURST_RUN_MAX (6 * 3600)

struct gf_replay {
	struct gf_node_spec *nodes;
	size_t nnodes;
	struct gf_pod_spec *pods;
	uint8_t *cls;		/* GF_RC_LS or GF_RC_BE */
	size_t npods;
	double *cum_run;	/* prefix sums of run times, for length-biased draws */
	uint32_t *by_time;	/* pod indices by (creation_time, index): --order trace */
	const struct gf_catalog *cat;
	struct gf_target target;
	double work;		/* W: mean milli-GPU seconds per pod */
	int64_t capacity;	/* milli-GPU */
};

static const char *const class_names[GF_RC_COUNT] = { "burst", "LS", "BE", "non-burst", "all" };
static const int32_t class_priority[GF_RC_COUNT] = { 1, 2, 0, 0, 0 };

const char *gf_replay_class_name(enum gf_replay_class c)
{
	return (unsigned)c < GF_RC_COUNT ? class_names[c] : "?";
}

struct gf_replay_config gf_replay_config_default(void)
{
	return (struct gf_replay_config){
		.qp = GF_QP_BACKFILL, .seed = 42, .load = 0.9, .horizon = 12 * 3600,
		.burst = true, .burst_at = 4 * 3600, .estimate = GF_EST_EXACT, .over = 1.0,
		.sample_every = 60, .features = gf_features_default(), .preemption = true,
		.preempt_wait = 30, .preempt_grace = 30, .history_prior = 3600, .forecast_at = -1,
		.trace_order = false,
	};
}

/* Stable merge sort of pod indices by arrival (ties keep index order): n log n, no qsort context. */
static void sort_by_arrival(uint32_t *v, size_t n, const struct gf_pod_spec *pods)
{
	uint32_t *tmp;

	if (n < 2 || !(tmp = malloc(n * sizeof(*tmp))))
		return;	/* out of memory: trace order stays index order (documented) */
	for (size_t w = 1; w < n; w *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * w) {
			size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
			size_t a = lo, b = mid, k = lo;

			while (a < mid || b < hi)
				tmp[k++] = b >= hi || (a < mid && pods[v[a]].arrival <= pods[v[b]].arrival) ? v[a++]
													   : v[b++];
		}
		memcpy(v, tmp, n * sizeof(*v));
	}
	free(tmp);
}

gf_err gf_replay_create(const struct gf_node_spec *nodes, size_t nnodes,
			const struct gf_pod_spec *pods, const struct gf_pod_times *times, size_t npods,
			const struct gf_catalog *cat, gf_replay **out)
{
	gf_replay *x;
	gf_err err = GF_NOMEM;
	double work = 0, run = 0;

	if (!nnodes || !npods)
		return GF_INVAL;
	x = calloc(1, sizeof(*x));
	if (!x)
		return GF_NOMEM;
	x->cat = cat;
	x->nnodes = nnodes;
	x->npods = npods;
	x->nodes = malloc(nnodes * sizeof(*nodes));
	x->pods = malloc(npods * sizeof(*pods));
	x->cls = malloc(npods);
	x->cum_run = malloc(npods * sizeof(*x->cum_run));
	x->by_time = malloc(npods * sizeof(*x->by_time));
	if (!x->nodes || !x->pods || !x->cls || !x->cum_run || !x->by_time)
		goto fail;
	memcpy(x->nodes, nodes, nnodes * sizeof(*nodes));
	memcpy(x->pods, pods, npods * sizeof(*pods));
	for (size_t i = 0; i < nnodes; i++)
		x->capacity += (int64_t)nodes[i].ngpus * GF_MILLI_PER_GPU;
	for (size_t i = 0; i < npods; i++) {
		enum gf_qos q = times[i].qos;

		x->cls[i] = q == GF_QOS_LS || q == GF_QOS_GUARANTEED ? GF_RC_LS : GF_RC_BE;
		work += (double)gf_pod_gpu_request(&pods[i]) * (double)pods[i].duration;
		run += (double)pods[i].duration;
		x->cum_run[i] = run;
	}
	x->work = work / (double)npods;
	for (size_t i = 0; i < npods; i++)
		x->by_time[i] = (uint32_t)i;
	sort_by_arrival(x->by_time, npods, pods);
	if (!(x->work > 0) || x->capacity == 0) {
		err = GF_INVAL;
		goto fail;
	}
	if ((err = gf_target_from_pods(x->pods, npods, cat, GF_TARGET_PCT, &x->target, NULL)))
		goto fail;
	*out = x;
	return GF_OK;
fail:
	gf_replay_destroy(x);
	return err;
}

void gf_replay_destroy(gf_replay *x)
{
	if (!x)
		return;
	gf_target_release(&x->target);
	free(x->nodes);
	free(x->pods);
	free(x->cls);
	free(x->cum_run);
	free(x->by_time);
	free(x);
}

void gf_replay_result_release(struct gf_replay_result *r)
{
	free(r->timeline);
	free(r->burst_arrival);
	free(r->burst_start);
	free(r->burst_npods);
	memset(r, 0, sizeof(*r));
}

/* A pod index drawn with probability proportional to its run time. */
static size_t draw_by_run(const gf_replay *x, struct gf_rng *rng)
{
	double u = gf_rng_double(rng) * x->cum_run[x->npods - 1];
	size_t lo = 0, hi = x->npods - 1;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (x->cum_run[mid] <= u)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int64_t estimate_of(const struct gf_replay_config *cfg, int64_t run, struct gf_rng *rng)
{
	double u = gf_rng_double(rng);	/* drawn in every mode: same stream */

	if (cfg->estimate == GF_EST_EXACT)
		return run;
	return (int64_t)ceil((double)run * (1.0 + (cfg->over - 1.0) * u));
}

static struct gf_job_spec job_from_pod(const gf_replay *x, const struct gf_replay_config *cfg, size_t i,
				       int64_t arrival, int64_t run)
{
	struct gf_job_spec s = {
		.pod = x->pods[i], .npods = 1, .priority = class_priority[x->cls[i]],
		.cls = x->cls[i], .arrival = arrival, .duration = run, .queue = cfg->class_queue[x->cls[i]],
	};
	return s;
}

/* Random tie-break order of the nodes, as the openb experiment draws it. */
static gf_err set_node_order(const gf_replay *x, gf_loop *L, struct gf_rng *rng)
{
	uint32_t *prio = malloc(x->nnodes * sizeof(*prio));

	if (!prio)
		return GF_NOMEM;
	for (size_t i = 0; i < x->nnodes; i++) {
		size_t j = (size_t)gf_rng_below(rng, i + 1);

		prio[i] = prio[j];
		prio[j] = (uint32_t)i;
	}
	gf_loop_set_node_priorities(L, prio);
	free(prio);
	return GF_OK;
}

static gf_err add_warm(const gf_replay *x, gf_loop *L, const struct gf_replay_config *cfg,
		       struct gf_rng *rng, struct gf_rng *erng, struct gf_replay_result *out)
{
	double target = cfg->load * (double)x->capacity, requested = 0;

	while (requested < target) {
		size_t i = draw_by_run(x, rng);
		int64_t run = (int64_t)ceil((double)x->pods[i].duration * gf_rng_double(rng));
		struct gf_job_spec s = job_from_pod(x, cfg, i, 0, run > 0 ? run : 1);
		uint32_t id;
		bool placed;
		gf_err err;

		s.cls = GF_RC_WARM;
		s.estimate = estimate_of(cfg, s.duration, erng);
		if ((err = gf_loop_preplace(L, &s, &id, &placed)))
			return err;
		requested += (double)gf_pod_gpu_request(&s.pod);
		out->warm_jobs++;
		out->warm_dropped += !placed;
	}
	out->warm_gpu_pct = 100.0 * (double)gf_cluster_gpu_used(gf_loop_cluster(L)) / (double)x->capacity;
	return GF_OK;
}

static gf_err add_arrivals(const gf_replay *x, gf_loop *L, const struct gf_replay_config *cfg,
			   struct gf_rng *rng, struct gf_rng *erng, struct gf_replay_result *out)
{
	double rate = cfg->load * (double)x->capacity / x->work, t = 0;
	size_t next = 0;

	out->rate_per_s = rate;
	out->offered_load = rate * x->work / (double)x->capacity;
	for (;;) {
		t += -log(1.0 - gf_rng_double(rng)) / rate;
		if (t >= (double)cfg->horizon)
			return GF_OK;
		size_t i = cfg->trace_order ? x->by_time[next++ % x->npods] : (size_t)gf_rng_below(rng, x->npods);
		struct gf_job_spec s = job_from_pod(x, cfg, i, (int64_t)t, x->pods[i].duration);
		uint32_t id;
		gf_err err;

		s.estimate = estimate_of(cfg, s.duration, erng);
		if ((err = gf_loop_submit(L, &s, &id)))
			return err;
	}
}

static gf_err add_burst(const gf_replay *x, gf_loop *L, const struct gf_replay_config *cfg,
			struct gf_rng *rng, struct gf_rng *erng)
{
	struct gf_pod_spec pod;

	memset(&pod, 0, sizeof(pod));
	pod.cpu_milli = 64000;
	pod.mem_mib = 262144;
	pod.gpu_count = 8;
	pod.gpu_milli = GF_MILLI_PER_GPU;
	for (int k = 0; k < BURST_SINGLES + BURST_GANGS; k++) {
		struct gf_job_spec s = {
			.pod = pod, .npods = k < BURST_SINGLES ? 1 : BURST_GANG_PODS,
			.priority = class_priority[GF_RC_BURST], .cls = GF_RC_BURST,
			.queue = cfg->class_queue[GF_RC_BURST],
			.arrival = cfg->burst_at + (int64_t)gf_rng_below(rng, BURST_WINDOW),
			.duration = BURST_RUN_MIN +
				    (int64_t)gf_rng_below(rng, BURST_RUN_MAX - BURST_RUN_MIN + 1),
		};
		uint32_t id;
		gf_err err;

		(void)x;
		s.estimate = estimate_of(cfg, s.duration, erng);
		if ((err = gf_loop_submit(L, &s, &id)))
			return err;
	}
	return GF_OK;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static double rank(const int64_t *v, size_t n, double q)
{
	size_t r;

	if (n == 0)
		return 0;
	r = (size_t)ceil(q * (double)n);
	return (double)v[r > 0 ? r - 1 : 0];
}

/* Reduce the jobs of class c (GF_RC_ALL: every class but warm) to statistics. */
static gf_err class_stats(const gf_loop *L, enum gf_replay_class c, struct gf_replay_class_stats *st)
{
	size_t n = gf_loop_njobs(L), k = 0;
	int64_t *waits = malloc((n ? n : 1) * sizeof(*waits));
	double jct = 0;

	if (!waits)
		return GF_NOMEM;
	memset(st, 0, sizeof(*st));
	for (uint32_t id = 0; id < n; id++) {
		struct gf_job_info ji;

		gf_loop_job(L, id, &ji);
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
	free(waits);
	return GF_OK;
}

static gf_err collect(const gf_replay *x, const gf_loop *L, const struct gf_replay_config *cfg,
		      struct gf_replay_result *out)
{
	size_t n = gf_loop_njobs(L), nt;
	const struct gf_loop_sample *tl = gf_loop_timeline(L, &nt);
	double denom = (double)x->capacity * (double)cfg->horizon / 100.0;
	gf_err err;

	gf_loop_stats(L, &out->loop);
	for (int c = 0; c < GF_RC_COUNT; c++) {
		if ((err = class_stats(L, (enum gf_replay_class)c, &out->cls[c])))
			return err;
		double ms = c == GF_RC_ALL ? out->loop.gpu_milli_s_all
			  : c == GF_RC_NONBURST ? out->loop.gpu_milli_s[GF_RC_LS] + out->loop.gpu_milli_s[GF_RC_BE]
						: out->loop.gpu_milli_s[c];

		out->cls[c].gpu_alloc_avg_pct = ms / denom;
	}
	out->timeline = malloc((nt ? nt : 1) * sizeof(*tl));
	out->burst_arrival = malloc((BURST_SINGLES + BURST_GANGS) * sizeof(int64_t));
	out->burst_start = malloc((BURST_SINGLES + BURST_GANGS) * sizeof(int64_t));
	out->burst_npods = malloc((BURST_SINGLES + BURST_GANGS) * sizeof(uint32_t));
	if (!out->timeline || !out->burst_arrival || !out->burst_start || !out->burst_npods)
		return GF_NOMEM;
	memcpy(out->timeline, tl, nt * sizeof(*tl));
	out->ntimeline = nt;
	for (uint32_t id = 0; id < n; id++) {
		struct gf_job_info ji;

		gf_loop_job(L, id, &ji);
		out->unresolvable += ji.state == GF_JOB_UNRESOLVABLE;
		if (ji.cls == GF_RC_BURST && out->nburst < BURST_SINGLES + BURST_GANGS) {
			out->burst_arrival[out->nburst] = ji.arrival;
			out->burst_start[out->nburst] = ji.start;
			out->burst_npods[out->nburst++] = ji.npods;
		}
	}
	return GF_OK;
}

/* Run to forecast_at, ask every pending job when it will start, run to the end, compare. */
static gf_err run_with_forecast(gf_loop *L, const struct gf_replay_config *cfg, struct gf_replay_result *out)
{
	size_t n;
	int64_t *fc;
	gf_err err;

	if (cfg->forecast_at < 0)
		return gf_loop_run(L);
	if ((err = gf_loop_run_until(L, cfg->forecast_at)))
		return err;
	n = gf_loop_njobs(L);
	fc = malloc((n ? n : 1) * sizeof(*fc));
	if (!fc)
		return GF_NOMEM;
	bool *pending = calloc(n ? n : 1, sizeof(*pending));

	if (!pending) {
		free(fc);
		return GF_NOMEM;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct gf_job_info ji;

		gf_loop_job(L, i, &ji);
		pending[i] = ji.state == GF_JOB_PENDING;
	}
	if (!(err = gf_loop_forecast(L, fc)) && !(err = gf_loop_run(L))) {
		double abs = 0, bias = 0;
		int64_t k = 0, close = 0;

		for (uint32_t i = 0; i < n; i++) {
			struct gf_job_info ji;

			gf_loop_job(L, i, &ji);
			if (!pending[i] || fc[i] < 0 || ji.start < 0)
				continue;
			double d = (double)(fc[i] - ji.start);

			abs += d < 0 ? -d : d;
			bias += d;
			close += d >= -600 && d <= 600;
			k++;
		}
		out->forecast_jobs = k;
		out->forecast_mae_s = k ? abs / (double)k : 0;
		out->forecast_bias_s = k ? bias / (double)k : 0;
		out->forecast_within_10m_pct = k ? 100.0 * (double)close / (double)k : 0;
	}
	free(pending);
	free(fc);
	return err;
}

gf_err gf_replay_populate(const gf_replay *x, gf_loop *L, const struct gf_replay_config *cfg,
			  struct gf_replay_result *out)
{
	struct gf_rng warm, arrive, burst, est, order;
	gf_err err;

	gf_rng_init(&warm, cfg->seed * 8 + 1);
	gf_rng_init(&arrive, cfg->seed * 8 + 2);
	gf_rng_init(&burst, cfg->seed * 8 + 3);
	gf_rng_init(&est, cfg->seed * 8 + 4);
	gf_rng_init(&order, cfg->seed * 8 + 5);
	if ((err = set_node_order(x, L, &order)) || (err = add_warm(x, L, cfg, &warm, &est, out)) ||
	    (err = add_arrivals(x, L, cfg, &arrive, &est, out)) ||
	    (cfg->burst && (err = add_burst(x, L, cfg, &burst, &est))))
		return err;
	return GF_OK;
}

struct gf_policy_env gf_replay_env(const gf_replay *x, const struct gf_features *features)
{
	return (struct gf_policy_env){ .cat = x->cat, .target = &x->target, .features = *features };
}

const struct gf_node_spec *gf_replay_nodes(const gf_replay *x, size_t *n)
{
	*n = x->nnodes;
	return x->nodes;
}

gf_err gf_replay_run(const gf_replay *x, const struct gf_policy_ops *ops,
		     const struct gf_replay_config *cfg, struct gf_replay_result *out)
{
	struct gf_loop_config lc = {
		.policy = cfg->qp, .seed = cfg->seed ^ 0x5bd1e995ULL, .horizon = cfg->horizon,
		.sample_every = cfg->sample_every,
		.preemption = cfg->preemption && cfg->qp != GF_QP_KUBE, .preempt_wait = cfg->preempt_wait,
		.preempt_grace = cfg->preempt_grace, .queues = cfg->queues, .nqueues = cfg->nqueues,
		.estimate_history = cfg->estimate == GF_EST_HISTORY, .history_prior = cfg->history_prior,
	};
	struct gf_policy_env env = {
		.cat = x->cat, .target = &x->target, .features = cfg->features,
	};
	gf_loop *L = NULL;
	gf_err err;

	memset(out, 0, sizeof(*out));
	if (!(cfg->load > 0 && cfg->load <= 2) || cfg->horizon <= 0 || cfg->burst_at < 0 ||
	    (cfg->estimate == GF_EST_OVER && !(cfg->over >= 1.0)))
		return GF_INVAL;
	if ((err = gf_loop_create(x->nodes, x->nnodes, ops, &env, &lc, &L)) ||
	    (err = gf_replay_populate(x, L, cfg, out)) ||
	    (err = run_with_forecast(L, cfg, out)) ||
	    (err = collect(x, L, cfg, out)))
		goto fail;
	gf_loop_destroy(L);
	return GF_OK;
fail:
	gf_loop_destroy(L);
	gf_replay_result_release(out);
	return err;
}

/* ---- the as-listed replay ---- */

void gf_replay_jobs_free(struct gf_replay_job *jobs, size_t n)
{
	for (size_t i = 0; jobs && i < n; i++)
		free(jobs[i].nodes);
	free(jobs);
}

/* Submit row i as job i (gf_replay_listed's rules). */
static gf_err submit_listed(gf_loop *L, const struct gf_pod_spec *pod, const struct gf_pod_times *t,
			    const struct gf_replay_config *cfg, struct gf_rng *erng)
{
	uint8_t cls = t->qos == GF_QOS_LS || t->qos == GF_QOS_GUARANTEED ? GF_RC_LS : GF_RC_BE;
	struct gf_job_spec s = {
		.pod = *pod, .npods = t->npods ? t->npods : 1, .priority = class_priority[cls], .cls = cls,
		.arrival = pod->arrival, .duration = pod->duration,
	};
	uint32_t id;

	s.estimate = estimate_of(cfg, s.duration, erng);
	return gf_loop_submit(L, &s, &id);
}

/* The cycle's binds into the jobs' node lists (a restart after an eviction overwrites). */
static gf_err record_binds(struct gf_replay_job *jobs, size_t njobs, const struct gf_loop_decisions *d)
{
	for (size_t b = 0; b < d->nbinds; b++) {
		const struct gf_loop_bind *x = &d->binds[b];
		struct gf_replay_job *j;

		if (x->job >= njobs || x->member >= jobs[x->job].npods)
			return GF_STATE;
		j = &jobs[x->job];
		if (!j->nodes && !(j->nodes = malloc(j->npods * sizeof(*j->nodes))))
			return GF_NOMEM;
		j->nodes[x->member] = x->node;
	}
	return GF_OK;
}

gf_err gf_replay_listed(const struct gf_node_spec *nodes, size_t nnodes,
			const struct gf_pod_spec *pods, const struct gf_pod_times *times, size_t npods,
			const struct gf_catalog *cat, const struct gf_policy_ops *ops,
			const struct gf_replay_config *cfg, struct gf_replay_job **out)
{
	struct gf_loop_config lc = {
		.policy = cfg->qp, .seed = cfg->seed ^ 0x5bd1e995ULL, .horizon = INT64_MAX,
		.preemption = cfg->preemption && cfg->qp != GF_QP_KUBE, .preempt_wait = cfg->preempt_wait,
		.preempt_grace = cfg->preempt_grace,
		.estimate_history = cfg->estimate == GF_EST_HISTORY, .history_prior = cfg->history_prior,
	};
	struct gf_target target;
	struct gf_policy_env env = { .cat = cat, .target = &target, .features = cfg->features };
	struct gf_replay_job *jobs;
	struct gf_rng est;
	gf_loop *L = NULL;
	gf_err err;
	int64_t t;

	*out = NULL;
	if (!nnodes || !npods || (cfg->estimate == GF_EST_OVER && !(cfg->over >= 1.0)))
		return GF_INVAL;
	if ((err = gf_target_from_pods(pods, npods, cat, GF_TARGET_PCT, &target, NULL)))
		return err;
	jobs = calloc(npods, sizeof(*jobs));
	if (!jobs) {
		gf_target_release(&target);
		return GF_NOMEM;
	}
	gf_rng_init(&est, cfg->seed * 8 + 4);
	if ((err = gf_loop_create(nodes, nnodes, ops, &env, &lc, &L)))
		goto done;
	for (size_t i = 0; i < npods; i++) {
		jobs[i].npods = times[i].npods ? times[i].npods : 1;
		if ((err = submit_listed(L, &pods[i], &times[i], cfg, &est)))
			goto done;
	}
	/* gf_loop_run's loop, keeping each cycle's decisions */
	while (gf_loop_next_event(L, &t)) {
		struct gf_loop_decisions d;

		if ((err = gf_loop_cycle(L, t, &d)) || (err = record_binds(jobs, npods, &d)))
			goto done;
	}
	for (uint32_t i = 0; i < npods; i++) {
		struct gf_job_info ji;

		gf_loop_job(L, i, &ji);
		jobs[i].arrival = ji.arrival;
		jobs[i].start = ji.start;
		jobs[i].end = ji.end;
		jobs[i].state = ji.state;
		jobs[i].preemptions = ji.preemptions;
		if (ji.start < 0) {
			free(jobs[i].nodes);
			jobs[i].nodes = NULL;
		}
	}
done:
	gf_loop_destroy(L);
	gf_target_release(&target);
	if (err) {
		gf_replay_jobs_free(jobs, npods);
		return err;
	}
	*out = jobs;
	return GF_OK;
}
