/*
 * k8s/queues.h - GPUQueue custom resources (gpufleet.io/v1alpha1) as the API
 * server serves them (JSON), into the one Queue definition
 * (queue/queuedef.h: the CRD's shape, its rules and defaults, the same
 * `gpufleet replay --queues` reads from YAML), and which Queue a pod is
 * charged to.
 *
 * The decoder maps JSON syntax only (integers, strings, objects, unknown
 * keys refused); gf_queue_validate() decides the rest.  metadata beyond
 * name and status are not read.  An error names the JSON path and what is
 * wrong ("queue a: spec.nominalQuota.gpus: -1 is outside 0..1000000"): the
 * Queue is then refused as a whole.
 *
 * A pod's Queue (the rule `gpufleet queue` shows, k8s/queueview.h): its
 * label GF_LABEL_QUEUE, else its namespace's label of the same name, else
 * none.  A pod carrying Kueue's GF_LABEL_KUEUE_QUEUE is Kueue's to admit:
 * placed by gpufleet, charged to no Queue of ours (docs/scheduler.md).
 *
 * No I/O, no clock.
 */
#ifndef GF_K8S_QUEUES_H
#define GF_K8S_QUEUES_H

#include <stddef.h>

#include "core/error.h"
#include "k8s/codec.h"
#include "queue/queuedef.h"

struct cJSON;

/* The CRD (deploy/helm/gpufleet/templates/crds/queue.yaml): kind GPUQueue,
 * cluster-scoped, gpuqueues.gpufleet.io (named so that `kubectl get queues`
 * stays Volcano's).  The collection the scheduler watches and
 * `gpufleet queue` lists. */
#define GF_K8S_QUEUE_KIND "GPUQueue"
#define GF_K8S_QUEUE_PATH "/apis/gpufleet.io/v1alpha1/gpuqueues"

/*
 * Decode one Queue object (a list item or a watch event's object) into
 * *out.  GF_PARSE: err gets "<json path>: <what>" (the object's name first
 * when known: "queue team-a: spec.weight: ...").  line is 0.
 */
gf_err gf_k8s_queue_decode(const struct cJSON *obj, struct gf_queue_def *out, char *err, size_t errlen);

/* The same from JSON text[0..len) (fuzzing, tests). */
gf_err gf_k8s_queue_decode_text(const char *text, size_t len, struct gf_queue_def *out, char *err,
				size_t errlen);

/* The rule: pod_label if non-empty, else ns_label if non-empty, else NULL (shared with k8s/queueview.c). */
const char *gf_k8s_queue_rule(const char *pod_label, const char *ns_label);

/*
 * The Queue name pod p is charged to, given its namespace's GF_LABEL_QUEUE
 * label ns_queue (NULL or "": none): NULL when none, or when p is Kueue's.
 */
const char *gf_k8s_pod_queue(const struct gf_k8s_pod *p, const char *ns_queue);

#endif /* GF_K8S_QUEUES_H */
