/* tests/scheduler/test_k8s_client.c - the API client against a scripted local HTTP server:
 * retries with backoff on 503, no retry on 404, 2xx JSON, the watch stream (events split
 * across writes, bookmarks, resourceVersion resume), the reflector resuming an ended watch
 * from the last resourceVersion and relisting on 410 Gone; the binding and what a 409 means. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "k8s/bind.h"
#include "k8s/client.h"

/* A scripted server: each connection reads one request, records its first line,
 * and answers with the next scripted response (raw bytes, written in chunks). */
#define MAXR 16
struct fake {
	int lfd;
	uint16_t port;
	const char *resp[MAXR];
	int nresp, next;
	char lines[MAXR][512];
	int nlines;
	pthread_t t;
	pthread_mutex_t mu;
};

static void *serve(void *arg)
{
	struct fake *f = arg;
	for (;;) {
		int c = accept(f->lfd, NULL, NULL);
		if (c < 0)
			return NULL;
		char buf[8192];
		size_t n = 0;
		while (n < sizeof(buf) - 1) {
			ssize_t r = read(c, buf + n, sizeof(buf) - 1 - n);
			if (r <= 0)
				break;
			n += (size_t)r;
			buf[n] = '\0';
			char *end = strstr(buf, "\r\n\r\n");
			if (end) {
				const char *cl = strstr(buf, "Content-Length:");
				size_t want = (size_t)(end + 4 - buf) + (cl ? strtoul(cl + 15, NULL, 10) : 0);
				if (n >= want)
					break;
			}
		}
		pthread_mutex_lock(&f->mu);
		int i = f->next < f->nresp ? f->next++ : -1;
		if (f->nlines < MAXR) {
			char *eol = strstr(buf, "\r\n");
			size_t l = eol ? (size_t)(eol - buf) : 0;
			snprintf(f->lines[f->nlines++], 512, "%.*s", (int)(l < 500 ? l : 500), buf);
		}
		pthread_mutex_unlock(&f->mu);
		const char *r = i >= 0 ? f->resp[i] : "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
		/* Write in small pieces so the client's line splitting is exercised. */
		size_t len = strlen(r);
		for (size_t off = 0; off < len; off += 7) {
			size_t k = len - off < 7 ? len - off : 7;
			if (write(c, r + off, k) < 0)
				break;
		}
		close(c);
	}
}

static void fake_start(struct fake *f)
{
	f->lfd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	assert_int_equal(bind(f->lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(f->lfd, 16), 0);
	socklen_t sl = sizeof(a);
	getsockname(f->lfd, (struct sockaddr *)&a, &sl);
	f->port = ntohs(a.sin_port);
	pthread_mutex_init(&f->mu, NULL);
	pthread_create(&f->t, NULL, serve, f);
}

static void fake_stop(struct fake *f)
{
	shutdown(f->lfd, SHUT_RDWR);
	close(f->lfd);
	pthread_join(f->t, NULL);
}

#define OK_JSON(body) "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: " #body "\r\n\r\n"

static char server_url[64];
static struct gf_kube_conn conn;

static gf_kube_client *client(struct fake *f, int retries)
{
	snprintf(server_url, sizeof(server_url), "http://127.0.0.1:%u", f->port);
	memset(&conn, 0, sizeof(conn));
	conn.server = server_url;
	struct gf_kube_client_opts o = { .retries = retries, .base_backoff_ms = 5, .timeout_ms = 5000 };
	gf_kube_client *k;
	assert_int_equal(gf_kube_client_create(&conn, &o, &k), GF_OK);
	return k;
}

static void test_retry_and_status(void **st)
{
	(void)st;
	struct fake f = { 0 };
	f.resp[f.nresp++] = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
	f.resp[f.nresp++] = "HTTP/1.1 429 Too Many Requests\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
	f.resp[f.nresp++] = "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 11\r\n\r\n{\"a\":\"b\"}\r\n";
	f.resp[f.nresp++] = "HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 50\r\n\r\n{\"kind\":\"Status\",\"message\":\"pods \\\"x\\\" not found\"}";
	f.resp[f.nresp++] = "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 5\r\n\r\nnope!";
	fake_start(&f);
	gf_kube_client *k = client(&f, 3);
	long status;
	cJSON *doc;
	char err[256] = "";
	assert_int_equal(gf_kube_json(k, "GET", "/api/v1/pods/a", NULL, NULL, &status, &doc, err, sizeof(err)), GF_OK);
	assert_int_equal(status, 200);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(doc, "a")), "b");
	cJSON_Delete(doc);
	assert_int_equal(f.nlines, 3); /* two retries */
	assert_int_equal(gf_kube_json(k, "POST", "/api/v1/x", "application/json", "{}", &status, &doc, err, sizeof(err)), GF_OK);
	assert_int_equal(status, 404); /* not retried */
	assert_null(doc);
	assert_non_null(strstr(err, "HTTP 404: pods \"x\" not found"));
	assert_int_equal(f.nlines, 4);
	assert_string_equal(f.lines[3], "POST /api/v1/x HTTP/1.1");
	assert_int_equal(gf_kube_json(k, "GET", "/y", NULL, NULL, &status, &doc, err, sizeof(err)), GF_PARSE);
	/* The script is exhausted: 500s until the retries run out. */
	assert_int_equal(gf_kube_json(k, "GET", "/z", NULL, NULL, &status, &doc, err, sizeof(err)), GF_UNAVAILABLE);
	assert_int_equal(f.nlines, 5 + 4);
	gf_kube_client_destroy(k);
	fake_stop(&f);
	/* Nobody listening: a transport error after the retries. */
	k = client(&f, 1);
	assert_int_equal(gf_kube_request(k, "GET", "/", NULL, NULL, 0, &status, NULL, err, sizeof(err)), GF_UNAVAILABLE);
	assert_true(strlen(err) > 0);
	gf_kube_client_destroy(k);
}

struct seen {
	char log[2048];
	int n;
	volatile int *stop;
	int stop_after;
};

static void on_ev(void *ud, const char *type, const cJSON *obj)
{
	struct seen *s = ud;
	const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(obj, "metadata"), "name"));
	size_t l = strlen(s->log);
	snprintf(s->log + l, sizeof(s->log) - l, "%s:%s ", type, name ? name : "-");
	if (++s->n >= s->stop_after && s->stop)
		gf_kube_stop(s->stop);
}

#define EV(type, name, rv) "{\"type\":\"" type "\",\"object\":{\"metadata\":{\"name\":\"" name "\",\"resourceVersion\":\"" rv "\"}}}\n"
#define STREAM_HDR "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n"

static void test_watch_and_reflect(void **st)
{
	(void)st;
	struct fake f = { 0 };
	/* 1: a watch stream: two events, a bookmark, one more, then the server ends it. */
	f.resp[f.nresp++] = STREAM_HDR EV("ADDED", "a", "11") EV("MODIFIED", "a", "12")
		"{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"20\"}}}\n" EV("DELETED", "a", "21");
	/* 2: a watch that says 410 Gone in an ERROR event. */
	f.resp[f.nresp++] = STREAM_HDR "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410,\"message\":\"too old resource version\"}}\n";
	fake_start(&f);
	gf_kube_client *k = client(&f, 0);
	struct seen s = { .stop_after = 1000 };
	char rv[64] = "10", err[256] = "";
	assert_int_equal(gf_kube_watch(k, "/api/v1/pods", rv, sizeof(rv), 30, on_ev, &s, NULL, err, sizeof(err)), GF_OK);
	assert_string_equal(s.log, "ADDED:a MODIFIED:a DELETED:a ");
	assert_string_equal(rv, "21");
	assert_non_null(strstr(f.lines[0], "GET /api/v1/pods?watch=1&allowWatchBookmarks=true&timeoutSeconds=30&resourceVersion=10 "));
	assert_int_equal(gf_kube_watch(k, "/api/v1/pods", rv, sizeof(rv), 30, on_ev, &s, NULL, err, sizeof(err)), GF_STATE);
	assert_non_null(strstr(err, "too old"));
	assert_non_null(strstr(f.lines[1], "resourceVersion=21"));
	gf_kube_client_destroy(k);
	fake_stop(&f);

	/* The reflector: LIST (2 pages), WATCH gets 410 -> LIST again -> WATCH delivers and we stop. */
	struct fake g = { 0 };
	g.resp[g.nresp++] = OK_JSON(95) "{\"metadata\":{\"resourceVersion\":\"5\",\"continue\":\"tok\"},\"items\":[{\"metadata\":{\"name\":\"p1\"}}]}      ";
	g.resp[g.nresp++] = OK_JSON(80) "{\"metadata\":{\"resourceVersion\":\"6\"},\"items\":[{\"metadata\":{\"name\":\"p2\"}}]}                ";
	g.resp[g.nresp++] = STREAM_HDR EV("ADDED", "p5", "7"); /* ends: resume from 7 */
	g.resp[g.nresp++] = "HTTP/1.1 410 Gone\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
	g.resp[g.nresp++] = OK_JSON(80) "{\"metadata\":{\"resourceVersion\":\"9\"},\"items\":[{\"metadata\":{\"name\":\"p3\"}}]}                ";
	g.resp[g.nresp++] = STREAM_HDR EV("ADDED", "p4", "10");
	fake_start(&g);
	k = client(&g, 0);
	volatile int stop = 0;
	struct seen r = { .stop = &stop, .stop_after = 7 };
	gf_kube_reflect(k, "/api/v1/pods", on_ev, &r, NULL, &stop);
	assert_string_equal(r.log, "SYNC:p1 SYNC:p2 SYNCED:- ADDED:p5 SYNC:p3 SYNCED:- ADDED:p4 ");
	assert_non_null(strstr(g.lines[0], "GET /api/v1/pods?limit=500 "));
	assert_non_null(strstr(g.lines[1], "continue=tok"));
	assert_non_null(strstr(g.lines[2], "watch=1"));
	assert_non_null(strstr(g.lines[2], "resourceVersion=6"));
	assert_non_null(strstr(g.lines[3], "resourceVersion=7")); /* resumed, not relisted */
	assert_null(strstr(g.lines[4], "watch=1"));		  /* 410: a LIST */
	assert_non_null(strstr(g.lines[5], "resourceVersion=9"));
	gf_kube_client_destroy(k);
	fake_stop(&g);

	/* An expired continue token (410 on page 2) restarts the list; it never ends early. */
	struct fake h = { 0 };
	h.resp[h.nresp++] = OK_JSON(95) "{\"metadata\":{\"resourceVersion\":\"5\",\"continue\":\"tok\"},\"items\":[{\"metadata\":{\"name\":\"p1\"}}]}      ";
	h.resp[h.nresp++] = "HTTP/1.1 410 Gone\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
	h.resp[h.nresp++] = OK_JSON(80) "{\"metadata\":{\"resourceVersion\":\"8\"},\"items\":[{\"metadata\":{\"name\":\"p1\"}}]}                ";
	h.resp[h.nresp++] = STREAM_HDR EV("ADDED", "p2", "9");
	fake_start(&h);
	k = client(&h, 0);
	stop = 0;
	struct seen q = { .stop = &stop, .stop_after = 4 };
	gf_kube_reflect(k, "/api/v1/pods", on_ev, &q, NULL, &stop);
	assert_string_equal(q.log, "SYNC:p1 SYNC:p1 SYNCED:- ADDED:p2 ");
	assert_non_null(strstr(h.lines[1], "continue=tok"));
	assert_null(strstr(h.lines[2], "continue="));
	assert_non_null(strstr(h.lines[3], "resourceVersion=8"));
	gf_kube_client_destroy(k);
	fake_stop(&h);
}

/* A response with a JSON body and its Content-Length (kept until the end of the test). */
static char resp_pool[16][2048];
static int resp_n;
static const char *jresp(const char *status, const char *body)
{
	char *r = resp_pool[resp_n++ % 16];
	snprintf(r, 2048, "HTTP/1.1 %s\r\nContent-Type: application/json\r\nConnection: close\r\n"
			  "Content-Length: %zu\r\n\r\n%s", status, strlen(body), body);
	return r;
}

#define POD_ON(node, gpus) "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ml\",\"uid\":\"u1\"," \
	"\"annotations\":{\"gpufleet.io/assigned-node\":\"" node "\",\"gpufleet.io/assigned-gpus\":\"" gpus "\"," \
	"\"gpufleet.io/assigned-gpu-milli\":\"1000\"}},\"spec\":{\"nodeName\":\"" node "\"}}"

static void test_bind(void **st)
{
	(void)st;
	struct gf_live_decision dc;
	memset(&dc, 0, sizeof(dc));
	snprintf(dc.node, sizeof(dc.node), "n1");
	dc.ngpus = 2;
	dc.gpus[0] = 0;
	dc.gpus[1] = 3;
	dc.milli = 1000;
	snprintf(dc.uuids, sizeof(dc.uuids), "GPU-a,GPU-d");
	/* The body: a Binding with the uid precondition and the assignment annotations. */
	char *body = gf_kube_binding_body("ml", "p", "u1", &dc);
	cJSON *b = cJSON_Parse(body);
	cJSON *md = cJSON_GetObjectItem(b, "metadata"), *ann = cJSON_GetObjectItem(md, "annotations");
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(b, "kind")), "Binding");
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(md, "uid")), "u1");
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(b, "target"), "name")), "n1");
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(ann, "gpufleet.io/assigned-gpus")), "0,3");
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(ann, "gpufleet.io/assigned-gpu-uuids")), "GPU-a,GPU-d");
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(ann, "gpufleet.io/assigned-gpu-milli")), "1000");
	/* The bind-order stamp: UTC with microseconds, strictly later in the next body. */
	const char *at = cJSON_GetStringValue(cJSON_GetObjectItem(ann, "gpufleet.io/assigned-at"));
	assert_non_null(at);
	assert_int_equal(strlen(at), 27);
	assert_true(at[10] == 'T' && at[19] == '.' && at[26] == 'Z');
	char *body2 = gf_kube_binding_body("ml", "p", "u1", &dc);
	cJSON *b2 = cJSON_Parse(body2);
	const char *at2 = cJSON_GetStringValue(cJSON_GetObjectItem(
		cJSON_GetObjectItem(cJSON_GetObjectItem(b2, "metadata"), "annotations"), "gpufleet.io/assigned-at"));
	assert_non_null(at2);
	assert_true(strcmp(at, at2) < 0);
	cJSON_Delete(b2);
	free(body2);
	char fixed[28];
	gf_kube_assigned_at_format(1796083200000001LL, fixed); /* 2026-12-01T00:00:00.000001Z */
	assert_string_equal(fixed, "2026-12-01T00:00:00.000001Z");
	cJSON_Delete(b);
	free(body);

	struct fake f = { 0 };
	f.resp[f.nresp++] = jresp("201 Created", "{}");
	f.resp[f.nresp++] = jresp("409 Conflict", "{\"kind\":\"Status\",\"message\":\"already assigned\"}");
	f.resp[f.nresp++] = jresp("200 OK", POD_ON("n1", "0,3")); /* our earlier try went through */
	f.resp[f.nresp++] = jresp("409 Conflict", "{}");
	f.resp[f.nresp++] = jresp("200 OK", POD_ON("n2", "1,2")); /* someone else bound it */
	f.resp[f.nresp++] = jresp("409 Conflict", "{}");
	f.resp[f.nresp++] = jresp("200 OK", "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ml\",\"uid\":\"u1\"},\"spec\":{}}");
	f.resp[f.nresp++] = jresp("409 Conflict", "{}");
	f.resp[f.nresp++] = jresp("200 OK", "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ml\",\"uid\":\"u2\"},\"spec\":{}}");
	f.resp[f.nresp++] = jresp("404 Not Found", "{}");
	f.resp[f.nresp++] = jresp("422 Unprocessable Entity", "{\"kind\":\"Status\",\"message\":\"node n1 not found\"}");
	fake_start(&f);
	gf_kube_client *k = client(&f, 0);
	bool retry;
	char err[256];
	assert_int_equal(gf_kube_bind(k, "ml", "p", "u1", &dc, &retry, err, sizeof(err)), B_OK);
	assert_string_equal(f.lines[0], "POST /api/v1/namespaces/ml/pods/p/binding HTTP/1.1");
	assert_int_equal(gf_kube_bind(k, "ml", "p", "u1", &dc, &retry, err, sizeof(err)), B_CONFLICT_DONE);
	assert_string_equal(f.lines[2], "GET /api/v1/namespaces/ml/pods/p HTTP/1.1");
	assert_int_equal(gf_kube_bind(k, "ml", "p", "u1", &dc, &retry, err, sizeof(err)), B_GONE);
	assert_false(retry);
	assert_int_equal(gf_kube_bind(k, "ml", "p", "u1", &dc, &retry, err, sizeof(err)), B_CONFLICT_RETRY);
	assert_true(retry);
	assert_int_equal(gf_kube_bind(k, "ml", "p", "u1", &dc, &retry, err, sizeof(err)), B_GONE); /* another uid */
	assert_int_equal(gf_kube_bind(k, "ml", "p", "u1", &dc, &retry, err, sizeof(err)), B_GONE); /* 404 */
	assert_int_equal(gf_kube_bind(k, "ml", "p", "u1", &dc, &retry, err, sizeof(err)), B_ERROR);
	assert_false(retry);
	assert_non_null(strstr(err, "node n1 not found"));
	gf_kube_client_destroy(k);
	fake_stop(&f);
	/* Nobody there: an error to retry later. */
	k = client(&f, 0);
	assert_int_equal(gf_kube_bind(k, "ml", "p", "u1", &dc, &retry, err, sizeof(err)), B_ERROR);
	assert_true(retry);
	gf_kube_client_destroy(k);
}

/* A server that pages forever (a continue token on every page, a page of one
 * item, then empty pages): gf_kube_list_max stops at its budget with
 * GF_TOOBIG naming it, having asked for budget + 1 pages, and sends no
 * SYNCED (the consumer must not drop what it did not see). */
static void test_list_budget(void **st)
{
	(void)st;
	struct fake f = { 0 };
	static const char one[] = "{\"metadata\":{\"continue\":\"c\"},\"items\":[{\"metadata\":{\"name\":\"p\"}}]}";
	static const char none[] = "{\"metadata\":{\"continue\":\"c\"},\"items\":[]}";
	static char resp[MAXR][256];
	for (int i = 0; i < MAXR; i++) {
		const char *b = i < 3 ? one : none;
		snprintf(resp[i], sizeof(resp[i]),
			 "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: %zu\r\n\r\n%s",
			 strlen(b), b);
		f.resp[f.nresp++] = resp[i];
	}
	fake_start(&f);
	gf_kube_client *k = client(&f, 0);
	struct seen s = { .stop_after = 1000 };
	char err[512] = "";
	gf_err e = gf_kube_list_max(k, "/api/v1/pods", 5, on_ev, &s, err, sizeof(err));
	gf_kube_client_destroy(k);
	fake_stop(&f);
	if (e != GF_TOOBIG || !strstr(err, "more than 5 items"))
		fail_msg("%s '%s', want GF_TOOBIG (more than 5 items)", gf_err_name(e), err);
	assert_int_equal(f.nlines, 6);
	assert_string_equal(s.log, "SYNC:p SYNC:p SYNC:p ");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_retry_and_status),
		cmocka_unit_test(test_watch_and_reflect),
		cmocka_unit_test(test_bind),
		cmocka_unit_test(test_list_budget),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
