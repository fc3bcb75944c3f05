/*
 * tests/memcap/fake_cuda.c - a FAKE libcuda.so.1 for the memcap tests (see
 * fake_cuda.h).  Implements the allocation entry points the interposer
 * hooks, cuCtxGetDevice, cuMemGetInfo_v2, cuDeviceTotalMem_v2 and cuGetProcAddress (v1, _v2)
 * with the driver's names and signatures: "cuMemAlloc" at version >= 3020
 * is cuMemAlloc_v2, the async functions have _ptsz variants returned for
 * CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM.  An allocation past the
 * device total fails with CUDA_ERROR_OUT_OF_MEMORY like the driver's.
 * Pitch: width rounded up to 512 bytes.
 */
#include "fake_cuda.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))
typedef int CUresult;
typedef unsigned long long CUdeviceptr;
typedef unsigned long long CUmemGenericAllocationHandle;
typedef struct {
	int type, requestedHandleTypes;
	struct {
		int type, id;
	} location;
} CUmemAllocationProp;

#define OK 0
#define INVALID_VALUE 1
#define OUT_OF_MEMORY 2
#define NOT_FOUND 500

EXPORT CUresult cuInit(unsigned int flags);
EXPORT CUresult cuCtxGetDevice(int *dev);
EXPORT CUresult cuMemGetInfo_v2(size_t *free_b, size_t *total_b);
EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, int dev);
EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n);
EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr *p, size_t *pitch, size_t w, size_t h, unsigned int e);
EXPORT CUresult cuMemAllocManaged(CUdeviceptr *p, size_t n, unsigned int flags);
EXPORT CUresult cuMemAllocAsync(CUdeviceptr *p, size_t n, void *s);
EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr *p, size_t n, void *s);
EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr *p, size_t n, void *pool, void *s);
EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *p, size_t n, void *pool, void *s);
EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle *h, size_t n, const CUmemAllocationProp *prop,
			    unsigned long long flags);
EXPORT CUresult cuMemFree_v2(CUdeviceptr p);
EXPORT CUresult cuMemFreeAsync(CUdeviceptr p, void *s);
EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr p, void *s);
EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle h);
EXPORT CUresult cuGetProcAddress(const char *sym, void **pfn, int version, unsigned long long flags);
EXPORT CUresult cuGetProcAddress_v2(const char *sym, void **pfn, int version, unsigned long long flags,
				    int *status);
EXPORT uint64_t fakecuda_live(int dev);
EXPORT uint64_t fakecuda_peak(int dev);
EXPORT void fakecuda_set_device(int dev);

static _Thread_local int cur_dev;

/* Allocation ids -> bytes, device; pointer = BASE + id * 4096. */
#define BASE UINT64_C(0x7f0000000000)
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t *sizes;
static int *devs;
static size_t nids, capids;

static CUresult take(int dev, uint64_t n, unsigned long long *out)
{
	struct fake_cuda_ledger *l = fake_cuda_ledger();
	if (dev < 0 || dev >= FAKE_CUDA_DEVICES || !out)
		return INVALID_VALUE;
	uint64_t cur = atomic_load(&l->live[dev]), total = fake_cuda_total();
	do {
		if (n > total || cur > total - n)
			return OUT_OF_MEMORY;
	} while (!atomic_compare_exchange_weak(&l->live[dev], &cur, cur + n));
	uint64_t peak = atomic_load(&l->peak[dev]);
	while (cur + n > peak && !atomic_compare_exchange_weak(&l->peak[dev], &peak, cur + n))
		;
	pthread_mutex_lock(&mu);
	if (nids == capids) {
		size_t nc = capids ? capids * 2 : 4096;
		uint64_t *s = realloc(sizes, nc * sizeof(*s));
		int *d = s ? realloc(devs, nc * sizeof(*d)) : NULL;
		if (!s || !d)
			abort();
		sizes = s;
		devs = d;
		capids = nc;
	}
	sizes[nids] = n;
	devs[nids] = dev;
	*out = BASE + (uint64_t)(nids + 1) * 4096;
	nids++;
	pthread_mutex_unlock(&mu);
	return OK;
}

static CUresult give(uint64_t p)
{
	CUresult r = INVALID_VALUE;
	pthread_mutex_lock(&mu);
	if (p > BASE && (p - BASE) % 4096 == 0) {
		size_t id = (size_t)((p - BASE) / 4096) - 1;
		if (id < nids && sizes[id]) {
			atomic_fetch_sub(&fake_cuda_ledger()->live[devs[id]], sizes[id]);
			sizes[id] = 0;
			r = OK;
		}
	}
	pthread_mutex_unlock(&mu);
	return r;
}

CUresult cuInit(unsigned int flags)
{
	(void)flags;
	return OK;
}

CUresult cuCtxGetDevice(int *dev)
{
	*dev = cur_dev;
	return OK;
}

void fakecuda_set_device(int dev)
{
	cur_dev = dev;
}

uint64_t fakecuda_live(int dev)
{
	return atomic_load(&fake_cuda_ledger()->live[dev]);
}

uint64_t fakecuda_peak(int dev)
{
	return atomic_load(&fake_cuda_ledger()->peak[dev]);
}

CUresult cuMemGetInfo_v2(size_t *free_b, size_t *total_b)
{
	uint64_t total = fake_cuda_total();
	*total_b = (size_t)total;
	*free_b = (size_t)(total - fakecuda_live(cur_dev));
	return OK;
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, int dev)
{
	(void)dev;
	*bytes = (size_t)fake_cuda_total();
	return OK;
}

CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
	return take(cur_dev, n, p);
}

CUresult cuMemAllocPitch_v2(CUdeviceptr *p, size_t *pitch, size_t w, size_t h, unsigned int e)
{
	(void)e;
	size_t row = (w + 511) & ~(size_t)511;
	CUresult r = take(cur_dev, (uint64_t)row * h, p);
	if (r == OK)
		*pitch = row;
	return r;
}

CUresult cuMemAllocManaged(CUdeviceptr *p, size_t n, unsigned int flags)
{
	(void)flags;
	return take(cur_dev, n, p);
}

CUresult cuMemAllocAsync(CUdeviceptr *p, size_t n, void *s)
{
	(void)s;
	return take(cur_dev, n, p);
}

CUresult cuMemAllocAsync_ptsz(CUdeviceptr *p, size_t n, void *s)
{
	(void)s;
	return take(cur_dev, n, p);
}

CUresult cuMemAllocFromPoolAsync(CUdeviceptr *p, size_t n, void *pool, void *s)
{
	(void)pool;
	(void)s;
	return take(cur_dev, n, p);
}

CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *p, size_t n, void *pool, void *s)
{
	(void)pool;
	(void)s;
	return take(cur_dev, n, p);
}

CUresult cuMemCreate(CUmemGenericAllocationHandle *h, size_t n, const CUmemAllocationProp *prop,
		     unsigned long long flags)
{
	(void)flags;
	return take(prop && prop->location.type == 1 ? prop->location.id : cur_dev, n, h);
}

CUresult cuMemFree_v2(CUdeviceptr p)
{
	return give(p);
}

CUresult cuMemFreeAsync(CUdeviceptr p, void *s)
{
	(void)s;
	return give(p);
}

CUresult cuMemFreeAsync_ptsz(CUdeviceptr p, void *s)
{
	(void)s;
	return give(p);
}

CUresult cuMemRelease(CUmemGenericAllocationHandle h)
{
	return give(h);
}

struct proc {
	const char *name;
	int min_version; /* first CUDA version that has this variant */
	void *fn, *ptsz;
};

static const struct proc procs[] = {
	{ "cuMemAlloc", 3020, (void *)cuMemAlloc_v2, NULL },
	{ "cuMemAllocPitch", 3020, (void *)cuMemAllocPitch_v2, NULL },
	{ "cuMemAllocManaged", 6000, (void *)cuMemAllocManaged, NULL },
	{ "cuMemAllocAsync", 11020, (void *)cuMemAllocAsync, (void *)cuMemAllocAsync_ptsz },
	{ "cuMemAllocFromPoolAsync", 11020, (void *)cuMemAllocFromPoolAsync,
	  (void *)cuMemAllocFromPoolAsync_ptsz },
	{ "cuMemCreate", 10020, (void *)cuMemCreate, NULL },
	{ "cuMemFree", 3020, (void *)cuMemFree_v2, NULL },
	{ "cuMemFreeAsync", 11020, (void *)cuMemFreeAsync, (void *)cuMemFreeAsync_ptsz },
	{ "cuMemRelease", 10020, (void *)cuMemRelease, NULL },
	{ "cuMemGetInfo", 3020, (void *)cuMemGetInfo_v2, NULL },
	{ "cuDeviceTotalMem", 3020, (void *)cuDeviceTotalMem_v2, NULL },
	{ "cuCtxGetDevice", 2000, (void *)cuCtxGetDevice, NULL },
	{ "cuGetProcAddress", 12000, (void *)cuGetProcAddress_v2, NULL },
	{ "cuGetProcAddress", 11030, (void *)cuGetProcAddress, NULL },
};

CUresult cuGetProcAddress_v2(const char *sym, void **pfn, int version, unsigned long long flags, int *status)
{
	if (!sym || !pfn)
		return INVALID_VALUE;
	*pfn = NULL;
	for (size_t i = 0; i < sizeof(procs) / sizeof(procs[0]); i++) {
		if (strcmp(sym, procs[i].name) != 0 || version < procs[i].min_version)
			continue;
		*pfn = (flags & 2) && procs[i].ptsz ? procs[i].ptsz : procs[i].fn;
		if (status)
			*status = 0; /* CU_GET_PROC_ADDRESS_SUCCESS */
		return OK;
	}
	if (status)
		*status = 1; /* CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND */
	return NOT_FOUND;
}

CUresult cuGetProcAddress(const char *sym, void **pfn, int version, unsigned long long flags)
{
	return cuGetProcAddress_v2(sym, pfn, version, flags, NULL);
}
