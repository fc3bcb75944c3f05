/*
 * agent/notice.c - spot and maintenance notices from the cloud metadata
 * service, written on the agent's own Node (contract: agent/notice.h).
 *
 * Two halves:
 *   - parsers: pure functions of a response body and the wall-clock time
 *     given; strict (JSON shape, known words, RFC 3339 / RFC 1123 times
 *     near now, a size cap), each refusal with a message.  Fuzzed.
 *   - the poller: every interval (default 2 s) one to three GETs on the
 *     metadata service through one libcurl handle (timeout per request,
 *     body cap GF_NOTICE_MAX_BODY, never through a proxy, no redirects),
 *     then, on something new, one GET and one PATCH of the Node and one
 *     POST of an Event through the shared Kubernetes client.
 *
 * Writing the notice (idempotent, safe against concurrent writers):
 * GET the Node; if it already carries gpufleet.io/notice at or before our
 * time and a gpufleet.io/notice taint, nothing is written (and no Event).
 * Otherwise one JSON merge patch sets the annotation (the earlier of ours
 * and the one there) and spec.taints = the Node's taints plus ours.  Taints
 * are an atomic list in the API (a merge patch replaces it whole), so the
 * patch carries metadata.resourceVersion from the GET: a taint written by
 * someone else in between makes the API answer 409 and the next poll
 * starts again from a fresh GET.  Rebalance: the annotation only (no taint,
 * no resourceVersion needed), skipped when the Node already has that value.
 *
 * Logs: one line per endpoint when its error changes ("... answers again"
 * when it recovers), so a metadata service down for hours is one line, not
 * one per poll.  Costs: three small HTTP requests per poll on the node's
 * link-local address; the API server is only touched on a change.
 */
#include "agent/notice.h"
#include "core/time.h"
#include "k8s/client.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- parsers ------------------------------------------------------------------- */

#define DAY 86400

bool gf_notice_cloud_parse(const char *s, enum gf_notice_cloud *out)
{
	if (!strcmp(s, "aws"))
		*out = GF_NOTICE_AWS;
	else if (!strcmp(s, "gcp"))
		*out = GF_NOTICE_GCP;
	else if (!strcmp(s, "azure"))
		*out = GF_NOTICE_AZURE;
	else
		return false;
	return true;
}

static gf_err refuse(char *err, size_t errlen, const char *what)
{
	snprintf(err, errlen, "%s", what);
	return GF_PARSE;
}

static bool near_now(int64_t t, int64_t now)
{
	return t >= now - DAY && t <= now + 30LL * DAY;
}

/* A JSON document of exactly n bytes (trailing white space allowed). */
static gf_err parse_json(const char *body, size_t n, cJSON **doc, char *err, size_t errlen)
{
	const char *end = NULL;
	*doc = NULL;
	if (n > GF_NOTICE_MAX_BODY) {
		snprintf(err, errlen, "answer of %zu bytes, over the %d-byte cap", n, GF_NOTICE_MAX_BODY);
		return GF_TOOBIG;
	}
	*doc = cJSON_ParseWithLengthOpts(body, n, &end, false);
	if (!*doc) {
		size_t at = end && end >= body ? (size_t)(end - body) : 0;
		snprintf(err, errlen, "not JSON (at byte %zu)", at);
		return GF_PARSE;
	}
	for (; end && end < body + n; end++)
		if (!isspace((unsigned char)*end)) {
			cJSON_Delete(*doc);
			*doc = NULL;
			snprintf(err, errlen, "bytes after the JSON document (at byte %zu)", (size_t)(end - body));
			return GF_PARSE;
		}
	if (!cJSON_IsObject(*doc)) {
		cJSON_Delete(*doc);
		*doc = NULL;
		return refuse(err, errlen, "not a JSON object");
	}
	return GF_OK;
}

/* The RFC 3339 string member key of o, near now. */
static gf_err json_time(const cJSON *o, const char *key, int64_t now, int64_t *t, char *err, size_t errlen)
{
	const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, key));
	if (!s) {
		snprintf(err, errlen, "no string \"%s\"", key);
		return GF_PARSE;
	}
	if (!gf_rfc3339_parse(s, t)) {
		snprintf(err, errlen, "\"%s\" is \"%.40s\", not an RFC 3339 UTC time", key, s);
		return GF_PARSE;
	}
	if (!near_now(*t, now)) {
		snprintf(err, errlen, "\"%s\" %.40s is not near now (a day before to 30 days after)", key, s);
		return GF_PARSE;
	}
	return GF_OK;
}

gf_err gf_notice_parse_aws_action(const char *body, size_t n, int64_t now, struct gf_notice_signal *out,
				  char *err, size_t errlen)
{
	cJSON *doc;
	gf_err e = parse_json(body, n, &doc, err, errlen);
	if (e)
		return e;
	const char *action = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(doc, "action"));
	int64_t t = 0;
	if (!action)
		e = refuse(err, errlen, "no string \"action\"");
	else if (strcmp(action, "terminate") && strcmp(action, "stop") && strcmp(action, "hibernate"))
		e = refuse(err, errlen, "\"action\" is not terminate, stop or hibernate");
	else
		e = json_time(doc, "time", now, &t, err, errlen);
	if (!e) {
		memset(out, 0, sizeof(*out));
		out->at = t;
		snprintf(out->signal, sizeof(out->signal), "aws-spot-itn");
		snprintf(out->detail, sizeof(out->detail), "spot instance-action %s", action);
	}
	cJSON_Delete(doc);
	return e;
}

gf_err gf_notice_parse_aws_rebalance(const char *body, size_t n, int64_t now, struct gf_notice_signal *out,
				     char *err, size_t errlen)
{
	cJSON *doc;
	gf_err e = parse_json(body, n, &doc, err, errlen);
	if (e)
		return e;
	int64_t t = 0;
	e = json_time(doc, "noticeTime", now, &t, err, errlen);
	if (!e) {
		memset(out, 0, sizeof(*out));
		out->at = t;
		snprintf(out->signal, sizeof(out->signal), "aws-rebalance");
		snprintf(out->detail, sizeof(out->detail), "rebalance recommendation");
	}
	cJSON_Delete(doc);
	return e;
}

/* The body as one upper-case word ([A-Z_], 1..64), trailing white space dropped. */
static gf_err word(const char *body, size_t n, char w[65], char *err, size_t errlen)
{
	if (n > GF_NOTICE_MAX_BODY) {
		snprintf(err, errlen, "answer of %zu bytes, over the %d-byte cap", n, GF_NOTICE_MAX_BODY);
		return GF_TOOBIG;
	}
	while (n && isspace((unsigned char)body[n - 1]))
		n--;
	if (!n || n > 64)
		return refuse(err, errlen, n ? "answer longer than 64 bytes, not one word" : "empty answer");
	for (size_t i = 0; i < n; i++)
		if (!(isupper((unsigned char)body[i]) || body[i] == '_'))
			return refuse(err, errlen, "not one upper-case word");
	memcpy(w, body, n);
	w[n] = '\0';
	return GF_OK;
}

gf_err gf_notice_parse_gcp_preempted(const char *body, size_t n, int64_t now, struct gf_notice_signal *out,
				     char *err, size_t errlen)
{
	char w[65];
	gf_err e = word(body, n, w, err, errlen);
	if (e)
		return e;
	if (!strcmp(w, "FALSE"))
		return GF_NOENT;
	if (strcmp(w, "TRUE"))
		return refuse(err, errlen, "neither TRUE nor FALSE");
	memset(out, 0, sizeof(*out));
	out->at = now + GF_NOTICE_GCP_PREEMPT_S;
	snprintf(out->signal, sizeof(out->signal), "gcp-preempted");
	snprintf(out->detail, sizeof(out->detail), "instance/preempted TRUE");
	return GF_OK;
}

gf_err gf_notice_parse_gcp_maintenance(const char *body, size_t n, int64_t now, struct gf_notice_signal *out,
				       char *err, size_t errlen)
{
	char w[65];
	gf_err e = word(body, n, w, err, errlen);
	if (e)
		return e;
	if (strcmp(w, "TERMINATE_ON_HOST_MAINTENANCE"))
		return GF_NOENT;
	memset(out, 0, sizeof(*out));
	out->at = now + GF_NOTICE_GCP_MAINT_S;
	snprintf(out->signal, sizeof(out->signal), "gcp-maintenance");
	snprintf(out->detail, sizeof(out->detail), "instance/maintenance-event TERMINATE_ON_HOST_MAINTENANCE");
	return GF_OK;
}

static int name_index(const char *s, const char *const *names, int count)
{
	for (int i = 0; i < count; i++)
		if (!strncmp(s, names[i], 3))
			return i;
	return -1;
}

static bool digits(const char *s, int n, int *v)
{
	*v = 0;
	for (int i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return false;
		*v = *v * 10 + (s[i] - '0');
	}
	return true;
}

bool gf_notice_parse_rfc1123(const char *s, int64_t *t)
{
	static const char *const days[] = { "Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun" };
	static const char *const months[] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
					      "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
	/* "Mon, 19 Sep 2016 18:29:47 GMT": 29 bytes, fixed positions. */
	int d, y, hh, mm, ss;
	if (strlen(s) != 29 || name_index(s, days, 7) < 0 || s[3] != ',' || s[4] != ' ' || s[7] != ' ' ||
	    s[11] != ' ' || s[16] != ' ' || s[19] != ':' || s[22] != ':' || strcmp(s + 25, " GMT"))
		return false;
	int m = name_index(s + 8, months, 12);
	if (m < 0 || !digits(s + 5, 2, &d) || !digits(s + 12, 4, &y) || !digits(s + 17, 2, &hh) ||
	    !digits(s + 20, 2, &mm) || !digits(s + 23, 2, &ss) || hh > 23 || mm > 59 || ss > 60 || d < 1 || d > 31)
		return false;
	int64_t days_n = gf_days_from_civil(y, m + 1, d);
	int64_t cy;
	int cm, cd;
	gf_civil_from_days(days_n, &cy, &cm, &cd);
	if (cy != y || cm != m + 1 || cd != d) /* 31 Feb */
		return false;
	*t = days_n * DAY + hh * 3600 + mm * 60 + (ss == 60 ? 59 : ss);
	return true;
}

gf_err gf_notice_parse_azure(const char *body, size_t n, int64_t now, const char *vm,
			     struct gf_notice_signal *out, char *err, size_t errlen)
{
	cJSON *doc;
	gf_err e = parse_json(body, n, &doc, err, errlen);
	if (e)
		return e;
	const cJSON *events = cJSON_GetObjectItemCaseSensitive(doc, "Events");
	const cJSON *ev;
	bool found = false;
	int i = -1;
	if (!cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(doc, "DocumentIncarnation"))) {
		e = refuse(err, errlen, "no number \"DocumentIncarnation\"");
		goto out;
	}
	if (!cJSON_IsArray(events)) {
		e = refuse(err, errlen, "no array \"Events\"");
		goto out;
	}
	cJSON_ArrayForEach(ev, events)
	{
		i++;
		const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ev, "EventType"));
		if (!cJSON_IsObject(ev) || !type) {
			snprintf(err, errlen, "Events[%d]: not an object with a string \"EventType\"", i);
			e = GF_PARSE;
			goto out;
		}
		bool preempt = !strcmp(type, "Preempt");
		if (!preempt && strcmp(type, "Terminate"))
			continue;	/* Freeze, Reboot, Redeploy: the node stays */
		const cJSON *res = cJSON_GetObjectItemCaseSensitive(ev, "Resources");
		const char *nb = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ev, "NotBefore"));
		const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ev, "EventId"));
		if (!cJSON_IsArray(res) || !nb) {
			snprintf(err, errlen, "Events[%d] (%s): no array \"Resources\" or no string \"NotBefore\"", i,
				 type);
			e = GF_PARSE;
			goto out;
		}
		bool mine = false;
		const cJSON *r;
		cJSON_ArrayForEach(r, res)
		{
			const char *rs = cJSON_GetStringValue(r);
			if (!rs) {
				snprintf(err, errlen, "Events[%d].Resources: not all strings", i);
				e = GF_PARSE;
				goto out;
			}
			mine |= vm && *vm && !strcmp(rs, vm);
		}
		int64_t t = now;	/* "" once the event has started */
		if (*nb && !gf_notice_parse_rfc1123(nb, &t)) {
			snprintf(err, errlen, "Events[%d].NotBefore \"%.40s\" is not an RFC 1123 time", i, nb);
			e = GF_PARSE;
			goto out;
		}
		if (!near_now(t, now)) {
			snprintf(err, errlen, "Events[%d].NotBefore %.40s is not near now (a day before to 30 days after)",
				 i, nb);
			e = GF_PARSE;
			goto out;
		}
		if (!mine || (found && out->at <= t))
			continue;
		found = true;
		memset(out, 0, sizeof(*out));
		out->at = t;
		snprintf(out->signal, sizeof(out->signal), "azure-%s", preempt ? "preempt" : "terminate");
		snprintf(out->detail, sizeof(out->detail), "scheduled event %s %.60s", type, id ? id : "");
	}
	e = found ? GF_OK : GF_NOENT;
out:
	cJSON_Delete(doc);
	return e;
}

/* ---- the poller -------------------------------------------------------------------- */

enum ep { EP_TOKEN, EP_ACTION, EP_REBALANCE, EP_PREEMPTED, EP_MAINT, EP_VMNAME, EP_EVENTS, EP_NODE, EP_COUNT };

static const char *const ep_path[EP_COUNT] = {
	[EP_TOKEN] = "/latest/api/token",
	[EP_ACTION] = "/latest/meta-data/spot/instance-action",
	[EP_REBALANCE] = "/latest/meta-data/events/recommendations/rebalance",
	[EP_PREEMPTED] = "/computeMetadata/v1/instance/preempted",
	[EP_MAINT] = "/computeMetadata/v1/instance/maintenance-event",
	[EP_VMNAME] = "/metadata/instance/compute/name?api-version=2021-02-01&format=text",
	[EP_EVENTS] = "/metadata/scheduledevents?api-version=2020-07-01",
	[EP_NODE] = "(the API server)",
};

struct gf_notice {
	enum gf_notice_cloud cloud;
	char *base, *node;
	unsigned interval_ms, timeout_ms;
	const struct gf_kube_conn *kube;
	gf_kube_client *k;
	CURL *h;
	char *buf;		/* GF_NOTICE_MAX_BODY + 1 */
	size_t len;
	bool over;
	char token[1025];	/* AWS IMDSv2 */
	int64_t token_at;
	char vm[128];		/* Azure: this VM's name */
	char last_err[EP_COUNT][256];
	pthread_t thread;
	bool started;
	volatile int stop;
	pthread_mutex_t mu;	/* guards st */
	struct gf_notice_stats st;
	int64_t rebalance_at;	/* written rebalance time (0 = none) */
};

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#include <stdarg.h>
static void logf_(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("gpufleet agent: spot notice: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* Log an endpoint's error once per change; NULL: it answered. */
static void ep_status(gf_notice *p, enum ep ep, const char *msg)
{
	char *last = p->last_err[ep];
	if (!msg) {
		if (last[0])
			logf_("%s%s answers again", ep == EP_NODE ? "" : p->base, ep_path[ep]);
		last[0] = '\0';
		return;
	}
	size_t n = strnlen(msg, sizeof(p->last_err[0]) - 1);
	if (!strncmp(last, msg, n) && last[n] == '\0')
		return;
	memcpy(last, msg, n);	/* the start of it decides "changed" */
	last[n] = '\0';
	if (ep == EP_NODE)
		logf_("node %s: %s (retried at every poll)", p->node, msg);
	else
		logf_("%s %s%s: %s (the agent keeps polling)", ep == EP_TOKEN ? "PUT" : "GET", p->base,
		      ep_path[ep], msg);
}

static gf_err ep_fail(gf_notice *p, enum ep ep, gf_err e, const char *msg)
{
	ep_status(p, ep, msg);
	return e;
}

static size_t on_meta(char *data, size_t sz, size_t n, void *ud)
{
	gf_notice *p = ud;
	size_t k = sz * n;
	if (p->len + k > GF_NOTICE_MAX_BODY) {
		p->over = true;
		return 0;	/* ends the transfer: CURLE_WRITE_ERROR */
	}
	memcpy(p->buf + p->len, data, k);
	p->len += k;
	return k;
}

/* One request to the metadata service; the body in p->buf (NUL-terminated),
 * p->len.  GF_OK with *status, or the transport error logged for ep. */
static gf_err meta(gf_notice *p, enum ep ep, const char *method, const char *h1, const char *h2, long *status)
{
	char url[1200], msg[256];
	struct curl_slist *hdr = NULL;
	snprintf(url, sizeof(url), "%s%s", p->base, ep_path[ep]);
	curl_easy_reset(p->h);
	if (h1)
		hdr = curl_slist_append(hdr, h1);
	if (h2 && hdr)
		hdr = curl_slist_append(hdr, h2);
	if ((h1 || h2) && !hdr)
		return GF_NOMEM;
	p->len = 0;
	p->over = false;
	curl_easy_setopt(p->h, CURLOPT_URL, url);
	if (strcmp(method, "GET"))
		curl_easy_setopt(p->h, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(p->h, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(p->h, CURLOPT_TIMEOUT_MS, (long)p->timeout_ms);
	curl_easy_setopt(p->h, CURLOPT_CONNECTTIMEOUT_MS, (long)p->timeout_ms);
	curl_easy_setopt(p->h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(p->h, CURLOPT_NOPROXY, "*");	/* link-local: never through a proxy */
	curl_easy_setopt(p->h, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(p->h, CURLOPT_MAXFILESIZE, (long)GF_NOTICE_MAX_BODY);
	curl_easy_setopt(p->h, CURLOPT_WRITEFUNCTION, on_meta);
	curl_easy_setopt(p->h, CURLOPT_WRITEDATA, p);
	CURLcode cr = curl_easy_perform(p->h);
	curl_slist_free_all(hdr);
	p->buf[p->len] = '\0';
	*status = 0;
	curl_easy_getinfo(p->h, CURLINFO_RESPONSE_CODE, status);
	if (p->over || cr == CURLE_FILESIZE_EXCEEDED) {
		snprintf(msg, sizeof(msg), "answer over the %d-byte cap", GF_NOTICE_MAX_BODY);
		return ep_fail(p, ep, GF_TOOBIG, msg);
	}
	if (cr != CURLE_OK) {
		snprintf(msg, sizeof(msg), "%s", curl_easy_strerror(cr));
		return ep_fail(p, ep, GF_UNAVAILABLE, msg);
	}
	return GF_OK;
}

/* A parser's refusal, logged with the endpoint. */
static gf_err parsed(gf_notice *p, enum ep ep, gf_err e, const char *err)
{
	char msg[300];
	if (e == GF_OK || e == GF_NOENT) {
		ep_status(p, ep, NULL);
		return e;
	}
	snprintf(msg, sizeof(msg), "refused the answer: %s", err);
	return ep_fail(p, ep, e, msg);
}

static gf_err bad_status(gf_notice *p, enum ep ep, long status)
{
	char msg[200];
	snprintf(msg, sizeof(msg), "HTTP %ld: %.80s", status, p->buf);
	for (char *c = msg; *c; c++)
		if (!isprint((unsigned char)*c))
			*c = '?';
	return ep_fail(p, ep, GF_UNAVAILABLE, msg);
}

/* ---- the Node ---- */

static bool taints_have_notice(const cJSON *taints)
{
	const cJSON *t;
	cJSON_ArrayForEach(t, taints)
	{
		const char *k = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(t, "key"));
		if (k && !strcmp(k, GF_TAINT_NOTICE))
			return true;
	}
	return false;
}

static void post_event(gf_notice *p, const char *uid, const char *reason, const char *type, const char *message,
		       int64_t now)
{
	char ts[GF_RFC3339_LEN], name[300], path[300], err[300];
	long status = 0;
	gf_rfc3339(now, ts);
	struct timespec mono;
	clock_gettime(CLOCK_REALTIME, &mono);
	snprintf(name, sizeof(name), "%.200s.%llx%09ld", p->node, (unsigned long long)mono.tv_sec, mono.tv_nsec);
	cJSON *ev = cJSON_CreateObject();
	cJSON *md = cJSON_AddObjectToObject(ev, "metadata");
	cJSON_AddStringToObject(md, "name", name);
	cJSON_AddStringToObject(md, "namespace", "default");
	cJSON *io = cJSON_AddObjectToObject(ev, "involvedObject");
	cJSON_AddStringToObject(io, "apiVersion", "v1");
	cJSON_AddStringToObject(io, "kind", "Node");
	cJSON_AddStringToObject(io, "name", p->node);
	cJSON_AddStringToObject(io, "uid", uid ? uid : "");
	cJSON_AddStringToObject(ev, "reason", reason);
	cJSON_AddStringToObject(ev, "message", message);
	cJSON_AddStringToObject(ev, "type", type);
	cJSON *src = cJSON_AddObjectToObject(ev, "source");
	cJSON_AddStringToObject(src, "component", "gpufleet-agent");
	cJSON_AddStringToObject(src, "host", p->node);
	cJSON_AddStringToObject(ev, "firstTimestamp", ts);
	cJSON_AddStringToObject(ev, "lastTimestamp", ts);
	cJSON_AddNumberToObject(ev, "count", 1);
	cJSON_AddStringToObject(ev, "reportingComponent", "gpufleet-agent");
	cJSON_AddStringToObject(ev, "reportingInstance", p->node);
	char *body = cJSON_PrintUnformatted(ev);
	cJSON_Delete(ev);
	if (!body || gf_kube_path(path, sizeof(path), "default", "events", NULL, NULL, err, sizeof(err)) ||
	    gf_kube_request(p->k, "POST", path, "application/json", body, strlen(body), &status, NULL, err,
			    sizeof(err)) ||
	    status / 100 != 2) {
		if (status)
			snprintf(err, sizeof(err), "HTTP %ld", status);
		logf_("node %s: the %s Event was not written: %s", p->node, reason, body ? err : "out of memory");
	}
	free(body);
}

/* GET the Node: its document (caller deletes) or NULL, logged. */
static cJSON *node_get(gf_notice *p)
{
	char path[300], err[300], msg[400];
	long status = 0;
	cJSON *doc = NULL;
	if (gf_kube_path(path, sizeof(path), NULL, "nodes", p->node, NULL, err, sizeof(err)) ||
	    gf_kube_json(p->k, "GET", path, NULL, NULL, &status, &doc, err, sizeof(err))) {
		snprintf(msg, sizeof(msg), "GET: %s", err);
		ep_fail(p, EP_NODE, GF_UNAVAILABLE, msg);
		return NULL;
	}
	if (!doc) {
		snprintf(msg, sizeof(msg), "GET: HTTP %ld: %s", status, err);
		ep_fail(p, EP_NODE, GF_UNAVAILABLE, msg);
	}
	return doc;
}

static gf_err node_patch(gf_notice *p, cJSON *patch, long *status)
{
	char path[300], err[300], msg[400];
	char *body = cJSON_PrintUnformatted(patch);
	if (!body)
		return GF_NOMEM;
	gf_err e = gf_kube_path(path, sizeof(path), NULL, "nodes", p->node, NULL, err, sizeof(err));
	if (!e)
		e = gf_kube_request(p->k, "PATCH", path, "application/merge-patch+json", body, strlen(body), status,
				    NULL, err, sizeof(err));
	free(body);
	if (e) {
		snprintf(msg, sizeof(msg), "PATCH: %s", err);
		return ep_fail(p, EP_NODE, e, msg);
	}
	if (*status / 100 != 2 && *status != 409) {
		snprintf(msg, sizeof(msg), "PATCH: HTTP %ld", *status);
		return ep_fail(p, EP_NODE, GF_UNAVAILABLE, msg);
	}
	return GF_OK;
}

static const char *node_uid(const cJSON *doc)
{
	return cJSON_GetStringValue(
		cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "metadata"), "uid"));
}

static const char *node_annotation(const cJSON *doc, const char *key)
{
	const cJSON *md = cJSON_GetObjectItemCaseSensitive(doc, "metadata");
	return cJSON_GetStringValue(
		cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(md, "annotations"), key));
}

static gf_err write_notice(gf_notice *p, const struct gf_notice_signal *s, int64_t now)
{
	cJSON *doc = node_get(p);
	if (!doc)
		return GF_UNAVAILABLE;
	const cJSON *md = cJSON_GetObjectItemCaseSensitive(doc, "metadata");
	const char *rv = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(md, "resourceVersion"));
	const cJSON *taints = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "spec"), "taints");
	const char *have = node_annotation(doc, GF_ANN_NOTICE);
	int64_t there = 0, at = s->at;
	bool have_ok = have && gf_rfc3339_parse(have, &there);
	bool tainted = taints_have_notice(taints);
	gf_err e = GF_OK;
	if (have_ok && there <= at && tainted) {	/* already there: once */
		ep_status(p, EP_NODE, NULL);
		goto done;
	}
	if (have_ok && there < at)
		at = there;
	char ts[GF_RFC3339_LEN], added[GF_RFC3339_LEN];
	gf_rfc3339(at, ts);
	gf_rfc3339(now, added);
	cJSON *patch = cJSON_CreateObject();
	cJSON *pm = cJSON_AddObjectToObject(patch, "metadata");
	if (rv)
		cJSON_AddStringToObject(pm, "resourceVersion", rv);
	cJSON_AddStringToObject(cJSON_AddObjectToObject(pm, "annotations"), GF_ANN_NOTICE, ts);
	cJSON *list = cJSON_AddArrayToObject(cJSON_AddObjectToObject(patch, "spec"), "taints");
	const cJSON *t;
	cJSON_ArrayForEach(t, taints)
		cJSON_AddItemToArray(list, cJSON_Duplicate(t, true));
	if (!tainted) {
		cJSON *mine = cJSON_CreateObject();
		cJSON_AddStringToObject(mine, "key", GF_TAINT_NOTICE);
		cJSON_AddStringToObject(mine, "value", s->signal);
		cJSON_AddStringToObject(mine, "effect", "NoSchedule");
		cJSON_AddStringToObject(mine, "timeAdded", added);
		cJSON_AddItemToArray(list, mine);
	}
	long status = 0;
	e = node_patch(p, patch, &status);
	cJSON_Delete(patch);
	if (e)
		goto done;
	if (status == 409) {	/* someone wrote the Node since our GET: again at the next poll */
		logf_("node %s changed while the notice was written (409): written at the next poll", p->node);
		e = GF_STATE;
		goto done;
	}
	ep_status(p, EP_NODE, NULL);
	char msg[400];
	snprintf(msg, sizeof(msg), "%s (%s): the node leaves at %s; %s=%s:NoSchedule", s->detail, s->signal, ts,
		 GF_TAINT_NOTICE, s->signal);
	logf_("node %s: %s", p->node, msg);
	post_event(p, node_uid(doc), "SpotNotice", "Warning", msg, now);
done:
	if (!e) {
		pthread_mutex_lock(&p->mu);
		p->st.notice_written = true;
		p->st.notice_at = have_ok && there <= at ? there : at;
		pthread_mutex_unlock(&p->mu);
	}
	cJSON_Delete(doc);
	return e;
}

static gf_err write_rebalance(gf_notice *p, const struct gf_notice_signal *s, int64_t now)
{
	char ts[GF_RFC3339_LEN];
	gf_rfc3339(s->at, ts);
	cJSON *doc = node_get(p);
	if (!doc)
		return GF_UNAVAILABLE;
	const char *have = node_annotation(doc, GF_ANN_REBALANCE);
	gf_err e = GF_OK;
	if (!have || strcmp(have, ts)) {
		cJSON *patch = cJSON_CreateObject();
		cJSON_AddStringToObject(
			cJSON_AddObjectToObject(cJSON_AddObjectToObject(patch, "metadata"), "annotations"),
			GF_ANN_REBALANCE, ts);
		long status = 0;
		e = node_patch(p, patch, &status);
		cJSON_Delete(patch);
		if (!e && status == 409)
			e = GF_STATE;
		if (!e) {
			char msg[300];
			snprintf(msg, sizeof(msg), "AWS rebalance recommendation issued at %s: %s=%s", ts,
				 GF_ANN_REBALANCE, ts);
			logf_("node %s: %s", p->node, msg);
			post_event(p, node_uid(doc), "RebalanceRecommendation", "Normal", msg, now);
		}
	}
	if (!e) {
		ep_status(p, EP_NODE, NULL);
		p->rebalance_at = s->at;
		pthread_mutex_lock(&p->mu);
		p->st.rebalance_written = true;
		pthread_mutex_unlock(&p->mu);
	}
	cJSON_Delete(doc);
	return e;
}

/* A hard notice seen: write it unless an equal or earlier one was written. */
static gf_err on_notice(gf_notice *p, const struct gf_notice_signal *s, int64_t now)
{
	pthread_mutex_lock(&p->mu);
	bool done = p->st.notice_written && p->st.notice_at <= s->at;
	pthread_mutex_unlock(&p->mu);
	return done ? GF_OK : write_notice(p, s, now);
}

/* ---- one poll per cloud ---- */

static gf_err poll_aws(gf_notice *p, int64_t now)
{
	char hdr[1100], err[256];
	struct gf_notice_signal s;
	long status;
	gf_err e, worst = GF_OK;
	if (!p->token[0] || now - p->token_at > 6 * 3600 - 300) {
		p->token[0] = '\0';
		if ((e = meta(p, EP_TOKEN, "PUT", "X-aws-ec2-metadata-token-ttl-seconds: 21600", NULL, &status)))
			return e;
		if (status != 200)
			return bad_status(p, EP_TOKEN, status);
		size_t n = p->len;
		bool ok = n > 0 && n < sizeof(p->token);
		for (size_t i = 0; ok && i < n; i++)
			ok = isgraph((unsigned char)p->buf[i]);
		if (!ok)
			return ep_fail(p, EP_TOKEN, GF_PARSE, "refused the token: not 1..1024 printable bytes");
		memcpy(p->token, p->buf, n + 1);
		p->token_at = now;
		ep_status(p, EP_TOKEN, NULL);
	}
	snprintf(hdr, sizeof(hdr), "X-aws-ec2-metadata-token: %s", p->token);
	static const enum ep eps[] = { EP_ACTION, EP_REBALANCE };
	for (int i = 0; i < 2; i++) {
		enum ep ep = eps[i];
		if ((e = meta(p, ep, "GET", hdr, NULL, &status))) {
			worst = e;
			continue;
		}
		if (status == 401) {	/* the token expired early: a new one at the next poll */
			p->token[0] = '\0';
			worst = bad_status(p, ep, status);
			continue;
		}
		if (status == 404) {	/* no notice */
			ep_status(p, ep, NULL);
			continue;
		}
		if (status != 200) {
			worst = bad_status(p, ep, status);
			continue;
		}
		if (ep == EP_ACTION)
			e = gf_notice_parse_aws_action(p->buf, p->len, now, &s, err, sizeof(err));
		else
			e = gf_notice_parse_aws_rebalance(p->buf, p->len, now, &s, err, sizeof(err));
		if ((e = parsed(p, ep, e, err)) == GF_NOENT)
			continue;
		if (!e && ep == EP_ACTION)
			e = on_notice(p, &s, now);
		else if (!e && p->rebalance_at != s.at)
			e = write_rebalance(p, &s, now);
		if (e)
			worst = e;
	}
	return worst;
}

static gf_err poll_gcp(gf_notice *p, int64_t now)
{
	char err[256];
	struct gf_notice_signal s;
	long status;
	gf_err e, worst = GF_OK;
	static const enum ep eps[] = { EP_PREEMPTED, EP_MAINT };
	for (int i = 0; i < 2; i++) {
		enum ep ep = eps[i];
		if ((e = meta(p, ep, "GET", "Metadata-Flavor: Google", NULL, &status))) {
			worst = e;
			continue;
		}
		if (status != 200) {
			worst = bad_status(p, ep, status);
			continue;
		}
		if (ep == EP_PREEMPTED)
			e = gf_notice_parse_gcp_preempted(p->buf, p->len, now, &s, err, sizeof(err));
		else
			e = gf_notice_parse_gcp_maintenance(p->buf, p->len, now, &s, err, sizeof(err));
		if ((e = parsed(p, ep, e, err)) == GF_NOENT)
			continue;
		if (!e)
			e = on_notice(p, &s, now);
		if (e)
			worst = e;
	}
	return worst;
}

static gf_err poll_azure(gf_notice *p, int64_t now)
{
	char err[256];
	struct gf_notice_signal s;
	long status;
	gf_err e;
	if (!p->vm[0]) {	/* which VM this is: the events name the VMs they hit */
		if ((e = meta(p, EP_VMNAME, "GET", "Metadata: true", NULL, &status)))
			return e;
		if (status != 200)
			return bad_status(p, EP_VMNAME, status);
		size_t n = p->len;
		while (n && isspace((unsigned char)p->buf[n - 1]))
			n--;
		bool ok = n > 0 && n < sizeof(p->vm);
		for (size_t i = 0; ok && i < n; i++)
			ok = isalnum((unsigned char)p->buf[i]) || strchr("-_.", p->buf[i]);
		if (!ok)
			return ep_fail(p, EP_VMNAME, GF_PARSE,
				       "refused the VM name: not 1..127 of letters, digits, '-', '_', '.'");
		memcpy(p->vm, p->buf, n);
		p->vm[n] = '\0';
		ep_status(p, EP_VMNAME, NULL);
		logf_("Azure VM %s: watching its scheduled events", p->vm);
	}
	if ((e = meta(p, EP_EVENTS, "GET", "Metadata: true", NULL, &status)))
		return e;
	if (status != 200)
		return bad_status(p, EP_EVENTS, status);
	e = gf_notice_parse_azure(p->buf, p->len, now, p->vm, &s, err, sizeof(err));
	if ((e = parsed(p, EP_EVENTS, e, err)) == GF_NOENT)
		return GF_OK;
	return e ? e : on_notice(p, &s, now);
}

gf_err gf_notice_poll(gf_notice *p, int64_t now)
{
	gf_err e = p->cloud == GF_NOTICE_AWS ? poll_aws(p, now)
		   : p->cloud == GF_NOTICE_GCP ? poll_gcp(p, now)
					       : poll_azure(p, now);
	pthread_mutex_lock(&p->mu);
	p->st.polls++;
	p->st.errors += e != GF_OK;
	pthread_mutex_unlock(&p->mu);
	return e;
}

/* ---- lifecycle ---- */

static bool url_ok(const char *u)
{
	size_t n = strlen(u);
	if (n < 8 || n > 1000 || (strncmp(u, "http://", 7) && strncmp(u, "https://", 8)))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isgraph((unsigned char)u[i]) || u[i] == '?' || u[i] == '#')
			return false;
	return true;
}

gf_err gf_notice_create(const struct gf_notice_config *cfg, gf_notice **out, char *err, size_t errlen)
{
	const char *base = cfg->metadata_url ? cfg->metadata_url : "http://169.254.169.254";
	*out = NULL;
	if (cfg->cloud != GF_NOTICE_AWS && cfg->cloud != GF_NOTICE_GCP && cfg->cloud != GF_NOTICE_AZURE) {
		snprintf(err, errlen, "no cloud (aws, gcp or azure)");
		return GF_INVAL;
	}
	if (!url_ok(base)) {
		snprintf(err, errlen, "metadata URL '%.100s' is not http(s)://HOST[:PORT][/PATH]", base);
		return GF_INVAL;
	}
	if (!cfg->node || !gf_k8s_dns_subdomain(cfg->node)) {
		snprintf(err, errlen, "'%.100s' is not a valid node name", cfg->node ? cfg->node : "");
		return GF_INVAL;
	}
	gf_notice *p = calloc(1, sizeof(*p));
	if (!p)
		return GF_NOMEM;
	pthread_mutex_init(&p->mu, NULL);
	p->cloud = cfg->cloud;
	p->interval_ms = cfg->interval_ms ? cfg->interval_ms : 2000;
	p->timeout_ms = cfg->timeout_ms ? cfg->timeout_ms : 2000;
	p->kube = cfg->kube;
	size_t bl = strlen(base);
	while (bl && base[bl - 1] == '/')
		bl--;
	p->base = strndup(base, bl);
	p->node = strdup(cfg->node);
	p->buf = malloc(GF_NOTICE_MAX_BODY + 1);
	p->h = curl_easy_init();
	const struct gf_kube_client_opts ko = { .timeout_ms = 10000, .retries = -1, .max_body = 8 << 20,
						 .stop = &p->stop };
	if (!p->base || !p->node || !p->buf || !p->h || gf_kube_client_create(cfg->kube, &ko, &p->k)) {
		gf_notice_destroy(p);
		return GF_NOMEM;
	}
	*out = p;
	return GF_OK;
}

static void *run(void *ud)
{
	gf_notice *p = ud;
	while (!gf_kube_stopped(&p->stop)) {
		gf_notice_poll(p, (int64_t)time(NULL));
		gf_kube_sleep_ms(p->interval_ms, &p->stop);
	}
	return NULL;
}

gf_err gf_notice_start(gf_notice *p)
{
	if (p->started)
		return GF_STATE;
	logf_("polling %s every %u ms for node %s", p->base, p->interval_ms, p->node);
	if (pthread_create(&p->thread, NULL, run, p))
		return GF_NOMEM;
	p->started = true;
	return GF_OK;
}

void gf_notice_stats(gf_notice *p, struct gf_notice_stats *out)
{
	pthread_mutex_lock(&p->mu);
	*out = p->st;
	pthread_mutex_unlock(&p->mu);
}

void gf_notice_render_metrics(gf_notice *p, struct gf_obuf *out)
{
	struct gf_notice_stats s;
	if (!p)
		return;
	gf_notice_stats(p, &s);
	gf_obuf_printf(out,
		       "# HELP gpufleet_agent_spot_notice_polls_total Polls of the cloud metadata service "
		       "(--spot-notice), by result.\n"
		       "# TYPE gpufleet_agent_spot_notice_polls_total counter\n"
		       "gpufleet_agent_spot_notice_polls_total{result=\"ok\"} %u\n"
		       "gpufleet_agent_spot_notice_polls_total{result=\"error\"} %u\n"
		       "# HELP gpufleet_agent_spot_notice_deadline_seconds Unix time the node leaves, as written "
		       "in gpufleet.io/notice (0: no notice).\n"
		       "# TYPE gpufleet_agent_spot_notice_deadline_seconds gauge\n"
		       "gpufleet_agent_spot_notice_deadline_seconds %lld\n",
		       s.polls - s.errors, s.errors, s.notice_written ? (long long)s.notice_at : 0LL);
}

void gf_notice_destroy(gf_notice *p)
{
	if (!p)
		return;
	if (p->started) {
		gf_kube_stop(&p->stop);
		pthread_join(p->thread, NULL);
	}
	gf_kube_client_destroy(p->k);
	if (p->h)
		curl_easy_cleanup(p->h);
	free(p->buf);
	free(p->base);
	free(p->node);
	pthread_mutex_destroy(&p->mu);
	free(p);
}
