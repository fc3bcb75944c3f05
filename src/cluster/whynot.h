/*
 * cluster/whynot.h - why a pod does not fit a node (for FailedScheduling).
 *
 * gf_cluster_why_not() runs the same checks as gf_cluster_fits(), in the
 * same order, and names the first one that fails, so that
 *   gf_cluster_why_not(c, cat, i, p) == GF_WHY_FITS  <=>  gf_cluster_fits(c, cat, i, p).
 * kube-scheduler-style summaries ("0/100 nodes are available: 60
 * Insufficient GPU milli, 40 GPU model mismatch.") are built by counting
 * the reasons over all nodes (gf_why_summary()).
 */
#ifndef GF_CLUSTER_WHYNOT_H
#define GF_CLUSTER_WHYNOT_H

#include <stddef.h>

#include "cluster/cluster.h"

enum gf_why {
	GF_WHY_FITS,
	GF_WHY_CPU,		/* not enough free CPU */
	GF_WHY_MEM,		/* not enough free memory */
	GF_WHY_GPU_COUNT,	/* the node has fewer GPUs than the pod asks */
	GF_WHY_MODEL,		/* the node's GPU model is not allowed */
	GF_WHY_GPU,		/* whole GPUs: too few fully free GPUs */
	GF_WHY_GPU_MILLI,	/* GPU share: too few GPUs with that much free */
	/* Admission (cluster/admit.h: gf_admit_why()); gf_cluster_why_not()
	 * never returns them. */
	GF_WHY_UNSCHEDULABLE,	/* the node is cordoned */
	GF_WHY_TAINT,		/* a NoSchedule/NoExecute taint the pod does not tolerate */
	GF_WHY_AFFINITY,	/* node selector or required node affinity */
	GF_WHY_PODS,		/* the node's allocatable pod count is reached */
	GF_WHY_COUNT_
};

/* The first failed check of gf_cluster_fits() for pod p on node i. */
enum gf_why gf_cluster_why_not(const gf_cluster *c, const struct gf_catalog *cat, size_t i,
			       const struct gf_pod_spec *p);

/* The phrase kube-scheduler would print for a reason ("Insufficient cpu"). */
const char *gf_why_text(enum gf_why w);

/*
 * "0/<nnodes> nodes are available: <n> <reason>, <n> <reason>." with the
 * reasons by decreasing count (ties: enum order), from counts[GF_WHY_COUNT_]
 * (counts[GF_WHY_FITS] is ignored).  Truncated to outlen.
 */
void gf_why_summary(const size_t counts[GF_WHY_COUNT_], size_t nnodes, char *out, size_t outlen);

#endif /* GF_CLUSTER_WHYNOT_H */
