/*
 * policy/mig_place.c - MIG-aware placement: static instances, dynamic first
 * fit, dynamic least fragmentation.
 *
 * The rules and the fragmentation formula are in mig_place.h.  One
 * decision reads the nodes only; gf_mig_bind() applies it on a copy of the
 * node and keeps the copy only if every step held, so a refused bind
 * changes nothing.
 *
 * Dynamic's score of a node, for a pod of CPU a on GPUs G:
 *   delta = sum over MIG GPUs g of [F_after(g) - F_before(g)]
 * where F_before uses the weights W(cpu_free) and F_after W(cpu_free - a)
 * and, for g in G, the free slices less the new instance.  It splits into
 *   base = sum_g [F_{W after}(free_g) - F_{W before}(free_g)]   (the CPU taken)
 *   gain_g = min over legal starts s of F_{W after}(free_g - s) - F_{W after}(free_g)
 * and delta = base + sum of the |G| smallest gains; nodes are ranked by
 * floor(100 sigma(delta / 32)) (DELTA_SCALE below), ties to the node
 * order.  GPUs with the same free slices give the same numbers, so each
 * distinct free mask of a node is scored once (a node of 8 GPUs has 1-3
 * distinct masks in practice), with x_k read from the target's table: the
 * cost per node is O(classes + masks x starts x profiles).
 */
#include <math.h>
#include <string.h>

#include "policy/mig_place.h"

#define EPS 1e-9
/*
 * Dynamic ranks nodes by floor(100 sigma(delta / DELTA_SCALE)), delta in
 * slices: quantised as FGD's artifact quantises its score, so near-equal
 * nodes tie and the node order packs them.  32 placed the most GPU memory
 * among 2, 8, 32, 128 and 1000 on the openb default workload (seeds 42-45;
 * docs/mig.md); the raw delta placed less than first fit.
 */
#define DELTA_SCALE 32.0

gf_err gf_mig_target_init(struct gf_mig_target *t, int model, const struct gf_mig_class *cls, int n)
{
	const struct gf_mig_model_info *mi = gf_mig_model(model);

	if (!mi || n < 0)
		return GF_INVAL;
	if (n > GF_MIG_MAX_CLASSES)
		return GF_TOOBIG;
	for (int i = 0; i < n; i++)
		if (cls[i].profile >= mi->nprofiles || cls[i].p < 0)
			return GF_INVAL;
	t->model = model;
	t->nclasses = n;
	if (n)
		memcpy(t->cls, cls, (size_t)n * sizeof(*cls));
	gf_mig_slack_table(model, t->slack);
	return GF_OK;
}

/* W_k and W_0 for a node with cpu free. */
static void weights(const struct gf_mig_target *t, int64_t cpu, double *w, double *w0)
{
	memset(w, 0, GF_MIG_MAX_PROFILES * sizeof(*w));
	*w0 = 0;
	for (int c = 0; c < t->nclasses; c++) {
		if (t->cls[c].profile < 0 || t->cls[c].cpu_milli > cpu)
			*w0 += t->cls[c].p;
		else
			w[t->cls[c].profile] += t->cls[c].p;
	}
}

static double mask_frag(const struct gf_mig_target *t, unsigned mask, const double *w, double w0)
{
	const uint8_t *x = t->slack[mask & 0xFFu];
	double f = w0 * __builtin_popcount(mask);

	for (int k = 0; k < GF_MIG_MAX_PROFILES; k++)
		f += w[k] * x[k];
	return f;
}

double gf_mig_node_frag(const struct gf_mig_node *node, const struct gf_mig_target *t)
{
	double w[GF_MIG_MAX_PROFILES], w0, f = 0;

	weights(t, node->cpu_free, w, &w0);
	for (int i = 0; i < node->ngpus; i++)
		if (node->gpu[i].mig && node->gpu[i].model == t->model)
			f += mask_frag(t, gf_mig_free_mask(&node->gpu[i]), w, w0);
	return f;
}

static unsigned span(int start, int size)
{
	return ((1u << size) - 1u) << start;
}

/* Does instance in of g serve ask a (static)?  Then its sort key (smaller = better). */
static bool serves(const struct gf_mig_gpu *g, const struct gf_mig_instance *in,
		   const struct gf_mig_ask *a, int64_t *key)
{
	const struct gf_mig_model_info *mi = gf_mig_model(g->model);
	const struct gf_mig_profile *p = &mi->profiles[in->profile];

	if (in->pods)
		return false;
	if (a->exact ? in->profile != a->profile : p->mem_mib < mi->profiles[a->profile].mem_mib)
		return false;
	*key = p->mem_mib * 64 + p->size * 8 + p->compute;
	return true;
}

struct cand {
	double gain;
	int64_t key;
	int gpu;
	int start;
	bool create;
};

/* Keep the n best of c[0..m-1] at the front (by gain then key then GPU index); m <= 16. */
static void select_best(struct cand *c, int m, int n)
{
	for (int i = 0; i < n && i < m; i++) {
		int b = i;

		for (int j = i + 1; j < m; j++)
			if (c[j].gain < c[b].gain - EPS ||
			    (c[j].gain <= c[b].gain + EPS &&
			     (c[j].key < c[b].key || (c[j].key == c[b].key && c[j].gpu < c[b].gpu))))
				b = j;
		struct cand tmp = c[i];

		c[i] = c[b];
		c[b] = tmp;
	}
}

/* Candidates of node nd for a MIG ask under mode; returns how many (<= ngpus); *base for dynamic. */
static int mig_cands(const struct gf_mig_node *nd, enum gf_mig_mode mode, const struct gf_mig_target *t,
		     const struct gf_mig_ask *a, struct cand *c, double *base)
{
	const struct gf_mig_model_info *mi = gf_mig_model(a->model);
	int m = 0;

	*base = 0;
	if (mode == GF_MIG_STATIC) {
		for (int i = 0; i < nd->ngpus; i++) {
			const struct gf_mig_gpu *g = &nd->gpu[i];
			int64_t best = INT64_MAX, key;
			int bs = -1;

			if (!g->mig || g->model != a->model)
				continue;
			for (int j = 0; j < g->ninst; j++)
				if (serves(g, &g->inst[j], a, &key) &&
				    (key < best || (key == best && g->inst[j].start < bs))) {
					best = key;
					bs = g->inst[j].start;
				}
			if (bs >= 0)
				c[m++] = (struct cand){ .key = best, .gpu = i, .start = bs };
		}
		return m;
	}
	if (mode == GF_MIG_DYNAMIC_FIRST) {
		for (int i = 0; i < nd->ngpus; i++) {
			const struct gf_mig_gpu *g = &nd->gpu[i];
			int s;

			if (!g->mig || g->model != a->model || (s = gf_mig_first_start(g, a->profile)) < 0)
				continue;
			c[m++] = (struct cand){ .gpu = i, .start = s, .create = true };
		}
		return m;
	}
	/* GF_MIG_DYNAMIC: one evaluation per distinct free mask. */
	double wb[GF_MIG_MAX_PROFILES], wa[GF_MIG_MAX_PROFILES], w0b, w0a;
	unsigned masks[GF_MAX_GPUS];
	int seen_mask[GF_MAX_GPUS], nseen = 0;
	double seen_gain[GF_MAX_GPUS];
	int seen_start[GF_MAX_GPUS];

	weights(t, nd->cpu_free, wb, &w0b);
	weights(t, nd->cpu_free - a->cpu_milli, wa, &w0a);
	for (int i = 0; i < nd->ngpus; i++) {
		const struct gf_mig_gpu *g = &nd->gpu[i];
		int j;

		if (!g->mig || g->model != t->model)
			continue;
		masks[i] = gf_mig_free_mask(g);
		for (j = 0; j < nseen; j++)
			if ((unsigned)seen_mask[j] == masks[i])
				break;
		if (j == nseen) {
			double fa = mask_frag(t, masks[i], wa, w0a);

			seen_mask[nseen] = (int)masks[i];
			seen_start[nseen] = -1;
			seen_gain[nseen] = 0;
			if (a->count > 0 && g->model == a->model) {
				for (int s = 0; s < mi->nslices; s++) {
					if (!gf_mig_can_create(g, a->profile, s))
						continue;
					double gn = mask_frag(t, masks[i] & ~span(s, mi->profiles[a->profile].size),
							      wa, w0a) - fa;

					if (seen_start[nseen] < 0 || gn < seen_gain[nseen] - EPS) {
						seen_start[nseen] = s;
						seen_gain[nseen] = gn;
					}
				}
			}
			nseen++;
		}
		*base += mask_frag(t, masks[i], wa, w0a) - mask_frag(t, masks[i], wb, w0b);
		if (a->count > 0 && seen_start[j] >= 0)
			c[m++] = (struct cand){ .gain = seen_gain[j], .gpu = i, .start = seen_start[j], .create = true };
	}
	return m;
}

gf_err gf_mig_choose(const struct gf_mig_node *nodes, size_t n, const uint32_t *order,
		     enum gf_mig_mode mode, const struct gf_mig_target *t, const struct gf_mig_ask *a,
		     struct gf_mig_pick *out)
{
	const struct gf_mig_model_info *mi = NULL;
	bool is_mig = a->count > 0 && a->profile >= 0;
	bool found = false;
	double best_score = 0;
	int64_t best_key = 0;

	if (a->count < 0 || a->count > GF_MAX_GPUS || a->cpu_milli < 0 || a->mem_mib < 0)
		return GF_INVAL;
	if (is_mig) {
		mi = gf_mig_model(a->model);
		if (!mi || a->profile >= mi->nprofiles)
			return GF_INVAL;
	} else if (a->count > 0 && (a->milli < 1 || a->milli > 1000)) {
		return GF_INVAL;
	}
	if (mode == GF_MIG_DYNAMIC && (!t || (is_mig && t->model != a->model)))
		return GF_INVAL;

	for (size_t r = 0; r < n; r++) {
		size_t idx = order ? order[r] : r;
		const struct gf_mig_node *nd;
		struct cand c[GF_MAX_GPUS];
		double base = 0, score;
		int64_t key = 0;
		int m = 0;

		if (idx >= n)
			return GF_INVAL;
		nd = &nodes[idx];
		if (nd->cpu_free < a->cpu_milli || nd->mem_free < a->mem_mib)
			continue;
		if (a->count > 0 && !is_mig) {
			/* Whole GPUs and shares: GPUs outside MIG mode only, first fit. */
			for (int i = 0; i < nd->ngpus && m < a->count; i++)
				if (!nd->gpu[i].mig && nd->gpu[i].milli_free >= a->milli)
					c[m++] = (struct cand){ .gpu = i, .start = -1 };
			if (m < a->count)
				continue;
		} else if (a->count == 0 && mode != GF_MIG_DYNAMIC) {
			/* CPU-only, first fit. */
		} else {
			m = mig_cands(nd, mode, t, a, c, &base);
			if (m < a->count)
				continue;
			select_best(c, m, a->count);
		}
		if (mode != GF_MIG_DYNAMIC && mode != GF_MIG_STATIC) {
			score = 0;
		} else if (mode == GF_MIG_STATIC) {
			score = 0;
			for (int i = 0; i < a->count && is_mig; i++)
				key += c[i].key;
		} else {
			score = base;
			for (int i = 0; i < a->count; i++)
				score += c[i].gain;
			score = floor(100.0 / (1.0 + exp(-score / DELTA_SCALE)));
		}
		if (found && !(score < best_score - EPS || (score <= best_score + EPS && key < best_key)))
			continue;
		found = true;
		best_score = score;
		best_key = key;
		out->node = idx;
		out->n = a->count;
		for (int i = 0; i < a->count; i++) {
			out->gpu[i] = (uint8_t)c[i].gpu;
			out->start[i] = (int8_t)c[i].start;
			out->create[i] = c[i].create;
		}
		/* First fit (and anything without a choice to weigh) stops at the first node. */
		if (mode == GF_MIG_DYNAMIC_FIRST || (mode == GF_MIG_STATIC && !is_mig) ||
		    (mode == GF_MIG_DYNAMIC && a->count > 0 && !is_mig))
			break;
	}
	return found ? GF_OK : GF_NOENT;
}

/* The instance of g starting at start, or -1. */
static int inst_at(const struct gf_mig_gpu *g, int start)
{
	for (int j = 0; j < g->ninst; j++)
		if (g->inst[j].start == start)
			return j;
	return -1;
}

static bool distinct(const struct gf_mig_pick *pk, const struct gf_mig_node *node)
{
	for (int i = 0; i < pk->n; i++) {
		if (pk->gpu[i] >= node->ngpus)
			return false;
		for (int j = 0; j < i; j++)
			if (pk->gpu[j] == pk->gpu[i])
				return false;
	}
	return true;
}

gf_err gf_mig_bind(struct gf_mig_node *node, const struct gf_mig_ask *a, const struct gf_mig_pick *pk)
{
	struct gf_mig_node tmp = *node;
	bool is_mig = a->count > 0 && a->profile >= 0;

	if (pk->n != a->count || !distinct(pk, node))
		return GF_RANGE;
	if (tmp.cpu_free < a->cpu_milli || tmp.mem_free < a->mem_mib)
		return GF_RANGE;
	tmp.cpu_free -= a->cpu_milli;
	tmp.mem_free -= a->mem_mib;
	for (int i = 0; i < pk->n; i++) {
		struct gf_mig_gpu *g = &tmp.gpu[pk->gpu[i]];
		int j;

		if (!is_mig) {
			if (g->mig || g->milli_free < a->milli)
				return GF_STATE;	/* never a share on a MIG-mode GPU */
			g->milli_free = (uint16_t)(g->milli_free - a->milli);
			continue;
		}
		if (!g->mig || g->model != a->model)
			return GF_STATE;		/* never a MIG pod on a GPU outside MIG mode */
		if (pk->create[i]) {
			gf_err e = gf_mig_create(g, a->profile, pk->start[i], &j);

			if (e)
				return GF_STATE;
		} else {
			int64_t key;

			j = inst_at(g, pk->start[i]);
			if (j < 0 || !serves(g, &g->inst[j], a, &key))
				return GF_STATE;
		}
		g->inst[j].pods++;
	}
	*node = tmp;
	return GF_OK;
}

gf_err gf_mig_unbind(struct gf_mig_node *node, const struct gf_mig_ask *a, const struct gf_mig_pick *pk,
		     bool destroy_empty)
{
	struct gf_mig_node tmp = *node;
	bool is_mig = a->count > 0 && a->profile >= 0;

	if (pk->n != a->count || !distinct(pk, node))
		return GF_RANGE;
	tmp.cpu_free += a->cpu_milli;
	tmp.mem_free += a->mem_mib;
	for (int i = 0; i < pk->n; i++) {
		struct gf_mig_gpu *g = &tmp.gpu[pk->gpu[i]];
		int j;

		if (!is_mig) {
			if (g->mig || g->milli_free + a->milli > 1000)
				return GF_RANGE;
			g->milli_free = (uint16_t)(g->milli_free + a->milli);
			continue;
		}
		j = g->mig ? inst_at(g, pk->start[i]) : -1;
		if (j < 0 || !g->inst[j].pods)
			return GF_RANGE;
		g->inst[j].pods--;
		if (destroy_empty && !g->inst[j].pods && gf_mig_destroy(g, j))
			return GF_RANGE;
	}
	*node = tmp;
	return GF_OK;
}
