/*
 * cluster/frag.h - GPU fragmentation with respect to a target workload.
 *
 * The measure of the FGD paper (Weng et al., USENIX ATC'23), as specified in
 * shared/specs/openb-fgd-experiment.md section 4.6.  A "target workload" T is
 * the popularity distribution of pod shapes; a node's fragmentation F_n is
 * the GPU capacity it leaves idle that a pod drawn from T could not use,
 * weighted by the shape's probability.  Cluster fragmentation is the sum
 * over nodes.  Values are in milli-GPU (double).
 */
#ifndef GF_CLUSTER_FRAG_H
#define GF_CLUSTER_FRAG_H

#include "cluster/model.h"

/* One kept class (pod shape) of the target workload. */
struct gf_frag_class {
	int64_t cpu_milli;
	int gpu_milli;		/* 0 for CPU-only classes */
	int gpu_count;
	int spec;		/* catalog constraint id */
	uint32_t pods;		/* pods of this shape in the original list */
	double p;		/* pods / pods of all kept classes */
};

/* Embeddable; gf_target_build() / gf_target_release(). */
struct gf_target {
	int nclasses;		/* kept classes, in popularity order */
	int ndistinct;		/* distinct shapes before the cut */
	uint32_t kept_pods;	/* pods covered by the kept classes */
	struct gf_frag_class *cls;	/* owned, nclasses entries */
	/* acc[m * nclasses + k]: may a GPU of model m serve class k?  Row
	 * m = GF_MAX_MODELS stands for GPUs of no known model. */
	bool *acc;		/* owned, (GF_MAX_MODELS + 1) * nclasses entries */
	int64_t max_cpu_gpu;	/* largest cpu_milli among GPU classes */
};

/*
 * Build T from pods[0..n-1] (the original list, any order): count pods per
 * shape (cpu, gpu_milli, gpu_count, spec), sort by count descending (ties:
 * cpu, milli, count, then the constraint's text, all descending), keep the
 * top classes until they cover at least threshold_pct % of the pods.
 * Errors: GF_INVAL (n == 0, threshold outside (0, 100]), GF_NOMEM.
 */
gf_err gf_target_build(const struct gf_pod_spec *pods, size_t n, const struct gf_catalog *cat,
		       int threshold_pct, struct gf_target *out);
void gf_target_release(struct gf_target *t);

/*
 * F_n of a node whose GPUs are of model `model` (-1 = none), with cpu_free
 * milli-CPU free and g[0..ngpus-1] milli free per GPU:
 *
 *   F_n = sum over kept classes k, in order, of p_k * x_k, where
 *   x_k = sum of g_i with g_i < milli_k   if k is a GPU class the node can
 *                                         serve now (model allowed, >= count_k
 *                                         GPUs with g_i >= milli_k, enough CPU)
 *   x_k = G_n = sum of all g_i            otherwise (CPU-only classes included:
 *                                         they cannot use idle GPUs).
 *
 * Depends on the node only through cpu_free, model and the multiset of g.
 */
double gf_frag_node(const struct gf_target *t, int model, int64_t cpu_free, const uint16_t *g,
		    int ngpus);

#endif /* GF_CLUSTER_FRAG_H */
