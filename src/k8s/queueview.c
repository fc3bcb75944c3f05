/*
 * k8s/queueview.c - `gpufleet queue`'s view (queueview.h has the rules).
 *
 * Objects are reduced to small records as they come (a pod's GPU request
 * through the one Pod decoder, gf_k8s_pod_decode, so the view reads the
 * request exactly as the scheduler does).  gf_qview_build then: maps each
 * pod to its queue (pod label, else its namespace's), finds its newest
 * FailedScheduling event by binary search over the events sorted by
 * (namespace, name, uid), and sorts the pods by (queue, -priority,
 * creation (unknown last), namespace, name) so a queue's pods are consecutive and in
 * position order.  Cost: O((P + E) log(P + E)) for P pods and E events;
 * queues and namespaces are looked up by binary search after sorting.
 */
#include "k8s/queueview.h"
#include "k8s/queues.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "core/obuf.h"
#include "core/time.h"
#include "k8s/codec.h"

#define QNAME_MAX GF_K8S_NAME_MAX /* Queue names: cluster-scoped object names */
#define REASON_MAX 1024

enum reason_src { R_NONE, R_ANNOTATION, R_EVENT, R_CONDITION, R_NOTE };
static const char *const reason_src_name[] = { "none", "annotation", "event", "condition", "estimatedStartCondition" };

struct qv_queue {
	char name[QNAME_MAX];
	char cohort[64];
	bool exists;		/* a Queue object (else only named by pods) */
	size_t waiting;
};

struct qv_ns {
	char name[GF_K8S_NAME_MAX];
	char queue[GF_K8S_LABEL_VALUE_MAX]; /* its GF_LABEL_QUEUE label; "" none */
};

struct qv_event {
	char ns[GF_K8S_NAME_MAX], name[GF_K8S_NAME_MAX], uid[GF_K8S_UID_MAX];
	int64_t ts;		/* newest of lastTimestamp, eventTime, series.lastObservedTime */
	char message[REASON_MAX];
};

struct qv_pod {
	char ns[GF_K8S_NAME_MAX], name[GF_K8S_NAME_MAX], uid[GF_K8S_UID_MAX];
	char label_queue[GF_K8S_LABEL_VALUE_MAX]; /* the pod's own label */
	char queue[GF_K8S_LABEL_VALUE_MAX];	  /* after build; "" none */
	bool queue_from_ns;
	int32_t priority;
	int64_t created;	/* Unix seconds; 0 unknown */
	int gpus, milli;	/* the request (milli per GPU; 1000 whole) */
	char group[GF_K8S_NAME_MAX]; /* its gang: spec.schedulingGroup, else the coscheduling label; "" none */
	bool group_workload;	/* group is a Workload API PodGroup */
	char invalid[256];	/* the request makes no sense / cannot be read: why */
	int est_state;		/* 0 absent, 1 read, -1 unreadable */
	int64_t est;
	char est_raw[48];
	char ann_reason[REASON_MAX], cond_reason[REASON_MAX];
	bool note_cond;		/* ann_reason and the estimate came from GF_COND_ESTIMATED_START */
	enum reason_src rsrc;	/* after build: where the reason is (reason_text) */
	size_t event;		/* R_EVENT: index in the sorted events */
	size_t position;
};

struct gf_qview {
	char *scheduler;
	struct qv_queue *q;
	size_t nq, capq;
	struct qv_ns *ns;
	size_t nns, capns;
	struct qv_event *ev;
	size_t nev, capev;
	struct qv_pod *p;
	size_t np, capp;
	int64_t now;
	struct gf_k8s_pod *kp;	/* the decoder's scratch */
};

/* Make room for one more element in a growable array. */
static gf_err grow(void **arr, size_t *cap, size_t n, size_t size)
{
	return gf_grow(arr, cap, n + 1, size, 16);
}

gf_err gf_qview_create(const char *scheduler_name, gf_qview **out)
{
	gf_qview *v = calloc(1, sizeof(*v));
	if (!v)
		return GF_NOMEM;
	v->kp = malloc(sizeof(*v->kp));
	if (!v->kp || (scheduler_name && !(v->scheduler = strdup(scheduler_name)))) {
		gf_qview_destroy(v);
		return GF_NOMEM;
	}
	*out = v;
	return GF_OK;
}

void gf_qview_destroy(gf_qview *v)
{
	if (!v)
		return;
	free(v->scheduler);
	free(v->q);
	free(v->ns);
	free(v->ev);
	free(v->p);
	free(v->kp);
	free(v);
}

/* ---- reading objects ---------------------------------------------------- */

static const cJSON *get(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

/* An optional string at obj.key into out: false (err set: "<what>: <path>: ...") if not a string or too long. */
static bool opt_str(const cJSON *obj, const char *key, const char *what, const char *path, char *out, size_t cap,
		    char *err, size_t errlen)
{
	const cJSON *v = get(obj, key);
	if (!v || cJSON_IsNull(v))
		return true;
	if (!cJSON_IsString(v)) {
		snprintf(err, errlen, "%s: %s: expected a string", what, path);
		return false;
	}
	if (strlen(v->valuestring) >= cap) {
		snprintf(err, errlen, "%s: %s: longer than %zu bytes", what, path, cap - 1);
		return false;
	}
	memcpy(out, v->valuestring, strlen(v->valuestring) + 1);
	return true;
}

/* metadata.name (required) and namespace (optional) of obj, for messages too. */
static gf_err meta(const cJSON *obj, const char *kind, char *ns, char *name, char *err, size_t errlen)
{
	const cJSON *md = get(obj, "metadata");
	ns[0] = name[0] = '\0';
	if (!cJSON_IsObject(obj) || !cJSON_IsObject(md)) {
		snprintf(err, errlen, "%s: expected an object with metadata", kind);
		return GF_PARSE;
	}
	if (!opt_str(md, "name", kind, "metadata.name", name, GF_K8S_NAME_MAX, err, errlen) ||
	    !opt_str(md, "namespace", kind, "metadata.namespace", ns, GF_K8S_NAME_MAX, err, errlen))
		return GF_PARSE;
	if (!name[0]) {
		snprintf(err, errlen, "%s: needs metadata.name", kind);
		return GF_PARSE;
	}
	return GF_OK;
}

gf_err gf_qview_add_queue(gf_qview *v, const cJSON *obj, char *err, size_t errlen)
{
	char ns[GF_K8S_NAME_MAX], name[GF_K8S_NAME_MAX], what[300];
	if (meta(obj, GF_K8S_QUEUE_KIND, ns, name, err, errlen))
		return GF_PARSE;
	if (grow((void **)&v->q, &v->capq, v->nq, sizeof(*v->q)))
		return GF_NOMEM;
	struct qv_queue *q = &v->q[v->nq];
	memset(q, 0, sizeof(*q));
	snprintf(q->name, sizeof(q->name), "%s", name);
	snprintf(what, sizeof(what), "Queue %.200s", name);
	const cJSON *spec = get(obj, "spec");
	if (cJSON_IsObject(spec) &&
	    !opt_str(spec, "cohort", what, "spec.cohort", q->cohort, sizeof(q->cohort), err, errlen))
		return GF_PARSE;
	q->exists = true;
	v->nq++;
	return GF_OK;
}

/* labels[GF_LABEL_QUEUE] of a metadata object into out. */
static bool queue_label(const cJSON *md, const char *what, char *out, char *err, size_t errlen)
{
	const cJSON *labels = get(md, "labels");
	return !labels || !cJSON_IsObject(labels) ||
	       opt_str(labels, GF_LABEL_QUEUE, what, "metadata.labels[\"" GF_LABEL_QUEUE "\"]", out,
		       GF_K8S_LABEL_VALUE_MAX, err, errlen);
}

gf_err gf_qview_add_namespace(gf_qview *v, const cJSON *obj, char *err, size_t errlen)
{
	char ns[GF_K8S_NAME_MAX], name[GF_K8S_NAME_MAX], what[300];
	if (meta(obj, "Namespace", ns, name, err, errlen))
		return GF_PARSE;
	if (grow((void **)&v->ns, &v->capns, v->nns, sizeof(*v->ns)))
		return GF_NOMEM;
	struct qv_ns *n = &v->ns[v->nns];
	memset(n, 0, sizeof(*n));
	snprintf(n->name, sizeof(n->name), "%s", name);
	snprintf(what, sizeof(what), "Namespace %.200s", name);
	if (!queue_label(get(obj, "metadata"), what, n->queue, err, errlen))
		return GF_PARSE;
	if (n->queue[0])
		v->nns++;
	return GF_OK;
}

/* One line: control characters become spaces. */
static void one_line(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = ' ';
}

/* A time field (RFC 3339) or 0 when absent or unreadable. */
static int64_t time_of(const cJSON *v)
{
	int64_t t;
	return cJSON_IsString(v) && gf_rfc3339_parse(v->valuestring, &t) ? t : 0;
}

/* Copy a string value, cut to cap (reasons and messages may be long). */
static void copy_cut(char *out, size_t cap, const cJSON *v)
{
	out[0] = '\0';
	if (cJSON_IsString(v))
		snprintf(out, cap, "%s", v->valuestring);
	one_line(out);
}

/* Is this Pod object waiting for (our) scheduler? */
static bool waiting(const gf_qview *v, const cJSON *obj)
{
	const cJSON *spec = get(obj, "spec"), *status = get(obj, "status"), *md = get(obj, "metadata");
	const char *phase = cJSON_GetStringValue(get(status, "phase"));
	const char *node = cJSON_GetStringValue(get(spec, "nodeName"));
	const char *sched = cJSON_GetStringValue(get(spec, "schedulerName"));
	if (phase && strcmp(phase, "Pending"))
		return false;
	if ((node && node[0]) || get(md, "deletionTimestamp"))
		return false;
	return !v->scheduler || !strcmp(v->scheduler, sched ? sched : "default-scheduler");
}

/* The PodScheduled=False condition's message (else its reason). */
static void scheduled_condition(const cJSON *status, char *out, size_t cap)
{
	const cJSON *c;
	out[0] = '\0';
	cJSON_ArrayForEach(c, get(status, "conditions"))
	{
		const char *type = cJSON_GetStringValue(get(c, "type"));
		const char *st = cJSON_GetStringValue(get(c, "status"));
		if (type && st && !strcmp(type, "PodScheduled") && !strcmp(st, "False")) {
			copy_cut(out, cap, get(c, "message"));
			if (!out[0])
				copy_cut(out, cap, get(c, "reason"));
		}
	}
}

/*
 * The scheduler's GF_COND_ESTIMATED_START condition (codec.h) into p's
 * estimate and reason; false when the pod has none.  status "True": the
 * message is GF_COND_ESTIMATE_PREFIX "<RFC 3339>: <why>"; a message not of
 * that form leaves the estimate unreadable (its first 47 bytes shown) and
 * the whole message as the reason.  Any other status: no estimate, the
 * message is the reason.
 */
static bool note_condition(const cJSON *status, struct qv_pod *p)
{
	const cJSON *c, *found = NULL;
	cJSON_ArrayForEach(c, get(status, "conditions"))
	{
		const char *type = cJSON_GetStringValue(get(c, "type"));
		if (type && !strcmp(type, GF_COND_ESTIMATED_START))
			found = c;
	}
	if (!found)
		return false;
	p->note_cond = true;
	const char *st = cJSON_GetStringValue(get(found, "status"));
	const cJSON *mj = get(found, "message");
	const char *msg = cJSON_GetStringValue(mj);
	if (!st || strcmp(st, "True")) {
		copy_cut(p->ann_reason, sizeof(p->ann_reason), mj);
		return true;
	}
	size_t plen = strlen(GF_COND_ESTIMATE_PREFIX);
	const char *sep = msg && !strncmp(msg, GF_COND_ESTIMATE_PREFIX, plen) ? strstr(msg + plen, ": ") : NULL;
	char ts[48];
	if (sep && (size_t)(sep - (msg + plen)) < sizeof(ts)) {
		snprintf(ts, sizeof(ts), "%.*s", (int)(sep - (msg + plen)), msg + plen);
		p->est_state = gf_rfc3339_parse(ts, &p->est) ? 1 : -1;
		if (p->est_state < 0)
			snprintf(p->est_raw, sizeof(p->est_raw), "%s", ts);
		snprintf(p->ann_reason, sizeof(p->ann_reason), "%s", sep + 2);
		one_line(p->ann_reason);
		one_line(p->est_raw);
		return true;
	}
	p->est_state = -1;
	snprintf(p->est_raw, sizeof(p->est_raw), "%s", msg ? msg : "");
	one_line(p->est_raw);
	copy_cut(p->ann_reason, sizeof(p->ann_reason), mj);
	return true;
}

gf_err gf_qview_add_pod(gf_qview *v, const cJSON *obj, char *err, size_t errlen)
{
	char ns[GF_K8S_NAME_MAX], name[GF_K8S_NAME_MAX], what[600];
	if (meta(obj, "Pod", ns, name, err, errlen))
		return GF_PARSE;
	if (!waiting(v, obj))
		return GF_OK;
	if (grow((void **)&v->p, &v->capp, v->np, sizeof(*v->p)))
		return GF_NOMEM;
	struct qv_pod *p = &v->p[v->np];
	memset(p, 0, sizeof(*p));
	snprintf(p->ns, sizeof(p->ns), "%s", ns[0] ? ns : "default");
	snprintf(p->name, sizeof(p->name), "%s", name);
	snprintf(what, sizeof(what), "pod %.250s/%.250s", p->ns, p->name);
	const cJSON *md = get(obj, "metadata"), *spec = get(obj, "spec"), *ann = get(md, "annotations");
	if (!opt_str(md, "uid", what, "metadata.uid", p->uid, sizeof(p->uid), err, errlen) ||
	    !queue_label(md, what, p->label_queue, err, errlen))
		return GF_PARSE;
	p->created = time_of(get(md, "creationTimestamp"));
	const cJSON *prio = get(spec, "priority");
	if (cJSON_IsNumber(prio) && prio->valuedouble >= -2147483648.0 && prio->valuedouble <= 2147483647.0)
		p->priority = (int32_t)prio->valuedouble;
	/* the request, read as the scheduler reads it */
	char derr[200] = "";
	if (gf_k8s_pod_decode(obj, v->kp, derr, sizeof(derr))) {
		snprintf(p->invalid, sizeof(p->invalid), "cannot read the pod's request: %s", derr);
	} else {
		p->gpus = v->kp->req.gpu_count;
		p->milli = v->kp->req.gpu_milli;
		p->group_workload = v->kp->sched_group[0] != '\0'; /* the rule of gf_gangs_of_pod */
		snprintf(p->group, sizeof(p->group), "%s", p->group_workload ? v->kp->sched_group : v->kp->pod_group);
		if (v->kp->invalid[0])
			snprintf(p->invalid, sizeof(p->invalid), "%s", v->kp->invalid);
	}
	one_line(p->invalid);
	if (!note_condition(get(obj, "status"), p)) { /* an older scheduler's annotations */
		const cJSON *est = get(ann, GF_ANN_ESTIMATED_START);
		if (est) {
			p->est_state = cJSON_IsString(est) && gf_rfc3339_parse(est->valuestring, &p->est) ? 1 : -1;
			if (p->est_state < 0)
				copy_cut(p->est_raw, sizeof(p->est_raw), est);
		}
		copy_cut(p->ann_reason, sizeof(p->ann_reason), get(ann, GF_ANN_WAITING_REASON));
	}
	scheduled_condition(get(obj, "status"), p->cond_reason, sizeof(p->cond_reason));
	v->np++;
	return GF_OK;
}

gf_err gf_qview_add_event(gf_qview *v, const cJSON *obj, char *err, size_t errlen)
{
	const char *reason = cJSON_GetStringValue(get(obj, "reason"));
	const cJSON *io = get(obj, "involvedObject");
	if (!io)
		io = get(obj, "regarding"); /* events.k8s.io/v1 */
	const char *kind = cJSON_GetStringValue(get(io, "kind"));
	if (!reason || strcmp(reason, "FailedScheduling") || !kind || strcmp(kind, "Pod"))
		return GF_OK;
	if (grow((void **)&v->ev, &v->capev, v->nev, sizeof(*v->ev)))
		return GF_NOMEM;
	struct qv_event *e = &v->ev[v->nev];
	memset(e, 0, sizeof(*e));
	if (!opt_str(io, "namespace", "FailedScheduling Event", "involvedObject.namespace", e->ns, sizeof(e->ns), err,
		     errlen) ||
	    !opt_str(io, "name", "FailedScheduling Event", "involvedObject.name", e->name, sizeof(e->name), err,
		     errlen) ||
	    !opt_str(io, "uid", "FailedScheduling Event", "involvedObject.uid", e->uid, sizeof(e->uid), err, errlen))
		return GF_PARSE;
	if (!e->ns[0])
		snprintf(e->ns, sizeof(e->ns), "default");
	int64_t t[3] = { time_of(get(obj, "lastTimestamp")), time_of(get(obj, "eventTime")),
			 time_of(get(get(obj, "series"), "lastObservedTime")) };
	for (int i = 0; i < 3; i++)
		if (t[i] > e->ts)
			e->ts = t[i];
	copy_cut(e->message, sizeof(e->message), get(obj, "message"));
	if (!e->message[0])
		copy_cut(e->message, sizeof(e->message), get(obj, "note")); /* events.k8s.io/v1 */
	v->nev++;
	return GF_OK;
}

/* ---- building ------------------------------------------------------------- */

static int cmp_queue(const void *a, const void *b)
{
	return strcmp(((const struct qv_queue *)a)->name, ((const struct qv_queue *)b)->name);
}

static int cmp_ns(const void *a, const void *b)
{
	return strcmp(((const struct qv_ns *)a)->name, ((const struct qv_ns *)b)->name);
}

/* Events by (ns, name), newest first. */
static int cmp_event(const void *a, const void *b)
{
	const struct qv_event *x = a, *y = b;
	int c = strcmp(x->ns, y->ns);
	if (!c)
		c = strcmp(x->name, y->name);
	if (!c)
		c = (x->ts < y->ts) - (x->ts > y->ts);
	return c;
}

/* Queue name (none last), priority high first, older first, namespace, name. */
static int cmp_pod(const void *a, const void *b)
{
	const struct qv_pod *x = a, *y = b;
	if (!x->queue[0] != !y->queue[0])
		return x->queue[0] ? -1 : 1;
	int c = strcmp(x->queue, y->queue);
	if (c)
		return c;
	if (x->priority != y->priority)
		return x->priority > y->priority ? -1 : 1;
	if (x->created != y->created) /* unknown (0) last */
		return !y->created || (x->created && x->created < y->created) ? -1 : 1;
	c = strcmp(x->ns, y->ns);
	return c ? c : strcmp(x->name, y->name);
}

static void sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

/* First index in sorted a[0..n) whose key is not below key (a lower bound). */
static size_t lower_bound(const void *a, size_t n, size_t size, const void *key,
			  int (*cmp)(const void *, const void *))
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (cmp((const char *)a + mid * size, key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct qv_queue *find_queue(gf_qview *v, const char *name)
{
	struct qv_queue key;
	snprintf(key.name, sizeof(key.name), "%s", name);
	size_t i = lower_bound(v->q, v->nq, sizeof(*v->q), &key, cmp_queue);
	return i < v->nq && !strcmp(v->q[i].name, name) ? &v->q[i] : NULL;
}

/* The newest FailedScheduling event for p (same uid when both have one). */
static const struct qv_event *find_event(const gf_qview *v, const struct qv_pod *p)
{
	struct qv_event key;
	snprintf(key.ns, sizeof(key.ns), "%s", p->ns);
	snprintf(key.name, sizeof(key.name), "%s", p->name);
	key.ts = INT64_MAX;
	for (size_t i = lower_bound(v->ev, v->nev, sizeof(*v->ev), &key, cmp_event);
	     i < v->nev && !strcmp(v->ev[i].ns, p->ns) && !strcmp(v->ev[i].name, p->name); i++)
		if (!p->uid[0] || !v->ev[i].uid[0] || !strcmp(p->uid, v->ev[i].uid))
			return &v->ev[i]; /* an earlier pod of the same name is skipped */
	return NULL;
}

void gf_qview_build(gf_qview *v, int64_t now)
{
	v->now = now;
	sort(v->ns, v->nns, sizeof(*v->ns), cmp_ns);
	sort(v->ev, v->nev, sizeof(*v->ev), cmp_event);
	/* queues named by pods or namespaces but absent join the list, flagged */
	sort(v->q, v->nq, sizeof(*v->q), cmp_queue);
	for (size_t i = 0; i < v->np; i++) {
		struct qv_pod *p = &v->p[i];
		const char *nsq = NULL, *q;
		struct qv_ns key;
		snprintf(key.name, sizeof(key.name), "%s", p->ns);
		size_t k = lower_bound(v->ns, v->nns, sizeof(*v->ns), &key, cmp_ns);
		if (k < v->nns && !strcmp(v->ns[k].name, p->ns))
			nsq = v->ns[k].queue;
		q = gf_k8s_queue_rule(p->label_queue, nsq); /* the scheduler's rule too (k8s/queues.h) */
		snprintf(p->queue, sizeof(p->queue), "%s", q ? q : "");
		p->queue_from_ns = q && q == nsq;
		const struct qv_event *e;
		p->rsrc = R_NONE;
		if (p->ann_reason[0])
			p->rsrc = p->note_cond ? R_NOTE : R_ANNOTATION;
		else if ((e = find_event(v, p)) && e->message[0])
			p->rsrc = R_EVENT, p->event = (size_t)(e - v->ev);
		else if (p->cond_reason[0] || p->invalid[0])
			p->rsrc = R_CONDITION;
	}
	for (size_t i = 0; i < v->nq; i++)
		v->q[i].waiting = 0;
	for (size_t i = 0; i < v->np; i++) {
		if (!v->p[i].queue[0] || find_queue(v, v->p[i].queue))
			continue;
		if (grow((void **)&v->q, &v->capq, v->nq, sizeof(*v->q)))
			continue; /* out of memory: the pod still shows its queue's name */
		struct qv_queue *q = &v->q[v->nq++];
		memset(q, 0, sizeof(*q));
		snprintf(q->name, sizeof(q->name), "%s", v->p[i].queue);
		sort(v->q, v->nq, sizeof(*v->q), cmp_queue);
	}
	sort(v->p, v->np, sizeof(*v->p), cmp_pod);
	for (size_t i = 0; i < v->np; i++) {
		struct qv_pod *p = &v->p[i];
		p->position = i && !strcmp(v->p[i - 1].queue, p->queue) ? v->p[i - 1].position + 1 : 1;
		struct qv_queue *q = p->queue[0] ? find_queue(v, p->queue) : NULL;
		if (q)
			q->waiting++;
	}
}

size_t gf_qview_waiting(const gf_qview *v)
{
	return v->np;
}

/* ---- rendering ------------------------------------------------------------ */

/* Why p waits, or NULL (after build). */
static const char *reason_text(const gf_qview *v, const struct qv_pod *p)
{
	switch (p->rsrc) {
	case R_ANNOTATION:
	case R_NOTE: return p->ann_reason;
	case R_EVENT: return v->ev[p->event].message;
	case R_CONDITION: return p->cond_reason[0] ? p->cond_reason : p->invalid;
	default: return NULL;
	}
}

/* "45s", "12m", "3h5m", "2d4h" (kubectl's ages); negative: "0s". */
static void human_duration(int64_t s, char out[24])
{
	if (s < 0)
		s = 0;
	if (s < 120)
		snprintf(out, 24, "%llds", (long long)s);
	else if (s < 3 * 3600)
		snprintf(out, 24, "%lldm", (long long)(s / 60));
	else if (s < 48 * 3600)
		snprintf(out, 24, "%lldh%lldm", (long long)(s / 3600), (long long)(s / 60 % 60));
	else
		snprintf(out, 24, "%lldd%lldh", (long long)(s / 86400), (long long)(s / 3600 % 24));
}

/* "8", "250m" (a share of one GPU), "2x500m", "?" when unreadable. */
static void gpu_text(const struct qv_pod *p, char out[32])
{
	if (p->invalid[0] && !p->gpus)
		snprintf(out, 32, "?");
	else if (p->milli >= 1000 || !p->gpus)
		snprintf(out, 32, "%d", p->gpus);
	else if (p->gpus == 1)
		snprintf(out, 32, "%dm", p->milli);
	else
		snprintf(out, 32, "%dx%dm", p->gpus, p->milli);
}

static void est_text(const gf_qview *v, const struct qv_pod *p, char out[64])
{
	char ts[21], d[24];
	if (p->est_state == 0) {
		snprintf(out, 64, "-");
		return;
	}
	if (p->est_state < 0) {
		snprintf(out, 64, "unreadable");
		return;
	}
	gf_rfc3339(p->est, ts);
	human_duration(p->est >= v->now ? p->est - v->now : v->now - p->est, d);
	snprintf(out, 64, "%s (%s%s)", ts, p->est >= v->now ? "in " : "passed ", d);
}

/* The length of the valid UTF-8 sequence at p (1..4), or 0 (a stray byte). */
static size_t utf8_len(const unsigned char *p)
{
	size_t n = p[0] >= 0xc2 && p[0] <= 0xdf ? 2 : p[0] >= 0xe0 && p[0] <= 0xef ? 3 : p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : 0;
	for (size_t i = 1; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

/* s made safe for a terminal into out (cap bytes, cut between characters):
 * C0 controls and DEL become \xNN, the C1 controls (U+0080..U+009F, which
 * some terminals obey as ESC sequences) \u00NN, a byte that is not valid
 * UTF-8 (0x9b alone is CSI to an 8-bit terminal) \xNN.  Names come from the
 * API server, reasons from anyone who can write an Event or an annotation:
 * none of it may move the cursor or retitle the window. */
static const char *tty(const char *s, char *out, size_t cap)
{
	size_t o = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		char tmp[8];
		size_t w, n = *p < 0x80 ? 1 : utf8_len(p);
		if (*p < 0x20 || *p == 0x7f || n == 0)
			w = (size_t)snprintf(tmp, sizeof(tmp), "\\x%02x", *p), n = 1;
		else if (n == 2 && p[0] == 0xc2 && p[1] <= 0x9f)
			w = (size_t)snprintf(tmp, sizeof(tmp), "\\u%04x", p[1]);
		else
			memcpy(tmp, p, n), w = n;
		if (o + w >= cap)
			break;
		memcpy(out + o, tmp, w);
		o += w;
		p += n;
	}
	out[o] = '\0';
	return out;
}

gf_err gf_qview_render_table(const gf_qview *v, struct gf_obuf *o)
{
	if (!v->np) {
		gf_obuf_puts(o, "No pods waiting.\n");
	} else {
		gf_obuf_printf(o, "%-16s %4s  %-40s %6s %8s %7s  %-37s %s\n", "QUEUE", "POS", "POD", "GPUS", "PRIORITY",
			       "WAITING", "ESTIMATED START", "WHY");
		for (size_t i = 0; i < v->np; i++) {
			const struct qv_pod *p = &v->p[i];
			char pod[520], spod[2100], squeue[1100], sreason[4200], gpus[32], age[24], est[64];
			snprintf(pod, sizeof(pod), "%s/%s", p->ns, p->name);
			gpu_text(p, gpus);
			if (p->created)
				human_duration(v->now - p->created, age);
			else
				snprintf(age, sizeof(age), "?");
			est_text(v, p, est);
			gf_obuf_printf(o, "%-16s %4zu  %-40s %6s %8d %7s  %-37s %s\n",
				       p->queue[0] ? tty(p->queue, squeue, sizeof(squeue)) : "-", p->position,
				       tty(pod, spod, sizeof(spod)), gpus, (int)p->priority, age, est,
				       reason_text(v, p) ? tty(reason_text(v, p), sreason, sizeof(sreason)) : "-");
		}
	}
	for (size_t i = 0; i < v->nq; i++) {
		char sq[1100];
		if (!v->q[i].exists)
			gf_obuf_printf(o, "queue %s: no GPUQueue object (gpufleet.io/v1alpha1) of that name; %zu pod(s) name it\n",
				       tty(v->q[i].name, sq, sizeof(sq)), v->q[i].waiting);
	}
	return gf_obuf_error(o);
}

static cJSON *pod_json(const gf_qview *v, const struct qv_pod *p)
{
	cJSON *j = cJSON_CreateObject();
	char ts[21];
	cJSON_AddStringToObject(j, "namespace", p->ns);
	cJSON_AddStringToObject(j, "name", p->name);
	cJSON_AddStringToObject(j, "uid", p->uid);
	cJSON_AddNumberToObject(j, "position", (double)p->position);
	cJSON_AddStringToObject(j, "queueFrom", !p->queue[0] ? "none" : p->queue_from_ns ? "namespace" : "pod");
	cJSON_AddNumberToObject(j, "priority", p->priority);
	cJSON_AddNumberToObject(j, "gpus", p->gpus);
	cJSON_AddNumberToObject(j, "gpuMilli", p->milli);
	if (p->created) {
		gf_rfc3339(p->created, ts);
		cJSON_AddStringToObject(j, "created", ts);
		cJSON_AddNumberToObject(j, "waitingSeconds", (double)(v->now - p->created));
	} else {
		cJSON_AddNullToObject(j, "created");
		cJSON_AddNullToObject(j, "waitingSeconds");
	}
	if (p->est_state > 0) {
		gf_rfc3339(p->est, ts);
		cJSON_AddStringToObject(j, "estimatedStart", ts);
	} else {
		cJSON_AddNullToObject(j, "estimatedStart");
	}
	if (p->est_state < 0)
		cJSON_AddStringToObject(j, "estimatedStartUnreadable", p->est_raw);
	if (reason_text(v, p))
		cJSON_AddStringToObject(j, "reason", reason_text(v, p));
	else
		cJSON_AddNullToObject(j, "reason");
	cJSON_AddStringToObject(j, "reasonFrom", reason_src_name[p->rsrc]);
	if (p->invalid[0])
		cJSON_AddStringToObject(j, "invalid", p->invalid);
	if (p->group[0]) {
		cJSON *g = cJSON_AddObjectToObject(j, "gang");
		cJSON_AddStringToObject(g, "api", p->group_workload ? "workload" : "coscheduling");
		cJSON_AddStringToObject(g, "name", p->group);
	} else {
		cJSON_AddNullToObject(j, "gang");
	}
	return j;
}

/* Pods of queue name ("" = none) into a new "pods" array of q. */
static void add_pods(const gf_qview *v, cJSON *q, const char *name)
{
	cJSON *arr = cJSON_AddArrayToObject(q, "pods");
	for (size_t i = 0; i < v->np; i++)
		if (!strcmp(v->p[i].queue, name))
			cJSON_AddItemToArray(arr, pod_json(v, &v->p[i]));
}

gf_err gf_qview_render_json(const gf_qview *v, struct gf_obuf *o)
{
	cJSON *doc = cJSON_CreateObject();
	char ts[21];
	gf_rfc3339(v->now, ts);
	cJSON_AddStringToObject(doc, "time", ts);
	cJSON *qs = cJSON_AddArrayToObject(doc, "queues");
	size_t none = 0;
	for (size_t i = 0; i < v->np; i++)
		none += !v->p[i].queue[0];
	for (size_t i = 0; i <= v->nq; i++) {
		if (i == v->nq && !none)
			break;
		cJSON *q = cJSON_CreateObject();
		cJSON_AddItemToArray(qs, q);
		if (i == v->nq) { /* pods of no queue */
			cJSON_AddNullToObject(q, "name");
			cJSON_AddBoolToObject(q, "exists", false);
			cJSON_AddNumberToObject(q, "waiting", (double)none);
			add_pods(v, q, "");
			continue;
		}
		cJSON_AddStringToObject(q, "name", v->q[i].name);
		cJSON_AddBoolToObject(q, "exists", v->q[i].exists);
		cJSON_AddStringToObject(q, "cohort", v->q[i].cohort);
		cJSON_AddNumberToObject(q, "waiting", (double)v->q[i].waiting);
		add_pods(v, q, v->q[i].name);
	}
	char *text = cJSON_Print(doc);
	cJSON_Delete(doc);
	if (!text)
		return GF_NOMEM;
	gf_obuf_puts(o, text);
	gf_obuf_puts(o, "\n");
	free(text);
	return gf_obuf_error(o);
}
