/*
 * tests/metrics-api/test_ma_http_tls.c - gfhttp's additions for the
 * external metrics API: HTTPS with a serving certificate, client
 * certificates verified against a CA (the front proxy's), prefix routes,
 * decoded query arguments and a thread pool.  Client: libcurl with the
 * test PKI of tests/metrics-api/data (see its README).
 *
 * Security regressions (issue 10; ctest labels metrics-api;security): a
 * server-only certificate of the trusted CA is not a client certificate
 * (extended key usage), a NUL byte in a query argument gets 400 (the
 * labelSelector=%00 that read as "everything"), and trickled TLS
 * handshakes on every connection slot are cut at the header deadline while
 * a client with a certificate is served.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <curl/curl.h>

#include <pthread.h>

#include "../rawclient.h"
#include "http/server.h"

static char *slurp(const char *name)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", GF_MA_DATA, name);
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	static char buf[4][8192];
	static int k;
	char *b = buf[k++ % 4];
	size_t n = fread(b, 1, sizeof(buf[0]) - 1, f);
	b[n] = '\0';
	fclose(f);
	return b;
}

static void h_who(void *ud, const struct gf_http_request *req, struct gf_http_response *resp)
{
	(void)ud;
	char cn[128];
	bool ok = gf_http_request_peer_cn(req, cn, sizeof(cn));
	const char *sel = gf_http_request_query(req, "labelSelector");
	gf_obuf_printf(&resp->body, "path=%s verified=%d cn=%s sel=%s", req->path, ok, cn,
		       sel ? sel : "(none)");
}

static void h_exact(void *ud, const struct gf_http_request *req, struct gf_http_response *resp)
{
	(void)ud;
	gf_obuf_printf(&resp->body, "exact %s", req->path);
}

struct reply {
	long status;
	char body[2048];
	size_t len;
};

static size_t on_data(char *p, size_t sz, size_t n, void *ud)
{
	struct reply *r = ud;
	size_t k = sz * n, room = sizeof(r->body) - 1 - r->len;
	memcpy(r->body + r->len, p, k < room ? k : room);
	r->len += k < room ? k : room;
	r->body[r->len] = '\0';
	return k;
}

/* GET with an optional client cert (base name in data/); returns curl's code. */
static CURLcode get(uint16_t port, const char *scheme, const char *pathq, const char *client,
		    struct reply *r)
{
	char url[512], cert[512], key[512], ca[512];
	memset(r, 0, sizeof(*r));
	snprintf(url, sizeof(url), "%s://localhost:%u%s", scheme, port, pathq);
	CURL *h = curl_easy_init();
	curl_easy_setopt(h, CURLOPT_URL, url);
	snprintf(ca, sizeof(ca), "%s/ca.crt", GF_MA_DATA);
	curl_easy_setopt(h, CURLOPT_CAINFO, ca);
	if (client) {
		snprintf(cert, sizeof(cert), "%s/%s.crt", GF_MA_DATA, client);
		snprintf(key, sizeof(key), "%s/%s.key", GF_MA_DATA, client);
		curl_easy_setopt(h, CURLOPT_SSLCERT, cert);
		curl_easy_setopt(h, CURLOPT_SSLKEY, key);
	}
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 10L);
	CURLcode c = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
	curl_easy_cleanup(h);
	return c;
}

static const struct gf_http_route routes[] = {
	{ "GET", "/apis/x/v1", h_exact, NULL },
	{ "GET", "/apis/x/v1/*", h_who, NULL },
};

static void test_tls_client_certs(void **st)
{
	(void)st;
	struct gf_http_config cfg = {
		.bind_addr = "127.0.0.1",
		.routes = routes,
		.nroutes = 2,
		.threads = 4,
		.tls_cert_pem = slurp("server.crt"),
		.tls_key_pem = slurp("server.key"),
		.tls_client_ca_pem = slurp("ca.crt"),
	};
	gf_http_server *s;
	assert_int_equal(gf_http_server_create(&cfg, &s), GF_OK);
	uint16_t port = gf_http_server_port(s);
	struct reply r;

	/* the front proxy's certificate: verified, CN read; the query decoded ('+' and %XX) */
	assert_int_equal(get(port, "https", "/apis/x/v1/namespaces/ml/m?labelSelector=app%3Dllm%2Cgpu+in+%280%2C1%29",
			     "front-proxy-client", &r),
			 CURLE_OK);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, "path=/apis/x/v1/namespaces/ml/m verified=1 cn=front-proxy-client "
				    "sel=app=llm,gpu in (0,1)");
	/* another CN from the same CA: verified, the handler decides */
	assert_int_equal(get(port, "https", "/apis/x/v1/a", "other-client", &r), CURLE_OK);
	assert_string_equal(r.body, "path=/apis/x/v1/a verified=1 cn=someone-else sel=(none)");
	/* no client certificate: served, not verified */
	assert_int_equal(get(port, "https", "/apis/x/v1/a", NULL, &r), CURLE_OK);
	assert_string_equal(r.body, "path=/apis/x/v1/a verified=0 cn= sel=(none)");
	/* a certificate from an unknown CA with the right CN: not verified */
	CURLcode c = get(port, "https", "/apis/x/v1/a", "rogue-client", &r);
	if (c == CURLE_OK)
		assert_string_equal(r.body, "path=/apis/x/v1/a verified=0 cn= sel=(none)");
	/* exact route before the prefix route; a path outside both is 404 */
	assert_int_equal(get(port, "https", "/apis/x/v1", NULL, &r), CURLE_OK);
	assert_string_equal(r.body, "exact /apis/x/v1");
	assert_int_equal(get(port, "https", "/apis/x/v2", NULL, &r), CURLE_OK);
	assert_int_equal(r.status, 404);
	/* plain HTTP to a TLS port fails; the server keeps serving */
	assert_int_not_equal(get(port, "http", "/apis/x/v1", NULL, &r), CURLE_OK);
	assert_int_equal(get(port, "https", "/apis/x/v1", NULL, &r), CURLE_OK);
	assert_int_equal(r.status, 200);
	gf_http_server_destroy(s);
}

static void test_plain_and_config_errors(void **st)
{
	(void)st;
	struct gf_http_config cfg = { .bind_addr = "127.0.0.1", .routes = routes, .nroutes = 2 };
	gf_http_server *s;
	assert_int_equal(gf_http_server_create(&cfg, &s), GF_OK);
	struct reply r;
	assert_int_equal(get(gf_http_server_port(s), "http", "/apis/x/v1/q?labelSelector=a+b%21", NULL, &r),
			 CURLE_OK);
	assert_string_equal(r.body, "path=/apis/x/v1/q verified=0 cn= sel=a b!");
	gf_http_server_destroy(s);
	/* a certificate without its key, or a client CA without a certificate */
	cfg.tls_cert_pem = slurp("server.crt");
	assert_int_equal(gf_http_server_create(&cfg, &s), GF_INVAL);
	cfg.tls_cert_pem = NULL;
	cfg.tls_client_ca_pem = slurp("ca.crt");
	assert_int_equal(gf_http_server_create(&cfg, &s), GF_INVAL);
	/* garbage PEM: the daemon does not start */
	cfg.tls_cert_pem = "not a certificate";
	cfg.tls_key_pem = "not a key";
	cfg.tls_client_ca_pem = NULL;
	assert_int_equal(gf_http_server_create(&cfg, &s), GF_UNAVAILABLE);
}

static void test_client_cert_key_usage(void **st)
{
	(void)st;
	struct gf_http_config cfg = {
		.bind_addr = "127.0.0.1",
		.routes = routes,
		.nroutes = 2,
		.tls_cert_pem = slurp("server.crt"),
		.tls_key_pem = slurp("server.key"),
		.tls_client_ca_pem = slurp("ca.crt"),
	};
	gf_http_server *s;
	assert_int_equal(gf_http_server_create(&cfg, &s), GF_OK);
	uint16_t port = gf_http_server_port(s);
	struct reply r;
	/* server.crt: signed by the client CA, but its extended key usage is
	 * serverAuth only: not verified as a client. */
	assert_int_equal(get(port, "https", "/apis/x/v1/a", "server", &r), CURLE_OK);
	assert_string_equal(r.body, "path=/apis/x/v1/a verified=0 cn= sel=(none)");
	/* the front proxy's clientAuth certificate still is */
	assert_int_equal(get(port, "https", "/apis/x/v1/a", "front-proxy-client", &r), CURLE_OK);
	assert_string_equal(r.body, "path=/apis/x/v1/a verified=1 cn=front-proxy-client sel=(none)");
	gf_http_server_destroy(s);

	/* The case: a serverAuth-only certificate with the front
	 * proxy's own CN; and one without an extended key usage (any purpose:
	 * accepted, as Kubernetes' x509 check does). */
	cfg.tls_client_ca_pem = slurp("eku-ca.crt");
	assert_int_equal(gf_http_server_create(&cfg, &s), GF_OK);
	port = gf_http_server_port(s);
	assert_int_equal(get(port, "https", "/apis/x/v1/a", "eku-server-only", &r), CURLE_OK);
	assert_string_equal(r.body, "path=/apis/x/v1/a verified=0 cn= sel=(none)");
	assert_int_equal(get(port, "https", "/apis/x/v1/a", "eku-none", &r), CURLE_OK);
	assert_string_equal(r.body, "path=/apis/x/v1/a verified=1 cn=front-proxy-client sel=(none)");
	gf_http_server_destroy(s);
}

static void test_query_nul(void **st)
{
	(void)st;
	struct gf_http_config cfg = { .bind_addr = "127.0.0.1", .routes = routes, .nroutes = 2 };
	gf_http_server *s;
	assert_int_equal(gf_http_server_create(&cfg, &s), GF_OK);
	uint16_t port = gf_http_server_port(s);
	struct reply r;
	assert_int_equal(get(port, "http", "/apis/x/v1/q?labelSelector=%00", NULL, &r), CURLE_OK);
	assert_int_equal(r.status, 400);
	assert_string_equal(r.body, "GET /apis/x/v1/q: query argument 'labelSelector' holds a NUL byte (%00)\n");
	/* a NUL after a valid part would have cut the selector to "app" */
	assert_int_equal(get(port, "http", "/apis/x/v1/q?labelSelector=app%00%2Cx%3Dy", NULL, &r), CURLE_OK);
	assert_int_equal(r.status, 400);
	assert_int_equal(get(port, "http", "/apis/x/v1/q?a%00b=1", NULL, &r), CURLE_OK);
	assert_int_equal(r.status, 400);
	/* an empty selector is still everything, as in Kubernetes */
	assert_int_equal(get(port, "http", "/apis/x/v1/q?labelSelector=", NULL, &r), CURLE_OK);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, "path=/apis/x/v1/q verified=0 cn= sel=");
	gf_http_server_destroy(s);
}

#define NTRICKLE 4

struct trickle {
	int fd[NTRICKLE];
	double opened, closed_at[NTRICKLE];
};

/* A TLS record header announcing a 512-byte ClientHello, then one byte
 * every 100 ms: the handshake never completes, and each byte would reset an
 * idle timeout. */
static void *trickle_main(void *arg)
{
	struct trickle *t = arg;
	static const unsigned char rec[] = { 0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03 };
	unsigned sent[NTRICKLE] = { 0 };
	for (int alive = NTRICKLE; alive && rc_now() - t->opened < 6;) {
		alive = 0;
		for (int i = 0; i < NTRICKLE; i++) {
			if (t->closed_at[i])
				continue;
			unsigned char b = sent[i] < sizeof(rec) ? rec[sent[i]] : 0x41;
			if (rc_closed(t->fd[i], 0) || !rc_send(t->fd[i], &b, 1))
				t->closed_at[i] = rc_now();
			else
				sent[i]++, alive++;
		}
		rc_sleep_ms(100);
	}
	return NULL;
}

static void test_tls_handshake_trickle(void **st)
{
	(void)st;
	struct gf_http_config cfg = {
		.bind_addr = "127.0.0.1",
		.routes = routes,
		.nroutes = 2,
		/* the trickles and the request fit among the pending (2 slots reserved) */
		.max_conns = NTRICKLE + 4,
		.reserved_conns = 2,
		.max_conns_per_ip = NTRICKLE,
		.header_timeout_s = 1,
		.threads = 2,
		.tls_cert_pem = slurp("server.crt"),
		.tls_key_pem = slurp("server.key"),
		.tls_client_ca_pem = slurp("ca.crt"),
	};
	gf_http_server *s;
	assert_int_equal(gf_http_server_create(&cfg, &s), GF_OK);
	uint16_t port = gf_http_server_port(s);
	struct trickle t = { .opened = rc_now() };
	for (int i = 0; i < NTRICKLE; i++) {
		t.fd[i] = rc_dial("127.0.0.2", port);
		assert_true(t.fd[i] >= 0);
	}
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, trickle_main, &t), 0);
	rc_sleep_ms(300);
	struct reply r;
	double t0 = rc_now();
	assert_int_equal(get(port, "https", "/apis/x/v1", "front-proxy-client", &r), CURLE_OK);
	double secs = rc_now() - t0;
	printf("request during %d trickled TLS handshakes: status %ld after %.2f s\n", NTRICKLE,
	       r.status, secs);
	assert_int_equal(r.status, 200);
	assert_true(secs < 2.5);
	pthread_join(th, NULL);
	for (int i = 0; i < NTRICKLE; i++) {
		double held = t.closed_at[i] - t.opened;
		printf("trickled handshake %d cut after %.2f s\n", i, held);
		assert_true(t.closed_at[i] > 0 && held >= 0.9 && held < 2.5);
		close(t.fd[i]);
	}
	gf_http_server_destroy(s);
}

int main(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tls_client_certs),
		cmocka_unit_test(test_plain_and_config_errors),
		cmocka_unit_test(test_client_cert_key_usage),
		cmocka_unit_test(test_query_nul),
		cmocka_unit_test(test_tls_handshake_trickle),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	curl_global_cleanup();
	return rc;
}
