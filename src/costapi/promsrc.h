/*
 * costapi/promsrc.h - one window's allocation record, capacity, utilization
 * and pod labels from Prometheus, as the inputs of gf_cost_compute().
 *
 * For the window [start, end) of W seconds, at resolution R seconds, four
 * instant queries evaluated at end - R (subqueries sample every R seconds,
 * at multiples of R, in [start - R/2, end - R]: each sample stands for the
 * R seconds after it; a window aligned to R is counted exactly):
 *   alloc   sum by (node,gpu,uuid,model,share,KEEP) (sum_over_time((ONCE_A)[W-R/2:R]))
 *           -> share-seconds = value x R; seconds = share-seconds / share
 *   cap     count_over_time((ONCE_C)[W-R/2:R])  -> seconds = value x R
 *   ONCE_A  max by (namespace,pod,node,gpu,uuid,model,share) (gpufleet_pod_gpu_allocation)
 *   ONCE_C  max by (node,gpu,uuid,model,capacity_type) (gpufleet_gpu_capacity)
 *           each GPU and pod's share once however many scheduler replicas
 *           render the record and are scraped (instance, job and other scrape
 *           labels dropped); a failover leaves neither a gap nor a double
 *   util    sum by (UUID,gpu,hostname,Hostname,KEEP)
 *             (sum_over_time(DCGM_FI_DEV_GPU_UTIL{pod!=""}[W-R/2:R]))
 *           -> the GPU's busy seconds while the pods were on it = value / 100 x R;
 *              the used GPU-seconds = that x the share (a shared GPU's
 *              utilization is device-wide: it is split by share, docs/cost.md)
 *   KEEP = namespace,pod when the aggregate names pods (pod, label:KEY),
 *          namespace for namespace, nothing for node, model, cluster: Prometheus
 *          sums what the report does not tell apart (a 30-day answer stays small).
 *   labels  per label:KEY aggregate, kube-state-metrics' kube_pod_labels:
 *           max by (namespace,pod,label_K)(last_over_time(kube_pod_labels{label_K!=""}[Ws]))
 *           with K the key with every character outside [A-Za-z0-9_] as '_'.
 * A GPU is known by (node, uuid), or (node, "gpu<index>") when its uuid
 * label is empty; utilization series match a use by (namespace, pod, GPU).
 * When the util query returns no series at all, utilization is unknown
 * (efficiency not reported) rather than zero.
 */
#ifndef GF_COSTAPI_PROMSRC_H
#define GF_COSTAPI_PROMSRC_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "cost/cost.h"

/*
 * Resolution GF_COST_RES_RECORDED: read the hourly recording rules of
 * data/prometheus/gpufleet-cost.rules.yml instead of the raw record (the
 * same queries on gpufleet:pod_gpu_allocation:share_seconds_1h,
 * gpufleet:gpu_capacity:seconds_1h and gpufleet:gpu_util:busy_percent_seconds_1h
 * - or, when the aggregate needs no pods, on the per-namespace rules
 * gpufleet:namespace_gpu_allocation:share_seconds_1h and
 * gpufleet:namespace_gpu_util:busy_percent_seconds_1h -
 * whose values are already seconds, evaluated at end over W - 30 min: the
 * window must be whole hours).  Prometheus evaluates a rule group at a fixed
 * offset within its interval, so the window is first moved back to the
 * group's latest evaluation at or before end (the last sample time of the
 * rule gpufleet:cost_rules:evaluated_1h, rounded up to whole seconds);
 * gf_cost_data.start/end say which hours were read.  A 30-day query then
 * reads 720 samples per series instead of every scrape.
 */
#define GF_COST_RES_RECORDED 0

/*
 * Pools: with the recorded rules, a report that tells only namespaces, models
 * or the cluster apart (aggregate namespace, model, cluster, or a list of
 * them) reads the pooled rules instead - per (namespace, GPU model, capacity
 * type), every GPU and pod summed away by Prometheus:
 *   alloc  sum_over_time(gpufleet:pool_gpu_allocation:seconds_1h[W - 30m])
 *          kind="share": share-seconds, kind="whole": seconds held
 *   cap    sum_over_time(gpufleet:pool_gpu_capacity:seconds_1h[W - 30m])
 *          kind="capacity": GPU-seconds, kind="overcommit": share-seconds above
 *          some GPU's capacity (per GPU and minute)
 *   util   sum_over_time(gpufleet:pool_gpu_used:seconds_1h[W - 30m])
 *          used GPU-seconds (utilization x share)
 * Each pool is one gf_cost_gpu ("<capacity type>/<model>", node ""), each
 * (namespace, pool) one use: the sums are the same, so the report is too
 * (the idle of a pool is its capacity - its uses + its overcommit, which is
 * the sum of its GPUs' idle).  A 30-day report then reads a few series per
 * namespace whatever the number of GPUs.  Entries carry no node property.
 */
bool gf_cost_pooled(int64_t resolution, const struct gf_cost_aggregate *agg);

enum { GF_COSTQ_ALLOC, GF_COSTQ_CAP, GF_COSTQ_UTIL, GF_COSTQ_LABELS, GF_COSTQ_COUNT };

/* The queries of one window: PromQL text per kind (labels: one per label key). */
struct gf_cost_queries {
	char *q[GF_COSTQ_LABELS];
	char *labels[GF_COST_MAX_KEYS]; /* NULL where agg.keys[k] is not a label */
};

/* Build them (resolution in seconds, or GF_COST_RES_RECORDED).  GF_NOMEM. */
gf_err gf_cost_queries_build(int64_t start, int64_t end, int64_t resolution,
			     const struct gf_cost_aggregate *agg, struct gf_cost_queries *out);
void gf_cost_queries_release(struct gf_cost_queries *q);

/* The inputs of one window.  Strings point into docs (owned). */
struct gf_cost_data {
	cJSON *docs[GF_COSTQ_LABELS + GF_COST_MAX_KEYS];
	struct gf_cost_use *uses;
	size_t nuses;
	struct gf_cost_gpu *gpus;
	size_t ngpus;
	struct gf_cost_label *labels; /* agg.nkeys per use */
	char *keys;                   /* GPU keys "gpu<i>" for empty uuids (owned) */
	double prom_seconds;          /* wall time in Prometheus (set by gf_cost_prom_fetch) */
	int64_t start, end;           /* the window read (recorded rules: moved to their hours) */
};

/*
 * Decode the answers (Prometheus /api/v1/query JSON, vector results) into
 * out: answers[k] for k < GF_COSTQ_LABELS, then one per label key of agg
 * (NULL for keys that are not labels).  resolution: the seconds each sample
 * stands for, or GF_COST_RES_RECORDED (the values are seconds; the pools'
 * answers when gf_cost_pooled).  Takes nothing; copies what it keeps.
 * GF_PARSE (err: which answer, the JSON path, or Prometheus' own error),
 * GF_NOMEM.  On error out is empty.
 */
gf_err gf_cost_data_decode(const char *const *answers, const size_t *lens, int64_t resolution,
			   const struct gf_cost_aggregate *agg, struct gf_cost_data *out, char *err,
			   size_t errlen);
void gf_cost_data_release(struct gf_cost_data *d);

/*
 * Run the queries against base_url and decode.  GF_UNAVAILABLE (connection
 * refused, timeout, HTTP 5xx: err names the URL and what happened), GF_NOENT
 * (recorded rules: no evaluation of them in the 2 hours before end),
 * GF_TOOBIG (an answer over 1 GiB), or gf_cost_data_decode's errors.
 * Thread-safe.
 */
gf_err gf_cost_prom_fetch(const char *base_url, long timeout_ms, int64_t start, int64_t end,
			  int64_t resolution, const struct gf_cost_aggregate *agg,
			  struct gf_cost_data *out, char *err, size_t errlen);

#endif /* GF_COSTAPI_PROMSRC_H */
