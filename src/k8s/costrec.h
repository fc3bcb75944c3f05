/*
 * k8s/costrec.h - the allocation record: what the scheduler has handed out,
 * as Prometheus gauges on its /metrics, for `gpufleet cost` (docs/cost.md).
 *
 *   gpufleet_pod_gpu_allocation{namespace,pod,node,gpu,uuid,model,share} S
 *       one series per pod and GPU it holds a share of; S = the share as a
 *       fraction of the GPU (milli / 1000; memory requests as the milli the
 *       scheduler turned them into), also in the `share` label.  The series
 *       disappears when the pod is released (Prometheus then marks it
 *       stale), so its presence over time is the allocation interval.
 *   gpufleet_gpu_capacity{node,gpu,uuid,model,capacity_type} 1
 *       one series per GPU of every node the scheduler knows; capacity_type
 *       "spot" when the node carries a spot label (below), else "on-demand".
 *
 * uuid is the GPU's UUID from the node's topology annotation, "" when the
 * agent has not published one (the GPU is then known by node and gpu index).
 *
 * Spot labels: karpenter.sh/capacity-type=spot, eks.amazonaws.com/capacityType=SPOT,
 * cloud.google.com/gke-spot=true, cloud.google.com/gke-preemptible=true,
 * kubernetes.azure.com/scalesetpriority=spot, gpufleet.io/capacity-type=spot.
 */
#ifndef GF_K8S_COSTREC_H
#define GF_K8S_COSTREC_H

#include <stdbool.h>

#include "core/obuf.h"
#include "k8s/codec.h"
#include "k8s/live.h"

/* Is the node a spot (preemptible) node by its labels? */
bool gf_costrec_node_spot(const struct gf_k8s_node *n);

/* Append the two gauges (HELP, TYPE, samples) of l's current state.  Errors from out. */
gf_err gf_costrec_render(gf_live *l, struct gf_obuf *out);

#endif /* GF_K8S_COSTREC_H */
