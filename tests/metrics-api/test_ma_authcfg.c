/*
 * tests/metrics-api/test_ma_authcfg.c - the front-proxy trust read from
 * ConfigMap extension-apiserver-authentication (decoder: good, missing CA,
 * bad allowed-names) and the self-signed serving certificate (gfhttp serves
 * with it; its DNS names are what a client verifying the name sees).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <curl/curl.h>

#include "http/server.h"
#include "metricsapi/authcfg.h"

static void test_decode(void **st)
{
	(void)st;
	struct gf_ma_authcfg a;
	char err[256];
	const char *good = "{\"kind\":\"ConfigMap\",\"data\":{\"client-ca-file\":\"X\","
			   "\"requestheader-client-ca-file\":\"-----BEGIN CERTIFICATE-----\\nAA\\n\","
			   "\"requestheader-allowed-names\":\"[\\\"front-proxy-client\\\",\\\"other\\\"]\","
			   "\"requestheader-username-headers\":\"[\\\"X-Remote-User\\\"]\"}}";
	assert_int_equal(gf_ma_authcfg_decode(good, strlen(good), &a, err, sizeof(err)), GF_OK);
	assert_string_equal(a.client_ca_pem, "-----BEGIN CERTIFICATE-----\nAA\n");
	assert_int_equal(a.nallowed, 2);
	assert_string_equal(a.allowed_names[0], "front-proxy-client");
	assert_string_equal(a.allowed_names[1], "other");
	gf_ma_authcfg_release(&a);
	const char *empty = "{\"data\":{\"requestheader-client-ca-file\":\"C\",\"requestheader-allowed-names\":\"[]\"}}";
	assert_int_equal(gf_ma_authcfg_decode(empty, strlen(empty), &a, err, sizeof(err)), GF_OK);
	assert_int_equal(a.nallowed, 0);
	gf_ma_authcfg_release(&a);
	const char *noca = "{\"data\":{\"client-ca-file\":\"X\"}}";
	assert_int_equal(gf_ma_authcfg_decode(noca, strlen(noca), &a, err, sizeof(err)), GF_NOENT);
	assert_non_null(strstr(err, "aggregation layer"));
	const char *badnames = "{\"data\":{\"requestheader-client-ca-file\":\"C\",\"requestheader-allowed-names\":\"[1]\"}}";
	assert_int_equal(gf_ma_authcfg_decode(badnames, strlen(badnames), &a, err, sizeof(err)), GF_PARSE);
	assert_non_null(strstr(err, "requestheader-allowed-names[0]"));
	assert_null(a.client_ca_pem);
	assert_int_equal(gf_ma_authcfg_decode("{", 1, &a, err, sizeof(err)), GF_PARSE);
}

static void h_ok(void *ud, const struct gf_http_request *req, struct gf_http_response *resp)
{
	(void)ud;
	(void)req;
	gf_obuf_puts(&resp->body, "ok");
}

static size_t sink(char *p, size_t sz, size_t n, void *ud)
{
	(void)p;
	(void)ud;
	return sz * n;
}

static void test_selfsigned(void **st)
{
	(void)st;
	const char *dns[] = { "gpufleet-metrics-api.gpu-system.svc", "localhost" };
	char *cert, *key, err[256];
	assert_int_equal(gf_ma_selfsigned(dns, 2, &cert, &key, err, sizeof(err)), GF_OK);
	assert_non_null(strstr(cert, "-----BEGIN CERTIFICATE-----"));
	assert_non_null(strstr(key, "PRIVATE KEY-----"));
	const struct gf_http_route routes[] = { { "GET", "/x", h_ok, NULL } };
	struct gf_http_config cfg = { .bind_addr = "127.0.0.1", .routes = routes, .nroutes = 1,
				      .tls_cert_pem = cert, .tls_key_pem = key };
	gf_http_server *s;
	assert_int_equal(gf_http_server_create(&cfg, &s), GF_OK);
	/* trust the certificate itself: the name localhost verifies */
	char path[] = "/tmp/gf-ma-selfsigned-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	fputs(cert, f);
	fclose(f);
	char url[128];
	snprintf(url, sizeof(url), "https://localhost:%u/x", gf_http_server_port(s));
	CURL *h = curl_easy_init();
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_CAINFO, path);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink);
	CURLcode c = curl_easy_perform(h);
	long code = 0;
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_cleanup(h);
	/* a name not in the certificate fails verification */
	snprintf(url, sizeof(url), "https://127.0.0.1:%u/x", gf_http_server_port(s));
	h = curl_easy_init();
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_CAINFO, path);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink);
	CURLcode c2 = curl_easy_perform(h);
	curl_easy_cleanup(h);
	unlink(path);
	gf_http_server_destroy(s);
	free(cert);
	free(key);
	assert_int_equal(c, CURLE_OK);
	assert_int_equal(code, 200);
	assert_int_not_equal(c2, CURLE_OK);
	assert_int_equal(gf_ma_selfsigned(dns, 0, &cert, &key, err, sizeof(err)), GF_INVAL);
}

int main(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode),
		cmocka_unit_test(test_selfsigned),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	curl_global_cleanup();
	return rc;
}
