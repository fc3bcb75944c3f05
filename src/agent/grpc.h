/*
 * agent/grpc.h - just enough gRPC for the kubelet's device-plugin API:
 * a server on a unix socket (unary methods and server streams) and a unary
 * client call, both plain HTTP/2 through libnghttp2 (grpc/grpc
 * doc/PROTOCOL-HTTP2.md): `POST /package.Service/Method`,
 * `content-type: application/grpc`, each message framed by a compression
 * flag byte (0 here: no compression is negotiated) and a 4-byte big-endian
 * length, the status in trailers (`grpc-status`, `grpc-message`).
 *
 * Threads: gf_grpc_server_start() runs an accept thread and one thread per
 * connection (the kubelet holds one or two).  Handlers run on connection
 * threads, so they must be thread-safe.  A server stream is polled: every
 * GF_GRPC_STREAM_POLL_MS its handler is asked whether it has a newer
 * message (see gf_grpc_stream_fn).
 *
 * Limits against local clients that hold connections (struct
 * gf_grpc_limits, defaults below): at most max_conns connections; a new
 * connection must start its first request (HEADERS) within header_ms of
 * the accept; each request's message must be complete (END_STREAM) within
 * request_ms of its HEADERS, or the stream is answered DEADLINE_EXCEEDED
 * and reset; a connection with no open stream is closed (GOAWAY) idle_ms
 * after its last stream ended; a connection whose unsent response bytes
 * make no progress for request_ms, or exceed 2 messages, is closed.  Bytes
 * that arrive (PINGs, SETTINGS, a trickled body) reset none of these.
 * When every slot is taken, the connection with no open stream that has
 * been idle longest is closed to make room; connections holding a server
 * stream (the kubelet's ListAndWatch) are never evicted, and at most
 * max_streams server streams are open at once (more are answered
 * RESOURCE_EXHAUSTED), so at least max_conns - max_streams slots always
 * turn over.  Memory: request bodies buffered at once are capped per
 * connection (one message, GF_GRPC_MAX_MESSAGE + 5) and per server
 * (body_budget); a request past either is answered RESOURCE_EXHAUSTED.
 */
#ifndef GF_AGENT_GRPC_H
#define GF_AGENT_GRPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "core/obuf.h"

#define GF_GRPC_MAX_MESSAGE (4u << 20) /* grpc-go's default receive limit */
#define GF_GRPC_STREAM_POLL_MS 50

/* Status codes used (grpc/grpc doc/statuscodes.md). */
enum {
	GF_GRPC_OK = 0,
	GF_GRPC_INVALID_ARGUMENT = 3,
	GF_GRPC_DEADLINE_EXCEEDED = 4,
	GF_GRPC_NOT_FOUND = 5,
	GF_GRPC_FAILED_PRECONDITION = 9,
	GF_GRPC_RESOURCE_EXHAUSTED = 8,
	GF_GRPC_UNIMPLEMENTED = 12,
	GF_GRPC_INTERNAL = 13,
	GF_GRPC_UNAVAILABLE = 14,
};

/* Unary: req is the request message (len bytes, unframed).  Append the
 * response message (unframed) to out and return GF_GRPC_OK, or return a
 * status with a message in msg (msglen bytes). */
typedef int (*gf_grpc_unary_fn)(void *ud, const uint8_t *req, size_t len, struct gf_obuf *out, char *msg,
				size_t msglen);

/* Server stream: called when the stream opens (*version = 0) and then every
 * GF_GRPC_STREAM_POLL_MS.  If the handler has a message newer than *version,
 * it appends it (unframed) to out, updates *version and returns true. */
typedef bool (*gf_grpc_stream_fn)(void *ud, const uint8_t *req, size_t len, uint64_t *version,
				  struct gf_obuf *out);

struct gf_grpc_method {
	const char *path; /* "/v1beta1.DevicePlugin/Allocate" */
	gf_grpc_unary_fn unary;   /* exactly one of unary, stream */
	gf_grpc_stream_fn stream;
	void *ud;
};

struct gf_grpc_limits {
	unsigned max_conns;   /* 1..GF_GRPC_MAX_CONNS */
	unsigned max_streams; /* open server streams, < max_conns */
	unsigned header_ms;   /* accept -> first request's HEADERS */
	unsigned request_ms;  /* HEADERS -> END_STREAM; also the send-stall bound */
	unsigned idle_ms;     /* no open stream -> GOAWAY and close */
	size_t body_budget;   /* request bytes buffered by the whole server */
};

#define GF_GRPC_MAX_CONNS 16
/* The defaults: 16 connections, 8 server streams, 5 s to the first request,
 * 10 s per request, 60 s idle, 16 MiB of request bodies. */
extern const struct gf_grpc_limits gf_grpc_default_limits;

typedef struct gf_grpc_server gf_grpc_server;

/* Binds the unix socket at path (an old socket file there is removed
 * first), listens, and starts serving.  methods must outlive the server.
 * GF_IO with "path: why" in err. */
gf_err gf_grpc_server_start(const char *path, const struct gf_grpc_method *methods, size_t n,
			    gf_grpc_server **out, char *err, size_t errlen);
/* The same with limits (NULL: gf_grpc_default_limits); GF_INVAL naming the
 * field when one is out of range. */
gf_err gf_grpc_server_start_limits(const char *path, const struct gf_grpc_method *methods, size_t n,
				   const struct gf_grpc_limits *lim, gf_grpc_server **out, char *err, size_t errlen);
/* Closes the listener and every connection, joins the threads, removes the
 * socket file.  NULL is a no-op. */
void gf_grpc_server_stop(gf_grpc_server *s);
/* True while the socket file is the one this server bound (the kubelet
 * deletes plugin sockets when it restarts). */
bool gf_grpc_server_socket_alive(const gf_grpc_server *s);

/* One unary call to the server on the unix socket at path: sends req,
 * waits up to timeout_ms.  Returns the gRPC status (GF_GRPC_UNAVAILABLE
 * when it could not connect or the connection failed), the response
 * message appended to resp (may be NULL), and grpc-message or the local
 * cause in msg. */
int gf_grpc_call(const char *path, const char *method, const uint8_t *req, size_t len, struct gf_obuf *resp,
		 unsigned timeout_ms, char *msg, size_t msglen);

/* As gf_grpc_call for a server-streaming method: returns GF_GRPC_OK as soon
 * as the stream's first message is in (appended to resp), and closes the
 * connection (the server sees the client leave). */
int gf_grpc_call_first(const char *path, const char *method, const uint8_t *req, size_t len, struct gf_obuf *resp,
		       unsigned timeout_ms, char *msg, size_t msglen);

/* One server connection driven from memory (for the fuzz harness and
 * tests): the client's bytes in (preface, frames), the server's bytes
 * appended to out; server streams are polled once. */
void gf_grpc_serve_bytes(const struct gf_grpc_method *methods, size_t n, const uint8_t *in, size_t len,
			 struct gf_obuf *out);

/* The framing (exposed for the fuzz harness): splits a request body of len
 * bytes into its single message.  0 with msg and mlen set, or a status with
 * the reason in why. */
int gf_grpc_unframe(const uint8_t *body, size_t len, const uint8_t **msg, size_t *mlen, char *why,
		    size_t whylen);

#endif
