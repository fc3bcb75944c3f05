/*
 * k8s/codec_node.c - a Node's JSON to struct gf_k8s_node: allocatable
 * resources, the GPU model and count, labels and taints (packed key=value
 * lists), the GPU topology annotation (gf_k8s_topology_decode: its own small
 * grammar, an error kept in topo_err rather than refusing the node), the
 * served models seen.  Errors name the path (codec_impl.h); linear in the
 * object's size.
 */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "k8s/codec.h"
#include "k8s/codec_impl.h"

/* ---- nodes ------------------------------------------------------------- */

gf_err gf_k8s_topology_decode(const char *text, struct gf_k8s_node *n, char *err, size_t errlen)
{
	struct dec d = { .err = err, .errlen = errlen };
	cJSON *doc = cJSON_Parse(text);
	gf_err e = GF_OK;
	int ngpu = n->spec.ngpus;
	int8_t numa[GF_MAX_GPUS], island[GF_MAX_GPUS];
	char uuids[GF_MAX_GPUS][GF_K8S_UUID_MAX];
	memset(uuids, 0, sizeof(uuids));
	for (int g = 0; g < GF_MAX_GPUS; g++)
		numa[g] = island[g] = -1;
	if (!doc) {
		e = gf_kdec_fail(&d, "not JSON");
		goto out;
	}
	const cJSON *gpus, *topo = NULL, *links = NULL;
	if ((e = gf_kdec_member(&d, doc, "gpus", cJSON_Array, &gpus)) ||
	    (e = gf_kdec_member(&d, doc, "topology", cJSON_Object, &topo)))
		goto out;
	if (topo && (e = gf_kdec_member(&d, topo, "links", cJSON_Array, &links)))
		goto out;
	int i = 0;
	const cJSON *g;
	cJSON_ArrayForEach(g, gpus)
	{
		size_t o = gf_kdec_push(&d, "gpus[%d]", i);
		const cJSON *idx = cJSON_GetObjectItemCaseSensitive(g, "index");
		const cJSON *nn = cJSON_GetObjectItemCaseSensitive(g, "numa_node");
		const char *uuid = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(g, "uuid"));
		int k = cJSON_IsNumber(idx) ? idx->valueint : i;
		if (k < 0 || k >= GF_MAX_GPUS) {
			e = gf_kdec_fail(&d, "index %d out of range 0..%d", k, GF_MAX_GPUS - 1);
			gf_kdec_pop(&d, o);
			goto out;
		}
		if (cJSON_IsNumber(nn) && nn->valuedouble >= 0 && nn->valuedouble < 127)
			numa[k] = (int8_t)nn->valueint;
		if (uuid && strlen(uuid) < GF_K8S_UUID_MAX)
			snprintf(uuids[k], GF_K8S_UUID_MAX, "%s", uuid);
		gf_kdec_pop(&d, o);
		i++;
	}
	/* Islands: connected components of the NVLink graph (links[i][j] > 0). */
	int nl = cJSON_GetArraySize(links);
	if (nl > GF_MAX_GPUS)
		nl = GF_MAX_GPUS;
	uint32_t adj[GF_MAX_GPUS] = { 0 };
	for (int a = 0; a < nl; a++) {
		const cJSON *row = cJSON_GetArrayItem(links, a);
		int nr = cJSON_GetArraySize(row);
		for (int b = 0; b < nr && b < GF_MAX_GPUS; b++) {
			const cJSON *x = cJSON_GetArrayItem(row, b);
			if (a != b && cJSON_IsNumber(x) && x->valuedouble > 0)
				adj[a] |= 1u << b, adj[b] |= 1u << a;
		}
	}
	int8_t next = 0;
	for (int a = 0; a < nl; a++) {
		if (island[a] >= 0 || !adj[a])
			continue;
		uint32_t comp = 1u << a, grow;
		do {
			grow = comp;
			for (int b = 0; b < GF_MAX_GPUS; b++)
				if ((comp >> b) & 1)
					grow |= adj[b];
			if (grow == comp)
				break;
			comp = grow;
		} while (1);
		for (int b = 0; b < GF_MAX_GPUS; b++)
			if ((comp >> b) & 1)
				island[b] = next;
		next++;
	}
	for (int k = 0; k < GF_MAX_GPUS; k++) {
		n->spec.topo[k].numa = k < ngpu ? numa[k] : -1;
		n->spec.topo[k].nvlink_island = k < ngpu ? island[k] : -1;
	}
	n->nuuids = 0;
	if (i >= ngpu && ngpu > 0) {
		bool all = true;
		for (int k = 0; k < ngpu; k++)
			all &= uuids[k][0] != '\0';
		if (all) {
			memcpy(n->uuids, uuids, sizeof(uuids));
			n->nuuids = ngpu;
		}
	}
out:
	cJSON_Delete(doc);
	return e;
}

/*
 * GF_ANN_MODELS_SEEN: served model identities, comma separated, the most
 * recent first; the first GF_SERVED_SEEN_MAX non-empty ones are kept (as
 * keys), the rest ignored.  A hint, never an error: any text is accepted.
 */
static void served_seen(const char *list, struct gf_k8s_node *n)
{
	int k = 0;

	while (list && *list && k < GF_SERVED_SEEN_MAX) {
		size_t len = strcspn(list, ",");
		uint64_t key = gf_served_model_key(list, len);

		if (key)
			n->spec.served_seen[k++] = key;
		list += len + (list[len] == ',');
	}
}

gf_err gf_k8s_node_decode(const cJSON *obj, struct gf_k8s_node *n, char *err, size_t errlen)
{
	struct dec d = { .err = err, .errlen = errlen };
	memset(n, 0, sizeof(*n));
	n->spec.model = -1;
	for (int g = 0; g < GF_MAX_GPUS; g++)
		n->spec.topo[g] = (struct gf_gpu_topo){ -1, -1 };
	if (!cJSON_IsObject(obj))
		return gf_kdec_fail(&d, "expected a Node object, got %s", gf_kdec_type_name(obj));
	const cJSON *md, *spec, *status, *labels = NULL, *ann = NULL, *alloc = NULL, *conds = NULL;
	gf_err e;
	if ((e = gf_kdec_member(&d, obj, "metadata", cJSON_Object, &md)) ||
	    (e = gf_kdec_member(&d, obj, "spec", cJSON_Object, &spec)) ||
	    (e = gf_kdec_member(&d, obj, "status", cJSON_Object, &status)))
		return e;
	if (!md)
		return gf_kdec_fail(&d, "a Node needs metadata");
	size_t o = gf_kdec_push(&d, "metadata");
	if ((e = gf_kdec_str_member(&d, md, "name", n->name, sizeof(n->name))) ||
	    (e = gf_kdec_str_member(&d, md, "resourceVersion", n->rv, sizeof(n->rv))) ||
	    (e = gf_kdec_member(&d, md, "labels", cJSON_Object, &labels)) ||
	    (e = gf_kdec_member(&d, md, "annotations", cJSON_Object, &ann)))
		return e;
	if (!n->name[0])
		return gf_kdec_fail(&d, "a Node needs metadata.name");
	size_t o2 = gf_kdec_push(&d, ".labels");
	if (labels && (e = gf_kdec_check_str_map(&d, labels)))
		return e;
	gf_kdec_pop(&d, o2);
	o2 = gf_kdec_push(&d, ".annotations");
	if (ann && (e = gf_kdec_check_str_map(&d, ann)))
		return e;
	gf_kdec_pop(&d, o2);
	gf_kdec_pop(&d, o);
	served_seen(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ann, GF_ANN_MODELS_SEEN)), n);
	snprintf(n->spec.name, sizeof(n->spec.name), "%.*s", GF_NAME_MAX - 1, n->name);
	const char *model = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(labels, GF_LABEL_PRODUCT));
	if (!model)
		model = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(labels, "gpufleet.io/gpu.product"));
	if (model)
		snprintf(n->model, sizeof(n->model), "%.*s", GF_NAME_MAX - 1, model);
	const char *gmem = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(labels, GF_LABEL_GPU_MEM));
	if (gmem) {
		char *end;
		long long v = strtoll(gmem, &end, 10);
		if (end != gmem && !*end && v > 0)
			n->spec.gpu_mem_mib = v;
	}
	const cJSON *kv;
	cJSON_ArrayForEach(kv, labels)
	{
		if (!gf_kdec_pack_kv(n->labels, sizeof(n->labels), &n->labels_len, kv->string, kv->valuestring))
			n->labels_truncated = true;
	}
	if (spec) {
		const cJSON *u = cJSON_GetObjectItemCaseSensitive(spec, "unschedulable");
		n->unschedulable = cJSON_IsTrue(u);
		const cJSON *taints = cJSON_GetObjectItemCaseSensitive(spec, "taints"), *t;
		if (!cJSON_IsArray(taints))
			taints = NULL;
		cJSON_ArrayForEach(t, taints)
		{
			uint8_t ef;
			const char *key = gf_kdec_obj_str(t, "key"), *val = gf_kdec_obj_str(t, "value");
			bool ok = gf_kdec_effect_of(gf_kdec_obj_str(t, "effect"), &ef);
			if (ok && (ef == GF_EFFECT_PREFER_NO_SCHEDULE || ef == GF_EFFECT_ANY))
				continue; /* preferences do not filter */
			struct gf_taint *dst = &n->taints[n->ntaints < GF_K8S_MAX_TAINTS ? n->ntaints
										    : GF_K8S_MAX_TAINTS - 1];
			if (!ok || n->ntaints == GF_K8S_MAX_TAINTS || strlen(key) >= GF_K8S_KEY_MAX ||
			    strlen(val) >= GF_K8S_VAL_MAX) {
				/* Cannot be represented: only a pod tolerating everything passes. */
				snprintf(dst->key, sizeof(dst->key), "gpufleet.io/unrepresentable-taint");
				dst->value[0] = '\0';
				dst->effect = GF_EFFECT_NO_SCHEDULE;
				n->ntaints = GF_K8S_MAX_TAINTS;
				continue;
			}
			snprintf(dst->key, sizeof(dst->key), "%s", key);
			snprintf(dst->value, sizeof(dst->value), "%s", val);
			dst->effect = ef;
			n->ntaints++;
		}
	}
	if (status) {
		o = gf_kdec_push(&d, "status");
		if ((e = gf_kdec_member(&d, status, "allocatable", cJSON_Object, &alloc)) ||
		    (e = gf_kdec_member(&d, status, "conditions", cJSON_Array, &conds)))
			return e;
		if (alloc) {
			o2 = gf_kdec_push(&d, ".allocatable");
			bool f;
			int64_t v;
			if ((e = gf_kdec_quantity(&d, alloc, "cpu", &v, &f)))
				return e;
			n->spec.cpu_milli = f ? v : 0;
			if ((e = gf_kdec_quantity(&d, alloc, "memory", &v, &f)))
				return e;
			n->spec.mem_mib = f ? v / 1048576000LL : 0;
			if ((e = gf_kdec_quantity(&d, alloc, "pods", &v, &f)))
				return e;
			n->max_pods = f && v > 0 ? v / 1000 : 0;
			if ((e = gf_kdec_quantity(&d, alloc, GF_RES_GPU, &v, &f)))
				return e;
			if (f) {
				if (v < 0 || v % 1000) {
					size_t o3 = gf_kdec_push_key(&d, GF_RES_GPU);
					e = gf_kdec_fail(&d, "expected a whole number >= 0");
					gf_kdec_pop(&d, o3);
					return e;
				}
				v /= 1000;
				n->capped = v > GF_MAX_GPUS;
				n->spec.ngpus = (int)(v > GF_MAX_GPUS ? GF_MAX_GPUS : v);
			}
			gf_kdec_pop(&d, o2);
		}
		const cJSON *c;
		cJSON_ArrayForEach(c, conds)
		{
			const char *t = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "type"));
			const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "status"));
			if (t && s && !strcmp(t, "Ready"))
				n->ready = !strcmp(s, "True");
		}
		gf_kdec_pop(&d, o);
	}
	if (n->spec.cpu_milli < 0)
		n->spec.cpu_milli = 0;
	if (n->spec.mem_mib < 0)
		n->spec.mem_mib = 0;
	const char *topo = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ann, GF_ANN_TOPOLOGY));
	if (topo && n->spec.ngpus > 0) {
		char terr[160];
		if (gf_k8s_topology_decode(topo, n, terr, sizeof(terr)))
			snprintf(n->topo_err, sizeof(n->topo_err), "%s: %.120s", GF_ANN_TOPOLOGY, terr);
	}
	return GF_OK;
}
