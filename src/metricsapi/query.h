/*
 * metricsapi/query.h - what one external-metrics request asks of a source,
 * and what a source answers.  Shared by the two sources (the agents'
 * /metrics aggregated here, a Prometheus server) and the HTTP front end.
 *
 * The catalog: every external metric name the server answers, with the
 * agents' series it reads, how the per-GPU values are combined into the one
 * item returned, and the PromQL template the Prometheus source runs.
 *
 * Selector keys name either a series label (the vocabulary below) or,
 * for any other key, a label of the pods (resolved through the API server
 * into a set of pod names, see pods.h):
 *   gpu        the GPU model as a Kubernetes label value ("NVIDIA-H100-80GB-HBM3",
 *              as in the node label nvidia.com/gpu.product)
 *   gpu_index  dcgm-exporter's `gpu` label (the index on its node, "0")
 *   UUID       the GPU UUID
 *   node       the node (the agents' `hostname` label; `Hostname` accepted)
 *   namespace, pod, container   the pod the GPU is attributed to
 */
#ifndef GF_METRICSAPI_QUERY_H
#define GF_METRICSAPI_QUERY_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "core/obuf.h"
#include "metricsapi/selector.h"

enum gf_ma_agg { GF_MA_AVG, GF_MA_SUM, GF_MA_MAX, GF_MA_MIN, GF_MA_COUNT };

struct gf_ma_metric {
	const char *name;   /* external metric name (one path segment, case kept) */
	const char *series; /* agents' series read (NULL: only a Prometheus rule) */
	enum gf_ma_agg agg; /* combination of the per-GPU values */
	const char *promql; /* template; <<.LabelMatchers>> becomes the matchers */
};

/* The built-in catalog (static storage). */
const struct gf_ma_metric *gf_ma_catalog(size_t *n);

/* The placeholder replaced in PromQL templates. */
#define GF_MA_MATCHERS "<<.LabelMatchers>>"

enum gf_ma_key {
	GF_MA_K_GPU,
	GF_MA_K_GPU_INDEX,
	GF_MA_K_UUID,
	GF_MA_K_NODE,
	GF_MA_K_NAMESPACE,
	GF_MA_K_POD,
	GF_MA_K_CONTAINER,
	GF_MA_K_COUNT
};

/* The series key a selector key names, or -1 (a pod label). */
int gf_ma_key_of(const char *selector_key);

/* The canonical selector name of a series key ("gpu", "node", ...). */
const char *gf_ma_key_name(enum gf_ma_key k);

struct gf_ma_query {
	const char *ns;                       /* request namespace; NULL = every namespace */
	const struct gf_ma_metric *metric;
	const struct gf_selector *series_sel; /* requirements on series keys only */
	bool pod_filter;                      /* restrict to the pods below */
	char **pods;                          /* sorted (strcmp), npods names */
	size_t npods;
};

/* Is pod one of q's pods (binary search)?  True when !q->pod_filter. */
bool gf_ma_query_pod_ok(const struct gf_ma_query *q, const char *pod);

#define GF_MA_MAX_ITEMS 256

struct gf_ma_item {
	cJSON *labels;  /* object of strings, owned */
	double value;
	int64_t ts;     /* Unix seconds */
};

/* Embeddable; _release frees the items' labels. */
struct gf_ma_result {
	size_t n;
	struct gf_ma_item items[GF_MA_MAX_ITEMS];
};

void gf_ma_result_init(struct gf_ma_result *r);
void gf_ma_result_release(struct gf_ma_result *r);

/* Append an item (takes labels, even on error).  GF_TOOBIG past GF_MA_MAX_ITEMS. */
gf_err gf_ma_result_add(struct gf_ma_result *r, cJSON *labels, double value, int64_t ts);

/* Write the ExternalMetricValueList JSON of r for metric name.  Items with a
 * value that is not a finite number (NaN, +-Inf: no quantity expresses them)
 * are skipped; every finite value is written (gf_quantity_format).
 * GF_TOOBIG/GF_NOMEM from out. */
gf_err gf_ma_render_list(const char *metric, const struct gf_ma_result *r, struct gf_obuf *out);


#endif /* GF_METRICSAPI_QUERY_H */
