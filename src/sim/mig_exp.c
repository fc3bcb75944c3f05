/*
 * sim/mig_exp.c - one run of the openb experiment on MIG GPUs.
 *
 * Event order: as sim/openb.c.  Pods are attempted strictly in the order
 * given; each attempt adds its GPU share to `arrived` first (failed pods
 * count), then the pod is placed (policy/mig_place.h, the run's mode) or
 * dropped, then one sample of `placed` goes into the bucket of round(arrived
 * %).  Ties between nodes go to a fixed random node order drawn from the
 * seed (an inside-out permutation from core/rng, as openb's node
 * priorities, from a stream of its own: the openb draws are not disturbed).
 *
 * Static mode applies the layout to every GPU before the first pod; the
 * dynamic modes start from empty MIG-mode GPUs.  Cost: O(attempts x nodes x
 * (classes + GPUs)) for the dynamic mode, less for the others.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "sim/mig_exp.h"

#define NODE_ORDER_STREAM 0x6d69672d6f726465ull	/* "mig-orde": the node order's own stream */

gf_err gf_mig_exp_ask(const struct gf_pod_spec *p, int model, struct gf_mig_ask *a)
{
	const struct gf_mig_model_info *mi = gf_mig_model(model);

	if (!mi)
		return GF_INVAL;
	memset(a, 0, sizeof(*a));
	a->cpu_milli = p->cpu_milli;
	a->mem_mib = p->mem_mib;
	a->model = model;
	a->profile = -1;
	if (p->gpu_count == 0)
		return GF_OK;
	if (p->gpu_count > GF_MAX_GPUS || p->gpu_milli < 1 || p->gpu_milli > 1000)
		return GF_RANGE;
	a->count = p->gpu_count;
	if (p->gpu_milli == 1000)
		a->profile = mi->nprofiles - 1; /* the whole GPU: 7g (4g on A30) */
	else
		a->profile = gf_mig_profile_for_mem(model, (mi->mem_mib * p->gpu_milli + 999) / 1000);
	return a->profile < 0 ? GF_RANGE : GF_OK;
}

gf_err gf_mig_exp_target(const struct gf_target *tgt, int model, struct gf_mig_target *out)
{
	struct gf_mig_class cls[GF_MIG_MAX_CLASSES];
	int n = 0;

	for (int k = 0; k < tgt->nclasses; k++) {
		struct gf_pod_spec p = { .cpu_milli = tgt->cls[k].cpu_milli,
					 .gpu_count = tgt->cls[k].gpu_count,
					 .gpu_milli = tgt->cls[k].gpu_milli };
		struct gf_mig_ask a;
		gf_err e = gf_mig_exp_ask(&p, model, &a);

		if (e)
			return e;
		if (n == GF_MIG_MAX_CLASSES)
			return GF_TOOBIG;
		cls[n++] = (struct gf_mig_class){ .cpu_milli = a.cpu_milli, .profile = a.profile,
						  .p = tgt->cls[k].p };
	}
	return gf_mig_target_init(out, model, cls, n);
}

struct bucket {
	double sum;
	int64_t n;
};

static double bucket_at(const struct bucket *b, int nb, int x)
{
	double s = 0;
	int64_t n = 0;

	if (x < 0 || x >= nb)
		return NAN;
	if (b[x].n)
		return b[x].sum / (double)b[x].n;
	for (int k = x - 1; k <= x + 1; k++)
		if (k >= 0 && k < nb) {
			s += b[k].sum;
			n += b[k].n;
		}
	return n ? s / (double)n : NAN;
}

gf_err gf_mig_exp_run(const struct gf_node_spec *nodes, size_t nnodes, const struct gf_pod_spec *pods,
		      size_t npods, const struct gf_mig_target *t, const struct gf_mig_exp_config *cfg,
		      struct gf_mig_exp_result *out)
{
	const struct gf_mig_model_info *mi = gf_mig_model(cfg->model);
	struct gf_mig_layout layouts[GF_MIG_MAX_LAYOUTS];
	struct gf_mig_node *nd = NULL;
	uint32_t *order = NULL;
	struct bucket *b = NULL;
	struct gf_rng rng;
	int64_t ngpus = 0, arrived = 0, placed = 0, held = 0;
	int nlay, nb = 0;
	gf_err err = GF_INVAL;

	memset(out, 0, sizeof(*out));
	if (!mi || nnodes == 0 || nnodes > UINT32_MAX ||
	    (cfg->mode == GF_MIG_DYNAMIC && (!t || t->model != cfg->model)))
		return GF_INVAL;
	nlay = gf_mig_layouts(cfg->model, layouts, GF_MIG_MAX_LAYOUTS);
	if (cfg->mode == GF_MIG_STATIC && (cfg->layout < 0 || cfg->layout >= nlay))
		return GF_INVAL;
	nd = calloc(nnodes, sizeof(*nd));
	order = malloc(nnodes * sizeof(*order));
	if (!nd || !order) {
		err = GF_NOMEM;
		goto out;
	}
	for (size_t i = 0; i < nnodes; i++) {
		if (nodes[i].ngpus < 0 || nodes[i].ngpus > GF_MAX_GPUS)
			goto out;
		nd[i].cpu_free = nodes[i].cpu_milli;
		nd[i].mem_free = nodes[i].mem_mib;
		nd[i].ngpus = nodes[i].ngpus;
		ngpus += nodes[i].ngpus;
		for (int g = 0; g < nodes[i].ngpus; g++) {
			gf_mig_gpu_init(&nd[i].gpu[g], cfg->model, true);
			if (cfg->mode == GF_MIG_STATIC &&
			    gf_mig_apply_layout(&nd[i].gpu[g], &layouts[cfg->layout]))
				goto out;
		}
	}
	if (ngpus == 0)
		goto out;
	/* The node order: a uniform permutation, drawn inside-out. */
	gf_rng_init(&rng, cfg->seed ^ NODE_ORDER_STREAM);
	for (size_t i = 0; i < nnodes; i++) {
		size_t j = (size_t)gf_rng_below(&rng, i + 1);

		order[i] = order[j];
		order[j] = (uint32_t)i;
	}
	int64_t asked = 0;

	for (size_t i = 0; i < npods; i++)
		asked += gf_pod_gpu_request(&pods[i]);
	nb = (int)fmax(rint((double)asked / (double)ngpus / 10.0), 130.0) + 2;
	b = calloc((size_t)nb, sizeof(*b));
	if (!b) {
		err = GF_NOMEM;
		goto out;
	}
	for (size_t i = 0; i < npods; i++) {
		struct gf_mig_ask a;
		struct gf_mig_pick pk;
		gf_err e;

		out->attempts++;
		out->gpu_pods += pods[i].gpu_count > 0;
		arrived += gf_pod_gpu_request(&pods[i]);
		e = gf_mig_exp_ask(&pods[i], cfg->model, &a);
		if (e == GF_OK)
			e = gf_mig_choose(nd, nnodes, order, cfg->mode, t, &a, &pk);
		if (e == GF_OK) {
			if (gf_mig_bind(&nd[pk.node], &a, &pk)) {
				err = GF_STATE;
				goto out;
			}
			out->placed++;
			if (a.count) {
				out->gpu_placed++;
				out->instances += a.count;
				placed += gf_pod_gpu_request(&pods[i]);
				held += (int64_t)a.count * mi->profiles[a.profile].mem_mib;
			}
		} else if (e != GF_NOENT && e != GF_RANGE) {
			err = e;
			goto out;
		}
		int xb = (int)rint((double)arrived / (double)ngpus / 10.0);

		if (xb >= 0 && xb < nb) {
			b[xb].sum += (double)placed / (double)ngpus / 10.0;
			b[xb].n++;
		}
	}
	out->placed_at_100 = bucket_at(b, nb, 100);
	out->placed_at_130 = bucket_at(b, nb, 130);
	out->placed_end = (double)placed / (double)ngpus / 10.0;
	out->held_end = 100.0 * (double)held / ((double)ngpus * (double)mi->mem_mib);
	err = GF_OK;
out:
	free(nd);
	free(order);
	free(b);
	return err;
}
