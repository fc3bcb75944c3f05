/*
 * http/server.h - a small HTTP/1.1 server on libmicrohttpd with a route table.
 *
 * Reused by the node agent (/metrics), the scheduler extender and the
 * external metrics API.  The caller gives a table of (method, path,
 * handler); the server answers 404 for an unknown path, 405 for a known
 * path with another method, 413 for a body over max_body, 431 (from
 * libmicrohttpd) for headers over the connection memory limit, 500 when a
 * handler's response overflows max_response.  Every such error has a
 * one-line plain-text body naming what was wrong, and the server keeps
 * serving.
 *
 * Threading: one internal polling thread (libmicrohttpd's
 * MHD_USE_INTERNAL_POLLING_THREAD); handlers run on it, one at a time, so
 * a handler may keep state in its user data without locking against other
 * requests (but must lock against the caller's own threads).
 *
 * With threads > 1 (gf_http_config) a pool of threads serves the
 * connections and handlers may run concurrently: they must then lock
 * their own shared state.
 *
 * TLS (optional): the serving certificate and key as PEM in memory.  With
 * a client CA bundle the server asks every client for a certificate
 * (optional for the client) and gf_http_request_peer_cn() tells a handler
 * whether the request came over a connection whose certificate verifies
 * against that bundle, and its subject CN: the handler decides what an
 * unauthenticated request may do.
 *
 * Routes: a path ending in '*' matches every path that starts with the
 * part before the '*' (a prefix route); otherwise the match is exact.  The
 * first route in table order whose path and method match wins, so list
 * exact routes before prefix routes that cover them.
 *
 * Per-request memory: the request body and the response body live in
 * per-request bounded buffers freed when the request completes.
 *
 * Limits against hostile and careless clients (defaults in gf_http_config):
 *  - memory: request bodies are allocated as their bytes arrive (never from
 *    a claimed Content-Length), and every body buffer, request or response,
 *    is charged to one budget per server (mem_budget) until it is freed.
 *    A Content-Length over max_body gets 413 at once, without reading the
 *    body; a body or response that does not fit in the budget gets 503
 *    with Retry-After (for a response, after the handler has run: its
 *    effects stand, only its answer is replaced).  So the bodies held at
 *    once never exceed mem_budget (plus libmicrohttpd's 32 KiB per
 *    connection, our small error texts, and the response each handler
 *    thread is building, at most max_response, before it is charged).
 *  - connections: at most max_conns in all (further clients wait in the
 *    listen backlog until a slot frees) and max_conns_per_ip from one
 *    client address (more are closed at accept);
 *  - slots kept for complete requests: connections whose request is not yet
 *    complete (waiting for the request line, the headers or the rest of the
 *    body: "pending") hold at most max_conns - reserved_conns slots; past
 *    that the one pending longest is cut (one still without headers before
 *    one sending a body).  So many slow clients from many addresses cannot
 *    take every slot: a health check or a scrape, which sends its request at
 *    once, is accepted and served.
 *  - deadlines a trickle cannot reset: the request line (the TLS handshake
 *    included) must arrive within line_timeout_s, and the complete headers
 *    within header_timeout_s, of the connection's accept or of the end of
 *    the previous request; the request (body, handler, response) must then
 *    end within request_timeout_s of its headers.  A connection past its
 *    deadline is cut (shut down; libmicrohttpd closes it), whatever bytes it
 *    keeps sending.  timeout_s is libmicrohttpd's idle timeout on top of
 *    these.
 *  - a NUL byte (%00) in a query argument gets 400: a C string would cut
 *    the value there (labelSelector=app%00... would read as "app").
 */
#ifndef GF_HTTP_SERVER_H
#define GF_HTTP_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "core/obuf.h"

typedef struct gf_http_server gf_http_server;

/* What a handler sees.  All pointers are valid only during the call. */
struct gf_http_request {
	const char *method; /* "GET", "PATCH", ... */
	const char *path;   /* URL path without the query string */
	const char *body;   /* NUL-terminated; "" when there is none */
	size_t body_len;
	void *conn_;        /* internal: for gf_http_request_header() */
};

/* What a handler fills.  status defaults to 200, content_type to
 * "text/plain; charset=utf-8"; body is capped at the server's max_response. */
struct gf_http_response {
	unsigned status;
	const char *content_type; /* must outlive the call: use a literal */
	struct gf_obuf body;
};

/* A handler.  It never fails as such: it sets resp->status (and a body)
 * for errors.  If body overflows its cap the client gets a 500. */
typedef void (*gf_http_handler)(void *ud, const struct gf_http_request *req,
				struct gf_http_response *resp);

struct gf_http_route {
	const char *method; /* exact, e.g. "GET"; GET routes also answer HEAD */
	const char *path;   /* exact match, or a prefix when it ends in '*' */
	gf_http_handler fn;
	void *ud;
};

struct gf_http_config {
	const char *bind_addr;  /* IPv4 literal; NULL or "" = all interfaces */
	uint16_t port;          /* 0 = any free port (see gf_http_server_port) */
	const struct gf_http_route *routes; /* copied by pointer: must outlive the server */
	size_t nroutes;
	size_t max_body;        /* request body cap, bytes (0 = 64 KiB) */
	size_t max_response;    /* response body cap, bytes (0 = 4 MiB) */
	unsigned max_conns;     /* 0 = 64 */
	unsigned timeout_s;     /* idle connection timeout (0 = 30 s) */
	size_t mem_budget;      /* request + response body bytes held at once, all
				 * connections together (0 = 128 MiB); raised to
				 * max_body + max_response when smaller */
	unsigned max_conns_per_ip; /* connections from one client address
				    * (0 = max_conns / 4, at least 4) */
	unsigned line_timeout_s;   /* request line (and TLS handshake) deadline (0 = 3 s;
				    * at most header_timeout_s counts) */
	unsigned header_timeout_s; /* headers deadline (0 = 5 s) */
	unsigned request_timeout_s; /* headers to end of response (0 = 60 s) */
	unsigned reserved_conns;   /* slots pending requests cannot take (0 = max_conns / 8,
				    * at least 2, at most max_conns / 2); < max_conns */
	unsigned threads;       /* 0 or 1: one polling thread, handlers one at a time;
				 * N > 1: a pool of N threads, handlers run concurrently */
	/* TLS: PEM text (copied by libmicrohttpd at create).  NULL cert = plain HTTP;
	 * a cert needs its key.  tls_client_ca_pem: CA bundle the clients'
	 * certificates are verified against (NULL: no client certificates asked). */
	const char *tls_cert_pem;
	const char *tls_key_pem;
	const char *tls_client_ca_pem;
	/* With tls_client_ca_pem: a request whose connection has no client
	 * certificate verifying against it is answered 403 before its body is
	 * read, and never reaches a handler (mutual TLS). */
	bool require_client_cert;
};

/* Start serving.  On success *out owns a running server (destroy it).
 * Errors: GF_INVAL (bad config or address, reserved_conns >= max_conns), GF_UNAVAILABLE (bind/listen
 * failed, e.g. port in use), GF_NOMEM. */
gf_err gf_http_server_create(const struct gf_http_config *cfg, gf_http_server **out);

/* The port actually bound (useful with port 0). */
uint16_t gf_http_server_port(const gf_http_server *s);

/* Graceful stop: stop accepting, let the request in progress finish,
 * close connections, join the thread, free.  NULL is a no-op. */
void gf_http_server_destroy(gf_http_server *s);

/* What the limits did so far (see the top comment), for tests and /metrics. */
struct gf_http_stats {
	size_t mem_in_use;        /* body bytes charged to mem_budget now */
	size_t mem_budget;        /* the budget in force */
	uint64_t over_budget;     /* requests answered 503 for the budget */
	uint64_t deadline_cuts;   /* connections cut at a line, header or request deadline */
	uint64_t evictions;       /* pending connections cut to keep reserved_conns free */
	unsigned connections;     /* open connections now */
	unsigned pending;         /* of them waiting for their request line, headers or body */
};
void gf_http_server_stats(gf_http_server *s, struct gf_http_stats *out);

/* A request header by name (case-insensitive) or NULL. */
const char *gf_http_request_header(const struct gf_http_request *req, const char *name);

/* A query-string argument by name (decoded: '+' is a space, %XX a byte) or
 * NULL when absent.  Valid during the call. */
const char *gf_http_request_query(const struct gf_http_request *req, const char *name);

/* True when the request arrived over TLS with a client certificate that
 * verifies against the server's tls_client_ca_pem and may authenticate a TLS
 * client: a certificate with an extended key usage extension must list
 * clientAuth (or anyExtendedKeyUsage), as Kubernetes' x509 authenticator
 * requires, so a server-only certificate from the same CA is refused.  Its
 * subject CN (may be "") is then copied into cn (truncated to n-1 bytes).
 * False otherwise: no TLS, no client CA configured, no certificate, or
 * verification failed. */
bool gf_http_request_peer_cn(const struct gf_http_request *req, char *cn, size_t n);

/* Convenience: set status and a one-line text body (printf format). */
void gf_http_response_error(struct gf_http_response *resp, unsigned status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif /* GF_HTTP_SERVER_H */
