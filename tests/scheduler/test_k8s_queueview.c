/* tests/scheduler/test_k8s_queueview.c - `gpufleet queue`'s view (k8s/queueview.h) over the
 * API answers recorded from the real control plane by tests/scheduler/sched-queue
 * (tests/scheduler/data/queue/: Queues, namespaces, pending pods, FailedScheduling events
 * of gpufleet and of kube-scheduler): the table and the JSON document exactly, then the
 * rules one by one on small objects: position order and its ties, queue from the pod's
 * label over its namespace's, reason precedence (the scheduler's EstimatedStart condition, an
 * older scheduler's annotation, newest event of this uid,
 * condition, the invalid request), events.k8s.io's regarding/note, an unreadable estimate,
 * pods left out (bound, deleting, other phases, other schedulers), errors naming the
 * object and field, and the empty view. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/obuf.h"
#include "core/time.h"
#include "k8s/queueview.h"
#include "../testutil.h"

#define QDATA GF_SOURCE_DIR "/tests/scheduler/data/queue/"

typedef gf_err (*add_fn)(gf_qview *, const cJSON *, char *, size_t);

/* Feed every item of a recorded list; all must be accepted. */
static void feed_file(gf_qview *v, const char *file, add_fn add)
{
	size_t len;
	char *text = tu_slurp(file, &len), err[600];
	cJSON *doc = cJSON_ParseWithLength(text, len);
	assert_non_null(doc);
	const cJSON *it;
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(doc, "items"))
	{
		if (add(v, it, err, sizeof(err)))
			fail_msg("%s: %s", file, err);
	}
	cJSON_Delete(doc);
	free(text);
}

/* Feed one object given as JSON text; returns the error (err filled). */
static gf_err feed(gf_qview *v, add_fn add, const char *json, char *err, size_t errlen)
{
	cJSON *doc = cJSON_Parse(json);
	if (!doc)
		fail_msg("test JSON: %s", json);
	gf_err e = add(v, doc, err, errlen);
	cJSON_Delete(doc);
	return e;
}

static int64_t at(const char *ts)
{
	int64_t t;
	assert_true(gf_rfc3339_parse(ts, &t));
	return t;
}

static struct gf_obuf out; /* the last rendering; released by the next and by done() */

static char *render(const gf_qview *v, bool json)
{
	gf_obuf_release(&out);
	gf_obuf_init(&out, 1 << 20);
	assert_int_equal(json ? gf_qview_render_json(v, &out) : gf_qview_render_table(v, &out), GF_OK);
	return out.data;
}

static void done(gf_qview *v)
{
	gf_qview_destroy(v);
	gf_obuf_release(&out);
}

static gf_qview *recorded(void)
{
	gf_qview *v;
	assert_int_equal(gf_qview_create("gpufleet", &v), GF_OK);
	feed_file(v, QDATA "queues.json", gf_qview_add_queue);
	feed_file(v, QDATA "namespaces.json", gf_qview_add_namespace);
	feed_file(v, QDATA "pods.json", gf_qview_add_pod);
	feed_file(v, QDATA "events.json", gf_qview_add_event);
	gf_qview_build(v, at("2026-12-01T18:42:13Z")); /* 10 minutes after the pods were made */
	return v;
}

static void test_recorded_table(void **st)
{
	(void)st;
	gf_qview *v = recorded();
	assert_int_equal(gf_qview_waiting(v), 4); /* default/kube is kube-scheduler's */
	const char *want =
		"QUEUE             POS  POD                                        GPUS PRIORITY WAITING  ESTIMATED START                       WHY\n"
		"ghost               1  ml/lost                                    250m        0     10m  -                                     0/1 nodes are available: 1 Insufficient GPU milli.\n"
		"research            1  ml/urgent                                     8     1000     10m  2030-01-02T03:04:05Z (in 1127d8h)     behind ml/first: 8 GPUs free when it ends\n"
		"research            2  ml/late                                       8        0     10m  -                                     0/1 nodes are available: 1 Insufficient GPU.\n"
		"-                   1  default/solo                                  8        0     10m  -                                     0/1 nodes are available: 1 Insufficient GPU.\n"
		"queue ghost: no GPUQueue object (gpufleet.io/v1alpha1) of that name; 1 pod(s) name it\n";
	const char *got = render(v, false);
	if (strcmp(got, want))
		fail_msg("table:\n%s\nwant:\n%s", got, want);
	done(v);
}

static void test_recorded_json(void **st)
{
	(void)st;
	gf_qview *v = recorded();
	cJSON *doc = cJSON_Parse(render(v, true));
	assert_non_null(doc);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(doc, "time")), "2026-12-01T18:42:13Z");
	const cJSON *qs = cJSON_GetObjectItem(doc, "queues"), *q;
	/* by name, the queue-less pods last */
	static const char *const names[] = { "ghost", "infer", "research", NULL };
	static const int waiting[] = { 1, 0, 2, 1 }, exists[] = { 0, 1, 1, 0 };
	int i = 0;
	cJSON_ArrayForEach(q, qs)
	{
		const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(q, "name"));
		if (names[i] ? !name || strcmp(name, names[i]) : name != NULL)
			fail_msg("queue %d: %s, want %s", i, name ? name : "null", names[i] ? names[i] : "null");
		assert_int_equal(cJSON_GetObjectItem(q, "waiting")->valueint, waiting[i]);
		assert_int_equal(cJSON_IsTrue(cJSON_GetObjectItem(q, "exists")), exists[i]);
		i++;
	}
	assert_int_equal(i, 4);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(qs, 1), "cohort")), "lab");
	const cJSON *r = cJSON_GetObjectItem(cJSON_GetArrayItem(qs, 2), "pods");
	const cJSON *u = cJSON_GetArrayItem(r, 0), *l = cJSON_GetArrayItem(r, 1);
#define S(o, k) cJSON_GetStringValue(cJSON_GetObjectItem(o, k))
#define N(o, k) cJSON_GetObjectItem(o, k)->valuedouble
	assert_string_equal(S(u, "name"), "urgent");
	assert_string_equal(S(u, "uid"), "4608003d-aec7-4b48-ab7c-2250c3b94574");
	assert_true(N(u, "position") == 1 && N(u, "priority") == 1000 && N(u, "gpus") == 8 && N(u, "gpuMilli") == 1000);
	assert_string_equal(S(u, "estimatedStart"), "2030-01-02T03:04:05Z");
	assert_string_equal(S(u, "reasonFrom"), "annotation");
	assert_string_equal(S(u, "queueFrom"), "pod");
	assert_string_equal(S(u, "created"), "2026-12-01T18:32:13Z");
	assert_true(N(u, "waitingSeconds") == 600);
	assert_string_equal(S(l, "name"), "late");
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(l, "estimatedStart")));
	assert_string_equal(S(l, "reasonFrom"), "event");
	assert_string_equal(S(l, "reason"), "0/1 nodes are available: 1 Insufficient GPU.");
	assert_string_equal(S(l, "queueFrom"), "namespace");
	const cJSON *none = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(qs, 3), "pods"), 0);
	assert_string_equal(S(none, "name"), "solo");
	assert_string_equal(S(none, "queueFrom"), "none");
	const cJSON *lost = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(qs, 0), "pods"), 0);
	assert_true(N(lost, "gpus") == 1 && N(lost, "gpuMilli") == 250);
	cJSON_Delete(doc);
	done(v);
}

/* A pending pod of gpufleet: name, extra metadata members, extra spec members. */
static gf_err add_pod(gf_qview *v, const char *name, const char *md, const char *spec, char *err)
{
	char json[4096];
	snprintf(json, sizeof(json),
		 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"t\",\"creationTimestamp\":\"2026-12-01T10:00:00Z\"%s%s},"
		 "\"spec\":{\"schedulerName\":\"gpufleet\",\"containers\":[{\"resources\":{\"limits\":"
		 "{\"nvidia.com/gpu\":\"2\"}}}]%s%s},\"status\":{\"phase\":\"Pending\"}}",
		 name, md[0] ? "," : "", md, spec[0] ? "," : "", spec);
	return feed(v, gf_qview_add_pod, json, err, 600);
}

static void test_rules(void **st)
{
	(void)st;
	gf_qview *v;
	char err[600] = "";
	assert_int_equal(gf_qview_create("gpufleet", &v), GF_OK);
	assert_int_equal(feed(v, gf_qview_add_queue, "{\"metadata\":{\"name\":\"q\"}}", err, sizeof(err)), GF_OK);
	assert_int_equal(feed(v, gf_qview_add_namespace,
			      "{\"metadata\":{\"name\":\"t\",\"labels\":{\"gpufleet.io/queue\":\"q\"}}}", err, sizeof(err)),
			 GF_OK);
	/* order: priority, then creation, then name */
	assert_int_equal(add_pod(v, "b", "", "\"priority\":5", err), GF_OK);
	assert_int_equal(add_pod(v, "a", "", "\"priority\":5", err), GF_OK);
	assert_int_equal(add_pod(v, "old", "\"uid\":\"u-old\"", "", err), GF_OK);
	assert_int_equal(add_pod(v, "top", "", "\"priority\":9", err), GF_OK);
	/* the pod's label wins over its namespace's; an unreadable estimate; a condition */
	assert_int_equal(add_pod(v, "own", "\"labels\":{\"gpufleet.io/queue\":\"other\"},\"annotations\":"
					    "{\"gpufleet.io/estimated-start\":\"tomorrow\"}", "", err), GF_OK);
	char json[1024];
	snprintf(json, sizeof(json), "{\"metadata\":{\"name\":\"cond\",\"namespace\":\"t\"},\"spec\":{\"schedulerName\":"
		 "\"gpufleet\"},\"status\":{\"phase\":\"Pending\",\"conditions\":[{\"type\":\"PodScheduled\",\"status\":"
		 "\"False\",\"reason\":\"Unschedulable\",\"message\":\"no\\nroom\"}]}}");
	assert_int_equal(feed(v, gf_qview_add_pod, json, err, sizeof(err)), GF_OK);
	/* gangs: the Workload API's field wins over the label */
	assert_int_equal(add_pod(v, "gw", "\"labels\":{\"scheduling.x-k8s.io/pod-group\":\"co\",\"gpufleet.io/queue\":\"g\"}",
				 "\"schedulingGroup\":{\"podGroupName\":\"train\"}", err), GF_OK);
	assert_int_equal(add_pod(v, "gc", "\"labels\":{\"scheduling.x-k8s.io/pod-group\":\"co\",\"gpufleet.io/queue\":\"g\"}",
				 "", err), GF_OK);
	/* an invalid request: its reason */
	assert_int_equal(add_pod(v, "bad", "\"annotations\":{\"gpufleet.io/gpu-milli\":\"half\"}", "", err), GF_OK);
	/* left out: bound, deleting, running, another scheduler */
	assert_int_equal(add_pod(v, "bound", "", "\"nodeName\":\"n1\"", err), GF_OK);
	assert_int_equal(add_pod(v, "gone", "\"deletionTimestamp\":\"2026-12-01T10:00:00Z\"", "", err), GF_OK);
	assert_int_equal(feed(v, gf_qview_add_pod, "{\"metadata\":{\"name\":\"run\"},\"spec\":{\"schedulerName\":"
				  "\"gpufleet\"},\"status\":{\"phase\":\"Running\"}}", err, sizeof(err)), GF_OK);
	assert_int_equal(feed(v, gf_qview_add_pod, "{\"metadata\":{\"name\":\"ks\"},\"spec\":{},\"status\":{}}", err,
			      sizeof(err)), GF_OK);
	/* events: an older pod's (another uid) is skipped, the newest of this one wins;
	 * events.k8s.io/v1 (regarding, note, eventTime); other reasons ignored */
	static const char *const evs[] = {
		"{\"reason\":\"FailedScheduling\",\"involvedObject\":{\"kind\":\"Pod\",\"namespace\":\"t\",\"name\":\"old\","
		"\"uid\":\"u-old\"},\"lastTimestamp\":\"2026-12-01T10:01:00Z\",\"message\":\"first\"}",
		"{\"reason\":\"FailedScheduling\",\"involvedObject\":{\"kind\":\"Pod\",\"namespace\":\"t\",\"name\":\"old\","
		"\"uid\":\"u-old\"},\"lastTimestamp\":\"2026-12-01T10:05:00Z\",\"message\":\"newest\"}",
		"{\"reason\":\"FailedScheduling\",\"involvedObject\":{\"kind\":\"Pod\",\"namespace\":\"t\",\"name\":\"old\","
		"\"uid\":\"u-previous-pod\"},\"lastTimestamp\":\"2026-12-01T10:09:00Z\",\"message\":\"not this pod\"}",
		"{\"reason\":\"FailedScheduling\",\"regarding\":{\"kind\":\"Pod\",\"namespace\":\"t\",\"name\":\"a\"},"
		"\"eventTime\":\"2026-12-01T10:02:00.123456Z\",\"note\":\"from events.k8s.io\"}",
		"{\"reason\":\"Scheduled\",\"involvedObject\":{\"kind\":\"Pod\",\"namespace\":\"t\",\"name\":\"b\"},"
		"\"message\":\"not a failure\"}",
	};
	for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++)
		assert_int_equal(feed(v, gf_qview_add_event, evs[i], err, sizeof(err)), GF_OK);
	gf_qview_build(v, at("2026-12-01T12:00:00Z"));
	assert_int_equal(gf_qview_waiting(v), 9);
	const char *want =
		"QUEUE             POS  POD                                        GPUS PRIORITY WAITING  ESTIMATED START                       WHY\n"
		"g                   1  t/gc                                          2        0    120m  -                                     -\n"
		"g                   2  t/gw                                          2        0    120m  -                                     -\n"
		"other               1  t/own                                         2        0    120m  unreadable                            -\n"
		"q                   1  t/top                                         2        9    120m  -                                     -\n"
		"q                   2  t/a                                           2        5    120m  -                                     from events.k8s.io\n"
		"q                   3  t/b                                           2        5    120m  -                                     -\n"
		"q                   4  t/bad                                         ?        0    120m  -                                     ";
	const char *got = render(v, false);
	if (strncmp(got, want, strlen(want)))
		fail_msg("table:\n%s\nwant it to start with:\n%s", got, want);
	assert_non_null(strstr(got, "t/bad                                         ?        0    120m  -                                     "
				    "cannot read the pod's request: metadata.annotations[\"gpufleet.io/gpu-milli\"]: "));
	assert_non_null(strstr(got, "\nq                   6  t/cond                                        0        0       ?  -"
				    "                                     no room\n")); /* no creation time: '?' */
	assert_non_null(strstr(got, "\nq                   5  t/old                                         2        0    120m  -"
				    "                                     newest\n"));
	assert_non_null(strstr(got, "queue other: no GPUQueue object"));
	assert_non_null(strstr(got, "queue g: no GPUQueue object (gpufleet.io/v1alpha1) of that name; 2 pod(s) name it\n"));
	assert_null(strstr(got, "t/bound"));
	assert_null(strstr(got, "t/gone"));
	assert_null(strstr(got, "/run "));
	assert_null(strstr(got, "/ks "));
	cJSON *doc = cJSON_Parse(render(v, true));
	const cJSON *gpods = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "queues"), 0), "pods");
	const cJSON *gc = cJSON_GetArrayItem(gpods, 0), *gw = cJSON_GetArrayItem(gpods, 1);
	assert_string_equal(S(gc, "name"), "gc");
	assert_string_equal(S(cJSON_GetObjectItem(gc, "gang"), "api"), "coscheduling");
	assert_string_equal(S(cJSON_GetObjectItem(gc, "gang"), "name"), "co");
	assert_string_equal(S(gw, "name"), "gw");
	assert_string_equal(S(cJSON_GetObjectItem(gw, "gang"), "api"), "workload");
	assert_string_equal(S(cJSON_GetObjectItem(gw, "gang"), "name"), "train");
	const cJSON *own = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "queues"), 1),
								 "pods"), 0);
	assert_string_equal(S(own, "estimatedStartUnreadable"), "tomorrow");
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(own, "estimatedStart")));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(own, "reason")));
	assert_string_equal(S(own, "reasonFrom"), "none");
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(own, "gang")));
	cJSON_Delete(doc);
	done(v);
}

/* Hostile text in the table: names (a hostile API server), a queue label, an
 * Event's message and the waiting-reason annotation (anyone who can write
 * those) with ESC sequences, BEL, C1 controls (U+009B CSI, U+0085) and a
 * stray 0x9b byte: printed escaped, the table has no control byte but '\n'. */
static void test_table_escapes(void **st)
{
	(void)st;
	gf_qview *v;
	char err[600] = "";
	assert_int_equal(gf_qview_create("gpufleet", &v), GF_OK);
	assert_int_equal(feed(v, gf_qview_add_pod,
			      "{\"metadata\":{\"name\":\"x\\u001b]0;pwned\\u0007\",\"namespace\":\"t\\u009b2J\","
			      "\"uid\":\"u1\",\"labels\":{\"gpufleet.io/queue\":\"q\\u001b[31m\"},"
			      "\"annotations\":{\"gpufleet.io/waiting-reason\":\"why\\u0085\\u009b1;1H\"}},"
			      "\"spec\":{\"schedulerName\":\"gpufleet\"},\"status\":{\"phase\":\"Pending\"}}",
			      err, sizeof(err)),
			 GF_OK);
	char stray[256];
	snprintf(stray, sizeof(stray),
		 "{\"metadata\":{\"name\":\"y\\u007f\",\"namespace\":\"t\",\"uid\":\"u2\",\"labels\":"
		 "{\"gpufleet.io/queue\":\"r\x9bz\"}},\"spec\":"
		 "{\"schedulerName\":\"gpufleet\"},\"status\":{\"phase\":\"Pending\"}}");
	assert_int_equal(feed(v, gf_qview_add_pod, stray, err, sizeof(err)), GF_OK);
	assert_int_equal(feed(v, gf_qview_add_event,
			      "{\"metadata\":{\"name\":\"e\",\"namespace\":\"t\"},\"reason\":\"FailedScheduling\","
			      "\"involvedObject\":{\"kind\":\"Pod\",\"name\":\"y\\u007f\",\"namespace\":\"t\",\"uid\":\"u2\"},"
			      "\"lastTimestamp\":\"2026-12-01T10:00:00Z\",\"message\":\"m\\u009b?1049h\"}",
			      err, sizeof(err)),
			 GF_OK);
	gf_qview_build(v, 0);
	const char *got = render(v, false);
	for (const unsigned char *p = (const unsigned char *)got; *p; p++)
		if ((*p < 0x20 && *p != '\n') || *p == 0x7f || (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f))
			fail_msg("control byte 0x%02x at offset %zu of the table:\n%s", *p, (size_t)(p - (const unsigned char *)got),
				 got);
	assert_non_null(strstr(got, "t\\u009b2J/x\\x1b]0;pwned\\x07"));
	assert_non_null(strstr(got, "q\\x1b[31m"));
	assert_non_null(strstr(got, "why\\u0085\\u009b1;1H"));
	assert_non_null(strstr(got, "t/y\\x7f"));
	assert_non_null(strstr(got, "r\\x9bz"));
	assert_null(strstr(got, "r\x9b"));
	assert_non_null(strstr(got, "m\\u009b?1049h"));
	done(v);
}

/* A pod waiting in gpufleet's queue with the given annotations (md) and status.conditions. */
static gf_err add_noted(gf_qview *v, const char *name, const char *md, const char *conds, char *err)
{
	char json[4096];
	snprintf(json, sizeof(json),
		 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"t\",\"creationTimestamp\":\"2026-12-01T10:00:00Z\"%s%s},"
		 "\"spec\":{\"schedulerName\":\"gpufleet\",\"containers\":[{\"resources\":{\"limits\":"
		 "{\"nvidia.com/gpu\":\"2\"}}}]},\"status\":{\"phase\":\"Pending\",\"conditions\":[%s]}}",
		 name, md[0] ? "," : "", md, conds);
	return feed(v, gf_qview_add_pod, json, err, 600);
}

/* The scheduler's gpufleet.io/EstimatedStart condition (what it writes through pods/status):
 * status True carries "estimated start T: why", False only why; the condition wins over
 * the annotations an older scheduler left; a pod with annotations only is still read. */
static void test_estimated_start_condition(void **st)
{
	(void)st;
	gf_qview *v;
	char err[600] = "";
	assert_int_equal(gf_qview_create("gpufleet", &v), GF_OK);
	static const char sched_false[] = "{\"type\":\"PodScheduled\",\"status\":\"False\",\"reason\":\"Unschedulable\","
					  "\"message\":\"0/1 nodes\"}";
	char conds[1024];
	snprintf(conds, sizeof(conds), "%s,{\"type\":\"gpufleet.io/EstimatedStart\",\"status\":\"True\",\"reason\":"
		 "\"Estimated\",\"message\":\"estimated start 2026-12-01T13:00:00Z: behind t/first: 8 GPUs free when it ends\","
		 "\"lastTransitionTime\":\"2026-12-01T11:00:00Z\"}", sched_false);
	assert_int_equal(add_noted(v, "a-est", "", conds, err), GF_OK);
	assert_int_equal(add_noted(v, "b-none", "", "{\"type\":\"gpufleet.io/EstimatedStart\",\"status\":\"False\","
				   "\"reason\":\"NoEstimate\",\"message\":\"gang of 4 pods: no room for all of them together\"}",
				   err), GF_OK);
	/* stale annotations of an older scheduler: the condition wins */
	assert_int_equal(add_noted(v, "c-both", "\"annotations\":{\"gpufleet.io/estimated-start\":\"2030-01-01T00:00:00Z\","
				   "\"gpufleet.io/waiting-reason\":\"stale\"}",
				   "{\"type\":\"gpufleet.io/EstimatedStart\",\"status\":\"False\",\"reason\":\"NoEstimate\","
				   "\"message\":\"fresh\"}", err), GF_OK);
	/* a True condition whose message is not "estimated start T: why" */
	assert_int_equal(add_noted(v, "d-bad", "", "{\"type\":\"gpufleet.io/EstimatedStart\",\"status\":\"True\","
				   "\"message\":\"estimated start soon: x\"}", err), GF_OK);
	/* an older scheduler's annotations only */
	assert_int_equal(add_noted(v, "e-old", "\"annotations\":{\"gpufleet.io/estimated-start\":\"2026-12-01T14:00:00Z\","
				   "\"gpufleet.io/waiting-reason\":\"old reason\"}", sched_false, err), GF_OK);
	gf_qview_build(v, at("2026-12-01T12:00:00Z"));
	const char *want =
		"QUEUE             POS  POD                                        GPUS PRIORITY WAITING  ESTIMATED START                       WHY\n"
		"-                   1  t/a-est                                       2        0    120m  2026-12-01T13:00:00Z (in 60m)         behind t/first: 8 GPUs free when it ends\n"
		"-                   2  t/b-none                                      2        0    120m  -                                     gang of 4 pods: no room for all of them together\n"
		"-                   3  t/c-both                                      2        0    120m  -                                     fresh\n"
		"-                   4  t/d-bad                                       2        0    120m  unreadable                            x\n"
		"-                   5  t/e-old                                       2        0    120m  2026-12-01T14:00:00Z (in 120m)        old reason\n";
	const char *got = render(v, false);
	if (strcmp(got, want))
		fail_msg("table:\n%s\nwant:\n%s", got, want);
	cJSON *doc = cJSON_Parse(render(v, true));
	const cJSON *pods = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "queues"), 0), "pods");
	const cJSON *a = cJSON_GetArrayItem(pods, 0), *c = cJSON_GetArrayItem(pods, 2), *d = cJSON_GetArrayItem(pods, 3),
		    *e = cJSON_GetArrayItem(pods, 4);
	assert_string_equal(S(a, "estimatedStart"), "2026-12-01T13:00:00Z");
	assert_string_equal(S(a, "reasonFrom"), "estimatedStartCondition");
	assert_string_equal(S(c, "reasonFrom"), "estimatedStartCondition");
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(c, "estimatedStart")));
	assert_string_equal(S(d, "estimatedStartUnreadable"), "soon");
	assert_string_equal(S(e, "estimatedStart"), "2026-12-01T14:00:00Z");
	assert_string_equal(S(e, "reasonFrom"), "annotation");
	cJSON_Delete(doc);
	done(v);
}

static void test_errors_and_empty(void **st)
{
	(void)st;
	gf_qview *v;
	char err[600];
	assert_int_equal(gf_qview_create(NULL, &v), GF_OK); /* any scheduler */
	static const struct {
		add_fn add;
		const char *doc, *want;
	} bad[] = {
		{ gf_qview_add_pod, "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ml\",\"labels\":{\"gpufleet.io/queue\":3}}}",
		  "pod ml/p: metadata.labels[\"gpufleet.io/queue\"]: expected a string" },
		{ gf_qview_add_pod, "{\"metadata\":{\"name\":\"p\",\"uid\":[]}}", "pod default/p: metadata.uid: expected a string" },
		{ gf_qview_add_pod, "{\"metadata\":{}}", "Pod: needs metadata.name" },
		{ gf_qview_add_pod, "[]", "Pod: expected an object with metadata" },
		{ gf_qview_add_namespace, "{\"metadata\":{\"name\":\"ns\",\"labels\":{\"gpufleet.io/queue\":\""
					  "0123456789012345678901234567890123456789012345678901234567890123\"}}}",
		  "Namespace ns: metadata.labels[\"gpufleet.io/queue\"]: longer than 63 bytes" },
		{ gf_qview_add_queue, "{\"metadata\":{\"name\":\"q\"},\"spec\":{\"cohort\":1}}", "Queue q: spec.cohort: expected a string" },
		{ gf_qview_add_event, "{\"reason\":\"FailedScheduling\",\"involvedObject\":{\"kind\":\"Pod\",\"name\":5}}",
		  "FailedScheduling Event: involvedObject.name: expected a string" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(feed(v, bad[i].add, bad[i].doc, err, sizeof(err)), GF_PARSE);
		if (strcmp(err, bad[i].want))
			fail_msg("%s: error '%s', want '%s'", bad[i].doc, err, bad[i].want);
	}
	/* a pod with no scheduler named is default-scheduler's: listed when any scheduler is asked for */
	assert_int_equal(feed(v, gf_qview_add_pod, "{\"metadata\":{\"name\":\"k\"},\"spec\":{}}", err, sizeof(err)), GF_OK);
	gf_qview_build(v, 0);
	assert_int_equal(gf_qview_waiting(v), 1);
	gf_qview_destroy(v);
	assert_int_equal(gf_qview_create("gpufleet", &v), GF_OK);
	gf_qview_build(v, 0);
	assert_string_equal(render(v, false), "No pods waiting.\n");
	cJSON *doc = cJSON_Parse(render(v, true));
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "queues")), 0);
	cJSON_Delete(doc);
	done(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recorded_table),
		cmocka_unit_test(test_recorded_json),
		cmocka_unit_test(test_rules),
		cmocka_unit_test(test_estimated_start_condition),
		cmocka_unit_test(test_table_escapes),
		cmocka_unit_test(test_errors_and_empty),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
