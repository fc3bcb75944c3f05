/*
 * k8s/sched_watch.c - the scheduler's watches, as one table.
 *
 * Each row of `watches` is one resource the daemon lists and watches
 * (gf_kube_reflect: LIST, then WATCH from its resourceVersion, relisting
 * when the watch breaks): its path, whether the options ask for it, how an
 * object is decoded and how it is applied to gf_live.  One thread and one
 * API client per started row.  An object is decoded on the watch's thread
 * into the row's own scratch (struct watch.u) before taking d->mu, so a
 * storm of node or pod events holds the lock only for the apply; the
 * apply, under mu, changes gf_live and the counters and wakes the
 * scheduling thread.  "SYNCED" (the first LIST done, or a relist) is its
 * own callback: nodes and pods end gf_live's sync there; Queues,
 * namespaces and PodDisruptionBudgets mark themselves listed (nothing is
 * decided before: scheduler.c).  Objects deleted while a watch was down
 * stay until seen again, except nodes and pods (relist reconciliation).
 *
 * Rows (seed: added to the options' seed, for the client's jitter):
 *   nodes, pods                 always; decode errors counted, pods of ours
 *                               that cannot be decoded get one Event
 *   PodGroups (two APIs)        o.pod_groups / o.workload_groups, into d->gangs
 *   Queues, namespaces' labels  o.queues, into gf_live's quotas; a refused
 *                               Queue is kept by name with its error
 *   PodDisruptionBudgets        o.preemption; a refused one protects nothing
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "k8s/pdb.h"
#include "k8s/queues.h"
#include "k8s/sched_impl.h"

struct watch;

struct watch_def {
	const char *what;	/* for the log ("nodes", "queues", ...) */
	const char *path;	/* what gf_kube_reflect lists and watches */
	bool (*wanted)(const struct gf_kube_sched_opts *o);
	uint64_t seed;
	/* the object into w->u (NULL: none); also on DELETED when decode_deleted */
	gf_err (*decode)(const cJSON *obj, struct watch *w, char *err, size_t errlen);
	bool decode_deleted;
	void (*synced)(struct watch *w);
	/* the decoded object (de: decode's result, err its text) into gf_live */
	void (*apply)(struct watch *w, const char *type, const cJSON *obj, bool del, gf_err de, const char *err);
	int restarts;		/* d->watch_restarts[restarts] counts broken watches; -1: not counted */
	int variant;		/* pods, Workload API PodGroups, namespaces: 1 */
};

struct watch {
	struct daemon *d;
	const struct watch_def *def;
	gf_kube_client *k;
	pthread_t t;
	bool started;
	union {
		struct gf_k8s_pod pod;
		struct gf_k8s_node node;
		struct gf_k8s_podgroup group;
		struct gf_queue_def queue;
		struct gf_k8s_pdb pdb;
	} u;
};

/* ---- nodes and pods ------------------------------------------------------------- */

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
	gf_ksched_push_job(d, &j);
}

static gf_err decode_pod(const cJSON *obj, struct watch *w, char *err, size_t errlen)
{
	return gf_k8s_pod_decode(obj, &w->u.pod, err, errlen);
}

static gf_err decode_node(const cJSON *obj, struct watch *w, char *err, size_t errlen)
{
	return gf_k8s_node_decode(obj, &w->u.node, err, errlen);
}

/* Nodes or pods listed: gf_live's sync ends (an empty list begins one too). */
static void synced_cluster(struct watch *w)
{
	struct daemon *d = w->d;
	int i = w->def->variant;
	pthread_mutex_lock(&d->mu);
	if (!d->in_sync[i])
		gf_live_sync_begin(d->live, i);
	gf_live_sync_end(d->live, i);
	d->in_sync[i] = false;
	if (!d->synced[i])
		gf_ksched_log("%s synced", w->def->what);
	d->synced[i] = true;
	pthread_cond_broadcast(&d->work);
	pthread_mutex_unlock(&d->mu);
}

static void apply_cluster(struct watch *w, const char *type, const cJSON *obj, bool del, gf_err de, const char *err)
{
	struct daemon *d = w->d;
	bool pods = w->def->variant;
	pthread_mutex_lock(&d->mu);
	d->watch_events[pods]++;
	if (!strcmp(type, "SYNC") && !d->in_sync[pods]) {
		gf_live_sync_begin(d->live, pods);
		d->in_sync[pods] = true;
	}
	if (de) {
		d->decode_errors++;
		gf_ksched_log("ignoring a %s: %s", pods ? "pod" : "node", err);
		if (pods && !del)
			report_undecodable(d, obj, err);
	} else if (pods) {
		if (del)
			gf_live_pod_delete(d->live, w->u.pod.uid);
		else
			gf_live_pod_set(d->live, &w->u.pod);
	} else if (del) {
		gf_live_node_delete(d->live, w->u.node.name);
	} else {
		if (w->u.node.topo_err[0])
			gf_ksched_log("node %s: %s", w->u.node.name, w->u.node.topo_err);
		gf_live_node_set(d->live, &w->u.node);
	}
	pthread_cond_signal(&d->work);
	pthread_mutex_unlock(&d->mu);
}

/* ---- PodGroups ------------------------------------------------------------------ */

static gf_err decode_group(const cJSON *obj, struct watch *w, char *err, size_t errlen)
{
	return w->def->variant ? gf_k8s_wl_podgroup_decode(obj, &w->u.group, err, errlen)
			       : gf_k8s_podgroup_decode(obj, &w->u.group, err, errlen);
}

/* PodGroups deleted while the watch was down stay until seen again: harmless, read only. */
static void synced_none(struct watch *w)
{
	(void)w;
}

static void apply_group(struct watch *w, const char *type, const cJSON *obj, bool del, gf_err de, const char *err)
{
	struct daemon *d = w->d;
	const struct gf_k8s_podgroup *g = &w->u.group;
	(void)type, (void)obj;
	if (de)
		gf_ksched_log("ignoring a %sPodGroup: %s", w->def->variant ? "Workload API " : "", err);
	pthread_mutex_lock(&d->mu);
	d->group_events++;
	if (de)
		d->group_decode_errors++;
	else if (del)
		gf_gangs_unset(d->gangs, g);
	else if (gf_gangs_set(d->gangs, g))
		gf_ksched_log("PodGroup %s/%s: out of memory", g->ns, g->name);
	if (!de && gf_live_gangs_changed(d->live)) /* its waiting members look again */
		pthread_cond_signal(&d->work);
	pthread_mutex_unlock(&d->mu);
}

/* ---- Queues and the namespaces' queue labels ------------------------------------ */

static gf_err decode_queue(const cJSON *obj, struct watch *w, char *err, size_t errlen)
{
	return gf_k8s_queue_decode(obj, &w->u.queue, err, errlen);
}

static void synced_queues(struct watch *w)
{
	struct daemon *d = w->d;
	int i = w->def->variant;
	pthread_mutex_lock(&d->mu);
	if (!d->queues_synced[i])
		gf_ksched_log("%s synced", w->def->what);
	d->queues_synced[i] = true;
	pthread_cond_broadcast(&d->work);
	pthread_mutex_unlock(&d->mu);
}

static const char *meta_name(const cJSON *obj)
{
	const cJSON *nm = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "name");
	return cJSON_IsString(nm) ? nm->valuestring : "";
}

/* A namespace's GF_LABEL_QUEUE label (none when deleted). */
static void apply_namespace(struct watch *w, const char *type, const cJSON *obj, bool del, gf_err de,
			    const char *err)
{
	struct daemon *d = w->d;
	(void)type, (void)de, (void)err;
	const char *name = meta_name(obj);
	const cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	const cJSON *lb = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(md, "labels"), GF_LABEL_QUEUE);
	const char *q = !del && cJSON_IsString(lb) ? lb->valuestring : "";
	gf_err e = GF_OK;
	pthread_mutex_lock(&d->mu);
	if (name[0])
		e = gf_live_namespace_queue(d->live, name, q);
	if (e)
		gf_ksched_log("namespace %s: %s", name, e == GF_RANGE ? "more than 255 Queues" : gf_strerror(e));
	pthread_cond_broadcast(&d->work);
	pthread_mutex_unlock(&d->mu);
}

static void apply_queue(struct watch *w, const char *type, const cJSON *obj, bool del, gf_err de, const char *err)
{
	struct daemon *d = w->d;
	struct gf_queue_def *q = &w->u.queue;
	(void)type;
	const char *name = meta_name(obj);
	gf_err e = GF_OK;
	if (de)
		gf_ksched_log("Queue %s refused (its pods wait): %s", name[0] ? name : "(no name)", err);
	pthread_mutex_lock(&d->mu);
	d->queue_events++;
	d->queue_decode_errors += de != GF_OK;
	if (del) {
		gf_live_queue_delete(d->live, name);
	} else if (de && strlen(name) < GF_QUEUE_NAME_MAX && name[0]) {
		memset(q, 0, sizeof(*q));
		memcpy(q->name, name, strlen(name) + 1);
		e = gf_live_queue_set(d->live, q, err);
	} else if (!de) {
		e = gf_live_queue_set(d->live, q, NULL);
	}
	if (e)
		gf_ksched_log("Queue %s: %s", name, e == GF_RANGE ? "more than 255 Queues" : gf_strerror(e));
	pthread_cond_broadcast(&d->work);
	pthread_mutex_unlock(&d->mu);
}

/* ---- PodDisruptionBudgets ------------------------------------------------------- */

static gf_err decode_pdb(const cJSON *obj, struct watch *w, char *err, size_t errlen)
{
	return gf_k8s_pdb_decode(obj, &w->u.pdb, err, errlen);
}

static void synced_pdbs(struct watch *w)
{
	struct daemon *d = w->d;
	pthread_mutex_lock(&d->mu);
	if (!d->pdb_synced)
		gf_ksched_log("poddisruptionbudgets synced");
	d->pdb_synced = true;
	pthread_cond_broadcast(&d->work);
	pthread_mutex_unlock(&d->mu);
}

static void apply_pdb(struct watch *w, const char *type, const cJSON *obj, bool del, gf_err de, const char *err)
{
	struct daemon *d = w->d;
	const struct gf_k8s_pdb *b = &w->u.pdb;
	(void)type;
	const cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	const char *ns = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(md, "namespace"));
	const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(md, "name"));
	gf_err e = GF_OK;
	if (de)
		gf_ksched_log("PodDisruptionBudget refused (it protects nothing): %s", err);
	pthread_mutex_lock(&d->mu);
	d->pdb_events++;
	d->pdb_decode_errors += de != GF_OK;
	if (del || de) {
		if (ns && name)
			gf_live_pdb_delete(d->live, ns[0] ? ns : "default", name);
	} else {
		e = gf_live_pdb_set(d->live, b);
	}
	if (e)
		gf_ksched_log("PodDisruptionBudget %s/%s: %s", b->ns, b->name, gf_strerror(e));
	pthread_cond_broadcast(&d->work);
	pthread_mutex_unlock(&d->mu);
}

/* ---- the table ------------------------------------------------------------------ */

static bool always(const struct gf_kube_sched_opts *o)
{
	(void)o;
	return true;
}

static bool want_pod_groups(const struct gf_kube_sched_opts *o)
{
	return o->pod_groups;
}

static bool want_workload_groups(const struct gf_kube_sched_opts *o)
{
	return o->workload_groups;
}

static bool want_queues(const struct gf_kube_sched_opts *o)
{
	return o->queues;
}

static bool want_pdbs(const struct gf_kube_sched_opts *o)
{
	return o->preemption;
}

static const struct watch_def watches[] = {
	{ .what = "nodes", .path = "/api/v1/nodes", .wanted = always, .seed = 17, .decode = decode_node,
	  .decode_deleted = true, .synced = synced_cluster, .apply = apply_cluster, .restarts = 0 },
	{ .what = "pods", .path = "/api/v1/pods", .wanted = always, .seed = 18, .decode = decode_pod,
	  .decode_deleted = true, .synced = synced_cluster, .apply = apply_cluster, .restarts = 1, .variant = 1 },
	{ .what = "podgroups", .path = "/apis/scheduling.x-k8s.io/v1alpha1/podgroups", .wanted = want_pod_groups,
	  .seed = 19, .decode = decode_group, .decode_deleted = true, .synced = synced_none, .apply = apply_group,
	  .restarts = -1 },
	{ .what = "podgroups", .path = "/apis/scheduling.k8s.io/v1alpha2/podgroups", .wanted = want_workload_groups,
	  .seed = 1019, .decode = decode_group, .decode_deleted = true, .synced = synced_none, .apply = apply_group,
	  .restarts = -1, .variant = 1 },
	{ .what = "queues", .path = GF_K8S_QUEUE_PATH, .wanted = want_queues, .seed = 23,
	  .decode = decode_queue, .synced = synced_queues, .apply = apply_queue, .restarts = -1 },
	{ .what = "namespaces", .path = "/api/v1/namespaces", .wanted = want_queues, .seed = 1023,
	  .synced = synced_queues, .apply = apply_namespace, .restarts = -1, .variant = 1 },
	{ .what = "poddisruptionbudgets", .path = "/apis/policy/v1/poddisruptionbudgets", .wanted = want_pdbs,
	  .seed = 29, .decode = decode_pdb, .synced = synced_pdbs, .apply = apply_pdb, .restarts = -1 },
};
#define NWATCHES (sizeof(watches) / sizeof(watches[0]))

/* ---- the threads ---------------------------------------------------------------- */

static void on_event(void *ud, const char *type, const cJSON *obj)
{
	struct watch *w = ud;
	const struct watch_def *def = w->def;
	if (!strcmp(type, "SYNCED")) {
		def->synced(w);
		return;
	}
	bool del = !strcmp(type, "DELETED");
	char err[300] = "";
	/* decode first, outside mu: decoding is most of the work of an event */
	gf_err de = def->decode && (!del || def->decode_deleted) ? def->decode(obj, w, err, sizeof(err)) : GF_OK;
	def->apply(w, type, obj, del, de, err);
}

static void on_log(void *ud, const char *line)
{
	struct watch *w = ud;
	if (w->def->restarts < 0) {
		gf_ksched_log("%s: %s", w->def->what, line);
		return;
	}
	pthread_mutex_lock(&w->d->mu);
	w->d->watch_restarts[w->def->restarts]++;
	pthread_mutex_unlock(&w->d->mu);
	gf_ksched_log("%s", line);
}

static void *watch_main(void *arg)
{
	struct watch *w = arg;
	gf_kube_reflect(w->k, w->def->path, on_event, w, on_log, w->d->o.stop);
	return NULL;
}

gf_err gf_ksched_watches_start(struct daemon *d, struct gf_kube_client_opts co)
{
	d->watches = calloc(NWATCHES, sizeof(*d->watches));
	if (!d->watches)
		return GF_NOMEM;
	d->nwatches = NWATCHES;
	co.timeout_ms = 60000; /* a LIST of many objects */
	for (size_t i = 0; i < NWATCHES; i++) {
		struct watch *w = &d->watches[i];
		w->d = d;
		w->def = &watches[i];
		if (!w->def->wanted(&d->o))
			continue;
		co.seed = d->o.seed + w->def->seed;
		gf_err e = gf_kube_client_create(d->o.conn, &co, &w->k);
		if (e)
			return e;
		if (pthread_create(&w->t, NULL, watch_main, w))
			return GF_NOMEM;
		w->started = true;
	}
	return GF_OK;
}

void gf_ksched_watches_stop(struct daemon *d)
{
	for (size_t i = 0; i < d->nwatches; i++) {
		struct watch *w = &d->watches[i];
		if (w->started)
			pthread_join(w->t, NULL);
		gf_kube_client_destroy(w->k);
	}
	free(d->watches);
	d->watches = NULL;
	d->nwatches = 0;
}
