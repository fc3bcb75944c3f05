/*
 * tests/agent/test_agent_kube.c - the Node publisher against a tiny local
 * API endpoint (gfhttp): the request it sends (PATCH, merge-patch content
 * type, bearer token, labels and topology annotation), error reporting,
 * the served-model lookups (one per pod, not per publish), and the
 * kubeconfig reader (current-context, *-data base64).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cjson/cJSON.h>
#include <cmocka.h>

#include "agent/agent.h"
#include "agent/kube.h"
#include "agent/mig.h"
#include "http/server.h"

struct seen {
	int n;
	char method[16], ctype[128], auth[256];
	char *body;
};

static void h_node(void *ud, const struct gf_http_request *req, struct gf_http_response *resp)
{
	struct seen *s = ud;
	s->n++;
	snprintf(s->method, sizeof(s->method), "%s", req->method);
	const char *ct = gf_http_request_header(req, "Content-Type");
	const char *au = gf_http_request_header(req, "Authorization");
	snprintf(s->ctype, sizeof(s->ctype), "%s", ct ? ct : "");
	snprintf(s->auth, sizeof(s->auth), "%s", au ? au : "");
	free(s->body);
	s->body = strdup(req->body);
	resp->content_type = "application/json";
	gf_obuf_puts(&resp->body, "{\"kind\":\"Node\"}");
}

static char dir[64];
static char state_path[128];

static void write_file(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

static int setup(void **st)
{
	(void)st;
	snprintf(dir, sizeof(dir), "/tmp/gf-kube-test-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(state_path, sizeof(state_path), "%s/state", dir);
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "cp %s/two_gpus.state %s", GF_AGENT_DATA, state_path);
	if (system(cmd))
		return -1;
	setenv("GF_FAKE_NVML_STATE", state_path, 1);
	return 0;
}

static int teardown(void **st)
{
	(void)st;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) ? -1 : 0;
}

static void kubeconfig(const char *path, uint16_t port)
{
	char text[2048];
	snprintf(text, sizeof(text),
		 "apiVersion: v1\n"
		 "clusters:\n"
		 "- cluster:\n"
		 "    server: https://wrong.example:6443\n"
		 "  name: other\n"
		 "- cluster:\n"
		 "    server: \"http://127.0.0.1:%u/\"\n"
		 "  name: test\n"
		 "contexts:\n"
		 "- context:\n"
		 "    cluster: other\n"
		 "    user: other\n"
		 "  name: other\n"
		 "- context:\n"
		 "    cluster: test\n"
		 "    user: tester\n"
		 "  name: test\n"
		 "current-context: test\n"
		 "kind: Config\n"
		 "users:\n"
		 "- name: other\n"
		 "  user:\n"
		 "    token: wrong-token\n"
		 "- name: tester\n"
		 "  user:\n"
		 "    token: s3cret\n"
		 "    client-key-data: aGVsbG8=\n",
		 port);
	write_file(path, text);
}

static void test_publish_sends_merge_patch(void **st)
{
	(void)st;
	struct seen seen = { 0 };
	const struct gf_http_route routes[] = {
		{ "PATCH", "/api/v1/nodes/node-a", h_node, &seen },
	};
	struct gf_http_config hc = { .bind_addr = "127.0.0.1", .routes = routes, .nroutes = 1,
				     .max_body = 1 << 20 };
	gf_http_server *srv;
	assert_int_equal(gf_http_server_create(&hc, &srv), GF_OK);
	char kc_path[160];
	snprintf(kc_path, sizeof(kc_path), "%s/kubeconfig", dir);
	kubeconfig(kc_path, gf_http_server_port(srv));

	struct gf_kube_conn kc;
	char err[512] = "";
	assert_int_equal(gf_kube_conn_from_kubeconfig(&kc, kc_path, err, sizeof(err)), GF_OK);
	char want[64];
	snprintf(want, sizeof(want), "http://127.0.0.1:%u", gf_http_server_port(srv));
	assert_string_equal(kc.server, want); /* current-context's cluster, '/' trimmed */
	assert_string_equal(kc.token, "s3cret");
	assert_int_equal(kc.key_len, 5);
	assert_memory_equal(kc.key_data, "hello", 5);

	struct gf_agent_config cfg = { .nvml_path = GF_FAKE_NVML };
	gf_agent *a;
	assert_int_equal(gf_agent_create(&cfg, &a, err, sizeof(err)), GF_OK);
	kc.key_data[0] = '\0'; /* not a real key: plain http ignores it anyway */
	free(kc.key_data);
	kc.key_data = NULL;
	assert_int_equal(gf_agent_publish_node(a, &kc, "node-a", err, sizeof(err)), GF_OK);
	assert_int_equal(seen.n, 1);
	assert_string_equal(seen.method, "PATCH");
	assert_string_equal(seen.ctype, "application/merge-patch+json");
	assert_string_equal(seen.auth, "Bearer s3cret");

	cJSON *p = cJSON_Parse(seen.body);
	assert_non_null(p);
	cJSON *md = cJSON_GetObjectItem(p, "metadata");
	cJSON *labels = cJSON_GetObjectItem(md, "labels");
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(labels, "gpufleet.io/gpu.count")), "2");
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(labels, "gpufleet.io/gpu.healthy-count")), "2");
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(labels, "gpufleet.io/gpu.mig")), "disabled");
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(labels, "gpufleet.io/gpu.driver")), "550.54.15");
	const char *ann = cJSON_GetStringValue(
		cJSON_GetObjectItem(cJSON_GetObjectItem(md, "annotations"), "gpufleet.io/gpu-topology"));
	assert_non_null(ann);
	cJSON *topo = cJSON_Parse(ann); /* the annotation is itself the inventory JSON */
	assert_non_null(topo);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(topo, "gpus")), 2);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetArrayItem(cJSON_GetArrayItem(
				    cJSON_GetObjectItem(cJSON_GetObjectItem(topo, "topology"), "matrix"), 0), 1)),
			    "NV18");
	cJSON_Delete(topo);
	cJSON_Delete(p);

	/* Unknown node: the API server's status comes back in the message. */
	assert_int_equal(gf_agent_publish_node(a, &kc, "node-b", err, sizeof(err)), GF_UNAVAILABLE);
	assert_non_null(strstr(err, "HTTP 404"));
	/* Not a node name. */
	assert_int_equal(gf_agent_publish_node(a, &kc, "Bad/Name", err, sizeof(err)), GF_INVAL);
	assert_non_null(strstr(err, "not a valid node name"));
	assert_int_equal(seen.n, 1);

	gf_agent_destroy(a);
	gf_kube_conn_release(&kc);
	gf_http_server_destroy(srv);
	free(seen.body);
}

/* GET /api/v1/namespaces/NS/pods/NAME: a pod whose gpufleet.io/model is "m-NAME" (trainer-0: 404;
 * notebook-x: 503 while fail_notebook); counts the GETs. */
struct pods_seen {
	int n;
	bool fail_notebook;
	char last[256];
};

static void h_pod(void *ud, const struct gf_http_request *req, struct gf_http_response *resp)
{
	struct pods_seen *s = ud;
	const char *name = strrchr(req->path, '/') + 1;

	s->n++;
	snprintf(s->last, sizeof(s->last), "%s", req->path);
	resp->content_type = "application/json";
	if (!strcmp(name, "trainer-0")) {	/* gone: settled, not asked again */
		resp->status = 404;
		gf_obuf_puts(&resp->body, "{\"kind\":\"Status\",\"message\":\"pods \\\"trainer-0\\\" not found\"}");
		return;
	}
	if (!strcmp(name, "notebook-x") && s->fail_notebook) {	/* asked again at the next publish */
		resp->status = 503;
		gf_obuf_puts(&resp->body, "{\"kind\":\"Status\",\"message\":\"try later\"}");
		return;
	}
	gf_obuf_printf(&resp->body, "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"labels\":"
				    "{\"gpufleet.io/model\":\"m-%s\"}},\"spec\":{\"containers\":[{\"image\":\"x\"}]}}",
		       name, name);
}

/*
 * The pods on the GPUs (two_gpus.node: ml/llm-7d9f-abcde, research/trainer-0,
 * team-b/notebook-x) are looked up once each: a pod answered (or gone) is not
 * asked again, one the API server could not answer is asked at the next
 * publish, and once all are settled a publish asks the API server nothing.
 */
static void test_served_lookups_once_per_pod(void **st)
{
	(void)st;
	struct pods_seen seen = { 0 };
	const struct gf_http_route routes[] = {
		{ "GET", "/api/v1/namespaces/*", h_pod, &seen },
	};
	struct gf_http_config hc = { .bind_addr = "127.0.0.1", .routes = routes, .nroutes = 1 };
	gf_http_server *srv;
	char kc_path[160], tree[160], proc[200], log[200], cmd[512], err[512] = "";

	snprintf(tree, sizeof(tree), "%s/node", dir);
	snprintf(cmd, sizeof(cmd), "%s/../make-fake-node %s/two_gpus.node %s", GF_AGENT_DATA, GF_AGENT_DATA, tree);
	assert_int_equal(system(cmd), 0);
	snprintf(proc, sizeof(proc), "%s/proc", tree);
	snprintf(log, sizeof(log), "%s/log", tree);
	assert_int_equal(gf_http_server_create(&hc, &srv), GF_OK);
	snprintf(kc_path, sizeof(kc_path), "%s/kubeconfig-served", dir);
	kubeconfig(kc_path, gf_http_server_port(srv));

	struct gf_kube_conn kc;
	assert_int_equal(gf_kube_conn_from_kubeconfig(&kc, kc_path, err, sizeof(err)), GF_OK);
	struct gf_agent_config cfg = { .nvml_path = GF_FAKE_NVML, .proc_root = proc, .log_root = log,
				       .kubernetes = true };
	gf_agent *a;
	assert_int_equal(gf_agent_create(&cfg, &a, err, sizeof(err)), GF_OK);

	char out[1024];

	seen.fail_notebook = true;
	assert_int_equal(gf_agent_learn_served(a, &kc), 3);
	assert_int_equal(seen.n, 3);
	gf_agent_served_render(a, out, sizeof(out));
	assert_string_equal(out, "m-llm-7d9f-abcde");
	assert_int_equal(gf_agent_learn_served(a, &kc), 1);	/* the next publish: the 503 again */
	assert_int_equal(seen.n, 4);
	assert_string_equal(seen.last, "/api/v1/namespaces/team-b/pods/notebook-x");
	seen.fail_notebook = false;
	assert_int_equal(gf_agent_learn_served(a, &kc), 1);
	assert_int_equal(gf_agent_learn_served(a, &kc), 0);	/* all settled */
	assert_int_equal(gf_agent_learn_served(a, &kc), 0);
	assert_int_equal(seen.n, 5);
	gf_agent_served_render(a, out, sizeof(out));
	assert_string_equal(out, "m-notebook-x,m-llm-7d9f-abcde");	/* most recent first */

	gf_agent_destroy(a);
	gf_kube_conn_release(&kc);
	gf_http_server_destroy(srv);
}

static void test_kubeconfig_errors(void **st)
{
	(void)st;
	struct gf_kube_conn kc;
	char err[512] = "", path[160];
	assert_int_equal(gf_kube_conn_from_kubeconfig(&kc, "/nonexistent/kubeconfig", err, sizeof(err)),
			 GF_IO);
	assert_non_null(strstr(err, "/nonexistent/kubeconfig: cannot open"));
	snprintf(path, sizeof(path), "%s/bad1", dir);
	write_file(path, "clusters:\n- cluster:\n    server: https://x\n  name: a\nthis line is wrong\n");
	assert_int_equal(gf_kube_conn_from_kubeconfig(&kc, path, err, sizeof(err)), GF_PARSE);
	assert_non_null(strstr(err, "bad1:5: expected 'key:' at top level"));
	snprintf(path, sizeof(path), "%s/bad2", dir);
	write_file(path, "kind: Config\nusers:\n- name: u\n  user:\n    token: t\n");
	assert_int_equal(gf_kube_conn_from_kubeconfig(&kc, path, err, sizeof(err)), GF_PARSE);
	assert_non_null(strstr(err, "no cluster with a server"));
	snprintf(path, sizeof(path), "%s/bad3", dir);
	write_file(path, "clusters:\n- cluster:\n    server: https://x\n    certificate-authority-data: !!notbase64\n");
	assert_int_equal(gf_kube_conn_from_kubeconfig(&kc, path, err, sizeof(err)), GF_PARSE);
	assert_non_null(strstr(err, "not valid base64"));
	unsetenv("KUBERNETES_SERVICE_HOST");
	assert_int_equal(gf_kube_conn_in_cluster(&kc, err, sizeof(err)), GF_UNAVAILABLE);
	assert_non_null(strstr(err, "not in a cluster"));
}

/* gf_kube_conn_open: a path is read as a kubeconfig, NULL is the service account. */
static void test_conn_open(void **st)
{
	(void)st;
	struct gf_kube_conn kc;
	char err[512] = "", path[160];
	snprintf(path, sizeof(path), "%s/open-ok", dir);
	write_file(path, "clusters:\n- cluster:\n    server: https://api.example:6443/\n  name: a\n");
	assert_int_equal(gf_kube_conn_open(&kc, path, err, sizeof(err)), GF_OK);
	assert_string_equal(kc.server, "https://api.example:6443");
	gf_kube_conn_release(&kc);
	snprintf(path, sizeof(path), "%s/open-bad", dir);
	write_file(path, "kind: Config\nusers:\n- name: u\n  user:\n    token: t\n");
	assert_int_equal(gf_kube_conn_open(&kc, path, err, sizeof(err)), GF_PARSE);
	assert_non_null(strstr(err, "open-bad: no cluster with a server"));
	unsetenv("KUBERNETES_SERVICE_HOST");
	err[0] = '\0';
	assert_int_equal(gf_kube_conn_open(&kc, NULL, err, sizeof(err)), GF_UNAVAILABLE);
	assert_non_null(strstr(err, "not in a cluster (KUBERNETES_SERVICE_HOST/PORT unset); give --kubeconfig"));
}

static void test_label_values(void **st)
{
	(void)st;
	char v[64];
	gf_kube_label_value(v, "NVIDIA H100 80GB HBM3");
	assert_string_equal(v, "NVIDIA-H100-80GB-HBM3");
	gf_kube_label_value(v, "  (weird)  name!! ");
	assert_string_equal(v, "weird-name");
	gf_kube_label_value(v, "");
	assert_string_equal(v, "");
	char longname[200];
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	gf_kube_label_value(v, longname);
	assert_int_equal(strlen(v), 63);
}

/* GET /api/v1/nodes/<name>: a Node whose annotation is ud (NULL: none). */
static void h_get_node(void *ud, const struct gf_http_request *req, struct gf_http_response *resp)
{
	(void)req;
	cJSON *n = cJSON_CreateObject(), *md = cJSON_AddObjectToObject(n, "metadata");
	cJSON *ann = cJSON_AddObjectToObject(md, "annotations");
	if (ud)
		cJSON_AddStringToObject(ann, GF_ANN_MIG_LAYOUT, ud);
	char *t = cJSON_PrintUnformatted(n);
	resp->content_type = "application/json";
	gf_obuf_puts(&resp->body, t);
	free(t);
	cJSON_Delete(n);
}

/* The MIG layout read from the Node's annotation (strictly), applied, and
 * its state in the next node patch. */
static void test_mig_layout_annotation(void **st)
{
	(void)st;
	const char *good = "{\"GPU-77aa0c41-2b3e-4f55-8a10-6c9d0e4f1a22\":[{\"profile\":\"3g.40gb\",\"start\":4}]}";
	const char *bad = "{\"GPU-77aa0c41-2b3e-4f55-8a10-6c9d0e4f1a22\":[{\"profile\":\"3g.40gb\",\"start\":3.5}]}";
	const struct gf_http_route routes[] = {
		{ "GET", "/api/v1/nodes/node-m", h_get_node, (void *)good },
		{ "GET", "/api/v1/nodes/node-bad", h_get_node, (void *)bad },
		{ "GET", "/api/v1/nodes/node-none", h_get_node, NULL },
	};
	struct gf_http_config hc = { .bind_addr = "127.0.0.1", .routes = routes, .nroutes = 3, .max_body = 1 << 20 };
	gf_http_server *srv;
	assert_int_equal(gf_http_server_create(&hc, &srv), GF_OK);
	char kc_path[160], err[512] = "";
	snprintf(kc_path, sizeof(kc_path), "%s/kubeconfig-mig", dir);
	kubeconfig(kc_path, gf_http_server_port(srv));
	struct gf_kube_conn kc;
	assert_int_equal(gf_kube_conn_from_kubeconfig(&kc, kc_path, err, sizeof(err)), GF_OK);
	static struct gf_nodemig_layout l;
	bool present = true;
	assert_int_equal(gf_agent_fetch_mig_layout(&kc, "node-none", &l, &present, err, sizeof(err)), GF_OK);
	assert_false(present);
	assert_int_equal(gf_agent_fetch_mig_layout(&kc, "node-bad", &l, &present, err, sizeof(err)), GF_INVAL);
	assert_true(present);
	assert_non_null(strstr(err, "annotation gpufleet.io/mig-layout: $[\"GPU-77aa0c41-2b3e-4f55-8a10-6c9d0e4f1a22\"][0].start"));
	assert_int_equal(gf_agent_fetch_mig_layout(&kc, "node-m", &l, &present, err, sizeof(err)), GF_OK);
	assert_true(present);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.gpu[0].inst[0].profile, "3g.40gb");

	/* two idle H100s (the driver enables MIG mode only without processes) */
	char mstate[160];
	snprintf(mstate, sizeof(mstate), "%s/mig-state", dir);
	write_file(mstate, "gpu 0 uuid=GPU-1f3c2a9e-8d7b-4c6a-9e21-0a5b7c3d2e10 name=\"NVIDIA H100 80GB HBM3\" mem_total_mib=81559\n"
			   "gpu 1 uuid=GPU-77aa0c41-2b3e-4f55-8a10-6c9d0e4f1a22 name=\"NVIDIA H100 80GB HBM3\" mem_total_mib=81559\n");
	setenv("GF_FAKE_NVML_STATE", mstate, 1);
	struct gf_agent_config cfg = { .nvml_path = GF_FAKE_NVML };
	gf_agent *a;
	assert_int_equal(gf_agent_create(&cfg, &a, err, sizeof(err)), GF_OK);
	struct gf_obuf b;
	gf_obuf_init(&b, 1 << 20);
	assert_int_equal(gf_agent_node_patch_body(a, "node-m", &b), GF_OK);
	assert_null(strstr(b.data, GF_ANN_MIG_STATE)); /* no MIG GPU, nothing applied */
	static struct gf_nodemig_state ms;
	assert_int_equal(gf_agent_mig_apply(a, &l, &ms), GF_OK);
	assert_int_equal(ms.created, 1);
	gf_obuf_reset(&b);
	assert_int_equal(gf_agent_node_patch_body(a, "node-m", &b), GF_OK);
	cJSON *doc = cJSON_Parse(b.data);
	const char *v = cJSON_GetStringValue(cJSON_GetObjectItem(
		cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "metadata"), "annotations"), GF_ANN_MIG_STATE));
	assert_non_null(v);
	assert_non_null(strstr(v, "{\"GPU-77aa0c41-2b3e-4f55-8a10-6c9d0e4f1a22\":[{\"profile\":\"3g.40gb\",\"start\":4,\"gi\":"));
	assert_non_null(strstr(v, "\"uuid\":\"MIG-"));
	assert_non_null(strstr(b.data, "\"gpufleet.io/gpu.mig\":\"mixed\""));
	cJSON_Delete(doc);
	gf_obuf_release(&b);
	gf_agent_destroy(a);
	setenv("GF_FAKE_NVML_STATE", state_path, 1);
	gf_kube_conn_release(&kc);
	gf_http_server_destroy(srv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_publish_sends_merge_patch),
		cmocka_unit_test(test_served_lookups_once_per_pod),
		cmocka_unit_test(test_kubeconfig_errors),
		cmocka_unit_test(test_conn_open),
		cmocka_unit_test(test_label_values),
		cmocka_unit_test(test_mig_layout_annotation),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
