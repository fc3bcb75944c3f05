/*
 * http/auth.h - who may call a gpufleet API server: the one rule shared by
 * the external metrics API and the cost API.
 *
 * A request is allowed when authentication is off, or when either
 *   - it came over TLS with a client certificate that verifies against the
 *     server's client CA (gf_http_request_peer_cn) and, if a list of CNs is
 *     given, its subject CN is in the list; or
 *   - a bearer token is configured and the request's Authorization header
 *     is exactly "Bearer <token>" (compared in constant time).
 */
#ifndef GF_HTTP_AUTH_H
#define GF_HTTP_AUTH_H

#include <stdbool.h>
#include <stddef.h>

struct gf_http_auth {
	bool required;                   /* false: every request is allowed */
	bool client_certs;               /* verified client certificates are accepted */
	const char *const *allowed_cns;  /* with client_certs: CNs accepted (none = any verified) */
	size_t nallowed;
	const char *token;               /* bearer token accepted; NULL or "" = none */
};

/* The rule above.  peer_cn and authorization may be NULL. */
bool gf_http_auth_allows(const struct gf_http_auth *a, bool peer_verified, const char *peer_cn,
			 const char *authorization);

#endif /* GF_HTTP_AUTH_H */
