/*
 * cluster/admit.c - who a node admits (see admit.h).
 *
 * The checks run in kube-scheduler's order (cordon, taints, then selector
 * and affinity) and the first that refuses names the reason.  A toleration
 * matches a taint when its effect is ANY or the taint's, and either it has
 * no key and operator Exists (every taint), or the keys are equal and it is
 * Exists or the values are equal.  Gt / Lt compare whole numbers; a label
 * or value that is not one never matches.
 */
#include "cluster/admit.h"

#include <stdlib.h>
#include <string.h>

const char *gf_labels_get(const char *labels, size_t len, const char *key)
{
	for (size_t i = 0; i < len;) {
		const char *k = labels + i;
		const char *v = k + strlen(k) + 1;
		if (!strcmp(k, key))
			return v;
		i = (size_t)(v + strlen(v) + 1 - labels);
	}
	return NULL;
}

static bool tolerates(const struct gf_pod_rules *p, const char *key, const char *value, uint8_t effect)
{
	for (int i = 0; i < p->ntols; i++) {
		const struct gf_toleration *t = &p->tols[i];
		if (t->effect != GF_EFFECT_ANY && t->effect != effect)
			continue;
		if (!t->key[0] && t->exists)
			return true;
		if (strcmp(t->key, key))
			continue;
		if (t->exists || !strcmp(t->value, value))
			return true;
	}
	return false;
}

static bool expr_holds_on(const char *labels, size_t len, const struct gf_match_expr *x)
{
	const char *v = gf_labels_get(labels, len, x->key);
	bool in = false;
	for (const char *c = x->values; *c; c += strlen(c) + 1)
		in |= v && !strcmp(v, c);
	switch (x->op) {
	case GF_OP_IN: return in;
	case GF_OP_NOT_IN: return !in;
	case GF_OP_EXISTS: return v != NULL;
	case GF_OP_DOES_NOT_EXIST: return v == NULL;
	default: { /* Gt, Lt: integers */
		char *e1, *e2;
		if (!v)
			return false;
		long long a = strtoll(v, &e1, 10), b = strtoll(x->values, &e2, 10);
		if (*e1 || *e2 || e1 == v || e2 == x->values)
			return false;
		return x->op == GF_OP_GT ? a > b : a < b;
	}
	}
}

static bool expr_holds(const struct gf_node_rules *n, const struct gf_match_expr *x)
{
	return expr_holds_on(n->labels, n->labels_len, x);
}

static bool pairs_hold(const char *labels, size_t len, const char *match, size_t match_len)
{
	for (size_t i = 0; i < match_len;) {
		const char *k = match + i, *v = k + strlen(k) + 1;
		const char *have = gf_labels_get(labels, len, k);
		if (!have || strcmp(have, v))
			return false;
		i = (size_t)(v + strlen(v) + 1 - match);
	}
	return true;
}

static bool selector_holds(const struct gf_node_rules *n, const struct gf_pod_rules *p)
{
	return pairs_hold(n->labels, n->labels_len, p->selector, p->selector_len);
}

bool gf_labels_select(const char *labels, size_t len, const char *match, size_t match_len,
		      const struct gf_match_term *t)
{
	if (!pairs_hold(labels, len, match, match_len))
		return false;
	for (int x = 0; t && x < t->nexprs; x++)
		if (!expr_holds_on(labels, len, &t->e[x]))
			return false;
	return true;
}

static bool affinity_holds(const struct gf_node_rules *n, const struct gf_pod_rules *p)
{
	if (!p->nterms)
		return true;
	for (int t = 0; t < p->nterms; t++) {
		bool all = p->terms[t].nexprs > 0;
		for (int x = 0; x < p->terms[t].nexprs && all; x++)
			all = expr_holds(n, &p->terms[t].e[x]);
		if (all)
			return true;
	}
	return false;
}

enum gf_why gf_admits(const struct gf_node_rules *n, const struct gf_pod_rules *p)
{
	if (n->unschedulable &&
	    !tolerates(p, "node.kubernetes.io/unschedulable", "", GF_EFFECT_NO_SCHEDULE))
		return GF_WHY_UNSCHEDULABLE;
	for (int i = 0; i < n->ntaints; i++)
		if (!tolerates(p, n->taints[i].key, n->taints[i].value, n->taints[i].effect))
			return GF_WHY_TAINT;
	if (!selector_holds(n, p) || !affinity_holds(n, p))
		return GF_WHY_AFFINITY;
	return GF_WHY_FITS;
}

enum gf_why gf_admit_why(const gf_cluster *c, const struct gf_node_rules *rules, size_t i,
			 const struct gf_pod_rules *p)
{
	const struct gf_node_rules *n = &rules[i];
	if (n->max_pods > 0 && gf_cluster_node(c, i)->npods >= (uint64_t)n->max_pods)
		return GF_WHY_PODS;
	return gf_admits(n, p);
}

size_t gf_admit_mask(const gf_cluster *c, const struct gf_node_rules *rules,
		     const struct gf_pod_rules *p, uint64_t *allowed, size_t *counts)
{
	size_t n = gf_cluster_nnodes(c), refused = 0;
	memset(allowed, 0, gf_mask_words(n) * sizeof(*allowed));
	for (size_t i = 0; i < n; i++) {
		enum gf_why w = gf_admit_why(c, rules, i, p);
		if (w == GF_WHY_FITS) {
			allowed[i / 64] |= 1ull << (i % 64);
			continue;
		}
		refused++;
		if (counts)
			counts[w]++;
	}
	return refused;
}
