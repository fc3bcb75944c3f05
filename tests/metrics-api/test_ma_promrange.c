/*
 * tests/metrics-api/test_ma_promrange.c - the query_range decoder and client
 * under hostile answers: the body is cut off at the cap derived from the grid
 * while it arrives (the bytes the fake server got out are counted), a series
 * larger than its share is refused before it becomes a tree, the envelope is
 * walked without a tree (any key order, duplicates and deep nesting refused;
 * the peak memory of the largest forecast answer measured),
 * and at most GF_MA_RANGE_IN_FLIGHT queries run at once.  The Prometheus here
 * is a FAKE: a loopback socket served by a thread of this test.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/obuf.h"
#include "metricsapi/promrange.h"

static gf_err decode(const char *json, size_t npoints, struct gf_ma_range *r, char *err, size_t errlen)
{
	return gf_promrange_decode(json, strlen(json), 1000, 60, npoints, r, err, errlen);
}

/* Peak memory of decoding the largest answer the forecast asks for (64
 * series x 10,111 points, 17 MB of JSON): the old decoder parsed it whole
 * into a tree (+172 MB of peak RSS measured); now the grids (5 MB) and one
 * series' tree.  Measured as growth of the process's peak RSS (getrusage),
 * so this case runs first. */
static void test_decode_peak_memory(void **st)
{
	(void)st;
	enum { NP = 10111 };
	struct gf_obuf b;
	gf_obuf_init(&b, 32u << 20);
	gf_obuf_printf(&b, "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[");
	for (int i = 0; i < GF_MA_RANGE_MAX_SERIES; i++) {
		gf_obuf_printf(&b, "%s{\"metric\":{\"__name__\":\"m\",\"pod\":\"p%d\"},\"values\":[", i ? "," : "", i);
		for (int k = 0; k < NP; k++)
			gf_obuf_printf(&b, "%s[%d,\"%.15g\"]", k ? "," : "", 1000 + 60 * k, 1234.5678901234 + k * 0.001);
		gf_obuf_printf(&b, "]}");
	}
	gf_obuf_printf(&b, "]}}");
	assert_int_equal(gf_obuf_error(&b), GF_OK);
	struct rusage r0, r1;
	getrusage(RUSAGE_SELF, &r0);
	static struct gf_ma_range r;
	char err[256] = "";
	gf_err e = gf_promrange_decode(b.data, b.len, 1000, 60, NP, &r, err, sizeof(err));
	getrusage(RUSAGE_SELF, &r1);
	long grew = (r1.ru_maxrss - r0.ru_maxrss) / 1024;
	printf("# decode of %zu bytes (64 x %d points): peak RSS grew %ld MB\n", b.len, NP, grew);
	if (e)
		fail_msg("%s: %s", gf_err_name(e), err);
	assert_int_equal(r.n, GF_MA_RANGE_MAX_SERIES);
	assert_true(r.s[63].v[NP - 1] > 1244 && r.s[63].v[NP - 1] < 1245);
#if defined(__SANITIZE_ADDRESS__)
	grew = 0; /* AddressSanitizer keeps freed trees in quarantine: the figure is not the program's */
#endif
	if (grew > 32)
		fail_msg("peak RSS grew %ld MB decoding a %zu-byte answer (want <= 32 MB)", grew, b.len);
	gf_ma_range_release(&r);
	gf_obuf_release(&b);
}

static void test_decode_order(void **st)
{
	(void)st;
	struct gf_ma_range r;
	char err[256];
	/* data before status, result before resultType, unknown keys skipped */
	const char *j = "{\"data\":{\"result\":[{\"values\":[[1000,\"1\"],[1120,\"3\"]],\"metric\":{\"__name__\":\"m\","
			"\"pod\":\"a\"}},{\"metric\":{\"pod\":\"b\"},\"values\":[[1060,\"NaN\"]]}],\"x\":[{\"y\":[1,2,"
			"true,null]}],\"resultType\":\"matrix\"},\"warnings\":[\"w\\\"]\"],\"status\":\"success\"}";
	gf_err e = decode(j, 4, &r, err, sizeof(err));
	if (e)
		fail_msg("%s: %s", gf_err_name(e), err);
	assert_int_equal(r.n, 2);
	assert_true(r.s[0].v[0] == 1 && r.s[0].v[1] == 1 && r.s[0].v[2] == 3 && r.s[0].v[3] == 3);
	assert_true(isnan(r.s[1].v[0]) && isnan(r.s[1].v[3]));
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(r.s[1].labels, "pod")->valuestring, "b");
	assert_null(cJSON_GetObjectItemCaseSensitive(r.s[0].labels, "__name__"));
	gf_ma_range_release(&r);

	const char *failed = "{\"status\":\"error\",\"error\":\"bad query\"}";
	assert_int_equal(decode(failed, 4, &r, err, sizeof(err)), GF_PARSE);
	assert_non_null(strstr(err, "bad query"));
}

static void test_decode_bad(void **st)
{
	(void)st;
	static const struct {
		const char *json, *want;
	} bad[] = {
		{"{\"status\":\"success\",\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[]}}",
		 "status: given twice"},
		{"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[]}}", "resultType matrix"},
		{"{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[]}} x", "trailing"},
		{"{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[{]}}", "malformed"},
		{"{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[]}", "expected"},
		{"{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[{\"metric\":{},"
		 "\"values\":[[1000,1]]}]}}",
		 "expected [time"},
		{"", "expected an object"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct gf_ma_range r;
		char err[256] = "";
		gf_err e = decode(bad[i].json, 4, &r, err, sizeof(err));
		if (e != GF_PARSE || !strstr(err, bad[i].want))
			fail_msg("case %zu: %s '%s', want GF_PARSE '%s'", i, gf_err_name(e), err, bad[i].want);
		assert_int_equal(r.n, 0);
	}

	/* 200 levels of nesting in a key nobody reads: refused, no recursion */
	char deep[1024];
	size_t o = (size_t)snprintf(deep, sizeof(deep), "{\"status\":\"success\",\"x\":");
	for (int i = 0; i < 200; i++)
		deep[o++] = '[';
	for (int i = 0; i < 200; i++)
		deep[o++] = ']';
	snprintf(deep + o, sizeof(deep) - o, ",\"data\":{\"resultType\":\"matrix\",\"result\":[]}}");
	struct gf_ma_range r;
	char err[256] = "";
	assert_int_equal(decode(deep, 4, &r, err, sizeof(err)), GF_PARSE);
	assert_non_null(strstr(err, "nested deeper than 64"));
}

/* A series larger than a series of npoints points may be: refused before it is
 * parsed (the old decoder parsed the whole answer, up to 64 MiB, as a tree). */
static void test_decode_series_cap(void **st)
{
	(void)st;
	size_t pad = 200000, n = pad + 256;
	char *j = malloc(n);
	assert_non_null(j);
	size_t o = (size_t)snprintf(j, n, "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":"
					  "[{\"metric\":{\"pod\":\"");
	memset(j + o, 'a', pad);
	o += pad;
	snprintf(j + o, n - o, "\"},\"values\":[[1000,\"1\"]]}]}}");
	struct gf_ma_range r;
	char err[256] = "";
	gf_err e = decode(j, 10, &r, err, sizeof(err));
	if (e != GF_TOOBIG || !strstr(err, "data.result[0] is"))
		fail_msg("%s '%s', want GF_TOOBIG naming data.result[0]'s size", gf_err_name(e), err);
	assert_int_equal(r.n, 0);

	/* 65 series: GF_TOOBIG; the whole body past its cap: GF_TOOBIG */
	struct gf_obuf b;
	gf_obuf_init(&b, 1u << 20);
	gf_obuf_printf(&b, "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[");
	for (int i = 0; i < 65; i++)
		gf_obuf_printf(&b, "%s{\"metric\":{\"i\":\"%d\"},\"values\":[[1000,\"1\"]]}", i ? "," : "", i);
	gf_obuf_printf(&b, "]}}");
	assert_int_equal(gf_promrange_decode(b.data, b.len, 1000, 60, 10, &r, err, sizeof(err)), GF_TOOBIG);
	assert_non_null(strstr(err, "more than 64 series"));
	gf_obuf_release(&b);
	size_t cap = gf_promrange_body_cap(10);
	assert_true(cap < (3u << 20));
	assert_int_equal(gf_promrange_decode(j, cap + 1, 1000, 60, 10, &r, err, sizeof(err)), GF_TOOBIG);
	free(j);
}

/* The fake Prometheus: answers every connection with a 200 whose body is
 * 48 MiB of one padded series, counting the bytes it got out, or (held) keeps
 * each connection unanswered until released. */
struct fake {
	int lfd, port;
	bool hold;
	volatile bool release;
	size_t sent, accepted;
	pthread_mutex_t mu;
};

static void *serve_one(void *arg)
{
	struct fake *f = arg;
	int c = accept(f->lfd, NULL, NULL);
	if (c < 0)
		return NULL;
	char req[4096];
	(void)!read(c, req, sizeof(req));
	size_t total = 48u << 20;
	char hdr[256];
	int hl = snprintf(hdr, sizeof(hdr), "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
					    "Content-Length: %zu\r\n\r\n", total);
	(void)!write(c, hdr, (size_t)hl);
	const char *head = "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[{\"metric\":"
			   "{\"pod\":\"";
	(void)!write(c, head, strlen(head));
	static char chunk[65536];
	memset(chunk, 'a', sizeof(chunk));
	size_t sent = strlen(head);
	while (sent < total) {
		ssize_t w = write(c, chunk, sizeof(chunk));
		if (w <= 0)
			break;
		sent += (size_t)w;
	}
	f->sent = sent;
	close(c);
	return NULL;
}

static void *serve_held(void *arg)
{
	struct fake *f = arg;
	int fds[8], n = 0;
	while (!f->release) {
		struct pollfd p = {f->lfd, POLLIN, 0};
		if (poll(&p, 1, 20) == 1 && n < 8) {
			int c = accept(f->lfd, NULL, NULL);
			if (c >= 0) {
				fds[n++] = c;
				pthread_mutex_lock(&f->mu);
				f->accepted++;
				pthread_mutex_unlock(&f->mu);
			}
		}
	}
	const char *ans = "HTTP/1.1 200 OK\r\nContent-Length: 63\r\nConnection: close\r\n\r\n"
			  "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[]}}";
	for (int i = 0; i < n; i++) {
		(void)!write(fds[i], ans, strlen(ans));
		close(fds[i]);
	}
	return NULL;
}

static void fake_listen(struct fake *f)
{
	memset(f, 0, sizeof(*f));
	pthread_mutex_init(&f->mu, NULL);
	f->lfd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(f->lfd >= 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	assert_int_equal(bind(f->lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(f->lfd, 16), 0);
	socklen_t al = sizeof(a);
	getsockname(f->lfd, (struct sockaddr *)&a, &al);
	f->port = ntohs(a.sin_port);
}

static void test_query_body_cap(void **st)
{
	(void)st;
	struct fake f;
	fake_listen(&f);
	pthread_t t;
	pthread_create(&t, NULL, serve_one, &f);
	char url[64], err[512] = "";
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", f.port);
	struct gf_ma_range r;
	gf_err e = gf_promrange_query(url, "up", 1000, 60, 10, 20000, &r, err, sizeof(err));
	pthread_join(t, NULL);
	close(f.lfd);
	size_t cap = gf_promrange_body_cap(10);
	printf("# body cap for 10 points: %zu bytes; the fake got %zu bytes out before the client hung up\n", cap,
	       f.sent);
	if (e != GF_TOOBIG || !strstr(err, "stopped reading"))
		fail_msg("%s '%s', want GF_TOOBIG (stopped reading)", gf_err_name(e), err);
	/* the client stopped near the cap: what is left is socket buffers */
	if (f.sent > cap + (8u << 20))
		fail_msg("the fake wrote %zu bytes, the cap is %zu", f.sent, cap);
	assert_int_equal(r.n, 0);
}

struct qarg {
	const char *url;
	long timeout_ms;
	gf_err e;
	char err[256];
};

static void *query_thread(void *arg)
{
	struct qarg *q = arg;
	struct gf_ma_range r;
	q->e = gf_promrange_query(q->url, "up", 1000, 60, 10, q->timeout_ms, &r, q->err, sizeof(q->err));
	if (!q->e)
		gf_ma_range_release(&r);
	return NULL;
}

static void test_query_in_flight(void **st)
{
	(void)st;
	struct fake f;
	fake_listen(&f);
	f.hold = true;
	pthread_t srv, th[GF_MA_RANGE_IN_FLIGHT];
	pthread_create(&srv, NULL, serve_held, &f);
	char url[64];
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", f.port);
	struct qarg q[GF_MA_RANGE_IN_FLIGHT + 1];
	for (int i = 0; i <= GF_MA_RANGE_IN_FLIGHT; i++)
		q[i] = (struct qarg){.url = url, .timeout_ms = 20000};
	for (int i = 0; i < GF_MA_RANGE_IN_FLIGHT; i++)
		pthread_create(&th[i], NULL, query_thread, &q[i]);
	for (int k = 0; k < 200; k++) {
		pthread_mutex_lock(&f.mu);
		size_t a = f.accepted;
		pthread_mutex_unlock(&f.mu);
		if (a == GF_MA_RANGE_IN_FLIGHT)
			break;
		usleep(20000);
	}
	/* one more, with a short wait: no turn, no connection */
	q[GF_MA_RANGE_IN_FLIGHT].timeout_ms = 300;
	query_thread(&q[GF_MA_RANGE_IN_FLIGHT]);
	pthread_mutex_lock(&f.mu);
	size_t accepted = f.accepted;
	pthread_mutex_unlock(&f.mu);
	f.release = true;
	for (int i = 0; i < GF_MA_RANGE_IN_FLIGHT; i++)
		pthread_join(th[i], NULL);
	pthread_join(srv, NULL);
	close(f.lfd);
	if (q[GF_MA_RANGE_IN_FLIGHT].e != GF_UNAVAILABLE ||
	    !strstr(q[GF_MA_RANGE_IN_FLIGHT].err, "already in flight"))
		fail_msg("the extra query: %s '%s', want GF_UNAVAILABLE (already in flight)",
			 gf_err_name(q[GF_MA_RANGE_IN_FLIGHT].e), q[GF_MA_RANGE_IN_FLIGHT].err);
	assert_int_equal(accepted, GF_MA_RANGE_IN_FLIGHT);
	for (int i = 0; i < GF_MA_RANGE_IN_FLIGHT; i++)
		if (q[i].e)
			fail_msg("held query %d: %s '%s'", i, gf_err_name(q[i].e), q[i].err);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_peak_memory),
		cmocka_unit_test(test_decode_order),
		cmocka_unit_test(test_decode_bad),
		cmocka_unit_test(test_decode_series_cap),
		cmocka_unit_test(test_query_body_cap),
		cmocka_unit_test(test_query_in_flight),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
