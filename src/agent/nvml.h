/*
 * agent/nvml.h - NVML loaded with dlopen through one checked symbol table.
 *
 * The agent never links NVML: gf_nvml_open() dlopen()s the library
 * (default "libnvidia-ml.so.1", or a path such as the test suite's fake),
 * then resolves every entry of GF_NVML_SYMBOLS, trying the versioned names
 * newest first (nvmlInit_v2 before nvmlInit, ..._v3 before _v2 before the
 * plain name).  Required symbols missing => GF_UNSUPPORTED with a message
 * naming the symbol; optional ones stay NULL and gf_nvml_call() treats
 * them as NVML_ERROR_FUNCTION_NOT_FOUND (the metric is skipped).
 *
 * Which export was found matters for the struct version: *_procs_ver*
 * (1: nvmlProcessInfo_v1_t, 2: v2 struct) and *memory_v2* tell the
 * collector which layout to pass.
 *
 * Ownership: struct gf_nvml is embeddable (_open/_close).  gf_nvml_close()
 * calls nvmlShutdown() if init succeeded and dlclose()s.
 */
#ifndef GF_AGENT_NVML_H
#define GF_AGENT_NVML_H

#include <stdbool.h>
#include <stddef.h>

#include "agent/nvml_abi.h"
#include "core/error.h"


/* X(field, return type, parameter list, required, names newest first...) */
#define GF_NVML_SYMBOLS(X)                                                                       \
	X(init, gf_nvml_return, (void), true, "nvmlInit_v2", "nvmlInit")                            \
	X(shutdown, gf_nvml_return, (void), true, "nvmlShutdown")                                   \
	X(error_string, const char *, (gf_nvml_return), false, "nvmlErrorString")                   \
	X(driver_version, gf_nvml_return, (char *, unsigned), false, "nvmlSystemGetDriverVersion")  \
	X(device_count, gf_nvml_return, (unsigned *), true, "nvmlDeviceGetCount_v2",                \
	  "nvmlDeviceGetCount")                                                                     \
	X(handle_by_index, gf_nvml_return, (unsigned, gf_nvml_device *), true,                      \
	  "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex")                            \
	X(index, gf_nvml_return, (gf_nvml_device, unsigned *), false, "nvmlDeviceGetIndex")         \
	X(uuid, gf_nvml_return, (gf_nvml_device, char *, unsigned), true, "nvmlDeviceGetUUID")      \
	X(minor_number, gf_nvml_return, (gf_nvml_device, unsigned *), false,                        \
	  "nvmlDeviceGetMinorNumber")                                                               \
	X(name, gf_nvml_return, (gf_nvml_device, char *, unsigned), false, "nvmlDeviceGetName")     \
	X(pci_info, gf_nvml_return, (gf_nvml_device, gf_nvml_pci_info *), false,                    \
	  "nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2")                                     \
	X(numa_node, gf_nvml_return, (gf_nvml_device, unsigned *), false, "nvmlDeviceGetNumaNodeId") \
	X(utilization, gf_nvml_return, (gf_nvml_device, gf_nvml_utilization *), false,              \
	  "nvmlDeviceGetUtilizationRates")                                                          \
	X(memory_v2, gf_nvml_return, (gf_nvml_device, gf_nvml_memory_v2 *), false,                  \
	  "nvmlDeviceGetMemoryInfo_v2")                                                             \
	X(memory_v1, gf_nvml_return, (gf_nvml_device, gf_nvml_memory_v1 *), false,                  \
	  "nvmlDeviceGetMemoryInfo")                                                                \
	X(power, gf_nvml_return, (gf_nvml_device, unsigned *), false, "nvmlDeviceGetPowerUsage")    \
	X(energy, gf_nvml_return, (gf_nvml_device, unsigned long long *), false,                    \
	  "nvmlDeviceGetTotalEnergyConsumption")                                                    \
	X(temperature_v, gf_nvml_return, (gf_nvml_device, gf_nvml_temperature_v1 *), false,         \
	  "nvmlDeviceGetTemperatureV")                                                              \
	X(temperature, gf_nvml_return, (gf_nvml_device, int, unsigned *), false,                    \
	  "nvmlDeviceGetTemperature")                                                               \
	X(clock, gf_nvml_return, (gf_nvml_device, int, unsigned *), false, "nvmlDeviceGetClockInfo") \
	X(enc_util, gf_nvml_return, (gf_nvml_device, unsigned *, unsigned *), false,                \
	  "nvmlDeviceGetEncoderUtilization")                                                        \
	X(dec_util, gf_nvml_return, (gf_nvml_device, unsigned *, unsigned *), false,                \
	  "nvmlDeviceGetDecoderUtilization")                                                        \
	X(pcie_replay, gf_nvml_return, (gf_nvml_device, unsigned *), false,                         \
	  "nvmlDeviceGetPcieReplayCounter")                                                         \
	X(pcie_throughput, gf_nvml_return, (gf_nvml_device, int, unsigned *), false,                \
	  "nvmlDeviceGetPcieThroughput")                                                            \
	X(ecc_total, gf_nvml_return, (gf_nvml_device, int, int, unsigned long long *), false,       \
	  "nvmlDeviceGetTotalEccErrors")                                                            \
	X(remapped_rows, gf_nvml_return,                                                           \
	  (gf_nvml_device, unsigned *, unsigned *, unsigned *, unsigned *), false,                  \
	  "nvmlDeviceGetRemappedRows")                                                              \
	X(retired_pages, gf_nvml_return,                                                           \
	  (gf_nvml_device, int, unsigned *, unsigned long long *), false,                           \
	  "nvmlDeviceGetRetiredPages")                                                              \
	X(retired_pending, gf_nvml_return, (gf_nvml_device, int *), false,                          \
	  "nvmlDeviceGetRetiredPagesPendingStatus")                                                 \
	X(field_values, gf_nvml_return, (gf_nvml_device, int, gf_nvml_field_value *), false,        \
	  "nvmlDeviceGetFieldValues")                                                               \
	X(procs_v2, gf_nvml_return, (gf_nvml_device, unsigned *, gf_nvml_process_v2 *), false,      \
	  "nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2")     \
	X(procs_v1, gf_nvml_return, (gf_nvml_device, unsigned *, gf_nvml_process_v1 *), false,      \
	  "nvmlDeviceGetComputeRunningProcesses")                                                   \
	X(mig_mode, gf_nvml_return, (gf_nvml_device, unsigned *, unsigned *), false,                \
	  "nvmlDeviceGetMigMode")                                                                   \
	X(mig_max, gf_nvml_return, (gf_nvml_device, unsigned *), false,                             \
	  "nvmlDeviceGetMaxMigDeviceCount")                                                         \
	X(mig_handle, gf_nvml_return, (gf_nvml_device, unsigned, gf_nvml_device *), false,          \
	  "nvmlDeviceGetMigDeviceHandleByIndex")                                                    \
	X(gi_id, gf_nvml_return, (gf_nvml_device, unsigned *), false, "nvmlDeviceGetGpuInstanceId") \
	X(set_mig_mode, gf_nvml_return, (gf_nvml_device, unsigned, gf_nvml_return *), false,       \
	  "nvmlDeviceSetMigMode")                                                                   \
	X(gi_profile_info, gf_nvml_return, (gf_nvml_device, unsigned, gf_nvml_gi_profile_info_v2 *), \
	  false, "nvmlDeviceGetGpuInstanceProfileInfoV")                                            \
	X(gi_placements, gf_nvml_return,                                                           \
	  (gf_nvml_device, unsigned, gf_nvml_gi_placement *, unsigned *), false,                    \
	  "nvmlDeviceGetGpuInstancePossiblePlacements_v2")                                          \
	X(gi_create_at, gf_nvml_return,                                                            \
	  (gf_nvml_device, unsigned, const gf_nvml_gi_placement *, gf_nvml_gpu_instance *), false,  \
	  "nvmlDeviceCreateGpuInstanceWithPlacement")                                               \
	X(gi_list, gf_nvml_return, (gf_nvml_device, unsigned, gf_nvml_gpu_instance *, unsigned *),  \
	  false, "nvmlDeviceGetGpuInstances")                                                       \
	X(gi_info, gf_nvml_return, (gf_nvml_gpu_instance, gf_nvml_gi_info *), false,               \
	  "nvmlGpuInstanceGetInfo")                                                                 \
	X(gi_destroy, gf_nvml_return, (gf_nvml_gpu_instance), false, "nvmlGpuInstanceDestroy")     \
	X(ci_profile_info, gf_nvml_return,                                                         \
	  (gf_nvml_gpu_instance, unsigned, unsigned, gf_nvml_ci_profile_info *), false,             \
	  "nvmlGpuInstanceGetComputeInstanceProfileInfo")                                           \
	X(ci_create, gf_nvml_return, (gf_nvml_gpu_instance, unsigned, gf_nvml_compute_instance *),  \
	  false, "nvmlGpuInstanceCreateComputeInstance")                                            \
	X(ci_list, gf_nvml_return,                                                                 \
	  (gf_nvml_gpu_instance, unsigned, gf_nvml_compute_instance *, unsigned *), false,          \
	  "nvmlGpuInstanceGetComputeInstances")                                                     \
	X(ci_destroy, gf_nvml_return, (gf_nvml_compute_instance), false,                           \
	  "nvmlComputeInstanceDestroy")                                                             \
	X(nvlink_state, gf_nvml_return, (gf_nvml_device, unsigned, int *), false,                   \
	  "nvmlDeviceGetNvLinkState")                                                               \
	X(nvlink_remote_pci, gf_nvml_return, (gf_nvml_device, unsigned, gf_nvml_pci_info *), false, \
	  "nvmlDeviceGetNvLinkRemotePciInfo_v2")                                                    \
	X(topo_common, gf_nvml_return, (gf_nvml_device, gf_nvml_device, int *), false,              \
	  "nvmlDeviceGetTopologyCommonAncestor")                                                    \
	X(event_set_create, gf_nvml_return, (gf_nvml_event_set *), false, "nvmlEventSetCreate")     \
	X(register_events, gf_nvml_return, (gf_nvml_device, unsigned long long, gf_nvml_event_set), \
	  false, "nvmlDeviceRegisterEvents")                                                        \
	X(event_wait, gf_nvml_return, (gf_nvml_event_set, gf_nvml_event_data *, unsigned), false,   \
	  "nvmlEventSetWait_v2", "nvmlEventSetWait")                                                \
	X(event_set_free, gf_nvml_return, (gf_nvml_event_set), false, "nvmlEventSetFree")

struct gf_nvml {
	void *dl;          /* dlopen handle; NULL when closed */
	bool initialised;  /* nvmlInit succeeded: close() calls nvmlShutdown */
#define GF_NVML_FIELD_(field, ret, args, req, ...) ret(*field) args;
	GF_NVML_SYMBOLS(GF_NVML_FIELD_)
#undef GF_NVML_FIELD_
	/* Name each symbol was found under (NULL = missing), same order as the table. */
	const char *found[64];
};

/* dlopen path (NULL = "libnvidia-ml.so.1"), resolve the table and call
 * nvmlInit.  Errors (message in err, which names the library and cause):
 *   GF_NOENT       library not loadable (dlerror text)
 *   GF_UNSUPPORTED a required symbol is missing
 *   GF_UNAVAILABLE nvmlInit failed (NVML's error string)
 * On error n is closed. */
gf_err gf_nvml_open(struct gf_nvml *n, const char *path, char *err, size_t errlen);

/* nvmlShutdown (if initialised) and dlclose.  Safe on a closed struct. */
void gf_nvml_close(struct gf_nvml *n);

/* NVML's text for a return code (never NULL). */
const char *gf_nvml_strerror(const struct gf_nvml *n, gf_nvml_return r);

/* A GPU UUID as NVML writes them ("GPU-" and hex groups): 1..GF_NVML_UUID_LEN-1
 * letters, digits and '-', not starting with '-'.  The UUID becomes a device
 * ID, a CDI device name, a folder name under the memcap folder and a label,
 * so anything else (a '/', "..", quotes, newlines) is refused before it
 * reaches any of them. */
bool gf_nvml_uuid_ok(const char *s);

/* Number of entries in the symbol table, and the i-th entry's preferred name
 * (for diagnostics and tests). */
size_t gf_nvml_symbol_count(void);
const char *gf_nvml_symbol_name(size_t i);

/* Call an optional function: NOT_FOUND-as-error if the symbol is missing. */
#define GF_NVML_CALL(n, field, ...) \
	((n)->field ? (n)->field(__VA_ARGS__) : GF_NVML_ERROR_FUNCTION_NOT_FOUND)

#endif /* GF_AGENT_NVML_H */
