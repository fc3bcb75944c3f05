/*
 * sim/openb.c - one openb run: order, tune, prioritise, place, measure.
 *
 * Event order: pods are attempted strictly in list order; each attempt adds
 * its request to `arrived` first (failed pods count), then places the pod or
 * drops it, then records one sample.  There is no clock: the experiment has
 * arrivals only (spec 2.3).
 *
 * Fragmentation is kept incrementally: F of every node is stored, and after
 * a placement only the changed node is re-evaluated, so a sample is O(1)
 * instead of O(nodes).  The per-bucket sums are accumulated on the fly, so a
 * run holds no per-attempt log.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/cluster.h"
#include "core/grow.h"
#include "core/rng.h"
#include "core/sort.h"
#include "policy/sched.h"
#include "policy/target.h"
#include "queue/loop.h"
#include "sim/openb.h"

struct gf_openb {
	struct gf_node_spec *nodes;
	size_t nnodes;
	struct gf_pod_spec *pods;	/* sorted by name */
	size_t npods;
	const struct gf_catalog *cat;
	struct gf_target target;
	int64_t ngpus;
};

struct gf_openb_config gf_openb_config_default(void)
{
	struct gf_openb_config c = {
		.tune = 1.3,
		.seed = 42,
		.shuffle = true,
		.features = gf_features_default(),
	};
	return c;
}

struct ranked_pod {
	const struct gf_pod_spec *pod;
	size_t pos;
};

/* By name, bytewise; equal names keep their input order (a total order, so qsort is deterministic). */
static int cmp_pod_name(const void *a, const void *b)
{
	const struct ranked_pod *pa = a, *pb = b;
	int c = strcmp(pa->pod->name, pb->pod->name);

	if (c)
		return c;
	return pa->pos < pb->pos ? -1 : pa->pos > pb->pos;
}

gf_err gf_openb_create(const struct gf_node_spec *nodes, size_t nnodes,
		       const struct gf_pod_spec *pods, size_t npods, const struct gf_catalog *cat,
		       gf_openb **out)
{
	struct ranked_pod *rank = NULL;
	gf_openb *x;
	gf_err err;

	if (nnodes == 0 || npods == 0)
		return GF_INVAL;
	x = calloc(1, sizeof(*x));
	if (!x)
		return GF_NOMEM;
	x->nodes = malloc(nnodes * sizeof(*nodes));
	x->pods = malloc(npods * sizeof(*pods));
	rank = malloc(npods * sizeof(*rank));
	if (!x->nodes || !x->pods || !rank) {
		err = GF_NOMEM;
		goto fail;
	}
	memcpy(x->nodes, nodes, nnodes * sizeof(*nodes));
	x->nnodes = nnodes;
	for (size_t i = 0; i < npods; i++)
		rank[i] = (struct ranked_pod){ &pods[i], i };
	gf_qsort(rank, npods, sizeof(*rank), cmp_pod_name);
	for (size_t i = 0; i < npods; i++)
		x->pods[i] = *rank[i].pod;
	x->npods = npods;
	x->cat = cat;
	for (size_t i = 0; i < nnodes; i++)
		x->ngpus += nodes[i].ngpus;
	err = gf_target_from_pods(x->pods, npods, cat, GF_TARGET_PCT, &x->target, NULL);
	if (err)
		goto fail;
	free(rank);
	*out = x;
	return GF_OK;
fail:
	free(rank);
	gf_openb_destroy(x);
	return err;
}

void gf_openb_destroy(gf_openb *x)
{
	if (!x)
		return;
	gf_target_release(&x->target);
	free(x->nodes);
	free(x->pods);
	free(x);
}

const struct gf_target *gf_openb_target(const gf_openb *x)
{
	return &x->target;
}

int64_t gf_openb_ngpus(const gf_openb *x)
{
	return x->ngpus;
}

void gf_openb_result_release(struct gf_openb_result *r)
{
	free(r->alloc);
	free(r->frag);
	free(r->frag_ratio);
	memset(r, 0, sizeof(*r));
}

double gf_openb_at(const struct gf_openb_result *r, const double *curve, int x)
{
	if (x < 0 || x >= r->nbuckets)
		return NAN;
	return curve[x];
}

/* Python's round(v, 2) on the binary value, half to even. */
static double round2(double v)
{
	return rint(v * 100.0) / 100.0;
}

/*
 * Order and tune (spec 2.2 steps 3-4).  Returns the list of indices into
 * x->pods in *order (malloc'ed) and its length; draws from rng.
 */
static gf_err build_order(const gf_openb *x, const struct gf_openb_config *cfg, struct gf_rng *rng,
			  uint32_t **order, size_t *norder, int64_t *total_request)
{
	size_t n = x->npods, cap = n + n / 2 + 16, len = n;
	uint32_t *q = malloc(cap * sizeof(*q));
	int64_t capacity = x->ngpus * GF_MILLI_PER_GPU;
	int64_t target = (int64_t)llround(cfg->tune * (double)capacity);
	int64_t tot = 0, any_gpu = 0;

	if (!q)
		return GF_NOMEM;
	for (size_t i = 0; i < n; i++) {
		q[i] = (uint32_t)i;
		tot += gf_pod_gpu_request(&x->pods[i]);
		any_gpu |= x->pods[i].gpu_count;
	}
	if (cfg->shuffle) {
		for (size_t i = n - 1; i > 0; i--) {
			size_t j = (size_t)gf_rng_below(rng, i + 1);
			uint32_t t = q[i];

			q[i] = q[j];
			q[j] = t;
		}
	}
	/* Tune up: clones of uniformly drawn originals go to the end; stop at
	 * the first GPU pod whose per-GPU share would overshoot.  A trace with
	 * no GPU pod cannot reach the target and is left as it is. */
	while (any_gpu && tot < target) {
		size_t i = (size_t)gf_rng_below(rng, n);
		const struct gf_pod_spec *c = &x->pods[i];

		if (tot + c->gpu_milli > target)
			break;
		if (len == cap && gf_grow(&q, &cap, len + 1, sizeof(*q), 1)) {
			free(q);
			return GF_NOMEM;
		}
		q[len++] = (uint32_t)i;
		tot += gf_pod_gpu_request(c);
	}
	/* Tune down: remove uniformly drawn pods until at or below the target. */
	while (tot > target && len > 0) {
		size_t j = (size_t)gf_rng_below(rng, len);

		tot -= gf_pod_gpu_request(&x->pods[q[j]]);
		memmove(&q[j], &q[j + 1], (len - j - 1) * sizeof(*q));
		len--;
	}
	*order = q;
	*norder = len;
	*total_request = tot;
	return GF_OK;
}

gf_err gf_openb_attempts(const gf_openb *x, const struct gf_openb_config *cfg,
			 struct gf_pod_spec **pods, size_t *n)
{
	struct gf_rng rng;
	uint32_t *order;
	size_t norder;
	int64_t total;
	gf_err err;

	if (!(cfg->tune > 0))
		return GF_INVAL;
	gf_rng_init(&rng, cfg->seed);
	err = build_order(x, cfg, &rng, &order, &norder, &total);
	if (err)
		return err;
	*pods = malloc((norder ? norder : 1) * sizeof(**pods));
	if (!*pods) {
		free(order);
		return GF_NOMEM;
	}
	for (size_t i = 0; i < norder; i++)
		(*pods)[i] = x->pods[order[i]];
	*n = norder;
	free(order);
	return GF_OK;
}

struct bucket {
	double alloc, frag, ratio;
	int64_t n;
};

gf_err gf_openb_run(const gf_openb *x, const struct gf_policy_ops *ops,
		    const struct gf_openb_config *cfg, struct gf_openb_result *out)
{
	struct gf_rng rng;
	const gf_cluster *c;
	gf_loop *L = NULL;
	uint32_t *order = NULL, *prio = NULL;
	double *fnode = NULL;
	struct bucket *b = NULL;
	size_t norder = 0;
	int64_t total_request, arrived = 0;
	double ftotal = 0;
	double total_gpus = (double)x->ngpus;
	int nb;
	gf_err err;

	memset(out, 0, sizeof(*out));
	if (!(cfg->tune > 0) || x->ngpus == 0)
		return GF_INVAL;
	gf_rng_init(&rng, cfg->seed);
	err = build_order(x, cfg, &rng, &order, &norder, &total_request);
	if (err)
		return err;
	out->first_failed = -1;

	/* the loop's simplest case: one cycle per pod, kube, never an end, no requeue */
	struct gf_policy_env env = { .cat = x->cat, .target = &x->target, .features = cfg->features };
	struct gf_loop_config lc = { .policy = GF_QP_KUBE, .seed = cfg->seed, .horizon = (int64_t)norder + 1 };

	err = gf_loop_create(x->nodes, x->nnodes, ops, &env, &lc, &L);
	if (err)
		goto out;
	c = gf_loop_cluster(L);

	/* Node priorities: a uniform permutation, drawn inside-out. */
	prio = malloc(x->nnodes * sizeof(*prio));
	fnode = malloc(x->nnodes * sizeof(*fnode));
	nb = (int)fmax(rint((double)total_request / total_gpus / 10.0), rint(cfg->tune * 100.0)) + 2;
	b = calloc((size_t)nb, sizeof(*b));
	if (!prio || !fnode || !b) {
		err = GF_NOMEM;
		goto out;
	}
	for (size_t i = 0; i < x->nnodes; i++) {
		size_t j = (size_t)gf_rng_below(&rng, i + 1);

		prio[i] = prio[j];
		prio[j] = (uint32_t)i;
	}
	gf_loop_set_node_priorities(L, prio);
	gf_loop_set_rng(L, &rng);	/* the policy's draws continue the one generator */
	for (size_t i = 0; i < x->nnodes; i++) {
		const struct gf_node *nd = gf_cluster_node(c, i);

		fnode[i] = gf_frag_node(&x->target, nd->model, nd->cpu_free, nd->gpu_free, nd->ngpus);
		ftotal += fnode[i];
	}

	for (size_t e = 0; e < norder; e++) {
		const struct gf_pod_spec *p = &x->pods[order[e]];
		struct gf_job_spec js = { .pod = *p, .npods = 1, .arrival = (int64_t)e, .duration = GF_LOOP_OPEN };
		struct gf_loop_decisions d;
		uint32_t id;

		arrived += gf_pod_gpu_request(p);
		out->attempts++;
		if ((err = gf_loop_submit(L, &js, &id)) || (err = gf_loop_cycle(L, (int64_t)e, &d)))
			goto out;
		if (d.nbinds == 1) {
			uint32_t node = d.binds[0].node;
			const struct gf_node *nd = gf_cluster_node(c, node);
			double f = gf_frag_node(&x->target, nd->model, nd->cpu_free, nd->gpu_free,
						nd->ngpus);

			ftotal += f - fnode[node];
			fnode[node] = f;
			out->placed++;
		} else {
			/* tried once: it leaves the queue, never retried */
			if ((err = gf_loop_end(L, id, (int64_t)e)))
				goto out;
			if (out->failed++ == 0)
				out->first_failed = (int64_t)e;
		}

		/* One sample, logged as the reference simulator does (2 decimals). */
		int64_t used = gf_cluster_gpu_used(c);
		double idle = (double)(x->ngpus * GF_MILLI_PER_GPU - used);
		double frag = round2(ftotal);
		int xb = (int)rint((double)arrived / total_gpus / 10.0);

		if (xb >= nb)
			xb = nb - 1;
		b[xb].alloc += round2((double)used / total_gpus / 10.0);
		b[xb].frag += frag;
		b[xb].ratio += idle > 0 ? round2(100.0 * frag / idle) : 0.0;
		b[xb].n++;
	}

	/* Reduce the buckets to curves: columns 0..round(100 x tune) at least (the
	 * paper's 0..130), and up to the last bucket with samples. */
	int ncols = (int)rint(cfg->tune * 100.0) + 1;

	while (nb > ncols && b[nb - 1].n == 0)
		nb--;
	out->nbuckets = nb;
	out->alloc = malloc((size_t)nb * sizeof(double));
	out->frag = malloc((size_t)nb * sizeof(double));
	out->frag_ratio = malloc((size_t)nb * sizeof(double));
	if (!out->alloc || !out->frag || !out->frag_ratio) {
		err = GF_NOMEM;
		goto out;
	}
	for (int k = 0; k < nb; k++) {
		struct bucket m = b[k];

		if (m.n == 0) {
			for (int d = -1; d <= 1; d += 2) {
				if (k + d >= 0 && k + d < nb) {
					m.alloc += b[k + d].alloc;
					m.frag += b[k + d].frag;
					m.ratio += b[k + d].ratio;
					m.n += b[k + d].n;
				}
			}
		}
		if (m.n == 0) {
			out->alloc[k] = out->frag[k] = out->frag_ratio[k] = NAN;
			continue;
		}
		out->alloc[k] = round2(m.alloc / (double)m.n);
		out->frag[k] = round2(100.0 * (m.frag / (double)m.n) / 1000.0 / total_gpus);
		out->frag_ratio[k] = m.ratio / (double)m.n;
	}
	out->total_gpus = x->ngpus;
	out->gpu_requested = arrived;
	out->gpu_allocated = gf_cluster_gpu_used(c);
	gf_loop_sched_stats(L, &out->scores_computed, &out->scores_cached);
	err = GF_OK;
out:
	if (err)
		gf_openb_result_release(out);
	free(b);
	free(fnode);
	free(prio);
	free(order);
	gf_loop_destroy(L);
	return err;
}
