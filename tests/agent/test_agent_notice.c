/*
 * tests/agent/test_agent_notice.c - `gpufleet agent --spot-notice`
 * (agent/notice.h): the metadata parsers on each cloud's real response
 * shapes and on hostile ones, then the poller driven against a FAKE
 * metadata server of ours on loopback (fake_md_*: AWS IMDSv2 with its token,
 * GCP with Metadata-Flavor, Azure Scheduled Events with Metadata: true) and a
 * FAKE API server (fake_api_*: GET/PATCH of one Node with resourceVersion
 * checks, POST of Events).  Neither is a cloud or a kube-apiserver: they
 * serve the shapes the providers document; tests/agent/agent_notice_k8s.sh
 * is the run against a real API server.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cjson/cJSON.h>
#include <cmocka.h>

#include "agent/notice.h"
#include "core/time.h"
#include "http/server.h"

static const int64_t NOW = 1764664200; /* 2025-12-02T08:30:00Z */

/* ---- parsers ----------------------------------------------------------------------- */

static void test_parse_aws(void **st)
{
	(void)st;
	struct gf_notice_signal s;
	char err[256] = "";
	const char *ok = "{\"action\": \"terminate\", \"time\": \"2025-12-02T08:32:00Z\"}";
	assert_int_equal(gf_notice_parse_aws_action(ok, strlen(ok), NOW, &s, err, sizeof(err)), GF_OK);
	assert_int_equal(s.at, NOW + 120);
	assert_string_equal(s.signal, "aws-spot-itn");
	assert_non_null(strstr(s.detail, "terminate"));
	const char *stop = "{\"action\":\"stop\",\"time\":\"2025-12-02T08:31:00Z\"}\n";
	assert_int_equal(gf_notice_parse_aws_action(stop, strlen(stop), NOW, &s, err, sizeof(err)), GF_OK);
	assert_int_equal(s.at, NOW + 60);

	static const struct { const char *body, *why; } bad[] = {
		{ "{\"action\": \"terminate\", \"time\": ", "not JSON" },
		{ "[1,2]", "not a JSON object" },
		{ "{\"time\": \"2025-12-02T08:32:00Z\"}", "no string \"action\"" },
		{ "{\"action\": \"reboot\", \"time\": \"2025-12-02T08:32:00Z\"}", "not terminate" },
		{ "{\"action\": \"terminate\", \"time\": \"tomorrow\"}", "not an RFC 3339" },
		{ "{\"action\": \"terminate\", \"time\": \"2017-09-18T08:22:00Z\"}", "not near now" },
		{ "{\"action\": \"terminate\", \"time\": \"2025-12-02T08:32:00+02:00\"}", "not an RFC 3339" },
		{ "{\"action\": \"terminate\", \"time\": 12}", "no string \"time\"" },
		{ "{\"action\":\"terminate\",\"time\":\"2025-12-02T08:32:00Z\"} trailing", "bytes after" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		gf_err e = gf_notice_parse_aws_action(bad[i].body, strlen(bad[i].body), NOW, &s, err, sizeof(err));
		if (e != GF_PARSE || !strstr(err, bad[i].why))
			fail_msg("%s: got %d \"%s\", want GF_PARSE \"%s\"", bad[i].body, e, err, bad[i].why);
	}
	/* A body over the cap is refused by size, before any parsing. */
	size_t n = GF_NOTICE_MAX_BODY + 1;
	char *big = malloc(n);
	assert_non_null(big);
	memset(big, ' ', n);
	assert_int_equal(gf_notice_parse_aws_action(big, n, NOW, &s, err, sizeof(err)), GF_TOOBIG);
	assert_non_null(strstr(err, "cap"));
	free(big);

	const char *rb = "{\"noticeTime\": \"2025-12-02T08:20:00Z\"}";
	assert_int_equal(gf_notice_parse_aws_rebalance(rb, strlen(rb), NOW, &s, err, sizeof(err)), GF_OK);
	assert_int_equal(s.at, NOW - 600);
	const char *rb_bad = "{\"noticeTime\": \"2025-13-02T08:20:00Z\"}";
	assert_int_equal(gf_notice_parse_aws_rebalance(rb_bad, strlen(rb_bad), NOW, &s, err, sizeof(err)), GF_PARSE);
}

static void test_parse_gcp(void **st)
{
	(void)st;
	struct gf_notice_signal s;
	char err[256];
	assert_int_equal(gf_notice_parse_gcp_preempted("FALSE", 5, NOW, &s, err, sizeof(err)), GF_NOENT);
	assert_int_equal(gf_notice_parse_gcp_preempted("TRUE", 4, NOW, &s, err, sizeof(err)), GF_OK);
	assert_int_equal(s.at, NOW + 30);
	assert_string_equal(s.signal, "gcp-preempted");
	assert_int_equal(gf_notice_parse_gcp_preempted("TRUE\n", 5, NOW, &s, err, sizeof(err)), GF_OK);
	assert_int_equal(gf_notice_parse_gcp_preempted("true", 4, NOW, &s, err, sizeof(err)), GF_PARSE);
	assert_int_equal(gf_notice_parse_gcp_preempted("MAYBE", 5, NOW, &s, err, sizeof(err)), GF_PARSE);
	assert_int_equal(gf_notice_parse_gcp_preempted("", 0, NOW, &s, err, sizeof(err)), GF_PARSE);
	assert_int_equal(gf_notice_parse_gcp_preempted("TR\0E", 4, NOW, &s, err, sizeof(err)), GF_PARSE);
	assert_int_equal(gf_notice_parse_gcp_maintenance("NONE", 4, NOW, &s, err, sizeof(err)), GF_NOENT);
	assert_int_equal(gf_notice_parse_gcp_maintenance("MIGRATE_ON_HOST_MAINTENANCE", 27, NOW, &s, err,
							 sizeof(err)),
			 GF_NOENT);
	assert_int_equal(gf_notice_parse_gcp_maintenance("TERMINATE_ON_HOST_MAINTENANCE", 29, NOW, &s, err,
							 sizeof(err)),
			 GF_OK);
	assert_int_equal(s.at, NOW + 60);
	assert_string_equal(s.signal, "gcp-maintenance");
	assert_int_equal(gf_notice_parse_gcp_maintenance("<html>", 6, NOW, &s, err, sizeof(err)), GF_PARSE);
}

/* Azure's documented shape: two VMs of a scale set, a Freeze and a Preempt. */
static const char *AZ =
	"{\"DocumentIncarnation\": 2, \"Events\": ["
	"{\"EventId\": \"1E2D-A\", \"EventStatus\": \"Scheduled\", \"EventType\": \"Freeze\","
	" \"ResourceType\": \"VirtualMachine\", \"Resources\": [\"vmss_3\"],"
	" \"NotBefore\": \"Tue, 02 Dec 2025 08:30:40 GMT\", \"Description\": \"\", \"EventSource\": \"Platform\","
	" \"DurationInSeconds\": 5},"
	"{\"EventId\": \"7A1B-C\", \"EventStatus\": \"Scheduled\", \"EventType\": \"Preempt\","
	" \"ResourceType\": \"VirtualMachine\", \"Resources\": [\"vmss_3\", \"vmss_4\"],"
	" \"NotBefore\": \"Tue, 02 Dec 2025 08:30:30 GMT\", \"Description\": \"\", \"EventSource\": \"Platform\","
	" \"DurationInSeconds\": -1}]}";

static void test_parse_azure(void **st)
{
	(void)st;
	struct gf_notice_signal s;
	char err[256];
	assert_int_equal(gf_notice_parse_azure(AZ, strlen(AZ), NOW, "vmss_4", &s, err, sizeof(err)), GF_OK);
	assert_int_equal(s.at, NOW + 30);
	assert_string_equal(s.signal, "azure-preempt");
	assert_non_null(strstr(s.detail, "7A1B-C"));
	/* Another VM of the scale set: not this node's notice. */
	assert_int_equal(gf_notice_parse_azure(AZ, strlen(AZ), NOW, "vmss_5", &s, err, sizeof(err)), GF_NOENT);
	const char *none = "{\"DocumentIncarnation\": 0, \"Events\": []}";
	assert_int_equal(gf_notice_parse_azure(none, strlen(none), NOW, "vmss_4", &s, err, sizeof(err)), GF_NOENT);
	const char *started = "{\"DocumentIncarnation\":3,\"Events\":[{\"EventType\":\"Preempt\",\"EventStatus\":"
			      "\"Started\",\"Resources\":[\"vm1\"],\"NotBefore\":\"\"}]}";
	assert_int_equal(gf_notice_parse_azure(started, strlen(started), NOW, "vm1", &s, err, sizeof(err)), GF_OK);
	assert_int_equal(s.at, NOW);
	static const struct { const char *body, *why; } bad[] = {
		{ "{\"Events\": []}", "DocumentIncarnation" },
		{ "{\"DocumentIncarnation\": 1, \"Events\": {}}", "no array \"Events\"" },
		{ "{\"DocumentIncarnation\": 1, \"Events\": [7]}", "Events[0]" },
		{ "{\"DocumentIncarnation\":1,\"Events\":[{\"EventType\":\"Preempt\",\"Resources\":[\"vm1\"],"
		  "\"NotBefore\":\"2025-12-02T08:30:30Z\"}]}",
		  "not an RFC 1123" },
		{ "{\"DocumentIncarnation\":1,\"Events\":[{\"EventType\":\"Preempt\",\"Resources\":[\"vm1\"],"
		  "\"NotBefore\":\"Mon, 19 Sep 2016 18:29:47 GMT\"}]}",
		  "not near now" },
		{ "{\"DocumentIncarnation\":1,\"Events\":[{\"EventType\":\"Preempt\",\"Resources\":[1],"
		  "\"NotBefore\":\"\"}]}",
		  "not all strings" },
		{ "{\"DocumentIncarnation\":1,\"Events\":[{\"EventType\":\"Preempt\",\"NotBefore\":\"\"}]}",
		  "Resources" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		gf_err e = gf_notice_parse_azure(bad[i].body, strlen(bad[i].body), NOW, "vm1", &s, err, sizeof(err));
		if (e != GF_PARSE || !strstr(err, bad[i].why))
			fail_msg("%s: got %d \"%s\", want GF_PARSE \"%s\"", bad[i].body, e, err, bad[i].why);
	}
	int64_t t;
	assert_true(gf_notice_parse_rfc1123("Mon, 19 Sep 2016 18:29:47 GMT", &t));
	assert_int_equal(t, 1474309787);
	assert_false(gf_notice_parse_rfc1123("Mon, 31 Feb 2016 18:29:47 GMT", &t));
	assert_false(gf_notice_parse_rfc1123("Mon, 19 Sep 2016 18:29:47 UTC", &t));
	assert_false(gf_notice_parse_rfc1123("Mon, 19 Sep 2016 24:29:47 GMT", &t));
	assert_false(gf_notice_parse_rfc1123("Mon, 19 Xyz 2016 18:29:47 GMT", &t));
}

/* ---- the FAKE metadata server -------------------------------------------------------- */

struct fake_md {
	/* AWS */
	char token[64];
	int token_puts, unauthorized;
	int action_status, rebalance_status; /* 404: none */
	const char *action, *rebalance;
	/* GCP */
	const char *preempted, *maintenance;
	int no_flavor;
	/* Azure */
	const char *vmname, *events;
	int no_metadata_hdr;
	char *big;	/* served instead, when set */
};

static void fake_md_handler(void *ud, const struct gf_http_request *req, struct gf_http_response *resp)
{
	struct fake_md *m = ud;
	const char *p = req->path;
	resp->content_type = "text/plain";
	if (m->big) {
		gf_obuf_puts(&resp->body, m->big);
		return;
	}
	if (!strcmp(req->method, "PUT") && !strcmp(p, "/latest/api/token")) {
		const char *ttl = gf_http_request_header(req, "X-aws-ec2-metadata-token-ttl-seconds");
		long t = ttl ? strtol(ttl, NULL, 10) : 0;
		if (t < 1 || t > 21600) {
			gf_http_response_error(resp, 400, "bad ttl");
			return;
		}
		m->token_puts++;
		snprintf(m->token, sizeof(m->token), "AQAEAFAKE-token-%d==", m->token_puts);
		gf_obuf_puts(&resp->body, m->token);
		return;
	}
	if (!strncmp(p, "/latest/meta-data/", 18)) {
		const char *tok = gf_http_request_header(req, "X-aws-ec2-metadata-token");
		if (!tok || strcmp(tok, m->token)) { /* IMDSv2 only */
			m->unauthorized++;
			resp->status = 401;
			return;
		}
		bool action = !strcmp(p, "/latest/meta-data/spot/instance-action");
		int status = action ? m->action_status : m->rebalance_status;
		const char *body = action ? m->action : m->rebalance;
		if (status != 200) {
			gf_http_response_error(resp, (unsigned)status, "Not Found");
			return;
		}
		resp->content_type = "text/plain";
		gf_obuf_puts(&resp->body, body);
		return;
	}
	if (!strncmp(p, "/computeMetadata/v1/instance/", 29)) {
		const char *fl = gf_http_request_header(req, "Metadata-Flavor");
		if (!fl || strcmp(fl, "Google")) {
			m->no_flavor++;
			gf_http_response_error(resp, 403, "Missing Metadata-Flavor:Google header.");
			return;
		}
		gf_obuf_puts(&resp->body, !strcmp(p + 29, "preempted") ? m->preempted : m->maintenance);
		return;
	}
	if (!strncmp(p, "/metadata/", 10)) {
		const char *md = gf_http_request_header(req, "Metadata");
		if (!md || strcmp(md, "true")) {
			m->no_metadata_hdr++;
			gf_http_response_error(resp, 400, "Bad request. Required metadata header not specified");
			return;
		}
		const char *v = gf_http_request_query(req, "api-version");
		if (!strcmp(p, "/metadata/scheduledevents") && v && !strcmp(v, "2020-07-01")) {
			resp->content_type = "application/json";
			gf_obuf_puts(&resp->body, m->events);
			return;
		}
		if (!strcmp(p, "/metadata/instance/compute/name") && v) {
			gf_obuf_puts(&resp->body, m->vmname);
			return;
		}
	}
	gf_http_response_error(resp, 404, "no such fake metadata path");
}

/* ---- the FAKE API server: one Node, Events ----------------------------------------------- */

struct fake_api {
	cJSON *node;
	int rv;
	int gets, patches, conflicts, events;
	int force_conflicts;	/* answer the next N patches 409 */
	char last_event[1024];
};

static void fake_api_node(void *ud, const struct gf_http_request *req, struct gf_http_response *resp)
{
	struct fake_api *a = ud;
	resp->content_type = "application/json";
	cJSON *md = cJSON_GetObjectItem(a->node, "metadata");
	if (!strcmp(req->method, "GET")) {
		a->gets++;
		char rv[16];
		snprintf(rv, sizeof(rv), "%d", a->rv);
		cJSON_ReplaceItemInObject(md, "resourceVersion", cJSON_CreateString(rv));
		char *t = cJSON_PrintUnformatted(a->node);
		gf_obuf_puts(&resp->body, t);
		free(t);
		return;
	}
	a->patches++;
	const char *ct = gf_http_request_header(req, "Content-Type");
	cJSON *p = cJSON_Parse(req->body);
	if (!p || !ct || strcmp(ct, "application/merge-patch+json")) {
		cJSON_Delete(p);
		gf_http_response_error(resp, 415, "want a merge patch");
		return;
	}
	cJSON *pm = cJSON_GetObjectItem(p, "metadata");
	const char *rv = cJSON_GetStringValue(cJSON_GetObjectItem(pm, "resourceVersion"));
	if (a->force_conflicts > 0 || (rv && strtol(rv, NULL, 10) != a->rv)) {
		a->force_conflicts--;
		a->conflicts++;
		cJSON_Delete(p);
		gf_http_response_error(resp, 409, "the object has been modified");
		return;
	}
	cJSON *ann = cJSON_GetObjectItem(md, "annotations");
	cJSON *kv;
	cJSON_ArrayForEach(kv, cJSON_GetObjectItem(pm, "annotations"))
	{
		cJSON_DeleteItemFromObject(ann, kv->string);
		cJSON_AddItemToObject(ann, kv->string, cJSON_Duplicate(kv, true));
	}
	cJSON *taints = cJSON_GetObjectItem(cJSON_GetObjectItem(p, "spec"), "taints");
	if (taints) /* atomic list: replaced whole */
		cJSON_ReplaceItemInObject(cJSON_GetObjectItem(a->node, "spec"), "taints", cJSON_Duplicate(taints, true));
	a->rv++;
	cJSON_Delete(p);
	gf_obuf_puts(&resp->body, "{\"kind\":\"Node\"}");
}

static void fake_api_event(void *ud, const struct gf_http_request *req, struct gf_http_response *resp)
{
	struct fake_api *a = ud;
	a->events++;
	snprintf(a->last_event, sizeof(a->last_event), "%s", req->body);
	resp->status = 201;
	resp->content_type = "application/json";
	gf_obuf_puts(&resp->body, req->body);
}

struct rig {
	struct fake_md md;
	struct fake_api api;
	gf_http_server *md_srv, *api_srv;
	struct gf_http_route md_routes[2], api_routes[3];
	struct gf_kube_conn kc;
	char md_url[64];
};

static void rig_up(struct rig *r)
{
	memset(r, 0, sizeof(*r));
	r->md.action_status = r->md.rebalance_status = 404;
	r->md.preempted = "FALSE";
	r->md.maintenance = "NONE";
	r->md.vmname = "vmss_4";
	r->md.events = "{\"DocumentIncarnation\": 0, \"Events\": []}";
	r->api.node = cJSON_Parse("{\"kind\":\"Node\",\"metadata\":{\"name\":\"spot-node-1\",\"uid\":\"u-1\","
				  "\"resourceVersion\":\"1\",\"annotations\":{\"other\":\"kept\"}},"
				  "\"spec\":{\"taints\":[{\"key\":\"nvidia.com/gpu\",\"value\":\"present\","
				  "\"effect\":\"NoSchedule\"}]}}");
	r->api.rv = 7;
	struct gf_http_route *md_routes = r->md_routes, *api_routes = r->api_routes;
	md_routes[0] = (struct gf_http_route){ "GET", "/*", fake_md_handler, &r->md };
	md_routes[1] = (struct gf_http_route){ "PUT", "/*", fake_md_handler, &r->md };
	api_routes[0] = (struct gf_http_route){ "GET", "/api/v1/nodes/spot-node-1", fake_api_node, &r->api };
	api_routes[1] = (struct gf_http_route){ "PATCH", "/api/v1/nodes/spot-node-1", fake_api_node, &r->api };
	api_routes[2] = (struct gf_http_route){ "POST", "/api/v1/namespaces/default/events", fake_api_event, &r->api };
	struct gf_http_config mc = { .bind_addr = "127.0.0.1", .routes = md_routes, .nroutes = 2,
				     .max_response = 1 << 20 };
	struct gf_http_config ac = { .bind_addr = "127.0.0.1", .routes = api_routes, .nroutes = 3,
				     .max_body = 1 << 20 };
	assert_int_equal(gf_http_server_create(&mc, &r->md_srv), GF_OK);
	assert_int_equal(gf_http_server_create(&ac, &r->api_srv), GF_OK);
	snprintf(r->md_url, sizeof(r->md_url), "http://127.0.0.1:%u/", gf_http_server_port(r->md_srv));
	char api[64];
	snprintf(api, sizeof(api), "http://127.0.0.1:%u", gf_http_server_port(r->api_srv));
	r->kc.server = strdup(api);
}

static void rig_down(struct rig *r)
{
	gf_http_server_destroy(r->md_srv);
	gf_http_server_destroy(r->api_srv);
	gf_kube_conn_release(&r->kc);
	cJSON_Delete(r->api.node);
	free(r->md.big);
}

static gf_notice *poller(struct rig *r, enum gf_notice_cloud cloud)
{
	struct gf_notice_config cfg = { .cloud = cloud, .metadata_url = r->md_url, .kube = &r->kc,
					.node = "spot-node-1", .timeout_ms = 2000 };
	gf_notice *p;
	char err[256];
	assert_int_equal(gf_notice_create(&cfg, &p, err, sizeof(err)), GF_OK);
	return p;
}

static const char *ann(struct rig *r, const char *key)
{
	return cJSON_GetStringValue(
		cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(r->api.node, "metadata"), "annotations"), key));
}

/* The value of the node's gpufleet.io/notice taint (NULL: none); how many taints in *n. */
static const char *notice_taint(struct rig *r, int *n)
{
	cJSON *t, *taints = cJSON_GetObjectItem(cJSON_GetObjectItem(r->api.node, "spec"), "taints");
	const char *v = NULL;
	*n = cJSON_GetArraySize(taints);
	cJSON_ArrayForEach(t, taints)
	{
		if (!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(t, "key")), "gpufleet.io/notice")) {
			assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(t, "effect")), "NoSchedule");
			v = cJSON_GetStringValue(cJSON_GetObjectItem(t, "value"));
		}
	}
	return v;
}

static void test_poll_aws_fake_imds(void **st)
{
	(void)st;
	struct rig r;
	rig_up(&r);
	gf_notice *p = poller(&r, GF_NOTICE_AWS);
	int n;

	/* No notice: 404 on both; nothing asked of the API server. */
	assert_int_equal(gf_notice_poll(p, NOW), GF_OK);
	assert_int_equal(r.md.token_puts, 1);
	assert_int_equal(r.md.unauthorized, 0); /* the token went with every GET */
	assert_int_equal(r.api.gets + r.api.patches + r.api.events, 0);

	/* The interruption notice: annotation = its time, taint added, taints kept, one Event. */
	r.md.action_status = 200;
	r.md.action = "{\"action\": \"terminate\", \"time\": \"2025-12-02T08:32:00Z\"}";
	assert_int_equal(gf_notice_poll(p, NOW + 2), GF_OK);
	assert_string_equal(ann(&r, "gpufleet.io/notice"), "2025-12-02T08:32:00Z");
	assert_string_equal(ann(&r, "other"), "kept");
	assert_string_equal(notice_taint(&r, &n), "aws-spot-itn");
	assert_int_equal(n, 2);
	assert_int_equal(r.api.patches, 1);
	assert_int_equal(r.api.events, 1);
	assert_non_null(strstr(r.api.last_event, "\"reason\":\"SpotNotice\""));
	assert_non_null(strstr(r.api.last_event, "\"kind\":\"Node\""));
	assert_non_null(strstr(r.api.last_event, "2025-12-02T08:32:00Z"));
	struct gf_notice_stats s;
	gf_notice_stats(p, &s);
	assert_true(s.notice_written);
	assert_int_equal(s.notice_at, NOW + 120);
	struct gf_obuf m;
	gf_obuf_init(&m, 4096);
	gf_notice_render_metrics(p, &m);
	assert_non_null(strstr(m.data, "gpufleet_agent_spot_notice_polls_total{result=\"ok\"} 2\n"));
	assert_non_null(strstr(m.data, "gpufleet_agent_spot_notice_deadline_seconds 1764664320\n"));
	gf_obuf_release(&m);

	/* Once: the next polls see the same notice and write nothing. */
	for (int i = 0; i < 3; i++)
		assert_int_equal(gf_notice_poll(p, NOW + 4 + 2 * i), GF_OK);
	assert_int_equal(r.api.patches, 1);
	assert_int_equal(r.api.events, 1);
	assert_int_equal(r.md.token_puts, 1); /* the token is reused */

	/* A restarted agent finds it on the Node: no patch, no second Event. */
	gf_notice_destroy(p);
	p = poller(&r, GF_NOTICE_AWS);
	assert_int_equal(gf_notice_poll(p, NOW + 12), GF_OK);
	assert_int_equal(r.md.token_puts, 2); /* its own token */
	assert_int_equal(r.api.patches, 1);
	assert_int_equal(r.api.events, 1);

	/* The rebalance recommendation: its own annotation, no taint, a Normal Event, once. */
	r.md.rebalance_status = 200;
	r.md.rebalance = "{\"noticeTime\": \"2025-12-02T08:20:00Z\"}";
	assert_int_equal(gf_notice_poll(p, NOW + 14), GF_OK);
	assert_int_equal(gf_notice_poll(p, NOW + 16), GF_OK);
	assert_string_equal(ann(&r, "gpufleet.io/rebalance"), "2025-12-02T08:20:00Z");
	assert_int_equal(r.api.patches, 2);
	assert_int_equal(r.api.events, 2);
	assert_non_null(strstr(r.api.last_event, "RebalanceRecommendation"));
	notice_taint(&r, &n);
	assert_int_equal(n, 2);

	/* An expired token (401) gets a new one at the next poll. */
	snprintf(r.md.token, sizeof(r.md.token), "rotated");
	assert_int_not_equal(gf_notice_poll(p, NOW + 18), GF_OK);
	assert_int_equal(gf_notice_poll(p, NOW + 20), GF_OK);
	assert_int_equal(r.md.token_puts, 3);
	gf_notice_destroy(p);
	rig_down(&r);
}

static void test_poll_aws_hostile_answers(void **st)
{
	(void)st;
	struct rig r;
	rig_up(&r);
	gf_notice *p = poller(&r, GF_NOTICE_AWS);
	r.md.action_status = 200;
	static const char *bad[] = {
		"{\"action\": \"terminate\", \"time\": \"2025-12-02T08:32:00",	/* cut */
		"{\"action\": \"terminate\", \"time\": \"1999-01-01T00:00:00Z\"}",	/* not near now */
		"<html>captive portal</html>",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r.md.action = bad[i];
		assert_int_equal(gf_notice_poll(p, NOW), GF_PARSE);
	}
	/* A huge body: cut at the cap, refused. */
	r.md.big = malloc(200 * 1024 + 1);
	assert_non_null(r.md.big);
	memset(r.md.big, 'x', 200 * 1024);
	r.md.big[200 * 1024] = '\0';
	assert_int_not_equal(gf_notice_poll(p, NOW), GF_OK);
	free(r.md.big);
	r.md.big = NULL;
	assert_int_equal(r.api.patches, 0);
	/* ... and the poller still works when a good answer comes. */
	r.md.action = "{\"action\": \"hibernate\", \"time\": \"2025-12-02T08:32:00Z\"}";
	assert_int_equal(gf_notice_poll(p, NOW), GF_OK);
	assert_int_equal(r.api.patches, 1);
	struct gf_notice_stats s;
	gf_notice_stats(p, &s);
	assert_int_equal(s.polls, 5);
	assert_int_equal(s.errors, 4);
	gf_notice_destroy(p);
	rig_down(&r);
}

static void test_poll_conflict_and_earlier_notice(void **st)
{
	(void)st;
	struct rig r;
	rig_up(&r);
	gf_notice *p = poller(&r, GF_NOTICE_AWS);
	r.md.action_status = 200;
	r.md.action = "{\"action\": \"terminate\", \"time\": \"2025-12-02T08:32:00Z\"}";
	/* Someone writes the Node between our GET and PATCH: 409, retried at the next poll. */
	r.api.force_conflicts = 1;
	assert_int_equal(gf_notice_poll(p, NOW), GF_STATE);
	assert_null(ann(&r, "gpufleet.io/notice"));
	assert_int_equal(r.api.events, 0);
	assert_int_equal(gf_notice_poll(p, NOW + 2), GF_OK);
	assert_string_equal(ann(&r, "gpufleet.io/notice"), "2025-12-02T08:32:00Z");
	assert_int_equal(r.api.events, 1);
	gf_notice_destroy(p);

	/* A Node already noticed earlier (by an operator, say) keeps the earlier time. */
	cJSON *a = cJSON_GetObjectItem(cJSON_GetObjectItem(r.api.node, "metadata"), "annotations");
	cJSON_ReplaceItemInObject(a, "gpufleet.io/notice", cJSON_CreateString("2025-12-02T08:31:00Z"));
	cJSON_ReplaceItemInObject(cJSON_GetObjectItem(r.api.node, "spec"), "taints", cJSON_CreateArray());
	p = poller(&r, GF_NOTICE_AWS);
	assert_int_equal(gf_notice_poll(p, NOW + 4), GF_OK);
	assert_string_equal(ann(&r, "gpufleet.io/notice"), "2025-12-02T08:31:00Z");
	int n;
	assert_string_equal(notice_taint(&r, &n), "aws-spot-itn");
	assert_int_equal(n, 1);
	gf_notice_destroy(p);
	rig_down(&r);
}

static void test_poll_gcp_fake_metadata(void **st)
{
	(void)st;
	struct rig r;
	rig_up(&r);
	gf_notice *p = poller(&r, GF_NOTICE_GCP);
	assert_int_equal(gf_notice_poll(p, NOW), GF_OK);
	assert_int_equal(r.md.no_flavor, 0);
	assert_int_equal(r.api.patches, 0);
	r.md.maintenance = "MIGRATE_ON_HOST_MAINTENANCE"; /* live migration: the node stays */
	assert_int_equal(gf_notice_poll(p, NOW), GF_OK);
	assert_int_equal(r.api.patches, 0);
	r.md.preempted = "TRUE";
	assert_int_equal(gf_notice_poll(p, NOW), GF_OK);
	assert_string_equal(ann(&r, "gpufleet.io/notice"), "2025-12-02T08:30:30Z");
	int n;
	assert_string_equal(notice_taint(&r, &n), "gcp-preempted");
	assert_int_equal(gf_notice_poll(p, NOW + 2), GF_OK); /* TRUE again: now + 30 is later: once */
	assert_int_equal(r.api.patches, 1);
	assert_int_equal(r.api.events, 1);
	gf_notice_destroy(p);
	rig_down(&r);
}

static void test_poll_azure_fake_scheduled_events(void **st)
{
	(void)st;
	struct rig r;
	rig_up(&r);
	gf_notice *p = poller(&r, GF_NOTICE_AZURE);
	assert_int_equal(gf_notice_poll(p, NOW), GF_OK);
	assert_int_equal(r.md.no_metadata_hdr, 0);
	assert_int_equal(r.api.patches, 0);
	r.md.vmname = "vmss_5"; /* already read: the first answer stays */
	r.md.events = AZ;
	assert_int_equal(gf_notice_poll(p, NOW), GF_OK);
	assert_string_equal(ann(&r, "gpufleet.io/notice"), "2025-12-02T08:30:30Z");
	int n;
	assert_string_equal(notice_taint(&r, &n), "azure-preempt");
	assert_int_equal(r.api.events, 1);
	assert_non_null(strstr(r.api.last_event, "7A1B-C"));
	gf_notice_destroy(p);

	/* Another VM of the scale set: its preemption is not ours. */
	struct rig r2;
	rig_up(&r2);
	r2.md.vmname = "vmss_9\n";
	r2.md.events = AZ;
	p = poller(&r2, GF_NOTICE_AZURE);
	assert_int_equal(gf_notice_poll(p, NOW), GF_OK);
	assert_null(ann(&r2, "gpufleet.io/notice"));
	assert_int_equal(r2.api.patches, 0);
	gf_notice_destroy(p);
	rig_down(&r2);
	rig_down(&r);
}

static void test_create_refuses(void **st)
{
	(void)st;
	struct gf_kube_conn kc = { .server = (char *)"http://127.0.0.1:1" };
	gf_notice *p = NULL;
	char err[256];
	struct gf_notice_config c = { .cloud = GF_NOTICE_AWS, .kube = &kc, .node = "Bad_Node" };
	assert_int_equal(gf_notice_create(&c, &p, err, sizeof(err)), GF_INVAL);
	assert_non_null(strstr(err, "node name"));
	c.node = "n1";
	c.metadata_url = "file:///etc/passwd";
	assert_int_equal(gf_notice_create(&c, &p, err, sizeof(err)), GF_INVAL);
	c.metadata_url = NULL;
	c.cloud = GF_NOTICE_NONE_CLOUD;
	assert_int_equal(gf_notice_create(&c, &p, err, sizeof(err)), GF_INVAL);
	assert_null(p);
	/* Unreachable metadata service: an error, no crash, the poller lives on. */
	c.cloud = GF_NOTICE_GCP;
	c.metadata_url = "http://127.0.0.1:1";
	c.timeout_ms = 500;
	assert_int_equal(gf_notice_create(&c, &p, err, sizeof(err)), GF_OK);
	assert_int_equal(gf_notice_poll(p, NOW), GF_UNAVAILABLE);
	assert_int_equal(gf_notice_poll(p, NOW), GF_UNAVAILABLE);
	gf_notice_destroy(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_aws),
		cmocka_unit_test(test_parse_gcp),
		cmocka_unit_test(test_parse_azure),
		cmocka_unit_test(test_poll_aws_fake_imds),
		cmocka_unit_test(test_poll_aws_hostile_answers),
		cmocka_unit_test(test_poll_conflict_and_earlier_notice),
		cmocka_unit_test(test_poll_gcp_fake_metadata),
		cmocka_unit_test(test_poll_azure_fake_scheduled_events),
		cmocka_unit_test(test_create_refuses),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
