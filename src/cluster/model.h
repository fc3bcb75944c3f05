/*
 * cluster/model.h - what a node and a pod are to the engine.
 *
 * Transparent value types: a node's fixed description (struct gf_node_spec)
 * and a pod's request (struct gf_pod_spec), plus the catalog that interns GPU
 * model names and model-constraint strings into small ids so that the hot
 * paths compare integers, never strings.
 *
 * Units: CPU in milli-cores (1000 = one core), memory in MiB, GPU share in
 * milli-GPU (1000 = one whole GPU), GPU memory in MiB.
 *
 * The fields under "room for what comes next" are carried through loaders and
 * copies but no policy reads them yet: GPU memory, MIG, topology inside a
 * node, priorities, tenants, gangs and time.
 */
#ifndef GF_CLUSTER_MODEL_H
#define GF_CLUSTER_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

#define GF_MAX_GPUS 16		/* GPUs in one node */
#define GF_MILLI_PER_GPU 1000	/* one whole GPU, in milli-GPU */
#define GF_MAX_MODELS 64	/* distinct GPU model names in one catalog */
#define GF_MAX_SPECS 4096	/* distinct model-constraint strings */
#define GF_NAME_MAX 64		/* node and pod names, with the NUL */
#define GF_SPEC_MAX 256		/* a model-constraint string, with the NUL */
#define GF_SERVED_SEEN_MAX 8	/* served models a node is known to have run (its cache) */

/* GPU topology inside a node; -1 = not published. */
struct gf_gpu_topo {
	int8_t numa;		/* NUMA node the GPU hangs off */
	int8_t nvlink_island;	/* GPUs with the same island share NVLink */
};

struct gf_node_spec {
	char name[GF_NAME_MAX];
	int64_t cpu_milli;	/* allocatable CPU */
	int64_t mem_mib;	/* allocatable memory */
	int ngpus;		/* 0..GF_MAX_GPUS */
	int model;		/* catalog model id; -1 = no GPU model */
	/* room for what comes next: */
	int64_t gpu_mem_mib;	/* memory of each GPU; 0 = unknown */
	bool mig_capable;
	struct gf_gpu_topo topo[GF_MAX_GPUS];
	/*
	 * Served models (gf_served_model_key) the node ran recently, so their
	 * image and weights are likely still on it; 0 = empty slot.  Only a
	 * tie-break reads it (policy/sched.h).
	 */
	uint64_t served_seen[GF_SERVED_SEEN_MAX];
};

struct gf_pod_spec {
	char name[GF_NAME_MAX];
	int64_t cpu_milli;	/* CPU request (= limit) */
	int64_t mem_mib;	/* memory request (= limit) */
	int gpu_count;		/* GPUs wanted; 0 = CPU-only pod */
	int gpu_milli;		/* share of each GPU, 1..1000; 0 iff gpu_count == 0 */
	int spec;		/* catalog constraint id; 0 = any GPU model */
	/* room for what comes next: */
	int64_t gpu_mem_mib;	/* GPU memory per GPU; 0 = not asked */
	int32_t priority;
	uint32_t tenant;
	uint32_t gang;		/* 0 = not in a gang */
	int64_t arrival;	/* virtual time, seconds; unused by packing runs */
	int64_t duration;	/* seconds; < 0 = runs forever */
	uint64_t served_model;	/* gf_served_model_key of the model it serves; 0 = none */
};

/* The GPU share a pod asks of the whole cluster, in milli-GPU. */
static inline int64_t gf_pod_gpu_request(const struct gf_pod_spec *p)
{
	return (int64_t)p->gpu_milli * p->gpu_count;
}

/*
 * The key of a served model's identity (an inference model such as
 * "llama-7b", or a container image), s of len bytes: FNV-1a 64, never 0
 * (0 means "no model"); 0 for an empty identity.
 */
uint64_t gf_served_model_key(const char *s, size_t len);

/* Has node spec ns run served model key (non-zero)? */
static inline bool gf_node_served(const struct gf_node_spec *ns, uint64_t key)
{
	for (int i = 0; key && i < GF_SERVED_SEEN_MAX; i++)
		if (ns->served_seen[i] == key)
			return true;
	return false;
}

/* A model-constraint string, normalised ("V100M16|V100M32"), and the models it allows. */
struct gf_spec_entry {
	char text[GF_SPEC_MAX];
	uint64_t model_mask;	/* bit m set: model id m is allowed */
};

/*
 * The one rule for a GPU share written as text: gpufleet.io/gpu-milli as a
 * pod annotation, as an extended resource (in a pod from the API server or
 * from kube-scheduler's extender request), the assignment annotation: a
 * whole number in decimal digits (no '+', space, unit, fraction or
 * exponent) from 1 to 1000.  s is len bytes.  GF_OK with *out set;
 * GF_RANGE for a whole number outside 1..1000 ("0", "-5", "1001"; *out
 * the value, within +-99999999); GF_PARSE for anything else.
 */
gf_err gf_gpu_milli_parse(const char *s, size_t len, int *out);

/*
 * The catalog interns names.  Embeddable: gf_catalog_init() / gf_catalog_release().
 * Spec id 0 is always the empty constraint ("any model").
 */
struct gf_catalog {
	int nmodels;
	char models[GF_MAX_MODELS][GF_NAME_MAX];
	int nspecs;
	int spec_cap;
	struct gf_spec_entry *specs;	/* owned */
};

gf_err gf_catalog_init(struct gf_catalog *cat);
void gf_catalog_release(struct gf_catalog *cat);

/*
 * Intern a GPU model name of len bytes (no NUL needed).  Sets *id.  Errors:
 * GF_INVAL for an empty or over-long name, GF_TOOBIG past GF_MAX_MODELS.
 */
gf_err gf_catalog_model(struct gf_catalog *cat, const char *name, size_t len, int *id);

/*
 * Intern a model constraint as written in a trace: models separated by '|'.
 * Empty tokens are dropped, the rest re-joined with '|' (duplicates kept), so
 * "|A||B" and "A|B" are the same constraint; an empty result is id 0.  Each
 * token is interned as a model.  Errors: as gf_catalog_model, GF_TOOBIG for a
 * string over GF_SPEC_MAX or past GF_MAX_SPECS, GF_NOMEM.
 */
gf_err gf_catalog_spec(struct gf_catalog *cat, const char *text, size_t len, int *id);

/* May a GPU of model `model` (-1 = none) serve constraint `spec`? */
static inline bool gf_catalog_allows(const struct gf_catalog *cat, int spec, int model)
{
	if (spec == 0)
		return true;
	if (model < 0)
		return false;
	return (cat->specs[spec].model_mask >> model) & 1;
}

#endif /* GF_CLUSTER_MODEL_H */
