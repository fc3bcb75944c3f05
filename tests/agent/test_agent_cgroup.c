/*
 * tests/agent/test_agent_cgroup.c - /proc/<pid>/cgroup and kubelet log-name
 * parsing: every cgroup driver x version x runtime form, and bad lines.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "agent/pods.h"

#define UID "0b7e3c1a-5d2f-4e6a-9b8c-1d2e3f4a5b6c"
#define UIDU "0b7e3c1a_5d2f_4e6a_9b8c_1d2e3f4a5b6c"
#define CID "3f1a9c2e7b4d6f8a0c1e3b5d7f9a1c2e4b6d8f0a2c4e6b8d0f1a3c5e7b9d1f2a"

struct form {
	const char *what, *text, *uid, *cid;
};

static const struct form forms[] = {
	{ "v2 systemd containerd",
	  "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UIDU
	  ".slice/cri-containerd-" CID ".scope\n",
	  UID, CID },
	{ "v2 systemd cri-o",
	  "0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UIDU
	  ".slice/crio-" CID ".scope\n",
	  UID, CID },
	{ "v2 systemd guaranteed docker",
	  "0::/kubepods.slice/kubepods-pod" UIDU ".slice/docker-" CID ".scope\n", UID, CID },
	{ "v2 cgroupfs containerd",
	  "0::/kubepods/burstable/pod" UID "/" CID "\n", UID, CID },
	{ "v1 cgroupfs, several hierarchies",
	  "12:pids:/kubepods/besteffort/pod" UID "/" CID "\n"
	  "11:memory:/kubepods/besteffort/pod" UID "/" CID "\n"
	  "1:name=systemd:/kubepods/besteffort/pod" UID "/" CID "\n",
	  UID, CID },
	{ "v1 systemd docker, cpuset first",
	  "11:cpuset:/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UIDU
	  ".slice/docker-" CID ".scope\n0::/\n",
	  UID, CID },
	{ "kind: nested kubelet prefix",
	  "0::/system.slice/containerd.service/kubepods-burstable-pod" UIDU ".slice:cri-containerd:" CID
	  "\n",
	  UID, CID },
	{ "kind v2 nested slices",
	  "0::/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-burstable.slice/"
	  "kubelet-kubepods-burstable-pod" UIDU ".slice/cri-containerd-" CID ".scope\n",
	  UID, CID },
	{ "static pod (32-hex uid), cgroupfs",
	  "0::/kubepods/burstable/pod0123456789abcdef0123456789abcdef/" CID "\n",
	  "0123456789abcdef0123456789abcdef", CID },
	{ "pod-level only (pause not visible)",
	  "0::/kubepods/burstable/pod" UID "\n", UID, "" },
	{ "upper-case hex is normalised",
	  "0::/kubepods/podABCDEF01-2345-6789-ABCD-EF0123456789/" CID "\n",
	  "abcdef01-2345-6789-abcd-ef0123456789", CID },
};

static void test_forms(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		struct gf_cgroup_ident id;
		char err[200] = "";
		gf_err e = gf_cgroup_parse(forms[i].text, strlen(forms[i].text), &id, err, sizeof(err));
		print_message("form: %s\n", forms[i].what);
		assert_int_equal(e, GF_OK);
		assert_string_equal(id.pod_uid, forms[i].uid);
		assert_string_equal(id.container_id, forms[i].cid);
	}
}

static void test_conmon_is_not_a_container(void **state)
{
	(void)state;
	const char *t = "0::/kubepods.slice/kubepods-pod" UIDU ".slice/crio-conmon-" CID ".scope\n";
	struct gf_cgroup_ident id;
	char err[200];
	assert_int_equal(gf_cgroup_parse(t, strlen(t), &id, err, sizeof(err)), GF_OK);
	assert_string_equal(id.pod_uid, UID);
	assert_string_equal(id.container_id, "");
}

static void test_not_in_a_pod(void **state)
{
	(void)state;
	const char *texts[] = {
		"0::/user.slice/user-1000.slice/session-3.scope\n",
		"0::/\n",
		"12:memory:/system.slice/docker-" CID ".scope\n", /* a container, but no pod */
		"0::/kubepods.slice\n",                           /* "pods" is not "pod<uid>" */
		/* Found by fuzz_agent_cgroup: a UID-like text that fails late must not
		 * leave a partial UID behind ("c9b_" breaks the 8-4-4-4-12 shape). */
		"0::/system.slice/coubepods-burstable-pod0b7e3c1a_5d2f_4e6a_c9b_d281e3f4a5b6c.slice\n",
		"",
	};
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		struct gf_cgroup_ident id;
		char err[200];
		assert_int_equal(gf_cgroup_parse(texts[i], strlen(texts[i]), &id, err, sizeof(err)),
				 GF_NOENT);
		assert_string_equal(id.pod_uid, "");
	}
}

static void test_bad_lines_name_the_line(void **state)
{
	(void)state;
	struct {
		const char *text, *want;
	} bad[] = {
		{ "0::/ok\ngarbage without colons\n", "line 2: expected 'hierarchy-id:controllers:path'" },
		{ "x:memory:/kubepods\n", "line 1: expected" },
		{ "0::relative/path\n", "line 1: cgroup path must start with '/'" },
		{ "0::\n", "line 1: cgroup path must start with '/'" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct gf_cgroup_ident id;
		char err[200] = "";
		assert_int_equal(gf_cgroup_parse(bad[i].text, strlen(bad[i].text), &id, err, sizeof(err)),
				 GF_PARSE);
		print_message("err: %s\n", err);
		assert_non_null(strstr(err, bad[i].want));
	}
}

static void test_container_log_names(void **state)
{
	(void)state;
	char pod[256], ns[256], c[256], id[256];
	assert_int_equal(gf_podlog_parse_container_name("llm-7d9f-abcde_ml_server-" CID ".log", pod,
							ns, c, id, sizeof(pod)),
			 GF_OK);
	assert_string_equal(pod, "llm-7d9f-abcde");
	assert_string_equal(ns, "ml");
	assert_string_equal(c, "server");
	assert_string_equal(id, CID);
	/* Container names may contain '-': the ID is the last 64 characters. */
	assert_int_equal(gf_podlog_parse_container_name("p_n_my-side-car-" CID ".log", pod, ns, c, id,
							sizeof(pod)),
			 GF_OK);
	assert_string_equal(c, "my-side-car");
	const char *bad[] = {
		"p_n_c-" CID,                 /* no .log */
		"p_n_c-deadbeef.log",         /* short id */
		"p_n_x_c-" CID ".log",        /* extra '_' */
		"pn_c-" CID ".log",           /* one '_' */
		"p_n_-" CID ".log",           /* empty container */
		"p_n_c" CID ".log",           /* no '-' before the id */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(gf_podlog_parse_container_name(bad[i], pod, ns, c, id, sizeof(pod)),
				 GF_PARSE);
}

static void test_pod_dir_names(void **state)
{
	(void)state;
	char ns[256], pod[256], uid[256];
	assert_int_equal(gf_podlog_parse_pod_dir("ml_llm-7d9f-abcde_" UID, ns, pod, uid, sizeof(ns)),
			 GF_OK);
	assert_string_equal(ns, "ml");
	assert_string_equal(pod, "llm-7d9f-abcde");
	assert_string_equal(uid, UID);
	assert_int_equal(gf_podlog_parse_pod_dir("ml_llm_notauid", ns, pod, uid, sizeof(ns)), GF_PARSE);
	assert_int_equal(gf_podlog_parse_pod_dir("ml-llm-" UID, ns, pod, uid, sizeof(ns)), GF_PARSE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forms),
		cmocka_unit_test(test_conmon_is_not_a_container),
		cmocka_unit_test(test_not_in_a_pod),
		cmocka_unit_test(test_bad_lines_name_the_line),
		cmocka_unit_test(test_container_log_names),
		cmocka_unit_test(test_pod_dir_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
