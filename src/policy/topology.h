/*
 * policy/topology.h - topology-aware choice of GPUs inside a chosen node.
 *
 * A multi-GPU pod runs faster when its GPUs share an NVLink island, and
 * second best a NUMA node.  Given the node chosen by the policy, this picks
 * the GPUs: the smallest island that can hold the pod, else the smallest
 * NUMA node, else the engine's default (gf_gpus_ascending_fit).  "Smallest"
 * (fewest fitting GPUs, ties: lowest id) keeps large islands whole for
 * later large pods, the way best fit keeps large holes.
 */
#ifndef GF_POLICY_TOPOLOGY_H
#define GF_POLICY_TOPOLOGY_H

#include "policy/policy.h"

/* How the GPUs of a placement were grouped. */
enum gf_topo_fit {
	GF_TOPO_NONE,		/* no shared island or NUMA node (or not published) */
	GF_TOPO_NUMA,		/* all on one NUMA node */
	GF_TOPO_NVLINK,		/* all in one NVLink island */
};

/*
 * Choose count GPUs with free >= milli on node state nd of description spec
 * (spec->topo[g] = {-1,-1} when not published).  Writes indices to out[],
 * returns how many were found (< count: does not fit) and sets *fit (may be
 * NULL).  count <= 1 or no topology: exactly gf_gpus_ascending_fit().
 */
int gf_topo_pick(const struct gf_node *nd, const struct gf_node_spec *spec, int count, int milli,
		 uint8_t *out, enum gf_topo_fit *fit);

#endif /* GF_POLICY_TOPOLOGY_H */
