/*
 * cluster/model.c - the name catalog: GPU models and model constraints.
 *
 * Both tables are small (tens of entries in real clusters) and filled while
 * traces or API objects are read, so lookups are linear scans; the hot paths
 * of the engine only ever see the integer ids.
 */
#include <stdlib.h>
#include <string.h>

#include "cluster/model.h"
#include "core/grow.h"
#include "core/hash.h"

gf_err gf_catalog_init(struct gf_catalog *cat)
{
	memset(cat, 0, sizeof(*cat));
	cat->spec_cap = 16;
	cat->specs = calloc((size_t)cat->spec_cap, sizeof(*cat->specs));
	if (!cat->specs)
		return GF_NOMEM;
	cat->nspecs = 1;	/* id 0: "" = any model */
	return GF_OK;
}

void gf_catalog_release(struct gf_catalog *cat)
{
	free(cat->specs);
	memset(cat, 0, sizeof(*cat));
}

gf_err gf_catalog_model(struct gf_catalog *cat, const char *name, size_t len, int *id)
{
	if (len == 0 || len >= GF_NAME_MAX)
		return GF_INVAL;
	for (int i = 0; i < cat->nmodels; i++) {
		if (strlen(cat->models[i]) == len && !memcmp(cat->models[i], name, len)) {
			*id = i;
			return GF_OK;
		}
	}
	if (cat->nmodels == GF_MAX_MODELS)
		return GF_TOOBIG;
	memcpy(cat->models[cat->nmodels], name, len);
	cat->models[cat->nmodels][len] = '\0';
	*id = cat->nmodels++;
	return GF_OK;
}

gf_err gf_catalog_spec(struct gf_catalog *cat, const char *text, size_t len, int *id)
{
	char norm[GF_SPEC_MAX];
	size_t n = 0;
	uint64_t mask = 0;
	size_t i = 0;
	gf_err err;

	if (len >= GF_SPEC_MAX)
		return GF_TOOBIG;
	while (i < len) {
		size_t j = i;
		int model;

		while (j < len && text[j] != '|')
			j++;
		if (j > i) {
			err = gf_catalog_model(cat, text + i, j - i, &model);
			if (err)
				return err;
			mask |= 1ULL << model;
			if (n)
				norm[n++] = '|';
			memcpy(norm + n, text + i, j - i);
			n += j - i;
		}
		i = j + 1;
	}
	norm[n] = '\0';
	if (n == 0) {
		*id = 0;
		return GF_OK;
	}
	for (int s = 1; s < cat->nspecs; s++) {
		if (!strcmp(cat->specs[s].text, norm)) {
			*id = s;
			return GF_OK;
		}
	}
	if (cat->nspecs == GF_MAX_SPECS)
		return GF_TOOBIG;
	if (cat->nspecs == cat->spec_cap) {
		size_t cap = gf_grow_cap((size_t)cat->spec_cap, (size_t)cat->spec_cap + 1, 16, sizeof(*cat->specs));
		struct gf_spec_entry *p = cap ? realloc(cat->specs, cap * sizeof(*p)) : NULL;

		if (!p)
			return GF_NOMEM;
		cat->specs = p;
		cat->spec_cap = (int)cap; /* at most 2 * GF_MAX_SPECS */
	}
	memcpy(cat->specs[cat->nspecs].text, norm, n + 1);
	cat->specs[cat->nspecs].model_mask = mask;
	*id = cat->nspecs++;
	return GF_OK;
}

gf_err gf_gpu_milli_parse(const char *s, size_t len, int *out)
{
	long v = 0;
	size_t i = len && s[0] == '-';
	*out = 0;
	if (i == len)
		return GF_PARSE;
	for (; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return GF_PARSE;
		if (v < 99999999)
			v = v * 10 + (s[i] - '0');
	}
	if (v > 99999999)
		v = 99999999;
	*out = s[0] == '-' ? (int)-v : (int)v;
	return *out >= 1 && *out <= GF_MILLI_PER_GPU ? GF_OK : GF_RANGE;
}

uint64_t gf_served_model_key(const char *s, size_t len)
{
	if (!len)
		return 0;
	uint64_t h = gf_fnv1a(GF_FNV64_OFFSET, s, len);
	return h ? h : 1;
}
