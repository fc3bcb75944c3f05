/*
 * agent/pods.c - pod attribution from /proc/<pid>/cgroup and the kubelet's
 * log directories (see pods.h for the sources and why).
 *
 * cgroup forms recognised (one line "hierarchy-id:controllers:path" per
 * hierarchy; v2 has the single line "0::path"):
 *   cgroupfs driver:  /kubepods/burstable/pod<uid>/<id>
 *                     /kubepods/pod<uid>/<id>            (Guaranteed QoS)
 *   systemd driver:   /kubepods.slice/kubepods-burstable.slice/
 *                       kubepods-burstable-pod<uid_with_underscores>.slice/
 *                       cri-containerd-<id>.scope | crio-<id>.scope | docker-<id>.scope
 *   containerd's "slice:prefix:id" leaf (kind, cgroupfs inside systemd):
 *                     .../kubepods-burstable-pod<uid>.slice:cri-containerd:<id>
 *   any prefix before them (kind, nested kubelets, /system.slice/...).
 * The pod component is the one whose text after "pod" (after stripping
 * ".slice") is a UID: 36 chars 8-4-4-4-12 ('_' or '-') or 32 hex (static
 * pods).  The container component is any later one that, stripped of a
 * runtime prefix and ".scope", is 64 hex digits; "crio-conmon-" (CRI-O's
 * monitor process) is not a container.  The first line that yields a pod
 * wins, a later line that yields pod + container improves it.
 *
 * Index: containers/ and pods/ are listed when their mtime changes; the
 * container index is sorted by ID and searched with bsearch (O(log n)).
 * The pid cache is a small array with generations: entries not used during
 * one refresh period are dropped, so it tracks the live GPU processes.
 * Caps: GF_PODS_MAX_INDEX names, GF_PODS_MAX_PIDS cached pids, 64 KiB of
 * cgroup file; past them entries are ignored with one log line.
 */
#include "agent/pods.h"
#include "core/grow.h"
#include "core/sort.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define GF_PODS_MAX_INDEX 16384
#define GF_PODS_MAX_PIDS 1024
#define GF_PODS_MAX_CGROUP 65536
#define NAME_MAX_ 256

static bool is_digits(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isdigit((unsigned char)s[i]))
			return false;
	return n > 0;
}

static bool is_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

/* s[0..n) is a pod UID in cgroup spelling?  Writes the canonical form,
 * and nothing at all when it is not one. */
static bool parse_uid_(const char *s, size_t n, char *out);
static bool parse_uid(const char *s, size_t n, char *out)
{
	char tmp[GF_POD_UID_LEN + 1];
	if (!parse_uid_(s, n, tmp))
		return false;
	memcpy(out, tmp, sizeof(tmp));
	return true;
}

static bool parse_uid_(const char *s, size_t n, char *out)
{
	if (n == 32 && is_hex(s, 32)) {
		for (size_t i = 0; i < 32; i++)
			out[i] = (char)tolower((unsigned char)s[i]);
		out[32] = '\0';
		return true;
	}
	if (n != 36)
		return false;
	for (size_t i = 0; i < 36; i++) {
		char c = s[i];
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;
		if (dash ? (c != '-' && c != '_') : !isxdigit((unsigned char)c))
			return false;
		out[i] = dash ? '-' : (char)tolower((unsigned char)c);
	}
	out[36] = '\0';
	return true;
}

static bool has_suffix(const char *s, size_t n, const char *suf, size_t *stripped)
{
	size_t k = strlen(suf);
	if (n >= k && !memcmp(s + n - k, suf, k)) {
		*stripped = n - k;
		return true;
	}
	*stripped = n;
	return false;
}

/* A path component that names a pod: ...pod<uid>[.slice]. */
static bool component_pod(const char *c, size_t n, char *uid)
{
	size_t m;
	has_suffix(c, n, ".slice", &m);
	/* "pod<uid>" (cgroupfs) or "...-pod<uid>" (systemd). */
	for (size_t i = 0; i + 3 <= m; i++) {
		if (memcmp(c + i, "pod", 3) || (i > 0 && c[i - 1] != '-'))
			continue;
		if (parse_uid(c + i + 3, m - i - 3, uid))
			return true;
	}
	return false;
}

/* A path component that names a container: [runtime-]<64 hex>[.scope]. */
static bool component_container(const char *c, size_t n, char *id)
{
	static const char *const prefixes[] = { "cri-containerd-", "crio-", "docker-",
						 "containerd-", "" };
	size_t m;
	has_suffix(c, n, ".scope", &m);
	if (m >= 12 && !memcmp(c, "crio-conmon-", 12))
		return false;
	for (size_t p = 0; p < sizeof(prefixes) / sizeof(prefixes[0]); p++) {
		size_t k = strlen(prefixes[p]);
		if (m != k + GF_CONTAINER_ID_LEN || memcmp(c, prefixes[p], k))
			continue;
		if (!is_hex(c + k, GF_CONTAINER_ID_LEN))
			continue;
		for (size_t i = 0; i < GF_CONTAINER_ID_LEN; i++)
			id[i] = (char)tolower((unsigned char)c[k + i]);
		id[GF_CONTAINER_ID_LEN] = '\0';
		return true;
	}
	return false;
}

static void parse_path(const char *p, size_t n, struct gf_cgroup_ident *id)
{
	bool in_pod = false;
	size_t i = 0;
	while (i < n) {
		while (i < n && (p[i] == '/' || p[i] == ':'))
			i++;
		size_t j = i;
		while (j < n && p[j] != '/' && p[j] != ':')
			j++;
		if (j > i) {
			if (!in_pod)
				in_pod = component_pod(p + i, j - i, id->pod_uid);
			else if (!id->container_id[0])
				component_container(p + i, j - i, id->container_id);
		}
		i = j;
	}
}

gf_err gf_cgroup_parse(const char *text, size_t len, struct gf_cgroup_ident *out, char *err,
		       size_t errlen)
{
	memset(out, 0, sizeof(*out));
	size_t line = 0, i = 0;
	while (i < len) {
		size_t j = i;
		while (j < len && text[j] != '\n')
			j++;
		line++;
		const char *l = text + i;
		size_t n = j - i;
		i = j + 1;
		if (n == 0)
			continue;
		const char *c1 = memchr(l, ':', n);
		const char *c2 = c1 ? memchr(c1 + 1, ':', n - (size_t)(c1 + 1 - l)) : NULL;
		if (!c1 || !c2 || c1 == l || !is_digits(l, (size_t)(c1 - l))) {
			snprintf(err, errlen,
				 "line %zu: expected 'hierarchy-id:controllers:path', got '%.*s'", line,
				 (int)(n > 80 ? 80 : n), l);
			return GF_PARSE;
		}
		const char *path = c2 + 1;
		size_t plen = n - (size_t)(path - l);
		if (plen == 0 || path[0] != '/') {
			snprintf(err, errlen, "line %zu: cgroup path must start with '/', got '%.*s'",
				 line, (int)(plen > 80 ? 80 : plen), path);
			return GF_PARSE;
		}
		if (out->container_id[0])
			continue; /* already have the best answer; keep validating lines */
		struct gf_cgroup_ident cand;
		memset(&cand, 0, sizeof(cand));
		parse_path(path, plen, &cand);
		if (cand.pod_uid[0] && (!out->pod_uid[0] || cand.container_id[0]))
			*out = cand;
	}
	return out->pod_uid[0] ? GF_OK : GF_NOENT;
}

/* Copy s[0..n) into dst (size cap) if it fits and is non-empty. */
static bool take(char *dst, size_t cap, const char *s, size_t n)
{
	if (n == 0 || n >= cap)
		return false;
	memcpy(dst, s, n);
	dst[n] = '\0';
	return true;
}

gf_err gf_podlog_parse_container_name(const char *fname, char *pod, char *ns, char *container,
				      char *id, size_t n)
{
	size_t len = strlen(fname), m;
	if (!has_suffix(fname, len, ".log", &m))
		return GF_PARSE;
	const char *u1 = memchr(fname, '_', m);
	const char *u2 = u1 ? memchr(u1 + 1, '_', m - (size_t)(u1 + 1 - fname)) : NULL;
	if (!u1 || !u2 || memchr(u2 + 1, '_', m - (size_t)(u2 + 1 - fname)))
		return GF_PARSE;
	const char *rest = u2 + 1;
	size_t rlen = m - (size_t)(rest - fname);
	if (rlen < GF_CONTAINER_ID_LEN + 2 || rest[rlen - GF_CONTAINER_ID_LEN - 1] != '-' ||
	    !is_hex(rest + rlen - GF_CONTAINER_ID_LEN, GF_CONTAINER_ID_LEN))
		return GF_PARSE;
	if (!take(pod, n, fname, (size_t)(u1 - fname)) ||
	    !take(ns, n, u1 + 1, (size_t)(u2 - u1 - 1)) ||
	    !take(container, n, rest, rlen - GF_CONTAINER_ID_LEN - 1) ||
	    !take(id, n, rest + rlen - GF_CONTAINER_ID_LEN, GF_CONTAINER_ID_LEN))
		return GF_PARSE;
	for (char *p = id; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	return GF_OK;
}

gf_err gf_podlog_parse_pod_dir(const char *dname, char *ns, char *pod, char *uid, size_t n)
{
	size_t len = strlen(dname);
	const char *u1 = memchr(dname, '_', len);
	const char *u2 = u1 ? memchr(u1 + 1, '_', len - (size_t)(u1 + 1 - dname)) : NULL;
	if (!u1 || !u2 || n <= GF_POD_UID_LEN)
		return GF_PARSE;
	if (!take(ns, n, dname, (size_t)(u1 - dname)) ||
	    !take(pod, n, u1 + 1, (size_t)(u2 - u1 - 1)) ||
	    !parse_uid(u2 + 1, len - (size_t)(u2 + 1 - dname), uid))
		return GF_PARSE;
	return GF_OK;
}

/* ---- the map ---------------------------------------------------------- */

struct name_entry {
	char key[GF_CONTAINER_ID_LEN + 1]; /* container ID or pod UID */
	char *blob;                        /* "pod\0ns\0container\0", owned */
};

struct pid_entry {
	unsigned pid;
	unsigned gen;
	gf_err status; /* GF_OK, GF_NOENT, GF_PARSE (logged) */
	struct gf_cgroup_ident ident;
};

struct gf_pod_map {
	char *proc_root, *log_root;
	struct timespec cont_mtime, pods_mtime;
	struct name_entry *cont, *pods; /* sorted by key */
	size_t ncont, npods;
	struct pid_entry *pids;
	size_t npids;
	unsigned gen;
	bool warned_cap;
};

static char *dup_str(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = malloc(n);
	if (p)
		memcpy(p, s, n);
	return p;
}

gf_err gf_pod_map_create(const char *proc_root, const char *log_root, gf_pod_map **out)
{
	*out = NULL;
	if (!proc_root || !log_root)
		return GF_INVAL;
	gf_pod_map *m = calloc(1, sizeof(*m));
	if (!m)
		return GF_NOMEM;
	m->proc_root = dup_str(proc_root);
	m->log_root = dup_str(log_root);
	m->pids = calloc(GF_PODS_MAX_PIDS, sizeof(*m->pids));
	if (!m->proc_root || !m->log_root || !m->pids) {
		gf_pod_map_destroy(m);
		return GF_NOMEM;
	}
	*out = m;
	return GF_OK;
}

static void free_index(struct name_entry *e, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(e[i].blob);
	free(e);
}

void gf_pod_map_destroy(gf_pod_map *m)
{
	if (!m)
		return;
	free_index(m->cont, m->ncont);
	free_index(m->pods, m->npods);
	free(m->pids);
	free(m->proc_root);
	free(m->log_root);
	free(m);
}

size_t gf_pod_map_size(const gf_pod_map *m)
{
	return m->ncont + m->npods;
}

static bool copy_key(char dst[GF_CONTAINER_ID_LEN + 1], const char *key)
{
	size_t n = strlen(key);
	if (n > GF_CONTAINER_ID_LEN)
		return false;
	memcpy(dst, key, n + 1);
	return true;
}

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct name_entry *)a)->key, ((const struct name_entry *)b)->key);
}

static char *make_blob(const char *pod, const char *ns, const char *container)
{
	size_t a = strlen(pod) + 1, b = strlen(ns) + 1, c = strlen(container) + 1;
	char *p = malloc(a + b + c);
	if (!p)
		return NULL;
	memcpy(p, pod, a);
	memcpy(p + a, ns, b);
	memcpy(p + a + b, container, c);
	return p;
}

/* List dir, parse each name with the right parser, build a sorted index. */
static gf_err load_index(gf_pod_map *m, const char *sub, bool containers,
			 struct name_entry **out, size_t *nout)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", m->log_root, sub);
	DIR *d = opendir(path);
	*out = NULL;
	*nout = 0;
	if (!d)
		return GF_OK; /* no such directory: nothing maps */
	size_t n = 0, cap = 0;
	struct name_entry *v = NULL;
	struct dirent *de;
	gf_err e = GF_OK;
	while ((de = readdir(d))) {
		char a[NAME_MAX_], b[NAME_MAX_], c[NAME_MAX_], key[NAME_MAX_];
		if (de->d_name[0] == '.')
			continue;
		if (containers) {
			if (gf_podlog_parse_container_name(de->d_name, a, b, c, key, sizeof(a)))
				continue;
		} else {
			if (gf_podlog_parse_pod_dir(de->d_name, b, a, key, sizeof(a)))
				continue;
			c[0] = '\0';
		}
		if (n == GF_PODS_MAX_INDEX) {
			if (!m->warned_cap)
				fprintf(stderr, "gpufleet agent: %s: more than %d entries, ignoring the rest\n",
					path, GF_PODS_MAX_INDEX);
			m->warned_cap = true;
			break;
		}
		if (gf_grow(&v, &cap, n + 1, sizeof(*v), 64)) {
			e = GF_NOMEM;
			break;
		}
		if (!copy_key(v[n].key, key))
			continue;
		v[n].blob = make_blob(a, b, c);
		if (!v[n].blob) {
			e = GF_NOMEM;
			break;
		}
		n++;
	}
	closedir(d);
	if (e) {
		free_index(v, n);
		return e;
	}
	gf_qsort(v, n, sizeof(*v), cmp_entry);	/* v is NULL for an empty folder */
	*out = v;
	*nout = n;
	return GF_OK;
}

static bool changed(const char *dir, struct timespec *last)
{
	struct stat st;
	struct timespec now = { 0, 0 };
	if (stat(dir, &st) == 0)
		now = st.st_mtim;
	bool ch = now.tv_sec != last->tv_sec || now.tv_nsec != last->tv_nsec;
	*last = now;
	return ch;
}

gf_err gf_pod_map_refresh(gf_pod_map *m)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/containers", m->log_root);
	bool c1 = changed(path, &m->cont_mtime) || !m->cont;
	snprintf(path, sizeof(path), "%s/pods", m->log_root);
	bool c2 = changed(path, &m->pods_mtime) || !m->pods;
	gf_err e;
	if (c1) {
		struct name_entry *v;
		size_t n;
		if ((e = load_index(m, "containers", true, &v, &n)))
			return e;
		free_index(m->cont, m->ncont);
		m->cont = v;
		m->ncont = n;
	}
	if (c2) {
		struct name_entry *v;
		size_t n;
		if ((e = load_index(m, "pods", false, &v, &n)))
			return e;
		free_index(m->pods, m->npods);
		m->pods = v;
		m->npods = n;
	}
	/* New generation: drop pids unused during the previous one. */
	size_t k = 0;
	for (size_t i = 0; i < m->npids; i++)
		if (m->pids[i].gen == m->gen)
			m->pids[k++] = m->pids[i];
	m->npids = k;
	m->gen++;
	return GF_OK;
}

static const struct name_entry *find(const struct name_entry *v, size_t n, const char *key)
{
	struct name_entry k;
	if (!copy_key(k.key, key))
		return NULL;
	return bsearch(&k, v, n, sizeof(*v), cmp_entry);
}

static void read_ident(gf_pod_map *m, struct pid_entry *pe)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%u/cgroup", m->proc_root, pe->pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		pe->status = GF_NOENT;
		return;
	}
	char *buf = malloc(GF_PODS_MAX_CGROUP);
	size_t len = 0;
	if (buf) {
		ssize_t r;
		while (len < GF_PODS_MAX_CGROUP &&
		       (r = read(fd, buf + len, GF_PODS_MAX_CGROUP - len)) > 0)
			len += (size_t)r;
	}
	close(fd);
	if (!buf) {
		pe->status = GF_NOMEM;
		return;
	}
	char err[200];
	pe->status = gf_cgroup_parse(buf, len, &pe->ident, err, sizeof(err));
	if (pe->status == GF_PARSE)
		fprintf(stderr, "gpufleet agent: %s: %s (process not attributed)\n", path, err);
	free(buf);
}

gf_err gf_pod_map_lookup(gf_pod_map *m, unsigned pid, struct gf_pod_ref *ref)
{
	struct pid_entry *pe = NULL;
	for (size_t i = 0; i < m->npids; i++)
		if (m->pids[i].pid == pid) {
			pe = &m->pids[i];
			break;
		}
	if (!pe) {
		if (m->npids == GF_PODS_MAX_PIDS)
			return GF_NOENT;
		pe = &m->pids[m->npids++];
		memset(pe, 0, sizeof(*pe));
		pe->pid = pid;
		read_ident(m, pe);
	}
	pe->gen = m->gen;
	if (pe->status != GF_OK)
		return GF_NOENT;
	const struct name_entry *e = NULL;
	if (pe->ident.container_id[0])
		e = find(m->cont, m->ncont, pe->ident.container_id);
	if (!e)
		e = find(m->pods, m->npods, pe->ident.pod_uid);
	if (!e)
		return GF_NOENT;
	ref->pod = e->blob;
	ref->ns = ref->pod + strlen(ref->pod) + 1;
	ref->container = ref->ns + strlen(ref->ns) + 1;
	return GF_OK;
}
