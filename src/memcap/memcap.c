/*
 * memcap/memcap.c - libgpufleet-memcap.so, the GPU-memory cap of a shared
 * container: a CUDA driver-API interposer loaded with LD_PRELOAD (or
 * /etc/ld.so.preload) into every process of the container.
 *
 * What it does.  It exports the driver's allocation entry points
 * (cuMemAlloc_v2, cuMemAllocPitch_v2, cuMemAllocManaged, cuMemAllocAsync[_ptsz],
 * cuMemAllocFromPoolAsync[_ptsz], cuMemCreate), their frees (cuMemFree_v2,
 * cuMemFreeAsync[_ptsz], cuMemRelease), cuMemGetInfo_v2, cuDeviceTotalMem_v2, NVML's
 * nvmlDeviceGetMemoryInfo[_v2], and the two ways programs look those up at run
 * time: cuGetProcAddress (v1 and _v2: the pointer the driver returns is
 * swapped for ours) and dlsym (ours wraps glibc's: a hooked name resolves to
 * our function whatever the handle).  Each allocation first charges its
 * bytes to the container's ledger (memcap_ledger.c: a shared file, atomic
 * per-process slots); a charge that would pass the device's cap fails with
 * CUDA_ERROR_OUT_OF_MEMORY before the driver is called, so the bytes the
 * driver handed out through these paths never exceed the cap.  A failed
 * driver call credits the charge back; a free credits what the allocation
 * charged (per-process map pointer/handle -> bytes, device).  cuMemGetInfo
 * and NVML report total = cap (or the device's real total if lower: a MIG
 * instance), free = cap - container usage (or the real free memory if
 * lower).
 *
 * The cap comes from a mounted file (memcap_config.h; env
 * GPUFLEET_MEMCAP_LIMIT_FILE, default /etc/gpufleet/memcap/limit), the ledger
 * from env GPUFLEET_MEMCAP_LEDGER (default /var/run/gpufleet/memcap/ledger).
 * No limit file: nothing is capped (one line on stderr).  A limit file that
 * does not parse: every capped allocation fails (fail closed, one line on
 * stderr naming the file, line and field).  Ledger unusable (not a regular
 * file of root or this user in a folder others cannot write, a symbolic
 * link, all 256 slots live, another layout held by live processes): every
 * capped allocation fails too (one line on stderr).
 *
 * CUDA is never linked: the real functions come from dlopen("libcuda.so.1")
 * and glibc's own dlsym (found with dlvsym(RTLD_NEXT, "dlsym", ...)).
 *
 * A soft limit; what it does not cover (docs/agent.md has the list): memory
 * the driver takes for itself (contexts, module code, local memory, the
 * driver's 2 MiB rounding: bytes are counted as requested), allocations
 * through paths not hooked here (cuMemAlloc v1 and cuMemAllocHost/host
 * pinned memory do not use device memory or are obsolete; cuMemPoolCreate
 * pools grow inside the driver; cuArrayCreate and cuMipmappedArrayCreate allocations; graph
 * memory nodes; dlvsym look-ups; an unknown cuGetProcAddress variant, which
 * is passed through with a warning), processes started without the preload,
 * statically linked programs.  Memory freed to a stream-ordered pool is
 * credited at cuMemFreeAsync although the pool may keep it.  The agent's
 * NVML per-process watchdog is the backstop.
 *
 * Cost: the allocation path adds cuCtxGetDevice, one atomic add on this
 * process's ledger slot and a sum over the slots in use (no lock unless the
 * cap refuses), and one mutex-protected hash insert (bench/bench_memcap.c).
 */
#define _GNU_SOURCE 1
#include "memcap/memcap_config.h"
#include "core/grow.h"
#include "memcap/memcap_ledger.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GF_EXPORT __attribute__((visibility("default")))
/* dlsym runs inside other libraries' start-up, including a sanitizer
 * runtime's before its shadow memory exists: that path is not instrumented
 * and calls nothing a sanitizer intercepts (no dlopen). */
#define GF_UNINSTRUMENTED __attribute__((no_sanitize("address", "undefined")))

/* ---- the slice of the CUDA driver and NVML ABIs used here ---- */
typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef unsigned long long CUmemGenericAllocationHandle;
typedef void *CUstream;
typedef void *CUmemoryPool;
typedef uint64_t cuuint64_t;
typedef struct { /* CUmemAllocationProp, up to the location */
	int type, requestedHandleTypes;
	struct {
		int type, id;
	} location;
} CUmemAllocationProp;
#define CUDA_SUCCESS 0
#define CUDA_ERROR_OUT_OF_MEMORY 2
#define CUDA_ERROR_NOT_INITIALIZED 3
#define CU_MEM_LOCATION_TYPE_DEVICE 1

typedef int nvmlReturn_t;
typedef void *nvmlDevice_t;
typedef struct {
	unsigned long long total, free, used;
} nvmlMemory_t;
typedef struct {
	unsigned int version;
	unsigned long long total, reserved, free, used;
} nvmlMemory_v2_t;
#define NVML_SUCCESS 0
#define NVML_ERROR_UNINITIALIZED 1

/* Exported: the driver's and NVML's own signatures. */
GF_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize);
GF_EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pitch, size_t width, size_t height,
				      unsigned int elem);
GF_EXPORT CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags);
GF_EXPORT CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream s);
GF_EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream s);
GF_EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream s);
GF_EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
						CUstream s);
GF_EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle *h, size_t size, const CUmemAllocationProp *prop,
			       unsigned long long flags);
GF_EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr);
GF_EXPORT CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream s);
GF_EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream s);
GF_EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle h);
GF_EXPORT CUresult cuMemGetInfo_v2(size_t *free_b, size_t *total_b);
GF_EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev);
GF_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags);
GF_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
				       int *status);
GF_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t dev, nvmlMemory_t *mem);
GF_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t dev, nvmlMemory_v2_t *mem);

/* Hooked driver functions: our function, its name in libcuda, the name
 * cuGetProcAddress is asked with. */
#define GF_MEMCAP_CU_HOOKS(X)                                        \
	X(cuMemAlloc_v2, "cuMemAlloc")                               \
	X(cuMemAllocPitch_v2, "cuMemAllocPitch")                     \
	X(cuMemAllocManaged, "cuMemAllocManaged")                    \
	X(cuMemAllocAsync, "cuMemAllocAsync")                        \
	X(cuMemAllocAsync_ptsz, "cuMemAllocAsync")                   \
	X(cuMemAllocFromPoolAsync, "cuMemAllocFromPoolAsync")        \
	X(cuMemAllocFromPoolAsync_ptsz, "cuMemAllocFromPoolAsync")   \
	X(cuMemCreate, "cuMemCreate")                                \
	X(cuMemFree_v2, "cuMemFree")                                 \
	X(cuMemFreeAsync, "cuMemFreeAsync")                          \
	X(cuMemFreeAsync_ptsz, "cuMemFreeAsync")                     \
	X(cuMemRelease, "cuMemRelease")                              \
	X(cuMemGetInfo_v2, "cuMemGetInfo")                           \
	X(cuDeviceTotalMem_v2, "cuDeviceTotalMem")                   \
	X(cuGetProcAddress, "cuGetProcAddress")                      \
	X(cuGetProcAddress_v2, "cuGetProcAddress")

enum {
#define GF_ENUM_(fn, base) H_##fn,
	GF_MEMCAP_CU_HOOKS(GF_ENUM_)
#undef GF_ENUM_
	H_cuCtxGetDevice, /* real only */
	H_COUNT_CU,
	H_nvmlDeviceGetMemoryInfo = H_COUNT_CU,
	H_nvmlDeviceGetMemoryInfo_v2,
	H_nvmlDeviceGetIndex, /* real only */
	H_COUNT
};

struct hook {
	const char *name, *base;
	void *ours;
};

static const struct hook hooks[H_COUNT] = {
#define GF_ROW_(fn, b) [H_##fn] = { #fn, b, (void *)fn },
	GF_MEMCAP_CU_HOOKS(GF_ROW_)
#undef GF_ROW_
	[H_cuCtxGetDevice] = { "cuCtxGetDevice", NULL, NULL },
	[H_nvmlDeviceGetMemoryInfo] = { "nvmlDeviceGetMemoryInfo", NULL, (void *)nvmlDeviceGetMemoryInfo },
	[H_nvmlDeviceGetMemoryInfo_v2] = { "nvmlDeviceGetMemoryInfo_v2", NULL,
					   (void *)nvmlDeviceGetMemoryInfo_v2 },
	[H_nvmlDeviceGetIndex] = { "nvmlDeviceGetIndex", NULL, NULL },
};

typedef void *(*dlsym_fn)(void *, const char *);
typedef CUresult (*alloc_fn)(CUdeviceptr *, size_t);
typedef CUresult (*pitch_fn)(CUdeviceptr *, size_t *, size_t, size_t, unsigned int);
typedef CUresult (*managed_fn)(CUdeviceptr *, size_t, unsigned int);
typedef CUresult (*async_fn)(CUdeviceptr *, size_t, CUstream);
typedef CUresult (*pool_fn)(CUdeviceptr *, size_t, CUmemoryPool, CUstream);
typedef CUresult (*create_fn)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *,
			      unsigned long long);
typedef CUresult (*free_fn)(CUdeviceptr);
typedef CUresult (*free_async_fn)(CUdeviceptr, CUstream);
typedef CUresult (*release_fn)(CUmemGenericAllocationHandle);
typedef CUresult (*info_fn)(size_t *, size_t *);
typedef CUresult (*totalmem_fn)(size_t *, CUdevice);
typedef CUresult (*gpa_fn)(const char *, void **, int, cuuint64_t);
typedef CUresult (*gpa2_fn)(const char *, void **, int, cuuint64_t, int *);
typedef CUresult (*ctxdev_fn)(CUdevice *);
typedef nvmlReturn_t (*nvmem_fn)(nvmlDevice_t, nvmlMemory_t *);
typedef nvmlReturn_t (*nvmem2_fn)(nvmlDevice_t, nvmlMemory_v2_t *);
typedef nvmlReturn_t (*nvidx_fn)(nvmlDevice_t, unsigned int *);

/* ---- per-process map: device pointer / handle -> bytes charged, device ---- */
struct ptrmap {
	pthread_mutex_t mu;
	uint64_t *key; /* 0 = empty; linear probing, backward-shift delete */
	uint64_t *bytes;
	int *dev;
	size_t cap, n;
};

static uint64_t mix(uint64_t k)
{
	k ^= k >> 33;
	k *= UINT64_C(0xff51afd7ed558ccd);
	k ^= k >> 33;
	return k;
}

static bool map_grow(struct ptrmap *m)
{
	size_t ncap = gf_grow_cap(m->cap, m->cap + 1, 1024, sizeof(uint64_t));
	if (!ncap)
		return false;
	uint64_t *k = calloc(ncap, sizeof(*k)), *b = calloc(ncap, sizeof(*b));
	int *d = calloc(ncap, sizeof(*d));
	if (!k || !b || !d) {
		free(k);
		free(b);
		free(d);
		return false;
	}
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->key[i])
			continue;
		size_t j = mix(m->key[i]) & (ncap - 1);
		while (k[j])
			j = (j + 1) & (ncap - 1);
		k[j] = m->key[i];
		b[j] = m->bytes[i];
		d[j] = m->dev[i];
	}
	free(m->key);
	free(m->bytes);
	free(m->dev);
	m->key = k;
	m->bytes = b;
	m->dev = d;
	m->cap = ncap;
	return true;
}

/* False only when out of memory (the charge is then credited back by the
 * caller: an allocation we cannot remember is one we cannot credit). */
static bool map_put(struct ptrmap *m, uint64_t key, uint64_t bytes, int dev)
{
	bool ok = true;
	pthread_mutex_lock(&m->mu);
	if ((m->n + 1) * 2 > m->cap && !map_grow(m)) {
		ok = false;
		goto out;
	}
	size_t j = mix(key) & (m->cap - 1);
	while (m->key[j] && m->key[j] != key)
		j = (j + 1) & (m->cap - 1);
	if (!m->key[j])
		m->n++;
	m->key[j] = key;
	m->bytes[j] = bytes;
	m->dev[j] = dev;
out:
	pthread_mutex_unlock(&m->mu);
	return ok;
}

static bool map_take(struct ptrmap *m, uint64_t key, uint64_t *bytes, int *dev)
{
	bool found = false;
	pthread_mutex_lock(&m->mu);
	if (!m->cap || !key)
		goto out;
	size_t j = mix(key) & (m->cap - 1);
	while (m->key[j] && m->key[j] != key)
		j = (j + 1) & (m->cap - 1);
	if (!m->key[j])
		goto out;
	found = true;
	*bytes = m->bytes[j];
	*dev = m->dev[j];
	m->key[j] = 0;
	m->n--;
	/* Backward shift: re-place the rest of the probe run. */
	for (size_t i = (j + 1) & (m->cap - 1); m->key[i]; i = (i + 1) & (m->cap - 1)) {
		uint64_t k = m->key[i], b = m->bytes[i];
		int d = m->dev[i];
		m->key[i] = 0;
		size_t h = mix(k) & (m->cap - 1);
		while (m->key[h])
			h = (h + 1) & (m->cap - 1);
		m->key[h] = k;
		m->bytes[h] = b;
		m->dev[h] = d;
	}
out:
	pthread_mutex_unlock(&m->mu);
	return found;
}

static void map_clear(struct ptrmap *m)
{
	if (m->cap)
		memset(m->key, 0, m->cap * sizeof(*m->key));
	m->n = 0;
	pthread_mutex_init(&m->mu, NULL);
}

/* ---- process state ---- */
static struct {
	pthread_once_t once, nvml_once;
	void *real[H_COUNT];
	bool capping; /* a limit file was found */
	bool broken;  /* ... and did not parse: fail closed */
	struct gf_memcap_config cfg;
	struct gf_memcap_ledger ledger;
	struct ptrmap ptrs, handles;
	atomic_flag warned_dev, warned_gpa;
} st = {
	.once = PTHREAD_ONCE_INIT,
	.nvml_once = PTHREAD_ONCE_INIT,
	.ptrs = { .mu = PTHREAD_MUTEX_INITIALIZER },
	.handles = { .mu = PTHREAD_MUTEX_INITIALIZER },
	.warned_dev = ATOMIC_FLAG_INIT,
	.warned_gpa = ATOMIC_FLAG_INIT,
};

static _Atomic(dlsym_fn) real_dlsym_ptr;

/* glibc's own function `name`, found without calling dlsym: dlvsym with a
 * version also skips unversioned interceptors (a sanitizer's dlopen). */
GF_UNINSTRUMENTED static void *glibc_fn(const char *name)
{
	static const char *const versions[] = { "GLIBC_2.34", "GLIBC_2.17", "GLIBC_2.2.5", "GLIBC_2.0" };
	void *p = NULL;
	for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]) && !p; i++)
		p = dlvsym(RTLD_NEXT, name, versions[i]);
	return p;
}

GF_UNINSTRUMENTED static dlsym_fn real_dlsym(void)
{
	dlsym_fn f = atomic_load_explicit(&real_dlsym_ptr, memory_order_acquire);
	if (!f) {
		void *p = glibc_fn("dlsym");
		memcpy(&f, &p, sizeof(f));
		atomic_store_explicit(&real_dlsym_ptr, f, memory_order_release);
	}
	return f;
}

static void say(const char *what, const char *why)
{
	char line[768];
	int n = snprintf(line, sizeof(line), "gpufleet-memcap: %s: %s", what, why);
	if (n > 0) {
		size_t len = (size_t)n < sizeof(line) - 1 ? (size_t)n : sizeof(line) - 2;
		line[len] = '\n';
		ssize_t w = write(2, line, len + 1);
		(void)w;
	}
}

static const char *env_or(const char *name, const char *def)
{
	const char *v = getenv(name);
	return v && *v ? v : def;
}

static void read_limit(void)
{
	const char *path = env_or("GPUFLEET_MEMCAP_LIMIT_FILE", "/etc/gpufleet/memcap/limit");
	char buf[65536], err[256];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		char why[256];
		snprintf(why, sizeof(why), "%s: GPU memory is not capped in this process", strerror(errno));
		say(path, why);
		return;
	}
	size_t len = 0;
	ssize_t r;
	while (len < sizeof(buf) && (r = read(fd, buf + len, sizeof(buf) - len)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	st.capping = true;
	if (len == sizeof(buf)) {
		st.broken = true;
		say(path, "larger than 64 KiB: every capped allocation will fail");
		return;
	}
	if (!gf_memcap_config_parse(buf, len, &st.cfg, err, sizeof(err))) {
		st.broken = true;
		char msg[320];
		snprintf(msg, sizeof(msg), "%s: every capped allocation will fail", err);
		say(path, msg);
	}
}

static void child_after_fork(void)
{
	gf_memcap_ledger_after_fork(&st.ledger);
	map_clear(&st.ptrs);
	map_clear(&st.handles);
}

static void init_once(void)
{
	dlsym_fn ds = real_dlsym();
	void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (cuda && ds)
		for (int i = 0; i < H_COUNT_CU; i++)
			st.real[i] = ds(cuda, hooks[i].name);
	read_limit();
	if (st.capping) {
		char err[512];
		const char *path = env_or("GPUFLEET_MEMCAP_LEDGER", "/var/run/gpufleet/memcap/ledger");
		/* Fail closed: a cap per process would let N processes hold N
		 * times the container's cap. */
		if (gf_memcap_ledger_open(&st.ledger, path, err, sizeof(err)) != 0) {
			say(err, "every capped allocation will fail");
			st.broken = true;
		}
	}
	pthread_atfork(NULL, NULL, child_after_fork);
}

/* A normal exit credits this process's charges at once (a process that
 * dies otherwise is reaped by the next one the cap refuses). */
__attribute__((destructor)) static void fini(void)
{
	gf_memcap_ledger_exit(&st.ledger);
}

static void init(void)
{
	pthread_once(&st.once, init_once);
}

static void nvml_init_once(void)
{
	dlsym_fn ds = real_dlsym();
	void *nvml = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (nvml && ds)
		for (int i = H_COUNT_CU; i < H_COUNT; i++)
			st.real[i] = ds(nvml, hooks[i].name);
}

#define REAL(fn, type) ((type)st.real[H_##fn])
#define NEED(fn)                                   \
	do {                                       \
		init();                            \
		if (!st.real[H_##fn])              \
			return CUDA_ERROR_NOT_INITIALIZED; \
	} while (0)

/* The cap of device `d`, 0 when uncapped. */
static uint64_t cap_of(int d)
{
	if (!st.capping)
		return 0;
	if (d < 0 || d >= GF_MEMCAP_MAX_DEVICES) {
		if (!atomic_flag_test_and_set(&st.warned_dev))
			say("device ordinal above 15", "not capped");
		return 0;
	}
	return st.cfg.limit[d];
}

/* Charges `bytes` on device d.  *charged = d, or -1 when d is uncapped. */
static CUresult reserve_on(int d, uint64_t bytes, int *charged)
{
	*charged = -1;
	if (!st.capping)
		return CUDA_SUCCESS;
	if (st.broken)
		return CUDA_ERROR_OUT_OF_MEMORY;
	uint64_t cap = cap_of(d);
	if (!cap)
		return CUDA_SUCCESS;
	if (!gf_memcap_ledger_reserve(&st.ledger, d, bytes, cap))
		return CUDA_ERROR_OUT_OF_MEMORY;
	*charged = d;
	return CUDA_SUCCESS;
}

/* The current context's device: without one, nothing is charged and the
 * driver's own call reports the error. */
static CUresult reserve_current(uint64_t bytes, int *charged)
{
	CUdevice d;
	*charged = -1;
	if (!st.capping || !st.real[H_cuCtxGetDevice] ||
	    REAL(cuCtxGetDevice, ctxdev_fn)(&d) != CUDA_SUCCESS)
		return st.broken && st.capping ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_SUCCESS;
	return reserve_on(d, bytes, charged);
}

/* After the driver's call: remember a success, credit a failure. */
static CUresult settle(CUresult r, struct ptrmap *m, uint64_t key, uint64_t bytes, int dev)
{
	if (dev < 0)
		return r;
	if (r != CUDA_SUCCESS || !map_put(m, key, bytes, dev))
		gf_memcap_ledger_release(&st.ledger, dev, bytes);
	return r;
}

static void credit(struct ptrmap *m, uint64_t key, CUresult r, bool found, uint64_t bytes, int dev)
{
	if (!found)
		return;
	if (r == CUDA_SUCCESS)
		gf_memcap_ledger_release(&st.ledger, dev, bytes);
	else
		map_put(m, key, bytes, dev); /* the driver refused: still allocated */
}

/* ---- the hooks ---- */
CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
	int dev;
	NEED(cuMemAlloc_v2);
	CUresult r = reserve_current(bytesize, &dev);
	if (r != CUDA_SUCCESS)
		return r;
	r = REAL(cuMemAlloc_v2, alloc_fn)(dptr, bytesize);
	return settle(r, &st.ptrs, r == CUDA_SUCCESS ? *dptr : 0, bytesize, dev);
}

CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
	int dev;
	NEED(cuMemAllocManaged);
	CUresult r = reserve_current(bytesize, &dev);
	if (r != CUDA_SUCCESS)
		return r;
	r = REAL(cuMemAllocManaged, managed_fn)(dptr, bytesize, flags);
	return settle(r, &st.ptrs, r == CUDA_SUCCESS ? *dptr : 0, bytesize, dev);
}

/* The driver picks the pitch; we charge width rounded up to 512 bytes per
 * row first, then settle on pitch x height once it is known. */
CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pitch, size_t width, size_t height, unsigned int elem)
{
	int dev;
	NEED(cuMemAllocPitch_v2);
	uint64_t row = ((uint64_t)width + 511) & ~UINT64_C(511);
	uint64_t est = height && row > UINT64_MAX / height ? UINT64_MAX : row * height;
	CUresult r = reserve_current(est, &dev);
	if (r != CUDA_SUCCESS)
		return r;
	r = REAL(cuMemAllocPitch_v2, pitch_fn)(dptr, pitch, width, height, elem);
	if (r != CUDA_SUCCESS || dev < 0)
		return settle(r, &st.ptrs, 0, est, dev);
	uint64_t actual = (uint64_t)*pitch * height;
	if (actual > est) {
		int dev2;
		if (reserve_on(dev, actual - est, &dev2) != CUDA_SUCCESS) {
			REAL(cuMemFree_v2, free_fn)(*dptr);
			gf_memcap_ledger_release(&st.ledger, dev, est);
			return CUDA_ERROR_OUT_OF_MEMORY;
		}
	} else if (actual < est) {
		gf_memcap_ledger_release(&st.ledger, dev, est - actual);
	}
	return settle(r, &st.ptrs, *dptr, actual, dev);
}

static CUresult alloc_async(int h, CUdeviceptr *dptr, size_t bytesize, CUstream s)
{
	int dev;
	init();
	if (!st.real[h])
		return CUDA_ERROR_NOT_INITIALIZED;
	CUresult r = reserve_current(bytesize, &dev);
	if (r != CUDA_SUCCESS)
		return r;
	r = ((async_fn)st.real[h])(dptr, bytesize, s);
	return settle(r, &st.ptrs, r == CUDA_SUCCESS ? *dptr : 0, bytesize, dev);
}

CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream s)
{
	return alloc_async(H_cuMemAllocAsync, dptr, bytesize, s);
}

CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream s)
{
	return alloc_async(H_cuMemAllocAsync_ptsz, dptr, bytesize, s);
}

/* Charged to the current context's device (a pool on another device is
 * counted there; see the design comment). */
static CUresult alloc_pool(int h, CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream s)
{
	int dev;
	init();
	if (!st.real[h])
		return CUDA_ERROR_NOT_INITIALIZED;
	CUresult r = reserve_current(bytesize, &dev);
	if (r != CUDA_SUCCESS)
		return r;
	r = ((pool_fn)st.real[h])(dptr, bytesize, pool, s);
	return settle(r, &st.ptrs, r == CUDA_SUCCESS ? *dptr : 0, bytesize, dev);
}

CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream s)
{
	return alloc_pool(H_cuMemAllocFromPoolAsync, dptr, bytesize, pool, s);
}

CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream s)
{
	return alloc_pool(H_cuMemAllocFromPoolAsync_ptsz, dptr, bytesize, pool, s);
}

CUresult cuMemCreate(CUmemGenericAllocationHandle *h, size_t size, const CUmemAllocationProp *prop,
		     unsigned long long flags)
{
	int dev;
	CUresult r;
	NEED(cuMemCreate);
	if (prop && prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE)
		r = reserve_on(prop->location.id, size, &dev);
	else
		r = reserve_current(size, &dev);
	if (r != CUDA_SUCCESS)
		return r;
	r = REAL(cuMemCreate, create_fn)(h, size, prop, flags);
	return settle(r, &st.handles, r == CUDA_SUCCESS ? *h : 0, size, dev);
}

CUresult cuMemFree_v2(CUdeviceptr dptr)
{
	uint64_t bytes = 0;
	int dev = -1;
	NEED(cuMemFree_v2);
	bool found = map_take(&st.ptrs, dptr, &bytes, &dev);
	CUresult r = REAL(cuMemFree_v2, free_fn)(dptr);
	credit(&st.ptrs, dptr, r, found, bytes, dev);
	return r;
}

static CUresult free_async(int h, CUdeviceptr dptr, CUstream s)
{
	uint64_t bytes = 0;
	int dev = -1;
	init();
	if (!st.real[h])
		return CUDA_ERROR_NOT_INITIALIZED;
	bool found = map_take(&st.ptrs, dptr, &bytes, &dev);
	CUresult r = ((free_async_fn)st.real[h])(dptr, s);
	credit(&st.ptrs, dptr, r, found, bytes, dev);
	return r;
}

CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream s)
{
	return free_async(H_cuMemFreeAsync, dptr, s);
}

CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream s)
{
	return free_async(H_cuMemFreeAsync_ptsz, dptr, s);
}

CUresult cuMemRelease(CUmemGenericAllocationHandle h)
{
	uint64_t bytes = 0;
	int dev = -1;
	NEED(cuMemRelease);
	bool found = map_take(&st.handles, h, &bytes, &dev);
	CUresult r = REAL(cuMemRelease, release_fn)(h);
	credit(&st.handles, h, r, found, bytes, dev);
	return r;
}

/* total = the cap, or the device's real total if that is lower (a MIG
 * instance smaller than the cap), used = the container's charges, free =
 * what is left of the cap or the device's real free memory if that is
 * lower.  *total holds the real total on entry. */
static void capped_view(int d, unsigned long long real_free, unsigned long long *total,
			unsigned long long *free_b, unsigned long long *used)
{
	uint64_t cap = cap_of(d);
	if (!cap)
		return;
	uint64_t u = gf_memcap_ledger_used(&st.ledger, d);
	uint64_t left = u >= cap ? 0 : cap - u;
	*total = cap < *total ? cap : *total;
	*used = u;
	*free_b = left < real_free ? left : real_free;
}

CUresult cuMemGetInfo_v2(size_t *free_b, size_t *total_b)
{
	CUdevice d;
	NEED(cuMemGetInfo_v2);
	CUresult r = REAL(cuMemGetInfo_v2, info_fn)(free_b, total_b);
	if (r != CUDA_SUCCESS || !st.capping || st.broken || !st.real[H_cuCtxGetDevice] ||
	    REAL(cuCtxGetDevice, ctxdev_fn)(&d) != CUDA_SUCCESS)
		return r;
	unsigned long long t = *total_b, f = *free_b, u = 0;
	capped_view(d, f, &t, &f, &u);
	*total_b = (size_t)t;
	*free_b = (size_t)f;
	return r;
}

/* The device's memory as the container may use it: the cap, or the real
 * total if lower (what cudaGetDeviceProperties' totalGlobalMem and so
 * PyTorch's total_memory and set_per_process_memory_fraction read). */
CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
	NEED(cuDeviceTotalMem_v2);
	CUresult r = REAL(cuDeviceTotalMem_v2, totalmem_fn)(bytes, dev);
	if (r != CUDA_SUCCESS || !bytes || !st.capping || st.broken)
		return r;
	uint64_t cap = cap_of((int)dev);
	if (cap && cap < *bytes)
		*bytes = (size_t)cap;
	return r;
}

/* Our function for a pointer the driver handed out, NULL if not hooked. */
static void *ours_for(void *real_fn)
{
	for (int i = 0; i < H_COUNT; i++)
		if (hooks[i].ours && st.real[i] == real_fn)
			return hooks[i].ours;
	return NULL;
}

static void swap_proc(const char *symbol, void **pfn, int version)
{
	if (!pfn || !*pfn)
		return;
	void *o = ours_for(*pfn);
	if (o) {
		*pfn = o;
		return;
	}
	for (int i = 0; i < H_COUNT_CU; i++) {
		if (hooks[i].base && symbol && strcmp(symbol, hooks[i].base) == 0) {
			char what[160];
			snprintf(what, sizeof(what), "cuGetProcAddress(%.64s, version %d)", symbol, version);
			if (!atomic_flag_test_and_set(&st.warned_gpa))
				say(what, "returned a variant this library does not hook: not capped");
			return;
		}
	}
}

CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags)
{
	NEED(cuGetProcAddress);
	CUresult r = REAL(cuGetProcAddress, gpa_fn)(symbol, pfn, version, flags);
	if (r == CUDA_SUCCESS)
		swap_proc(symbol, pfn, version);
	return r;
}

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags, int *status)
{
	NEED(cuGetProcAddress_v2);
	CUresult r = REAL(cuGetProcAddress_v2, gpa2_fn)(symbol, pfn, version, flags, status);
	if (r == CUDA_SUCCESS)
		swap_proc(symbol, pfn, version);
	return r;
}

/* NVML index = device ordinal in the container (both follow the order of
 * the devices the runtime made visible). */
static bool nvml_index(nvmlDevice_t dev, int *d)
{
	unsigned int idx;
	if (!st.real[H_nvmlDeviceGetIndex] || REAL(nvmlDeviceGetIndex, nvidx_fn)(dev, &idx) != NVML_SUCCESS)
		return false;
	*d = (int)idx;
	return true;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t dev, nvmlMemory_t *mem)
{
	int d;
	init();
	pthread_once(&st.nvml_once, nvml_init_once);
	if (!st.real[H_nvmlDeviceGetMemoryInfo])
		return NVML_ERROR_UNINITIALIZED;
	nvmlReturn_t r = REAL(nvmlDeviceGetMemoryInfo, nvmem_fn)(dev, mem);
	if (r == NVML_SUCCESS && mem && st.capping && !st.broken && nvml_index(dev, &d))
		capped_view(d, mem->free, &mem->total, &mem->free, &mem->used);
	return r;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t dev, nvmlMemory_v2_t *mem)
{
	int d;
	init();
	pthread_once(&st.nvml_once, nvml_init_once);
	if (!st.real[H_nvmlDeviceGetMemoryInfo_v2])
		return NVML_ERROR_UNINITIALIZED;
	nvmlReturn_t r = REAL(nvmlDeviceGetMemoryInfo_v2, nvmem2_fn)(dev, mem);
	if (r == NVML_SUCCESS && mem && st.capping && !st.broken && nvml_index(dev, &d) && cap_of(d)) {
		capped_view(d, mem->free, &mem->total, &mem->free, &mem->used);
		mem->reserved = 0;
	}
	return r;
}

/* ---- dlsym ----
 *
 * glibc answers dlsym(RTLD_NEXT, name) relative to the object that called
 * it, found from the return address.  So RTLD_NEXT must reach glibc with
 * the caller's return address untouched: dlsym is a few instructions of
 * assembly that jump (not call) to glibc's dlsym for RTLD_NEXT, and to
 * dlsym_hook for every other handle.  (A name asked with RTLD_NEXT is
 * therefore never swapped: "the next definition" is what that caller,
 * usually another interposer, wants.)  x86-64 only; elsewhere dlsym is not
 * interposed and the dlsym path is not capped (docs/agent.md).
 */

/* The pointer the trampoline jumps to. */
GF_UNINSTRUMENTED __attribute__((used)) void *gf_memcap_glibc_dlsym(void);
GF_UNINSTRUMENTED __attribute__((used)) void *gf_memcap_glibc_dlsym(void)
{
	void *p;
	dlsym_fn f = real_dlsym();
	memcpy(&p, &f, sizeof(p));
	return p;
}

GF_UNINSTRUMENTED static bool same_name(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return *a == *b;
}

GF_UNINSTRUMENTED __attribute__((used)) void *gf_memcap_dlsym_hook(void *handle, const char *name);
GF_UNINSTRUMENTED __attribute__((used)) void *gf_memcap_dlsym_hook(void *handle, const char *name)
{
	dlsym_fn ds = real_dlsym();
	void *p = ds ? ds(handle, name) : NULL;
	if (p && (name[0] == 'c' || name[0] == 'n'))
		for (int i = 0; i < H_COUNT; i++)
			if (hooks[i].ours && same_name(name, hooks[i].name))
				return hooks[i].ours;
	return p;
}

#if defined(__x86_64__)
__asm__(".text\n"
	".globl dlsym\n"
	".type dlsym, @function\n"
	"dlsym:\n"
	"	cmpq $-1, %rdi\n" /* RTLD_NEXT */
	"	jne 1f\n"
	"	pushq %rdi\n"
	"	pushq %rsi\n"
	"	subq $8, %rsp\n" /* 16-byte alignment at the call */
	"	call gf_memcap_glibc_dlsym\n"
	"	addq $8, %rsp\n"
	"	popq %rsi\n"
	"	popq %rdi\n"
	"	testq %rax, %rax\n"
	"	jz 2f\n"
	"	jmp *%rax\n"
	"1:	jmp gf_memcap_dlsym_hook\n"
	"2:	ret\n"
	".size dlsym, .-dlsym\n");
#endif
