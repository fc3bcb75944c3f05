/*
 * k8s/scheduler.c - the `gpufleet schedule` daemon (see scheduler.h).
 *
 * Flow of a pod (standalone mode): pod reflector -> gf_live_pod_set
 * (queued) -> scheduling thread: gf_live_schedule_next decides and
 * assumes -> job queue -> a binder POSTs the Binding (annotations in its
 * metadata) -> the pod reflector sees spec.nodeName and confirms.
 * Failures: 409 re-reads the pod (bound to our node: done; elsewhere or
 * gone: forget; unbound: forget and retry); transport errors and 5xx are
 * retried inside the client with backoff, then the assumption is dropped
 * and the pod requeued.  Unschedulable pods get a FailedScheduling Event
 * and a PodScheduled=False condition, and wait (parked) until a node
 * changes so that they may fit, after a per-pod backoff (1 s doubling to
 * 10 s), or for at most 5 minutes (gf_live_requeue_due); Events are
 * aggregated per pod and reason (gf_live_report_due).
 *
 * Extender mode: filter and prioritize call gf_live directly under the
 * mutex (one at a time: ext_mu).  bind makes API calls (maybe a GET of a
 * pod the watch has not brought yet, then the Binding), so it never runs
 * on an HTTP thread: the handler checks the request, queues a JOB_EXT_BIND
 * for the binders and waits for its answer at most ext_bind_wait_s
 * seconds (kube-scheduler waits for the answer anyway, up to its
 * httpTimeout).  The extender's
 * listener has EXT_THREADS threads, so filter and prioritize go on while a
 * bind waits; /healthz and /metrics have their own listener.  The binder
 * authorizes the bind first: the pod's schedulerName must be one of the
 * extender's profiles, the pod pending, unbound and the one named by uid.
 * With leader election a standby refuses extender binds, and a binder binds
 * (for the scheduling thread or the extender) only while leading in the
 * term the decision or request came in.
 * The caller gets no API server text back (it is logged): only our own
 * reasons and a generic failure.
 *
 * Latency figures come from CLOCK_MONOTONIC; they are adapter-side only.
 */
#include "k8s/scheduler.h"

#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "http/server.h"
#include "k8s/bind.h"
#include "k8s/client.h"
#include "k8s/costrec.h"
#include "k8s/extargs.h"
#include "k8s/gangs.h"
#include "k8s/pdb.h"
#include "k8s/queues.h"
#include "k8s/lease.h"
#include "k8s/live.h"
#include "k8s/preempt.h"

/* ---- small things -------------------------------------------------------- */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void logline(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logline(const char *fmt, ...)
{
	char ts[32];
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s gpufleet-schedule: %s\n", ts, line);
}

static void rfc3339(char out[32])
{
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

#define NBUCKETS 16
static const double bucket_le[NBUCKETS] = { 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
					    0.01,   0.025,   0.05,   0.1,   0.25,   0.5,
					    1,      2.5,     5,      10 };

struct histo {
	uint64_t b[NBUCKETS];
	uint64_t count;
	double sum;
};

static void histo_add(struct histo *h, double v)
{
	for (int i = 0; i < NBUCKETS; i++)
		if (v <= bucket_le[i])
			h->b[i]++;
	h->count++;
	h->sum += v;
}

static void histo_render(struct gf_obuf *o, const char *name, const char *help, const struct histo *h)
{
	gf_obuf_printf(o, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
	for (int i = 0; i < NBUCKETS; i++)
		gf_obuf_printf(o, "%s_bucket{le=\"%g\"} %llu\n", name, bucket_le[i], (unsigned long long)h->b[i]);
	gf_obuf_printf(o, "%s_bucket{le=\"+Inf\"} %llu\n%s_sum %.9f\n%s_count %llu\n", name,
		       (unsigned long long)h->count, name, h->sum, name, (unsigned long long)h->count);
}

/* ---- the daemon ---------------------------------------------------------- */

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
static const char *const attempt_names[A_COUNT] = { "scheduled", "unschedulable", "invalid", "error" };
static const char *const bind_names[B_COUNT] = { "ok", "conflict_already_bound", "conflict_retry",
						 "pod_gone", "error" };
enum { V_FILTER, V_PRIORITIZE, V_BIND, V_COUNT };
static const char *const verb_names[V_COUNT] = { "filter", "prioritize", "bind" };
static const char *const ext_codes[3] = { "200", "400", "403" };

/*
 * The extender's last filter answer, kept for the prioritize call that
 * follows it: kube-scheduler sends prioritize the nodes filter passed, in
 * the order filter gave them, re-encoded by Go's encoder: the NodeNames
 * array arrives byte for byte as we wrote it.  Recognising it (one memcmp)
 * spares reading and resolving 5,000 names a second time; when nodes came
 * or went since, the memo's names are resolved again.  A miss costs only
 * the comparison.  The memo belongs to filter and prioritize, which run
 * one at a time under ext_mu (as for their static pods; the extender's
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

/* Forget the answer (the memory stays for the next). */
static void memo_forget(struct ext_memo *m)
{
	m->span = NULL;
	m->span_len = m->n = 0;
}

static void memo_free(struct ext_memo *m)
{
	free(m->buf);
	free(m->names);
	free(m->lens);
	free(m->ci);
	memset(m, 0, sizeof(*m));
}

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

static void fan_claim(struct fan *f, void (*fn)(void *, size_t, size_t), void *ctx, size_t n, size_t chunk)
{
	for (size_t lo; (lo = atomic_fetch_add(&f->next, chunk)) < n;)
		fn(ctx, lo, lo + chunk < n ? lo + chunk : n);
}

static void *fan_main(void *arg)
{
	struct fan *f = arg;
	uint64_t seen = 0;
	pthread_mutex_lock(&f->mu);
	for (;;) {
		while (!f->stop && (f->gen == seen || !f->open))
			pthread_cond_wait(&f->cv, &f->mu);
		if (f->stop)
			break;
		seen = f->gen;
		f->active++;
		void (*fn)(void *, size_t, size_t) = f->fn;
		void *ctx = f->ctx;
		size_t n = f->n, chunk = f->chunk;
		pthread_mutex_unlock(&f->mu);
		fan_claim(f, fn, ctx, n, chunk);
		pthread_mutex_lock(&f->mu);
		if (!--f->active)
			pthread_cond_signal(&f->idle_cv);
	}
	pthread_mutex_unlock(&f->mu);
	return NULL;
}

/* fn(ctx, lo, hi) over [0, n) in chunks, with the helper if there is one. */
static void fan_run(struct fan *f, size_t n, size_t chunk, void (*fn)(void *, size_t, size_t), void *ctx)
{
	if (!f->started) {
		fn(ctx, 0, n);
		return;
	}
	pthread_mutex_lock(&f->mu);
	f->fn = fn, f->ctx = ctx, f->n = n, f->chunk = chunk;
	atomic_store(&f->next, 0);
	f->open = true;
	f->gen++;
	pthread_cond_signal(&f->cv);
	pthread_mutex_unlock(&f->mu);
	fan_claim(f, fn, ctx, n, chunk);
	pthread_mutex_lock(&f->mu);
	f->open = false; /* a helper waking now takes nothing */
	while (f->active)
		pthread_cond_wait(&f->idle_cv, &f->mu);
	pthread_mutex_unlock(&f->mu);
}

static void fan_start(struct fan *f)
{
	pthread_mutex_init(&f->mu, NULL);
	pthread_cond_init(&f->cv, NULL);
	pthread_cond_init(&f->idle_cv, NULL);
	atomic_init(&f->next, 0);
	f->started = sysconf(_SC_NPROCESSORS_ONLN) > 1 && !pthread_create(&f->t, NULL, fan_main, f);
}

static void fan_stop(struct fan *f)
{
	if (f->started) {
		pthread_mutex_lock(&f->mu);
		f->stop = true;
		pthread_cond_broadcast(&f->cv);
		pthread_mutex_unlock(&f->mu);
		pthread_join(f->t, NULL);
	}
	pthread_mutex_destroy(&f->mu);
	pthread_cond_destroy(&f->cv);
	pthread_cond_destroy(&f->idle_cv);
}

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
};

/* ---- reflector callbacks ------------------------------------------------- */

struct refl {
	struct daemon *d;
	bool pods;
	/* the object being applied, decoded before taking mu (one reflector
	 * thread each: a node storm must not hold the extender's lock) */
	struct gf_k8s_pod pod;
	struct gf_k8s_node node;
};

static bool push_job(struct daemon *d, const struct job *j);

/*
 * A pod of ours that cannot be decoded (e.g. gpufleet.io/gpu-milli: "half")
 * stays pending: tell its owner once per uid with a FailedScheduling event
 * (our own status update must not trigger another one).  Under mu.
 */
static void report_undecodable(struct daemon *d, const cJSON *obj, const char *why)
{
	const cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	const cJSON *spec = cJSON_GetObjectItemCaseSensitive(obj, "spec");
	const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(md, "name"));
	const char *ns = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(md, "namespace"));
	const char *uid = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(md, "uid"));
	const char *sched = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(spec, "schedulerName"));
	const char *node = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(spec, "nodeName"));
	if (!name || !ns || !uid || !sched || strcmp(sched, d->o.scheduler_name) || (node && *node) ||
	    strlen(uid) >= GF_K8S_UID_MAX || !gf_leader_leading(d->leader))
		return;
	for (size_t i = 0; i < d->nreported; i++)
		if (!strcmp(d->reported[i], uid))
			return;
	if (d->nreported == sizeof(d->reported) / sizeof(d->reported[0]))
		d->nreported = 0; /* forget the oldest reports: at worst one more event each */
	snprintf(d->reported[d->nreported++], GF_K8S_UID_MAX, "%s", uid);
	struct job j = { .kind = JOB_FAILED };
	snprintf(j.ns, sizeof(j.ns), "%s", ns);
	snprintf(j.name, sizeof(j.name), "%s", name);
	snprintf(j.uid, sizeof(j.uid), "%s", uid);
	j.d.result = GF_LIVE_INVALID;
	snprintf(j.d.message, sizeof(j.d.message), "cannot read the pod's GPU request: %.400s", why);
	d->attempts[A_INVALID]++;
	push_job(d, &j);
}

static void on_event(void *ud, const char *type, const cJSON *obj)
{
	struct refl *r = ud;
	struct daemon *d = r->d;
	int w = r->pods;
	char err[300] = "";
	bool del = !strcmp(type, "DELETED");
	/* decode first, outside mu: decoding is most of the work of an event */
	gf_err de = GF_OK;
	if (strcmp(type, "SYNCED"))
		de = r->pods ? gf_k8s_pod_decode(obj, &r->pod, err, sizeof(err))
			     : gf_k8s_node_decode(obj, &r->node, err, sizeof(err));
	pthread_mutex_lock(&d->mu);
	d->watch_events[w] += strcmp(type, "SYNCED") != 0;
	if (!strcmp(type, "SYNCED")) {
		if (!d->in_sync[w])
			gf_live_sync_begin(d->live, r->pods); /* an empty list */
		gf_live_sync_end(d->live, r->pods);
		d->in_sync[w] = false;
		if (!d->synced[w])
			logline("%s synced", r->pods ? "pods" : "nodes");
		d->synced[w] = true;
		pthread_cond_broadcast(&d->work);
		pthread_mutex_unlock(&d->mu);
		return;
	}
	if (!strcmp(type, "SYNC") && !d->in_sync[w]) {
		gf_live_sync_begin(d->live, r->pods);
		d->in_sync[w] = true;
	}
	if (r->pods) {
		if (de) {
			d->decode_errors++;
			logline("ignoring a pod: %s", err);
			if (!del)
				report_undecodable(d, obj, err);
		} else if (del) {
			gf_live_pod_delete(d->live, r->pod.uid);
		} else {
			gf_live_pod_set(d->live, &r->pod);
		}
	} else {
		if (de) {
			d->decode_errors++;
			logline("ignoring a node: %s", err);
		} else if (del) {
			gf_live_node_delete(d->live, r->node.name);
		} else {
			if (r->node.topo_err[0])
				logline("node %s: %s", r->node.name, r->node.topo_err);
			gf_live_node_set(d->live, &r->node);
		}
	}
	pthread_cond_signal(&d->work);
	pthread_mutex_unlock(&d->mu);
}

static void on_log(void *ud, const char *line)
{
	struct refl *r = ud;
	pthread_mutex_lock(&r->d->mu);
	r->d->watch_restarts[r->pods]++;
	pthread_mutex_unlock(&r->d->mu);
	logline("%s", line);
}

struct refl_thread {
	struct refl r;
	gf_kube_client *k;
	pthread_t t;
};

static void *reflector_main(void *arg)
{
	struct refl_thread *rt = arg;
	gf_kube_reflect(rt->k, rt->r.pods ? "/api/v1/pods" : "/api/v1/nodes", on_event, &rt->r, on_log,
			rt->r.d->o.stop);
	return NULL;
}

/* PodGroups (o.pod_groups: coscheduling; o.workload_groups: the Workload
 * API's): one reflector each into d->gangs. */
struct group_thread {
	struct daemon *d;
	gf_kube_client *k;
	pthread_t t;
	struct gf_k8s_podgroup g;	/* decoded before taking mu */
	bool started;
	bool workload;			/* scheduling.k8s.io/v1alpha2 PodGroups */
};

static void on_group_event(void *ud, const char *type, const cJSON *obj)
{
	struct group_thread *gt = ud;
	struct daemon *d = gt->d;
	if (!strcmp(type, "SYNCED"))
		return; /* PodGroups deleted while the watch was down stay until seen again: harmless, read only */
	char err[300] = "";
	gf_err e = gt->workload ? gf_k8s_wl_podgroup_decode(obj, &gt->g, err, sizeof(err))
				: gf_k8s_podgroup_decode(obj, &gt->g, err, sizeof(err));
	if (e)
		logline("ignoring a %sPodGroup: %s", gt->workload ? "Workload API " : "", err);
	pthread_mutex_lock(&d->mu);
	d->group_events++;
	if (e)
		d->group_decode_errors++;
	else if (!strcmp(type, "DELETED"))
		gf_gangs_unset(d->gangs, &gt->g);
	else if (gf_gangs_set(d->gangs, &gt->g))
		logline("PodGroup %s/%s: out of memory", gt->g.ns, gt->g.name);
	if (!e && gf_live_gangs_changed(d->live)) /* its waiting members look again */
		pthread_cond_signal(&d->work);
	pthread_mutex_unlock(&d->mu);
}

static void on_group_log(void *ud, const char *line)
{
	(void)ud;
	logline("podgroups: %s", line);
}

static void *group_main(void *arg)
{
	struct group_thread *gt = arg;
	gf_kube_reflect(gt->k, gt->workload ? "/apis/scheduling.k8s.io/v1alpha2/podgroups"
					   : "/apis/scheduling.x-k8s.io/v1alpha1/podgroups",
			on_group_event, gt, on_group_log, gt->d->o.stop);
	return NULL;
}

/* Queues (o.queues): Queue objects (gpufleet.io/v1alpha1) and the
 * namespaces' GF_LABEL_QUEUE labels, one reflector each, into d->live's
 * quotas (k8s/live.h).  A refused Queue is kept by name with its error:
 * its pods wait with that message.  Nothing is decided before both have
 * listed once.  Objects deleted while a watch was down stay until seen
 * again (no relist reconciliation yet). */
struct queue_thread {
	struct daemon *d;
	gf_kube_client *k;
	pthread_t t;
	bool started;
	bool ns;			/* the namespaces' watch */
};

static void on_queue_event(void *ud, const char *type, const cJSON *obj)
{
	struct queue_thread *qt = ud;
	struct daemon *d = qt->d;
	if (!strcmp(type, "SYNCED")) {
		pthread_mutex_lock(&d->mu);
		if (!d->queues_synced[qt->ns])
			logline("%s synced", qt->ns ? "namespaces" : "queues");
		d->queues_synced[qt->ns] = true;
		pthread_cond_broadcast(&d->work);
		pthread_mutex_unlock(&d->mu);
		return;
	}
	bool del = !strcmp(type, "DELETED");
	const cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	const cJSON *nm = cJSON_GetObjectItemCaseSensitive(md, "name");
	const char *name = cJSON_IsString(nm) ? nm->valuestring : "";
	gf_err e = GF_OK;
	char err[300] = "";
	if (qt->ns) {
		const cJSON *lb = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(md, "labels"), GF_LABEL_QUEUE);
		const char *q = !del && cJSON_IsString(lb) ? lb->valuestring : "";
		pthread_mutex_lock(&d->mu);
		if (name[0])
			e = gf_live_namespace_queue(d->live, name, q);
	} else {
		static struct gf_queue_def q; /* one reflector thread: decoded before taking mu */
		gf_err de = del ? GF_OK : gf_k8s_queue_decode(obj, &q, err, sizeof(err));
		if (de)
			logline("Queue %s refused (its pods wait): %s", name[0] ? name : "(no name)", err);
		pthread_mutex_lock(&d->mu);
		d->queue_events++;
		d->queue_decode_errors += de != GF_OK;
		if (del) {
			gf_live_queue_delete(d->live, name);
		} else if (de && strlen(name) < GF_QUEUE_NAME_MAX && name[0]) {
			memset(&q, 0, sizeof(q));
			memcpy(q.name, name, strlen(name) + 1);
			e = gf_live_queue_set(d->live, &q, err);
		} else if (!de) {
			e = gf_live_queue_set(d->live, &q, NULL);
		}
	}
	if (e)
		logline("%s %s: %s", qt->ns ? "namespace" : "Queue", name, e == GF_RANGE ? "more than 255 Queues" : gf_strerror(e));
	pthread_cond_broadcast(&d->work);
	pthread_mutex_unlock(&d->mu);
}

/* One gpufleet_queue_used_milli series (a refused Queue's name may be anything: left out). */
static void queue_metric(void *ud, const char *name, int64_t used, int64_t nominal, const char *err)
{
	(void)nominal;
	if (!gf_k8s_dns_subdomain(name))
		return;
	gf_obuf_printf(ud, "gpufleet_queue_used_milli{queue=\"%s\",refused=\"%s\"} %lld\n", name,
		       err[0] ? "true" : "false", (long long)used);
}

static void on_queue_log(void *ud, const char *line)
{
	logline("%s: %s", ((struct queue_thread *)ud)->ns ? "namespaces" : "queues", line);
}

static void *queue_main(void *arg)
{
	struct queue_thread *qt = arg;
	gf_kube_reflect(qt->k, qt->ns ? "/api/v1/namespaces" : "/apis/gpufleet.io/v1alpha1/queues", on_queue_event, qt,
			on_queue_log, qt->d->o.stop);
	return NULL;
}

/* PodDisruptionBudgets (o.preemption): policy/v1 objects, one reflector,
 * into d->live's disruption budgets (k8s/live.h).  A refused budget is
 * logged and protects nothing (its old version is dropped).  Nothing is
 * decided before they have listed once. */
struct pdb_thread {
	struct daemon *d;
	gf_kube_client *k;
	pthread_t t;
	bool started;
};

static void on_pdb_event(void *ud, const char *type, const cJSON *obj)
{
	struct pdb_thread *pt = ud;
	struct daemon *d = pt->d;
	static struct gf_k8s_pdb b; /* one reflector thread: decoded before taking mu */
	char err[300] = "";
	if (!strcmp(type, "SYNCED")) {
		pthread_mutex_lock(&d->mu);
		if (!d->pdb_synced)
			logline("poddisruptionbudgets synced");
		d->pdb_synced = true;
		pthread_cond_broadcast(&d->work);
		pthread_mutex_unlock(&d->mu);
		return;
	}
	const cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	const char *ns = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(md, "namespace"));
	const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(md, "name"));
	bool del = !strcmp(type, "DELETED");
	gf_err de = del ? GF_OK : gf_k8s_pdb_decode(obj, &b, err, sizeof(err)), e = GF_OK;
	if (de)
		logline("PodDisruptionBudget refused (it protects nothing): %s", err);
	pthread_mutex_lock(&d->mu);
	d->pdb_events++;
	d->pdb_decode_errors += de != GF_OK;
	if (del || de) {
		if (ns && name)
			gf_live_pdb_delete(d->live, ns[0] ? ns : "default", name);
	} else {
		e = gf_live_pdb_set(d->live, &b);
	}
	if (e)
		logline("PodDisruptionBudget %s/%s: %s", b.ns, b.name, gf_strerror(e));
	pthread_cond_broadcast(&d->work);
	pthread_mutex_unlock(&d->mu);
}

static void on_pdb_log(void *ud, const char *line)
{
	(void)ud;
	logline("poddisruptionbudgets: %s", line);
}

static void *pdb_main(void *arg)
{
	struct pdb_thread *pt = arg;
	gf_kube_reflect(pt->k, "/apis/policy/v1/poddisruptionbudgets", on_pdb_event, pt, on_pdb_log, pt->d->o.stop);
	return NULL;
}

/* ---- jobs ---------------------------------------------------------------- */

/* Queue a job for the binders (under mu); false when out of memory. */
static bool push_job(struct daemon *d, const struct job *j)
{
	if (d->jhead + d->jlen == d->jcap) {
		if (d->jhead) {
			memmove(d->jobs, d->jobs + d->jhead, d->jlen * sizeof(*d->jobs));
			d->jhead = 0;
		}
		if (d->jlen == d->jcap) {
			size_t nc = d->jcap ? d->jcap * 2 : 64;
			struct job *v = realloc(d->jobs, nc * sizeof(*v));
			if (!v) {
				if (j->kind == JOB_BIND)
					gf_live_forget(d->live, j->uid, true);
				return false;
			}
			d->jobs = v;
			d->jcap = nc;
		}
	}
	d->jobs[d->jhead + d->jlen++] = *j;
	pthread_cond_signal(&d->jobs_cv);
	return true;
}

static void send_failed(struct daemon *d, gf_kube_client *k, const struct job *j)
{
	char ts[32], path[600], err[300];
	rfc3339(ts);
	cJSON *ev = cJSON_CreateObject();
	cJSON_AddStringToObject(ev, "apiVersion", "v1");
	cJSON_AddStringToObject(ev, "kind", "Event");
	cJSON *md = cJSON_AddObjectToObject(ev, "metadata");
	char gen[300];
	snprintf(gen, sizeof(gen), "%.240s.", j->name);
	cJSON_AddStringToObject(md, "generateName", gen);
	cJSON_AddStringToObject(md, "namespace", j->ns);
	cJSON *io = cJSON_AddObjectToObject(ev, "involvedObject");
	cJSON_AddStringToObject(io, "apiVersion", "v1");
	cJSON_AddStringToObject(io, "kind", "Pod");
	cJSON_AddStringToObject(io, "namespace", j->ns);
	cJSON_AddStringToObject(io, "name", j->name);
	cJSON_AddStringToObject(io, "uid", j->uid);
	cJSON_AddStringToObject(ev, "reason", "FailedScheduling");
	cJSON_AddStringToObject(ev, "message", j->d.message);
	cJSON_AddStringToObject(ev, "type", "Warning");
	cJSON_AddStringToObject(cJSON_AddObjectToObject(ev, "source"), "component", d->o.scheduler_name);
	cJSON_AddStringToObject(ev, "firstTimestamp", ts);
	cJSON_AddStringToObject(ev, "lastTimestamp", ts);
	cJSON_AddNumberToObject(ev, "count", 1);
	cJSON_AddStringToObject(ev, "reportingComponent", d->o.scheduler_name);
	char *body = cJSON_PrintUnformatted(ev);
	cJSON_Delete(ev);
	long st = 0;
	bool ok = false;
	if (body && gf_kube_path(path, sizeof(path), j->ns, "events", NULL, NULL, err, sizeof(err))) {
		logline("no event for %.60s/%.100s: %s", j->ns, j->name, err); /* cannot happen for a watched pod */
		free(body);
		body = NULL;
	}
	if (body) {
		ok = !gf_kube_request(k, "POST", path, "application/json", body, strlen(body), &st, NULL,
				      err, sizeof(err)) && st / 100 == 2;
		free(body);
	}
	/* The PodScheduled condition, as kube-scheduler sets it. */
	cJSON *patch = cJSON_CreateObject();
	cJSON *conds = cJSON_AddArrayToObject(cJSON_AddObjectToObject(patch, "status"), "conditions");
	cJSON *c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "type", "PodScheduled");
	cJSON_AddStringToObject(c, "status", "False");
	cJSON_AddStringToObject(c, "reason", j->d.result == GF_LIVE_INVALID ? "SchedulerError" : "Unschedulable");
	cJSON_AddStringToObject(c, "message", j->d.message);
	cJSON_AddStringToObject(c, "lastTransitionTime", ts);
	cJSON_AddItemToArray(conds, c);
	body = cJSON_PrintUnformatted(patch);
	cJSON_Delete(patch);
	if (body && gf_kube_path(path, sizeof(path), j->ns, "pods", j->name, "status", err, sizeof(err))) {
		free(body);
		body = NULL;
		ok = false;
	}
	if (body) {
		ok &= !gf_kube_request(k, "PATCH", path, "application/strategic-merge-patch+json", body,
				       strlen(body), &st, NULL, err, sizeof(err)) && (st / 100 == 2 || st == 404);
		free(body);
	}
	pthread_mutex_lock(&d->mu);
	d->events_total++;
	d->event_errors += !ok;
	pthread_mutex_unlock(&d->mu);
}

static bool post_pod_event(struct daemon *d, gf_kube_client *k, const char *ns, const char *name, const char *uid,
			   const char *reason, const char *type, const char *message);

/*
 * A waiting pod's notes (gf_live_notes_due) as its GF_COND_ESTIMATED_START
 * condition (codec.h): one strategic-merge PATCH of the pods/status
 * subresource whose conditions list holds that one condition, so the API
 * server merges it by type and leaves PodScheduled and the others alone
 * (kube-scheduler's own role writes pods/status too; no patch on pods is
 * needed).  With an estimate, also a Normal Event (reason EstimatedStart,
 * the condition's message), so `kubectl describe pod` shows it.  Notes are
 * due only when the estimate moved by more than a minute or the reason
 * changed, so Events stay as rare as the PATCHes.  A pod gone meanwhile
 * (404) is no error.
 */
static void send_note(struct daemon *d, gf_kube_client *k, const struct job *j)
{
	char path[600], err[300], ts[32], now[32];
	char msg[sizeof(j->d.message) + 64];
	if (j->est >= 0) {
		struct tm tm;
		gmtime_r(&j->est, &tm);
		strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
		snprintf(msg, sizeof(msg), GF_COND_ESTIMATE_PREFIX "%s: %s", ts, j->d.message);
	} else {
		snprintf(msg, sizeof(msg), "%s", j->d.message);
	}
	rfc3339(now);
	cJSON *patch = cJSON_CreateObject();
	cJSON *conds = cJSON_AddArrayToObject(cJSON_AddObjectToObject(patch, "status"), "conditions");
	cJSON *c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "type", GF_COND_ESTIMATED_START);
	cJSON_AddStringToObject(c, "status", j->est >= 0 ? "True" : "False");
	cJSON_AddStringToObject(c, "reason", j->est >= 0 ? GF_COND_REASON_ESTIMATED : GF_COND_REASON_NO_ESTIMATE);
	cJSON_AddStringToObject(c, "message", msg);
	cJSON_AddStringToObject(c, "lastTransitionTime", now);
	cJSON_AddItemToArray(conds, c);
	char *body = cJSON_PrintUnformatted(patch);
	cJSON_Delete(patch);
	long st = 0;
	bool ok = body && !gf_kube_path(path, sizeof(path), j->ns, "pods", j->name, "status", err, sizeof(err)) &&
		  !gf_kube_request(k, "PATCH", path, "application/strategic-merge-patch+json", body, strlen(body),
				   &st, NULL, err, sizeof(err)) &&
		  (st / 100 == 2 || st == 404);
	free(body);
	if (ok && st / 100 == 2 && j->est >= 0)
		ok = post_pod_event(d, k, j->ns, j->name, j->uid, "EstimatedStart", "Normal", msg);
	pthread_mutex_lock(&d->mu);
	d->notes_total++;
	d->note_errors += !ok;
	pthread_mutex_unlock(&d->mu);
}

/*
 * A PodGroup's status, one merge PATCH of its status subresource.
 * Coscheduling (scheduling.x-k8s.io/v1alpha1): phase, running, succeeded,
 * failed (the fields of the CRD deploy/crds/podgroup.yaml has).  The Workload
 * API (scheduling.k8s.io/v1alpha2): the PodGroupScheduled condition, True
 * once minCount members are scheduled, else False (reason Unschedulable).
 * A group gone meanwhile (404) is no error.
 */
static void send_group_status(struct daemon *d, gf_kube_client *k, const struct job *j)
{
	char base[600], path[700], err[300], ts[32];
	rfc3339(ts);
	cJSON *patch = cJSON_CreateObject();
	cJSON *st = cJSON_AddObjectToObject(patch, "status");
	bool wl = j->api == GF_GANG_WORKLOAD;
	if (wl) {
		bool ok = !strcmp(j->d.message, "Scheduled") || !strcmp(j->d.message, "Running") ||
			  !strcmp(j->d.message, "Finished");
		cJSON *c = cJSON_CreateObject();
		cJSON_AddStringToObject(c, "type", "PodGroupScheduled");
		cJSON_AddStringToObject(c, "status", ok ? "True" : "False");
		cJSON_AddStringToObject(c, "reason", ok ? "Scheduled" : "Unschedulable");
		char msg[160];
		snprintf(msg, sizeof(msg), "gpufleet: %u of %u members scheduled", j->gc.scheduled, j->gc.members);
		cJSON_AddStringToObject(c, "message", msg);
		cJSON_AddStringToObject(c, "lastTransitionTime", ts);
		cJSON_AddItemToArray(cJSON_AddArrayToObject(st, "conditions"), c);
	} else {
		cJSON_AddStringToObject(st, "phase", j->d.message);
		cJSON_AddNumberToObject(st, "running", j->gc.running);
		cJSON_AddNumberToObject(st, "succeeded", j->gc.succeeded);
		cJSON_AddNumberToObject(st, "failed", j->gc.failed);
	}
	char *body = cJSON_PrintUnformatted(patch);
	cJSON_Delete(patch);
	long code = 0;
	bool ok = body && !gf_kube_path(base, sizeof(base), j->ns, "podgroups", j->name, "status", err, sizeof(err));
	if (ok) { /* the same path under the group's API */
		snprintf(path, sizeof(path), "%s%s", wl ? "/apis/scheduling.k8s.io/v1alpha2" : "/apis/scheduling.x-k8s.io/v1alpha1",
			 base + strlen("/api/v1"));
		ok = !gf_kube_request(k, "PATCH", path, "application/merge-patch+json", body, strlen(body), &code,
				      NULL, err, sizeof(err)) && (code / 100 == 2 || code == 404);
		if (!ok)
			logline("PodGroup %s/%s: status not written: %s (HTTP %ld)", j->ns, j->name, err, code);
	}
	free(body);
	pthread_mutex_lock(&d->mu);
	d->gstatus_total++;
	d->gstatus_errors += !ok;
	pthread_mutex_unlock(&d->mu);
}

struct binder {
	struct daemon *d;
	gf_kube_client *k;
	pthread_t t;
};

/* Is sched one of the schedulerNames the extender binds for? */
static bool ext_profile(const struct daemon *d, const char *sched)
{
	for (size_t i = 0; i < d->o.n_ext_profiles; i++)
		if (!strcmp(d->o.ext_profiles[i], sched))
			return true;
	return false;
}

/*
 * May an extender bind of a request that came in in leader term `term` go
 * ahead?  (Under mu.)  Without leader election always; with it only while
 * leading in that same term, after the bound pods were read on taking over
 * (lead_ready).
 */
static bool ext_may_bind(struct daemon *d, unsigned long term)
{
	if (!d->leader)
		return true;
	return gf_leader_leading(d->leader) && gf_leader_terms(d->leader) == term && d->rebuilt &&
	       d->rebuilt_term == term;
}

/* Hand the answer back (under mu); the last reference frees it. */
static void ext_bind_done(struct daemon *d, struct ext_bind *eb)
{
	eb->done = true;
	pthread_cond_broadcast(&d->ext_cv);
	if (!--eb->refs)
		free(eb);
}

/*
 * An extender bind on a binder thread: read the pod if the watch has not
 * brought it, authorize, assume, bind.  Our own reasons go back to the
 * caller; the API server's words only to the log.
 */
static void ext_bind_run(struct daemon *d, gf_kube_client *k, const struct job *j)
{
	struct ext_bind *eb = j->eb;
	static __thread struct gf_k8s_pod p;
	char err[400] = "", why[640] = "";
	int result = -1;
	pthread_mutex_lock(&d->mu);
	bool known = gf_live_pod_get(d->live, j->uid, &p);
	pthread_mutex_unlock(&d->mu);
	if (!known) { /* the watch is behind: read the pod */
		char path[600];
		long st = 0;
		cJSON *pd = NULL;
		gf_err e = gf_kube_path(path, sizeof(path), j->ns, "pods", j->name, NULL, err, sizeof(err));
		if (!e)
			e = gf_kube_json(k, "GET", path, NULL, NULL, &st, &pd, err, sizeof(err));
		if (!e && !pd && st == 404) {
			snprintf(why, sizeof(why), "pod %.63s/%.253s not found", j->ns, j->name);
		} else if (e || !pd || gf_k8s_pod_decode(pd, &p, err, sizeof(err))) {
			logline("extender bind of %s/%s: reading the pod failed: %s", j->ns, j->name,
				err[0] ? err : "no answer");
			snprintf(why, sizeof(why), "pod %.63s/%.253s could not be read from the API server "
				 "(details in gpufleet's log)", j->ns, j->name);
		}
		cJSON_Delete(pd);
	}
	if (!why[0]) {
		if (strcmp(p.uid, j->uid) || strcmp(p.ns, j->ns) || strcmp(p.name, j->name))
			snprintf(why, sizeof(why), "pod %.63s/%.253s does not have uid %s", j->ns, j->name, j->uid);
		else if (!ext_profile(d, p.scheduler))
			snprintf(why, sizeof(why), "pod %.63s/%.253s has schedulerName %.100s, not one this extender binds for "
				 "(--extender-profiles)", j->ns, j->name, p.scheduler);
		else if (p.node[0])
			snprintf(why, sizeof(why), "pod %.63s/%.253s is already bound to %.100s", j->ns, j->name, p.node);
		else if (p.deleting || p.phase != GF_PHASE_PENDING)
			snprintf(why, sizeof(why), "pod %.63s/%.253s is not pending", j->ns, j->name);
	}
	struct gf_live_decision dc;
	if (!why[0]) {
		/* as for the scheduling thread's binds (binder_main): only the
		 * leader of the term the request came in binds; the bind follows
		 * at once, within lease - renew seconds of this check */
		pthread_mutex_lock(&d->mu);
		gf_err e = GF_OK;
		if (!ext_may_bind(d, j->term))
			snprintf(why, sizeof(why), "this gpufleet replica is no longer the leader: it does not bind");
		else if ((e = gf_live_assume_on(d->live, &p, eb->node, &dc)))
			snprintf(why, sizeof(why), "%.500s", dc.message[0] ? dc.message : gf_strerror(e));
		pthread_mutex_unlock(&d->mu);
	}
	if (!why[0]) {
		bool retry;
		result = gf_kube_bind(k, j->ns, j->name, j->uid, &dc, &retry, err, sizeof(err));
		if (result == B_OK || result == B_CONFLICT_DONE) {
			if (d->o.verbose)
				logline("bound %s/%s to %s gpus=%d milli=%d (extender, %s)", j->ns, j->name, dc.node,
					dc.ngpus, dc.milli, bind_names[result]);
		} else {
			logline("extender bind of %s/%s to %s failed (%s): %s", j->ns, j->name, dc.node,
				bind_names[result], err[0] ? err : "no detail");
			snprintf(why, sizeof(why), "binding pod %.63s/%.253s failed (%s; details in gpufleet's log)", j->ns,
				 j->name, bind_names[result]);
		}
	}
	pthread_mutex_lock(&d->mu);
	if (result >= 0) {
		d->binds[result]++;
		if (result != B_OK && result != B_CONFLICT_DONE)
			gf_live_forget(d->live, j->uid, false);
	}
	snprintf(eb->err, sizeof(eb->err), "%s", why);
	ext_bind_done(d, eb);
	pthread_mutex_unlock(&d->mu);
}

/* ---- preemption (o.preemption): the API writes, on binder threads --------- */

/* An Event on pod ns/name (uid): reason, type ("Normal" / "Warning"), message.  false: not written. */
static bool post_pod_event(struct daemon *d, gf_kube_client *k, const char *ns, const char *name, const char *uid,
			   const char *reason, const char *type, const char *message)
{
	char ts[32], path[600], err[300], gen[300];
	rfc3339(ts);
	cJSON *ev = cJSON_CreateObject();
	cJSON_AddStringToObject(ev, "apiVersion", "v1");
	cJSON_AddStringToObject(ev, "kind", "Event");
	cJSON *md = cJSON_AddObjectToObject(ev, "metadata");
	snprintf(gen, sizeof(gen), "%.240s.", name);
	cJSON_AddStringToObject(md, "generateName", gen);
	cJSON_AddStringToObject(md, "namespace", ns);
	cJSON *io = cJSON_AddObjectToObject(ev, "involvedObject");
	cJSON_AddStringToObject(io, "apiVersion", "v1");
	cJSON_AddStringToObject(io, "kind", "Pod");
	cJSON_AddStringToObject(io, "namespace", ns);
	cJSON_AddStringToObject(io, "name", name);
	cJSON_AddStringToObject(io, "uid", uid);
	cJSON_AddStringToObject(ev, "reason", reason);
	cJSON_AddStringToObject(ev, "message", message);
	cJSON_AddStringToObject(ev, "type", type);
	cJSON_AddStringToObject(cJSON_AddObjectToObject(ev, "source"), "component", d->o.scheduler_name);
	cJSON_AddStringToObject(ev, "firstTimestamp", ts);
	cJSON_AddStringToObject(ev, "lastTimestamp", ts);
	cJSON_AddNumberToObject(ev, "count", 1);
	cJSON_AddStringToObject(ev, "reportingComponent", d->o.scheduler_name);
	char *body = cJSON_PrintUnformatted(ev);
	cJSON_Delete(ev);
	long st = 0;
	bool ok = body && !gf_kube_path(path, sizeof(path), ns, "events", NULL, NULL, err, sizeof(err)) &&
		  !gf_kube_request(k, "POST", path, "application/json", body, strlen(body), &st, NULL, err,
				   sizeof(err)) && st / 100 == 2;
	free(body);
	return ok;
}

/*
 * JOB_EVICT: victim j->ns/j->name (j->uid) on node j->d.node, for the pod
 * named in j->d.message: DisruptionTarget, graceful delete (k8s/preempt.h),
 * then the Event Preempted on the victim.  Only the leader of the term it
 * was decided in.
 */
static void send_evict(struct daemon *d, gf_kube_client *k, const struct job *j)
{
	char ts[32], err[300] = "";
	bool gone = false;
	gf_err e = GF_STATE;
	if (gf_leader_leading(d->leader) && gf_leader_terms(d->leader) == j->term) {
		rfc3339(ts);
		e = gf_kube_evict(k, d->o.scheduler_name, j->ns, j->name, j->uid, ts, &gone, err, sizeof(err));
		if (e)
			logline("preemption: evicting %s/%s failed: %s", j->ns, j->name, err[0] ? err : gf_strerror(e));
		else if (!gone)
			(void)post_pod_event(d, k, j->ns, j->name, j->uid, "Preempted", "Normal", j->d.message);
		if (!e && d->o.verbose)
			logline("preemption: %s/%s %s", j->ns, j->name, gone ? "already gone" : j->d.message);
	}
	pthread_mutex_lock(&d->mu);
	d->evictions[e ? 2 : gone ? 1 : 0]++;
	pthread_mutex_unlock(&d->mu);
}

/* JOB_NOMINATE: the preemptor's status.nominatedNodeName and an Event; bound later (JOB_BIND). */
static void send_nominate(struct daemon *d, gf_kube_client *k, const struct job *j)
{
	char err[300] = "";
	if (!gf_leader_leading(d->leader) || gf_leader_terms(d->leader) != j->term)
		return;
	gf_err e = gf_kube_nominate(k, j->ns, j->name, j->d.node, err, sizeof(err));
	if (e)
		logline("preemption: nominating %s/%s to %s failed: %s", j->ns, j->name, j->d.node,
			err[0] ? err : gf_strerror(e));
	(void)post_pod_event(d, k, j->ns, j->name, j->uid, "Preempting", "Normal", j->d.message);
	pthread_mutex_lock(&d->mu);
	d->nominated++;
	pthread_mutex_unlock(&d->mu);
}

/* The scheduling thread, under mu: the evictions its cycles chose go to the binders. */
static void push_evictions(struct daemon *d)
{
	static struct gf_live_eviction ev[16]; /* the scheduling thread only */
	size_t n;
	while ((n = gf_live_evictions(d->live, ev, 16)) > 0) {
		for (size_t i = 0; i < n; i++) {
			struct job j = { .kind = JOB_EVICT, .term = gf_leader_terms(d->leader) };
			snprintf(j.ns, sizeof(j.ns), "%s", ev[i].ns);
			snprintf(j.name, sizeof(j.name), "%s", ev[i].name);
			snprintf(j.uid, sizeof(j.uid), "%s", ev[i].uid);
			snprintf(j.d.node, sizeof(j.d.node), "%s", ev[i].node);
			if (ev[i].by_uid[0])
				snprintf(j.d.message, sizeof(j.d.message), "Preempted by pod %.63s/%.120s (uid %s, priority "
					 "%d; this pod's priority %d) on node %.120s", ev[i].by_ns, ev[i].by_name,
					 ev[i].by_uid, ev[i].by_priority, ev[i].priority, ev[i].node);
			else
				snprintf(j.d.message, sizeof(j.d.message), "Preempted with its gang (another member's "
					 "node was needed); was on node %.120s", ev[i].node);
			push_job(d, &j);
		}
	}
}

static void *binder_main(void *arg)
{
	struct binder *b = arg;
	struct daemon *d = b->d;
	pthread_mutex_lock(&d->mu);
	while (!gf_kube_stopped(d->o.stop)) {
		if (!d->jlen) {
			/* no polling: 16 binders waking 5 times a second would take mu
			 * from the extender's handlers; the stop is broadcast */
			pthread_cond_wait(&d->jobs_cv, &d->mu);
			continue;
		}
		struct job j = d->jobs[d->jhead++];
		d->jlen--;
		d->binding++;
		pthread_mutex_unlock(&d->mu);
		if (j.kind == JOB_EXT_BIND) {
			ext_bind_run(d, b->k, &j);
			pthread_mutex_lock(&d->mu);
			d->binding--;
			continue;
		}
		if (j.kind == JOB_GROUP_STATUS) {
			send_group_status(d, b->k, &j);
			pthread_mutex_lock(&d->mu);
			d->binding--;
			continue;
		}
		if (j.kind == JOB_NOTE) {
			send_note(d, b->k, &j);
			pthread_mutex_lock(&d->mu);
			d->binding--;
			continue;
		}
		if (j.kind == JOB_EVICT || j.kind == JOB_NOMINATE) {
			(j.kind == JOB_EVICT ? send_evict : send_nominate)(d, b->k, &j);
			pthread_mutex_lock(&d->mu);
			d->binding--;
			continue;
		}
		if (j.kind == JOB_FAILED) {
			send_failed(d, b->k, &j);
			pthread_mutex_lock(&d->mu);
			d->binding--;
			continue;
		}
		if (!gf_leader_leading(d->leader) || gf_leader_terms(d->leader) != j.term) {
			/* the lease is lost (or about to be), or this was decided in an
			 * earlier term (another leader may have bound meanwhile): bind
			 * nothing; the pod goes back to the queue for whoever leads next */
			pthread_mutex_lock(&d->mu);
			d->binding--;
			gf_live_forget(d->live, j.uid, true);
			continue;
		}
		bool retry;
		char err[400] = "";
		int r = gf_kube_bind(b->k, j.ns, j.name, j.uid, &j.d, &retry, err, sizeof(err));
		double t1 = now_s();
		if (r == B_ERROR && !retry)
			logline("binding %s/%s to %s refused: %s", j.ns, j.name, j.d.node, err);
		else if (r == B_ERROR)
			logline("binding %s/%s to %s failed, will retry: %s", j.ns, j.name, j.d.node, err);
		else if (d->o.verbose)
			logline("bound %s/%s to %s gpus=%d milli=%d (%s)", j.ns, j.name, j.d.node, j.d.ngpus,
				j.d.milli, bind_names[r]);
		pthread_mutex_lock(&d->mu);
		d->binding--;
		d->binds[r]++;
		if (r == B_OK || r == B_CONFLICT_DONE) {
			histo_add(&d->h_e2e, t1 - j.t0);
		} else {
			gf_live_forget(d->live, j.uid, retry);
			if (r == B_ERROR && !retry) {
				struct job f = j;
				f.kind = JOB_FAILED;
				f.d.result = GF_LIVE_UNSCHEDULABLE;
				snprintf(f.d.message, sizeof(f.d.message), "binding rejected: %.400s", err);
				push_job(d, &f);
			}
			pthread_cond_signal(&d->work);
		}
	}
	pthread_mutex_unlock(&d->mu);
	return NULL;
}

/* ---- scheduling thread ---------------------------------------------------- */

/* A listed pod: bound ones go into gf_live (the scheduling thread's, on taking over). */
static void rebuild_item(void *ud, const char *type, const cJSON *obj)
{
	struct daemon *d = ud;
	static struct gf_k8s_pod p; /* the scheduling thread only */
	char err[300];
	if (strcmp(type, "SYNC") || gf_k8s_pod_decode(obj, &p, err, sizeof(err)) || !p.node[0])
		return;
	pthread_mutex_lock(&d->mu);
	gf_live_pod_set(d->live, &p);
	pthread_mutex_unlock(&d->mu);
}

/*
 * May the scheduling thread decide now?  (Under mu.)  Not while a standby.
 * On becoming leader, first read every bound pod from the API server (a
 * consistent LIST, mu released meanwhile): the old leader's last bindings
 * may not have reached our watch yet, and their annotations must be in
 * before we give out a GPU.  A bound pod never becomes unbound, so a late
 * watch event cannot undo what the list put in (gf_live_pod_set).
 */
static bool lead_ready(struct daemon *d)
{
	if (!d->leader)
		return true;
	if (!gf_leader_leading(d->leader)) {
		d->rebuilt = false;
		return false;
	}
	unsigned long term = gf_leader_terms(d->leader);
	if (d->rebuilt && d->rebuilt_term == term)
		return true;
	static double failed_at = -1e9; /* the scheduling thread's: a failed LIST is retried after 1 s */
	double t0 = now_s();
	if (t0 - failed_at < 1.0)
		return false;
	pthread_mutex_unlock(&d->mu);
	char err[512] = "";
	gf_err e = gf_kube_list(d->lead_client, "/api/v1/pods?fieldSelector=spec.nodeName%21%3D", rebuild_item,
				d, err, sizeof(err));
	if (e) {
		logline("leader: reading the bound pods failed (%s); retrying in 1 s", err);
		failed_at = now_s();
	}
	else
		logline("leader: bound pods read from the API server in %.3f s; scheduling", now_s() - t0);
	pthread_mutex_lock(&d->mu);
	if (!e) {
		d->takeovers++;
		d->rebuilt = gf_leader_leading(d->leader);
		d->rebuilt_term = term;
	}
	return d->rebuilt;
}

static void on_leader(void *ud, bool leading)
{
	struct daemon *d = ud;
	pthread_mutex_lock(&d->mu);
	if (!leading)
		d->rebuilt = false;
	pthread_cond_broadcast(&d->work);
	pthread_mutex_unlock(&d->mu);
}

static void on_leader_log(void *ud, const char *line)
{
	(void)ud;
	logline("leader election: %s", line);
}

/*
 * Waiting pods' notes (estimated start, waiting reason) due now, as jobs for
 * the binders: every NOTE_EVERY_S at most NOTE_MAX (a bounded write rate;
 * what is left is due at the next round).  Under mu.
 */
#define NOTE_EVERY_S 2.0
#define NOTE_MAX 32
static void push_notes(struct daemon *d, double t)
{
	static struct gf_live_note notes[NOTE_MAX]; /* the scheduling thread only */
	size_t n = gf_live_notes_due(d->live, notes, NOTE_MAX);
	time_t wall = time(NULL);
	for (size_t i = 0; i < n; i++) {
		struct job j = { .kind = JOB_NOTE, .term = gf_leader_terms(d->leader), .est = -1 };
		snprintf(j.ns, sizeof(j.ns), "%s", notes[i].ns);
		snprintf(j.name, sizeof(j.name), "%s", notes[i].name);
		snprintf(j.uid, sizeof(j.uid), "%s", notes[i].uid);
		snprintf(j.d.message, sizeof(j.d.message), "%s", notes[i].reason);
		if (notes[i].start >= 0)
			j.est = wall + (time_t)(notes[i].start > t ? notes[i].start - t + 0.5 : 0);
		push_job(d, &j);
	}
}

/*
 * PodGroup status (gangs watched, not kube): every NOTE_EVERY_S the next
 * GSTATUS_MAX groups (round robin) are counted (gf_live_gang_count) and
 * those whose phase or counts changed since last written get a status job.
 * Phases (the coscheduling plugin's names): Failed (a member failed),
 * Finished (minMember succeeded), Running (minMember running or done),
 * Scheduled (minMember scheduled), Scheduling (some), PreScheduling
 * (minMember exist), Pending.  Under mu.
 */
#define GSTATUS_MAX 64
#define GSTAT_SLOTS 8192
static const char *gang_phase(uint32_t min, const struct gf_live_gang_count *c)
{
	if (c->failed)
		return "Failed";
	if (c->succeeded >= min)
		return "Finished";
	if (c->running + c->succeeded >= min)
		return "Running";
	if (c->scheduled >= min)
		return "Scheduled";
	if (c->scheduled)
		return "Scheduling";
	return c->members >= min ? "PreScheduling" : "Pending";
}

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static uint64_t mix64(uint64_t h, uint64_t v)
{
	h = (h ^ v) * 0xff51afd7ed558ccdull;
	return h ^ (h >> 32);
}

static void push_group_status(struct daemon *d)
{
	size_t n = d->gangs ? gf_gangs_count(d->gangs) : 0;
	if (!n || (!d->gstat && !(d->gstat = calloc(GSTAT_SLOTS, sizeof(*d->gstat)))))
		return;
	for (size_t k = 0; k < GSTATUS_MAX && k < n; k++) {
		if (d->gcursor >= n)
			d->gcursor = 0;
		const struct gf_k8s_podgroup *pg = gf_gangs_at(d->gangs, d->gcursor++);
		struct job j = { .kind = JOB_GROUP_STATUS, .api = pg->api, .term = gf_leader_terms(d->leader) };
		gf_live_gang_count(d->live, pg, &j.gc);
		const char *phase = gang_phase(pg->min_member > 0 ? (uint32_t)pg->min_member : 1, &j.gc);
		uint64_t key = mix64(mix64(pg->api + 1, fnv1a(pg->ns)), fnv1a(pg->name)) | 1;
		uint64_t val = mix64(mix64(mix64(mix64(fnv1a(phase), j.gc.running), j.gc.succeeded), j.gc.failed),
				     j.gc.scheduled);
		size_t s = key & (GSTAT_SLOTS - 1), probes = 0;
		while (d->gstat[s].key && d->gstat[s].key != key && probes++ < 16)
			s = (s + 1) & (GSTAT_SLOTS - 1);
		bool slot = d->gstat[s].key == key || !d->gstat[s].key;
		if (slot && d->gstat[s].key == key && d->gstat[s].val == val)
			continue; /* written already */
		if (slot)
			d->gstat[s] = (struct gstat){ key, val };
		snprintf(j.ns, sizeof(j.ns), "%s", pg->ns);
		snprintf(j.name, sizeof(j.name), "%s", pg->name);
		snprintf(j.d.message, sizeof(j.d.message), "%s", phase);
		push_job(d, &j);
	}
}

static void *sched_main(void *arg)
{
	struct daemon *d = arg;
	double next_note = 0;
	pthread_mutex_lock(&d->mu);
	while (!gf_kube_stopped(d->o.stop)) {
		double t = now_s();
		bool ready = d->synced[0] && d->synced[1] && lead_ready(d) &&
			     (!d->o.queues || (d->queues_synced[0] && d->queues_synced[1])) &&
			     (!d->o.preemption || d->pdb_synced);
		if (ready)
			gf_live_requeue_due(d->live, t);
		if (ready && d->o.standalone && t >= next_note) {
			next_note = t + NOTE_EVERY_S;
			push_notes(d, t);
			if (d->o.queue_policy != 0)
				push_group_status(d);
		}
		static struct gf_k8s_pod p;
		struct gf_live_decision dc;
		if (!ready || !d->o.standalone || !gf_live_schedule_next(d->live, &p, &dc)) {
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 100000000L;
			if (ts.tv_nsec >= 1000000000L)
				ts.tv_sec++, ts.tv_nsec -= 1000000000L;
			pthread_cond_timedwait(&d->work, &d->mu, &ts);
			continue;
		}
		double t1 = now_s();
		histo_add(&d->h_attempt, t1 - t);
		struct job j = { .t0 = t, .d = dc, .term = gf_leader_terms(d->leader) };
		snprintf(j.ns, sizeof(j.ns), "%s", p.ns);
		snprintf(j.name, sizeof(j.name), "%s", p.name);
		snprintf(j.uid, sizeof(j.uid), "%s", p.uid);
		bool report = true;
		switch (dc.result) {
		case GF_LIVE_PLACED:
			d->attempts[A_SCHEDULED]++;
			j.kind = JOB_BIND;
			break;
		case GF_LIVE_NOMINATED: /* preempting: bound later, once its victims are gone */
			j.kind = JOB_NOMINATE;
			if (d->o.verbose)
				logline("%s/%s: %s", p.ns, p.name, dc.message);
			break;
		case GF_LIVE_UNSCHEDULABLE:
		default:
			d->attempts[dc.result == GF_LIVE_UNSCHEDULABLE ? A_UNSCHEDULABLE : A_INVALID]++;
			j.kind = JOB_FAILED;
			/* The same reason again within 5 minutes: no new event (kube-scheduler's
			 * recorder aggregates them too, but by message text, which names node counts). */
			report = gf_live_report_due(d->live, p.uid, dc.reason, t1, 300);
			if (report && (d->o.verbose || dc.result == GF_LIVE_INVALID))
				logline("%s/%s: %s", p.ns, p.name, dc.message);
			break;
		}
		if (report)
			push_job(d, &j);
		if (d->o.preemption)
			push_evictions(d);
	}
	pthread_mutex_unlock(&d->mu);
	return NULL;
}

/* ---- HTTP: metrics, healthz ------------------------------------------------ */

static void h_healthz(void *ud, const struct gf_http_request *req, struct gf_http_response *resp)
{
	(void)req;
	struct daemon *d = ud;
	pthread_mutex_lock(&d->mu);
	bool ok = d->synced[0] && d->synced[1];
	pthread_mutex_unlock(&d->mu);
	if (!ok)
		gf_http_response_error(resp, 503, "syncing with the API server");
	else
		gf_obuf_puts(&resp->body, "ok\n");
}

static void h_metrics(void *ud, const struct gf_http_request *req, struct gf_http_response *resp)
{
	(void)req;
	struct daemon *d = ud;
	struct gf_obuf *o = &resp->body;
	resp->content_type = "text/plain; version=0.0.4; charset=utf-8";
	pthread_mutex_lock(&d->mu);
	struct gf_live_stats s;
	gf_live_stats(d->live, &s);
	gf_obuf_printf(o, "# HELP gpufleet_schedule_attempts_total Scheduling decisions by result.\n"
			  "# TYPE gpufleet_schedule_attempts_total counter\n");
	for (int i = 0; i < A_COUNT; i++)
		gf_obuf_printf(o, "gpufleet_schedule_attempts_total{result=\"%s\"} %llu\n", attempt_names[i],
			       (unsigned long long)d->attempts[i]);
	gf_obuf_printf(o, "# HELP gpufleet_schedule_bindings_total Binding calls by outcome.\n"
			  "# TYPE gpufleet_schedule_bindings_total counter\n");
	for (int i = 0; i < B_COUNT; i++)
		gf_obuf_printf(o, "gpufleet_schedule_bindings_total{result=\"%s\"} %llu\n", bind_names[i],
			       (unsigned long long)d->binds[i]);
	histo_render(o, "gpufleet_schedule_attempt_duration_seconds",
		     "Time to decide one pod (filter and score every node, choose GPUs).", &d->h_attempt);
	histo_render(o, "gpufleet_schedule_e2e_duration_seconds",
		     "From taking a pod off the queue to its binding being accepted.", &d->h_e2e);
	gf_obuf_printf(o, "# HELP gpufleet_extender_requests_total Extender calls by verb and outcome.\n"
			  "# TYPE gpufleet_extender_requests_total counter\n");
	for (int v = 0; v < V_COUNT; v++)
		for (int k = 0; k < 3; k++)
			gf_obuf_printf(o, "gpufleet_extender_requests_total{verb=\"%s\",code=\"%s\"} %llu\n",
				       verb_names[v], ext_codes[k], (unsigned long long)d->ext_requests[v][k]);
	gf_obuf_printf(o, "# HELP gpufleet_extender_names_reused_total Extender calls whose node list was "
			  "the last filter answer, byte for byte (not read again).\n"
			  "# TYPE gpufleet_extender_names_reused_total counter\n");
	for (int v = 0; v < V_BIND; v++)
		gf_obuf_printf(o, "gpufleet_extender_names_reused_total{verb=\"%s\"} %llu\n", verb_names[v],
			       (unsigned long long)d->ext_reused[v]);
	for (int v = 0; v < V_COUNT; v++) {
		char name[96];
		snprintf(name, sizeof(name), "gpufleet_extender_%s_duration_seconds", verb_names[v]);
		histo_render(o, name, "Extender request handling time (in the server).", &d->h_ext[v]);
	}
	if (d->o.queues) {
		gf_obuf_printf(o, "# HELP gpufleet_queue_used_milli GPU usage charged to each Queue (milli-GPU: bound, "
				  "assumed and admitted pods); -1 before the engine exists.\n"
				  "# TYPE gpufleet_queue_used_milli gauge\n");
		gf_live_each_queue(d->live, queue_metric, o);
		gf_obuf_printf(o, "# HELP gpufleet_queue_events_total Queue objects received (errors: refused).\n"
				  "# TYPE gpufleet_queue_events_total counter\n"
				  "gpufleet_queue_events_total %llu\ngpufleet_queue_events_total{result=\"refused\"} %llu\n",
			       (unsigned long long)d->queue_events, (unsigned long long)d->queue_decode_errors);
	}
	double cap = (double)s.gpu_capacity_milli;
	gf_obuf_printf(o,
		       "# HELP gpufleet_pending_pods Pods waiting: queued or parked after an unschedulable attempt.\n"
		       "# TYPE gpufleet_pending_pods gauge\n"
		       "gpufleet_pending_pods{state=\"queued\"} %zu\ngpufleet_pending_pods{state=\"unschedulable\"} %zu\n"
		       "gpufleet_pending_pods{state=\"binding\"} %zu\n"
		       "# HELP gpufleet_bound_pods Pods bound to nodes, as accounted.\n# TYPE gpufleet_bound_pods gauge\n"
		       "gpufleet_bound_pods %zu\n"
		       "# HELP gpufleet_nodes Nodes known.\n# TYPE gpufleet_nodes gauge\ngpufleet_nodes %zu\n"
		       "# HELP gpufleet_gpus GPUs in the cluster.\n# TYPE gpufleet_gpus gauge\ngpufleet_gpus %lld\n"
		       "# HELP gpufleet_gpu_capacity_milli GPU capacity in milli-GPU.\n# TYPE gpufleet_gpu_capacity_milli gauge\n"
		       "gpufleet_gpu_capacity_milli %lld\n"
		       "# HELP gpufleet_gpu_allocated_milli GPU share allocated, milli-GPU.\n# TYPE gpufleet_gpu_allocated_milli gauge\n"
		       "gpufleet_gpu_allocated_milli %lld\n"
		       "# HELP gpufleet_gpu_allocation_ratio Allocated / capacity.\n# TYPE gpufleet_gpu_allocation_ratio gauge\n"
		       "gpufleet_gpu_allocation_ratio %.6f\n"
		       "# HELP gpufleet_gpu_fragmentation_milli FGD fragmentation of the cluster w.r.t. the target workload (pods seen), milli-GPU.\n"
		       "# TYPE gpufleet_gpu_fragmentation_milli gauge\ngpufleet_gpu_fragmentation_milli %.3f\n"
		       "# HELP gpufleet_gpu_fragmentation_ratio Fragmentation / capacity.\n# TYPE gpufleet_gpu_fragmentation_ratio gauge\n"
		       "gpufleet_gpu_fragmentation_ratio %.6f\n"
		       "# HELP gpufleet_state_conflicts_total Bound pods that did not fit the accounted state (GPU given out twice by someone).\n"
		       "# TYPE gpufleet_state_conflicts_total counter\ngpufleet_state_conflicts_total %llu\n"
		       "# HELP gpufleet_engine_rebuilds_total Engine state rebuilt: the first nodes, a node GPU model or memory change, tombstone compaction (other node changes are applied in place).\n"
		       "# TYPE gpufleet_engine_rebuilds_total counter\ngpufleet_engine_rebuilds_total %llu\n"
		       "# HELP gpufleet_engine_score_resets_total Cached scores dropped (rebuilds, a new FGD target workload).\n"
		       "# TYPE gpufleet_engine_score_resets_total counter\ngpufleet_engine_score_resets_total %llu\n"
		       "# HELP gpufleet_events_total FailedScheduling events written (errors: failed writes).\n# TYPE gpufleet_events_total counter\n"
		       "gpufleet_events_total %llu\ngpufleet_event_errors_total %llu\n"
		       "# HELP gpufleet_decode_errors_total Objects from the API server that could not be decoded.\n"
		       "# TYPE gpufleet_decode_errors_total counter\ngpufleet_decode_errors_total %llu\n"
		       "# HELP gpufleet_watch_restarts_total Broken watches resumed or relisted.\n# TYPE gpufleet_watch_restarts_total counter\n"
		       "gpufleet_watch_restarts_total{resource=\"nodes\"} %llu\ngpufleet_watch_restarts_total{resource=\"pods\"} %llu\n"
		       "# HELP gpufleet_watch_events_total Objects received from the API server (lists and watches).\n"
		       "# TYPE gpufleet_watch_events_total counter\n"
		       "gpufleet_watch_events_total{resource=\"nodes\"} %llu\ngpufleet_watch_events_total{resource=\"pods\"} %llu\n",
		       s.pods_queued, s.pods_parked, s.pods_assumed, s.pods_bound, s.nodes, (long long)s.gpus,
		       (long long)s.gpu_capacity_milli, (long long)s.gpu_used_milli,
		       cap > 0 ? (double)s.gpu_used_milli / cap : 0.0, s.frag_milli,
		       cap > 0 ? s.frag_milli / cap : 0.0, (unsigned long long)s.conflicts,
		       (unsigned long long)s.rebuilds, (unsigned long long)s.resets,
		       (unsigned long long)d->events_total, (unsigned long long)d->event_errors,
		       (unsigned long long)d->decode_errors, (unsigned long long)d->watch_restarts[0],
		       (unsigned long long)d->watch_restarts[1], (unsigned long long)d->watch_events[0],
		       (unsigned long long)d->watch_events[1]);
	gf_obuf_printf(o, "# HELP gpufleet_pod_group_status_total PodGroup status writes (errors: failed writes).\n"
			  "# TYPE gpufleet_pod_group_status_total counter\ngpufleet_pod_group_status_total %llu\n"
			  "gpufleet_pod_group_status_errors_total %llu\n",
		       (unsigned long long)d->gstatus_total, (unsigned long long)d->gstatus_errors);
	gf_obuf_printf(o, "# HELP gpufleet_pod_notes_total Waiting pods' gpufleet.io/EstimatedStart conditions "
			  "written (errors: failed writes).\n# TYPE gpufleet_pod_notes_total counter\n"
			  "gpufleet_pod_notes_total %llu\ngpufleet_pod_note_errors_total %llu\n",
		       (unsigned long long)d->notes_total, (unsigned long long)d->note_errors);
	if (d->o.preemption)
		gf_obuf_printf(o, "# HELP gpufleet_preemption_victims_total Pods evicted by preemption (gone: already "
				  "deleted; error: the API refused).\n# TYPE gpufleet_preemption_victims_total counter\n"
				  "gpufleet_preemption_victims_total{result=\"evicted\"} %llu\n"
				  "gpufleet_preemption_victims_total{result=\"gone\"} %llu\n"
				  "gpufleet_preemption_victims_total{result=\"error\"} %llu\n"
				  "# HELP gpufleet_preemptors_nominated_total Preemptors nominated (bound once their victims "
				  "are gone).\n# TYPE gpufleet_preemptors_nominated_total counter\n"
				  "gpufleet_preemptors_nominated_total %llu\n",
			       (unsigned long long)d->evictions[0], (unsigned long long)d->evictions[1],
			       (unsigned long long)d->evictions[2], (unsigned long long)d->nominated);
	if (d->o.preemption)
		gf_obuf_printf(o, "# HELP gpufleet_pdb_events_total PodDisruptionBudget objects received (refused: "
				  "not decoded, protect nothing).\n# TYPE gpufleet_pdb_events_total counter\n"
				  "gpufleet_pdb_events_total %llu\ngpufleet_pdb_events_total{result=\"refused\"} %llu\n",
			       (unsigned long long)d->pdb_events, (unsigned long long)d->pdb_decode_errors);
	gf_costrec_render(d->live, o); /* the allocation record for `gpufleet cost` */
	gf_obuf_printf(o, "# HELP gpufleet_leader 1 if this replica leads (binds), 0 if a standby; 1 without leader election.\n"
			  "# TYPE gpufleet_leader gauge\ngpufleet_leader %d\n"
			  "# HELP gpufleet_leader_takeovers_total Terms begun as leader (bound pods read from the API server).\n"
			  "# TYPE gpufleet_leader_takeovers_total counter\ngpufleet_leader_takeovers_total %llu\n"
			  "# HELP gpufleet_leader_stepdowns_total Times this replica found its Lease rewritten by "
			  "someone else and stepped down for a lease duration.\n"
			  "# TYPE gpufleet_leader_stepdowns_total counter\ngpufleet_leader_stepdowns_total %lu\n",
		       gf_leader_leading(d->leader) ? 1 : 0, (unsigned long long)d->takeovers,
		       gf_leader_stepdowns(d->leader));
	if (d->gangs)
		gf_obuf_printf(o, "# HELP gpufleet_pod_groups PodGroups known, of both APIs (read only; by API: gpufleet_gangs).\n"
				  "# TYPE gpufleet_pod_groups gauge\ngpufleet_pod_groups %zu\n"
				  "# HELP gpufleet_pod_group_events_total PodGroup objects received (errors: undecodable).\n"
				  "# TYPE gpufleet_pod_group_events_total counter\ngpufleet_pod_group_events_total %llu\n"
				  "gpufleet_pod_group_decode_errors_total %llu\n",
			       gf_gangs_count(d->gangs), (unsigned long long)d->group_events,
			       (unsigned long long)d->group_decode_errors);
	if (d->gangs)
		gf_gangs_render(d->gangs, o, 1000);
	pthread_mutex_unlock(&d->mu);
}

/* ---- HTTP: the extender ------------------------------------------------------ */

/* A Kubernetes Status body: HTTP code, reason (e.g. "BadRequest"), message. */
static void status_body(struct gf_http_response *resp, unsigned code, const char *reason, const char *msg)
{
	cJSON *s = cJSON_CreateObject();
	cJSON_AddStringToObject(s, "kind", "Status");
	cJSON_AddStringToObject(s, "apiVersion", "v1");
	cJSON_AddObjectToObject(s, "metadata");
	cJSON_AddStringToObject(s, "status", "Failure");
	cJSON_AddStringToObject(s, "message", msg);
	cJSON_AddStringToObject(s, "reason", reason);
	cJSON_AddNumberToObject(s, "code", code);
	char *t = cJSON_PrintUnformatted(s);
	cJSON_Delete(s);
	gf_obuf_reset(&resp->body);
	resp->status = code;
	resp->content_type = "application/json";
	gf_obuf_puts(&resp->body, t ? t : "{}");
	free(t);
}

/* A Kubernetes Status body with HTTP 400. */
static void bad_request(struct gf_http_response *resp, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void bad_request(struct gf_http_response *resp, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	status_body(resp, 400, "BadRequest", msg);
}

static const cJSON *get_ci(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItem(o, k); /* Go decodes case-insensitively */
}

/* Parse ExtenderArgs (k8s/extargs.h); a 400 with a Status body when malformed. */
static bool ext_args(struct daemon *d, const struct gf_http_request *req, struct gf_http_response *resp,
		     struct gf_ext_args *a, struct gf_k8s_pod *p)
{
	char msg[400];
	const struct ext_memo *m = &d->memo; /* ours under ext_mu: no other lock */
	struct gf_ext_hint h = { m->span, m->span_len, m->names, m->lens, m->n };
	gf_err e = gf_ext_args_parse(req->body, req->body_len, m->span ? &h : NULL, a, p, msg, sizeof(msg));
	if (e) {
		bad_request(resp, "%s", msg);
		return false;
	}
	return true;
}

/* Count an extender call by its answer's status (200, 400, or 403: not authorized). */
static void count_ext(struct daemon *d, int verb, const struct gf_http_response *resp, double t0)
{
	pthread_mutex_lock(&d->mu);
	d->ext_requests[verb][resp->status == 403 ? 2 : resp->status != 200]++;
	histo_add(&d->h_ext[verb], now_s() - t0);
	pthread_mutex_unlock(&d->mu);
}

/*
 * May this request use the extender?  Without TLS the listener is loopback
 * only (gf_kube_scheduler_run); with TLS the server has verified the
 * client's certificate already (require_client_cert), and here its CN is
 * checked against --extender-allowed-names.  A 403 Status when not.
 */
static bool ext_authorized(struct daemon *d, const struct gf_http_request *req, struct gf_http_response *resp)
{
	if (!d->o.ext_tls_cert_pem)
		return true;
	char cn[256];
	if (!gf_http_request_peer_cn(req, cn, sizeof(cn))) {
		status_body(resp, 403, "Forbidden", "a client certificate signed by the extender's client CA is required");
		return false;
	}
	if (!d->o.n_ext_allowed_cns)
		return true;
	for (size_t i = 0; i < d->o.n_ext_allowed_cns; i++)
		if (!strcmp(cn, d->o.ext_allowed_cns[i]))
			return true;
	status_body(resp, 403, "Forbidden", "the client certificate's common name is not one of --extender-allowed-names");
	return false;
}

static bool unresolvable(const char *why)
{
	return !strcmp(why, gf_why_text(GF_WHY_MODEL)) || !strcmp(why, gf_why_text(GF_WHY_GPU_COUNT)) ||
	       !strcmp(why, "node not known to gpufleet");
}

/* FailedNodes / FailedAndUnresolvableNodes: {"name":"reason",...}; msg (if not NULL) for every node. */
static void put_failed(struct gf_obuf *o, const char *key, const struct gf_ext_args *a, const char **why,
		       const char *msg, bool unres)
{
	gf_obuf_printf(o, ",\"%s\":{", key);
	bool first = true;
	for (size_t i = 0; i < a->n; i++) {
		const char *r = msg ? msg : why[i];
		if (!r || (!msg && unresolvable(r) != unres))
			continue;
		gf_ext_put_name(o, a, i, first ? "" : ",", ":");
		first = false;
		gf_json_put_str(o, r);
	}
	gf_obuf_append(o, "}", 1);
}

/*
 * The node indices for a's names (under mu): the memo's when a's list is
 * the memo's (re-resolved first if nodes came or went since), else resolved
 * into a new array.  *ci is owned (free it) unless *borrowed.
 */
static gf_err ext_resolve(struct daemon *d, const struct gf_ext_args *a, const int32_t **ci,
			  bool *borrowed, uint64_t *epoch)
{
	struct ext_memo *m = &d->memo;
	gf_err e;
	*borrowed = false;
	if (a->hit && m->span) {
		if ((e = gf_live_epoch(d->live, epoch)))
			return e;
		if (*epoch != m->epoch) {
			m->state = 0; /* nodes came or went: what fit is unknown */
			if ((e = gf_live_resolve(d->live, m->names, m->lens, m->n, m->ci, &m->epoch)))
				return e;
		}
		*ci = m->ci, *epoch = m->epoch, *borrowed = true;
		return GF_OK;
	}
	int32_t *own = malloc((a->n ? a->n : 1) * sizeof(*own));
	if (!own)
		return GF_NOMEM;
	if ((e = gf_live_resolve(d->live, a->names, a->lens, a->n, own, epoch)))
		free(own);
	else
		*ci = own;
	return e;
}

/* Keep filter's answer (the NodeNames array at o->data + at, the names not in why) for prioritize. */
static void memo_keep(struct daemon *d, const struct gf_ext_args *a, const struct gf_k8s_pod *p,
		      const char **why, const int32_t *ci, uint64_t epoch, uint64_t state, const struct gf_obuf *o,
		      size_t at)
{
	struct ext_memo *m = &d->memo;
	if (a->hit)
		return; /* the same list, the same answer: the memo stays */
	memo_forget(m);
	if (!a->plain || gf_obuf_error(o))
		return;
	size_t n = 0, len = o->len - at;
	for (size_t i = 0; i < a->n; i++)
		n += !why[i];
	if (len > m->buf_cap) {
		free(m->buf);
		m->buf_cap = 0;
		if (!(m->buf = malloc(len)))
			return;
		m->buf_cap = len;
	}
	if (n > m->cap) {
		free(m->names);
		free(m->lens);
		free(m->ci);
		m->cap = 0;
		m->names = malloc(n * sizeof(*m->names));
		m->lens = malloc(n * sizeof(*m->lens));
		m->ci = malloc(n * sizeof(*m->ci));
		if (!m->names || !m->lens || !m->ci)
			return;
		m->cap = n;
	}
	memcpy(m->buf, o->data + at, len);
	/* where each name sits: as gf_ext_put_names writes them ("[" then "a","b"), or as sent */
	bool echoed = n == a->n && a->span && a->span_len == len;
	size_t off = 1;
	for (size_t i = 0; i < a->n; i++) {
		if (why[i])
			continue;
		if (echoed)
			off = (size_t)(a->names[i] - a->span);
		else
			off += m->n ? 3 : 1; /* past the last name's closing quote, the comma, the quote */
		m->names[m->n] = m->buf + off;
		m->lens[m->n] = a->lens[i];
		m->ci[m->n++] = ci[i];
		if (!echoed)
			off += a->lens[i];
	}
	m->span = m->buf;
	m->span_len = len;
	m->epoch = epoch;
	snprintf(m->uid, sizeof(m->uid), "%s", p->uid);
	snprintf(m->rv, sizeof(m->rv), "%s", p->rv);
	m->state = state;
}

/* Lists this long are judged in parts of FAN_CHUNK names with the helper thread. */
#define FAN_MIN 1024
#define FAN_CHUNK 256

struct judge_job {
	const gf_live *l;
	const struct gf_live_judge *j;
	const struct gf_ext_args *a;
	int32_t *ci;
	const char **why;
};

static void judge_part(void *ctx, size_t lo, size_t hi)
{
	struct judge_job *jj = ctx;
	gf_live_judge_names(jj->l, jj->j, jj->a->names + lo, jj->a->lens + lo, hi - lo, jj->ci + lo,
			    jj->why + lo);
}

static void filter_locked(void *ud, const struct gf_http_request *req, struct gf_http_response *resp)
{
	struct daemon *d = ud;
	double t0 = now_s();
	static struct gf_k8s_pod p; /* filter and prioritize run one at a time (ext_mu) */
	struct gf_ext_args a = { 0 };
	if (!ext_authorized(d, req, resp) || !ext_args(d, req, resp, &a, &p)) {
		gf_ext_args_release(&a);
		count_ext(d, V_FILTER, resp, t0);
		return;
	}
	const char **why = calloc(a.n ? a.n : 1, sizeof(*why));
	char msg[300] = "";
	gf_err e = GF_NOMEM;
	const int32_t *ci = NULL;
	bool borrowed = false;
	uint64_t epoch = 0;
	struct gf_obuf *o = &resp->body;
	pthread_mutex_lock(&d->mu);
	if (why && !a.hit && a.n >= FAN_MIN && d->fan.started) {
		/* a new long list: resolve and judge it in parts, with the helper */
		int32_t *own = malloc(a.n * sizeof(*own));
		struct gf_live_judge j;
		e = own ? gf_live_judge_begin(d->live, &p, &j, msg, sizeof(msg)) : GF_NOMEM;
		if (!e) {
			struct judge_job jj = { d->live, &j, &a, own, why };
			fan_run(&d->fan, a.n, FAN_CHUNK, judge_part, &jj);
			epoch = j.epoch;
		}
		ci = own;
	} else if (why && !(e = ext_resolve(d, &a, &ci, &borrowed, &epoch))) {
		e = gf_live_filter_at(d->live, &p, epoch, ci, a.n, why, msg, sizeof(msg));
	}
	d->ext_reused[V_FILTER] += borrowed;
	uint64_t state = gf_live_state(d->live);
	pthread_mutex_unlock(&d->mu); /* the answer is written from a, why and the memo only */
	resp->content_type = "application/json";
	if (e && e != GF_INVAL) {
		gf_obuf_printf(o, "{\"Nodes\":null,\"NodeNames\":null,\"FailedNodes\":null,"
				  "\"FailedAndUnresolvableNodes\":null,\"Error\":\"%s\"}", gf_strerror(e));
	} else if (a.node_objects && !e) {
		/* nodeCacheCapable: false - send back the Node objects that pass */
		gf_obuf_puts(o, "{\"Nodes\":{\"metadata\":{},\"items\":[");
		bool first = true;
		if (a.item_text) { /* the fast path: the objects as sent */
			for (size_t i = 0; i < a.n; i++)
				if (!why[i]) {
					if (!first)
						gf_obuf_append(o, ",", 1);
					gf_obuf_append(o, a.item_text[i], a.item_len[i]);
					first = false;
				}
		} else {
			size_t i = 0;
			const cJSON *it;
			cJSON_ArrayForEach(it, a.items)
			{
				if (!why[i]) {
					char *t = cJSON_PrintUnformatted(it);
					if (!first)
						gf_obuf_append(o, ",", 1);
					gf_obuf_puts(o, t ? t : "null");
					free(t);
					first = false;
				}
				i++;
			}
		}
		gf_obuf_puts(o, "]}");
		gf_obuf_puts(o, ",\"NodeNames\":null");
		put_failed(o, "FailedNodes", &a, why, NULL, false);
		put_failed(o, "FailedAndUnresolvableNodes", &a, why, NULL, true);
		gf_obuf_puts(o, ",\"Error\":\"\"}");
	} else {
		/* An invalid request fails on every node, and preemption cannot help. */
		(void)gf_obuf_space(o, (a.span ? a.span_len : 0) + 256); /* the usual answer in one allocation */
		gf_obuf_puts(o, "{\"Nodes\":null,\"NodeNames\":");
		size_t at = o->len, pass = 0;
		for (size_t i = 0; !e && i < a.n; i++)
			pass += !why[i];
		if (!e && pass == a.n && a.span) {
			gf_obuf_append(o, a.span, a.span_len); /* every node passes: the list as sent */
		} else {
			gf_obuf_append(o, "[", 1);
			if (!e)
				gf_ext_put_names(o, &a, why);
			gf_obuf_append(o, "]", 1);
		}
		if (!e)
			memo_keep(d, &a, &p, why, ci, epoch, state, o, at);
		if (!e && pass == a.n)
			gf_obuf_puts(o, ",\"FailedNodes\":{},\"FailedAndUnresolvableNodes\":{}");
		else
			put_failed(o, "FailedNodes", &a, why, NULL, false);
		if (e)
			put_failed(o, "FailedAndUnresolvableNodes", &a, why, msg, true);
		else if (pass != a.n)
			put_failed(o, "FailedAndUnresolvableNodes", &a, why, NULL, true);
		gf_obuf_puts(o, ",\"Error\":\"\"}");
	}
	if (!borrowed)
		free((void *)ci);
	gf_ext_args_release(&a);
	free(why);
	count_ext(d, V_FILTER, resp, t0);
}

static void prioritize_locked(void *ud, const struct gf_http_request *req, struct gf_http_response *resp)
{
	struct daemon *d = ud;
	double t0 = now_s();
	static struct gf_k8s_pod p;
	struct gf_ext_args a = { 0 };
	if (!ext_authorized(d, req, resp) || !ext_args(d, req, resp, &a, &p)) {
		gf_ext_args_release(&a);
		count_ext(d, V_PRIORITIZE, resp, t0);
		return;
	}
	int64_t *sc = calloc(a.n ? a.n : 1, sizeof(*sc));
	gf_err e = GF_NOMEM;
	const int32_t *ci = NULL;
	bool borrowed = false;
	uint64_t epoch = 0;
	pthread_mutex_lock(&d->mu);
	if (sc && !(e = ext_resolve(d, &a, &ci, &borrowed, &epoch)))
		e = gf_live_prioritize_at(d->live, &p, epoch, ci, a.n,
					  borrowed && p.uid[0] && !strcmp(p.uid, d->memo.uid) &&
							  !strcmp(p.rv, d->memo.rv) ? d->memo.state : 0,
					  sc);
	d->ext_reused[V_PRIORITIZE] += borrowed;
	pthread_mutex_unlock(&d->mu);
	struct gf_obuf *o = &resp->body;
	resp->content_type = "application/json";
	if (e)
		gf_obuf_puts(o, "[]");
	else
		gf_ext_put_priorities(o, &a, sc);
	if (!borrowed)
		free((void *)ci);
	free(sc);
	gf_ext_args_release(&a);
	count_ext(d, V_PRIORITIZE, resp, t0);
}

static void h_filter(void *ud, const struct gf_http_request *req, struct gf_http_response *resp)
{
	struct daemon *d = ud;
	pthread_mutex_lock(&d->ext_mu);
	filter_locked(ud, req, resp);
	pthread_mutex_unlock(&d->ext_mu);
}

static void h_prioritize(void *ud, const struct gf_http_request *req, struct gf_http_response *resp)
{
	struct daemon *d = ud;
	pthread_mutex_lock(&d->ext_mu);
	prioritize_locked(ud, req, resp);
	pthread_mutex_unlock(&d->ext_mu);
}

/* A pod uid as the API server writes it (a UUID): letters, digits, '-'. */
static bool uid_ok(const char *s)
{
	size_t n = strlen(s);
	if (!n || n >= GF_K8S_UID_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      s[i] == '-'))
			return false;
	return true;
}

/* Wait (under mu) until eb is answered, ext_bind_wait_s passed or we stop; true if answered. */
static bool ext_bind_wait(struct daemon *d, struct ext_bind *eb)
{
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += d->o.ext_bind_wait_s;
	while (!eb->done && !gf_kube_stopped(d->o.stop)) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		if (ts.tv_sec > until.tv_sec || (ts.tv_sec == until.tv_sec && ts.tv_nsec >= until.tv_nsec))
			break;
		ts.tv_nsec += 200000000L; /* a stop is seen within 200 ms */
		if (ts.tv_nsec >= 1000000000L)
			ts.tv_sec++, ts.tv_nsec -= 1000000000L;
		if (ts.tv_sec > until.tv_sec || (ts.tv_sec == until.tv_sec && ts.tv_nsec > until.tv_nsec))
			ts = until;
		pthread_cond_timedwait(&d->ext_cv, &d->mu, &ts);
	}
	return eb->done;
}

static void h_bind(void *ud, const struct gf_http_request *req, struct gf_http_response *resp)
{
	struct daemon *d = ud;
	double t0 = now_s();
	if (!ext_authorized(d, req, resp)) {
		count_ext(d, V_BIND, resp, t0);
		return;
	}
	cJSON *doc = cJSON_ParseWithLength(req->body, req->body_len);
	const char *name = cJSON_GetStringValue(get_ci(doc, "PodName"));
	const char *ns = cJSON_GetStringValue(get_ci(doc, "PodNamespace"));
	const char *uid = cJSON_GetStringValue(get_ci(doc, "PodUID"));
	const char *node = cJSON_GetStringValue(get_ci(doc, "Node"));
	const char *bad = !doc || !name || !ns || !uid || !node
				  ? "expected ExtenderBindingArgs {PodName, PodNamespace, PodUID, Node}"
			  : !gf_k8s_dns_label(ns) ? "PodNamespace: not a namespace (a DNS-1123 label, at most 63 bytes)"
			  : !gf_k8s_dns_subdomain(name) ? "PodName: not a pod name (a DNS-1123 subdomain, at most 253 bytes)"
			  : !gf_k8s_dns_subdomain(node) ? "Node: not a node name (a DNS-1123 subdomain, at most 253 bytes)"
			  : !uid_ok(uid) ? "PodUID: not a uid (letters, digits and '-', at most 63 bytes)"
					 : NULL;
	if (bad) {
		bad_request(resp, "%s", bad);
		cJSON_Delete(doc);
		count_ext(d, V_BIND, resp, t0);
		return;
	}
	/* checked above: every name fits its field */
	struct job j = { .kind = JOB_EXT_BIND };
	snprintf(j.ns, sizeof(j.ns), "%s", ns);
	snprintf(j.name, sizeof(j.name), "%s", name);
	snprintf(j.uid, sizeof(j.uid), "%s", uid);
	char err[640] = "";
	struct ext_bind *eb = NULL;
	pthread_mutex_lock(&d->mu);
	/* A standby (or a leader still reading the bound pods on taking over)
	 * binds nothing; the binder checks leadership and term again right
	 * before binding (ext_bind_run). */
	j.term = gf_leader_terms(d->leader);
	bool lead = ext_may_bind(d, j.term);
	if (lead && (eb = calloc(1, sizeof(*eb)))) {
		eb->refs = 2;
		snprintf(eb->node, sizeof(eb->node), "%s", node);
		j.eb = eb;
	}
	if (!lead) {
		snprintf(err, sizeof(err), "this gpufleet replica is not the leader (or is still reading the "
			 "bound pods on taking over): it does not bind");
	} else if (!eb || !push_job(d, &j)) {
		snprintf(err, sizeof(err), "out of memory");
		free(eb);
	} else if (ext_bind_wait(d, eb)) {
		snprintf(err, sizeof(err), "%s", eb->err);
		if (!--eb->refs)
			free(eb);
	} else {
		snprintf(err, sizeof(err), "binding pod %.63s/%.253s did not finish within %d s (the API server is slow); "
			 "it may still complete", ns, name, d->o.ext_bind_wait_s);
		logline("extender bind of %s/%s: no answer within %d s; the binder carries on", ns, name,
			d->o.ext_bind_wait_s);
		if (!--eb->refs)
			free(eb);
	}
	pthread_mutex_unlock(&d->mu);
	resp->content_type = "application/json";
	gf_obuf_puts(&resp->body, "{\"Error\":");
	gf_json_put_str(&resp->body, err);
	gf_obuf_puts(&resp->body, "}");
	cJSON_Delete(doc);
	count_ext(d, V_BIND, resp, t0);
}

/* ---- run --------------------------------------------------------------------- */

/* Is a an IPv4 loopback literal (127.0.0.0/8)? */
static bool loopback(const char *a)
{
	struct in_addr in;
	return a && inet_pton(AF_INET, a, &in) == 1 && (ntohl(in.s_addr) >> 24) == 127;
}

/* The extender options make sense together (see scheduler.h); err says what does not. */
static gf_err check_ext_opts(const struct gf_kube_sched_opts *o, char *err, size_t errlen)
{
	const char *pre = o->extender_prefix ? o->extender_prefix : "/gpusched";
	size_t n = strlen(pre);
	if (n > GF_EXT_PREFIX_MAX || pre[0] != '/') {
		snprintf(err, errlen, "the extender prefix must start with '/' and be at most %d bytes (got %zu)",
			 GF_EXT_PREFIX_MAX, n);
		return GF_INVAL;
	}
	for (size_t i = 0; i < n; i++)
		if (pre[i] <= 0x20 || pre[i] >= 0x7f || strchr("?#%*\\", pre[i])) {
			snprintf(err, errlen, "the extender prefix may hold printable ASCII but spaces, '?', '#', '%%', "
				 "'*' and '\\' (byte %zu is not)", i + 1);
			return GF_INVAL;
		}
	if (o->ext_bind_wait_s < 0 || o->ext_bind_wait_s > GF_EXT_BIND_WAIT_MAX_S) {
		snprintf(err, errlen, "the extender's bind wait is 1..%d s (got %d)", GF_EXT_BIND_WAIT_MAX_S,
			 o->ext_bind_wait_s);
		return GF_INVAL;
	}
	int tls = !!o->ext_tls_cert_pem + !!o->ext_tls_key_pem + !!o->ext_client_ca_pem;
	if (tls && tls != 3) {
		snprintf(err, errlen, "the extender's TLS is mutual: give its certificate, key and client CA together");
		return GF_INVAL;
	}
	if (!tls && o->n_ext_allowed_cns) {
		snprintf(err, errlen, "allowed client names need the extender's TLS (certificate, key, client CA)");
		return GF_INVAL;
	}
	if (!tls && !loopback(o->ext_addr ? o->ext_addr : "127.0.0.1")) {
		snprintf(err, errlen, "the extender serves plain HTTP on loopback only (%s is not): give its TLS "
			 "certificate, key and client CA to serve it beyond (mutual TLS)",
			 o->ext_addr && o->ext_addr[0] ? o->ext_addr : "all interfaces");
		return GF_INVAL;
	}
	return GF_OK;
}

/*
 * The extender listener's threads: a bind waiting on the API server holds
 * one, filter and prioritize (one at a time, ext_mu) go on with the others.
 */
#define EXT_THREADS 4

gf_err gf_kube_scheduler_run(const struct gf_kube_sched_opts *opts, char *err, size_t errlen)
{
	static const char *const default_profiles[] = { "default-scheduler" };
	gf_err e = check_ext_opts(opts, err, errlen);
	if (e)
		return e;
	struct daemon *d = calloc(1, sizeof(*d));
	if (!d)
		return GF_NOMEM;
	d->o = *opts;
	if (!d->o.scheduler_name)
		d->o.scheduler_name = "gpufleet";
	if (d->o.binders <= 0)
		d->o.binders = 16;
	gf_kube_bind_node_order(!d->o.unordered_binds);
	if (d->o.ext_bind_wait_s <= 0)
		d->o.ext_bind_wait_s = GF_EXT_BIND_WAIT_S;
	if (!d->o.ext_addr)
		d->o.ext_addr = "127.0.0.1";
	if (!d->o.n_ext_profiles)
		d->o.ext_profiles = default_profiles, d->o.n_ext_profiles = 1;
	snprintf(d->prefix, sizeof(d->prefix), "%s", d->o.extender_prefix ? d->o.extender_prefix : "/gpusched");
	size_t pl = strlen(d->prefix);
	while (pl && d->prefix[pl - 1] == '/')
		d->prefix[--pl] = '\0';
	pthread_mutex_init(&d->mu, NULL);
	pthread_cond_init(&d->work, NULL);
	pthread_cond_init(&d->jobs_cv, NULL);
	pthread_cond_init(&d->ext_cv, NULL);
	pthread_mutex_init(&d->ext_mu, NULL);
	fan_start(&d->fan);
	struct gf_live_opts lo = { .policy = d->o.policy, .scheduler_name = d->o.scheduler_name,
				   .seed = d->o.seed, .target_pct = d->o.target_pct,
				   .queue_policy = d->o.queue_policy, .queues = d->o.queues,
				   .preemption = d->o.preemption, .preempt_wait_s = d->o.preempt_wait_s };
	e = gf_live_create(&lo, &d->live);
	struct refl_thread rt[2] = { 0 };
	struct group_thread gt[2] = { { 0 } };
	struct queue_thread qt[2] = { { 0 } };
	struct pdb_thread pt = { 0 };
	struct binder *bs = NULL;
	gf_http_server *srv = NULL, *esrv = NULL;
	int nb = 0, nrt = 0;
	bool sched_started = false;
	pthread_t st;
	if (e)
		goto out;
	/* Bounded API calls: binders give up a request after 10 s (then retry:
	 * client.h), and every client stops at once on a stop.  With leader
	 * election a binding must end within lease - renew seconds of the
	 * leadership check before it (lease.h): one try, bounded. */
	struct gf_kube_client_opts co = { .seed = d->o.seed ^ 0x5eed, .stop = d->o.stop };
	long bind_ms = 10000;
	int bind_retries = 0;
	if (d->o.lease_name) {
		int ls = d->o.lease_s > 0 ? d->o.lease_s : 15, rs = d->o.renew_s > 0 ? d->o.renew_s : 10;
		bind_ms = (ls - rs) * 1000L - 1000;
		bind_retries = -1;
		if (bind_ms < 1000) {
			snprintf(err, errlen, "the lease duration must exceed the renew deadline by at least 2 s");
			e = GF_INVAL;
			goto out;
		}
	}

	for (int i = 0; i < 3; i++)
		snprintf(d->route_paths[i], sizeof(d->route_paths[i]), "%s/%s", d->prefix,
			 (const char *[]){ "filter", "prioritize", "bind" }[i]);
	struct gf_http_route routes[] = {
		{ "GET", "/metrics", h_metrics, d },
		{ "GET", "/healthz", h_healthz, d },
	};
	struct gf_http_route ext_routes[] = {
		{ "POST", d->route_paths[0], h_filter, d },
		{ "POST", d->route_paths[1], h_prioritize, d },
		{ "POST", d->route_paths[2], h_bind, d },
	};
	struct gf_http_config hc = { .bind_addr = d->o.listen_addr, .port = d->o.port, .routes = routes,
				     .nroutes = 2, .max_conns = 256 };
	if ((e = gf_http_server_create(&hc, &srv))) {
		snprintf(err, errlen, "cannot serve HTTP on %s:%u: %s", d->o.listen_addr ? d->o.listen_addr : "*",
			 d->o.port, gf_strerror(e));
		goto out;
	}
	struct gf_http_config ec = { .bind_addr = d->o.ext_addr, .port = d->o.ext_port, .routes = ext_routes,
				     .nroutes = 3, .max_body = 64u << 20, .max_response = 64u << 20,
				     .max_conns = 64, .threads = EXT_THREADS, .tls_cert_pem = d->o.ext_tls_cert_pem,
				     .tls_key_pem = d->o.ext_tls_key_pem, .tls_client_ca_pem = d->o.ext_client_ca_pem,
				     .require_client_cert = d->o.ext_client_ca_pem != NULL };
	if ((e = gf_http_server_create(&ec, &esrv))) {
		snprintf(err, errlen, "cannot serve the extender on %s:%u: %s%s", d->o.ext_addr[0] ? d->o.ext_addr : "*",
			 d->o.ext_port, gf_strerror(e),
			 e == GF_INVAL && d->o.ext_tls_cert_pem ? " (check the TLS certificate, key and CA)" : "");
		goto out;
	}
	logline("serving /metrics and /healthz on port %u, the extender (%s/{filter,prioritize,bind}) on "
		"%s:%u (%s); scheduler name %s, policy %s, %s", gf_http_server_port(srv), d->prefix,
		d->o.ext_addr[0] ? d->o.ext_addr : "*", gf_http_server_port(esrv),
		d->o.ext_tls_cert_pem ? "mutual TLS" : "plain HTTP, loopback", d->o.scheduler_name,
		d->o.policy ? d->o.policy->name : "fgd", d->o.standalone ? "standalone" : "extender only");

	for (int i = 0; i < 2; i++) {
		rt[i].r.d = d;
		rt[i].r.pods = i == 1;
		co.seed = d->o.seed + 17 + (uint64_t)i;
		co.timeout_ms = 60000; /* a LIST of many pods */
		if ((e = gf_kube_client_create(d->o.conn, &co, &rt[i].k)))
			goto out;
		if (pthread_create(&rt[i].t, NULL, reflector_main, &rt[i])) {
			e = GF_NOMEM;
			goto out;
		}
		nrt++;
	}
	if ((d->o.pod_groups || d->o.workload_groups) && (e = gf_gangs_create(&d->gangs)))
		goto out;
	if (d->gangs)
		gf_live_set_gangs(d->live, d->gangs); /* not kube: gangs placed all or nothing */
	for (int i = 0; i < 2; i++) {
		if (!(i ? d->o.workload_groups : d->o.pod_groups))
			continue;
		co.seed = d->o.seed + 19 + (uint64_t)i * 1000;
		co.timeout_ms = 60000;
		if ((e = gf_kube_client_create(d->o.conn, &co, &gt[i].k)))
			goto out;
		gt[i].d = d;
		gt[i].workload = i == 1;
		if (pthread_create(&gt[i].t, NULL, group_main, &gt[i])) {
			e = GF_NOMEM;
			goto out;
		}
		gt[i].started = true;
	}
	for (int i = 0; d->o.queues && i < 2; i++) {
		co.seed = d->o.seed + 23 + (uint64_t)i * 1000;
		co.timeout_ms = 60000;
		if ((e = gf_kube_client_create(d->o.conn, &co, &qt[i].k)))
			goto out;
		qt[i].d = d;
		qt[i].ns = i == 1;
		if (pthread_create(&qt[i].t, NULL, queue_main, &qt[i])) {
			e = GF_NOMEM;
			goto out;
		}
		qt[i].started = true;
	}
	if (d->o.preemption) {
		co.seed = d->o.seed + 29;
		co.timeout_ms = 60000;
		if ((e = gf_kube_client_create(d->o.conn, &co, &pt.k)))
			goto out;
		pt.d = d;
		if (pthread_create(&pt.t, NULL, pdb_main, &pt)) {
			e = GF_NOMEM;
			goto out;
		}
		pt.started = true;
	}
	bs = calloc((size_t)d->o.binders, sizeof(*bs));
	if (!bs) {
		e = GF_NOMEM;
		goto out;
	}
	for (int i = 0; i < d->o.binders; i++) {
		bs[i].d = d;
		co.seed = d->o.seed + 100 + (uint64_t)i;
		co.timeout_ms = bind_ms;
		co.retries = bind_retries;
		if ((e = gf_kube_client_create(d->o.conn, &co, &bs[i].k)))
			goto out;
		if (pthread_create(&bs[i].t, NULL, binder_main, &bs[i])) {
			gf_kube_client_destroy(bs[i].k);
			e = GF_NOMEM;
			goto out;
		}
		nb++;
	}
	if (d->o.lease_name) {
		co.timeout_ms = 60000; /* a LIST of every bound pod */
		co.retries = 0;
		co.seed = d->o.seed + 99;
		if ((e = gf_kube_client_create(d->o.conn, &co, &d->lead_client)))
			goto out;
		struct gf_leader_opts lo2 = {
			.conn = d->o.conn, .ns = d->o.lease_namespace ? d->o.lease_namespace : "kube-system",
			.name = d->o.lease_name, .identity = d->o.identity, .lease_s = d->o.lease_s,
			.renew_s = d->o.renew_s, .retry_s = d->o.retry_s, .seed = d->o.seed ^ 0x1ea5e,
			.on_change = on_leader, .ud = d, .log = on_leader_log,
		};
		if ((e = gf_leader_start(&lo2, &d->leader))) {
			snprintf(err, errlen, "leader election: %s (lease %s, identity %s; renew deadline < lease "
				 "duration, retry period < renew deadline)", gf_strerror(e), d->o.lease_name,
				 d->o.identity ? d->o.identity : "(none)");
			goto out;
		}
		logline("leader election on lease %s/%s as %s", lo2.ns, lo2.name, gf_leader_identity(d->leader));
	}
	if (pthread_create(&st, NULL, sched_main, d)) {
		e = GF_NOMEM;
		goto out;
	}
	sched_started = true;
	while (!gf_kube_stopped(d->o.stop))
		gf_kube_sleep_ms(200, d->o.stop);
	e = GF_OK;
out:
	if (e && !err[0])
		snprintf(err, errlen, "%s", gf_strerror(e));
	gf_kube_stop(d->o.stop);
	pthread_mutex_lock(&d->mu); /* wake the waiting threads to see the stop */
	pthread_cond_broadcast(&d->jobs_cv);
	pthread_cond_broadcast(&d->work);
	pthread_cond_broadcast(&d->ext_cv);
	pthread_mutex_unlock(&d->mu);
	if (sched_started)
		pthread_join(st, NULL);
	for (int i = 0; i < nb; i++) {
		pthread_join(bs[i].t, NULL);
		gf_kube_client_destroy(bs[i].k);
	}
	free(bs);
	pthread_mutex_lock(&d->mu); /* extender binds no binder will run */
	for (size_t i = 0; i < d->jlen; i++) {
		struct job *j = &d->jobs[d->jhead + i];
		if (j->kind == JOB_EXT_BIND) {
			snprintf(j->eb->err, sizeof(j->eb->err), "the scheduler is stopping");
			ext_bind_done(d, j->eb);
		}
	}
	d->jlen = 0;
	pthread_mutex_unlock(&d->mu);
	gf_leader_stop(d->leader); /* nothing binds any more: release the lease */
	gf_kube_client_destroy(d->lead_client);
	for (int i = 0; i < nrt; i++)
		pthread_join(rt[i].t, NULL);
	for (int i = 0; i < 2; i++) {
		if (gt[i].started)
			pthread_join(gt[i].t, NULL);
		gf_kube_client_destroy(gt[i].k);
	}
	gf_gangs_destroy(d->gangs);
	for (int i = 0; i < 2; i++) {
		if (qt[i].started)
			pthread_join(qt[i].t, NULL);
		gf_kube_client_destroy(qt[i].k);
	}
	if (pt.started)
		pthread_join(pt.t, NULL);
	gf_kube_client_destroy(pt.k);
	free(d->gstat);
	for (int i = 0; i < 2; i++)
		gf_kube_client_destroy(rt[i].k);
	gf_http_server_destroy(esrv);
	gf_http_server_destroy(srv);
	fan_stop(&d->fan);
	gf_live_destroy(d->live);
	memo_free(&d->memo);
	free(d->jobs);
	pthread_mutex_destroy(&d->mu);
	pthread_cond_destroy(&d->work);
	pthread_cond_destroy(&d->jobs_cv);
	pthread_cond_destroy(&d->ext_cv);
	pthread_mutex_destroy(&d->ext_mu);
	free(d);
	return e;
}
