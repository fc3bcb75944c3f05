/*
 * queue/plan.c - reservations, EASY and conservative backfill, shadows.
 *
 * Reservation (EASY backfill).  The planner keeps a scratch copy of the
 * cluster, refreshed node by node where either side changed.  For holder h
 * it releases the running jobs from the scratch in order of expected end
 * (start + estimate, never before now), and after each batch of equal
 * expected ends checks h: first a cheap bound (per node, how many of h's
 * pods fit, greedily; their sum must reach npods), then the policy's own
 * placement on the scratch.  The first time t at which h fits is the
 * reservation, with the nodes and GPUs h would use; the scratch, with h
 * bound, is then the shadow: the cluster as it will be at t.  A later job j
 * that fits now may start iff it is expected to end by t, or its binds (the
 * same nodes and GPUs) also fit in the shadow, where they are then added.
 * If j's first placement conflicts, it is tried once more with the
 * reservation's nodes masked out (gf_sched_place_masked).  When h's turn
 * comes and the policy's own placement fails, the reserved nodes and GPUs are
 * bound exactly, so with estimates that never under-run a reservation is
 * never late.  The plan is redone when a job ended before its expected end
 * (an end on time is already in the plan), a job ahead of the holder (a
 * higher priority) started on room the shadow counted on (one that fits the
 * shadow is added to it instead), or the holder changed.
 *
 * Conservative backfill gives each of the first MAX_RES blocked jobs a
 * reservation, in queue order, planning at most PLANS_PER_CYCLE new ones per
 * cycle (Slurm bounds its backfill pass the same way: a plan costs
 * O(nodes + running jobs) and a long queue would replan them all every
 * cycle); a blocked job without one is treated as a backfill candidate.  Planning job h replays, on the scratch, the
 * expected ends of running jobs and the starts and ends of the earlier
 * reservations; h's time is the first at which it fits there and also fits
 * the shadow of every earlier reservation it would overlap (it is then bound
 * into those).  Each reservation keeps its own shadow (the cluster at its
 * time); a later job must fit every shadow it would overlap.  A holder may
 * start before its time only on a placement every other shadow still admits
 * (its planned binds are swapped for the actual ones).  Reservations are kept
 * in the order their holders have in the queue, which is also the order they
 * were planned in.
 */
#include <stdlib.h>
#include <string.h>

#include "queue/loop_impl.h"

/* ---- planning: reservations and their shadows ---- */

gf_err gf_loop_sync_scratch(gf_loop *L)
{
	for (size_t i = 0; i < L->nnodes; i++) {
		uint32_t rv = gf_cluster_node(L->real, i)->version;

		if (rv == L->real_ver[i] && gf_cluster_node(L->scratch, i)->version == L->scratch_ver[i])
			continue;
		if (gf_cluster_copy_node(L->scratch, L->real, i))
			return GF_STATE;
		L->real_ver[i] = rv;
		L->scratch_ver[i] = gf_cluster_node(L->scratch, i)->version;
	}
	return GF_OK;
}

/* A reservation's start and end in the planner's timeline: never before now. */
static int64_t res_start(const gf_loop *L, const struct reservation *r)
{
	return gf_loop_max64(r->time, L->now);
}

static int64_t res_end(const gf_loop *L, const struct reservation *r)
{
	return res_start(L, r) + (r->end - r->time);
}

/* Keep a dropped plan's nodes and GPUs for its holder's next plan. */
static gf_err save_prev(gf_loop *L, const struct reservation *r)
{
	uint32_t n = L->jobs[r->holder].npods;
	size_t slot = L->nprev_next;

	for (size_t k = 0; k < MAX_RES; k++)
		if (L->prev[k].holder == r->holder)
			slot = k;
	if (slot == L->nprev_next)
		L->nprev_next = (L->nprev_next + 1) % MAX_RES;
	if (gf_grow(&L->prev[slot].members, &L->prev[slot].cap, n, sizeof(struct member), 64))
		return GF_NOMEM;
	memcpy(L->prev[slot].members, r->members, n * sizeof(struct member));
	L->prev[slot].holder = r->holder;
	return GF_OK;
}

static const struct member *find_prev(const gf_loop *L, uint32_t holder)
{
	for (size_t k = 0; k < MAX_RES; k++)
		if (L->prev[k].holder == holder)
			return L->prev[k].members;
	return NULL;
}

/* Drop reservations [from, nres) (their holders will be planned again when reached). */
gf_err gf_loop_drop_reservations(gf_loop *L, size_t from)
{
	gf_err err;

	for (size_t r = from; r < L->nres; r++)
		if ((err = save_prev(L, &L->res[r])))
			return err;
	if (from < L->nres)
		L->stats.dropped += L->nres - from;
	L->nres = from < L->nres ? from : L->nres;
	return GF_OK;
}

/* Remove reservation i (its holder started); the slot's buffers move to the end. */
static void remove_res(gf_loop *L, size_t i)
{
	struct reservation r = L->res[i];

	memmove(&L->res[i], &L->res[i + 1], (L->nres - i - 1) * sizeof(L->res[0]));
	L->res[--L->nres] = r;
}

/* Bind job j's members (on their nodes and GPUs) into the shadows of reservations
 * [from, to) that start before j is expected to end; all or none. */
bool gf_loop_bind_in_shadows(gf_loop *L, const struct gf_pod_spec *p, const struct member *m, uint32_t n,
			    int64_t end, size_t from, size_t to)
{
	for (size_t r = from; r < to; r++) {
		if (L->res[r].time >= end)
			continue;
		if (!gf_loop_bind_pods(L->res[r].shadow, p, m, n)) {
			while (r-- > from)
				if (L->res[r].time < end)
					gf_loop_unbind_pods(L->res[r].shadow, p, m, n);
			return false;
		}
	}
	return true;
}

/* Would job j, just bound in the real cluster, leave reservations [from, to) intact?
 * If so it joins their shadows. */
static bool admissible(gf_loop *L, const struct job *j, size_t from, size_t to)
{
	struct gf_pod_spec p = gf_loop_pod_of(j);

	return gf_loop_bind_in_shadows(L, &p, &L->members[j->member0], j->npods, L->now + j->estimate, from, to);
}

static void refresh_slots(gf_loop *L, uint32_t node, const struct gf_pod_spec *p, uint32_t k, uint64_t *total)
{
	const struct gf_node *nd = gf_cluster_node(L->scratch, node);

	*total -= L->node_slots[node];
	L->node_slots[node] = gf_loop_node_slots(L->cat, nd, p, k);
	L->slots_ver[node] = nd->version;
	*total += L->node_slots[node];
}

/* Apply one reservation's start (bind) or end (unbind) to the scratch. */
static gf_err apply_res(gf_loop *L, const struct reservation *r, bool bind, const struct gf_pod_spec *hp,
			uint32_t k, uint64_t *total)
{
	const struct job *rj = &L->jobs[r->holder];
	struct gf_pod_spec rp = gf_loop_pod_of(rj);

	if (bind && !gf_loop_bind_pods(L->scratch, &rp, r->members, rj->npods))
		return GF_STATE;
	if (!bind)
		gf_loop_unbind_pods(L->scratch, &rp, r->members, rj->npods);
	for (uint32_t m = 0; m < rj->npods; m++)
		refresh_slots(L, r->members[m].node, hp, k, total);
	return GF_OK;
}

/* Release the running job r from the scratch. */
static gf_err release_running(gf_loop *L, const struct job *r, const struct gf_pod_spec *hp, uint32_t k,
			      uint64_t *total)
{
	struct gf_pod_spec rp = gf_loop_pod_of(r);

	for (uint32_t m = r->nbound; m-- > 0;) {
		uint32_t node = L->members[r->member0 + m].node;

		if (gf_cluster_unbind(L->scratch, node, &rp, L->members[r->member0 + m].gpus))
			return GF_STATE;
		refresh_slots(L, node, hp, k, total);
	}
	return GF_OK;
}

/*
 * Placement m of the planned job (start t, end t + estimate) is fine for the
 * reservations planned before it that start inside (t, end): bound into their
 * shadows.  On failure nothing stays bound.
 */
static bool fits_later_shadows(gf_loop *L, const struct gf_pod_spec *p, const struct member *m, uint32_t n,
			       int64_t t, int64_t end)
{
	for (size_t r = 0; r < L->nres; r++) {
		int64_t rt = res_start(L, &L->res[r]);

		if (rt <= t || rt >= end)
			continue;
		if (!gf_loop_bind_pods(L->res[r].shadow, p, m, n)) {
			while (r-- > 0) {
				rt = res_start(L, &L->res[r]);
				if (rt > t && rt < end)
					gf_loop_unbind_pods(L->res[r].shadow, p, m, n);
			}
			return false;
		}
	}
	return true;
}

/* The next time something changes in the plan's timeline after t; INT64_MAX if nothing. */
static int64_t next_change(const gf_loop *L, size_t idx, int64_t t)
{
	int64_t next = INT64_MAX;

	if (idx < L->nrunning)
		next = gf_loop_max64(L->now, gf_loop_expected_end(&L->jobs[L->running[idx]]));
	for (size_t r = 0; r < L->nres; r++) {
		int64_t rt = res_start(L, &L->res[r]), re = res_end(L, &L->res[r]);

		if (rt > t && rt < next)
			next = rt;
		if (re > t && re < next)
			next = re;
	}
	return next;
}

/* Try the planned job at time t on the scratch: the policy's placement, else its previous plan. */
static bool try_plan_at(gf_loop *L, const struct job *j, const struct gf_pod_spec *p, bool place,
			const struct member *prev, int64_t t, struct member *out)
{
	uint32_t k = j->npods;
	int64_t end = t + j->estimate;
	const uint64_t *adm = gf_loop_admission(L, (uint32_t)(j - L->jobs));

	if (place && gf_loop_place_pods(L, L->planner, L->scratch, p, adm, out, 0, k)) {
		if (fits_later_shadows(L, p, out, k, t, end))
			return true;
		gf_loop_unbind_pods(L->scratch, p, out, k);
	}
	if (prev && gf_loop_bind_pods(L->scratch, p, prev, k)) {
		if (fits_later_shadows(L, p, prev, k, t, end)) {
			memcpy(out, prev, k * sizeof(*out));
			return true;
		}
		gf_loop_unbind_pods(L->scratch, p, prev, k);
	}
	return false;
}

/*
 * Plan job h behind reservations res[0..nres): on the scratch, release the
 * running jobs in order of expected end and start/end the earlier
 * reservations at their times; the first time h fits (and fits every earlier
 * reservation's shadow it would overlap) is its reservation, appended as
 * res[nres].  No time found (cannot happen for a resolvable job): nothing
 * appended.
 */
static gf_err plan(gf_loop *L, uint32_t h)
{
	struct job *j = &L->jobs[h];
	struct gf_pod_spec p = gf_loop_pod_of(j);
	uint32_t k = j->npods;
	const struct member *prev = find_prev(L, h);
	struct reservation *res = &L->res[L->nres];
	uint64_t total = 0, tried = 0;
	size_t idx = 0;
	int64_t t = L->now;
	bool boundary = true, place;
	gf_err err;

	L->stats.plans++;
	L->cycle_plans++;
	if (gf_grow(&res->members, &res->cap, k, sizeof(*res->members), 64))
		return GF_NOMEM;
	if (!res->shadow && (err = gf_cluster_create(L->specs, L->nnodes, &res->shadow)))
		return err;
	if ((err = gf_loop_sync_scratch(L)))
		return err;
	/* per-node counts are kept from the last plan for the same shape where the node is unchanged */
	if (L->slots_shape != j->shape)
		memset(L->slots_ver, 0, L->nnodes * sizeof(*L->slots_ver));
	L->slots_shape = j->shape;
	for (size_t i = 0; i < L->nnodes; i++) {
		const struct gf_node *nd = gf_cluster_node(L->scratch, i);

		if (L->slots_ver[i] != nd->version) {
			L->node_slots[i] = gf_loop_node_slots(L->cat, nd, &p, k);
			L->slots_ver[i] = nd->version;
		}
		total += L->node_slots[i];
	}
	for (;;) {
		/* everything that happens at t: ends (running jobs, earlier reservations), then starts */
		while (idx < L->nrunning && gf_loop_max64(L->now, gf_loop_expected_end(&L->jobs[L->running[idx]])) <= t)
			if ((err = release_running(L, &L->jobs[L->running[idx++]], &p, k, &total)))
				return err;
		for (size_t r = 0; r < L->nres; r++)
			if (res_end(L, &L->res[r]) == t && res_start(L, &L->res[r]) < t &&
			    (err = apply_res(L, &L->res[r], false, &p, k, &total)))
				return err;
		for (size_t r = 0; r < L->nres; r++) {
			if (res_start(L, &L->res[r]) == t && (err = apply_res(L, &L->res[r], true, &p, k, &total)))
				return err;
			if (res_start(L, &L->res[r]) == t || res_end(L, &L->res[r]) == t)
				boundary = true;
		}
		/*
		 * The policy's placement is tried when the greedy count allows it;
		 * behind earlier reservations (conservative) only when the count
		 * grew or a reservation started or ended since the last failed try,
		 * since a placement refused by a later shadow is otherwise tried
		 * again at every end (O(nodes) each).  Any plan found is valid; this
		 * only may find a later one.
		 */
		place = total >= k && (L->nres == 0 || boundary || total > tried);
		if (try_plan_at(L, j, &p, place, prev, t, res->members))
			break;
		if (place) {
			tried = total;
			boundary = false;
		}
		t = next_change(L, idx, t);
		if (t == INT64_MAX)
			return GF_OK;	/* never fits: no reservation (gf_loop_start_time says so) */
	}
	res->holder = h;
	res->time = t;
	res->end = t + j->estimate;
	res->displaced = false;
	for (size_t i = 0; i < L->nnodes; i++)
		if (gf_cluster_copy_node(res->shadow, L->scratch, i))
			return GF_STATE;
	L->nres++;
	if (j->promised < 0)
		j->promised = t;
	/* a cycle runs at t even if no job ends exactly then */
	return t > L->now ? gf_events_push(&L->events, t, GF_EV_WAKE, h) : GF_OK;
}

/* Every node but those of reservations [0, n). */
static const uint64_t *mask_without(gf_loop *L, size_t n)
{
	memset(L->mask, 0xff, L->mask_words * sizeof(*L->mask));
	for (size_t r = 0; r < n; r++)
		for (uint32_t m = 0; m < L->jobs[L->res[r].holder].npods; m++)
			L->mask[L->res[r].members[m].node / 64] &= ~(1ULL << (L->res[r].members[m].node % 64));
	return L->mask;
}

/* Bind reservation i's planned nodes and GPUs for its holder in the real cluster. */
static bool bind_reserved(gf_loop *L, size_t i)
{
	const struct reservation *r = &L->res[i];
	struct job *j = &L->jobs[r->holder];
	struct gf_pod_spec p = gf_loop_pod_of(j);

	const uint64_t *a = gf_loop_admission(L, r->holder);

	for (uint32_t m = 0; a && m < j->npods; m++)
		if (!(a[r->members[m].node / 64] >> (r->members[m].node % 64) & 1)) {
			L->res_unadmitted = true;	/* a planned node no longer admits it */
			return false;
		}
	if (!gf_loop_quota_admits(L, j, r->members)) {
		L->quota_refused = true;
		return false;
	}
	if (!gf_loop_bind_pods(L->real, &p, r->members, j->npods))
		return false;
	memcpy(&L->members[j->member0], r->members, j->npods * sizeof(*r->members));
	gf_loop_assume(L, j, j->npods);
	return true;
}

/* Does reservation x's shadow hold reservation i's planned binds? (index order = plan order) */
static bool shadow_holds(const gf_loop *L, size_t x, size_t i)
{
	int64_t ti = L->res[i].time, tx = L->res[x].time;

	return tx < L->res[i].end && (x > i ? ti <= tx : ti < tx);
}

/* Move holder i's binds in the other shadows from planned (from) to actual (to, ending at end). */
static bool move_in_shadows(gf_loop *L, size_t i, const struct gf_pod_spec *p, const struct member *from,
			    const struct member *to, uint32_t n, int64_t end)
{
	size_t x;

	for (x = 0; x < L->nres; x++)
		if (x != i && shadow_holds(L, x, i))
			gf_loop_unbind_pods(L->res[x].shadow, p, from, n);
	for (x = 0; x < L->nres; x++) {
		if (x == i || L->res[x].time >= end)
			continue;
		if (!gf_loop_bind_pods(L->res[x].shadow, p, to, n))
			break;
	}
	if (x == L->nres)
		return true;
	while (x-- > 0)
		if (x != i && L->res[x].time < end)
			gf_loop_unbind_pods(L->res[x].shadow, p, to, n);
	for (x = 0; x < L->nres; x++)
		if (x != i && shadow_holds(L, x, i))
			gf_loop_bind_pods(L->res[x].shadow, p, from, n);
	return false;
}

/*
 * Holder of reservation i (= the next one in queue order) may start: on the
 * policy's placement if the other reservations still hold with it there
 * instead of where it was planned, else on its planned nodes once its time
 * has come.  *replan: it started later than planned (the other plans
 * assumed an earlier end).
 */
static bool try_holder(gf_loop *L, size_t i, bool *replan)
{
	struct reservation *r = &L->res[i];
	struct job *j = &L->jobs[r->holder];
	struct gf_pod_spec p = gf_loop_pod_of(j);

	*replan = false;
	L->res_unadmitted = false;
	if (gf_loop_try_job(L, r->holder, NULL)) {
		if (move_in_shadows(L, i, &p, r->members, &L->members[j->member0], j->npods,
				    L->now + j->estimate))
			return true;
		gf_loop_forget(L, j);
	}
	if (r->time > L->now)
		return false;
	if (bind_reserved(L, i)) {
		*replan = L->now > r->time;
		return true;
	}
	if (!r->displaced && !L->quota_refused && !L->res_unadmitted)
		L->stats.late++;	/* a promise broken without a higher priority taking it: a bug */
	return false;
}

/* A job behind reservations [0, nahead): start it only if it delays none of them. */
static bool try_backfill(gf_loop *L, uint32_t id, size_t nahead)
{
	struct job *j = &L->jobs[id];
	struct shape *s = &L->shapes[j->shape];
	bool own = !gf_loop_admission(L, id);	/* an admission mask: the shape's memo is not its own */
	bool memo = own && s->inadm_plan == L->stats.plans && s->inadm_freed == L->nfreed &&
		    nahead >= s->inadm_nahead;

	if (memo && j->estimate >= s->inadm_est) {
		L->why = GF_LOOP_WHY_RESERVED;
		return false;
	}
	if (!gf_loop_try_job(L, id, NULL))
		return false;
	if (admissible(L, j, 0, nahead))
		return true;
	gf_loop_forget(L, j);
	L->why = GF_LOOP_WHY_RESERVED;	/* it fits now, but not without delaying a reservation */
	if (gf_loop_try_job(L, id, mask_without(L, nahead))) {
		if (admissible(L, j, 0, nahead))
			return true;
		gf_loop_forget(L, j);
	}
	if (own && (!memo || j->estimate < s->inadm_est)) {
		s->inadm_plan = L->stats.plans;
		s->inadm_freed = L->nfreed;
		s->inadm_nahead = nahead;
		s->inadm_est = j->estimate;
	}
	return false;
}

/*
 * Job id, ahead of reservations [nahead, nres) in queue order, was just
 * bound in the real cluster: those it conflicts with give way (they were
 * promised room that a higher priority now takes), else it joins their
 * shadows.
 */
static gf_err ahead_of(gf_loop *L, uint32_t id, size_t nahead)
{
	if (nahead < L->nres && !admissible(L, &L->jobs[id], nahead, L->nres)) {
		for (size_t r = nahead; r < L->nres; r++)
			L->res[r].displaced = true;
		return gf_loop_drop_reservations(L, nahead);
	}
	return GF_OK;
}

/*
 * The preemption rule: a blocked job whose reservation i (NONE: it has
 * none) is later than now + preempt_wait, i.e. that does not fit soon
 * without it, evicts lower priorities if that makes it fit now.  On success
 * its reservation goes and the later ones give way where it conflicts.
 */
static gf_err preempt_unless_soon(gf_loop *L, uint32_t id, size_t nahead, size_t i, bool *ok)
{
	gf_err err;

	*ok = false;
	if (i != NONE && L->res[i].time <= L->now + L->cfg.preempt_wait)
		return GF_OK;	/* it fits soon: wait for the reservation */
	if ((err = gf_loop_try_preempt(L, id, nahead, ok)) || !*ok)
		return err;
	if (i != NONE)
		remove_res(L, i);
	return ahead_of(L, id, nahead);
}

bool gf_loop_backfill_borrower(gf_loop *L, uint32_t id)
{
	bool ok = L->nres == 0 ? gf_loop_try_job(L, id, NULL) : try_backfill(L, id, L->nres);

	if (ok && L->nres > 0)
		L->stats.backfilled++;
	return ok;
}

/* A job refused by its queue's quota: only a reclaim (preemption) can start it now. */
static gf_err quota_reclaim(gf_loop *L, uint32_t id, size_t nahead, bool *ok)
{
	*ok = false;
	if (!gf_loop_quota_within_nominal(L, &L->jobs[id]))
		return GF_OK;
	return preempt_unless_soon(L, id, nahead, NONE, ok);
}

/*
 * One job in a backfill walk, nahead reservations passed so far (their
 * holders are ahead of it in queue order).  Sets *ok when it started.
 */
gf_err gf_loop_backfill_step(gf_loop *L, uint32_t id, size_t *nahead, bool *ok)
{
	gf_err err;

	if (*nahead < L->nres && L->res[*nahead].holder == id) {
		bool replan;

		*ok = try_holder(L, *nahead, &replan);
		if (*ok) {
			remove_res(L, *nahead);
			return replan ? gf_loop_drop_reservations(L, *nahead) : GF_OK;
		}
		if (L->res_unadmitted) {
			/* its planned nodes no longer admit it: planned again below, from now */
			L->res[*nahead].displaced = true;
			if ((err = gf_loop_drop_reservations(L, *nahead)))
				return err;
			return gf_loop_backfill_step(L, id, nahead, ok);
		}
		if (L->quota_refused) {
			/* its queue's quota, not room, holds it back: it holds no room either */
			L->res[*nahead].displaced = true;
			if ((err = gf_loop_drop_reservations(L, *nahead)))
				return err;
			return quota_reclaim(L, id, *nahead, ok);
		}
		/* still blocked: the rule is checked again in every cycle */
		if ((err = preempt_unless_soon(L, id, *nahead, *nahead, ok)) || *ok)
			return err;
		(*nahead)++;
		return GF_OK;
	}
	*ok = *nahead == 0 ? gf_loop_try_job(L, id, NULL) : try_backfill(L, id, *nahead);
	if (*ok) {
		if (*nahead > 0)
			L->stats.backfilled++;
		/* ahead of the later reservations (a higher priority): they give way if it conflicts */
		return ahead_of(L, id, *nahead);
	}
	if (L->quota_refused)	/* no reservation for room it may not take */
		return quota_reclaim(L, id, *nahead, ok);
	/* EASY: one reservation; conservative: MAX_RES, at most PLANS_PER_CYCLE new ones a cycle;
	 * per-queue: none for a job of a strict or skip-ahead queue */
	if (*nahead >= L->max_res || L->cycle_plans >= PLANS_PER_CYCLE || L->no_reserve)
		return preempt_unless_soon(L, id, *nahead, NONE, ok);
	/* blocked: it takes the next reservation; those behind it are planned again when reached */
	if ((err = gf_loop_drop_reservations(L, *nahead)) || (err = plan(L, id)))
		return err;
	if (L->nres > *nahead && L->res[*nahead].time <= L->now && bind_reserved(L, *nahead)) {
		*ok = true;	/* the fresh plan says now */
		remove_res(L, *nahead);
		return GF_OK;
	}
	if ((err = preempt_unless_soon(L, id, *nahead, L->nres > *nahead ? *nahead : NONE, ok)) || *ok)
		return err;
	if (L->nres > *nahead)
		(*nahead)++;
	return GF_OK;
}

