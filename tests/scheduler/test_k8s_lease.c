/* tests/scheduler/test_k8s_lease.c - leader election's decisions (k8s/lease.h), with
 * the clock passed in: create when absent, wait while another holder's record keeps
 * changing or has not yet been unchanged for a lease duration, take it over after that
 * (acquireTime new, leaseTransitions + 1), renew keeping both, a released lease taken at
 * once, leadership lost at the renew deadline or as soon as another holder is seen, the
 * Lease codec (fields, types, lengths) and the release record.  Against two leaders
 * (ctest label security): a Lease naming us that we did not write is another holder's,
 * a leader whose Lease is rewritten under it (any holder, or the same spec at a new
 * resourceVersion) steps down at once and backs off a lease duration, a write whose
 * answer was lost is recognised; and the thread (gf_leader) against a FAKE Lease API
 * (an in-process gfhttp server with resourceVersion preconditions): two replicas given
 * the same identity get distinct ones and never lead together, and a third party's
 * rewrite leaves no two leaders at any sampled instant. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>
#include <time.h>

#include "http/server.h"
#include "k8s/conn.h"
#include "k8s/lease.h"

static struct gf_lease_record rec(const char *holder, int dur, const char *acq, const char *ren, int tr)
{
	struct gf_lease_record r;
	memset(&r, 0, sizeof(r));
	snprintf(r.holder, sizeof(r.holder), "%s", holder);
	r.duration_s = dur;
	snprintf(r.acquire_time, sizeof(r.acquire_time), "%s", acq);
	snprintf(r.renew_time, sizeof(r.renew_time), "%s", ren);
	r.transitions = tr;
	return r;
}

static void test_create_when_absent(void **st)
{
	(void)st;
	struct gf_lease_elector e;
	struct gf_lease_record w;
	gf_lease_elector_init(&e, "me", 0, 0, 0);
	assert_int_equal(e.lease_s, 15);
	assert_int_equal(e.renew_s, 10);
	assert_int_equal(e.retry_s, 2);
	assert_true(gf_lease_expires_in(&e, 0) < 0); /* nothing seen */
	assert_int_equal(gf_lease_plan(&e, NULL, NULL, 100.0, "T1", &w), GF_LEASE_CREATE);
	assert_string_equal(w.holder, "me");
	assert_int_equal(w.duration_s, 15);
	assert_string_equal(w.acquire_time, "T1");
	assert_string_equal(w.renew_time, "T1");
	assert_int_equal(w.transitions, 0);
	assert_false(gf_lease_leading(&e, 100.0));
	gf_lease_written(&e, true, 100.0, &w, "1");
	assert_true(gf_lease_leading(&e, 100.0));
	assert_true(gf_lease_leading(&e, 109.9));
	assert_false(gf_lease_leading(&e, 110.0)); /* renew deadline: 10 s after the write was sent */
}

static void test_other_holder_expires_on_our_clock(void **st)
{
	(void)st;
	struct gf_lease_elector e;
	struct gf_lease_record w;
	gf_lease_elector_init(&e, "me", 15, 10, 2);
	struct gf_lease_record r1 = rec("other", 15, "A0", "R1", 3);
	/* first seen at t=1000: valid until 1015 on our clock, whatever renewTime says */
	assert_int_equal(gf_lease_plan(&e, &r1, NULL, 1000.0, "S", &w), GF_LEASE_WAIT);
	assert_int_equal(gf_lease_plan(&e, &r1, NULL, 1014.9, "S", &w), GF_LEASE_WAIT);
	/* renewed at 1010 (record changed): the clock restarts */
	struct gf_lease_record r2 = rec("other", 15, "A0", "R2", 3);
	assert_int_equal(gf_lease_plan(&e, &r2, NULL, 1010.0, "S", &w), GF_LEASE_WAIT);
	assert_int_equal(gf_lease_plan(&e, &r2, NULL, 1024.9, "S", &w), GF_LEASE_WAIT);
	assert_true(gf_lease_expires_in(&e, 1020.0) > 4.99 && gf_lease_expires_in(&e, 1020.0) < 5.01);
	assert_true(gf_lease_expires_in(&e, 1030.0) == 0);
	/* unchanged for its duration: taken over */
	assert_int_equal(gf_lease_plan(&e, &r2, NULL, 1025.0, "T", &w), GF_LEASE_UPDATE);
	assert_string_equal(w.holder, "me");
	assert_string_equal(w.acquire_time, "T");
	assert_string_equal(w.renew_time, "T");
	assert_int_equal(w.transitions, 4);
	assert_int_equal(w.duration_s, 15);
	/* the holder's own duration counts, not ours */
	struct gf_lease_elector e2;
	gf_lease_elector_init(&e2, "me", 15, 10, 2);
	struct gf_lease_record r3 = rec("other", 60, "A0", "R", 0);
	assert_int_equal(gf_lease_plan(&e2, &r3, NULL, 0.0, "S", &w), GF_LEASE_WAIT);
	assert_int_equal(gf_lease_plan(&e2, &r3, NULL, 59.0, "S", &w), GF_LEASE_WAIT);
	assert_int_equal(gf_lease_plan(&e2, &r3, NULL, 60.0, "S", &w), GF_LEASE_UPDATE);
}

static void test_renew_keeps_acquire_and_transitions(void **st)
{
	(void)st;
	struct gf_lease_elector e;
	struct gf_lease_record w;
	gf_lease_elector_init(&e, "me", 15, 10, 2);
	struct gf_lease_record mine = rec("me", 15, "A7", "R7", 5);
	gf_lease_written(&e, true, 48.0, &mine, "70"); /* our own write */
	assert_int_equal(gf_lease_plan(&e, &mine, "70", 50.0, "R8", &w), GF_LEASE_UPDATE);
	assert_string_equal(w.acquire_time, "A7");
	assert_string_equal(w.renew_time, "R8");
	assert_int_equal(w.transitions, 5);
	gf_lease_written(&e, true, 50.0, &w, "71");
	assert_true(gf_lease_leading(&e, 55.0));
	/* a failed renewal (409, timeout) does not end leadership before the deadline ... */
	gf_lease_written(&e, false, 52.0, &w, NULL);
	assert_true(gf_lease_leading(&e, 59.9));
	assert_false(gf_lease_leading(&e, 60.0));
	/* ... but seeing another holder does, at once */
	gf_lease_written(&e, true, 60.0, &w, "72");
	assert_true(gf_lease_leading(&e, 61.0));
	struct gf_lease_record taken = rec("other", 15, "X", "X", 6);
	assert_int_equal(gf_lease_plan(&e, &taken, "73", 61.0, "S", &w), GF_LEASE_WAIT);
	assert_false(gf_lease_leading(&e, 61.0));
}

static void test_released_is_free(void **st)
{
	(void)st;
	struct gf_lease_elector e;
	struct gf_lease_record w, rel;
	gf_lease_elector_init(&e, "me", 15, 10, 2);
	struct gf_lease_record cur = rec("old", 15, "A", "R", 2);
	gf_lease_release_record(&cur, "Z", &rel);
	assert_string_equal(rel.holder, "");
	assert_int_equal(rel.duration_s, 1);
	assert_int_equal(rel.transitions, 2);
	assert_string_equal(rel.renew_time, "Z");
	/* an empty holder is free at once, even just observed */
	assert_int_equal(gf_lease_plan(&e, &rel, NULL, 5.0, "T", &w), GF_LEASE_UPDATE);
	assert_true(gf_lease_expires_in(&e, 5.0) < 0); /* released: no holder to wait for */
	assert_int_equal(w.transitions, 3);
	assert_string_equal(w.acquire_time, "T");
}

static void test_codec(void **st)
{
	(void)st;
	const char *doc = "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\","
			  "\"metadata\":{\"name\":\"l\",\"namespace\":\"ns\",\"resourceVersion\":\"4711\"},"
			  "\"spec\":{\"holderIdentity\":\"h_1\",\"leaseDurationSeconds\":15,"
			  "\"acquireTime\":\"2026-12-01T15:44:04.123456Z\",\"renewTime\":\"2026-12-01T15:44:06.000001Z\","
			  "\"leaseTransitions\":7}}";
	struct gf_lease_record r;
	char rv[32], err[200] = "";
	assert_int_equal(gf_lease_decode_text(doc, strlen(doc), &r, rv, sizeof(rv), err, sizeof(err)), GF_OK);
	assert_string_equal(rv, "4711");
	assert_string_equal(r.holder, "h_1");
	assert_int_equal(r.duration_s, 15);
	assert_string_equal(r.acquire_time, "2026-12-01T15:44:04.123456Z");
	assert_string_equal(r.renew_time, "2026-12-01T15:44:06.000001Z");
	assert_int_equal(r.transitions, 7);
	/* round trip */
	cJSON *o = gf_lease_encode("ns", "l", "4711", &r);
	assert_non_null(o);
	struct gf_lease_record r2;
	char rv2[32];
	assert_int_equal(gf_lease_decode(o, &r2, rv2, sizeof(rv2), err, sizeof(err)), GF_OK);
	assert_memory_equal(&r, &r2, sizeof(r));
	assert_string_equal(rv2, "4711");
	cJSON_Delete(o);
	/* a new Lease has no resourceVersion */
	o = gf_lease_encode("ns", "l", "", &r);
	assert_null(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "metadata"), "resourceVersion"));
	cJSON_Delete(o);
	/* empty spec: all absent */
	const char *empty = "{\"metadata\":{\"resourceVersion\":\"1\"},\"spec\":{}}";
	assert_int_equal(gf_lease_decode_text(empty, strlen(empty), &r, rv, sizeof(rv), err, sizeof(err)), GF_OK);
	assert_string_equal(r.holder, "");
	assert_int_equal(r.duration_s, 0);
	/* wrong types and sizes name the field */
	static const struct {
		const char *doc, *want;
	} bad[] = {
		{ "{\"spec\":{\"holderIdentity\":5}}", "spec.holderIdentity" },
		{ "{\"spec\":{\"leaseDurationSeconds\":\"15\"}}", "spec.leaseDurationSeconds" },
		{ "{\"spec\":{\"leaseDurationSeconds\":-1}}", "spec.leaseDurationSeconds" },
		{ "{\"spec\":{\"leaseTransitions\":1.5}}", "spec.leaseTransitions" },
		{ "{\"spec\":{\"renewTime\":\"2026-12-01T15:44:06.000001Z-and-far-too-long-for-a-time\"}}",
		  "spec.renewTime" },
		{ "{\"metadata\":{\"resourceVersion\":\"123456789012345678901234567890123456\"}}",
		  "metadata.resourceVersion" },
		{ "[]", "expected a JSON object" },
		{ "{\"spec\":[]}", "must be objects" },
		{ "{", "not JSON" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(gf_lease_decode_text(bad[i].doc, strlen(bad[i].doc), &r, rv, sizeof(rv), err,
						      sizeof(err)), GF_PARSE);
		if (!strstr(err, bad[i].want))
			fail_msg("%s: error '%s' does not name '%s'", bad[i].doc, err, bad[i].want);
	}
}

static void test_stamp_format(void **st)
{
	(void)st;
	char s[GF_LEASE_TIME_MAX];
	gf_lease_stamp(s);
	assert_int_equal(strlen(s), 27); /* 2026-12-01T15:44:04.123456Z */
	assert_int_equal(s[10], 'T');
	assert_int_equal(s[19], '.');
	assert_int_equal(s[26], 'Z');
}

/* ---- against two leaders ------------------------------------------------------------- */

static void test_named_but_not_written_is_foreign(void **st)
{
	(void)st;
	struct gf_lease_elector e;
	struct gf_lease_record w;
	gf_lease_elector_init(&e, "me", 15, 10, 2);
	/* a Lease naming us that this process never wrote (a twin, a forger): another holder's */
	struct gf_lease_record r = rec("me", 15, "A", "R", 2);
	assert_int_equal(gf_lease_plan(&e, &r, "5", 0.0, "S", &w), GF_LEASE_WAIT);
	assert_false(gf_lease_leading(&e, 0.0));
	assert_true(gf_lease_expires_in(&e, 0.0) > 14.99);
	assert_int_equal(gf_lease_plan(&e, &r, "5", 14.9, "S", &w), GF_LEASE_WAIT);
	/* unchanged for its duration: taken over as a transition, not renewed */
	assert_int_equal(gf_lease_plan(&e, &r, "5", 15.0, "T", &w), GF_LEASE_UPDATE);
	assert_int_equal(w.transitions, 3);
	assert_string_equal(w.acquire_time, "T");
	assert_int_equal(e.stepdowns, 0); /* it never led */
}

/* A leader at t=2 (created at 0, renewed at 2: resourceVersion "2"); *w is its record. */
static void leader(struct gf_lease_elector *e, struct gf_lease_record *w)
{
	gf_lease_elector_init(e, "me", 15, 10, 2);
	assert_int_equal(gf_lease_plan(e, NULL, NULL, 0.0, "T0", w), GF_LEASE_CREATE);
	gf_lease_written(e, true, 0.0, w, "1");
	struct gf_lease_record cur = *w;
	assert_int_equal(gf_lease_plan(e, &cur, "1", 2.0, "T2", w), GF_LEASE_UPDATE);
	gf_lease_written(e, true, 2.0, w, "2");
	assert_true(gf_lease_leading(e, 2.0));
}

static void test_rewritten_under_us_steps_down(void **st)
{
	(void)st;
	struct gf_lease_elector e;
	struct gf_lease_record w, w2;
	static const struct {
		const char *holder;
		int dur;
		const char *renew, *rv;
	} forged[] = {
		{ "me", 15, "FORGED", "3" },   /* our name, another's write */
		{ "me", 15, "T2", "3" },       /* our very spec, at a new resourceVersion */
		{ "other", 1, "X", "3" },      /* another holder with a 1 s lease */
		{ "", 1, "X", "3" },           /* released by a third party */
	};
	for (size_t i = 0; i < sizeof(forged) / sizeof(forged[0]); i++) {
		leader(&e, &w);
		struct gf_lease_record f = rec(forged[i].holder, forged[i].dur, "T0", forged[i].renew, 0);
		if (i == 1)
			f = w;
		/* read at 3: stop at once, and no try for a full lease duration (ours: 15 s) */
		if (gf_lease_plan(&e, &f, forged[i].rv, 3.0, "S", &w2) != GF_LEASE_WAIT)
			fail_msg("case %zu: the rewritten Lease was not waited on", i);
		assert_false(gf_lease_leading(&e, 3.0));
		assert_int_equal(e.stepdowns, 1);
		double left = gf_lease_expires_in(&e, 3.0);
		if (left < 14.99 || left > 15.01)
			fail_msg("case %zu: back-off %.2f s, want 15", i, left);
		if (gf_lease_plan(&e, &f, forged[i].rv, 17.9, "S", &w2) != GF_LEASE_WAIT)
			fail_msg("case %zu: tried again 14.9 s after stepping down", i);
		/* then, the record unchanged: taken over as a new term */
		if (gf_lease_plan(&e, &f, forged[i].rv, 18.0, "N", &w2) != GF_LEASE_UPDATE)
			fail_msg("case %zu: not taken back after the back-off", i);
		assert_string_equal(w2.acquire_time, "N");
		assert_int_equal(e.stepdowns, 1);
	}
	/* the Lease deleted under us: the same */
	leader(&e, &w);
	assert_int_equal(gf_lease_plan(&e, NULL, NULL, 3.0, "S", &w2), GF_LEASE_WAIT);
	assert_int_equal(e.stepdowns, 1);
	assert_int_equal(gf_lease_plan(&e, NULL, NULL, 18.0, "S", &w2), GF_LEASE_CREATE);
}

static void test_lost_answer_is_ours(void **st)
{
	(void)st;
	struct gf_lease_elector e;
	struct gf_lease_record w, w2;
	leader(&e, &w);
	struct gf_lease_record cur = w;
	assert_int_equal(gf_lease_plan(&e, &cur, "2", 4.0, "T4", &w2), GF_LEASE_UPDATE);
	gf_lease_written(&e, false, 4.0, &w2, NULL); /* timed out, but the API server applied it */
	assert_int_equal(gf_lease_plan(&e, &w2, "3", 6.0, "T6", &w), GF_LEASE_UPDATE);
	assert_int_equal(e.stepdowns, 0);
	assert_string_equal(w.acquire_time, "T0"); /* a renewal */
	gf_lease_written(&e, true, 6.0, &w, "4");
	assert_true(gf_lease_leading(&e, 6.0));
}

/* Two electors given the same identity against one in-memory Lease with
 * resourceVersion preconditions, trying every 2 s one second apart, 60 s. */
static void test_same_identity_two_electors(void **st)
{
	(void)st;
	struct gf_lease_elector e[2];
	gf_lease_elector_init(&e[0], "replica-a", 15, 10, 2);
	gf_lease_elector_init(&e[1], "replica-a", 15, 10, 2);
	struct gf_lease_record store;
	bool exists = false;
	int rv = 0, both = 0, some = 0;
	for (int step = 0; step < 120; step++) {
		double now = step * 0.5;
		int who = step % 4 == 0 ? 0 : step % 4 == 2 ? 1 : -1;
		if (who >= 0) {
			struct gf_lease_record w;
			char rvs[16], nrv[16];
			snprintf(rvs, sizeof(rvs), "%d", rv);
			enum gf_lease_step s = gf_lease_plan(&e[who], exists ? &store : NULL, rvs, now, "T", &w);
			/* a unique stamp per write, as gf_lease_stamp's microseconds */
			snprintf(w.renew_time, sizeof(w.renew_time), "T%d", step);
			bool ok = (s == GF_LEASE_CREATE && !exists) || s == GF_LEASE_UPDATE; /* same rv read */
			if (ok) {
				store = w;
				exists = true;
				rv++;
			}
			snprintf(nrv, sizeof(nrv), "%d", rv);
			if (s != GF_LEASE_WAIT)
				gf_lease_written(&e[who], ok, now, &w, nrv);
		}
		bool l0 = gf_lease_leading(&e[0], now), l1 = gf_lease_leading(&e[1], now);
		both += l0 && l1;
		some += l0 || l1;
	}
	printf("same identity, 60 s: %d of 120 instants with two leaders, %d with one\n", both, some - both);
	assert_int_equal(both, 0);
	assert_true(some >= 110);
}

/* ---- the thread against a FAKE Lease API ----------------------------------------------- */

#define LEASES "/apis/coordination.k8s.io/v1/namespaces/default/leases"

static struct fake_api {
	pthread_mutex_t mu;
	bool exists;
	struct gf_lease_record rec;
	long rv;
} api = { .mu = PTHREAD_MUTEX_INITIALIZER };

static void answer(struct gf_http_response *resp)
{
	char rv[24];
	snprintf(rv, sizeof(rv), "%ld", api.rv);
	cJSON *o = gf_lease_encode("default", "l", rv, &api.rec);
	char *t = cJSON_PrintUnformatted(o);
	gf_obuf_puts(&resp->body, t);
	free(t);
	cJSON_Delete(o);
	resp->content_type = "application/json";
}

static void h_lease(void *ud, const struct gf_http_request *req, struct gf_http_response *resp)
{
	(void)ud;
	pthread_mutex_lock(&api.mu);
	if (!strcmp(req->method, "GET")) {
		if (api.exists)
			answer(resp);
		else
			gf_http_response_error(resp, 404, "{\"kind\":\"Status\",\"code\":404}");
	} else {
		struct gf_lease_record r;
		char rv[32], err[200];
		bool post = !strcmp(req->method, "POST");
		if (gf_lease_decode_text(req->body, req->body_len, &r, rv, sizeof(rv), err, sizeof(err))) {
			gf_http_response_error(resp, 400, "%s", err);
		} else if (post ? api.exists : (!api.exists || strtol(rv, NULL, 10) != api.rv)) {
			gf_http_response_error(resp, 409, "{\"kind\":\"Status\",\"code\":409}");
		} else {
			api.exists = true;
			api.rec = r;
			api.rv++;
			answer(resp);
		}
	}
	pthread_mutex_unlock(&api.mu);
}

static double mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Sample both for secs: instants with two leaders; *led: instants with l[k] leading. */
static int sample(gf_leader *l[2], double secs, int led[2])
{
	int both = 0;
	led[0] = led[1] = 0;
	for (double end = mono() + secs; mono() < end;) {
		bool a = gf_leader_leading(l[0]), b = gf_leader_leading(l[1]);
		both += a && b;
		led[0] += a;
		led[1] += b;
		struct timespec ts = { 0, 5000000 };
		nanosleep(&ts, NULL);
	}
	return both;
}

static void test_thread_same_identity_fake_api(void **st)
{
	(void)st;
	static const struct gf_http_route routes[] = {
		{ "GET", LEASES "/l", h_lease, NULL },
		{ "PUT", LEASES "/l", h_lease, NULL },
		{ "POST", LEASES, h_lease, NULL },
	};
	gf_http_server *srv;
	struct gf_http_config hc = { .bind_addr = "127.0.0.1", .routes = routes, .nroutes = 3 };
	assert_int_equal(gf_http_server_create(&hc, &srv), GF_OK);
	char url[64];
	snprintf(url, sizeof(url), "http://127.0.0.1:%u", gf_http_server_port(srv));
	struct gf_kube_conn conn = { .server = url };
	gf_leader *l[2];
	for (int i = 0; i < 2; i++) {
		struct gf_leader_opts o = { .conn = &conn, .ns = "default", .name = "l", .identity = "replica-a",
					    .lease_s = 3, .renew_s = 2, .retry_s = 1, .seed = (uint64_t)i + 1 };
		assert_int_equal(gf_leader_start(&o, &l[i]), GF_OK);
	}
	const char *id0 = gf_leader_identity(l[0]), *id1 = gf_leader_identity(l[1]);
	printf("identities: %s, %s\n", id0, id1);
	assert_int_equal(strlen(id0), strlen("replica-a") + GF_LEASE_NONCE_LEN);
	assert_memory_equal(id0, "replica-a_", 10);
	assert_string_not_equal(id0, id1);
	/* 1. the same identity given twice: one leader at a time */
	int led[2];
	int both = sample(l, 4.0, led);
	printf("same identity, 4 s: %d samples with two leaders; led %d / %d\n", both, led[0], led[1]);
	assert_int_equal(both, 0);
	assert_true(led[0] + led[1] > 0);
	int a = gf_leader_leading(l[0]) ? 0 : 1, b = 1 - a;
	assert_true(gf_leader_leading(l[a]));
	/* 2. a third party names the standby: it must not lead on a record it did not write,
	 * and the leader steps down at its next round */
	pthread_mutex_lock(&api.mu);
	snprintf(api.rec.holder, sizeof(api.rec.holder), "%s", gf_leader_identity(l[b]));
	snprintf(api.rec.renew_time, sizeof(api.rec.renew_time), "2026-12-02T00:00:00.000000Z");
	api.rv++;
	pthread_mutex_unlock(&api.mu);
	double t0 = mono();
	both = sample(l, 2.5, led);
	printf("after the rewrite, 2.5 s: %d samples with two leaders; the named standby led %d, "
	       "the leader stepped down %lu time(s)\n", both, led[b], gf_leader_stepdowns(l[a]));
	assert_int_equal(both, 0);
	assert_int_equal(led[b], 0);
	assert_false(gf_leader_leading(l[a]));
	assert_int_equal(gf_leader_stepdowns(l[a]), 1);
	/* 3. a lease duration later someone leads again, alone */
	both = sample(l, 4.0, led);
	printf("then, 4 s: %d with two leaders; led %d / %d (%.1f s after the rewrite)\n", both, led[0], led[1],
	       mono() - t0);
	assert_int_equal(both, 0);
	assert_true(gf_leader_leading(l[0]) || gf_leader_leading(l[1]));
	gf_leader_stop(l[0]);
	gf_leader_stop(l[1]);
	gf_http_server_destroy(srv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_when_absent),
		cmocka_unit_test(test_other_holder_expires_on_our_clock),
		cmocka_unit_test(test_renew_keeps_acquire_and_transitions),
		cmocka_unit_test(test_released_is_free),
		cmocka_unit_test(test_codec),
		cmocka_unit_test(test_stamp_format),
		cmocka_unit_test(test_named_but_not_written_is_foreign),
		cmocka_unit_test(test_rewritten_under_us_steps_down),
		cmocka_unit_test(test_lost_answer_is_ours),
		cmocka_unit_test(test_same_identity_two_electors),
		cmocka_unit_test(test_thread_same_identity_fake_api),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
