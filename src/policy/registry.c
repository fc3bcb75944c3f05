/*
 * policy/registry.c - the one table of placement policies.
 *
 * Adding a policy: one new file defining a const struct gf_policy_ops, one
 * extern line in policy.h, one line here.
 */
#include <string.h>

#include "policy/policy.h"

static const struct gf_policy_ops *const registry[] = {
	&gf_policy_random,
	&gf_policy_dot_product,
	&gf_policy_gpu_clustering,
	&gf_policy_gpu_packing,
	&gf_policy_best_fit,
	&gf_policy_fgd,
	&gf_policy_fgd_fill,
	&gf_policy_k8s_least_allocated,
	&gf_policy_k8s_most_allocated,
};

const struct gf_policy_ops *const *gf_policy_all(size_t *n)
{
	*n = sizeof(registry) / sizeof(registry[0]);
	return registry;
}

const struct gf_policy_ops *gf_policy_find(const char *name)
{
	for (size_t i = 0; i < sizeof(registry) / sizeof(registry[0]); i++)
		if (!strcmp(registry[i]->name, name))
			return registry[i];
	return NULL;
}

int gf_gpus_ascending_fit(const struct gf_node *nd, int count, int milli, uint8_t *out)
{
	int taken = 0;

	if (milli >= GF_MILLI_PER_GPU) {
		/* Fully free GPUs all have the same free amount: index order. */
		for (int g = 0; g < nd->ngpus && taken < count; g++)
			if (nd->gpu_free[g] == GF_MILLI_PER_GPU)
				out[taken++] = (uint8_t)g;
		return taken;
	}
	/* Selection by ascending (free, index); ngpus <= 16, so O(k^2) is fine. */
	uint32_t used = 0;

	while (taken < count) {
		int best = -1;

		for (int g = 0; g < nd->ngpus; g++) {
			if ((used >> g) & 1 || nd->gpu_free[g] < milli)
				continue;
			if (best < 0 || nd->gpu_free[g] < nd->gpu_free[best])
				best = g;
		}
		if (best < 0)
			break;
		used |= 1u << best;
		out[taken++] = (uint8_t)best;
	}
	return taken;
}
