/*
 * tests/agent/test_http_server.c - gfhttp: routing, 404/405, body cap (413),
 * response cap (500), HEAD, headers, port 0, and that the server keeps
 * serving after bad requests.  Client: libcurl.
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

#include "http/server.h"

static void h_hello(void *ud, const struct gf_http_request *req, struct gf_http_response *resp)
{
	int *calls = ud;
	(*calls)++;
	const char *who = gf_http_request_header(req, "X-Who");
	gf_obuf_printf(&resp->body, "hello %s\n", who ? who : "anonymous");
}

static void h_echo(void *ud, const struct gf_http_request *req, struct gf_http_response *resp)
{
	(void)ud;
	resp->status = 201;
	resp->content_type = "application/json";
	gf_obuf_printf(&resp->body, "%s %s %zu:", req->method, req->path, req->body_len);
	gf_obuf_append(&resp->body, req->body, req->body_len);
}

static void h_huge(void *ud, const struct gf_http_request *req, struct gf_http_response *resp)
{
	(void)ud;
	(void)req;
	for (int i = 0; i < 10000; i++)
		gf_obuf_puts(&resp->body, "0123456789abcdef");
}

struct reply {
	long status;
	char body[4096];
	size_t len;
	char ctype[128];
};

static size_t on_data(char *p, size_t sz, size_t n, void *ud)
{
	struct reply *r = ud;
	size_t k = sz * n;
	size_t room = sizeof(r->body) - 1 - r->len;
	memcpy(r->body + r->len, p, k < room ? k : room);
	r->len += k < room ? k : room;
	r->body[r->len] = '\0';
	return k;
}

static struct reply call(uint16_t port, const char *method, const char *path, const char *body,
			 size_t body_len, const char *header)
{
	struct reply r;
	memset(&r, 0, sizeof(r));
	char url[256];
	snprintf(url, sizeof(url), "http://127.0.0.1:%u%s", port, path);
	CURL *h = curl_easy_init();
	struct curl_slist *hdr = header ? curl_slist_append(NULL, header) : NULL;
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	if (!strcmp(method, "HEAD"))
		curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
	if (body) {
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)body_len);
	}
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &r);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 10L);
	assert_int_equal(curl_easy_perform(h), CURLE_OK);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r.status);
	char *ct = NULL;
	curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &ct);
	if (ct)
		snprintf(r.ctype, sizeof(r.ctype), "%s", ct);
	curl_slist_free_all(hdr);
	curl_easy_cleanup(h);
	return r;
}

static int calls;
static const struct gf_http_route routes[] = {
	{ "GET", "/hello", h_hello, &calls },
	{ "POST", "/echo", h_echo, NULL },
	{ "GET", "/huge", h_huge, NULL },
};

static gf_http_server *start(void)
{
	struct gf_http_config cfg = {
		.bind_addr = "127.0.0.1",
		.port = 0,
		.routes = routes,
		.nroutes = 3,
		.max_body = 1024,
		.max_response = 64 * 1024,
	};
	gf_http_server *s;
	assert_int_equal(gf_http_server_create(&cfg, &s), GF_OK);
	assert_true(gf_http_server_port(s) > 0);
	return s;
}

static void test_routes_and_errors(void **state)
{
	(void)state;
	gf_http_server *s = start();
	uint16_t port = gf_http_server_port(s);
	calls = 0;
	struct reply r = call(port, "GET", "/hello", NULL, 0, "X-Who: tester");
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, "hello tester\n");
	assert_string_equal(r.ctype, "text/plain; charset=utf-8");

	r = call(port, "GET", "/nope", NULL, 0, NULL);
	assert_int_equal(r.status, 404);
	assert_string_equal(r.body, "GET /nope: no such path\n");

	r = call(port, "DELETE", "/hello", NULL, 0, NULL);
	assert_int_equal(r.status, 405);
	assert_string_equal(r.body, "DELETE /hello: method not allowed\n");

	r = call(port, "POST", "/echo", "{\"a\":1}", 7, "Content-Type: application/json");
	assert_int_equal(r.status, 201);
	assert_string_equal(r.ctype, "application/json");
	assert_string_equal(r.body, "POST /echo 7:{\"a\":1}");

	char big[4000];
	memset(big, 'x', sizeof(big));
	r = call(port, "POST", "/echo", big, sizeof(big), NULL);
	assert_int_equal(r.status, 413);
	assert_string_equal(r.body, "POST /echo: request body exceeds 1024 bytes\n");

	r = call(port, "GET", "/huge", NULL, 0, NULL);
	assert_int_equal(r.status, 500);
	assert_non_null(strstr(r.body, "response failed: input exceeds its size limit"));

	r = call(port, "HEAD", "/hello", NULL, 0, NULL);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.len, 0);

	/* Still serving after all that. */
	r = call(port, "GET", "/hello", NULL, 0, NULL);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, "hello anonymous\n");
	assert_int_equal(calls, 3);
	gf_http_server_destroy(s);
}

static void test_bad_config(void **state)
{
	(void)state;
	struct gf_http_config cfg = { .bind_addr = "not-an-ip", .routes = routes, .nroutes = 1 };
	gf_http_server *s = (gf_http_server *)1;
	assert_int_equal(gf_http_server_create(&cfg, &s), GF_INVAL);
	assert_null(s);
	/* Port already taken. */
	gf_http_server *a = start();
	cfg.bind_addr = "127.0.0.1";
	cfg.port = gf_http_server_port(a);
	assert_int_equal(gf_http_server_create(&cfg, &s), GF_UNAVAILABLE);
	gf_http_server_destroy(a);
	gf_http_server_destroy(NULL);
}

static void test_obuf_cap(void **state)
{
	(void)state;
	struct gf_obuf b;
	gf_obuf_init(&b, 10);
	assert_int_equal(gf_obuf_puts(&b, "12345"), GF_OK);
	assert_int_equal(gf_obuf_printf(&b, "%d", 678), GF_OK);
	assert_string_equal(b.data, "12345678");
	assert_int_equal(gf_obuf_printf(&b, "%s", "abc"), GF_TOOBIG);
	assert_string_equal(b.data, "12345678"); /* unchanged, still terminated */
	assert_int_equal(gf_obuf_puts(&b, "z"), GF_TOOBIG); /* sticky */
	assert_int_equal(gf_obuf_error(&b), GF_TOOBIG);
	gf_obuf_reset(&b);
	assert_int_equal(gf_obuf_puts(&b, "0123456789"), GF_OK);
	assert_int_equal(b.len, 10);
	gf_obuf_release(&b);
	/* writing in place: room for n, commit what was written */
	gf_obuf_init(&b, 10);
	assert_int_equal(gf_obuf_puts(&b, "ab"), GF_OK);
	char *w = gf_obuf_space(&b, 8);
	assert_non_null(w);
	memcpy(w, "cdef", 4);
	gf_obuf_commit(&b, 4);
	assert_string_equal(b.data, "abcdef");
	assert_null(gf_obuf_space(&b, 5)); /* 6 + 5 > 10 */
	assert_int_equal(gf_obuf_error(&b), GF_TOOBIG);
	gf_obuf_commit(&b, 1); /* ignored after an error */
	assert_int_equal(b.len, 6);
	gf_obuf_release(&b);
}

int main(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_routes_and_errors),
		cmocka_unit_test(test_bad_config),
		cmocka_unit_test(test_obuf_cap),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	curl_global_cleanup();
	return rc;
}
