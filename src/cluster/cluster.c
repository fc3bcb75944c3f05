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
 * Node verbs: add appends (the arrays grow by doubling; the journal records
 * a reset, since readers' per-node arrays must grow); remove leaves a
 * tombstone (zero capacity, GF_NODE_GONE) so indices never move; update
 * refuses a description the bound pods would not fit (no over-commitment to
 * track: the caller drains first); cordon and notice are flag bits in the
 * node's state, so the planner's copies (gf_cluster_copy_node) and the
 * scheduler's node classes (the flags are in the class key) follow them.
 * Each is one journal entry and a version bump of its node.
 *
 * Debug builds (GF_DEBUG_INVARIANTS) re-check the changed node after every
 * bind and unbind and abort with the broken invariant named: a wrong engine
 * must fail loudly in the tests, not skew a figure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/cluster.h"
#include "core/grow.h"

struct gf_cluster {
	size_t n, cap;
	struct gf_node_spec *spec;
	struct gf_node *node;
	int64_t *leave_at;	/* per node: its notice's time, INT64_MAX: none */
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
	uint8_t flags = nd->flags;

	memset(nd, 0, sizeof(*nd));
	nd->flags = flags;
	nd->cpu_free = s->cpu_milli;
	nd->mem_free = s->mem_mib;
	nd->ngpus = (uint8_t)s->ngpus;
	nd->model = (int16_t)s->model;
	for (int g = 0; g < s->ngpus; g++)
		nd->gpu_free[g] = GF_MILLI_PER_GPU;
	nd->version = version + 1;
	node_derive(nd);
}

static bool spec_valid(const struct gf_node_spec *s)
{
	return s->ngpus >= 0 && s->ngpus <= GF_MAX_GPUS && s->cpu_milli >= 0 && s->mem_mib >= 0 &&
	       s->model >= -1 && s->model < GF_MAX_MODELS;
}

gf_err gf_cluster_create(const struct gf_node_spec *specs, size_t n, gf_cluster **out)
{
	gf_cluster *c;

	if (n == 0)
		return GF_INVAL;
	for (size_t i = 0; i < n; i++)
		if (!spec_valid(&specs[i]))
			return GF_INVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return GF_NOMEM;
	c->n = c->cap = n;
	c->spec = malloc(n * sizeof(*c->spec));
	c->node = calloc(n, sizeof(*c->node));
	c->leave_at = malloc(n * sizeof(*c->leave_at));
	if (!c->spec || !c->node || !c->leave_at) {
		gf_cluster_destroy(c);
		return GF_NOMEM;
	}
	memcpy(c->spec, specs, n * sizeof(*specs));
	for (size_t i = 0; i < n; i++)
		c->leave_at[i] = INT64_MAX;
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
	free(c->leave_at);
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

	if (nd->flags)
		return false;
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
	if ((nd->flags & GF_NODE_GONE) || nd->cpu_free < p->cpu_milli || nd->mem_free < p->mem_mib)
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

/* ---- node verbs ---- */

gf_err gf_cluster_reserve(gf_cluster *c, size_t n)
{
	if (n <= c->cap)
		return GF_OK;
	size_t cap = gf_grow_cap(c->cap, n, n, sizeof(struct gf_node) + sizeof(struct gf_node_spec));

	if (!cap)
		return GF_NOMEM;
	struct gf_node_spec *sp = realloc(c->spec, cap * sizeof(*sp));

	if (!sp)
		return GF_NOMEM;
	c->spec = sp;
	struct gf_node *nd = realloc(c->node, cap * sizeof(*nd));

	if (!nd)
		return GF_NOMEM;
	c->node = nd;
	int64_t *la = realloc(c->leave_at, cap * sizeof(*la));

	if (!la)
		return GF_NOMEM;
	c->leave_at = la;
	c->cap = cap;
	return GF_OK;
}

gf_err gf_cluster_add_node(gf_cluster *c, const struct gf_node_spec *spec, size_t *index)
{
	gf_err err;

	if (!spec_valid(spec))
		return GF_INVAL;
	if (c->n >= UINT32_MAX - 1)
		return GF_RANGE;
	if ((err = gf_cluster_reserve(c, c->n + 1)))
		return err;
	size_t i = c->n++;

	c->spec[i] = *spec;
	c->leave_at[i] = INT64_MAX;
	memset(&c->node[i], 0, sizeof(c->node[i]));
	node_reset(&c->node[i], spec);
	c->ngpus += spec->ngpus;
	c->gpu_capacity += (int64_t)spec->ngpus * GF_MILLI_PER_GPU;
	c->changes++;
	c->reset_at = ++c->jseq;	/* readers' per-node arrays must grow */
	*index = i;
	return GF_OK;
}

/* Replace node i's description by s and its free amounts by what s leaves beside what is bound. */
static void respec(gf_cluster *c, size_t i, const struct gf_node_spec *s)
{
	struct gf_node *nd = &c->node[i];
	const struct gf_node_spec *o = &c->spec[i];

	nd->cpu_free += s->cpu_milli - o->cpu_milli;
	nd->mem_free += s->mem_mib - o->mem_mib;
	for (int g = o->ngpus; g < s->ngpus; g++)
		nd->gpu_free[g] = GF_MILLI_PER_GPU;
	for (int g = s->ngpus; g < GF_MAX_GPUS; g++)
		nd->gpu_free[g] = 0;
	nd->ngpus = (uint8_t)s->ngpus;
	nd->model = (int16_t)s->model;
	c->ngpus += s->ngpus - o->ngpus;
	c->gpu_capacity += (int64_t)(s->ngpus - o->ngpus) * GF_MILLI_PER_GPU;
	c->spec[i] = *s;
	nd->version++;
	journal_note(c, i);
	node_derive(nd);
}

gf_err gf_cluster_remove_node(gf_cluster *c, size_t i, char *why, size_t whylen)
{
	struct gf_node_spec tomb;

	if (i >= c->n)
		return GF_RANGE;
	const struct gf_node *nd = &c->node[i];

	if (nd->flags & GF_NODE_GONE)
		return GF_OK;
	if (nd->npods) {
		snprintf(why, whylen, "node %s: %u pods bound (%lld milli-CPU, %lld MiB, %d milli-GPU)",
			 c->spec[i].name, nd->npods, (long long)(c->spec[i].cpu_milli - nd->cpu_free),
			 (long long)(c->spec[i].mem_mib - nd->mem_free),
			 nd->ngpus * GF_MILLI_PER_GPU - nd->gpu_free_total);
		return GF_STATE;
	}
	memset(&tomb, 0, sizeof(tomb));
	memcpy(tomb.name, c->spec[i].name, sizeof(tomb.name));
	tomb.model = -1;
	respec(c, i, &tomb);
	c->node[i].flags = GF_NODE_GONE;
	c->leave_at[i] = INT64_MAX;
	return GF_OK;
}

gf_err gf_cluster_update_node(gf_cluster *c, size_t i, const struct gf_node_spec *spec, char *why,
			      size_t whylen)
{
	if (i >= c->n || (c->node[i].flags & GF_NODE_GONE))
		return GF_RANGE;
	if (!spec_valid(spec))
		return GF_INVAL;
	const struct gf_node *nd = &c->node[i];
	const struct gf_node_spec *o = &c->spec[i];
	int64_t cpu_used = o->cpu_milli - nd->cpu_free, mem_used = o->mem_mib - nd->mem_free;
	bool gpu_pods = false;
	int top = -1;

	for (int t = 0; t < GF_TAG_COUNT; t++)
		gpu_pods |= nd->tag_pods[t] > 0;
	for (int g = 0; g < nd->ngpus; g++)
		if (nd->gpu_free[g] < GF_MILLI_PER_GPU)
			top = g;
	if (cpu_used > spec->cpu_milli || mem_used > spec->mem_mib) {
		snprintf(why, whylen, "node %s: %lld milli-CPU and %lld MiB bound, above the new capacity",
			 o->name, (long long)cpu_used, (long long)mem_used);
		return GF_STATE;
	}
	if (top >= spec->ngpus || (gpu_pods && spec->model != o->model)) {
		snprintf(why, whylen, "node %s: GPU %d in use %s", o->name, top,
			 top >= spec->ngpus ? "beyond the new GPU count" : "under the old GPU model");
		return GF_STATE;
	}
	respec(c, i, spec);
	assert_node(c, i);
	return GF_OK;
}

static gf_err set_flag(gf_cluster *c, size_t i, uint8_t bit, bool on)
{
	struct gf_node *nd;

	if (i >= c->n || (c->node[i].flags & GF_NODE_GONE))
		return GF_RANGE;
	nd = &c->node[i];
	if (!!(nd->flags & bit) == on)
		return GF_OK;
	nd->flags = on ? (uint8_t)(nd->flags | bit) : (uint8_t)(nd->flags & ~bit);
	nd->version++;
	journal_note(c, i);
	return GF_OK;
}

gf_err gf_cluster_cordon(gf_cluster *c, size_t i, bool on)
{
	return set_flag(c, i, GF_NODE_CORDONED, on);
}

gf_err gf_cluster_notice(gf_cluster *c, size_t i, int64_t t)
{
	gf_err err = set_flag(c, i, GF_NODE_LEAVING, true);

	if (!err)
		c->leave_at[i] = t;
	return err;
}

int64_t gf_cluster_leave_at(const gf_cluster *c, size_t i)
{
	return i < c->n ? c->leave_at[i] : INT64_MAX;
}

gf_err gf_cluster_copy_spec(gf_cluster *dst, const gf_cluster *src, size_t i)
{
	if (i >= dst->n || i >= src->n)
		return GF_RANGE;
	if (memcmp(&dst->spec[i], &src->spec[i], sizeof(dst->spec[i]))) {
		const struct gf_node_spec *o = &dst->spec[i], *s = &src->spec[i];

		int64_t delta = (int64_t)(s->ngpus - o->ngpus) * GF_MILLI_PER_GPU;

		dst->ngpus += s->ngpus - o->ngpus;
		dst->gpu_capacity += delta;
		dst->gpu_used += delta;	/* copy_node's sum assumes the old capacity */
		dst->spec[i] = *s;
	}
	dst->leave_at[i] = src->leave_at[i];
	return gf_cluster_copy_node(dst, src, i);
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
