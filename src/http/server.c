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
 * with gnutls_certificate_verify_peers2() on each call (a signature check,
 * tens of microseconds) and reads the leaf's CN.  require_client_cert
 * makes that check at the headers, for every request.
 */
#include "http/server.h"

#include <arpa/inet.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
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
	char *tls_cert, *tls_key, *tls_ca; /* our copies of the PEM text */
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
		if (st->route && s->cfg.require_client_cert &&
		    !gf_http_request_peer_cn(&(struct gf_http_request){ .conn_ = c }, NULL, 0)) {
			st->route = NULL;
			st->status = 403;
		}
		/* One allocation for the whole body when its length is announced
		 * (the extender's 100 KiB requests would otherwise grow it ten times). */
		const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
		char *end = NULL;
		unsigned long long want = cl ? strtoull(cl, &end, 10) : 0;
		if (st->route && cl && end != cl && !*end && want > 0 && want <= s->cfg.max_body)
			(void)gf_obuf_space(&st->body, (size_t)want); /* a failure shows at the first append */
		if (!st->route)
			snprintf(st->msg, sizeof(st->msg), "%s %.100s: %s\n", method, url,
				 st->status == 404   ? "no such path"
				 : st->status == 403 ? "client certificate required"
						     : "method not allowed");
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

static void free_tls(struct gf_http_server *s)
{
	free(s->tls_cert);
	free(s->tls_key);
	free(s->tls_ca);
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

	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ITC;
	struct MHD_OptionItem ops[8];
	size_t nops = 0;
	if (cfg->tls_cert_pem || cfg->tls_key_pem || cfg->tls_client_ca_pem) {
		if (!cfg->tls_cert_pem || !cfg->tls_key_pem) {
			free(s);
			return GF_INVAL;
		}
		s->tls_cert = strdup(cfg->tls_cert_pem);
		s->tls_key = strdup(cfg->tls_key_pem);
		s->tls_ca = cfg->tls_client_ca_pem ? strdup(cfg->tls_client_ca_pem) : NULL;
		if (!s->tls_cert || !s->tls_key || (cfg->tls_client_ca_pem && !s->tls_ca))
			goto fail_nomem;
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

	/* ITC lets MHD_quiesce_daemon wake the polling thread (graceful stop). */
	s->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, s,
				MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned int)s->cfg.max_conns,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)s->cfg.timeout_s,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(32 * 1024),
				MHD_OPTION_NOTIFY_COMPLETED, on_completed, (void *)s,
				MHD_OPTION_ARRAY, ops,
				MHD_OPTION_END);
	if (!s->d) {
		free_tls(s);
		free(s);
		return GF_UNAVAILABLE;
	}
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
	s->port = di ? di->port : cfg->port;
	*out = s;
	return GF_OK;

fail_nomem:
	free_tls(s);
	free(s);
	return GF_NOMEM;
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
	free_tls(s);
	free(s);
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
	unsigned status = 0;
	if (gnutls_certificate_verify_peers2(ses, &status) < 0 || status)
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
