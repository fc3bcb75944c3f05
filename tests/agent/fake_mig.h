/*
 * tests/agent/fake_mig.h - the FAKE NVML's MIG "driver": per GPU model the
 * GPU-instance profile table and legal placements (NVIDIA's MIG user guide
 * and `nvidia-smi mig -lgipp` for A100 40/80 GB, H100 80 GB, H200), MIG
 * mode, GPU instances with one full-size compute instance each, and the
 * MIG devices they make.  Shared by fake_nvml.c (device calls) and
 * fake_mig.c (the MIG management calls and the state kept on disk).
 *
 * State across processes: like the real driver, which keeps MIG mode and
 * instances until reboot whoever created them, the fake writes its MIG
 * state to $GF_FAKE_NVML_MIG_STATE (default "<state file>.mig") after each
 * change and reads it at the first nvmlInit, keyed by GPU UUID; a GPU
 * whose scripted state has `mig` directives keeps those (read-only) and
 * refuses MIG management (NOT_SUPPORTED).
 */
#ifndef GF_TESTS_FAKE_MIG_H
#define GF_TESTS_FAKE_MIG_H

#include <stdbool.h>

#include "fake_state.h"

struct fake_mig_profile {
	unsigned idx;              /* nvmlGpuInstanceProfile index (the API argument) */
	unsigned id;               /* profile id nvidia-smi -lgip prints */
	const char *name;          /* "3g.40gb" */
	unsigned slices;           /* compute slices */
	unsigned count;            /* instances at most */
	unsigned size;             /* memory slices (of 8) */
	unsigned long long mem_mb; /* approximate, as the fake's */
	unsigned starts;           /* bit s: a legal start slot */
};

struct fake_drv_gi {
	bool used;
	unsigned id;       /* GPU instance id */
	unsigned profile;  /* profile index */
	unsigned start;
	bool ci;           /* its compute instance exists: a MIG device */
	char uuid[64];     /* MIG-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx */
};

/* The profile of index idx on GPU g's model; NULL if not supported. */
const struct fake_mig_profile *fake_mig_profile(const struct fake_gpu *g, unsigned idx);

/* MIG mode of GPU gpu: the driver's when set, else the scripted `mig` key;
 * -1 when neither (NOT_SUPPORTED). */
int fake_mig_mode(unsigned gpu);

/* The i-th MIG device of GPU gpu (GIs with a compute instance, in GI-id
 * order): its slot in the driver table, or -1. */
int fake_mig_device(unsigned gpu, unsigned i);

/* Slot of a GPU's driver table (0..FAKE_MAX_MIG-1); NULL if unused. */
const struct fake_drv_gi *fake_mig_slot(unsigned gpu, unsigned slot);

/* Called by fake_nvml.c at the first nvmlInit (state path known) and at nvmlShutdown. */
void fake_mig_load(const char *state_path);
void fake_mig_reset(void);

/* From fake_nvml.c: resolve a device handle (counting the call, applying
 * scripted loss) to its GPU; *slot is -1 for the GPU itself, else the MIG
 * slot; *driver tells a driver-made MIG device from a scripted one.
 * 0 or an NVML error. */
int fake_resolve(void *h, struct fake_gpu **g, unsigned *gpu, int *slot, bool *driver);
/* The current scripted state (NULL before nvmlInit). */
struct fake_state *fake_current(void);
/* The handle of GPU gpu, and of driver MIG slot `slot` on it. */
void *fake_gpu_handle(unsigned gpu);
void *fake_mig_handle(unsigned gpu, unsigned slot);

#endif
