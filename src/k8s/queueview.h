/*
 * k8s/queueview.h - `gpufleet queue`'s view: the pods waiting for a
 * scheduler, per Queue, with their position, estimated start and why they
 * wait, from API objects alone (no I/O here, no clock: the caller feeds the
 * objects it listed and passes the time).
 *
 * Rules (docs/scheduler.md, "gpufleet queue"):
 *   - waiting: phase Pending, no spec.nodeName, not being deleted, and
 *     spec.schedulerName the view's (NULL: any);
 *   - queue: the pod's GF_LABEL_QUEUE label, else its namespace's label of
 *     the same name, else none ("-"); a name with no Queue object
 *     (gpufleet.io/v1alpha1) is kept and flagged (queue_exists false);
 *   - position: 1-based within the queue, in the order kube-scheduler's
 *     default queue sort takes pods: higher spec.priority first, then
 *     older creationTimestamp, then namespace/name;
 *   - estimated start: the scheduler's GF_COND_ESTIMATED_START condition
 *     (codec.h: status True, message "estimated start <RFC 3339 UTC>: why"),
 *     else, on a pod without that condition, the GF_ANN_ESTIMATED_START
 *     annotation an older scheduler wrote; absent: none ("-"), never a
 *     guess; unreadable: said so;
 *   - why: that condition's reason part (else the GF_ANN_WAITING_REASON
 *     annotation of an older scheduler), else the message of the
 *     newest FailedScheduling Event for the pod (by uid, else by name), else
 *     the pod's PodScheduled=False condition message, else none;
 *   - gang: the group the pod names (spec.schedulingGroup, else the
 *     coscheduling label: the rule of gf_gangs_of_pod), JSON only.
 *
 * Ownership: gf_qview is an opaque handle (_create/_destroy); objects fed
 * in are copied (only the fields above).  Not thread-safe.
 */
#ifndef GF_K8S_QUEUEVIEW_H
#define GF_K8S_QUEUEVIEW_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

struct cJSON;
struct gf_obuf;

typedef struct gf_qview gf_qview;

/* scheduler_name: only pods with this spec.schedulerName; NULL = any.  Copied.  GF_NOMEM. */
gf_err gf_qview_create(const char *scheduler_name, gf_qview **out);
void gf_qview_destroy(gf_qview *v);

/*
 * Feed one object as the API server returns it (a list's item).  GF_OK
 * (also for a pod that is not waiting: ignored), GF_PARSE with err naming
 * the object and the JSON path ("pod ml/w0: metadata.labels[...]: expected
 * a string") - the object is then left out, the rest stays usable -, or
 * GF_NOMEM.
 */
gf_err gf_qview_add_queue(gf_qview *v, const struct cJSON *obj, char *err, size_t errlen);
gf_err gf_qview_add_namespace(gf_qview *v, const struct cJSON *obj, char *err, size_t errlen);
gf_err gf_qview_add_pod(gf_qview *v, const struct cJSON *obj, char *err, size_t errlen);
/* Only reason FailedScheduling about a Pod is kept; others return GF_OK. */
gf_err gf_qview_add_event(gf_qview *v, const struct cJSON *obj, char *err, size_t errlen);

/* Map pods to queues, rank them, attach reasons.  now: Unix seconds. */
void gf_qview_build(gf_qview *v, int64_t now);

/* Pods waiting (after build). */
size_t gf_qview_waiting(const gf_qview *v);

/*
 * Render (after build).  The table: one row per waiting pod, by queue name
 * (none last) then position, then one line per queue that is named but does
 * not exist; "No pods waiting." when there are none.  The JSON document:
 * {"time", "queues": [{"name", "exists", "cohort", "waiting", "pods": [...]}]}
 * with every Queue object (even with nothing waiting) and every named
 * queue; the pods' fields are in docs/scheduler.md.  Errors: the buffer's
 * (GF_TOOBIG, GF_NOMEM).
 */
gf_err gf_qview_render_table(const gf_qview *v, struct gf_obuf *o);
gf_err gf_qview_render_json(const gf_qview *v, struct gf_obuf *o);

#endif /* GF_K8S_QUEUEVIEW_H */
