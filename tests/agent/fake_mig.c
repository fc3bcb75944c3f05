/*
 * tests/agent/fake_mig.c - the FAKE NVML's MIG management calls (see
 * fake_mig.h), with the rules a driver applies:
 *
 *   - MIG mode changes only with no process on the GPU and, to disable,
 *     no GPU instance left (NVML_ERROR_IN_USE otherwise); a GPU model
 *     without MIG (not A100/H100/H200 by name) answers NOT_SUPPORTED.
 *   - A GPU instance is created only at a legal (start, size) placement of
 *     its profile (INVALID_ARGUMENT otherwise), on memory slices no other
 *     instance holds and within the profile's instance count
 *     (INSUFFICIENT_RESOURCES otherwise).
 *   - A GPU instance with a compute instance, or a compute instance whose
 *     GPU instance runs a process (scripted `proc ... gi=ID`), is not
 *     destroyed (IN_USE).
 *   - The profile argument is the profile index (nvmlGpuInstanceProfile)
 *     for nvmlDeviceGetGpuInstanceProfileInfoV only; the create, placement
 *     and list calls take the profile id it returns (info.id), as NVML's.
 *   - One compute instance per GPU instance, of the full-size compute
 *     profile (what mig-parted and the device plugin use); smaller compute
 *     profiles answer NOT_SUPPORTED (a limit of the fake).
 *
 * GPU-instance ids: the lowest free id from 1 (the real driver derives them
 * from the placement; nothing in the agent relies on which).  MIG UUIDs:
 * "MIG-" and a UUID hashed from the GPU UUID, the GI id and a generation
 * counter, so an instance made again gets a new UUID, as on a real GPU.
 * Every change is written to the state file at once (tmp + rename).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/nvml_abi.h"
#include "fake_mig.h"

#define API(ret, name, args) \
	ret name args;       \
	ret name args

/* ---- the profile tables (the three MIG models' real placements) ---- */

#define B(n) (1u << (n))
static const struct fake_mig_profile a100_80[] = { /* also H100 80GB */
	{ 0, 19, "1g.10gb", 1, 7, 1, 9728, B(0) | B(1) | B(2) | B(3) | B(4) | B(5) | B(6) },
	{ 9, 15, "1g.20gb", 1, 4, 2, 19968, B(0) | B(2) | B(4) | B(6) },
	{ 1, 14, "2g.20gb", 2, 3, 2, 19968, B(0) | B(2) | B(4) },
	{ 2, 9, "3g.40gb", 3, 2, 4, 40192, B(0) | B(4) },
	{ 3, 5, "4g.40gb", 4, 1, 4, 40192, B(0) },
	{ 4, 0, "7g.80gb", 7, 1, 8, 80384, B(0) },
};
static const struct fake_mig_profile a100_40[] = {
	{ 0, 19, "1g.5gb", 1, 7, 1, 4864, B(0) | B(1) | B(2) | B(3) | B(4) | B(5) | B(6) },
	{ 9, 15, "1g.10gb", 1, 4, 2, 9856, B(0) | B(2) | B(4) | B(6) },
	{ 1, 14, "2g.10gb", 2, 3, 2, 9856, B(0) | B(2) | B(4) },
	{ 2, 9, "3g.20gb", 3, 2, 4, 19968, B(0) | B(4) },
	{ 3, 5, "4g.20gb", 4, 1, 4, 19968, B(0) },
	{ 4, 0, "7g.40gb", 7, 1, 8, 40192, B(0) },
};
static const struct fake_mig_profile h200[] = {
	{ 0, 19, "1g.18gb", 1, 7, 1, 16384, B(0) | B(1) | B(2) | B(3) | B(4) | B(5) | B(6) },
	{ 9, 15, "1g.35gb", 1, 4, 2, 32768, B(0) | B(2) | B(4) | B(6) },
	{ 1, 14, "2g.35gb", 2, 3, 2, 32768, B(0) | B(2) | B(4) },
	{ 2, 9, "3g.71gb", 3, 2, 4, 69632, B(0) | B(4) },
	{ 3, 5, "4g.71gb", 4, 1, 4, 69632, B(0) },
	{ 4, 0, "7g.141gb", 7, 1, 8, 143360, B(0) },
};
#define NPROF 6

static const struct fake_mig_profile *model_table(const struct fake_gpu *g)
{
	if (strstr(g->name, "H200"))
		return h200;
	bool small = (g->set >> FK_mem_total_mib & 1) && g->v[FK_mem_total_mib] < 50000;
	if (strstr(g->name, "A100"))
		return small || strstr(g->name, "40GB") ? a100_40 : a100_80;
	if (strstr(g->name, "H100"))
		return a100_80;
	return NULL;
}

const struct fake_mig_profile *fake_mig_profile(const struct fake_gpu *g, unsigned idx)
{
	const struct fake_mig_profile *t = model_table(g);
	for (unsigned i = 0; t && i < NPROF; i++)
		if (t[i].idx == idx)
			return &t[i];
	return NULL;
}

/* By profile id (info.id): what the create, placement and list calls take. */
static const struct fake_mig_profile *profile_by_id(const struct fake_gpu *g, unsigned id)
{
	const struct fake_mig_profile *t = model_table(g);
	for (unsigned i = 0; t && i < NPROF; i++)
		if (t[i].id == id)
			return &t[i];
	return NULL;
}

/* ---- driver state, keyed by GPU UUID ---- */

struct drv_gpu {
	char uuid[96];
	int mode; /* -1 never set by the API */
	struct fake_drv_gi gi[FAKE_MAX_MIG];
};
static struct drv_gpu drv[FAKE_MAX_GPUS];
static unsigned ndrv;
static unsigned long long generation;
static char mig_path[4200];
/* GPU-instance and compute-instance handles: stable pointers per (GPU, slot). */
struct inst_handle {
	unsigned gpu, slot;
};
static struct inst_handle gih[FAKE_MAX_GPUS][FAKE_MAX_MIG], cih[FAKE_MAX_GPUS][FAKE_MAX_MIG];

static struct drv_gpu *drv_by_uuid(const char *uuid, bool create)
{
	for (unsigned i = 0; i < ndrv; i++)
		if (!strcmp(drv[i].uuid, uuid))
			return &drv[i];
	if (!create || ndrv == FAKE_MAX_GPUS || strlen(uuid) >= sizeof(drv[0].uuid))
		return NULL;
	struct drv_gpu *d = &drv[ndrv++];
	memset(d, 0, sizeof(*d));
	memcpy(d->uuid, uuid, strlen(uuid) + 1);
	d->mode = -1;
	return d;
}

static struct drv_gpu *drv_of(unsigned gpu, bool create)
{
	struct fake_state *st = fake_current();
	if (!st || gpu >= st->ngpus)
		return NULL;
	return drv_by_uuid(st->gpus[gpu].uuid, create);
}

int fake_mig_mode(unsigned gpu)
{
	struct fake_state *st = fake_current();
	struct drv_gpu *d = drv_of(gpu, false);
	if (d && d->mode >= 0)
		return d->mode;
	const struct fake_gpu *g = &st->gpus[gpu];
	return (g->set >> FK_mig & 1) ? (int)g->v[FK_mig] : -1;
}

const struct fake_drv_gi *fake_mig_slot(unsigned gpu, unsigned slot)
{
	struct drv_gpu *d = drv_of(gpu, false);
	return d && slot < FAKE_MAX_MIG && d->gi[slot].used ? &d->gi[slot] : NULL;
}

int fake_mig_device(unsigned gpu, unsigned i)
{
	struct drv_gpu *d = drv_of(gpu, false);
	if (!d || fake_mig_mode(gpu) != 1)
		return -1;
	/* GIs with a CI, by GI id: selection by rank i. */
	unsigned last = 0;
	bool first = true;
	for (unsigned k = 0; k <= i; k++) {
		int best = -1;
		for (unsigned s = 0; s < FAKE_MAX_MIG; s++) {
			const struct fake_drv_gi *x = &d->gi[s];
			if (!x->used || !x->ci || (!first && x->id <= last))
				continue;
			if (best < 0 || x->id < d->gi[best].id)
				best = (int)s;
		}
		if (best < 0)
			return -1;
		last = d->gi[best].id;
		first = false;
		if (k == i)
			return best;
	}
	return -1;
}

static void save(void)
{
	if (!mig_path[0])
		return;
	char tmp[sizeof(mig_path) + 8];
	snprintf(tmp, sizeof(tmp), "%s.tmp", mig_path);
	FILE *f = fopen(tmp, "w");
	if (!f) {
		fprintf(stderr, "fake NVML: cannot write MIG state %s: %s\n", tmp, strerror(errno));
		return;
	}
	fprintf(f, "# FAKE NVML driver state (MIG); written by the fake after each change\n");
	fprintf(f, "gen %llu\n", generation);
	for (unsigned i = 0; i < ndrv; i++) {
		if (drv[i].mode >= 0)
			fprintf(f, "mode %s %d\n", drv[i].uuid, drv[i].mode);
		for (unsigned s = 0; s < FAKE_MAX_MIG; s++) {
			const struct fake_drv_gi *x = &drv[i].gi[s];
			if (x->used)
				fprintf(f, "gi %s %u %u %u %d %s\n", drv[i].uuid, x->id, x->profile, x->start,
					x->ci ? 1 : 0, x->uuid);
		}
	}
	if (fclose(f) != 0 || rename(tmp, mig_path) != 0)
		fprintf(stderr, "fake NVML: cannot write MIG state %s: %s\n", mig_path, strerror(errno));
}

static bool word(char **s, char *out, size_t n)
{
	while (**s == ' ')
		(*s)++;
	size_t l = strcspn(*s, " \n");
	if (!l || l >= n)
		return false;
	memcpy(out, *s, l);
	out[l] = '\0';
	*s += l;
	return true;
}

static bool uword(char **s, unsigned long long max, unsigned long long *v)
{
	char w[32], *end;
	if (!word(s, w, sizeof(w)))
		return false;
	errno = 0;
	*v = strtoull(w, &end, 10);
	return !errno && !*end && *v <= max;
}

void fake_mig_reset(void)
{
	memset(drv, 0, sizeof(drv));
	ndrv = 0;
	generation = 0;
	for (unsigned g = 0; g < FAKE_MAX_GPUS; g++)
		for (unsigned s = 0; s < FAKE_MAX_MIG; s++) {
			gih[g][s] = (struct inst_handle){ g, s };
			cih[g][s] = (struct inst_handle){ g, s };
		}
}

void fake_mig_load(const char *state_path)
{
	fake_mig_reset();
	const char *p = getenv("GF_FAKE_NVML_MIG_STATE");
	if (p && *p)
		snprintf(mig_path, sizeof(mig_path), "%s", p);
	else
		snprintf(mig_path, sizeof(mig_path), "%s.mig", state_path);
	FILE *f = fopen(mig_path, "r");
	if (!f)
		return; /* no MIG state yet: a freshly booted node */
	char line[512];
	unsigned ln = 0;
	while (fgets(line, sizeof(line), f)) {
		ln++;
		char *s = line, kw[8], uuid[96];
		unsigned long long a, b, c, d;
		if (line[0] == '#' || line[0] == '\n' || !word(&s, kw, sizeof(kw)))
			continue;
		bool ok = false;
		if (!strcmp(kw, "gen")) {
			ok = uword(&s, ~0ULL, &a);
			if (ok)
				generation = a;
		} else if (!strcmp(kw, "mode")) {
			struct drv_gpu *g;
			ok = word(&s, uuid, sizeof(uuid)) && uword(&s, 1, &a) && (g = drv_by_uuid(uuid, true));
			if (ok)
				g->mode = (int)a;
		} else if (!strcmp(kw, "gi")) {
			char mu[64];
			struct drv_gpu *g = NULL;
			ok = word(&s, uuid, sizeof(uuid)) && uword(&s, 1000, &a) && uword(&s, 14, &b) &&
			     uword(&s, 7, &c) && uword(&s, 1, &d) && word(&s, mu, sizeof(mu)) &&
			     (g = drv_by_uuid(uuid, true));
			unsigned slot = 0;
			while (ok && slot < FAKE_MAX_MIG && g->gi[slot].used)
				slot++;
			ok = ok && slot < FAKE_MAX_MIG;
			if (ok) {
				struct fake_drv_gi *x = &g->gi[slot];
				x->used = true;
				x->id = (unsigned)a;
				x->profile = (unsigned)b;
				x->start = (unsigned)c;
				x->ci = d != 0;
				memcpy(x->uuid, mu, strlen(mu) + 1);
			}
		}
		if (!ok)
			fprintf(stderr, "fake NVML: %s:%u: bad MIG state line, ignored\n", mig_path, ln);
	}
	fclose(f);
}

/* ---- the NVML calls ---- */

/* A full-GPU handle: its GPU, its scripted state, its driver state. */
#define GPU_DEV(h)                                                        \
	struct fake_gpu *g;                                               \
	unsigned gpu;                                                     \
	int slot_;                                                        \
	bool drvdev_;                                                     \
	int r_ = fake_resolve((h), &g, &gpu, &slot_, &drvdev_);           \
	if (r_)                                                           \
		return r_;                                                \
	if (slot_ >= 0)                                                   \
		return GF_NVML_ERROR_INVALID_ARGUMENT; /* a MIG device */ \
	(void)drvdev_

static bool managed(const struct fake_gpu *g)
{
	return model_table(g) && g->nmig == 0; /* scripted instances: read-only */
}

static bool gi_busy(const struct fake_gpu *g, unsigned id)
{
	for (unsigned i = 0; i < g->nprocs; i++)
		if (g->procs[i].gi == (long long)id)
			return true;
	return false;
}

API(int, nvmlDeviceSetMigMode, (void *h, unsigned mode, int *activation))
{
	GPU_DEV(h);
	if (mode > 1 || !activation)
		return GF_NVML_ERROR_INVALID_ARGUMENT;
	if (!managed(g))
		return GF_NVML_ERROR_NOT_SUPPORTED;
	struct drv_gpu *d = drv_of(gpu, true);
	if (!d)
		return GF_NVML_ERROR_UNKNOWN;
	if (fake_mig_mode(gpu) == (int)mode) {
		*activation = GF_NVML_SUCCESS;
		return GF_NVML_SUCCESS;
	}
	for (unsigned s = 0; s < FAKE_MAX_MIG; s++)
		if (d->gi[s].used)
			return GF_NVML_ERROR_IN_USE;
	if (g->nprocs)
		return GF_NVML_ERROR_IN_USE;
	d->mode = (int)mode;
	*activation = GF_NVML_SUCCESS;
	save();
	return GF_NVML_SUCCESS;
}

API(int, nvmlDeviceGetGpuInstanceProfileInfoV, (void *h, unsigned profile, gf_nvml_gi_profile_info_v2 *info))
{
	GPU_DEV(h);
	if (!info || info->version != GF_NVML_GI_PROFILE_INFO_V2_VERSION)
		return 25; /* NVML_ERROR_ARGUMENT_VERSION_MISMATCH */
	if (profile >= GF_NVML_GI_PROFILE_COUNT)
		return GF_NVML_ERROR_INVALID_ARGUMENT;
	const struct fake_mig_profile *p = fake_mig_profile(g, profile);
	if (!managed(g) || fake_mig_mode(gpu) != 1 || !p)
		return GF_NVML_ERROR_NOT_SUPPORTED;
	unsigned v = info->version;
	memset(info, 0, sizeof(*info));
	info->version = v;
	info->id = p->id;
	info->sliceCount = p->slices;
	info->instanceCount = p->count;
	info->multiprocessorCount = p->slices * 16;
	info->memorySizeMB = p->mem_mb;
	snprintf(info->name, sizeof(info->name), "MIG %s", p->name);
	return GF_NVML_SUCCESS;
}

API(int, nvmlDeviceGetGpuInstancePossiblePlacements_v2,
    (void *h, unsigned profile_id, gf_nvml_gi_placement *pl, unsigned *count))
{
	GPU_DEV(h);
	const struct fake_mig_profile *p = profile_by_id(g, profile_id);
	if (!count)
		return GF_NVML_ERROR_INVALID_ARGUMENT;
	if (!managed(g) || fake_mig_mode(gpu) != 1 || !p)
		return GF_NVML_ERROR_NOT_SUPPORTED;
	unsigned n = (unsigned)__builtin_popcount(p->starts);
	if (!pl) {
		*count = n;
		return GF_NVML_SUCCESS;
	}
	if (*count < n) {
		*count = n;
		return GF_NVML_ERROR_INSUFFICIENT_SIZE;
	}
	unsigned k = 0;
	for (unsigned s = 0; s < 8; s++)
		if (p->starts >> s & 1)
			pl[k++] = (gf_nvml_gi_placement){ s, p->size };
	*count = n;
	return GF_NVML_SUCCESS;
}

static unsigned mig_hash(const char *s, unsigned long long x)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	for (int i = 0; i < 8; i++)
		h = (h ^ ((x >> (8 * i)) & 0xff)) * 1099511628211ULL;
	return (unsigned)(h ^ (h >> 32));
}

API(int, nvmlDeviceCreateGpuInstanceWithPlacement,
    (void *h, unsigned profile_id, const gf_nvml_gi_placement *pl, void **out))
{
	GPU_DEV(h);
	if (!pl || !out)
		return GF_NVML_ERROR_INVALID_ARGUMENT;
	const struct fake_mig_profile *p = profile_by_id(g, profile_id);
	if (!managed(g) || fake_mig_mode(gpu) != 1)
		return GF_NVML_ERROR_NOT_SUPPORTED;
	if (!p || pl->start >= 8 || !(p->starts >> pl->start & 1) || pl->size != p->size)
		return GF_NVML_ERROR_INVALID_ARGUMENT; /* not a placement of this profile */
	struct drv_gpu *d = drv_of(gpu, true);
	if (!d)
		return GF_NVML_ERROR_UNKNOWN;
	unsigned same = 0, free_slot = FAKE_MAX_MIG;
	unsigned long long ids = 0;
	for (unsigned s = 0; s < FAKE_MAX_MIG; s++) {
		const struct fake_drv_gi *x = &d->gi[s];
		if (!x->used) {
			if (free_slot == FAKE_MAX_MIG)
				free_slot = s;
			continue;
		}
		const struct fake_mig_profile *q = fake_mig_profile(g, x->profile);
		unsigned qsize = q ? q->size : 1;
		if (pl->start < x->start + qsize && x->start < pl->start + pl->size)
			return GF_NVML_ERROR_INSUFFICIENT_RESOURCES; /* overlap */
		same += x->profile == p->idx;
		if (x->id < 64)
			ids |= 1ULL << x->id;
	}
	if (same >= p->count || free_slot == FAKE_MAX_MIG)
		return GF_NVML_ERROR_INSUFFICIENT_RESOURCES;
	struct fake_drv_gi *x = &d->gi[free_slot];
	unsigned id = 1;
	while (ids >> id & 1)
		id++;
	generation++;
	unsigned a = mig_hash(g->uuid, generation * 1000 + id), b = mig_hash(g->uuid, ~generation ^ id);
	x->used = true;
	x->id = id;
	x->profile = p->idx;
	x->start = pl->start;
	x->ci = false;
	snprintf(x->uuid, sizeof(x->uuid), "MIG-%08x-%04x-%04x-%04x-%04x%08x", a, b & 0xffff, (b >> 16) & 0xfff,
		 0x8000 | (a & 0x3fff), id & 0xffff, b ^ a);
	*out = &gih[gpu][free_slot];
	save();
	return GF_NVML_SUCCESS;
}

API(int, nvmlDeviceGetGpuInstances, (void *h, unsigned profile_id, void **gis, unsigned *count))
{
	GPU_DEV(h);
	if (!count)
		return GF_NVML_ERROR_INVALID_ARGUMENT;
	const struct fake_mig_profile *p = profile_by_id(g, profile_id);
	if (!managed(g) || fake_mig_mode(gpu) != 1 || !p)
		return GF_NVML_ERROR_NOT_SUPPORTED;
	unsigned profile = p->idx;
	struct drv_gpu *d = drv_of(gpu, false);
	unsigned n = 0;
	for (unsigned s = 0; d && s < FAKE_MAX_MIG; s++)
		if (d->gi[s].used && d->gi[s].profile == profile) {
			if (gis && n >= *count)
				return GF_NVML_ERROR_INSUFFICIENT_SIZE;
			if (gis)
				gis[n] = &gih[gpu][s];
			n++;
		}
	*count = n;
	return GF_NVML_SUCCESS;
}

/* Resolve a GPU- or compute-instance handle. */
static int inst(void *h, struct inst_handle (*tab)[FAKE_MAX_MIG], struct fake_gpu **g, struct drv_gpu **d,
		struct fake_drv_gi **x)
{
	struct inst_handle *ih = h;
	if (!ih || ih < &tab[0][0] || ih >= &tab[0][0] + FAKE_MAX_GPUS * FAKE_MAX_MIG)
		return GF_NVML_ERROR_INVALID_ARGUMENT;
	unsigned gpu;
	int slot;
	bool dv;
	int r = fake_resolve(fake_gpu_handle(ih->gpu), g, &gpu, &slot, &dv);
	if (r)
		return r;
	*d = drv_of(ih->gpu, false);
	if (!*d || !(*d)->gi[ih->slot].used)
		return GF_NVML_ERROR_INVALID_ARGUMENT; /* destroyed */
	*x = &(*d)->gi[ih->slot];
	return GF_NVML_SUCCESS;
}

API(int, nvmlGpuInstanceGetInfo, (void *h, gf_nvml_gi_info *info))
{
	struct fake_gpu *g;
	struct drv_gpu *d;
	struct fake_drv_gi *x;
	int r = inst(h, gih, &g, &d, &x);
	if (r)
		return r;
	const struct fake_mig_profile *p = fake_mig_profile(g, x->profile);
	const struct inst_handle *ih = h;
	info->device = fake_gpu_handle(ih->gpu);
	info->id = x->id;
	info->profileId = p ? p->id : 0;
	info->placement = (gf_nvml_gi_placement){ x->start, p ? p->size : 1 };
	return GF_NVML_SUCCESS;
}

API(int, nvmlGpuInstanceDestroy, (void *h))
{
	struct fake_gpu *g;
	struct drv_gpu *d;
	struct fake_drv_gi *x;
	int r = inst(h, gih, &g, &d, &x);
	if (r)
		return r;
	if (x->ci || gi_busy(g, x->id))
		return GF_NVML_ERROR_IN_USE;
	memset(x, 0, sizeof(*x));
	save();
	return GF_NVML_SUCCESS;
}

/* The compute profile of a GI's full size (1, 2, 3, 4, 7 slices -> 0..4). */
static int full_ci_profile(const struct fake_mig_profile *p)
{
	switch (p ? p->slices : 0) {
	case 1: return 0;
	case 2: return 1;
	case 3: return 2;
	case 4: return 3;
	case 7: return 4;
	default: return -1;
	}
}

API(int, nvmlGpuInstanceGetComputeInstanceProfileInfo,
    (void *h, unsigned profile, unsigned eng, gf_nvml_ci_profile_info *info))
{
	struct fake_gpu *g;
	struct drv_gpu *d;
	struct fake_drv_gi *x;
	int r = inst(h, gih, &g, &d, &x);
	if (r)
		return r;
	const struct fake_mig_profile *p = fake_mig_profile(g, x->profile);
	if (!info || profile >= GF_NVML_CI_PROFILE_COUNT || eng != GF_NVML_CI_ENGINE_PROFILE_SHARED)
		return GF_NVML_ERROR_INVALID_ARGUMENT;
	if ((int)profile != full_ci_profile(p))
		return GF_NVML_ERROR_NOT_SUPPORTED;
	memset(info, 0, sizeof(*info));
	info->id = profile;
	info->sliceCount = p->slices;
	info->instanceCount = 1;
	info->multiprocessorCount = p->slices * 16;
	return GF_NVML_SUCCESS;
}

API(int, nvmlGpuInstanceCreateComputeInstance, (void *h, unsigned profile, void **out))
{
	struct fake_gpu *g;
	struct drv_gpu *d;
	struct fake_drv_gi *x;
	int r = inst(h, gih, &g, &d, &x);
	if (r)
		return r;
	if (!out || (int)profile != full_ci_profile(fake_mig_profile(g, x->profile)))
		return GF_NVML_ERROR_INVALID_ARGUMENT;
	if (x->ci)
		return GF_NVML_ERROR_INSUFFICIENT_RESOURCES;
	x->ci = true;
	*out = &cih[((struct inst_handle *)h)->gpu][((struct inst_handle *)h)->slot];
	save();
	return GF_NVML_SUCCESS;
}

API(int, nvmlGpuInstanceGetComputeInstances, (void *h, unsigned profile, void **cis, unsigned *count))
{
	struct fake_gpu *g;
	struct drv_gpu *d;
	struct fake_drv_gi *x;
	int r = inst(h, gih, &g, &d, &x);
	if (r)
		return r;
	if (!count)
		return GF_NVML_ERROR_INVALID_ARGUMENT;
	unsigned n = x->ci && (int)profile == full_ci_profile(fake_mig_profile(g, x->profile));
	if (cis && n && *count < n)
		return GF_NVML_ERROR_INSUFFICIENT_SIZE;
	if (cis && n)
		cis[0] = &cih[((struct inst_handle *)h)->gpu][((struct inst_handle *)h)->slot];
	*count = n;
	return GF_NVML_SUCCESS;
}

API(int, nvmlComputeInstanceDestroy, (void *h))
{
	struct fake_gpu *g;
	struct drv_gpu *d;
	struct fake_drv_gi *x;
	int r = inst(h, cih, &g, &d, &x);
	if (r)
		return r;
	if (!x->ci)
		return GF_NVML_ERROR_INVALID_ARGUMENT;
	if (gi_busy(g, x->id))
		return GF_NVML_ERROR_IN_USE;
	x->ci = false;
	save();
	return GF_NVML_SUCCESS;
}
