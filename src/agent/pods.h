/*
 * agent/pods.h - which pod and container a host process belongs to.
 *
 * Two sources that every Kubernetes node has, both written by the kubelet
 * and the container runtime, both readable with a read-only hostPath:
 *
 *  1. /proc/<pid>/cgroup names the pod UID and the container ID, in one of
 *     the forms of cgroup v1 or v2 with the systemd or the cgroupfs driver
 *     and the containerd, CRI-O or Docker runtime (see gf_cgroup_parse).
 *  2. The kubelet's CRI log layout maps IDs to names:
 *       <log_root>/containers/<pod>_<namespace>_<container>-<containerID>.log
 *       <log_root>/pods/<namespace>_<pod>_<podUID>/
 *     (log_root is /var/log on a node).  Pod, namespace and container names
 *     are DNS labels/subdomains and cannot contain '_', so the split is
 *     unambiguous.
 *
 * A process whose container ID is in containers/ gets pod, namespace and
 * container; one whose pod UID is only in pods/ gets pod and namespace.
 * The pod-resources gRPC API is not used (no gRPC dependency); see
 * docs/agent.md for the trade-off.
 */
#ifndef GF_AGENT_PODS_H
#define GF_AGENT_PODS_H

#include <stddef.h>

#include "core/error.h"

#define GF_POD_UID_LEN 36  /* 8-4-4-4-12 hex; static pods use 32 hex */
#define GF_CONTAINER_ID_LEN 64

/* Identity found in a cgroup file.  Empty strings when absent. */
struct gf_cgroup_ident {
	char pod_uid[GF_POD_UID_LEN + 1];           /* with dashes, lower case */
	char container_id[GF_CONTAINER_ID_LEN + 1]; /* 64 lower-case hex */
};

/* Names of a pod (and container).  Pointers into the map's storage: valid
 * until the next gf_pod_map_refresh() or destroy. */
struct gf_pod_ref {
	const char *pod;
	const char *ns;
	const char *container; /* "" when only the pod is known */
};

/* Parse the contents of /proc/<pid>/cgroup (len bytes, need not be
 * NUL-terminated).  GF_OK: at least the pod UID was found.  GF_NOENT: a
 * well-formed file of a process outside any pod.  GF_PARSE: a malformed
 * line; err gets "line N: ..." naming what was expected. */
gf_err gf_cgroup_parse(const char *text, size_t len, struct gf_cgroup_ident *out, char *err,
		       size_t errlen);

/* Split "<pod>_<ns>_<container>-<64 hex id>.log".  Copies into the caller's
 * buffers (each of size n).  GF_PARSE if the name has another shape. */
gf_err gf_podlog_parse_container_name(const char *fname, char *pod, char *ns, char *container,
				      char *id, size_t n);

/* Split "<ns>_<pod>_<uid>".  GF_PARSE if the name has another shape. */
gf_err gf_podlog_parse_pod_dir(const char *dname, char *ns, char *pod, char *uid, size_t n);

typedef struct gf_pod_map gf_pod_map;

/* proc_root: normally "/proc"; log_root: normally "/var/log".  Strings are
 * copied.  Nothing is read until the first refresh.  GF_NOMEM, GF_INVAL. */
gf_err gf_pod_map_create(const char *proc_root, const char *log_root, gf_pod_map **out);
void gf_pod_map_destroy(gf_pod_map *m);

/* Re-read the log directories if their mtime changed (cheap otherwise) and
 * start a new generation of the pid cache: pids not looked up since the
 * previous refresh are forgotten.  Returns GF_OK even if the directories
 * are missing (then nothing maps). */
gf_err gf_pod_map_refresh(gf_pod_map *m);

/* The pod of a host pid.  GF_OK with *ref filled; GF_NOENT if the process
 * is in no known pod (or is gone).  A malformed cgroup file is logged once
 * per pid (to stderr, naming the file and line) and counts as GF_NOENT. */
gf_err gf_pod_map_lookup(gf_pod_map *m, unsigned pid, struct gf_pod_ref *ref);

/* Entries in the name index (for tests and diagnostics). */
size_t gf_pod_map_size(const gf_pod_map *m);

#endif /* GF_AGENT_PODS_H */
