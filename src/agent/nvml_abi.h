/*
 * agent/nvml_abi.h - our own minimal declarations of the NVML ABI.
 *
 * Written from NVML's public API reference (docs.nvidia.com/deploy/nvml-api)
 * and the interface facts in shared/specs/dcgm-exporter-metrics.md §6; not
 * a copy of nvml.h.  Only what the agent calls is declared.  The names are
 * ours (gf_nvml_*); field order, widths and constant values are NVML's ABI
 * and must not change.  The fake NVML in tests/agent implements the same
 * functions against these declarations.
 */
#ifndef GF_AGENT_NVML_ABI_H
#define GF_AGENT_NVML_ABI_H

/* nvmlReturn_t values used by the agent (an int-sized enum in NVML). */
#define GF_NVML_SUCCESS 0
#define GF_NVML_ERROR_UNINITIALIZED 1
#define GF_NVML_ERROR_INVALID_ARGUMENT 2
#define GF_NVML_ERROR_NOT_SUPPORTED 3
#define GF_NVML_ERROR_NO_PERMISSION 4
#define GF_NVML_ERROR_NOT_FOUND 6
#define GF_NVML_ERROR_INSUFFICIENT_SIZE 7
#define GF_NVML_ERROR_DRIVER_NOT_LOADED 9
#define GF_NVML_ERROR_TIMEOUT 10
#define GF_NVML_ERROR_FUNCTION_NOT_FOUND 13
#define GF_NVML_ERROR_GPU_IS_LOST 15
#define GF_NVML_ERROR_RESET_REQUIRED 16
#define GF_NVML_ERROR_IN_USE 19
#define GF_NVML_ERROR_INSUFFICIENT_RESOURCES 23
#define GF_NVML_ERROR_UNKNOWN 999

/* Buffer sizes (NVML_DEVICE_UUID_V2_BUFFER_SIZE, ..._NAME_V2_..., driver version). */
#define GF_NVML_UUID_LEN 96
#define GF_NVML_NAME_LEN 96
#define GF_NVML_DRIVER_LEN 80
#define GF_NVML_BUSID_LEN 32
#define GF_NVML_MAX_LINKS 36 /* NVML_NVLINK_MAX_LINKS in API 13; loop until an error */

/* nvmlClockType_t */
#define GF_NVML_CLOCK_SM 1
#define GF_NVML_CLOCK_MEM 2
/* nvmlTemperatureSensors_t */
#define GF_NVML_TEMPERATURE_GPU 0
/* nvmlMemoryErrorType_t / nvmlEccCounterType_t */
#define GF_NVML_MEMORY_ERROR_CORRECTED 0
#define GF_NVML_MEMORY_ERROR_UNCORRECTED 1
#define GF_NVML_VOLATILE_ECC 0
#define GF_NVML_AGGREGATE_ECC 1
/* nvmlPageRetirementCause_t */
#define GF_NVML_RETIRED_MULTIPLE_SBE 0
#define GF_NVML_RETIRED_DBE 1
/* nvmlPcieUtilCounter_t */
#define GF_NVML_PCIE_UTIL_TX_BYTES 0
#define GF_NVML_PCIE_UTIL_RX_BYTES 1
/* nvmlEnableState_t, MIG mode */
#define GF_NVML_FEATURE_ENABLED 1
#define GF_NVML_MIG_DISABLE 0
#define GF_NVML_MIG_ENABLE 1
/* nvmlGpuInstanceProfile: the `profile` argument of the MIG calls is this
 * index (NVML_GPU_INSTANCE_PROFILE_1_SLICE 0 ... 1_SLICE_REV2 9), not the
 * id nvidia-smi prints; NVML_GPU_INSTANCE_PROFILE_COUNT bounds it. */
#define GF_NVML_GI_PROFILE_1_SLICE 0
#define GF_NVML_GI_PROFILE_2_SLICE 1
#define GF_NVML_GI_PROFILE_3_SLICE 2
#define GF_NVML_GI_PROFILE_4_SLICE 3
#define GF_NVML_GI_PROFILE_7_SLICE 4
#define GF_NVML_GI_PROFILE_8_SLICE 5
#define GF_NVML_GI_PROFILE_6_SLICE 6
#define GF_NVML_GI_PROFILE_1_SLICE_REV1 7
#define GF_NVML_GI_PROFILE_2_SLICE_REV1 8
#define GF_NVML_GI_PROFILE_1_SLICE_REV2 9
#define GF_NVML_GI_PROFILE_COUNT 15
/* nvmlComputeInstanceProfile (1_SLICE 0, 2_SLICE 1, 3_SLICE 2, 4_SLICE 3,
 * 7_SLICE 4) and the shared engine profile. */
#define GF_NVML_CI_PROFILE_COUNT 9
#define GF_NVML_CI_ENGINE_PROFILE_SHARED 0
/* Event types */
#define GF_NVML_EVENT_XID_CRITICAL 0x8ULL
/* Field ids for nvmlDeviceGetFieldValues */
#define GF_NVML_FI_DEV_MEMORY_TEMP 82
#define GF_NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX 138
#define GF_NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX 139
/* nvmlValueType_t */
#define GF_NVML_VALUE_TYPE_DOUBLE 0
#define GF_NVML_VALUE_TYPE_UNSIGNED_INT 1
#define GF_NVML_VALUE_TYPE_UNSIGNED_LONG 2
#define GF_NVML_VALUE_TYPE_UNSIGNED_LONG_LONG 3
#define GF_NVML_VALUE_TYPE_SIGNED_LONG_LONG 4
#define GF_NVML_VALUE_TYPE_SIGNED_INT 5

/* usedGpuMemory when the driver cannot tell (NVML_VALUE_NOT_AVAILABLE). */
#define GF_NVML_VALUE_NOT_AVAILABLE (~0ULL)

/* nvmlGpuTopologyLevel_t: lower is closer. */
#define GF_NVML_TOPO_INTERNAL 0
#define GF_NVML_TOPO_SINGLE 10
#define GF_NVML_TOPO_MULTIPLE 20
#define GF_NVML_TOPO_HOSTBRIDGE 30
#define GF_NVML_TOPO_NODE 40
#define GF_NVML_TOPO_SYSTEM 50

typedef int gf_nvml_return;
typedef struct gf_nvml_device_st *gf_nvml_device;
typedef struct gf_nvml_gpu_instance_st *gf_nvml_gpu_instance;
typedef struct gf_nvml_compute_instance_st *gf_nvml_compute_instance;
typedef struct gf_nvml_event_set_st *gf_nvml_event_set;

typedef struct {
	unsigned int gpu;    /* percent */
	unsigned int memory; /* percent */
} gf_nvml_utilization;

typedef struct { /* nvmlMemory_t (v1): used includes reserved */
	unsigned long long total, free, used;
} gf_nvml_memory_v1;

typedef struct { /* nvmlMemory_v2_t: used excludes reserved */
	unsigned int version;
	unsigned long long total, reserved, free, used;
} gf_nvml_memory_v2;
#define GF_NVML_MEMORY_V2_VERSION ((unsigned int)(sizeof(gf_nvml_memory_v2) | (2u << 24)))

typedef struct { /* nvmlProcessInfo_v1_t: plain nvmlDeviceGetComputeRunningProcesses */
	unsigned int pid;
	unsigned long long usedGpuMemory;
} gf_nvml_process_v1;

typedef struct { /* nvmlProcessInfo_v2_t: the _v2 and _v3 exports */
	unsigned int pid;
	unsigned long long usedGpuMemory;
	unsigned int gpuInstanceId;
	unsigned int computeInstanceId;
} gf_nvml_process_v2;

typedef struct { /* nvmlPciInfo_t (as filled by nvmlDeviceGetPciInfo_v3) */
	char busIdLegacy[16];
	unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
	char busId[GF_NVML_BUSID_LEN];
} gf_nvml_pci_info;

typedef struct { /* nvmlTemperature_v1_t */
	unsigned int version;
	int sensorType;
	int temperature;
} gf_nvml_temperature_v1;
#define GF_NVML_TEMPERATURE_V1_VERSION ((unsigned int)(sizeof(gf_nvml_temperature_v1) | (1u << 24)))

typedef struct { /* nvmlEventData_t */
	gf_nvml_device device;
	unsigned long long eventType;
	unsigned long long eventData;
	unsigned int gpuInstanceId;
	unsigned int computeInstanceId;
} gf_nvml_event_data;

typedef union { /* nvmlValue_t */
	double dVal;
	int siVal;
	unsigned int uiVal;
	unsigned long ulVal;
	unsigned long long ullVal;
	long long sllVal;
	unsigned short usVal;
} gf_nvml_value;

typedef struct { /* nvmlFieldValue_t */
	unsigned int fieldId;
	unsigned int scopeId;
	long long timestamp;
	long long latencyUsec;
	int valueType;
	gf_nvml_return nvmlReturn;
	gf_nvml_value value;
} gf_nvml_field_value;

typedef struct { /* nvmlGpuInstancePlacement_t: memory slices [start, start+size) of 8 */
	unsigned int start;
	unsigned int size;
} gf_nvml_gi_placement;

typedef struct { /* nvmlGpuInstanceProfileInfo_v2_t (nvmlDeviceGetGpuInstanceProfileInfoV) */
	unsigned int version;
	unsigned int id; /* the id nvidia-smi -lgip prints */
	unsigned int isP2pSupported;
	unsigned int sliceCount;
	unsigned int instanceCount;
	unsigned int multiprocessorCount;
	unsigned int copyEngineCount;
	unsigned int decoderCount;
	unsigned int encoderCount;
	unsigned int jpegCount;
	unsigned int ofaCount;
	unsigned long long memorySizeMB;
	char name[GF_NVML_NAME_LEN]; /* "MIG 3g.40gb" */
} gf_nvml_gi_profile_info_v2;
#define GF_NVML_GI_PROFILE_INFO_V2_VERSION \
	((unsigned int)(sizeof(gf_nvml_gi_profile_info_v2) | (2u << 24)))

typedef struct { /* nvmlGpuInstanceInfo_t */
	gf_nvml_device device;
	unsigned int id;
	unsigned int profileId;
	gf_nvml_gi_placement placement;
} gf_nvml_gi_info;

typedef struct { /* nvmlComputeInstanceProfileInfo_t (v1) */
	unsigned int id;
	unsigned int sliceCount;
	unsigned int instanceCount;
	unsigned int multiprocessorCount;
	unsigned int sharedCopyEngineCount;
	unsigned int sharedDecoderCount;
	unsigned int sharedEncoderCount;
	unsigned int sharedJpegCount;
	unsigned int sharedOfaCount;
} gf_nvml_ci_profile_info;

#endif /* GF_AGENT_NVML_ABI_H */
