/*
 * k8s/gangs.c - the PodGroup store (gangs.h).
 *
 * Entries live in one array; an open-addressing table (linear probing,
 * FNV-1a of "api namespace\0name", at most half full) maps keys to indices.
 * A deletion shifts the later entries down (the array stays in first-seen
 * order, the order /metrics lists them in) and rebuilds the table:
 * O(groups), fine for the rare deletions of objects that live for a job.
 */
#include "k8s/gangs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "core/hash.h"
#include "core/obuf.h"

struct gf_gangs {
	struct gf_k8s_podgroup *v;
	size_t n, cap;
	uint32_t *slot;		/* index + 1; 0 = empty */
	size_t nslot;		/* a power of two, >= 2 * cap */
};

static uint64_t key_hash(enum gf_k8s_gang_api api, const char *ns, const char *name)
{
	uint64_t h = gf_fnv1a_byte(GF_FNV64_OFFSET, (unsigned char)api);
	h = gf_fnv1a_str(h, ns);
	h = gf_fnv1a_byte(h, 0xff); /* the separator: a byte no name has */
	return gf_fnv1a_str(h, name);
}

/* The slot holding ns/name, or the empty slot where it would go. */
static size_t find(const gf_gangs *g, enum gf_k8s_gang_api api, const char *ns, const char *name)
{
	size_t mask = g->nslot - 1, i = (size_t)key_hash(api, ns, name) & mask;
	while (g->slot[i]) {
		const struct gf_k8s_podgroup *e = &g->v[g->slot[i] - 1];
		if (e->api == api && !strcmp(e->ns, ns) && !strcmp(e->name, name))
			return i;
		i = (i + 1) & mask;
	}
	return i;
}

static void reindex(gf_gangs *g)
{
	memset(g->slot, 0, g->nslot * sizeof(*g->slot));
	for (size_t k = 0; k < g->n; k++)
		g->slot[find(g, g->v[k].api, g->v[k].ns, g->v[k].name)] = (uint32_t)k + 1;
}

gf_err gf_gangs_create(gf_gangs **out)
{
	gf_gangs *g = calloc(1, sizeof(*g));
	if (!g)
		return GF_NOMEM;
	g->nslot = 16;
	g->cap = 8;
	g->slot = calloc(g->nslot, sizeof(*g->slot));
	g->v = malloc(g->cap * sizeof(*g->v));
	if (!g->slot || !g->v) {
		gf_gangs_destroy(g);
		return GF_NOMEM;
	}
	*out = g;
	return GF_OK;
}

void gf_gangs_destroy(gf_gangs *g)
{
	if (!g)
		return;
	free(g->v);
	free(g->slot);
	free(g);
}

gf_err gf_gangs_set(gf_gangs *g, const struct gf_k8s_podgroup *pg)
{
	size_t i = find(g, pg->api, pg->ns, pg->name);
	if (g->slot[i]) {
		g->v[g->slot[i] - 1] = *pg;
		return GF_OK;
	}
	if (g->n == g->cap) {
		if (g->cap >= UINT32_MAX / 4)
			return GF_NOMEM;
		size_t nc = gf_grow_cap(g->cap, g->cap + 1, 1, sizeof(*g->v));
		size_t ns = gf_grow_cap(g->nslot, g->nslot + 1, 1, sizeof(*g->slot));
		struct gf_k8s_podgroup *v = realloc(g->v, nc * sizeof(*v));
		if (!v)
			return GF_NOMEM;
		g->v = v;
		uint32_t *slot = calloc(ns, sizeof(*slot));
		if (!slot)
			return GF_NOMEM; /* v grew, nothing else changed */
		free(g->slot);
		g->slot = slot;
		g->nslot = ns;
		g->cap = nc;
		reindex(g);
		i = find(g, pg->api, pg->ns, pg->name);
	}
	g->v[g->n] = *pg;
	g->slot[i] = (uint32_t)++g->n;
	return GF_OK;
}

static void remove_key(gf_gangs *g, enum gf_k8s_gang_api api, const char *ns, const char *name)
{
	size_t i = find(g, api, ns, name);
	if (!g->slot[i])
		return;
	size_t k = g->slot[i] - 1;
	memmove(g->v + k, g->v + k + 1, (g->n - k - 1) * sizeof(*g->v)); /* keeps first-seen order */
	g->n--;
	reindex(g);
}

void gf_gangs_delete(gf_gangs *g, const char *ns, const char *name)
{
	remove_key(g, GF_GANG_COSCHEDULING, ns, name);
}

void gf_gangs_unset(gf_gangs *g, const struct gf_k8s_podgroup *pg)
{
	remove_key(g, pg->api, pg->ns, pg->name);
}

size_t gf_gangs_count(const gf_gangs *g)
{
	return g->n;
}

const struct gf_k8s_podgroup *gf_gangs_at(const gf_gangs *g, size_t i)
{
	return i < g->n ? &g->v[i] : NULL;
}

size_t gf_gangs_count_api(const gf_gangs *g, enum gf_k8s_gang_api api)
{
	size_t n = 0;
	for (size_t k = 0; k < g->n; k++)
		n += g->v[k].api == api;
	return n;
}

const struct gf_k8s_podgroup *gf_gangs_get(const gf_gangs *g, enum gf_k8s_gang_api api, const char *ns,
					  const char *name)
{
	size_t i = find(g, api, ns, name);
	return g->slot[i] ? &g->v[g->slot[i] - 1] : NULL;
}

bool gf_gangs_of_pod(const gf_gangs *g, const struct gf_k8s_pod *p, struct gf_gang_ref *out)
{
	memset(out, 0, sizeof(*out));
	const char *name = p->sched_group[0] ? p->sched_group : p->pod_group;
	if (!name[0])
		return false;
	out->api = p->sched_group[0] ? GF_GANG_WORKLOAD : GF_GANG_COSCHEDULING;
	memcpy(out->ns, p->ns, sizeof(out->ns));
	snprintf(out->name, sizeof(out->name), "%s", name);
	const struct gf_k8s_podgroup *e = gf_gangs_get(g, out->api, p->ns, name);
	if (e) {
		out->known = true;
		out->min_member = e->min_member;
		out->timeout_s = e->timeout_s;
	}
	return true;
}

static const char *api_name(enum gf_k8s_gang_api api)
{
	return api == GF_GANG_WORKLOAD ? "workload" : "coscheduling";
}

/* A Prometheus label value: backslash, double quote and newline escaped. */
static void label_value(struct gf_obuf *o, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			gf_obuf_printf(o, "\\%c", *s);
		else if (*s == '\n')
			gf_obuf_puts(o, "\\n");
		else
			gf_obuf_append(o, s, 1);
	}
}

void gf_gangs_render(const gf_gangs *g, struct gf_obuf *o, size_t max_series)
{
	gf_obuf_printf(o, "# HELP gpufleet_gangs Gangs known, by API (coscheduling PodGroups, Workload API PodGroups).\n"
			  "# TYPE gpufleet_gangs gauge\n");
	for (int api = GF_GANG_COSCHEDULING; api <= GF_GANG_WORKLOAD; api++)
		gf_obuf_printf(o, "gpufleet_gangs{api=\"%s\"} %zu\n", api_name((enum gf_k8s_gang_api)api),
			       gf_gangs_count_api(g, (enum gf_k8s_gang_api)api));
	gf_obuf_printf(o, "# HELP gpufleet_gang_min_member A gang's minimum member count (basic Workload API groups: 1; "
			  "0: not given). At most %zu groups listed.\n# TYPE gpufleet_gang_min_member gauge\n",
		       max_series);
	for (size_t k = 0; k < g->n && k < max_series; k++) {
		const struct gf_k8s_podgroup *e = &g->v[k];
		gf_obuf_printf(o, "gpufleet_gang_min_member{api=\"%s\",namespace=\"", api_name(e->api));
		label_value(o, e->ns);
		gf_obuf_puts(o, "\",name=\"");
		label_value(o, e->name);
		gf_obuf_puts(o, "\",workload=\"");
		label_value(o, e->workload);
		gf_obuf_printf(o, "\"} %d\n", (int)e->min_member);
	}
}
