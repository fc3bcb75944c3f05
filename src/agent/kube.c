/*
 * agent/kube.c - Node publisher: the JSON merge patch of labels + topology
 * annotation (+ the served models, gpufleet.io/models-seen), sent with the
 * shared Kubernetes connection (k8s/conn.h).  The served models come from
 * one GET per pod seen on the GPUs (cached by namespace/name), all of one
 * publish on one keep-alive connection of the shared client (k8s/client.h).
 */
#include "agent/kube.h"
#include "agent/agent_impl.h"
#include "k8s/client.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the patch ------------------------------------------------------------ */

void gf_kube_label_value(char out[64], const char *in)
{
	size_t k = 0;
	bool dash = false;
	for (; *in && k < 63; in++) {
		unsigned char ch = (unsigned char)*in;
		if (isalnum(ch) || ch == '.' || ch == '_' || ch == '-') {
			out[k++] = (char)ch;
			dash = false;
		} else if (!dash && k) {
			out[k++] = '-';
			dash = true;
		}
	}
	while (k && !isalnum((unsigned char)out[k - 1]))
		k--;
	size_t start = 0;
	while (start < k && !isalnum((unsigned char)out[start]))
		start++;
	memmove(out, out + start, k - start);
	out[k - start] = '\0';
}

static void add_label(cJSON *labels, const char *key, const char *value)
{
	char v[64];
	gf_kube_label_value(v, value);
	cJSON_AddStringToObject(labels, key, v);
}

gf_err gf_agent_node_patch_body(gf_agent *a, const char *node, struct gf_obuf *out)
{
	struct gf_obuf inv;
	gf_obuf_init(&inv, 256 * 1024); /* annotations total at most 256 KiB */
	gf_err e = gf_agent_render_inventory(a, node, &inv);
	if (e) {
		gf_obuf_release(&inv);
		return e;
	}
	cJSON *doc = cJSON_Parse(inv.data);
	cJSON *patch = cJSON_CreateObject();
	e = GF_NOMEM;
	if (!doc || !patch)
		goto out;
	cJSON *md = cJSON_AddObjectToObject(patch, "metadata");
	cJSON *labels = cJSON_AddObjectToObject(md, "labels");
	cJSON *ann = cJSON_AddObjectToObject(md, "annotations");
	cJSON *gpus = cJSON_GetObjectItem(doc, "gpus");
	int n = cJSON_GetArraySize(gpus), healthy = 0;
	double min_mem = 0;
	bool nvlink = false, mig_on = false, mig_off = false;
	const char *model = "";
	cJSON *g;
	cJSON_ArrayForEach(g, gpus)
	{
		cJSON *mem = cJSON_GetObjectItem(g, "memory_mib");
		if (cJSON_IsNumber(mem) && (min_mem == 0 || mem->valuedouble < min_mem))
			min_mem = mem->valuedouble;
		healthy += cJSON_IsTrue(cJSON_GetObjectItem(g, "healthy"));
		const char *mode = cJSON_GetStringValue(
			cJSON_GetObjectItem(cJSON_GetObjectItem(g, "mig"), "mode"));
		if (mode && !strcmp(mode, "enabled"))
			mig_on = true;
		else
			mig_off = true;
		const char *m = cJSON_GetStringValue(cJSON_GetObjectItem(g, "model"));
		if (m && !*model)
			model = m;
	}
	cJSON *row;
	cJSON_ArrayForEach(row, cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "topology"), "links"))
	{
		cJSON *x;
		cJSON_ArrayForEach(x, row) nvlink |= x->valuedouble > 0;
	}
	char num[32];
	add_label(labels, "gpufleet.io/gpu.present", n > 0 ? "true" : "false");
	snprintf(num, sizeof(num), "%d", n);
	add_label(labels, "gpufleet.io/gpu.count", num);
	snprintf(num, sizeof(num), "%d", healthy);
	add_label(labels, "gpufleet.io/gpu.healthy-count", num);
	snprintf(num, sizeof(num), "%.0f", min_mem);
	add_label(labels, "gpufleet.io/gpu.memory-mib", num);
	add_label(labels, "gpufleet.io/gpu.product", model);
	add_label(labels, "gpufleet.io/gpu.mig",
		  mig_on && mig_off ? "mixed" : mig_on ? "enabled" : "disabled");
	add_label(labels, "gpufleet.io/gpu.nvlink", nvlink ? "true" : "false");
	add_label(labels, "gpufleet.io/gpu.driver",
		  cJSON_GetStringValue(cJSON_GetObjectItem(doc, "driver"))
			  ? cJSON_GetStringValue(cJSON_GetObjectItem(doc, "driver"))
			  : "");
	cJSON_AddStringToObject(ann, "gpufleet.io/gpu-topology", inv.data);
	pthread_mutex_lock(&a->lock);
	bool mig_applied = a->mig_last != NULL;
	pthread_mutex_unlock(&a->lock);
	if (mig_on || mig_applied) { /* what the MIG layout came to (agent/mig.h) */
		struct gf_nodemig_state *ms = malloc(sizeof(*ms));
		struct gf_obuf mb;
		gf_obuf_init(&mb, 128 * 1024);
		if (!ms)
			goto out;
		gf_agent_mig_state(a, ms);
		if (gf_nodemig_state_render(ms, &mb) == GF_OK)
			cJSON_AddStringToObject(ann, GF_ANN_MIG_STATE, mb.data);
		gf_obuf_release(&mb);
		free(ms);
	}
	char seen[GF_SERVED_SEEN_MAX * GF_K8S_SERVED_MAX];
	gf_agent_served_render(a, seen, sizeof(seen));
	if (seen[0])
		cJSON_AddStringToObject(ann, GF_ANN_MODELS_SEEN, seen);
	char *text = cJSON_PrintUnformatted(patch);
	if (!text)
		goto out;
	e = gf_obuf_puts(out, text);
	cJSON_free(text);
out:
	cJSON_Delete(doc);
	cJSON_Delete(patch);
	gf_obuf_release(&inv);
	return e;
}

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
	gf_obuf_append(ud, p, sz * n); /* keeps the first 4 KiB for the message */
	return sz * n;
}

static bool node_name_ok(const char *s)
{
	size_t n = strlen(s);
	if (!n || n > 253)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!(islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]) || s[i] == '-' ||
		      s[i] == '.'))
			return false;
	return true;
}

gf_err gf_agent_publish_node(gf_agent *a, const struct gf_kube_conn *c, const char *node,
			     char *err, size_t errlen)
{
	if (!node || !node_name_ok(node)) {
		snprintf(err, errlen, "'%s' is not a valid node name", node ? node : "");
		return GF_INVAL;
	}
	struct gf_obuf body, resp;
	gf_obuf_init(&body, 512 * 1024);
	gf_obuf_init(&resp, 4096);
	gf_err e = gf_agent_node_patch_body(a, node, &body);
	if (e) {
		snprintf(err, errlen, "building the patch: %s", gf_strerror(e));
		gf_obuf_release(&body);
		return e;
	}
	CURL *h = curl_easy_init();
	struct curl_slist *hdr = NULL;
	char url[1024];
	if (!h) {
		e = GF_NOMEM;
		goto out;
	}
	snprintf(url, sizeof(url), "%s/api/v1/nodes/%s", c->server, node);
	hdr = curl_slist_append(hdr, "Content-Type: application/merge-patch+json");
	hdr = curl_slist_append(hdr, "Accept: application/json");
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, "PATCH");
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.data);
	curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)body.len);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 15L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &resp);
	if (gf_kube_conn_curl(c, h, &hdr)) {
		e = GF_NOMEM;
		goto out;
	}
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
	CURLcode cr = curl_easy_perform(h);
	long status = 0;
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	if (cr != CURLE_OK) {
		snprintf(err, errlen, "PATCH %s: %s", url, curl_easy_strerror(cr));
		e = GF_UNAVAILABLE;
	} else if (status < 200 || status > 299) {
		snprintf(err, errlen, "PATCH %s: HTTP %ld: %.300s", url, status,
			 resp.data ? resp.data : "");
		e = GF_UNAVAILABLE;
	} else {
		e = GF_OK;
	}
out:
	curl_slist_free_all(hdr);
	if (h)
		curl_easy_cleanup(h);
	gf_obuf_release(&body);
	gf_obuf_release(&resp);
	return e;
}

/* ---- served models ---------------------------------------------------------- */

void gf_agent_served_add(gf_agent *a, const char *id)
{
	struct gf_agent_served *s = &a->served;
	int at = s->nseen < GF_SERVED_SEEN_MAX ? s->nseen : GF_SERVED_SEEN_MAX - 1;

	if (!id[0] || strlen(id) >= GF_K8S_SERVED_MAX || strchr(id, ','))
		return;
	for (int i = 0; i < s->nseen; i++)
		if (!strcmp(s->seen[i], id))
			at = i;
	if (at == s->nseen)
		s->nseen++;
	memmove(s->seen[1], s->seen[0], (size_t)at * sizeof(s->seen[0]));
	snprintf(s->seen[0], sizeof(s->seen[0]), "%s", id);
}

void gf_agent_served_render(gf_agent *a, char *out, size_t n)
{
	size_t k = 0;

	out[0] = '\0';
	for (int i = 0; i < a->served.nseen && k < n; i++) {
		int w = snprintf(out + k, n - k, "%s%s", i ? "," : "", a->served.seen[i]);
		if (w < 0 || (size_t)w >= n - k) {
			out[k] = '\0';	/* whole entries only */
			break;
		}
		k += (size_t)w;
	}
}

static bool served_looked(const struct gf_agent_served *s, const char *key)
{
	for (int i = 0; i < s->nlooked; i++)
		if (!strcmp(s->looked[i], key))
			return true;
	return false;
}

static void served_mark(struct gf_agent_served *s, const char *key)
{
	size_t len = strnlen(key, sizeof(s->looked[0]) - 1);

	memcpy(s->looked[s->next], key, len);
	s->looked[s->next][len] = '\0';
	s->next = (s->next + 1) % GF_AGENT_SERVED_LOOKED;
	if (s->nlooked < GF_AGENT_SERVED_LOOKED)
		s->nlooked++;
}

/*
 * GET one pod on k; its served model added.  true when the answer settles
 * the pod (a pod, 404: gone, other 4xx but 429: said once), false when it
 * is worth asking again at the next publish (transport, 429, 5xx; logged).
 */
static bool lookup_pod(gf_agent *a, gf_kube_client *k, const char *ns, const char *pod)
{
	char path[600], err[256];
	long status = 0;
	cJSON *doc = NULL;

	if (gf_kube_path(path, sizeof(path), ns, "pods", pod, NULL, err, sizeof(err)))
		return true;	/* the caller checked the names: cannot happen */
	gf_err e = gf_kube_json(k, "GET", path, NULL, NULL, &status, &doc, err, sizeof(err));
	if (e) {	/* err names the request */
		fprintf(stderr, "gpufleet agent: %s\n", err);
		return e == GF_PARSE;	/* not JSON: settled; over 1 MiB, unreachable, 429, 5xx: again */
	}
	if (doc) {
		char id[GF_K8S_SERVED_MAX];

		if (gf_k8s_served_identity(doc, id, sizeof(id)))
			gf_agent_served_add(a, id);
		cJSON_Delete(doc);
		return true;
	}
	if (status == 404)
		return true;
	fprintf(stderr, "gpufleet agent: %s\n", err);
	return status >= 400 && status < 500 && status != 429;	/* 403: RBAC, say it once */
}

gf_err gf_agent_fetch_mig_layout(const struct gf_kube_conn *c, const char *node, struct gf_nodemig_layout *out,
				 bool *present, char *err, size_t errlen)
{
	const struct gf_kube_client_opts opts = { .timeout_ms = 15000, .retries = 1, .max_body = 4 << 20 };
	char path[400];
	long status = 0;
	cJSON *doc = NULL;
	gf_kube_client *cl = NULL;
	*present = false;
	memset(out, 0, sizeof(*out));
	if (!gf_k8s_dns_subdomain(node)) {
		snprintf(err, errlen, "node name '%.100s' is not a DNS subdomain", node);
		return GF_INVAL;
	}
	snprintf(path, sizeof(path), "/api/v1/nodes/%s", node);
	gf_err e = gf_kube_client_create(c, &opts, &cl);
	if (e) {
		snprintf(err, errlen, "GET %s: %s", path, gf_strerror(e));
		return e;
	}
	e = gf_kube_json(cl, "GET", path, NULL, NULL, &status, &doc, err, errlen);
	gf_kube_client_destroy(cl);
	if (e || !doc) {
		cJSON_Delete(doc);
		return e == GF_NOMEM ? GF_NOMEM : GF_UNAVAILABLE;
	}
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "metadata"), "annotations"),
		GF_ANN_MIG_LAYOUT);
	e = GF_OK;
	if (cJSON_IsString(v)) {
		char why[400];
		*present = true;
		e = gf_nodemig_layout_parse(v->valuestring, strlen(v->valuestring), out, why, sizeof(why));
		if (e)
			snprintf(err, errlen, "node %s, annotation %s: %s", node, GF_ANN_MIG_LAYOUT, why);
	} else if (v) {
		*present = true;
		snprintf(err, errlen, "node %s, annotation %s: not a string", node, GF_ANN_MIG_LAYOUT);
		e = GF_INVAL;
	}
	cJSON_Delete(doc);
	return e;
}

int gf_agent_learn_served(gf_agent *a, const struct gf_kube_conn *c)
{
	enum { MAXP = 512 };	/* pods per call; more are looked up at the next */
	static char keys[MAXP][GF_K8S_NAME_MAX * 2];	/* publishing thread only */
	/* One keep-alive connection for all of this call's lookups; no retries
	 * inside a publish (a failed lookup is asked again at the next). */
	const struct gf_kube_client_opts opts = { .timeout_ms = 15000, .retries = -1, .max_body = 1 << 20 };
	gf_kube_client *cl = NULL;
	int n = 0, looked = 0;

	pthread_mutex_lock(&a->lock);
	gf_agent_maybe_collect_locked(a);
	for (unsigned i = 0; i < a->ngpus; i++) {
		const struct gf_agent_gpu *g = &a->gpus[i];

		for (unsigned k = 0; k < g->npods && n < MAXP; k++)
			snprintf(keys[n++], sizeof(keys[0]), "%s/%s", g->pods[k].ref.ns, g->pods[k].ref.pod);
		for (unsigned m = 0; m < g->nmig; m++)
			for (unsigned k = 0; k < g->mig[m].npods && n < MAXP; k++)
				snprintf(keys[n++], sizeof(keys[0]), "%s/%s", g->mig[m].pods[k].ref.ns,
					 g->mig[m].pods[k].ref.pod);
	}
	pthread_mutex_unlock(&a->lock);
	for (int i = 0; i < n; i++) {
		char *slash = strchr(keys[i], '/');

		if (!slash || served_looked(&a->served, keys[i]))
			continue;
		*slash = '\0';
		if (!gf_k8s_dns_label(keys[i]) || !gf_k8s_dns_subdomain(slash + 1)) {	/* never asked */
			*slash = '/';
			served_mark(&a->served, keys[i]);
			continue;
		}
		if (!cl && gf_kube_client_create(c, &opts, &cl)) {
			*slash = '/';
			break;	/* out of memory: the next publish tries again */
		}
		bool ok = lookup_pod(a, cl, keys[i], slash + 1);
		*slash = '/';
		looked++;
		if (ok)
			served_mark(&a->served, keys[i]);
	}
	gf_kube_client_destroy(cl);
	return looked;
}
