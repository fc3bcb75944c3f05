/*
 * metricsapi/pods.c - list pod names by label selector (see pods.h).
 *
 * One GET per request that names pod labels (the HPA asks every 15 s per
 * metric, so no cache).  Only metadata.name is read from the answer; the
 * answer is capped at 64 MiB.  The selector is URL-encoded with
 * curl_easy_escape; the namespace was validated by the caller.
 */
#include "core/sort.h"
#include "metricsapi/pods.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/obuf.h"

#define PODLIST_CAP (64u << 20)

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void gf_ma_pods_free(char **names, size_t n)
{
	for (size_t i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
}

gf_err gf_ma_pods_decode(const char *json, size_t len, char ***names, size_t *n, char *err,
			 size_t errlen)
{
	*names = NULL;
	*n = 0;
	cJSON *doc = cJSON_ParseWithLength(json, len);
	if (!doc) {
		snprintf(err, errlen, "pod list: not JSON");
		return GF_PARSE;
	}
	const cJSON *items = cJSON_GetObjectItemCaseSensitive(doc, "items");
	if (!cJSON_IsArray(items) && !cJSON_IsNull(items)) {
		cJSON_Delete(doc);
		snprintf(err, errlen, "pod list: items: expected an array");
		return GF_PARSE;
	}
	size_t cnt = cJSON_IsArray(items) ? (size_t)cJSON_GetArraySize(items) : 0;
	char **v = calloc(cnt ? cnt : 1, sizeof(char *));
	if (!v) {
		cJSON_Delete(doc);
		return GF_NOMEM;
	}
	size_t k = 0;
	const cJSON *it;
	cJSON_ArrayForEach(it, items)
	{
		const cJSON *md = cJSON_GetObjectItemCaseSensitive(it, "metadata");
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(md, "name");
		if (!cJSON_IsString(name)) {
			snprintf(err, errlen, "pod list: items[%zu].metadata.name: expected a string", k);
			gf_ma_pods_free(v, k);
			cJSON_Delete(doc);
			return GF_PARSE;
		}
		if (!(v[k] = strdup(name->valuestring))) {
			gf_ma_pods_free(v, k);
			cJSON_Delete(doc);
			return GF_NOMEM;
		}
		k++;
	}
	cJSON_Delete(doc);
	gf_qsort(v, k, sizeof(char *), cmp_str);
	*names = v;
	*n = k;
	return GF_OK;
}

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
	struct gf_obuf *b = ud;
	return gf_obuf_append(b, p, sz * n) ? 0 : sz * n;
}

gf_err gf_ma_pods_list(const struct gf_kube_conn *c, const char *ns, const char *selector,
		       long timeout_ms, char ***names, size_t *n, char *err, size_t errlen)
{
	*names = NULL;
	*n = 0;
	CURL *h = curl_easy_init();
	if (!h)
		return GF_NOMEM;
	struct curl_slist *hdr = NULL;
	struct gf_obuf url, body;
	gf_obuf_init(&url, 64 * 1024);
	gf_obuf_init(&body, PODLIST_CAP);
	gf_err e = gf_kube_conn_curl(c, h, &hdr);
	char *sel = e ? NULL : curl_easy_escape(h, selector, 0);
	if (!e && !sel)
		e = GF_NOMEM;
	if (e)
		goto out;
	gf_obuf_printf(&url, "%s/api/v1/namespaces/%s/pods?labelSelector=%s", c->server, ns, sel);
	curl_free(sel);
	hdr = curl_slist_append(hdr, "Accept: application/json");
	if ((e = gf_obuf_error(&url)) || !hdr) {
		e = e ? e : GF_NOMEM;
		goto out;
	}
	curl_easy_setopt(h, CURLOPT_URL, url.data);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &body);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	CURLcode cc = curl_easy_perform(h);
	long code = 0;
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	if (cc != CURLE_OK || code != 200) {
		if (cc != CURLE_OK)
			snprintf(err, errlen, "listing pods in %s: %s", ns, curl_easy_strerror(cc));
		else
			snprintf(err, errlen, "listing pods in %s: HTTP %ld: %.200s", ns, code,
				 body.data ? body.data : "");
		e = (cc != CURLE_OK && gf_obuf_error(&body)) ? GF_TOOBIG : GF_UNAVAILABLE;
		goto out;
	}
	e = gf_ma_pods_decode(body.data ? body.data : "", body.len, names, n, err, errlen);
out:
	curl_slist_free_all(hdr);
	gf_obuf_release(&url);
	gf_obuf_release(&body);
	curl_easy_cleanup(h);
	return e;
}
