/*
 * k8s/codec.h - Kubernetes Pod and Node JSON to the engine's types.
 *
 * Decoding reads only what scheduling needs and never fails on unknown
 * fields.  A field of the wrong type or an unparsable quantity is an error
 * (GF_PARSE) whose message names the JSON path and what was expected:
 *   spec.containers[0].resources.limits["nvidia.com/gpu"]: expected a
 *   whole number, got "1.5"
 * A well-formed pod whose GPU request makes no sense (0 or negative milli,
 * an unknown gpufleet.io/ or nvidia.com/ resource, more than GF_MAX_GPUS
 * GPUs) decodes with GF_OK and a non-empty `invalid` message: the scheduler
 * reports it in a FailedScheduling event instead of dropping the pod.
 *
 * What a pod asks (docs/scheduler.md is the reference):
 *   - whole GPUs: nvidia.com/gpu: N in limits (or requests);
 *   - a share of one GPU: gpufleet.io/gpu-milli (per GPU; digits only, 1..1000:
 *     gf_gpu_milli_parse, the same rule everywhere) and/or
 *     gpufleet.io/gpu-memory-mib (per GPU), as extended resources or as
 *     pod annotations of the same names; gpufleet.io/gpu-count (resource or
 *     annotation) sets the number of shared GPUs (default 1);
 *   - a GPU model: annotation gpufleet.io/gpu-model ("A|B"), else
 *     spec.nodeSelector["nvidia.com/gpu.product"], else a required node
 *     affinity term on nvidia.com/gpu.product with operator In.
 * CPU and memory: the sum over containers of requests (limits when a
 * request is absent), max'ed with the largest init container.
 *
 * The assignment the scheduler writes (annotations, GF_ANN_*) is decoded
 * back into gf_k8s_pod.assigned_* so a restarted scheduler rebuilds state.
 */
#ifndef GF_K8S_CODEC_H
#define GF_K8S_CODEC_H

#include <stdbool.h>
#include <stdint.h>

#include "cluster/admit.h"
#include "cluster/model.h"
#include "core/error.h"

struct cJSON;

/* Request names (extended resources or annotations). */
#define GF_RES_GPU "nvidia.com/gpu"
#define GF_RES_MILLI "gpufleet.io/gpu-milli"
#define GF_RES_GPU_MEM "gpufleet.io/gpu-memory-mib"
#define GF_RES_COUNT "gpufleet.io/gpu-count"
#define GF_ANN_MODEL "gpufleet.io/gpu-model"
#define GF_LABEL_PRODUCT "nvidia.com/gpu.product"
/* The coscheduling gang label: the PodGroup (same namespace) a pod belongs to. */
#define GF_LABEL_POD_GROUP "scheduling.x-k8s.io/pod-group"
#define GF_K8S_LABEL_VALUE_MAX 64 /* label values: 63 + NUL */
#define GF_LABEL_GPU_MEM "nvidia.com/gpu.memory"
#define GF_ANN_TOPOLOGY "gpufleet.io/gpu-topology"
/* The served-model cache preference (policy/sched.h): the model a pod serves
 * (label; else its first container's image) and the models a node ran (the
 * agent's annotation, comma separated, most recent first). */
#define GF_LABEL_SERVED_MODEL "gpufleet.io/model"
#define GF_ANN_MODELS_SEEN "gpufleet.io/models-seen"

/* Assignment annotations written by the scheduler (stable names). */
#define GF_ANN_NODE "gpufleet.io/assigned-node"
#define GF_ANN_GPUS "gpufleet.io/assigned-gpus"          /* "0,3" */
#define GF_ANN_UUIDS "gpufleet.io/assigned-gpu-uuids"    /* "GPU-..,GPU-.." or absent */
#define GF_ANN_AMILLI "gpufleet.io/assigned-gpu-milli"   /* per GPU, 1..1000 */
#define GF_ANN_AMEM "gpufleet.io/assigned-gpu-memory-mib" /* per GPU; 0 = not asked */
/* When the binding was written: "2026-12-01T18:30:00.123456Z" (UTC, always
 * microseconds, strictly increasing within one scheduler process), so the
 * node's device plugin can tell same-size pods apart in bind order. */
#define GF_ANN_ASSIGNED_AT "gpufleet.io/assigned-at"
#define GF_ASSIGNED_AT_LEN 27

/* What a waiting pod is told (written by the scheduler's loop, read by
 * `gpufleet queue`; docs/scheduler.md, "gpufleet queue"): when it is expected
 * to start (RFC 3339 UTC, e.g. "2026-12-01T18:30:00Z") and why it waits
 * (one line of text), as one pod condition written through pods/status (so
 * the scheduler needs no patch on pods):
 *   type GF_COND_ESTIMATED_START;
 *   status "True", reason GF_COND_REASON_ESTIMATED, message
 *     GF_COND_ESTIMATE_PREFIX "<RFC 3339>: <why>" (the EstimatedStart Event's text);
 *   status "False", reason GF_COND_REASON_NO_ESTIMATE, message "<why>".
 * Absent: no estimate / no reason given.  The two annotations are what older
 * schedulers wrote (patch on pods); `gpufleet queue` still reads them on a
 * pod without the condition. */
#define GF_COND_ESTIMATED_START "gpufleet.io/EstimatedStart"
#define GF_COND_REASON_ESTIMATED "Estimated"
#define GF_COND_REASON_NO_ESTIMATE "NoEstimate"
#define GF_COND_ESTIMATE_PREFIX "estimated start "
#define GF_ANN_ESTIMATED_START "gpufleet.io/estimated-start"
#define GF_ANN_WAITING_REASON "gpufleet.io/waiting-reason"
/* The Queue (gpufleet.io/v1alpha1) a pod is charged to: the pod's label,
 * else its namespace's label of the same name. */
#define GF_LABEL_QUEUE "gpufleet.io/queue"
/* Kueue's LocalQueue label: such a pod's quota is Kueue's, not ours (docs/scheduler.md). */
#define GF_LABEL_KUEUE_QUEUE "kueue.x-k8s.io/queue-name"

#define GF_K8S_NAME_MAX 254 /* DNS subdomain names: 253 + NUL */
#define GF_K8S_UID_MAX 64
#define GF_K8S_RV_MAX 32
#define GF_K8S_UUID_MAX 48

/* Scheduling constraints other than resources: the engine's types
 * (cluster/admit.h), checked by the engine's admission. */
#define GF_K8S_MAX_TAINTS 8
#define GF_K8S_MAX_TOLS 8
#define GF_K8S_MAX_TERMS 2
#define GF_K8S_MAX_EXPRS GF_MATCH_MAX_EXPRS
#define GF_K8S_KEY_MAX GF_LABEL_KEY_MAX
#define GF_K8S_VAL_MAX GF_LABEL_VAL_MAX

enum gf_k8s_phase { GF_PHASE_PENDING, GF_PHASE_RUNNING, GF_PHASE_SUCCEEDED, GF_PHASE_FAILED,
		    GF_PHASE_UNKNOWN };

struct gf_k8s_pod {
	char ns[GF_K8S_NAME_MAX];
	char name[GF_K8S_NAME_MAX];
	char uid[GF_K8S_UID_MAX];
	char rv[GF_K8S_RV_MAX];
	char node[GF_K8S_NAME_MAX];	/* spec.nodeName; "" while pending */
	char scheduler[GF_K8S_NAME_MAX];/* spec.schedulerName ("default-scheduler" if absent) */
	enum gf_k8s_phase phase;
	bool deleting;			/* metadata.deletionTimestamp set */
	/* The request.  req.spec is 0 here: the model constraint is in model
	 * (interned by the caller's catalog).  req.gpu_milli is the share
	 * asked by milli (1000 for whole GPUs); gpu_mem_mib the memory asked
	 * per GPU (0 = none): the caller turns memory into milli per node. */
	struct gf_pod_spec req;
	char model[GF_SPEC_MAX];	/* "A|B"; "" = any model */
	bool milli_given;		/* gpu_milli came from gpufleet.io/gpu-milli */
	/* spec.nodeSelector (packed "key\0value\0"), tolerations, and the
	 * required node affinity terms (any term must hold; matchFields are
	 * not read).  Past the limits above the pod is invalid. */
	char selector[512];
	size_t selector_len;
	int ntols;
	struct gf_toleration tols[GF_K8S_MAX_TOLS];
	int nterms;
	struct gf_match_term terms[GF_K8S_MAX_TERMS];
	char invalid[256];		/* non-empty: the request makes no sense */
	/* What the scheduler wrote (GF_ANN_*); assigned is false if absent or malformed. */
	bool assigned;
	char assigned_node[GF_K8S_NAME_MAX];
	int assigned_ngpus;
	uint8_t assigned_gpus[GF_MAX_GPUS];
	int assigned_milli;
	int64_t assigned_mem_mib;
	/* metadata.labels[GF_LABEL_POD_GROUP]: the gang; "" = none */
	char pod_group[GF_K8S_LABEL_VALUE_MAX];
	/* spec.schedulingGroup.podGroupName: the Workload API's PodGroup
	 * (scheduling.k8s.io/v1alpha2, same namespace); "" = none */
	char sched_group[GF_K8S_NAME_MAX];
	/* metadata.labels[GF_LABEL_QUEUE]: the pod's own Queue; "" = none (its
	 * namespace's label then decides: k8s/queues.h) */
	char queue[GF_K8S_LABEL_VALUE_MAX];
	/* metadata.labels[GF_LABEL_KUEUE_QUEUE] present: Kueue admitted it */
	bool kueue;
	/* spec.preemptionPolicy: Never (it never evicts others; default PreemptLowerPriority) */
	bool preempt_never;
	/* spec.activeDeadlineSeconds: the most it runs once started (the
	 * kubelet ends it then), seconds; 0 = none.  The live loop's estimate. */
	int64_t deadline_s;
	/* metadata.labels, packed "key\0value\0" (PodDisruptionBudget
	 * selectors, k8s/pdb.h); past 1 KiB the rest is missing (truncated) */
	char labels[1024];
	size_t labels_len;
	bool labels_truncated;
};

/*
 * A gang, from either of the two APIs people write gangs with:
 *   - GF_GANG_COSCHEDULING: the coscheduling PodGroup
 *     (scheduling.x-k8s.io/v1alpha1), the gang of the pods labelled
 *     GF_LABEL_POD_GROUP: <name> in its namespace;
 *   - GF_GANG_WORKLOAD: Kubernetes' own PodGroup (KEP-4671, Workload API,
 *     scheduling.k8s.io/v1alpha2, feature gate GenericWorkload), the group
 *     of the pods whose spec.schedulingGroup.podGroupName is <name> in its
 *     namespace.  spec.schedulingPolicy.gang.minCount is min_member;
 *     schedulingPolicy.basic (no gang: each pod on its own) is min_member 1.
 * The same name in both APIs is two different groups.  Read only: nothing
 * here schedules gangs.
 */
enum gf_k8s_gang_api { GF_GANG_COSCHEDULING, GF_GANG_WORKLOAD };

struct gf_k8s_podgroup {
	enum gf_k8s_gang_api api;
	char ns[GF_K8S_NAME_MAX];
	char name[GF_K8S_NAME_MAX];
	char uid[GF_K8S_UID_MAX];
	char rv[GF_K8S_RV_MAX];
	int32_t min_member;		/* spec.minMember / gang.minCount; 0 = absent */
	int32_t timeout_s;		/* spec.scheduleTimeoutSeconds (coscheduling); 0 = absent */
	/* coscheduling: status.phase; Workload API: "Scheduled" when the
	 * PodGroupScheduled condition is True, else its reason (e.g.
	 * "Unschedulable"); "" = none yet */
	char phase[32];
	/* Workload API: spec.podGroupTemplateRef.workload (the Workload and
	 * its podGroupTemplates[] entry this group was made from); "" = none */
	char workload[GF_K8S_NAME_MAX];
	char template_name[64];
	bool basic;			/* Workload API: schedulingPolicy.basic */
};

/* Decode a coscheduling PodGroup.  err gets "<json path>: <what>" on GF_PARSE (e.g. spec.minMember: -1). */
gf_err gf_k8s_podgroup_decode(const struct cJSON *obj, struct gf_k8s_podgroup *out, char *err,
			      size_t errlen);
gf_err gf_k8s_podgroup_decode_text(const char *text, size_t len, struct gf_k8s_podgroup *out, char *err,
				   size_t errlen);

/*
 * Decode a Workload API PodGroup (scheduling.k8s.io/v1alpha2; api is
 * GF_GANG_WORKLOAD).  spec.schedulingPolicy must hold exactly one of gang
 * (with minCount >= 1) and basic, as the API server validates; errors name
 * the path (spec.schedulingPolicy.gang.minCount: ...).
 */
gf_err gf_k8s_wl_podgroup_decode(const struct cJSON *obj, struct gf_k8s_podgroup *out, char *err,
				 size_t errlen);
gf_err gf_k8s_wl_podgroup_decode_text(const char *text, size_t len, struct gf_k8s_podgroup *out, char *err,
				      size_t errlen);

struct gf_k8s_node {
	char name[GF_K8S_NAME_MAX];
	char rv[GF_K8S_RV_MAX];
	/* spec.name is the first 63 bytes of name; spec.model is -1 (the
	 * caller interns model); ngpus = allocatable nvidia.com/gpu, capped
	 * at GF_MAX_GPUS (capped is then true); topo from GF_ANN_TOPOLOGY. */
	struct gf_node_spec spec;
	char model[GF_NAME_MAX];	/* nvidia.com/gpu.product or gpufleet.io/gpu.product */
	bool capped;
	bool ready;			/* condition Ready is True */
	char labels[4096];		/* packed "key\0value\0" */
	size_t labels_len;
	bool labels_truncated;		/* over 4 KiB of labels: the rest is missing */
	int ntaints;			/* NoSchedule / NoExecute only, at most GF_K8S_MAX_TAINTS */
	struct gf_taint taints[GF_K8S_MAX_TAINTS];
	bool unschedulable;		/* spec.unschedulable */
	int64_t max_pods;		/* allocatable pods; 0 = not given (no limit) */
	int nuuids;			/* from the topology annotation; 0 = unknown */
	char uuids[GF_MAX_GPUS][GF_K8S_UUID_MAX];
	char topo_err[160];		/* the topology annotation was ignored: why */
};

/* A node label's value or NULL (n->labels). */
const char *gf_k8s_node_label(const struct gf_k8s_node *n, const char *key);

/*
 * Parse a Kubernetes quantity ("2", "500m", "64Gi", "1e3", "0.5") into
 * thousandths of the unit, rounded up.  GF_PARSE for bad syntax, GF_RANGE
 * past +-2^62 thousandths.
 */
gf_err gf_k8s_quantity_milli(const char *s, int64_t *out);

/* Decode a Pod object.  err gets "<json path>: <what>" on GF_PARSE. */
gf_err gf_k8s_pod_decode(const struct cJSON *obj, struct gf_k8s_pod *out, char *err, size_t errlen);

/*
 * The served model of a Pod object (the one rule for the scheduler and the
 * agent): its label gpufleet.io/model, else its first container's image
 * (what a node caches; a model loaded at run time needs the label).  Copies
 * it to out (n bytes) and returns its length; 0 (out "") when there is none,
 * it does not fit, or it holds a ',' (the annotation's separator).
 */
#define GF_K8S_SERVED_MAX 256
size_t gf_k8s_served_identity(const struct cJSON *pod, char *out, size_t n);

/* Decode a Node object. */
gf_err gf_k8s_node_decode(const struct cJSON *obj, struct gf_k8s_node *out, char *err,
			  size_t errlen);

/* Same, from text (len bytes, need not be NUL-terminated): parses then decodes. */
gf_err gf_k8s_pod_decode_text(const char *text, size_t len, struct gf_k8s_pod *out, char *err,
			      size_t errlen);
gf_err gf_k8s_node_decode_text(const char *text, size_t len, struct gf_k8s_node *out, char *err,
			       size_t errlen);

/*
 * Parse the node agent's topology document (agent/inventory.c, version 1):
 * gpus[].index/uuid/numa_node and topology.links; NVLink islands are the
 * connected components of links > 0.  Fills out->spec.topo, uuids and
 * nuuids.  GF_PARSE (with a path in err) leaves out's topology unknown.
 */
gf_err gf_k8s_topology_decode(const char *text, struct gf_k8s_node *out, char *err,
			      size_t errlen);

#endif /* GF_K8S_CODEC_H */
