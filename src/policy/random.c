/*
 * policy/random.c - Random: a uniformly drawn feasible node.
 *
 * FGD paper's `Random1000` (spec 4.1): among the feasible nodes (n >= 2, in
 * node order) one is drawn uniformly from the run's generator; inside the
 * node a GPU-sharing pod gets a uniformly drawn fitting GPU.  The baseline
 * that knows nothing.
 */
#include "policy/policy.h"

static size_t random_choose(void *state, const struct gf_policy_env *env, const uint32_t *feasible,
			    size_t n, const struct gf_pod_spec *p, struct gf_rng *rng)
{
	(void)state;
	(void)env;
	(void)feasible;
	(void)p;
	return (size_t)gf_rng_below(rng, n);
}

const struct gf_policy_ops gf_policy_random = {
	.name = "random",
	.label = "Random",
	.summary = "a uniformly random feasible node and GPU",
	.in_paper = true,
	.gpu_select = GF_GPUSEL_RANDOM,
	.tie_break = GF_TIE_PRIORITY,
	.cacheable = false,
	.choose = random_choose,
};
