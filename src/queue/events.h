/*
 * queue/events.h - the event heap of the time loop.
 *
 * A binary min-heap of events keyed by (time, seq): seq comes from a counter
 * bumped by every push, so events at the same virtual time pop in the order
 * they were pushed and a replay is byte-identical run after run (git's
 * prio_queue and libuv's timers do the same).  The clock is the caller's: the
 * heap only orders numbers.
 *
 * Embeddable: gf_events_init() / gf_events_release().  push is O(log n)
 * amortised (the array doubles), pop O(log n), peek O(1).
 */
#ifndef GF_QUEUE_EVENTS_H
#define GF_QUEUE_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

enum gf_event_kind {
	GF_EV_ARRIVAL,	/* a job arrives and joins the pending queue */
	GF_EV_END,	/* a running job ends and frees what it holds */
	GF_EV_WAKE,	/* nothing happens but a cycle runs (a reservation's time) */
};

struct gf_event {
	int64_t time;
	uint64_t seq;
	uint32_t job;
	uint8_t kind;	/* enum gf_event_kind */
};

struct gf_events {
	struct gf_event *ev;	/* owned */
	size_t n, cap;
	uint64_t next_seq;
};

void gf_events_init(struct gf_events *h);
void gf_events_release(struct gf_events *h);

/* Add an event.  Errors: GF_NOMEM (the heap is then unchanged). */
gf_err gf_events_push(struct gf_events *h, int64_t time, enum gf_event_kind kind, uint32_t job);

/* The earliest event into *out without removing it; false if the heap is empty. */
bool gf_events_peek(const struct gf_events *h, struct gf_event *out);

/* Remove the earliest event into *out; false if the heap is empty. */
bool gf_events_pop(struct gf_events *h, struct gf_event *out);

/*
 * Job ids change (the loop compacts its job records): an event of job j < n
 * now names map[j] (UINT32_MAX: a job that is gone; its event still pops at
 * its time, and does nothing).  The order stays (the key is (time, seq)).
 * O(events).
 */
void gf_events_remap(struct gf_events *h, const uint32_t *map, size_t n);

#endif /* GF_QUEUE_EVENTS_H */
