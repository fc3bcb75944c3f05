/*
 * k8s/sched_writes.c - the scheduler's API writes other than bindings, on
 * binder threads (k8s/bind.c writes the Bindings).
 *
 * What a user sees of a decision besides the binding: a FailedScheduling
 * Event and the PodScheduled=False condition for a pod that does not fit;
 * a waiting pod's gpufleet.io/EstimatedStart condition (and an Event when
 * it has an estimate); a PodGroup's status; preemption's eviction (the
 * victim's DisruptionTarget condition, its graceful delete, an Event) and
 * nomination (status.nominatedNodeName, an Event).  Each write is one or
 * two requests, made with no lock held; its outcome is counted under mu
 * (metrics).  Writes for evictions and nominations happen only while
 * leading in the term they were decided in.  A pod or group gone
 * meanwhile (404) is no error.  Events are not aggregated here: the
 * scheduling thread decides which are due (gf_live_report_due,
 * gf_live_notes_due).
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/time.h"
#include "k8s/codec.h"
#include "k8s/preempt.h"
#include "k8s/sched_impl.h"

/* An Event on pod ns/name (uid): reason, type ("Normal" / "Warning"), message, at ts.  false: not written. */
static bool post_pod_event_at(struct daemon *d, gf_kube_client *k, const char *ns, const char *name,
			      const char *uid, const char *reason, const char *type, const char *message,
			      const char *ts)
{
	char path[600], err[300], gen[300];
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

static bool post_pod_event(struct daemon *d, gf_kube_client *k, const char *ns, const char *name, const char *uid,
			   const char *reason, const char *type, const char *message)
{
	char ts[32];
	gf_ksched_wallclock(ts);
	return post_pod_event_at(d, k, ns, name, uid, reason, type, message, ts);
}

/* JOB_FAILED: a FailedScheduling Event and the PodScheduled=False condition, as kube-scheduler writes them. */
void gf_ksched_send_failed(struct daemon *d, gf_kube_client *k, const struct job *j)
{
	char ts[32], path[600], err[300];
	gf_ksched_wallclock(ts);
	bool ok = post_pod_event_at(d, k, j->ns, j->name, j->uid, "FailedScheduling", "Warning", j->d.message, ts);
	long st = 0;
	char *body;
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
void gf_ksched_send_note(struct daemon *d, gf_kube_client *k, const struct job *j)
{
	char path[600], err[300], ts[32], now[32];
	char msg[sizeof(j->d.message) + 64];
	if (j->est >= 0) {
		gf_rfc3339((int64_t)j->est, ts);
		snprintf(msg, sizeof(msg), GF_COND_ESTIMATE_PREFIX "%s: %s", ts, j->d.message);
	} else {
		snprintf(msg, sizeof(msg), "%s", j->d.message);
	}
	gf_ksched_wallclock(now);
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
void gf_ksched_send_group_status(struct daemon *d, gf_kube_client *k, const struct job *j)
{
	char base[600], path[700], err[300], ts[32];
	gf_ksched_wallclock(ts);
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
			gf_ksched_log("PodGroup %s/%s: status not written: %s (HTTP %ld)", j->ns, j->name, err, code);
	}
	free(body);
	pthread_mutex_lock(&d->mu);
	d->gstatus_total++;
	d->gstatus_errors += !ok;
	pthread_mutex_unlock(&d->mu);
}
/*
 * JOB_EVICT: victim j->ns/j->name (j->uid) on node j->d.node, for the pod
 * named in j->d.message: DisruptionTarget, graceful delete (k8s/preempt.h),
 * then the Event Preempted on the victim.  Only the leader of the term it
 * was decided in.
 */
void gf_ksched_send_evict(struct daemon *d, gf_kube_client *k, const struct job *j)
{
	char ts[32], err[300] = "";
	bool gone = false;
	gf_err e = GF_STATE;
	if (gf_leader_leading(d->leader) && gf_leader_terms(d->leader) == j->term) {
		gf_ksched_wallclock(ts);
		e = gf_kube_evict(k, d->o.scheduler_name, j->ns, j->name, j->uid, ts, &gone, err, sizeof(err));
		if (e)
			gf_ksched_log("preemption: evicting %s/%s failed: %s", j->ns, j->name, err[0] ? err : gf_strerror(e));
		else if (!gone)
			(void)post_pod_event(d, k, j->ns, j->name, j->uid, "Preempted", "Normal", j->d.message);
		if (!e && d->o.verbose)
			gf_ksched_log("preemption: %s/%s %s", j->ns, j->name, gone ? "already gone" : j->d.message);
	}
	pthread_mutex_lock(&d->mu);
	d->evictions[e ? 2 : gone ? 1 : 0]++;
	pthread_mutex_unlock(&d->mu);
}

/* JOB_NOMINATE: the preemptor's status.nominatedNodeName and an Event; bound later (JOB_BIND). */
void gf_ksched_send_nominate(struct daemon *d, gf_kube_client *k, const struct job *j)
{
	char err[300] = "";
	if (!gf_leader_leading(d->leader) || gf_leader_terms(d->leader) != j->term)
		return;
	gf_err e = gf_kube_nominate(k, j->ns, j->name, j->d.node, err, sizeof(err));
	if (e)
		gf_ksched_log("preemption: nominating %s/%s to %s failed: %s", j->ns, j->name, j->d.node,
			err[0] ? err : gf_strerror(e));
	(void)post_pod_event(d, k, j->ns, j->name, j->uid, "Preempting", "Normal", j->d.message);
	pthread_mutex_lock(&d->mu);
	d->nominated++;
	pthread_mutex_unlock(&d->mu);
}
