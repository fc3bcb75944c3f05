/*
 * k8s/conn.c - how to reach the API server: kubeconfig and service account.
 *
 * Shared by the scheduler, the node agent and the external metrics API (one
 * Kubernetes client for the whole binary).  Moved here from agent/kube.c.
 *
 * Kubeconfig reading is line-based, not a YAML parser: top-level keys at
 * column 0 open a section (clusters:, contexts:, users:) or give a scalar
 * (current-context:); a line starting with "- " opens a list item, and the
 * known "key: value" pairs below it are stored flat on that item.  Files
 * written by kubectl, kind, kubeadm and the test control plane have this
 * shape.  Lines are capped at 64 KiB (certificates in *-data fit).
 *
 * gf_kube_conn_curl() puts the connection's TLS and auth settings on a
 * libcurl easy handle: every request of every component goes through it.
 */
#include "k8s/conn.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KC_MAX_ITEMS 16
#define KC_MAX_FILE (1u << 20)

static char *dup_n(const char *s, size_t n)
{
	char *p = malloc(n + 1);
	if (p) {
		memcpy(p, s, n);
		p[n] = '\0';
	}
	return p;
}

static gf_err read_file(const char *path, size_t cap, char **out, size_t *len, char *err,
			size_t errlen)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(err, errlen, "%s: cannot open", path);
		return GF_IO;
	}
	char *buf = malloc(cap + 1);
	if (!buf) {
		fclose(f);
		return GF_NOMEM;
	}
	size_t n = fread(buf, 1, cap + 1, f);
	fclose(f);
	if (n > cap) {
		free(buf);
		snprintf(err, errlen, "%s: larger than %zu bytes", path, cap);
		return GF_TOOBIG;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return GF_OK;
}

/* Standard base64 (whitespace ignored).  Returns decoded length or -1. */
static long b64_decode(const char *in, size_t n, unsigned char *out)
{
	unsigned acc = 0;
	int bits = 0;
	long k = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)in[i];
		int v;
		if (c >= 'A' && c <= 'Z')
			v = c - 'A';
		else if (c >= 'a' && c <= 'z')
			v = c - 'a' + 26;
		else if (c >= '0' && c <= '9')
			v = c - '0' + 52;
		else if (c == '+')
			v = 62;
		else if (c == '/')
			v = 63;
		else if (c == '=' || isspace(c))
			continue;
		else
			return -1;
		acc = (acc << 6) | (unsigned)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[k++] = (unsigned char)(acc >> bits);
			acc &= (1u << bits) - 1;
		}
	}
	return k;
}

static gf_err decode_field(const char *b64, char **out, size_t *len)
{
	size_t n = strlen(b64);
	unsigned char *p = malloc(n * 3 / 4 + 4);
	if (!p)
		return GF_NOMEM;
	long k = b64_decode(b64, n, p);
	if (k < 0) {
		free(p);
		return GF_PARSE;
	}
	p[k] = '\0';
	*out = (char *)p;
	*len = (size_t)k;
	return GF_OK;
}

/* ---- kubeconfig --------------------------------------------------------- */

enum { K_NAME, K_CLUSTER, K_USER, K_SERVER, K_CA, K_CA_DATA, K_CERT, K_CERT_DATA, K_KEY,
       K_KEY_DATA, K_TOKEN, K_INSECURE, K_COUNT };
static const char *const kc_keys[K_COUNT] = {
	"name", "cluster", "user", "server", "certificate-authority", "certificate-authority-data",
	"client-certificate", "client-certificate-data", "client-key", "client-key-data", "token",
	"insecure-skip-tls-verify",
};

struct kc_item {
	char *v[K_COUNT];
};

enum { S_NONE, S_CLUSTERS, S_CONTEXTS, S_USERS };

struct kc {
	struct kc_item items[3][KC_MAX_ITEMS];
	size_t n[3];
	char *current;
};

static void kc_free(struct kc *k)
{
	for (int s = 0; s < 3; s++)
		for (size_t i = 0; i < k->n[s]; i++)
			for (int f = 0; f < K_COUNT; f++)
				free(k->items[s][i].v[f]);
	free(k->current);
}

/* Trim and unquote a scalar value in place. */
static char *scalar(char *v)
{
	while (*v == ' ' || *v == '\t')
		v++;
	size_t n = strlen(v);
	while (n && (v[n - 1] == ' ' || v[n - 1] == '\t' || v[n - 1] == '\r'))
		v[--n] = '\0';
	if (n >= 2 && (v[0] == '"' || v[0] == '\'') && v[n - 1] == v[0]) {
		v[n - 1] = '\0';
		v++;
	}
	return v;
}

static gf_err kc_parse(char *text, const char *path, struct kc *k, char *err, size_t errlen)
{
	memset(k, 0, sizeof(*k));
	int sec = S_NONE;
	struct kc_item *cur = NULL;
	size_t lineno = 0;
	for (char *line = text, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		size_t indent = strspn(line, " ");
		char *s = line + indent;
		if (!*s || *s == '#' || *s == '\r')
			continue;
		if (indent == 0 && *s != '-') {
			cur = NULL;
			char *c = strchr(s, ':');
			if (!c) {
				snprintf(err, errlen, "%s:%zu: expected 'key:' at top level", path, lineno);
				return GF_PARSE;
			}
			*c = '\0';
			char *v = scalar(c + 1);
			sec = !strcmp(s, "clusters") ? S_CLUSTERS
			      : !strcmp(s, "contexts") ? S_CONTEXTS
			      : !strcmp(s, "users") ? S_USERS : S_NONE;
			if (!strcmp(s, "current-context") && *v) {
				free(k->current);
				if (!(k->current = dup_n(v, strlen(v))))
					return GF_NOMEM;
			}
			continue;
		}
		if (sec == S_NONE)
			continue;
		if (s[0] == '-' && (s[1] == ' ' || !s[1])) {
			int si = sec - 1;
			cur = k->n[si] < KC_MAX_ITEMS ? &k->items[si][k->n[si]++] : NULL;
			s += 1;
			s += strspn(s, " ");
			if (!*s)
				continue;
		}
		if (!cur)
			continue;
		char *c = strchr(s, ':');
		if (!c)
			continue;
		*c = '\0';
		char *v = scalar(c + 1);
		if (!*v)
			continue;
		for (int f = 0; f < K_COUNT; f++)
			if (!strcmp(s, kc_keys[f]) && !cur->v[f]) {
				if (!(cur->v[f] = dup_n(v, strlen(v))))
					return GF_NOMEM;
				break;
			}
	}
	return GF_OK;
}

static const struct kc_item *kc_find(const struct kc *k, int sec, const char *name)
{
	int si = sec - 1;
	if (!k->n[si])
		return NULL;
	for (size_t i = 0; name && i < k->n[si]; i++)
		if (k->items[si][i].v[K_NAME] && !strcmp(k->items[si][i].v[K_NAME], name))
			return &k->items[si][i];
	return &k->items[si][0];
}

static char *dup_opt(const char *s)
{
	return s ? dup_n(s, strlen(s)) : NULL;
}

gf_err gf_kube_conn_from_kubeconfig(struct gf_kube_conn *c, const char *path, char *err,
				    size_t errlen)
{
	memset(c, 0, sizeof(*c));
	char *text;
	size_t len;
	gf_err e = read_file(path, KC_MAX_FILE, &text, &len, err, errlen);
	if (e)
		return e;
	struct kc k;
	e = kc_parse(text, path, &k, err, errlen);
	free(text);
	if (e)
		goto out;
	const struct kc_item *ctx = kc_find(&k, S_CONTEXTS, k.current);
	const struct kc_item *cl = kc_find(&k, S_CLUSTERS, ctx ? ctx->v[K_CLUSTER] : NULL);
	const struct kc_item *us = kc_find(&k, S_USERS, ctx ? ctx->v[K_USER] : NULL);
	if (!cl || !cl->v[K_SERVER]) {
		snprintf(err, errlen, "%s: no cluster with a server", path);
		e = GF_PARSE;
		goto out;
	}
	e = GF_NOMEM;
	if (!(c->server = dup_opt(cl->v[K_SERVER])))
		goto out;
	size_t sl = strlen(c->server);
	while (sl && c->server[sl - 1] == '/')
		c->server[--sl] = '\0';
	c->insecure = cl->v[K_INSECURE] && !strcmp(cl->v[K_INSECURE], "true");
	if ((cl->v[K_CA] && !(c->ca_file = dup_opt(cl->v[K_CA]))))
		goto out;
	if (cl->v[K_CA_DATA] && decode_field(cl->v[K_CA_DATA], &c->ca_data, &c->ca_len))
		goto bad64;
	if (us) {
		if ((us->v[K_TOKEN] && !(c->token = dup_opt(us->v[K_TOKEN]))) ||
		    (us->v[K_CERT] && !(c->cert_file = dup_opt(us->v[K_CERT]))) ||
		    (us->v[K_KEY] && !(c->key_file = dup_opt(us->v[K_KEY]))))
			goto out;
		if (us->v[K_CERT_DATA] && decode_field(us->v[K_CERT_DATA], &c->cert_data, &c->cert_len))
			goto bad64;
		if (us->v[K_KEY_DATA] && decode_field(us->v[K_KEY_DATA], &c->key_data, &c->key_len))
			goto bad64;
	}
	e = GF_OK;
	goto out;
bad64:
	snprintf(err, errlen, "%s: a *-data field is not valid base64", path);
	e = GF_PARSE;
out:
	kc_free(&k);
	if (e)
		gf_kube_conn_release(c);
	return e;
}

gf_err gf_kube_conn_in_cluster(struct gf_kube_conn *c, char *err, size_t errlen)
{
	memset(c, 0, sizeof(*c));
	const char *host = getenv("KUBERNETES_SERVICE_HOST");
	const char *port = getenv("KUBERNETES_SERVICE_PORT");
	if (!host || !*host || !port || !*port) {
		snprintf(err, errlen, "not in a cluster (KUBERNETES_SERVICE_HOST/PORT unset); "
				      "give --kubeconfig");
		return GF_UNAVAILABLE;
	}
	const char *dir = "/var/run/secrets/kubernetes.io/serviceaccount";
	char path[512], url[512];
	snprintf(url, sizeof(url), strchr(host, ':') ? "https://[%s]:%s" : "https://%s:%s", host, port);
	snprintf(path, sizeof(path), "%s/token", dir);
	size_t len;
	gf_err e = read_file(path, 64 * 1024, &c->token, &len, err, errlen);
	if (e)
		return e;
	while (len && isspace((unsigned char)c->token[len - 1]))
		c->token[--len] = '\0';
	snprintf(path, sizeof(path), "%s/ca.crt", dir);
	c->ca_file = dup_opt(path);
	c->server = dup_opt(url);
	if (!c->ca_file || !c->server) {
		gf_kube_conn_release(c);
		return GF_NOMEM;
	}
	return GF_OK;
}

gf_err gf_kube_conn_open(struct gf_kube_conn *c, const char *path, char *err, size_t errlen)
{
	return path ? gf_kube_conn_from_kubeconfig(c, path, err, errlen) : gf_kube_conn_in_cluster(c, err, errlen);
}

void gf_kube_conn_release(struct gf_kube_conn *c)
{
	free(c->server);
	free(c->token);
	free(c->ca_file);
	free(c->cert_file);
	free(c->key_file);
	free(c->ca_data);
	free(c->cert_data);
	free(c->key_data);
	memset(c, 0, sizeof(*c));
}

gf_err gf_kube_conn_curl(const struct gf_kube_conn *c, CURL *h, struct curl_slist **hdr)
{
	if (c->token) {
		size_t n = strlen(c->token) + sizeof("Authorization: Bearer ");
		char *auth = malloc(n);
		if (!auth)
			return GF_NOMEM;
		snprintf(auth, n, "Authorization: Bearer %s", c->token);
		struct curl_slist *l = curl_slist_append(*hdr, auth);
		free(auth);
		if (!l)
			return GF_NOMEM;
		*hdr = l;
	}
	if (c->insecure) {
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	if (c->ca_file)
		curl_easy_setopt(h, CURLOPT_CAINFO, c->ca_file);
	if (c->ca_data) {
		struct curl_blob b = { c->ca_data, c->ca_len, CURL_BLOB_COPY };
		curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &b);
	}
	if (c->cert_file)
		curl_easy_setopt(h, CURLOPT_SSLCERT, c->cert_file);
	if (c->key_file)
		curl_easy_setopt(h, CURLOPT_SSLKEY, c->key_file);
	if (c->cert_data) {
		struct curl_blob b = { c->cert_data, c->cert_len, CURL_BLOB_COPY };
		curl_easy_setopt(h, CURLOPT_SSLCERT_BLOB, &b);
		curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
	}
	if (c->key_data) {
		struct curl_blob b = { c->key_data, c->key_len, CURL_BLOB_COPY };
		curl_easy_setopt(h, CURLOPT_SSLKEY_BLOB, &b);
		curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
	}
	return GF_OK;
}
