/*
 * agent/agent.h - the GPU node agent: collect from NVML, attribute to pods,
 * render dcgm-exporter compatible Prometheus text and the inventory JSON.
 *
 * A gf_agent owns the loaded NVML (agent/nvml.h), the pod map
 * (agent/pods.h) and the last collected sample of every GPU.  Rendering
 * collects first when the sample is older than interval_ms (0: every
 * render), so what is served is never older than the interval.  All entry
 * points lock one mutex: callable from any thread (the HTTP thread, the
 * Kubernetes publisher).
 *
 * Health: a GPU whose calls return NVML_ERROR_GPU_IS_LOST or
 * RESET_REQUIRED is marked down (gpufleet_gpu_up 0, its other samples
 * omitted), logged once on each transition, and retried on every
 * collection; the other GPUs keep being served.
 */
#ifndef GF_AGENT_AGENT_H
#define GF_AGENT_AGENT_H

#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"
#include "core/obuf.h"

typedef struct gf_agent gf_agent;

struct gf_agent_config {
	const char *nvml_path;  /* NULL = "libnvidia-ml.so.1" */
	bool allow_no_nvml;     /* NVML missing/failing: serve an empty set instead of failing */
	const char *proc_root;  /* NULL = "/proc" */
	const char *log_root;   /* NULL = "/var/log" (containers/, pods/) */
	const char *sys_root;   /* NULL = "/sys" (NUMA node fallback) */
	bool kubernetes;        /* set pod/namespace/container labels */
	const char *hostname;   /* value of the hostname label; NULL = no label */
	bool old_hostname_label; /* spell it "Hostname" (dcgm-exporter before May 2026) */
	unsigned interval_ms;   /* max age of served values; 0 = collect per render */
	bool no_pcie_throughput; /* skip nvmlDeviceGetPcieThroughput (20 ms of wall time per call) */
	bool watchdog;          /* compare capped shares' NVML memory with their caps (agent/watchdog.h) */
	bool watchdog_kill;     /* ... and SIGKILL the processes of a share over its cap */
	unsigned long long watchdog_slack; /* bytes per process beyond the cap before it counts (contexts) */
};

/* Load NVML, enumerate GPUs.  Strings in cfg are copied.  Errors (with a
 * one-line message in err): those of gf_nvml_open() unless allow_no_nvml,
 * GF_NOMEM. */
gf_err gf_agent_create(const struct gf_agent_config *cfg, gf_agent **out, char *err,
		       size_t errlen);
void gf_agent_destroy(gf_agent *a);

/* Append the Prometheus text exposition (format 0.0.4) to out.
 * GF_TOOBIG if out's cap is too small (out is then incomplete). */
gf_err gf_agent_render_metrics(gf_agent *a, struct gf_obuf *out);

/* Append the inventory/topology document (docs/agent.md) as compact JSON. */
gf_err gf_agent_render_inventory(gf_agent *a, const char *node, struct gf_obuf *out);

/* The node's CDI spec (agent/cdi.h) for the GPUs NVML identified: device
 * names are the UUIDs, /dev/nvidiaN from nvmlDeviceGetMinorNumber (the
 * index where the driver lacks it).  dev_root as for gf_cdi_render. */
gf_err gf_agent_render_cdi(gf_agent *a, const char *dev_root, struct gf_obuf *out, char *err, size_t errlen);

/* Number of GPUs enumerated, and how many answered at the last collection. */
unsigned gf_agent_gpu_count(gf_agent *a);
unsigned gf_agent_gpus_up(gf_agent *a);

/* Whether NVML is loaded (false only with allow_no_nvml after a failure). */
bool gf_agent_has_nvml(gf_agent *a);

/*
 * MIG on this node (agent/mig.h).  gf_agent_mig_apply applies a layout
 * through the agent's NVML (under the agent's lock), keeps the resulting
 * state for gf_agent_mig_state and the node's gpufleet.io/mig-state
 * annotation, and makes the next render collect afresh.  Its return is
 * gf_nodemig_apply's; GF_UNAVAILABLE without NVML.  gf_agent_mig_state copies
 * the last applied state, refreshed from NVML (in use, UUIDs) but keeping
 * the last apply's notes; without an apply, the MIG GPUs as NVML has them.
 * gf_agent_set_mig_in_use registers who else knows a MIG device is held
 * (the device plugin's allocations); fn is called under the agent's lock.
 */
struct gf_nodemig_layout;
struct gf_nodemig_state;
gf_err gf_agent_mig_apply(gf_agent *a, const struct gf_nodemig_layout *l, struct gf_nodemig_state *out);
void gf_agent_mig_state(gf_agent *a, struct gf_nodemig_state *out);
void gf_agent_set_mig_in_use(gf_agent *a, bool (*fn)(void *ud, const char *mig_uuid), void *ud);

/* Text for an XID code (dcgm-exporter's err_msg label); never NULL. */
const char *gf_xid_message(unsigned long long xid);

#endif /* GF_AGENT_AGENT_H */
