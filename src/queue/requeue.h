/*
 * queue/requeue.h - requeueing parked pods without storms.
 *
 * A pod that found no node is parked.  It comes back for another attempt
 * only when something happened that can make it fit (kube-scheduler's
 * queueing hints), and never before its backoff (1 s doubling to 10 s after
 * each failed attempt, as kube-scheduler's podInitialBackoff /
 * podMaxBackoff).  What can make a parked pod fit is a change to one node:
 * resources freed there, its admission changed (a taint removed, an
 * uncordon, a label), or the whole node set changed.  Changes go into a
 * change log (a ring of node numbers with absolute sequence numbers); a pod
 * remembers the log position of its last attempt.  Before a new attempt the
 * caller asks gf_requeue_worth_trying(): the pod failed on every node at its
 * last attempt and only the logged nodes changed since, so unless one of them
 * admits and fits the pod now, a new attempt would fail again and is
 * skipped (no attempt, no Event, the backoff unchanged).  An entry
 * GF_CHANGE_ALL (or a pod further behind than the ring holds) always says
 * yes.
 *
 * FailedScheduling Events are aggregated per pod and reason: the reason is
 * the set of refusal kinds (enum gf_why) that the attempt saw, never the
 * message (whose node counts change with every node update), so a pod gets
 * one Event per reason set and at most one more per `every` seconds.
 *
 * Engine code: no I/O, no clock (times are the caller's numbers, seconds).
 */
#ifndef GF_QUEUE_REQUEUE_H
#define GF_QUEUE_REQUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cluster/admit.h"
#include "cluster/cluster.h"
#include "core/error.h"

#define GF_BACKOFF_INITIAL_S 1.0
#define GF_BACKOFF_MAX_S 10.0

/* Per-pod retry state (16 bytes). */
struct gf_retry {
	double not_before;	/* no attempt before this time */
	uint32_t failures;	/* failed attempts in a row */
	uint32_t seen;		/* change log position at the last attempt (low 32 bits) */
};

/* The backoff after n failures in a row (n >= 1): 1, 2, 4, 8, 10, 10 ... seconds. */
double gf_backoff_delay(uint32_t n);

/* A failed attempt at time now, the change log at position seen. */
void gf_retry_failed(struct gf_retry *r, double now, uint64_t seen);

/* A successful attempt (or a pod that changed): no backoff, next attempt at once. */
void gf_retry_reset(struct gf_retry *r, uint64_t seen);

/* ---- the change log --------------------------------------------------------- */

#define GF_CHANGE_ALL (-1)	/* every node may have changed (the node set was rebuilt) */
#define GF_CHANGELOG_CAP 1024	/* a pod further behind than this is tried anyway */

struct gf_changelog {
	int32_t node[GF_CHANGELOG_CAP];	/* cluster node indices (or GF_CHANGE_ALL) */
	uint64_t end;			/* entries ever added */
};

/* Record that node (a cluster index, or GF_CHANGE_ALL) changed. */
void gf_changelog_add(struct gf_changelog *g, int32_t node);

/* Entries since the pod's last attempt. */
bool gf_changelog_since(const struct gf_changelog *g, const struct gf_retry *r);

/*
 * Is another attempt of a parked pod worth making now?  Yes when a node
 * logged since r->seen admits (rules, gf_admit_why) and fits (eff; eff NULL:
 * the pod's request could not be resolved, then only GF_CHANGE_ALL helps) the
 * pod now, or the log says GF_CHANGE_ALL or has been overwritten.  No: r->seen
 * moves to the end of the log.
 */
bool gf_requeue_worth_trying(const struct gf_changelog *g, struct gf_retry *r, const gf_cluster *c,
			     const struct gf_catalog *cat, const struct gf_node_rules *rules,
			     const struct gf_pod_rules *p, const struct gf_pod_spec *eff);

/* ---- Event aggregation ------------------------------------------------------- */

struct gf_report {
	uint64_t key;		/* the reason last reported (0 = never) */
	double at;		/* and when */
};

/* The aggregation key of an attempt that saw counts[why] refusals: the set of kinds. */
uint64_t gf_report_key(const size_t counts[GF_WHY_COUNT_]);

/* Report reason key (non-zero) at time now?  Yes if it differs from the last or every s passed. */
bool gf_report_due(struct gf_report *r, uint64_t key, double now, double every);

#endif /* GF_QUEUE_REQUEUE_H */
