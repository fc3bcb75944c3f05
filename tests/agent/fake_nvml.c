/*
 * tests/agent/fake_nvml.c - a FAKE libnvidia-ml for the test suite.
 *
 * Built as libnvidia-ml-fake.so (and libnvidia-ml-fake-old.so with
 * -DFAKE_OLD_API, which exports only the pre-versioned names: nvmlInit,
 * nvmlDeviceGetCount, nvmlDeviceGetHandleByIndex, the v1 process struct,
 * nvmlDeviceGetMemoryInfo, nvmlDeviceGetTemperature, nvmlEventSetWait), so
 * the agent's fallback path is exercised.  The agent loads it through its
 * real dlopen path (--nvml-lib); nothing here is linked into the agent.
 *
 * Answers come from the state file in $GF_FAKE_NVML_STATE (format in
 * fake_state.h), re-read when it changes (checked at most every 20 ms).
 * Device handles are pointers into a static table indexed by GPU (and MIG
 * slot), so they stay valid across reloads, like real handles.
 *
 * Failure scripting: lost=1 makes every call on that GPU return
 * NVML_ERROR_GPU_IS_LOST; lost_after=N does so after N calls on it,
 * lost_at=T from Unix time T on;
 * init_error=C makes nvmlInit return C.  Single-threaded use is assumed
 * (the agent serialises its calls).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "agent/nvml_abi.h"
#include "fake_mig.h"
#include "fake_state.h"

#define API(ret, name, args) \
	ret name args;       \
	ret name args

struct fake_dev {
	unsigned gpu;
	int mig;     /* -1: the GPU itself; else MIG slot */
	bool driver; /* a MIG device the driver made (fake_mig.c), else a scripted one */
};

static struct fake_dev devs[FAKE_MAX_GPUS];
static struct fake_dev migdevs[FAKE_MAX_GPUS][FAKE_MAX_MIG];
static struct fake_dev drvdevs[FAKE_MAX_GPUS][FAKE_MAX_MIG];
static struct fake_state *st;
static const char *state_path;
static struct timespec state_mtime, last_check;
static off_t state_size;
static int inited;
static unsigned long long calls[FAKE_MAX_GPUS];
static unsigned xid_next;
static int event_set_token;

static int load(void)
{
	FILE *f = fopen(state_path, "rb");
	if (!f) {
		fprintf(stderr, "fake NVML: cannot open state file %s\n", state_path);
		return -1;
	}
	static char buf[1 << 20];
	size_t n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	struct fake_state *ns = malloc(sizeof(*ns));
	if (!ns)
		return -1;
	char err[512];
	if (fake_state_parse(buf, n, state_path, ns, err, sizeof(err))) {
		fprintf(stderr, "fake NVML: %s; keeping the previous state\n", err);
		free(ns);
		return -1;
	}
	free(st);
	st = ns;
	xid_next = 0;
	return 0;
}

static void maybe_reload(void)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
	long long ms = (now.tv_sec - last_check.tv_sec) * 1000LL +
		       (now.tv_nsec - last_check.tv_nsec) / 1000000LL;
	if (st && ms < 20)
		return;
	last_check = now;
	struct stat sb;
	if (stat(state_path, &sb) != 0)
		return;
	if (st && sb.st_mtim.tv_sec == state_mtime.tv_sec && sb.st_mtim.tv_nsec == state_mtime.tv_nsec &&
	    sb.st_size == state_size)
		return;
	state_mtime = sb.st_mtim;
	state_size = sb.st_size;
	load();
}

/* Resolve a handle; count the call; apply scripted loss. */
static int dev(void *h, struct fake_gpu **g, const struct fake_dev **d)
{
	if (!inited || !st)
		return GF_NVML_ERROR_UNINITIALIZED;
	maybe_reload();
	const struct fake_dev *fd = h;
	if (!fd || fd->gpu >= st->ngpus)
		return GF_NVML_ERROR_INVALID_ARGUMENT;
	if (fd->driver && !fake_mig_slot(fd->gpu, (unsigned)fd->mig))
		return GF_NVML_ERROR_INVALID_ARGUMENT; /* its instance was destroyed */
	struct fake_gpu *gp = &st->gpus[fd->gpu];
	calls[fd->gpu]++;
	if ((gp->set >> FK_lost & 1) && gp->v[FK_lost])
		return GF_NVML_ERROR_GPU_IS_LOST;
	if ((gp->set >> FK_lost_after & 1) && calls[fd->gpu] > (unsigned long long)gp->v[FK_lost_after])
		return GF_NVML_ERROR_GPU_IS_LOST;
	if ((gp->set >> FK_lost_at & 1) && (long long)time(NULL) >= gp->v[FK_lost_at])
		return GF_NVML_ERROR_GPU_IS_LOST;
	*g = gp;
	if (d)
		*d = fd;
	return GF_NVML_SUCCESS;
}

int fake_resolve(void *h, struct fake_gpu **g, unsigned *gpu, int *slot, bool *driver)
{
	const struct fake_dev *fd;
	int r = dev(h, g, &fd);
	if (r)
		return r;
	*gpu = fd->gpu;
	*slot = fd->mig;
	*driver = fd->driver;
	return GF_NVML_SUCCESS;
}

struct fake_state *fake_current(void)
{
	return st;
}

void *fake_gpu_handle(unsigned gpu)
{
	return gpu < FAKE_MAX_GPUS ? &devs[gpu] : NULL;
}

void *fake_mig_handle(unsigned gpu, unsigned slot)
{
	return gpu < FAKE_MAX_GPUS && slot < FAKE_MAX_MIG ? &drvdevs[gpu][slot] : NULL;
}

/* The profile name and memory of a MIG device (scripted or driver-made). */
static void mig_of(const struct fake_gpu *g, const struct fake_dev *fd, const char **uuid, const char **profile,
		   unsigned long long *mem_mib, long long *gi)
{
	if (!fd->driver) {
		*uuid = g->mig[fd->mig].uuid;
		*profile = g->mig[fd->mig].profile;
		*mem_mib = g->mig[fd->mig].mem_mib;
		*gi = g->mig[fd->mig].gi;
		return;
	}
	const struct fake_drv_gi *x = fake_mig_slot(fd->gpu, (unsigned)fd->mig);
	const struct fake_mig_profile *p = x ? fake_mig_profile(g, x->profile) : NULL;
	*uuid = x ? x->uuid : "";
	*profile = p ? p->name : "";
	*mem_mib = p ? p->mem_mb : 0;
	*gi = x ? (long long)x->id : -1;
}

#define DEV(h)                                         \
	struct fake_gpu *g;                            \
	const struct fake_dev *fd;                     \
	int r_ = dev((h), &g, &fd);                    \
	if (r_)                                        \
		return r_;                             \
	(void)fd

/* Value of key k or NOT_SUPPORTED. */
#define GET(k, out)                                         \
	do {                                                \
		if (!(g->set >> FK_##k & 1))                \
			return GF_NVML_ERROR_NOT_SUPPORTED; \
		*(out) = g->v[FK_##k];                      \
	} while (0)

static int put_str(char *dst, unsigned len, const char *s)
{
	if (strlen(s) >= len)
		return GF_NVML_ERROR_INSUFFICIENT_SIZE;
	memcpy(dst, s, strlen(s) + 1);
	return GF_NVML_SUCCESS;
}

static int do_init(void)
{
	state_path = getenv("GF_FAKE_NVML_STATE");
	if (!state_path) {
		fprintf(stderr, "fake NVML: GF_FAKE_NVML_STATE is not set\n");
		return GF_NVML_ERROR_DRIVER_NOT_LOADED;
	}
	if (!inited) { /* first init (again): start from the file, fresh counters */
		free(st);
		st = NULL;
		memset(calls, 0, sizeof(calls));
		maybe_reload();
		if (!st)
			return GF_NVML_ERROR_UNKNOWN;
	}
	if (st->init_error && !inited) {
		int r = st->init_error;
		free(st); /* no nvmlShutdown follows a failed init */
		st = NULL;
		return r;
	}
	for (unsigned i = 0; i < FAKE_MAX_GPUS; i++) {
		devs[i].gpu = i;
		devs[i].mig = -1;
		for (int m = 0; m < FAKE_MAX_MIG; m++) {
			migdevs[i][m] = (struct fake_dev){ i, m, false };
			drvdevs[i][m] = (struct fake_dev){ i, m, true };
		}
	}
	if (!inited)
		fake_mig_load(state_path); /* the driver's MIG state survives the process */
	inited++;
	return GF_NVML_SUCCESS;
}

#ifdef FAKE_OLD_API
API(int, nvmlInit, (void)) { return do_init(); }
#else
API(int, nvmlInit_v2, (void)) { return do_init(); }
#endif

API(int, nvmlShutdown, (void))
{
	if (inited && --inited == 0) {
		free(st);
		st = NULL;
	}
	return GF_NVML_SUCCESS;
}

API(const char *, nvmlErrorString, (int r))
{
	switch (r) {
	case GF_NVML_SUCCESS: return "Success";
	case GF_NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
	case GF_NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded (fake)";
	case GF_NVML_ERROR_NO_PERMISSION: return "Insufficient Permissions (fake)";
	case GF_NVML_ERROR_GPU_IS_LOST: return "GPU is lost (fake)";
	case GF_NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument (fake)";
	case GF_NVML_ERROR_IN_USE: return "In use by another client (fake)";
	case GF_NVML_ERROR_INSUFFICIENT_RESOURCES: return "Insufficient resources (fake)";
	default: return "Unknown Error (fake)";
	}
}

API(int, nvmlSystemGetDriverVersion, (char *v, unsigned len))
{
	if (!inited)
		return GF_NVML_ERROR_UNINITIALIZED;
	return put_str(v, len, st->driver);
}

static int get_count(unsigned *n)
{
	if (!inited)
		return GF_NVML_ERROR_UNINITIALIZED;
	maybe_reload();
	*n = st->ngpus;
	return GF_NVML_SUCCESS;
}

static int get_handle(unsigned i, void **h)
{
	if (!inited)
		return GF_NVML_ERROR_UNINITIALIZED;
	maybe_reload();
	if (i >= st->ngpus)
		return GF_NVML_ERROR_INVALID_ARGUMENT;
	struct fake_gpu *g;
	int r = dev(&devs[i], &g, NULL);
	if (r)
		return r;
	*h = &devs[i];
	return GF_NVML_SUCCESS;
}

#ifdef FAKE_OLD_API
API(int, nvmlDeviceGetCount, (unsigned *n)) { return get_count(n); }
API(int, nvmlDeviceGetHandleByIndex, (unsigned i, void **h)) { return get_handle(i, h); }
#else
API(int, nvmlDeviceGetCount_v2, (unsigned *n)) { return get_count(n); }
API(int, nvmlDeviceGetHandleByIndex_v2, (unsigned i, void **h)) { return get_handle(i, h); }
#endif

API(int, nvmlDeviceGetIndex, (void *h, unsigned *i))
{
	DEV(h);
	*i = fd->gpu;
	return GF_NVML_SUCCESS;
}

API(int, nvmlDeviceGetUUID, (void *h, char *u, unsigned len))
{
	DEV(h);
	if (fd->mig < 0)
		return put_str(u, len, g->uuid);
	const char *uu, *prof;
	unsigned long long mem;
	long long gi;
	mig_of(g, fd, &uu, &prof, &mem, &gi);
	return put_str(u, len, uu);
}

API(int, nvmlDeviceGetName, (void *h, char *n, unsigned len))
{
	DEV(h);
	if (fd->mig < 0)
		return put_str(n, len, g->name);
	char buf[200];
	const char *uu, *prof;
	unsigned long long mem;
	long long gi;
	mig_of(g, fd, &uu, &prof, &mem, &gi);
	snprintf(buf, sizeof(buf), "%s MIG %s", g->name, prof);
	return put_str(n, len, buf);
}

API(int, nvmlDeviceGetPciInfo_v3, (void *h, gf_nvml_pci_info *p))
{
	DEV(h);
	memset(p, 0, sizeof(*p));
	put_str(p->busId, sizeof(p->busId), g->bus);
	return GF_NVML_SUCCESS;
}

API(int, nvmlDeviceGetNumaNodeId, (void *h, unsigned *n))
{
	DEV(h);
	long long v;
	GET(numa, &v);
	*n = (unsigned)v;
	return GF_NVML_SUCCESS;
}

API(int, nvmlDeviceGetUtilizationRates, (void *h, gf_nvml_utilization *u))
{
	DEV(h);
	long long a, b;
	if (fake_mig_mode(fd->gpu) == 1 || fd->mig >= 0)
		return GF_NVML_ERROR_NOT_SUPPORTED; /* as on a MIG-enabled GPU */
	GET(util_gpu, &a);
	GET(util_mem, &b);
	u->gpu = (unsigned)a;
	u->memory = (unsigned)b;
	return GF_NVML_SUCCESS;
}

static const unsigned long long MiB = 1024ULL * 1024ULL;

#ifndef FAKE_OLD_API
API(int, nvmlDeviceGetMemoryInfo_v2, (void *h, gf_nvml_memory_v2 *m))
{
	DEV(h);
	if (m->version != GF_NVML_MEMORY_V2_VERSION)
		return 25; /* NVML_ERROR_ARGUMENT_VERSION_MISMATCH */
	long long t, u, r = 0;
	GET(mem_total_mib, &t);
	GET(mem_used_mib, &u);
	if (g->set >> FK_mem_reserved_mib & 1)
		r = g->v[FK_mem_reserved_mib];
	m->total = (unsigned long long)t * MiB;
	m->used = (unsigned long long)u * MiB;
	m->reserved = (unsigned long long)r * MiB;
	m->free = m->total - m->used - m->reserved;
	return GF_NVML_SUCCESS;
}
#endif

API(int, nvmlDeviceGetMemoryInfo, (void *h, gf_nvml_memory_v1 *m))
{
	DEV(h);
	if (fd->mig >= 0) { /* a MIG device: used = its processes' memory */
		const char *uu, *prof;
		unsigned long long mem;
		long long gi;
		mig_of(g, fd, &uu, &prof, &mem, &gi);
		m->total = mem * MiB;
		m->used = 0;
		for (unsigned i = 0; i < g->nprocs; i++)
			if (g->procs[i].gi == gi)
				m->used += g->procs[i].mem_mib * MiB;
		m->free = m->total > m->used ? m->total - m->used : 0;
		return GF_NVML_SUCCESS;
	}
	long long t, u, r = 0;
	GET(mem_total_mib, &t);
	GET(mem_used_mib, &u);
	if (g->set >> FK_mem_reserved_mib & 1)
		r = g->v[FK_mem_reserved_mib];
	m->total = (unsigned long long)t * MiB;
	m->used = (unsigned long long)(u + r) * MiB; /* v1 used includes reserved */
	m->free = m->total - m->used;
	return GF_NVML_SUCCESS;
}

#define SIMPLE_U(fn, key)                          \
	API(int, fn, (void *h, unsigned *out))     \
	{                                          \
		DEV(h);                            \
		long long v;                       \
		GET(key, &v);                      \
		*out = (unsigned)v;                \
		return GF_NVML_SUCCESS;            \
	}
SIMPLE_U(nvmlDeviceGetPowerUsage, power_mw)
SIMPLE_U(nvmlDeviceGetPcieReplayCounter, pcie_replay)

API(int, nvmlDeviceGetTotalEnergyConsumption, (void *h, unsigned long long *out))
{
	DEV(h);
	long long v;
	GET(energy_mj, &v);
	*out = (unsigned long long)v;
	return GF_NVML_SUCCESS;
}

#ifndef FAKE_OLD_API
API(int, nvmlDeviceGetTemperatureV, (void *h, gf_nvml_temperature_v1 *t))
{
	DEV(h);
	if (t->version != GF_NVML_TEMPERATURE_V1_VERSION || t->sensorType != GF_NVML_TEMPERATURE_GPU)
		return GF_NVML_ERROR_INVALID_ARGUMENT;
	long long v;
	GET(temp, &v);
	t->temperature = (int)v;
	return GF_NVML_SUCCESS;
}
#endif

API(int, nvmlDeviceGetTemperature, (void *h, int sensor, unsigned *out))
{
	DEV(h);
	if (sensor != GF_NVML_TEMPERATURE_GPU)
		return GF_NVML_ERROR_INVALID_ARGUMENT;
	long long v;
	GET(temp, &v);
	*out = (unsigned)v;
	return GF_NVML_SUCCESS;
}

API(int, nvmlDeviceGetClockInfo, (void *h, int type, unsigned *out))
{
	DEV(h);
	long long v;
	if (type == GF_NVML_CLOCK_SM)
		GET(sm_clock, &v);
	else if (type == GF_NVML_CLOCK_MEM)
		GET(mem_clock, &v);
	else
		return GF_NVML_ERROR_NOT_SUPPORTED;
	*out = (unsigned)v;
	return GF_NVML_SUCCESS;
}

API(int, nvmlDeviceGetEncoderUtilization, (void *h, unsigned *pct, unsigned *period))
{
	DEV(h);
	long long v;
	GET(enc_util, &v);
	*pct = (unsigned)v;
	*period = 1000000;
	return GF_NVML_SUCCESS;
}

API(int, nvmlDeviceGetDecoderUtilization, (void *h, unsigned *pct, unsigned *period))
{
	DEV(h);
	long long v;
	GET(dec_util, &v);
	*pct = (unsigned)v;
	*period = 1000000;
	return GF_NVML_SUCCESS;
}

API(int, nvmlDeviceGetPcieThroughput, (void *h, int counter, unsigned *kbps))
{
	DEV(h);
	long long v;
	if (counter == GF_NVML_PCIE_UTIL_TX_BYTES)
		GET(pcie_tx_kbps, &v);
	else if (counter == GF_NVML_PCIE_UTIL_RX_BYTES)
		GET(pcie_rx_kbps, &v);
	else
		return GF_NVML_ERROR_INVALID_ARGUMENT;
	*kbps = (unsigned)v;
	return GF_NVML_SUCCESS;
}

API(int, nvmlDeviceGetTotalEccErrors, (void *h, int type, int counter, unsigned long long *out))
{
	DEV(h);
	long long v;
	if (type == GF_NVML_MEMORY_ERROR_CORRECTED && counter == GF_NVML_VOLATILE_ECC)
		GET(ecc_sbe_vol, &v);
	else if (type == GF_NVML_MEMORY_ERROR_UNCORRECTED && counter == GF_NVML_VOLATILE_ECC)
		GET(ecc_dbe_vol, &v);
	else if (type == GF_NVML_MEMORY_ERROR_CORRECTED && counter == GF_NVML_AGGREGATE_ECC)
		GET(ecc_sbe_agg, &v);
	else if (type == GF_NVML_MEMORY_ERROR_UNCORRECTED && counter == GF_NVML_AGGREGATE_ECC)
		GET(ecc_dbe_agg, &v);
	else
		return GF_NVML_ERROR_INVALID_ARGUMENT;
	*out = (unsigned long long)v;
	return GF_NVML_SUCCESS;
}

API(int, nvmlDeviceGetRemappedRows,
    (void *h, unsigned *corr, unsigned *unc, unsigned *pend, unsigned *fail))
{
	DEV(h);
	long long a, b, c = 0, d = 0;
	GET(remap_corr, &a);
	GET(remap_unc, &b);
	if (g->set >> FK_remap_pending & 1)
		c = g->v[FK_remap_pending];
	if (g->set >> FK_remap_failed & 1)
		d = g->v[FK_remap_failed];
	*corr = (unsigned)a;
	*unc = (unsigned)b;
	*pend = (unsigned)c;
	*fail = (unsigned)d;
	return GF_NVML_SUCCESS;
}

API(int, nvmlDeviceGetRetiredPages, (void *h, int cause, unsigned *count, unsigned long long *addr))
{
	DEV(h);
	long long v;
	if (cause == GF_NVML_RETIRED_MULTIPLE_SBE)
		GET(retired_sbe, &v);
	else if (cause == GF_NVML_RETIRED_DBE)
		GET(retired_dbe, &v);
	else
		return GF_NVML_ERROR_INVALID_ARGUMENT;
	if (!addr && *count != 0)
		return GF_NVML_ERROR_INVALID_ARGUMENT; /* NVML: size query needs pageCount 0 */
	if (addr && *count < v)
		return GF_NVML_ERROR_INSUFFICIENT_SIZE;
	*count = (unsigned)v;
	return GF_NVML_SUCCESS;
}

API(int, nvmlDeviceGetRetiredPagesPendingStatus, (void *h, int *pending))
{
	DEV(h);
	long long v;
	GET(retired_pending, &v);
	*pending = (int)v;
	return GF_NVML_SUCCESS;
}

API(int, nvmlDeviceGetFieldValues, (void *h, int n, gf_nvml_field_value *fv))
{
	DEV(h);
	for (int i = 0; i < n; i++) {
		int k;
		switch (fv[i].fieldId) {
		case GF_NVML_FI_DEV_MEMORY_TEMP: k = FK_mem_temp; break;
		case GF_NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX: k = FK_nvlink_tx_kib; break;
		case GF_NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX: k = FK_nvlink_rx_kib; break;
		default: k = -1;
		}
		if (k < 0 || !(g->set >> k & 1)) {
			fv[i].nvmlReturn = GF_NVML_ERROR_NOT_SUPPORTED;
			continue;
		}
		fv[i].nvmlReturn = GF_NVML_SUCCESS;
		fv[i].valueType = GF_NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
		fv[i].value.ullVal = (unsigned long long)g->v[k];
	}
	return GF_NVML_SUCCESS;
}

#ifdef FAKE_OLD_API
API(int, nvmlDeviceGetComputeRunningProcesses, (void *h, unsigned *n, gf_nvml_process_v1 *p))
#else
API(int, nvmlDeviceGetComputeRunningProcesses_v3, (void *h, unsigned *n, gf_nvml_process_v2 *p))
#endif
{
	DEV(h);
	if (*n < g->nprocs) {
		*n = g->nprocs;
		return g->nprocs ? GF_NVML_ERROR_INSUFFICIENT_SIZE : GF_NVML_SUCCESS;
	}
	for (unsigned i = 0; i < g->nprocs; i++) {
		memset(&p[i], 0, sizeof(p[i]));
		p[i].pid = g->procs[i].pid;
		p[i].usedGpuMemory = g->procs[i].mem_mib * MiB;
#ifndef FAKE_OLD_API
		p[i].gpuInstanceId = p[i].computeInstanceId = 0xFFFFFFFFu;
		if (g->procs[i].gi >= 0) {
			p[i].gpuInstanceId = (unsigned)g->procs[i].gi;
			p[i].computeInstanceId = 0;
		}
#endif
	}
	*n = g->nprocs;
	return GF_NVML_SUCCESS;
}

API(int, nvmlDeviceGetMigMode, (void *h, unsigned *cur, unsigned *pend))
{
	DEV(h);
	int mode = fake_mig_mode(fd->gpu);
	if (mode < 0)
		return GF_NVML_ERROR_NOT_SUPPORTED;
	*cur = *pend = (unsigned)mode;
	return GF_NVML_SUCCESS;
}

API(int, nvmlDeviceGetMaxMigDeviceCount, (void *h, unsigned *n))
{
	DEV(h);
	*n = FAKE_MAX_MIG;
	return GF_NVML_SUCCESS;
}

API(int, nvmlDeviceGetMigDeviceHandleByIndex, (void *h, unsigned i, void **out))
{
	DEV(h);
	if (i >= FAKE_MAX_MIG)
		return GF_NVML_ERROR_INVALID_ARGUMENT;
	if (g->nmig) { /* scripted instances */
		if (i >= g->nmig)
			return GF_NVML_ERROR_NOT_FOUND;
		*out = &migdevs[fd->gpu][i];
		return GF_NVML_SUCCESS;
	}
	int slot = fake_mig_device(fd->gpu, i);
	if (slot < 0)
		return GF_NVML_ERROR_NOT_FOUND;
	*out = &drvdevs[fd->gpu][slot];
	return GF_NVML_SUCCESS;
}

API(int, nvmlDeviceGetGpuInstanceId, (void *h, unsigned *id))
{
	DEV(h);
	if (fd->mig < 0)
		return GF_NVML_ERROR_INVALID_ARGUMENT;
	const char *uu, *prof;
	unsigned long long mem;
	long long gi;
	mig_of(g, fd, &uu, &prof, &mem, &gi);
	*id = (unsigned)gi;
	return GF_NVML_SUCCESS;
}

/* Links: the first nvlinks[j] link numbers go to GPU 0's peers in order, etc. */
static int link_peer(const struct fake_gpu *g, unsigned link)
{
	unsigned k = 0;
	for (unsigned j = 0; j < st->ngpus; j++) {
		if (link < k + g->nvlinks[j])
			return (int)j;
		k += g->nvlinks[j];
	}
	return -1;
}

API(int, nvmlDeviceGetNvLinkState, (void *h, unsigned link, int *active))
{
	DEV(h);
	if (link >= GF_NVML_MAX_LINKS)
		return GF_NVML_ERROR_INVALID_ARGUMENT;
	unsigned total = 0;
	for (unsigned j = 0; j < st->ngpus; j++)
		total += g->nvlinks[j];
	if (!total)
		return GF_NVML_ERROR_NOT_SUPPORTED;
	*active = link_peer(g, link) >= 0 ? GF_NVML_FEATURE_ENABLED : 0;
	return GF_NVML_SUCCESS;
}

API(int, nvmlDeviceGetNvLinkRemotePciInfo_v2, (void *h, unsigned link, gf_nvml_pci_info *p))
{
	DEV(h);
	int j = link_peer(g, link);
	if (j < 0)
		return GF_NVML_ERROR_INVALID_ARGUMENT;
	memset(p, 0, sizeof(*p));
	put_str(p->busId, sizeof(p->busId), st->gpus[j].bus);
	return GF_NVML_SUCCESS;
}

API(int, nvmlDeviceGetTopologyCommonAncestor, (void *a, void *b, int *level))
{
	struct fake_gpu *g2;
	const struct fake_dev *fb;
	DEV(a);
	int r = dev(b, &g2, &fb);
	if (r)
		return r;
	*level = fd->gpu == fb->gpu ? GF_NVML_TOPO_INTERNAL
		 : g->topo[fb->gpu]  ? g->topo[fb->gpu]
				     : GF_NVML_TOPO_SYSTEM;
	return GF_NVML_SUCCESS;
}

API(int, nvmlEventSetCreate, (void **set))
{
	if (!inited)
		return GF_NVML_ERROR_UNINITIALIZED;
	*set = &event_set_token;
	return GF_NVML_SUCCESS;
}

API(int, nvmlDeviceRegisterEvents, (void *h, unsigned long long types, void *set))
{
	DEV(h);
	(void)types;
	return set == &event_set_token ? GF_NVML_SUCCESS : GF_NVML_ERROR_INVALID_ARGUMENT;
}

static int wait_event(void *set, gf_nvml_event_data *ev, unsigned timeout_ms)
{
	(void)timeout_ms; /* the fake never blocks */
	if (!inited || set != &event_set_token)
		return GF_NVML_ERROR_INVALID_ARGUMENT;
	maybe_reload();
	if (xid_next >= st->nxid)
		return GF_NVML_ERROR_TIMEOUT;
	memset(ev, 0, sizeof(*ev));
	ev->device = (gf_nvml_device)(void *)&devs[st->xid_gpu[xid_next]];
	ev->eventType = GF_NVML_EVENT_XID_CRITICAL;
	ev->eventData = st->xid_code[xid_next];
	ev->gpuInstanceId = ev->computeInstanceId = 0xFFFFFFFFu;
	xid_next++;
	return GF_NVML_SUCCESS;
}

#ifdef FAKE_OLD_API
API(int, nvmlEventSetWait, (void *set, gf_nvml_event_data *ev, unsigned t)) { return wait_event(set, ev, t); }
#else
API(int, nvmlEventSetWait_v2, (void *set, gf_nvml_event_data *ev, unsigned t)) { return wait_event(set, ev, t); }
#endif

API(int, nvmlEventSetFree, (void *set))
{
	return set == &event_set_token ? GF_NVML_SUCCESS : GF_NVML_ERROR_INVALID_ARGUMENT;
}
