/*
 * queue/requeue.c - backoff, the change log and Event aggregation (see requeue.h).
 *
 * A pod keeps the low 32 bits of the log position; the distance to the end
 * is taken modulo 2^32, so a pod is only misjudged after four billion node
 * changes without an attempt, and then it is tried (the distance exceeds the
 * ring).
 */
#include "queue/requeue.h"

#include <string.h>

double gf_backoff_delay(uint32_t n)
{
	double d = GF_BACKOFF_INITIAL_S;
	for (uint32_t i = 1; i < n && d < GF_BACKOFF_MAX_S; i++)
		d *= 2;
	return d < GF_BACKOFF_MAX_S ? d : GF_BACKOFF_MAX_S;
}

void gf_retry_failed(struct gf_retry *r, double now, uint64_t seen)
{
	if (r->failures < UINT32_MAX)
		r->failures++;
	r->not_before = now + gf_backoff_delay(r->failures);
	r->seen = (uint32_t)seen;
}

void gf_retry_reset(struct gf_retry *r, uint64_t seen)
{
	r->failures = 0;
	r->not_before = 0;
	r->seen = (uint32_t)seen;
}

void gf_changelog_add(struct gf_changelog *g, int32_t node)
{
	g->node[g->end % GF_CHANGELOG_CAP] = node;
	g->end++;
}

bool gf_changelog_since(const struct gf_changelog *g, const struct gf_retry *r)
{
	return (uint32_t)g->end != r->seen;
}

bool gf_requeue_worth_trying(const struct gf_changelog *g, struct gf_retry *r, const gf_cluster *c,
			     const struct gf_catalog *cat, const struct gf_node_rules *rules,
			     const struct gf_pod_rules *p, const struct gf_pod_spec *eff)
{
	uint32_t behind = (uint32_t)g->end - r->seen;
	if (behind > GF_CHANGELOG_CAP)
		return true;
	size_t n = c ? gf_cluster_nnodes(c) : 0;
	for (uint64_t s = g->end - behind; s < g->end; s++) {
		int32_t i = g->node[s % GF_CHANGELOG_CAP];
		if (i == GF_CHANGE_ALL)
			return true;
		if (!eff || i < 0 || (size_t)i >= n)
			continue;
		if (gf_admit_why(c, rules, (size_t)i, p) == GF_WHY_FITS && gf_cluster_fits(c, cat, (size_t)i, eff))
			return true;
	}
	r->seen = (uint32_t)g->end;
	return false;
}

uint64_t gf_report_key(const size_t counts[GF_WHY_COUNT_])
{
	uint64_t k = 1; /* non-zero even when nothing was counted (no nodes) */
	for (int w = 1; w < GF_WHY_COUNT_; w++)
		if (counts[w])
			k |= 1ull << w;
	return k;
}

bool gf_report_due(struct gf_report *r, uint64_t key, double now, double every)
{
	if (key == r->key && now - r->at < every)
		return false;
	r->key = key;
	r->at = now;
	return true;
}
