/*
 * k8s/sched_impl.h - internals shared by the `gpufleet schedule` daemon's
 * files.  Not a public header: k8s/scheduler.h is the API.
 *
 *   scheduler.c      the daemon: start and stop, the scheduling thread,
 *                    leader election, the binders and their job queue
 *   sched_watch.c    the watches, one table of {resource, path, handler}
 *   sched_writes.c   API writes other than bindings: Events, conditions,
 *                    PodGroup status, evictions, nominations
 *   sched_extender.c the kube-scheduler extender's HTTP verbs
 *   sched_metrics.c  /metrics and /healthz
 *
 * Locking: d->mu guards gf_live, the job queue and every counter; no API
 * call is made holding it.  d->ext_mu (taken before mu) serialises filter
 * and prioritize, and guards d->memo, d->ext_pod.  Functions here say
 * which lock they expect.
 */
#ifndef GF_K8S_SCHED_IMPL_H
#define GF_K8S_SCHED_IMPL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "http/server.h"
#include "k8s/bind.h"
#include "k8s/client.h"
#include "k8s/extargs.h"
#include "k8s/gangs.h"
#include "k8s/lease.h"
#include "k8s/live.h"
#include "k8s/scheduler.h"

/* ---- small things -------------------------------------------------------- */

/* CLOCK_MONOTONIC seconds (latency figures: adapter-side only). */
double gf_ksched_now(void);

/* One line on stderr: "<RFC 3339> gpufleet-schedule: <text>". */
void gf_ksched_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The wall clock as RFC 3339 UTC (an Event's or a condition's time). */
void gf_ksched_wallclock(char out[32]);

/* A latency histogram (sched_metrics.c renders it). */
#define NBUCKETS 16
struct histo {
	uint64_t b[NBUCKETS];
	uint64_t count;
	double sum;
};

void gf_ksched_histo_add(struct histo *h, double v);

/* ---- jobs for the binders -------------------------------------------------- */

enum job_kind { JOB_BIND, JOB_FAILED, JOB_EXT_BIND, JOB_NOTE, JOB_GROUP_STATUS, JOB_EVICT, JOB_NOMINATE };

/*
 * An extender bind between the HTTP thread and a binder.  Under mu; two
 * references (the waiting handler, the binder): the last one out frees it,
 * so a handler that gave up waiting leaves it to the binder.
 */
struct ext_bind {
	int refs;
	bool done;
	char node[GF_K8S_NAME_MAX];
	char err[640];		/* the answer's Error: "" = bound */
};

struct job {
	enum job_kind kind;
	struct ext_bind *eb;	/* JOB_EXT_BIND */
	char ns[GF_K8S_NAME_MAX], name[GF_K8S_NAME_MAX], uid[GF_K8S_UID_MAX];
	struct gf_live_decision d;
	double t0;
	unsigned long term;	/* the leader's term it was decided in (gf_leader_terms) */
	time_t est;		/* JOB_NOTE: estimated start (wall clock), -1 none; d.message: the reason */
	/* JOB_GROUP_STATUS: the PodGroup's API, members by state; d.message: the phase */
	enum gf_k8s_gang_api api;
	struct gf_live_gang_count gc;
};

enum { A_SCHEDULED, A_UNSCHEDULABLE, A_INVALID, A_ERROR, A_COUNT };
enum { V_FILTER, V_PRIORITIZE, V_BIND, V_COUNT };
/* Binding outcomes by enum gf_kube_bind_result (metrics label values). */
extern const char *const gf_ksched_bind_names[B_COUNT];

/*
 * The extender's last filter answer, kept for the prioritize call that
 * follows it: kube-scheduler sends prioritize the nodes filter passed, in
 * the order filter gave them, re-encoded by Go's encoder: the NodeNames
 * array arrives byte for byte as we wrote it.  Recognising it (one memcmp)
 * spares reading and resolving 5,000 names a second time; when nodes came
 * or went since, the memo's names are resolved again.  A miss costs only
 * the comparison.  The memo belongs to filter and prioritize, which run
 * one at a time under ext_mu (as for their pod, d->ext_pod; the extender's
 * listener has a few threads so that a bind waiting on the API server does
 * not hold them up): it is read and changed without mu, and a request's
 * names may point into it; only the engine calls around it take mu.
 */
struct ext_memo {
	char *span;		/* our NodeNames array, '[' to ']'; NULL: none */
	size_t span_len;
	const char **names;	/* into span */
	size_t *lens;
	int32_t *ci;		/* gf_live_resolve's indices */
	size_t n;
	uint64_t epoch;
	/* the pod filter judged and the nodes' state then (gf_live_state): while
	 * both hold, prioritize of this pod knows every node fits */
	char uid[GF_K8S_UID_MAX], rv[GF_K8S_RV_MAX];
	uint64_t state;
	char *buf;		/* span's memory, kept between answers */
	size_t buf_cap, cap;	/* and the arrays' */
};

/*
 * One helper thread for the extender's big lists (a 5,000-name filter): the
 * handler posts a job, then it and the helper, if the helper wakes in time,
 * take chunks of the list off a shared counter until none is left.  The
 * handler never waits for a helper that has not started (it does the work
 * itself), only for the chunk a started helper is in (microseconds).
 */
struct fan {
	pthread_mutex_t mu;
	pthread_cond_t cv, idle_cv;
	pthread_t t;
	bool started, stop, open;
	uint64_t gen;		/* jobs posted */
	int active;		/* helpers working on the open job */
	void (*fn)(void *ctx, size_t lo, size_t hi);
	void *ctx;
	size_t n, chunk;
	_Atomic size_t next;	/* the next unclaimed index */
};

#define NOTE_MAX 32	/* waiting pods' notes handed out per round */
#define EVICT_BATCH 16	/* evictions taken from gf_live at a time */

struct watch;

struct daemon {
	struct gf_kube_sched_opts o;
	pthread_mutex_t mu;
	pthread_cond_t work;	/* scheduling thread: pods or sync arrived */
	pthread_cond_t jobs_cv;	/* binders: jobs arrived */
	pthread_cond_t ext_cv;	/* extender binds finished */
	pthread_mutex_t ext_mu;	/* filter and prioritize, one at a time; taken before mu */
	gf_live *live;
	bool synced[2], in_sync[2];

	struct job *jobs;
	size_t jhead, jlen, jcap;
	size_t binding;		/* jobs being executed */

	/* counters (under mu) */
	uint64_t attempts[A_COUNT];
	uint64_t binds[B_COUNT];
	uint64_t events_total, event_errors, decode_errors, watch_restarts[2];
	uint64_t notes_total, note_errors;	/* waiting pods' EstimatedStart conditions written (send_note) */
	uint64_t gstatus_total, gstatus_errors;	/* PodGroup status writes (send_group_status) */
	size_t gcursor;				/* the next PodGroup push_group_status looks at */
	struct gstat { uint64_t key, val; } *gstat;	/* PodGroup status last written, by group */
	uint64_t watch_events[2];	/* objects received: nodes, pods */
	uint64_t ext_requests[V_COUNT][3]; /* [verb][200, 400, 403] */
	uint64_t ext_reused[V_COUNT];	/* calls whose NodeNames were the memo's */
	struct histo h_attempt, h_e2e, h_ext[V_COUNT];
	struct ext_memo memo;	/* filter's and prioritize's, under ext_mu */
	struct gf_k8s_pod ext_pod;	/* the pod of the filter or prioritize call running (ext_mu) */
	struct fan fan;		/* the extender's helper thread */

	char reported[256][GF_K8S_UID_MAX]; /* undecodable pods already reported */
	size_t nreported;

	char prefix[GF_EXT_PREFIX_MAX + 1];
	char route_paths[3][GF_EXT_PREFIX_MAX + 16];

	/* leader election: NULL leader = always leading; rebuilt: the bound pods
	 * were read from the API server since this term began (sched thread) */
	gf_leader *leader;
	gf_kube_client *lead_client;	/* the scheduling thread's reads on taking over */
	bool rebuilt;
	unsigned long rebuilt_term;	/* the term rebuilt is for */
	uint64_t takeovers;		/* rebuilds done on becoming leader */

	/* coscheduling PodGroups (o.pod_groups), under mu; NULL when not watched */
	gf_gangs *gangs;
	uint64_t group_events, group_decode_errors;
	/* Queue objects and namespaces' queue labels (o.queues), under mu */
	uint64_t queue_events, queue_decode_errors;
	bool queues_synced[2];		/* the Queue and namespace watches listed once: decide only then */
	/* preemption (o.preemption), under mu: victims evicted, already gone, failed; preemptors nominated */
	uint64_t evictions[3], nominated;
	/* PodDisruptionBudgets (o.preemption), under mu: received, refused; listed once */
	uint64_t pdb_events, pdb_decode_errors;
	bool pdb_synced;

	/* the watches (sched_watch.c), started by gf_ksched_watches_start */
	struct watch *watches;
	size_t nwatches;

	/* the scheduling thread's own (scheduler.c): the pod being decided, the
	 * bound pods read on taking over, the notes and evictions handed out,
	 * and when the last LIST of bound pods failed (retried after 1 s) */
	struct gf_k8s_pod sched_pod, lead_pod;
	double lead_failed_at;
	struct gf_live_note notes[NOTE_MAX];
	struct gf_live_eviction evictions_buf[EVICT_BATCH];

	/* what gf_kube_scheduler_run started, for the stop (scheduler.c) */
	gf_http_server *srv, *esrv;	/* /metrics and /healthz; the extender */
	struct gf_http_route routes[2], ext_routes[3];	/* theirs: must outlive them (server.h) */
	struct binder *binders;
	int nbinders;			/* started */
	pthread_t sched_t;
	bool sched_started;
};

/* A binder thread and its API client; pod: ext_bind_run's scratch. */
struct binder {
	struct daemon *d;
	gf_kube_client *k;
	pthread_t t;
	struct gf_k8s_pod pod;
};

/* ---- scheduler.c --------------------------------------------------------------- */

/* Queue a job for the binders (under mu); false when out of memory. */
bool gf_ksched_push_job(struct daemon *d, const struct job *j);

/* ---- sched_watch.c ------------------------------------------------------------- */

/* Start the watches the options ask for (each with its own client from co,
 * seeded per watch); GF_OK or the first error (those started keep running
 * until gf_ksched_watches_stop).  d->gangs must exist before (PodGroups). */
gf_err gf_ksched_watches_start(struct daemon *d, struct gf_kube_client_opts co);

/* Join the watches (after the stop) and free them. */
void gf_ksched_watches_stop(struct daemon *d);

/* ---- sched_writes.c ------------------------------------------------------------ */

/* On a binder thread, no lock held; each counts its outcome under mu. */
void gf_ksched_send_failed(struct daemon *d, gf_kube_client *k, const struct job *j);
void gf_ksched_send_note(struct daemon *d, gf_kube_client *k, const struct job *j);
void gf_ksched_send_group_status(struct daemon *d, gf_kube_client *k, const struct job *j);
void gf_ksched_send_evict(struct daemon *d, gf_kube_client *k, const struct job *j);
void gf_ksched_send_nominate(struct daemon *d, gf_kube_client *k, const struct job *j);

/* ---- sched_extender.c ---------------------------------------------------------- */

/* The extender options make sense together (see scheduler.h); err says what does not. */
gf_err gf_ksched_check_ext_opts(const struct gf_kube_sched_opts *o, char *err, size_t errlen);

/* The helper thread for long node lists: start (it may not: one CPU), stop. */
void gf_ksched_fan_start(struct fan *f);
void gf_ksched_fan_stop(struct fan *f);

/* Free the memo's memory. */
void gf_ksched_memo_free(struct ext_memo *m);

/* JOB_EXT_BIND on binder b (no lock held): authorize, assume, bind, answer. */
void gf_ksched_ext_bind_run(struct binder *b, const struct job *j);

/* Hand an extender bind's answer back (under mu); the last reference frees it. */
void gf_ksched_ext_bind_done(struct daemon *d, struct ext_bind *eb);

/* The HTTP handlers of <prefix>/filter, /prioritize, /bind (ud: the daemon). */
void gf_ksched_h_filter(void *ud, const struct gf_http_request *req, struct gf_http_response *resp);
void gf_ksched_h_prioritize(void *ud, const struct gf_http_request *req, struct gf_http_response *resp);
void gf_ksched_h_bind(void *ud, const struct gf_http_request *req, struct gf_http_response *resp);

/* ---- sched_metrics.c ----------------------------------------------------------- */

/* GET /metrics and GET /healthz (ud: the daemon; they take mu). */
void gf_ksched_h_metrics(void *ud, const struct gf_http_request *req, struct gf_http_response *resp);
void gf_ksched_h_healthz(void *ud, const struct gf_http_request *req, struct gf_http_response *resp);

#endif
