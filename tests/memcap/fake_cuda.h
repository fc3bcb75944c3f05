/*
 * tests/memcap/fake_cuda.h - the FAKE CUDA driver (libcuda.so.1) and FAKE
 * NVML (libnvidia-ml.so.1) the memcap tests run against.  No GPU: device
 * pointers are numbers, memory is a counter.  The fakes' own "physical"
 * usage per device is kept in a shared file (env FAKE_CUDA_LEDGER) so a test
 * can check, across processes, what the driver really handed out:
 * live bytes now and the peak ever.  Device total: env FAKE_CUDA_TOTAL
 * (bytes, default 80 GiB); set to a MIG instance's memory it stands for a
 * MIG device, whose total and free the real driver reports as the
 * instance's.  Test-only; not the real driver's behaviour beyond
 * the signatures and the error codes used.
 */
#ifndef GF_FAKE_CUDA_H
#define GF_FAKE_CUDA_H

#include <stdatomic.h>
#include <stdint.h>

#define FAKE_CUDA_DEVICES 16

struct fake_cuda_ledger {
	_Atomic uint64_t live[FAKE_CUDA_DEVICES];
	_Atomic uint64_t peak[FAKE_CUDA_DEVICES];
};

/* Maps the ledger named by FAKE_CUDA_LEDGER (a private one if unset). */
struct fake_cuda_ledger *fake_cuda_ledger(void);
uint64_t fake_cuda_total(void);

/* Fake-only exports of libcuda.so.1 (the test calls them directly). */
uint64_t fakecuda_live(int dev);
uint64_t fakecuda_peak(int dev);
void fakecuda_set_device(int dev); /* what cuCtxGetDevice answers, per thread */

#endif
