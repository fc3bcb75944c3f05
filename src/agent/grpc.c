/*
 * agent/grpc.c - gRPC over HTTP/2 on a unix socket with libnghttp2 (see
 * grpc.h).
 *
 * Server: an accept thread; per connection a thread that owns one
 * nghttp2 server session and loops: poll(fd, GF_GRPC_STREAM_POLL_MS) ->
 * read -> nghttp2_session_mem_recv -> (requests complete: dispatch) ->
 * poll open server streams -> nghttp2_session_send (the frames it makes
 * are gathered and sent with one send(): session_send).  Per stream: the
 * request's :path, its body (capped at GF_GRPC_MAX_MESSAGE + 5; past it the
 * stream is answered RESOURCE_EXHAUSTED and its body discarded), and the
 * response bytes not yet handed to nghttp2.  The response body goes out
 * through a data provider reading that buffer; a unary call ends with the
 * trailers (grpc-status) once the buffer is drained; a server stream's
 * provider answers NGHTTP2_ERR_DEFERRED while it has nothing and is resumed
 * when the poll produced a message.  Errors before any message use the
 * "trailers-only" form: one HEADERS frame with the status, END_STREAM.
 * Nothing here parses protobuf: handlers get and give message bytes.
 *
 * Limits (grpc.h): each connection thread checks its deadlines every loop
 * (at most GF_GRPC_STREAM_POLL_MS apart) against CLOCK_MONOTONIC: no
 * request yet at header_ms after the accept -> close; a stream without its
 * END_STREAM at request_ms after its HEADERS -> DEADLINE_EXCEEDED + reset,
 * its body freed; unsent response bytes that did not shrink for request_ms
 * (a client that reads nothing or opens no flow-control window) or that
 * exceed two messages -> close; no open stream for idle_ms -> GOAWAY, close.
 * Sockets get SO_SNDTIMEO = request_ms, so a blocking send cannot hang a
 * thread either.  The accept thread evicts the longest-idle connection
 * without an open stream when every slot is taken.  Shared counters (open
 * streams per connection, the server's buffered request bytes, its open
 * server streams) are under the server's mutex; a connection thread marks
 * itself done under that mutex before closing its socket, so the accept
 * thread only ever shuts down a socket that is still open.
 *
 * Client (gf_grpc_call): connect, one nghttp2 client session, one request
 * with the framed message, read until the stream closes; status from the
 * trailers (or a trailers-only HEADERS).
 */
#include "agent/grpc.h"

#include <errno.h>
#include <nghttp2/nghttp2.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

const struct gf_grpc_limits gf_grpc_default_limits = {
	.max_conns = GF_GRPC_MAX_CONNS,
	.max_streams = 8,
	.header_ms = 5000,
	.request_ms = 10000,
	.idle_ms = 60000,
	.body_budget = 16u << 20,
};

#define MSG_FRAMED ((size_t)GF_GRPC_MAX_MESSAGE + 5)

struct stream {
	int32_t id;
	char path[128];
	struct gf_obuf body;  /* request, framed; charged to the budgets */
	int64_t t_begin;      /* ms, its HEADERS */
	bool too_big;         /* over a budget or late: body dropped, data ignored */
	bool dispatched;
	bool server_stream;   /* counted in the server's open server streams */
	bool reset_after;     /* answered early: RST_STREAM once the answer is out */
	const struct gf_grpc_method *m;
	struct gf_obuf out;   /* response bytes, framed, from off on not yet sent */
	size_t off;
	bool finished;        /* unary: no more data; send the trailers */
	bool deferred;        /* the data provider is waiting for out */
	uint64_t version;     /* server stream: handler's version */
	struct stream *next;
};

struct conn {
	struct gf_grpc_server *srv;
	int fd;
	pthread_t thread;
	bool used, done;       /* done: under srv->mu, before fd is closed */
	nghttp2_session *ng;
	struct stream *streams;
	struct gf_obuf *sink;  /* gf_grpc_serve_bytes: output goes here, not to fd */
	/* Frames of one nghttp2_session_send, sent together (session_send):
	 * one send() per response instead of one per frame. */
	uint8_t wbuf[8192];
	size_t wlen;
	/* Under srv->mu (read by the accept thread to pick an eviction): */
	unsigned nopen;        /* open streams */
	int64_t t_idle_since;  /* ms: accept, or the end of the last stream */
	/* The connection thread's own: */
	bool any_request;
	int64_t t_accept, t_progress; /* ms */
	size_t last_pending;   /* unsent response bytes at the last check */
	size_t body_bytes;     /* request bytes buffered on this connection */
};

struct gf_grpc_server {
	char path[108];
	int lfd;
	ino_t ino;
	dev_t dev;
	const struct gf_grpc_method *methods;
	size_t nmethods;
	struct gf_grpc_limits lim;
	pthread_t acceptor;
	volatile bool stopping;
	pthread_mutex_t mu;
	size_t body_bytes;     /* under mu: request bytes buffered, all connections */
	unsigned nstreams;     /* under mu: open server streams */
	struct conn conns[GF_GRPC_MAX_CONNS];
};

static int64_t now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* ---- framing ---- */

int gf_grpc_unframe(const uint8_t *body, size_t len, const uint8_t **msg, size_t *mlen, char *why, size_t whylen)
{
	if (len < 5) {
		snprintf(why, whylen, "gRPC message framing: %zu bytes, a message needs a 5-byte prefix", len);
		return GF_GRPC_INTERNAL;
	}
	if (body[0] != 0) {
		snprintf(why, whylen, "gRPC message framing: compressed flag %u, but no compression was negotiated",
			 body[0]);
		return GF_GRPC_INTERNAL;
	}
	size_t n = (size_t)body[1] << 24 | (size_t)body[2] << 16 | (size_t)body[3] << 8 | body[4];
	if (n != len - 5) {
		snprintf(why, whylen, "gRPC message framing: prefix says %zu bytes, the body holds %zu (one message per unary call)",
			 n, len - 5);
		return GF_GRPC_INTERNAL;
	}
	*msg = body + 5;
	*mlen = n;
	return GF_GRPC_OK;
}

static void frame_prefix(uint8_t p[5], size_t n)
{
	p[0] = 0;
	p[1] = (uint8_t)(n >> 24);
	p[2] = (uint8_t)(n >> 16);
	p[3] = (uint8_t)(n >> 8);
	p[4] = (uint8_t)n;
}

/* grpc-message is percent-encoded outside printable ASCII and '%'. */
static void pct_encode(char *out, size_t outlen, const char *in)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;
	for (; *in && o + 4 < outlen; in++) {
		unsigned char c = (unsigned char)*in;
		if (c >= 0x20 && c <= 0x7e && c != '%') {
			out[o++] = (char)c;
		} else {
			out[o++] = '%';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		}
	}
	out[o] = '\0';
}

#define NV(n, v) { (uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, strlen(v), NGHTTP2_NV_FLAG_NONE }

/* ---- server ---- */

static struct stream *find_stream(struct conn *c, int32_t id)
{
	for (struct stream *s = c->streams; s; s = s->next)
		if (s->id == id)
			return s;
	return NULL;
}

/* Blocking (SO_SNDTIMEO bounds it); false on an error. */
static bool send_all(int fd, const uint8_t *data, size_t len)
{
	size_t off = 0;
	while (off < len) {
		ssize_t w = send(fd, data + off, len - off, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return false;
		off += (size_t)w;
	}
	return true;
}

static bool flush_out(struct conn *c)
{
	bool ok = send_all(c->fd, c->wbuf, c->wlen);
	c->wlen = 0;
	return ok;
}

static ssize_t srv_send(nghttp2_session *ng, const uint8_t *data, size_t len, int flags, void *ud)
{
	struct conn *c = ud;
	(void)ng;
	(void)flags;
	if (c->sink)
		return gf_obuf_append(c->sink, data, len) == GF_OK ? (ssize_t)len : NGHTTP2_ERR_CALLBACK_FAILURE;
	if (c->wlen + len > sizeof(c->wbuf) && !flush_out(c))
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	if (len > sizeof(c->wbuf))
		return send_all(c->fd, data, len) ? (ssize_t)len : NGHTTP2_ERR_CALLBACK_FAILURE;
	memcpy(c->wbuf + c->wlen, data, len);
	c->wlen += len;
	return (ssize_t)len;
}

/* nghttp2_session_send, then what it queued in one send(); nonzero on an
 * error (of either). */
static int session_send(struct conn *c)
{
	int r = nghttp2_session_send(c->ng);
	if (c->wlen && !flush_out(c) && r == 0)
		r = NGHTTP2_ERR_CALLBACK_FAILURE;
	return r;
}

static int srv_begin_headers(nghttp2_session *ng, const nghttp2_frame *f, void *ud)
{
	struct conn *c = ud;
	(void)ng;
	if (f->hd.type != NGHTTP2_HEADERS || f->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;
	struct stream *s = calloc(1, sizeof(*s));
	if (!s)
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	s->id = f->hd.stream_id;
	s->t_begin = now_ms();
	gf_obuf_init(&s->body, MSG_FRAMED);
	gf_obuf_init(&s->out, 64u << 20);
	s->next = c->streams;
	c->streams = s;
	c->any_request = true;
	pthread_mutex_lock(&c->srv->mu);
	c->nopen++;
	pthread_mutex_unlock(&c->srv->mu);
	return 0;
}

/* Request bytes are charged to the connection (one message) and to the
 * server's budget before they are buffered. */
static bool charge_body(struct conn *c, size_t n)
{
	struct gf_grpc_server *srv = c->srv;
	bool ok = false;
	if (c->body_bytes + n > MSG_FRAMED)
		return false;
	pthread_mutex_lock(&srv->mu);
	if (srv->body_bytes + n <= srv->lim.body_budget) {
		srv->body_bytes += n;
		ok = true;
	}
	pthread_mutex_unlock(&srv->mu);
	if (ok)
		c->body_bytes += n;
	return ok;
}

static void uncharge_body(struct conn *c, size_t n)
{
	c->body_bytes -= n;
	pthread_mutex_lock(&c->srv->mu);
	c->srv->body_bytes -= n;
	pthread_mutex_unlock(&c->srv->mu);
}

static void drop_body(struct conn *c, struct stream *s)
{
	uncharge_body(c, s->body.len);
	gf_obuf_release(&s->body);
}

static int srv_header(nghttp2_session *ng, const nghttp2_frame *f, const uint8_t *name, size_t nlen,
		      const uint8_t *value, size_t vlen, uint8_t flags, void *ud)
{
	struct conn *c = ud;
	(void)ng;
	(void)flags;
	struct stream *s = find_stream(c, f->hd.stream_id);
	if (s && nlen == 5 && memcmp(name, ":path", 5) == 0) {
		size_t n = vlen < sizeof(s->path) - 1 ? vlen : sizeof(s->path) - 1;
		memcpy(s->path, value, n);
		s->path[n] = '\0';
	}
	return 0;
}

static int srv_data(nghttp2_session *ng, uint8_t flags, int32_t id, const uint8_t *data, size_t len, void *ud)
{
	struct conn *c = ud;
	(void)ng;
	(void)flags;
	struct stream *s = find_stream(c, id);
	if (!s || s->too_big)
		return 0;
	if (!charge_body(c, len)) {
		drop_body(c, s);
		s->too_big = true;
	} else if (gf_obuf_append(&s->body, data, len) != GF_OK) {
		uncharge_body(c, len);
		drop_body(c, s);
		s->too_big = true;
	}
	return 0;
}

static ssize_t srv_read(nghttp2_session *ng, int32_t id, uint8_t *buf, size_t len, uint32_t *flags,
			nghttp2_data_source *src, void *ud)
{
	struct stream *s = src->ptr;
	(void)ud;
	size_t left = s->out.len - s->off;
	if (left == 0) {
		if (!s->finished) {
			s->deferred = true;
			return NGHTTP2_ERR_DEFERRED;
		}
		*flags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
		nghttp2_nv tr[] = { NV("grpc-status", "0") };
		if (nghttp2_submit_trailer(ng, id, tr, 1) != 0)
			return NGHTTP2_ERR_CALLBACK_FAILURE;
		return 0;
	}
	size_t n = left < len ? left : len;
	memcpy(buf, s->out.data + s->off, n);
	s->off += n;
	if (s->off == s->out.len) { /* keep the buffer small on long streams */
		gf_obuf_reset(&s->out);
		s->off = 0;
	}
	return (ssize_t)n;
}

static void respond_status(struct conn *c, struct stream *s, int status, const char *msg)
{
	char st[16], enc[1024];
	snprintf(st, sizeof(st), "%d", status);
	pct_encode(enc, sizeof(enc), msg);
	nghttp2_nv hdrs[] = { NV(":status", "200"), NV("content-type", "application/grpc"), NV("grpc-status", st),
			      NV("grpc-message", enc) };
	nghttp2_submit_response(c->ng, s->id, hdrs, status == GF_GRPC_OK ? 3 : 4, NULL);
	s->dispatched = true;
}

static void start_data(struct conn *c, struct stream *s)
{
	nghttp2_nv hdrs[] = { NV(":status", "200"), NV("content-type", "application/grpc") };
	nghttp2_data_provider dp = { .source.ptr = s, .read_callback = srv_read };
	nghttp2_submit_response(c->ng, s->id, hdrs, 2, &dp);
	s->dispatched = true;
}

static bool append_framed(struct gf_obuf *dst, const struct gf_obuf *msg)
{
	uint8_t p[5];
	frame_prefix(p, msg->len);
	gf_obuf_append(dst, p, 5);
	gf_obuf_append(dst, msg->data ? msg->data : "", msg->len);
	return dst->err == GF_OK;
}

/* Poll a server stream's handler; queue what it produced. */
static void poll_stream(struct conn *c, struct stream *s)
{
	const uint8_t *req;
	size_t rlen;
	char why[128]; /* the reason is not reported from here */
	if (gf_grpc_unframe((const uint8_t *)s->body.data, s->body.len, &req, &rlen, why, sizeof(why)) != 0)
		return;
	struct gf_obuf msg;
	gf_obuf_init(&msg, GF_GRPC_MAX_MESSAGE);
	if (s->m->stream(s->m->ud, req, rlen, &s->version, &msg) && append_framed(&s->out, &msg) && s->deferred) {
		s->deferred = false;
		nghttp2_session_resume_data(c->ng, s->id);
	}
	gf_obuf_release(&msg);
}

/* Response bytes not yet handed to nghttp2, all streams. */
static size_t pending_out(const struct conn *c)
{
	size_t n = 0;
	for (const struct stream *s = c->streams; s; s = s->next)
		n += s->out.len - s->off;
	return n;
}

static bool count_server_stream(struct conn *c, struct stream *s)
{
	struct gf_grpc_server *srv = c->srv;
	pthread_mutex_lock(&srv->mu);
	bool ok = srv->nstreams < srv->lim.max_streams;
	if (ok)
		srv->nstreams++;
	pthread_mutex_unlock(&srv->mu);
	s->server_stream = ok;
	return ok;
}

static void dispatch(struct conn *c, struct stream *s)
{
	char msg[512] = "";
	const uint8_t *req;
	size_t rlen;

	if (s->too_big) {
		snprintf(msg, sizeof(msg),
			 "request over the limit: a message is at most %u bytes, and at most %zu bytes of requests are buffered at once",
			 GF_GRPC_MAX_MESSAGE, c->srv->lim.body_budget);
		respond_status(c, s, GF_GRPC_RESOURCE_EXHAUSTED, msg);
		return;
	}
	if (pending_out(c) > MSG_FRAMED) {
		snprintf(msg, sizeof(msg), "the client has not read %zu bytes of earlier responses", pending_out(c));
		respond_status(c, s, GF_GRPC_RESOURCE_EXHAUSTED, msg);
		drop_body(c, s);
		return;
	}
	for (size_t i = 0; i < c->srv->nmethods && !s->m; i++)
		if (strcmp(s->path, c->srv->methods[i].path) == 0)
			s->m = &c->srv->methods[i];
	if (!s->m) {
		snprintf(msg, sizeof(msg), "unknown method %.100s", s->path);
		respond_status(c, s, GF_GRPC_UNIMPLEMENTED, msg);
		return;
	}
	int st = gf_grpc_unframe((const uint8_t *)s->body.data, s->body.len, &req, &rlen, msg, sizeof(msg));
	if (st != GF_GRPC_OK) {
		respond_status(c, s, st, msg);
		drop_body(c, s);
		return;
	}
	if (s->m->stream) {
		if (!count_server_stream(c, s)) {
			snprintf(msg, sizeof(msg), "%u server streams are open already (the limit)", c->srv->lim.max_streams);
			respond_status(c, s, GF_GRPC_RESOURCE_EXHAUSTED, msg);
			drop_body(c, s);
			return;
		}
		start_data(c, s);
		poll_stream(c, s);
		return;
	}
	struct gf_obuf resp;
	gf_obuf_init(&resp, GF_GRPC_MAX_MESSAGE);
	st = s->m->unary(s->m->ud, req, rlen, &resp, msg, sizeof(msg));
	drop_body(c, s); /* req points into it: not used past here */
	if (st == GF_GRPC_OK && resp.err)
		st = GF_GRPC_RESOURCE_EXHAUSTED, snprintf(msg, sizeof(msg), "response too large");
	if (st != GF_GRPC_OK) {
		respond_status(c, s, st, msg);
	} else {
		append_framed(&s->out, &resp);
		s->finished = true;
		start_data(c, s);
	}
	gf_obuf_release(&resp);
}

static int srv_frame(nghttp2_session *ng, const nghttp2_frame *f, void *ud)
{
	struct conn *c = ud;
	(void)ng;
	if ((f->hd.type == NGHTTP2_HEADERS || f->hd.type == NGHTTP2_DATA) && (f->hd.flags & NGHTTP2_FLAG_END_STREAM)) {
		struct stream *s = find_stream(c, f->hd.stream_id);
		if (s && !s->dispatched)
			dispatch(c, s);
	}
	return 0;
}

/* An answer sent before the request ended (the request deadline): the
 * client is told to stop sending (RST_STREAM NO_ERROR, RFC 9113 8.1), which
 * also closes the stream here.  Submitted only once the answer is out:
 * nghttp2 sends RST_STREAM ahead of queued HEADERS, which it would drop. */
static int srv_frame_sent(nghttp2_session *ng, const nghttp2_frame *f, void *ud)
{
	struct stream *s = find_stream(ud, f->hd.stream_id);
	if (s && s->reset_after && f->hd.type == NGHTTP2_HEADERS && (f->hd.flags & NGHTTP2_FLAG_END_STREAM)) {
		s->reset_after = false;
		nghttp2_submit_rst_stream(ng, NGHTTP2_FLAG_NONE, s->id, NGHTTP2_NO_ERROR);
	}
	return 0;
}

static int srv_close(nghttp2_session *ng, int32_t id, uint32_t code, void *ud)
{
	struct conn *c = ud;
	(void)ng;
	(void)code;
	for (struct stream **p = &c->streams; *p; p = &(*p)->next) {
		if ((*p)->id == id) {
			struct stream *s = *p;
			*p = s->next;
			drop_body(c, s);
			gf_obuf_release(&s->out);
			pthread_mutex_lock(&c->srv->mu);
			if (s->server_stream)
				c->srv->nstreams--;
			if (--c->nopen == 0)
				c->t_idle_since = now_ms();
			pthread_mutex_unlock(&c->srv->mu);
			free(s);
			break;
		}
	}
	return 0;
}

/* The server side of one connection's nghttp2 session. */
static bool session_new(struct conn *c)
{
	nghttp2_session_callbacks *cb;
	if (nghttp2_session_callbacks_new(&cb) != 0)
		return false;
	nghttp2_session_callbacks_set_send_callback(cb, srv_send);
	nghttp2_session_callbacks_set_on_begin_headers_callback(cb, srv_begin_headers);
	nghttp2_session_callbacks_set_on_header_callback(cb, srv_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, srv_data);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, srv_frame);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, srv_close);
	nghttp2_session_callbacks_set_on_frame_send_callback(cb, srv_frame_sent);
	int r = nghttp2_session_server_new(&c->ng, cb, c);
	nghttp2_session_callbacks_del(cb);
	if (r != 0)
		return false;
	nghttp2_settings_entry iv[] = { { NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 100 },
					{ NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 1u << 20 } };
	nghttp2_submit_settings(c->ng, NGHTTP2_FLAG_NONE, iv, 2);
	return true;
}

static void session_end(struct conn *c)
{
	session_send(c);
	while (c->streams)
		srv_close(c->ng, c->streams->id, 0, c);
	nghttp2_session_del(c->ng);
}

void gf_grpc_serve_bytes(const struct gf_grpc_method *methods, size_t n, const uint8_t *in, size_t len,
			 struct gf_obuf *out)
{
	struct gf_grpc_server srv = { .methods = methods, .nmethods = n, .lim = gf_grpc_default_limits };
	struct conn c = { .srv = &srv, .fd = -1, .sink = out };
	pthread_mutex_init(&srv.mu, NULL);
	if (session_new(&c)) {
		if (nghttp2_session_mem_recv(c.ng, in, len) >= 0) {
			for (struct stream *s = c.streams; s; s = s->next)
				if (s->dispatched && s->m && s->m->stream)
					poll_stream(&c, s);
		}
		session_end(&c);
	}
	pthread_mutex_destroy(&srv.mu);
}

/* The request deadline of one stream: answered and reset, body freed. */
static void expire_stream(struct conn *c, struct stream *s)
{
	char msg[128];
	snprintf(msg, sizeof(msg), "request not complete within %u ms of its headers", c->srv->lim.request_ms);
	respond_status(c, s, GF_GRPC_DEADLINE_EXCEEDED, msg);
	drop_body(c, s);
	s->too_big = true;
	s->reset_after = true;
}

/* False when the connection is to be closed (see the top comment). */
static bool check_deadlines(struct conn *c, int64_t now)
{
	const struct gf_grpc_limits *lim = &c->srv->lim;
	if (!c->any_request)
		return now - c->t_accept <= lim->header_ms;
	for (struct stream *s = c->streams; s; s = s->next)
		if (!s->dispatched && now - s->t_begin > lim->request_ms)
			expire_stream(c, s);
	size_t pend = pending_out(c);
	if (pend == 0 || pend < c->last_pending)
		c->t_progress = now;
	c->last_pending = pend;
	if (pend > 2 * MSG_FRAMED || (pend > 0 && now - c->t_progress > lim->request_ms))
		return false;
	pthread_mutex_lock(&c->srv->mu);
	bool idle = c->nopen == 0 && now - c->t_idle_since > lim->idle_ms;
	pthread_mutex_unlock(&c->srv->mu);
	if (idle) {
		nghttp2_session_terminate_session(c->ng, NGHTTP2_NO_ERROR);
		session_send(c);
	}
	return !idle;
}

static void *conn_main(void *arg)
{
	struct conn *c = arg;
	uint8_t buf[16384];

	if (!session_new(c))
		goto out;
	while (!c->srv->stopping) {
		if (session_send(c) != 0)
			break;
		if (!nghttp2_session_want_read(c->ng) && !nghttp2_session_want_write(c->ng))
			break;
		if (!check_deadlines(c, now_ms()))
			break;
		struct pollfd p = { c->fd, POLLIN, 0 };
		int pr = poll(&p, 1, GF_GRPC_STREAM_POLL_MS);
		if (pr < 0 && errno != EINTR)
			break;
		if (pr > 0) {
			ssize_t n = recv(c->fd, buf, sizeof(buf), 0);
			if (n <= 0)
				break;
			/* A malformed frame: nghttp2 answers GOAWAY itself and
			 * the session ends; other connections are unaffected. */
			if (nghttp2_session_mem_recv(c->ng, buf, (size_t)n) < 0)
				break;
		}
		for (struct stream *s = c->streams; s; s = s->next)
			if (s->dispatched && s->m && s->m->stream)
				poll_stream(c, s);
	}
	session_end(c);
out:
	pthread_mutex_lock(&c->srv->mu);
	c->done = true;
	pthread_mutex_unlock(&c->srv->mu);
	close(c->fd);
	return NULL;
}

/* Joins finished connection threads (all: every one, shut down first). */
static void reap_conns(gf_grpc_server *s, bool all)
{
	for (unsigned i = 0; i < GF_GRPC_MAX_CONNS; i++) {
		pthread_mutex_lock(&s->mu);
		bool join = s->conns[i].used && (s->conns[i].done || all);
		if (join && !s->conns[i].done)
			shutdown(s->conns[i].fd, SHUT_RDWR);
		pthread_mutex_unlock(&s->mu);
		if (join) {
			pthread_join(s->conns[i].thread, NULL);
			s->conns[i].used = false;
		}
	}
}

/* Every slot taken: close the connection with no open stream that has been
 * idle longest and return its slot, or -1 when each holds a stream. */
static int evict_idlest(gf_grpc_server *s)
{
	int victim = -1;
	pthread_mutex_lock(&s->mu);
	for (unsigned i = 0; i < s->lim.max_conns; i++) {
		const struct conn *c = &s->conns[i];
		if (c->used && !c->done && c->nopen == 0 &&
		    (victim < 0 || c->t_idle_since < s->conns[victim].t_idle_since))
			victim = (int)i;
	}
	if (victim >= 0)
		shutdown(s->conns[victim].fd, SHUT_RDWR);
	pthread_mutex_unlock(&s->mu);
	if (victim >= 0) {
		pthread_join(s->conns[victim].thread, NULL);
		s->conns[victim].used = false;
	}
	return victim;
}

static void *accept_main(void *arg)
{
	gf_grpc_server *s = arg;
	while (!s->stopping) {
		struct pollfd p = { s->lfd, POLLIN, 0 };
		if (poll(&p, 1, 200) <= 0)
			continue;
		int fd = accept(s->lfd, NULL, NULL);
		if (fd < 0)
			continue;
		reap_conns(s, false);
		int slot = -1;
		for (unsigned i = 0; i < s->lim.max_conns && slot < 0; i++)
			if (!s->conns[i].used)
				slot = (int)i;
		if (slot < 0)
			slot = evict_idlest(s);
		if (slot < 0) {
			close(fd); /* every slot holds a stream in progress */
			continue;
		}
		struct timeval tv = { .tv_sec = s->lim.request_ms / 1000,
				      .tv_usec = (suseconds_t)(s->lim.request_ms % 1000) * 1000 };
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		struct conn *c = &s->conns[slot];
		memset(c, 0, sizeof(*c));
		c->srv = s;
		c->fd = fd;
		c->t_accept = c->t_idle_since = c->t_progress = now_ms();
		c->used = true;
		if (pthread_create(&c->thread, NULL, conn_main, c) != 0) {
			close(fd);
			c->used = false;
		}
	}
	return NULL;
}

static bool limits_ok(const struct gf_grpc_limits *l, char *err, size_t errlen)
{
	const char *bad = l->max_conns < 1 || l->max_conns > GF_GRPC_MAX_CONNS ? "max_conns"
			  : l->max_streams >= l->max_conns			  ? "max_streams"
			  : l->header_ms == 0					  ? "header_ms"
			  : l->request_ms == 0					  ? "request_ms"
			  : l->idle_ms == 0					  ? "idle_ms"
			  : l->body_budget == 0					  ? "body_budget"
										  : NULL;
	if (bad)
		snprintf(err, errlen,
			 "gRPC server limits: %s out of range (max_conns 1..%u, max_streams < max_conns, times and body_budget > 0)",
			 bad, GF_GRPC_MAX_CONNS);
	return !bad;
}

gf_err gf_grpc_server_start(const char *path, const struct gf_grpc_method *methods, size_t n,
			    gf_grpc_server **out, char *err, size_t errlen)
{
	return gf_grpc_server_start_limits(path, methods, n, NULL, out, err, errlen);
}

gf_err gf_grpc_server_start_limits(const char *path, const struct gf_grpc_method *methods, size_t n,
				   const struct gf_grpc_limits *lim, gf_grpc_server **out, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (!lim)
		lim = &gf_grpc_default_limits;
	if (!limits_ok(lim, err, errlen))
		return GF_INVAL;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "%s: socket path longer than %zu bytes", path, sizeof(sa.sun_path) - 1);
		return GF_INVAL;
	}
	gf_grpc_server *s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return GF_NOMEM;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	memcpy(s->path, path, strlen(path) + 1);
	s->methods = methods;
	s->nmethods = n;
	s->lim = *lim;
	pthread_mutex_init(&s->mu, NULL);
	unlink(path);
	s->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct stat st;
	if (s->lfd < 0 || bind(s->lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(s->lfd, 16) != 0 ||
	    stat(path, &st) != 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	s->ino = st.st_ino;
	s->dev = st.st_dev;
	if (pthread_create(&s->acceptor, NULL, accept_main, s) != 0) {
		snprintf(err, errlen, "%s: cannot start a thread", path);
		goto fail;
	}
	*out = s;
	return GF_OK;
fail:
	if (s->lfd >= 0)
		close(s->lfd);
	unlink(path);
	free(s);
	return GF_IO;
}

void gf_grpc_server_stop(gf_grpc_server *s)
{
	if (!s)
		return;
	s->stopping = true;
	pthread_join(s->acceptor, NULL);
	reap_conns(s, true);
	close(s->lfd);
	if (gf_grpc_server_socket_alive(s))
		unlink(s->path);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

bool gf_grpc_server_socket_alive(const gf_grpc_server *s)
{
	struct stat st;
	return stat(s->path, &st) == 0 && st.st_ino == s->ino && st.st_dev == s->dev;
}

/* ---- client ---- */

struct call {
	int fd;
	int32_t id;
	const uint8_t *req;
	size_t reqlen, sent;
	struct gf_obuf body;
	int status;        /* -1 until grpc-status is seen */
	char msg[512];
	bool closed;
};

static ssize_t cli_send(nghttp2_session *ng, const uint8_t *data, size_t len, int flags, void *ud)
{
	struct call *k = ud;
	(void)ng;
	(void)flags;
	size_t off = 0;
	while (off < len) {
		ssize_t w = send(k->fd, data + off, len - off, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return NGHTTP2_ERR_CALLBACK_FAILURE;
		off += (size_t)w;
	}
	return (ssize_t)len;
}

static ssize_t cli_read(nghttp2_session *ng, int32_t id, uint8_t *buf, size_t len, uint32_t *flags,
			nghttp2_data_source *src, void *ud)
{
	struct call *k = ud;
	(void)ng;
	(void)id;
	(void)src;
	size_t left = k->reqlen - k->sent;
	size_t n = left < len ? left : len;
	memcpy(buf, k->req + k->sent, n);
	k->sent += n;
	if (k->sent == k->reqlen)
		*flags |= NGHTTP2_DATA_FLAG_EOF;
	return (ssize_t)n;
}

static int cli_header(nghttp2_session *ng, const nghttp2_frame *f, const uint8_t *name, size_t nlen,
		      const uint8_t *value, size_t vlen, uint8_t flags, void *ud)
{
	struct call *k = ud;
	(void)ng;
	(void)f;
	(void)flags;
	if (nlen == 11 && memcmp(name, "grpc-status", 11) == 0) {
		int v = 0;
		for (size_t i = 0; i < vlen && i < 4; i++)
			v = v * 10 + (value[i] >= '0' && value[i] <= '9' ? value[i] - '0' : 0);
		k->status = v;
	} else if (nlen == 12 && memcmp(name, "grpc-message", 12) == 0) {
		size_t n = vlen < sizeof(k->msg) - 1 ? vlen : sizeof(k->msg) - 1;
		memcpy(k->msg, value, n);
		k->msg[n] = '\0';
	}
	return 0;
}

static int cli_data(nghttp2_session *ng, uint8_t flags, int32_t id, const uint8_t *data, size_t len, void *ud)
{
	struct call *k = ud;
	(void)ng;
	(void)flags;
	if (id == k->id)
		gf_obuf_append(&k->body, data, len);
	return 0;
}

static int cli_close(nghttp2_session *ng, int32_t id, uint32_t code, void *ud)
{
	struct call *k = ud;
	(void)ng;
	(void)code;
	if (id == k->id)
		k->closed = true;
	return 0;
}

static long ms_since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* A whole length-prefixed message is in the body. */
static bool frame_done(const struct gf_obuf *b)
{
	if (b->len < 5)
		return false;
	const uint8_t *p = (const uint8_t *)b->data;
	size_t n = (size_t)p[1] << 24 | (size_t)p[2] << 16 | (size_t)p[3] << 8 | p[4];
	return b->len >= n + 5;
}

/* first: a server stream; return once its first message is in. */
static int call(const char *path, const char *method, const uint8_t *req, size_t len, struct gf_obuf *resp,
		unsigned timeout_ms, bool first, char *msg, size_t msglen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct call k = { .fd = -1, .status = -1 };
	nghttp2_session *ng = NULL;
	nghttp2_session_callbacks *cb = NULL;
	uint8_t *framed = NULL, buf[16384];
	int st = GF_GRPC_UNAVAILABLE;
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	gf_obuf_init(&k.body, GF_GRPC_MAX_MESSAGE + 5);
	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(msg, msglen, "%s: socket path too long", path);
		goto out;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	k.fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (k.fd < 0 || connect(k.fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		snprintf(msg, msglen, "%s: connect: %s", path, strerror(errno));
		goto out;
	}
	framed = malloc(len + 5);
	if (!framed || nghttp2_session_callbacks_new(&cb) != 0) {
		snprintf(msg, msglen, "out of memory");
		goto out;
	}
	frame_prefix(framed, len);
	if (len)
		memcpy(framed + 5, req, len);
	k.req = framed;
	k.reqlen = len + 5;
	nghttp2_session_callbacks_set_send_callback(cb, cli_send);
	nghttp2_session_callbacks_set_on_header_callback(cb, cli_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, cli_data);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, cli_close);
	if (nghttp2_session_client_new(&ng, cb, &k) != 0) {
		snprintf(msg, msglen, "out of memory");
		goto out;
	}
	nghttp2_submit_settings(ng, NGHTTP2_FLAG_NONE, NULL, 0);
	nghttp2_nv hdrs[] = { NV(":method", "POST"), NV(":scheme", "http"), NV(":path", method),
			      NV(":authority", "localhost"), NV("content-type", "application/grpc"),
			      NV("te", "trailers") };
	nghttp2_data_provider dp = { .read_callback = cli_read };
	k.id = nghttp2_submit_request(ng, NULL, hdrs, sizeof(hdrs) / sizeof(hdrs[0]), &dp, NULL);
	if (k.id < 0) {
		snprintf(msg, msglen, "nghttp2: %s", nghttp2_strerror(k.id));
		goto out;
	}
	while (!k.closed && !(first && frame_done(&k.body))) {
		if (nghttp2_session_send(ng) != 0)
			break;
		long left = (long)timeout_ms - ms_since(&t0);
		if (left <= 0) {
			snprintf(msg, msglen, "%s %s: no answer within %u ms", path, method, timeout_ms);
			goto out;
		}
		struct pollfd p = { k.fd, POLLIN, 0 };
		if (poll(&p, 1, (int)left) <= 0)
			continue;
		ssize_t n = recv(k.fd, buf, sizeof(buf), 0);
		if (n <= 0 || nghttp2_session_mem_recv(ng, buf, (size_t)n) < 0)
			break;
	}
	if (first && frame_done(&k.body)) {
		k.status = GF_GRPC_OK;
		k.closed = true;
		k.body.len = 5 + ((size_t)((const uint8_t *)k.body.data)[1] << 24 |
				  (size_t)((const uint8_t *)k.body.data)[2] << 16 |
				  (size_t)((const uint8_t *)k.body.data)[3] << 8 | ((const uint8_t *)k.body.data)[4]);
	}
	if (!k.closed || k.status < 0) {
		snprintf(msg, msglen, "%s %s: connection ended without a gRPC status", path, method);
		goto out;
	}
	st = k.status;
	snprintf(msg, msglen, "%s", first ? "" : k.msg);
	if (st == GF_GRPC_OK && resp) {
		const uint8_t *m;
		size_t mlen;
		int fs = gf_grpc_unframe((const uint8_t *)k.body.data, k.body.len, &m, &mlen, msg, msglen);
		if (fs != GF_GRPC_OK)
			st = fs;
		else
			gf_obuf_append(resp, m, mlen);
	}
out:
	if (ng)
		nghttp2_session_del(ng);
	if (cb)
		nghttp2_session_callbacks_del(cb);
	free(framed);
	if (k.fd >= 0)
		close(k.fd);
	gf_obuf_release(&k.body);
	return st;
}

int gf_grpc_call(const char *path, const char *method, const uint8_t *req, size_t len, struct gf_obuf *resp,
		 unsigned timeout_ms, char *msg, size_t msglen)
{
	return call(path, method, req, len, resp, timeout_ms, false, msg, msglen);
}

int gf_grpc_call_first(const char *path, const char *method, const uint8_t *req, size_t len, struct gf_obuf *resp,
		       unsigned timeout_ms, char *msg, size_t msglen)
{
	return call(path, method, req, len, resp, timeout_ms, true, msg, msglen);
}
