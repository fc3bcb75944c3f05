/*
 * queue/events.c - binary min-heap of (time, seq) events.
 *
 * Order: a before b iff a.time < b.time, or equal times and a.seq < b.seq.
 * seq values are distinct, so the order is total and the pop sequence does
 * not depend on the heap's internal layout.
 */
#include <stdlib.h>

#include "queue/events.h"
#include "core/grow.h"

void gf_events_init(struct gf_events *h)
{
	h->ev = NULL;
	h->n = h->cap = 0;
	h->next_seq = 0;
}

void gf_events_release(struct gf_events *h)
{
	free(h->ev);
	gf_events_init(h);
}

static bool before(const struct gf_event *a, const struct gf_event *b)
{
	return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

gf_err gf_events_push(struct gf_events *h, int64_t time, enum gf_event_kind kind, uint32_t job)
{
	size_t i;

	if (h->n == h->cap && gf_grow(&h->ev, &h->cap, h->n + 1, sizeof(*h->ev), 256))
		return GF_NOMEM;
	struct gf_event e = { .time = time, .seq = h->next_seq++, .job = job, .kind = (uint8_t)kind };

	for (i = h->n++; i > 0; i = (i - 1) / 2) {
		size_t parent = (i - 1) / 2;

		if (!before(&e, &h->ev[parent]))
			break;
		h->ev[i] = h->ev[parent];
	}
	h->ev[i] = e;
	return GF_OK;
}

bool gf_events_peek(const struct gf_events *h, struct gf_event *out)
{
	if (h->n == 0)
		return false;
	*out = h->ev[0];
	return true;
}

bool gf_events_pop(struct gf_events *h, struct gf_event *out)
{
	size_t i = 0;

	if (h->n == 0)
		return false;
	*out = h->ev[0];
	struct gf_event last = h->ev[--h->n];

	for (;;) {
		size_t l = 2 * i + 1, m = i;

		if (l >= h->n)
			break;
		m = l + 1 < h->n && before(&h->ev[l + 1], &h->ev[l]) ? l + 1 : l;
		if (!before(&h->ev[m], &last))
			break;
		h->ev[i] = h->ev[m];
		i = m;
	}
	if (h->n > 0)
		h->ev[i] = last;
	return true;
}

void gf_events_remap(struct gf_events *h, const uint32_t *map, size_t n)
{
	for (size_t r = 0; r < h->n; r++)
		if (h->ev[r].job < n)
			h->ev[r].job = map[h->ev[r].job];
}
