/*
 * policy/classes.c - node classes (feature NODE_CLASSES; classes.h).
 *
 * Nodes in the same state as a policy sees it - the class key: free CPU and
 * memory, the free share of each GPU in index order, the GPU pods per tag,
 * model, GPU count, and the CPU and memory capacity - get the same filter
 * result, score and GPU hint from every policy whose score is a pure
 * function of (node state, pod shape) (ops->cacheable); the node's flags
 * (cordon, notice, removed) are in the key too, since the filter reads them.
 * For those policies with the fixed priority tie-break, a decision takes the
 * best score over classes, ties to the lowest (priority, index) member: each
 * class keeps its members in a min-heap by that rank, so its candidate is
 * the heap's top (under a mask, the lowest-ranked allowed member).  That is
 * exactly the node the per-node loop picks: the best score, then the lowest
 * priority, then the lowest index.
 *   Incremental: the classes follow the cluster's change journal
 *   (gf_cluster_changed_node); a changed node's key is recomputed and, if it
 *   differs, the node leaves its class (O(log members): a heap removal at
 *   the position node_pos remembers) and joins the class of its new key (one
 *   hash lookup and a heap insertion; an emptied class is dropped and its id
 *   reused with a new generation, so whatever was cached for the old one
 *   dies with it).  Every join and leave moves the class to the end of the
 *   change list (classes ordered by their latest change).  A journal that no
 *   longer reaches back, a reset, or new priorities rebuild all classes, O(n).
 *   Shape views (unmasked decisions, with SCORE_CACHE): each pod shape keeps
 *   a lazy max-heap of the classes it fits, keyed (score, -first member's
 *   rank), and the number of nodes in them.  Its next decision walks the
 *   change list back from the newest to the first class changed before its
 *   last one, applying each class once however often it changed (fits and
 *   score are fixed for a class generation and remembered in the shape's
 *   row), pushes a class whose generation or first member changed, and pops
 *   stale tops; it rebuilds from the live classes when its heap is mostly
 *   stale.  Cost per decision: the distinct classes changed since the shape
 *   last decided (at most the classes) times log of the heap; amortised, at
 *   most two per placement for each shape in use, whatever the number of
 *   nodes, and fewer where placements land in the same classes.
 *   Masked decisions, or without the score cache, walk the live classes:
 *   filter and score each once, plus a bit test per member of each feasible
 *   class under a mask.  O(live classes).
 *   Left on the per-node loop: Random (it draws among feasible nodes), the
 *   random tie-break (its draws depend on node order), and pods that serve a
 *   model (their tie-break reads each node's served-model list).
 *   Where every node is in a state of its own the classes are the nodes; the
 *   shape views still spare the walk over them (docs/simulate.md, measured).
 *
 * Ownership: a gf_classes owns cls[] (each class its mem[]), the hash, the
 * change list, and per shape the class row and the view; the shape indices are
 * policy/sched.c's.  Node ids are the cluster's indices, class ids < n.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "core/hash.h"
#include "policy/classes.h"

/*
 * A class's entry in a shape's row: its score (valid while version equals the
 * class's gen) and the shape view's bookkeeping, side by side so that
 * bringing a view up to date touches one cache line per class.
 */
struct class_entry {
	uint32_t version;
	int16_t hint;
	bool fits;		/* the filter's answer, valid while fgen is the class's gen */
	uint8_t pad;
	int64_t score;
	uint32_t count;		/* nodes the view counts as feasible */
	uint32_t pgen, prank;	/* gen and first member's rank at the view's last push */
	uint32_t fgen;
};

/* A node's state as a cacheable policy sees it; no implicit padding, so memcmp works. */
struct class_key {
	int64_t cpu_free, mem_free;
	int64_t cpu_cap, mem_cap;
	uint16_t gpu_free[GF_MAX_GPUS];
	uint16_t tag_pods[GF_TAG_COUNT];
	int16_t model;
	uint8_t ngpus;
	uint8_t flags;	/* a cordon or notice: the filter refuses the node */
	uint8_t pad[2];
};
_Static_assert(sizeof(struct class_key) == 104, "class_key has implicit padding");

/* A class of nodes in the same state.  Owned by gf_classes; mem[] by the class. */
struct nclass {
	/* what a decision reads first, in one cache line */
	uint32_t gen;		/* bumped whenever the id is (re)used; score entries carry it */
	uint32_t nmem;
	uint32_t first;		/* mem[0] when nmem > 0 */
	uint32_t first_rank;	/* its rank */
	uint32_t live;		/* position in live[] */
	uint32_t cap;
	uint32_t *mem;		/* member nodes, a min-heap by rank (node_pos: where) */
	uint64_t hash;
	struct class_key key;
};

#define NO_CLASS UINT32_MAX

/* A feasible class in a shape's heap: valid while gen and first member's rank still hold. */
struct view_entry {
	int64_t score;
	uint32_t rank;		/* rank of the class's first member when pushed */
	uint32_t id, gen;
};

/*
 * One pod shape's view of the classes: the feasible ones in a lazy max-heap
 * by (score, then lowest first-member rank), and how many nodes they hold.
 * Brought up to date from the change list at the shape's next decision.
 */
struct shape_view {
	uint64_t cursor;	/* class changes applied: the change count when it last caught up */
	uint64_t epoch;		/* classes_rebuild count it was built under */
	uint64_t nfeasible;	/* nodes in feasible classes */
	struct view_entry *heap;
	size_t nheap, heap_cap;
};

struct gf_classes {
	const struct gf_policy_ops *ops;
	const struct gf_policy_env *env;
	void *state;
	size_t n;

	/* node classes (see the design comment); at most n live, so ids < n */
	bool classes_valid;	/* built, and followed the journal up to seen */
	uint64_t seen;
	uint32_t *rank;		/* node -> position in (priority, index) order */
	uint32_t *byrank;	/* position -> node */
	uint32_t *node_class;	/* node -> class id */
	uint32_t *node_pos;	/* node -> its position in its class's mem[] */
	struct nclass *cls;	/* n entries */
	uint32_t nused;		/* ids handed out so far (high-water mark) */
	uint32_t *free_ids;
	uint32_t nfree;
	uint32_t *live;
	uint32_t nlive;
	uint32_t *cslots;	/* class hash: id + 1, 0 = empty; linear probing */
	size_t ncslots;
	uint32_t *fcand;	/* per decision: feasible classes' first allowed member */
	uint32_t *fcls;
	/* class changes: every class id whose members changed since the last
	 * rebuild, in a list ordered by its latest change (stamp), newest last */
	uint64_t *cstamp;	/* id -> its latest change's number, 0 = not in the list */
	uint32_t *cprev, *cnext;
	uint32_t chead, ctail;
	uint64_t nclog;		/* changes so far (the last stamp) */
	uint64_t epoch;		/* classes_rebuild calls */

	/* per pod shape (sched.c's index), shape_cap entries */
	struct class_entry **crows;	/* classes' entries, by class id */
	uint32_t *crow_len;
	struct shape_view **views;	/* created on the shape's first unmasked decision */
	size_t shape_cap;

	uint64_t computed, cached;
};

static void view_free(struct shape_view *v)
{
	if (!v)
		return;
	free(v->heap);
	free(v);
}

bool gf_classes_usable(const struct gf_policy_ops *ops, const struct gf_policy_env *env)
{
	return env->features.on[GF_FEAT_NODE_CLASSES] && ops->score && !ops->choose && ops->cacheable &&
	       ops->tie_break == GF_TIE_PRIORITY;
}

gf_err gf_classes_create(const struct gf_policy_ops *ops, const struct gf_policy_env *env, void *state,
			 struct gf_classes **out)
{
	struct gf_classes *s = calloc(1, sizeof(*s));

	if (!s)
		return GF_NOMEM;
	s->ops = ops;
	s->env = env;
	s->state = state;
	s->n = gf_cluster_nnodes(env->cluster);
	s->ncslots = gf_grow_cap(16, 2 * s->n + 2, 16, sizeof(*s->cslots));
	s->rank = malloc(s->n * sizeof(*s->rank));
	s->byrank = malloc(s->n * sizeof(*s->byrank));
	s->node_class = malloc(s->n * sizeof(*s->node_class));
	s->node_pos = malloc(s->n * sizeof(*s->node_pos));
	s->cls = calloc(s->n, sizeof(*s->cls));
	s->free_ids = malloc(s->n * sizeof(*s->free_ids));
	s->live = malloc(s->n * sizeof(*s->live));
	s->cslots = s->ncslots ? calloc(s->ncslots, sizeof(*s->cslots)) : NULL;
	s->fcand = malloc(s->n * sizeof(*s->fcand));
	s->fcls = malloc(s->n * sizeof(*s->fcls));
	s->cstamp = calloc(s->n, sizeof(*s->cstamp));
	s->cprev = malloc(s->n * sizeof(*s->cprev));
	s->cnext = malloc(s->n * sizeof(*s->cnext));
	s->chead = s->ctail = NO_CLASS;
	if (!s->cstamp || !s->cprev || !s->cnext || !s->rank || !s->byrank || !s->node_class || !s->node_pos || !s->cls || !s->free_ids || !s->live ||
	    !s->cslots || !s->fcand || !s->fcls) {
		gf_classes_destroy(s);
		return GF_NOMEM;
	}
	for (size_t i = 0; i < s->n; i++)
		s->rank[i] = s->byrank[i] = (uint32_t)i;
	*out = s;
	return GF_OK;
}

void gf_classes_destroy(struct gf_classes *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->shape_cap; i++) {
		free(s->crows[i]);
		view_free(s->views[i]);
	}
	free(s->crows);
	free(s->crow_len);
	free(s->views);
	if (s->cls)
		for (size_t i = 0; i < s->n; i++)
			free(s->cls[i].mem);
	free(s->cls);
	free(s->rank);
	free(s->byrank);
	free(s->node_class);
	free(s->node_pos);
	free(s->free_ids);
	free(s->live);
	free(s->cslots);
	free(s->fcand);
	free(s->fcls);
	free(s->cstamp);
	free(s->cprev);
	free(s->cnext);
	free(s);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

gf_err gf_classes_set_priorities(struct gf_classes *s, const uint32_t *prio)
{
	/* rank = position in (priority, index) order: the per-node loop's tie order */
	uint64_t *order = malloc(s->n * sizeof(*order));

	if (!order)
		return GF_NOMEM;
	for (size_t i = 0; i < s->n; i++)
		order[i] = (uint64_t)prio[i] << 32 | i;
	qsort(order, s->n, sizeof(*order), cmp_u64);
	for (size_t r = 0; r < s->n; r++) {
		s->byrank[r] = (uint32_t)order[r];
		s->rank[s->byrank[r]] = (uint32_t)r;
	}
	free(order);
	s->classes_valid = false;
	return GF_OK;
}

gf_err gf_classes_reserve_shapes(struct gf_classes *s, size_t cap)
{
	if (cap <= s->shape_cap)
		return GF_OK;
	struct class_entry **crows = realloc(s->crows, cap * sizeof(*crows));

	if (!crows)
		return GF_NOMEM;
	s->crows = crows;
	uint32_t *len = realloc(s->crow_len, cap * sizeof(*len));

	if (!len)
		return GF_NOMEM;
	s->crow_len = len;
	struct shape_view **views = realloc(s->views, cap * sizeof(*views));

	if (!views)
		return GF_NOMEM;
	s->views = views;
	for (size_t i = s->shape_cap; i < cap; i++) {
		s->crows[i] = NULL;
		s->crow_len[i] = 0;
		s->views[i] = NULL;
	}
	s->shape_cap = cap;
	return GF_OK;
}

uint32_t gf_classes_count(const struct gf_classes *s)
{
	return s->classes_valid ? s->nlive : 0;
}

void gf_classes_stats(const struct gf_classes *s, uint64_t *computed, uint64_t *cached)
{
	*computed = s->computed;
	*cached = s->cached;
}

static uint64_t fnv1a(const void *data, size_t len)
{
	return gf_fnv1a(GF_FNV64_OFFSET, data, len);
}

static int memcmp_key(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct class_key));
}

static void class_key_of(const struct gf_classes *s, uint32_t i, struct class_key *k)
{
	const struct gf_node *nd = gf_cluster_node(s->env->cluster, i);
	const struct gf_node_spec *sp = gf_cluster_spec(s->env->cluster, i);

	memset(k, 0, sizeof(*k));
	k->cpu_free = nd->cpu_free;
	k->mem_free = nd->mem_free;
	k->cpu_cap = sp->cpu_milli;
	k->mem_cap = sp->mem_mib;
	memcpy(k->gpu_free, nd->gpu_free, sizeof(k->gpu_free));
	memcpy(k->tag_pods, nd->tag_pods, sizeof(k->tag_pods));
	k->model = nd->model;
	k->ngpus = nd->ngpus;
	k->flags = nd->flags;
}

static uint64_t class_hash(const struct class_key *k)
{
	return fnv1a(k, sizeof(*k));
}

/* The live class with key k (hash h), or NO_CLASS. */
static uint32_t class_find(const struct gf_classes *s, const struct class_key *k, uint64_t h)
{
	size_t mask = s->ncslots - 1;

	for (size_t j = h & mask; s->cslots[j]; j = (j + 1) & mask) {
		const struct nclass *c = &s->cls[s->cslots[j] - 1];

		if (c->hash == h && !memcmp(&c->key, k, sizeof(*k)))
			return s->cslots[j] - 1;
	}
	return NO_CLASS;
}

/* Remove class id from the hash: backward-shift deletion keeps probes unbroken. */
static void class_unhash(struct gf_classes *s, uint32_t id)
{
	size_t mask = s->ncslots - 1;
	size_t j = s->cls[id].hash & mask;

	while (s->cslots[j] != id + 1)
		j = (j + 1) & mask;
	for (size_t k = (j + 1) & mask; s->cslots[k]; k = (k + 1) & mask) {
		size_t home = s->cls[s->cslots[k] - 1].hash & mask;

		/* the entry at k may move to j iff its home is not in (j, k] cyclically */
		if (((k - home) & mask) >= ((k - j) & mask)) {
			s->cslots[j] = s->cslots[k];
			j = k;
		}
	}
	s->cslots[j] = 0;
}

/* A new empty live class for key k (hash h); never fails (ids < n). */
static uint32_t class_new(struct gf_classes *s, const struct class_key *k, uint64_t h)
{
	uint32_t id = s->nfree ? s->free_ids[--s->nfree] : s->nused++;
	struct nclass *c = &s->cls[id];
	size_t mask = s->ncslots - 1;
	size_t j = h & mask;

	c->key = *k;
	c->hash = h;
	c->gen++;
	if (c->gen == 0)
		c->gen = 1;	/* 0 marks an empty score entry */
	c->nmem = 0;
	c->live = s->nlive;
	s->live[s->nlive++] = id;
	while (s->cslots[j])
		j = (j + 1) & mask;
	s->cslots[j] = id + 1;
	return id;
}

static void class_drop(struct gf_classes *s, uint32_t id)
{
	struct nclass *c = &s->cls[id];
	uint32_t last = s->live[--s->nlive];

	class_unhash(s, id);
	s->live[c->live] = last;
	s->cls[last].live = c->live;
	if (c->cap > 16) {	/* a class that once was large gives its memory back */
		free(c->mem);
		c->mem = NULL;
		c->cap = 0;
	}
	s->free_ids[s->nfree++] = id;
}

/* Class id's members changed: it moves to the end of the change list. */
static void class_changed(struct gf_classes *s, uint32_t id)
{
	if (s->cstamp[id]) {
		if (s->ctail == id)
			goto stamp;
		if (s->cprev[id] == NO_CLASS)
			s->chead = s->cnext[id];
		else
			s->cnext[s->cprev[id]] = s->cnext[id];
		s->cprev[s->cnext[id]] = s->cprev[id];
	}
	s->cprev[id] = s->ctail;
	s->cnext[id] = NO_CLASS;
	if (s->ctail == NO_CLASS)
		s->chead = id;
	else
		s->cnext[s->ctail] = id;
	s->ctail = id;
stamp:
	s->cstamp[id] = ++s->nclog;
}

/* Member node i to position j of c's heap, moving up past higher ranks. */
static void member_up(struct gf_classes *s, struct nclass *c, uint32_t j, uint32_t i)
{
	uint32_t r = s->rank[i];

	while (j > 0 && s->rank[c->mem[(j - 1) / 2]] > r) {
		c->mem[j] = c->mem[(j - 1) / 2];
		s->node_pos[c->mem[j]] = j;
		j = (j - 1) / 2;
	}
	c->mem[j] = i;
	s->node_pos[i] = j;
}

/* Member node i to position j of c's heap, moving down past lower ranks. */
static void member_down(struct gf_classes *s, struct nclass *c, uint32_t j, uint32_t i)
{
	uint32_t r = s->rank[i];

	for (;;) {
		uint32_t l = 2 * j + 1, b = l;

		if (l >= c->nmem)
			break;
		if (l + 1 < c->nmem && s->rank[c->mem[l + 1]] < s->rank[c->mem[l]])
			b = l + 1;
		if (s->rank[c->mem[b]] > r)
			break;
		c->mem[j] = c->mem[b];
		s->node_pos[c->mem[j]] = j;
		j = b;
	}
	c->mem[j] = i;
	s->node_pos[i] = j;
}

/* Node i joins the class of its current state.  GF_NOMEM leaves it in none. */
static gf_err node_enter(struct gf_classes *s, uint32_t i)
{
	struct class_key k;
	uint64_t h;
	uint32_t id;
	struct nclass *c;

	class_key_of(s, i, &k);
	h = class_hash(&k);
	id = class_find(s, &k, h);
	if (id == NO_CLASS)
		id = class_new(s, &k, h);
	c = &s->cls[id];
	if (c->nmem == c->cap) {
		size_t cap = gf_grow_cap(c->cap, (size_t)c->cap + 1, 4, sizeof(*c->mem));
		uint32_t *mem = cap && cap <= UINT32_MAX ? realloc(c->mem, cap * sizeof(*mem)) : NULL;

		if (!mem) {
			if (c->nmem == 0)
				class_drop(s, id);
			return GF_NOMEM;
		}
		c->mem = mem;
		c->cap = (uint32_t)cap;
	}
	member_up(s, c, c->nmem++, i);
	c->first = c->mem[0];
	c->first_rank = s->rank[c->first];
	s->node_class[i] = id;
	class_changed(s, id);
	return GF_OK;
}

static void node_leave(struct gf_classes *s, uint32_t i)
{
	uint32_t id = s->node_class[i];
	struct nclass *c = &s->cls[id];
	uint32_t pos = s->node_pos[i], last = c->mem[--c->nmem];

	if (pos < c->nmem) {	/* the last member fills the hole, then moves up or down */
		if (pos > 0 && s->rank[c->mem[(pos - 1) / 2]] > s->rank[last])
			member_up(s, c, pos, last);
		else
			member_down(s, c, pos, last);
	}
	if (c->nmem > 0) {
		c->first = c->mem[0];
		c->first_rank = s->rank[c->first];
	}
	s->node_class[i] = NO_CLASS;
	class_changed(s, id);
	if (c->nmem == 0)
		class_drop(s, id);
}

/* Node i may have changed: move it to the class of its state if that differs. */
static gf_err node_reclass(struct gf_classes *s, uint32_t i)
{
	struct class_key k;

	class_key_of(s, i, &k);
	if (!memcmp(&k, &s->cls[s->node_class[i]].key, sizeof(k)))
		return GF_OK;
	node_leave(s, i);
	return node_enter(s, i);
}

static gf_err classes_rebuild(struct gf_classes *s)
{
	for (uint32_t k = 0; k < s->nlive; k++) {
		struct nclass *c = &s->cls[s->live[k]];

		if (c->cap > 16) {
			free(c->mem);
			c->mem = NULL;
			c->cap = 0;
		}
	}
	s->nlive = 0;
	memset(s->cslots, 0, s->ncslots * sizeof(*s->cslots));
	s->nfree = 0;
	s->nused = 0;
	memset(s->cstamp, 0, s->n * sizeof(*s->cstamp));
	s->chead = s->ctail = NO_CLASS;
	s->classes_valid = false;
	s->epoch++;
	s->seen = gf_cluster_journal_seq(s->env->cluster);
	for (size_t r = 0; r < s->n; r++) {
		gf_err err = node_enter(s, s->byrank[r]);	/* in rank order: no member moves */

		if (err)
			return err;
	}
	s->classes_valid = true;
	return GF_OK;
}

/* Bring the classes up to the cluster's state.  GF_NOMEM: use the per-node loop. */
gf_err gf_classes_sync(struct gf_classes *s)
{
	const gf_cluster *c = s->env->cluster;
	uint64_t last = gf_cluster_journal_seq(c);

	if (!s->classes_valid)
		return classes_rebuild(s);
	for (uint64_t k = s->seen + 1; k <= last; k++) {
		size_t i = gf_cluster_changed_node(c, k);
		gf_err err;

		if (i == SIZE_MAX || i >= s->n)
			return classes_rebuild(s);
		if ((err = node_reclass(s, (uint32_t)i))) {
			s->classes_valid = false;
			return err;
		}
	}
	s->seen = last;
	return GF_OK;
}

/* The entry of class id in shape's row, the row grown as needed; NULL on out-of-memory. */
static struct class_entry *class_entry_at(struct gf_classes *s, size_t shape, uint32_t id)
{
	if (id >= s->crow_len[shape]) {
		size_t len = gf_grow_cap(s->crow_len[shape], (size_t)id + 1, 64, sizeof(struct class_entry));

		if (!len)
			return NULL;
		if (len > s->n)
			len = s->n;
		struct class_entry *row = realloc(s->crows[shape], len * sizeof(*row));

		if (!row)
			return NULL;
		memset(&row[s->crow_len[shape]], 0, (len - s->crow_len[shape]) * sizeof(*row));
		s->crows[shape] = row;
		s->crow_len[shape] = (uint32_t)len;
	}
	return &s->crows[shape][id];
}

/* Class id's score for pod p, computed on member node, kept in e (NULL: not kept). */
static int64_t score_class_in(struct gf_classes *s, struct class_entry *e, uint32_t id, uint32_t node,
			      const struct gf_pod_spec *p, int *hint)
{
	uint32_t gen = s->cls[id].gen;
	int64_t sc;

	if (e && e->version == gen) {
		s->cached++;
		*hint = e->hint;
		return e->score;
	}
	*hint = -1;
	sc = s->ops->score(s->state, s->env, node, p, hint);
	s->computed++;
	if (e) {
		e->version = gen;
		e->score = sc;
		e->hint = (int16_t)*hint;
	}
	return sc;
}

/* Class id's score through shape's row (shape SIZE_MAX: no cache). */
static int64_t score_class(struct gf_classes *s, size_t shape, uint32_t id, uint32_t node,
			   const struct gf_pod_spec *p, int *hint)
{
	struct class_entry *e = shape == SIZE_MAX ? NULL : class_entry_at(s, shape, id);

	return score_class_in(s, e, id, node, p, hint);
}

/*
 * The decision over classes (see the design comment): sets *best, *hint and
 * out->nfeasible; false if nothing is feasible.
 */
bool gf_classes_choose(struct gf_classes *s, size_t shape, const struct gf_pod_spec *p, const uint64_t *allowed,
		       struct gf_placement *out, uint32_t *best, int *best_hint)
{
	const gf_cluster *c = s->env->cluster;
	uint32_t nfc = 0;
	uint64_t nf = 0;

	for (uint32_t k = 0; k < s->nlive; k++) {
		uint32_t id = s->live[k];
		const struct nclass *cl = &s->cls[id];
		uint32_t first = cl->mem[0], count = cl->nmem;

		if (!gf_cluster_fits(c, s->env->cat, first, p))
			continue;
		if (allowed) {
			count = 0;
			for (uint32_t m = 0; m < cl->nmem; m++) {
				uint32_t i = cl->mem[m];

				if ((allowed[i / 64] >> (i % 64)) & 1) {
					if (count++ == 0 || s->rank[i] < s->rank[first])
						first = i;
				}
			}
			if (count == 0)
				continue;
		}
		nf += count;
		s->fcls[nfc] = id;
		s->fcand[nfc++] = first;
	}
	out->nfeasible = (uint32_t)nf;
	if (nf == 0)
		return false;
	*best_hint = -1;
	if (nf == 1) {
		*best = s->fcand[0];
		if (s->ops->gpu_select == GF_GPUSEL_POLICY && p->gpu_count == 1 &&
		    p->gpu_milli < GF_MILLI_PER_GPU)
			score_class(s, shape, s->fcls[0], *best, p, best_hint);
		return true;
	}
	int64_t best_score = 0;

	for (uint32_t k = 0; k < nfc; k++) {
		int hint;
		uint32_t i = s->fcand[k];
		int64_t sc = score_class(s, shape, s->fcls[k], i, p, &hint);

		if (k == 0 || sc > best_score || (sc == best_score && s->rank[i] < s->rank[*best])) {
			best_score = sc;
			*best = i;
			*best_hint = hint;
		}
	}
	return true;
}


/* ---- per-shape views: the best class without walking the classes ---- */

static bool view_before(const struct view_entry *a, const struct view_entry *b)
{
	return a->score > b->score || (a->score == b->score && a->rank < b->rank);
}

static gf_err view_push(struct shape_view *v, const struct view_entry *e)
{
	if (v->nheap == v->heap_cap) {
		if (v->nheap == v->heap_cap && gf_grow(&v->heap, &v->heap_cap, v->nheap + 1, sizeof(*v->heap), 64))
			return GF_NOMEM;
	}
	size_t j = v->nheap++;

	while (j > 0 && view_before(e, &v->heap[(j - 1) / 2])) {
		v->heap[j] = v->heap[(j - 1) / 2];
		j = (j - 1) / 2;
	}
	v->heap[j] = *e;
	return GF_OK;
}

static void view_pop(struct shape_view *v)
{
	struct view_entry last = v->heap[--v->nheap];
	size_t j = 0;

	for (;;) {
		size_t l = 2 * j + 1, b = l;

		if (l >= v->nheap)
			break;
		if (l + 1 < v->nheap && view_before(&v->heap[l + 1], &v->heap[l]))
			b = l + 1;
		if (!view_before(&v->heap[b], &last))
			break;
		v->heap[j] = v->heap[b];
		j = b;
	}
	if (v->nheap > 0)
		v->heap[j] = last;
}

/* Class id changed (or is new to v): recount it and push it if feasible and moved. */
static gf_err view_apply(struct gf_classes *s, size_t shape, struct shape_view *v, uint32_t id,
			 const struct gf_pod_spec *p)
{
	const struct nclass *c = &s->cls[id];
	struct class_entry *e = class_entry_at(s, shape, id);
	int hint;

	if (!e)
		return GF_NOMEM;
	v->nfeasible -= e->count;
	e->count = 0;
	if (c->nmem == 0)
		return GF_OK;
	if (e->fgen != c->gen) {	/* the filter's answer is fixed for the class's life */
		e->fgen = c->gen;
		e->fits = gf_cluster_fits(s->env->cluster, s->env->cat, c->first, p);
	}
	if (!e->fits)
		return GF_OK;
	e->count = c->nmem;
	v->nfeasible += c->nmem;
	uint32_t rank = c->first_rank;

	if (e->pgen == c->gen && e->prank == rank)
		return GF_OK;	/* its entry in the heap is still right */
	struct view_entry ve = { score_class_in(s, e, id, c->first, p, &hint), rank, id, c->gen };

	e->pgen = c->gen;
	e->prank = rank;
	return view_push(v, &ve);
}

static gf_err view_rebuild(struct gf_classes *s, size_t shape, struct shape_view *v,
			   const struct gf_pod_spec *p)
{
	for (uint32_t id = 0; id < s->crow_len[shape]; id++) {
		s->crows[shape][id].count = 0;
		s->crows[shape][id].pgen = 0;	/* fits and the score stay: they follow gen */
	}
	v->nfeasible = 0;
	v->nheap = 0;
	v->cursor = s->nclog;
	v->epoch = s->epoch;
	for (uint32_t k = 0; k < s->nlive; k++) {
		gf_err err = view_apply(s, shape, v, s->live[k], p);

		if (err)
			return err;
	}
	return GF_OK;
}

/* The view of p's shape, up to date; NULL on out-of-memory. */
static struct shape_view *view_get(struct gf_classes *s, size_t shape, const struct gf_pod_spec *p)
{
	struct shape_view *v = s->views[shape];
	gf_err err = GF_OK;

	if (!v) {
		v = calloc(1, sizeof(*v));
		if (!v)
			return NULL;
		v->epoch = s->epoch - 1;	/* built below */
		s->views[shape] = v;
	}
	/* catching up costs one step per class changed since the shape's last
	 * decision, however often it changed (newest first, until the first class
	 * the shape has seen as it is); with the heap mostly stale, rebuild */
	if (v->epoch != s->epoch || v->nheap > 2 * (size_t)s->nlive + 64) {
		err = view_rebuild(s, shape, v, p);
	} else {
		for (uint32_t id = s->ctail; !err && id != NO_CLASS && s->cstamp[id] > v->cursor; id = s->cprev[id])
			err = view_apply(s, shape, v, id, p);
		v->cursor = s->nclog;
	}
	if (err) {
		v->epoch = s->epoch - 1;	/* rebuild next time */
		return NULL;
	}
	/* drop stale tops: a dropped or reused class, or one whose first member moved */
	while (v->nheap > 0) {
		const struct view_entry *t = &v->heap[0];
		const struct nclass *c = &s->cls[t->id];

		if (c->gen == t->gen && c->nmem > 0 && c->first_rank == t->rank)
			break;
		view_pop(v);
	}
	return v;
}

/*
 * The unmasked decision through p's shape view: sets *best, *best_hint and
 * out->nfeasible; false if nothing is feasible.  GF_NOMEM in *err: the caller
 * decides another way (GF_STATE: the view lost count; it rebuilds next time).
 */
bool gf_classes_choose_view(struct gf_classes *s, size_t shape, const struct gf_pod_spec *p,
			    struct gf_placement *out, uint32_t *best, int *best_hint, gf_err *err)
{
	struct shape_view *v = shape == SIZE_MAX ? NULL : view_get(s, shape, p);

	*err = GF_OK;
	if (!v) {
		*err = GF_NOMEM;
		return false;
	}
	if (v->nfeasible > 0 && v->nheap == 0) {
		v->epoch = s->epoch - 1;	/* cannot happen; if it does, rebuild and walk */
		*err = GF_STATE;
		return false;
	}
	out->nfeasible = (uint32_t)v->nfeasible;
	if (v->nfeasible == 0)
		return false;
	const struct view_entry *t = &v->heap[0];

	*best = s->cls[t->id].mem[0];
	score_class(s, shape, t->id, *best, p, best_hint);	/* cached: the hint */
	return true;
}

gf_err gf_classes_check(struct gf_classes *s, char *why, size_t whylen)
{
	struct keyed {
		struct class_key key;
		uint32_t node;
	} *all;
	gf_err err = GF_STATE;
	uint64_t members = 0;

	if ((err = gf_classes_sync(s))) {
		snprintf(why, whylen, "classes could not follow the cluster (out of memory)");
		return err;
	}
	for (uint32_t k = 0; k < s->nlive; k++) {
		uint32_t id = s->live[k];
		const struct nclass *c = &s->cls[id];

		if (c->live != k || c->nmem == 0 || class_find(s, &c->key, c->hash) != id ||
		    c->hash != class_hash(&c->key)) {
			snprintf(why, whylen, "class %u: empty, misplaced or not found by its key", id);
			return GF_STATE;
		}
		for (uint32_t m = 0; m < c->nmem; m++) {
			if (s->node_class[c->mem[m]] != id || s->node_pos[c->mem[m]] != m ||
			    (m > 0 && s->rank[c->mem[(m - 1) / 2]] >= s->rank[c->mem[m]])) {
				snprintf(why, whylen, "class %u: member %u out of heap order or not its own",
					 id, c->mem[m]);
				return GF_STATE;
			}
		}
		members += c->nmem;
	}
	if (members != s->n) {
		snprintf(why, whylen, "classes hold %llu nodes, the cluster has %zu",
			 (unsigned long long)members, s->n);
		return GF_STATE;
	}
	/* the from-scratch count: group the nodes by key and compare group by group */
	all = malloc(s->n * sizeof(*all));
	if (!all)
		return GF_NOMEM;
	for (size_t i = 0; i < s->n; i++) {
		class_key_of(s, (uint32_t)i, &all[i].key);
		all[i].node = (uint32_t)i;
	}
	qsort(all, s->n, sizeof(*all), memcmp_key);
	size_t groups = 0;

	for (size_t a = 0, b; a < s->n; a = b) {
		uint32_t id = s->node_class[all[a].node];

		for (b = a; b < s->n && !memcmp(&all[b].key, &all[a].key, sizeof(all[a].key)); b++)
			if (s->node_class[all[b].node] != id)
				goto split;
		if (memcmp(&s->cls[id].key, &all[a].key, sizeof(all[a].key)) || s->cls[id].nmem != b - a)
			goto split;
		groups++;
	}
	if (groups != s->nlive) {
		snprintf(why, whylen, "%zu distinct node states, %u live classes", groups, s->nlive);
		goto out;
	}
	err = GF_OK;
	goto out;
split:
	snprintf(why, whylen, "nodes in one state are not exactly one class");
out:
	free(all);
	return err;
}
