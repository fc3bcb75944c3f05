/*
 * policy/target.c - the pods FGD's target workload is built from (target.h).
 *
 * One pass to count the pods that count.  When all do (the simulator's
 * traces: a GPU pod always has its share) T is built from the caller's array
 * as it is; otherwise from a copy of those that count, or from the one
 * whole-GPU pod.  O(n) plus gf_target_build's O(n log n); the copy, when
 * made, is n shapes.
 */
#include <stdlib.h>
#include <string.h>

#include "policy/target.h"

/* Does the pod count?  A GPU pod whose share is unknown does not. */
static bool counts(const struct gf_pod_spec *p)
{
	return p->gpu_count == 0 || p->gpu_milli > 0;
}

gf_err gf_target_from_pods(const struct gf_pod_spec *pods, size_t n, const struct gf_catalog *cat,
			   int threshold_pct, struct gf_target *out, size_t *counted)
{
	size_t k = 0;
	gf_err err;

	for (size_t i = 0; i < n; i++)
		k += counts(&pods[i]);
	if (counted)
		*counted = k;
	if (k == n && n > 0)
		return gf_target_build(pods, n, cat, threshold_pct, out);
	if (k == 0) {
		struct gf_pod_spec whole = { .gpu_count = 1, .gpu_milli = GF_MILLI_PER_GPU };

		return gf_target_build(&whole, 1, cat, threshold_pct, out);
	}
	struct gf_pod_spec *v = malloc(k * sizeof(*v));

	if (!v) {
		memset(out, 0, sizeof(*out));
		return GF_NOMEM;
	}
	k = 0;
	for (size_t i = 0; i < n; i++)
		if (counts(&pods[i]))
			v[k++] = pods[i];
	err = gf_target_build(v, k, cat, threshold_pct, out);
	free(v);
	return err;
}
