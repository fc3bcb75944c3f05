/*
 * k8s/preempt.c - a preemption's API writes (preempt.h).
 *
 * Bodies are built with cJSON (names and messages escaped).  The condition
 * is patched before the delete, as kube-scheduler does, so whoever watches
 * the victim (a Job controller's pod failure policy, for one) sees why it
 * goes; a failed patch does not stop the delete (kube-scheduler logs it and
 * goes on), a failed delete is the error.
 */
#include "k8s/preempt.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *print(cJSON *o)
{
	char *s = o ? cJSON_PrintUnformatted(o) : NULL;
	cJSON_Delete(o);
	return s;
}

char *gf_kube_disruption_patch(const char *scheduler_name, const char *ts)
{
	char msg[300];
	snprintf(msg, sizeof(msg), "%.200s: preempting to accommodate a higher priority pod", scheduler_name);
	cJSON *patch = cJSON_CreateObject();
	cJSON *conds = cJSON_AddArrayToObject(cJSON_AddObjectToObject(patch, "status"), "conditions");
	cJSON *c = cJSON_CreateObject();
	if (!conds || !c) {
		cJSON_Delete(c);
		cJSON_Delete(patch);
		return NULL;
	}
	cJSON_AddStringToObject(c, "type", "DisruptionTarget");
	cJSON_AddStringToObject(c, "status", "True");
	cJSON_AddStringToObject(c, "reason", "PreemptionByScheduler");
	cJSON_AddStringToObject(c, "message", msg);
	cJSON_AddStringToObject(c, "lastTransitionTime", ts);
	cJSON_AddItemToArray(conds, c);
	return print(patch);
}

char *gf_kube_delete_body(const char *uid)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "apiVersion", "v1");
	cJSON_AddStringToObject(o, "kind", "DeleteOptions");
	if (uid && uid[0])
		cJSON_AddStringToObject(cJSON_AddObjectToObject(o, "preconditions"), "uid", uid);
	return print(o);
}

char *gf_kube_nominate_patch(const char *node)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *st = cJSON_AddObjectToObject(o, "status");
	if (node && node[0])
		cJSON_AddStringToObject(st, "nominatedNodeName", node);
	else
		cJSON_AddNullToObject(st, "nominatedNodeName");
	return print(o);
}

/* One call; *status set on GF_OK. */
static gf_err call(gf_kube_client *k, const char *method, const char *ns, const char *name, const char *sub,
		   const char *ctype, char *body, long *status, char *err, size_t errlen)
{
	char path[1024];
	if (!body)
		return GF_NOMEM;
	gf_err e = gf_kube_path(path, sizeof(path), ns, "pods", name, sub, err, errlen);
	if (!e)
		e = gf_kube_request(k, method, path, ctype, body, strlen(body), status, NULL, err, errlen);
	free(body);
	return e;
}

gf_err gf_kube_evict(gf_kube_client *k, const char *scheduler_name, const char *ns, const char *name,
		     const char *uid, const char *ts, bool *gone, char *err, size_t errlen)
{
	long st = 0;
	*gone = false;
	gf_err e = call(k, "PATCH", ns, name, "status", "application/strategic-merge-patch+json",
			gf_kube_disruption_patch(scheduler_name, ts), &st, err, errlen);
	if (e == GF_NOMEM)
		return e;
	if (!e && st == 404) {
		*gone = true;
		return GF_OK;
	}
	/* a failed condition patch does not stop the eviction (kube-scheduler's rule) */
	e = call(k, "DELETE", ns, name, NULL, "application/json", gf_kube_delete_body(uid), &st, err, errlen);
	if (e)
		return e;
	if (st == 404 || st == 409) {
		*gone = true;
		return GF_OK;
	}
	if (st / 100 != 2) {
		snprintf(err, errlen, "DELETE pod %s/%s: HTTP %ld", ns, name, st);
		return GF_STATE;
	}
	return GF_OK;
}

gf_err gf_kube_nominate(gf_kube_client *k, const char *ns, const char *name, const char *node, char *err,
			size_t errlen)
{
	long st = 0;
	gf_err e = call(k, "PATCH", ns, name, "status", "application/strategic-merge-patch+json",
			gf_kube_nominate_patch(node), &st, err, errlen);
	if (e)
		return e;
	if (st / 100 != 2 && st != 404) {
		snprintf(err, errlen, "PATCH pod %s/%s status.nominatedNodeName: HTTP %ld", ns, name, st);
		return GF_STATE;
	}
	return GF_OK;
}
