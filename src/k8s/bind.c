/*
 * k8s/bind.c - the Binding with the assignment, and 409 handling (bind.h).
 *
 * A 409 has two causes: the pod is already bound (maybe by our own POST,
 * retried after a lost answer) or a different pod now has that name (the
 * uid precondition).  Re-reading the pod tells them apart: bound to our node
 * with our GPUs is success; bound elsewhere or another uid: forget our
 * assumption (the watch accounts the real binding); still unbound: retry.
 * Two requests at most besides the client's own retries.
 */
#include "k8s/bind.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	}
	cJSON *t = cJSON_AddObjectToObject(b, "target");
	cJSON_AddStringToObject(t, "apiVersion", "v1");
	cJSON_AddStringToObject(t, "kind", "Node");
	cJSON_AddStringToObject(t, "name", dc->node);
	char *s = cJSON_PrintUnformatted(b);
	cJSON_Delete(b);
	return s;
}

int gf_kube_bind(gf_kube_client *k, const char *ns, const char *name, const char *uid,
		   const struct gf_live_decision *dc, bool *retry, char *err, size_t errlen)
{
	*retry = false;
	char *body = gf_kube_binding_body(ns, name, uid, dc);
	if (!body) {
		*retry = true;
		snprintf(err, errlen, "out of memory");
		return B_ERROR;
	}
	char path[600];
	if (gf_kube_path(path, sizeof(path), ns, "pods", name, "binding", err, errlen)) {
		free(body);
		return B_ERROR; /* never retried: the name is not one the API server has */
	}
	long st;
	cJSON *doc;
	gf_err e = gf_kube_json(k, "POST", path, "application/json", body, &st, &doc, err, errlen);
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

