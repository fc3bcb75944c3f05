/*
 * agent/deviceplugin.h - the kubelet device plugin (API v1beta1) served by
 * `gpufleet agent --device-plugin`: two resources, each on its own socket
 * in the kubelet's device-plugin folder and registered with the kubelet:
 *
 *   nvidia.com/gpu         whole GPUs; device ID = the GPU's UUID
 *   gpufleet.io/gpu-milli  shares; 1,000 units per GPU, device ID
 *                          "<UUID>::<unit>" (self-describing: Allocate
 *                          checks GPU and size from the IDs alone)
 *
 * A share request of N units in one container means N/1000 of ONE GPU
 * (N <= 1000): Allocate refuses units from two GPUs (FAILED_PRECONDITION),
 * GetPreferredAllocation steers the kubelet to units of one GPU (best fit).
 * Allocate answers with the GPU's CDI device (gpufleet.io/gpu=<UUID>, see
 * agent/cdi.h), NVIDIA_VISIBLE_DEVICES=<UUID,...> for runtimes without
 * CDI, and for shares, when a memory-cap library is configured, the cap:
 * a limit file of N/1000 of the GPU's memory, its ledger folder and the
 * library mounted into the container with LD_PRELOAD (docs/agent.md).
 *
 * MIG (NVIDIA's "mixed" strategy): a GPU in MIG mode is not served as
 * nvidia.com/gpu or shares (Allocate refuses it); each MIG profile present
 * on the node gets its own resource nvidia.com/mig-<profile> (socket
 * gpufleet-mig-<profile>.sock, added by the watch thread when the profile
 * first appears; "+" in a profile becomes "."), device ID = the MIG UUID;
 * Allocate answers the CDI device gpufleet.io/gpu=MIG-<uuid> and
 * NVIDIA_VISIBLE_DEVICES=MIG-<uuid>.  No pod matching for MIG resources.
 * The MIG devices given out (and those the kubelet's pod-resources API
 * lists, every 5 s) are reported to the agent as in use, so a MIG layout
 * never destroys them (agent/mig.h).
 *
 * Health: ListAndWatch resends the list whenever a GPU's NVML state (up /
 * lost) changes; an unhealthy GPU's units are withdrawn ("Unhealthy").
 * The kubelet deleting the plugin sockets (its restart) is noticed within
 * a second: sockets are recreated and registration repeated.
 */
#ifndef GF_AGENT_DEVICEPLUGIN_H
#define GF_AGENT_DEVICEPLUGIN_H

#include <stdbool.h>
#include <stddef.h>

#include "agent/agent.h"
#include "core/error.h"
#include "core/obuf.h"
#include "k8s/conn.h"

#define GF_DP_RESOURCE_GPU "nvidia.com/gpu"
#define GF_DP_RESOURCE_MILLI "gpufleet.io/gpu-milli"
#define GF_DP_RESOURCE_MIG_PREFIX "nvidia.com/mig-"
#define GF_DP_MILLI_PER_GPU 1000

struct gf_dp_config {
	const char *plugin_dir;  /* NULL = /var/lib/kubelet/device-plugins */
	const char *memcap_lib;  /* host path of libgpufleet-memcap.so; NULL = shares are not capped */
	const char *memcap_dir;  /* host folder for per-allocation limit files; NULL = /var/run/gpufleet/memcap */
	/* Match allocations to this node's pending pods through the scheduler's
	 * assignment annotations (agent/dp_match.h).  NULL kube: no matching;
	 * the IDs alone decide (shares still from one GPU).  The connection
	 * must outlive the plugin. */
	const struct gf_kube_conn *kube;
	const char *node;
	/* With kube: every 5 s the kubelet's pod-resources API (List) is
	 * compared with what Allocate admitted; NULL =
	 * /var/lib/kubelet/pod-resources/kubelet.sock. */
	const char *podres_socket;
};

typedef struct gf_dp gf_dp;

/* A fresh, empty memory-cap ledger for a new allocation, in `ledger_dir`
 * (created 0755 if missing; its mode reset to 0755 and its owner to this
 * process, which a tenant that ran as root may have changed; when that is
 * not permitted, the folder is renamed aside to `ledger_dir.stale.*` and
 * made anew): `ledger_dir/ledger` unlinked (whatever was there: a stale
 * ledger, a planted link; processes still mapping the old one keep it and
 * are not counted) and created anew, empty, mode 0666, never through a
 * link; an empty 0666 file of this process's, never opened since, is kept
 * as it is.  The folder is opened without following a link.
 * Returns 0, or -1 with "what: why" in err. */
int gf_dp_fresh_ledger(const char *ledger_dir, char *err, size_t err_len);

/* Starts both plugin servers, registers them with the kubelet and starts
 * the watch thread (re-registration).  Registration failing is reported in
 * err but not fatal (GF_UNAVAILABLE: the kubelet may come later; the watch
 * thread retries every second).  The agent must outlive the plugin. */
gf_err gf_dp_start(gf_agent *a, const struct gf_dp_config *cfg, gf_dp **out, char *err, size_t errlen);
void gf_dp_stop(gf_dp *dp);

/* Appends the plugin's Prometheus metrics to out: the last reconciliation
 * with the kubelet's pod-resources API (containers whose devices it lists
 * under another pod than the one Allocate admitted; containers with our
 * devices that no Allocate of this process admitted) and the count of
 * reconciliations by result.  NULL dp: nothing. */
void gf_dp_render_metrics(gf_dp *dp, struct gf_obuf *out);

/* Splits a share unit's device ID "<UUID>::<unit>" (unit 0..999) into the
 * UUID (copied into uuid, uuidlen bytes) and the unit.  False if id is not
 * of that form.  (Exposed for the fuzz harness.) */
bool gf_dp_parse_unit_id(const char *id, char *uuid, size_t uuidlen, unsigned *unit);

#endif
