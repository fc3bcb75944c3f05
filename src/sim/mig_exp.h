/*
 * sim/mig_exp.h - the openb experiment on MIG GPUs: static layouts against
 * instances created on demand.
 *
 * The cluster is the openb node list with every GPU taken as one MIG model
 * (the CLI uses H100 80GB); pods come in the order an openb run attempts
 * them (gf_openb_attempts: same shuffle, same tuning to 130 %), model
 * constraints dropped (one GPU model).  A pod asking a share m of one GPU
 * asks m/1000 of the GPU's memory and gets the smallest profile holding
 * it; a pod of whole GPUs gets the full-GPU profile (7g) on each.  CPU-only
 * pods take CPU and memory only.  Pods never leave; a pod that fits nowhere
 * is dropped (as in openb).
 *
 * Measured after every attempt: arrived = the GPU share asked so far (failed
 * pods count), placed = the GPU memory the placed pods asked, both in % of
 * the cluster's GPU memory (= % of its GPU capacity in milli-GPU, the two
 * are proportional); "at X %" is the mean of placed over the attempts whose
 * arrived rounds (half to even) to X, or over X-1..X+1 if none does (the
 * openb curves' rule).  held = the memory of the instances given to pods.
 */
#ifndef GF_SIM_MIG_EXP_H
#define GF_SIM_MIG_EXP_H

#include "cluster/frag.h"
#include "policy/mig_place.h"

struct gf_mig_exp_config {
	int model;		/* enum gf_mig_model of every GPU */
	enum gf_mig_mode mode;
	int layout;		/* static: index into gf_mig_layouts(model) */
	uint64_t seed;		/* the node tie-break order is drawn from it */
};

struct gf_mig_exp_result {
	double placed_at_100, placed_at_130;	/* % of the GPU memory; NAN if no attempt there */
	double held_end;			/* instances' memory held at the end, % */
	double placed_end;			/* placed at the end, % */
	int64_t attempts, placed;		/* pods (CPU-only ones included) */
	int64_t gpu_pods, gpu_placed;		/* GPU pods attempted, placed */
	int64_t instances;			/* instances in use at the end */
};

/*
 * Map a pod to an ask on model (the rule above).  GF_RANGE when no profile
 * holds it (more GPUs than GF_MAX_GPUS, or a share above one GPU).
 */
gf_err gf_mig_exp_ask(const struct gf_pod_spec *p, int model, struct gf_mig_ask *a);

/*
 * The target workload of the openb experiment as MIG classes: each class of
 * tgt mapped by gf_mig_exp_ask (its CPU, its profile or -1, its share).
 */
gf_err gf_mig_exp_target(const struct gf_target *tgt, int model, struct gf_mig_target *out);

/*
 * One run: nodes[0..nnodes-1] (their GPU count, CPU and memory used),
 * pods[0..npods-1] in attempt order, t the target (dynamic only; may be
 * NULL otherwise).  Errors: GF_INVAL (bad config, a node with more than
 * GF_MAX_GPUS GPUs, no GPU at all), GF_NOMEM, GF_STATE (a bind refused what
 * the choice picked: a bug, reported instead of a figure).
 */
gf_err gf_mig_exp_run(const struct gf_node_spec *nodes, size_t nnodes, const struct gf_pod_spec *pods,
		      size_t npods, const struct gf_mig_target *t, const struct gf_mig_exp_config *cfg,
		      struct gf_mig_exp_result *out);

#endif /* GF_SIM_MIG_EXP_H */
