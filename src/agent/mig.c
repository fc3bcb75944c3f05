/*
 * agent/mig.c - MIG layouts: parse, apply through NVML, report (mig.h).
 *
 * Apply, per GPU of the layout, reads the GPU's instances first (for each
 * GPU-instance profile index 0..NVML_GPU_INSTANCE_PROFILE_COUNT-1 the
 * driver offers: its name and id from nvmlDeviceGetGpuInstanceProfileInfoV,
 * its GPU instances, their placements; the MIG devices for the UUIDs; the
 * list, placement and create calls take that id, not the index), then
 * matches instance to layout entry by (profile name, start): equal pairs
 * are kept, so a layout applied twice changes nothing.  Destroys run before
 * creations so that freed slices can be used.  An instance is "in use" when
 * NVML lists a process in its GPU instance or the caller's callback knows a
 * container holding its MIG device; such an instance is never destroyed.
 * Cost per apply: O(profiles x instances) NVML calls, at most 15 x 8 per
 * GPU.  No state is kept here between calls: the driver holds the truth.
 */
#include "agent/mig.h"

#include <cjson/cJSON.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the layout document ---- */

static bool profile_name_ok(const char *s)
{
	/* <1-8>g.<1-4 digits>gb, optional "+me" */
	if (s[0] < '1' || s[0] > '8' || s[1] != 'g' || s[2] != '.')
		return false;
	size_t i = 3, d = 0;
	while (s[i] >= '0' && s[i] <= '9' && d < 5)
		i++, d++;
	if (d < 1 || d > 4 || s[i] != 'g' || s[i + 1] != 'b')
		return false;
	i += 2;
	return !s[i] || !strcmp(s + i, "+me");
}

static bool gpu_uuid_ok(const char *s)
{
	return !strncmp(s, "GPU-", 4) && s[4] && gf_nvml_uuid_ok(s);
}

gf_err gf_nodemig_layout_parse(const char *text, size_t len, struct gf_nodemig_layout *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (len > GF_NODEMIG_LAYOUT_MAX) {
		snprintf(err, errlen, "$: layout of %zu bytes, more than %d", len, GF_NODEMIG_LAYOUT_MAX);
		return GF_INVAL;
	}
	const char *end = NULL;
	cJSON *doc = cJSON_ParseWithLengthOpts(text, len, &end, false);
	if (!doc) {
		const char *at = cJSON_GetErrorPtr();
		size_t off = at && at >= text && at <= text + len ? (size_t)(at - text) : len;
		snprintf(err, errlen, "$: not valid JSON (near byte %zu)", off);
		return GF_INVAL;
	}
	for (const char *p = end; p && p < text + len; p++)
		if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r' && *p != '\0') {
			snprintf(err, errlen, "$: text after the JSON document (byte %zu)", (size_t)(p - text));
			cJSON_Delete(doc);
			return GF_INVAL;
		}
	gf_err e = GF_INVAL;
	if (!cJSON_IsObject(doc)) {
		snprintf(err, errlen, "$: expected an object {\"GPU-<uuid>\": [instances]}");
		goto out;
	}
	const cJSON *g;
	cJSON_ArrayForEach(g, doc)
	{
		const char *key = g->string ? g->string : "";
		if (!gpu_uuid_ok(key)) {
			snprintf(err, errlen, "$[\"%.100s\"]: expected a GPU UUID (GPU-<hex and dashes>) as key", key);
			goto out;
		}
		for (unsigned i = 0; i < out->n; i++)
			if (!strcmp(out->gpu[i].uuid, key)) {
				snprintf(err, errlen, "$[\"%.100s\"]: GPU given twice", key);
				goto out;
			}
		if (out->n == GF_NODEMIG_MAX_GPUS) {
			snprintf(err, errlen, "$: more than %d GPUs", GF_NODEMIG_MAX_GPUS);
			goto out;
		}
		if (!cJSON_IsArray(g)) {
			snprintf(err, errlen, "$[\"%.100s\"]: expected an array of {\"profile\",\"start\"}", key);
			goto out;
		}
		struct gf_nodemig_gpu *gl = &out->gpu[out->n];
		snprintf(gl->uuid, sizeof(gl->uuid), "%s", key);
		const cJSON *it;
		unsigned k = 0;
		cJSON_ArrayForEach(it, g)
		{
			if (k == GF_NODEMIG_MAX_INST) {
				snprintf(err, errlen, "$[\"%.100s\"]: more than %d instances", key, GF_NODEMIG_MAX_INST);
				goto out;
			}
			if (!cJSON_IsObject(it)) {
				snprintf(err, errlen, "$[\"%.100s\"][%u]: expected an object {\"profile\",\"start\"}", key, k);
				goto out;
			}
			const cJSON *m, *prof = NULL, *start = NULL;
			cJSON_ArrayForEach(m, it)
			{
				const char *mk = m->string ? m->string : "";
				const cJSON **slot = !strcmp(mk, "profile") ? &prof : !strcmp(mk, "start") ? &start : NULL;
				if (!slot || *slot) {
					snprintf(err, errlen, "$[\"%.100s\"][%u].%.40s: %s", key, k, mk,
						 slot ? "given twice" : "unknown member (expected profile and start)");
					goto out;
				}
				*slot = m;
			}
			if (!cJSON_IsString(prof) || strlen(prof->valuestring) >= GF_NODEMIG_PROFILE_LEN ||
			    !profile_name_ok(prof->valuestring)) {
				snprintf(err, errlen, "$[\"%.100s\"][%u].profile: expected a MIG profile name such as "
					 "\"3g.40gb\" or \"1g.10gb+me\"", key, k);
				goto out;
			}
			double sv = cJSON_IsNumber(start) ? start->valuedouble : -1;
			if (!(sv >= 0 && sv <= 7) || sv != (double)(unsigned)sv) {
				snprintf(err, errlen, "$[\"%.100s\"][%u].start: expected an integer 0..7", key, k);
				goto out;
			}
			for (unsigned j = 0; j < k; j++)
				if (gl->inst[j].start == (unsigned)sv) {
					snprintf(err, errlen, "$[\"%.100s\"][%u].start: slot %u already taken by [%u]", key, k,
						 (unsigned)sv, j);
					goto out;
				}
			snprintf(gl->inst[k].profile, sizeof(gl->inst[k].profile), "%s", prof->valuestring);
			gl->inst[k].start = (unsigned)sv;
			gl->n = ++k;
		}
		out->n++;
	}
	e = GF_OK;
out:
	cJSON_Delete(doc);
	if (e)
		memset(out, 0, sizeof(*out));
	return e;
}

static gf_err put_json(cJSON *doc, struct gf_obuf *out)
{
	if (!doc)
		return GF_NOMEM;
	char *s = cJSON_PrintUnformatted(doc);
	cJSON_Delete(doc);
	if (!s)
		return GF_NOMEM;
	gf_err e = gf_obuf_puts(out, s);
	free(s);
	return e;
}

gf_err gf_nodemig_layout_render(const struct gf_nodemig_layout *l, struct gf_obuf *out)
{
	cJSON *doc = cJSON_CreateObject();
	for (unsigned i = 0; doc && i < l->n; i++) {
		cJSON *a = cJSON_AddArrayToObject(doc, l->gpu[i].uuid);
		for (unsigned k = 0; a && k < l->gpu[i].n; k++) {
			cJSON *o = cJSON_CreateObject();
			cJSON_AddItemToArray(a, o);
			cJSON_AddStringToObject(o, "profile", l->gpu[i].inst[k].profile);
			cJSON_AddNumberToObject(o, "start", l->gpu[i].inst[k].start);
		}
	}
	return put_json(doc, out);
}

gf_err gf_nodemig_state_render(const struct gf_nodemig_state *s, struct gf_obuf *out)
{
	cJSON *doc = cJSON_CreateObject();
	for (unsigned i = 0; doc && i < s->n; i++) {
		const struct gf_nodemig_gpu_state *g = &s->gpu[i];
		cJSON *a = cJSON_AddArrayToObject(doc, g->uuid);
		for (unsigned k = 0; a && k < g->n; k++) {
			const struct gf_nodemig_inst *m = &g->inst[k];
			cJSON *o = cJSON_CreateObject();
			cJSON_AddItemToArray(a, o);
			cJSON_AddStringToObject(o, "profile", m->profile);
			cJSON_AddNumberToObject(o, "start", m->start);
			if (m->made) {
				cJSON_AddNumberToObject(o, "gi", m->gi);
				cJSON_AddStringToObject(o, "uuid", m->uuid);
				cJSON_AddBoolToObject(o, "inUse", m->in_use);
			}
			if (m->unwanted) {
				cJSON_AddBoolToObject(o, "unwanted", true);
				cJSON_AddStringToObject(o, "reason", m->reason);
			} else if (!m->made) {
				cJSON_AddStringToObject(o, "error", m->reason);
			}
		}
	}
	return put_json(doc, out);
}

/* ---- NVML ---- */

/* One GPU as read from NVML. */
struct prof {
	bool ok;
	unsigned id; /* the profile id the create/placement/list calls take */
	char name[GF_NODEMIG_PROFILE_LEN];
	unsigned slices;
};

struct live {
	gf_nvml_gpu_instance gi;
	unsigned id, profile, start;
	bool has_ci;
	char uuid[GF_NVML_UUID_LEN];
	bool in_use, keep;
};

struct gpu {
	gf_nvml_device dev;
	struct prof prof[GF_NVML_GI_PROFILE_COUNT];
	struct live live[GF_NODEMIG_MAX_INST * 2];
	unsigned n;
};

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("gpufleet agent: MIG: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static int ci_profile_for(unsigned slices)
{
	switch (slices) { /* nvmlComputeInstanceProfile of the GPU instance's full size */
	case 1: return 0;
	case 2: return 1;
	case 3: return 2;
	case 4: return 3;
	case 7: return 4;
	case 8: return 5;
	case 6: return 6;
	default: return -1;
	}
}

static void read_gpu(struct gf_nvml *n, struct gpu *G, gf_nodemig_in_use_fn in_use, void *ud)
{
	G->n = 0;
	for (unsigned p = 0; p < GF_NVML_GI_PROFILE_COUNT; p++) {
		gf_nvml_gi_profile_info_v2 info;
		memset(&info, 0, sizeof(info));
		info.version = GF_NVML_GI_PROFILE_INFO_V2_VERSION;
		struct prof *pr = &G->prof[p];
		pr->ok = GF_NVML_CALL(n, gi_profile_info, G->dev, p, &info) == GF_NVML_SUCCESS;
		if (!pr->ok)
			continue;
		info.name[sizeof(info.name) - 1] = '\0';
		const char *nm = strncmp(info.name, "MIG ", 4) ? info.name : info.name + 4;
		snprintf(pr->name, sizeof(pr->name), "%.31s", nm);
		pr->slices = info.sliceCount;
		pr->id = info.id;
		gf_nvml_gpu_instance gis[GF_NODEMIG_MAX_INST];
		unsigned cnt = GF_NODEMIG_MAX_INST;
		if (GF_NVML_CALL(n, gi_list, G->dev, pr->id, gis, &cnt) != GF_NVML_SUCCESS)
			continue;
		for (unsigned k = 0; k < cnt && G->n < GF_NODEMIG_MAX_INST * 2; k++) {
			gf_nvml_gi_info gi;
			if (GF_NVML_CALL(n, gi_info, gis[k], &gi) != GF_NVML_SUCCESS)
				continue;
			struct live *L = &G->live[G->n++];
			memset(L, 0, sizeof(*L));
			L->gi = gis[k];
			L->id = gi.id;
			L->profile = p;
			L->start = gi.placement.start;
			int cp = ci_profile_for(pr->slices);
			gf_nvml_compute_instance ci[4];
			unsigned nci = 4;
			L->has_ci = cp >= 0 && GF_NVML_CALL(n, ci_list, gis[k], (unsigned)cp, ci, &nci) == GF_NVML_SUCCESS &&
				    nci > 0;
		}
	}
	/* MIG device UUIDs by GPU-instance id. */
	unsigned max = 0;
	if (GF_NVML_CALL(n, mig_max, G->dev, &max) == GF_NVML_SUCCESS)
		for (unsigned i = 0; i < max; i++) {
			gf_nvml_device md;
			unsigned id;
			char u[GF_NVML_UUID_LEN] = "";
			if (GF_NVML_CALL(n, mig_handle, G->dev, i, &md) != GF_NVML_SUCCESS ||
			    GF_NVML_CALL(n, gi_id, md, &id) != GF_NVML_SUCCESS ||
			    GF_NVML_CALL(n, uuid, md, u, sizeof(u)) != GF_NVML_SUCCESS)
				continue;
			u[sizeof(u) - 1] = '\0';
			for (unsigned k = 0; k < G->n; k++)
				if (G->live[k].id == id && gf_nvml_uuid_ok(u))
					snprintf(G->live[k].uuid, sizeof(G->live[k].uuid), "%s", u);
		}
	/* In use: processes in the GPU instance, or the caller's containers. */
	gf_nvml_process_v2 procs[256];
	unsigned np = 256;
	if (n->procs_v2 && GF_NVML_CALL(n, procs_v2, G->dev, &np, procs) == GF_NVML_SUCCESS)
		for (unsigned i = 0; i < np; i++)
			for (unsigned k = 0; k < G->n; k++)
				G->live[k].in_use |= procs[i].gpuInstanceId == G->live[k].id;
	for (unsigned k = 0; k < G->n && in_use; k++)
		G->live[k].in_use |= G->live[k].uuid[0] && in_use(ud, G->live[k].uuid);
}

static int find_profile(const struct gpu *G, const char *name)
{
	for (unsigned p = 0; p < GF_NVML_GI_PROFILE_COUNT; p++)
		if (G->prof[p].ok && !strcmp(G->prof[p].name, name))
			return (int)p;
	return -1;
}

static void offered(const struct gpu *G, char *out, size_t n)
{
	size_t o = 0;
	out[0] = '\0';
	for (unsigned p = 0; p < GF_NVML_GI_PROFILE_COUNT && o < n; p++)
		if (G->prof[p].ok) {
			int w = snprintf(out + o, n - o, "%s%s", o ? " " : "", G->prof[p].name);
			if (w < 0)
				break;
			o += (size_t)w;
		}
}

static bool find_dev(struct gf_nvml *n, const char *uuid, gf_nvml_device *dev)
{
	unsigned cnt = 0;
	if (n->device_count(&cnt) != GF_NVML_SUCCESS)
		return false;
	for (unsigned i = 0; i < cnt; i++) {
		char u[GF_NVML_UUID_LEN] = "";
		if (n->handle_by_index(i, dev) == GF_NVML_SUCCESS &&
		    n->uuid(*dev, u, sizeof(u)) == GF_NVML_SUCCESS && !strncmp(u, uuid, sizeof(u)))
			return true;
	}
	return false;
}

/* Fill a state entry from what was read. */
static void state_from(const struct gpu *G, const char *uuid, struct gf_nodemig_gpu_state *S)
{
	snprintf(S->uuid, sizeof(S->uuid), "%s", uuid);
	S->n = 0;
	for (unsigned k = 0; k < G->n && S->n < GF_NODEMIG_MAX_INST * 2; k++) {
		const struct live *L = &G->live[k];
		struct gf_nodemig_inst *m = &S->inst[S->n++];
		memset(m, 0, sizeof(*m));
		snprintf(m->profile, sizeof(m->profile), "%s", G->prof[L->profile].name);
		m->start = L->start;
		m->gi = L->id;
		m->made = true;
		snprintf(m->uuid, sizeof(m->uuid), "%s", L->uuid);
		m->in_use = L->in_use;
	}
}

static void add_note(struct gf_nodemig_gpu_state *S, const char *profile, unsigned start, bool unwanted,
		     const char *why)
{
	for (unsigned k = 0; k < S->n; k++) /* an instance kept: mark it */
		if (unwanted && S->inst[k].made && S->inst[k].start == start &&
		    !strcmp(S->inst[k].profile, profile)) {
			S->inst[k].unwanted = true;
			snprintf(S->inst[k].reason, sizeof(S->inst[k].reason), "%s", why);
			return;
		}
	if (S->n == GF_NODEMIG_MAX_INST * 2)
		return;
	struct gf_nodemig_inst *m = &S->inst[S->n++];
	memset(m, 0, sizeof(*m));
	snprintf(m->profile, sizeof(m->profile), "%s", profile);
	m->start = start;
	snprintf(m->reason, sizeof(m->reason), "%s", why);
}

static bool read_mode(struct gf_nvml *n, gf_nvml_device dev)
{
	unsigned cur = 0, pend = 0;
	return GF_NVML_CALL(n, mig_mode, dev, &cur, &pend) == GF_NVML_SUCCESS && cur == GF_NVML_MIG_ENABLE;
}

void gf_nodemig_read(struct gf_nvml *n, gf_nodemig_in_use_fn in_use, void *ud, struct gf_nodemig_state *out)
{
	memset(out, 0, sizeof(*out));
	unsigned cnt = 0;
	if (n->device_count(&cnt) != GF_NVML_SUCCESS)
		return;
	static struct gpu G; /* 1.5 KiB x 16: off the stack; callers serialise */
	for (unsigned i = 0; i < cnt && out->n < GF_NODEMIG_MAX_GPUS; i++) {
		char u[GF_NVML_UUID_LEN] = "";
		if (n->handle_by_index(i, &G.dev) != GF_NVML_SUCCESS ||
		    n->uuid(G.dev, u, sizeof(u)) != GF_NVML_SUCCESS || !gf_nvml_uuid_ok(u) || !read_mode(n, G.dev))
			continue;
		read_gpu(n, &G, in_use, ud);
		state_from(&G, u, &out->gpu[out->n++]);
	}
}

gf_err gf_nodemig_apply(struct gf_nvml *n, const struct gf_nodemig_layout *want, gf_nodemig_in_use_fn in_use, void *ud,
		    struct gf_nodemig_state *out)
{
	static struct gpu G;
	gf_err ret = GF_OK;
	/* Notes to add to the state read at the end, per layout GPU. */
	struct note {
		char profile[GF_NODEMIG_PROFILE_LEN];
		unsigned start;
		bool unwanted;
		char why[160];
	};
	static struct note notes[GF_NODEMIG_MAX_GPUS][GF_NODEMIG_MAX_INST * 2];
	unsigned nnotes[GF_NODEMIG_MAX_GPUS] = { 0 };
	unsigned created = 0, destroyed = 0, refused = 0, failed = 0;
#define NOTE(gi_, prof_, start_, unw_, ...)                                                      \
	do {                                                                                     \
		if (nnotes[gi_] < GF_NODEMIG_MAX_INST * 2) {                                         \
			struct note *nt_ = &notes[gi_][nnotes[gi_]++];                           \
			snprintf(nt_->profile, sizeof(nt_->profile), "%s", prof_);               \
			nt_->start = start_;                                                     \
			nt_->unwanted = unw_;                                                    \
			snprintf(nt_->why, sizeof(nt_->why), __VA_ARGS__);                       \
		}                                                                                \
	} while (0)

	for (unsigned w = 0; w < want->n; w++) {
		const struct gf_nodemig_gpu *L = &want->gpu[w];
		if (!find_dev(n, L->uuid, &G.dev)) {
			logf_("%s: not a GPU of this node; its layout is ignored", L->uuid);
			ret = GF_NOENT;
			continue;
		}
		if (!read_mode(n, G.dev)) {
			gf_nvml_return act = GF_NVML_SUCCESS;
			gf_nvml_return r = GF_NVML_CALL(n, set_mig_mode, G.dev, GF_NVML_MIG_ENABLE, &act);
			if (r != GF_NVML_SUCCESS || act != GF_NVML_SUCCESS || !read_mode(n, G.dev)) {
				logf_("%s: cannot enable MIG mode: %s (%d)", L->uuid,
				      gf_nvml_strerror(n, r ? r : act), r ? r : act);
				for (unsigned k = 0; k < L->n; k++)
					NOTE(w, L->inst[k].profile, L->inst[k].start, false,
					     "MIG mode not enabled: %s", gf_nvml_strerror(n, r ? r : act));
				failed += L->n;
				continue;
			}
			logf_("%s: MIG mode enabled", L->uuid);
		}
		read_gpu(n, &G, in_use, ud);
		bool have[GF_NODEMIG_MAX_INST] = { false };
		/* Match live instances to the layout; destroy what is not wanted. */
		for (unsigned k = 0; k < G.n; k++) {
			struct live *I = &G.live[k];
			const char *pn = G.prof[I->profile].name;
			for (unsigned j = 0; j < L->n && !I->keep; j++)
				if (!have[j] && L->inst[j].start == I->start && !strcmp(L->inst[j].profile, pn))
					have[j] = I->keep = true;
			if (I->keep)
				continue;
			if (I->in_use) {
				logf_("%s: keeping %s at slot %u (GPU instance %u, %s): not in the layout, but a "
				      "container uses it",
				      L->uuid, pn, I->start, I->id, I->uuid[0] ? I->uuid : "no MIG device");
				NOTE(w, pn, I->start, true, "in use by a container: not destroyed");
				refused++;
				continue;
			}
			gf_nvml_return r = GF_NVML_SUCCESS;
			int cp = ci_profile_for(G.prof[I->profile].slices);
			gf_nvml_compute_instance ci[4];
			unsigned nci = 4;
			if (cp >= 0 && GF_NVML_CALL(n, ci_list, I->gi, (unsigned)cp, ci, &nci) == GF_NVML_SUCCESS)
				for (unsigned c = 0; c < nci && r == GF_NVML_SUCCESS; c++)
					r = GF_NVML_CALL(n, ci_destroy, ci[c]);
			if (r == GF_NVML_SUCCESS)
				r = GF_NVML_CALL(n, gi_destroy, I->gi);
			if (r != GF_NVML_SUCCESS) {
				bool busy = r == GF_NVML_ERROR_IN_USE;
				logf_("%s: cannot destroy %s at slot %u (GPU instance %u): %s (%d)", L->uuid, pn, I->start,
				      I->id, gf_nvml_strerror(n, r), r);
				NOTE(w, pn, I->start, true, "%s: %s", busy ? "in use (driver)" : "destroy failed",
				     gf_nvml_strerror(n, r));
				busy ? refused++ : failed++;
				continue;
			}
			logf_("%s: destroyed %s at slot %u (GPU instance %u, %s)", L->uuid, pn, I->start, I->id,
			      I->uuid[0] ? I->uuid : "no MIG device");
			destroyed++;
		}
		/* A kept GPU instance without its compute instance gets one. */
		for (unsigned k = 0; k < G.n; k++) {
			struct live *I = &G.live[k];
			int cp = ci_profile_for(G.prof[I->profile].slices);
			gf_nvml_ci_profile_info cinfo;
			gf_nvml_compute_instance ci;
			if (!I->keep || I->has_ci || cp < 0)
				continue;
			gf_nvml_return r = GF_NVML_CALL(n, ci_profile_info, I->gi, (unsigned)cp,
							GF_NVML_CI_ENGINE_PROFILE_SHARED, &cinfo);
			if (r == GF_NVML_SUCCESS)
				r = GF_NVML_CALL(n, ci_create, I->gi, cinfo.id, &ci);
			if (r != GF_NVML_SUCCESS) {
				logf_("%s: cannot create the compute instance of GPU instance %u: %s (%d)", L->uuid, I->id,
				      gf_nvml_strerror(n, r), r);
				failed++;
			}
		}
		/* Create what is missing, in layout order. */
		for (unsigned j = 0; j < L->n; j++) {
			if (have[j])
				continue;
			const struct gf_nodemig_want *W = &L->inst[j];
			int p = find_profile(&G, W->profile);
			if (p < 0) {
				char offers[256];
				offered(&G, offers, sizeof(offers));
				logf_("%s: profile %s is not offered by this GPU (it offers: %s)", L->uuid, W->profile,
				      offers);
				NOTE(w, W->profile, W->start, false, "profile not offered by this GPU (offers: %.100s)", offers);
				failed++;
				continue;
			}
			gf_nvml_gi_placement pl[8];
			unsigned npl = 8;
			gf_nvml_gi_placement at = { W->start, 0 };
			char legal[64] = "";
			size_t lo = 0;
			if (GF_NVML_CALL(n, gi_placements, G.dev, G.prof[p].id, pl, &npl) == GF_NVML_SUCCESS)
				for (unsigned q = 0; q < npl && q < 8; q++) {
					if (pl[q].start == W->start)
						at.size = pl[q].size;
					int wr = snprintf(legal + lo, sizeof(legal) - lo, "%s%u", lo ? "," : "", pl[q].start);
					if (wr > 0 && (size_t)wr < sizeof(legal) - lo)
						lo += (size_t)wr;
				}
			if (!at.size) {
				logf_("%s: %s cannot start at slot %u (legal starts: %s)", L->uuid, W->profile, W->start,
				      legal[0] ? legal : "none known");
				NOTE(w, W->profile, W->start, false, "slot %u is not a legal start of %s (legal: %s)",
				     W->start, W->profile, legal);
				failed++;
				continue;
			}
			gf_nvml_gpu_instance gi;
			gf_nvml_return r = GF_NVML_CALL(n, gi_create_at, G.dev, G.prof[p].id, &at, &gi);
			if (r != GF_NVML_SUCCESS) {
				const char *why = r == GF_NVML_ERROR_INSUFFICIENT_RESOURCES
							  ? "its slices overlap an instance kept on the GPU"
							  : "the driver refused it";
				logf_("%s: cannot create %s at slot %u: %s: %s (%d)", L->uuid, W->profile, W->start, why,
				      gf_nvml_strerror(n, r), r);
				NOTE(w, W->profile, W->start, false, "%s (%s)", why, gf_nvml_strerror(n, r));
				failed++;
				continue;
			}
			gf_nvml_ci_profile_info cinfo;
			gf_nvml_compute_instance ci;
			int cp = ci_profile_for(G.prof[p].slices);
			r = cp < 0 ? GF_NVML_ERROR_NOT_SUPPORTED
				   : GF_NVML_CALL(n, ci_profile_info, gi, (unsigned)cp, GF_NVML_CI_ENGINE_PROFILE_SHARED,
						  &cinfo);
			if (r == GF_NVML_SUCCESS)
				r = GF_NVML_CALL(n, ci_create, gi, cinfo.id, &ci);
			if (r != GF_NVML_SUCCESS) {
				logf_("%s: created %s at slot %u but not its compute instance: %s (%d); destroying it",
				      L->uuid, W->profile, W->start, gf_nvml_strerror(n, r), r);
				GF_NVML_CALL(n, gi_destroy, gi);
				NOTE(w, W->profile, W->start, false, "compute instance not created (%s)",
				     gf_nvml_strerror(n, r));
				failed++;
				continue;
			}
			logf_("%s: created %s at slot %u", L->uuid, W->profile, W->start);
			created++;
		}
	}
#undef NOTE
	gf_nodemig_read(n, in_use, ud, out);
	for (unsigned w = 0; w < want->n; w++) {
		struct gf_nodemig_gpu_state *S = NULL;
		for (unsigned i = 0; i < out->n; i++)
			if (!strcmp(out->gpu[i].uuid, want->gpu[w].uuid))
				S = &out->gpu[i];
		if (!S && nnotes[w] && out->n < GF_NODEMIG_MAX_GPUS) {
			S = &out->gpu[out->n++];
			memset(S, 0, sizeof(*S));
			snprintf(S->uuid, sizeof(S->uuid), "%s", want->gpu[w].uuid);
		}
		for (unsigned k = 0; S && k < nnotes[w]; k++)
			add_note(S, notes[w][k].profile, notes[w][k].start, notes[w][k].unwanted, notes[w][k].why);
	}
	out->created = created;
	out->destroyed = destroyed;
	out->refused = refused;
	out->failed = failed;
	return ret;
}
