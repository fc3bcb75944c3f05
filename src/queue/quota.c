/*
 * queue/quota.c - quotas with the semantics of Kueue's ClusterQueue.
 *
 * One resource, GPUs in milli-GPU; per GPU model where a queue lists models
 * (Kueue's resource flavors).  For a queue q with nominal N, lending limit
 * LL (<= N) and borrowing limit BL:
 *   - the guaranteed part G = N - LL is q's alone;
 *   - the cohort's pool is the sum of its members' LL; q's usage above G
 *     draws on it, and the members' draws together never exceed it;
 *   - q's usage never exceeds N + BL, nor N without a cohort.
 * So a queue alone in the cluster gets exactly its nominal quota; a cohort
 * shares what its members do not use, within what each lends.  Per model
 * the quota is lent whole and borrowed without limit inside the cohort; a
 * queue that lists models may use only those.
 *
 * Reclaim: a job whose queue stays within its nominal quota with the job
 * admitted may evict jobs of other queues of its cohort that are borrowing
 * (usage above nominal), whatever their priority (Kueue's
 * reclaimWithinCohort: Any); inside its own queue it evicts only lower
 * priorities.  The reclaimer is then not borrowing, so its jobs are no
 * reclaim victims in turn: no eviction cycle.
 *
 * Fair share among borrowers: a job that would make its queue borrow is not
 * tried in the cycle's walk; after the walk the borrowers are tried queue by
 * queue, always the queue whose weighted share (borrowed / weight) would be
 * lowest with its next job admitted (ties: queue order), so the pool goes
 * first to the queue furthest below its fair share (Kueue's fair sharing
 * orders the heads of its ClusterQueues the same way; queue/loop.c).
 *
 * Kube mode ignores quotas (the control models a plain kube-scheduler).
 */
#include <stdlib.h>
#include <string.h>

#include "queue/loop_impl.h"

gf_err gf_loop_quota_copy(const struct gf_queue_quota *queues, size_t n, struct qstate **out,
			  uint8_t **q_state, uint32_t **q_next)
{
	struct qstate *q;

	*out = NULL;
	*q_state = NULL;
	*q_next = NULL;
	if (n > GF_LOOP_MAX_QUEUES || (n && !queues))
		return GF_INVAL;
	for (size_t i = 0; i < n; i++) {
		const struct gf_queue_quota *d = &queues[i];

		if (d->nominal < 0 || d->borrowing_limit < 0 || d->lending_limit < 0 || d->weight < 1 ||
		    d->nmodels > GF_QUOTA_MAX_MODELS || d->cohort < -1)
			return GF_INVAL;
		for (uint32_t m = 0; m < d->nmodels; m++)
			if (d->models[m].nominal < 0 || d->models[m].model < 0 || d->models[m].model >= GF_MAX_MODELS)
				return GF_INVAL;
	}
	if (!n)
		return GF_OK;
	q = calloc(n, sizeof(*q));
	*q_state = calloc(n, sizeof(**q_state));
	*q_next = calloc(n, sizeof(**q_next));
	if (!q || !*q_state || !*q_next) {
		free(q);
		free(*q_state);
		free(*q_next);
		*q_state = NULL;
		*q_next = NULL;
		return GF_NOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		q[i].d = queues[i];
		if (q[i].d.lending_limit > queues[i].nominal)
			q[i].d.lending_limit = queues[i].nominal;
	}
	*out = q;
	return GF_OK;
}

gf_err gf_loop_quota_init(gf_loop *L, const struct gf_loop_config *cfg)
{
	gf_err err;

	if (cfg->nqueues == 0 || cfg->policy == GF_QP_KUBE)
		return GF_OK;
	if (!cfg->queues)
		return GF_INVAL;
	if ((err = gf_loop_quota_copy(cfg->queues, cfg->nqueues, &L->queues, &L->q_state, &L->q_next)))
		return err;
	L->nqueues = cfg->nqueues;
	return GF_OK;
}

gf_err gf_loop_set_quotas(gf_loop *L, const struct gf_queue_quota *queues, size_t n)
{
	struct qstate *q;
	uint8_t *qs;
	uint32_t *qn;
	gf_err err;

	if (L->cfg.policy == GF_QP_KUBE)
		return GF_OK;
	if ((err = gf_loop_quota_copy(queues, n, &q, &qs, &qn)))
		return err;
	for (size_t id = 0; n && id < L->njobs; id++) {
		const struct job *j = &L->jobs[id];

		if ((j->state == GF_JOB_FUTURE || j->state == GF_JOB_PENDING || j->state == GF_JOB_RUNNING) &&
		    j->queue >= n) {
			free(q);
			free(qs);
			free(qn);
			return GF_RANGE;
		}
	}
	free(L->queues);
	free(L->q_state);
	free(L->q_next);
	L->queues = q;
	L->q_state = qs;
	L->q_next = qn;
	L->nqueues = n;
	/* usage: what every job holds now (running, or partly bound) */
	for (size_t id = 0; id < L->njobs; id++) {
		const struct job *j = &L->jobs[id];

		if (j->nbound)
			gf_loop_quota_charge(L, j, &L->members[j->member0], j->nbound, 1);
	}
	L->plan_dirty = true;
	return GF_OK;
}

gf_err gf_loop_job_relabel(gf_loop *L, uint32_t id, uint16_t queue, const uint16_t budgets[GF_JOB_MAX_BUDGETS])
{
	if (id >= L->njobs)
		return GF_RANGE;
	L->jobs[id].queue = queue;
	memcpy(L->jobs[id].budgets, budgets, sizeof(L->jobs[id].budgets));
	return GF_OK;
}

static int64_t job_milli(const struct job *j)
{
	return (int64_t)j->npods * j->gpu_count * j->gpu_milli;
}

static int model_slot(const struct qstate *q, int model)
{
	for (uint32_t k = 0; k < q->d.nmodels; k++)
		if (q->d.models[k].model == model)
			return (int)k;
	return -1;
}

void gf_loop_quota_charge(gf_loop *L, const struct job *j, const struct member *m, uint32_t n, int sign)
{
	if (!gf_loop_has_quotas(L) || j->gpu_count == 0)
		return;
	struct qstate *q = &L->queues[j->queue];
	int64_t per_pod = (int64_t)j->gpu_count * j->gpu_milli;

	q->used += sign * (int64_t)n * per_pod;
	for (uint32_t k = 0; k < n && q->d.nmodels; k++) {
		int s = model_slot(q, gf_cluster_node(L->real, m[k].node)->model);

		if (s >= 0)
			q->used_model[s] += sign * per_pod;
	}
}

static int64_t guaranteed(const struct qstate *q)
{
	return q->d.nominal - q->d.lending_limit;
}

/* Queue qi's weighted share with r more milli-GPU admitted. */
double gf_loop_quota_share(const gf_loop *L, uint16_t qi, int64_t r)
{
	const struct qstate *q = &L->queues[qi];
	int64_t b = q->used + r - q->d.nominal;

	return b > 0 ? (double)b / q->d.weight : 0.0;
}

bool gf_loop_quota_borrows(const gf_loop *L, const struct job *j)
{
	if (!gf_loop_has_quotas(L) || j->gpu_count == 0)
		return false;
	const struct qstate *q = &L->queues[j->queue];

	return q->d.cohort >= 0 && q->used + job_milli(j) > q->d.nominal;
}

/* The total: may queue qi's usage grow by r?  *pool_short: refused because the pool is used up. */
static bool total_admits(const gf_loop *L, size_t qi, int64_t r, bool *pool_short)
{
	const struct qstate *q = &L->queues[qi];
	int64_t u = q->used, pool = 0, drawn = 0;

	*pool_short = false;
	if (u + r <= guaranteed(q))
		return true;
	if (q->d.cohort < 0)
		return u + r <= q->d.nominal;
	if (q->d.borrowing_limit != GF_QUOTA_UNLIMITED && u + r > q->d.nominal + q->d.borrowing_limit)
		return false;
	for (size_t i = 0; i < L->nqueues; i++) {
		const struct qstate *o = &L->queues[i];

		if (o->d.cohort != q->d.cohort)
			continue;
		pool += o->d.lending_limit;
		drawn += gf_loop_max64(o->used - guaranteed(o), 0);
	}
	drawn += u + r - gf_loop_max64(u, guaranteed(q));
	*pool_short = drawn > pool;
	return !*pool_short;
}

/* Per model: may queue qi's usage of model slot s grow by r? (lent whole, borrowed freely) */
static bool model_admits(const gf_loop *L, size_t qi, int s, int64_t r)
{
	const struct qstate *q = &L->queues[qi];
	int model = q->d.models[s].model;
	int64_t pool = 0, used = 0;

	if (q->used_model[s] + r <= q->d.models[s].nominal)
		return true;
	if (q->d.cohort < 0)
		return false;
	for (size_t i = 0; i < L->nqueues; i++) {
		const struct qstate *o = &L->queues[i];
		int os = o->d.cohort == q->d.cohort ? model_slot(o, model) : -1;

		if (os >= 0) {
			pool += o->d.models[os].nominal;
			used += o->used_model[os];
		}
	}
	return used + r <= pool;
}

bool gf_loop_quota_admits(gf_loop *L, const struct job *j, const struct member *m)
{
	if (!gf_loop_has_quotas(L) || j->gpu_count == 0)
		return true;
	size_t qi = j->queue;
	struct qstate *q = &L->queues[qi];
	int64_t r = job_milli(j), per_pod = (int64_t)j->gpu_count * j->gpu_milli;
	bool short_;

	if (!total_admits(L, qi, r, &short_))
		return false;
	if (!m || q->d.nmodels == 0)
		return true;
	int64_t need[GF_QUOTA_MAX_MODELS] = { 0 };

	for (uint32_t k = 0; k < j->npods; k++) {
		int s = model_slot(q, gf_cluster_node(L->real, m[k].node)->model);

		if (s < 0)
			return false;	/* a model the queue has no quota for */
		need[s] += per_pod;
	}
	for (uint32_t s = 0; s < q->d.nmodels; s++)
		if (need[s] && !model_admits(L, qi, (int)s, need[s]))
			return false;
	return true;
}

bool gf_loop_quota_within_nominal(const gf_loop *L, const struct job *j)
{
	if (!gf_loop_has_quotas(L))
		return false;
	const struct qstate *q = &L->queues[j->queue];

	return q->used + job_milli(j) <= q->d.nominal;
}

bool gf_loop_quota_may_evict(const gf_loop *L, const struct job *j, const struct job *v, bool reclaim)
{
	if (!gf_loop_has_quotas(L))
		return v->priority < j->priority;
	if (v->queue == j->queue)
		return v->priority < j->priority;
	const struct qstate *q = &L->queues[j->queue], *o = &L->queues[v->queue];

	return reclaim && q->d.cohort >= 0 && o->d.cohort == q->d.cohort && o->used > o->d.nominal;
}

int64_t gf_loop_queue_usage(const gf_loop *L, uint16_t q)
{
	return q < L->nqueues ? L->queues[q].used : 0;
}
