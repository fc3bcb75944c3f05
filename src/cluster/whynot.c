/*
 * cluster/whynot.c - the reason a node rejects a pod (see whynot.h).
 *
 * Mirrors gf_cluster_fits() check by check; the unit test compares the two
 * on random states.  A node that fits is answered by gf_cluster_fits() (its
 * per-node summaries make that O(1) for the common requests: the extender
 * asks this of thousands of nodes per call); O(GPUs) per node otherwise.
 * The summary is O(reasons^2).
 */
#include "cluster/whynot.h"

#include <stdio.h>

enum gf_why gf_cluster_why_not(const gf_cluster *c, const struct gf_catalog *cat, size_t i,
			       const struct gf_pod_spec *p)
{
	if (gf_cluster_fits(c, cat, i, p))
		return GF_WHY_FITS;

	const struct gf_node *nd = gf_cluster_node(c, i);

	if (nd->flags)
		return GF_WHY_UNSCHEDULABLE;
	if (nd->cpu_free < p->cpu_milli)
		return GF_WHY_CPU;
	if (nd->mem_free < p->mem_mib)
		return GF_WHY_MEM;
	if (p->gpu_count == 0)
		return GF_WHY_FITS;
	if (nd->ngpus < p->gpu_count)
		return GF_WHY_GPU_COUNT;
	if (!gf_catalog_allows(cat, p->spec, nd->model))
		return GF_WHY_MODEL;
	int fitting = 0;
	for (int g = 0; g < nd->ngpus; g++)
		fitting += nd->gpu_free[g] >= p->gpu_milli;
	if (fitting >= p->gpu_count)
		return GF_WHY_FITS;
	return p->gpu_milli == GF_MILLI_PER_GPU ? GF_WHY_GPU : GF_WHY_GPU_MILLI;
}

const char *gf_why_text(enum gf_why w)
{
	switch (w) {
	case GF_WHY_FITS: return "fits";
	case GF_WHY_CPU: return "Insufficient cpu";
	case GF_WHY_MEM: return "Insufficient memory";
	case GF_WHY_GPU_COUNT: return "too few GPUs on the node";
	case GF_WHY_MODEL: return "GPU model mismatch";
	case GF_WHY_GPU: return "Insufficient GPU";
	case GF_WHY_GPU_MILLI: return "Insufficient GPU milli";
	case GF_WHY_UNSCHEDULABLE: return "node(s) were unschedulable";
	case GF_WHY_TAINT: return "node(s) had untolerated taint";
	case GF_WHY_AFFINITY: return "node(s) didn't match Pod's node affinity/selector";
	case GF_WHY_PODS: return "Too many pods";
	default: return "unknown";
	}
}

void gf_why_summary(const size_t counts[GF_WHY_COUNT_], size_t nnodes, char *out, size_t outlen)
{
	if (!outlen)
		return;
	size_t fits = counts[GF_WHY_FITS];
	int n = snprintf(out, outlen, "%zu/%zu nodes are available", fits, nnodes);
	bool used[GF_WHY_COUNT_] = { false };
	const char *sep = ": ";
	for (;;) {
		int best = -1;
		for (int w = GF_WHY_FITS + 1; w < GF_WHY_COUNT_; w++)
			if (!used[w] && counts[w] && (best < 0 || counts[w] > counts[best]))
				best = w;
		if (best < 0)
			break;
		used[best] = true;
		if (n >= 0 && (size_t)n < outlen)
			n += snprintf(out + n, outlen - (size_t)n, "%s%zu %s", sep, counts[best],
				      gf_why_text((enum gf_why)best));
		sep = ", ";
	}
	if (n >= 0 && (size_t)n < outlen)
		snprintf(out + n, outlen - (size_t)n, ".");
}
