/*
 * k8s/scheduler.c - the `gpufleet schedule` daemon (see scheduler.h): its
 * start and stop, the scheduling thread, leader election and the binders.
 *
 * Flow of a pod (standalone mode): pod watch (sched_watch.c) ->
 * gf_live_pod_set (queued) -> scheduling thread: gf_live_schedule_next
 * decides and assumes -> job queue -> a binder POSTs the Binding
 * (annotations in its metadata) -> the pod watch sees spec.nodeName and
 * confirms.  Failures: 409 re-reads the pod (bound to our node: done;
 * elsewhere or gone: forget; unbound: forget and retry); transport errors
 * and 5xx are retried inside the client with backoff, then the assumption
 * is dropped and the pod requeued.  Unschedulable pods get a
 * FailedScheduling Event and a PodScheduled=False condition
 * (sched_writes.c), and wait (parked) until a node changes so that they
 * may fit, after a per-pod backoff (1 s doubling to 10 s), or for at most
 * 5 minutes (gf_live_requeue_due); Events are aggregated per pod and
 * reason (gf_live_report_due).
 *
 * Extender mode: sched_extender.c answers kube-scheduler; its binds run
 * on the binders too (JOB_EXT_BIND).  With leader election a standby
 * decides nothing and binds nothing, and a binder binds (for the
 * scheduling thread or the extender) only while leading in the term the
 * decision or request came in.
 *
 * The job queue is a FIFO ring in one array (jhead, jlen), grown by
 * doubling (core/grow.h); 16 binders by default take jobs off it, each with
 * its own API client, so a slow API server holds up only its own writes.
 *
 * Latency figures come from CLOCK_MONOTONIC; they are adapter-side only.
 */
#include "k8s/scheduler.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/grow.h"
#include "core/hash.h"
#include "core/time.h"
#include "k8s/sched_impl.h"

/* ---- small things -------------------------------------------------------- */

double gf_ksched_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void gf_ksched_wallclock(char out[32])
{
	gf_rfc3339((int64_t)time(NULL), out);
}

void gf_ksched_log(const char *fmt, ...)
{
	char ts[32];
	gf_ksched_wallclock(ts);
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s gpufleet-schedule: %s\n", ts, line);
}

/* ---- jobs ---------------------------------------------------------------- */

bool gf_ksched_push_job(struct daemon *d, const struct job *j)
{
	if (d->jhead + d->jlen == d->jcap) {
		if (d->jhead) {
			memmove(d->jobs, d->jobs + d->jhead, d->jlen * sizeof(*d->jobs));
			d->jhead = 0;
		}
		if (d->jlen == d->jcap && gf_grow(&d->jobs, &d->jcap, d->jlen + 1, sizeof(*d->jobs), 64)) {
			if (j->kind == JOB_BIND)
				gf_live_forget(d->live, j->uid, true);
			return false;
		}
	}
	d->jobs[d->jhead + d->jlen++] = *j;
	pthread_cond_signal(&d->jobs_cv);
	return true;
}

/* The scheduling thread, under mu: the evictions its cycles chose go to the binders. */
static void push_evictions(struct daemon *d)
{
	/* d->evictions_buf: the scheduling thread only */
	size_t n;
	while ((n = gf_live_evictions(d->live, d->evictions_buf, EVICT_BATCH)) > 0) {
		for (size_t i = 0; i < n; i++) {
			struct job j = { .kind = JOB_EVICT, .term = gf_leader_terms(d->leader) };
			snprintf(j.ns, sizeof(j.ns), "%s", d->evictions_buf[i].ns);
			snprintf(j.name, sizeof(j.name), "%s", d->evictions_buf[i].name);
			snprintf(j.uid, sizeof(j.uid), "%s", d->evictions_buf[i].uid);
			snprintf(j.d.node, sizeof(j.d.node), "%s", d->evictions_buf[i].node);
			if (d->evictions_buf[i].by_uid[0])
				snprintf(j.d.message, sizeof(j.d.message), "Preempted by pod %.63s/%.120s (uid %s, priority "
					 "%d; this pod's priority %d) on node %.120s", d->evictions_buf[i].by_ns, d->evictions_buf[i].by_name,
					 d->evictions_buf[i].by_uid, d->evictions_buf[i].by_priority, d->evictions_buf[i].priority, d->evictions_buf[i].node);
			else
				snprintf(j.d.message, sizeof(j.d.message), "Preempted with its gang (another member's "
					 "node was needed); was on node %.120s", d->evictions_buf[i].node);
			gf_ksched_push_job(d, &j);
		}
	}
}

/* A job other than JOB_BIND, on binder b (no lock held). */
static void run_job(struct binder *b, const struct job *j)
{
	switch (j->kind) {
	case JOB_EXT_BIND: gf_ksched_ext_bind_run(b, j); break;
	case JOB_GROUP_STATUS: gf_ksched_send_group_status(b->d, b->k, j); break;
	case JOB_NOTE: gf_ksched_send_note(b->d, b->k, j); break;
	case JOB_EVICT: gf_ksched_send_evict(b->d, b->k, j); break;
	case JOB_NOMINATE: gf_ksched_send_nominate(b->d, b->k, j); break;
	case JOB_FAILED: gf_ksched_send_failed(b->d, b->k, j); break;
	case JOB_BIND: break;
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
		if (j.kind != JOB_BIND) {
			run_job(b, &j);
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
		double t1 = gf_ksched_now();
		if (r == B_ERROR && !retry)
			gf_ksched_log("binding %s/%s to %s refused: %s", j.ns, j.name, j.d.node, err);
		else if (r == B_ERROR)
			gf_ksched_log("binding %s/%s to %s failed, will retry: %s", j.ns, j.name, j.d.node, err);
		else if (d->o.verbose)
			gf_ksched_log("bound %s/%s to %s gpus=%d milli=%d (%s)", j.ns, j.name, j.d.node, j.d.ngpus,
				j.d.milli, gf_ksched_bind_names[r]);
		pthread_mutex_lock(&d->mu);
		d->binding--;
		d->binds[r]++;
		if (r == B_OK || r == B_CONFLICT_DONE) {
			gf_ksched_histo_add(&d->h_e2e, t1 - j.t0);
		} else {
			gf_live_forget(d->live, j.uid, retry);
			if (r == B_ERROR && !retry) {
				struct job f = j;
				f.kind = JOB_FAILED;
				f.d.result = GF_LIVE_UNSCHEDULABLE;
				snprintf(f.d.message, sizeof(f.d.message), "binding rejected: %.400s", err);
				gf_ksched_push_job(d, &f);
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
	struct gf_k8s_pod *p = &d->lead_pod; /* the scheduling thread only */
	char err[300];
	if (strcmp(type, "SYNC") || gf_k8s_pod_decode(obj, p, err, sizeof(err)) || !p->node[0])
		return;
	pthread_mutex_lock(&d->mu);
	gf_live_pod_set(d->live, p);
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
	double t0 = gf_ksched_now();
	if (t0 - d->lead_failed_at < 1.0)
		return false;
	pthread_mutex_unlock(&d->mu);
	char err[512] = "";
	gf_err e = gf_kube_list(d->lead_client, "/api/v1/pods?fieldSelector=spec.nodeName%21%3D", rebuild_item,
				d, err, sizeof(err));
	if (e) {
		gf_ksched_log("leader: reading the bound pods failed (%s); retrying in 1 s", err);
		d->lead_failed_at = gf_ksched_now();
	}
	else
		gf_ksched_log("leader: bound pods read from the API server in %.3f s; scheduling", gf_ksched_now() - t0);
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
	gf_ksched_log("leader election: %s", line);
}

/*
 * Waiting pods' notes (estimated start, waiting reason) due now, as jobs for
 * the binders: every NOTE_EVERY_S at most NOTE_MAX (a bounded write rate;
 * what is left is due at the next round).  Under mu.
 */
#define NOTE_EVERY_S 2.0
static void push_notes(struct daemon *d, double t)
{
	/* d->notes: the scheduling thread only */
	size_t n = gf_live_notes_due(d->live, d->notes, NOTE_MAX);
	time_t wall = time(NULL);
	for (size_t i = 0; i < n; i++) {
		struct job j = { .kind = JOB_NOTE, .term = gf_leader_terms(d->leader), .est = -1 };
		snprintf(j.ns, sizeof(j.ns), "%s", d->notes[i].ns);
		snprintf(j.name, sizeof(j.name), "%s", d->notes[i].name);
		snprintf(j.uid, sizeof(j.uid), "%s", d->notes[i].uid);
		snprintf(j.d.message, sizeof(j.d.message), "%s", d->notes[i].reason);
		if (d->notes[i].start >= 0)
			j.est = wall + (time_t)(d->notes[i].start > t ? d->notes[i].start - t + 0.5 : 0);
		gf_ksched_push_job(d, &j);
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
	return gf_fnv1a_str(GF_FNV64_OFFSET, s);
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
		gf_ksched_push_job(d, &j);
	}
}

static void *sched_main(void *arg)
{
	struct daemon *d = arg;
	double next_note = 0;
	pthread_mutex_lock(&d->mu);
	while (!gf_kube_stopped(d->o.stop)) {
		double t = gf_ksched_now();
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
		struct gf_k8s_pod *p = &d->sched_pod;
		struct gf_live_decision dc;
		if (!ready || !d->o.standalone || !gf_live_schedule_next(d->live, p, &dc)) {
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 100000000L;
			if (ts.tv_nsec >= 1000000000L)
				ts.tv_sec++, ts.tv_nsec -= 1000000000L;
			pthread_cond_timedwait(&d->work, &d->mu, &ts);
			continue;
		}
		double t1 = gf_ksched_now();
		gf_ksched_histo_add(&d->h_attempt, t1 - t);
		struct job j = { .t0 = t, .d = dc, .term = gf_leader_terms(d->leader) };
		snprintf(j.ns, sizeof(j.ns), "%s", p->ns);
		snprintf(j.name, sizeof(j.name), "%s", p->name);
		snprintf(j.uid, sizeof(j.uid), "%s", p->uid);
		bool report = true;
		switch (dc.result) {
		case GF_LIVE_PLACED:
			d->attempts[A_SCHEDULED]++;
			j.kind = JOB_BIND;
			break;
		case GF_LIVE_NOMINATED: /* preempting: bound later, once its victims are gone */
			j.kind = JOB_NOMINATE;
			if (d->o.verbose)
				gf_ksched_log("%s/%s: %s", p->ns, p->name, dc.message);
			break;
		case GF_LIVE_UNSCHEDULABLE:
		default:
			d->attempts[dc.result == GF_LIVE_UNSCHEDULABLE ? A_UNSCHEDULABLE : A_INVALID]++;
			j.kind = JOB_FAILED;
			/* The same reason again within 5 minutes: no new event (kube-scheduler's
			 * recorder aggregates them too, but by message text, which names node counts). */
			report = gf_live_report_due(d->live, p->uid, dc.reason, t1, 300);
			if (report && (d->o.verbose || dc.result == GF_LIVE_INVALID))
				gf_ksched_log("%s/%s: %s", p->ns, p->name, dc.message);
			break;
		}
		if (report)
			gf_ksched_push_job(d, &j);
		if (d->o.preemption)
			push_evictions(d);
	}
	pthread_mutex_unlock(&d->mu);
	return NULL;
}

/* ---- start and stop ------------------------------------------------------------ */

/*
 * The extender listener's threads: a bind waiting on the API server holds
 * one, filter and prioritize (one at a time, ext_mu) go on with the others.
 */
#define EXT_THREADS 4

static const char *const default_profiles[] = { "default-scheduler" };

/* The daemon with opts' defaults filled in, its locks, the fan and gf_live. */
static gf_err daemon_create(const struct gf_kube_sched_opts *opts, struct daemon **out)
{
	struct daemon *d = calloc(1, sizeof(*d));
	if (!(*out = d))
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
	d->lead_failed_at = -1e9;
	pthread_mutex_init(&d->mu, NULL);
	pthread_cond_init(&d->work, NULL);
	pthread_cond_init(&d->jobs_cv, NULL);
	pthread_cond_init(&d->ext_cv, NULL);
	pthread_mutex_init(&d->ext_mu, NULL);
	gf_ksched_fan_start(&d->fan);
	struct gf_live_opts lo = { .policy = d->o.policy, .scheduler_name = d->o.scheduler_name,
				   .seed = d->o.seed, .target_pct = d->o.target_pct,
				   .queue_policy = d->o.queue_policy, .queues = d->o.queues,
				   .preemption = d->o.preemption, .preempt_wait_s = d->o.preempt_wait_s };
	return gf_live_create(&lo, &d->live);
}

/*
 * The binders' API calls are bounded: a request is given up after 10 s
 * (then retried: client.h), and every client stops at once on a stop.
 * With leader election a binding must end within lease - renew seconds of
 * the leadership check before it (lease.h): one try, bounded.
 */
static gf_err bind_timeouts(const struct daemon *d, long *bind_ms, int *bind_retries, char *err, size_t errlen)
{
	*bind_ms = 10000;
	*bind_retries = 0;
	if (!d->o.lease_name)
		return GF_OK;
	int ls = d->o.lease_s > 0 ? d->o.lease_s : 15, rs = d->o.renew_s > 0 ? d->o.renew_s : 10;
	*bind_ms = (ls - rs) * 1000L - 1000;
	*bind_retries = -1;
	if (*bind_ms >= 1000)
		return GF_OK;
	snprintf(err, errlen, "the lease duration must exceed the renew deadline by at least 2 s");
	return GF_INVAL;
}

/* The two listeners: /metrics and /healthz; the extender's verbs. */
static gf_err serve_http(struct daemon *d, char *err, size_t errlen)
{
	for (int i = 0; i < 3; i++)
		snprintf(d->route_paths[i], sizeof(d->route_paths[i]), "%s/%s", d->prefix,
			 (const char *[]){ "filter", "prioritize", "bind" }[i]);
	/* the servers keep the route tables by pointer: they live in d */
	d->routes[0] = (struct gf_http_route){ "GET", "/metrics", gf_ksched_h_metrics, d };
	d->routes[1] = (struct gf_http_route){ "GET", "/healthz", gf_ksched_h_healthz, d };
	d->ext_routes[0] = (struct gf_http_route){ "POST", d->route_paths[0], gf_ksched_h_filter, d };
	d->ext_routes[1] = (struct gf_http_route){ "POST", d->route_paths[1], gf_ksched_h_prioritize, d };
	d->ext_routes[2] = (struct gf_http_route){ "POST", d->route_paths[2], gf_ksched_h_bind, d };
	struct gf_http_config hc = { .bind_addr = d->o.listen_addr, .port = d->o.port, .routes = d->routes,
				     .nroutes = 2, .max_conns = 256 };
	gf_err e = gf_http_server_create(&hc, &d->srv);
	if (e) {
		snprintf(err, errlen, "cannot serve HTTP on %s:%u: %s", d->o.listen_addr ? d->o.listen_addr : "*",
			 d->o.port, gf_strerror(e));
		return e;
	}
	struct gf_http_config ec = { .bind_addr = d->o.ext_addr, .port = d->o.ext_port, .routes = d->ext_routes,
				     .nroutes = 3, .max_body = 64u << 20, .max_response = 64u << 20,
				     .max_conns = 64, .threads = EXT_THREADS, .tls_cert_pem = d->o.ext_tls_cert_pem,
				     .tls_key_pem = d->o.ext_tls_key_pem, .tls_client_ca_pem = d->o.ext_client_ca_pem,
				     .require_client_cert = d->o.ext_client_ca_pem != NULL };
	if ((e = gf_http_server_create(&ec, &d->esrv))) {
		snprintf(err, errlen, "cannot serve the extender on %s:%u: %s%s", d->o.ext_addr[0] ? d->o.ext_addr : "*",
			 d->o.ext_port, gf_strerror(e),
			 e == GF_INVAL && d->o.ext_tls_cert_pem ? " (check the TLS certificate, key and CA)" : "");
		return e;
	}
	gf_ksched_log("serving /metrics and /healthz on port %u, the extender (%s/{filter,prioritize,bind}) on "
		      "%s:%u (%s); scheduler name %s, policy %s, %s", gf_http_server_port(d->srv), d->prefix,
		      d->o.ext_addr[0] ? d->o.ext_addr : "*", gf_http_server_port(d->esrv),
		      d->o.ext_tls_cert_pem ? "mutual TLS" : "plain HTTP, loopback", d->o.scheduler_name,
		      d->o.policy ? d->o.policy->name : "fgd", d->o.standalone ? "standalone" : "extender only");
	return GF_OK;
}

/* o.binders binder threads, each with its own client (co with the bind bounds). */
static gf_err start_binders(struct daemon *d, struct gf_kube_client_opts co)
{
	if (!(d->binders = calloc((size_t)d->o.binders, sizeof(*d->binders))))
		return GF_NOMEM;
	for (int i = 0; i < d->o.binders; i++) {
		struct binder *b = &d->binders[i];
		b->d = d;
		co.seed = d->o.seed + 100 + (uint64_t)i;
		gf_err e = gf_kube_client_create(d->o.conn, &co, &b->k);
		if (e)
			return e;
		if (pthread_create(&b->t, NULL, binder_main, b)) {
			gf_kube_client_destroy(b->k);
			return GF_NOMEM;
		}
		d->nbinders++;
	}
	return GF_OK;
}

/* Leader election on o.lease_name (none: always leading), with the client
 * the scheduling thread reads the bound pods with on taking over. */
static gf_err start_leader(struct daemon *d, struct gf_kube_client_opts co, char *err, size_t errlen)
{
	if (!d->o.lease_name)
		return GF_OK;
	co.timeout_ms = 60000; /* a LIST of every bound pod */
	co.retries = 0;
	co.seed = d->o.seed + 99;
	gf_err e = gf_kube_client_create(d->o.conn, &co, &d->lead_client);
	if (e)
		return e;
	struct gf_leader_opts lo = {
		.conn = d->o.conn, .ns = d->o.lease_namespace ? d->o.lease_namespace : "kube-system",
		.name = d->o.lease_name, .identity = d->o.identity, .lease_s = d->o.lease_s,
		.renew_s = d->o.renew_s, .retry_s = d->o.retry_s, .seed = d->o.seed ^ 0x1ea5e,
		.on_change = on_leader, .ud = d, .log = on_leader_log,
	};
	if ((e = gf_leader_start(&lo, &d->leader))) {
		snprintf(err, errlen, "leader election: %s (lease %s, identity %s; renew deadline < lease "
			 "duration, retry period < renew deadline)", gf_strerror(e), d->o.lease_name,
			 d->o.identity ? d->o.identity : "(none)");
		return e;
	}
	gf_ksched_log("leader election on lease %s/%s as %s", lo.ns, lo.name, gf_leader_identity(d->leader));
	return GF_OK;
}

/* Everything, in order: listeners, watches, binders, leader election, the scheduling thread. */
static gf_err daemon_start(struct daemon *d, char *err, size_t errlen)
{
	struct gf_kube_client_opts co = { .seed = d->o.seed ^ 0x5eed, .stop = d->o.stop };
	long bind_ms;
	int bind_retries;
	gf_err e;
	if ((e = bind_timeouts(d, &bind_ms, &bind_retries, err, errlen)) || (e = serve_http(d, err, errlen)))
		return e;
	if ((d->o.pod_groups || d->o.workload_groups) && (e = gf_gangs_create(&d->gangs)))
		return e;
	if (d->gangs)
		gf_live_set_gangs(d->live, d->gangs); /* not kube: gangs placed all or nothing */
	if ((e = gf_ksched_watches_start(d, co)))
		return e;
	co.timeout_ms = bind_ms;
	co.retries = bind_retries;
	if ((e = start_binders(d, co)) || (e = start_leader(d, co, err, errlen)))
		return e;
	if (pthread_create(&d->sched_t, NULL, sched_main, d))
		return GF_NOMEM;
	d->sched_started = true;
	return GF_OK;
}

/* Stop whatever started (the scheduling thread first, then the binders, the
 * extender binds left, the lease, the watches) and free the daemon. */
static void daemon_stop(struct daemon *d)
{
	gf_kube_stop(d->o.stop);
	pthread_mutex_lock(&d->mu); /* wake the waiting threads to see the stop */
	pthread_cond_broadcast(&d->jobs_cv);
	pthread_cond_broadcast(&d->work);
	pthread_cond_broadcast(&d->ext_cv);
	pthread_mutex_unlock(&d->mu);
	if (d->sched_started)
		pthread_join(d->sched_t, NULL);
	for (int i = 0; i < d->nbinders; i++) {
		pthread_join(d->binders[i].t, NULL);
		gf_kube_client_destroy(d->binders[i].k);
	}
	free(d->binders);
	pthread_mutex_lock(&d->mu); /* extender binds no binder will run */
	for (size_t i = 0; i < d->jlen; i++) {
		struct job *j = &d->jobs[d->jhead + i];
		if (j->kind == JOB_EXT_BIND) {
			snprintf(j->eb->err, sizeof(j->eb->err), "the scheduler is stopping");
			gf_ksched_ext_bind_done(d, j->eb);
		}
	}
	d->jlen = 0;
	pthread_mutex_unlock(&d->mu);
	gf_leader_stop(d->leader); /* nothing binds any more: release the lease */
	gf_kube_client_destroy(d->lead_client);
	gf_ksched_watches_stop(d);
	gf_gangs_destroy(d->gangs);
	free(d->gstat);
	gf_http_server_destroy(d->esrv);
	gf_http_server_destroy(d->srv);
	gf_ksched_fan_stop(&d->fan);
	gf_live_destroy(d->live);
	gf_ksched_memo_free(&d->memo);
	free(d->jobs);
	pthread_mutex_destroy(&d->mu);
	pthread_cond_destroy(&d->work);
	pthread_cond_destroy(&d->jobs_cv);
	pthread_cond_destroy(&d->ext_cv);
	pthread_mutex_destroy(&d->ext_mu);
	free(d);
}

gf_err gf_kube_scheduler_run(const struct gf_kube_sched_opts *opts, char *err, size_t errlen)
{
	gf_err e = gf_ksched_check_ext_opts(opts, err, errlen);
	if (e)
		return e;
	struct daemon *d = NULL;
	if ((e = daemon_create(opts, &d)) == GF_OK && (e = daemon_start(d, err, errlen)) == GF_OK)
		while (!gf_kube_stopped(d->o.stop))
			gf_kube_sleep_ms(200, d->o.stop);
	if (!d)
		return e;
	if (e && !err[0])
		snprintf(err, errlen, "%s", gf_strerror(e));
	daemon_stop(d);
	return e;
}
