/*
 * k8s/live_quota.c - the live scheduler's quotas: Queue objects
 * (gpufleet.io/v1alpha1, k8s/queues.h) and the namespaces' queue labels ->
 * the loop's quotas (live.h: gf_live_queue_set, gf_live_queue_delete,
 * gf_live_namespace_queue, gf_live_each_queue, gf_live_queue_usage).
 * Shares live_impl.h with live.c, which keeps the pods' side: a pod's quota
 * (pod_qindex), given to the loop with each of its jobs.
 *
 * With opts.queues the loop gets one quota per Queue object held (in the
 * order first seen) and one more, unlimited, for pods charged to no Queue
 * (no label, or Kueue's).  The loop holds every pod, waiting or bound, so
 * its usage is the Queues' usage.  A Queue change (or a namespace's queue
 * label) relabels the loop's jobs in place before the next decision; a
 * waiting pod whose Queue went makes a new loop (the waiting pods go back
 * to live.c's queue and are submitted again).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "k8s/live_impl.h"

static const char *qdef_key(const void *arr, uint32_t i)
{
	return ((const struct gf_queue_def *)arr)[i].name;
}

static const char *nsq_key(const void *arr, uint32_t i)
{
	return ((const struct lnsq *)arr)[i].ns;
}

/* Queue name's index in qdef, or -1: a lookup in qmap (every attempt of a pod asks, through live.c's pod_qindex). */
int gf_live_queue_find(const gf_live *l, const char *name)
{
	bool f;
	size_t j = smap_find(&l->qmap, l->qdef, qdef_key, name, &f);
	return f ? (int)l->qmap.slot[j] : -1;
}

/* Namespace ns's entry in nsq, or -1 (nsmap). */
static int ns_find(const gf_live *l, const char *ns)
{
	bool f;
	size_t j = smap_find(&l->nsmap, l->nsq, nsq_key, ns, &f);
	return f ? (int)l->nsmap.slot[j] : -1;
}

const char *gf_live_ns_queue(const gf_live *l, const char *ns)
{
	int i = ns_find(l, ns);
	return i >= 0 ? l->nsq[i].q : NULL;
}

/* Why Queue i cannot take pods now ("" it can): its object was refused, or it lists a GPU model nobody has. */
void gf_live_queue_why(const gf_live *l, size_t i, char *why, size_t n)
{
	const struct gf_queue_def *d = &l->qdef[i];
	snprintf(why, n, "%s", l->qerr[i]);
	for (uint32_t m = 0; !why[0] && m < d->nmodels; m++) {
		int k = 0;
		while (k < l->cat.nmodels && strcmp(l->cat.models[k], d->models[m].model))
			k++;
		if (k == l->cat.nmodels)
			snprintf(why, n, "queue %s: spec.models[%u].model: no node has GPU model %s",
				 d->name, m, d->models[m].model);
	}
}

/* lc's quotas for a new loop (none without opts.queues or in kube mode). */
gf_err gf_live_quota_config(gf_live *l, struct gf_loop_config *lc)
{
	l->queues_dirty = false;
	if (!l->o.queues || l->o.queue_policy == GF_QP_KUBE)
		return GF_OK;
	struct gf_queue_quota *v = realloc(l->quota, (l->nq + 1) * sizeof(*v));
	struct gf_queue_def *defs = malloc((l->nq ? l->nq : 1) * sizeof(*defs));
	if (v)
		l->quota = v;
	if (!v || !defs) {
		free(defs);
		return GF_NOMEM;
	}
	for (size_t i = 0; i < l->nq; i++) {
		char why[256];
		defs[i] = l->qdef[i];
		gf_live_queue_why(l, i, why, sizeof(why));
		if (why[0]) { /* no pod is submitted to it: a harmless quota */
			defs[i].nmodels = 0;
			defs[i].nominal = 0;
			defs[i].weight = 1;
			defs[i].cohort[0] = 0;
			defs[i].borrowing_limit = defs[i].lending_limit = GF_QUOTA_UNLIMITED;
		}
	}
	struct gf_queue_file f = { defs, l->nq };
	struct gf_queues_error err;
	gf_err e = gf_queues_to_quota(&f, &l->cat, "queues", l->quota, &err);
	free(defs);
	if (e)
		return e; /* cannot happen: unknown models were left out */
	l->quota[l->nq] = (struct gf_queue_quota){ .nominal = INT64_MAX / 4, .borrowing_limit = GF_QUOTA_UNLIMITED,
						   .lending_limit = 0, .cohort = -1, .weight = 1 };
	lc->queues = l->quota;
	lc->nqueues = l->nq + 1;
	return GF_OK;
}


/* Pods parked for want of a Queue (or its room) are tried again. */
static void queues_changed(gf_live *l)
{
	l->queues_dirty = true;
	(void)gf_live_requeue_parked(l);
}

gf_err gf_live_queue_set(gf_live *l, const struct gf_queue_def *d, const char *err)
{
	int i = gf_live_queue_find(l, d->name);
	if (i < 0) {
		if (l->nq + 1 >= GF_LOOP_MAX_QUEUES)
			return GF_RANGE;
		if (l->nq == l->capq) {
			size_t nc = l->capq ? l->capq * 2 : 8;
			struct gf_queue_def *v = realloc(l->qdef, nc * sizeof(*v));
			if (v)
				l->qdef = v;
			char (*w)[256] = v ? realloc(l->qerr, nc * sizeof(*w)) : NULL;
			if (!w)
				return GF_NOMEM;
			l->qerr = w;
			l->capq = nc;
		}
		if (smap_put(&l->qmap, l->qdef, qdef_key, d->name, (uint32_t)l->nq))
			return GF_NOMEM;
		i = (int)l->nq++;
	}
	l->qdef[i] = *d;
	snprintf(l->qerr[i], sizeof(l->qerr[i]), "%s", err ? err : "");
	queues_changed(l);
	return GF_OK;
}

void gf_live_queue_delete(gf_live *l, const char *name)
{
	bool f;
	size_t j = smap_find(&l->qmap, l->qdef, qdef_key, name, &f);
	if (!f)
		return;
	uint32_t i = l->qmap.slot[j];
	l->qmap.slot[j] = TOMB;
	for (size_t k = 0; k < l->qmap.cap; k++) /* the Queues after it move down one */
		if (l->qmap.slot[k] != EMPTY && l->qmap.slot[k] != TOMB && l->qmap.slot[k] > i)
			l->qmap.slot[k]--;
	memmove(&l->qdef[i], &l->qdef[i + 1], (l->nq - (size_t)i - 1) * sizeof(*l->qdef));
	memmove(&l->qerr[i], &l->qerr[i + 1], (l->nq - (size_t)i - 1) * sizeof(*l->qerr));
	l->nq--;
	queues_changed(l);
}

gf_err gf_live_namespace_queue(gf_live *l, const char *ns, const char *queue)
{
	const char *old = gf_live_ns_queue(l, ns);
	if (!queue)
		queue = "";
	if ((old ? old : "")[0] == 0 && !queue[0])
		return GF_OK;
	if (old && !strcmp(old, queue))
		return GF_OK;
	int at = ns_find(l, ns);
	size_t i = at >= 0 ? (size_t)at : l->nnsq;
	if (i == l->nnsq) {
		if (l->nnsq == l->capnsq) {
			size_t nc = l->capnsq ? l->capnsq * 2 : 16;
			struct lnsq *v = realloc(l->nsq, nc * sizeof(*v));
			if (!v)
				return GF_NOMEM;
			l->nsq = v;
			l->capnsq = nc;
		}
		snprintf(l->nsq[l->nnsq].ns, sizeof(l->nsq[0].ns), "%s", ns);
		if (smap_put(&l->nsmap, l->nsq, nsq_key, l->nsq[l->nnsq].ns, (uint32_t)l->nnsq))
			return GF_NOMEM;
		l->nnsq++;
	}
	snprintf(l->nsq[i].q, sizeof(l->nsq[i].q), "%s", queue);
	queues_changed(l);
	return GF_OK;
}

void gf_live_each_queue(gf_live *l, void (*fn)(void *ud, const char *name, int64_t used, int64_t nominal,
					       const char *err), void *ud)
{
	bool engine = !gf_live_ensure(l) && l->loop && l->quota;
	for (size_t i = 0; i < l->nq; i++) {
		char why[256];
		gf_live_queue_why(l, i, why, sizeof(why));
		fn(ud, l->qdef[i].name, engine ? gf_loop_queue_usage(l->loop, (uint16_t)i) : -1, l->qdef[i].nominal, why);
	}
}

bool gf_live_queue_usage(gf_live *l, const char *name, int64_t *milli)
{
	int i = gf_live_queue_find(l, name);
	if (i < 0 || gf_live_ensure(l) || !l->loop || !l->quota)
		return false;
	*milli = gf_loop_queue_usage(l->loop, (uint16_t)i);
	return true;
}
