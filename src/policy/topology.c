/*
 * policy/topology.c - GPUs of one NVLink island / NUMA node (topology.h).
 *
 * Candidates are the GPUs with free >= milli in ascending-free order (as
 * gf_gpus_ascending_fit visits them).  For a grouping key (island, then
 * NUMA), count candidates per group; among groups with >= count candidates
 * take the one with the fewest (ties: lowest group id) and its first count
 * candidates.  O(GPUs log GPUs); GF_MAX_GPUS is 16.
 */
#include "policy/topology.h"

static int group_of(const struct gf_node_spec *spec, int g, bool island)
{
	return island ? spec->topo[g].nvlink_island : spec->topo[g].numa;
}

static int pick_group(const uint8_t *cand, int ncand, const struct gf_node_spec *spec, int count,
		      bool island, uint8_t *out)
{
	int ngroup[128] = { 0 };
	for (int k = 0; k < ncand; k++) {
		int gid = group_of(spec, cand[k], island);
		if (gid >= 0 && gid < 128)
			ngroup[gid]++;
	}
	int best = -1;
	for (int gid = 0; gid < 128; gid++)
		if (ngroup[gid] >= count && (best < 0 || ngroup[gid] < ngroup[best]))
			best = gid;
	if (best < 0)
		return 0;
	int n = 0;
	for (int k = 0; k < ncand && n < count; k++)
		if (group_of(spec, cand[k], island) == best)
			out[n++] = cand[k];
	return n;
}

int gf_topo_pick(const struct gf_node *nd, const struct gf_node_spec *spec, int count, int milli,
		 uint8_t *out, enum gf_topo_fit *fit)
{
	if (fit)
		*fit = GF_TOPO_NONE;
	if (count <= 1)
		return gf_gpus_ascending_fit(nd, count, milli, out);
	uint8_t cand[GF_MAX_GPUS];
	int ncand = gf_gpus_ascending_fit(nd, nd->ngpus, milli, cand);
	if (ncand < count)
		return gf_gpus_ascending_fit(nd, count, milli, out);
	if (pick_group(cand, ncand, spec, count, true, out) == count) {
		if (fit)
			*fit = GF_TOPO_NVLINK;
		return count;
	}
	if (pick_group(cand, ncand, spec, count, false, out) == count) {
		if (fit)
			*fit = GF_TOPO_NUMA;
		return count;
	}
	return gf_gpus_ascending_fit(nd, count, milli, out);
}
