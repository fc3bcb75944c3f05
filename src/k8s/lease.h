/*
 * k8s/lease.h - leader election on a coordination.k8s.io/v1 Lease.
 *
 * The same protocol as client-go's leaderelection package (which
 * kube-scheduler and kube-controller-manager use), written here for our
 * client.  Two layers:
 *
 * gf_lease_elector: the decisions, with no I/O and no clock (the caller
 * passes its monotonic time and the wall-clock stamp to write), so every
 * rule is unit-tested.  gf_leader: a thread that runs the elector against
 * the API server every retry period.
 *
 * The rules (client-go's semantics):
 * - A candidate reads the Lease.  None: it creates one naming itself.
 * - Another holder: the record is remembered with the local time at which
 *   it was first seen *changed* (observed time); the lease is free when
 *   holderIdentity is empty or observed time + leaseDurationSeconds has
 *   passed on the candidate's own clock.  Clocks of different machines are
 *   never compared: only the local time since the record last changed.
 * - Taking or renewing is an update carrying the resourceVersion read, so
 *   of two candidates at most one succeeds (the other gets 409).  Taking
 *   it from another sets acquireTime and adds one to leaseTransitions;
 *   renewing keeps both and moves renewTime.
 * - The leader renews every retry period.  It is leading while its last
 *   successful write was *sent* less than the renew deadline ago; a
 *   standby can take the lease only a lease duration after it saw that
 *   write, which is later.  So with renew deadline < lease duration the
 *   old leader stops (gf_leader_leading() turns false) at least
 *   lease - renew seconds before anyone else may start: the margin in
 *   which a binding already sent must finish (scheduler.c bounds its
 *   binding requests by it).
 * - On a clean stop the leader releases: holderIdentity "" and
 *   leaseDurationSeconds 1, so a standby takes over at its next try.
 *
 * Beyond client-go, against two leaders:
 * - gf_leader appends a per-process nonce ("_" and 16 hex digits from
 *   getrandom) to the identity it is given, so two replicas started with
 *   the same --leader-elect-identity are still two candidates.
 * - A Lease naming us counts as ours only when it is the very object our
 *   last successful write produced: the same spec and, when the API server
 *   told us, the same resourceVersion.  One we did not write (a twin
 *   holding our name, a third party's edit, a write of ours we took for
 *   failed is the exception: its spec is recognised) is another holder's.
 * - A leader that finds the Lease rewritten under it, naming anyone, steps
 *   down at once and does not try again for a full lease duration (ours or
 *   the record's, whichever is longer), so a forged or short-lived record
 *   cannot hand leadership back and forth inside one retry period.
 */
#ifndef GF_K8S_LEASE_H
#define GF_K8S_LEASE_H

#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"
#include "k8s/client.h"
#include "k8s/codec.h"
#include "k8s/conn.h"

struct cJSON;

#define GF_LEASE_ID_MAX 256	/* holderIdentity, NUL included */
#define GF_LEASE_TIME_MAX 40	/* MicroTime "2026-12-01T15:44:04.123456Z" */

/* spec of a Lease, as leader election uses it. */
struct gf_lease_record {
	char holder[GF_LEASE_ID_MAX];		/* "" = nobody */
	int duration_s;				/* leaseDurationSeconds */
	char acquire_time[GF_LEASE_TIME_MAX];	/* "" when absent */
	char renew_time[GF_LEASE_TIME_MAX];
	int transitions;			/* leaseTransitions */
};

/*
 * Read a Lease object: its spec into *r and metadata.resourceVersion into
 * rv (rvlen its size).  Absent fields are ""/0.  GF_PARSE with err naming
 * the field when it is there but of the wrong type or too long.
 */
gf_err gf_lease_decode(const struct cJSON *lease, struct gf_lease_record *r, char *rv, size_t rvlen,
		       char *err, size_t errlen);
gf_err gf_lease_decode_text(const char *text, size_t len, struct gf_lease_record *r, char *rv,
			    size_t rvlen, char *err, size_t errlen);

/* The Lease object ns/name with spec r; rv "" for a create.  Caller cJSON_Delete()s; NULL: no memory. */
struct cJSON *gf_lease_encode(const char *ns, const char *name, const char *rv,
			      const struct gf_lease_record *r);

/* ---- the decisions ---- */

struct gf_lease_elector {
	char id[GF_LEASE_ID_MAX];
	int lease_s, renew_s, retry_s;	/* 15, 10, 2 (kube-scheduler's defaults) */
	bool have_observed;
	struct gf_lease_record observed;
	double observed_at;		/* caller's clock when observed last changed */
	bool leading;			/* our last write succeeded and we have not lost since */
	double renewed_at;		/* when that write was sent */
	bool have_written;		/* written/written_rv: our last successful write, not yet lost */
	struct gf_lease_record written;
	char written_rv[GF_K8S_RV_MAX];	/* its resourceVersion; "" when the answer did not say */
	bool have_attempt;		/* attempt: a write whose answer we did not get */
	struct gf_lease_record attempt;
	double backoff_until;		/* after stepping down: no try before this (caller's clock) */
	unsigned long stepdowns;	/* times our Lease was found rewritten by someone else */
};

/* id is copied (truncated to GF_LEASE_ID_MAX - 1); durations in seconds, <= 0: the defaults. */
void gf_lease_elector_init(struct gf_lease_elector *e, const char *id, int lease_s, int renew_s,
			   int retry_s);

enum gf_lease_step {
	GF_LEASE_CREATE,	/* no Lease: create *want */
	GF_LEASE_UPDATE,	/* take or renew: update with *want and the resourceVersion read */
	GF_LEASE_WAIT,		/* held by another, not expired: try again later */
};

/*
 * What to do having read the Lease at time now: cur is its spec, NULL when
 * it does not exist; rv its resourceVersion (NULL or "": unknown); stamp is
 * the wall-clock MicroTime to write.  Fills *want for CREATE and UPDATE.
 * WAIT also ends our leadership if the record is not the one we wrote last
 * (it was taken or rewritten: stop at once, and back off a lease duration).
 */
enum gf_lease_step gf_lease_plan(struct gf_lease_elector *e, const struct gf_lease_record *cur, const char *rv,
				 double now, const char *stamp, struct gf_lease_record *want);

/*
 * The write planned at time sent (the time taken before reading) succeeded
 * or not (409, error, no answer).  rv: the resourceVersion of the object the
 * API server answered with (NULL or "": unknown).
 */
void gf_lease_written(struct gf_lease_elector *e, bool ok, double sent, const struct gf_lease_record *want,
		      const char *rv);

/*
 * Seconds from now until another holder's lease runs out on our clock, or
 * a step-down's back-off ends, whichever is later (0: already); -1 when
 * there is nothing to wait for (none seen, released, ours).
 */
double gf_lease_expires_in(const struct gf_lease_elector *e, double now);

/* Are we the leader at time now (the renew deadline counted from the last successful write)? */
bool gf_lease_leading(const struct gf_lease_elector *e, double now);

/* The record that gives the lease up (holder "", duration 1 s), from the current one. */
void gf_lease_release_record(const struct gf_lease_record *cur, const char *stamp,
			     struct gf_lease_record *out);

/* ---- the thread ---- */

typedef struct gf_leader gf_leader;

struct gf_leader_opts {
	const struct gf_kube_conn *conn;
	const char *ns, *name;		/* the Lease */
	const char *identity;		/* "_<16 hex digits>" is appended (GF_LEASE_NONCE_LEN) */
	int lease_s, renew_s, retry_s;	/* <= 0: 15, 10, 2 */
	uint64_t seed;			/* the standby's retry jitter */
	/* called on the leader thread when leadership is gained (true) or lost
	 * (false); may be NULL.  Must not call back into gf_leader. */
	void (*on_change)(void *ud, bool leading);
	void *ud;
	gf_kube_log_fn log;		/* one line per transition or failure; may be NULL */
	void *log_ud;
};

#define GF_LEASE_NONCE_LEN 17	/* "_" and 16 hex digits */

/*
 * Start electing (a thread) as identity + nonce.  GF_NOMEM, GF_INVAL (renew
 * >= lease, names missing, identity longer than GF_LEASE_ID_MAX - 1 -
 * GF_LEASE_NONCE_LEN), GF_UNAVAILABLE (getrandom failed: no nonce).
 */
gf_err gf_leader_start(const struct gf_leader_opts *o, gf_leader **out);

/* The identity this process writes as holderIdentity (with its nonce); valid until gf_leader_stop. */
const char *gf_leader_identity(const gf_leader *l);

/* Times this process found its Lease rewritten by someone else and stepped down; any thread. */
unsigned long gf_leader_stepdowns(gf_leader *l);

/* Leading now?  Any thread; reads the monotonic clock.  NULL: true (no election: always lead). */
bool gf_leader_leading(gf_leader *l);

/* Leadership changes so far (gained); any thread. */
unsigned long gf_leader_terms(gf_leader *l);

/* Stop the thread; if leading, release the Lease first.  NULL: nothing. */
void gf_leader_stop(gf_leader *l);

/* Current time as a Kubernetes MicroTime (UTC, microseconds). */
void gf_lease_stamp(char out[GF_LEASE_TIME_MAX]);

#endif /* GF_K8S_LEASE_H */
