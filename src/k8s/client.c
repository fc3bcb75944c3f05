/*
 * k8s/client.c - libcurl REST client and watch stream (see client.h).
 *
 * Design: one easy handle per client, reused for keep-alive; headers are
 * rebuilt per request (auth from the connection, content type).  Backoff
 * before attempt a (a >= 1) is uniform in [0, min(5 s, base * 2^(a-1))]
 * ("full jitter"), from a splitmix64 stream seeded by the caller, so
 * clients started together do not retry in lockstep.
 *
 * The watch write callback appends to a line buffer and hands each
 * complete line to cJSON; a line over the cap aborts the watch (GF_TOOBIG
 * is reported as GF_UNAVAILABLE to the reflector, which relists).
 *
 * Paths: names that came from outside (an extender request, a watched
 * object) reach a path only through gf_kube_path(), which checks them as
 * the API server would (a pod named "x/../../secrets/y" or "p?dryRun=All"
 * never gets built); gf_kube_request() checks every path again, so a
 * caller that builds one by hand still cannot steer the credentials
 * elsewhere.
 */
#include "k8s/client.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct gf_kube_client {
	const struct gf_kube_conn *conn;
	struct gf_kube_client_opts o;
	CURL *h;
	uint64_t rng;
};

static uint64_t next_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void gf_kube_sleep_ms(long ms, volatile int *stop)
{
	while (ms > 0 && !gf_kube_stopped(stop)) {
		long step = ms > 50 ? 50 : ms;
		struct timespec ts = { step / 1000, (step % 1000) * 1000000L };
		nanosleep(&ts, NULL);
		ms -= step;
	}
}

gf_err gf_kube_client_create(const struct gf_kube_conn *c, const struct gf_kube_client_opts *o,
			     gf_kube_client **out)
{
	gf_kube_client *k = calloc(1, sizeof(*k));
	if (!k)
		return GF_NOMEM;
	k->conn = c;
	if (o)
		k->o = *o;
	if (!k->o.timeout_ms)
		k->o.timeout_ms = 10000;
	if (!k->o.connect_timeout_ms)
		k->o.connect_timeout_ms = 5000;
	if (k->o.retries == 0)
		k->o.retries = 5;
	if (k->o.retries < 0)
		k->o.retries = 0;
	if (!k->o.base_backoff_ms)
		k->o.base_backoff_ms = 100;
	if (!k->o.max_body)
		k->o.max_body = 64u << 20;
	k->rng = k->o.seed ? k->o.seed : 0x6766;
	k->h = curl_easy_init();
	if (!k->h) {
		free(k);
		return GF_NOMEM;
	}
	*out = k;
	return GF_OK;
}

void gf_kube_client_destroy(gf_kube_client *k)
{
	if (!k)
		return;
	curl_easy_cleanup(k->h);
	free(k);
}

/* ---- names and paths ---------------------------------------------------- */

static bool alnum_lower(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* s[0..n) is one DNS-1123 label (no length limit checked here). */
static bool label_at(const char *s, size_t n)
{
	if (!n || !alnum_lower(s[0]) || !alnum_lower(s[n - 1]))
		return false;
	for (size_t i = 1; i + 1 < n; i++)
		if (!alnum_lower(s[i]) && s[i] != '-')
			return false;
	return true;
}

bool gf_k8s_dns_label(const char *s)
{
	size_t n = s ? strlen(s) : 0;
	return n <= 63 && label_at(s, n);
}

bool gf_k8s_dns_subdomain(const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (!n || n > 253)
		return false;
	for (const char *p = s;;) {
		const char *dot = strchr(p, '.');
		size_t l = dot ? (size_t)(dot - p) : strlen(p);
		if (!label_at(p, l))
			return false;
		if (!dot)
			return true;
		p = dot + 1;
	}
}

/* s for a message: at most 60 bytes, anything but printable ASCII as \xNN. */
static void quote_name(char *out, size_t n, const char *s)
{
	size_t o = 0;
	for (size_t i = 0; s[i] && i < 60 && o + 5 < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\')
			o += (size_t)snprintf(out + o, n - o, "\\x%02x", c);
		else
			out[o++] = (char)c;
	}
	out[o < n ? o : n - 1] = '\0';
}

static gf_err bad_name(const char *what, const char *s, const char *rule, char *err, size_t errlen)
{
	char q[256];
	quote_name(q, sizeof(q), s ? s : "");
	snprintf(err, errlen, "invalid %s \"%s%s\": %s", what, q, s && strlen(s) > 60 ? "..." : "", rule);
	return GF_INVAL;
}

gf_err gf_kube_path(char *out, size_t n, const char *ns, const char *resource, const char *name,
		    const char *sub, char *err, size_t errlen)
{
	if (ns && !gf_k8s_dns_label(ns))
		return bad_name("namespace", ns,
				"a namespace is a DNS-1123 label (lower-case letters, digits and '-', "
				"starting and ending alphanumeric, at most 63 bytes)", err, errlen);
	if (name && !gf_k8s_dns_subdomain(name))
		return bad_name("name", name,
				"a name is a DNS-1123 subdomain (lower-case letters, digits, '-' and '.', "
				"each part starting and ending alphanumeric, at most 253 bytes)", err, errlen);
	int w = snprintf(out, n, "/api/v1%s%s/%s%s%s%s%s", ns ? "/namespaces/" : "", ns ? ns : "", resource,
			 name ? "/" : "", name ? name : "", sub ? "/" : "", sub ? sub : "");
	if (w < 0 || (size_t)w >= n) {
		snprintf(err, errlen, "API path too long");
		return GF_TOOBIG;
	}
	return GF_OK;
}

/* A path fit to send: see client.h.  err says what is wrong. */
static gf_err check_path(const char *path, char *err, size_t errlen)
{
	const char *q = strchr(path, '?');
	size_t plen = q ? (size_t)(q - path) : strlen(path);
	bool ok = path[0] == '/';
	for (const char *p = path; ok && *p; p++)
		ok = *p > 0x20 && *p < 0x7f && *p != '#' && *p != '\\';
	for (size_t i = 0; ok && i < plen; i++) {
		if (path[i] != '/')
			continue;
		size_t l = 1;
		while (i + l < plen && path[i + l] != '/')
			l++;
		l--; /* the segment after this '/' */
		ok = !((l == 1 && path[i + 1] == '.') || (l == 2 && path[i + 1] == '.' && path[i + 2] == '.'));
	}
	if (ok)
		return GF_OK;
	char qp[256];
	quote_name(qp, sizeof(qp), path);
	snprintf(err, errlen, "refusing to request the API path \"%s\": not a plain path", qp);
	return GF_INVAL;
}

/* A request in progress gives up when the client's stop flag is set. */
static int on_request_progress(void *ud, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
	(void)a, (void)b, (void)c, (void)d;
	return gf_kube_stopped(ud);
}

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
	if (gf_obuf_append(ud, p, sz * n))
		return 0; /* over the cap: abort the transfer */
	return sz * n;
}

static gf_err setup(gf_kube_client *k, const char *method, const char *path, const char *ctype,
		    struct curl_slist **hdr)
{
	CURL *h = k->h;
	curl_easy_reset(h);
	char url[4096];
	snprintf(url, sizeof(url), "%s%s", k->conn->server, path);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, k->o.connect_timeout_ms);
	curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
	if (!strcmp(method, "GET"))
		curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
	else
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	*hdr = curl_slist_append(*hdr, "Accept: application/json");
	if (ctype) {
		char line[128];
		snprintf(line, sizeof(line), "Content-Type: %s", ctype);
		*hdr = curl_slist_append(*hdr, line);
	}
	*hdr = curl_slist_append(*hdr, "User-Agent: gpufleet");
	if (!*hdr || gf_kube_conn_curl(k->conn, h, hdr))
		return GF_NOMEM;
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, *hdr);
	return GF_OK;
}

static void status_message(const char *body, char *err, size_t errlen, const char *what, long st)
{
	cJSON *d = body ? cJSON_Parse(body) : NULL;
	const char *m = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(d, "message"));
	snprintf(err, errlen, "%s: HTTP %ld: %.300s", what, st, m ? m : body ? body : "");
	cJSON_Delete(d);
}

gf_err gf_kube_request(gf_kube_client *k, const char *method, const char *path,
		       const char *content_type, const char *body, size_t body_len, long *status,
		       struct gf_obuf *resp, char *err, size_t errlen)
{
	struct gf_obuf tmp;
	gf_obuf_init(&tmp, k->o.max_body);
	struct gf_obuf *out = resp ? resp : &tmp;
	if (resp)
		out->cap = k->o.max_body;
	gf_err e = GF_UNAVAILABLE;
	*status = 0;
	if (check_path(path, err, errlen))
		return GF_INVAL;
	for (int attempt = 0; attempt <= k->o.retries; attempt++) {
		if (attempt) {
			long cap = k->o.base_backoff_ms << (attempt - 1 > 16 ? 16 : attempt - 1);
			if (cap > 5000)
				cap = 5000;
			gf_kube_sleep_ms((long)(next_rand(&k->rng) % (uint64_t)(cap + 1)), k->o.stop);
		}
		if (gf_kube_stopped(k->o.stop)) {
			snprintf(err, errlen, "%s %s: stopped", method, path);
			e = GF_UNAVAILABLE;
			break;
		}
		gf_obuf_reset(out);
		struct curl_slist *hdr = NULL;
		if (setup(k, method, path, content_type, &hdr)) {
			curl_slist_free_all(hdr);
			e = GF_NOMEM;
			break;
		}
		curl_easy_setopt(k->h, CURLOPT_TIMEOUT_MS, k->o.timeout_ms);
		if (k->o.stop) {
			curl_easy_setopt(k->h, CURLOPT_NOPROGRESS, 0L);
			curl_easy_setopt(k->h, CURLOPT_XFERINFOFUNCTION, on_request_progress);
			curl_easy_setopt(k->h, CURLOPT_XFERINFODATA, (void *)k->o.stop);
		}
		curl_easy_setopt(k->h, CURLOPT_WRITEFUNCTION, on_body);
		curl_easy_setopt(k->h, CURLOPT_WRITEDATA, out);
		if (body) {
			curl_easy_setopt(k->h, CURLOPT_POSTFIELDS, body);
			curl_easy_setopt(k->h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
		}
		CURLcode cr = curl_easy_perform(k->h);
		curl_slist_free_all(hdr);
		if (cr == CURLE_WRITE_ERROR && gf_obuf_error(out) == GF_TOOBIG) {
			snprintf(err, errlen, "%s %s: answer larger than %zu bytes", method, path,
				 k->o.max_body);
			e = GF_TOOBIG;
			break;
		}
		if (cr != CURLE_OK) {
			snprintf(err, errlen, "%s %s: %s", method, path, curl_easy_strerror(cr));
			e = cr == CURLE_OPERATION_TIMEDOUT ? GF_TIMEOUT : GF_UNAVAILABLE;
			continue;
		}
		curl_easy_getinfo(k->h, CURLINFO_RESPONSE_CODE, status);
		if (*status == 429 || *status >= 500) {
			char what[256];
			snprintf(what, sizeof(what), "%s %s", method, path);
			status_message(out->data, err, errlen, what, *status);
			e = GF_UNAVAILABLE;
			continue;
		}
		e = GF_OK;
		break;
	}
	if (e == GF_TIMEOUT)
		e = GF_UNAVAILABLE;
	gf_obuf_release(&tmp);
	return e;
}

gf_err gf_kube_json(gf_kube_client *k, const char *method, const char *path,
		    const char *content_type, const char *body, long *status, cJSON **out,
		    char *err, size_t errlen)
{
	struct gf_obuf b;
	gf_obuf_init(&b, k->o.max_body);
	*out = NULL;
	gf_err e = gf_kube_request(k, method, path, content_type, body, body ? strlen(body) : 0,
				   status, &b, err, errlen);
	if (e)
		goto out;
	char what[256];
	snprintf(what, sizeof(what), "%s %s", method, path);
	if (*status < 200 || *status > 299) {
		status_message(b.data, err, errlen, what, *status);
		goto out;
	}
	if (b.len) {
		*out = cJSON_ParseWithLength(b.data, b.len);
		if (!*out) {
			snprintf(err, errlen, "%s: the answer is not JSON", what);
			e = GF_PARSE;
		}
	}
out:
	gf_obuf_release(&b);
	return e;
}

/* ---- watch ------------------------------------------------------------- */

struct wstate {
	struct gf_obuf line;
	char *rv;
	size_t rvlen;
	gf_kube_event_fn fn;
	void *ud;
	volatile int *stop;
	bool gone;
	bool toobig;
	char *err;
	size_t errlen;
};

static void handle_line(struct wstate *w, const char *s, size_t n)
{
	cJSON *ev = cJSON_ParseWithLength(s, n);
	if (!ev)
		return;
	const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ev, "type"));
	const cJSON *obj = cJSON_GetObjectItemCaseSensitive(ev, "object");
	if (!type || !cJSON_IsObject(obj))
		goto out;
	if (!strcmp(type, "ERROR")) {
		const cJSON *code = cJSON_GetObjectItemCaseSensitive(obj, "code");
		const char *m = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(obj, "message"));
		if (cJSON_IsNumber(code) && code->valueint == 410)
			w->gone = true;
		snprintf(w->err, w->errlen, "watch ERROR event: %.200s", m ? m : "");
		goto out;
	}
	const char *rv = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "resourceVersion"));
	if (rv && strlen(rv) < w->rvlen)
		snprintf(w->rv, w->rvlen, "%s", rv);
	if (strcmp(type, "BOOKMARK"))
		w->fn(w->ud, type, obj);
out:
	cJSON_Delete(ev);
}

static size_t on_watch(char *p, size_t sz, size_t n, void *ud)
{
	struct wstate *w = ud;
	size_t len = sz * n;
	for (size_t i = 0; i < len;) {
		char *nl = memchr(p + i, '\n', len - i);
		size_t take = nl ? (size_t)(nl - (p + i)) : len - i;
		if (gf_obuf_append(&w->line, p + i, take)) {
			w->toobig = true;
			return 0;
		}
		i += take;
		if (nl) {
			i++;
			if (w->line.len)
				handle_line(w, w->line.data, w->line.len);
			gf_obuf_reset(&w->line);
			if (w->gone)
				return 0;
		}
	}
	return len;
}

static int on_progress(void *ud, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
	(void)a, (void)b, (void)c, (void)d;
	struct wstate *w = ud;
	return gf_kube_stopped(w->stop);
}

gf_err gf_kube_watch(gf_kube_client *k, const char *path, char *rv, size_t rvlen, int timeout_s,
		     gf_kube_event_fn fn, void *ud, volatile int *stop, char *err, size_t errlen)
{
	char p[2048];
	snprintf(p, sizeof(p), "%s%swatch=1&allowWatchBookmarks=true&timeoutSeconds=%d%s%s", path,
		 strchr(path, '?') ? "&" : "?", timeout_s, rv[0] ? "&resourceVersion=" : "", rv);
	struct wstate w = { .rv = rv, .rvlen = rvlen, .fn = fn, .ud = ud, .stop = stop,
			    .err = err, .errlen = errlen };
	gf_obuf_init(&w.line, k->o.max_body);
	struct curl_slist *hdr = NULL;
	gf_err e = setup(k, "GET", p, NULL, &hdr);
	if (e)
		goto out;
	curl_easy_setopt(k->h, CURLOPT_TIMEOUT_MS, (long)(timeout_s + 30) * 1000L);
	curl_easy_setopt(k->h, CURLOPT_WRITEFUNCTION, on_watch);
	curl_easy_setopt(k->h, CURLOPT_WRITEDATA, &w);
	curl_easy_setopt(k->h, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(k->h, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(k->h, CURLOPT_XFERINFODATA, &w);
	CURLcode cr = curl_easy_perform(k->h);
	long status = 0;
	curl_easy_getinfo(k->h, CURLINFO_RESPONSE_CODE, &status);
	if (w.gone || status == 410) {
		if (status == 410)
			snprintf(err, errlen, "watch %s: HTTP 410 Gone", path);
		e = GF_STATE;
	} else if (gf_kube_stopped(stop)) {
		e = GF_OK;
	} else if (w.toobig) {
		snprintf(err, errlen, "watch %s: an event larger than %zu bytes", path, k->o.max_body);
		e = GF_STATE;
	} else if (cr != CURLE_OK) {
		snprintf(err, errlen, "watch %s: %s", path, curl_easy_strerror(cr));
		e = GF_UNAVAILABLE;
	} else if (status != 200) {
		snprintf(err, errlen, "watch %s: HTTP %ld", path, status);
		e = GF_UNAVAILABLE;
	} else {
		e = GF_OK;
	}
out:
	curl_slist_free_all(hdr);
	gf_obuf_release(&w.line);
	return e;
}

static void logf_(gf_kube_log_fn log, void *ud, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void logf_(gf_kube_log_fn log, void *ud, const char *fmt, ...)
{
	if (!log)
		return;
	char line[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	log(ud, line);
}

/* LIST all pages; fills rv.  GF_OK or an error with err set. */
/* max_items 0: no budget; else the items delivered plus one per empty page
 * may not pass it (a server that pages forever ends with GF_TOOBIG). */
static gf_err list_all(gf_kube_client *k, const char *path, gf_kube_event_fn fn, void *ud,
		       char *rv, size_t rvlen, size_t max_items, char *err, size_t errlen)
{
	char cont[4096] = "";
	size_t spent = 0;
	for (;;) {
		char p[8192];
		snprintf(p, sizeof(p), "%s%slimit=500%s%s", path, strchr(path, '?') ? "&" : "?",
			 cont[0] ? "&continue=" : "", cont);
		long st;
		cJSON *doc;
		gf_err e = gf_kube_json(k, "GET", p, NULL, NULL, &st, &doc, err, errlen);
		if (e)
			return e;
		if (!doc) {
			if (st == 410 && cont[0]) {
				/* The continue token expired: start over (items already
				 * delivered are delivered again; the consumer's sync
				 * generation is the same, so nothing is lost). */
				cont[0] = '\0';
				continue;
			}
			return GF_UNAVAILABLE;
		}
		const cJSON *md = cJSON_GetObjectItemCaseSensitive(doc, "metadata");
		const char *r = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(md, "resourceVersion"));
		const char *c = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(md, "continue"));
		if (r && strlen(r) < rvlen)
			snprintf(rv, rvlen, "%s", r);
		if (c && strlen(c) >= sizeof(cont)) {
			cJSON_Delete(doc);
			snprintf(err, errlen, "list %s: a continue token over %zu bytes", path, sizeof(cont));
			return GF_TOOBIG; /* never end a list early: the consumer would drop objects */
		}
		snprintf(cont, sizeof(cont), "%s", c ? c : "");
		const cJSON *items = cJSON_GetObjectItemCaseSensitive(doc, "items"), *it;
		size_t n = (size_t)cJSON_GetArraySize(items);
		spent += n ? n : 1;
		if (max_items && spent > max_items) {
			cJSON_Delete(doc);
			snprintf(err, errlen, "list %.300s: more than %zu items (empty pages count one): stopped", path,
				 max_items);
			return GF_TOOBIG;
		}
		cJSON_ArrayForEach(it, items) fn(ud, "SYNC", it);
		cJSON_Delete(doc);
		if (!cont[0])
			break;
	}
	fn(ud, "SYNCED", NULL);
	return GF_OK;
}

gf_err gf_kube_list(gf_kube_client *k, const char *path, gf_kube_event_fn fn, void *ud, char *err, size_t errlen)
{
	char rv[64] = "";
	return list_all(k, path, fn, ud, rv, sizeof(rv), 0, err, errlen);
}

gf_err gf_kube_list_max(gf_kube_client *k, const char *path, size_t max_items, gf_kube_event_fn fn, void *ud,
			char *err, size_t errlen)
{
	char rv[64] = "";
	return list_all(k, path, fn, ud, rv, sizeof(rv), max_items, err, errlen);
}

void gf_kube_reflect(gf_kube_client *k, const char *path, gf_kube_event_fn fn, void *ud,
		     gf_kube_log_fn log, volatile int *stop)
{
	char rv[64] = "", err[512];
	long backoff = 0;
	bool need_list = true;
	while (!gf_kube_stopped(stop)) {
		if (backoff) {
			gf_kube_sleep_ms(backoff, stop);
			if (gf_kube_stopped(stop))
				break;
		}
		if (need_list) {
			rv[0] = '\0';
			if (list_all(k, path, fn, ud, rv, sizeof(rv), 0, err, sizeof(err))) {
				logf_(log, ud, "list %s failed: %s; retrying", path, err);
				backoff = backoff ? (backoff * 2 > 5000 ? 5000 : backoff * 2) : 200;
				continue;
			}
			need_list = false;
		}
		gf_err e = gf_kube_watch(k, path, rv, sizeof(rv), 240, fn, ud, stop, err, sizeof(err));
		if (e == GF_OK) {
			backoff = 0;
		} else if (e == GF_STATE) {
			logf_(log, ud, "%s; relisting %s", err, path);
			need_list = true;
			backoff = 0;
		} else {
			logf_(log, ud, "%s; resuming from resourceVersion %s", err, rv);
			backoff = backoff ? (backoff * 2 > 5000 ? 5000 : backoff * 2) : 200;
		}
	}
}
