/*
 * cluster/frag.c - target workload and node fragmentation (FGD, ATC'23).
 *
 * Building T: an O(n log n) sort of the pods by shape key, one pass to count,
 * one sort of the distinct shapes by popularity.  T is fixed for a run.
 *
 * F_n: O(classes x GPUs), about 35 x 8 for the openb traces.  Summation runs
 * over the classes in popularity order in IEEE double, as the reference
 * simulator does, so floor() boundaries in FGD's score land where its do.
 */
#include <stdlib.h>
#include <string.h>

#include "cluster/frag.h"
#include "core/sort.h"

struct shape_count {
	struct gf_frag_class c;
	const char *spec_text;
};


static int cmp_key(const struct gf_frag_class *a, const struct gf_frag_class *b,
		   const char *as, const char *bs)
{
	if (a->cpu_milli != b->cpu_milli)
		return a->cpu_milli < b->cpu_milli ? -1 : 1;
	if (a->gpu_milli != b->gpu_milli)
		return a->gpu_milli < b->gpu_milli ? -1 : 1;
	if (a->gpu_count != b->gpu_count)
		return a->gpu_count < b->gpu_count ? -1 : 1;
	return strcmp(as, bs);
}

/* Ascending by key: groups equal shapes for counting. */
static int cmp_shape_key(const void *pa, const void *pb)
{
	const struct shape_count *a = pa, *b = pb;

	return cmp_key(&a->c, &b->c, a->spec_text, b->spec_text);
}

/* Popularity descending, then key descending. */
static int cmp_popularity(const void *pa, const void *pb)
{
	const struct shape_count *a = pa, *b = pb;

	if (a->c.pods != b->c.pods)
		return a->c.pods > b->c.pods ? -1 : 1;
	return -cmp_key(&a->c, &b->c, a->spec_text, b->spec_text);
}

gf_err gf_target_build(const struct gf_pod_spec *pods, size_t n, const struct gf_catalog *cat,
		       int threshold_pct, struct gf_target *out)
{
	struct shape_count *all;
	size_t ndist = 0;
	uint64_t cum = 0;
	int kept = 0;

	memset(out, 0, sizeof(*out));
	if (n == 0 || threshold_pct <= 0 || threshold_pct > 100)
		return GF_INVAL;
	all = malloc(n * sizeof(*all));
	if (!all)
		return GF_NOMEM;
	for (size_t i = 0; i < n; i++) {
		struct gf_frag_class *c = &all[i].c;

		c->cpu_milli = pods[i].cpu_milli;
		c->gpu_count = pods[i].gpu_count;
		c->gpu_milli = pods[i].gpu_count ? pods[i].gpu_milli : 0;
		c->spec = pods[i].gpu_count ? pods[i].spec : 0;
		c->pods = 1;
		all[i].spec_text = cat->specs[c->spec].text;
	}
	gf_qsort(all, n, sizeof(*all), cmp_shape_key);
	for (size_t i = 0; i < n; i++) {
		if (ndist && !cmp_shape_key(&all[ndist - 1], &all[i]))
			all[ndist - 1].c.pods++;
		else
			all[ndist++] = all[i];
	}
	gf_qsort(all, ndist, sizeof(*all), cmp_popularity);
	while ((size_t)kept < ndist && cum * 100 < (uint64_t)threshold_pct * n)
		cum += all[kept++].c.pods;

	out->cls = malloc((size_t)kept * sizeof(*out->cls));
	out->acc = malloc((size_t)kept * (GF_MAX_MODELS + 1) * sizeof(*out->acc));
	if (!out->cls || !out->acc) {
		free(all);
		gf_target_release(out);
		return GF_NOMEM;
	}
	out->nclasses = kept;
	out->ndistinct = (int)ndist;
	out->kept_pods = (uint32_t)cum;
	for (int k = 0; k < kept; k++) {
		out->cls[k] = all[k].c;
		out->cls[k].p = (double)all[k].c.pods / (double)cum;
		if (out->cls[k].gpu_milli > 0 && out->cls[k].cpu_milli > out->max_cpu_gpu)
			out->max_cpu_gpu = out->cls[k].cpu_milli;
		for (int m = 0; m <= GF_MAX_MODELS; m++)	/* row GF_MAX_MODELS: no model */
			out->acc[m * kept + k] = gf_catalog_allows(cat, out->cls[k].spec,
								   m < GF_MAX_MODELS ? m : -1);
	}
	free(all);
	return GF_OK;
}

void gf_target_release(struct gf_target *t)
{
	free(t->cls);
	free(t->acc);
	memset(t, 0, sizeof(*t));
}

double gf_frag_node(const struct gf_target *t, int model, int64_t cpu_free, const uint16_t *g,
		    int ngpus)
{
	const bool *acc = &t->acc[(model >= 0 ? model : GF_MAX_MODELS) * t->nclasses];
	double total = 0, f = 0;

	for (int i = 0; i < ngpus; i++)
		total += g[i];
	if (total == 0)
		return 0;
	for (int k = 0; k < t->nclasses; k++) {
		const struct gf_frag_class *c = &t->cls[k];
		int fit = 0;
		int32_t small = 0;

		if (c->gpu_milli == 0 || !acc[k] || cpu_free < c->cpu_milli) {
			f += c->p * total;
			continue;
		}
		for (int i = 0; i < ngpus; i++) {
			if (g[i] >= c->gpu_milli)
				fit++;
			else
				small += g[i];
		}
		f += c->p * (fit >= c->gpu_count ? (double)small : total);
	}
	return f;
}
