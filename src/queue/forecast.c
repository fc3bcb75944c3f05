/*
 * queue/forecast.c - "when will I start?" for every pending job at once.
 *
 * A reservation holder's answer is its reservation (a promise: backfill
 * never delays it while estimates hold).  Every other pending job gets the
 * start of the in-order schedule: on the scratch copy of the cluster, the
 * pending jobs are taken in queue order; each starts at the first expected
 * end (of a running job or of a job forecast before it), not earlier than
 * the job before it, at which the placement policy fits it; it then holds
 * its room for its estimate.  No job passes another in this schedule, so it
 * ignores the backfill that may start a job sooner, and the arrivals of
 * higher priorities and evictions that may start it later: an estimate,
 * not a promise (docs/replay.md measures how close it comes).
 *
 * Cost: O((running + pending) log) for the end heap plus one placement per
 * pending job and one release per end passed: for a query, not per cycle.
 * A placement tries every node, so the placements dominate (5,000 nodes,
 * 124,667 pods running, 25,333 waiting: 0.8-2 s, docs/scheduler.md); two
 * things keep them down without changing any answer:
 *   - a shape that found no room is tried again only when a node released
 *     since then fits one of its pods (the loop's may_fit memo, with the
 *     forecast's own log of released nodes): releases add room only there
 *     and placements only take room, so a try without one fails;
 *   - gf_loop_forecast_upto stops at a horizon (the schedule is in order,
 *     so every job after one that starts past it starts past it too) or
 *     after a number of pending jobs (the first ones in queue order get the
 *     answers the whole forecast gives them: later jobs never change an
 *     earlier one's); the jobs after the stop get -1.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "queue/loop_impl.h"

/* A forecast job (or a running one) ends: its room comes back in the scratch. */
static void release(gf_loop *L, uint32_t id, const struct member *m)
{
	const struct job *j = &L->jobs[id];
	struct gf_pod_spec p = gf_loop_pod_of(j);

	gf_loop_unbind_pods(L->scratch, &p, m, j->npods);
}

/* The forecast's memo: released nodes in order, and per shape the log's length when it last found no room. */
struct memo {
	uint32_t *log;
	size_t n, cap;
	size_t *fail;	/* per shape; NO_FAIL: may fit */
};

static gf_err release_logged(gf_loop *L, struct memo *mo, uint32_t id, const struct member *m)
{
	const struct job *j = &L->jobs[id];

	release(L, id, m);
	if (gf_grow(&mo->log, &mo->cap, mo->n + j->npods, sizeof(*mo->log), 64))
		return GF_NOMEM;
	for (uint32_t k = 0; k < j->npods; k++)
		mo->log[mo->n++] = m[k].node;
	return GF_OK;
}

/* Can a pod like p fit now, given that its shape found no room when the log was fail long? */
static bool memo_may_fit(gf_loop *L, const struct memo *mo, uint32_t shape, const struct gf_pod_spec *p)
{
	if (mo->fail[shape] == NO_FAIL)
		return true;
	for (size_t k = mo->fail[shape]; k < mo->n; k++)
		if (gf_cluster_fits(L->scratch, L->cat, mo->log[k], p))
			return true;
	return false;
}

gf_err gf_loop_forecast(gf_loop *L, int64_t *start)
{
	return gf_loop_forecast_upto(L, start, INT64_MAX, SIZE_MAX);
}

gf_err gf_loop_forecast_upto(gf_loop *L, int64_t *start, int64_t horizon, size_t max_jobs)
{
	struct gf_events ends;
	struct member *planned = NULL;	/* forecast jobs' members, by order of forecast */
	uint32_t *slot = NULL;		/* job id -> its first index in planned[] */
	struct memo mo = { 0 };
	struct gf_rng rng = L->rng;	/* a forecast draws nothing the loop's own decisions would see */
	size_t nplanned = 0, cap = 0, nforecast = 0;
	int64_t t = L->now;
	gf_err err;

	for (size_t i = 0; i < L->njobs; i++) {
		const struct job *j = &L->jobs[i];

		start[i] = j->state == GF_JOB_RUNNING || j->state == GF_JOB_DONE ? j->start : -1;
	}
	if ((err = gf_loop_sync_scratch(L)))
		return err;
	gf_events_init(&ends);
	slot = malloc((L->njobs ? L->njobs : 1) * sizeof(*slot));
	mo.fail = malloc((L->nshapes ? L->nshapes : 1) * sizeof(*mo.fail));
	if (!slot || !mo.fail) {
		err = GF_NOMEM;
		goto out;
	}
	for (size_t s = 0; s < L->nshapes; s++)
		mo.fail[s] = NO_FAIL;
	for (size_t r = 0; r < L->nrunning; r++) {
		const struct job *j = &L->jobs[L->running[r]];

		slot[L->running[r]] = NONE;	/* its members are in L->members */
		if ((err = gf_events_push(&ends, gf_loop_max64(gf_loop_expected_end(j), L->now), GF_EV_END,
					  L->running[r])))
			goto out;
	}
	for (size_t q = 0; q < L->npend + L->nincoming && t <= horizon && nforecast < max_jobs; q++) {
		const struct entry *e = q < L->npend ? &L->pend[q] : &L->incoming[q - L->npend];
		struct job *j = &L->jobs[e->job];
		struct gf_pod_spec p = gf_loop_pod_of(j);
		struct gf_event ev;

		if (start[e->job] >= 0 || j->state != GF_JOB_PENDING || j->nbound > 0)
			continue;	/* seen (kube mode: one entry per pod), or partly bound (kube) */
		if ((err = gf_grow(&planned, &cap, nplanned + j->npods, sizeof(*planned), 64)))
			goto out;
		for (;;) {
			if (memo_may_fit(L, &mo, j->shape, &p) &&
			    gf_loop_place_pods(L, L->planner, L->scratch, &p, NULL, &planned[nplanned], 0, j->npods))
				break;
			mo.fail[j->shape] = mo.n;
			if (!gf_events_pop(&ends, &ev)) {
				t = -1;	/* never fits: neither it nor anything after it gets an answer */
				goto out;
			}
			t = gf_loop_max64(t, ev.time);
			if (t > horizon)
				goto holders;	/* it and every job after it start past the horizon */
			if ((err = release_logged(L, &mo, ev.job,
						  slot[ev.job] == NONE ? &L->members[L->jobs[ev.job].member0]
								       : &planned[slot[ev.job]])))
				goto out;
			/* release every end at this time before trying again */
			while (gf_events_peek(&ends, &ev) && ev.time <= t) {
				gf_events_pop(&ends, &ev);
				if ((err = release_logged(L, &mo, ev.job,
							  slot[ev.job] == NONE ? &L->members[L->jobs[ev.job].member0]
									       : &planned[slot[ev.job]])))
					goto out;
			}
		}
		mo.fail[j->shape] = NO_FAIL;
		start[e->job] = t;
		slot[e->job] = (uint32_t)nplanned;
		nplanned += j->npods;
		nforecast++;
		if ((err = gf_events_push(&ends, t + j->estimate, GF_EV_END, e->job)))
			goto out;
	}
holders:
	/* a holder's answer is its reservation (unless its time passed: a higher priority took the room) */
	for (size_t r = 0; r < L->nres; r++)
		if (L->jobs[L->res[r].holder].state == GF_JOB_PENDING && L->res[r].time >= L->now)
			start[L->res[r].holder] = L->res[r].time;
out:
	L->rng = rng;
	gf_events_release(&ends);
	free(planned);
	free(slot);
	free(mo.log);
	free(mo.fail);
	return err;	/* the scratch is re-synchronised from the real cluster before its next use */
}
