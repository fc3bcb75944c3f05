/*
 * k8s/live_gangs.c - the live scheduler's gangs: which pods belong to which
 * PodGroup (either API, gangs.h), and what the daemon asks about them
 * (live.h: gf_live_set_gangs, gf_live_gangs_changed, gf_live_gang_count).
 * Placing a gang (one loop job of N pods, all or none) is the deciding
 * code's, in live.c ("gangs"); it finds a gang's pods here
 * (gf_live_gang_first, gf_live_gang_next).  Shares live_impl.h with live.c.
 *
 * Every pod naming a gang (lpod.gkey != 0: any state, any scheduler,
 * finished ones too) is in its key's list, linked through the pod slots
 * (gnext, gprev; appended, so in the order the pods were first stored), the
 * list's ends found by key in an open-addressing table (linear probing,
 * deletion by backward shift: no tombstones, so pods coming and going never
 * grow it; doubled at 50 % load).  gf_live_gang_index_set() is the one
 * place a pod's gkey changes (pod_store, pod_free); node changes and engine
 * rebuilds leave pod slots where they are, so they leave the index alone.
 * gang_take, gang_wake, gf_live_gangs_changed and gf_live_gang_count walk
 * one key's list (gf_live_gang_first, gf_live_gang_next): O(members), not
 * O(pods).  Gangs whose keys collide share a list (the readers compare the
 * gang itself, gf_live_same_gang).  Out of memory growing the table: `lost`,
 * the readers scan every pod slot, and each later gf_live_gang_index_set()
 * tries to build it again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "k8s/live_impl.h"

/* A gang's key: its API, namespace and name hashed (never 0). */
static uint64_t gang_key_of(bool workload, const char *ns, const char *name)
{
	uint64_t h = fnv(ns) ^ (workload ? 0x5bd1e995ull : 0);
	h = (h ^ fnv(name)) * 1099511628211ull;
	return h ? h : 1;
}

/* p's gang (gangs.h: spec.schedulingGroup, else the coscheduling label); 0: none. */
uint64_t gf_live_gang_key(const struct gf_k8s_pod *p)
{
	const char *name = p->sched_group[0] ? p->sched_group : p->pod_group;
	return name[0] ? gang_key_of(p->sched_group[0] != 0, p->ns, name) : 0;
}

/* ---- gang key -> pods index ----------------------------------------------- */

static size_t gidx_home(const struct gindex *x, uint64_t key)
{
	return (size_t)(key ^ (key >> 32)) & (x->cap - 1);
}

/* Where key is in x, or the empty slot where it would go (x->cap > 0). */
static size_t gidx_pos(const struct gindex *x, uint64_t key)
{
	size_t j = gidx_home(x, key);
	while (x->slot[j].key && x->slot[j].key != key)
		j = (j + 1) & (x->cap - 1);
	return j;
}

static bool gidx_grow(struct gindex *x)
{
	size_t ncap = x->cap ? x->cap * 2 : 64;
	struct gindex nx = { calloc(ncap, sizeof(struct gslot)), ncap, x->used, x->lost };
	if (!nx.slot)
		return false;
	for (size_t i = 0; i < x->cap; i++)
		if (x->slot[i].key)
			nx.slot[gidx_pos(&nx, x->slot[i].key)] = x->slot[i];
	free(x->slot);
	*x = nx;
	return true;
}

/* Take the entry at j out; the entries after it move back into the hole where their probe allows. */
static void gidx_remove_at(struct gindex *x, size_t j)
{
	size_t mask = x->cap - 1;
	for (size_t k = (j + 1) & mask; x->slot[k].key; k = (k + 1) & mask) {
		size_t home = gidx_home(x, x->slot[k].key);
		if (((k - home) & mask) >= ((k - j) & mask)) { /* j lies on k's probe path */
			x->slot[j] = x->slot[k];
			j = k;
		}
	}
	x->slot[j].key = 0;
	x->used--;
}

/* Append lp (its gkey set) to its key's list; false: out of memory (nothing changed). */
static bool gang_link(gf_live *l, struct lpod *lp)
{
	struct gindex *x = &l->gidx;
	if ((x->used + 1) * 2 > x->cap && !gidx_grow(x))
		return false;
	uint32_t self = (uint32_t)(lp - l->pods);
	size_t j = gidx_pos(x, lp->gkey);
	lp->gnext = NO_SLOT;
	if (!x->slot[j].key) {
		x->slot[j] = (struct gslot){ lp->gkey, self, self };
		x->used++;
		lp->gprev = NO_SLOT;
	} else {
		lp->gprev = x->slot[j].tail;
		l->pods[x->slot[j].tail].gnext = self;
		x->slot[j].tail = self;
	}
	return true;
}

static void gang_unlink(gf_live *l, struct lpod *lp)
{
	struct gindex *x = &l->gidx;
	uint32_t self = (uint32_t)(lp - l->pods);
	if (lp->gprev != NO_SLOT)
		l->pods[lp->gprev].gnext = lp->gnext;
	if (lp->gnext != NO_SLOT)
		l->pods[lp->gnext].gprev = lp->gprev;
	if (lp->gprev != NO_SLOT && lp->gnext != NO_SLOT)
		return;
	size_t j = gidx_pos(x, lp->gkey);
	if (!x->slot[j].key)
		return; /* cannot happen */
	if (x->slot[j].head == self)
		x->slot[j].head = lp->gnext;
	if (x->slot[j].tail == self)
		x->slot[j].tail = lp->gprev;
	if (x->slot[j].head == NO_SLOT)
		gidx_remove_at(x, j);
}

/* The index again from every pod (after running out of memory); lost stays set if it fails again. */
static void gidx_rebuild(gf_live *l)
{
	struct gindex *x = &l->gidx;
	if (x->slot)
		memset(x->slot, 0, x->cap * sizeof(*x->slot));
	x->used = 0;
	x->lost = false;
	for (size_t i = 0; i < l->npods && !x->lost; i++)
		if (l->pods[i].used && l->pods[i].gkey)
			x->lost = !gang_link(l, &l->pods[i]);
}

/* lp's gang key becomes key (0: none), in the index too. */
void gf_live_gang_index_set(gf_live *l, struct lpod *lp, uint64_t key)
{
	if (l->gidx.lost) {
		lp->gkey = key;
		gidx_rebuild(l);
		return;
	}
	if (lp->gkey == key)
		return;
	if (lp->gkey)
		gang_unlink(l, lp);
	lp->gkey = key;
	if (key && !gang_link(l, lp)) {
		l->gidx.lost = true;
		gidx_rebuild(l);
	}
}

/* Every pod slot from `from` on: the first one of gang key `key`, or NO_SLOT (the index lost). */
static uint32_t gang_scan(const gf_live *l, size_t from, uint64_t key)
{
	for (size_t i = from; i < l->npods; i++)
		if (l->pods[i].used && l->pods[i].gkey == key)
			return (uint32_t)i;
	return NO_SLOT;
}

/* The first pod slot of gang key `key` (NO_SLOT: none); the next with gf_live_gang_next(). */
uint32_t gf_live_gang_first(const gf_live *l, uint64_t key)
{
	const struct gindex *x = &l->gidx;
	if (x->lost)
		return gang_scan(l, 0, key);
	if (!x->cap || !key)
		return NO_SLOT;
	size_t j = gidx_pos(x, key);
	return x->slot[j].key ? x->slot[j].head : NO_SLOT;
}

uint32_t gf_live_gang_next(const gf_live *l, uint32_t i, uint64_t key)
{
	return l->gidx.lost ? gang_scan(l, (size_t)i + 1, key) : l->pods[i].gnext;
}

/* ---- PodGroups: membership read-outs ------------------------------------- */

bool gf_live_same_gang(gf_live *l, const struct lpod *o, const struct gf_gang_ref *ref)
{
	const struct gf_k8s_pod *q = pod_of(l, o);
	const char *name = q->sched_group[0] ? q->sched_group : q->pod_group;
	return (q->sched_group[0] ? GF_GANG_WORKLOAD : GF_GANG_COSCHEDULING) == ref->api &&
	       !strcmp(q->ns, ref->ns) && !strcmp(name, ref->name);
}

void gf_live_set_gangs(gf_live *l, const gf_gangs *g)
{
	l->gangs = g;
}

/* A gang member parked here (not in the loop) goes back to the queue; true if it did. */
static bool gang_member_retry(gf_live *l, struct lpod *lp)
{
	if (!lp->used || !lp->gkey || lp->r.st != GF_POD_PENDING || !lp->r.parked || lp->job != NO_JOB ||
	    lp->r.invalid)
		return false;
	lp->r.hinted = false; /* no node change is what it waited for */
	enqueue(l, lp);
	return true;
}

/*
 * Every gang member (the gang index's lists, marked in a bitmap of the pod
 * slots) in slot order, the order of a scan of every pod, as before the
 * index: O(gang members + pods / 64).  Without the index (lost, or out of
 * memory for the bitmap): the scan.
 */
size_t gf_live_gangs_changed(gf_live *l)
{
	const struct gindex *x = &l->gidx;
	size_t n = 0, words = (l->npods + 63) / 64;
	uint64_t *mark = x->lost ? NULL : calloc(words ? words : 1, sizeof(*mark));
	if (!mark) {
		for (size_t i = 0; i < l->npods; i++)
			n += gang_member_retry(l, &l->pods[i]);
		return n;
	}
	for (size_t j = 0; j < x->cap; j++)
		for (uint32_t i = x->slot[j].key ? x->slot[j].head : NO_SLOT; i != NO_SLOT; i = l->pods[i].gnext)
			mark[i / 64] |= 1ull << (i % 64);
	for (size_t w = 0; w < words; w++)
		for (size_t k = 0; mark[w] && k < 64; k++)
			if (mark[w] >> k & 1)
				n += gang_member_retry(l, &l->pods[w * 64 + k]);
	free(mark);
	return n;
}

void gf_live_gang_count(gf_live *l, const struct gf_k8s_podgroup *pg, struct gf_live_gang_count *out)
{
	memset(out, 0, sizeof(*out));
	struct gf_gang_ref ref = { .api = pg->api };
	snprintf(ref.ns, sizeof(ref.ns), "%s", pg->ns);
	snprintf(ref.name, sizeof(ref.name), "%s", pg->name);
	uint64_t key = gang_key_of(pg->api == GF_GANG_WORKLOAD, pg->ns, pg->name);
	for (uint32_t i = gf_live_gang_first(l, key); i != NO_SLOT; i = gf_live_gang_next(l, i, key)) {
		struct lpod *lp = &l->pods[i];
		if (!lp->used || lp->gkey != key || !gf_live_same_gang(l, lp, &ref))
			continue;
		const struct gf_k8s_pod *p = pod_of(l, lp);
		out->members++;
		out->succeeded += p->phase == GF_PHASE_SUCCEEDED;
		out->failed += p->phase == GF_PHASE_FAILED;
		out->running += p->phase == GF_PHASE_RUNNING;
		out->scheduled += p->node[0] || lp->r.st == GF_POD_ASSUMED;
	}
}
