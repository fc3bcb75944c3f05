/*
 * fuzz/fuzz_dp_match.c - the device plugin's reading of the API server's
 * PodList (gf_dp_pods_decode: the assignment annotations, the containers'
 * resources) for both resources.  Invariants checked: no crash or leak,
 * at most max pods, each with 1..16 UUIDs, a share of 1..1000 and at least
 * one container asking, sorted in bind order (assigned-at, else the
 * creation time: the order key, then the creation time), and
 * gf_dp_find_pod's answer a pod with a container left that matches.
 */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/dp_match.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct gf_dp_pod pods[8];
	cJSON *doc = cJSON_ParseWithLength((const char *)data, size);
	if (!doc)
		return 0;
	static const char *const res[] = { "nvidia.com/gpu", "gpufleet.io/gpu-milli" };
	for (int r = 0; r < 2; r++) {
		unsigned skipped;
		unsigned n = gf_dp_pods_decode(doc, res[r], pods, 8, &skipped);
		if (n > 8)
			abort();
		for (unsigned i = 0; i < n; i++) {
			if (pods[i].nuuids < 1 || pods[i].nuuids > GF_DP_MATCH_MAX_GPUS || pods[i].milli < 1 ||
			    pods[i].milli > 1000 || pods[i].containers < 1)
				abort();
			if (i) {
				int c = strcmp(pods[i - 1].order, pods[i].order);
				if (c > 0 || (c == 0 && strcmp(pods[i - 1].created, pods[i].created) > 0))
					abort();
			}
			const char *u[1] = { pods[i].uuids[0] };
			(void)gf_dp_pod_matches(&pods[i], u, 1, pods[i].milli);
		}
		unsigned used[8] = { 0 };
		for (unsigned i = 0; i < n; i++) {
			const char *u[GF_DP_MATCH_MAX_GPUS];
			for (unsigned j = 0; j < pods[i].nuuids; j++)
				u[j] = pods[i].uuids[j];
			unsigned units = pods[i].milli == 1000 && r == 0 ? 0 : pods[i].milli;
			int k = gf_dp_find_pod(pods, n, used, u, pods[i].nuuids, units);
			if (k >= 0 && (used[k] >= pods[k].containers || !gf_dp_pod_matches(&pods[k], u, pods[i].nuuids, units)))
				abort();
			if (k >= 0)
				used[k]++;
		}
	}
	cJSON_Delete(doc);
	return 0;
}
