/* tests/scheduler/test_k8s_security.c - the scheduler's security rules as units (ctest -L security):
 * Kubernetes names and the one API path builder (path tricks never become a path, and
 * gf_kube_request() refuses them without sending anything); gpufleet.io/gpu-milli read by one
 * rule as annotation, resource and in an extender request (fast and full path); the extender's
 * request decoder rejecting what is not JSON on both paths, and the fuzz harness's
 * differential check (decoder vs cJSON) over the corpus and seeded mutations of it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/model.h"
#include "k8s/bind.h"
#include "k8s/client.h"
#include "k8s/codec.h"
#include "k8s/extargs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size); /* fuzz/fuzz_k8s_extargs.c */

static void test_names(void **st)
{
	(void)st;
	char n63[64], n64[65], s253[254], s254[255];
	memset(n63, 'a', 63), n63[63] = '\0';
	memset(n64, 'a', 64), n64[64] = '\0';
	for (int i = 0; i < 253; i++) /* "aaa.aaa. ... " labels of 3 */
		s253[i] = i % 4 == 3 ? '.' : 'a';
	s253[252] = 'a', s253[253] = '\0';
	memcpy(s254, s253, 253), s254[253] = 'a', s254[254] = '\0';
	const char *labels_ok[] = { "default", "kube-system", "a", "0", "a-b-1", n63 };
	const char *labels_bad[] = { "", "-a", "a-", "A", "a.b", "a/b", "..", "a?b", "a#b", "a b", "a\n", "é", n64 };
	for (size_t i = 0; i < sizeof(labels_ok) / sizeof(*labels_ok); i++)
		assert_true(gf_k8s_dns_label(labels_ok[i]));
	for (size_t i = 0; i < sizeof(labels_bad) / sizeof(*labels_bad); i++)
		if (gf_k8s_dns_label(labels_bad[i]))
			fail_msg("label '%s' accepted", labels_bad[i]);
	const char *subs_ok[] = { "pod-1", "web.example.com", "gpu-node-0", "a.b.c", s253 };
	const char *subs_bad[] = { "", ".", "..", "a..b", ".a", "a.", "a/b", "x/../../secrets", "p?dryRun=All",
				   "a#b", "a%2fb", "A", "a_b", "a.-b", s254 };
	for (size_t i = 0; i < sizeof(subs_ok) / sizeof(*subs_ok); i++)
		assert_true(gf_k8s_dns_subdomain(subs_ok[i]));
	for (size_t i = 0; i < sizeof(subs_bad) / sizeof(*subs_bad); i++)
		if (gf_k8s_dns_subdomain(subs_bad[i]))
			fail_msg("subdomain '%s' accepted", subs_bad[i]);
	assert_false(gf_k8s_dns_label(NULL));
	assert_false(gf_k8s_dns_subdomain(NULL));
}

static void test_path_builder(void **st)
{
	(void)st;
	char path[600], err[300];
	assert_int_equal(gf_kube_path(path, sizeof(path), "default", "pods", "p-1", "binding", err, sizeof(err)), GF_OK);
	assert_string_equal(path, "/api/v1/namespaces/default/pods/p-1/binding");
	assert_int_equal(gf_kube_path(path, sizeof(path), "ns", "events", NULL, NULL, err, sizeof(err)), GF_OK);
	assert_string_equal(path, "/api/v1/namespaces/ns/events");
	assert_int_equal(gf_kube_path(path, sizeof(path), NULL, "nodes", "n.example", NULL, err, sizeof(err)), GF_OK);
	assert_string_equal(path, "/api/v1/nodes/n.example");
	struct { const char *ns, *name, *want; } bad[] = {
		{ "default/../../secrets", "p", "invalid namespace \"default/../../secrets\": a namespace is a DNS-1123 label" },
		{ "default", "x?dryRun=All", "invalid name \"x?dryRun=All\": a name is a DNS-1123 subdomain" },
		{ "default", "..", "invalid name \"..\"" },
		{ "default", "a\"\n\xff", "invalid name \"a\\x22\\x0a\\xff\"" }, /* quoted with escapes */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		assert_int_equal(gf_kube_path(path, sizeof(path), bad[i].ns, "pods", bad[i].name, NULL, err, sizeof(err)),
				 GF_INVAL);
		if (strncmp(err, bad[i].want, strlen(bad[i].want)))
			fail_msg("case %zu: '%s' does not start with '%s'", i, err, bad[i].want);
	}
	assert_int_equal(gf_kube_path(path, 20, "default", "pods", "p-1", "binding", err, sizeof(err)), GF_TOOBIG);
}

/* gf_kube_request() checks every path before anything is sent: a server that cannot be
 * reached (port 1) would answer GF_UNAVAILABLE, a refused path GF_INVAL at once. */
static void test_request_path_check(void **st)
{
	(void)st;
	struct gf_kube_conn conn = { .server = "http://127.0.0.1:1" };
	struct gf_kube_client_opts o = { .retries = -1, .connect_timeout_ms = 200 };
	gf_kube_client *k;
	assert_int_equal(gf_kube_client_create(&conn, &o, &k), GF_OK);
	const char *bad[] = { "/api/v1/namespaces/a/pods/../../secrets/x", "/api/v1/./pods", "/api/v1/pods/..",
			      "/api/v1/pods/a#frag", "/api/v1/pods/a b", "/api/v1/pods/a\\b", "/api/v1/pods/\x01",
			      "api/v1/pods", "/api/v1/pods/\xc3\xa9" };
	char err[300];
	long status;
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		err[0] = '\0';
		if (gf_kube_request(k, "GET", bad[i], NULL, NULL, 0, &status, NULL, err, sizeof(err)) != GF_INVAL)
			fail_msg("path %zu '%s' not refused (%s)", i, bad[i], err);
		assert_non_null(strstr(err, "not a plain path"));
	}
	/* a plain path (with a query and dots inside a name) goes out: here unreachable */
	assert_int_equal(gf_kube_request(k, "GET", "/api/v1/nodes/a.b?labelSelector=x%3Dy", NULL, NULL, 0, &status,
					 NULL, err, sizeof(err)),
			 GF_UNAVAILABLE);
	/* the binding refuses bad names itself, never retried */
	struct gf_live_decision dc = { .node = "n" };
	bool retry = true;
	err[0] = '\0';
	assert_int_equal(gf_kube_bind(k, "default", "x/../../y", "u", &dc, &retry, err, sizeof(err)), B_ERROR);
	assert_false(retry);
	assert_non_null(strstr(err, "invalid name"));
	gf_kube_client_destroy(k);
}

/* One rule for gpufleet.io/gpu-milli, wherever it is read. */
static void test_gpu_milli_rule(void **st)
{
	(void)st;
	struct { const char *text; gf_err want; int value; } cases[] = {
		{ "1", GF_OK, 1 },	   { "500", GF_OK, 500 },    { "1000", GF_OK, 1000 }, { "0500", GF_OK, 500 },
		{ "0", GF_RANGE, 0 },	   { "1001", GF_RANGE, 1001 }, { "-5", GF_RANGE, -5 },
		{ "99999999999", GF_RANGE, 99999999 },
		{ "", GF_PARSE, 0 },	   { "-", GF_PARSE, 0 },     { "+500", GF_PARSE, 0 }, { " 500", GF_PARSE, 0 },
		{ "500 ", GF_PARSE, 0 },   { "500m", GF_PARSE, 0 },  { "5e2", GF_PARSE, 0 },  { "0.5k", GF_PARSE, 0 },
		{ "1k", GF_PARSE, 0 },	   { "half", GF_PARSE, 0 },  { "0x10", GF_PARSE, 0 }, { "50.0", GF_PARSE, 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		int v = -1;
		gf_err e = gf_gpu_milli_parse(cases[i].text, strlen(cases[i].text), &v);
		if (e != cases[i].want || (e != GF_PARSE && v != cases[i].value))
			fail_msg("'%s': %s %d, want %s %d", cases[i].text, gf_err_name(e), v, gf_err_name(cases[i].want),
				 cases[i].value);
		/* the same verdict as an annotation, as a resource, and in an extender request on either path */
		char pod[3][512];
		snprintf(pod[0], sizeof(pod[0]), "{\"metadata\":{\"name\":\"p\",\"annotations\":{\"gpufleet.io/gpu-milli\":\"%s\"}}}",
			 cases[i].text);
		snprintf(pod[1], sizeof(pod[1]), "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"c\","
			 "\"resources\":{\"limits\":{\"gpufleet.io/gpu-milli\":\"%s\"}}}]}}", cases[i].text);
		snprintf(pod[2], sizeof(pod[2]), "{\"metadata\":{\"name\":\"p\",\"annotations\":{\"gpufleet.io/assigned-node\":\"n\","
			 "\"gpufleet.io/assigned-gpus\":\"0\",\"gpufleet.io/assigned-gpu-milli\":\"%s\"}},\"spec\":{\"nodeName\":\"n\"}}",
			 cases[i].text);
		for (int w = 0; w < 2; w++) {
			static struct gf_k8s_pod p;
			char err[300] = "";
			gf_err d = gf_k8s_pod_decode_text(pod[w], strlen(pod[w]), &p, err, sizeof(err));
			bool ok = d == GF_OK && !p.invalid[0] && p.req.gpu_milli == cases[i].value;
			bool range = d == GF_OK && strstr(p.invalid, "must be 1..1000");
			bool junk = d == GF_PARSE && strstr(err, "expected a whole number of milli-GPU in digits");
			if (!(cases[i].want == GF_OK ? ok : cases[i].want == GF_RANGE ? range : junk))
				fail_msg("'%s' as %s: %s invalid='%s' err='%s' milli=%d", cases[i].text,
					 w ? "a resource" : "an annotation", gf_err_name(d), p.invalid, err, p.req.gpu_milli);
			for (int spaced = 0; spaced < 2; spaced++) { /* fast path, then a body the full parser reads */
				char body[1024], msg[400] = "";
				snprintf(body, sizeof(body), "{\"Pod\":%s,\"NodeNames\":[\"a\"%s]}", pod[w], spaced ? ",\"b\\u0041\"" : "");
				struct gf_ext_args a;
				gf_err x = gf_ext_args_parse(body, strlen(body), NULL, &a, &p, msg, sizeof(msg));
				if (x == GF_OK)
					assert_int_equal(a.plain, !spaced);
				if ((x == GF_OK) != (d == GF_OK) || (x == GF_OK && strcmp(p.invalid, range ? p.invalid : "")) ||
				    (x == GF_OK && ok && p.req.gpu_milli != cases[i].value))
					fail_msg("'%s' in an extender request (%s path): %s %s", cases[i].text,
						 spaced ? "full" : "fast", gf_err_name(x), msg);
				gf_ext_args_release(&a);
			}
		}
		static struct gf_k8s_pod p;
		char err[300];
		assert_int_equal(gf_k8s_pod_decode_text(pod[2], strlen(pod[2]), &p, err, sizeof(err)), GF_OK);
		assert_int_equal(p.assigned, cases[i].want == GF_OK);
	}
}

/* Bodies the fast path used to answer 200 (or echo): every one a 400 naming the byte now. */
static void test_extargs_strict(void **st)
{
	(void)st;
	const char *pod = "{\"Pod\":{\"metadata\":{\"name\":\"p\"}}";
	struct { const char *tail, *at; } cases[] = { /* at: where the error must be placed, if given */
		{ ",\"NodeNames\":[\"a\"]} x", "x" },			/* bytes after the object */
		{ ",\"NodeNames\":[\"a\",]}", "]}" },			/* trailing comma */
		{ ",\"NodeNames\":[\"a\"],}", "}" },			/* trailing comma in the object */
		{ ",\"NodeNames\":[\"a\"],\"x\":tru}", "tru" },		/* a literal cut short */
		{ ",\"NodeNames\":[\"a\"],\"x\":01}", "1}" },		/* a leading zero */
		{ ",\"NodeNames\":[\"a\"],\"x\":-}", NULL },		/* a sign alone */
		{ ",\"NodeNames\":[\"a\"],\"x\":\"\\q\"}", "\\q" },	/* an unknown escape */
		{ ",\"NodeNames\":[\"a\"],\"x\":\"\\ud800\"}", NULL },	/* a lone surrogate */
		{ ",\"NodeNames\":[\"a\"],\"x\":\"\xc3\x28\"}", "\xc3" },	/* bad UTF-8 */
		{ ",\"NodeNames\":[\"a\"],\"x\":\"\xed\xa0\x80\"}", "\xed" }, /* a surrogate in UTF-8 */
		{ ",\"NodeNames\":[\"a\"],\"x\":\"\xc0\xaf\"}", "\xc0" },	/* overlong UTF-8 */
		{ ",\"NodeNames\":[\"a\"],\"x\":{]}", "]}" },		/* mismatched brackets */
		{ ",\"NodeNames\":[\"a\"],\"x\":\"\x01\"}", "\x01" },	/* a raw control byte */
		{ ",\"Nodes\":{\"items\":[{\"metadata\":{\"name\":\"n\"},\"s\":[}]}}", "}]}}" }, /* a Node object echoed as sent */
		{ ",\"Nodes\":{\"items\":[{\"metadata\":{\"name\":\"n\"}},]}}", "]}}" },
		{ ",\"Nodes\":{\"items\":[{\"metadata\":{\"name\":\"n\",}}]}}", "}}]" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		char body[512], msg[400] = "", want[80];
		snprintf(body, sizeof(body), "%s%s", pod, cases[i].tail);
		struct gf_ext_args a;
		static struct gf_k8s_pod p;
		gf_err e = gf_ext_args_parse(body, strlen(body), NULL, &a, &p, msg, sizeof(msg));
		if (cases[i].at)
			snprintf(want, sizeof(want), "the body is not valid JSON (at byte %zu of %zu)",
				 (size_t)(strstr(body + strlen(pod), cases[i].at) - body), strlen(body));
		else
			snprintf(want, sizeof(want), "the body is not valid JSON (at byte ");
		if (e != GF_PARSE || !strstr(msg, want))
			fail_msg("case %zu '%s': %s '%s', want '%s'", i, body, gf_err_name(e), msg, want);
		assert_false(gf_json_valid(body, strlen(body), NULL));
		gf_ext_args_release(&a);
	}
	/* valid JSON that cJSON reads: UTF-8 and escapes in the Pod, spaces, a deep value */
	const char *good[] = {
		"{\"Pod\":{\"metadata\":{\"name\":\"p\",\"labels\":{\"k\":\"caf\xc3\xa9 \\u00e9 \\ud83d\\ude00 \xf0\x9f\x98\x80\"}}},\"NodeNames\":[\"a\"]} \n",
		"{\"Pod\":{\"metadata\":{\"name\":\"p\"},\"x\":[1,-0.5e+3,true,false,null,{},[],\"\"]},\"NodeNames\":[]}",
	};
	for (size_t i = 0; i < sizeof(good) / sizeof(*good); i++) {
		struct gf_ext_args a;
		static struct gf_k8s_pod p;
		char msg[400] = "";
		if (gf_ext_args_parse(good[i], strlen(good[i]), NULL, &a, &p, msg, sizeof(msg)) != GF_OK)
			fail_msg("good %zu: %s", i, msg);
		assert_true(a.plain);
		gf_ext_args_release(&a);
	}
	char deep[2100];
	size_t n = 0;
	for (int i = 0; i < 600; i++)
		deep[n++] = '[';
	for (int i = 0; i < 600; i++)
		deep[n++] = ']';
	assert_false(gf_json_valid(deep, n, NULL)); /* deeper than 512 */
	assert_true(gf_json_valid(deep + 100, n - 200, NULL));
}

/* The fuzz harness (decoder vs cJSON, aborts on a difference) over the corpus and mutations. */
static uint64_t rng = 0x5ec5ec;
static uint64_t next(void)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return rng;
}

static void test_extargs_differential(void **st)
{
	(void)st;
	static const char pick[] = "{}[]\",:\\ 0123-.eEtfnu\x01\x7f\x80\xc3\xa9\xff";
	char dir[512];
	snprintf(dir, sizeof(dir), "%s/fuzz/corpus/k8s_extargs", GF_SOURCE_DIR);
	DIR *dp = opendir(dir);
	assert_non_null(dp);
	struct dirent *de;
	size_t files = 0, runs = 0, fast = 0, rejected = 0;
	while ((de = readdir(dp))) {
		if (de->d_name[0] == '.')
			continue;
		char path[1024], seed[8192];
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		FILE *f = fopen(path, "rb");
		assert_non_null(f);
		size_t len = fread(seed, 1, sizeof(seed), f);
		fclose(f);
		files++;
		for (int m = 0; m < 3000; m++) {
			char buf[8200];
			size_t n = len;
			memcpy(buf, seed, len);
			for (int k = m ? 1 + (int)(next() % 3) : 0; k > 0 && n; k--) {
				size_t at = (size_t)(next() % n);
				char c = pick[next() % (sizeof(pick) - 1)];
				switch (next() % 3) {
				case 0: buf[at] = c; break;
				case 1: memmove(buf + at + 1, buf + at, n - at), buf[at] = c, n++; break;
				default: memmove(buf + at, buf + at + 1, n - at - 1), n--; break;
				}
			}
			LLVMFuzzerTestOneInput((const uint8_t *)buf, n);
			struct gf_ext_args a;
			static struct gf_k8s_pod p;
			char msg[400];
			gf_err e = gf_ext_args_parse(buf, n, NULL, &a, &p, msg, sizeof(msg));
			fast += e == GF_OK && a.plain;
			rejected += e == GF_PARSE;
			gf_ext_args_release(&a);
			runs++;
		}
	}
	closedir(dp);
	printf("differential: %zu corpus files, %zu bodies, %zu read by the fast path, %zu rejected\n", files, runs,
	       fast, rejected);
	assert_true(files >= 10);
	assert_true(fast > runs / 100); /* not a vacuous check: both outcomes are common */
	assert_true(rejected > runs / 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_path_builder),
		cmocka_unit_test(test_request_path_check),
		cmocka_unit_test(test_gpu_milli_rule),
		cmocka_unit_test(test_extargs_strict),
		cmocka_unit_test(test_extargs_differential),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
