/*
 * tests/memcap/fake_nvml_mem.c - a FAKE libnvidia-ml.so.1 with just what the
 * memcap tests query: device handles by index, the index back, and memory
 * info (total = FAKE_CUDA_TOTAL, used = the FAKE driver's live bytes).
 */
#define _GNU_SOURCE 1
#include "fake_cuda.h"

#include <dlfcn.h>
#include <stdint.h>

#define EXPORT __attribute__((visibility("default")))
typedef struct fake_nvml_dev *nvmlDevice_t;
typedef struct {
	unsigned long long total, free, used;
} nvmlMemory_t;
typedef struct {
	unsigned int version;
	unsigned long long total, reserved, free, used;
} nvmlMemory_v2_t;

EXPORT int nvmlInit_v2(void);
EXPORT int nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d);
EXPORT int nvmlDeviceGetIndex(nvmlDevice_t d, unsigned int *i);
EXPORT int nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m);
EXPORT int nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t d, nvmlMemory_v2_t *m);
EXPORT void *fakenvml_dlsym_next(const char *name);

/* dlsym(RTLD_NEXT, name) asked from inside this library: the test checks
 * that the interposed dlsym answers it for this library, not for itself. */
void *fakenvml_dlsym_next(const char *name)
{
	void *p = dlsym(RTLD_NEXT, name);
	__asm__ volatile("" : "+r"(p)); /* no tail call: the caller must be this library */
	return p;
}

/* Handles are 1 + index, never dereferenced. */
static unsigned int index_of(nvmlDevice_t d)
{
	return (unsigned int)((uintptr_t)d - 1);
}

int nvmlInit_v2(void)
{
	return 0;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d)
{
	if (i >= FAKE_CUDA_DEVICES)
		return 2; /* NVML_ERROR_INVALID_ARGUMENT */
	*d = (nvmlDevice_t)(uintptr_t)(i + 1);
	return 0;
}

int nvmlDeviceGetIndex(nvmlDevice_t d, unsigned int *i)
{
	*i = index_of(d);
	return 0;
}

int nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m)
{
	uint64_t total = fake_cuda_total(), used = atomic_load(&fake_cuda_ledger()->live[index_of(d)]);
	m->total = total;
	m->used = used + (UINT64_C(300) << 20); /* v1 counts the driver's reserve */
	m->free = total - used;
	return 0;
}

int nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t d, nvmlMemory_v2_t *m)
{
	uint64_t total = fake_cuda_total(), used = atomic_load(&fake_cuda_ledger()->live[index_of(d)]);
	m->total = total;
	m->reserved = UINT64_C(300) << 20;
	m->used = used;
	m->free = total - used;
	return 0;
}
