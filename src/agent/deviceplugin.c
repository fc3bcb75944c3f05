/*
 * agent/deviceplugin.c - the kubelet device plugin (see deviceplugin.h).
 *
 * Two gRPC servers (agent/grpc.c) on <plugin_dir>/gpufleet-gpu.sock and
 * <plugin_dir>/gpufleet-gpu-milli.sock, each serving v1beta1.DevicePlugin
 * for one resource.  Messages are the protobuf-c code generated from the
 * upstream api.proto (agent/proto).  The device list is derived from the
 * agent's last NVML collection on demand: a GPU is Healthy while NVML
 * answers for it.  The list's version is a hash of (UUID, health) over the
 * GPUs, so a ListAndWatch stream resends exactly when that changes.
 * Allocate and GetPreferredAllocation are pure functions of the request
 * and that list (O(IDs x GPUs)); the only side effects are a share's limit
 * file and its fresh ledger.  A watch thread checks every second that both sockets are still
 * ours (the kubelet removes them when it restarts) and re-registers.
 */
#define _GNU_SOURCE 1 /* F_OFD_GETLK */
#include "agent/deviceplugin.h"
#include "agent/agent_impl.h"
#include "agent/dp_match.h"
#include "agent/dp_request.h"
#include "agent/grpc.h"
#include "core/hash.h"
#include "k8s/client.h"
#include "agent/proto/deviceplugin_v1beta1.pb-c.h"
#include "agent/proto/podresources_v1.pb-c.h"

#include <cjson/cJSON.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CDI_PREFIX "gpufleet.io/gpu="
#define MEMCAP_IN_CONTAINER "/usr/lib/gpufleet/libgpufleet-memcap.so"

struct gpu_view {
	char uuid[GF_NVML_UUID_LEN];
	bool healthy;
	bool mig_on;                  /* MIG mode: its MIG devices are served, not the GPU */
	unsigned long long mem_total; /* bytes; 0 unknown */
};

/* A MIG device of a MIG-mode GPU (NVIDIA's "mixed" strategy: one resource
 * nvidia.com/mig-<profile> per profile, device ID = the MIG UUID). */
struct mig_view {
	char uuid[GF_NVML_UUID_LEN];
	char profile[32];
	bool healthy; /* its GPU answers NVML */
};
#define MAX_MIG_VIEW (GF_AGENT_MAX_GPUS * GF_AGENT_MAX_MIG)
#define MAX_MIG_PLUGINS 8 /* distinct MIG profiles served (6 per model) */

struct plugin {
	struct gf_dp *dp;
	const char *resource, *sock_name;
	bool milli;
	gf_grpc_server *srv;
	struct gf_grpc_method methods[5];
	bool registered;
	bool mig;          /* a nvidia.com/mig-<profile> resource */
	char profile[32];  /* its MIG profile */
	char res_buf[80], sock_buf[80];
};

struct gf_dp {
	gf_agent *agent;
	char plugin_dir[512], memcap_dir[512], memcap_lib[512];
	struct plugin plugins[2 + MAX_MIG_PLUGINS];
	unsigned nplugins; /* 2 + the MIG profiles seen so far (watch thread adds) */
	pthread_t watcher;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stopping;
	/* The GPUs as of the watch thread's last look: the RPCs read this, never
	 * NVML, so an Allocate does not wait for a collection. */
	pthread_mutex_t view_mu;
	struct gpu_view view[GF_AGENT_MAX_GPUS];
	unsigned nview;
	struct mig_view migv[MAX_MIG_VIEW];
	unsigned nmigv;
	/* MIG devices held by containers (agent/mig.h's in-use callback): what
	 * Allocate gave out, and what the kubelet's pod-resources API listed at
	 * the last look.  Until the kubelet has listed once, everything Allocate
	 * ever gave counts as held (never destroy what may be in use). */
	pthread_mutex_t mig_mu;
	struct mig_alloc {
		char uuid[GF_NVML_UUID_LEN];
		time_t at; /* monotonic seconds of the Allocate */
	} mig_given[256];
	unsigned nmig_given, mig_given_next;
	char mig_listed[MAX_MIG_VIEW][GF_NVML_UUID_LEN];
	unsigned nmig_listed;
	bool mig_list_ok;
	/* Pod matching (NULL kc: off).  A claim is one container of a pending
	 * pod admitted for a resource; claims of pods no longer pending are
	 * dropped at the next listing. */
	gf_kube_client *kc;
	char node[256];
	pthread_mutex_t claim_mu;
	struct claim {
		char uid[64];
		int res;        /* 0 = nvidia.com/gpu, 1 = gpu-milli */
		unsigned used;
	} claims[512];
	unsigned nclaims;
	/* What Allocate admitted, for the reconciliation: a container's first
	 * device ID -> "namespace/name" (a ring: the oldest is overwritten). */
	struct attr {
		int res;
		char id[80], pod[320];
	} attrs[1024];
	unsigned nattrs, attr_next;
	/* Containers holding our devices per pod, as the kubelet's pod-resources
	 * API listed them at the last reconciliation (and once before serving):
	 * admissions this process did not see (before an agent restart) count
	 * as claims, so a restarted agent does not match a new container to a
	 * pod the kubelet has already admitted. */
	struct seen {
		int res;
		char pod[320]; /* namespace/name */
		unsigned containers;
	} seen[512];
	unsigned nseen;
	char podres[512];
	unsigned mismatched, unattributed; /* last reconciliation */
	/* Limit files this process wrote or found right (write_cap), with the
	 * identity of the file then: one stat tells they are still those
	 * files (a ring: the oldest is forgotten, costing one full check). */
	pthread_mutex_t cap_mu;
	struct capfile {
		char path[700];
		unsigned long long bytes;
		dev_t dev;
		ino_t ino;
		off_t size;
		struct timespec mtime;
	} caps[64];
	unsigned ncaps, cap_next;
	unsigned long long reconcile_ok, reconcile_err;
};

#define MAX_PENDING 256

/* From the agent (collecting if its values are older than its interval). */
static unsigned collect_view(gf_dp *dp, struct gpu_view *v, struct mig_view *mv, unsigned *nmv)
{
	gf_agent *a = dp->agent;
	unsigned n = 0;
	*nmv = 0;
	pthread_mutex_lock(&a->lock);
	gf_agent_maybe_collect_locked(a);
	for (unsigned i = 0; i < a->ngpus; i++) {
		struct gf_agent_gpu *g = &a->gpus[i];
		if (!g->identified)
			continue;
		memcpy(v[n].uuid, g->uuid, sizeof(v[n].uuid));
		v[n].healthy = g->up;
		v[n].mig_on = g->mig_on;
		v[n].mem_total = g->mem_total;
		n++;
		for (unsigned k = 0; g->mig_on && k < g->nmig && *nmv < MAX_MIG_VIEW; k++) {
			if (!g->mig[k].uuid[0] || !g->mig[k].profile[0])
				continue;
			struct mig_view *m = &mv[(*nmv)++];
			memcpy(m->uuid, g->mig[k].uuid, sizeof(m->uuid));
			memcpy(m->profile, g->mig[k].profile, sizeof(m->profile));
			m->healthy = g->up;
		}
	}
	pthread_mutex_unlock(&a->lock);
	return n;
}

static void refresh_view(gf_dp *dp)
{
	struct gpu_view v[GF_AGENT_MAX_GPUS];
	static _Thread_local struct mig_view mv[MAX_MIG_VIEW];
	unsigned nmv;
	unsigned n = collect_view(dp, v, mv, &nmv);
	pthread_mutex_lock(&dp->view_mu);
	memcpy(dp->view, v, sizeof(v[0]) * n);
	dp->nview = n;
	memcpy(dp->migv, mv, sizeof(mv[0]) * nmv);
	dp->nmigv = nmv;
	pthread_mutex_unlock(&dp->view_mu);
}

/* The MIG devices of profile (NULL: all) in the view; n at most max. */
static unsigned snapshot_mig(gf_dp *dp, const char *profile, struct mig_view *out, unsigned max)
{
	unsigned n = 0;
	pthread_mutex_lock(&dp->view_mu);
	for (unsigned i = 0; i < dp->nmigv && n < max; i++)
		if (!profile || strcmp(dp->migv[i].profile, profile) == 0)
			out[n++] = dp->migv[i];
	pthread_mutex_unlock(&dp->view_mu);
	return n;
}

static unsigned snapshot(gf_dp *dp, struct gpu_view *v)
{
	pthread_mutex_lock(&dp->view_mu);
	unsigned n = dp->nview;
	memcpy(v, dp->view, sizeof(v[0]) * n);
	pthread_mutex_unlock(&dp->view_mu);
	return n;
}

static uint64_t list_version(const struct gpu_view *v, unsigned n)
{
	uint64_t h = GF_FNV64_OFFSET;
	for (unsigned i = 0; i < n; i++)
		h = gf_fnv1a_byte(gf_fnv1a_str(h, v[i].uuid), (v[i].healthy ? 2u : 1u) + (v[i].mig_on ? 4u : 0u));
	return h | 1; /* never 0, the stream's start */
}

/* The unit number after "::": 0..999 in decimal, no leading zero. */
static bool parse_unit(const char *u, unsigned *unit)
{
	unsigned v = 0;
	size_t digits = strlen(u);
	if (digits == 0 || digits > 3 || (digits > 1 && u[0] == '0'))
		return false;
	for (const char *p = u; *p; p++) {
		if (*p < '0' || *p > '9')
			return false;
		v = v * 10 + (unsigned)(*p - '0');
	}
	if (v >= GF_DP_MILLI_PER_GPU)
		return false;
	*unit = v;
	return true;
}

bool gf_dp_parse_unit_id(const char *id, char *uuid, size_t uuidlen, unsigned *unit)
{
	const char *sep = strstr(id, "::");
	if (!sep || sep == id || (size_t)(sep - id) >= uuidlen || !parse_unit(sep + 2, unit))
		return false;
	memcpy(uuid, id, (size_t)(sep - id));
	uuid[sep - id] = '\0';
	return true;
}

static const struct gpu_view *find_gpu(const struct gpu_view *v, unsigned n, const char *uuid)
{
	for (unsigned i = 0; i < n; i++)
		if (strcmp(v[i].uuid, uuid) == 0)
			return &v[i];
	return NULL;
}

/* The GPU of view v[0..n) that share unit ID id ("<UUID>::<unit>") names,
 * with its unit; NULL when id is not of that form or names no GPU of the
 * view.  hint (may be NULL): the GPU of the previous ID, tried first with
 * one prefix comparison (a request's units are all of one GPU).  The
 * device plugin works on GPUs of the view, not on UUID strings. */
static const struct gpu_view *unit_gpu(const struct gpu_view *v, unsigned n, const struct gpu_view *hint,
				       const char *id, unsigned *unit)
{
	if (hint) {
		size_t l = strlen(hint->uuid);
		if (strncmp(id, hint->uuid, l) == 0 && id[l] == ':' && id[l + 1] == ':')
			return parse_unit(id + l + 2, unit) ? hint : NULL;
	}
	char uuid[GF_NVML_UUID_LEN];
	return gf_dp_parse_unit_id(id, uuid, sizeof(uuid), unit) ? find_gpu(v, n, uuid) : NULL;
}

/* Writes share unit k of GPU g's device ID into id (80 bytes). */
static void unit_id(char *id, const struct gpu_view *g, unsigned k)
{
	snprintf(id, 80, "%.56s::%u", g->uuid, k);
}

/* Packs msg into out. */
static int pack(const ProtobufCMessage *msg, struct gf_obuf *out, char *err, size_t errlen)
{
	size_t n = protobuf_c_message_get_packed_size(msg);
	uint8_t *buf = malloc(n ? n : 1);
	if (!buf) {
		snprintf(err, errlen, "out of memory");
		return GF_GRPC_RESOURCE_EXHAUSTED;
	}
	protobuf_c_message_pack(msg, buf);
	gf_obuf_append(out, buf, n);
	free(buf);
	if (out->err) {
		snprintf(err, errlen, "response larger than %u bytes", GF_GRPC_MAX_MESSAGE);
		return GF_GRPC_RESOURCE_EXHAUSTED;
	}
	return GF_GRPC_OK;
}

/* A bump allocator for unpacking one request into a caller's buffer: a
 * share's Allocate names up to 1,000 device IDs, each its own allocation
 * with protobuf-c's default allocator.  Past the buffer: malloc. */
struct arena {
	uint8_t *buf;
	size_t cap, used;
};

static void *arena_alloc(void *ud, size_t n)
{
	struct arena *a = ud;
	size_t need = (n + 15) & ~(size_t)15;
	if (need >= n && a->cap - a->used >= need) {
		void *p = a->buf + a->used;
		a->used += need;
		return p;
	}
	return malloc(n);
}

static void arena_free(void *ud, void *p)
{
	struct arena *a = ud;
	uintptr_t u = (uintptr_t)p, b = (uintptr_t)a->buf;
	if (u < b || u >= b + a->cap)
		free(p);
}

/* ---- pending pods ---- */

/* This node's Pending pods asking for pl's resource, oldest first; drops
 * the claims of pods no longer pending.  -1 when the API cannot tell. */
static int list_pending(struct plugin *pl, struct gf_dp_pod *pods, char *msg, size_t msglen)
{
	gf_dp *dp = pl->dp;
	char path[512], err[256];
	long status = 0;
	cJSON *doc = NULL;
	snprintf(path, sizeof(path), "/api/v1/pods?fieldSelector=spec.nodeName%%3D%.200s%%2Cstatus.phase%%3DPending",
		 dp->node);
	gf_err e = gf_kube_json(dp->kc, "GET", path, NULL, NULL, &status, &doc, err, sizeof(err));
	if (e || !doc) {
		snprintf(msg, msglen, "listing the pending pods of node %.200s: %s", dp->node,
			 e ? err : "no answer");
		cJSON_Delete(doc);
		return -1;
	}
	unsigned skipped;
	unsigned n = gf_dp_pods_decode(doc, pl->resource, pods, MAX_PENDING, &skipped);
	cJSON_Delete(doc);
	int res = pl->milli;
	pthread_mutex_lock(&dp->claim_mu);
	for (unsigned i = 0; i < dp->nclaims;) {
		bool pending = dp->claims[i].res != res;
		for (unsigned j = 0; j < n && !pending; j++)
			pending = strcmp(pods[j].uid, dp->claims[i].uid) == 0;
		if (pending)
			i++;
		else
			dp->claims[i] = dp->claims[--dp->nclaims];
	}
	pthread_mutex_unlock(&dp->claim_mu);
	return (int)n;
}

/* Containers of pod p admitted for resource res: by this process's
 * Allocate calls, or as the kubelet listed them, whichever is more (the two
 * count the same containers). */
static unsigned claimed(gf_dp *dp, const struct gf_dp_pod *p, int res)
{
	unsigned used = 0, listed = 0;
	char key[320];
	snprintf(key, sizeof(key), "%s/%s", p->ns, p->name);
	pthread_mutex_lock(&dp->claim_mu);
	for (unsigned i = 0; i < dp->nclaims; i++)
		if (dp->claims[i].res == res && strcmp(dp->claims[i].uid, p->uid) == 0)
			used = dp->claims[i].used;
	for (unsigned i = 0; i < dp->nseen; i++)
		if (dp->seen[i].res == res && strcmp(dp->seen[i].pod, key) == 0)
			listed = dp->seen[i].containers;
	pthread_mutex_unlock(&dp->claim_mu);
	return used > listed ? used : listed;
}

/* One more container of pod `me` listed with devices of res.  Caller holds
 * claim_mu. */
static void see(gf_dp *dp, int res, const char *me)
{
	unsigned i = 0;
	while (i < dp->nseen && !(dp->seen[i].res == res && strcmp(dp->seen[i].pod, me) == 0))
		i++;
	if (i == dp->nseen) {
		if (dp->nseen == sizeof(dp->seen) / sizeof(dp->seen[0]))
			return;
		dp->seen[i].res = res;
		snprintf(dp->seen[i].pod, sizeof(dp->seen[i].pod), "%s", me);
		dp->seen[i].containers = 0;
		dp->nseen++;
	}
	dp->seen[i].containers++;
}

static void claim(gf_dp *dp, const char *uid, int res)
{
	pthread_mutex_lock(&dp->claim_mu);
	unsigned i = 0;
	while (i < dp->nclaims && !(dp->claims[i].res == res && strcmp(dp->claims[i].uid, uid) == 0))
		i++;
	if (i == dp->nclaims && dp->nclaims < sizeof(dp->claims) / sizeof(dp->claims[0])) {
		snprintf(dp->claims[i].uid, sizeof(dp->claims[i].uid), "%s", uid);
		dp->claims[i].res = res;
		dp->claims[i].used = 0;
		dp->nclaims++;
	}
	if (i < dp->nclaims)
		dp->claims[i].used++;
	pthread_mutex_unlock(&dp->claim_mu);
}

/* Records that Allocate admitted the container holding ids[0..n) for pod.
 * Earlier admissions whose first ID is one of these are forgotten: the
 * kubelet hands a device to one container at a time, so they ended (their
 * pod was deleted) and would otherwise be reported as mismatched when a new
 * pod's container lists that ID. */
static void attribute(struct plugin *pl, const struct gpu_view *v, unsigned nv, char *const *ids, size_t n,
		      const char *pod)
{
	gf_dp *dp = pl->dp;
	/* Shares: units of one GPU (Allocate checked), compared as a bitmap
	 * (O(admissions + IDs), not every pair); whole GPUs: at most 64 IDs. */
	bool units[GF_DP_MILLI_PER_GPU] = { false };
	const struct gpu_view *gpu = NULL;
	unsigned u;
	for (size_t k = 0; pl->milli && k < n; k++) {
		const struct gpu_view *g = unit_gpu(v, nv, gpu, ids[k], &u);
		if (g) {
			units[u] = true;
			gpu = g;
		}
	}
	pthread_mutex_lock(&dp->claim_mu);
	for (unsigned i = 0; i < dp->nattrs; i++) {
		struct attr *old = &dp->attrs[i];
		if (old->res != pl->milli || !old->id[0])
			continue;
		bool reused = false;
		if (pl->milli)
			reused = gpu && unit_gpu(v, nv, gpu, old->id, &u) == gpu && units[u];
		for (size_t k = 0; !pl->milli && k < n && !reused; k++)
			reused = strcmp(old->id, ids[k]) == 0;
		if (reused)
			old->id[0] = '\0'; /* matches no ID */
	}
	const char *first_id = n ? ids[0] : "";
	struct attr *a = &dp->attrs[dp->attr_next];
	dp->attr_next = (dp->attr_next + 1) % (sizeof(dp->attrs) / sizeof(dp->attrs[0]));
	if (dp->nattrs < sizeof(dp->attrs) / sizeof(dp->attrs[0]))
		dp->nattrs++;
	a->res = pl->milli;
	snprintf(a->id, sizeof(a->id), "%s", first_id);
	snprintf(a->pod, sizeof(a->pod), "%s", pod);
	pthread_mutex_unlock(&dp->claim_mu);
}

/* The pod Allocate admitted for the container holding device ID id; NULL
 * if none.  Caller holds claim_mu. */
static const char *attributed(gf_dp *dp, int res, const char *id)
{
	for (unsigned i = 0; i < dp->nattrs; i++)
		if (dp->attrs[i].res == res && dp->attrs[i].id[0] && strcmp(dp->attrs[i].id, id) == 0)
			return dp->attrs[i].pod;
	return NULL;
}

/* One pass over the kubelet's pod-resources List: a container with our
 * devices is mismatched when a device of it was admitted for another pod,
 * unattributed when none was admitted by this process. */
static void reconcile(gf_dp *dp)
{
	char msg[512];
	struct gf_obuf resp;
	gf_obuf_init(&resp, 64u << 20);
	int st = gf_grpc_call(dp->podres, "/v1.PodResourcesLister/List", NULL, 0, &resp, 5000, msg, sizeof(msg));
	V1__ListPodResourcesResponse *r =
		st == GF_GRPC_OK ? v1__list_pod_resources_response__unpack(NULL, resp.len, (const uint8_t *)resp.data) : NULL;
	gf_obuf_release(&resp);
	if (!r) {
		pthread_mutex_lock(&dp->claim_mu);
		dp->reconcile_err++;
		pthread_mutex_unlock(&dp->claim_mu);
		return;
	}
	unsigned mism = 0, unattr = 0;
	pthread_mutex_lock(&dp->claim_mu);
	dp->nseen = 0;
	for (size_t p = 0; p < r->n_pod_resources; p++) {
		const V1__PodResources *pr = r->pod_resources[p];
		char me[320];
		snprintf(me, sizeof(me), "%s/%s", pr->namespace_, pr->name);
		for (size_t c = 0; c < pr->n_containers; c++) {
			for (size_t d = 0; d < pr->containers[c]->n_devices; d++) {
				const V1__ContainerDevices *cd = pr->containers[c]->devices[d];
				int res = strcmp(cd->resource_name, GF_DP_RESOURCE_GPU) == 0     ? 0
					  : strcmp(cd->resource_name, GF_DP_RESOURCE_MILLI) == 0 ? 1
												   : -1;
				if (res < 0 || cd->n_device_ids == 0)
					continue;
				see(dp, res, me);
				const char *who = NULL;
				bool other = false;
				for (size_t i = 0; i < cd->n_device_ids; i++) {
					const char *w = attributed(dp, res, cd->device_ids[i]);
					if (w && strcmp(w, me) != 0)
						other = true;
					if (w)
						who = w;
				}
				if (other) {
					mism++;
					fprintf(stderr, "gpufleet agent: device plugin: the kubelet lists devices (%s %s...) under "
							"pod %s; they were admitted for %s\n",
						cd->resource_name, cd->device_ids[0], me, who);
				} else if (!who) {
					unattr++;
				}
			}
		}
	}
	dp->mismatched = mism;
	dp->unattributed = unattr;
	dp->reconcile_ok++;
	pthread_mutex_unlock(&dp->claim_mu);
	v1__list_pod_resources_response__free_unpacked(r, NULL);
}

void gf_dp_render_metrics(gf_dp *dp, struct gf_obuf *out)
{
	if (!dp || !dp->kc)
		return;
	pthread_mutex_lock(&dp->claim_mu);
	gf_obuf_printf(out,
		       "# HELP gpufleet_deviceplugin_mismatched_containers Containers the kubelet's pod-resources API lists with devices the device plugin admitted for another pod (last reconciliation).\n"
		       "# TYPE gpufleet_deviceplugin_mismatched_containers gauge\n"
		       "gpufleet_deviceplugin_mismatched_containers %u\n"
		       "# HELP gpufleet_deviceplugin_unattributed_containers Containers with gpufleet devices that no Allocate of this agent process admitted (last reconciliation).\n"
		       "# TYPE gpufleet_deviceplugin_unattributed_containers gauge\n"
		       "gpufleet_deviceplugin_unattributed_containers %u\n"
		       "# HELP gpufleet_deviceplugin_reconciliations_total Reconciliations with the kubelet's pod-resources API, by result.\n"
		       "# TYPE gpufleet_deviceplugin_reconciliations_total counter\n"
		       "gpufleet_deviceplugin_reconciliations_total{result=\"ok\"} %llu\n"
		       "gpufleet_deviceplugin_reconciliations_total{result=\"error\"} %llu\n",
		       dp->mismatched, dp->unattributed, dp->reconcile_ok, dp->reconcile_err);
	pthread_mutex_unlock(&dp->claim_mu);
}

/* The oldest pending pod with a container left to admit whose assignment
 * is exactly these GPUs and units; extra[k] counts claims taken earlier in
 * the same call.  -1 if none. */
static int find_pod(struct plugin *pl, const struct gf_dp_pod *pods, unsigned n, const unsigned *extra,
		    const char *const *uuids, unsigned nu, unsigned units)
{
	unsigned used[MAX_PENDING];
	for (unsigned k = 0; k < n; k++)
		used[k] = claimed(pl->dp, &pods[k], pl->milli) + extra[k];
	return gf_dp_find_pod(pods, n, used, uuids, nu, units);
}

/* ---- GetDevicePluginOptions, PreStartContainer ---- */

static int h_options(void *ud, const uint8_t *req, size_t len, struct gf_obuf *out, char *msg, size_t msglen)
{
	(void)ud;
	(void)req;
	(void)len;
	V1beta1__DevicePluginOptions o = V1BETA1__DEVICE_PLUGIN_OPTIONS__INIT;
	o.get_preferred_allocation_available = 1;
	return pack(&o.base, out, msg, msglen);
}

static int h_prestart(void *ud, const uint8_t *req, size_t len, struct gf_obuf *out, char *msg, size_t msglen)
{
	(void)ud;
	(void)req;
	(void)len;
	V1beta1__PreStartContainerResponse r = V1BETA1__PRE_START_CONTAINER_RESPONSE__INIT;
	return pack(&r.base, out, msg, msglen);
}

/* ---- ListAndWatch ---- */

/* A MIG resource: its profile's MIG devices, ID = MIG UUID. */
static bool s_list_mig(struct plugin *pl, uint64_t *version, struct gf_obuf *out)
{
	static _Thread_local struct mig_view mv[MAX_MIG_VIEW];
	unsigned n = snapshot_mig(pl->dp, pl->profile, mv, MAX_MIG_VIEW);
	uint64_t ver = GF_FNV64_OFFSET;
	for (unsigned i = 0; i < n; i++)
		ver = gf_fnv1a_byte(gf_fnv1a_str(ver, mv[i].uuid), mv[i].healthy ? 2u : 1u);
	ver |= 1;
	if (ver == *version)
		return false;
	V1beta1__Device *devs = calloc(n ? n : 1, sizeof(*devs));
	V1beta1__Device **ptrs = calloc(n ? n : 1, sizeof(*ptrs));
	bool ok = devs && ptrs;
	for (unsigned i = 0; ok && i < n; i++) {
		v1beta1__device__init(&devs[i]);
		devs[i].id = mv[i].uuid;
		devs[i].health = mv[i].healthy ? "Healthy" : "Unhealthy";
		ptrs[i] = &devs[i];
	}
	if (ok) {
		V1beta1__ListAndWatchResponse r = V1BETA1__LIST_AND_WATCH_RESPONSE__INIT;
		char err[64];
		r.n_devices = n;
		r.devices = ptrs;
		ok = pack(&r.base, out, err, sizeof(err)) == GF_GRPC_OK;
	}
	free(devs);
	free(ptrs);
	if (ok)
		*version = ver;
	return ok;
}

static bool s_list(void *ud, const uint8_t *req, size_t len, uint64_t *version, struct gf_obuf *out)
{
	struct plugin *pl = ud;
	struct gpu_view v[GF_AGENT_MAX_GPUS];
	(void)req;
	(void)len;
	if (pl->mig)
		return s_list_mig(pl, version, out);
	unsigned n = snapshot(pl->dp, v);
	uint64_t ver = list_version(v, n);
	if (ver == *version)
		return false;
	/* A MIG-mode GPU is served as its MIG devices only (NVIDIA's mixed strategy). */
	unsigned kept = 0;
	for (unsigned i = 0; i < n; i++)
		if (!v[i].mig_on)
			v[kept++] = v[i];
	n = kept;
	unsigned per = pl->milli ? GF_DP_MILLI_PER_GPU : 1;
	size_t total = (size_t)n * per;
	V1beta1__Device *devs = calloc(total ? total : 1, sizeof(*devs));
	V1beta1__Device **ptrs = calloc(total ? total : 1, sizeof(*ptrs));
	char *ids = calloc(total ? total : 1, 80);
	bool ok = devs && ptrs && ids;
	for (unsigned g = 0; ok && g < n; g++) {
		for (unsigned k = 0; k < per; k++) {
			size_t i = (size_t)g * per + k;
			char *id = ids + i * 80;
			if (pl->milli)
				unit_id(id, &v[g], k);
			else
				snprintf(id, 80, "%.63s", v[g].uuid);
			v1beta1__device__init(&devs[i]);
			devs[i].id = id;
			devs[i].health = v[g].healthy ? "Healthy" : "Unhealthy";
			ptrs[i] = &devs[i];
		}
	}
	if (ok) {
		V1beta1__ListAndWatchResponse r = V1BETA1__LIST_AND_WATCH_RESPONSE__INIT;
		char err[64];
		r.n_devices = total;
		r.devices = ptrs;
		ok = pack(&r.base, out, err, sizeof(err)) == GF_GRPC_OK;
	}
	free(devs);
	free(ptrs);
	free(ids);
	if (ok)
		*version = ver;
	return ok;
}

/* ---- GetPreferredAllocation ---- */

/* Whole GPUs: must_include first, then the available ones in list order.
 * Shares: all units from one GPU: must_include's GPU, else the GPU with the
 * fewest available units that still has size (best fit, ties by UUID). */
static void prefer(const struct plugin *pl, const struct gpu_view *v, unsigned nv,
		   const V1beta1__ContainerPreferredAllocationRequest *rq, V1beta1__ContainerPreferredAllocationResponse *rs,
		   char **pick)
{
	size_t want = rq->allocation_size > 0 ? (size_t)rq->allocation_size : 0, np = 0;
	for (size_t i = 0; i < rq->n_must_include_deviceids && np < want; i++)
		pick[np++] = rq->must_include_deviceids[i];
	const struct gpu_view *gpu = NULL;
	unsigned unit;
	if (pl->milli) {
		if (np > 0)
			gpu = unit_gpu(v, nv, NULL, pick[0], &unit);
		if (!gpu) {
			/* Available units per GPU of the view, in one pass. */
			size_t cnt[GF_AGENT_MAX_GPUS] = { 0 }, best = SIZE_MAX;
			const struct gpu_view *hint = NULL;
			for (size_t i = 0; i < rq->n_available_deviceids; i++) {
				const struct gpu_view *g = unit_gpu(v, nv, hint, rq->available_deviceids[i], &unit);
				if (g)
					cnt[g - v]++, hint = g;
			}
			for (unsigned k = 0; k < nv; k++)
				if (cnt[k] > 0 && cnt[k] >= want &&
				    (cnt[k] < best || (cnt[k] == best && strcmp(v[k].uuid, gpu->uuid) < 0))) {
					best = cnt[k];
					gpu = &v[k];
				}
		}
	}
	for (size_t i = 0; i < rq->n_available_deviceids && np < want; i++) {
		char *id = rq->available_deviceids[i];
		bool dup = false;
		for (size_t j = 0; j < np && !dup; j++)
			dup = strcmp(pick[j], id) == 0;
		if (dup)
			continue;
		if (pl->milli && gpu && unit_gpu(v, nv, gpu, id, &unit) != gpu)
			continue;
		pick[np++] = id;
	}
	rs->n_deviceids = np;
	rs->deviceids = pick;
}

/* The scheduler's choice for this request: the oldest pending pod with a
 * container left whose assigned GPUs (whole) or GPU (share of exactly
 * `size` units) are all available.  True with pick filled. */
static bool prefer_assigned(struct plugin *pl, const struct gpu_view *v, unsigned nv,
			    const V1beta1__ContainerPreferredAllocationRequest *rq, const struct gf_dp_pod *pods, unsigned n,
			    unsigned *extra, V1beta1__ContainerPreferredAllocationResponse *rs, char **pick)
{
	size_t want = rq->allocation_size > 0 ? (size_t)rq->allocation_size : 0;
	unsigned unit;
	for (unsigned k = 0; k < n; k++) {
		const struct gf_dp_pod *p = &pods[k];
		if (claimed(pl->dp, p, pl->milli) + extra[k] >= p->containers)
			continue;
		size_t np = 0;
		if (pl->milli) {
			const struct gpu_view *pg = p->nuuids == 1 ? find_gpu(v, nv, p->uuids[0]) : NULL;
			if (!pg || p->milli != want)
				continue;
			for (size_t i = 0; i < rq->n_must_include_deviceids && np < want; i++)
				if (unit_gpu(v, nv, pg, rq->must_include_deviceids[i], &unit) == pg)
					pick[np++] = rq->must_include_deviceids[i];
			if (np != rq->n_must_include_deviceids)
				continue;
			for (size_t i = 0; i < rq->n_available_deviceids && np < want; i++) {
				char *id = rq->available_deviceids[i];
				bool dup = false;
				for (size_t j = 0; j < np && !dup; j++)
					dup = strcmp(pick[j], id) == 0;
				if (!dup && unit_gpu(v, nv, pg, id, &unit) == pg)
					pick[np++] = id;
			}
		} else {
			if (p->milli != 1000 || p->nuuids != want)
				continue;
			for (unsigned u = 0; u < p->nuuids; u++)
				for (size_t i = 0; i < rq->n_available_deviceids; i++)
					if (strcmp(rq->available_deviceids[i], p->uuids[u]) == 0) {
						pick[np++] = rq->available_deviceids[i];
						break;
					}
		}
		if (np == want) {
			extra[k]++;
			rs->n_deviceids = np;
			rs->deviceids = pick;
			return true;
		}
	}
	return false;
}

static int h_preferred(void *ud, const uint8_t *req, size_t len, struct gf_obuf *out, char *msg, size_t msglen)
{
	struct plugin *pl = ud;
	struct gf_dp_pod *pods = NULL;
	unsigned extra[MAX_PENDING] = { 0 };
	int npods = 0;
	if (!gf_dp_request_strings_ok(req, len, &v1beta1__preferred_allocation_request__descriptor,
				      "GetPreferredAllocation", msg, msglen))
		return GF_GRPC_INVALID_ARGUMENT;
	if (pl->dp->kc && !pl->mig) {
		pods = malloc(sizeof(*pods) * MAX_PENDING);
		npods = pods ? list_pending(pl, pods, msg, msglen) : -1;
		if (npods < 0) {
			free(pods);
			if (!msg[0])
				snprintf(msg, msglen, "out of memory");
			return GF_GRPC_UNAVAILABLE;
		}
	}
	struct gpu_view v[GF_AGENT_MAX_GPUS];
	unsigned nv = snapshot(pl->dp, v);
	if (pl->mig) {
		static _Thread_local struct mig_view mv[MAX_MIG_VIEW];
		nv = snapshot_mig(pl->dp, pl->profile, mv, MAX_MIG_VIEW);
	}
	V1beta1__PreferredAllocationRequest *rq = v1beta1__preferred_allocation_request__unpack(NULL, len, req);
	if (!rq)
		free(pods);
	if (!rq) {
		snprintf(msg, msglen, "GetPreferredAllocation: the request is not a valid PreferredAllocationRequest");
		return GF_GRPC_INVALID_ARGUMENT;
	}
	if (!gf_dp_preferred_ok(rq, pl->milli ? (size_t)nv * GF_DP_MILLI_PER_GPU : nv, msg, msglen)) {
		free(pods);
		v1beta1__preferred_allocation_request__free_unpacked(rq, NULL);
		return GF_GRPC_INVALID_ARGUMENT;
	}
	size_t nc = rq->n_container_requests;
	V1beta1__ContainerPreferredAllocationResponse *rs = calloc(nc ? nc : 1, sizeof(*rs));
	V1beta1__ContainerPreferredAllocationResponse **rp = calloc(nc ? nc : 1, sizeof(*rp));
	char ***picks = calloc(nc ? nc : 1, sizeof(*picks));
	int st = rs && rp && picks ? GF_GRPC_OK : GF_GRPC_RESOURCE_EXHAUSTED;
	for (size_t c = 0; st == GF_GRPC_OK && c < nc; c++) {
		V1beta1__ContainerPreferredAllocationRequest *cr = rq->container_requests[c];
		v1beta1__container_preferred_allocation_response__init(&rs[c]);
		rp[c] = &rs[c];
		picks[c] = calloc(cr->n_available_deviceids + cr->n_must_include_deviceids + 1, sizeof(char *));
		if (!picks[c]) {
			st = GF_GRPC_RESOURCE_EXHAUSTED;
			break;
		}
		if (!pods || !prefer_assigned(pl, v, nv, cr, pods, (unsigned)npods, extra, &rs[c], picks[c]))
			prefer(pl, v, nv, cr, &rs[c], picks[c]);
	}
	if (st == GF_GRPC_OK) {
		V1beta1__PreferredAllocationResponse r = V1BETA1__PREFERRED_ALLOCATION_RESPONSE__INIT;
		r.n_container_responses = nc;
		r.container_responses = rp;
		st = pack(&r.base, out, msg, msglen);
	} else {
		snprintf(msg, msglen, "out of memory");
	}
	for (size_t c = 0; picks && c < nc; c++)
		free(picks[c]);
	free(picks);
	free(rs);
	free(rp);
	free(pods);
	v1beta1__preferred_allocation_request__free_unpacked(rq, NULL);
	return st;
}

/* ---- Allocate ---- */

/* The strings one container response points to (freed after packing). */
struct cresp {
	V1beta1__ContainerAllocateResponse r;
	V1beta1__ContainerAllocateResponse__EnvsEntry env[4], *envp[4];
	V1beta1__CDIDevice cdi[GF_AGENT_MAX_GPUS], *cdip[GF_AGENT_MAX_GPUS];
	V1beta1__Mount mnt[3], *mntp[3];
	V1beta1__ContainerAllocateResponse__AnnotationsEntry ann, *annp[1];
	const struct gpu_view *gpus[GF_AGENT_MAX_GPUS]; /* in the Allocate's view snapshot */
	char pod[320];
	char cdi_names[GF_AGENT_MAX_GPUS][GF_NVML_UUID_LEN + 32];
	char visible[GF_AGENT_MAX_GPUS * (GF_NVML_UUID_LEN + 1)];
	char milli[16], limit_path[700], ledger_dir[700];
};

static void add_env(struct cresp *c, const char *k, char *v)
{
	size_t i = c->r.n_envs++;
	v1beta1__container_allocate_response__envs_entry__init(&c->env[i]);
	c->env[i].key = (char *)k;
	c->env[i].value = v;
	c->envp[i] = &c->env[i];
	c->r.envs = c->envp;
}

static void add_mount(struct cresp *c, const char *container, char *host, bool ro)
{
	size_t i = c->r.n_mounts++;
	v1beta1__mount__init(&c->mnt[i]);
	c->mnt[i].container_path = (char *)container;
	c->mnt[i].host_path = host;
	c->mnt[i].read_only = ro;
	c->mntp[i] = &c->mnt[i];
	c->r.mounts = c->mntp;
}

static void add_gpu(struct cresp *c, const struct gpu_view *g)
{
	size_t i = c->r.n_cdi_devices++;
	snprintf(c->cdi_names[i], sizeof(c->cdi_names[i]), CDI_PREFIX "%.*s", (int)sizeof(g->uuid), g->uuid);
	v1beta1__cdidevice__init(&c->cdi[i]);
	c->cdi[i].name = c->cdi_names[i];
	c->cdip[i] = &c->cdi[i];
	c->r.cdi_devices = c->cdip;
	c->gpus[i] = g;
	size_t l = strlen(c->visible);
	snprintf(c->visible + l, sizeof(c->visible) - l, "%s%.*s", l ? "," : "", (int)sizeof(g->uuid), g->uuid);
}

/* True when the file at path holds exactly text (len bytes). */
static bool file_holds(const char *path, const char *text, size_t len)
{
	char buf[512];
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	size_t n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	return n == len && memcmp(buf, text, len) == 0;
}

static bool same_file(const struct capfile *k, const struct stat *st)
{
	return k->dev == st->st_dev && k->ino == st->st_ino && k->size == st->st_size &&
	       k->mtime.tv_sec == st->st_mtim.tv_sec && k->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

/* Was path, holding `bytes`, written or checked by this process and is it
 * still that file (same inode, size, mtime)?  One stat. */
static bool cap_known(gf_dp *dp, const char *path, unsigned long long bytes)
{
	struct stat st;
	bool known = false;
	if (stat(path, &st) != 0)
		return false;
	pthread_mutex_lock(&dp->cap_mu);
	for (unsigned i = 0; i < dp->ncaps && !known; i++)
		known = dp->caps[i].bytes == bytes && strcmp(dp->caps[i].path, path) == 0 && same_file(&dp->caps[i], &st);
	pthread_mutex_unlock(&dp->cap_mu);
	return known;
}

static void cap_remember(gf_dp *dp, const char *path, unsigned long long bytes)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return;
	pthread_mutex_lock(&dp->cap_mu);
	unsigned i = 0;
	while (i < dp->ncaps && strcmp(dp->caps[i].path, path) != 0)
		i++;
	if (i == dp->ncaps) {
		i = dp->cap_next;
		dp->cap_next = (dp->cap_next + 1) % (sizeof(dp->caps) / sizeof(dp->caps[0]));
		if (dp->ncaps < sizeof(dp->caps) / sizeof(dp->caps[0]))
			dp->ncaps++;
	}
	struct capfile *k = &dp->caps[i];
	snprintf(k->path, sizeof(k->path), "%s", path);
	k->bytes = bytes;
	k->dev = st.st_dev;
	k->ino = st.st_ino;
	k->size = st.st_size;
	k->mtime = st.st_mtim;
	pthread_mutex_unlock(&dp->cap_mu);
}

int gf_dp_fresh_ledger(const char *ledger_dir, char *err, size_t err_len)
{
	static _Atomic unsigned seq;
	struct stat st;
	int rc = -1;
	int dfd = -1;
	for (int tries = 0; dfd < 0; tries++) {
		dfd = open(ledger_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dfd < 0 && errno == ENOENT && (mkdir(ledger_dir, 0755) == 0 || errno == EEXIST))
			dfd = open(ledger_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dfd < 0) {
			snprintf(err, err_len, "%s: open: %s", ledger_dir, strerror(errno));
			return -1;
		}
		if (fstat(dfd, &st) == 0 && (st.st_uid == geteuid() || fchown(dfd, geteuid(), getegid()) == 0) &&
		    ((st.st_mode & 07777) == 0755 || fchmod(dfd, 0755) == 0))
			break;
		/* A tenant that ran as root gave it away and this process may
		 * not take it back (no CAP_CHOWN): set it aside, start anew. */
		char aside[800];
		snprintf(aside, sizeof(aside), "%s.stale.%ld.%u", ledger_dir, (long)getpid(), atomic_fetch_add(&seq, 1));
		int e = errno;
		close(dfd);
		dfd = -1;
		if (tries > 0 || rename(ledger_dir, aside) != 0 || mkdir(ledger_dir, 0755) != 0) {
			snprintf(err, err_len, "%s: owner or mode: %s", ledger_dir, strerror(tries > 0 ? e : errno));
			return -1;
		}
	}
	/* Never used since it was made (a container's first process sizes
	 * it at once) and no lock on it: as fresh as a new one. */
	if (fstatat(dfd, "ledger", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) && st.st_size == 0 &&
	    st.st_nlink == 1 && st.st_uid == geteuid() && (st.st_mode & 07777) == 0666) {
		int fd = openat(dfd, "ledger", O_RDWR | O_NOFOLLOW | O_CLOEXEC);
		struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0, .l_pid = 0 };
		struct stat st2;
		bool fresh = fd >= 0 && fstat(fd, &st2) == 0 && st2.st_ino == st.st_ino && st2.st_size == 0 &&
			     fcntl(fd, F_OFD_GETLK, &fl) == 0 && fl.l_type == F_UNLCK;
		if (fd >= 0)
			close(fd);
		if (fresh) {
			rc = 0;
			goto out_dir;
		}
	}
	/* Unlink and create anew (a rename over it costs ~5x as much on ext4);
	 * O_EXCL|O_NOFOLLOW: a link planted in between is not followed. */
	int fd = -1;
	for (int tries = 0; fd < 0 && tries < 3; tries++) {
		if (unlinkat(dfd, "ledger", 0) != 0 && errno != ENOENT)
			break;
		fd = openat(dfd, "ledger", O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
	}
	if (fd < 0) {
		snprintf(err, err_len, "%s/ledger: %s", ledger_dir, strerror(errno));
		goto out_dir;
	}
	/* Every user of the container maps it, whatever the umask. */
	bool ok = fchmod(fd, 0666) == 0;
	close(fd);
	if (!ok) {
		snprintf(err, err_len, "%s/ledger: chmod: %s", ledger_dir, strerror(errno));
		goto out_dir;
	}
	rc = 0;
out_dir:
	close(dfd);
	return rc;
}

/* The share's limit file and ledger folder under memcap_dir.  A folder is
 * named by GPU, first unit and size; every Allocate gets a fresh ledger in
 * it (gf_dp_fresh_ledger: a container's restart keeps the allocation and
 * its ledger, where the slots of its dead processes are reaped; the next
 * allocation of the same units starts from nothing).  A limit file
 * this process wrote or checked before and that is still the same file
 * costs one stat; another is read and compared, and written only when its
 * text differs (writing cost ~0.45 ms of a share's Allocate on this
 * project's machine, reading and comparing ~12 us median; bench/dp-allocate.sh). */
static int write_cap(gf_dp *dp, struct cresp *c, const struct gpu_view *g, unsigned first, size_t units,
		     char *msg, size_t msglen)
{
	char dir[600], text[256];
	snprintf(dir, sizeof(dir), "%.400s/%.96s-u%u-n%zu", dp->memcap_dir, g->uuid, first, units);
	snprintf(c->ledger_dir, sizeof(c->ledger_dir), "%s/ledger", dir);
	snprintf(c->limit_path, sizeof(c->limit_path), "%s/limit", dir);
	unsigned long long cap = g->mem_total / GF_DP_MILLI_PER_GPU * units;
	int tn = snprintf(text, sizeof(text), "# gpufleet agent: %zu/%u of %.96s\nlimit_bytes = %llu\n", units,
			  GF_DP_MILLI_PER_GPU, g->uuid, cap);
	struct stat st;
	bool fits = tn > 0 && (size_t)tn < sizeof(text);
	bool ready = fits && cap_known(dp, c->limit_path, cap);
	if (!ready && fits && stat(dir, &st) == 0 && file_holds(c->limit_path, text, (size_t)tn)) {
		ready = true;
		cap_remember(dp, c->limit_path, cap);
	}
	if (!ready && mkdir(dir, 0755) != 0 && errno != EEXIST) {
		snprintf(msg, msglen, "memory cap: %s: %s", dir, strerror(errno));
		return GF_GRPC_INTERNAL;
	}
	char err[800];
	if (gf_dp_fresh_ledger(c->ledger_dir, err, sizeof(err)) != 0) {
		snprintf(msg, msglen, "memory cap: %s", err);
		return GF_GRPC_INTERNAL;
	}
	if (!ready) {
		FILE *f = fopen(c->limit_path, "w");
		bool ok = f && fputs(text, f) >= 0;
		if (f && fclose(f) != 0)
			ok = false;
		if (!ok) {
			snprintf(msg, msglen, "memory cap: %s: %s", c->limit_path, strerror(errno));
			return GF_GRPC_INTERNAL;
		}
		cap_remember(dp, c->limit_path, cap);
	}
	add_mount(c, "/etc/gpufleet/memcap/limit", c->limit_path, true);
	add_mount(c, "/var/run/gpufleet/memcap", c->ledger_dir, false);
	add_mount(c, MEMCAP_IN_CONTAINER, dp->memcap_lib, true);
	add_env(c, "LD_PRELOAD", MEMCAP_IN_CONTAINER);
	return GF_GRPC_OK;
}

/* MIG devices given to containers (the in-use callback's memory). */
static void mig_given(gf_dp *dp, const char *uuid)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	pthread_mutex_lock(&dp->mig_mu);
	struct mig_alloc *m = &dp->mig_given[dp->mig_given_next];
	dp->mig_given_next = (dp->mig_given_next + 1) % (sizeof(dp->mig_given) / sizeof(dp->mig_given[0]));
	if (dp->nmig_given < sizeof(dp->mig_given) / sizeof(dp->mig_given[0]))
		dp->nmig_given++;
	snprintf(m->uuid, sizeof(m->uuid), "%s", uuid);
	m->at = t.tv_sec;
	pthread_mutex_unlock(&dp->mig_mu);
}

/* agent/mig.h's in-use callback: a container holds MIG device uuid when the
 * kubelet listed it at the last look, or Allocate gave it out less than 30 s
 * ago (the kubelet may not list it yet), or ever, until the kubelet has
 * answered once. */
static bool mig_held(void *ud, const char *uuid)
{
	gf_dp *dp = ud;
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	bool held = false;
	pthread_mutex_lock(&dp->mig_mu);
	for (unsigned i = 0; i < dp->nmig_listed && !held; i++)
		held = strcmp(dp->mig_listed[i], uuid) == 0;
	for (unsigned i = 0; i < dp->nmig_given && !held; i++)
		held = strcmp(dp->mig_given[i].uuid, uuid) == 0 && (!dp->mig_list_ok || t.tv_sec - dp->mig_given[i].at < 30);
	pthread_mutex_unlock(&dp->mig_mu);
	return held;
}

/* The MIG devices the kubelet's pod-resources API lists under containers. */
static void mig_list(gf_dp *dp)
{
	char msg[256];
	struct gf_obuf resp;
	gf_obuf_init(&resp, 64u << 20);
	int st = gf_grpc_call(dp->podres, "/v1.PodResourcesLister/List", NULL, 0, &resp, 5000, msg, sizeof(msg));
	V1__ListPodResourcesResponse *r =
		st == GF_GRPC_OK ? v1__list_pod_resources_response__unpack(NULL, resp.len, (const uint8_t *)resp.data) : NULL;
	gf_obuf_release(&resp);
	if (!r)
		return;
	pthread_mutex_lock(&dp->mig_mu);
	dp->nmig_listed = 0;
	for (size_t p = 0; p < r->n_pod_resources; p++)
		for (size_t c = 0; c < r->pod_resources[p]->n_containers; c++)
			for (size_t d = 0; d < r->pod_resources[p]->containers[c]->n_devices; d++) {
				const V1__ContainerDevices *cd = r->pod_resources[p]->containers[c]->devices[d];
				if (strncmp(cd->resource_name, GF_DP_RESOURCE_MIG_PREFIX, strlen(GF_DP_RESOURCE_MIG_PREFIX)))
					continue;
				for (size_t i = 0; i < cd->n_device_ids && dp->nmig_listed < MAX_MIG_VIEW; i++)
					snprintf(dp->mig_listed[dp->nmig_listed++], GF_NVML_UUID_LEN, "%s", cd->device_ids[i]);
			}
	dp->mig_list_ok = true;
	pthread_mutex_unlock(&dp->mig_mu);
	v1__list_pod_resources_response__free_unpacked(r, NULL);
}

/* A MIG resource's container: each ID a MIG device of the plugin's profile. */
static int allocate_mig(struct plugin *pl, const V1beta1__ContainerAllocateRequest *rq, struct cresp *c, char *msg,
			size_t msglen)
{
	static _Thread_local struct mig_view mv[MAX_MIG_VIEW];
	unsigned n = snapshot_mig(pl->dp, pl->profile, mv, MAX_MIG_VIEW);
	if (rq->n_devices_ids > GF_AGENT_MAX_GPUS) {
		snprintf(msg, msglen, "Allocate: %zu MIG devices asked, more than %d", rq->n_devices_ids, GF_AGENT_MAX_GPUS);
		return GF_GRPC_INVALID_ARGUMENT;
	}
	for (size_t i = 0; i < rq->n_devices_ids; i++) {
		const struct mig_view *m = NULL;
		for (unsigned k = 0; k < n && !m; k++)
			if (strcmp(mv[k].uuid, rq->devices_ids[i]) == 0)
				m = &mv[k];
		for (size_t j = 0; j < i; j++)
			if (strcmp(rq->devices_ids[i], rq->devices_ids[j]) == 0) {
				snprintf(msg, msglen, "Allocate: device ID '%.64s' given twice", rq->devices_ids[i]);
				return GF_GRPC_INVALID_ARGUMENT;
			}
		if (!m) {
			snprintf(msg, msglen, "Allocate: unknown device ID '%.64s' for %s (not a %s MIG device of this node)",
				 rq->devices_ids[i], pl->resource, pl->profile);
			return GF_GRPC_INVALID_ARGUMENT;
		}
		if (!m->healthy) {
			snprintf(msg, msglen, "Allocate: MIG device %s's GPU is unhealthy", m->uuid);
			return GF_GRPC_FAILED_PRECONDITION;
		}
		size_t k = c->r.n_cdi_devices++;
		snprintf(c->cdi_names[k], sizeof(c->cdi_names[k]), CDI_PREFIX "%.*s", (int)sizeof(m->uuid), m->uuid);
		v1beta1__cdidevice__init(&c->cdi[k]);
		c->cdi[k].name = c->cdi_names[k];
		c->cdip[k] = &c->cdi[k];
		c->r.cdi_devices = c->cdip;
		c->gpus[k] = NULL;
		size_t l = strlen(c->visible);
		snprintf(c->visible + l, sizeof(c->visible) - l, "%s%.*s", l ? "," : "", (int)sizeof(m->uuid), m->uuid);
	}
	add_env(c, "NVIDIA_VISIBLE_DEVICES", c->visible);
	return GF_GRPC_OK;
}

static int allocate_one(struct plugin *pl, const struct gpu_view *v, unsigned n,
			const V1beta1__ContainerAllocateRequest *rq, struct cresp *c, char *msg, size_t msglen)
{
	v1beta1__container_allocate_response__init(&c->r);
	if (rq->n_devices_ids == 0) {
		snprintf(msg, msglen, "Allocate: a container request with no device IDs");
		return GF_GRPC_INVALID_ARGUMENT;
	}
	if (pl->mig)
		return allocate_mig(pl, rq, c, msg, msglen);
	if (!pl->milli) {
		if (rq->n_devices_ids > GF_AGENT_MAX_GPUS) {
			snprintf(msg, msglen, "Allocate: %zu GPUs asked, this node has %u", rq->n_devices_ids, n);
			return GF_GRPC_INVALID_ARGUMENT;
		}
		for (size_t i = 0; i < rq->n_devices_ids; i++)
			for (size_t j = 0; j < i; j++)
				if (strcmp(rq->devices_ids[i], rq->devices_ids[j]) == 0) {
					snprintf(msg, msglen, "Allocate: device ID '%.64s' given twice", rq->devices_ids[i]);
					return GF_GRPC_INVALID_ARGUMENT;
				}
		for (size_t i = 0; i < rq->n_devices_ids; i++) {
			const struct gpu_view *g = find_gpu(v, n, rq->devices_ids[i]);
			if (!g) {
				snprintf(msg, msglen, "Allocate: unknown device ID '%.64s' for %s", rq->devices_ids[i],
					 pl->resource);
				return GF_GRPC_INVALID_ARGUMENT;
			}
			if (!g->healthy) {
				snprintf(msg, msglen, "Allocate: GPU %s is unhealthy", g->uuid);
				return GF_GRPC_FAILED_PRECONDITION;
			}
			if (g->mig_on) {
				snprintf(msg, msglen, "Allocate: GPU %s is in MIG mode: served as nvidia.com/mig-<profile>", g->uuid);
				return GF_GRPC_FAILED_PRECONDITION;
			}
			add_gpu(c, g);
		}
		add_env(c, "NVIDIA_VISIBLE_DEVICES", c->visible);
		return GF_GRPC_OK;
	}
	/* Units: all of one GPU (checked below), so a unit seen twice is an ID
	 * given twice; a bitmap instead of comparing every pair (1,000 IDs). */
	const struct gpu_view *g = NULL;
	unsigned unit, first_unit = GF_DP_MILLI_PER_GPU;
	bool seen[GF_DP_MILLI_PER_GPU] = { false };
	for (size_t i = 0; i < rq->n_devices_ids; i++) {
		const struct gpu_view *u = unit_gpu(v, n, g, rq->devices_ids[i], &unit);
		if (!u) {
			snprintf(msg, msglen, "Allocate: unknown device ID '%.64s' for %s (want <GPU UUID>::<0..999>)",
				 rq->devices_ids[i], pl->resource);
			return GF_GRPC_INVALID_ARGUMENT;
		}
		if (!g)
			g = u;
		if (u != g) {
			snprintf(msg, msglen,
				 "Allocate: %s units from two GPUs (%s and %s): a share must come from one GPU", pl->resource,
				 g->uuid, u->uuid);
			return GF_GRPC_FAILED_PRECONDITION;
		}
		if (seen[unit]) {
			snprintf(msg, msglen, "Allocate: device ID '%.64s' given twice", rq->devices_ids[i]);
			return GF_GRPC_INVALID_ARGUMENT;
		}
		seen[unit] = true;
		if (unit < first_unit)
			first_unit = unit;
	}
	if (!g->healthy) {
		snprintf(msg, msglen, "Allocate: GPU %s is unhealthy", g->uuid);
		return GF_GRPC_FAILED_PRECONDITION;
	}
	if (g->mig_on) {
		snprintf(msg, msglen, "Allocate: GPU %s is in MIG mode: no shares of it", g->uuid);
		return GF_GRPC_FAILED_PRECONDITION;
	}
	if (pl->dp->memcap_lib[0] && !g->mem_total) {
		snprintf(msg, msglen, "Allocate: memory cap: NVML does not tell GPU %s's memory size", g->uuid);
		return GF_GRPC_FAILED_PRECONDITION;
	}
	add_gpu(c, g);
	add_env(c, "NVIDIA_VISIBLE_DEVICES", c->visible);
	snprintf(c->milli, sizeof(c->milli), "%zu", rq->n_devices_ids);
	add_env(c, "GPUFLEET_GPU_MILLI", c->milli);
	if (pl->dp->memcap_lib[0])
		return write_cap(pl->dp, c, g, first_unit, rq->n_devices_ids, msg, msglen);
	return GF_GRPC_OK;
}

/* Which pending pod container request rq is for; its index in pods, or a
 * FAILED_PRECONDITION with the reason. */
static int match_container(struct plugin *pl, const V1beta1__ContainerAllocateRequest *rq, const struct gf_dp_pod *pods,
			   unsigned n, unsigned *extra, struct cresp *c, char *msg, size_t msglen)
{
	/* The GPUs allocate_one found in the view (one for a share). */
	const char *uuids[GF_DP_MATCH_MAX_GPUS];
	unsigned nu = 0, units = pl->milli ? (unsigned)rq->n_devices_ids : 0;
	if (c->r.n_cdi_devices > GF_DP_MATCH_MAX_GPUS) {
		snprintf(msg, msglen, "Allocate: %zu GPUs: no assignment names more than %d", c->r.n_cdi_devices,
			 GF_DP_MATCH_MAX_GPUS);
		return GF_GRPC_FAILED_PRECONDITION;
	}
	for (size_t i = 0; i < c->r.n_cdi_devices; i++)
		uuids[nu++] = c->gpus[i]->uuid;
	int k = find_pod(pl, pods, n, extra, uuids, nu, units);
	if (k < 0) {
		char what[160];
		if (pl->milli)
			snprintf(what, sizeof(what), "%u/1000 of GPU %.96s", units, uuids[0]);
		else
			snprintf(what, sizeof(what), "%u whole GPU(s) starting with %.96s", nu, uuids[0]);
		snprintf(msg, msglen,
			 "Allocate: no pending pod on node %.200s is assigned %s by the scheduler (%u pending pod(s) ask for %s): refusing rather than giving the container other GPUs",
			 pl->dp->node, what, n, pl->resource);
		return GF_GRPC_FAILED_PRECONDITION;
	}
	extra[k]++;
	snprintf(c->pod, sizeof(c->pod), "%s/%s", pods[k].ns, pods[k].name);
	v1beta1__container_allocate_response__annotations_entry__init(&c->ann);
	c->ann.key = "gpufleet.io/pod";
	c->ann.value = c->pod;
	c->annp[0] = &c->ann;
	c->r.n_annotations = 1;
	c->r.annotations = c->annp;
	return GF_GRPC_OK;
}

static int h_allocate(void *ud, const uint8_t *req, size_t len, struct gf_obuf *out, char *msg, size_t msglen)
{
	struct plugin *pl = ud;
	struct gpu_view v[GF_AGENT_MAX_GPUS];
	struct gf_dp_pod *pods = NULL;
	unsigned extra[MAX_PENDING] = { 0 };
	int npods = 0;
	_Alignas(16) uint8_t abuf[64 * 1024]; /* 1,000 unit IDs take ~56 KiB */
	struct arena ar = { abuf, sizeof(abuf), 0 };
	ProtobufCAllocator alloc = { arena_alloc, arena_free, &ar };
	if (!gf_dp_request_strings_ok(req, len, &v1beta1__allocate_request__descriptor, "Allocate", msg, msglen))
		return GF_GRPC_INVALID_ARGUMENT;
	V1beta1__AllocateRequest *rq = v1beta1__allocate_request__unpack(&alloc, len, req);
	if (!rq) {
		snprintf(msg, msglen, "Allocate: the request is not a valid AllocateRequest");
		return GF_GRPC_INVALID_ARGUMENT;
	}
	if (pl->dp->kc && !pl->mig) {
		pods = malloc(sizeof(*pods) * MAX_PENDING);
		npods = pods ? list_pending(pl, pods, msg, msglen) : -1;
		if (npods < 0) {
			free(pods);
			v1beta1__allocate_request__free_unpacked(rq, &alloc);
			if (!msg[0])
				snprintf(msg, msglen, "out of memory");
			return GF_GRPC_UNAVAILABLE;
		}
	}
	unsigned n = snapshot(pl->dp, v);
	size_t nc = rq->n_container_requests;
	struct cresp *cs = calloc(nc ? nc : 1, sizeof(*cs));
	V1beta1__ContainerAllocateResponse **rp = calloc(nc ? nc : 1, sizeof(*rp));
	int st = cs && rp ? GF_GRPC_OK : GF_GRPC_RESOURCE_EXHAUSTED;
	if (st != GF_GRPC_OK)
		snprintf(msg, msglen, "out of memory");
	for (size_t i = 0; st == GF_GRPC_OK && i < nc; i++) {
		st = allocate_one(pl, v, n, rq->container_requests[i], &cs[i], msg, msglen);
		if (st == GF_GRPC_OK && pods)
			st = match_container(pl, rq->container_requests[i], pods, (unsigned)npods, extra, &cs[i], msg,
					     msglen);
		rp[i] = &cs[i].r;
	}
	if (st == GF_GRPC_OK) {
		V1beta1__AllocateResponse r = V1BETA1__ALLOCATE_RESPONSE__INIT;
		r.n_container_responses = nc;
		r.container_responses = rp;
		st = pack(&r.base, out, msg, msglen);
	}
	for (size_t i = 0; st == GF_GRPC_OK && pl->mig && i < nc; i++)
		for (size_t k = 0; k < rq->container_requests[i]->n_devices_ids; k++)
			mig_given(pl->dp, rq->container_requests[i]->devices_ids[k]);
	/* Claims only for an Allocate that succeeded as a whole. */
	for (int k = 0; st == GF_GRPC_OK && k < npods; k++)
		for (unsigned j = 0; j < extra[k]; j++)
			claim(pl->dp, pods[k].uid, pl->milli);
	for (size_t i = 0; st == GF_GRPC_OK && pods && i < nc; i++)
		attribute(pl, v, n, rq->container_requests[i]->devices_ids, rq->container_requests[i]->n_devices_ids,
			  cs[i].pod);
	free(pods);
	free(cs);
	free(rp);
	v1beta1__allocate_request__free_unpacked(rq, &alloc);
	return st;
}

/* ---- servers, registration, watch ---- */

static gf_err start_server(struct plugin *pl, char *err, size_t errlen)
{
	char path[600];
	snprintf(path, sizeof(path), "%s/%s", pl->dp->plugin_dir, pl->sock_name);
	pl->methods[0] = (struct gf_grpc_method){ "/v1beta1.DevicePlugin/GetDevicePluginOptions", h_options, NULL, pl };
	pl->methods[1] = (struct gf_grpc_method){ "/v1beta1.DevicePlugin/ListAndWatch", NULL, s_list, pl };
	pl->methods[2] = (struct gf_grpc_method){ "/v1beta1.DevicePlugin/GetPreferredAllocation", h_preferred, NULL, pl };
	pl->methods[3] = (struct gf_grpc_method){ "/v1beta1.DevicePlugin/Allocate", h_allocate, NULL, pl };
	pl->methods[4] = (struct gf_grpc_method){ "/v1beta1.DevicePlugin/PreStartContainer", h_prestart, NULL, pl };
	return gf_grpc_server_start(path, pl->methods, 5, &pl->srv, err, errlen);
}

static gf_err register_plugin(struct plugin *pl, char *err, size_t errlen)
{
	char kubelet[600], msg[512];
	snprintf(kubelet, sizeof(kubelet), "%s/kubelet.sock", pl->dp->plugin_dir);
	V1beta1__RegisterRequest rq = V1BETA1__REGISTER_REQUEST__INIT;
	V1beta1__DevicePluginOptions o = V1BETA1__DEVICE_PLUGIN_OPTIONS__INIT;
	o.get_preferred_allocation_available = 1;
	rq.version = "v1beta1";
	rq.endpoint = (char *)pl->sock_name;
	rq.resource_name = (char *)pl->resource;
	rq.options = &o;
	uint8_t buf[1024];
	size_t n = v1beta1__register_request__pack(&rq, buf);
	int st = gf_grpc_call(kubelet, "/v1beta1.Registration/Register", buf, n, NULL, 5000, msg, sizeof(msg));
	pl->registered = st == GF_GRPC_OK;
	if (!pl->registered) {
		snprintf(err, errlen, "registering %s with the kubelet (%.200s): status %d: %.300s", pl->resource, kubelet, st,
			 msg);
		return GF_UNAVAILABLE;
	}
	fprintf(stderr, "gpufleet agent: device plugin %s registered with the kubelet (endpoint %s)\n", pl->resource,
		pl->sock_name);
	return GF_OK;
}

/* A plugin for each MIG profile in the view not served yet (up to
 * MAX_MIG_PLUGINS; a profile that goes away keeps its plugin, listing no
 * device).  Watch thread (and start) only: nplugins grows, never shrinks. */
static void add_mig_plugins(gf_dp *dp)
{
	static _Thread_local struct mig_view mv[MAX_MIG_VIEW];
	unsigned n = snapshot_mig(dp, NULL, mv, MAX_MIG_VIEW);
	for (unsigned i = 0; i < n; i++) {
		bool have = false;
		for (unsigned k = 2; k < dp->nplugins && !have; k++)
			have = strcmp(dp->plugins[k].profile, mv[i].profile) == 0;
		if (have)
			continue;
		/* Resource names allow [A-Za-z0-9._-] after the prefix: "+me" -> ".me". */
		bool ok = dp->nplugins < 2 + MAX_MIG_PLUGINS;
		for (const char *p = mv[i].profile; ok && *p; p++)
			ok = (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '.' || *p == '+';
		if (!ok)
			continue;
		struct plugin *pl = &dp->plugins[dp->nplugins];
		*pl = (struct plugin){ .dp = dp, .mig = true };
		snprintf(pl->profile, sizeof(pl->profile), "%s", mv[i].profile);
		snprintf(pl->res_buf, sizeof(pl->res_buf), GF_DP_RESOURCE_MIG_PREFIX "%s", mv[i].profile);
		snprintf(pl->sock_buf, sizeof(pl->sock_buf), "gpufleet-mig-%s.sock", mv[i].profile);
		for (char *p = pl->res_buf; *p; p++)
			if (*p == '+')
				*p = '.';
		for (char *p = pl->sock_buf; *p; p++)
			if (*p == '+')
				*p = '.';
		pl->resource = pl->res_buf;
		pl->sock_name = pl->sock_buf;
		dp->nplugins++;
		fprintf(stderr, "gpufleet agent: device plugin: serving %s (MIG devices of profile %s)\n", pl->resource,
			pl->profile);
	}
}

static void *watch_main(void *arg)
{
	gf_dp *dp = arg;
	char err[700], last_err[700] = "";
	unsigned tick = 0;
	pthread_mutex_lock(&dp->mu);
	while (!dp->stopping) {
		struct timespec t;
		clock_gettime(CLOCK_REALTIME, &t);
		t.tv_nsec += 100 * 1000000L; /* every 100 ms: the view; every second: sockets; 5 s: reconcile */
		if (t.tv_nsec >= 1000000000L) {
			t.tv_sec++;
			t.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&dp->cv, &dp->mu, &t);
		if (dp->stopping)
			break;
		pthread_mutex_unlock(&dp->mu);
		refresh_view(dp);
		tick++;
		if (dp->kc && tick % 50 == 0) /* every 5 s */
			reconcile(dp);
		if (dp->nplugins > 2 && tick % 50 == 0)
			mig_list(dp);
		if (tick % 10 != 0) {
			pthread_mutex_lock(&dp->mu);
			continue;
		}
		add_mig_plugins(dp);
		for (unsigned i = 0; i < dp->nplugins; i++) {
			struct plugin *pl = &dp->plugins[i];
			if (pl->srv && !gf_grpc_server_socket_alive(pl->srv)) {
				/* The kubelet restarted and cleared its folder. */
				fprintf(stderr, "gpufleet agent: device plugin %s: socket removed (kubelet restart?): serving anew\n",
					pl->resource);
				gf_grpc_server_stop(pl->srv);
				pl->srv = NULL;
				pl->registered = false;
			}
			if (!pl->srv && start_server(pl, err, sizeof(err)) != GF_OK) {
				fprintf(stderr, "gpufleet agent: device plugin: %s\n", err);
				continue;
			}
			if (!pl->registered && register_plugin(pl, err, sizeof(err)) != GF_OK &&
			    strcmp(err, last_err) != 0) {
				fprintf(stderr, "gpufleet agent: device plugin: %s (retrying every second)\n", err);
				snprintf(last_err, sizeof(last_err), "%s", err);
			}
		}
		pthread_mutex_lock(&dp->mu);
	}
	pthread_mutex_unlock(&dp->mu);
	return NULL;
}

gf_err gf_dp_start(gf_agent *a, const struct gf_dp_config *cfg, gf_dp **out, char *err, size_t errlen)
{
	gf_dp *dp = calloc(1, sizeof(*dp));
	if (!dp) {
		snprintf(err, errlen, "out of memory");
		return GF_NOMEM;
	}
	dp->agent = a;
	snprintf(dp->plugin_dir, sizeof(dp->plugin_dir), "%s",
		 cfg->plugin_dir ? cfg->plugin_dir : "/var/lib/kubelet/device-plugins");
	snprintf(dp->memcap_dir, sizeof(dp->memcap_dir), "%s",
		 cfg->memcap_dir ? cfg->memcap_dir : "/var/run/gpufleet/memcap");
	snprintf(dp->memcap_lib, sizeof(dp->memcap_lib), "%s", cfg->memcap_lib ? cfg->memcap_lib : "");
	pthread_mutex_init(&dp->mu, NULL);
	pthread_cond_init(&dp->cv, NULL);
	pthread_mutex_init(&dp->view_mu, NULL);
	pthread_mutex_init(&dp->claim_mu, NULL);
	pthread_mutex_init(&dp->cap_mu, NULL);
	pthread_mutex_init(&dp->mig_mu, NULL);
	refresh_view(dp);
	if (cfg->kube) {
		struct gf_kube_client_opts ko = { .timeout_ms = 5000, .retries = 1 };
		snprintf(dp->node, sizeof(dp->node), "%s", cfg->node ? cfg->node : "");
		snprintf(dp->podres, sizeof(dp->podres), "%s",
			 cfg->podres_socket ? cfg->podres_socket : "/var/lib/kubelet/pod-resources/kubelet.sock");
		if (!dp->node[0] || gf_kube_client_create(cfg->kube, &ko, &dp->kc) != GF_OK) {
			snprintf(err, errlen, "pod matching: %s", dp->node[0] ? "out of memory" : "no node name");
			free(dp);
			return GF_INVAL;
		}
	}
	if (dp->kc)
		reconcile(dp); /* what the kubelet admitted before this process started */
	dp->plugins[0] = (struct plugin){ .dp = dp, .resource = GF_DP_RESOURCE_GPU, .sock_name = "gpufleet-gpu.sock" };
	dp->plugins[1] = (struct plugin){ .dp = dp, .resource = GF_DP_RESOURCE_MILLI,
					  .sock_name = "gpufleet-gpu-milli.sock", .milli = true };
	dp->nplugins = 2;
	snprintf(dp->podres, sizeof(dp->podres), "%s",
		 cfg->podres_socket ? cfg->podres_socket : "/var/lib/kubelet/pod-resources/kubelet.sock");
	add_mig_plugins(dp);
	gf_err e = GF_OK;
	for (unsigned i = 0; i < dp->nplugins && !e; i++)
		e = start_server(&dp->plugins[i], err, errlen);
	if (e) {
		for (unsigned i = 0; i < dp->nplugins; i++)
			gf_grpc_server_stop(dp->plugins[i].srv);
		gf_kube_client_destroy(dp->kc);
		free(dp);
		return e;
	}
	for (unsigned i = 0; i < dp->nplugins; i++) {
		char e2[700];
		if (register_plugin(&dp->plugins[i], e2, sizeof(e2)) != GF_OK && e == GF_OK) {
			snprintf(err, errlen, "%s", e2);
			e = GF_UNAVAILABLE;
		}
	}
	gf_agent_set_mig_in_use(a, mig_held, dp);
	if (pthread_create(&dp->watcher, NULL, watch_main, dp) != 0) {
		gf_agent_set_mig_in_use(a, NULL, NULL);
		for (unsigned i = 0; i < dp->nplugins; i++)
			gf_grpc_server_stop(dp->plugins[i].srv);
		free(dp);
		snprintf(err, errlen, "cannot start the device plugin's watch thread");
		return GF_NOMEM;
	}
	*out = dp;
	return e;
}

void gf_dp_stop(gf_dp *dp)
{
	if (!dp)
		return;
	pthread_mutex_lock(&dp->mu);
	dp->stopping = true;
	pthread_cond_signal(&dp->cv);
	pthread_mutex_unlock(&dp->mu);
	pthread_join(dp->watcher, NULL);
	gf_agent_set_mig_in_use(dp->agent, NULL, NULL);
	for (unsigned i = 0; i < dp->nplugins; i++)
		gf_grpc_server_stop(dp->plugins[i].srv);
	pthread_cond_destroy(&dp->cv);
	pthread_mutex_destroy(&dp->mu);
	pthread_mutex_destroy(&dp->view_mu);
	pthread_mutex_destroy(&dp->claim_mu);
	pthread_mutex_destroy(&dp->cap_mu);
	pthread_mutex_destroy(&dp->mig_mu);
	gf_kube_client_destroy(dp->kc);
	free(dp);
}
