/*
 * tests/agent/test_agent_pods.c - the pod map over a fake node tree: each
 * cgroup form maps to its pod, new containers are picked up when the log
 * directory changes, a pod-only cgroup maps through pods/, a malformed
 * cgroup file or a vanished process maps to nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent/pods.h"

static char dir[64], proc[96], logd[96];

static int setup(void **st)
{
	(void)st;
	snprintf(dir, sizeof(dir), "/tmp/gf-pods-test-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(proc, sizeof(proc), "%s/proc", dir);
	snprintf(logd, sizeof(logd), "%s/log", dir);
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "%s/../make-fake-node %s/two_gpus.node %s", GF_AGENT_DATA,
		 GF_AGENT_DATA, dir);
	return system(cmd) ? -1 : 0;
}

static int teardown(void **st)
{
	(void)st;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) ? -1 : 0;
}

static void expect(gf_pod_map *m, unsigned pid, const char *ns, const char *pod, const char *c)
{
	struct gf_pod_ref r;
	gf_err e = gf_pod_map_lookup(m, pid, &r);
	if (!ns) {
		assert_int_equal(e, GF_NOENT);
		return;
	}
	assert_int_equal(e, GF_OK);
	assert_string_equal(r.ns, ns);
	assert_string_equal(r.pod, pod);
	assert_string_equal(r.container, c);
}

static void write_file(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

static void test_map(void **st)
{
	(void)st;
	gf_pod_map *m;
	assert_int_equal(gf_pod_map_create(proc, logd, &m), GF_OK);
	assert_int_equal(gf_pod_map_refresh(m), GF_OK);
	assert_int_equal(gf_pod_map_size(m), 6); /* 3 containers + 3 pod dirs */
	expect(m, 4242, "ml", "llm-7d9f-abcde", "server");  /* v2 systemd containerd */
	expect(m, 5151, "research", "trainer-0", "main");   /* v1 cgroupfs cri-o */
	expect(m, 6161, "team-b", "notebook-x", "jupyter"); /* v1 systemd docker */
	expect(m, 7171, NULL, NULL, NULL);                  /* host process */
	expect(m, 999999, NULL, NULL, NULL);                /* no such process */

	/* A new pod appears: its container log link and cgroup. */
	char path[512];
	struct timespec ts = { 0, 20 * 1000000L };
	nanosleep(&ts, NULL); /* a distinct directory mtime */
	snprintf(path, sizeof(path), "%s/proc/8181", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/proc/8181/cgroup", dir);
	write_file(path, "0::/kubepods/besteffort/pod11111111-2222-3333-4444-555555555555/"
			 "abababababababababababababababababababababababababababababababab\n");
	snprintf(path, sizeof(path),
		 "%s/log/containers/late_default_worker-abababababababababababababababababababababababababababababababab.log",
		 dir);
	write_file(path, "");
	expect(m, 8181, NULL, NULL, NULL); /* names are not re-listed before the next refresh */
	assert_int_equal(gf_pod_map_refresh(m), GF_OK);
	expect(m, 8181, "default", "late", "worker"); /* the cached cgroup ident now resolves */

	/* Pod-level cgroup only: pods/<ns>_<pod>_<uid> gives pod and namespace. */
	snprintf(path, sizeof(path), "%s/proc/9191", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/proc/9191/cgroup", dir);
	write_file(path, "0::/kubepods/pod6c5b4a3f-2e1d-4c0b-9a8f-7e6d5c4b3a29\n");
	expect(m, 9191, "research", "trainer-0", "");

	/* Malformed cgroup file: logged, not attributed, no crash. */
	snprintf(path, sizeof(path), "%s/proc/9292", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/proc/9292/cgroup", dir);
	write_file(path, "this is not a cgroup file\n");
	expect(m, 9292, NULL, NULL, NULL);
	gf_pod_map_destroy(m);
}

static void test_missing_dirs(void **st)
{
	(void)st;
	gf_pod_map *m;
	assert_int_equal(gf_pod_map_create("/nonexistent/proc", "/nonexistent/log", &m), GF_OK);
	assert_int_equal(gf_pod_map_refresh(m), GF_OK);
	assert_int_equal(gf_pod_map_size(m), 0);
	expect(m, 1, NULL, NULL, NULL);
	gf_pod_map_destroy(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_map),
		cmocka_unit_test(test_missing_dirs),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
