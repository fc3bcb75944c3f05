/*
 * k8s/bind.c - the Binding with the assignment, and 409 handling (bind.h).
 *
 * A 409 has two causes: the pod is already bound (maybe by our own POST,
 * retried after a lost answer) or a different pod now has that name (the
 * uid precondition).  Re-reading the pod tells them apart: bound to our node
 * with our GPUs is success; bound elsewhere or another uid: forget our
 * assumption (the watch accounts the real binding); still unbound: retry.
 * Two requests at most besides the client's own retries.
 *
 * The assignment stamp (GF_ANN_ASSIGNED_AT) is the wall clock in
 * microseconds when the body is built, bumped by 1 us when it would not be
 * later than the previous one (a process-wide atomic), so the bind order of
 * one scheduler is a strict order of stamps even within one microsecond or
 * after a clock step back.  The kubelet receives bound pods in the order
 * of the writes, so for one node the stamp order must be the write order:
 * a binding with GPUs takes its stamp and POSTs under one of 64 mutexes
 * chosen by the node's name (the binders stay parallel across nodes; two
 * binds to one node are serialised, one round trip each).  That costs
 * throughput when a packing policy sends pod after pod to one node (FGD:
 * 1,000 one-GPU pods on 1,000 nodes bound at 1.4-1.6x kube-scheduler's
 * rate ordered, 2.5-3.0x not, bench/sched-bench.sh), so a cluster without
 * gpufleet's device plugin can turn it off (gf_kube_bind_node_order).
 */
#include "k8s/bind.h"

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/time.h"

void gf_kube_assigned_at_format(int64_t us, char *out)
{
	char full[GF_RFC3339_US_LEN];
	gf_rfc3339_us(us, full);
	memcpy(out, full, GF_ASSIGNED_AT_LEN);
	out[GF_ASSIGNED_AT_LEN] = '\0';
}

static int64_t assigned_at_us(void)
{
	static _Atomic int64_t last;
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	int64_t now = (int64_t)t.tv_sec * 1000000 + t.tv_nsec / 1000;
	int64_t prev = atomic_load(&last), next;
	do
		next = now > prev ? now : prev + 1;
	while (!atomic_compare_exchange_weak(&last, &prev, next));
	return next;
}

char *gf_kube_binding_body(const char *ns, const char *name, const char *uid,
			   const struct gf_live_decision *dc)
{
	cJSON *b = cJSON_CreateObject();
	cJSON_AddStringToObject(b, "apiVersion", "v1");
	cJSON_AddStringToObject(b, "kind", "Binding");
	cJSON *md = cJSON_AddObjectToObject(b, "metadata");
	cJSON_AddStringToObject(md, "name", name);
	cJSON_AddStringToObject(md, "namespace", ns);
	if (uid[0])
		cJSON_AddStringToObject(md, "uid", uid);
	cJSON *ann = cJSON_AddObjectToObject(md, "annotations");
	if (dc->ngpus > 0) {
		char gpus[GF_MAX_GPUS * 4] = "", num[32];
		size_t n = 0;
		for (int k = 0; k < dc->ngpus; k++)
			n += (size_t)snprintf(gpus + n, sizeof(gpus) - n, "%s%d", k ? "," : "", dc->gpus[k]);
		cJSON_AddStringToObject(ann, GF_ANN_NODE, dc->node);
		cJSON_AddStringToObject(ann, GF_ANN_GPUS, gpus);
		if (dc->uuids[0])
			cJSON_AddStringToObject(ann, GF_ANN_UUIDS, dc->uuids);
		snprintf(num, sizeof(num), "%d", dc->milli);
		cJSON_AddStringToObject(ann, GF_ANN_AMILLI, num);
		snprintf(num, sizeof(num), "%lld", (long long)dc->mem_mib);
		cJSON_AddStringToObject(ann, GF_ANN_AMEM, num);
		char at[GF_ASSIGNED_AT_LEN + 1];
		gf_kube_assigned_at_format(assigned_at_us(), at);
		cJSON_AddStringToObject(ann, GF_ANN_ASSIGNED_AT, at);
	}
	cJSON *t = cJSON_AddObjectToObject(b, "target");
	cJSON_AddStringToObject(t, "apiVersion", "v1");
	cJSON_AddStringToObject(t, "kind", "Node");
	cJSON_AddStringToObject(t, "name", dc->node);
	char *s = cJSON_PrintUnformatted(b);
	cJSON_Delete(b);
	return s;
}

static atomic_bool node_order_off;

void gf_kube_bind_node_order(bool on)
{
	atomic_store(&node_order_off, !on);
}

#define NODE_LOCKS 64
static pthread_mutex_t node_mu[NODE_LOCKS];
static pthread_once_t node_mu_once = PTHREAD_ONCE_INIT;

static void node_mu_init(void)
{
	for (int i = 0; i < NODE_LOCKS; i++)
		pthread_mutex_init(&node_mu[i], NULL);
}

/* The mutex that orders the GPU bindings of one node (FNV-1a of its name). */
static pthread_mutex_t *node_lock(const char *node)
{
	uint32_t h = 2166136261u;
	for (const char *c = node; *c; c++)
		h = (h ^ (uint8_t)*c) * 16777619u;
	pthread_once(&node_mu_once, node_mu_init);
	return &node_mu[h % NODE_LOCKS];
}

int gf_kube_bind(gf_kube_client *k, const char *ns, const char *name, const char *uid,
		   const struct gf_live_decision *dc, bool *retry, char *err, size_t errlen)
{
	*retry = false;
	char path[600];
	if (gf_kube_path(path, sizeof(path), ns, "pods", name, "binding", err, errlen))
		return B_ERROR; /* never retried: the name is not one the API server has */
	pthread_mutex_t *mu = dc->ngpus > 0 && !atomic_load(&node_order_off) ? node_lock(dc->node) : NULL;
	if (mu)
		pthread_mutex_lock(mu);
	char *body = gf_kube_binding_body(ns, name, uid, dc);
	if (!body) {
		if (mu)
			pthread_mutex_unlock(mu);
		*retry = true;
		snprintf(err, errlen, "out of memory");
		return B_ERROR;
	}
	long st;
	cJSON *doc;
	gf_err e = gf_kube_json(k, "POST", path, "application/json", body, &st, &doc, err, errlen);
	if (mu)
		pthread_mutex_unlock(mu);
	free(body);
	cJSON_Delete(doc);
	if (e) {
		*retry = true;
		return B_ERROR;
	}
	if (st == 200 || st == 201)
		return B_OK;
	if (st == 404)
		return B_GONE;
	if (st != 409) {
		return B_ERROR; /* e.g. 422: the API server refused; err has its message */
	}
	/* 409: already bound (maybe by our own retried POST), or a new pod with that name. */
	char err2[300];
	(void)gf_kube_path(path, sizeof(path), ns, "pods", name, NULL, err2, sizeof(err2)); /* checked above */
	e = gf_kube_json(k, "GET", path, NULL, NULL, &st, &doc, err2, sizeof(err2));
	if (e || !doc) {
		cJSON_Delete(doc);
		if (st == 404)
			return B_GONE;
		*retry = true;
		return B_CONFLICT_RETRY;
	}
	static __thread struct gf_k8s_pod p;
	int r = B_CONFLICT_RETRY;
	if (gf_k8s_pod_decode(doc, &p, err2, sizeof(err2)) == GF_OK) {
		if (uid[0] && strcmp(p.uid, uid))
			r = B_GONE;
		else if (!strcmp(p.node, dc->node) && (!dc->ngpus || (p.assigned && p.assigned_ngpus == dc->ngpus &&
			 !memcmp(p.assigned_gpus, dc->gpus, (size_t)dc->ngpus))))
			r = B_CONFLICT_DONE;
		else if (p.node[0])
			r = B_GONE; /* bound elsewhere: the watch accounts the real binding */
		else
			*retry = true;
	} else {
		*retry = true;
	}
	cJSON_Delete(doc);
	return r;
}

