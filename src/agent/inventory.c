/*
 * agent/inventory.c - the GPU inventory and topology document (JSON).
 *
 * Format (docs/agent.md is the reference; version 1):
 *   { "version": 1, "node": "...", "driver": "...",
 *     "gpus": [ { "index", "uuid", "model", "pci_bus_id", "memory_mib",
 *                 "numa_node" (-1 unknown), "healthy",
 *                 "mig": { "mode": "enabled"|"disabled"|"unsupported",
 *                          "instances": [ { "uuid", "gpu_instance_id",
 *                                           "profile", "memory_mib" } ] },
 *                 "nvlinks_to_nvswitch" } ],
 *     "topology": { "uuids": [...],            same order as gpus
 *                   "links": [[n_ij...]...],    active NVLinks between i and j
 *                   "matrix": [["X","NV4","PIX",...]...] } }
 * matrix[i][j] is what `nvidia-smi topo -m` prints: "X" on the diagonal,
 * "NV<n>" for n direct NVLinks, else the PCIe relation from
 * nvmlDeviceGetTopologyCommonAncestor: PIX (one switch), PXB (several
 * switches), PHB (host bridge), NODE (same NUMA node), SYS (across
 * sockets), "?" when NVML cannot tell.
 *
 * Cost: O(GPUs^2) topology calls + O(GPUs x links) NVLink calls; built on
 * demand (start-up publish, /inventory), never per scrape.
 */
#include "agent/agent_impl.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *pcie_level(int level)
{
	switch (level) {
	case GF_NVML_TOPO_INTERNAL: return "X";
	case GF_NVML_TOPO_SINGLE: return "PIX";
	case GF_NVML_TOPO_MULTIPLE: return "PXB";
	case GF_NVML_TOPO_HOSTBRIDGE: return "PHB";
	case GF_NVML_TOPO_NODE: return "NODE";
	case GF_NVML_TOPO_SYSTEM: return "SYS";
	default: return "?";
	}
}

/* NUMA node: NVML if it has it, else sysfs <sys_root>/bus/pci/devices/<bdf>/numa_node. */
static int numa_node(gf_agent *a, const struct gf_agent_gpu *g)
{
	unsigned node;
	if (g->dev && GF_NVML_CALL(&a->nvml, numa_node, g->dev, &node) == GF_NVML_SUCCESS)
		return (int)node;
	/* NVML's "00000000:3B:00.0" -> sysfs "0000:3b:00.0". */
	size_t n = strlen(g->bus_id);
	if (n < 12)
		return -1;
	char bdf[32];
	const char *s = n >= 16 ? g->bus_id + 4 : g->bus_id;
	size_t k;
	for (k = 0; s[k] && k + 1 < sizeof(bdf); k++)
		bdf[k] = (char)tolower((unsigned char)s[k]);
	bdf[k] = '\0';
	char path[4096];
	snprintf(path, sizeof(path), "%s/bus/pci/devices/%s/numa_node", a->sys_root, bdf);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	char line[32] = "";
	if (!fgets(line, sizeof(line), f))
		line[0] = '\0';
	fclose(f);
	char *end;
	long v = strtol(line, &end, 10);
	return end == line ? -1 : (int)v;
}

static cJSON *mig_json(gf_agent *a, const struct gf_agent_gpu *g)
{
	struct gf_nvml *n = &a->nvml;
	cJSON *mig = cJSON_CreateObject();
	unsigned cur = 0, pend = 0;
	gf_nvml_return r = g->dev ? GF_NVML_CALL(n, mig_mode, g->dev, &cur, &pend)
				  : GF_NVML_ERROR_NOT_SUPPORTED;
	if (r != GF_NVML_SUCCESS) {
		cJSON_AddStringToObject(mig, "mode", "unsupported");
		return mig;
	}
	cJSON_AddStringToObject(mig, "mode", cur == GF_NVML_MIG_ENABLE ? "enabled" : "disabled");
	cJSON *inst = cJSON_AddArrayToObject(mig, "instances");
	unsigned max = 0;
	if (cur != GF_NVML_MIG_ENABLE || GF_NVML_CALL(n, mig_max, g->dev, &max) != GF_NVML_SUCCESS)
		return mig;
	for (unsigned i = 0; i < max && i < 64; i++) {
		gf_nvml_device md;
		if (GF_NVML_CALL(n, mig_handle, g->dev, i, &md) != GF_NVML_SUCCESS)
			continue;
		char uuid[GF_NVML_UUID_LEN] = "", name[GF_NVML_NAME_LEN] = "";
		unsigned gi = 0;
		gf_nvml_memory_v1 mem = { 0, 0, 0 };
		n->uuid(md, uuid, sizeof(uuid));
		GF_NVML_CALL(n, name, md, name, sizeof(name));
		GF_NVML_CALL(n, gi_id, md, &gi);
		GF_NVML_CALL(n, memory_v1, md, &mem);
		uuid[sizeof(uuid) - 1] = name[sizeof(name) - 1] = '\0';
		/* A MIG device's name ends in " MIG <profile>", e.g. "... MIG 1g.10gb". */
		const char *p = strstr(name, "MIG ");
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "uuid", uuid);
		cJSON_AddNumberToObject(o, "gpu_instance_id", gi);
		cJSON_AddStringToObject(o, "profile", p ? p + 4 : "");
		cJSON_AddNumberToObject(o, "memory_mib", (double)(mem.total >> 20));
		cJSON_AddItemToArray(inst, o);
	}
	return mig;
}

gf_err gf_agent_render_inventory(gf_agent *a, const char *node, struct gf_obuf *out)
{
	pthread_mutex_lock(&a->lock);
	gf_agent_maybe_collect_locked(a);
	struct gf_nvml *n = &a->nvml;
	unsigned ng = a->ngpus;
	unsigned links[GF_AGENT_MAX_GPUS][GF_AGENT_MAX_GPUS];
	unsigned nvswitch[GF_AGENT_MAX_GPUS];
	memset(links, 0, sizeof(links));
	memset(nvswitch, 0, sizeof(nvswitch));
	gf_err e = GF_NOMEM;
	cJSON *doc = cJSON_CreateObject();
	if (!doc)
		goto out;
	cJSON_AddNumberToObject(doc, "version", 1);
	cJSON_AddStringToObject(doc, "node", node ? node : "");
	cJSON_AddStringToObject(doc, "driver", a->driver);

	/* NVLink: count active links per peer GPU (by remote PCI bus id). */
	for (unsigned i = 0; i < ng; i++) {
		const struct gf_agent_gpu *g = &a->gpus[i];
		for (unsigned l = 0; g->dev && g->up && l < GF_NVML_MAX_LINKS; l++) {
			int active = 0;
			gf_nvml_return r = GF_NVML_CALL(n, nvlink_state, g->dev, l, &active);
			if (r != GF_NVML_SUCCESS)
				break;
			if (active != GF_NVML_FEATURE_ENABLED)
				continue;
			gf_nvml_pci_info pci;
			memset(&pci, 0, sizeof(pci));
			if (GF_NVML_CALL(n, nvlink_remote_pci, g->dev, l, &pci) != GF_NVML_SUCCESS)
				continue;
			pci.busId[sizeof(pci.busId) - 1] = '\0';
			unsigned j;
			for (j = 0; j < ng; j++)
				if (j != i && !strcasecmp(a->gpus[j].bus_id, pci.busId))
					break;
			if (j < ng)
				links[i][j]++;
			else
				nvswitch[i]++;
		}
	}

	cJSON *gpus = cJSON_AddArrayToObject(doc, "gpus");
	for (unsigned i = 0; i < ng; i++) {
		const struct gf_agent_gpu *g = &a->gpus[i];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "index", g->index);
		cJSON_AddStringToObject(o, "uuid", g->uuid);
		cJSON_AddStringToObject(o, "model", g->name);
		cJSON_AddStringToObject(o, "pci_bus_id", g->bus_id);
		cJSON_AddNumberToObject(o, "memory_mib", (double)(g->mem_total >> 20));
		cJSON_AddNumberToObject(o, "numa_node", numa_node(a, g));
		cJSON_AddBoolToObject(o, "healthy", g->up);
		cJSON_AddItemToObject(o, "mig", mig_json(a, g));
		cJSON_AddNumberToObject(o, "nvlinks_to_nvswitch", nvswitch[i]);
		cJSON_AddItemToArray(gpus, o);
	}

	cJSON *topo = cJSON_AddObjectToObject(doc, "topology");
	cJSON *uuids = cJSON_AddArrayToObject(topo, "uuids");
	cJSON *lk = cJSON_AddArrayToObject(topo, "links");
	cJSON *mx = cJSON_AddArrayToObject(topo, "matrix");
	for (unsigned i = 0; i < ng; i++) {
		cJSON_AddItemToArray(uuids, cJSON_CreateString(a->gpus[i].uuid));
		cJSON *lrow = cJSON_CreateArray(), *mrow = cJSON_CreateArray();
		for (unsigned j = 0; j < ng; j++) {
			/* NVLink counts seen from either end (a link may be reported once). */
			unsigned nl = links[i][j] > links[j][i] ? links[i][j] : links[j][i];
			cJSON_AddItemToArray(lrow, cJSON_CreateNumber(nl));
			char cell[16];
			if (i == j) {
				snprintf(cell, sizeof(cell), "X");
			} else if (nl) {
				snprintf(cell, sizeof(cell), "NV%u", nl);
			} else {
				int level = -1;
				if (!a->gpus[i].dev || !a->gpus[j].dev ||
				    GF_NVML_CALL(n, topo_common, a->gpus[i].dev, a->gpus[j].dev,
						 &level) != GF_NVML_SUCCESS)
					level = -1;
				snprintf(cell, sizeof(cell), "%s", pcie_level(level));
			}
			cJSON_AddItemToArray(mrow, cJSON_CreateString(cell));
		}
		cJSON_AddItemToArray(lk, lrow);
		cJSON_AddItemToArray(mx, mrow);
	}
	char *text = cJSON_PrintUnformatted(doc);
	if (!text)
		goto out;
	e = gf_obuf_puts(out, text);
	cJSON_free(text);
out:
	cJSON_Delete(doc);
	pthread_mutex_unlock(&a->lock);
	return e;
}
