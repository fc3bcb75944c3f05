/*
 * metricsapi/authcfg.c - the front-proxy trust from ConfigMap
 * kube-system/extension-apiserver-authentication, and a self-signed serving
 * certificate (GnuTLS).  See authcfg.h.  Both run once at start-up.
 */
#include "metricsapi/authcfg.h"

#include <cjson/cJSON.h>
#include <gnutls/gnutls.h>
#include <gnutls/crypto.h>
#include <gnutls/x509.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/obuf.h"

void gf_ma_authcfg_release(struct gf_ma_authcfg *a)
{
	free(a->client_ca_pem);
	for (size_t i = 0; i < a->nallowed; i++)
		free(a->allowed_names[i]);
	free(a->allowed_names);
	memset(a, 0, sizeof(*a));
}

gf_err gf_ma_authcfg_decode(const char *json, size_t len, struct gf_ma_authcfg *out, char *err,
			    size_t errlen)
{
	memset(out, 0, sizeof(*out));
	cJSON *doc = cJSON_ParseWithLength(json, len);
	if (!doc) {
		snprintf(err, errlen, "extension-apiserver-authentication: not JSON");
		return GF_PARSE;
	}
	gf_err e = GF_OK;
	const cJSON *data = cJSON_GetObjectItemCaseSensitive(doc, "data");
	const cJSON *ca = cJSON_GetObjectItemCaseSensitive(data, "requestheader-client-ca-file");
	const cJSON *names = cJSON_GetObjectItemCaseSensitive(data, "requestheader-allowed-names");
	cJSON *arr = NULL;
	if (!cJSON_IsString(ca) || !ca->valuestring[0]) {
		snprintf(err, errlen, "extension-apiserver-authentication: no data.requestheader-client-ca-file "
				      "(is the aggregation layer configured?)");
		e = GF_NOENT;
		goto out;
	}
	if (!(out->client_ca_pem = strdup(ca->valuestring))) {
		e = GF_NOMEM;
		goto out;
	}
	if (names && !cJSON_IsNull(names)) {
		if (!cJSON_IsString(names) || !(arr = cJSON_Parse(names->valuestring)) ||
		    !cJSON_IsArray(arr)) {
			snprintf(err, errlen, "extension-apiserver-authentication: "
					      "data.requestheader-allowed-names: expected a JSON array of strings");
			e = GF_PARSE;
			goto out;
		}
		size_t n = (size_t)cJSON_GetArraySize(arr);
		out->allowed_names = calloc(n ? n : 1, sizeof(char *));
		if (!out->allowed_names) {
			e = GF_NOMEM;
			goto out;
		}
		const cJSON *it;
		cJSON_ArrayForEach(it, arr)
		{
			if (!cJSON_IsString(it)) {
				snprintf(err, errlen, "extension-apiserver-authentication: "
						      "data.requestheader-allowed-names[%zu]: expected a string",
					 out->nallowed);
				e = GF_PARSE;
				goto out;
			}
			if (!(out->allowed_names[out->nallowed] = strdup(it->valuestring))) {
				e = GF_NOMEM;
				goto out;
			}
			out->nallowed++;
		}
	}
out:
	cJSON_Delete(arr);
	cJSON_Delete(doc);
	if (e)
		gf_ma_authcfg_release(out);
	return e;
}

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
	struct gf_obuf *b = ud;
	return gf_obuf_append(b, p, sz * n) ? 0 : sz * n;
}

gf_err gf_ma_authcfg_fetch(const struct gf_kube_conn *c, struct gf_ma_authcfg *out, char *err,
			   size_t errlen)
{
	memset(out, 0, sizeof(*out));
	CURL *h = curl_easy_init();
	if (!h)
		return GF_NOMEM;
	struct curl_slist *hdr = NULL;
	struct gf_obuf url, body;
	gf_obuf_init(&url, 4096);
	gf_obuf_init(&body, 4u << 20);
	gf_err e = gf_kube_conn_curl(c, h, &hdr);
	if (e)
		goto out;
	gf_obuf_printf(&url, "%s/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication",
		       c->server);
	if ((e = gf_obuf_error(&url)))
		goto out;
	curl_easy_setopt(h, CURLOPT_URL, url.data);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &body);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 10L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	CURLcode cc = curl_easy_perform(h);
	long code = 0;
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	if (cc != CURLE_OK) {
		snprintf(err, errlen, "reading kube-system/extension-apiserver-authentication: %s",
			 curl_easy_strerror(cc));
		e = GF_UNAVAILABLE;
	} else if (code != 200) {
		snprintf(err, errlen, "reading kube-system/extension-apiserver-authentication: HTTP %ld: %.200s",
			 code, body.data ? body.data : "");
		e = GF_UNAVAILABLE;
	} else {
		e = gf_ma_authcfg_decode(body.data ? body.data : "", body.len, out, err, errlen);
	}
out:
	curl_slist_free_all(hdr);
	gf_obuf_release(&url);
	gf_obuf_release(&body);
	curl_easy_cleanup(h);
	return e;
}

static char *pem_of(gnutls_datum_t *d)
{
	char *s = malloc(d->size + 1);
	if (s) {
		memcpy(s, d->data, d->size);
		s[d->size] = '\0';
	}
	gnutls_free(d->data);
	d->data = NULL;
	return s;
}

gf_err gf_ma_selfsigned(const char *const *dns, size_t ndns, char **cert_pem, char **key_pem,
			char *err, size_t errlen)
{
	*cert_pem = *key_pem = NULL;
	if (!ndns || !dns[0] || !dns[0][0])
		return GF_INVAL;
	gnutls_x509_privkey_t key = NULL;
	gnutls_x509_crt_t crt = NULL;
	gnutls_datum_t kd = { NULL, 0 }, cd = { NULL, 0 };
	const char *where = "init";
	int r;
	gf_err e = GF_UNAVAILABLE;
#define TRY(what, call)                                                                       \
	do {                                                                                  \
		where = what;                                                                 \
		if ((r = (call)) < 0)                                                         \
			goto fail;                                                            \
	} while (0)
	TRY("privkey_init", gnutls_x509_privkey_init(&key));
	TRY("privkey_generate",
	    gnutls_x509_privkey_generate(key, GNUTLS_PK_ECDSA,
					 GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0));
	TRY("crt_init", gnutls_x509_crt_init(&crt));
	TRY("set_key", gnutls_x509_crt_set_key(crt, key));
	TRY("set_version", gnutls_x509_crt_set_version(crt, 3));
	unsigned char serial[16];
	TRY("serial", gnutls_rnd(GNUTLS_RND_NONCE, serial, sizeof(serial)));
	serial[0] &= 0x7f;
	TRY("set_serial", gnutls_x509_crt_set_serial(crt, serial, sizeof(serial)));
	time_t now = time(NULL);
	TRY("activation", gnutls_x509_crt_set_activation_time(crt, now - 3600));
	TRY("expiration", gnutls_x509_crt_set_expiration_time(crt, now + 365L * 86400));
	TRY("cn", gnutls_x509_crt_set_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, dns[0],
						  (unsigned)strlen(dns[0])));
	for (size_t i = 0; i < ndns; i++)
		TRY("san", gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_DNSNAME, dns[i],
								 (unsigned)strlen(dns[i]),
								 GNUTLS_FSAN_APPEND));
	TRY("basic_constraints", gnutls_x509_crt_set_basic_constraints(crt, 0, -1));
	TRY("key_usage", gnutls_x509_crt_set_key_usage(crt, GNUTLS_KEY_DIGITAL_SIGNATURE));
	TRY("purpose", gnutls_x509_crt_set_key_purpose_oid(crt, GNUTLS_KP_TLS_WWW_SERVER, 0));
	TRY("sign", gnutls_x509_crt_sign2(crt, crt, key, GNUTLS_DIG_SHA256, 0));
	TRY("export_key", gnutls_x509_privkey_export2(key, GNUTLS_X509_FMT_PEM, &kd));
	TRY("export_crt", gnutls_x509_crt_export2(crt, GNUTLS_X509_FMT_PEM, &cd));
#undef TRY
	*key_pem = pem_of(&kd);
	*cert_pem = pem_of(&cd);
	e = (*key_pem && *cert_pem) ? GF_OK : GF_NOMEM;
	if (e) {
		free(*key_pem);
		free(*cert_pem);
		*key_pem = *cert_pem = NULL;
	}
	goto out;
fail:
	snprintf(err, errlen, "self-signed certificate: %s: %s", where, gnutls_strerror(r));
out:
	gnutls_free(kd.data);
	gnutls_free(cd.data);
	if (crt)
		gnutls_x509_crt_deinit(crt);
	if (key)
		gnutls_x509_privkey_deinit(key);
	return e;
}
