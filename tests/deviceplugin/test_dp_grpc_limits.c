/*
 * tests/deviceplugin/test_dp_grpc_limits.c - the device plugin's gRPC server
 * (agent/grpc.c) against local clients that hold connections: every slot
 * taken by clients that send nothing while a real client is still served
 * (eviction of the idlest), the first-request deadline, the per-request
 * deadline (a body that never ends), the idle deadline (GOAWAY), a client
 * that reads no responses (flow-control window 0), the request-body budget,
 * the cap on server streams (stream holders are not evicted), and bad
 * limits refused.
 *
 * Clients here are raw unix sockets and nghttp2 client sessions.  Timing
 * assertions are one-sided where a loaded machine could make them flaky: a
 * deadline never fires before its bound; "after" is only bounded by a
 * generous wait (5 s over the bound).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <nghttp2/nghttp2.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "agent/grpc.h"

#define SLACK_MS 5000

static char dir[64], sock[128];

static int echo(void *ud, const uint8_t *req, size_t len, struct gf_obuf *out, char *msg, size_t msglen)
{
	(void)ud;
	(void)msg;
	(void)msglen;
	gf_obuf_append(out, req, len);
	return GF_GRPC_OK;
}

static bool list(void *ud, const uint8_t *req, size_t len, uint64_t *version, struct gf_obuf *out)
{
	(void)ud;
	(void)req;
	(void)len;
	if (*version)
		return false;
	*version = 1;
	gf_obuf_append(out, "devices", 7);
	return true;
}

static const struct gf_grpc_method methods[] = {
	{ "/t.S/Echo", echo, NULL, NULL },
	{ "/t.S/List", NULL, list, NULL },
};

static int64_t now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void sleep_ms(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000 };
	nanosleep(&t, NULL);
}

static gf_grpc_server *start(struct gf_grpc_limits lim)
{
	gf_grpc_server *s = NULL;
	char err[256];
	gf_err e = gf_grpc_server_start_limits(sock, methods, 2, &lim, &s, err, sizeof(err));
	if (e != GF_OK)
		fprintf(stderr, "start: %s\n", err);
	assert_int_equal(e, GF_OK);
	return s;
}

static struct gf_grpc_limits limits(unsigned header_ms, unsigned request_ms, unsigned idle_ms)
{
	struct gf_grpc_limits l = gf_grpc_default_limits;
	l.header_ms = header_ms;
	l.request_ms = request_ms;
	l.idle_ms = idle_ms;
	return l;
}

static int raw_connect(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	memcpy(sa.sun_path, sock, strlen(sock) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

/* Reads (and discards) until EOF or error; the ms it took, or -1 after
 * wait_ms without EOF. */
static int64_t wait_eof(int fd, int64_t wait_ms)
{
	int64_t t0 = now_ms();
	char buf[4096];
	while (now_ms() - t0 < wait_ms) {
		struct pollfd p = { fd, POLLIN, 0 };
		if (poll(&p, 1, 50) <= 0)
			continue;
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		if (n <= 0)
			return now_ms() - t0;
	}
	return -1;
}

static bool is_closed(int fd)
{
	char buf[4096];
	for (;;) {
		struct pollfd p = { fd, POLLIN, 0 };
		if (poll(&p, 1, 0) <= 0)
			return false;
		ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n <= 0)
			return n == 0 || errno != EAGAIN;
	}
}

static int unary(const char *msg, unsigned timeout_ms, char *why, size_t whylen)
{
	struct gf_obuf resp;
	gf_obuf_init(&resp, 1u << 20);
	int st = gf_grpc_call(sock, "/t.S/Echo", (const uint8_t *)msg, strlen(msg), &resp, timeout_ms, why, whylen);
	if (st == GF_GRPC_OK) {
		assert_int_equal(resp.len, strlen(msg));
		assert_memory_equal(resp.data, msg, resp.len);
	}
	gf_obuf_release(&resp);
	return st;
}

/* ---- an nghttp2 client that can hold back its body or its window ---- */

struct tc {
	int fd;
	nghttp2_session *ng;
	int32_t id;
	uint8_t *body;       /* framed request */
	size_t len, sent, allow; /* allow: bytes it may send; past it, deferred */
	int status;          /* grpc-status, -1 none */
	char msg[256];
	bool closed, goaway, eof;
};

static ssize_t tc_send(nghttp2_session *ng, const uint8_t *d, size_t n, int flags, void *ud)
{
	struct tc *t = ud;
	(void)ng;
	(void)flags;
	ssize_t w = send(t->fd, d, n, MSG_NOSIGNAL);
	return w < 0 ? NGHTTP2_ERR_CALLBACK_FAILURE : w;
}

static ssize_t tc_read(nghttp2_session *ng, int32_t id, uint8_t *buf, size_t n, uint32_t *flags,
		       nghttp2_data_source *src, void *ud)
{
	struct tc *t = ud;
	(void)ng;
	(void)id;
	(void)src;
	size_t lim = t->allow < t->len ? t->allow : t->len;
	if (t->sent == lim && lim < t->len)
		return NGHTTP2_ERR_DEFERRED;
	size_t k = lim - t->sent < n ? lim - t->sent : n;
	memcpy(buf, t->body + t->sent, k);
	t->sent += k;
	if (t->sent == t->len)
		*flags |= NGHTTP2_DATA_FLAG_EOF;
	return (ssize_t)k;
}

static int tc_header(nghttp2_session *ng, const nghttp2_frame *f, const uint8_t *name, size_t nlen,
		     const uint8_t *value, size_t vlen, uint8_t flags, void *ud)
{
	struct tc *t = ud;
	(void)ng;
	(void)f;
	(void)flags;
	if (nlen == 11 && memcmp(name, "grpc-status", 11) == 0)
		t->status = (int)strtol((const char *)value, NULL, 10); /* NUL-terminated by nghttp2 */
	if (nlen == 12 && memcmp(name, "grpc-message", 12) == 0)
		snprintf(t->msg, sizeof(t->msg), "%.*s", (int)vlen, (const char *)value);
	return 0;
}

static int tc_frame(nghttp2_session *ng, const nghttp2_frame *f, void *ud)
{
	struct tc *t = ud;
	(void)ng;
	if (f->hd.type == NGHTTP2_GOAWAY)
		t->goaway = true;
	return 0;
}

static int tc_close(nghttp2_session *ng, int32_t id, uint32_t code, void *ud)
{
	struct tc *t = ud;
	(void)ng;
	(void)code;
	if (id == t->id)
		t->closed = true;
	return 0;
}

/* Connects and submits one request of msglen bytes of 'x' to path; sends
 * at most allow bytes of the framed body; window: the client's initial
 * stream window (0: the server may send no DATA). */
static void tc_open(struct tc *t, const char *path, size_t msglen, size_t allow, uint32_t window)
{
	memset(t, 0, sizeof(*t));
	t->status = -1;
	t->fd = raw_connect();
	t->len = msglen + 5;
	t->body = malloc(t->len);
	assert_non_null(t->body);
	t->body[0] = 0;
	t->body[1] = (uint8_t)(msglen >> 24);
	t->body[2] = (uint8_t)(msglen >> 16);
	t->body[3] = (uint8_t)(msglen >> 8);
	t->body[4] = (uint8_t)msglen;
	memset(t->body + 5, 'x', msglen);
	t->allow = allow;
	nghttp2_session_callbacks *cb;
	assert_int_equal(nghttp2_session_callbacks_new(&cb), 0);
	nghttp2_session_callbacks_set_send_callback(cb, tc_send);
	nghttp2_session_callbacks_set_on_header_callback(cb, tc_header);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, tc_frame);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, tc_close);
	assert_int_equal(nghttp2_session_client_new(&t->ng, cb, t), 0);
	nghttp2_session_callbacks_del(cb);
	nghttp2_settings_entry iv[] = { { NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, window } };
	nghttp2_submit_settings(t->ng, NGHTTP2_FLAG_NONE, iv, 1);
	nghttp2_nv h[] = {
		{ (uint8_t *)":method", (uint8_t *)"POST", 7, 4, 0 },
		{ (uint8_t *)":scheme", (uint8_t *)"http", 7, 4, 0 },
		{ (uint8_t *)":path", (uint8_t *)path, 5, strlen(path), 0 },
		{ (uint8_t *)":authority", (uint8_t *)"localhost", 10, 9, 0 },
		{ (uint8_t *)"content-type", (uint8_t *)"application/grpc", 12, 16, 0 },
		{ (uint8_t *)"te", (uint8_t *)"trailers", 2, 8, 0 },
	};
	nghttp2_data_provider dp = { .read_callback = tc_read };
	t->id = nghttp2_submit_request(t->ng, NULL, h, 6, &dp, NULL);
	assert_true(t->id > 0);
}

/* Drives the client for up to wait_ms or until stop(t) or EOF; returns the
 * ms it ran. */
static int64_t tc_drive(struct tc *t, int64_t wait_ms, bool (*stop)(const struct tc *))
{
	int64_t t0 = now_ms();
	uint8_t buf[16384];
	while (!t->eof && !(stop && stop(t)) && now_ms() - t0 < wait_ms) {
		nghttp2_session_send(t->ng);
		struct pollfd p = { t->fd, POLLIN, 0 };
		if (poll(&p, 1, 20) <= 0)
			continue;
		ssize_t n = recv(t->fd, buf, sizeof(buf), 0);
		if (n <= 0 || nghttp2_session_mem_recv(t->ng, buf, (size_t)n) < 0)
			t->eof = true;
	}
	return now_ms() - t0;
}

static bool stream_closed(const struct tc *t)
{
	return t->closed;
}

static bool got_status(const struct tc *t)
{
	return t->status >= 0;
}

static void tc_close_all(struct tc *t)
{
	nghttp2_session_del(t->ng);
	close(t->fd);
	free(t->body);
}

/* ---- the cases ---- */

/* 16 clients connect and send nothing; with a first-request deadline far
 * away (60 s), a real client is still answered at once: the idlest silent
 * connection is evicted for it. */
static void test_silent_clients_on_every_slot(void **state)
{
	(void)state;
	gf_grpc_server *s = start(limits(60000, 10000, 60000));
	int fds[GF_GRPC_MAX_CONNS];
	for (int i = 0; i < GF_GRPC_MAX_CONNS; i++)
		fds[i] = raw_connect();
	sleep_ms(300); /* all accepted: every slot is taken */
	char why[256] = "";
	for (int k = 0; k < 3; k++) {
		int st = unary("hello", 3000, why, sizeof(why));
		if (st != GF_GRPC_OK)
			fprintf(stderr, "call %d: status %d: %s\n", k, st, why);
		assert_int_equal(st, GF_GRPC_OK);
	}
	int closed = 0;
	for (int i = 0; i < GF_GRPC_MAX_CONNS; i++) {
		closed += is_closed(fds[i]);
		close(fds[i]);
	}
	/* The first call evicted one; the later calls reused the slots their
	 * predecessors left (or evicted another): at least one, at most three. */
	assert_in_range(closed, 1, 3);
	gf_grpc_server_stop(s);
}

/* A silent client and one that sends only the connection preface and its
 * SETTINGS are closed at the first-request deadline, not before. */
static void test_first_request_deadline(void **state)
{
	(void)state;
	gf_grpc_server *s = start(limits(400, 10000, 60000));
	int64_t t0 = now_ms();
	int silent = raw_connect();
	int preface = raw_connect();
	static const char pre[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\4\0\0\0\0\0";
	assert_int_equal(send(preface, pre, sizeof(pre) - 1, 0), (ssize_t)(sizeof(pre) - 1));
	int64_t a = wait_eof(silent, 400 + SLACK_MS);
	assert_true(a >= 0);
	assert_true(wait_eof(preface, 400 + SLACK_MS) >= 0);
	assert_true(now_ms() - t0 >= 400);
	close(silent);
	close(preface);
	assert_int_equal(unary("still serving", 3000, (char[256]){ 0 }, 256), GF_GRPC_OK);
	gf_grpc_server_stop(s);
}

/* A request whose body never ends is answered DEADLINE_EXCEEDED at the
 * request deadline; the server serves the next client. */
static void test_request_deadline(void **state)
{
	(void)state;
	gf_grpc_server *s = start(limits(5000, 500, 60000));
	struct tc t;
	tc_open(&t, "/t.S/Echo", 100, 20, 65535); /* 20 of 105 bytes, then nothing */
	int64_t ran = tc_drive(&t, 500 + SLACK_MS, got_status);
	assert_int_equal(t.status, GF_GRPC_DEADLINE_EXCEEDED);
	assert_non_null(strstr(t.msg, "not complete within 500 ms"));
	assert_true(ran >= 450); /* the stream's clock starts at its HEADERS, sent within the first poll */
	tc_drive(&t, 2000, stream_closed);
	assert_true(t.closed); /* RST_STREAM after the answer: the stream is gone on both sides */
	tc_close_all(&t);
	assert_int_equal(unary("next", 3000, (char[256]){ 0 }, 256), GF_GRPC_OK);
	gf_grpc_server_stop(s);
}

/* After its call a connection that opens no new stream gets GOAWAY and is
 * closed at the idle deadline. */
static void test_idle_deadline(void **state)
{
	(void)state;
	gf_grpc_server *s = start(limits(5000, 10000, 600));
	struct tc t;
	tc_open(&t, "/t.S/Echo", 10, 15, 65535);
	tc_drive(&t, 3000, stream_closed);
	assert_true(t.closed);
	assert_int_equal(t.status, GF_GRPC_OK);
	int64_t idle = tc_drive(&t, 600 + SLACK_MS, NULL);
	assert_true(t.eof);
	assert_true(t.goaway);
	assert_true(idle >= 500);
	tc_close_all(&t);
	gf_grpc_server_stop(s);
}

/* A client that opens no flow-control window cannot be sent its answer:
 * the connection is closed once the unsent bytes stalled for request_ms. */
static void test_unread_responses_closed(void **state)
{
	(void)state;
	gf_grpc_server *s = start(limits(5000, 500, 60000));
	struct tc t;
	tc_open(&t, "/t.S/Echo", 1000, 1005, 0);
	int64_t ran = tc_drive(&t, 500 + SLACK_MS, NULL);
	assert_true(t.eof);
	assert_false(t.closed); /* no answer could be delivered */
	assert_true(ran >= 450);
	tc_close_all(&t);
	assert_int_equal(unary("next", 3000, (char[256]){ 0 }, 256), GF_GRPC_OK);
	gf_grpc_server_stop(s);
}

/* Request bodies are charged to a budget: a request over it is refused
 * with a message, and its bytes are given back. */
static void test_body_budget(void **state)
{
	(void)state;
	struct gf_grpc_limits l = limits(5000, 10000, 60000);
	l.body_budget = 16384;
	gf_grpc_server *s = start(l);
	/* Two clients hold 10 KB each, unfinished: the second is over budget. */
	struct tc a, b;
	tc_open(&a, "/t.S/Echo", 10000, 10000, 65535);
	tc_drive(&a, 300, NULL);
	tc_open(&b, "/t.S/Echo", 10000, 10005, 65535);
	tc_drive(&b, 3000, got_status);
	assert_int_equal(b.status, GF_GRPC_RESOURCE_EXHAUSTED);
	assert_non_null(strstr(b.msg, "at most 16384 bytes of requests are buffered at once"));
	a.allow = a.len; /* a finishes: it was within budget */
	nghttp2_session_resume_data(a.ng, a.id);
	tc_drive(&a, 3000, got_status);
	assert_int_equal(a.status, GF_GRPC_OK);
	tc_close_all(&a);
	tc_close_all(&b);
	/* Everything was given back: 15 KB fits again. */
	char big[15001];
	memset(big, 'y', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(unary(big, 3000, (char[256]){ 0 }, 256), GF_GRPC_OK);
	gf_grpc_server_stop(s);
}

/* Server streams are capped (here 2 of 4 slots) and their connections are
 * never evicted; with the other slots silent, a unary client is served. */
static void test_server_streams_capped_not_evicted(void **state)
{
	(void)state;
	struct gf_grpc_limits l = limits(60000, 10000, 60000);
	l.max_conns = 4;
	l.max_streams = 2;
	gf_grpc_server *s = start(l);
	struct tc w[3];
	for (int i = 0; i < 3; i++) {
		tc_open(&w[i], "/t.S/List", 0, 5, 65535);
		tc_drive(&w[i], 300, NULL);
	}
	assert_int_equal(w[0].status, -1); /* open streams: no status */
	assert_int_equal(w[1].status, -1);
	tc_drive(&w[2], 3000, got_status);
	assert_int_equal(w[2].status, GF_GRPC_RESOURCE_EXHAUSTED);
	assert_non_null(strstr(w[2].msg, "2 server streams are open"));
	tc_close_all(&w[2]);
	int silent[2] = { raw_connect(), raw_connect() };
	sleep_ms(300);
	char why[256] = "";
	int st = unary("served", 3000, why, sizeof(why));
	if (st != GF_GRPC_OK)
		fprintf(stderr, "status %d: %s\n", st, why);
	assert_int_equal(st, GF_GRPC_OK);
	for (int i = 0; i < 2; i++) {
		tc_drive(&w[i], 100, NULL);
		assert_false(w[i].eof); /* the stream holders were not evicted */
		tc_close_all(&w[i]);
	}
	assert_int_equal(is_closed(silent[0]) + is_closed(silent[1]), 1);
	close(silent[0]);
	close(silent[1]);
	gf_grpc_server_stop(s);
}

static void test_bad_limits(void **state)
{
	(void)state;
	struct gf_grpc_limits l = gf_grpc_default_limits;
	l.max_streams = l.max_conns;
	gf_grpc_server *s = NULL;
	char err[256];
	assert_int_equal(gf_grpc_server_start_limits(sock, methods, 2, &l, &s, err, sizeof(err)), GF_INVAL);
	assert_non_null(strstr(err, "max_streams out of range"));
	assert_null(s);
	l = gf_grpc_default_limits;
	l.max_conns = GF_GRPC_MAX_CONNS + 1;
	assert_int_equal(gf_grpc_server_start_limits(sock, methods, 2, &l, &s, err, sizeof(err)), GF_INVAL);
	assert_non_null(strstr(err, "max_conns out of range"));
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/gf-grpc-limits.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(sock, sizeof(sock), "%s/dp.sock", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(sock);
	rmdir(dir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_silent_clients_on_every_slot),
		cmocka_unit_test(test_first_request_deadline),
		cmocka_unit_test(test_request_deadline),
		cmocka_unit_test(test_idle_deadline),
		cmocka_unit_test(test_unread_responses_closed),
		cmocka_unit_test(test_body_budget),
		cmocka_unit_test(test_server_streams_capped_not_evicted),
		cmocka_unit_test(test_bad_limits),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
