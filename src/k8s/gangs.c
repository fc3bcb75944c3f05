/*
 * k8s/gangs.c - the PodGroup store (gangs.h).
 *
 * Entries live in one array; an open-addressing table (linear probing,
 * FNV-1a of "namespace\0name", at most half full) maps keys to indices.
 * A deletion moves the last entry into the hole and rebuilds the table:
 * O(groups), fine for the rare deletions of objects that live for a job.
 */
#include "k8s/gangs.h"

#include <stdlib.h>
#include <string.h>

struct gf_gangs {
	struct gf_k8s_podgroup *v;
	size_t n, cap;
	uint32_t *slot;		/* index + 1; 0 = empty */
	size_t nslot;		/* a power of two, >= 2 * cap */
};

static uint64_t key_hash(const char *ns, const char *name)
{
	uint64_t h = 1469598103934665603ull;
	for (const char *s = ns; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	h = (h ^ 0xff) * 1099511628211ull; /* the separator: a byte no name has */
	for (const char *s = name; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* The slot holding ns/name, or the empty slot where it would go. */
static size_t find(const gf_gangs *g, const char *ns, const char *name)
{
	size_t mask = g->nslot - 1, i = (size_t)key_hash(ns, name) & mask;
	while (g->slot[i]) {
		const struct gf_k8s_podgroup *e = &g->v[g->slot[i] - 1];
		if (!strcmp(e->ns, ns) && !strcmp(e->name, name))
			return i;
		i = (i + 1) & mask;
	}
	return i;
}

static void reindex(gf_gangs *g)
{
	memset(g->slot, 0, g->nslot * sizeof(*g->slot));
	for (size_t k = 0; k < g->n; k++)
		g->slot[find(g, g->v[k].ns, g->v[k].name)] = (uint32_t)k + 1;
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
	size_t i = find(g, pg->ns, pg->name);
	if (g->slot[i]) {
		g->v[g->slot[i] - 1] = *pg;
		return GF_OK;
	}
	if (g->n == g->cap) {
		if (g->cap >= UINT32_MAX / 4)
			return GF_NOMEM;
		size_t nc = g->cap * 2, ns = g->nslot * 2;
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
		i = find(g, pg->ns, pg->name);
	}
	g->v[g->n] = *pg;
	g->slot[i] = (uint32_t)++g->n;
	return GF_OK;
}

void gf_gangs_delete(gf_gangs *g, const char *ns, const char *name)
{
	size_t i = find(g, ns, name);
	if (!g->slot[i])
		return;
	size_t k = g->slot[i] - 1;
	g->v[k] = g->v[--g->n];
	reindex(g);
}

size_t gf_gangs_count(const gf_gangs *g)
{
	return g->n;
}

bool gf_gangs_of_pod(const gf_gangs *g, const struct gf_k8s_pod *p, struct gf_gang_ref *out)
{
	memset(out, 0, sizeof(*out));
	if (!p->pod_group[0])
		return false;
	memcpy(out->ns, p->ns, sizeof(out->ns));
	memcpy(out->name, p->pod_group, sizeof(out->name));
	size_t i = find(g, p->ns, p->pod_group);
	if (g->slot[i]) {
		const struct gf_k8s_podgroup *e = &g->v[g->slot[i] - 1];
		out->known = true;
		out->min_member = e->min_member;
		out->timeout_s = e->timeout_s;
	}
	return true;
}
