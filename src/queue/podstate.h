/*
 * queue/podstate.h - a pod's scheduling state and the pending FIFO, changed
 * only through named transitions.
 *
 * States: IGNORED (not ours and not bound, or finished), PENDING (ours and
 * unbound: queued, or parked after a failed attempt), ASSUMED (placed,
 * binding in flight: resources reserved), BOUND (resources accounted).
 * Verbs: gf_pod_want (PENDING and queued: a new pod, or one whose request
 * changed), gf_podq_take (the next queued pod, stale entries skipped),
 * gf_pod_failed (parked, with its backoff), gf_pod_assume, gf_pod_confirm,
 * gf_pod_forget (ASSUMED back to PENDING), gf_pod_bind (bound by anyone),
 * gf_pod_ignore, and gf_pod_due (should a parked pod go back: requeue.h).
 *
 * A record is the engine's whole per-pod state (sizeof(struct gf_pod_rec),
 * about 250 bytes: the request it is placed with, GPUs, node, state, backoff,
 * last Event); the adapter keeps its own objects beside it and the id <->
 * name map.  The FIFO holds record ids (the caller's indices); an entry is
 * live while its pod is PENDING and queued, so a pod leaves the queue by a
 * flag, in O(1), and a stale entry is dropped when it reaches the head.
 *
 * Engine code: no I/O, no clock (times are the caller's seconds).
 */
#ifndef GF_QUEUE_PODSTATE_H
#define GF_QUEUE_PODSTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cluster/model.h"
#include "core/error.h"
#include "queue/requeue.h"

enum gf_pod_state { GF_POD_IGNORED, GF_POD_PENDING, GF_POD_ASSUMED, GF_POD_BOUND };

struct gf_pod_rec {
	struct gf_pod_spec eff;		/* what is bound, or what the last attempt asked */
	uint8_t gpus[GF_MAX_GPUS];	/* ASSUMED / BOUND */
	int32_t node;			/* the caller's node id (ASSUMED / BOUND); -1 unknown */
	uint8_t st;			/* enum gf_pod_state */
	bool counted;			/* bound in the engine cluster (the caller's flag) */
	bool queued, parked;		/* PENDING: in the FIFO / waiting for a change */
	bool invalid;			/* parked until the pod itself changes */
	bool hinted;			/* queued by a logged change: check it first (requeue.h) */
	bool eff_ok;			/* eff is the last failed attempt's request */
	double tried_at;		/* the last attempt */
	struct gf_retry retry;
	struct gf_report report;
};

/* A fresh record: IGNORED, no node. */
void gf_pod_init(struct gf_pod_rec *r);

struct gf_podq {
	uint32_t *id;
	size_t head, len, cap;
};

void gf_podq_release(struct gf_podq *q);

/*
 * PENDING and queued (unless already queued): id is r's index for the
 * caller.  GF_NOMEM leaves r PENDING and parked (the next sweep retries it).
 */
gf_err gf_pod_want(struct gf_podq *q, struct gf_pod_rec *r, uint32_t id);

/*
 * gf_pod_want for n pods at once, queued ahead of every pod queued now, in
 * the order given (pods already queued stay where they are): a caller that
 * takes pods back from a loop it is replacing keeps their order.  GF_NOMEM
 * changes nothing.
 */
gf_err gf_pod_want_first(struct gf_podq *q, struct gf_pod_rec *const *r, const uint32_t *id, size_t n);

/*
 * The next queued pod's id, live entries only: rec(ud, id) gives the record
 * of an id (NULL: gone).  Takes it off the queue (queued false).  false when
 * the queue is empty.
 */
bool gf_podq_take(struct gf_podq *q, struct gf_pod_rec *(*rec)(void *ud, uint32_t id), void *ud,
		  uint32_t *id);

/* An attempt failed at now (invalid: until the pod changes): parked, backoff. */
void gf_pod_failed(struct gf_pod_rec *r, bool invalid, double now, uint64_t seen);

/* Parked without an attempt (a retry not worth making: requeue.h). */
void gf_pod_skip(struct gf_pod_rec *r);

/* Placed on node at now: ASSUMED, backoff cleared. */
void gf_pod_assume(struct gf_pod_rec *r, int32_t node, double now, uint64_t seen);

/* The binding we made was seen: BOUND. */
void gf_pod_confirm(struct gf_pod_rec *r);

/* Bound to node (by us or anyone): BOUND, out of the queue. */
void gf_pod_bind(struct gf_pod_rec *r, int32_t node);

/* Not ours, finished or deleted: IGNORED, out of the queue. */
void gf_pod_ignore(struct gf_pod_rec *r);

/*
 * An assumption undone (binding failed): ours goes back to PENDING, queued
 * at once when requeue, else parked as after a failed attempt at now;
 * not ours becomes IGNORED.
 */
void gf_pod_forget(struct gf_podq *q, struct gf_pod_rec *r, uint32_t id, bool ours, bool requeue,
		   double now, uint64_t seen);

enum gf_pod_due { GF_DUE_NO, GF_DUE_CHANGE, GF_DUE_SWEEP };

/*
 * Should parked pod r go back into the queue at now?  CHANGE: a node was
 * logged since its last attempt and its backoff has passed; SWEEP: not tried
 * for `sweep` seconds.  NO: *wake is lowered to when it may be due (its
 * backoff's end or its sweep).
 */
enum gf_pod_due gf_pod_due(const struct gf_pod_rec *r, const struct gf_changelog *g, double now,
			   double sweep, double *wake);

#endif /* GF_QUEUE_PODSTATE_H */
