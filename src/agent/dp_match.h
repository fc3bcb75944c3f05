/*
 * agent/dp_match.h - which pending pod an allocation is for.  The kubelet
 * does not say; the scheduler's assignment annotations do
 * (gpufleet.io/assigned-gpu-uuids, gpufleet.io/assigned-gpu-milli, see
 * docs/scheduler.md).  The device plugin lists this node's Pending pods,
 * steers the kubelet to the GPUs of the oldest pod whose request fits
 * (GetPreferredAllocation) and admits an Allocate only for IDs that match a
 * pending pod's assignment, claiming it (one claim per container that asks
 * for the resource); no match fails the admission loudly.
 *
 * "Oldest" is the scheduler's bind order: the kubelet receives bound pods
 * from its watch one at a time, in the order of the bindings, and admits
 * them in that order; the scheduler stamps each binding
 * (gpufleet.io/assigned-at, microseconds, strictly increasing).  Pods
 * without the stamp (bound by an older scheduler) fall back to their
 * creation time, which has whole seconds only: same-size pods created in
 * one second were the cause of containers getting another pod's GPUs.
 *
 * Pure functions over a decoded pod list: the listing itself is
 * deviceplugin.c's.
 */
#ifndef GF_AGENT_DP_MATCH_H
#define GF_AGENT_DP_MATCH_H

#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"

struct cJSON;

#define GF_DP_MATCH_MAX_GPUS 16

struct gf_dp_pod {
	char uid[64], ns[64], name[254], created[40];
	char order[28]; /* sort key: assigned-at, else creationTimestamp as
			 * "YYYY-MM-DDTHH:MM:SS.000000Z" (string order = time order) */
	char uuids[GF_DP_MATCH_MAX_GPUS][96]; /* assigned-gpu-uuids */
	unsigned nuuids;
	unsigned milli;      /* assigned-gpu-milli, 1..1000 */
	unsigned containers; /* containers asking for the resource */
};

/* Decodes a PodList's items into pods (at most max), keeping the pods that
 * carry a usable assignment and ask for `resource` in some container's
 * limits or requests; sorted in bind order (order, then creationTimestamp,
 * then UID).  Pods with malformed annotations (a malformed assigned-at
 * included) are skipped (counted in *skipped). */
unsigned gf_dp_pods_decode(const struct cJSON *list, const char *resource, struct gf_dp_pod *pods, unsigned max,
			   unsigned *skipped);

/* Does pod p's assignment equal an allocation of the GPUs uuids[0..n) with
 * `units` share units (milli resource) or whole GPUs (units = 0)? */
bool gf_dp_pod_matches(const struct gf_dp_pod *p, const char *const *uuids, unsigned n, unsigned units);

/* The first pod of pods[0..n) (bind order) with a container left to admit
 * (used[k] containers admitted already, fewer than pods[k].containers) whose
 * assignment matches (gf_dp_pod_matches); -1 if none. */
int gf_dp_find_pod(const struct gf_dp_pod *pods, unsigned n, const unsigned *used, const char *const *uuids,
		   unsigned nu, unsigned units);

#endif
