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
 * Route lookup is a linear scan: tables have a handful of entries.
 */
#include "http/server.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct gf_http_server {
	struct MHD_Daemon *d;
	struct gf_http_config cfg;
	uint16_t port;
};

/* Per-request state (con_cls). */
struct req_state {
	const struct gf_http_route *route; /* NULL: answer with status below */
	unsigned status;                   /* pre-decided error status, 0 = none */
	char msg[160];
	struct gf_obuf body;
};

#define TEXT_PLAIN "text/plain; charset=utf-8"

static enum MHD_Result queue_buf(struct MHD_Connection *c, unsigned status,
				 const char *ctype, char *data, size_t len)
{
	struct MHD_Response *r = MHD_create_response_from_buffer_with_free_callback(
		len, data ? data : (char *)"", data ? free : NULL);
	if (!r) {
		free(data);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
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
	return queue_buf(c, status, TEXT_PLAIN, p, n);
}

static const struct gf_http_route *find_route(const struct gf_http_server *s, const char *method,
					      const char *path, unsigned *status)
{
	bool path_known = false;
	bool head = !strcmp(method, "HEAD");
	for (size_t i = 0; i < s->cfg.nroutes; i++) {
		const struct gf_http_route *r = &s->cfg.routes[i];
		if (strcmp(r->path, path))
			continue;
		path_known = true;
		if (!strcmp(r->method, method) || (head && !strcmp(r->method, "GET")))
			return r;
	}
	*status = path_known ? 405 : 404;
	return NULL;
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
		gf_obuf_init(&st->body, s->cfg.max_body);
		st->route = find_route(s, method, url, &st->status);
		if (!st->route)
			snprintf(st->msg, sizeof(st->msg), "%s %.100s: %s\n", method, url,
				 st->status == 404 ? "no such path" : "method not allowed");
		*con_cls = st;
		return MHD_YES;
	}
	if (*upload_size) {
		if (!st->status && gf_obuf_append(&st->body, upload_data, *upload_size)) {
			st->status = 413;
			snprintf(st->msg, sizeof(st->msg),
				 "%s %.100s: request body exceeds %zu bytes\n", method, url,
				 s->cfg.max_body);
		}
		*upload_size = 0; /* consumed (or discarded) */
		return MHD_YES;
	}
	if (st->status)
		return queue_text(c, st->status, st->msg);

	struct gf_http_request req = {
		.method = method,
		.path = url,
		.body = st->body.data ? st->body.data : "",
		.body_len = st->body.len,
		.conn_ = c,
	};
	struct gf_http_response resp = { .status = 200, .content_type = TEXT_PLAIN };
	gf_obuf_init(&resp.body, s->cfg.max_response);
	st->route->fn(st->route->ud, &req, &resp);
	if (gf_obuf_error(&resp.body)) {
		gf_err e = gf_obuf_error(&resp.body);
		gf_obuf_release(&resp.body);
		char msg[160];
		snprintf(msg, sizeof(msg), "%s %.100s: response failed: %s\n", method, url,
			 gf_strerror(e));
		return queue_text(c, 500, msg);
	}
	size_t len;
	char *data = gf_obuf_detach(&resp.body, &len);
	return queue_buf(c, resp.status, resp.content_type ? resp.content_type : TEXT_PLAIN, data,
			 len);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	(void)cls;
	(void)c;
	(void)toe;
	struct req_state *st = *con_cls;
	if (!st)
		return;
	gf_obuf_release(&st->body);
	free(st);
	*con_cls = NULL;
}

gf_err gf_http_server_create(const struct gf_http_config *cfg, gf_http_server **out)
{
	*out = NULL;
	if (!cfg || (cfg->nroutes && !cfg->routes))
		return GF_INVAL;
	struct sockaddr_in sa;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons(cfg->port);
	sa.sin_addr.s_addr = htonl(INADDR_ANY);
	if (cfg->bind_addr && cfg->bind_addr[0] && inet_pton(AF_INET, cfg->bind_addr, &sa.sin_addr) != 1)
		return GF_INVAL;

	struct gf_http_server *s = calloc(1, sizeof(*s));
	if (!s)
		return GF_NOMEM;
	s->cfg = *cfg;
	if (!s->cfg.max_body)
		s->cfg.max_body = 64 * 1024;
	if (!s->cfg.max_response)
		s->cfg.max_response = 4 * 1024 * 1024;
	if (!s->cfg.max_conns)
		s->cfg.max_conns = 64;
	if (!s->cfg.timeout_s)
		s->cfg.timeout_s = 30;

	/* ITC lets MHD_quiesce_daemon wake the polling thread (graceful stop). */
	s->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ITC,
				0, NULL, NULL, on_request, s,
				MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned int)s->cfg.max_conns,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)s->cfg.timeout_s,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(32 * 1024),
				MHD_OPTION_NOTIFY_COMPLETED, on_completed, (void *)s,
				MHD_OPTION_END);
	if (!s->d) {
		free(s);
		return GF_UNAVAILABLE;
	}
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
	s->port = di ? di->port : cfg->port;
	*out = s;
	return GF_OK;
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
	MHD_stop_daemon(s->d);
	free(s);
}

const char *gf_http_request_header(const struct gf_http_request *req, const char *name)
{
	return MHD_lookup_connection_value(req->conn_, MHD_HEADER_KIND, name);
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
