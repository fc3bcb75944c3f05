/*
 * k8s/lease.c - leader election on a Lease (see lease.h for the protocol).
 *
 * The elector is pure: gf_lease_plan() and gf_lease_written() take the
 * caller's monotonic time.  The thread (gf_leader) is the only part that
 * reads clocks and talks to the API server: each round it takes the time,
 * GETs the Lease, plans, and POSTs (create) or PUTs (update, with the
 * resourceVersion read as the precondition).  One round costs one or two
 * requests; a leader does one every retry period (2 s), a standby every
 * retry period times a random factor in [1, 2.2) (client-go's jitter 1.2),
 * so standbys do not knock in step; a standby whose holder's lease runs out
 * before its next try tries at that moment instead.
 *
 * Identity: the caller's, with "_" and 16 hex digits from getrandom()
 * appended once at start (the nonce), so holderIdentity names this process
 * and no other.  The elector remembers the spec and resourceVersion of its
 * last successful write (the answer to the PUT or POST) and counts a Lease
 * as its own only when it reads that object back (lease.h).
 *
 * Leadership as the rest of the daemon sees it is a deadline: the
 * monotonic time at which the renew deadline of the last successful write
 * runs out, published atomically.  A binder that checks it before each
 * request therefore stops by itself when renewals stop, even if this
 * thread is stuck in a request.
 */
#include "k8s/lease.h"

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "core/rng.h"
#include "core/time.h"

/* ---- codec --------------------------------------------------------------- */

static gf_err get_str(const cJSON *o, const char *key, const char *where, char *out, size_t outlen, char *err,
		      size_t errlen)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	out[0] = '\0';
	if (!v || cJSON_IsNull(v))
		return GF_OK;
	if (!cJSON_IsString(v)) {
		snprintf(err, errlen, "Lease %s.%s: expected a string", where, key);
		return GF_PARSE;
	}
	if (strlen(v->valuestring) >= outlen) {
		snprintf(err, errlen, "Lease %s.%s: longer than %zu bytes", where, key, outlen - 1);
		return GF_PARSE;
	}
	snprintf(out, outlen, "%s", v->valuestring);
	return GF_OK;
}

static gf_err get_int(const cJSON *o, const char *key, int *out, char *err, size_t errlen)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	*out = 0;
	if (!v || cJSON_IsNull(v))
		return GF_OK;
	if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 2147483647.0 ||
	    v->valuedouble != (double)(int)v->valuedouble) {
		snprintf(err, errlen, "Lease spec.%s: expected an integer 0..2147483647", key);
		return GF_PARSE;
	}
	*out = (int)v->valuedouble;
	return GF_OK;
}

gf_err gf_lease_decode(const cJSON *lease, struct gf_lease_record *r, char *rv, size_t rvlen, char *err,
		       size_t errlen)
{
	memset(r, 0, sizeof(*r));
	if (rvlen)
		rv[0] = '\0';
	if (!cJSON_IsObject(lease)) {
		snprintf(err, errlen, "Lease: expected a JSON object");
		return GF_PARSE;
	}
	const cJSON *md = cJSON_GetObjectItemCaseSensitive(lease, "metadata");
	const cJSON *spec = cJSON_GetObjectItemCaseSensitive(lease, "spec");
	if ((md && !cJSON_IsObject(md)) || (spec && !cJSON_IsNull(spec) && !cJSON_IsObject(spec))) {
		snprintf(err, errlen, "Lease: metadata and spec must be objects");
		return GF_PARSE;
	}
	gf_err e;
	if ((e = get_str(md, "resourceVersion", "metadata", rv, rvlen, err, errlen)) ||
	    (e = get_str(spec, "holderIdentity", "spec", r->holder, sizeof(r->holder), err, errlen)) ||
	    (e = get_str(spec, "acquireTime", "spec", r->acquire_time, sizeof(r->acquire_time), err, errlen)) ||
	    (e = get_str(spec, "renewTime", "spec", r->renew_time, sizeof(r->renew_time), err, errlen)) ||
	    (e = get_int(spec, "leaseDurationSeconds", &r->duration_s, err, errlen)) ||
	    (e = get_int(spec, "leaseTransitions", &r->transitions, err, errlen)))
		return e;
	return GF_OK;
}

gf_err gf_lease_decode_text(const char *text, size_t len, struct gf_lease_record *r, char *rv, size_t rvlen,
			    char *err, size_t errlen)
{
	cJSON *doc = cJSON_ParseWithLength(text, len);
	if (!doc) {
		memset(r, 0, sizeof(*r));
		snprintf(err, errlen, "Lease: not JSON");
		return GF_PARSE;
	}
	gf_err e = gf_lease_decode(doc, r, rv, rvlen, err, errlen);
	cJSON_Delete(doc);
	return e;
}

cJSON *gf_lease_encode(const char *ns, const char *name, const char *rv, const struct gf_lease_record *r)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "apiVersion", "coordination.k8s.io/v1");
	cJSON_AddStringToObject(o, "kind", "Lease");
	cJSON *md = cJSON_AddObjectToObject(o, "metadata");
	cJSON_AddStringToObject(md, "name", name);
	cJSON_AddStringToObject(md, "namespace", ns);
	if (rv && rv[0])
		cJSON_AddStringToObject(md, "resourceVersion", rv);
	cJSON *s = cJSON_AddObjectToObject(o, "spec");
	cJSON_AddStringToObject(s, "holderIdentity", r->holder);
	cJSON_AddNumberToObject(s, "leaseDurationSeconds", r->duration_s);
	if (r->acquire_time[0])
		cJSON_AddStringToObject(s, "acquireTime", r->acquire_time);
	if (r->renew_time[0])
		cJSON_AddStringToObject(s, "renewTime", r->renew_time);
	cJSON_AddNumberToObject(s, "leaseTransitions", r->transitions);
	if (!s || !md) { /* cJSON_Add* return NULL without memory */
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

/* ---- the elector --------------------------------------------------------- */

void gf_lease_elector_init(struct gf_lease_elector *e, const char *id, int lease_s, int renew_s, int retry_s)
{
	memset(e, 0, sizeof(*e));
	snprintf(e->id, sizeof(e->id), "%s", id);
	e->lease_s = lease_s > 0 ? lease_s : 15;
	e->renew_s = renew_s > 0 ? renew_s : 10;
	e->retry_s = retry_s > 0 ? retry_s : 2;
}

static bool record_equal(const struct gf_lease_record *a, const struct gf_lease_record *b)
{
	return !strcmp(a->holder, b->holder) && a->duration_s == b->duration_s &&
	       !strcmp(a->acquire_time, b->acquire_time) && !strcmp(a->renew_time, b->renew_time) &&
	       a->transitions == b->transitions;
}

/* Is cur (read with resourceVersion rv) the object our last successful write produced? */
static bool wrote_it(struct gf_lease_elector *e, const struct gf_lease_record *cur, const char *rv)
{
	if (e->have_attempt && record_equal(&e->attempt, cur)) {
		/* a write whose answer was lost did land: it is ours (its stamp is unique) */
		e->have_attempt = false;
		e->have_written = true;
		e->written = *cur;
		snprintf(e->written_rv, sizeof(e->written_rv), "%s", rv ? rv : "");
	}
	if (!e->have_written || !record_equal(&e->written, cur))
		return false;
	return !rv || !rv[0] || !e->written_rv[0] || !strcmp(rv, e->written_rv);
}

enum gf_lease_step gf_lease_plan(struct gf_lease_elector *e, const struct gf_lease_record *cur, const char *rv,
				 double now, const char *stamp, struct gf_lease_record *want)
{
	memset(want, 0, sizeof(*want));
	snprintf(want->holder, sizeof(want->holder), "%s", e->id);
	want->duration_s = e->lease_s;
	snprintf(want->renew_time, sizeof(want->renew_time), "%s", stamp);
	bool ours = cur && wrote_it(e, cur, rv);
	if (!ours && e->have_written) {
		/* the Lease we wrote last is gone or rewritten under us: step down, back off */
		int dur = cur && cur->duration_s > e->lease_s ? cur->duration_s : e->lease_s;
		e->leading = false;
		e->have_written = false;
		e->backoff_until = now + dur;
		e->stepdowns++;
	}
	if (!cur) {
		if (now < e->backoff_until)
			return GF_LEASE_WAIT;
		snprintf(want->acquire_time, sizeof(want->acquire_time), "%s", stamp);
		return GF_LEASE_CREATE;
	}
	if (!e->have_observed || !record_equal(&e->observed, cur)) {
		e->observed = *cur;
		e->observed_at = now;
		e->have_observed = true;
	}
	if (!ours) {
		e->leading = false; /* not our write: whatever we thought, we do not lead */
		if (now < e->backoff_until)
			return GF_LEASE_WAIT;
		if (cur->holder[0] && e->observed_at + cur->duration_s > now)
			return GF_LEASE_WAIT;
	}
	if (ours && cur->acquire_time[0]) {
		snprintf(want->acquire_time, sizeof(want->acquire_time), "%s", cur->acquire_time);
		want->transitions = cur->transitions;
	} else {
		snprintf(want->acquire_time, sizeof(want->acquire_time), "%s", stamp);
		want->transitions = ours ? cur->transitions : cur->transitions + 1;
	}
	return GF_LEASE_UPDATE;
}

void gf_lease_written(struct gf_lease_elector *e, bool ok, double sent, const struct gf_lease_record *want,
		      const char *rv)
{
	if (!ok) {
		/* a conflict or an error: the next read tells; the deadline runs meanwhile */
		e->have_attempt = true;
		e->attempt = *want;
		return;
	}
	e->have_attempt = false;
	e->leading = true;
	e->renewed_at = sent;
	e->observed = *want;
	e->observed_at = sent;
	e->have_observed = true;
	e->have_written = true;
	e->written = *want;
	snprintf(e->written_rv, sizeof(e->written_rv), "%s", rv ? rv : "");
}

double gf_lease_expires_in(const struct gf_lease_elector *e, double now)
{
	double until = -1;
	if (e->have_observed && e->observed.holder[0] &&
	    !(e->have_written && record_equal(&e->written, &e->observed)))
		until = e->observed_at + e->observed.duration_s;
	if (e->backoff_until > now && e->backoff_until > until)
		until = e->backoff_until;
	if (until < 0)
		return -1;
	return until > now ? until - now : 0;
}

bool gf_lease_leading(const struct gf_lease_elector *e, double now)
{
	return e->leading && now - e->renewed_at < e->renew_s;
}

void gf_lease_release_record(const struct gf_lease_record *cur, const char *stamp, struct gf_lease_record *out)
{
	memset(out, 0, sizeof(*out));
	out->duration_s = 1;
	snprintf(out->acquire_time, sizeof(out->acquire_time), "%s", stamp);
	snprintf(out->renew_time, sizeof(out->renew_time), "%s", stamp);
	out->transitions = cur->transitions;
}

/* ---- the thread ---------------------------------------------------------- */

struct gf_leader {
	struct gf_leader_opts o;
	struct gf_lease_elector e;
	gf_kube_client *k;
	pthread_t t;
	volatile int stop;
	_Atomic int64_t until_ns;	/* leading while CLOCK_MONOTONIC < this */
	_Atomic unsigned long terms;
	_Atomic unsigned long stepdowns;
	struct gf_rng rng;
	char coll[600], path[600 + GF_K8S_NAME_MAX];
};

static double mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void gf_lease_stamp(char out[GF_LEASE_TIME_MAX])
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	char s[GF_RFC3339_US_LEN];
	gf_rfc3339_us((int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000, s);
	snprintf(out, GF_LEASE_TIME_MAX, "%s", s);
}

static void llog(struct gf_leader *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void llog(struct gf_leader *l, const char *fmt, ...)
{
	if (!l->o.log)
		return;
	char line[700];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	l->o.log(l->o.log_ud, line);
}

/* GET the Lease: GF_OK with *found; an error (logged) when it cannot be read. */
static gf_err read_lease(struct gf_leader *l, bool *found, struct gf_lease_record *cur, char *rv, size_t rvlen)
{
	long st = 0;
	cJSON *doc = NULL;
	char err[400] = "";
	gf_err e = gf_kube_json(l->k, "GET", l->path, NULL, NULL, &st, &doc, err, sizeof(err));
	*found = false;
	if (e || (!doc && st != 404)) {
		llog(l, "reading lease %s/%s: %s", l->o.ns, l->o.name, err[0] ? err : gf_strerror(e ? e : GF_UNAVAILABLE));
		cJSON_Delete(doc);
		return e ? e : GF_UNAVAILABLE;
	}
	if (!doc)
		return GF_OK;
	e = gf_lease_decode(doc, cur, rv, rvlen, err, sizeof(err));
	cJSON_Delete(doc);
	if (e)
		llog(l, "lease %s/%s: %s", l->o.ns, l->o.name, err);
	*found = !e;
	return e;
}

/* Write the Lease (POST when rv is NULL, else PUT with rv): true on 2xx, with the
 * resourceVersion of the object written in out_rv ("" when the answer has none). */
static bool write_lease(struct gf_leader *l, const char *rv, const struct gf_lease_record *want, char *out_rv,
			size_t out_rvlen)
{
	out_rv[0] = '\0';
	cJSON *o = gf_lease_encode(l->o.ns, l->o.name, rv, want);
	char *body = o ? cJSON_PrintUnformatted(o) : NULL;
	cJSON_Delete(o);
	if (!body)
		return false;
	long st = 0;
	char err[400] = "";
	cJSON *doc = NULL;
	gf_err e = gf_kube_json(l->k, rv ? "PUT" : "POST", rv ? l->path : l->coll, "application/json", body, &st,
				&doc, err, sizeof(err));
	free(body);
	if (e)
		llog(l, "writing lease %s/%s: %s", l->o.ns, l->o.name, err[0] ? err : gf_strerror(e));
	else if (st / 100 != 2 && st != 409)
		llog(l, "writing lease %s/%s: HTTP %ld", l->o.ns, l->o.name, st);
	bool ok = !e && st / 100 == 2;
	if (ok && doc) {
		struct gf_lease_record back;
		if (gf_lease_decode(doc, &back, out_rv, out_rvlen, err, sizeof(err)))
			out_rv[0] = '\0';
	}
	cJSON_Delete(doc);
	return ok;
}

static void round_once(struct gf_leader *l)
{
	double t = mono_s();
	struct gf_lease_record cur, want;
	char rv[GF_K8S_RV_MAX], nrv[GF_K8S_RV_MAX], stamp[GF_LEASE_TIME_MAX];
	bool found;
	if (read_lease(l, &found, &cur, rv, sizeof(rv)))
		return;
	gf_lease_stamp(stamp);
	unsigned long down = l->e.stepdowns;
	enum gf_lease_step s = gf_lease_plan(&l->e, found ? &cur : NULL, found ? rv : NULL, t, stamp, &want);
	if (l->e.stepdowns != down) {
		atomic_store(&l->stepdowns, l->e.stepdowns);
		llog(l, "lease %s/%s was rewritten by someone else (holder '%s'): stepping down for %.0f s",
		     l->o.ns, l->o.name, found ? cur.holder : "(deleted)", l->e.backoff_until - t);
	}
	if (s == GF_LEASE_WAIT)
		return;
	bool ok = write_lease(l, s == GF_LEASE_CREATE ? NULL : rv, &want, nrv, sizeof(nrv));
	gf_lease_written(&l->e, ok, t, &want, nrv);
}

static void publish(struct gf_leader *l, bool leading)
{
	int64_t until = leading ? (int64_t)((l->e.renewed_at + l->e.renew_s) * 1e9) : 0;
	atomic_store(&l->until_ns, until);
}

static void *leader_main(void *arg)
{
	struct gf_leader *l = arg;
	bool was = false;
	while (!gf_kube_stopped(&l->stop)) {
		round_once(l);
		bool now = gf_lease_leading(&l->e, mono_s());
		if (now && !was)
			atomic_fetch_add(&l->terms, 1); /* before it shows as leading: work is tagged with the new term */
		publish(l, now);
		if (now != was) {
			llog(l, "%s lease %s/%s as %s", now ? "acquired" : "lost", l->o.ns, l->o.name, l->e.id);
			if (l->o.on_change)
				l->o.on_change(l->o.ud, now);
			was = now;
		}
		double wait = l->e.retry_s;
		if (!now) {
			wait *= 1.0 + 1.2 * gf_rng_double(&l->rng);
			/* another holder's lease runs out before the next try: try right then */
			double left = gf_lease_expires_in(&l->e, mono_s());
			if (left >= 0 && left < wait)
				wait = left + 0.01;
		}
		gf_kube_sleep_ms((long)(wait * 1000), &l->stop);
	}
	return NULL;
}

gf_err gf_leader_start(const struct gf_leader_opts *o, gf_leader **out)
{
	*out = NULL;
	if (!o->ns || !o->ns[0] || !o->name || !o->name[0] || !o->identity || !o->identity[0] ||
	    strlen(o->ns) >= GF_K8S_NAME_MAX || strlen(o->name) >= GF_K8S_NAME_MAX ||
	    strlen(o->identity) >= GF_LEASE_ID_MAX - GF_LEASE_NONCE_LEN)
		return GF_INVAL;
	uint64_t nonce;
	if (getrandom(&nonce, sizeof(nonce), 0) != (ssize_t)sizeof(nonce))
		return GF_UNAVAILABLE;
	struct gf_leader *l = calloc(1, sizeof(*l));
	if (!l)
		return GF_NOMEM;
	l->o = *o;
	char id[GF_LEASE_ID_MAX];
	snprintf(id, sizeof(id), "%s_%016llx", o->identity, (unsigned long long)nonce);
	gf_lease_elector_init(&l->e, id, o->lease_s, o->renew_s, o->retry_s);
	l->o.identity = l->e.id;
	if (l->e.renew_s >= l->e.lease_s || l->e.retry_s >= l->e.renew_s) {
		free(l);
		return GF_INVAL;
	}
	gf_rng_init(&l->rng, o->seed);
	snprintf(l->coll, sizeof(l->coll), "/apis/coordination.k8s.io/v1/namespaces/%s/leases", o->ns);
	snprintf(l->path, sizeof(l->path), "%.599s/%s", l->coll, o->name);
	/* one try per request (the round is the retry), bounded well inside the renew deadline */
	struct gf_kube_client_opts co = { .timeout_ms = l->e.renew_s * 1000L / 2, .retries = -1, .seed = o->seed };
	gf_err e = gf_kube_client_create(o->conn, &co, &l->k);
	if (e) {
		free(l);
		return e;
	}
	atomic_init(&l->until_ns, 0);
	atomic_init(&l->terms, 0);
	atomic_init(&l->stepdowns, 0);
	if (pthread_create(&l->t, NULL, leader_main, l)) {
		gf_kube_client_destroy(l->k);
		free(l);
		return GF_NOMEM;
	}
	*out = l;
	return GF_OK;
}

bool gf_leader_leading(gf_leader *l)
{
	if (!l)
		return true;
	int64_t until = atomic_load(&l->until_ns);
	return until && (int64_t)(mono_s() * 1e9) < until;
}

unsigned long gf_leader_terms(gf_leader *l)
{
	return l ? atomic_load(&l->terms) : 0;
}

const char *gf_leader_identity(const gf_leader *l)
{
	return l->e.id;
}

unsigned long gf_leader_stepdowns(gf_leader *l)
{
	return l ? atomic_load(&l->stepdowns) : 0;
}

void gf_leader_stop(gf_leader *l)
{
	if (!l)
		return;
	gf_kube_stop(&l->stop);
	pthread_join(l->t, NULL);
	if (gf_lease_leading(&l->e, mono_s())) {
		atomic_store(&l->until_ns, 0); /* stop leading before giving it away */
		struct gf_lease_record cur, rel;
		char rv[GF_K8S_RV_MAX], stamp[GF_LEASE_TIME_MAX];
		bool found;
		char nrv[GF_K8S_RV_MAX];
		/* only the object we wrote: never release one rewritten under us */
		if (!read_lease(l, &found, &cur, rv, sizeof(rv)) && found && !strcmp(cur.holder, l->e.id) &&
		    l->e.have_written && !strcmp(cur.renew_time, l->e.written.renew_time)) {
			gf_lease_stamp(stamp);
			gf_lease_release_record(&cur, stamp, &rel);
			if (write_lease(l, rv, &rel, nrv, sizeof(nrv)))
				llog(l, "released lease %s/%s", l->o.ns, l->o.name);
		}
	}
	gf_kube_client_destroy(l->k);
	free(l);
}
