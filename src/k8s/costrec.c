/*
 * k8s/costrec.c - the allocation record gauges (k8s/costrec.h).
 *
 * Two passes over the live state (GPUs, then shares), each O(nodes x GPUs +
 * pods x GPUs); label values escaped as the Prometheus text format needs
 * (backslash, double quote, newline).
 */
#include "k8s/costrec.h"

#include <string.h>

#include "queue/spot.h"

static const char *node_label(const void *n, const char *key)
{
	return gf_k8s_node_label(n, key);
}

bool gf_costrec_node_spot(const struct gf_k8s_node *n)
{
	return gf_capacity_type_of(node_label, n) == GF_CAPACITY_SPOT;	/* the one list: queue/spot.h */
}

static void label(struct gf_obuf *o, const char *name, const char *v, bool comma)
{
	gf_obuf_printf(o, "%s=\"", name);
	for (; v && *v; v++) {
		if (*v == '\\' || *v == '"')
			gf_obuf_printf(o, "\\%c", *v);
		else if (*v == '\n')
			gf_obuf_puts(o, "\\n");
		else
			gf_obuf_append(o, v, 1);
	}
	gf_obuf_puts(o, comma ? "\"," : "\"");
}

static void on_gpu(void *ud, const struct gf_live_gpu *g)
{
	struct gf_obuf *o = ud;
	gf_obuf_puts(o, "gpufleet_gpu_capacity{");
	label(o, "node", g->node, true);
	gf_obuf_printf(o, "gpu=\"%d\",", g->gpu);
	label(o, "uuid", g->uuid, true);
	label(o, "model", g->model, true);
	label(o, "capacity_type", gf_costrec_node_spot(g->n) ? "spot" : "on-demand", false);
	gf_obuf_puts(o, "} 1\n");
}

static void on_share(void *ud, const struct gf_live_share *s)
{
	struct gf_obuf *o = ud;
	gf_obuf_puts(o, "gpufleet_pod_gpu_allocation{");
	label(o, "namespace", s->ns, true);
	label(o, "pod", s->pod, true);
	label(o, "node", s->node, true);
	gf_obuf_printf(o, "gpu=\"%d\",", s->gpu);
	label(o, "uuid", s->uuid, true);
	label(o, "model", s->model, true);
	gf_obuf_printf(o, "share=\"%d.%03d\"} %d.%03d\n", s->milli / 1000, s->milli % 1000, s->milli / 1000,
		       s->milli % 1000);
}

gf_err gf_costrec_render(gf_live *l, struct gf_obuf *o)
{
	gf_obuf_puts(o, "# HELP gpufleet_gpu_capacity GPUs of the nodes the scheduler knows (1 per GPU), "
			"for cost accounting.\n# TYPE gpufleet_gpu_capacity gauge\n");
	gf_live_each_allocation(l, NULL, on_gpu, o);
	gf_obuf_puts(o, "# HELP gpufleet_pod_gpu_allocation The share of a GPU a pod holds (fraction of "
			"the GPU), for cost accounting.\n# TYPE gpufleet_pod_gpu_allocation gauge\n");
	gf_live_each_allocation(l, on_share, NULL, o);
	return gf_obuf_error(o);
}
