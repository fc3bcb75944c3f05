/*
 * agent/agent_impl.h - internals shared by agent.c (collector, renderer)
 * and inventory.c.  Not a public header.
 */
#ifndef GF_AGENT_IMPL_H
#define GF_AGENT_IMPL_H

#include <pthread.h>
#include <stdint.h>

#include "agent/agent.h"
#include "agent/mig.h"
#include "agent/nvml.h"
#include "agent/pods.h"
#include "k8s/codec.h"

#define GF_AGENT_MAX_GPUS 64
#define GF_AGENT_MAX_PROCS 1024    /* per GPU */
#define GF_AGENT_MAX_GPU_PODS 32   /* distinct pods labelled per GPU */
#define GF_AGENT_LABEL_MAX 2048    /* pre-rendered label prefix */

/* The metric table: X(id, name, type, help, is_float).  Names, types and
 * help texts are dcgm-exporter's default-counters.csv ones (spec §3). */
#define GF_AGENT_METRICS(X)                                                                        \
	X(SM_CLOCK, "DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz).", 0)             \
	X(MEM_CLOCK, "DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz).", 0)       \
	X(MEMORY_TEMP, "DCGM_FI_DEV_MEMORY_TEMP", "gauge", "Memory temperature (in C).", 0)         \
	X(GPU_TEMP, "DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C).", 0)                   \
	X(POWER_USAGE, "DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W).", 1)                  \
	X(TOTAL_ENERGY, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter",                            \
	  "Total energy consumption since boot (in mJ).", 0)                                           \
	X(PCIE_REPLAY, "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "counter", "Total number of PCIe retries.", 0) \
	X(GPU_UTIL, "DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %).", 0)                   \
	X(MEM_COPY_UTIL, "DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %).", 0)      \
	X(ENC_UTIL, "DCGM_FI_DEV_ENC_UTIL", "gauge", "Encoder utilization (in %).", 0)               \
	X(DEC_UTIL, "DCGM_FI_DEV_DEC_UTIL", "gauge", "Decoder utilization (in %).", 0)               \
	X(FB_FREE, "DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB).", 0)           \
	X(FB_USED, "DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB).", 0)           \
	X(FB_RESERVED, "DCGM_FI_DEV_FB_RESERVED", "gauge", "Framebuffer memory reserved (in MiB).", 0) \
	X(NVLINK_BW, "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "counter",                                 \
	  "Total number of NVLink bandwidth counters for all lanes.", 0)                              \
	X(UNC_REMAPPED, "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "counter",                         \
	  "Number of remapped rows for uncorrectable errors", 0)                                      \
	X(COR_REMAPPED, "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "counter",                           \
	  "Number of remapped rows for correctable errors", 0)                                        \
	X(REMAP_FAILURE, "DCGM_FI_DEV_ROW_REMAP_FAILURE", "gauge",                                    \
	  "Whether remapping of rows has failed", 0)                                                  \
	X(PCIE_TX, "DCGM_FI_PROF_PCIE_TX_BYTES", "gauge",                                             \
	  "The rate of data transmitted over the PCIe bus - including both protocol headers and data payloads - in bytes per second.", 0) \
	X(PCIE_RX, "DCGM_FI_PROF_PCIE_RX_BYTES", "gauge",                                             \
	  "The rate of data received over the PCIe bus - including both protocol headers and data payloads - in bytes per second.", 0) \
	X(ECC_SBE_VOL, "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "counter",                                    \
	  "Total number of single-bit volatile ECC errors.", 0)                                       \
	X(ECC_DBE_VOL, "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "counter",                                    \
	  "Total number of double-bit volatile ECC errors.", 0)                                       \
	X(ECC_SBE_AGG, "DCGM_FI_DEV_ECC_SBE_AGG_TOTAL", "counter",                                    \
	  "Total number of single-bit persistent ECC errors.", 0)                                     \
	X(ECC_DBE_AGG, "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL", "counter",                                    \
	  "Total number of double-bit persistent ECC errors.", 0)                                     \
	X(RETIRED_SBE, "DCGM_FI_DEV_RETIRED_SBE", "counter",                                          \
	  "Total number of retired pages due to single-bit errors.", 0)                               \
	X(RETIRED_DBE, "DCGM_FI_DEV_RETIRED_DBE", "counter",                                          \
	  "Total number of retired pages due to double-bit errors.", 0)                               \
	X(RETIRED_PENDING, "DCGM_FI_DEV_RETIRED_PENDING", "counter",                                  \
	  "Total number of pages pending retirement.", 0)

enum gf_agent_metric {
#define GF_AGENT_METRIC_ENUM_(id, name, type, help, fl) GF_M_##id,
	GF_AGENT_METRICS(GF_AGENT_METRIC_ENUM_)
#undef GF_AGENT_METRIC_ENUM_
	GF_M_COUNT
};
_Static_assert(GF_M_COUNT <= 64, "have-mask is 64 bits");

struct gf_agent_proc {
	unsigned pid;
	unsigned gi;             /* GPU instance (MIG) or GF_AGENT_NO_GI */
	unsigned long long used; /* bytes; 0 when NVML cannot tell */
	short share;             /* watchdog: units of its capped share (0 = none) */
	bool over;               /* watchdog: its share is over its cap (this collection) */
};

struct gf_agent_pod_use {
	struct gf_pod_ref ref;   /* names valid until the next collection */
	unsigned long long used; /* bytes, sum over the pod's processes on this GPU */
};

#define GF_AGENT_MAX_MIG 8          /* MIG devices per GPU (7 on an A100/H100) */
#define GF_AGENT_MAX_MIG_PODS 8     /* distinct pods labelled per MIG device */
#define GF_AGENT_NO_GI 0xFFFFFFFFu  /* gpuInstanceId when the process is not in MIG */

/* A MIG device of a MIG-enabled GPU, as of the last collection. */
struct gf_agent_mig {
	unsigned gi;                 /* GPU instance id */
	char uuid[GF_NVML_UUID_LEN]; /* "MIG-..." ("" when NVML's fails gf_nvml_uuid_ok) */
	char profile[32];            /* "1g.10gb", from the MIG device's name */
	char labels[96];             /* ,GPU_I_PROFILE="...",GPU_I_ID="..." */
	bool have_mem;
	unsigned long long used, free; /* bytes */
	struct gf_agent_pod_use pods[GF_AGENT_MAX_MIG_PODS];
	unsigned npods;
};

struct gf_agent_gpu {
	gf_nvml_device dev;
	unsigned index;
	bool identified;          /* uuid/name/bus were read */
	bool uuid_refused;        /* NVML's UUID failed gf_nvml_uuid_ok: never identified */
	bool up;                  /* answered at the last collection */
	char uuid[GF_NVML_UUID_LEN];
	char name[GF_NVML_NAME_LEN];
	char bus_id[GF_NVML_BUSID_LEN];
	char labels[GF_AGENT_LABEL_MAX]; /* gpu="0",UUID=...,DCGM_FI_DRIVER_VERSION="..." */
	double val[GF_M_COUNT];
	uint64_t have;            /* bit m: val[m] valid this collection */
	unsigned long long xid;   /* last XID seen (0 = none) */
	unsigned long long mem_total;
	void *raw;                /* NVML's process structs (v1 or v2 layout), proc_cap of them */
	struct gf_agent_proc *procs; /* converted, proc_cap of them */
	unsigned nprocs, proc_cap;
	struct gf_agent_pod_use pods[GF_AGENT_MAX_GPU_PODS]; /* pods of non-MIG processes */
	unsigned npods;
	bool mig_on;              /* MIG mode enabled at the last collection */
	struct gf_agent_mig mig[GF_AGENT_MAX_MIG];
	unsigned nmig;
};

/*
 * The served models this node ran (agent/kube.h), kept by the publishing
 * thread only: identities most recent first, and the pods already looked up
 * ("ns/name", a ring of GF_AGENT_SERVED_LOOKED; a pod looked up is not
 * asked again while it is in the ring).
 */
#define GF_AGENT_SERVED_LOOKED 256
struct gf_agent_served {
	char seen[GF_SERVED_SEEN_MAX][GF_K8S_SERVED_MAX];
	int nseen;
	char looked[GF_AGENT_SERVED_LOOKED][GF_K8S_NAME_MAX * 2];
	int nlooked, next;
};

struct gf_agent {
	pthread_mutex_t lock;
	struct gf_agent_served served;
	struct gf_agent_config cfg;
	char *proc_root, *log_root, *sys_root, *hostname; /* owned copies */
	bool have_nvml;
	struct gf_nvml nvml;
	char driver[GF_NVML_DRIVER_LEN];
	gf_pod_map *pods;
	gf_nvml_event_set events; /* NULL when XID events are unavailable */
	struct gf_agent_gpu gpus[GF_AGENT_MAX_GPUS];
	unsigned ngpus;
	struct timespec last; /* monotonic time of the last collection */
	unsigned long long wd_kills, wd_kill_errors; /* watchdog counters */
	bool collected;
	/* MIG (agent/mig.h): who else holds MIG devices (the device plugin), and
	 * the state after the last apply (NULL: none applied yet; heap). */
	gf_nodemig_in_use_fn mig_in_use;
	void *mig_in_use_ud;
	struct gf_nodemig_state *mig_last;
};

/* Escape a Prometheus label value (\\, \", \n) into out (size n, truncating). */
void gf_agent_escape_label(char *out, size_t n, const char *in);

/* Collect if the last collection is older than the interval.  Caller holds a->lock. */
void gf_agent_maybe_collect_locked(gf_agent *a);

#endif /* GF_AGENT_IMPL_H */
