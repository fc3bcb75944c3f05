/*
 * fuzz/fuzz_k8s_queueview.c - libFuzzer harness for `gpufleet queue`'s view
 * (k8s/queueview.c): the API objects it reads (Queues, namespaces, pods,
 * events) as the API server would list them.
 *
 * The input is a JSON document: a list ({"items": [...]}) or one object.
 * Every object is fed to each of the four readers (so a pod is also tried
 * as an event, a namespace and a queue); each must return GF_OK or
 * GF_PARSE with a message.  Then the view is built at a time taken from the
 * input's length and rendered both ways: the JSON rendering must parse, list
 * each waiting pod once, and number each queue's pods 1, 2, ...
 */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/obuf.h"
#include "k8s/queueview.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef gf_err (*add_fn)(gf_qview *, const cJSON *, char *, size_t);

static void feed_all(gf_qview *v, const cJSON *obj)
{
	static const add_fn adds[] = { gf_qview_add_queue, gf_qview_add_namespace, gf_qview_add_pod,
				       gf_qview_add_event };
	for (size_t i = 0; i < sizeof(adds) / sizeof(adds[0]); i++) {
		char err[600] = "";
		gf_err e = adds[i](v, obj, err, sizeof(err));
		if (e == GF_PARSE && !err[0])
			abort();
		if (e != GF_OK && e != GF_PARSE && e != GF_NOMEM)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cJSON *doc = cJSON_ParseWithLength((const char *)data, size);
	if (!doc)
		return 0;
	gf_qview *v;
	if (gf_qview_create(size % 2 ? "gpufleet" : NULL, &v)) {
		cJSON_Delete(doc);
		return 0;
	}
	const cJSON *items = cJSON_GetObjectItemCaseSensitive(doc, "items"), *it;
	if (cJSON_IsArray(items)) {
		cJSON_ArrayForEach(it, items) feed_all(v, it);
	} else {
		feed_all(v, doc);
	}
	cJSON_Delete(doc);
	gf_qview_build(v, (int64_t)size * 86400);
	struct gf_obuf o;
	gf_obuf_init(&o, 64u << 20);
	if (gf_qview_render_table(v, &o))
		abort();
	gf_obuf_reset(&o);
	if (gf_qview_render_json(v, &o))
		abort();
	cJSON *out = cJSON_Parse(o.data);
	if (!out)
		abort();
	size_t seen = 0;
	const cJSON *q;
	cJSON_ArrayForEach(q, cJSON_GetObjectItemCaseSensitive(out, "queues"))
	{
		double pos = 0;
		cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(q, "pods"))
		{
			if (cJSON_GetObjectItemCaseSensitive(it, "position")->valuedouble != ++pos)
				abort();
			seen++;
		}
	}
	if (seen != gf_qview_waiting(v))
		abort();
	cJSON_Delete(out);
	gf_obuf_release(&o);
	gf_qview_destroy(v);
	return 0;
}
