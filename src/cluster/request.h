/*
 * cluster/request.h - a pod's GPU request as asked, resolved to the shape the
 * engine places: a model constraint interned, GPU memory turned into a share.
 *
 * A pod may ask for GPUs by share (gpu_milli, 1000 for whole GPUs), by memory
 * per GPU (gpu_mem_mib), or both, and may name the GPU models it accepts
 * ("A|B").  The engine places shapes (struct gf_pod_spec: count, milli,
 * catalog constraint id), so an adapter resolves each request here, by one
 * rule, before the engine sees it:
 *
 *   - On a given node (a pod already bound there): the share is sized against
 *     that node's GPU memory M:  milli = ceil(mem * 1000 / M), at most 1000.
 *   - Otherwise: against the smallest GPU memory among the models the pod
 *     may use that have at least `mem` per GPU (model_mem[]), and the pod's
 *     constraint narrows to exactly those models ("A|B" of the models with
 *     enough memory, in catalog order), so it never lands on a GPU too small.
 *   - A share asked as well (milli_given) is a floor: the larger one wins.
 *
 * Engine code: no I/O, no clock.  O(models) per request.
 */
#ifndef GF_CLUSTER_REQUEST_H
#define GF_CLUSTER_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cluster/model.h"

/* A GPU request as decoded from a pod: views into the caller's object, nothing owned. */
struct gf_request {
	/*
	 * The pod's resources; spec is ignored (the constraint is `model`).
	 * gpu_milli: the share asked (1000 for whole GPUs); gpu_mem_mib: the
	 * memory asked per GPU, 0 = none.
	 */
	const struct gf_pod_spec *req;
	const char *model;	/* the model constraint "A|B"; NULL or "" = any model */
	bool milli_given;	/* gpu_milli was asked explicitly: a floor for the memory's share */
	const char *invalid;	/* NULL or "": the decoder found it sound; else why it is not */
};

enum gf_request_result {
	GF_REQUEST_OK = 0,
	GF_REQUEST_INVALID,		/* the request makes no sense; msg says why */
	GF_REQUEST_UNSCHEDULABLE,	/* no GPU model has the memory asked; msg says so */
};

/*
 * Resolve rq into *eff (always written: on failure it holds the request as
 * asked, spec 0).  cat interns the model constraint (and the narrowed one),
 * so it grows.  model_mem[m] (GF_MAX_MODELS entries, may be NULL when
 * node_gpu_mem > 0): the memory per GPU of the smallest GPU of catalog model
 * m in the cluster, 0 = none known.  node_gpu_mem > 0: the pod is on a node
 * with GPUs of that memory (model_mem is not read).  nnodes: the cluster's
 * node count, for the message only.  msg (msglen bytes, NUL-terminated) gets
 * the reason on INVALID or UNSCHEDULABLE, in kube-scheduler's wording for the
 * latter ("0/N nodes are available: ...").
 */
enum gf_request_result gf_request_resolve(struct gf_catalog *cat, const int64_t *model_mem, size_t nnodes,
					  const struct gf_request *rq, int64_t node_gpu_mem,
					  struct gf_pod_spec *eff, char *msg, size_t msglen);

#endif /* GF_CLUSTER_REQUEST_H */
