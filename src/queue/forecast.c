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
 */
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

gf_err gf_loop_forecast(gf_loop *L, int64_t *start)
{
	struct gf_events ends;
	struct member *planned = NULL;	/* forecast jobs' members, by order of forecast */
	uint32_t *slot = NULL;		/* job id -> its first index in planned[] */
	size_t nplanned = 0, cap = 0;
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
	if (!slot) {
		err = GF_NOMEM;
		goto out;
	}
	for (size_t r = 0; r < L->nrunning; r++) {
		const struct job *j = &L->jobs[L->running[r]];

		slot[L->running[r]] = NONE;	/* its members are in L->members */
		if ((err = gf_events_push(&ends, gf_loop_max64(gf_loop_expected_end(j), L->now), GF_EV_END,
					  L->running[r])))
			goto out;
	}
	for (size_t q = 0; q < L->npend + L->nincoming; q++) {
		const struct entry *e = q < L->npend ? &L->pend[q] : &L->incoming[q - L->npend];
		struct job *j = &L->jobs[e->job];
		struct gf_pod_spec p = gf_loop_pod_of(j);
		struct gf_event ev;

		if (start[e->job] >= 0 || j->state != GF_JOB_PENDING || j->nbound > 0)
			continue;	/* seen (kube mode: one entry per pod), or partly bound (kube) */
		if ((err = gf_loop_grow(&planned, &cap, nplanned + j->npods, sizeof(*planned))))
			goto out;
		for (;;) {
			if (gf_loop_place_pods(L, L->planner, L->scratch, &p, NULL, &planned[nplanned], 0, j->npods))
				break;
			if (!gf_events_pop(&ends, &ev)) {
				t = -1;	/* never fits: neither it nor anything after it gets an answer */
				goto out;
			}
			t = gf_loop_max64(t, ev.time);
			release(L, ev.job, slot[ev.job] == NONE ? &L->members[L->jobs[ev.job].member0]
							       : &planned[slot[ev.job]]);
			/* release every end at this time before trying again */
			while (gf_events_peek(&ends, &ev) && ev.time <= t) {
				gf_events_pop(&ends, &ev);
				release(L, ev.job, slot[ev.job] == NONE ? &L->members[L->jobs[ev.job].member0]
								       : &planned[slot[ev.job]]);
			}
		}
		start[e->job] = t;
		slot[e->job] = (uint32_t)nplanned;
		nplanned += j->npods;
		if ((err = gf_events_push(&ends, t + j->estimate, GF_EV_END, e->job)))
			goto out;
	}
	/* a holder's answer is its reservation (unless its time passed: a higher priority took the room) */
	for (size_t r = 0; r < L->nres; r++)
		if (L->jobs[L->res[r].holder].state == GF_JOB_PENDING && L->res[r].time >= L->now)
			start[L->res[r].holder] = L->res[r].time;
out:
	gf_events_release(&ends);
	free(planned);
	free(slot);
	return err;	/* the scratch is re-synchronised from the real cluster before its next use */
}
