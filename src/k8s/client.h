/*
 * k8s/client.h - REST calls and watches against the Kubernetes API server.
 *
 * gf_kube_client is an opaque handle: one libcurl easy handle (HTTP
 * keep-alive) plus the connection.  A handle is used by one thread at a
 * time; threads that talk to the API server concurrently make one each.
 *
 * Retries: transport errors, 429 and 5xx are retried with exponential
 * backoff (base_backoff_ms doubling, capped at 5 s, with full jitter from
 * a seeded generator) up to `retries` times; other statuses come back to
 * the caller.  A POST may thus be sent twice; callers of non-idempotent
 * calls (bindings) handle the 409 that a duplicate gets.
 *
 * Watches stream newline-delimited JSON events through libcurl's write
 * callback (lines capped at max_body); BOOKMARK events only advance the
 * resourceVersion; an ERROR event with code 410, or HTTP 410, ends the
 * watch with GF_STATE so the caller relists (gf_kube_reflect does this).
 */
#ifndef GF_K8S_CLIENT_H
#define GF_K8S_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "core/obuf.h"
#include "k8s/conn.h"

struct cJSON;

typedef struct gf_kube_client gf_kube_client;

struct gf_kube_client_opts {
	long timeout_ms;	/* whole request (not watches); 0 = 10000 */
	long connect_timeout_ms;/* 0 = 5000 */
	int retries;		/* extra attempts on transport errors, 429, 5xx; <0 = 0, default 0 -> 5 */
	long base_backoff_ms;	/* 0 = 100 */
	size_t max_body;	/* response cap, also a watch line's; 0 = 64 MiB */
	uint64_t seed;		/* jitter */
	volatile int *stop;	/* not NULL: a request in progress, and its retries, end
				 * (GF_UNAVAILABLE) soon after *stop becomes non-zero */
};

/* Create a client; c is copied by reference and must outlive it.  GF_NOMEM. */
gf_err gf_kube_client_create(const struct gf_kube_conn *c, const struct gf_kube_client_opts *o,
			     gf_kube_client **out);
void gf_kube_client_destroy(gf_kube_client *k);

/*
 * One request with retries.  path starts with "/" (query included) and is
 * checked before anything is sent: printable ASCII without spaces, '#' or
 * backslash, and no "." or ".." segment (GF_INVAL otherwise: build object
 * paths with gf_kube_path()).  body may be NULL.  On GF_OK *status is the
 * final HTTP status and resp (if not NULL; initialised by the caller) holds
 * the body.  GF_UNAVAILABLE when the server could not be reached after the
 * retries (err says why), GF_TOOBIG for an answer over max_body, GF_NOMEM.
 */
gf_err gf_kube_request(gf_kube_client *k, const char *method, const char *path,
		       const char *content_type, const char *body, size_t body_len, long *status,
		       struct gf_obuf *resp, char *err, size_t errlen);

/*
 * Convenience: request then parse a JSON answer.  2xx: *out is the parsed
 * document (caller cJSON_Delete()s it; NULL when the body is empty).
 * Other statuses: GF_OK with *out NULL and *status set; err gets the
 * Status message.  GF_PARSE when a 2xx body is not JSON.
 */
gf_err gf_kube_json(gf_kube_client *k, const char *method, const char *path,
		    const char *content_type, const char *body, long *status, struct cJSON **out,
		    char *err, size_t errlen);

/*
 * Names as Kubernetes validates them (apimachinery's IsDNS1123Label and
 * IsDNS1123Subdomain): a label is [a-z0-9]([-a-z0-9]*[a-z0-9])?, at most
 * 63 bytes (namespaces); a subdomain is labels joined by '.', at most 253
 * bytes (pod and node names).  Nothing else may reach an API path.
 */
bool gf_k8s_dns_label(const char *s);
bool gf_k8s_dns_subdomain(const char *s);

/*
 * The one way to build an object's API path: "/api/v1" then
 * "/namespaces/NS" (ns not NULL), "/RESOURCE", "/NAME" (name not NULL),
 * "/SUB" (sub not NULL).  resource and sub are the caller's literals; ns
 * must be a DNS label and name a DNS subdomain, else GF_INVAL and err says
 * which and why (the name is quoted with escapes: it came from outside).
 * GF_TOOBIG when out (n bytes) is too small.
 */
gf_err gf_kube_path(char *out, size_t n, const char *ns, const char *resource, const char *name,
		    const char *sub, char *err, size_t errlen);

/* A watch event: type is ADDED, MODIFIED, DELETED (BOOKMARK/ERROR are handled inside). */
typedef void (*gf_kube_event_fn)(void *ud, const char *type, const struct cJSON *object);

/*
 * Watch path (e.g. "/api/v1/pods") from resourceVersion rv (updated in
 * place to the last seen; rvlen its size) until the server ends the stream
 * (GF_OK: watch again from rv), *stop becomes non-zero (GF_OK), 410 Gone
 * (GF_STATE: relist), or a transport error (GF_UNAVAILABLE).  timeout_s is
 * asked of the server (timeoutSeconds).  fn runs on the calling thread.
 */
gf_err gf_kube_watch(gf_kube_client *k, const char *path, char *rv, size_t rvlen, int timeout_s,
		     gf_kube_event_fn fn, void *ud, volatile int *stop, char *err, size_t errlen);

/*
 * A reflector: LIST (pages of 500, resourceVersion from the list) then
 * WATCH, forever until *stop: on a broken watch resume from the last
 * resourceVersion (with backoff), on 410 Gone relist.  Every listed item
 * is delivered as "SYNC"; after a complete list fn gets ("SYNCED", NULL)
 * so the consumer can drop what the list no longer has (it marks items at
 * "SYNC").  log (may be NULL) receives one line per retry/relist.
 */
typedef void (*gf_kube_log_fn)(void *ud, const char *line);
void gf_kube_reflect(gf_kube_client *k, const char *path, gf_kube_event_fn fn, void *ud,
		     gf_kube_log_fn log, volatile int *stop);

/*
 * One LIST of path, all pages (500 a page; one consistent snapshot): each
 * item to fn as "SYNC", then ("SYNCED", NULL).  GF_OK, or the error that
 * stopped it (err says what; items already delivered stay delivered).
 */
gf_err gf_kube_list(gf_kube_client *k, const char *path, gf_kube_event_fn fn, void *ud, char *err,
		    size_t errlen);

/* gf_kube_list with a budget for an answer from a server that may be
 * hostile: past max_items items (an empty page with a continue token counts
 * one) it stops with GF_TOOBIG (err names the budget), items delivered stay
 * delivered, and "SYNCED" is not sent. */
gf_err gf_kube_list_max(gf_kube_client *k, const char *path, size_t max_items, gf_kube_event_fn fn, void *ud,
			char *err, size_t errlen);

/*
 * Stop flags: an int set to non-zero (by a signal handler or another
 * thread) with gf_kube_stop() and read with gf_kube_stopped(), both atomic.
 * NULL never stops.
 */
static inline bool gf_kube_stopped(volatile int *stop)
{
	return stop && __atomic_load_n(stop, __ATOMIC_ACQUIRE);
}

static inline void gf_kube_stop(volatile int *stop)
{
	__atomic_store_n(stop, 1, __ATOMIC_RELEASE);
}

/* Sleep ms milliseconds unless *stop becomes non-zero (checked every 50 ms). */
void gf_kube_sleep_ms(long ms, volatile int *stop);

#endif /* GF_K8S_CLIENT_H */
