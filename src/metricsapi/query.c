/*
 * metricsapi/query.c - the metric catalog, the selector vocabulary, results
 * and their ExternalMetricValueList rendering.
 *
 * Catalog rule: every metric reads one per-GPU gauge of the agents and
 * returns ONE item, the combination (avg by default) of the values of the
 * distinct GPUs that match, because the HPA sums every item it gets (so a
 * per-GPU list would turn "average utilization" into a sum).  The PromQL
 * templates do the same in Prometheus: one value per GPU first
 * (max by hostname, UUID, GPU_I_ID: a GPU shared by several pods has one
 * series per pod), then the combination.
 */
#include "metricsapi/query.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/time.h"
#include "metricsapi/quantity.h"

#define PER_GPU(s) "max by (hostname, UUID, GPU_I_ID) (" s "{" GF_MA_MATCHERS "})"
#define AVG(n, s) { n, s, GF_MA_AVG, "avg(" PER_GPU(s) ")" }

static const struct gf_ma_metric catalog[] = {
	/* Names users look for: utilization 0-100 averaged over the GPUs selected. */
	AVG("dcgm_gpu_utilization", "DCGM_FI_DEV_GPU_UTIL"),
	AVG("dcgm_gpu_memory_copy_utilization", "DCGM_FI_DEV_MEM_COPY_UTIL"),
	AVG("dcgm_gpu_power_usage", "DCGM_FI_DEV_POWER_USAGE"),
	{ "dcgm_gpu_utilization_max", "DCGM_FI_DEV_GPU_UTIL", GF_MA_MAX,
	  "max(" PER_GPU("DCGM_FI_DEV_GPU_UTIL") ")" },
	{ "dcgm_gpu_count", "DCGM_FI_DEV_GPU_UTIL", GF_MA_COUNT,
	  "count(" PER_GPU("DCGM_FI_DEV_GPU_UTIL") ")" },
	/* dcgm-exporter's own names, averaged per GPU. */
	AVG("DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_GPU_UTIL"),
	AVG("DCGM_FI_DEV_MEM_COPY_UTIL", "DCGM_FI_DEV_MEM_COPY_UTIL"),
	AVG("DCGM_FI_DEV_ENC_UTIL", "DCGM_FI_DEV_ENC_UTIL"),
	AVG("DCGM_FI_DEV_DEC_UTIL", "DCGM_FI_DEV_DEC_UTIL"),
	AVG("DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_USED"),
	AVG("DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_FB_FREE"),
	AVG("DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_POWER_USAGE"),
	AVG("DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_GPU_TEMP"),
	AVG("DCGM_FI_DEV_MEMORY_TEMP", "DCGM_FI_DEV_MEMORY_TEMP"),
	AVG("DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_SM_CLOCK"),
	AVG("DCGM_FI_DEV_MEM_CLOCK", "DCGM_FI_DEV_MEM_CLOCK"),
	AVG("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_PROF_GR_ENGINE_ACTIVE"),
	AVG("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"),
	AVG("DCGM_FI_PROF_DRAM_ACTIVE", "DCGM_FI_PROF_DRAM_ACTIVE"),
};

const struct gf_ma_metric *gf_ma_catalog(size_t *n)
{
	*n = sizeof(catalog) / sizeof(catalog[0]);
	return catalog;
}

static const char *const key_names[GF_MA_K_COUNT] = {
	[GF_MA_K_GPU] = "gpu",
	[GF_MA_K_GPU_INDEX] = "gpu_index",
	[GF_MA_K_UUID] = "UUID",
	[GF_MA_K_NODE] = "node",
	[GF_MA_K_NAMESPACE] = "namespace",
	[GF_MA_K_POD] = "pod",
	[GF_MA_K_CONTAINER] = "container",
};

int gf_ma_key_of(const char *k)
{
	for (int i = 0; i < GF_MA_K_COUNT; i++)
		if (!strcmp(k, key_names[i]))
			return i;
	if (!strcmp(k, "uuid"))
		return GF_MA_K_UUID;
	if (!strcmp(k, "hostname") || !strcmp(k, "Hostname"))
		return GF_MA_K_NODE;
	return -1;
}

const char *gf_ma_key_name(enum gf_ma_key k)
{
	return (unsigned)k < GF_MA_K_COUNT ? key_names[k] : "?";
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

bool gf_ma_query_pod_ok(const struct gf_ma_query *q, const char *pod)
{
	if (!q->pod_filter)
		return true;
	if (!pod || !q->npods)
		return false;
	return bsearch(&pod, q->pods, q->npods, sizeof(char *), cmp_str) != NULL;
}

void gf_ma_result_init(struct gf_ma_result *r)
{
	r->n = 0;
}

void gf_ma_result_release(struct gf_ma_result *r)
{
	for (size_t i = 0; i < r->n; i++)
		cJSON_Delete(r->items[i].labels);
	r->n = 0;
}

gf_err gf_ma_result_add(struct gf_ma_result *r, cJSON *labels, double value, int64_t ts)
{
	if (r->n == GF_MA_MAX_ITEMS) {
		cJSON_Delete(labels);
		return GF_TOOBIG;
	}
	r->items[r->n++] = (struct gf_ma_item){ labels, value, ts };
	return GF_OK;
}

gf_err gf_ma_render_list(const char *metric, const struct gf_ma_result *r, struct gf_obuf *out)
{
	cJSON *doc = cJSON_CreateObject();
	if (!doc)
		return GF_NOMEM;
	cJSON_AddStringToObject(doc, "kind", "ExternalMetricValueList");
	cJSON_AddStringToObject(doc, "apiVersion", "external.metrics.k8s.io/v1beta1");
	cJSON_AddItemToObject(doc, "metadata", cJSON_CreateObject());
	cJSON *items = cJSON_AddArrayToObject(doc, "items");
	for (size_t i = 0; items && i < r->n; i++) {
		const struct gf_ma_item *it = &r->items[i];
		char q[GF_QUANTITY_MAX], ts[21];
		if (gf_quantity_format(it->value, q))
			continue; /* NaN or infinite: no quantity (query.h) */
		gf_rfc3339(it->ts, ts);
		cJSON *o = cJSON_CreateObject();
		if (!o)
			break;
		cJSON_AddStringToObject(o, "metricName", metric);
		cJSON *labels = it->labels ? cJSON_Duplicate(it->labels, true) : cJSON_CreateObject();
		cJSON_AddItemToObject(o, "metricLabels", labels);
		cJSON_AddStringToObject(o, "timestamp", ts);
		cJSON_AddStringToObject(o, "value", q);
		cJSON_AddItemToArray(items, o);
	}
	char *s = cJSON_PrintUnformatted(doc);
	cJSON_Delete(doc);
	if (!s)
		return GF_NOMEM;
	gf_err e = gf_obuf_puts(out, s);
	cJSON_free(s);
	return e;
}
