/*
 * core/features.c - defaults and names of the GF_FEATURE_LIST switches.
 */
#include <string.h>

#include "core/features.h"

static const char *const feature_names[] = {
#define GF_FEATURE_NAME_(name, dflt) #name,
	GF_FEATURE_LIST(GF_FEATURE_NAME_)
#undef GF_FEATURE_NAME_
};

struct gf_features gf_features_default(void)
{
	struct gf_features f = { .on = {
#define GF_FEATURE_DFLT_(name, dflt) [GF_FEAT_##name] = (dflt),
		GF_FEATURE_LIST(GF_FEATURE_DFLT_)
#undef GF_FEATURE_DFLT_
	} };
	return f;
}

const char *gf_feature_name(enum gf_feature f)
{
	if ((unsigned)f >= (unsigned)GF_FEAT_COUNT_)
		return NULL;
	return feature_names[f];
}

bool gf_feature_lookup(const char *name, enum gf_feature *out)
{
	for (int i = 0; i < GF_FEAT_COUNT_; i++) {
		if (!strcmp(name, feature_names[i])) {
			*out = (enum gf_feature)i;
			return true;
		}
	}
	return false;
}
