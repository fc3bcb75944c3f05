/*
 * cluster/mig.h - NVIDIA Multi-Instance GPU: profiles, partitions, placement rules.
 *
 * A MIG-capable GPU in MIG mode is cut into GPU instances.  Each instance has
 * a profile (`3g.40gb`: 3 compute slices, 40 GB) and occupies `size`
 * consecutive memory slices starting at a start slot the profile allows
 * (NVIDIA's MIG user guide, "Supported MIG Profiles"; `nvidia-smi mig -lgipp`).
 * On the 8-slice GPUs (A100, H100, H200): 1g at 0..6 (size 1), 1g with twice
 * the memory at 0, 2, 4, 6 (size 2), 2g at 0, 2, 4 (size 2), 3g at 0, 4
 * (size 4), 4g at 0 (size 4), 7g at 0 (size 8).  A30 has 4 slices: 1g at
 * 0..3, 2g at 0, 2, 4g at 0.  Instances never overlap, and their compute
 * slices never exceed the GPU's (7, or 4 on A30).  The media-extension
 * profiles (`+me`) are not modelled.
 *
 * Value types, all public: a profile table per model (static const data), a
 * GPU's partition (struct gf_mig_gpu, embeddable, no heap), and pure
 * functions over them.  A GPU not in MIG mode holds milli-GPU shares
 * instead (whole-GPU and shared pods); the two never mix on one GPU.
 *
 * Slice-level fragmentation (FGD's measure one level down): for a profile k
 * of size s_k, the free slices of a GPU that k cannot use are
 *     x_k = free - s_k * n_k,
 * n_k the number of k instances that still fit in the free slices at legal
 * starts (the legal starts of one profile never overlap one another, so n_k
 * is the count of legal starts whose slices are all free).  Given weights
 * w_k (the target workload's share of pods asking k), the GPU's
 * fragmentation is sum_k w_k x_k, in slices.
 */
#ifndef GF_CLUSTER_MIG_H
#define GF_CLUSTER_MIG_H

#include <stdbool.h>
#include <stdint.h>

#include "core/error.h"

#define GF_MIG_MAX_SLICES 8	/* memory slices of a GPU (4 on A30) */
#define GF_MIG_MAX_INSTANCES 7	/* GPU instances on one GPU */
#define GF_MIG_MAX_PROFILES 6	/* profiles of one model (no +me) */
#define GF_MIG_MAX_LAYOUTS 8	/* mig-parted layouts of one model */

enum gf_mig_model {
	GF_MIG_A30_24GB,
	GF_MIG_A100_40GB,
	GF_MIG_A100_80GB,
	GF_MIG_H100_80GB,
	GF_MIG_H200_141GB,
	GF_MIG_NMODELS
};

/* One GPU-instance profile of a model (NVIDIA's table). */
struct gf_mig_profile {
	const char *name;	/* "3g.40gb" */
	uint8_t compute;	/* compute slices (the "3g") */
	uint8_t size;		/* memory slices it occupies */
	uint8_t starts;		/* bit s: it may start at memory slice s */
	int64_t mem_mib;	/* size / slices of the GPU's memory */
};

/* A MIG-capable GPU model. */
struct gf_mig_model_info {
	const char *name;	/* "H100-80GB" */
	int nslices;		/* memory slices: 8, or 4 on A30 */
	int ncompute;		/* compute slices: 7, or 4 on A30 */
	int64_t mem_mib;	/* GPU memory, as in the name (GB x 1024) */
	int nprofiles;		/* ordered smallest first: fewer slices, then fewer compute */
	struct gf_mig_profile profiles[GF_MIG_MAX_PROFILES];
};

/* The model's table; NULL for a value outside the enum. */
const struct gf_mig_model_info *gf_mig_model(int model);

/* The model named name ("H100-80GB", "A100-40GB", ...; case-sensitive); -1 if none. */
int gf_mig_model_find(const char *name);

/* The profile of model named name ("3g.40gb"; "mig-" and "nvidia.com/mig-" prefixes accepted); -1 if none. */
int gf_mig_profile_find(int model, const char *name);

/*
 * The smallest profile of model holding mib MiB of GPU memory (fewest
 * memory slices, then fewest compute slices); -1 when none does (mib above
 * the GPU's memory, or mib <= 0).
 */
int gf_mig_profile_for_mem(int model, int64_t mib);

/* One GPU instance. */
struct gf_mig_instance {
	int8_t profile;		/* index in the model's profiles */
	uint8_t start;		/* first memory slice */
	uint16_t pods;		/* pods using it; 0 = free */
};

/*
 * One GPU: in MIG mode a partition (instances in creation order), else a
 * plain GPU with milli_free of 1000 for whole and shared pods.  Embeddable;
 * gf_mig_gpu_init().  Read the fields, change them only through the
 * functions below.
 */
struct gf_mig_gpu {
	int8_t model;		/* enum gf_mig_model */
	bool mig;		/* MIG mode on */
	uint8_t ninst;
	uint16_t milli_free;	/* not in MIG mode: free share, 0..1000; else 0 */
	struct gf_mig_instance inst[GF_MIG_MAX_INSTANCES];
};

/* An empty GPU of model, in MIG mode or not.  GF_INVAL for an unknown model. */
gf_err gf_mig_gpu_init(struct gf_mig_gpu *g, int model, bool mig);

/* Bit s set: memory slice s is free (0 outside MIG mode). */
unsigned gf_mig_free_mask(const struct gf_mig_gpu *g);

/* Compute slices not held by an instance (0 outside MIG mode). */
int gf_mig_free_compute(const struct gf_mig_gpu *g);

/*
 * May an instance of profile start at slot start now?  MIG mode, a legal
 * start for the profile, every slice free, compute slices left, an
 * instance slot left.
 */
bool gf_mig_can_create(const struct gf_mig_gpu *g, int profile, int start);

/* The first slot where profile can be created now, or -1. */
int gf_mig_first_start(const struct gf_mig_gpu *g, int profile);

/*
 * Create an instance of profile at start; *idx (may be NULL) its index.
 * Errors: GF_INVAL (not in MIG mode, unknown profile, a start the profile
 * may not use), GF_STATE (the slices or compute are taken, or no instance
 * slot is left); g is then unchanged.
 */
gf_err gf_mig_create(struct gf_mig_gpu *g, int profile, int start, int *idx);

/*
 * Destroy instance idx.  Errors: GF_RANGE (no such instance), GF_STATE (a
 * pod uses it: never destroyed under a pod).  Later instances move down
 * one index.
 */
gf_err gf_mig_destroy(struct gf_mig_gpu *g, int idx);

/*
 * Check a partition against the rules: legal starts, no overlap, compute
 * within the GPU's; GF_OK or GF_STATE with why (may be NULL) naming the
 * first broken rule.
 */
gf_err gf_mig_check(const struct gf_mig_gpu *g, char *why, size_t whylen);

/* How many more instances of profile fit in the GPU's free slices (n_k above). */
int gf_mig_fit_count(const struct gf_mig_gpu *g, int profile);

/*
 * The GPU's slice-level fragmentation for weights w[0..nprofiles-1] (any
 * non-negative numbers; the target workload's pod shares): sum_k w_k x_k
 * as above, in slices.  w_free, if non-zero, adds w_free x (free slices):
 * classes that cannot use this GPU at all (CPU-only pods, or pods the
 * node lacks the CPU for) count every free slice.  0 outside MIG mode.
 */
double gf_mig_frag(const struct gf_mig_gpu *g, const double *w, double w_free);

/*
 * x_k for every free mask, for hot loops: out[mask][k] = the free slices of
 * mask that profile k cannot use (free - size_k n_k), mask < 2^nslices; the
 * rest of out is zeroed.  (On these models the compute and instance limits
 * never bind once the slices are legal, so the mask alone decides.)
 */
void gf_mig_slack_table(int model, uint8_t out[256][GF_MIG_MAX_PROFILES]);

/*
 * Where to create profile so the fragmentation after is least (weights as
 * gf_mig_frag); ties to the lowest start.  -1 when it fits nowhere.
 * *frag_after (may be NULL) gets that fragmentation.
 */
int gf_mig_best_start(const struct gf_mig_gpu *g, int profile, const double *w, double w_free,
		      double *frag_after);

/* A static layout NVIDIA's mig-parted ships: a name and instances per profile. */
struct gf_mig_layout {
	char name[32];		/* mig-parted's config name: "all-1g.10gb", "all-balanced" */
	uint8_t count[GF_MIG_MAX_PROFILES];
};

/*
 * The layouts of model, as named in mig-parted's default configuration:
 * "all-<profile>" for every profile (as many as fit), then "all-balanced"
 * (2 x 1g + 1 x 2g + 1 x 3g on 8-slice GPUs, 2 x 1g + 1 x 2g on A30).  Fills
 * out[0..max-1]; returns how many the model has (at most GF_MIG_MAX_LAYOUTS).
 */
int gf_mig_layouts(int model, struct gf_mig_layout *out, int max);

/*
 * Apply layout to an empty GPU in MIG mode: the largest instances first,
 * each at the highest legal start still free (so small ones pack from slot
 * 0).  Errors: GF_STATE (g holds instances, or the layout does not fit),
 * GF_INVAL (not in MIG mode); g is then unchanged.
 */
gf_err gf_mig_apply_layout(struct gf_mig_gpu *g, const struct gf_mig_layout *layout);

#endif /* GF_CLUSTER_MIG_H */
