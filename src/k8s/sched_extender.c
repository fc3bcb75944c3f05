/*
 * k8s/sched_extender.c - the kube-scheduler extender's verbs: filter,
 * prioritize and bind under the configured prefix (scheduler.h).
 *
 * filter and prioritize call gf_live directly, one at a time under ext_mu
 * (and mu around each engine call): a request's node names are read
 * (k8s/extargs.h), resolved to node indices, judged, and the answer written
 * from the request's own bytes where it can (every node passes: the
 * NodeNames array as sent).  Filter's answer is kept (the memo) for the
 * prioritize that follows with the same list, byte for byte: one memcmp
 * instead of reading and resolving 5,000 names again.  Long lists (at
 * least FAN_MIN names) are judged in chunks by the handler and one helper
 * thread (the fan), which the handler never waits for unless it is
 * already working.
 *
 * bind makes API calls (maybe a GET of a pod the watch has not brought
 * yet, then the Binding), so it never runs on an HTTP thread: the handler
 * checks the request, queues a JOB_EXT_BIND for the binders and waits for
 * its answer at most ext_bind_wait_s seconds.  The binder authorizes the
 * bind first: the pod's schedulerName one of the extender's profiles, the
 * pod pending, unbound and the one named by uid; with leader election only
 * the leader of the term the request came in binds.  The caller gets no API
 * server text back (it is logged): only our own reasons and a generic
 * failure.  Without TLS the listener is loopback only; with it, the
 * client's certificate is verified and its CN checked (ext_authorized).
 */
#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/kstatus.h"
#include "k8s/sched_impl.h"

/* Forget the answer (the memory stays for the next). */
static void memo_forget(struct ext_memo *m)
{
	m->span = NULL;
	m->span_len = m->n = 0;
}

void gf_ksched_memo_free(struct ext_memo *m)
{
	free(m->buf);
	free(m->names);
	free(m->lens);
	free(m->ci);
	memset(m, 0, sizeof(*m));
}
static void fan_claim(struct fan *f, void (*fn)(void *, size_t, size_t), void *ctx, size_t n, size_t chunk)
{
	for (size_t lo; (lo = atomic_fetch_add(&f->next, chunk)) < n;)
		fn(ctx, lo, lo + chunk < n ? lo + chunk : n);
}

static void *fan_main(void *arg)
{
	struct fan *f = arg;
	uint64_t seen = 0;
	pthread_mutex_lock(&f->mu);
	for (;;) {
		while (!f->stop && (f->gen == seen || !f->open))
			pthread_cond_wait(&f->cv, &f->mu);
		if (f->stop)
			break;
		seen = f->gen;
		f->active++;
		void (*fn)(void *, size_t, size_t) = f->fn;
		void *ctx = f->ctx;
		size_t n = f->n, chunk = f->chunk;
		pthread_mutex_unlock(&f->mu);
		fan_claim(f, fn, ctx, n, chunk);
		pthread_mutex_lock(&f->mu);
		if (!--f->active)
			pthread_cond_signal(&f->idle_cv);
	}
	pthread_mutex_unlock(&f->mu);
	return NULL;
}

/* fn(ctx, lo, hi) over [0, n) in chunks, with the helper if there is one. */
static void fan_run(struct fan *f, size_t n, size_t chunk, void (*fn)(void *, size_t, size_t), void *ctx)
{
	if (!f->started) {
		fn(ctx, 0, n);
		return;
	}
	pthread_mutex_lock(&f->mu);
	f->fn = fn, f->ctx = ctx, f->n = n, f->chunk = chunk;
	atomic_store(&f->next, 0);
	f->open = true;
	f->gen++;
	pthread_cond_signal(&f->cv);
	pthread_mutex_unlock(&f->mu);
	fan_claim(f, fn, ctx, n, chunk);
	pthread_mutex_lock(&f->mu);
	f->open = false; /* a helper waking now takes nothing */
	while (f->active)
		pthread_cond_wait(&f->idle_cv, &f->mu);
	pthread_mutex_unlock(&f->mu);
}

void gf_ksched_fan_start(struct fan *f)
{
	pthread_mutex_init(&f->mu, NULL);
	pthread_cond_init(&f->cv, NULL);
	pthread_cond_init(&f->idle_cv, NULL);
	atomic_init(&f->next, 0);
	f->started = sysconf(_SC_NPROCESSORS_ONLN) > 1 && !pthread_create(&f->t, NULL, fan_main, f);
}

void gf_ksched_fan_stop(struct fan *f)
{
	if (f->started) {
		pthread_mutex_lock(&f->mu);
		f->stop = true;
		pthread_cond_broadcast(&f->cv);
		pthread_mutex_unlock(&f->mu);
		pthread_join(f->t, NULL);
	}
	pthread_mutex_destroy(&f->mu);
	pthread_cond_destroy(&f->cv);
	pthread_cond_destroy(&f->idle_cv);
}

/* Is sched one of the schedulerNames the extender binds for? */
static bool ext_profile(const struct daemon *d, const char *sched)
{
	for (size_t i = 0; i < d->o.n_ext_profiles; i++)
		if (!strcmp(d->o.ext_profiles[i], sched))
			return true;
	return false;
}

/*
 * May an extender bind of a request that came in in leader term `term` go
 * ahead?  (Under mu.)  Without leader election always; with it only while
 * leading in that same term, after the bound pods were read on taking over
 * (lead_ready).
 */
static bool ext_may_bind(struct daemon *d, unsigned long term)
{
	if (!d->leader)
		return true;
	return gf_leader_leading(d->leader) && gf_leader_terms(d->leader) == term && d->rebuilt &&
	       d->rebuilt_term == term;
}

/* Hand the answer back (under mu); the last reference frees it. */
void gf_ksched_ext_bind_done(struct daemon *d, struct ext_bind *eb)
{
	eb->done = true;
	pthread_cond_broadcast(&d->ext_cv);
	if (!--eb->refs)
		free(eb);
}

/*
 * An extender bind on a binder thread: read the pod if the watch has not
 * brought it, authorize, assume, bind.  Our own reasons go back to the
 * caller; the API server's words only to the log.
 */
void gf_ksched_ext_bind_run(struct binder *b, const struct job *j)
{
	struct daemon *d = b->d;
	gf_kube_client *k = b->k;
	struct gf_k8s_pod *p = &b->pod;
	struct ext_bind *eb = j->eb;
	char err[400] = "", why[640] = "";
	int result = -1;
	pthread_mutex_lock(&d->mu);
	bool known = gf_live_pod_get(d->live, j->uid, p);
	pthread_mutex_unlock(&d->mu);
	if (!known) { /* the watch is behind: read the pod */
		char path[600];
		long st = 0;
		cJSON *pd = NULL;
		gf_err e = gf_kube_path(path, sizeof(path), j->ns, "pods", j->name, NULL, err, sizeof(err));
		if (!e)
			e = gf_kube_json(k, "GET", path, NULL, NULL, &st, &pd, err, sizeof(err));
		if (!e && !pd && st == 404) {
			snprintf(why, sizeof(why), "pod %.63s/%.253s not found", j->ns, j->name);
		} else if (e || !pd || gf_k8s_pod_decode(pd, p, err, sizeof(err))) {
			gf_ksched_log("extender bind of %s/%s: reading the pod failed: %s", j->ns, j->name,
				err[0] ? err : "no answer");
			snprintf(why, sizeof(why), "pod %.63s/%.253s could not be read from the API server "
				 "(details in gpufleet's log)", j->ns, j->name);
		}
		cJSON_Delete(pd);
	}
	if (!why[0]) {
		if (strcmp(p->uid, j->uid) || strcmp(p->ns, j->ns) || strcmp(p->name, j->name))
			snprintf(why, sizeof(why), "pod %.63s/%.253s does not have uid %s", j->ns, j->name, j->uid);
		else if (!ext_profile(d, p->scheduler))
			snprintf(why, sizeof(why), "pod %.63s/%.253s has schedulerName %.100s, not one this extender binds for "
				 "(--extender-profiles)", j->ns, j->name, p->scheduler);
		else if (p->node[0])
			snprintf(why, sizeof(why), "pod %.63s/%.253s is already bound to %.100s", j->ns, j->name, p->node);
		else if (p->deleting || p->phase != GF_PHASE_PENDING)
			snprintf(why, sizeof(why), "pod %.63s/%.253s is not pending", j->ns, j->name);
	}
	struct gf_live_decision dc;
	if (!why[0]) {
		/* as for the scheduling thread's binds (binder_main): only the
		 * leader of the term the request came in binds; the bind follows
		 * at once, within lease - renew seconds of this check */
		pthread_mutex_lock(&d->mu);
		gf_err e = GF_OK;
		if (!ext_may_bind(d, j->term))
			snprintf(why, sizeof(why), "this gpufleet replica is no longer the leader: it does not bind");
		else if ((e = gf_live_assume_on(d->live, p, eb->node, &dc)))
			snprintf(why, sizeof(why), "%.500s", dc.message[0] ? dc.message : gf_strerror(e));
		pthread_mutex_unlock(&d->mu);
	}
	if (!why[0]) {
		bool retry;
		result = gf_kube_bind(k, j->ns, j->name, j->uid, &dc, &retry, err, sizeof(err));
		if (result == B_OK || result == B_CONFLICT_DONE) {
			if (d->o.verbose)
				gf_ksched_log("bound %s/%s to %s gpus=%d milli=%d (extender, %s)", j->ns, j->name, dc.node,
					dc.ngpus, dc.milli, gf_ksched_bind_names[result]);
		} else {
			gf_ksched_log("extender bind of %s/%s to %s failed (%s): %s", j->ns, j->name, dc.node,
				gf_ksched_bind_names[result], err[0] ? err : "no detail");
			snprintf(why, sizeof(why), "binding pod %.63s/%.253s failed (%s; details in gpufleet's log)", j->ns,
				 j->name, gf_ksched_bind_names[result]);
		}
	}
	pthread_mutex_lock(&d->mu);
	if (result >= 0) {
		d->binds[result]++;
		if (result != B_OK && result != B_CONFLICT_DONE)
			gf_live_forget(d->live, j->uid, false);
	}
	snprintf(eb->err, sizeof(eb->err), "%s", why);
	gf_ksched_ext_bind_done(d, eb);
	pthread_mutex_unlock(&d->mu);
}

/* A Kubernetes Status body (core/kstatus.h): HTTP code, reason (e.g. "BadRequest"), message. */
static void status_body(struct gf_http_response *resp, unsigned code, const char *reason, const char *msg)
{
	gf_obuf_reset(&resp->body);
	resp->status = code;
	resp->content_type = "application/json";
	gf_kstatus_render(&resp->body, code, reason, msg);
}

/* A Kubernetes Status body with HTTP 400. */
static void bad_request(struct gf_http_response *resp, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void bad_request(struct gf_http_response *resp, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	status_body(resp, 400, "BadRequest", msg);
}

static const cJSON *get_ci(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItem(o, k); /* Go decodes case-insensitively */
}

/* Parse ExtenderArgs (k8s/extargs.h); a 400 with a Status body when malformed. */
static bool ext_args(struct daemon *d, const struct gf_http_request *req, struct gf_http_response *resp,
		     struct gf_ext_args *a, struct gf_k8s_pod *p)
{
	char msg[400];
	const struct ext_memo *m = &d->memo; /* ours under ext_mu: no other lock */
	struct gf_ext_hint h = { m->span, m->span_len, m->names, m->lens, m->n };
	gf_err e = gf_ext_args_parse(req->body, req->body_len, m->span ? &h : NULL, a, p, msg, sizeof(msg));
	if (e) {
		bad_request(resp, "%s", msg);
		return false;
	}
	return true;
}

/* Count an extender call by its answer's status (200, 400, or 403: not authorized). */
static void count_ext(struct daemon *d, int verb, const struct gf_http_response *resp, double t0)
{
	pthread_mutex_lock(&d->mu);
	d->ext_requests[verb][resp->status == 403 ? 2 : resp->status != 200]++;
	gf_ksched_histo_add(&d->h_ext[verb], gf_ksched_now() - t0);
	pthread_mutex_unlock(&d->mu);
}

/*
 * May this request use the extender?  Without TLS the listener is loopback
 * only (gf_kube_scheduler_run); with TLS the server has verified the
 * client's certificate already (require_client_cert), and here its CN is
 * checked against --extender-allowed-names.  A 403 Status when not.
 */
static bool ext_authorized(struct daemon *d, const struct gf_http_request *req, struct gf_http_response *resp)
{
	if (!d->o.ext_tls_cert_pem)
		return true;
	char cn[256];
	if (!gf_http_request_peer_cn(req, cn, sizeof(cn))) {
		status_body(resp, 403, "Forbidden", "a client certificate signed by the extender's client CA is required");
		return false;
	}
	if (!d->o.n_ext_allowed_cns)
		return true;
	for (size_t i = 0; i < d->o.n_ext_allowed_cns; i++)
		if (!strcmp(cn, d->o.ext_allowed_cns[i]))
			return true;
	status_body(resp, 403, "Forbidden", "the client certificate's common name is not one of --extender-allowed-names");
	return false;
}

static bool unresolvable(const char *why)
{
	return !strcmp(why, gf_why_text(GF_WHY_MODEL)) || !strcmp(why, gf_why_text(GF_WHY_GPU_COUNT)) ||
	       !strcmp(why, "node not known to gpufleet");
}

/* FailedNodes / FailedAndUnresolvableNodes: {"name":"reason",...}; msg (if not NULL) for every node. */
static void put_failed(struct gf_obuf *o, const char *key, const struct gf_ext_args *a, const char **why,
		       const char *msg, bool unres)
{
	gf_obuf_printf(o, ",\"%s\":{", key);
	bool first = true;
	for (size_t i = 0; i < a->n; i++) {
		const char *r = msg ? msg : why[i];
		if (!r || (!msg && unresolvable(r) != unres))
			continue;
		gf_ext_put_name(o, a, i, first ? "" : ",", ":");
		first = false;
		gf_json_put_str(o, r);
	}
	gf_obuf_append(o, "}", 1);
}

/*
 * The node indices for a's names (under mu): the memo's when a's list is
 * the memo's (re-resolved first if nodes came or went since), else resolved
 * into a new array.  *ci is owned (free it) unless *borrowed.
 */
static gf_err ext_resolve(struct daemon *d, const struct gf_ext_args *a, const int32_t **ci,
			  bool *borrowed, uint64_t *epoch)
{
	struct ext_memo *m = &d->memo;
	gf_err e;
	*borrowed = false;
	if (a->hit && m->span) {
		if ((e = gf_live_epoch(d->live, epoch)))
			return e;
		if (*epoch != m->epoch) {
			m->state = 0; /* nodes came or went: what fit is unknown */
			if ((e = gf_live_resolve(d->live, m->names, m->lens, m->n, m->ci, &m->epoch)))
				return e;
		}
		*ci = m->ci, *epoch = m->epoch, *borrowed = true;
		return GF_OK;
	}
	int32_t *own = malloc((a->n ? a->n : 1) * sizeof(*own));
	if (!own)
		return GF_NOMEM;
	if ((e = gf_live_resolve(d->live, a->names, a->lens, a->n, own, epoch)))
		free(own);
	else
		*ci = own;
	return e;
}

/* Keep filter's answer (the NodeNames array at o->data + at, the names not in why) for prioritize. */
static void memo_keep(struct daemon *d, const struct gf_ext_args *a, const struct gf_k8s_pod *p,
		      const char **why, const int32_t *ci, uint64_t epoch, uint64_t state, const struct gf_obuf *o,
		      size_t at)
{
	struct ext_memo *m = &d->memo;
	if (a->hit)
		return; /* the same list, the same answer: the memo stays */
	memo_forget(m);
	if (!a->plain || gf_obuf_error(o))
		return;
	size_t n = 0, len = o->len - at;
	for (size_t i = 0; i < a->n; i++)
		n += !why[i];
	if (len > m->buf_cap) {
		free(m->buf);
		m->buf_cap = 0;
		if (!(m->buf = malloc(len)))
			return;
		m->buf_cap = len;
	}
	if (n > m->cap) {
		free(m->names);
		free(m->lens);
		free(m->ci);
		m->cap = 0;
		m->names = malloc(n * sizeof(*m->names));
		m->lens = malloc(n * sizeof(*m->lens));
		m->ci = malloc(n * sizeof(*m->ci));
		if (!m->names || !m->lens || !m->ci)
			return;
		m->cap = n;
	}
	memcpy(m->buf, o->data + at, len);
	/* where each name sits: as gf_ext_put_names writes them ("[" then "a","b"), or as sent */
	bool echoed = n == a->n && a->span && a->span_len == len;
	size_t off = 1;
	for (size_t i = 0; i < a->n; i++) {
		if (why[i])
			continue;
		if (echoed)
			off = (size_t)(a->names[i] - a->span);
		else
			off += m->n ? 3 : 1; /* past the last name's closing quote, the comma, the quote */
		m->names[m->n] = m->buf + off;
		m->lens[m->n] = a->lens[i];
		m->ci[m->n++] = ci[i];
		if (!echoed)
			off += a->lens[i];
	}
	m->span = m->buf;
	m->span_len = len;
	m->epoch = epoch;
	snprintf(m->uid, sizeof(m->uid), "%s", p->uid);
	snprintf(m->rv, sizeof(m->rv), "%s", p->rv);
	m->state = state;
}

/* Lists this long are judged in parts of FAN_CHUNK names with the helper thread. */
#define FAN_MIN 1024
#define FAN_CHUNK 256

struct judge_job {
	const gf_live *l;
	const struct gf_live_judge *j;
	const struct gf_ext_args *a;
	int32_t *ci;
	const char **why;
};

static void judge_part(void *ctx, size_t lo, size_t hi)
{
	struct judge_job *jj = ctx;
	gf_live_judge_names(jj->l, jj->j, jj->a->names + lo, jj->a->lens + lo, hi - lo, jj->ci + lo,
			    jj->why + lo);
}

static void filter_locked(void *ud, const struct gf_http_request *req, struct gf_http_response *resp)
{
	struct daemon *d = ud;
	double t0 = gf_ksched_now();
	struct gf_k8s_pod *p = &d->ext_pod; /* filter and prioritize run one at a time (ext_mu) */
	struct gf_ext_args a = { 0 };
	if (!ext_authorized(d, req, resp) || !ext_args(d, req, resp, &a, p)) {
		gf_ext_args_release(&a);
		count_ext(d, V_FILTER, resp, t0);
		return;
	}
	const char **why = calloc(a.n ? a.n : 1, sizeof(*why));
	char msg[300] = "";
	gf_err e = GF_NOMEM;
	const int32_t *ci = NULL;
	bool borrowed = false;
	uint64_t epoch = 0;
	struct gf_obuf *o = &resp->body;
	pthread_mutex_lock(&d->mu);
	if (why && !a.hit && a.n >= FAN_MIN && d->fan.started) {
		/* a new long list: resolve and judge it in parts, with the helper */
		int32_t *own = malloc(a.n * sizeof(*own));
		struct gf_live_judge j;
		e = own ? gf_live_judge_begin(d->live, p, &j, msg, sizeof(msg)) : GF_NOMEM;
		if (!e) {
			struct judge_job jj = { d->live, &j, &a, own, why };
			fan_run(&d->fan, a.n, FAN_CHUNK, judge_part, &jj);
			epoch = j.epoch;
		}
		ci = own;
	} else if (why && !(e = ext_resolve(d, &a, &ci, &borrowed, &epoch))) {
		e = gf_live_filter_at(d->live, p, epoch, ci, a.n, why, msg, sizeof(msg));
	}
	d->ext_reused[V_FILTER] += borrowed;
	uint64_t state = gf_live_state(d->live);
	pthread_mutex_unlock(&d->mu); /* the answer is written from a, why and the memo only */
	resp->content_type = "application/json";
	if (e && e != GF_INVAL) {
		gf_obuf_printf(o, "{\"Nodes\":null,\"NodeNames\":null,\"FailedNodes\":null,"
				  "\"FailedAndUnresolvableNodes\":null,\"Error\":\"%s\"}", gf_strerror(e));
	} else if (a.node_objects && !e) {
		/* nodeCacheCapable: false - send back the Node objects that pass */
		gf_obuf_puts(o, "{\"Nodes\":{\"metadata\":{},\"items\":[");
		bool first = true;
		if (a.item_text) { /* the fast path: the objects as sent */
			for (size_t i = 0; i < a.n; i++)
				if (!why[i]) {
					if (!first)
						gf_obuf_append(o, ",", 1);
					gf_obuf_append(o, a.item_text[i], a.item_len[i]);
					first = false;
				}
		} else {
			size_t i = 0;
			const cJSON *it;
			cJSON_ArrayForEach(it, a.items)
			{
				if (!why[i]) {
					char *t = cJSON_PrintUnformatted(it);
					if (!first)
						gf_obuf_append(o, ",", 1);
					gf_obuf_puts(o, t ? t : "null");
					free(t);
					first = false;
				}
				i++;
			}
		}
		gf_obuf_puts(o, "]}");
		gf_obuf_puts(o, ",\"NodeNames\":null");
		put_failed(o, "FailedNodes", &a, why, NULL, false);
		put_failed(o, "FailedAndUnresolvableNodes", &a, why, NULL, true);
		gf_obuf_puts(o, ",\"Error\":\"\"}");
	} else {
		/* An invalid request fails on every node, and preemption cannot help. */
		(void)gf_obuf_space(o, (a.span ? a.span_len : 0) + 256); /* the usual answer in one allocation */
		gf_obuf_puts(o, "{\"Nodes\":null,\"NodeNames\":");
		size_t at = o->len, pass = 0;
		for (size_t i = 0; !e && i < a.n; i++)
			pass += !why[i];
		if (!e && pass == a.n && a.span) {
			gf_obuf_append(o, a.span, a.span_len); /* every node passes: the list as sent */
		} else {
			gf_obuf_append(o, "[", 1);
			if (!e)
				gf_ext_put_names(o, &a, why);
			gf_obuf_append(o, "]", 1);
		}
		if (!e)
			memo_keep(d, &a, p, why, ci, epoch, state, o, at);
		if (!e && pass == a.n)
			gf_obuf_puts(o, ",\"FailedNodes\":{},\"FailedAndUnresolvableNodes\":{}");
		else
			put_failed(o, "FailedNodes", &a, why, NULL, false);
		if (e)
			put_failed(o, "FailedAndUnresolvableNodes", &a, why, msg, true);
		else if (pass != a.n)
			put_failed(o, "FailedAndUnresolvableNodes", &a, why, NULL, true);
		gf_obuf_puts(o, ",\"Error\":\"\"}");
	}
	if (!borrowed)
		free((void *)ci);
	gf_ext_args_release(&a);
	free(why);
	count_ext(d, V_FILTER, resp, t0);
}

static void prioritize_locked(void *ud, const struct gf_http_request *req, struct gf_http_response *resp)
{
	struct daemon *d = ud;
	double t0 = gf_ksched_now();
	struct gf_k8s_pod *p = &d->ext_pod; /* under ext_mu */
	struct gf_ext_args a = { 0 };
	if (!ext_authorized(d, req, resp) || !ext_args(d, req, resp, &a, p)) {
		gf_ext_args_release(&a);
		count_ext(d, V_PRIORITIZE, resp, t0);
		return;
	}
	int64_t *sc = calloc(a.n ? a.n : 1, sizeof(*sc));
	gf_err e = GF_NOMEM;
	const int32_t *ci = NULL;
	bool borrowed = false;
	uint64_t epoch = 0;
	pthread_mutex_lock(&d->mu);
	if (sc && !(e = ext_resolve(d, &a, &ci, &borrowed, &epoch)))
		e = gf_live_prioritize_at(d->live, p, epoch, ci, a.n,
					  borrowed && p->uid[0] && !strcmp(p->uid, d->memo.uid) &&
							  !strcmp(p->rv, d->memo.rv) ? d->memo.state : 0,
					  sc);
	d->ext_reused[V_PRIORITIZE] += borrowed;
	pthread_mutex_unlock(&d->mu);
	struct gf_obuf *o = &resp->body;
	resp->content_type = "application/json";
	if (e)
		gf_obuf_puts(o, "[]");
	else
		gf_ext_put_priorities(o, &a, sc);
	if (!borrowed)
		free((void *)ci);
	free(sc);
	gf_ext_args_release(&a);
	count_ext(d, V_PRIORITIZE, resp, t0);
}

void gf_ksched_h_filter(void *ud, const struct gf_http_request *req, struct gf_http_response *resp)
{
	struct daemon *d = ud;
	pthread_mutex_lock(&d->ext_mu);
	filter_locked(ud, req, resp);
	pthread_mutex_unlock(&d->ext_mu);
}

void gf_ksched_h_prioritize(void *ud, const struct gf_http_request *req, struct gf_http_response *resp)
{
	struct daemon *d = ud;
	pthread_mutex_lock(&d->ext_mu);
	prioritize_locked(ud, req, resp);
	pthread_mutex_unlock(&d->ext_mu);
}

/* A pod uid as the API server writes it (a UUID): letters, digits, '-'. */
static bool uid_ok(const char *s)
{
	size_t n = strlen(s);
	if (!n || n >= GF_K8S_UID_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      s[i] == '-'))
			return false;
	return true;
}

/* Wait (under mu) until eb is answered, ext_bind_wait_s passed or we stop; true if answered. */
static bool ext_bind_wait(struct daemon *d, struct ext_bind *eb)
{
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += d->o.ext_bind_wait_s;
	while (!eb->done && !gf_kube_stopped(d->o.stop)) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		if (ts.tv_sec > until.tv_sec || (ts.tv_sec == until.tv_sec && ts.tv_nsec >= until.tv_nsec))
			break;
		ts.tv_nsec += 200000000L; /* a stop is seen within 200 ms */
		if (ts.tv_nsec >= 1000000000L)
			ts.tv_sec++, ts.tv_nsec -= 1000000000L;
		if (ts.tv_sec > until.tv_sec || (ts.tv_sec == until.tv_sec && ts.tv_nsec > until.tv_nsec))
			ts = until;
		pthread_cond_timedwait(&d->ext_cv, &d->mu, &ts);
	}
	return eb->done;
}

void gf_ksched_h_bind(void *ud, const struct gf_http_request *req, struct gf_http_response *resp)
{
	struct daemon *d = ud;
	double t0 = gf_ksched_now();
	if (!ext_authorized(d, req, resp)) {
		count_ext(d, V_BIND, resp, t0);
		return;
	}
	cJSON *doc = cJSON_ParseWithLength(req->body, req->body_len);
	const char *name = cJSON_GetStringValue(get_ci(doc, "PodName"));
	const char *ns = cJSON_GetStringValue(get_ci(doc, "PodNamespace"));
	const char *uid = cJSON_GetStringValue(get_ci(doc, "PodUID"));
	const char *node = cJSON_GetStringValue(get_ci(doc, "Node"));
	const char *bad = !doc || !name || !ns || !uid || !node
				  ? "expected ExtenderBindingArgs {PodName, PodNamespace, PodUID, Node}"
			  : !gf_k8s_dns_label(ns) ? "PodNamespace: not a namespace (a DNS-1123 label, at most 63 bytes)"
			  : !gf_k8s_dns_subdomain(name) ? "PodName: not a pod name (a DNS-1123 subdomain, at most 253 bytes)"
			  : !gf_k8s_dns_subdomain(node) ? "Node: not a node name (a DNS-1123 subdomain, at most 253 bytes)"
			  : !uid_ok(uid) ? "PodUID: not a uid (letters, digits and '-', at most 63 bytes)"
					 : NULL;
	if (bad) {
		bad_request(resp, "%s", bad);
		cJSON_Delete(doc);
		count_ext(d, V_BIND, resp, t0);
		return;
	}
	/* checked above: every name fits its field */
	struct job j = { .kind = JOB_EXT_BIND };
	snprintf(j.ns, sizeof(j.ns), "%s", ns);
	snprintf(j.name, sizeof(j.name), "%s", name);
	snprintf(j.uid, sizeof(j.uid), "%s", uid);
	char err[640] = "";
	struct ext_bind *eb = NULL;
	pthread_mutex_lock(&d->mu);
	/* A standby (or a leader still reading the bound pods on taking over)
	 * binds nothing; the binder checks leadership and term again right
	 * before binding (ext_bind_run). */
	j.term = gf_leader_terms(d->leader);
	bool lead = ext_may_bind(d, j.term);
	if (lead && (eb = calloc(1, sizeof(*eb)))) {
		eb->refs = 2;
		snprintf(eb->node, sizeof(eb->node), "%s", node);
		j.eb = eb;
	}
	if (!lead) {
		snprintf(err, sizeof(err), "this gpufleet replica is not the leader (or is still reading the "
			 "bound pods on taking over): it does not bind");
	} else if (!eb || !gf_ksched_push_job(d, &j)) {
		snprintf(err, sizeof(err), "out of memory");
		free(eb);
	} else if (ext_bind_wait(d, eb)) {
		snprintf(err, sizeof(err), "%s", eb->err);
		if (!--eb->refs)
			free(eb);
	} else {
		snprintf(err, sizeof(err), "binding pod %.63s/%.253s did not finish within %d s (the API server is slow); "
			 "it may still complete", ns, name, d->o.ext_bind_wait_s);
		gf_ksched_log("extender bind of %s/%s: no answer within %d s; the binder carries on", ns, name,
			d->o.ext_bind_wait_s);
		if (!--eb->refs)
			free(eb);
	}
	pthread_mutex_unlock(&d->mu);
	resp->content_type = "application/json";
	gf_obuf_puts(&resp->body, "{\"Error\":");
	gf_json_put_str(&resp->body, err);
	gf_obuf_puts(&resp->body, "}");
	cJSON_Delete(doc);
	count_ext(d, V_BIND, resp, t0);
}

/* Is a an IPv4 loopback literal (127.0.0.0/8)? */
static bool loopback(const char *a)
{
	struct in_addr in;
	return a && inet_pton(AF_INET, a, &in) == 1 && (ntohl(in.s_addr) >> 24) == 127;
}

/* The extender options make sense together (see scheduler.h); err says what does not. */
gf_err gf_ksched_check_ext_opts(const struct gf_kube_sched_opts *o, char *err, size_t errlen)
{
	const char *pre = o->extender_prefix ? o->extender_prefix : "/gpusched";
	size_t n = strlen(pre);
	if (n > GF_EXT_PREFIX_MAX || pre[0] != '/') {
		snprintf(err, errlen, "the extender prefix must start with '/' and be at most %d bytes (got %zu)",
			 GF_EXT_PREFIX_MAX, n);
		return GF_INVAL;
	}
	for (size_t i = 0; i < n; i++)
		if (pre[i] <= 0x20 || pre[i] >= 0x7f || strchr("?#%*\\", pre[i])) {
			snprintf(err, errlen, "the extender prefix may hold printable ASCII but spaces, '?', '#', '%%', "
				 "'*' and '\\' (byte %zu is not)", i + 1);
			return GF_INVAL;
		}
	if (o->ext_bind_wait_s < 0 || o->ext_bind_wait_s > GF_EXT_BIND_WAIT_MAX_S) {
		snprintf(err, errlen, "the extender's bind wait is 1..%d s (got %d)", GF_EXT_BIND_WAIT_MAX_S,
			 o->ext_bind_wait_s);
		return GF_INVAL;
	}
	int tls = !!o->ext_tls_cert_pem + !!o->ext_tls_key_pem + !!o->ext_client_ca_pem;
	if (tls && tls != 3) {
		snprintf(err, errlen, "the extender's TLS is mutual: give its certificate, key and client CA together");
		return GF_INVAL;
	}
	if (!tls && o->n_ext_allowed_cns) {
		snprintf(err, errlen, "allowed client names need the extender's TLS (certificate, key, client CA)");
		return GF_INVAL;
	}
	if (!tls && !loopback(o->ext_addr ? o->ext_addr : "127.0.0.1")) {
		snprintf(err, errlen, "the extender serves plain HTTP on loopback only (%s is not): give its TLS "
			 "certificate, key and client CA to serve it beyond (mutual TLS)",
			 o->ext_addr && o->ext_addr[0] ? o->ext_addr : "all interfaces");
		return GF_INVAL;
	}
	return GF_OK;
}
