/*
 * tests/agent/test_http_limits.c - gfhttp against hostile and careless
 * clients (ctest labels agent;security; the agent, the scheduler and the
 * metrics API all serve through it):
 *  - trickled headers (one byte every 100 ms) on every connection slot a
 *    pending request may take are cut at the header deadline although the
 *    bytes keep coming, and a health check is served at once meanwhile;
 *  - slow clients from five addresses, each at its per-address limit and
 *    reconnecting when cut (partial request lines, partial headers, partial
 *    bodies), with the scheduler's :10260 limits (256 / 64) and the agent's
 *    :9400 ones (64 / 16): /healthz and /metrics still answer within the
 *    chart's 1 s probe timeout, every time (slots kept for complete requests,
 *    the pending connection held longest cut);
 *  - one client address gets max_conns_per_ip connections, no more, and
 *    another address is served at once;
 *  - a claimed Content-Length costs no memory until it is sent; bodies in
 *    flight never pass the memory budget (503 + Retry-After past it), a
 *    Content-Length over max_body gets 413 before any body byte, and every
 *    byte charged is given back;
 *  - non-HTTP input: what docs/agent.md says happens.
 * Clients: raw sockets from 127.0.0.x (tests/rawclient.h) and libcurl.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
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

static void h_hello(void *ud, const struct gf_http_request *req, struct gf_http_response *resp)
{
	(void)ud;
	(void)req;
	gf_obuf_puts(&resp->body, "hello\n");
}

static void h_len(void *ud, const struct gf_http_request *req, struct gf_http_response *resp)
{
	(void)ud;
	gf_obuf_printf(&resp->body, "len=%zu\n", req->body_len);
}

static const struct gf_http_route routes[] = {
	{ "GET", "/hello", h_hello, NULL },
	{ "POST", "/len", h_len, NULL },
};

static gf_http_server *start(struct gf_http_config cfg)
{
	cfg.bind_addr = "127.0.0.1";
	cfg.routes = routes;
	cfg.nroutes = 2;
	gf_http_server *s;
	assert_int_equal(gf_http_server_create(&cfg, &s), GF_OK);
	return s;
}

static size_t sink(char *p, size_t sz, size_t n, void *ud)
{
	(void)p;
	(void)ud;
	return sz * n;
}

/* GET /hello with curl from 127.0.0.1; the status (0 when none) and the seconds it took. */
static long hello(uint16_t port, long timeout_ms, double *secs)
{
	char url[64];
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/hello", port);
	CURL *h = curl_easy_init();
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
	double t0 = rc_now();
	long status = 0;
	if (curl_easy_perform(h) == CURLE_OK)
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	*secs = rc_now() - t0;
	curl_easy_cleanup(h);
	return status;
}

/* ---- slow clients ---------------------------------------------------------------- */

#define NTRICKLE 8

struct trickle {
	uint16_t port;
	int fd[NTRICKLE];
	double opened, closed_at[NTRICKLE];
	unsigned sent[NTRICKLE];
};

/* One byte every 100 ms on every connection still open, until all are
 * closed or 6 s pass; records when the server closed each one. */
static void *trickle_main(void *arg)
{
	struct trickle *t = arg;
	static const char req[] = "GET /hello HTTP/1.1\r\nHost: x\r\nX-Slow: "
				  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
	for (int alive = NTRICKLE; alive && rc_now() - t->opened < 6;) {
		alive = 0;
		for (int i = 0; i < NTRICKLE; i++) {
			if (t->fd[i] < 0 || t->closed_at[i])
				continue;
			if (rc_closed(t->fd[i], 0) ||
			    !rc_send(t->fd[i], &req[t->sent[i] % (sizeof(req) - 1)], 1))
				t->closed_at[i] = rc_now();
			else
				t->sent[i]++, alive++;
		}
		rc_sleep_ms(100);
	}
	return NULL;
}

static void test_trickled_headers_are_cut(void **st)
{
	(void)st;
	/* room for the trickles and the health check among the pending, + 2 reserved */
	gf_http_server *s = start((struct gf_http_config){
		.max_conns = NTRICKLE + 3, .reserved_conns = 2, .max_conns_per_ip = NTRICKLE,
		.header_timeout_s = 1, .timeout_s = 30 /* the idle timeout a trickle resets */ });
	uint16_t port = gf_http_server_port(s);
	struct trickle t = { .port = port, .opened = rc_now() };
	for (int i = 0; i < NTRICKLE; i++) {
		t.fd[i] = rc_dial("127.0.0.2", port);
		assert_true(t.fd[i] >= 0);
	}
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, trickle_main, &t), 0);
	rc_sleep_ms(300);
	/* The trickles hold every slot but the reserve: the health check is served at once. */
	double secs;
	long status = hello(port, 5000, &secs);
	printf("health check during %d trickles: status %ld after %.2f s\n", NTRICKLE, status, secs);
	assert_int_equal(status, 200);
	assert_true(secs < 0.5);
	pthread_join(th, NULL);
	for (int i = 0; i < NTRICKLE; i++) {
		double held = t.closed_at[i] - t.opened;
		printf("trickle %d: %u bytes sent, cut after %.2f s\n", i, t.sent[i], held);
		assert_true(t.closed_at[i] > 0);
		assert_true(held >= 0.9 && held < 2.5);
		assert_true(t.sent[i] >= 5); /* it was sending all along */
		close(t.fd[i]);
	}
	struct gf_http_stats hs;
	gf_http_server_stats(s, &hs);
	assert_true(hs.deadline_cuts >= NTRICKLE);
	gf_http_server_destroy(s);
}

static void test_request_deadline(void **st)
{
	(void)st;
	gf_http_server *s = start((struct gf_http_config){ .header_timeout_s = 5,
							   .request_timeout_s = 1 });
	uint16_t port = gf_http_server_port(s);
	/* Headers on time, then the body one byte at a time: cut at the request deadline. */
	int fd = rc_dial("127.0.0.3", port);
	assert_true(fd >= 0);
	const char *h = "POST /len HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n";
	assert_true(rc_send(fd, h, strlen(h)));
	double t0 = rc_now(), cut = 0;
	while (rc_now() - t0 < 4) {
		if (rc_closed(fd, 100) || !rc_send(fd, "x", 1)) {
			cut = rc_now() - t0;
			break;
		}
	}
	printf("body trickle cut after %.2f s\n", cut);
	assert_true(cut >= 0.9 && cut < 2.5);
	close(fd);
	/* A kept-alive connection: the next request's headers are due within
	 * header_timeout_s of the previous request's end, like the first's. */
	fd = rc_dial("127.0.0.3", port);
	assert_true(fd >= 0);
	const char *g = "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n";
	assert_true(rc_send(fd, g, strlen(g)));
	assert_false(rc_closed(fd, 300));
	gf_http_server_destroy(s);
	close(fd);
}

/* How many of fd[0..n) the server keeps open, once it has closed the ones
 * over the limit (waits up to 3 s for the count to come down to want). */
static int kept_open(const int *fd, int n, int want)
{
	bool closed[64] = { false };
	int open_ = n;
	for (int round = 0; round < 60 && open_ != want; round++) {
		rc_sleep_ms(50);
		open_ = 0;
		for (int i = 0; i < n; i++) {
			if (!closed[i])
				closed[i] = rc_closed(fd[i], 0);
			open_ += !closed[i];
		}
	}
	return open_;
}

static void test_per_ip_limit(void **st)
{
	(void)st;
	gf_http_server *s = start((struct gf_http_config){ .max_conns = 16, .max_conns_per_ip = 4 });
	uint16_t port = gf_http_server_port(s);
	int fd[10];
	for (int i = 0; i < 10; i++) {
		fd[i] = rc_dial("127.0.0.4", port);
		assert_true(fd[i] >= 0);
	}
	int open_ = kept_open(fd, 10, 4);
	printf("connections from one address kept open: %d of 10 (limit 4)\n", open_);
	assert_int_equal(open_, 4);
	double secs;
	assert_int_equal(hello(port, 2000, &secs), 200);
	assert_true(secs < 1);
	for (int i = 0; i < 10; i++)
		close(fd[i]);
	gf_http_server_destroy(s);
}

/* The default is max_conns / 4 (at least 4). */
static void test_per_ip_default(void **st)
{
	(void)st;
	gf_http_server *s = start((struct gf_http_config){ .max_conns = 32 });
	uint16_t port = gf_http_server_port(s);
	int fd[12];
	for (int i = 0; i < 12; i++) {
		fd[i] = rc_dial("127.0.0.5", port);
		assert_true(fd[i] >= 0);
	}
	assert_int_equal(kept_open(fd, 12, 8), 8);
	for (int i = 0; i < 12; i++)
		close(fd[i]);
	gf_http_server_destroy(s);
}

/* ---- many slow clients from many addresses ---------------------------------------- */

static void h_metrics(void *ud, const struct gf_http_request *req, struct gf_http_response *resp)
{
	(void)ud;
	(void)req;
	for (int i = 0; i < 2000; i++)
		gf_obuf_printf(&resp->body, "gpufleet_test_metric{i=\"%d\"} %d\n", i, i);
}

static const struct gf_http_route probe_routes[] = {
	{ "GET", "/healthz", h_hello, NULL },
	{ "GET", "/metrics", h_metrics, NULL },
	{ "POST", "/len", h_len, NULL },
};

#define SL_ADDRS 5
#define SL_MAX (SL_ADDRS * 64)

struct slowloris {
	uint16_t port;
	int per_ip;
	int fd[SL_MAX];
	volatile int stop;
	unsigned long dials;
};

/* Open (again) connection i and send a partial request: a request line cut
 * short, headers without their end, or headers and part of a body. */
static void sl_dial(struct slowloris *sl, int i)
{
	static const char *partial[] = {
		"GET /healthz HT",
		"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: aaaa",
		"POST /len HTTP/1.1\r\nHost: x\r\nContent-Length: 4000\r\n\r\nxxxx",
	};
	char src[24];
	snprintf(src, sizeof(src), "127.0.0.%d", 2 + i / sl->per_ip);
	sl->fd[i] = rc_dial(src, sl->port);
	sl->dials++;
	if (sl->fd[i] >= 0)
		rc_send(sl->fd[i], partial[i % 3], strlen(partial[i % 3]));
}

/* Keep every connection open: redial each one the server cuts. */
static void *slowloris_main(void *arg)
{
	struct slowloris *sl = arg;
	int n = SL_ADDRS * sl->per_ip;
	while (!sl->stop) {
		for (int i = 0; i < n && !sl->stop; i++) {
			if (sl->fd[i] >= 0 && !rc_closed(sl->fd[i], 0))
				continue;
			if (sl->fd[i] >= 0)
				close(sl->fd[i]);
			sl_dial(sl, i);
		}
		rc_sleep_ms(5);
	}
	return NULL;
}

static long get(uint16_t port, const char *path, long timeout_ms, double *secs)
{
	char url[96];
	snprintf(url, sizeof(url), "http://127.0.0.1:%u%s", port, path);
	CURL *h = curl_easy_init();
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
	double t0 = rc_now();
	long status = 0;
	if (curl_easy_perform(h) == CURLE_OK)
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	*secs = rc_now() - t0;
	curl_easy_cleanup(h);
	return status;
}

/* Five addresses, each at its per-address limit with partial requests and
 * redialling when cut; 3 s of probes every 100 ms, each with the chart's
 * 1 s probe timeout. */
static void slow_clients_vs_probes(const char *what, unsigned max_conns)
{
	struct gf_http_config cfg = { .bind_addr = "127.0.0.1", .routes = probe_routes, .nroutes = 3,
				      .max_conns = max_conns };
	gf_http_server *s;
	assert_int_equal(gf_http_server_create(&cfg, &s), GF_OK);
	struct slowloris sl = { .port = gf_http_server_port(s), .per_ip = max_conns / 4 };
	assert_true(SL_ADDRS * sl.per_ip <= SL_MAX);
	for (int i = 0; i < SL_MAX; i++)
		sl.fd[i] = -1;
	for (int i = 0; i < SL_ADDRS * sl.per_ip; i++)
		sl_dial(&sl, i);
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, slowloris_main, &sl), 0);
	rc_sleep_ms(500);
	struct gf_http_stats hs;
	gf_http_server_stats(s, &hs);
	printf("%s: %d slow clients from %d addresses: %u connections open, %u pending\n", what,
	       SL_ADDRS * sl.per_ip, SL_ADDRS, hs.connections, hs.pending);
	int probes = 0, ok = 0;
	double worst = 0;
	for (double t0 = rc_now(); rc_now() - t0 < 3;) {
		static const char *paths[] = { "/healthz", "/metrics" };
		double secs;
		long st = get(sl.port, paths[probes % 2], 1000, &secs);
		probes++;
		ok += st == 200 && secs < 1.0;
		if (secs > worst)
			worst = secs;
		rc_sleep_ms(100);
	}
	sl.stop = 1;
	pthread_join(th, NULL);
	gf_http_server_stats(s, &hs);
	printf("%s: %d of %d probes (/healthz, /metrics) answered 200 within 1 s, slowest %.3f s; "
	       "%lu dials, %llu pending connections cut to keep the reserve, %llu at deadlines\n",
	       what, ok, probes, worst, sl.dials, (unsigned long long)hs.evictions,
	       (unsigned long long)hs.deadline_cuts);
	for (int i = 0; i < SL_MAX; i++)
		if (sl.fd[i] >= 0)
			close(sl.fd[i]);
	gf_http_server_destroy(s);
	assert_true(probes >= 10);
	assert_int_equal(ok, probes);
}

static void test_slow_clients_scheduler(void **st)
{
	(void)st;
	slow_clients_vs_probes("scheduler :10260 (256 / 64)", 256);
}

static void test_slow_clients_agent(void **st)
{
	(void)st;
	slow_clients_vs_probes("agent :9400 (64 / 16)", 64);
}

static void test_reserve_config(void **st)
{
	(void)st;
	gf_http_server *s;
	struct gf_http_config cfg = { .bind_addr = "127.0.0.1", .routes = routes, .nroutes = 2, .max_conns = 8,
				      .reserved_conns = 8 };
	assert_int_equal(gf_http_server_create(&cfg, &s), GF_INVAL);
	/* 6 pending of 8 (2 reserved): an address opening more cuts its own, never
	 * the older connection of another address */
	s = start((struct gf_http_config){ .max_conns = 8, .reserved_conns = 2, .max_conns_per_ip = 8 });
	int other = rc_dial("127.0.0.7", gf_http_server_port(s)), mine[10];
	assert_true(other >= 0);
	rc_sleep_ms(50);
	for (int i = 0; i < 10; i++) {
		mine[i] = rc_dial("127.0.0.8", gf_http_server_port(s));
		assert_true(mine[i] >= 0);
		rc_sleep_ms(20);
	}
	int open_ = kept_open(mine, 10, 5);
	struct gf_http_stats hs;
	gf_http_server_stats(s, &hs);
	printf("10 pending from one address beside 1 from another: %d of its own kept, the other's %s; "
	       "%llu cut\n", open_, rc_closed(other, 0) ? "cut" : "kept", (unsigned long long)hs.evictions);
	assert_int_equal(open_, 5);
	assert_false(rc_closed(other, 0));
	assert_int_equal(hs.pending, 6);
	close(other);
	for (int i = 0; i < 10; i++)
		close(mine[i]);
	gf_http_server_destroy(s);
	/* a request line not sent within line_timeout_s: cut then, not at the header deadline */
	s = start((struct gf_http_config){ .line_timeout_s = 1, .header_timeout_s = 5 });
	int fd = rc_dial("127.0.0.6", gf_http_server_port(s));
	assert_true(fd >= 0);
	double t0 = rc_now();
	bool cut = rc_closed(fd, 3000);
	double held = rc_now() - t0;
	printf("silent connection cut after %.2f s (request line deadline 1 s)\n", held);
	assert_true(cut && held >= 0.9 && held < 2);
	close(fd);
	/* the request line on time: the header deadline (5 s from accept) rules */
	fd = rc_dial("127.0.0.6", gf_http_server_port(s));
	assert_true(rc_send(fd, "GET /hello HTTP/1.1\r\n", 21));
	assert_false(rc_closed(fd, 2000));
	close(fd);
	gf_http_server_destroy(s);
}

/* ---- memory ------------------------------------------------------------------------ */

static size_t in_use(gf_http_server *s)
{
	struct gf_http_stats hs;
	gf_http_server_stats(s, &hs);
	return hs.mem_in_use;
}

/* Wait (up to 2 s) until the server's charge is want; returns it. */
static size_t wait_in_use(gf_http_server *s, size_t want)
{
	for (int i = 0; i < 200 && in_use(s) != want; i++)
		rc_sleep_ms(10);
	return in_use(s);
}

#define MiB ((size_t)1 << 20)
#define BUDGET (2 * (MiB + 1) + MiB / 2) /* 2621442 */

static void test_memory_budget(void **st)
{
	(void)st;
	gf_http_server *s = start((struct gf_http_config){
		.max_body = MiB, .max_response = 64 << 10, .mem_budget = BUDGET,
		.max_conns = 64, .max_conns_per_ip = 64 });
	uint16_t port = gf_http_server_port(s);
	struct gf_http_stats hs;
	gf_http_server_stats(s, &hs);
	assert_int_equal(hs.mem_budget, BUDGET);

	/* 20 clients claim 1 MiB each and send 100 bytes: 16 KiB each is
	 * charged (the first allocation), not the 20 MiB claimed. */
	char hdr[256];
	snprintf(hdr, sizeof(hdr),
		 "POST /len HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: %zu\r\n\r\n", MiB);
	int fd[20];
	char *body = calloc(1, MiB);
	assert_non_null(body);
	memset(body, 'b', MiB);
	for (int i = 0; i < 20; i++) {
		fd[i] = rc_dial("127.0.0.6", port);
		assert_true(fd[i] >= 0);
		assert_true(rc_send(fd[i], hdr, strlen(hdr)));
		assert_true(rc_send(fd[i], body, 100));
	}
	size_t u = wait_in_use(s, 20 * (16 << 10));
	printf("20 uploads claiming 1 MiB, 100 bytes sent: %zu bytes charged\n", u);
	assert_int_equal(u, 20 * (16 << 10));
	for (int i = 0; i < 20; i++)
		close(fd[i]);
	assert_int_equal(wait_in_use(s, 0), 0);

	/* Four uploads of 1 MiB held 10 bytes short of the end in a budget of
	 * 2 x (1 MiB + 1) + 512 KiB: two fit (1 MiB each while held), the
	 * third's growth from 512 KiB to 1 MiB does not and it is refused (its
	 * memory given back at once), the fourth likewise. */
	for (int i = 0; i < 4; i++) {
		fd[i] = rc_dial("127.0.0.7", port);
		assert_true(fd[i] >= 0);
		assert_true(rc_send(fd[i], hdr, strlen(hdr)));
		assert_true(rc_send(fd[i], body, MiB - 10));
		rc_sleep_ms(100);
		assert_true(in_use(s) <= BUDGET);
	}
	u = wait_in_use(s, 2 * MiB);
	printf("4 uploads of 1 MiB held in a %zu-byte budget: %zu bytes charged\n", BUDGET, u);
	assert_int_equal(u, 2 * MiB);
	/* A request without a body is served meanwhile. */
	double secs;
	assert_int_equal(hello(port, 2000, &secs), 200);
	/* A Content-Length over max_body: 413 before any body byte. */
	int big = rc_dial("127.0.0.8", port);
	char bh[256], reply[2048];
	snprintf(bh, sizeof(bh), "POST /len HTTP/1.1\r\nHost: x\r\nContent-Length: %zu\r\n\r\n", 2 * MiB);
	assert_true(rc_send(big, bh, strlen(bh)));
	rc_read_all(big, reply, sizeof(reply), 2000);
	assert_non_null(strstr(reply, "HTTP/1.1 413"));
	assert_non_null(strstr(reply, "POST /len: request body exceeds 1048576 bytes\n"));
	close(big);
	/* The ends of the four bodies: two answers, two 503s with Retry-After. */
	int ok = 0, busy = 0;
	for (int i = 0; i < 4; i++) {
		assert_true(rc_send(fd[i], body, 10));
		rc_read_all(fd[i], reply, sizeof(reply), 3000);
		if (strstr(reply, "HTTP/1.1 200") && strstr(reply, "len=1048576\n"))
			ok++;
		if (strstr(reply, "HTTP/1.1 503") && strstr(reply, "Retry-After: 1") &&
		    strstr(reply, "POST /len: server busy: request and response bodies in flight "
				  "would pass 2621442 bytes; retry\n"))
			busy++;
		close(fd[i]);
	}
	assert_int_equal(ok, 2);
	assert_int_equal(busy, 2);
	gf_http_server_stats(s, &hs);
	assert_int_equal(hs.over_budget, 2);
	/* Every byte charged has been given back (responses too, once sent). */
	assert_int_equal(wait_in_use(s, 0), 0);
	free(body);
	gf_http_server_destroy(s);
}

/* ---- not HTTP ---------------------------------------------------------------------- */

static void test_not_http(void **st)
{
	(void)st;
	gf_http_server *s = start((struct gf_http_config){ .header_timeout_s = 1 });
	uint16_t port = gf_http_server_port(s);
	char reply[2048];
	/* A request line with a method and a target but no version: 400. */
	int fd = rc_dial("127.0.0.9", port);
	assert_true(rc_send(fd, "HELLO WORLD\r\n\r\n", 15));
	rc_read_all(fd, reply, sizeof(reply), 2000);
	assert_memory_equal(reply, "HTTP/1.1 400 ", 13);
	close(fd);
	/* An unknown HTTP version: 505. */
	fd = rc_dial("127.0.0.9", port);
	assert_true(rc_send(fd, "GET /hello HTTP/9.9\r\n\r\n", 23));
	rc_read_all(fd, reply, sizeof(reply), 2000);
	assert_memory_equal(reply, "HTTP/1.1 505 ", 13);
	close(fd);
	/* One word: closed without an answer. */
	fd = rc_dial("127.0.0.9", port);
	assert_true(rc_send(fd, "garbage\r\n\r\n", 11));
	assert_int_equal(rc_read_all(fd, reply, sizeof(reply), 2000), 0);
	close(fd);
	/* Bytes that never make a line (a TLS ClientHello to a plain port):
	 * cut at the header deadline, not left open for the idle timeout. */
	fd = rc_dial("127.0.0.9", port);
	static const unsigned char hello_tls[] = { 0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03 };
	assert_true(rc_send(fd, hello_tls, sizeof(hello_tls)));
	double t0 = rc_now();
	assert_true(rc_closed(fd, 3000));
	assert_true(rc_now() - t0 < 2.5);
	close(fd);
	/* Still serving. */
	double secs;
	assert_int_equal(hello(port, 2000, &secs), 200);
	gf_http_server_destroy(s);
}

int main(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trickled_headers_are_cut),
		cmocka_unit_test(test_request_deadline),
		cmocka_unit_test(test_per_ip_limit),
		cmocka_unit_test(test_per_ip_default),
		cmocka_unit_test(test_slow_clients_scheduler),
		cmocka_unit_test(test_slow_clients_agent),
		cmocka_unit_test(test_reserve_config),
		cmocka_unit_test(test_memory_budget),
		cmocka_unit_test(test_not_http),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	curl_global_cleanup();
	return rc;
}
