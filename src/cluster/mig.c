/*
 * cluster/mig.c - MIG profile tables, partitions and the slice-level fragmentation.
 *
 * The tables are NVIDIA's (MIG user guide, "Supported MIG Profiles": profile
 * names, fraction of memory and SMs, instances available, placements).  A
 * profile's memory here is its fraction of the GPU's memory as named
 * (H100 80 GB: 1g.10gb = 1/8 of 80 x 1024 MiB); the driver reports a little
 * less, which moves no "smallest profile holding M" answer between profiles
 * of the same fraction.
 *
 * A partition is at most 7 instances, so every operation is a scan of them:
 * O(instances) for the masks, O(profiles x starts) = at most 6 x 7 for the
 * fragmentation, O(starts x profiles x starts) for the best start.  No heap.
 *
 * Fragmentation: free = popcount(free mask); for profile k, n_k = number of
 * legal starts s whose slices [s, s + size_k) are all free (the legal starts
 * of one profile are aligned to its size, so they never overlap and n_k is
 * exactly how many more k instances fit), capped by the free compute slices
 * / compute_k; x_k = free - size_k n_k; F = sum_k w_k x_k + w_free free.
 */
#include <stdio.h>
#include <string.h>

#include "cluster/mig.h"

#define S1_8 0x7Fu	/* starts 0..6 */
#define S2_8 0x55u	/* starts 0, 2, 4, 6 */
#define S2G_8 0x15u	/* starts 0, 2, 4 */
#define S4_8 0x11u	/* starts 0, 4 */
#define S0 0x01u	/* start 0 */

#define GIB 1024
#define SLICE8(gb, n) ((int64_t)(gb) * GIB * (n) / 8)

/* One row per model: name, slices, compute, memory, profiles smallest first. */
static const struct gf_mig_model_info models[GF_MIG_NMODELS] = {
	[GF_MIG_A30_24GB] = { "A30-24GB", 4, 4, 24 * GIB, 3, {
		{ "1g.6gb", 1, 1, 0x0Fu, 6 * GIB },
		{ "2g.12gb", 2, 2, 0x05u, 12 * GIB },
		{ "4g.24gb", 4, 4, S0, 24 * GIB },
	} },
	[GF_MIG_A100_40GB] = { "A100-40GB", 8, 7, 40 * GIB, 6, {
		{ "1g.5gb", 1, 1, S1_8, SLICE8(40, 1) },
		{ "1g.10gb", 1, 2, S2_8, SLICE8(40, 2) },
		{ "2g.10gb", 2, 2, S2G_8, SLICE8(40, 2) },
		{ "3g.20gb", 3, 4, S4_8, SLICE8(40, 4) },
		{ "4g.20gb", 4, 4, S0, SLICE8(40, 4) },
		{ "7g.40gb", 7, 8, S0, SLICE8(40, 8) },
	} },
	[GF_MIG_A100_80GB] = { "A100-80GB", 8, 7, 80 * GIB, 6, {
		{ "1g.10gb", 1, 1, S1_8, SLICE8(80, 1) },
		{ "1g.20gb", 1, 2, S2_8, SLICE8(80, 2) },
		{ "2g.20gb", 2, 2, S2G_8, SLICE8(80, 2) },
		{ "3g.40gb", 3, 4, S4_8, SLICE8(80, 4) },
		{ "4g.40gb", 4, 4, S0, SLICE8(80, 4) },
		{ "7g.80gb", 7, 8, S0, SLICE8(80, 8) },
	} },
	[GF_MIG_H100_80GB] = { "H100-80GB", 8, 7, 80 * GIB, 6, {
		{ "1g.10gb", 1, 1, S1_8, SLICE8(80, 1) },
		{ "1g.20gb", 1, 2, S2_8, SLICE8(80, 2) },
		{ "2g.20gb", 2, 2, S2G_8, SLICE8(80, 2) },
		{ "3g.40gb", 3, 4, S4_8, SLICE8(80, 4) },
		{ "4g.40gb", 4, 4, S0, SLICE8(80, 4) },
		{ "7g.80gb", 7, 8, S0, SLICE8(80, 8) },
	} },
	[GF_MIG_H200_141GB] = { "H200-141GB", 8, 7, 141 * GIB, 6, {
		{ "1g.18gb", 1, 1, S1_8, SLICE8(141, 1) },
		{ "1g.35gb", 1, 2, S2_8, SLICE8(141, 2) },
		{ "2g.35gb", 2, 2, S2G_8, SLICE8(141, 2) },
		{ "3g.71gb", 3, 4, S4_8, SLICE8(141, 4) },
		{ "4g.71gb", 4, 4, S0, SLICE8(141, 4) },
		{ "7g.141gb", 7, 8, S0, SLICE8(141, 8) },
	} },
};

const struct gf_mig_model_info *gf_mig_model(int model)
{
	return model >= 0 && model < GF_MIG_NMODELS ? &models[model] : NULL;
}

int gf_mig_model_find(const char *name)
{
	for (int m = 0; name && m < GF_MIG_NMODELS; m++)
		if (!strcmp(models[m].name, name))
			return m;
	return -1;
}

int gf_mig_profile_find(int model, const char *name)
{
	const struct gf_mig_model_info *mi = gf_mig_model(model);

	if (!mi || !name)
		return -1;
	if (!strncmp(name, "nvidia.com/", 11))
		name += 11;
	if (!strncmp(name, "mig-", 4))
		name += 4;
	for (int k = 0; k < mi->nprofiles; k++)
		if (!strcmp(mi->profiles[k].name, name))
			return k;
	return -1;
}

int gf_mig_profile_for_mem(int model, int64_t mib)
{
	const struct gf_mig_model_info *mi = gf_mig_model(model);

	if (!mi || mib <= 0)
		return -1;
	for (int k = 0; k < mi->nprofiles; k++) /* the table is ordered smallest first */
		if (mi->profiles[k].mem_mib >= mib)
			return k;
	return -1;
}

gf_err gf_mig_gpu_init(struct gf_mig_gpu *g, int model, bool mig)
{
	if (!gf_mig_model(model))
		return GF_INVAL;
	memset(g, 0, sizeof(*g));
	g->model = (int8_t)model;
	g->mig = mig;
	g->milli_free = mig ? 0 : 1000;
	return GF_OK;
}

static unsigned span(int start, int size)
{
	return ((1u << size) - 1u) << start;
}

unsigned gf_mig_free_mask(const struct gf_mig_gpu *g)
{
	const struct gf_mig_model_info *mi = gf_mig_model(g->model);
	unsigned m;

	if (!g->mig || !mi)
		return 0;
	m = (1u << mi->nslices) - 1u;
	for (int i = 0; i < g->ninst; i++)
		m &= ~span(g->inst[i].start, mi->profiles[g->inst[i].profile].size);
	return m;
}

int gf_mig_free_compute(const struct gf_mig_gpu *g)
{
	const struct gf_mig_model_info *mi = gf_mig_model(g->model);
	int c;

	if (!g->mig || !mi)
		return 0;
	c = mi->ncompute;
	for (int i = 0; i < g->ninst; i++)
		c -= mi->profiles[g->inst[i].profile].compute;
	return c;
}

bool gf_mig_can_create(const struct gf_mig_gpu *g, int profile, int start)
{
	const struct gf_mig_model_info *mi = gf_mig_model(g->model);
	const struct gf_mig_profile *p;

	if (!g->mig || !mi || profile < 0 || profile >= mi->nprofiles || start < 0 ||
	    start >= mi->nslices || g->ninst >= GF_MIG_MAX_INSTANCES)
		return false;
	p = &mi->profiles[profile];
	if (!((p->starts >> start) & 1u))
		return false;
	unsigned need = span(start, p->size);

	return (gf_mig_free_mask(g) & need) == need && gf_mig_free_compute(g) >= p->compute;
}

int gf_mig_first_start(const struct gf_mig_gpu *g, int profile)
{
	for (int s = 0; s < GF_MIG_MAX_SLICES; s++)
		if (gf_mig_can_create(g, profile, s))
			return s;
	return -1;
}

gf_err gf_mig_create(struct gf_mig_gpu *g, int profile, int start, int *idx)
{
	const struct gf_mig_model_info *mi = gf_mig_model(g->model);

	if (!g->mig || !mi || profile < 0 || profile >= mi->nprofiles || start < 0 ||
	    start >= mi->nslices || !((mi->profiles[profile].starts >> start) & 1u))
		return GF_INVAL;
	if (!gf_mig_can_create(g, profile, start))
		return GF_STATE;
	g->inst[g->ninst] = (struct gf_mig_instance){ .profile = (int8_t)profile, .start = (uint8_t)start };
	if (idx)
		*idx = g->ninst;
	g->ninst++;
	return GF_OK;
}

gf_err gf_mig_destroy(struct gf_mig_gpu *g, int idx)
{
	if (idx < 0 || idx >= g->ninst)
		return GF_RANGE;
	if (g->inst[idx].pods)
		return GF_STATE;
	memmove(&g->inst[idx], &g->inst[idx + 1], (size_t)(g->ninst - idx - 1) * sizeof(g->inst[0]));
	g->ninst--;
	return GF_OK;
}

gf_err gf_mig_check(const struct gf_mig_gpu *g, char *why, size_t whylen)
{
	const struct gf_mig_model_info *mi = gf_mig_model(g->model);
	unsigned used = 0;
	int compute = 0;
	char tmp[8];

	if (!why) {
		why = tmp;
		whylen = sizeof(tmp);
	}
	if (!mi) {
		snprintf(why, whylen, "unknown MIG model %d", g->model);
		return GF_STATE;
	}
	if (!g->mig) {
		if (g->ninst || g->milli_free > 1000) {
			snprintf(why, whylen, "a GPU outside MIG mode holds %d instance(s), %u milli free",
				 g->ninst, g->milli_free);
			return GF_STATE;
		}
		return GF_OK;
	}
	if (g->ninst > GF_MIG_MAX_INSTANCES || g->milli_free) {
		snprintf(why, whylen, "%d instances, %u milli free on a MIG-mode GPU", g->ninst, g->milli_free);
		return GF_STATE;
	}
	for (int i = 0; i < g->ninst; i++) {
		const struct gf_mig_instance *in = &g->inst[i];
		const struct gf_mig_profile *p;

		if (in->profile < 0 || in->profile >= mi->nprofiles) {
			snprintf(why, whylen, "instance %d: unknown profile %d", i, in->profile);
			return GF_STATE;
		}
		p = &mi->profiles[in->profile];
		if (in->start >= mi->nslices || !((p->starts >> in->start) & 1u)) {
			snprintf(why, whylen, "instance %d: %s may not start at slot %u on %s", i, p->name,
				 in->start, mi->name);
			return GF_STATE;
		}
		if (used & span(in->start, p->size)) {
			snprintf(why, whylen, "instance %d: %s at slot %u overlaps another instance", i,
				 p->name, in->start);
			return GF_STATE;
		}
		used |= span(in->start, p->size);
		compute += p->compute;
	}
	if (compute > mi->ncompute) {
		snprintf(why, whylen, "%d compute slices in use, the GPU has %d", compute, mi->ncompute);
		return GF_STATE;
	}
	return GF_OK;
}

/* n_k for a free mask and free compute. */
static int fit_count(const struct gf_mig_profile *p, unsigned mask, int free_compute, int nslices,
		     int free_inst)
{
	int n = 0;

	for (int s = 0; s + p->size <= nslices; s++) {
		unsigned need = span(s, p->size);

		if (((p->starts >> s) & 1u) && (mask & need) == need)
			n++;
	}
	if (n > free_compute / p->compute)
		n = free_compute / p->compute;
	return n < free_inst ? n : free_inst;
}

int gf_mig_fit_count(const struct gf_mig_gpu *g, int profile)
{
	const struct gf_mig_model_info *mi = gf_mig_model(g->model);

	if (!g->mig || !mi || profile < 0 || profile >= mi->nprofiles)
		return 0;
	return fit_count(&mi->profiles[profile], gf_mig_free_mask(g), gf_mig_free_compute(g),
			 mi->nslices, GF_MIG_MAX_INSTANCES - g->ninst);
}

static double frag_of(const struct gf_mig_model_info *mi, unsigned mask, int free_compute,
		      int free_inst, const double *w, double w_free)
{
	int free = __builtin_popcount(mask);
	double f = w_free * free;

	for (int k = 0; k < mi->nprofiles; k++) {
		if (w[k] == 0)
			continue;
		const struct gf_mig_profile *p = &mi->profiles[k];
		int n = fit_count(p, mask, free_compute, mi->nslices, free_inst);

		f += w[k] * (free - p->size * n);
	}
	return f;
}

double gf_mig_frag(const struct gf_mig_gpu *g, const double *w, double w_free)
{
	const struct gf_mig_model_info *mi = gf_mig_model(g->model);

	if (!g->mig || !mi)
		return 0;
	return frag_of(mi, gf_mig_free_mask(g), gf_mig_free_compute(g), GF_MIG_MAX_INSTANCES - g->ninst,
		       w, w_free);
}

void gf_mig_slack_table(int model, uint8_t out[256][GF_MIG_MAX_PROFILES])
{
	const struct gf_mig_model_info *mi = gf_mig_model(model);

	memset(out, 0, 256 * sizeof(out[0]));
	if (!mi)
		return;
	for (unsigned m = 0; m < (1u << mi->nslices); m++) {
		int free = __builtin_popcount(m);

		for (int k = 0; k < mi->nprofiles; k++) {
			const struct gf_mig_profile *p = &mi->profiles[k];

			out[m][k] = (uint8_t)(free - p->size * fit_count(p, m, mi->ncompute, mi->nslices,
									 GF_MIG_MAX_INSTANCES));
		}
	}
}

int gf_mig_best_start(const struct gf_mig_gpu *g, int profile, const double *w, double w_free,
		      double *frag_after)
{
	const struct gf_mig_model_info *mi = gf_mig_model(g->model);
	unsigned mask;
	int best = -1, fc, fi;
	double bestf = 0;

	if (!g->mig || !mi || profile < 0 || profile >= mi->nprofiles)
		return -1;
	mask = gf_mig_free_mask(g);
	fc = gf_mig_free_compute(g) - mi->profiles[profile].compute;
	fi = GF_MIG_MAX_INSTANCES - g->ninst - 1;
	for (int s = 0; s < mi->nslices; s++) {
		if (!gf_mig_can_create(g, profile, s))
			continue;
		double f = frag_of(mi, mask & ~span(s, mi->profiles[profile].size), fc, fi, w, w_free);

		if (best < 0 || f < bestf - 1e-12) {
			best = s;
			bestf = f;
		}
	}
	if (best >= 0 && frag_after)
		*frag_after = bestf;
	return best;
}

int gf_mig_layouts(int model, struct gf_mig_layout *out, int max)
{
	const struct gf_mig_model_info *mi = gf_mig_model(model);
	int n = 0;

	if (!mi)
		return 0;
	for (int k = 0; k < mi->nprofiles; k++, n++) {
		struct gf_mig_gpu g;

		if (n >= max)
			continue;
		memset(&out[n], 0, sizeof(out[n]));
		snprintf(out[n].name, sizeof(out[n].name), "all-%s", mi->profiles[k].name);
		gf_mig_gpu_init(&g, model, true);
		out[n].count[k] = (uint8_t)gf_mig_fit_count(&g, k);
	}
	if (n < max) {
		memset(&out[n], 0, sizeof(out[n]));
		snprintf(out[n].name, sizeof(out[n].name), "all-balanced");
		out[n].count[0] = 2;	/* 1g */
		if (mi->nslices == 8) {
			out[n].count[2] = 1;	/* 2g */
			out[n].count[3] = 1;	/* 3g */
		} else {
			out[n].count[1] = 1;	/* A30: 2g.12gb */
		}
	}
	return n + 1;
}

gf_err gf_mig_apply_layout(struct gf_mig_gpu *g, const struct gf_mig_layout *layout)
{
	const struct gf_mig_model_info *mi = gf_mig_model(g->model);
	struct gf_mig_gpu t = *g;
	int order[GF_MIG_MAX_PROFILES], n = 0;

	if (!g->mig || !mi)
		return GF_INVAL;
	if (g->ninst)
		return GF_STATE;
	for (int k = 0; k < mi->nprofiles; k++)
		order[n++] = k;
	/* Largest first: more slices, then more compute (insertion sort of at most 6). */
	for (int i = 1; i < n; i++) {
		int k = order[i], j = i;

		while (j > 0 && (mi->profiles[order[j - 1]].size < mi->profiles[k].size ||
				 (mi->profiles[order[j - 1]].size == mi->profiles[k].size &&
				  mi->profiles[order[j - 1]].compute < mi->profiles[k].compute))) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = k;
	}
	for (int i = 0; i < n; i++) {
		int k = order[i];

		for (int c = 0; c < layout->count[k]; c++) {
			int s;

			for (s = mi->nslices - 1; s >= 0; s--)
				if (gf_mig_can_create(&t, k, s))
					break;
			if (s < 0 || gf_mig_create(&t, k, s, NULL))
				return GF_STATE;
		}
	}
	*g = t;
	return GF_OK;
}
