/*
 * agent/agent.c - collect GPU readings from NVML, attribute processes to
 * pods, render dcgm-exporter compatible Prometheus text.
 *
 * Collection (O(GPUs x metrics) NVML calls + O(processes) pod lookups):
 *   1. refresh the pod map (stat of two directories; re-list on change);
 *   2. drain pending XID events (non-blocking waits, at most 256);
 *   3. per GPU: memory first (if it says GPU_IS_LOST/RESET_REQUIRED the GPU
 *      is down: log on the transition, skip it), then every other reading;
 *      NOT_SUPPORTED or a missing symbol leaves the metric out for that GPU
 *      (as dcgm-exporter omits blank fields); then the compute processes,
 *      grouped by pod.
 * Rendering walks the metric table once: a metric no GPU has is not
 * printed at all; otherwise HELP, TYPE, then one sample per GPU, or per pod
 * on that GPU when pods use it.
 *
 * Per-pod rule: a GPU used by one pod gets the pod labels on the device
 * values (dcgm-exporter's whole-GPU case).  A GPU shared by several pods
 * gets one series per pod; DCGM_FI_DEV_FB_USED is then that pod's own
 * process memory (sum of usedGpuMemory), not a copy of the device's; the
 * other device-wide values (utilization, power...) are repeated per pod,
 * as dcgm-exporter does for shared GPUs.
 *
 * MIG: on a MIG-enabled GPU the device-wide readings stay per GPU (without
 * pod labels: several pods share it), and each MIG device gets its own
 * DCGM_FI_DEV_FB_USED/FB_FREE series with dcgm-exporter's GPU_I_PROFILE and
 * GPU_I_ID labels; a process is placed on its MIG device by the
 * gpuInstanceId NVML reports, and the pod labels go on that device's series.
 *
 * Labels are rendered once per GPU at start-up (escaped), so a scrape is
 * mostly number formatting into one reused buffer.
 *
 * Watchdog (cfg.watchdog): after each GPU's processes are read, those of a
 * capped share (agent/watchdog.h: found from their mounts) are grouped by
 * share; a share whose NVML memory passes its cap plus a slack per process
 * marks its processes over (gpufleet_watchdog_* metrics) and, with
 * cfg.watchdog_kill, gets them killed largest first until the rest fit.
 */
#define _DEFAULT_SOURCE 1 /* syscall(): pidfd_open, pidfd_send_signal */
#include "agent/agent_impl.h"
#include "core/sort.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "agent/watchdog.h"

struct metric_def {
	const char *name, *type, *help;
	bool is_float;
};

static const struct metric_def metric_defs[GF_M_COUNT] = {
#define GF_AGENT_METRIC_DEF_(id, nm, ty, hl, fl) [GF_M_##id] = { nm, ty, hl, fl },
	GF_AGENT_METRICS(GF_AGENT_METRIC_DEF_)
#undef GF_AGENT_METRIC_DEF_
};

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#include <stdarg.h>
static void logf_(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("gpufleet agent: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

const char *gf_xid_message(unsigned long long xid)
{
	switch (xid) {
	case 0: return "No Error";
	case 13: return "Graphics Engine Exception";
	case 31: return "GPU memory page fault";
	case 32: return "Invalid or corrupted push buffer stream";
	case 43: return "GPU stopped processing";
	case 45: return "Preemptive cleanup, due to previous errors";
	case 48: return "Double Bit ECC Error";
	case 61: return "Internal micro-controller breakpoint/warning";
	case 62: return "Internal micro-controller halt";
	case 63: return "ECC page retirement or row remapping recording event";
	case 64: return "ECC page retirement or row remapper recording failure";
	case 68: return "NVDEC0 Exception";
	case 74: return "NVLINK Error";
	case 79: return "GPU has fallen off the bus";
	case 92: return "High single-bit ECC error rate";
	case 94: return "Contained ECC error";
	case 95: return "Uncontained ECC error";
	case 119: return "GSP RPC timeout";
	case 120: return "GSP error";
	default: return "Unknown Error";
	}
}

void gf_agent_escape_label(char *out, size_t n, const char *in)
{
	size_t k = 0;
	for (; *in && k + 3 < n; in++) {
		char c = *in;
		if (c == '\\' || c == '"') {
			out[k++] = '\\';
			out[k++] = c;
		} else if (c == '\n') {
			out[k++] = '\\';
			out[k++] = 'n';
		} else {
			out[k++] = c;
		}
	}
	if (n)
		out[k < n ? k : n - 1] = '\0';
}

static char *dup_or_null(const char *s)
{
	if (!s)
		return NULL;
	size_t n = strlen(s) + 1;
	char *p = malloc(n);
	if (p)
		memcpy(p, s, n);
	return p;
}

static bool lost(gf_nvml_return r)
{
	return r == GF_NVML_ERROR_GPU_IS_LOST || r == GF_NVML_ERROR_RESET_REQUIRED;
}

/* Read the identity of GPU g (uuid, name, bus) and render its labels. */
static void identify(gf_agent *a, struct gf_agent_gpu *g)
{
	struct gf_nvml *n = &a->nvml;
	if (!g->identified && !g->uuid_refused && g->dev) {
		gf_nvml_pci_info pci;
		memset(&pci, 0, sizeof(pci));
		if (n->uuid(g->dev, g->uuid, sizeof(g->uuid)) != GF_NVML_SUCCESS)
			g->uuid[0] = '\0';
		if (GF_NVML_CALL(n, name, g->dev, g->name, sizeof(g->name)) != GF_NVML_SUCCESS)
			g->name[0] = '\0';
		if (GF_NVML_CALL(n, pci_info, g->dev, &pci) == GF_NVML_SUCCESS) {
			pci.busId[sizeof(pci.busId) - 1] = '\0';
			snprintf(g->bus_id, sizeof(g->bus_id), "%s", pci.busId);
		}
		g->uuid[sizeof(g->uuid) - 1] = g->name[sizeof(g->name) - 1] = '\0';
		if (g->uuid[0] && !gf_nvml_uuid_ok(g->uuid)) {
			char shown[2 * GF_NVML_UUID_LEN];
			gf_agent_escape_label(shown, sizeof(shown), g->uuid);
			logf_("GPU %u: NVML gave the UUID \"%s\", not letters, digits and '-': the GPU is left out "
			      "of the device plugin and the CDI spec, and has no UUID in labels and the inventory",
			      g->index, shown);
			g->uuid[0] = '\0';
			g->uuid_refused = true;
		}
		g->identified = g->uuid[0] != '\0';
	}
	char uuid[2 * GF_NVML_UUID_LEN], name[2 * GF_NVML_NAME_LEN], bus[2 * GF_NVML_BUSID_LEN];
	char host[320], drv[2 * GF_NVML_DRIVER_LEN];
	gf_agent_escape_label(uuid, sizeof(uuid), g->uuid);
	gf_agent_escape_label(name, sizeof(name), g->name);
	gf_agent_escape_label(bus, sizeof(bus), g->bus_id);
	gf_agent_escape_label(drv, sizeof(drv), a->driver);
	host[0] = '\0';
	if (a->hostname) {
		char h[256];
		gf_agent_escape_label(h, sizeof(h), a->hostname);
		snprintf(host, sizeof(host), ",%s=\"%s\"",
			 a->cfg.old_hostname_label ? "Hostname" : "hostname", h);
	}
	snprintf(g->labels, sizeof(g->labels),
		 "gpu=\"%u\",UUID=\"%s\",pci_bus_id=\"%s\",device=\"nvidia%u\",modelName=\"%s\"%s,"
		 "DCGM_FI_DRIVER_VERSION=\"%s\"",
		 g->index, uuid, bus, g->index, name, host, drv);
}

static void setup_events(gf_agent *a)
{
	struct gf_nvml *n = &a->nvml;
	if (GF_NVML_CALL(n, event_set_create, &a->events) != GF_NVML_SUCCESS) {
		a->events = NULL;
		return;
	}
	unsigned registered = 0;
	for (unsigned i = 0; i < a->ngpus; i++) {
		gf_nvml_return r = GF_NVML_CALL(n, register_events, a->gpus[i].dev,
						GF_NVML_EVENT_XID_CRITICAL, a->events);
		if (r == GF_NVML_SUCCESS)
			registered++;
	}
	if (!registered) {
		GF_NVML_CALL(n, event_set_free, a->events);
		a->events = NULL;
	}
}

gf_err gf_agent_create(const struct gf_agent_config *cfg, gf_agent **out, char *err,
		       size_t errlen)
{
	*out = NULL;
	gf_agent *a = calloc(1, sizeof(*a));
	if (!a)
		return GF_NOMEM;
	pthread_mutex_init(&a->lock, NULL);
	a->cfg = *cfg;
	a->proc_root = dup_or_null(cfg->proc_root ? cfg->proc_root : "/proc");
	a->log_root = dup_or_null(cfg->log_root ? cfg->log_root : "/var/log");
	a->sys_root = dup_or_null(cfg->sys_root ? cfg->sys_root : "/sys");
	a->hostname = dup_or_null(cfg->hostname);
	gf_err e = GF_NOMEM;
	if (!a->proc_root || !a->log_root || !a->sys_root || (cfg->hostname && !a->hostname))
		goto fail;
	if (cfg->kubernetes && (e = gf_pod_map_create(a->proc_root, a->log_root, &a->pods)))
		goto fail;

	e = gf_nvml_open(&a->nvml, cfg->nvml_path, err, errlen);
	if (e) {
		if (!cfg->allow_no_nvml)
			goto fail;
		logf_("%s; serving an empty set (--allow-no-nvml)", err);
		*out = a;
		return GF_OK;
	}
	a->have_nvml = true;
	struct gf_nvml *n = &a->nvml;
	if (GF_NVML_CALL(n, driver_version, a->driver, sizeof(a->driver)) != GF_NVML_SUCCESS)
		a->driver[0] = '\0';
	a->driver[sizeof(a->driver) - 1] = '\0';
	unsigned count = 0;
	gf_nvml_return r = n->device_count(&count);
	if (r != GF_NVML_SUCCESS) {
		snprintf(err, errlen, "nvmlDeviceGetCount failed: %s (%d)", gf_nvml_strerror(n, r), r);
		e = GF_UNAVAILABLE;
		goto fail;
	}
	if (count > GF_AGENT_MAX_GPUS) {
		logf_("%u GPUs, serving the first %d", count, GF_AGENT_MAX_GPUS);
		count = GF_AGENT_MAX_GPUS;
	}
	for (unsigned i = 0; i < count; i++) {
		struct gf_agent_gpu *g = &a->gpus[a->ngpus++];
		g->index = i;
		r = n->handle_by_index(i, &g->dev);
		if (r != GF_NVML_SUCCESS) {
			logf_("GPU %u: no handle: %s (%d); reported as down", i, gf_nvml_strerror(n, r), r);
			g->dev = NULL;
		} else {
			unsigned idx;
			if (GF_NVML_CALL(n, index, g->dev, &idx) == GF_NVML_SUCCESS)
				g->index = idx;
			identify(a, g);
		}
		if (!g->dev)
			identify(a, g);
		g->up = g->dev != NULL;
	}
	setup_events(a);
	*out = a;
	return GF_OK;
fail:
	gf_agent_destroy(a);
	return e;
}

void gf_agent_destroy(gf_agent *a)
{
	if (!a)
		return;
	if (a->events)
		GF_NVML_CALL(&a->nvml, event_set_free, a->events);
	if (a->have_nvml)
		gf_nvml_close(&a->nvml);
	for (unsigned i = 0; i < a->ngpus; i++) {
		free(a->gpus[i].procs);
		free(a->gpus[i].raw);
	}
	gf_pod_map_destroy(a->pods);
	free(a->mig_last);
	free(a->proc_root);
	free(a->log_root);
	free(a->sys_root);
	free(a->hostname);
	pthread_mutex_destroy(&a->lock);
	free(a);
}

static void drain_events(gf_agent *a)
{
	if (!a->events)
		return;
	for (int k = 0; k < 256; k++) {
		gf_nvml_event_data ev;
		memset(&ev, 0, sizeof(ev));
		if (GF_NVML_CALL(&a->nvml, event_wait, a->events, &ev, 0) != GF_NVML_SUCCESS)
			return;
		if (!(ev.eventType & GF_NVML_EVENT_XID_CRITICAL))
			continue;
		for (unsigned i = 0; i < a->ngpus; i++)
			if (a->gpus[i].dev == ev.device) {
				a->gpus[i].xid = ev.eventData;
				logf_("GPU %u (%s): XID %llu: %s", a->gpus[i].index, a->gpus[i].uuid,
				      ev.eventData, gf_xid_message(ev.eventData));
			}
	}
}

/* Record v for metric m if r succeeded; flag loss. */
#define PUT(g, m, r, v, down)                    \
	do {                                     \
		gf_nvml_return r_ = (r);         \
		if (r_ == GF_NVML_SUCCESS) {     \
			(g)->val[m] = (double)(v); \
			(g)->have |= 1ULL << (m); \
		} else if (lost(r_)) {           \
			*(down) = r_;            \
		}                                \
	} while (0)

static void read_procs(gf_agent *a, struct gf_agent_gpu *g, gf_nvml_return *down)
{
	struct gf_nvml *n = &a->nvml;
	g->nprocs = 0;
	if (!n->procs_v2 && !n->procs_v1)
		return;
	for (int attempt = 0; attempt < 3; attempt++) {
		unsigned cnt = g->proc_cap;
		gf_nvml_return r;
		if (n->procs_v2)
			r = n->procs_v2(g->dev, &cnt, g->raw);
		else
			r = n->procs_v1(g->dev, &cnt, g->raw);
		if (r == GF_NVML_SUCCESS) {
			if (cnt > g->proc_cap)
				cnt = g->proc_cap;
			for (unsigned i = 0; i < cnt; i++) {
				unsigned pid, gi = GF_AGENT_NO_GI;
				unsigned long long used;
				if (n->procs_v2) {
					gf_nvml_process_v2 p = ((const gf_nvml_process_v2 *)g->raw)[i];
					pid = p.pid;
					used = p.usedGpuMemory;
					gi = p.gpuInstanceId;
				} else {
					gf_nvml_process_v1 p = ((const gf_nvml_process_v1 *)g->raw)[i];
					pid = p.pid;
					used = p.usedGpuMemory;
				}
				g->procs[i].pid = pid;
				g->procs[i].gi = gi;
				g->procs[i].used = used == GF_NVML_VALUE_NOT_AVAILABLE ? 0 : used;
			}
			g->nprocs = cnt;
			return;
		}
		if (lost(r)) {
			*down = r;
			return;
		}
		if (r != GF_NVML_ERROR_INSUFFICIENT_SIZE || cnt > GF_AGENT_MAX_PROCS)
			return;
		/* Room for cnt + head-room, in the larger of the two layouts. */
		unsigned want = cnt + 8 > GF_AGENT_MAX_PROCS ? GF_AGENT_MAX_PROCS : cnt + 8;
		_Static_assert(sizeof(gf_nvml_process_v2) >= sizeof(gf_nvml_process_v1),
			       "raw process buffer sized for the larger layout");
		void *raw = realloc(g->raw, want * sizeof(gf_nvml_process_v2));
		if (raw)
			g->raw = raw;
		struct gf_agent_proc *pr = realloc(g->procs, want * sizeof(*pr));
		if (pr)
			g->procs = pr;
		if (!raw || !pr)
			return;
		g->proc_cap = want;
	}
}

/* Add used bytes to ref's entry in pods[] (n entries, at most cap). */
static void add_pod(struct gf_agent_pod_use *pods, unsigned *n, unsigned cap,
		    const struct gf_pod_ref *ref, unsigned long long used)
{
	unsigned k;
	for (k = 0; k < *n; k++)
		if (!strcmp(pods[k].ref.pod, ref->pod) && !strcmp(pods[k].ref.ns, ref->ns) &&
		    !strcmp(pods[k].ref.container, ref->container))
			break;
	if (k == *n) {
		if (*n == cap)
			return;
		pods[k].ref = *ref;
		pods[k].used = 0;
		(*n)++;
	}
	pods[k].used += used;
}

static void group_pods(gf_agent *a, struct gf_agent_gpu *g)
{
	g->npods = 0;
	for (unsigned k = 0; k < g->nmig; k++)
		g->mig[k].npods = 0;
	if (!a->pods)
		return;
	for (unsigned i = 0; i < g->nprocs; i++) {
		struct gf_pod_ref ref;
		if (gf_pod_map_lookup(a->pods, g->procs[i].pid, &ref) != GF_OK)
			continue;
		struct gf_agent_mig *m = NULL;
		for (unsigned k = 0; g->mig_on && k < g->nmig && g->procs[i].gi != GF_AGENT_NO_GI; k++)
			if (g->mig[k].gi == g->procs[i].gi)
				m = &g->mig[k];
		if (m)
			add_pod(m->pods, &m->npods, GF_AGENT_MAX_MIG_PODS, &ref, g->procs[i].used);
		else
			add_pod(g->pods, &g->npods, GF_AGENT_MAX_GPU_PODS, &ref, g->procs[i].used);
	}
}

/* MIG mode and the MIG devices (GPU instance, profile, memory). */
static void read_mig(gf_agent *a, struct gf_agent_gpu *g, gf_nvml_return *down)
{
	struct gf_nvml *n = &a->nvml;
	unsigned cur = 0, pend = 0, max = 0;
	g->mig_on = false;
	g->nmig = 0;
	gf_nvml_return r = GF_NVML_CALL(n, mig_mode, g->dev, &cur, &pend);
	if (lost(r))
		*down = r;
	if (r != GF_NVML_SUCCESS || cur != GF_NVML_MIG_ENABLE)
		return;
	g->mig_on = true;
	if (GF_NVML_CALL(n, mig_max, g->dev, &max) != GF_NVML_SUCCESS)
		return;
	for (unsigned i = 0; i < max && g->nmig < GF_AGENT_MAX_MIG; i++) {
		gf_nvml_device md;
		if (GF_NVML_CALL(n, mig_handle, g->dev, i, &md) != GF_NVML_SUCCESS)
			continue;
		struct gf_agent_mig *m = &g->mig[g->nmig];
		char name[GF_NVML_NAME_LEN] = "";
		if (GF_NVML_CALL(n, gi_id, md, &m->gi) != GF_NVML_SUCCESS)
			continue;
		GF_NVML_CALL(n, name, md, name, sizeof(name));
		name[sizeof(name) - 1] = '\0';
		if (GF_NVML_CALL(n, uuid, md, m->uuid, sizeof(m->uuid)) != GF_NVML_SUCCESS)
			m->uuid[0] = '\0';
		m->uuid[sizeof(m->uuid) - 1] = '\0';
		if (!gf_nvml_uuid_ok(m->uuid))
			m->uuid[0] = '\0';
		const char *p = strstr(name, "MIG ");
		snprintf(m->profile, sizeof(m->profile), "%s", p ? p + 4 : "");
		char prof[sizeof(m->profile) * 2];
		gf_agent_escape_label(prof, sizeof(prof), m->profile);
		snprintf(m->labels, sizeof(m->labels), ",GPU_I_PROFILE=\"%.40s\",GPU_I_ID=\"%u\"", prof,
			 m->gi);
		gf_nvml_memory_v1 mem;
		m->have_mem = GF_NVML_CALL(n, memory_v1, md, &mem) == GF_NVML_SUCCESS;
		if (m->have_mem) {
			m->used = mem.used;
			m->free = mem.free;
		}
		m->npods = 0;
		g->nmig++;
	}
}

/* ---- the watchdog (agent/watchdog.h) ---- */

/* /proc/<pid>/mountinfo into buf (NUL-terminated); its length, or -1. */
static long read_mountinfo(const gf_agent *a, unsigned pid, char *buf, size_t cap)
{
	char path[600];
	snprintf(path, sizeof(path), "%.500s/%u/mountinfo", a->proc_root, pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t n = 0;
	for (;;) {
		ssize_t r = read(fd, buf + n, cap - 1 - n);
		if (r <= 0)
			break;
		n += (size_t)r;
		if (n == cap - 1)
			break;
	}
	close(fd);
	buf[n] = '\0';
	return (long)n;
}

static bool share_of(const gf_agent *a, unsigned pid, char *buf, size_t cap, struct gf_wd_share *sh)
{
	long n = read_mountinfo(a, pid, buf, cap);
	return n >= 0 && gf_wd_parse_mountinfo(buf, (size_t)n, sh) == GF_OK;
}

static bool same_share(const struct gf_wd_share *x, const struct gf_wd_share *y)
{
	return x->first == y->first && x->units == y->units && !strcmp(x->uuid, y->uuid);
}

/* The container of pid from /proc/<pid>/cgroup (pod UID and container ID;
 * both empty outside any pod or when unreadable).  A share is one
 * container's allocation: its mount names the share, the cgroup (which a
 * tenant cannot choose) names whose it is. */
static void container_of(const gf_agent *a, unsigned pid, char *buf, size_t cap, struct gf_cgroup_ident *id)
{
	char path[600], err[128];
	memset(id, 0, sizeof(*id));
	snprintf(path, sizeof(path), "%.500s/%u/cgroup", a->proc_root, pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = read(fd, buf, cap);
	close(fd);
	if (n <= 0 || gf_cgroup_parse(buf, (size_t)n, id, err, sizeof(err)) != GF_OK)
		memset(id, 0, sizeof(*id));
}

static bool same_container(const struct gf_cgroup_ident *x, const struct gf_cgroup_ident *y)
{
	return !strcmp(x->pod_uid, y->pod_uid) && !strcmp(x->container_id, y->container_id);
}

/* SIGKILL pid if it still holds share sh in container ct: the pidfd pins the
 * process, so the check and the signal are about the same one even if the
 * PID is reused. */
static void wd_kill(gf_agent *a, struct gf_agent_gpu *g, const struct gf_agent_proc *p,
		    const struct gf_wd_share *sh, const struct gf_cgroup_ident *ct, unsigned long long sum,
		    unsigned long long cap, char *buf, size_t bufcap)
{
	struct gf_wd_share now;
	struct gf_cgroup_ident ctnow;
	int fd = (int)syscall(SYS_pidfd_open, (pid_t)p->pid, 0);
	const char *why = NULL;
	if (fd < 0)
		why = strerror(errno);
	else if (!share_of(a, p->pid, buf, bufcap, &now) || !same_share(&now, sh))
		why = "it no longer holds that share";
	else if (container_of(a, p->pid, buf, bufcap, &ctnow), !same_container(&ctnow, ct))
		why = "it is no longer in that container";
	else if (syscall(SYS_pidfd_send_signal, fd, SIGKILL, NULL, 0) != 0)
		why = strerror(errno);
	if (fd >= 0)
		close(fd);
	if (why) {
		a->wd_kill_errors++;
		logf_("watchdog: cannot kill PID %u on GPU %u (%s): %s%s", p->pid, g->index, g->uuid, why,
		      errno == EPERM ? " (the agent needs CAP_KILL and the host PID namespace)" : "");
		return;
	}
	a->wd_kills++;
	logf_("watchdog: killed PID %u on GPU %u (%s): its container's share %u/1000 (cap %llu MiB + slack) "
	      "used %llu MiB; the process held %llu MiB",
	      p->pid, g->index, g->uuid, sh->units, cap >> 20, sum >> 20, p->used >> 20);
}

static int by_used_desc(const void *x, const void *y)
{
	const struct gf_agent_proc *const *p = x, *const *q = y;
	return (*p)->used < (*q)->used ? 1 : (*p)->used > (*q)->used ? -1 : ((*p)->pid > (*q)->pid) - ((*p)->pid < (*q)->pid);
}

/* Group g's processes by share and container (a share is one container's
 * allocation: a process of another container whose mounts name the same
 * share, which a tenant with a user namespace and chroot can arrange, is
 * judged alone, never with the share's owner), mark every
 * process of a share whose NVML memory passes its cap plus the slack per
 * process, and with watchdog_kill kill them, largest first, until the rest
 * fit.  A process whose share names another GPU has a cap of 0 here. */
static void watchdog_gpu(gf_agent *a, struct gf_agent_gpu *g)
{
	enum { BUF = 256 * 1024 };
	struct gf_wd_share *sh = calloc(g->nprocs ? g->nprocs : 1, sizeof(*sh));
	struct gf_cgroup_ident *ct = calloc(g->nprocs ? g->nprocs : 1, sizeof(*ct));
	struct gf_agent_proc **grp = calloc(g->nprocs ? g->nprocs : 1, sizeof(*grp));
	char *buf = malloc(BUF);
	if (!sh || !ct || !grp || !buf)
		goto out;
	for (unsigned i = 0; i < g->nprocs; i++) {
		g->procs[i].over = false;
		g->procs[i].share = share_of(a, g->procs[i].pid, buf, BUF, &sh[i]) ? (short)sh[i].units : 0;
		if (g->procs[i].share)
			container_of(a, g->procs[i].pid, buf, BUF, &ct[i]);
	}
	for (unsigned i = 0; i < g->nprocs; i++) {
		if (!g->procs[i].share)
			continue;
		bool first = true;
		for (unsigned j = 0; j < i && first; j++)
			first = !(g->procs[j].share && same_share(&sh[j], &sh[i]) && same_container(&ct[j], &ct[i]));
		if (!first)
			continue;
		unsigned n = 0;
		unsigned long long sum = 0;
		for (unsigned j = i; j < g->nprocs; j++)
			if (g->procs[j].share && same_share(&sh[j], &sh[i]) && same_container(&ct[j], &ct[i])) {
				grp[n++] = &g->procs[j];
				sum += g->procs[j].used;
			}
		unsigned long long cap = strcmp(sh[i].uuid, g->uuid) ? 0 : gf_wd_share_bytes(g->mem_total, sh[i].units);
		if (!g->mem_total || sum <= cap + n * a->cfg.watchdog_slack)
			continue;
		for (unsigned k = 0; k < n; k++)
			grp[k]->over = true;
		if (!a->cfg.watchdog_kill)
			continue;
		gf_qsort(grp, n, sizeof(*grp), by_used_desc);
		unsigned long long left = sum;
		for (unsigned k = 0; k < n && left > cap + (n - k) * a->cfg.watchdog_slack; k++) {
			wd_kill(a, g, grp[k], &sh[i], &ct[i], sum, cap, buf, BUF);
			left -= grp[k]->used;
		}
	}
out:
	free(sh);
	free(ct);
	free(grp);
	free(buf);
}

static void collect_gpu(gf_agent *a, struct gf_agent_gpu *g)
{
	struct gf_nvml *n = &a->nvml;
	gf_nvml_return down = GF_NVML_SUCCESS;
	bool was_up = g->up;
	g->have = 0;
	g->nprocs = 0;
	g->npods = 0;
	g->nmig = 0;
	if (!g->dev) {
		/* No handle at start-up (lost then): ask again, it may be back. */
		unsigned slot = (unsigned)(g - a->gpus); /* enumeration index */
		if (n->handle_by_index(slot, &g->dev) != GF_NVML_SUCCESS) {
			g->dev = NULL;
			g->up = false;
			return;
		}
	}
	const double mib = 1024.0 * 1024.0;
	gf_nvml_memory_v2 m2 = { .version = GF_NVML_MEMORY_V2_VERSION };
	gf_nvml_return r = GF_NVML_CALL(n, memory_v2, g->dev, &m2);
	if (r == GF_NVML_SUCCESS) {
		PUT(g, GF_M_FB_FREE, r, m2.free / mib, &down);
		PUT(g, GF_M_FB_USED, r, m2.used / mib, &down);
		PUT(g, GF_M_FB_RESERVED, r, m2.reserved / mib, &down);
		g->mem_total = m2.total;
	} else if (!lost(r)) {
		gf_nvml_memory_v1 m1;
		r = GF_NVML_CALL(n, memory_v1, g->dev, &m1);
		PUT(g, GF_M_FB_FREE, r, m1.free / mib, &down);
		PUT(g, GF_M_FB_USED, r, m1.used / mib, &down);
		if (r == GF_NVML_SUCCESS)
			g->mem_total = m1.total;
	} else {
		down = r;
	}
	/* MiB values are whole numbers in dcgm-exporter. */
	for (int k = GF_M_FB_FREE; k <= GF_M_FB_RESERVED; k++)
		g->val[k] = (double)(unsigned long long)g->val[k];
	if (down)
		goto gone;

	unsigned u, u2;
	unsigned long long ull;
	int si;
	gf_nvml_utilization ut;
	r = GF_NVML_CALL(n, utilization, g->dev, &ut);
	PUT(g, GF_M_GPU_UTIL, r, ut.gpu, &down);
	PUT(g, GF_M_MEM_COPY_UTIL, r, ut.memory, &down);
	PUT(g, GF_M_SM_CLOCK, GF_NVML_CALL(n, clock, g->dev, GF_NVML_CLOCK_SM, &u), u, &down);
	PUT(g, GF_M_MEM_CLOCK, GF_NVML_CALL(n, clock, g->dev, GF_NVML_CLOCK_MEM, &u), u, &down);
	PUT(g, GF_M_POWER_USAGE, GF_NVML_CALL(n, power, g->dev, &u), u / 1000.0, &down);
	PUT(g, GF_M_TOTAL_ENERGY, GF_NVML_CALL(n, energy, g->dev, &ull), ull, &down);
	gf_nvml_temperature_v1 tv = { .version = GF_NVML_TEMPERATURE_V1_VERSION,
				      .sensorType = GF_NVML_TEMPERATURE_GPU };
	r = GF_NVML_CALL(n, temperature_v, g->dev, &tv);
	if (r == GF_NVML_SUCCESS)
		PUT(g, GF_M_GPU_TEMP, r, tv.temperature, &down);
	else if (!lost(r))
		PUT(g, GF_M_GPU_TEMP,
		    GF_NVML_CALL(n, temperature, g->dev, GF_NVML_TEMPERATURE_GPU, &u), u, &down);
	else
		down = r;
	PUT(g, GF_M_ENC_UTIL, GF_NVML_CALL(n, enc_util, g->dev, &u, &u2), u, &down);
	PUT(g, GF_M_DEC_UTIL, GF_NVML_CALL(n, dec_util, g->dev, &u, &u2), u, &down);
	PUT(g, GF_M_PCIE_REPLAY, GF_NVML_CALL(n, pcie_replay, g->dev, &u), u, &down);
	/* Each of these samples the link for 20 ms inside NVML (wall time, not CPU). */
	if (!a->cfg.no_pcie_throughput) {
		PUT(g, GF_M_PCIE_TX,
		    GF_NVML_CALL(n, pcie_throughput, g->dev, GF_NVML_PCIE_UTIL_TX_BYTES, &u),
		    u * 1024.0, &down);
		PUT(g, GF_M_PCIE_RX,
		    GF_NVML_CALL(n, pcie_throughput, g->dev, GF_NVML_PCIE_UTIL_RX_BYTES, &u),
		    u * 1024.0, &down);
	}
	static const struct { int m, type, counter; } ecc[] = {
		{ GF_M_ECC_SBE_VOL, GF_NVML_MEMORY_ERROR_CORRECTED, GF_NVML_VOLATILE_ECC },
		{ GF_M_ECC_DBE_VOL, GF_NVML_MEMORY_ERROR_UNCORRECTED, GF_NVML_VOLATILE_ECC },
		{ GF_M_ECC_SBE_AGG, GF_NVML_MEMORY_ERROR_CORRECTED, GF_NVML_AGGREGATE_ECC },
		{ GF_M_ECC_DBE_AGG, GF_NVML_MEMORY_ERROR_UNCORRECTED, GF_NVML_AGGREGATE_ECC },
	};
	for (size_t k = 0; k < sizeof(ecc) / sizeof(ecc[0]); k++)
		PUT(g, ecc[k].m, GF_NVML_CALL(n, ecc_total, g->dev, ecc[k].type, ecc[k].counter, &ull),
		    ull, &down);
	unsigned corr, unc, pend, fail;
	r = GF_NVML_CALL(n, remapped_rows, g->dev, &corr, &unc, &pend, &fail);
	PUT(g, GF_M_COR_REMAPPED, r, corr, &down);
	PUT(g, GF_M_UNC_REMAPPED, r, unc, &down);
	PUT(g, GF_M_REMAP_FAILURE, r, fail, &down);
	/* pageCount 0 with no address buffer: "how many" (NVML's size query). */
	u = 0;
	PUT(g, GF_M_RETIRED_SBE,
	    GF_NVML_CALL(n, retired_pages, g->dev, GF_NVML_RETIRED_MULTIPLE_SBE, &u, NULL), u, &down);
	u = 0;
	PUT(g, GF_M_RETIRED_DBE,
	    GF_NVML_CALL(n, retired_pages, g->dev, GF_NVML_RETIRED_DBE, &u, NULL), u, &down);
	PUT(g, GF_M_RETIRED_PENDING, GF_NVML_CALL(n, retired_pending, g->dev, &si), si, &down);

	gf_nvml_field_value fv[3];
	memset(fv, 0, sizeof(fv));
	fv[0].fieldId = GF_NVML_FI_DEV_MEMORY_TEMP;
	fv[1].fieldId = GF_NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX;
	fv[2].fieldId = GF_NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX;
	r = GF_NVML_CALL(n, field_values, g->dev, 3, fv);
	if (r == GF_NVML_SUCCESS) {
		if (fv[0].nvmlReturn == GF_NVML_SUCCESS)
			PUT(g, GF_M_MEMORY_TEMP, r,
			    fv[0].valueType == GF_NVML_VALUE_TYPE_DOUBLE ? fv[0].value.dVal
									 : (double)fv[0].value.ullVal,
			    &down);
		if (fv[1].nvmlReturn == GF_NVML_SUCCESS && fv[2].nvmlReturn == GF_NVML_SUCCESS)
			PUT(g, GF_M_NVLINK_BW, r, fv[1].value.ullVal + fv[2].value.ullVal, &down);
	} else if (lost(r)) {
		down = r;
	}
	if (down)
		goto gone;
	read_mig(a, g, &down);
	if (down)
		goto gone;
	read_procs(a, g, &down);
	if (down)
		goto gone;
	group_pods(a, g);
	if (a->cfg.watchdog)
		watchdog_gpu(a, g);
	if (!g->identified)
		identify(a, g);
	g->up = true;
	if (!was_up)
		logf_("GPU %u (%s, %s) answers again", g->index, g->uuid, g->bus_id);
	return;
gone:
	g->have = 0;
	g->nprocs = 0;
	g->npods = 0;
	g->nmig = 0;
	g->mig_on = false;
	g->up = false;
	if (was_up)
		logf_("GPU %u (%s, %s) stopped answering: %s (%d); still serving the other GPUs",
		      g->index, g->uuid, g->bus_id, gf_nvml_strerror(n, down), down);
}

static void collect(gf_agent *a)
{
	if (a->pods)
		gf_pod_map_refresh(a->pods);
	if (!a->have_nvml)
		return;
	drain_events(a);
	for (unsigned i = 0; i < a->ngpus; i++)
		collect_gpu(a, &a->gpus[i]);
}

void gf_agent_maybe_collect_locked(gf_agent *a)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	long long age_ms = (now.tv_sec - a->last.tv_sec) * 1000LL +
			   (now.tv_nsec - a->last.tv_nsec) / 1000000LL;
	if (!a->collected || age_ms >= (long long)a->cfg.interval_ms) {
		collect(a);
		a->last = now;
		a->collected = true;
	}
}

static void put_value(struct gf_obuf *o, double v, bool is_float)
{
	if (is_float)
		gf_obuf_printf(o, "%f\n", v);
	else
		gf_obuf_printf(o, "%.0f\n", v);
}

static void put_pod_labels(struct gf_obuf *o, const struct gf_pod_ref *p)
{
	char c[300], ns[300], pod[600];
	gf_agent_escape_label(c, sizeof(c), p->container);
	gf_agent_escape_label(ns, sizeof(ns), p->ns);
	gf_agent_escape_label(pod, sizeof(pod), p->pod);
	gf_obuf_printf(o, ",container=\"%s\",namespace=\"%s\",pod=\"%s\"", c, ns, pod);
}

/* Framebuffer samples of each MIG device (dcgm-exporter's GPU_I_PROFILE /
 * GPU_I_ID series), per pod when pods use it; used = the pod's own memory
 * when several pods share the MIG device. */
static void render_mig(struct gf_obuf *o, const struct metric_def *d,
		       const struct gf_agent_gpu *g, bool used)
{
	const double mib = 1024.0 * 1024.0;
	for (unsigned k = 0; k < g->nmig; k++) {
		const struct gf_agent_mig *mg = &g->mig[k];
		if (!mg->have_mem)
			continue;
		double v = (double)(unsigned long long)((used ? mg->used : mg->free) / mib);
		if (!mg->npods) {
			gf_obuf_printf(o, "%s{%s%s} ", d->name, g->labels, mg->labels);
			put_value(o, v, false);
			continue;
		}
		for (unsigned p = 0; p < mg->npods; p++) {
			double pv = used && mg->npods > 1
					    ? (double)(mg->pods[p].used / (1024ULL * 1024ULL))
					    : v;
			gf_obuf_printf(o, "%s{%s%s", d->name, g->labels, mg->labels);
			put_pod_labels(o, &mg->pods[p].ref);
			gf_obuf_puts(o, "} ");
			put_value(o, pv, false);
		}
	}
}

/* The watchdog's view: every process of a share over its cap, how many,
 * and the kills. */
static void render_watchdog(gf_agent *a, struct gf_obuf *o)
{
	unsigned over = 0;
	gf_obuf_puts(o, "# HELP gpufleet_watchdog_over_share_process_memory_bytes GPU memory (NVML) of a "
			"process whose container's share (gpufleet.io/gpu-milli) uses more than its cap plus "
			"the slack.\n# TYPE gpufleet_watchdog_over_share_process_memory_bytes gauge\n");
	for (unsigned i = 0; i < a->ngpus; i++) {
		const struct gf_agent_gpu *g = &a->gpus[i];
		for (unsigned k = 0; g->up && k < g->nprocs; k++) {
			const struct gf_agent_proc *p = &g->procs[k];
			struct gf_pod_ref ref;
			if (!p->over)
				continue;
			over++;
			gf_obuf_printf(o, "gpufleet_watchdog_over_share_process_memory_bytes{%s,pid=\"%u\",share_milli=\"%d\"",
				       g->labels, p->pid, p->share);
			if (a->pods && gf_pod_map_lookup(a->pods, p->pid, &ref) == GF_OK)
				put_pod_labels(o, &ref);
			gf_obuf_printf(o, "} %llu\n", p->used);
		}
	}
	gf_obuf_printf(o, "# HELP gpufleet_watchdog_over_share_processes Processes of shares over their cap "
			  "at the last collection.\n# TYPE gpufleet_watchdog_over_share_processes gauge\n"
			  "gpufleet_watchdog_over_share_processes %u\n", over);
	gf_obuf_printf(o, "# HELP gpufleet_watchdog_kills_total Processes of shares over their cap killed "
			  "(--watchdog-kill), and kills that failed.\n# TYPE gpufleet_watchdog_kills_total counter\n"
			  "gpufleet_watchdog_kills_total{result=\"ok\"} %llu\n"
			  "gpufleet_watchdog_kills_total{result=\"error\"} %llu\n", a->wd_kills, a->wd_kill_errors);
}

static void render(gf_agent *a, struct gf_obuf *o)
{
	for (int m = 0; m < GF_M_COUNT; m++) {
		const struct metric_def *d = &metric_defs[m];
		bool per_mig = m == GF_M_FB_USED || m == GF_M_FB_FREE;
		bool any = false;
		for (unsigned i = 0; i < a->ngpus && !any; i++)
			any = a->gpus[i].up &&
			      ((a->gpus[i].have >> m & 1) || (per_mig && a->gpus[i].nmig));
		if (!any)
			continue;
		gf_obuf_printf(o, "# HELP %s %s\n# TYPE %s %s\n", d->name, d->help, d->name, d->type);
		for (unsigned i = 0; i < a->ngpus; i++) {
			const struct gf_agent_gpu *g = &a->gpus[i];
			if (per_mig && g->up)
				render_mig(o, d, g, m == GF_M_FB_USED);
			if (!g->up || !(g->have >> m & 1))
				continue;
			if (!g->npods) {
				gf_obuf_printf(o, "%s{%s} ", d->name, g->labels);
				put_value(o, g->val[m], d->is_float);
				continue;
			}
			for (unsigned k = 0; k < g->npods; k++) {
				double v = g->val[m];
				if (m == GF_M_FB_USED && g->npods > 1)
					v = (double)(g->pods[k].used / (1024ULL * 1024ULL));
				gf_obuf_printf(o, "%s{%s", d->name, g->labels);
				put_pod_labels(o, &g->pods[k].ref);
				gf_obuf_puts(o, "} ");
				put_value(o, v, d->is_float);
			}
		}
	}
	/* XID: always present for a GPU that answers (0 = "No Error"), with err_code/err_msg. */
	bool any = false;
	for (unsigned i = 0; i < a->ngpus; i++)
		any |= a->gpus[i].up;
	if (any) {
		gf_obuf_puts(o, "# HELP DCGM_FI_DEV_XID_ERRORS Value of the last XID error encountered.\n"
				"# TYPE DCGM_FI_DEV_XID_ERRORS gauge\n");
		for (unsigned i = 0; i < a->ngpus; i++) {
			const struct gf_agent_gpu *g = &a->gpus[i];
			if (!g->up)
				continue;
			unsigned nk = g->npods ? g->npods : 1;
			for (unsigned k = 0; k < nk; k++) {
				gf_obuf_printf(o, "DCGM_FI_DEV_XID_ERRORS{%s,err_code=\"%llu\",err_msg=\"%s\"",
					       g->labels, g->xid, gf_xid_message(g->xid));
				if (g->npods)
					put_pod_labels(o, &g->pods[k].ref);
				gf_obuf_printf(o, "} %llu\n", g->xid);
			}
		}
	}
	/* gpufleet's own: health per GPU, and the agent's view of NVML. */
	if (a->ngpus) {
		gf_obuf_puts(o, "# HELP gpufleet_gpu_up 1 if the GPU answered NVML at the last "
				"collection, 0 if it is lost or needs a reset.\n"
				"# TYPE gpufleet_gpu_up gauge\n");
		for (unsigned i = 0; i < a->ngpus; i++)
			gf_obuf_printf(o, "gpufleet_gpu_up{%s} %d\n", a->gpus[i].labels,
				       a->gpus[i].up ? 1 : 0);
		bool pods = false;
		for (unsigned i = 0; i < a->ngpus; i++) {
			pods |= a->gpus[i].up && a->gpus[i].npods;
			for (unsigned k = 0; k < a->gpus[i].nmig; k++)
				pods |= a->gpus[i].up && a->gpus[i].mig[k].npods;
		}
		if (pods)
			gf_obuf_puts(o, "# HELP gpufleet_gpu_process_memory_used_bytes GPU memory used "
					"by the processes of a pod (compute processes only).\n"
					"# TYPE gpufleet_gpu_process_memory_used_bytes gauge\n");
		for (unsigned i = 0; i < a->ngpus; i++) {
			const struct gf_agent_gpu *g = &a->gpus[i];
			for (unsigned k = 0; g->up && k < g->npods; k++) {
				gf_obuf_printf(o, "gpufleet_gpu_process_memory_used_bytes{%s", g->labels);
				put_pod_labels(o, &g->pods[k].ref);
				gf_obuf_printf(o, "} %llu\n", g->pods[k].used);
			}
			for (unsigned k = 0; g->up && k < g->nmig; k++)
				for (unsigned p = 0; p < g->mig[k].npods; p++) {
					gf_obuf_printf(o, "gpufleet_gpu_process_memory_used_bytes{%s%s",
						       g->labels, g->mig[k].labels);
					put_pod_labels(o, &g->mig[k].pods[p].ref);
					gf_obuf_printf(o, "} %llu\n", g->mig[k].pods[p].used);
				}
		}
	}
	if (a->cfg.watchdog)
		render_watchdog(a, o);
	gf_obuf_puts(o, "# HELP gpufleet_agent_nvml_loaded 1 if NVML is loaded and initialised.\n"
			"# TYPE gpufleet_agent_nvml_loaded gauge\n");
	gf_obuf_printf(o, "gpufleet_agent_nvml_loaded %d\n", a->have_nvml ? 1 : 0);
}

gf_err gf_agent_render_metrics(gf_agent *a, struct gf_obuf *out)
{
	pthread_mutex_lock(&a->lock);
	gf_agent_maybe_collect_locked(a);
	render(a, out);
	pthread_mutex_unlock(&a->lock);
	return gf_obuf_error(out);
}

unsigned gf_agent_gpu_count(gf_agent *a)
{
	pthread_mutex_lock(&a->lock);
	unsigned n = a->ngpus;
	pthread_mutex_unlock(&a->lock);
	return n;
}

unsigned gf_agent_gpus_up(gf_agent *a)
{
	pthread_mutex_lock(&a->lock);
	gf_agent_maybe_collect_locked(a);
	unsigned n = 0;
	for (unsigned i = 0; i < a->ngpus; i++)
		n += a->gpus[i].up;
	pthread_mutex_unlock(&a->lock);
	return n;
}

bool gf_agent_has_nvml(gf_agent *a)
{
	return a->have_nvml;
}

/* ---- MIG (agent/mig.h) ---- */

gf_err gf_agent_mig_apply(gf_agent *a, const struct gf_nodemig_layout *l, struct gf_nodemig_state *out)
{
	if (!a->have_nvml) {
		memset(out, 0, sizeof(*out));
		return GF_UNAVAILABLE;
	}
	pthread_mutex_lock(&a->lock);
	gf_err e = gf_nodemig_apply(&a->nvml, l, a->mig_in_use, a->mig_in_use_ud, out);
	if (!a->mig_last)
		a->mig_last = malloc(sizeof(*a->mig_last));
	if (a->mig_last)
		memcpy(a->mig_last, out, sizeof(*out));
	a->collected = false; /* the MIG devices changed: collect at the next render */
	pthread_mutex_unlock(&a->lock);
	return e;
}

void gf_agent_mig_state(gf_agent *a, struct gf_nodemig_state *out)
{
	memset(out, 0, sizeof(*out));
	if (!a->have_nvml)
		return;
	pthread_mutex_lock(&a->lock);
	gf_nodemig_read(&a->nvml, a->mig_in_use, a->mig_in_use_ud, out);
	/* The last apply's notes (kept instances, instances not made) stay
	 * until the next apply; in-use flags and UUIDs are NVML's now. */
	for (unsigned i = 0; a->mig_last && i < a->mig_last->n; i++) {
		const struct gf_nodemig_gpu_state *L = &a->mig_last->gpu[i];
		struct gf_nodemig_gpu_state *S = NULL;
		for (unsigned j = 0; j < out->n; j++)
			if (!strcmp(out->gpu[j].uuid, L->uuid))
				S = &out->gpu[j];
		for (unsigned k = 0; k < L->n; k++) {
			const struct gf_nodemig_inst *m = &L->inst[k];
			if (!m->unwanted && m->made)
				continue;
			if (!S && out->n < GF_NODEMIG_MAX_GPUS) {
				S = &out->gpu[out->n++];
				memset(S, 0, sizeof(*S));
				memcpy(S->uuid, L->uuid, sizeof(S->uuid));
			}
			if (!S)
				break;
			bool found = false;
			for (unsigned q = 0; q < S->n && !found; q++)
				if (S->inst[q].made && S->inst[q].start == m->start &&
				    !strcmp(S->inst[q].profile, m->profile) && m->unwanted) {
					S->inst[q].unwanted = true;
					memcpy(S->inst[q].reason, m->reason, sizeof(m->reason));
					found = true;
				}
			if (!found && !m->made && S->n < GF_NODEMIG_MAX_INST * 2)
				S->inst[S->n++] = *m;
		}
	}
	pthread_mutex_unlock(&a->lock);
}

void gf_agent_set_mig_in_use(gf_agent *a, bool (*fn)(void *ud, const char *mig_uuid), void *ud)
{
	pthread_mutex_lock(&a->lock);
	a->mig_in_use = fn;
	a->mig_in_use_ud = ud;
	pthread_mutex_unlock(&a->lock);
}
