/*
 * agent/dp_match.c - decoding of the pending pods' assignments for the
 * device plugin (see dp_match.h).  O(pods x containers); pods sorted with
 * qsort on (order, creationTimestamp, uid).  order is the scheduler's
 * assigned-at stamp, or the API server's creationTimestamp (whole seconds,
 * "...:SSZ") widened to the stamp's form "...:SS.000000Z": both are UTC
 * with fixed-width fields, so they compare as strings.
 */
#include "agent/dp_match.h"
#include "core/sort.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "k8s/codec.h"

static const char *str_at(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static bool copy(char *dst, size_t n, const char *s)
{
	if (!s || strlen(s) >= n)
		return false;
	memcpy(dst, s, strlen(s) + 1);
	return true;
}

/* "GPU-a,GPU-b" -> uuids. */
static bool split_uuids(const char *s, struct gf_dp_pod *p)
{
	p->nuuids = 0;
	while (*s) {
		const char *e = strchr(s, ',');
		size_t n = e ? (size_t)(e - s) : strlen(s);
		if (n == 0 || n >= sizeof(p->uuids[0]) || p->nuuids == GF_DP_MATCH_MAX_GPUS)
			return false;
		memcpy(p->uuids[p->nuuids], s, n);
		p->uuids[p->nuuids][n] = '\0';
		p->nuuids++;
		s = e ? e + 1 : s + n;
	}
	return p->nuuids > 0;
}

/* "250" or "250,250" (per GPU; all equal for one allocation) -> 250. */
static bool parse_milli(const char *s, unsigned *out)
{
	unsigned v = 0, first = 0;
	bool any = false, digit = false;
	for (;; s++) {
		if (*s >= '0' && *s <= '9') {
			v = v * 10 + (unsigned)(*s - '0');
			digit = true;
			if (v > 1000)
				return false;
		} else if (*s == ',' || *s == '\0') {
			if (!digit || v == 0 || (any && v != first))
				return false;
			first = v;
			any = true;
			v = 0;
			digit = false;
			if (*s == '\0')
				break;
		} else {
			return false;
		}
	}
	*out = first;
	return any;
}

static bool digits_at(const char *s, const char *shape)
{
	for (; *shape; s++, shape++)
		if (*shape == 'd' ? !(*s >= '0' && *s <= '9') : *s != *shape)
			return false;
	return *s == '\0';
}

/* The sort key from assigned-at (NULL: absent) or the creation time; false
 * for a malformed assigned-at. */
static bool order_key(char out[28], const char *assigned_at, const char *created)
{
	static const char stamp[] = "dddd-dd-ddTdd:dd:dd.ddddddZ", sec[] = "dddd-dd-ddTdd:dd:ddZ";
	if (assigned_at) {
		if (!digits_at(assigned_at, stamp))
			return false;
		memcpy(out, assigned_at, sizeof(stamp));
	} else if (created && digits_at(created, sec)) {
		snprintf(out, 28, "%.19s.000000Z", created);
	} else {
		out[0] = '\0'; /* no usable time: first, as before any stamp */
	}
	return true;
}

static unsigned containers_asking(const cJSON *spec, const char *resource)
{
	unsigned n = 0;
	const cJSON *c;
	cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(spec, "containers"))
	{
		const cJSON *res = cJSON_GetObjectItemCaseSensitive(c, "resources");
		if (cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(res, "limits"), resource) ||
		    cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(res, "requests"), resource))
			n++;
	}
	return n;
}

static int cmp_pod(const void *a, const void *b)
{
	const struct gf_dp_pod *x = a, *y = b;
	int c = strcmp(x->order, y->order);
	if (!c)
		c = strcmp(x->created, y->created);
	return c ? c : strcmp(x->uid, y->uid);
}

unsigned gf_dp_pods_decode(const cJSON *list, const char *resource, struct gf_dp_pod *pods, unsigned max,
			   unsigned *skipped)
{
	unsigned n = 0;
	const cJSON *item;
	*skipped = 0;
	cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(list, "items"))
	{
		if (n == max)
			break;
		const cJSON *md = cJSON_GetObjectItemCaseSensitive(item, "metadata");
		const cJSON *ann = cJSON_GetObjectItemCaseSensitive(md, "annotations");
		const char *uuids = str_at(ann, GF_ANN_UUIDS), *milli = str_at(ann, GF_ANN_AMILLI);
		unsigned asking = containers_asking(cJSON_GetObjectItemCaseSensitive(item, "spec"), resource);
		if (!asking || !uuids || !milli)
			continue;
		struct gf_dp_pod *p = &pods[n];
		memset(p, 0, sizeof(*p));
		if (!copy(p->uid, sizeof(p->uid), str_at(md, "uid")) || !copy(p->ns, sizeof(p->ns), str_at(md, "namespace")) ||
		    !copy(p->name, sizeof(p->name), str_at(md, "name")) || !split_uuids(uuids, p) ||
		    !parse_milli(milli, &p->milli) ||
		    !order_key(p->order, str_at(ann, GF_ANN_ASSIGNED_AT), str_at(md, "creationTimestamp"))) {
			(*skipped)++;
			continue;
		}
		copy(p->created, sizeof(p->created), str_at(md, "creationTimestamp"));
		p->containers = asking;
		n++;
	}
	gf_qsort(pods, n, sizeof(pods[0]), cmp_pod);
	return n;
}

int gf_dp_find_pod(const struct gf_dp_pod *pods, unsigned n, const unsigned *used, const char *const *uuids,
		   unsigned nu, unsigned units)
{
	for (unsigned k = 0; k < n; k++)
		if (used[k] < pods[k].containers && gf_dp_pod_matches(&pods[k], uuids, nu, units))
			return (int)k;
	return -1;
}

bool gf_dp_pod_matches(const struct gf_dp_pod *p, const char *const *uuids, unsigned n, unsigned units)
{
	if (units ? (p->nuuids != 1 || p->milli != units) : p->milli != 1000)
		return false;
	if (p->nuuids != n)
		return false;
	for (unsigned i = 0; i < n; i++) {
		bool found = false;
		for (unsigned j = 0; j < p->nuuids && !found; j++)
			found = strcmp(uuids[i], p->uuids[j]) == 0;
		if (!found)
			return false;
	}
	return true;
}
