/*
 * policy/sched.c - the placement framework.
 *
 * Cost per decision: one filter pass over all nodes (O(nodes), a few compares
 * each thanks to the per-node derived fields nfull/max_free), then one score
 * per feasible node.  With the score cache a score is computed only when the
 * node changed since this pod shape last saw it; a placement changes one
 * node, so in steady state each decision computes O(1) scores and reads the
 * rest from the cache.
 *
 * Cache layout: one row of nnodes entries per pod shape, so the scoring loop
 * walks memory in node order.  Shapes are interned in an open-addressing hash
 * table (FNV-1a over the shape fields).  An entry is valid iff its version
 * equals the node's current version (versions start at 1; 0 = empty).
 *
 * Node classes (feature NODE_CLASSES): for cacheable policies with the
 * fixed priority tie-break, gf_sched_place_masked decides over classes of
 * nodes in the same state (policy/classes.c: the design, its cost, and why
 * the node it picks is the per-node loop's); the per-node loop below is
 * the rule it must match, and what every other policy and pod use.
 *
 * Ties of the best score: a pod that serves a model (served_model != 0)
 * goes first to a tied node that has run that model (its image and weights
 * likely cached, a short cold start), then by the policy's tie rule.  The
 * score itself is untouched, so the cache and every decision of a pod that
 * serves no model are exactly the policy's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "core/hash.h"
#include "policy/classes.h"
#include "policy/sched.h"

struct shape_key {
	int64_t cpu;
	int64_t mem;
	int32_t count;
	int32_t milli;
	int32_t spec;
};

struct cache_entry {
	uint32_t version;
	int32_t hint;
	int64_t score;
};

struct gf_sched {
	const struct gf_policy_ops *ops;
	struct gf_policy_env env;
	void *state;
	size_t n;
	uint32_t *prio;
	uint32_t *feasible;

	/* shape interning: hash slots hold shape index + 1 (0 = empty) */
	struct shape_key *shapes;
	struct cache_entry **rows;	/* per shape: nodes' scores, allocated on first use */
	size_t nshapes, shape_cap;
	uint32_t *slots;
	size_t nslots;

	/* node classes (policy/classes.h); NULL: the per-node loop decides */
	struct gf_classes *classes;

	uint64_t computed, cached;
};

gf_err gf_sched_create(const struct gf_policy_ops *ops, const struct gf_policy_env *env,
		       gf_sched **out)
{
	gf_sched *s;
	gf_err err;

	if (ops->needs_target && !env->target)
		return GF_INVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return GF_NOMEM;
	s->ops = ops;
	s->env = *env;
	s->n = gf_cluster_nnodes(env->cluster);
	s->prio = malloc(s->n * sizeof(*s->prio));
	s->feasible = malloc(s->n * sizeof(*s->feasible));
	s->nslots = 256;
	s->slots = calloc(s->nslots, sizeof(*s->slots));
	if (!s->prio || !s->feasible || !s->slots) {
		gf_sched_destroy(s);
		return GF_NOMEM;
	}
	for (size_t i = 0; i < s->n; i++)
		s->prio[i] = (uint32_t)i;
	if (ops->create) {
		err = ops->create(&s->env, &s->state);
		if (err) {
			gf_sched_destroy(s);
			return err;
		}
	}
	if (gf_classes_usable(ops, &s->env) && (err = gf_classes_create(ops, &s->env, s->state, &s->classes))) {
		gf_sched_destroy(s);
		return err;
	}
	*out = s;
	return GF_OK;
}

void gf_sched_destroy(gf_sched *s)
{
	if (!s)
		return;
	if (s->state && s->ops->destroy)
		s->ops->destroy(s->state);
	for (size_t i = 0; i < s->nshapes; i++)
		free(s->rows[i]);
	free(s->rows);
	gf_classes_destroy(s->classes);
	free(s->shapes);
	free(s->slots);
	free(s->prio);
	free(s->feasible);
	free(s);
}

void gf_sched_set_priorities(gf_sched *s, const uint32_t *prio)
{
	memcpy(s->prio, prio, s->n * sizeof(*prio));
	if (s->classes && gf_classes_set_priorities(s->classes, prio)) {
		gf_classes_destroy(s->classes);	/* out of memory: the per-node loop decides alike */
		s->classes = NULL;
	}
}

void gf_sched_stats(const gf_sched *s, uint64_t *computed, uint64_t *cached)
{
	uint64_t cc = 0, ch = 0;

	if (s->classes)
		gf_classes_stats(s->classes, &cc, &ch);
	*computed = s->computed + cc;
	*cached = s->cached + ch;
}

static uint64_t fnv1a(const void *data, size_t len)
{
	return gf_fnv1a(GF_FNV64_OFFSET, data, len);
}

static uint64_t key_hash(const struct shape_key *k)
{
	int64_t f[5] = { k->cpu, k->mem, k->count, k->milli, k->spec };

	return fnv1a(f, sizeof(f));
}

static bool key_eq(const struct shape_key *a, const struct shape_key *b)
{
	return a->cpu == b->cpu && a->mem == b->mem && a->count == b->count &&
	       a->milli == b->milli && a->spec == b->spec;
}

static gf_err grow_slots(gf_sched *s)
{
	size_t nslots = gf_grow_cap(s->nslots, s->nslots + 1, 1, sizeof(uint32_t));
	uint32_t *slots = nslots ? calloc(nslots, sizeof(*slots)) : NULL;

	if (!slots)
		return GF_NOMEM;
	for (size_t i = 0; i < s->nshapes; i++) {
		size_t h = key_hash(&s->shapes[i]) & (nslots - 1);

		while (slots[h])
			h = (h + 1) & (nslots - 1);
		slots[h] = (uint32_t)i + 1;
	}
	free(s->slots);
	s->slots = slots;
	s->nslots = nslots;
	return GF_OK;
}

/* The index of p's shape, interned on first sight; SIZE_MAX on out-of-memory. */
static size_t shape_index(gf_sched *s, const struct gf_pod_spec *p)
{
	struct shape_key k = { p->cpu_milli, p->mem_mib, p->gpu_count, p->gpu_milli, p->spec };
	size_t h = key_hash(&k) & (s->nslots - 1);

	while (s->slots[h]) {
		size_t i = s->slots[h] - 1;

		if (key_eq(&s->shapes[i], &k))
			return i;
		h = (h + 1) & (s->nslots - 1);
	}
	if (s->nshapes == s->shape_cap) {
		size_t cap = gf_grow_cap(s->shape_cap, s->shape_cap + 1, 64, sizeof(*s->shapes));
		struct shape_key *shapes = cap ? realloc(s->shapes, cap * sizeof(*shapes)) : NULL;

		if (!shapes)
			return SIZE_MAX;
		s->shapes = shapes;
		struct cache_entry **rows = realloc(s->rows, cap * sizeof(*rows));

		if (!rows)
			return SIZE_MAX;
		s->rows = rows;
		if (s->classes && gf_classes_reserve_shapes(s->classes, cap))
			return SIZE_MAX;
		s->shape_cap = cap;
	}
	s->shapes[s->nshapes] = k;
	s->rows[s->nshapes] = NULL;
	s->slots[h] = (uint32_t)++s->nshapes;
	if (s->nshapes * 2 > s->nslots && grow_slots(s))
		return SIZE_MAX;
	return s->nshapes - 1;
}

/* The node score row of p's shape, created on first sight; NULL on out-of-memory. */
static struct cache_entry *shape_row(gf_sched *s, const struct gf_pod_spec *p)
{
	size_t i = shape_index(s, p);

	if (i == SIZE_MAX)
		return NULL;
	if (!s->rows[i])
		s->rows[i] = calloc(s->n, sizeof(*s->rows[i]));
	return s->rows[i];
}

static int64_t score_node(gf_sched *s, struct cache_entry *row, uint32_t i,
			  const struct gf_pod_spec *p, int *hint)
{
	uint32_t version = gf_cluster_node(s->env.cluster, i)->version;
	int64_t sc;

	if (row && row[i].version == version) {
		s->cached++;
		*hint = row[i].hint;
		return row[i].score;
	}
	*hint = -1;
	sc = s->ops->score(s->state, &s->env, i, p, hint);
	s->computed++;
	if (row) {
		row[i].version = version;
		row[i].score = sc;
		row[i].hint = *hint;
	}
	return sc;
}

int64_t gf_sched_score(gf_sched *s, const struct gf_pod_spec *p, size_t node, int *hint)
{
	struct cache_entry *row = NULL;

	*hint = -1;
	if (!s->ops->score || node >= s->n)
		return 0;
	if (s->ops->cacheable && s->env.features.on[GF_FEAT_SCORE_CACHE])
		row = shape_row(s, p);	/* NULL on OOM: score without the cache */
	return score_node(s, row, (uint32_t)node, p, hint);
}

void gf_sched_score_nodes(gf_sched *s, const struct gf_pod_spec *p, const uint32_t *nodes, size_t n,
			 int64_t *out)
{
	struct cache_entry *row = NULL;
	int hint;

	if (s->ops->score && s->ops->cacheable && s->env.features.on[GF_FEAT_SCORE_CACHE])
		row = shape_row(s, p);	/* once for all the nodes */
	for (size_t k = 0; k < n; k++)
		out[k] = s->ops->score && nodes[k] < s->n ? score_node(s, row, nodes[k], p, &hint) : 0;
}

/* Has node i run the model pod p serves?  Always false for a pod that serves none. */
static bool served_here(const gf_cluster *c, uint32_t i, const struct gf_pod_spec *p)
{
	return p->served_model && gf_node_served(gf_cluster_spec(c, i), p->served_model);
}

/* Best fit: the smallest free amount that still fits; ties to the lowest index. */
static int best_fit_gpu(const struct gf_node *nd, int milli)
{
	int chosen = -1;

	for (int g = 0; g < nd->ngpus; g++)
		if (nd->gpu_free[g] >= milli && (chosen < 0 || nd->gpu_free[g] < nd->gpu_free[chosen]))
			chosen = g;
	return chosen;
}

/* Reservoir sampling in index order: the c-th fitting GPU replaces the choice with prob. 1/c. */
static int random_gpu(const struct gf_node *nd, int milli, struct gf_rng *rng)
{
	int chosen = -1;
	uint64_t seen = 0;

	for (int g = 0; g < nd->ngpus; g++)
		if (nd->gpu_free[g] >= milli && gf_rng_below(rng, ++seen) == 0)
			chosen = g;
	return chosen;
}

static int pick_sharing_gpu(const gf_sched *s, const struct gf_node *nd,
			    const struct gf_pod_spec *p, int hint, struct gf_rng *rng)
{
	switch (s->ops->gpu_select) {
	case GF_GPUSEL_POLICY:
		if (hint >= 0 && hint < nd->ngpus && nd->gpu_free[hint] >= p->gpu_milli)
			return hint;
		break;	/* a policy without a usable hint gets best fit */
	case GF_GPUSEL_RANDOM:
		return random_gpu(nd, p->gpu_milli, rng);
	case GF_GPUSEL_BEST:
		break;
	}
	return best_fit_gpu(nd, p->gpu_milli);
}

gf_err gf_sched_check_classes(gf_sched *s, char *why, size_t whylen)
{
	if (!s->classes) {
		snprintf(why, whylen, "this scheduler does not use node classes");
		return GF_INVAL;
	}
	return gf_classes_check(s->classes, why, whylen);
}

uint32_t gf_sched_nclasses(const gf_sched *s)
{
	return s->classes ? gf_classes_count(s->classes) : 0;
}

enum gf_outcome gf_sched_place(gf_sched *s, const struct gf_pod_spec *p, struct gf_rng *rng,
			       struct gf_placement *out)
{
	return gf_sched_place_masked(s, p, rng, NULL, out);
}

/*
 * The decision over every node (see sched.h): sets *best, *best_hint and
 * out->nfeasible; false if nothing is feasible.
 */
static bool choose_by_node(gf_sched *s, const struct gf_pod_spec *p, struct gf_rng *rng,
			   const uint64_t *allowed, struct gf_placement *out, uint32_t *best_out,
			   int *best_hint_out)
{
	const gf_cluster *c = s->env.cluster;
	size_t nf = 0;
	uint32_t best = 0;
	int best_hint = -1;

	for (size_t i = 0; i < s->n; i++)
		if ((!allowed || (allowed[i / 64] >> (i % 64)) & 1) && gf_cluster_fits(c, s->env.cat, i, p))
			s->feasible[nf++] = (uint32_t)i;
	out->nfeasible = (uint32_t)nf;
	if (nf == 0)
		return false;
	struct cache_entry *row = NULL;

	if (s->ops->cacheable && s->env.features.on[GF_FEAT_SCORE_CACHE])
		row = shape_row(s, p);	/* NULL on OOM: score without the cache */

	if (nf == 1) {
		best = s->feasible[0];
		if (s->ops->gpu_select == GF_GPUSEL_POLICY && p->gpu_count == 1 &&
		    p->gpu_milli < GF_MILLI_PER_GPU)
			score_node(s, row, best, p, &best_hint);
	} else if (s->ops->choose) {
		best = s->feasible[s->ops->choose(s->state, &s->env, s->feasible, nf, p, rng)];
		if (s->ops->gpu_select == GF_GPUSEL_POLICY)
			score_node(s, row, best, p, &best_hint);
	} else {
		int64_t best_score = 0;
		uint64_t ties = 0;
		bool best_hit = false;

		for (size_t k = 0; k < nf; k++) {
			uint32_t i = s->feasible[k];
			int hint;
			int64_t sc = score_node(s, row, i, p, &hint);
			bool hit = served_here(c, i, p);

			if (k == 0 || sc > best_score) {
				best_score = sc;
				best = i;
				best_hint = hint;
				best_hit = hit;
				ties = 1;
			} else if (sc == best_score) {
				bool take;

				if (hit != best_hit) {
					take = hit;	/* the served model's node first */
					ties = take ? 1 : ties;
				} else if (s->ops->tie_break == GF_TIE_RANDOM)
					take = gf_rng_below(rng, ++ties) == 0;
				else
					take = s->prio[i] < s->prio[best];
				if (take) {
					best = i;
					best_hint = hint;
					best_hit = hit;
				}
			}
		}
	}
	*best_out = best;
	*best_hint_out = best_hint;
	return true;
}

enum gf_outcome gf_sched_place_masked(gf_sched *s, const struct gf_pod_spec *p, struct gf_rng *rng,
				      const uint64_t *allowed, struct gf_placement *out)
{
	const gf_cluster *c = s->env.cluster;
	uint32_t best = 0;
	int best_hint = -1;
	bool any = false;

	gf_err err = GF_NOMEM;

	if (s->classes && !p->served_model && gf_classes_sync(s->classes) == GF_OK) {
		/* SIZE_MAX on OOM: score without the cache */
		size_t shape = s->env.features.on[GF_FEAT_SCORE_CACHE] ? shape_index(s, p) : SIZE_MAX;

		/* shape views need the score cache; a mask needs the walk over classes */
		if (!allowed && s->env.features.on[GF_FEAT_SCORE_CACHE])
			any = gf_classes_choose_view(s->classes, shape, p, out, &best, &best_hint, &err);
		if (err)
			any = gf_classes_choose(s->classes, shape, p, allowed, out, &best, &best_hint);
	} else
		any = choose_by_node(s, p, rng, allowed, out, &best, &best_hint);
	if (!any)
		return GF_UNSCHEDULABLE;

	const struct gf_node *nd = gf_cluster_node(c, best);

	out->node = best;
	out->ngpus = 0;
	if (p->gpu_count == 0)
		return GF_PLACED;
	if (p->gpu_count == 1 && p->gpu_milli < GF_MILLI_PER_GPU) {
		out->gpus[0] = (uint8_t)pick_sharing_gpu(s, nd, p, best_hint, rng);
		out->ngpus = 1;
	} else
		out->ngpus = gf_gpus_ascending_fit(nd, p->gpu_count, p->gpu_milli, out->gpus);
	return GF_PLACED;
}
