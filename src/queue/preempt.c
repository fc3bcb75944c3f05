/*
 * queue/preempt.c - preemption: a blocked job evicts lower priorities.
 *
 * Victims are chosen on the scratch copy, pod by pod.  A pod that fits
 * without eviction evicts nothing.  Otherwise, for every node, the running
 * jobs of lower priority with a pod there are evicted in the scratch one by
 * one, cheapest first (lowest priority, then least work lost = GPUs x time
 * run), until the pod fits on that node; the node whose victims cost least
 * (highest victim priority, then work lost, then count) is taken, and the
 * pod is placed there by the policy (masked to that node).  A gang victim
 * is evicted whole.  The plan must fit the shadow of every reservation ahead
 * of the preemptor; only then are the victims evicted for real (back to the
 * queue with their arrival sequence, their end events now stale) and the
 * preemptor bound exactly as planned.  Only a strictly higher priority
 * evicts, so two jobs never evict each other back and forth.  With quotas
 * the candidates are the lower priorities of the job's own queue and, when
 * its queue stays within its nominal quota, the jobs of borrowing queues of
 * its cohort (reclaim); the quota must admit the job once the victims are
 * gone, else more borrowers are reclaimed, cheapest first (queue/quota.c).
 * The preemptor starts after the victims' grace period (config).
 *
 * Disruption budgets (best effort, kube-scheduler's DefaultPreemption with
 * PodDisruptionBudgets): per node the candidates whose eviction stays within
 * every budget they name are tried first, cheapest first, and only if the
 * pod does not fit yet the others (cheapest first); among nodes the fewest
 * violations (pods evicted beyond a budget) win, then the cost order above.
 * Without budgets the order is the cost order alone.
 *
 * Cost: O(R log R) to sort the R candidate pods, then per preemptor pod
 * O(candidates) scratch unbind/rebind pairs.  A shape that found no victim
 * set is not tried again until some job starts or ends.
 */
#include <stdlib.h>
#include <string.h>

#include "core/sort.h"
#include "queue/loop_impl.h"

/* ---- preemption ---- */

/* Milli-GPU seconds a running job has done (0 while it still waits for its victims' grace). */
static double lost_work(const gf_loop *L, const struct job *v)
{
	return (double)gf_loop_max64(L->now - v->start, 0) * (double)v->npods * v->gpu_count * v->gpu_milli;
}

/*
 * Evicting v takes its npods from each budget it names in left[]: returns
 * the violations (pods beyond what a budget allowed); give puts them back.
 */
static uint64_t budget_take(const gf_loop *L, const struct job *v, int64_t *left)
{
	uint64_t viol = 0;

	for (int k = 0; k < GF_JOB_MAX_BUDGETS; k++) {
		size_t b = (size_t)v->budgets[k] - 1;

		if (v->budgets[k] == 0 || b >= L->nbudgets)
			continue;
		int64_t within = left[b] < v->npods ? left[b] : v->npods;

		viol += (uint64_t)(v->npods - gf_loop_max64(within, 0));
		left[b] -= v->npods;
	}
	return viol;
}

static void budget_give(const gf_loop *L, const struct job *v, int64_t *left)
{
	for (int k = 0; k < GF_JOB_MAX_BUDGETS; k++)
		if (v->budgets[k] != 0 && (size_t)v->budgets[k] - 1 < L->nbudgets)
			left[v->budgets[k] - 1] += v->npods;
}

/* Would evicting v go beyond one of its budgets? */
static bool budget_short(const gf_loop *L, const struct job *v, const int64_t *left)
{
	for (int k = 0; k < GF_JOB_MAX_BUDGETS; k++)
		if (v->budgets[k] != 0 && (size_t)v->budgets[k] - 1 < L->nbudgets &&
		    left[v->budgets[k] - 1] < v->npods)
			return true;
	return false;
}

/* evict: a running job loses its place and goes back to the queue (same arrival sequence). */
static gf_err evict(gf_loop *L, uint32_t id)
{
	struct job *j = &L->jobs[id];
	gf_err err;

	j->lost += lost_work(L, j);
	if ((err = gf_loop_unbind_job(L, id)))
		return err;
	j->state = GF_JOB_PENDING;
	j->start = -1;
	j->npreempted++;
	gf_loop_history_estimate(L, j);
	L->stats.preemptions++;
	L->stats.budget_violations += budget_take(L, j, L->budget_left);
	L->plan_dirty = true;	/* the shadows still count it */
	if (gf_grow(&L->incoming, &L->incoming_cap, L->nincoming + 1, sizeof(*L->incoming), 64))
		return GF_NOMEM;
	L->incoming[L->nincoming++] = (struct entry){ id, WHOLE };
	if (gf_grow(&L->evicted, &L->evicted_cap, L->nevicted + 1, sizeof(*L->evicted), 64))
		return GF_NOMEM;
	L->evicted[L->nevicted++] = id;	/* a decision of this cycle: its pods must go */
	return GF_OK;
}

struct victim {
	uint32_t node, job;
	int32_t priority;
	double lost;	/* milli-GPU seconds it would lose */
};

static int victim_cmp(const void *a, const void *b)
{
	const struct victim *x = a, *y = b;

	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	if (x->priority != y->priority)
		return x->priority < y->priority ? -1 : 1;
	if (x->lost != y->lost)
		return x->lost < y->lost ? -1 : 1;
	return x->job < y->job ? -1 : x->job > y->job;
}

struct pick {
	uint64_t viol;	/* disruption budget violations */
	int32_t worst;	/* highest victim priority */
	double lost;
	size_t n;
};

static bool pick_better(const struct pick *a, const struct pick *b)
{
	if (a->viol != b->viol)
		return a->viol < b->viol;
	if (a->worst != b->worst)
		return a->worst < b->worst;
	if (a->lost != b->lost)
		return a->lost < b->lost;
	return a->n < b->n;
}

static bool in_list(const uint32_t *v, size_t n, uint32_t id)
{
	for (size_t k = 0; k < n; k++)
		if (v[k] == id)
			return true;
	return false;
}

/* Evict (or, undo, restore) job id in the scratch. */
static void scratch_evict(gf_loop *L, uint32_t id, bool undo)
{
	const struct job *v = &L->jobs[id];
	struct gf_pod_spec p = gf_loop_pod_of(v);

	if (undo)
		gf_loop_bind_pods(L->scratch, &p, &L->members[v->member0], v->npods);
	else
		gf_loop_unbind_pods(L->scratch, &p, &L->members[v->member0], v->npods);
}

/*
 * For node n's candidates c[0..nc) (cheapest first): evict them in the
 * scratch one by one until p fits there, first those within their budgets
 * (left[], after the victims chosen so far), then the others; fills *pk and
 * taken[] (the jobs, in order) and returns how many are needed (0 if
 * evicting them all does not help).  The scratch and left[] are restored.
 */
static size_t node_victims(gf_loop *L, const struct victim *c, size_t nc, const struct gf_pod_spec *p,
			   const uint32_t *chosen, size_t nchosen, int64_t *left, uint32_t *taken, struct pick *pk)
{
	size_t nt = 0;
	bool fits = false;

	*pk = (struct pick){ 0, INT32_MIN, 0, 0 };
	for (int pass = 0; pass < 2 && !fits; pass++) {
		for (size_t k = 0; k < nc && !fits; k++) {
			const struct job *v = &L->jobs[c[k].job];

			if ((k > 0 && c[k - 1].job == c[k].job) || in_list(chosen, nchosen, c[k].job) ||
			    in_list(taken, nt, c[k].job))
				continue;	/* two of its pods here, or already out */
			if (pass == 0 && budget_short(L, v, left))
				continue;	/* protected: only if nothing else makes room */
			scratch_evict(L, c[k].job, false);
			taken[nt++] = c[k].job;
			pk->viol += budget_take(L, v, left);
			if (c[k].priority > pk->worst)
				pk->worst = c[k].priority;
			pk->lost += c[k].lost;
			pk->n++;
			fits = gf_cluster_fits(L->scratch, L->cat, c[k].node, p);
		}
	}
	for (size_t q = nt; q-- > 0;) {
		scratch_evict(L, taken[q], true);
		budget_give(L, &L->jobs[taken[q]], left);
	}
	return fits ? nt : 0;
}

/* Victims' or candidates' usage out of (sign -1) or back into (1) their queues. */
static void charge_all(gf_loop *L, const uint32_t *v, size_t n, int sign)
{
	for (size_t k = 0; k < n; k++) {
		const struct job *x = &L->jobs[v[k]];

		gf_loop_quota_charge(L, x, &L->members[x->member0], x->npods, sign);
	}
}

/*
 * With the victims chosen for room gone, does j's queue admit j on its
 * planned place (L->tmp_members)?  If not and j reclaims, the cheapest
 * running jobs of borrowing queues of its cohort are added as victims
 * (lowest priority, then least work lost) until it does.  Usage is restored
 * before returning (the real evictions uncharge it).
 */
static bool quota_with_victims(gf_loop *L, const struct job *j, bool reclaim, uint32_t *chosen, size_t *nchosen)
{
	bool ok;

	if (!gf_loop_has_quotas(L))
		return true;
	charge_all(L, chosen, *nchosen, -1);
	while (!(ok = gf_loop_quota_admits(L, j, L->tmp_members)) && reclaim) {
		uint32_t best = NONE;

		for (size_t r = 0; r < L->nrunning; r++) {
			uint32_t id = L->running[r];
			const struct job *v = &L->jobs[id];

			if (v->queue == j->queue || !gf_loop_quota_may_evict(L, j, v, true) ||
			    in_list(chosen, *nchosen, id))
				continue;
			if (best == NONE || v->priority < L->jobs[best].priority ||
			    (v->priority == L->jobs[best].priority && lost_work(L, v) < lost_work(L, &L->jobs[best])))
				best = id;
		}
		if (best == NONE)
			break;
		gf_loop_quota_charge(L, &L->jobs[best], &L->members[L->jobs[best].member0], L->jobs[best].npods, -1);
		chosen[(*nchosen)++] = best;
	}
	charge_all(L, chosen, *nchosen, 1);
	return ok;
}

/*
 * The lowest priority of any job the loop holds, done ones included (so it
 * is never above the running jobs' lowest: skipping the victim scan at or
 * below it stays safe), kept incrementally over the jobs appended since;
 * gf_loop_compact starts it again.
 */
static int32_t lowest_priority(gf_loop *L)
{
	for (; L->min_prio_n < L->njobs; L->min_prio_n++) {
		int32_t p = L->jobs[L->min_prio_n].priority;

		if (L->min_prio_n == 0 || p < L->min_prio)
			L->min_prio = p;
	}
	return L->min_prio;
}

/*
 * Preemption for job id (reservations [0, nahead) ahead of it): plan on the
 * scratch member by member, each where it fits or else on the node whose
 * cheapest sufficient victims cost least; then check the reservations ahead,
 * evict the victims for real and bind the job as planned.  Sets *ok.
 */
gf_err gf_loop_try_preempt(gf_loop *L, uint32_t id, size_t nahead, bool *ok)
{
	struct job *j = &L->jobs[id];
	struct shape *s = &L->shapes[j->shape];
	struct gf_pod_spec p = gf_loop_pod_of(j);
	struct victim *cand = NULL;
	uint32_t *chosen = NULL, *taken = NULL, *best_taken = NULL;
	int64_t *left = NULL;	/* budgets after the victims chosen so far */
	size_t ncand = 0, nchosen = 0;
	gf_err err = GF_OK;
	/* an admission mask: only its nodes, and the shape's memo is not its own */
	const uint64_t *adm = gf_loop_admission(L, id);
	/* a spot pool's mask is the same for every job of the shape: the shape's memo, per pool */
	int key = !adm ? 0 : L->spot ? gf_loop_spot_pool_key(L, id) : -1;

	*ok = false;
	/* without quotas only a lower priority is a victim: none anywhere, nothing to scan */
	if (L->spot && !gf_loop_has_quotas(L) && j->priority <= lowest_priority(L))
		return GF_OK;
	if (!L->cfg.preemption || j->never_preempt ||
	    (key >= 0 && s->nopreempt_pool == key && s->nopreempt_starts == L->stats.starts &&
	     s->nopreempt_freed == L->nfreed) ||
	    (key < 0 && j->nopre_valid && j->nopre_starts == L->stats.starts && j->nopre_freed == L->nfreed))
		return GF_OK;
	bool reclaim = gf_loop_quota_within_nominal(L, j);

	for (size_t r = 0; r < L->nrunning; r++) {
		const struct job *v = &L->jobs[L->running[r]];

		if (gf_loop_quota_may_evict(L, j, v, reclaim))
			ncand += v->npods;
	}
	if (ncand == 0 || gf_grow(&L->tmp_members, &L->tmp_cap, j->npods, sizeof(*L->tmp_members), 64))
		goto none;
	cand = malloc(ncand * sizeof(*cand));
	chosen = malloc(ncand * sizeof(*chosen));
	taken = malloc(ncand * sizeof(*taken));
	best_taken = malloc(ncand * sizeof(*best_taken));
	left = malloc((L->nbudgets + 1) * sizeof(*left));
	if (!cand || !chosen || !taken || !best_taken || !left) {
		err = GF_NOMEM;
		goto out;
	}
	ncand = 0;
	for (size_t r = 0; r < L->nrunning; r++) {
		const struct job *v = &L->jobs[L->running[r]];
		double lost = lost_work(L, v);

		for (uint32_t m = 0; gf_loop_quota_may_evict(L, j, v, reclaim) && m < v->npods; m++)
			cand[ncand++] = (struct victim){ L->members[v->member0 + m].node, L->running[r],
							 v->priority, lost };
	}
	if (L->nbudgets)
		memcpy(left, L->budget_left, L->nbudgets * sizeof(*left));
	gf_qsort(cand, ncand, sizeof(*cand), victim_cmp);
	if ((err = gf_loop_sync_scratch(L)))
		goto out;
	for (uint32_t m = 0; m < j->npods; m++) {
		struct pick best = { 0 }, pk;
		size_t best_at = 0, best_n = 0;
		uint32_t *swap;
		bool found = false;

		if (gf_loop_place_pods(L, L->planner, L->scratch, &p, adm, L->tmp_members, m, m + 1))
			continue;
		for (size_t a = 0, b; a < ncand; a = b) {
			size_t need;

			for (b = a; b < ncand && cand[b].node == cand[a].node; b++)
				;
			if (adm && !(adm[cand[a].node / 64] >> (cand[a].node % 64) & 1))
				continue;	/* a node it may not use */
			need = node_victims(L, &cand[a], b - a, &p, chosen, nchosen, left, taken, &pk);
			if (need && (!found || pick_better(&pk, &best))) {
				best = pk;
				best_at = a;
				best_n = need;
				found = true;
				swap = best_taken;	/* keep its victims */
				best_taken = taken;
				taken = swap;
			}
		}
		if (!found)
			goto none_undo;
		for (size_t k = 0; k < best_n; k++) {	/* none of them chosen before */
			scratch_evict(L, best_taken[k], false);
			budget_take(L, &L->jobs[best_taken[k]], left);
			chosen[nchosen++] = best_taken[k];
		}
		memset(L->mask, 0, L->mask_words * sizeof(*L->mask));
		L->mask[cand[best_at].node / 64] |= 1ULL << (cand[best_at].node % 64);
		if (!gf_loop_place_pods(L, L->planner, L->scratch, &p, L->mask, L->tmp_members, m, m + 1))
			goto none_undo;
	}
	if (!quota_with_victims(L, j, reclaim, chosen, &nchosen))
		goto none_undo;
	/* never against a reservation ahead; the planned binds join their shadows */
	if (!gf_loop_bind_in_shadows(L, &p, L->tmp_members, j->npods,
				     L->now + L->cfg.preempt_grace + j->estimate, 0, nahead))
		goto none_undo;
	for (size_t k = 0; k < nchosen; k++) {
		L->stats.reclaims += L->jobs[chosen[k]].queue != j->queue && gf_loop_has_quotas(L);
		if ((err = evict(L, chosen[k])))
			goto out;
	}
	if (!gf_loop_bind_pods(L->real, &p, L->tmp_members, j->npods)) {
		err = GF_STATE;	/* the scratch said it fits once the victims are gone */
		goto out;
	}
	memcpy(&L->members[j->member0], L->tmp_members, j->npods * sizeof(*L->tmp_members));
	gf_loop_assume(L, j, j->npods);
	L->start_delay = L->cfg.preempt_grace;	/* consumed by the confirm that follows */
	*ok = true;
	goto out;
none_undo:
	/* the scratch is re-synchronised from the real cluster before its next use */
none:
	if (key >= 0) {
		s->nopreempt_starts = L->stats.starts;
		s->nopreempt_freed = L->nfreed;
		s->nopreempt_pool = (uint8_t)key;
	} else {	/* its own memo: the mask is its own (it widens only with a freed node) */
		j->nopre_valid = true;
		j->nopre_starts = L->stats.starts;
		j->nopre_freed = L->nfreed;
	}
out:
	free(cand);
	free(chosen);
	free(taken);
	free(best_taken);
	free(left);
	return err;
}

