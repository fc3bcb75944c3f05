/*
 * http/server.c - route table and bounded request/response handling on
 * libmicrohttpd (see server.h for the contract).
 *
 * libmicrohttpd calls the access handler several times per request: once
 * with the headers (we allocate the per-request state and, for an unknown
 * route, answer immediately), then with body chunks (appended to a
 * bounded buffer; past the cap we remember 413 and discard the rest),
 * then once with *upload_data_size == 0 (we run the handler and queue the
 * response).  The completion callback frees the per-request state, so a
 * request never leaks whether it ends normally or the client disconnects.
 *
 * Route lookup is a linear scan: tables have a handful of entries.  A
 * path ending in '*' is a prefix route (server.h).
 *
 * TLS is libmicrohttpd's GnuTLS mode.  Client certificates: with
 * MHD_OPTION_HTTPS_MEM_TRUST libmicrohttpd asks every client for a
 * certificate (GNUTLS_CERT_REQUEST: optional) and loads the bundle into
 * the session's credentials; gf_http_request_peer_cn() verifies the chain
 * with gnutls_certificate_verify_peers() for the key purpose clientAuth on
 * each call (a signature check, tens of microseconds) and reads the leaf's
 * CN.  require_client_cert makes that check at the headers, for every
 * request, before any body byte is read (403 otherwise).
 *
 * Memory budget (server.h): one counter per server, mem_in_use <= mem_budget
 * always.  A buffer is charged BEFORE it is allocated or grown (a
 * compare-and-swap that fails when the growth would pass the budget) and
 * given back when freed: request bodies when the handler has run (or the
 * request ends), responses from libmicrohttpd's free callback once sent.
 * Request bodies grow as bytes arrive: capacity max(needed, 2 x current,
 * 16 KiB), never over the announced Content-Length or max_body (+1 for the
 * NUL), so a claimed length costs nothing until it is sent and a body
 * holds at most twice its bytes.
 *
 * Deadlines (server.h): libmicrohttpd's connection timeout is an idle
 * timeout, which one byte a second resets, and it has no call to close a
 * connection.  So every connection is tracked from the notify-connection
 * callback (STARTED .. CLOSED; libmicrohttpd calls CLOSED before it closes
 * the socket) with an absolute deadline: accept + header_timeout_s; when
 * the headers are in (first access-handler call) request_timeout_s from
 * then; when the request completes, header_timeout_s again for the next
 * request on a kept-alive connection.  A sweeper thread sleeps until the
 * earliest deadline (woken when a new one is earlier) and shuts down the
 * socket of each connection past its deadline: libmicrohttpd then sees the
 * end of the stream, closes the connection and frees it.  The list and the
 * descriptors are only touched under the server's mutex, and CLOSED
 * removes an entry under it before the descriptor is closed, so a
 * descriptor number reused by a new connection is never shut down by
 * mistake.  A sweep is O(open connections) <= max_conns.
 *
 * Deadlines before the request (server.h): accept (or the end of the
 * previous request) + line_timeout_s until the request line is in
 * (libmicrohttpd's URI log callback, which it calls as soon as that line is
 * parsed), + header_timeout_s until the headers are.
 *
 * Slots kept for complete requests (server.h): every tracked connection has
 * a phase: waiting for its request line, for its headers, receiving its
 * body (these three are "pending"), or served (the request is complete: the
 * handler runs or the response is being sent).  npending counts the
 * pending ones; when an accept or a kept-alive connection's return to
 * waiting (connection c) makes it pass max_conns - reserved_conns, another
 * pending connection is cut (the same shutdown as a deadline): one from c's
 * own client address if it has one, else any; among those, one still
 * without headers before one sending a body, then the one pending longest.
 * So pending connections never hold more than max_conns - reserved_conns
 * slots: libmicrohttpd always has a slot to accept a new client (unless
 * reserved_conns requests are being served at once); a client address that
 * keeps opening slow connections cuts its own, and a probe or a scrape from
 * another address, which sends its request at once, is cut only when an
 * address with no other pending connection arrives (it would take as many
 * addresses as slots to starve it).  The choice is O(open connections)
 * under the mutex, per accept beyond the cap only.
 *
 * Not HTTP: libmicrohttpd answers a malformed request line that has a
 * method and a target with 400, an unknown HTTP version with 505, and
 * closes the connection without an answer when the first line has no space
 * (one word, or binary bytes); input that never completes a line (e.g. a
 * TLS ClientHello sent to a plain-HTTP port) is cut at the request-line deadline.
 * Those answers come from libmicrohttpd (its HTML bodies), not from us.
 */
#include "http/server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#define DEFAULT_MEM_BUDGET ((size_t)128 << 20)
#define DEFAULT_LINE_TIMEOUT_S 3
#define DEFAULT_HEADER_TIMEOUT_S 5
#define DEFAULT_REQUEST_TIMEOUT_S 60
#define BODY_MIN_ALLOC ((size_t)16 << 10)
#define NO_DEADLINE INT64_MAX

/* Where a connection is in its current request. */
enum phase {
	PH_LINE,    /* waiting for the request line (after accept, or between requests) */
	PH_HEADERS, /* request line in, headers not yet */
	PH_BODY,    /* headers in, the body still arriving */
	PH_SERVED,  /* request complete: handler, response */
	PH_CUT,     /* cut (deadline or eviction): closing */
};
#define PENDING(ph) ((ph) <= PH_BODY)

/* A connection being watched for its deadline (socket_context). */
struct conn {
	struct conn *prev, *next;
	int fd;
	int64_t deadline; /* CLOCK_MONOTONIC ns; NO_DEADLINE once cut */
	int64_t since;    /* accept, or the end of the previous request */
	enum phase ph;
	unsigned char addr[16]; /* the client's address (IPv4: 4 bytes, IPv6: 16) */
	size_t addr_len;        /* 0: unknown */
};

struct gf_http_server {
	struct MHD_Daemon *d;
	struct gf_http_config cfg;
	uint16_t port;
	char *tls_cert, *tls_key, *tls_ca; /* our copies of the PEM text */

	_Atomic size_t mem_in_use;       /* <= cfg.mem_budget */
	_Atomic uint64_t over_budget;

	pthread_mutex_t mu;              /* guards everything below */
	pthread_cond_t wake;             /* the sweeper's: stop, or an earlier deadline */
	struct conn *conns;              /* open connections */
	unsigned nconns;
	unsigned npending;               /* of them in PH_LINE, PH_HEADERS, PH_BODY */
	uint64_t evictions;              /* pending connections cut to keep the reserve */
	int64_t next_sweep;              /* when the sweeper plans to wake */
	uint64_t deadline_cuts;
	bool stop;
	bool sweeper_running;
	pthread_t sweeper;
};

/* Per-request state (con_cls). */
struct req_state {
	const struct gf_http_route *route; /* NULL: answer with status below */
	unsigned status;                   /* pre-decided error status, 0 = none */
	char msg[320];
	char *body;                        /* NUL-terminated when non-NULL */
	size_t len, alloc;                 /* alloc is what is charged to the budget */
	size_t limit;                      /* Content-Length when announced, else max_body */
};

/* A response body held by libmicrohttpd until sent (free callback's cls). */
struct held {
	gf_http_server *s;
	char *data;
	size_t charged;
};

#define TEXT_PLAIN "text/plain; charset=utf-8"

/* ---- clock and budget ------------------------------------------------------ */

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Charge n bytes; false (nothing charged) when they do not fit. */
static bool budget_take(gf_http_server *s, size_t n)
{
	size_t cur = atomic_load(&s->mem_in_use);
	do {
		if (n > s->cfg.mem_budget - cur)
			return false;
	} while (!atomic_compare_exchange_weak(&s->mem_in_use, &cur, cur + n));
	return true;
}

static void budget_give(gf_http_server *s, size_t n)
{
	atomic_fetch_sub(&s->mem_in_use, n);
}

static void body_free(gf_http_server *s, struct req_state *st)
{
	free(st->body);
	budget_give(s, st->alloc);
	st->body = NULL;
	st->len = st->alloc = 0;
}

/* Room for n more bytes and the NUL.  Errors: GF_TOOBIG past st->limit,
 * GF_UNAVAILABLE when the growth does not fit in the budget, GF_NOMEM. */
static gf_err body_reserve(gf_http_server *s, struct req_state *st, size_t n)
{
	if (n > st->limit - st->len)
		return GF_TOOBIG;
	size_t need = st->len + n + 1;
	if (need <= st->alloc)
		return GF_OK;
	size_t want = st->alloc * 2 > need ? st->alloc * 2 : need;
	if (want < BODY_MIN_ALLOC)
		want = BODY_MIN_ALLOC;
	if (want > st->limit + 1)
		want = st->limit + 1;
	if (!budget_take(s, want - st->alloc))
		return GF_UNAVAILABLE;
	char *p = realloc(st->body, want);
	if (!p) {
		budget_give(s, want - st->alloc);
		return GF_NOMEM;
	}
	st->body = p;
	st->alloc = want;
	return GF_OK;
}

/* ---- responses ---------------------------------------------------------------- */

static void held_free(void *cls)
{
	struct held *h = cls;
	free(h->data);
	budget_give(h->s, h->charged);
	free(h);
}

/* Queue data (ownership taken).  h: the budget record of data, or NULL
 * for an uncharged small text. */
static enum MHD_Result queue_buf(struct MHD_Connection *c, unsigned status, const char *ctype,
				 char *data, size_t len, struct held *h)
{
	struct MHD_Response *r =
		h ? MHD_create_response_from_buffer_with_free_callback_cls(len, data, held_free, h)
		  : MHD_create_response_from_buffer_with_free_callback(
			    len, data ? data : (char *)"", data ? free : NULL);
	if (!r) {
		if (h)
			held_free(h);
		else
			free(data);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	if (status == 503)
		MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, "1");
	enum MHD_Result ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result queue_text(struct MHD_Connection *c, unsigned status, const char *msg)
{
	size_t n = strlen(msg);
	char *p = malloc(n + 1);
	if (!p)
		return MHD_NO;
	memcpy(p, msg, n + 1);
	return queue_buf(c, status, TEXT_PLAIN, p, n, NULL);
}

static void set_busy(gf_http_server *s, struct req_state *st, const char *method, const char *url)
{
	atomic_fetch_add(&s->over_budget, 1);
	st->status = 503;
	snprintf(st->msg, sizeof(st->msg),
		 "%s %.100s: server busy: request and response bodies in flight would pass "
		 "%zu bytes; retry\n",
		 method, url, s->cfg.mem_budget);
}

static const struct gf_http_route *find_route(const struct gf_http_server *s, const char *method,
					      const char *path, unsigned *status)
{
	bool path_known = false;
	bool head = !strcmp(method, "HEAD");
	for (size_t i = 0; i < s->cfg.nroutes; i++) {
		const struct gf_http_route *r = &s->cfg.routes[i];
		size_t plen = strlen(r->path);
		if (plen && r->path[plen - 1] == '*') {
			if (strncmp(r->path, path, plen - 1))
				continue;
		} else if (strcmp(r->path, path)) {
			continue;
		}
		path_known = true;
		if (!strcmp(r->method, method) || (head && !strcmp(r->method, "GET")))
			return r;
	}
	*status = path_known ? 405 : 404;
	return NULL;
}

/* ---- deadlines ------------------------------------------------------------------- */

/* Set c's deadline to the absolute time at (ns); wake the sweeper when
 * that is earlier than its plan.  Caller holds s->mu. */
static void set_deadline_at_locked(gf_http_server *s, struct conn *c, int64_t at)
{
	c->deadline = at;
	if (c->deadline < s->next_sweep) {
		s->next_sweep = c->deadline;
		pthread_cond_signal(&s->wake);
	}
}

static struct conn *conn_of(struct MHD_Connection *mc)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return ci ? ci->socket_context : NULL;
}

/* Cut c now (the sweeper's way: libmicrohttpd reads end-of-stream and closes it). */
static void cut_locked(gf_http_server *s, struct conn *c)
{
	shutdown(c->fd, SHUT_RDWR);
	c->deadline = NO_DEADLINE;
	if (PENDING(c->ph))
		s->npending--;
	c->ph = PH_CUT;
}

/* Is a a better victim than b (b may be NULL)?  One still without headers
 * before one sending a body, then the one pending longest. */
static bool worse(const struct conn *a, const struct conn *b)
{
	if (!b)
		return true;
	if ((a->ph < PH_BODY) != (b->ph < PH_BODY))
		return a->ph < PH_BODY;
	return a->since < b->since;
}

/* Keep npending <= max_conns - reserved_conns after c became pending: cut
 * another pending connection from c's own address if there is one, else
 * any other (see worse()).  A client address that opens more pending
 * connections thus cuts its own, never a health check from elsewhere.
 * Caller holds s->mu. */
static void keep_reserve_locked(gf_http_server *s, const struct conn *c)
{
	while (s->npending > s->cfg.max_conns - s->cfg.reserved_conns) {
		struct conn *same = NULL, *any = NULL;
		for (struct conn *o = s->conns; o; o = o->next) {
			if (o == c || !PENDING(o->ph))
				continue;
			if (c->addr_len && o->addr_len == c->addr_len && !memcmp(o->addr, c->addr, c->addr_len) &&
			    worse(o, same))
				same = o;
			if (worse(o, any))
				any = o;
		}
		struct conn *victim = same ? same : any;
		if (!victim)
			return;
		cut_locked(s, victim);
		s->evictions++;
	}
}

/* c moves to phase ph (a later one, or PH_LINE for the next request);
 * deadlines follow (server.h).  Caller holds s->mu. */
static void enter_locked(gf_http_server *s, struct conn *c, enum phase ph)
{
	if (c->ph == PH_CUT)
		return;
	bool was = PENDING(c->ph);
	int64_t now = now_ns(), sec = 1000000000;
	unsigned line = s->cfg.line_timeout_s < s->cfg.header_timeout_s ? s->cfg.line_timeout_s
									 : s->cfg.header_timeout_s;
	c->ph = ph;
	switch (ph) {
	case PH_LINE:
		c->since = now;
		set_deadline_at_locked(s, c, now + (int64_t)line * sec);
		break;
	case PH_HEADERS:
		set_deadline_at_locked(s, c, c->since + (int64_t)s->cfg.header_timeout_s * sec);
		break;
	case PH_BODY:
		set_deadline_at_locked(s, c, now + (int64_t)s->cfg.request_timeout_s * sec);
		break;
	case PH_SERVED:
	case PH_CUT:
		break;
	}
	if (was && !PENDING(ph))
		s->npending--;
	else if (!was && PENDING(ph)) {
		s->npending++;
		keep_reserve_locked(s, c);
	}
}

static void enter(gf_http_server *s, struct MHD_Connection *mc, enum phase ph)
{
	struct conn *c = conn_of(mc);
	if (!c)
		return;
	pthread_mutex_lock(&s->mu);
	enter_locked(s, c, ph);
	pthread_mutex_unlock(&s->mu);
}

/* libmicrohttpd's URI log callback: the request line is in. */
static void *on_request_line(void *cls, const char *uri, struct MHD_Connection *mc)
{
	(void)uri;
	enter(cls, mc, PH_HEADERS);
	return NULL;
}

static void on_connection(void *cls, struct MHD_Connection *mc, void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	gf_http_server *s = cls;
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);
		struct conn *c = calloc(1, sizeof(*c));
		if (!c || !ci) {
			/* Untracked: libmicrohttpd's idle timeout still applies. */
			free(c);
			return;
		}
		c->fd = ci->connect_fd;
		c->ph = PH_SERVED; /* not pending until enter_locked() below */
		const union MHD_ConnectionInfo *ai =
			MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		if (ai && ai->client_addr && ai->client_addr->sa_family == AF_INET) {
			memcpy(c->addr, &((const struct sockaddr_in *)(const void *)ai->client_addr)->sin_addr, 4);
			c->addr_len = 4;
		} else if (ai && ai->client_addr && ai->client_addr->sa_family == AF_INET6) {
			memcpy(c->addr, &((const struct sockaddr_in6 *)(const void *)ai->client_addr)->sin6_addr, 16);
			c->addr_len = 16;
		}
		pthread_mutex_lock(&s->mu);
		c->next = s->conns;
		if (s->conns)
			s->conns->prev = c;
		s->conns = c;
		s->nconns++;
		enter_locked(s, c, PH_LINE);
		pthread_mutex_unlock(&s->mu);
		*socket_context = c;
	} else if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
		struct conn *c = *socket_context;
		if (!c)
			return;
		pthread_mutex_lock(&s->mu);
		if (c->prev)
			c->prev->next = c->next;
		else
			s->conns = c->next;
		if (c->next)
			c->next->prev = c->prev;
		s->nconns--;
		if (PENDING(c->ph))
			s->npending--;
		pthread_mutex_unlock(&s->mu);
		free(c);
		*socket_context = NULL;
	}
}

static void *sweeper_main(void *arg)
{
	gf_http_server *s = arg;
	pthread_mutex_lock(&s->mu);
	while (!s->stop) {
		int64_t now = now_ns(), next = NO_DEADLINE;
		for (struct conn *c = s->conns; c; c = c->next) {
			if (c->deadline <= now) {
				cut_locked(s, c);
				s->deadline_cuts++;
			} else if (c->deadline < next) {
				next = c->deadline;
			}
		}
		s->next_sweep = next;
		if (next == NO_DEADLINE) {
			pthread_cond_wait(&s->wake, &s->mu);
		} else {
			struct timespec ts = { (time_t)(next / 1000000000), (long)(next % 1000000000) };
			int r;
			do
				r = pthread_cond_timedwait(&s->wake, &s->mu, &ts);
			while (r == EINTR);
		}
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

/* ---- requests ---------------------------------------------------------------------- */

/* MHD_KeyValueIteratorN: stop at the first argument whose name or value
 * holds a NUL byte (its decoded length is longer than its C string). */
static enum MHD_Result find_nul(void *cls, enum MHD_ValueKind kind, const char *key,
				size_t key_size, const char *value, size_t value_size)
{
	(void)kind;
	if (strlen(key) != key_size || (value && strlen(value) != value_size)) {
		*(const char **)cls = key;
		return MHD_NO;
	}
	return MHD_YES;
}

/* The headers are in: decide what we can before any body byte. */
static enum MHD_Result on_headers(gf_http_server *s, struct MHD_Connection *c, const char *url,
				  const char *method, struct req_state *st)
{
	enter(s, c, PH_BODY);
	st->limit = s->cfg.max_body;
	st->route = find_route(s, method, url, &st->status);
	if (st->route && s->cfg.require_client_cert &&
	    !gf_http_request_peer_cn(&(struct gf_http_request){ .conn_ = c }, NULL, 0)) {
		st->route = NULL;
		st->status = 403;
	}
	if (!st->route) {
		snprintf(st->msg, sizeof(st->msg), "%s %.100s: %s\n", method, url,
			 st->status == 404   ? "no such path"
			 : st->status == 403 ? "client certificate required"
					     : "method not allowed");
		return MHD_YES;
	}
	const char *bad = NULL;
	MHD_get_connection_values_n(c, MHD_GET_ARGUMENT_KIND, find_nul, &bad);
	if (bad) {
		st->status = 400;
		snprintf(st->msg, sizeof(st->msg),
			 "%.20s %.100s: query argument '%.60s' holds a NUL byte (%%00)\n", method, url,
			 bad);
		return MHD_YES;
	}
	/* libmicrohttpd has checked the syntax of Content-Length (400 otherwise). */
	const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	char *end = NULL;
	errno = 0;
	unsigned long long want = cl ? strtoull(cl, &end, 10) : 0;
	if (!cl || end == cl || *end || errno)
		return MHD_YES;
	if (want > s->cfg.max_body) {
		/* Answer now: the body is never read (libmicrohttpd closes the
		 * connection after this answer). */
		snprintf(st->msg, sizeof(st->msg), "%s %.100s: request body exceeds %zu bytes\n",
			 method, url, s->cfg.max_body);
		return queue_text(c, 413, st->msg);
	}
	st->limit = (size_t)want;
	if (want && body_reserve(s, st, (size_t)want < BODY_MIN_ALLOC ? (size_t)want : 0) ==
			    GF_UNAVAILABLE) {
		set_busy(s, st, method, url);
		return queue_text(c, 503, st->msg);
	}
	return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version,
				  const char *upload_data, size_t *upload_size, void **con_cls)
{
	struct gf_http_server *s = cls;
	struct req_state *st = *con_cls;
	(void)version;

	if (!st) {
		st = calloc(1, sizeof(*st));
		if (!st)
			return MHD_NO;
		*con_cls = st;
		return on_headers(s, c, url, method, st);
	}
	if (*upload_size) {
		if (!st->status) {
			gf_err e = body_reserve(s, st, *upload_size);
			if (!e) {
				memcpy(st->body + st->len, upload_data, *upload_size);
				st->len += *upload_size;
				st->body[st->len] = '\0';
			} else {
				body_free(s, st); /* the rest is discarded: give the memory back now */
				if (e == GF_UNAVAILABLE || e == GF_NOMEM) {
					set_busy(s, st, method, url);
				} else {
					st->status = 413;
					snprintf(st->msg, sizeof(st->msg),
						 "%s %.100s: request body exceeds %zu bytes\n", method,
						 url, s->cfg.max_body);
				}
			}
		}
		*upload_size = 0; /* consumed (or discarded) */
		return MHD_YES;
	}
	enter(s, c, PH_SERVED); /* the request is complete: no longer evictable */
	if (st->status)
		return queue_text(c, st->status, st->msg);

	struct gf_http_request req = {
		.method = method,
		.path = url,
		.body = st->body ? st->body : "",
		.body_len = st->len,
		.conn_ = c,
	};
	struct gf_http_response resp = { .status = 200, .content_type = TEXT_PLAIN };
	gf_obuf_init(&resp.body, s->cfg.max_response);
	st->route->fn(st->route->ud, &req, &resp);
	body_free(s, st);
	if (gf_obuf_error(&resp.body)) {
		gf_err e = gf_obuf_error(&resp.body);
		gf_obuf_release(&resp.body);
		char msg[160];
		snprintf(msg, sizeof(msg), "%s %.100s: response failed: %s\n", method, url,
			 gf_strerror(e));
		return queue_text(c, 500, msg);
	}
	/* The handler's buffer is charged for as long as libmicrohttpd holds it. */
	size_t charged = resp.body.alloc;
	struct held *h = malloc(sizeof(*h));
	if (!h || !budget_take(s, charged)) {
		free(h);
		gf_obuf_release(&resp.body);
		set_busy(s, st, method, url);
		return queue_text(c, 503, st->msg);
	}
	size_t len;
	char *data = gf_obuf_detach(&resp.body, &len);
	*h = (struct held){ s, data, charged };
	return queue_buf(c, resp.status, resp.content_type ? resp.content_type : TEXT_PLAIN,
			 data ? data : (char *)"", len, h);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	gf_http_server *s = cls;
	struct req_state *st = *con_cls;
	if (!st)
		return;
	body_free(s, st);
	free(st);
	*con_cls = NULL;
	/* A kept-alive connection: the next request line and headers are due as
	 * the first's.  (Any other end closes the connection: CLOSED follows.) */
	if (toe == MHD_REQUEST_TERMINATED_COMPLETED_OK)
		enter(s, c, PH_LINE);
}

static void free_server(struct gf_http_server *s)
{
	free(s->tls_cert);
	free(s->tls_key);
	free(s->tls_ca);
	pthread_cond_destroy(&s->wake);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

static void apply_defaults(struct gf_http_config *c)
{
	if (!c->max_body)
		c->max_body = 64 * 1024;
	if (!c->max_response)
		c->max_response = 4 * 1024 * 1024;
	if (!c->max_conns)
		c->max_conns = 64;
	if (!c->timeout_s)
		c->timeout_s = 30;
	if (!c->mem_budget)
		c->mem_budget = DEFAULT_MEM_BUDGET;
	/* One largest request and its response always fit (+1 each for the NUL). */
	if (c->mem_budget < c->max_body + c->max_response + 2)
		c->mem_budget = c->max_body + c->max_response + 2;
	if (!c->max_conns_per_ip)
		c->max_conns_per_ip = c->max_conns / 4 < 4 ? 4 : c->max_conns / 4;
	if (!c->header_timeout_s)
		c->header_timeout_s = DEFAULT_HEADER_TIMEOUT_S;
	if (!c->line_timeout_s)
		c->line_timeout_s = DEFAULT_LINE_TIMEOUT_S;
	if (!c->reserved_conns) {
		c->reserved_conns = c->max_conns / 8 < 2 ? 2 : c->max_conns / 8;
		if (c->reserved_conns > c->max_conns / 2)
			c->reserved_conns = c->max_conns / 2;
	}
	if (!c->request_timeout_s)
		c->request_timeout_s = DEFAULT_REQUEST_TIMEOUT_S;
}

static bool init_sync(struct gf_http_server *s)
{
	pthread_condattr_t ca;
	if (pthread_condattr_init(&ca))
		return false;
	bool ok = !pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) && !pthread_cond_init(&s->wake, &ca);
	pthread_condattr_destroy(&ca);
	if (!ok)
		return false;
	if (pthread_mutex_init(&s->mu, NULL)) {
		pthread_cond_destroy(&s->wake);
		return false;
	}
	return true;
}

gf_err gf_http_server_create(const struct gf_http_config *cfg, gf_http_server **out)
{
	*out = NULL;
	if (!cfg || (cfg->nroutes && !cfg->routes) || (cfg->require_client_cert && !cfg->tls_client_ca_pem))
		return GF_INVAL;
	struct sockaddr_in sa;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons(cfg->port);
	sa.sin_addr.s_addr = htonl(INADDR_ANY);
	if (cfg->bind_addr && cfg->bind_addr[0] && inet_pton(AF_INET, cfg->bind_addr, &sa.sin_addr) != 1)
		return GF_INVAL;
	if ((cfg->tls_cert_pem || cfg->tls_key_pem || cfg->tls_client_ca_pem) &&
	    (!cfg->tls_cert_pem || !cfg->tls_key_pem))
		return GF_INVAL;

	struct gf_http_server *s = calloc(1, sizeof(*s));
	if (!s)
		return GF_NOMEM;
	if (!init_sync(s)) {
		free(s);
		return GF_NOMEM;
	}
	s->cfg = *cfg;
	apply_defaults(&s->cfg);
	if (s->cfg.reserved_conns >= s->cfg.max_conns) {
		free_server(s);
		return GF_INVAL;
	}
	s->next_sweep = NO_DEADLINE;
	gf_err e = GF_NOMEM;

	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ITC;
	struct MHD_OptionItem ops[8];
	size_t nops = 0;
	if (cfg->tls_cert_pem) {
		s->tls_cert = strdup(cfg->tls_cert_pem);
		s->tls_key = strdup(cfg->tls_key_pem);
		s->tls_ca = cfg->tls_client_ca_pem ? strdup(cfg->tls_client_ca_pem) : NULL;
		if (!s->tls_cert || !s->tls_key || (cfg->tls_client_ca_pem && !s->tls_ca))
			goto fail;
		flags |= MHD_USE_TLS;
		ops[nops++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0, s->tls_cert };
		ops[nops++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0, s->tls_key };
		if (s->tls_ca)
			ops[nops++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_TRUST, 0, s->tls_ca };
	}
	if (cfg->threads > 1)
		ops[nops++] = (struct MHD_OptionItem){ MHD_OPTION_THREAD_POOL_SIZE,
						       (intptr_t)cfg->threads, NULL };
	ops[nops] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };

	if (pthread_create(&s->sweeper, NULL, sweeper_main, s))
		goto fail;
	s->sweeper_running = true;

	/* ITC lets MHD_quiesce_daemon wake the polling thread (graceful stop). */
	s->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, s,
				MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned int)s->cfg.max_conns,
				MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)s->cfg.max_conns_per_ip,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)s->cfg.timeout_s,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(32 * 1024),
				MHD_OPTION_NOTIFY_COMPLETED, on_completed, (void *)s,
				MHD_OPTION_NOTIFY_CONNECTION, on_connection, (void *)s,
				MHD_OPTION_URI_LOG_CALLBACK, on_request_line, (void *)s,
				MHD_OPTION_ARRAY, ops,
				MHD_OPTION_END);
	if (!s->d) {
		e = GF_UNAVAILABLE;
		goto fail;
	}
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
	s->port = di ? di->port : cfg->port;
	*out = s;
	return GF_OK;

fail:
	if (s->sweeper_running) {
		pthread_mutex_lock(&s->mu);
		s->stop = true;
		pthread_cond_signal(&s->wake);
		pthread_mutex_unlock(&s->mu);
		pthread_join(s->sweeper, NULL);
	}
	free_server(s);
	return e;
}

uint16_t gf_http_server_port(const gf_http_server *s)
{
	return s->port;
}

void gf_http_server_destroy(gf_http_server *s)
{
	if (!s)
		return;
	MHD_socket fd = MHD_quiesce_daemon(s->d);
	(void)fd; /* still owned by the daemon, closed by MHD_stop_daemon */
	pthread_mutex_lock(&s->mu);
	s->stop = true;
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->mu);
	pthread_join(s->sweeper, NULL);
	MHD_stop_daemon(s->d);
	free_server(s);
}

void gf_http_server_stats(gf_http_server *s, struct gf_http_stats *out)
{
	out->mem_in_use = atomic_load(&s->mem_in_use);
	out->mem_budget = s->cfg.mem_budget;
	out->over_budget = atomic_load(&s->over_budget);
	pthread_mutex_lock(&s->mu);
	out->deadline_cuts = s->deadline_cuts;
	out->evictions = s->evictions;
	out->connections = s->nconns;
	out->pending = s->npending;
	pthread_mutex_unlock(&s->mu);
}

const char *gf_http_request_header(const struct gf_http_request *req, const char *name)
{
	return MHD_lookup_connection_value(req->conn_, MHD_HEADER_KIND, name);
}

const char *gf_http_request_query(const struct gf_http_request *req, const char *name)
{
	return MHD_lookup_connection_value(req->conn_, MHD_GET_ARGUMENT_KIND, name);
}

bool gf_http_request_peer_cn(const struct gf_http_request *req, char *cn, size_t n)
{
	if (n)
		cn[0] = '\0';
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(req->conn_, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	if (!ci || !ci->tls_session)
		return false;
	gnutls_session_t ses = (gnutls_session_t)ci->tls_session;
	/* The chain, and the key purpose: a certificate with an extended key
	 * usage must allow TLS client authentication (none: any purpose). */
	gnutls_typed_vdata_st purpose = { .type = GNUTLS_DT_KEY_PURPOSE_OID,
					  .data = (unsigned char *)GNUTLS_KP_TLS_WWW_CLIENT };
	unsigned status = 0;
	if (gnutls_certificate_verify_peers(ses, &purpose, 1, &status) < 0 || status)
		return false;
	unsigned ncerts = 0;
	const gnutls_datum_t *certs = gnutls_certificate_get_peers(ses, &ncerts);
	if (!certs || !ncerts)
		return false;
	gnutls_x509_crt_t crt;
	if (gnutls_x509_crt_init(&crt) < 0)
		return false;
	bool ok = false;
	if (gnutls_x509_crt_import(crt, &certs[0], GNUTLS_X509_FMT_DER) >= 0) {
		char buf[256];
		size_t sz = sizeof(buf);
		int r = gnutls_x509_crt_get_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, 0, buf,
						      &sz);
		if (r == GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE) {
			buf[0] = '\0';
			r = 0;
		}
		if (r >= 0) {
			ok = true;
			if (n) {
				snprintf(cn, n, "%s", buf);
			}
		}
	}
	gnutls_x509_crt_deinit(crt);
	return ok;
}

void gf_http_response_error(struct gf_http_response *resp, unsigned status, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	resp->status = status;
	resp->content_type = TEXT_PLAIN;
	gf_obuf_reset(&resp->body);
	gf_obuf_puts(&resp->body, msg);
	gf_obuf_puts(&resp->body, "\n");
}
