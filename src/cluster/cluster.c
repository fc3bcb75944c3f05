/*
 * cluster/cluster.c - node and GPU allocation state.
 *
 * Layout: one array of struct gf_node_spec (fixed) and one of struct gf_node
 * (live), indexed alike.  A node's derived fields are recomputed from its
 * gpu_free[] after each change: O(ngpus) <= 16 steps, so bind and unbind are
 * O(1) in the cluster size.  Cluster totals are kept incrementally.
 *
 * Change journal: a ring of the last GF_CLUSTER_JOURNAL changed node indices,
 * slot k % GF_CLUSTER_JOURNAL for change number k, so a reader that keeps
 * something per node (the scheduler's node classes) catches up on the few
 * nodes that changed instead of rereading all of them; one that fell further
 * behind, or that a reset passed, rereads everything.
 *
 * Debug builds (GF_DEBUG_INVARIANTS) re-check the changed node after every
 * bind and unbind and abort with the broken invariant named: a wrong engine
 * must fail loudly in the tests, not skew a figure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/cluster.h"

struct gf_cluster {
	size_t n;
	struct gf_node_spec *spec;
	struct gf_node *node;
	int64_t gpu_capacity;
	int64_t gpu_used;
	int64_t ngpus;
	uint64_t changes;	/* binds and unbinds so far */
	uint64_t jseq;		/* journal entries so far: changes plus resets */
	uint64_t reset_at;	/* jseq of the last reset (a change of every node) */
	uint32_t journal[GF_CLUSTER_JOURNAL];	/* node of entry k at k % GF_CLUSTER_JOURNAL */
};

/* Record that node i changed: the next journal entry names it. */
static void journal_note(gf_cluster *c, size_t i)
{
	c->changes++;
	c->jseq++;
	c->journal[c->jseq % GF_CLUSTER_JOURNAL] = (uint32_t)i;
}

int gf_pod_tag(const struct gf_pod_spec *p)
{
	if (p->gpu_count == 0)
		return -1;
	if (p->gpu_milli < GF_MILLI_PER_GPU)
		return GF_TAG_SHARE;
	return p->gpu_count;
}

/* The fields of a node that follow from its GPUs' free shares and its tags. */
struct derived {
	int32_t gpu_free_total;
	uint16_t max_free;
	uint8_t nfull;
	uint8_t ntags;
};

static struct derived derive(const struct gf_node *nd)
{
	struct derived d = { 0, 0, 0, 0 };

	for (int g = 0; g < nd->ngpus; g++) {
		d.gpu_free_total += nd->gpu_free[g];
		if (nd->gpu_free[g] > d.max_free)
			d.max_free = nd->gpu_free[g];
		d.nfull += nd->gpu_free[g] == GF_MILLI_PER_GPU;
	}
	for (int t = 0; t < GF_TAG_COUNT; t++)
		d.ntags += nd->tag_pods[t] > 0;
	return d;
}

static void node_derive(struct gf_node *nd)
{
	struct derived d = derive(nd);

	nd->gpu_free_total = d.gpu_free_total;
	nd->max_free = d.max_free;
	nd->nfull = d.nfull;
	nd->ntags = d.ntags;
}

static void node_reset(struct gf_node *nd, const struct gf_node_spec *s)
{
	uint32_t version = nd->version;

	memset(nd, 0, sizeof(*nd));
	nd->cpu_free = s->cpu_milli;
	nd->mem_free = s->mem_mib;
	nd->ngpus = (uint8_t)s->ngpus;
	nd->model = (int16_t)s->model;
	for (int g = 0; g < s->ngpus; g++)
		nd->gpu_free[g] = GF_MILLI_PER_GPU;
	nd->version = version + 1;
	node_derive(nd);
}

gf_err gf_cluster_create(const struct gf_node_spec *specs, size_t n, gf_cluster **out)
{
	gf_cluster *c;

	if (n == 0)
		return GF_INVAL;
	for (size_t i = 0; i < n; i++) {
		if (specs[i].ngpus < 0 || specs[i].ngpus > GF_MAX_GPUS ||
		    specs[i].cpu_milli < 0 || specs[i].mem_mib < 0 ||
		    specs[i].model < -1 || specs[i].model >= GF_MAX_MODELS)
			return GF_INVAL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return GF_NOMEM;
	c->n = n;
	c->spec = malloc(n * sizeof(*c->spec));
	c->node = calloc(n, sizeof(*c->node));
	if (!c->spec || !c->node) {
		gf_cluster_destroy(c);
		return GF_NOMEM;
	}
	memcpy(c->spec, specs, n * sizeof(*specs));
	for (size_t i = 0; i < n; i++)
		c->ngpus += specs[i].ngpus;
	c->gpu_capacity = c->ngpus * GF_MILLI_PER_GPU;
	gf_cluster_reset(c);
	*out = c;
	return GF_OK;
}

void gf_cluster_destroy(gf_cluster *c)
{
	if (!c)
		return;
	free(c->spec);
	free(c->node);
	free(c);
}

void gf_cluster_reset(gf_cluster *c)
{
	for (size_t i = 0; i < c->n; i++)
		node_reset(&c->node[i], &c->spec[i]);
	c->gpu_used = 0;
	c->reset_at = ++c->jseq;
}

size_t gf_cluster_nnodes(const gf_cluster *c)
{
	return c->n;
}

const struct gf_node_spec *gf_cluster_spec(const gf_cluster *c, size_t i)
{
	return &c->spec[i];
}

const struct gf_node *gf_cluster_node(const gf_cluster *c, size_t i)
{
	return &c->node[i];
}

int64_t gf_cluster_gpu_capacity(const gf_cluster *c)
{
	return c->gpu_capacity;
}

int64_t gf_cluster_gpu_used(const gf_cluster *c)
{
	return c->gpu_used;
}

int64_t gf_cluster_ngpus(const gf_cluster *c)
{
	return c->ngpus;
}

uint64_t gf_cluster_changes(const gf_cluster *c)
{
	return c->changes;
}

uint64_t gf_cluster_journal_seq(const gf_cluster *c)
{
	return c->jseq;
}

size_t gf_cluster_changed_node(const gf_cluster *c, uint64_t k)
{
	if (k <= c->reset_at || k > c->jseq || c->jseq - k >= GF_CLUSTER_JOURNAL)
		return SIZE_MAX;
	return c->journal[k % GF_CLUSTER_JOURNAL];
}

bool gf_cluster_fits(const gf_cluster *c, const struct gf_catalog *cat, size_t i,
		     const struct gf_pod_spec *p)
{
	const struct gf_node *nd = &c->node[i];

	if (nd->cpu_free < p->cpu_milli || nd->mem_free < p->mem_mib)
		return false;
	if (p->gpu_count == 0)
		return true;
	if (nd->ngpus < p->gpu_count || !gf_catalog_allows(cat, p->spec, nd->model))
		return false;
	if (p->gpu_milli == GF_MILLI_PER_GPU)
		return nd->nfull >= p->gpu_count;
	if (p->gpu_count == 1)
		return nd->max_free >= p->gpu_milli;
	int fitting = 0;

	for (int g = 0; g < nd->ngpus; g++)
		fitting += nd->gpu_free[g] >= p->gpu_milli;
	return fitting >= p->gpu_count;
}

static bool gpus_valid(const struct gf_node *nd, const struct gf_pod_spec *p, const uint8_t *gpus)
{
	uint32_t seen = 0;

	for (int k = 0; k < p->gpu_count; k++) {
		if (gpus[k] >= nd->ngpus || (seen >> gpus[k]) & 1)
			return false;
		seen |= 1u << gpus[k];
	}
	return true;
}

static gf_err check_node(const gf_cluster *c, size_t i, char *why, size_t whylen);

gf_err gf_cluster_copy_node(gf_cluster *dst, const gf_cluster *src, size_t i)
{
	uint32_t version;

	if (i >= dst->n || i >= src->n || memcmp(&dst->spec[i], &src->spec[i], sizeof(dst->spec[i])))
		return GF_RANGE;
	version = dst->node[i].version > src->node[i].version ? dst->node[i].version
							     : src->node[i].version;
	dst->gpu_used += (int64_t)dst->node[i].gpu_free_total - src->node[i].gpu_free_total;
	dst->node[i] = src->node[i];
	dst->node[i].version = version + 1;
	journal_note(dst, i);
	return GF_OK;
}

#ifdef GF_DEBUG_INVARIANTS
/* Debug builds: the node just changed must satisfy every invariant. */
static void assert_node(const gf_cluster *c, size_t i)
{
	char why[256];

	if (check_node(c, i, why, sizeof(why))) {
		fprintf(stderr, "gf_cluster: invariant broken: %s\n", why);
		abort();
	}
}
#else
#define assert_node(c, i) ((void)0)
#endif

gf_err gf_cluster_bind(gf_cluster *c, size_t i, const struct gf_pod_spec *p, const uint8_t *gpus)
{
	struct gf_node *nd;
	int tag = gf_pod_tag(p);

	if (i >= c->n)
		return GF_RANGE;
	nd = &c->node[i];
	if (nd->cpu_free < p->cpu_milli || nd->mem_free < p->mem_mib)
		return GF_RANGE;
	if (p->gpu_count > 0) {
		if (!gpus_valid(nd, p, gpus))
			return GF_RANGE;
		for (int k = 0; k < p->gpu_count; k++)
			if (nd->gpu_free[gpus[k]] < p->gpu_milli)
				return GF_RANGE;
		for (int k = 0; k < p->gpu_count; k++)
			nd->gpu_free[gpus[k]] -= (uint16_t)p->gpu_milli;
		nd->tag_pods[tag]++;
		c->gpu_used += gf_pod_gpu_request(p);
	}
	nd->cpu_free -= p->cpu_milli;
	nd->mem_free -= p->mem_mib;
	nd->npods++;
	nd->version++;
	journal_note(c, i);
	node_derive(nd);
	assert_node(c, i);
	return GF_OK;
}

gf_err gf_cluster_unbind(gf_cluster *c, size_t i, const struct gf_pod_spec *p, const uint8_t *gpus)
{
	struct gf_node *nd;
	const struct gf_node_spec *s;
	int tag = gf_pod_tag(p);

	if (i >= c->n)
		return GF_RANGE;
	nd = &c->node[i];
	s = &c->spec[i];
	if (nd->npods == 0 || nd->cpu_free + p->cpu_milli > s->cpu_milli ||
	    nd->mem_free + p->mem_mib > s->mem_mib)
		return GF_RANGE;
	if (p->gpu_count > 0) {
		if (!gpus_valid(nd, p, gpus) || nd->tag_pods[tag] == 0)
			return GF_RANGE;
		for (int k = 0; k < p->gpu_count; k++)
			if (nd->gpu_free[gpus[k]] + p->gpu_milli > GF_MILLI_PER_GPU)
				return GF_RANGE;
		for (int k = 0; k < p->gpu_count; k++)
			nd->gpu_free[gpus[k]] += (uint16_t)p->gpu_milli;
		nd->tag_pods[tag]--;
		c->gpu_used -= gf_pod_gpu_request(p);
	}
	nd->cpu_free += p->cpu_milli;
	nd->mem_free += p->mem_mib;
	nd->npods--;
	nd->version++;
	journal_note(c, i);
	node_derive(nd);
	assert_node(c, i);
	return GF_OK;
}

static gf_err check_node(const gf_cluster *c, size_t i, char *why, size_t whylen)
{
	const struct gf_node *nd = &c->node[i];
	const struct gf_node_spec *s = &c->spec[i];
	struct derived d;

	if (nd->cpu_free < 0 || nd->cpu_free > s->cpu_milli) {
		snprintf(why, whylen, "node %s: cpu free %lld outside [0, %lld]", s->name,
			 (long long)nd->cpu_free, (long long)s->cpu_milli);
		return GF_STATE;
	}
	if (nd->mem_free < 0 || nd->mem_free > s->mem_mib) {
		snprintf(why, whylen, "node %s: memory free %lld outside [0, %lld]", s->name,
			 (long long)nd->mem_free, (long long)s->mem_mib);
		return GF_STATE;
	}
	for (int g = 0; g < nd->ngpus; g++) {
		if (nd->gpu_free[g] > GF_MILLI_PER_GPU) {
			snprintf(why, whylen, "node %s: GPU %d free %u above 1000", s->name, g,
				 nd->gpu_free[g]);
			return GF_STATE;
		}
	}
	d = derive(nd);
	if (d.gpu_free_total != nd->gpu_free_total || d.nfull != nd->nfull ||
	    d.max_free != nd->max_free || d.ntags != nd->ntags) {
		snprintf(why, whylen, "node %s: derived GPU fields out of date", s->name);
		return GF_STATE;
	}
	return GF_OK;
}

gf_err gf_cluster_check(const gf_cluster *c, char *why, size_t whylen)
{
	int64_t free_total = 0;

	for (size_t i = 0; i < c->n; i++) {
		gf_err err = check_node(c, i, why, whylen);

		if (err)
			return err;
		free_total += c->node[i].gpu_free_total;
	}
	if (c->gpu_capacity - free_total != c->gpu_used) {
		snprintf(why, whylen, "cluster: GPU used %lld, nodes add up to %lld",
			 (long long)c->gpu_used, (long long)(c->gpu_capacity - free_total));
		return GF_STATE;
	}
	return GF_OK;
}
