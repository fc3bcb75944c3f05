/*
 * tests/memcap/test_memcap.c - the GPU-memory cap (libgpufleet-memcap.so)
 * against the FAKE CUDA driver and FAKE NVML (fake_cuda.h).  Run with the
 * cap preloaded (ctest sets LD_PRELOAD); the program writes its own limit
 * file and ledger in a fresh temporary folder before the first CUDA call.
 *
 *   test_memcap paths CAP       every allocation path x every way of
 *                               reaching it: bytes handed out never exceed
 *                               CAP, the reported totals equal CAP, frees
 *                               are credited
 *   test_memcap processes CAP N N processes of one container allocate and
 *                               free at random: the driver's peak stays <= CAP,
 *                               some allocations hit the cap, all is credited
 *                               back; a process killed holding memory is
 *                               reaped
 *   test_memcap badfile         a limit file that does not parse: fail closed
 *   test_memcap nolimit         no limit file: nothing capped
 *   test_memcap pidns CAP       a process that is PID 1 of its own PID
 *                               namespace, SIGKILLed holding the whole cap:
 *                               the next process gets the whole cap
 *   test_memcap exits CAP N     N processes, each PID 1 of its own PID
 *                               namespace, charge CAP/4 and exit normally
 *                               (half free first): each is granted, then the
 *                               whole cap is (slots and charges come back)
 *   test_memcap tamper CAP      a tenant overwrites the ledger file and dies
 *                               holding CAP/2: the next tenant's first process
 *                               gets the whole cap, its second not one byte
 *   test_memcap untrusted       a symbolic link planted as the ledger is not
 *                               followed, a folder others can write is not
 *                               used: capped allocations are refused
 *
 *   test_memcap reallocate CAP  the agent's fresh ledger per allocation
 *                               (gf_dp_fresh_ledger): a root tenant dies
 *                               holding CAP/2 after writing the ledger; the
 *                               next allocation's tenant, another user, gets
 *                               the whole cap in one process, not one byte
 *                               more in another
 *
 *   test_memcap batch MODE ...  a training loop's "largest batch that fits",
 *                               sized from cuMemGetInfo's free memory (as
 *                               torch.cuda.mem_get_info does): the batch it
 *                               picks runs, one more is refused with
 *                               CUDA_ERROR_OUT_OF_MEMORY.  MODE: share CAP (a
 *                               capped share of the fake's 80 GiB GPU), mig
 *                               INSTANCE (a MIG device, no cap: the driver
 *                               reports the instance's memory), mig-capped
 *                               INSTANCE CAP (both: the lower wins),
 *                               processes CAP (another process of the
 *                               container holds 3/8 of the cap, then exits)
 *
 * pidns and exits need CAP_SYS_ADMIN, reallocate root (unshare CLONE_NEWPID); without it
 * they exit 77 (ctest: skipped).
 *
 * Each check prints both values when it fails; the exit status is the
 * number of failed checks (capped at 100).
 */
#define _GNU_SOURCE 1
#include "fake_cuda.h"
#include "agent/deviceplugin.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <stdint.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
typedef unsigned long long CUmemGenericAllocationHandle;
typedef struct {
	int type, requestedHandleTypes;
	struct {
		int type, id;
	} location;
	void *win32;
	unsigned char flags[8];
} CUmemAllocationProp;
typedef struct {
	unsigned long long total, free, used;
} nvmlMemory_t;
typedef struct {
	unsigned int version;
	unsigned long long total, reserved, free, used;
} nvmlMemory_v2_t;
typedef struct nvml_dev *nvmlDevice_t;

/* Linked directly against the FAKE libraries (the "direct" path). */
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n);
CUresult cuMemAllocPitch_v2(CUdeviceptr *p, size_t *pitch, size_t w, size_t h, unsigned int e);
CUresult cuMemAllocManaged(CUdeviceptr *p, size_t n, unsigned int flags);
CUresult cuMemAllocAsync(CUdeviceptr *p, size_t n, void *s);
CUresult cuMemAllocAsync_ptsz(CUdeviceptr *p, size_t n, void *s);
CUresult cuMemAllocFromPoolAsync(CUdeviceptr *p, size_t n, void *pool, void *s);
CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *p, size_t n, void *pool, void *s);
CUresult cuMemCreate(CUmemGenericAllocationHandle *h, size_t n, const CUmemAllocationProp *prop,
		     unsigned long long flags);
CUresult cuMemFree_v2(CUdeviceptr p);
CUresult cuMemFreeAsync(CUdeviceptr p, void *s);
CUresult cuMemFreeAsync_ptsz(CUdeviceptr p, void *s);
CUresult cuMemRelease(CUmemGenericAllocationHandle h);
CUresult cuMemGetInfo_v2(size_t *free_b, size_t *total_b);
CUresult cuDeviceTotalMem_v2(size_t *bytes, int dev);
CUresult cuGetProcAddress(const char *sym, void **pfn, int version, unsigned long long flags);
CUresult cuGetProcAddress_v2(const char *sym, void **pfn, int version, unsigned long long flags, int *status);
int nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d);
int nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m);
int nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t d, nvmlMemory_v2_t *m);
void *fakenvml_dlsym_next(const char *name);

#define OOM 2

static int failures;

#define CHECK_EQ(what, got, want)                                                                    \
	do {                                                                                         \
		unsigned long long g_ = (unsigned long long)(got), w_ = (unsigned long long)(want);  \
		if (g_ != w_) {                                                                      \
			fprintf(stderr, "FAIL %s:%d [%s] %s: got %llu, want %llu\n", __FILE__, __LINE__, \
				ctx, what, g_, w_);                                                  \
			failures++;                                                                  \
		}                                                                                    \
	} while (0)
#define CHECK_LE(what, got, max)                                                                     \
	do {                                                                                         \
		unsigned long long g_ = (unsigned long long)(got), m_ = (unsigned long long)(max);   \
		if (g_ > m_) {                                                                       \
			fprintf(stderr, "FAIL %s:%d [%s] %s: got %llu, more than %llu\n", __FILE__,     \
				__LINE__, ctx, what, g_, m_);                                        \
			failures++;                                                                  \
		}                                                                                    \
	} while (0)

/* ---- the ways a program reaches the driver's functions ---- */
struct api {
	CUresult (*alloc)(CUdeviceptr *, size_t);
	CUresult (*pitch)(CUdeviceptr *, size_t *, size_t, size_t, unsigned int);
	CUresult (*managed)(CUdeviceptr *, size_t, unsigned int);
	CUresult (*async)(CUdeviceptr *, size_t, void *);
	CUresult (*pool)(CUdeviceptr *, size_t, void *, void *);
	CUresult (*create)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *,
			   unsigned long long);
	CUresult (*free)(CUdeviceptr);
	CUresult (*free_async)(CUdeviceptr, void *);
	CUresult (*release)(CUmemGenericAllocationHandle);
	CUresult (*info)(size_t *, size_t *);
	CUresult (*totalmem)(size_t *, int);
};

enum way { DIRECT, DIRECT_PTSZ, DLSYM_HANDLE, DLSYM_DEFAULT, GPA_V1, GPA_V2, GPA_V2_PTSZ, GPA_FROM_DLSYM, NWAYS };
static const char *const way_name[NWAYS] = {
	"direct",     "direct _ptsz",       "dlsym(handle)",           "dlsym(RTLD_DEFAULT)",
	"cuGetProcAddress", "cuGetProcAddress_v2", "cuGetProcAddress_v2 per-thread",
	"cuGetProcAddress_v2 found by dlsym",
};

#define SET(field, p) memcpy(&a->field, &(void *){ p }, sizeof(void *))

static void by_dlsym(struct api *a, void *h)
{
	SET(alloc, dlsym(h, "cuMemAlloc_v2"));
	SET(pitch, dlsym(h, "cuMemAllocPitch_v2"));
	SET(managed, dlsym(h, "cuMemAllocManaged"));
	SET(async, dlsym(h, "cuMemAllocAsync"));
	SET(pool, dlsym(h, "cuMemAllocFromPoolAsync"));
	SET(create, dlsym(h, "cuMemCreate"));
	SET(free, dlsym(h, "cuMemFree_v2"));
	SET(free_async, dlsym(h, "cuMemFreeAsync"));
	SET(release, dlsym(h, "cuMemRelease"));
	SET(info, dlsym(h, "cuMemGetInfo_v2"));
	SET(totalmem, dlsym(h, "cuDeviceTotalMem_v2"));
}

static void *gpa(enum way w, CUresult (*gpa2)(const char *, void **, int, unsigned long long, int *),
		 const char *name)
{
	void *p = NULL;
	int status;
	if (w == GPA_V1)
		cuGetProcAddress(name, &p, 12020, 0);
	else
		gpa2(name, &p, 12020, w == GPA_V2_PTSZ ? 2 : 0, &status);
	return p;
}

static void by_gpa(struct api *a, enum way w, void *h)
{
	CUresult (*g2)(const char *, void **, int, unsigned long long, int *) = cuGetProcAddress_v2;
	if (w == GPA_FROM_DLSYM)
		memcpy(&g2, &(void *){ dlsym(h, "cuGetProcAddress_v2") }, sizeof(void *));
	SET(alloc, gpa(w, g2, "cuMemAlloc"));
	SET(pitch, gpa(w, g2, "cuMemAllocPitch"));
	SET(managed, gpa(w, g2, "cuMemAllocManaged"));
	SET(async, gpa(w, g2, "cuMemAllocAsync"));
	SET(pool, gpa(w, g2, "cuMemAllocFromPoolAsync"));
	SET(create, gpa(w, g2, "cuMemCreate"));
	SET(free, gpa(w, g2, "cuMemFree"));
	SET(free_async, gpa(w, g2, "cuMemFreeAsync"));
	SET(release, gpa(w, g2, "cuMemRelease"));
	SET(info, gpa(w, g2, "cuMemGetInfo"));
	SET(totalmem, gpa(w, g2, "cuDeviceTotalMem"));
}

static void resolve(struct api *a, enum way w)
{
	static void *h;
	if (!h)
		h = dlopen("libcuda.so.1", RTLD_NOW);
	*a = (struct api){ cuMemAlloc_v2, cuMemAllocPitch_v2, cuMemAllocManaged, cuMemAllocAsync,
			   cuMemAllocFromPoolAsync, cuMemCreate, cuMemFree_v2, cuMemFreeAsync,
			   cuMemRelease, cuMemGetInfo_v2, cuDeviceTotalMem_v2 };
	switch (w) {
	case DIRECT:
		break;
	case DIRECT_PTSZ:
		a->async = cuMemAllocAsync_ptsz;
		a->pool = cuMemAllocFromPoolAsync_ptsz;
		a->free_async = cuMemFreeAsync_ptsz;
		break;
	case DLSYM_HANDLE:
		by_dlsym(a, h);
		break;
	case DLSYM_DEFAULT:
		by_dlsym(a, RTLD_DEFAULT);
		break;
	default:
		by_gpa(a, w, h);
		break;
	}
}

/* ---- one allocation kind through one api ---- */
enum kind { K_ALLOC, K_PITCH, K_MANAGED, K_ASYNC, K_POOL, K_CREATE, NKINDS };
static const char *const kind_name[NKINDS] = { "cuMemAlloc", "cuMemAllocPitch", "cuMemAllocManaged",
					       "cuMemAllocAsync", "cuMemAllocFromPoolAsync", "cuMemCreate" };

static CUresult do_alloc(const struct api *a, enum kind k, uint64_t bytes, int dev, CUdeviceptr *out)
{
	size_t pitch;
	CUmemAllocationProp prop = { .type = 1, .location = { 1, dev } };
	switch (k) {
	case K_ALLOC:
		return a->alloc(out, bytes);
	case K_PITCH: /* 8 rows of a 512-byte multiple: exactly `bytes` */
		return a->pitch(out, &pitch, bytes / 8, 8, 4);
	case K_MANAGED:
		return a->managed(out, bytes, 1);
	case K_ASYNC:
		return a->async(out, bytes, NULL);
	case K_POOL:
		return a->pool(out, bytes, NULL, NULL);
	default:
		return a->create(out, bytes, &prop, 0);
	}
}

static CUresult do_free(const struct api *a, enum kind k, CUdeviceptr p)
{
	switch (k) {
	case K_ASYNC:
	case K_POOL:
		return a->free_async(p, NULL);
	case K_CREATE:
		return a->release(p);
	default:
		return a->free(p);
	}
}

static void check_reported(const char *ctx, uint64_t cap, uint64_t used, int dev)
{
	size_t f = 0, t = 0;
	nvmlDevice_t d;
	nvmlMemory_t m1;
	nvmlMemory_v2_t m2 = { .version = 2 };
	fakecuda_set_device(dev);
	CHECK_EQ("cuMemGetInfo_v2 rc", cuMemGetInfo_v2(&f, &t), 0);
	CHECK_EQ("cuMemGetInfo_v2 total", t, cap);
	CHECK_EQ("cuMemGetInfo_v2 free", f, cap - used);
	CHECK_EQ("cuDeviceTotalMem_v2 rc", cuDeviceTotalMem_v2(&t, dev), 0);
	CHECK_EQ("cuDeviceTotalMem_v2: the cap", t, cap);
	CHECK_EQ("nvml handle", nvmlDeviceGetHandleByIndex_v2((unsigned)dev, &d), 0);
	CHECK_EQ("nvmlDeviceGetMemoryInfo rc", nvmlDeviceGetMemoryInfo(d, &m1), 0);
	CHECK_EQ("nvmlDeviceGetMemoryInfo total", m1.total, cap);
	CHECK_EQ("nvmlDeviceGetMemoryInfo used", m1.used, used);
	CHECK_EQ("nvmlDeviceGetMemoryInfo free", m1.free, cap - used);
	CHECK_EQ("nvmlDeviceGetMemoryInfo_v2 rc", nvmlDeviceGetMemoryInfo_v2(d, &m2), 0);
	CHECK_EQ("nvmlDeviceGetMemoryInfo_v2 total", m2.total, cap);
	CHECK_EQ("nvmlDeviceGetMemoryInfo_v2 used", m2.used, used);
	CHECK_EQ("nvmlDeviceGetMemoryInfo_v2 free", m2.free, cap - used);
}

/* Fill device `dev` (cap `cap`) with 8 allocations of cap/8, one more must
 * fail with CUDA_ERROR_OUT_OF_MEMORY, then free them all. */
static void fill_and_free(const struct api *a, enum way w, enum kind k, uint64_t cap, int dev)
{
	char ctx[160];
	CUdeviceptr p[8], extra;
	snprintf(ctx, sizeof(ctx), "%s via %s, cap %" PRIu64 ", device %d", kind_name[k], way_name[w], cap, dev);
	fakecuda_set_device(dev);
	check_reported(ctx, cap, 0, dev);
	for (int i = 0; i < 8; i++)
		CHECK_EQ("allocation within the cap", do_alloc(a, k, cap / 8, dev, &p[i]), 0);
	CHECK_EQ("allocation past the cap", do_alloc(a, k, cap / 8, dev, &extra), OOM);
	CHECK_EQ("one byte past the cap", do_alloc(a, k == K_PITCH ? K_ALLOC : k, 1, dev, &extra), OOM);
	CHECK_EQ("driver's live bytes", fakecuda_live(dev), cap);
	CHECK_LE("driver's peak bytes", fakecuda_peak(dev), cap);
	check_reported(ctx, cap, cap, dev);
	for (int i = 0; i < 8; i++)
		CHECK_EQ("free", do_free(a, k, p[i]), 0);
	CHECK_EQ("driver's live bytes after the frees", fakecuda_live(dev), 0);
	check_reported(ctx, cap, 0, dev);
	/* Credited: the whole cap is available again. */
	CHECK_EQ("whole cap after the frees", do_alloc(a, k, cap, dev, &p[0]), 0);
	CHECK_EQ("free of the whole cap", do_free(a, k, p[0]), 0);
	fakecuda_set_device(0);
}

static char dir[] = "/tmp/gf-memcap-test.XXXXXX";

static pid_t main_pid;

static void cleanup(void)
{
	char path[128];
	if (getpid() != main_pid)
		return; /* a child that exits normally */
	static const char *const names[] = { "limit", "ledger", "fake-ledger", "victim" };
	for (size_t i = 0; i < 4; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
	rmdir(dir);
}

/* The container: a limit file, the ledger, the fake driver's usage file. */
static void setup(const char *limit_text)
{
	char path[128];
	main_pid = getpid();
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		exit(100);
	}
	atexit(cleanup);
	snprintf(path, sizeof(path), "%s/limit", dir);
	if (limit_text) {
		FILE *f = fopen(path, "w");
		if (!f || fputs(limit_text, f) < 0 || fclose(f) != 0) {
			perror(path);
			exit(100);
		}
	}
	setenv("GPUFLEET_MEMCAP_LIMIT_FILE", path, 1);
	snprintf(path, sizeof(path), "%s/ledger", dir);
	setenv("GPUFLEET_MEMCAP_LEDGER", path, 1);
	snprintf(path, sizeof(path), "%s/fake-ledger", dir);
	setenv("FAKE_CUDA_LEDGER", path, 1);
}

static uint64_t parse_u64(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (*s == '\0' || *end != '\0') {
		fprintf(stderr, "not a number: %s\n", s);
		exit(100);
	}
	return v;
}

static void run_paths(uint64_t cap)
{
	char text[128];
	struct api a;
	const char *ctx = "paths";
	snprintf(text, sizeof(text), "# test\nlimit_bytes = %" PRIu64 "\nlimit_bytes.1 = %" PRIu64 "\n", cap,
		 cap / 2);
	setup(text);
	for (enum way w = 0; w < NWAYS; w++) {
		resolve(&a, w);
		for (enum kind k = 0; k < NKINDS; k++)
			fill_and_free(&a, w, k, cap, 0);
	}
	/* A second device with its own cap; cuMemCreate names the device. */
	resolve(&a, DIRECT);
	for (enum kind k = 0; k < NKINDS; k++)
		fill_and_free(&a, DIRECT, k, cap / 2, 1);
	/* Device 2 shares the all-devices cap while device 0 is full. */
	CUdeviceptr p0, p2;
	fakecuda_set_device(0);
	CHECK_EQ("device 0 full", a.alloc(&p0, cap), 0);
	fakecuda_set_device(2);
	CHECK_EQ("device 2 independent of device 0", a.alloc(&p2, cap), 0);
	CHECK_EQ("free device 2", a.free(p2), 0);
	fakecuda_set_device(0);
	CHECK_EQ("free device 0", a.free(p0), 0);
	/* dlsym(RTLD_NEXT) keeps its meaning through the interposed dlsym: asked
	 * from libnvidia-ml (loaded after libcuda and the cap), the next
	 * cuMemAlloc_v2 does not exist; from the test program it is the cap's. */
	CHECK_EQ("RTLD_NEXT cuMemAlloc_v2 from libnvidia-ml", (uintptr_t)fakenvml_dlsym_next("cuMemAlloc_v2"), 0);
	CHECK_EQ("RTLD_NEXT getpid from libnvidia-ml is libc's", (uintptr_t)fakenvml_dlsym_next("getpid"),
		 (uintptr_t)dlsym(RTLD_DEFAULT, "getpid"));
	CHECK_EQ("RTLD_NEXT cuMemAlloc_v2 from the program", (uintptr_t)dlsym(RTLD_NEXT, "cuMemAlloc_v2"),
		 (uintptr_t)dlsym(RTLD_DEFAULT, "cuMemAlloc_v2"));
	/* An unknown pointer is passed to the driver, nothing credited. */
	CHECK_EQ("free of an unknown pointer", a.free(12345), 1);
	check_reported(ctx, cap, 0, 0);
}

/* One process of the container: random sizes up to cap/4 through random
 * paths, freeing at random; returns the number of refused allocations. */
static int worker(uint64_t cap, unsigned seed, int ops, int *ok)
{
	struct api apis[NWAYS];
	CUdeviceptr held[32];
	enum kind held_kind[32];
	int nheld = 0, refused = 0;
	const char *ctx = "worker";
	for (enum way w = 0; w < NWAYS; w++)
		resolve(&apis[w], w);
	*ok = 0;
	for (int i = 0; i < ops; i++) {
		seed = seed * 1103515245u + 12345u;
		const struct api *a = &apis[(seed >> 8) % NWAYS];
		if (nheld == 32 || (nheld && (seed >> 4) % 3 == 0)) {
			int j = (int)((seed >> 12) % (unsigned)nheld);
			CHECK_EQ("free", do_free(a, held_kind[j], held[j]), 0);
			held[j] = held[--nheld];
			held_kind[j] = held_kind[nheld];
			continue;
		}
		enum kind k = (enum kind)((seed >> 16) % NKINDS);
		uint64_t bytes = ((uint64_t)(seed >> 3) % (cap / 4 / 4096) + 1) * 4096;
		CUresult r = do_alloc(a, k, bytes, 0, &held[nheld]);
		if (r == 0) {
			held_kind[nheld++] = k;
			(*ok)++;
		} else {
			CHECK_EQ("refusal code", r, OOM);
			refused++;
		}
		CHECK_LE("driver's peak bytes", fakecuda_peak(0), cap);
	}
	while (nheld) {
		nheld--;
		CHECK_EQ("final free", do_free(&apis[DIRECT], held_kind[nheld], held[nheld]), 0);
	}
	return refused;
}

static void run_processes(uint64_t cap, int n)
{
	char text[64];
	const char *ctx = "processes";
	int fds[2];
	snprintf(text, sizeof(text), "limit_bytes = %" PRIu64 "\n", cap);
	setup(text);
	if (pipe(fds) != 0)
		exit(100);
	for (int i = 0; i < n; i++) {
		if (fork() == 0) {
			int ok, refused = worker(cap, 42u + (unsigned)i, 4000, &ok);
			int rec[3] = { refused, ok, failures };
			if (write(fds[1], rec, sizeof(rec)) != (ssize_t)sizeof(rec))
				_exit(100);
			_exit(0);
		}
	}
	close(fds[1]);
	int refused = 0, ok = 0, rec[3];
	for (int i = 0; i < n; i++) {
		CHECK_EQ("worker report", read(fds[0], rec, sizeof(rec)), sizeof(rec));
		refused += rec[0];
		ok += rec[1];
		failures += rec[2];
	}
	for (int i = 0; i < n; i++) {
		int status;
		wait(&status);
		CHECK_EQ("worker exit", WIFEXITED(status) ? WEXITSTATUS(status) : 1000, 0);
	}
	fprintf(stderr, "%d processes, cap %" PRIu64 ": %d allocations granted, %d refused, driver peak %" PRIu64
			" bytes\n",
		n, cap, ok, refused, fakecuda_peak(0));
	CHECK_LE("driver's peak bytes over all processes", fakecuda_peak(0), cap);
	if (refused == 0 || ok == 0) {
		fprintf(stderr, "FAIL: the workers never contended for the cap (granted %d, refused %d)\n", ok,
			refused);
		failures++;
	}
	CHECK_EQ("driver's live bytes at the end", fakecuda_live(0), 0);

	/* A process killed while holding the whole cap: its charge is reaped. */
	pid_t pid = fork();
	if (pid == 0) {
		CUdeviceptr p;
		if (cuMemAlloc_v2(&p, cap) != 0)
			_exit(1);
		raise(SIGKILL);
	}
	int status;
	waitpid(pid, &status, 0);
	CHECK_EQ("holder killed", WIFSIGNALED(status), 1);
	/* The fake driver does not free a dead process's memory (a real one
	 * does): credit it by hand so only the ledger is under test. */
	atomic_store(&fake_cuda_ledger()->live[0], 0);
	CUdeviceptr p;
	CHECK_EQ("whole cap after the holder died", cuMemAlloc_v2(&p, cap), 0);
	CHECK_EQ("free", cuMemFree_v2(p), 0);
	check_reported(ctx, cap, 0, 0);
}

static void run_badfile(void)
{
	const char *ctx = "badfile";
	CUdeviceptr p;
	setup("limit_bytes = 10G\n");
	CHECK_EQ("allocation under a broken limit file", cuMemAlloc_v2(&p, 4096), OOM);
	CHECK_EQ("driver's live bytes", fakecuda_live(0), 0);
}

static void run_nolimit(void)
{
	const char *ctx = "nolimit";
	CUdeviceptr p;
	size_t f, t;
	setup(NULL);
	CHECK_EQ("allocation with no limit file", cuMemAlloc_v2(&p, UINT64_C(60) << 30), 0);
	CHECK_EQ("cuMemGetInfo_v2 rc", cuMemGetInfo_v2(&f, &t), 0);
	CHECK_EQ("cuMemGetInfo_v2 total: the device's", t, fake_cuda_total());
	CHECK_EQ("free", cuMemFree_v2(p), 0);
}

/* ---- the ledger against dead, hostile and planted things ---- */

#define SKIP 77

static void wait_ok(const char *ctx, const char *what, pid_t pid)
{
	int status;
	CHECK_EQ(what, waitpid(pid, &status, 0), pid);
	CHECK_EQ(what, WIFEXITED(status) ? WEXITSTATUS(status) : 1000 + WTERMSIG(status), 0);
}

/* Runs fn(arg) as PID 1 of a new PID namespace; returns that process's pid
 * as this namespace sees it (the caller waits for the returned middle
 * process, *middle), or -1 (SKIP set) without CAP_SYS_ADMIN. */
static pid_t in_pidns(void (*fn)(uint64_t), uint64_t arg, pid_t *middle, bool *skip)
{
	int fds[2];
	*skip = false;
	if (pipe(fds) != 0)
		exit(100);
	pid_t m = fork();
	if (m == 0) {
		close(fds[0]);
		if (unshare(CLONE_NEWPID) != 0) {
			pid_t none = -1;
			if (write(fds[1], &none, sizeof(none)) < 0)
				_exit(100);
			_exit(errno == EPERM ? SKIP : 100);
		}
		pid_t inner = fork();
		if (inner == 0) {
			close(fds[1]);
			if (getpid() != 1)
				_exit(101);
			fn(arg);
			exit(failures ? 1 : 0); /* a normal exit: atexit, destructors */
		}
		if (write(fds[1], &inner, sizeof(inner)) < 0)
			_exit(100);
		int status;
		waitpid(inner, &status, 0);
		_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	}
	close(fds[1]);
	pid_t inner = -1;
	if (read(fds[0], &inner, sizeof(inner)) != (ssize_t)sizeof(inner))
		inner = -1;
	close(fds[0]);
	*middle = m;
	if (inner < 0) {
		int status;
		waitpid(m, &status, 0);
		*skip = WIFEXITED(status) && WEXITSTATUS(status) == SKIP;
	}
	return inner;
}

static int ready_fd = -1;

/* PID 1: take the whole cap, say so, wait to be killed. */
static void hold_cap(uint64_t cap)
{
	CUdeviceptr p;
	char c = cuMemAlloc_v2(&p, cap) == 0 ? 'y' : 'n';
	if (write(ready_fd, &c, 1) != 1)
		_exit(100);
	for (;;)
		pause();
}

/* A fresh process (the library not yet started in it) allocates `bytes`;
 * returns the CUDA result. */
static int alloc_in_child(uint64_t bytes, bool keep)
{
	pid_t pid = fork();
	if (pid == 0) {
		CUdeviceptr p;
		CUresult r = cuMemAlloc_v2(&p, bytes);
		if (r == 0 && !keep)
			cuMemFree_v2(p);
		_exit(r);
	}
	int status;
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1000;
}

static int run_pidns(uint64_t cap)
{
	char text[64];
	const char *ctx = "pidns";
	int fds[2];
	bool skip;
	pid_t middle;
	snprintf(text, sizeof(text), "limit_bytes = %" PRIu64 "\n", cap);
	setup(text);
	if (pipe(fds) != 0)
		exit(100);
	ready_fd = fds[1];
	pid_t holder = in_pidns(hold_cap, cap, &middle, &skip);
	close(fds[1]);
	if (skip) {
		fprintf(stderr, "pidns: unshare(CLONE_NEWPID) not permitted: skipped\n");
		return SKIP;
	}
	char c = 0;
	CHECK_EQ("holder started", holder > 0, 1);
	CHECK_EQ("holder report", read(fds[0], &c, 1), 1);
	CHECK_EQ("holder, PID 1 of its namespace, granted the whole cap", c, 'y');
	kill(holder, SIGKILL);
	int status;
	waitpid(middle, &status, 0);
	CHECK_EQ("holder killed", WIFEXITED(status) ? WEXITSTATUS(status) : 0, 128 + SIGKILL);
	/* The fake driver does not free a dead process's memory (a real one
	 * does): credit it by hand so only the ledger is under test. */
	atomic_store(&fake_cuda_ledger()->live[0], 0);
	CHECK_EQ("the next process: the whole cap", alloc_in_child(cap, false), 0);
	CUdeviceptr p;
	CHECK_EQ("this process: the whole cap", cuMemAlloc_v2(&p, cap), 0);
	CHECK_EQ("one byte more", alloc_in_child(1, false), OOM);
	CHECK_EQ("free", cuMemFree_v2(p), 0);
	check_reported(ctx, cap, 0, 0);
	return 0;
}

/* PID 1: charge cap/4, free it if `arg` says so, exit normally. */
static void charge_and_exit(uint64_t arg)
{
	const char *ctx = "exiting process";
	uint64_t cap = arg >> 1;
	CUdeviceptr p;
	CHECK_EQ("a quarter of the cap", cuMemAlloc_v2(&p, cap / 4), 0);
	if (arg & 1)
		CHECK_EQ("free", cuMemFree_v2(p), 0);
}

static int run_exits(uint64_t cap, int n)
{
	char text[64];
	const char *ctx = "exits";
	bool skip;
	pid_t middle;
	snprintf(text, sizeof(text), "limit_bytes = %" PRIu64 "\n", cap);
	setup(text);
	for (int i = 0; i < n; i++) {
		in_pidns(charge_and_exit, cap << 1 | (uint64_t)(i & 1), &middle, &skip);
		if (skip) {
			fprintf(stderr, "exits: unshare(CLONE_NEWPID) not permitted: skipped\n");
			return SKIP;
		}
		char what[64];
		snprintf(what, sizeof(what), "process %d of %d (PID 1, normal exit)", i + 1, n);
		wait_ok(ctx, what, middle);
		atomic_store(&fake_cuda_ledger()->live[0], 0); /* see run_pidns */
		if (failures)
			break;
	}
	CHECK_EQ("the whole cap after the exits", alloc_in_child(cap, false), 0);
	check_reported(ctx, cap, 0, 0);
	return 0;
}

static char ledger_path[160];

/* Tenant 1: holds cap/2, overwrites the ledger file with `pattern` (every
 * 8-byte word from `from`), dies without freeing. */
static void tenant_overwrites(uint64_t cap, uint64_t pattern, off_t from)
{
	pid_t pid = fork();
	if (pid == 0) {
		CUdeviceptr p;
		if (cuMemAlloc_v2(&p, cap / 2) != 0)
			_exit(1);
		int fd = open(ledger_path, O_RDWR);
		struct stat st;
		if (fd < 0 || fstat(fd, &st) != 0)
			_exit(2);
		for (off_t o = from; o + 8 <= st.st_size; o += 8)
			if (pwrite(fd, &pattern, 8, o) != 8)
				_exit(3);
		_exit(0);
	}
	int status;
	waitpid(pid, &status, 0);
	const char *ctx = "tenant 1";
	CHECK_EQ("tenant 1 charged and wrote the ledger", WIFEXITED(status) ? WEXITSTATUS(status) : 1000, 0);
	atomic_store(&fake_cuda_ledger()->live[0], 0); /* see run_pidns */
}

/* Tenant 2: a process holds the whole cap; another gets not one byte. */
static void next_tenant(const char *ctx, uint64_t cap)
{
	int up[2], down[2];
	if (pipe(up) != 0 || pipe(down) != 0)
		exit(100);
	pid_t holder = fork();
	if (holder == 0) {
		CUdeviceptr p;
		char c = cuMemAlloc_v2(&p, cap) == 0 ? 'y' : 'n';
		if (write(up[1], &c, 1) != 1)
			_exit(100);
		char done;
		if (read(down[0], &done, 1) < 0) /* until the test is done */
			_exit(100);
		if (c == 'y')
			cuMemFree_v2(p);
		_exit(0);
	}
	char c = 0;
	CHECK_EQ("next tenant's first process: report", read(up[0], &c, 1), 1);
	CHECK_EQ("next tenant's first process: the whole cap (it costs nothing)", c, 'y');
	CHECK_EQ("next tenant's second process: one byte more (it gains nothing)", alloc_in_child(1, false), OOM);
	if (write(down[1], &c, 1) != 1)
		exit(100);
	wait_ok(ctx, "holder", holder);
	close(up[0]);
	close(up[1]);
	close(down[0]);
	close(down[1]);
	atomic_store(&fake_cuda_ledger()->live[0], 0);
}

static int run_tamper(uint64_t cap)
{
	char text[64];
	snprintf(text, sizeof(text), "limit_bytes = %" PRIu64 "\n", cap);
	setup(text);
	snprintf(ledger_path, sizeof(ledger_path), "%s/ledger", dir);
	/* After the 16-byte header: every count (and slot word) := cap. */
	tenant_overwrites(cap, cap, 16);
	next_tenant("counts inflated", cap);
	/* Every 32-bit word := 1: every slot looks claimed, with ~4 GiB, by pid 1. */
	tenant_overwrites(cap, UINT64_C(0x0000000100000001), 16);
	next_tenant("slots forged as claimed by pid 1", cap);
	/* The whole file, header included: two counts that wrap to 0. */
	tenant_overwrites(cap, UINT64_C(0x8000000000000000), 0);
	next_tenant("whole file overwritten", cap);
	/* A stale ledger of another size. */
	tenant_overwrites(cap, 0, 0);
	if (truncate(ledger_path, 100) != 0)
		exit(100);
	next_tenant("ledger truncated", cap);
	return 0;
}

static int run_untrusted(void)
{
	const char *ctx = "untrusted";
	char victim[160];
	struct stat st;
	setup("limit_bytes = 1048576\n");
	snprintf(ledger_path, sizeof(ledger_path), "%s/ledger", dir);
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	if (symlink(victim, ledger_path) != 0)
		exit(100);
	CHECK_EQ("allocation with a symbolic link as the ledger: refused", alloc_in_child(4096, false), OOM);
	CHECK_EQ("the link's target was not created", stat(victim, &st) != 0 && errno == ENOENT, 1);
	CHECK_EQ("the driver was not called", fakecuda_live(0), 0);
	unlink(ledger_path);
	/* A folder anyone can write, not sticky: anyone could swap the file. */
	if (chmod(dir, 0777) != 0)
		exit(100);
	CHECK_EQ("allocation with a folder others can write: refused", alloc_in_child(4096, false), OOM);
	CHECK_EQ("the driver was not called", fakecuda_live(0), 0);
	/* Sticky (as /tmp), or the owner's alone: used. */
	if (chmod(dir, 01777) != 0)
		exit(100);
	CHECK_EQ("allocation with a sticky folder", alloc_in_child(4096, false), 0);
	if (chmod(dir, 0700) != 0)
		exit(100);
	CHECK_EQ("allocation with the owner's folder", alloc_in_child(4096, false), 0);
	return 0;
}

/* As a fresh process of user `uid`: allocate `bytes`, keep them until
 * `release` is read (or free at once when release < 0); the CUDA result is
 * written to `report`. */
static pid_t alloc_as(uid_t uid, uint64_t bytes, int report, int release)
{
	pid_t pid = fork();
	if (pid == 0) {
		if ((uid && (setgid(uid) != 0 || setuid(uid) != 0)))
			_exit(100);
		CUdeviceptr p;
		char r = (char)cuMemAlloc_v2(&p, bytes);
		if (write(report, &r, 1) != 1)
			_exit(100);
		char c;
		if (r == 0 && release >= 0 && read(release, &c, 1) < 0)
			_exit(100);
		if (r == 0)
			cuMemFree_v2(p);
		_exit(0);
	}
	return pid;
}

static int run_reallocate(uint64_t cap)
{
	char text[64], ldir[128], path[200], err[512];
	const char *ctx = "reallocate";
	const uid_t other = 65534;
	if (geteuid() != 0) {
		fprintf(stderr, "reallocate: needs root (to run tenants as two users): skipped\n");
		return SKIP;
	}
	umask(022);
	snprintf(text, sizeof(text), "limit_bytes = %" PRIu64 "\n", cap);
	setup(text);
	/* The agent's layout: <memcap-dir>/<UUID>-u<unit>-n<N>/ledger/ledger. */
	snprintf(ldir, sizeof(ldir), "%s/ledger", dir);
	snprintf(ledger_path, sizeof(ledger_path), "%s/ledger", ldir);
	setenv("GPUFLEET_MEMCAP_LEDGER", ledger_path, 1);
	snprintf(path, sizeof(path), "%s/fake-ledger", dir);
	int ffd = open(path, O_RDWR | O_CREAT, 0666); /* the fake driver's, for both users */
	if (ffd < 0 || fchmod(ffd, 0666) != 0 || chmod(dir, 0755) != 0)
		exit(100);
	close(ffd);

	/* Allocation 1: a root tenant charges half the cap, overwrites the
	 * ledger, dies. */
	CHECK_EQ("allocation 1: fresh ledger", gf_dp_fresh_ledger(ldir, err, sizeof(err)), 0);
	tenant_overwrites(cap, cap, 16);
	/* ... and, as root in its container, gave the folder away and planted
	 * a link to a file of its choosing. */
	char victim[160];
	struct stat st;
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	if (chown(ldir, other, other) != 0 || chmod(ldir, 0777) != 0 || unlink(ledger_path) != 0 ||
	    symlink(victim, ledger_path) != 0)
		exit(100);

	/* Allocation 2 of the same units: a tenant of another user. */
	CHECK_EQ("allocation 2: fresh ledger", gf_dp_fresh_ledger(ldir, err, sizeof(err)), 0);
	CHECK_EQ("allocation 2: the folder's owner", stat(ldir, &st) == 0 ? st.st_uid : 1000, 0);
	CHECK_EQ("allocation 2: the folder's mode", st.st_mode & 07777, 0755);
	CHECK_EQ("allocation 2: the ledger, a regular empty file", lstat(ledger_path, &st) == 0 && S_ISREG(st.st_mode) &&
		 st.st_size == 0, 1);
	CHECK_EQ("allocation 2: the ledger's mode", st.st_mode & 07777, 0666);
	int up[2], down[2];
	if (pipe(up) != 0 || pipe(down) != 0)
		exit(100);
	char r = 99;
	pid_t holder = alloc_as(other, cap, up[1], down[0]);
	CHECK_EQ("allocation 2, uid 65534: report", read(up[0], &r, 1), 1);
	CHECK_EQ("allocation 2, uid 65534: the whole cap", r, 0);
	pid_t second = alloc_as(other, 1, up[1], -1);
	CHECK_EQ("allocation 2, uid 65534, second process: report", read(up[0], &r, 1), 1);
	CHECK_EQ("allocation 2, uid 65534, second process: one byte more", r, OOM);
	if (write(down[1], "x", 1) != 1)
		exit(100);
	wait_ok(ctx, "holder", holder);
	wait_ok(ctx, "second", second);
	CHECK_EQ("the planted link's target was not created", stat(victim, &st) != 0 && errno == ENOENT, 1);
	unlink(ledger_path);
	rmdir(ldir);
	return 0;
}

/* ---- the largest batch that fits (a training loop's sizing) ---- */

/* A model as its memory sees it: weights (and optimizer state) held for the
 * whole run; one step at batch b takes a workspace plus b x per_sample of
 * activations, in `layers` allocations, all freed at the end of the step. */
struct model {
	uint64_t weights, workspace, per_sample;
	int layers;
};

/* One training step at batch b through `a`: every allocation of the step
 * live at once (the peak of a forward + backward), then freed.  Returns
 * the first refusal (CUDA_ERROR_OUT_OF_MEMORY) or 0; *footprint (optional)
 * = the free memory cuMemGetInfo reports before the step minus at its peak. */
static CUresult train_step(const struct api *a, const struct model *m, uint64_t b, uint64_t *footprint)
{
	CUdeviceptr p[17];
	int n = 0;
	size_t f0 = 0, f1 = 0, t = 0;
	CUresult r = a->info(&f0, &t);
	if (r == 0)
		r = a->alloc(&p[n], m->workspace);
	if (r == 0)
		n++;
	for (int i = 0; r == 0 && i < m->layers && i < 16; i++) {
		r = a->alloc(&p[n], b * m->per_sample / (uint64_t)m->layers);
		if (r == 0)
			n++;
	}
	if (r == 0)
		r = a->info(&f1, &t);
	if (r == 0 && footprint)
		*footprint = f0 - f1;
	while (n)
		a->free(p[--n]);
	return r;
}

/* What a PyTorch user writes (torch.cuda.mem_get_info, a step at batch 1
 * and 2 to measure): the step's footprint is fixed + b x per_sample; the
 * answer is the largest b whose footprint fits the free memory reported
 * now, less `margin_milli` thousandths of it.  0 = not even batch 1. */
static uint64_t largest_batch(const struct api *a, const struct model *m, unsigned margin_milli)
{
	uint64_t fp1, fp2;
	size_t free_b, total_b;
	if (train_step(a, m, 1, &fp1) != 0 || train_step(a, m, 2, &fp2) != 0 || fp2 <= fp1 ||
	    a->info(&free_b, &total_b) != 0)
		return 0;
	uint64_t per = fp2 - fp1, fixed = fp1 - per;
	uint64_t budget = (uint64_t)free_b - (uint64_t)free_b / 1000 * margin_milli;
	return budget < fixed + per ? 0 : (budget - fixed) / per;
}

/* The container's weights held, the search run: the batch it picks runs,
 * the next one is refused with CUDA_ERROR_OUT_OF_MEMORY and the driver
 * never held more than `limit` (the cap, or the instance's memory).  With a
 * 5 % margin: a batch that runs, at most the exact one, and one more would
 * pass the margin.  `others` = what other processes of the container hold. */
static void check_batch_search(const char *ctx, uint64_t limit, uint64_t others, const struct model *m)
{
	struct api a;
	CUdeviceptr w;
	size_t f = 0, t = 0;
	resolve(&a, GPA_V2); /* as CUDA 12's runtime finds the driver's functions */
	CHECK_EQ("weights", a.alloc(&w, m->weights), 0);
	CHECK_EQ("cuMemGetInfo rc", a.info(&f, &t), 0);
	CHECK_EQ("free reported: the limit less the container's holdings", f, limit - others - m->weights);
	CHECK_EQ("total reported: the limit (the cap, or the instance's memory if smaller)", t, limit);
	CHECK_EQ("cuDeviceTotalMem rc", a.totalmem(&t, 0), 0);
	CHECK_EQ("cuDeviceTotalMem: the limit too (PyTorch's total_memory)", t, limit);
	uint64_t b = largest_batch(&a, m, 0);
	uint64_t want = (limit - others - m->weights - m->workspace) / m->per_sample;
	fprintf(stderr, "%s: limit %" PRIu64 " MiB, others hold %" PRIu64 " MiB: largest batch %" PRIu64
			" (expected %" PRIu64 ")\n",
		ctx, limit >> 20, others >> 20, b, want);
	CHECK_EQ("largest batch", b, want);
	CHECK_EQ("a step at the largest batch", train_step(&a, m, b, NULL), 0);
	CHECK_EQ("a step at one more", train_step(&a, m, b + 1, NULL), OOM);
	CHECK_LE("driver's peak bytes", fakecuda_peak(0), limit);
	uint64_t bm = largest_batch(&a, m, 50);
	CHECK_EQ("with a 5% margin: a step runs", bm > 0 && train_step(&a, m, bm, NULL) == 0, 1);
	CHECK_LE("with a 5% margin: at most the exact batch", bm, b);
	uint64_t budget = f - f / 1000 * 50;
	CHECK_EQ("with a 5% margin: the largest within it",
		 m->workspace + bm * m->per_sample <= budget && m->workspace + (bm + 1) * m->per_sample > budget, 1);
	CHECK_EQ("free the weights", a.free(w), 0);
}

/* test_memcap batch share CAP | mig INSTANCE | mig-capped INSTANCE CAP |
 * processes CAP: the device is the fake's 80 GiB GPU, or a MIG instance
 * (FAKE_CUDA_TOTAL = the instance's memory, which is what the driver
 * reports for a MIG device). */
static int run_batch(const char *mode, uint64_t x, uint64_t y)
{
	char text[64], ctx[96];
	uint64_t limit = x;
	bool capped = true;
	if (strcmp(mode, "mig") == 0)
		capped = false;
	else if (strcmp(mode, "mig-capped") == 0)
		limit = y < x ? y : x;
	else if (strcmp(mode, "share") != 0 && strcmp(mode, "processes") != 0)
		return 100;
	if (strncmp(mode, "mig", 3) == 0) {
		snprintf(text, sizeof(text), "%" PRIu64, x);
		setenv("FAKE_CUDA_TOTAL", text, 1);
	}
	snprintf(text, sizeof(text), "limit_bytes = %" PRIu64 "\n", strcmp(mode, "mig-capped") == 0 ? y : x);
	setup(capped ? text : NULL);
	snprintf(ctx, sizeof(ctx), "batch %s", mode);
	/* Weights a quarter of the limit; activations 5 MiB + 4 KiB a sample
	 * (not a divisor of anything here), four layers. */
	struct model m = { limit / 4, 64u << 20, (UINT64_C(5) << 20) + 16384, 4 };
	uint64_t others = 0;
	int up[2], down[2];
	pid_t holder = -1;
	if (strcmp(mode, "processes") == 0) {
		/* Another process of the container holds 3/8 of the cap. */
		others = limit / 8 * 3;
		if (pipe(up) != 0 || pipe(down) != 0)
			exit(100);
		holder = fork();
		if (holder == 0) {
			CUdeviceptr p;
			char c = cuMemAlloc_v2(&p, others) == 0 ? 'y' : 'n';
			if (write(up[1], &c, 1) != 1 || read(down[0], &c, 1) < 0)
				_exit(100);
			exit(0); /* a normal exit credits its charges at once */
		}
		char c = 0;
		CHECK_EQ("the other process holds its part", read(up[0], &c, 1) == 1 && c == 'y', 1);
	}
	check_batch_search(ctx, limit, others, &m);
	if (holder > 0) {
		if (write(down[1], "x", 1) != 1)
			exit(100);
		wait_ok(ctx, "the other process", holder);
		atomic_store(&fake_cuda_ledger()->live[0], 0); /* see run_pidns */
		/* Gone: its part is free again, the batch grows to match. */
		check_batch_search("batch processes, the other gone", limit, 0, &m);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (!getenv("LD_PRELOAD") || !strstr(getenv("LD_PRELOAD"), "gpufleet-memcap")) {
		fprintf(stderr, "run with LD_PRELOAD=.../libgpufleet-memcap.so\n");
		return 100;
	}
	if (argc == 3 && strcmp(argv[1], "paths") == 0)
		run_paths(parse_u64(argv[2]));
	else if (argc == 4 && strcmp(argv[1], "processes") == 0)
		run_processes(parse_u64(argv[2]), (int)parse_u64(argv[3]));
	else if (argc == 2 && strcmp(argv[1], "badfile") == 0)
		run_badfile();
	else if (argc == 2 && strcmp(argv[1], "nolimit") == 0)
		run_nolimit();
	else if (argc == 3 && strcmp(argv[1], "pidns") == 0) {
		if (run_pidns(parse_u64(argv[2])) == SKIP)
			return SKIP;
	} else if (argc == 4 && strcmp(argv[1], "exits") == 0) {
		if (run_exits(parse_u64(argv[2]), (int)parse_u64(argv[3])) == SKIP)
			return SKIP;
	} else if (argc == 3 && strcmp(argv[1], "reallocate") == 0) {
		if (run_reallocate(parse_u64(argv[2])) == SKIP)
			return SKIP;
	} else if (argc == 3 && strcmp(argv[1], "tamper") == 0)
		run_tamper(parse_u64(argv[2]));
	else if (argc == 2 && strcmp(argv[1], "untrusted") == 0)
		run_untrusted();
	else if ((argc == 4 || argc == 5) && strcmp(argv[1], "batch") == 0) {
		if (run_batch(argv[2], parse_u64(argv[3]), argc == 5 ? parse_u64(argv[4]) : 0) != 0) {
			fprintf(stderr, "batch: share CAP | mig INSTANCE | mig-capped INSTANCE CAP | processes CAP\n");
			return 100;
		}
	}
	else {
		fprintf(stderr, "usage: test_memcap paths CAP | processes CAP N | badfile | nolimit | pidns CAP |"
				" exits CAP N | tamper CAP | untrusted | reallocate CAP | batch MODE ...\n");
		return 100;
	}
	if (failures)
		fprintf(stderr, "%d check(s) failed\n", failures);
	else
		fprintf(stderr, "all checks passed\n");
	return failures > 100 ? 100 : failures;
}
