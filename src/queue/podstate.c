/*
 * queue/podstate.c - pod states and the pending FIFO (see podstate.h).
 *
 * The FIFO is an array with a head: push at the end (the array moves down
 * when the head has advanced, doubles when full), take at the head.
 */
#include "queue/podstate.h"
#include "core/grow.h"

#include <stdlib.h>
#include <string.h>

void gf_pod_init(struct gf_pod_rec *r)
{
	memset(r, 0, sizeof(*r));
	r->node = -1;
	r->st = GF_POD_IGNORED;
}

void gf_podq_release(struct gf_podq *q)
{
	free(q->id);
	memset(q, 0, sizeof(*q));
}

static gf_err podq_push(struct gf_podq *q, uint32_t id)
{
	if (q->head + q->len == q->cap) {
		if (q->head) {
			memmove(q->id, q->id + q->head, q->len * sizeof(*q->id));
			q->head = 0;
		}
		if (gf_grow(&q->id, &q->cap, q->len + 1, sizeof(*q->id), 256))
			return GF_NOMEM;
	}
	q->id[q->head + q->len++] = id;
	return GF_OK;
}

gf_err gf_pod_want(struct gf_podq *q, struct gf_pod_rec *r, uint32_t id)
{
	r->st = GF_POD_PENDING;
	r->invalid = false;
	if (r->queued)
		return GF_OK;
	if (podq_push(q, id)) {
		r->parked = true;
		return GF_NOMEM;
	}
	r->queued = true;
	r->parked = false;
	r->hinted = false;
	return GF_OK;
}

gf_err gf_pod_want_first(struct gf_podq *q, struct gf_pod_rec *const *r, const uint32_t *id, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		k += !r[i]->queued;
	if (!k)
		return GF_OK;
	size_t cap = gf_grow_cap(q->cap, q->len + k, 256, sizeof(uint32_t));
	uint32_t *v = cap ? malloc(cap * sizeof(*v)) : NULL;
	if (!v)
		return GF_NOMEM;
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		r[i]->st = GF_POD_PENDING;
		r[i]->invalid = false;
		if (r[i]->queued)
			continue;
		r[i]->queued = true;
		r[i]->parked = false;
		r[i]->hinted = false;
		v[m++] = id[i];
	}
	if (q->len)
		memcpy(v + m, q->id + q->head, q->len * sizeof(*v));
	free(q->id);
	q->id = v;
	q->head = 0;
	q->len += m;
	q->cap = cap;
	return GF_OK;
}

bool gf_podq_take(struct gf_podq *q, struct gf_pod_rec *(*rec)(void *ud, uint32_t id), void *ud,
		  uint32_t *id)
{
	while (q->len) {
		uint32_t i = q->id[q->head++];
		q->len--;
		struct gf_pod_rec *r = rec(ud, i);
		if (!r || !r->queued || r->st != GF_POD_PENDING)
			continue;
		r->queued = false;
		*id = i;
		return true;
	}
	q->head = 0;
	return false;
}

void gf_pod_failed(struct gf_pod_rec *r, bool invalid, double now, uint64_t seen)
{
	r->parked = true;
	r->invalid = invalid;
	r->tried_at = now;
	gf_retry_failed(&r->retry, now, seen);
}

void gf_pod_skip(struct gf_pod_rec *r)
{
	r->parked = true;
}

void gf_pod_assume(struct gf_pod_rec *r, int32_t node, double now, uint64_t seen)
{
	r->st = GF_POD_ASSUMED;
	r->node = node;
	r->queued = r->parked = false;
	r->tried_at = now;
	gf_retry_reset(&r->retry, seen);
}

void gf_pod_confirm(struct gf_pod_rec *r)
{
	r->st = GF_POD_BOUND;
}

void gf_pod_bind(struct gf_pod_rec *r, int32_t node)
{
	r->st = GF_POD_BOUND;
	r->node = node;
	r->queued = r->parked = false;
}

void gf_pod_ignore(struct gf_pod_rec *r)
{
	r->st = GF_POD_IGNORED;
	r->queued = r->parked = false;
}

void gf_pod_forget(struct gf_podq *q, struct gf_pod_rec *r, uint32_t id, bool ours, bool requeue,
		   double now, uint64_t seen)
{
	r->node = -1;
	if (!ours) {
		gf_pod_ignore(r);
		return;
	}
	r->st = GF_POD_PENDING;
	if (requeue) {
		(void)gf_pod_want(q, r, id);
		return;
	}
	/* as a failed attempt: back after its backoff, on a change (seen: one change pending) */
	gf_pod_failed(r, false, now, seen);
}

enum gf_pod_due gf_pod_due(const struct gf_pod_rec *r, const struct gf_changelog *g, double now,
			   double sweep, double *wake)
{
	if (now - r->tried_at >= sweep)
		return GF_DUE_SWEEP;
	if (!gf_changelog_since(g, &r->retry)) {
		if (r->tried_at + sweep < *wake)
			*wake = r->tried_at + sweep;
		return GF_DUE_NO;
	}
	if (now < r->retry.not_before) {
		if (r->retry.not_before < *wake)
			*wake = r->retry.not_before;
		return GF_DUE_NO;
	}
	return GF_DUE_CHANGE;
}
