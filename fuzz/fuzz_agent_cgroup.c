/*
 * fuzz/fuzz_agent_cgroup.c - the agent's parsers of node files: the
 * contents of /proc/<pid>/cgroup (gf_cgroup_parse) and the kubelet log
 * names (gf_podlog_parse_container_name, gf_podlog_parse_pod_dir).
 * Invariants checked: no crash, results NUL-terminated and well-formed
 * (a found pod UID is 32 or 36 characters; a container ID is 64 hex).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/pods.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gf_cgroup_ident id;
	char err[256];
	gf_err e = gf_cgroup_parse((const char *)data, size, &id, err, sizeof(err));
	if (e == GF_OK) {
		size_t n = strlen(id.pod_uid);
		if (n != 32 && n != 36)
			abort();
		size_t c = strlen(id.container_id);
		if (c != 0 && c != GF_CONTAINER_ID_LEN)
			abort();
	} else if (e == GF_PARSE && strncmp(err, "line ", 5) != 0) {
		abort(); /* errors must name the line */
	}
	if (size < 512) {
		char name[512], a[256], b[256], c[256], d[256];
		memcpy(name, data, size);
		name[size] = '\0';
		if (gf_podlog_parse_container_name(name, a, b, c, d, sizeof(a)) == GF_OK &&
		    (strlen(d) != GF_CONTAINER_ID_LEN || strchr(a, '_') || strchr(b, '_')))
			abort();
		if (gf_podlog_parse_pod_dir(name, a, b, c, sizeof(a)) == GF_OK && strchr(a, '_'))
			abort();
	}
	return 0;
}
