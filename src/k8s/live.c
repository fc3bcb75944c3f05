/*
 * k8s/live.c - nodes, pods and the engine kept in step (see live.h).
 *
 * Storage: nodes and pods live in growable arrays of slots, found by name /
 * uid through an open-addressing hash map (FNV-1a, linear probing,
 * tombstones on delete, rehash at 50 % load).  Node slots are never freed
 * (a deleted node is marked absent, a re-added one reuses its slot); pod
 * slots go to a free list.
 *
 * The engine cluster indexes present nodes 0..k-1 in slot order; it is
 * rebuilt (with the score cache, the target and the policy state) when the
 * node set or a node's description changes: every ASSUMED and BOUND pod is
 * bound again, so the allocation only depends on the objects, never on the
 * order events came in.  A bound pod that does not fit (two schedulers
 * gave out one GPU) is counted in `conflicts` and left out.
 *
 * GPU memory requests become milli-GPU: among the GPU models whose memory
 * (nvidia.com/gpu.memory, the smallest seen per model) holds the request
 * and that the pod's model constraint allows, M = the smallest memory;
 * the pod asks ceil(mem * 1000 / M) milli (at least its own milli) of one
 * of those models.  A pod never gets less memory than it asked for.
 *
 * Queue: FIFO of pod slots; an entry is live while the pod is PENDING and
 * flagged queued (stale entries are skipped at pop).  Cost of a decision:
 * the engine's (filter all nodes, score the feasible ones with the cache).
 */
#include "k8s/live.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/cluster.h"
#include "cluster/frag.h"
#include "core/rng.h"
#include "policy/sched.h"

/* ---- string -> index map ------------------------------------------------ */

#define TOMB ((uint32_t)-2)
#define EMPTY ((uint32_t)-1)

struct smap {
	uint32_t *slot;	/* index into the owner's array, EMPTY or TOMB */
	size_t cap, used; /* used counts live + tombstones */
};

static uint64_t fnv(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

typedef const char *(*key_fn)(const void *arr, uint32_t i);

static gf_err smap_grow(struct smap *m, const void *arr, key_fn key)
{
	size_t ncap = m->cap ? m->cap * 2 : 64;
	uint32_t *ns = malloc(ncap * sizeof(*ns));
	if (!ns)
		return GF_NOMEM;
	memset(ns, 0xff, ncap * sizeof(*ns));
	size_t used = 0;
	for (size_t i = 0; i < m->cap; i++) {
		uint32_t v = m->slot[i];
		if (v == EMPTY || v == TOMB)
			continue;
		size_t j = fnv(key(arr, v)) & (ncap - 1);
		while (ns[j] != EMPTY)
			j = (j + 1) & (ncap - 1);
		ns[j] = v;
		used++;
	}
	free(m->slot);
	m->slot = ns;
	m->cap = ncap;
	m->used = used;
	return GF_OK;
}

/* Position of k in the map, or of where it would go (*found false). */
static size_t smap_find(const struct smap *m, const void *arr, key_fn key, const char *k, bool *found)
{
	*found = false;
	if (!m->cap)
		return 0;
	size_t j = fnv(k) & (m->cap - 1), tomb = (size_t)-1;
	for (;;) {
		uint32_t v = m->slot[j];
		if (v == EMPTY)
			return tomb != (size_t)-1 ? tomb : j;
		if (v == TOMB) {
			if (tomb == (size_t)-1)
				tomb = j;
		} else if (!strcmp(key(arr, v), k)) {
			*found = true;
			return j;
		}
		j = (j + 1) & (m->cap - 1);
	}
}

/*
 * The extender resolves every name kube-scheduler sends (5,000 per call at
 * 5,000 nodes, in any order) to a cluster index.  Going through nmap would
 * read each name from its struct lnode (kilobytes apart: a cache miss per
 * name), so the cluster's node names are also kept packed in one pool, each
 * entry its cluster index, its length, then the name, padded to 4 bytes, and an
 * open-addressing table of 8-byte slots (32 bits of the hash, the entry's
 * offset in 4-byte units) at a load factor of at most 3/4: 5,000 nodes take
 * a 64 KiB table and about 100 KiB of entries, which stay in the CPU's
 * cache, and a lookup reads one slot (two on a collision) and one entry.
 * Rebuilt with the cluster (cluster indices only change then).
 */
struct nindex {
	struct nslot {
		uint32_t h;	/* the hash's high half | 1; 0 = empty */
		uint32_t at;	/* the entry: pool + 4 * at */
	} *slot;
	size_t cap;		/* power of two */
	uint32_t *pool;		/* entries: cluster index, length, name, padding */
};

#if defined(__GNUC__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)(p))
#endif

static uint64_t load8(const char *s)
{
	uint64_t w;
	memcpy(&w, s, 8);
	return w;
}

/*
 * A word at a time, the last word overlapping the one before it, so the
 * usual name (8 bytes or more) needs no byte loop: fnv's byte loop and
 * data-dependent tail loops showed in profiles.
 */
static uint64_t name_hash(const char *s, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n, w = 0;
	if (n >= 8) {
		for (size_t i = 0; i + 8 < n; i += 8) {
			h = (h ^ load8(s + i)) * 0xff51afd7ed558ccdull;
			h ^= h >> 32;
		}
		w = load8(s + n - 8);
	} else {
		while (n--)
			w = (w << 8) | (unsigned char)s[n];
	}
	h ^= w; /* then murmur3's finaliser: every bit of the name reaches the low bits */
	h = (h ^ (h >> 33)) * 0xff51afd7ed558ccdull;
	h = (h ^ (h >> 33)) * 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 33);
}

/* a[0..n) == b[0..n), likewise. */
static bool same_bytes(const char *a, const char *b, size_t n)
{
	if (n < 8)
		return !memcmp(a, b, n);
	for (size_t i = 0; i + 8 < n; i += 8)
		if (load8(a + i) != load8(b + i))
			return false;
	return load8(a + n - 8) == load8(b + n - 8);
}

static void nindex_release(struct nindex *x)
{
	free(x->slot);
	free(x->pool);
	memset(x, 0, sizeof(*x));
}

/* Index names[0..n) (cluster index = position). */
static gf_err nindex_build(struct nindex *x, const char *const *names, size_t n)
{
	nindex_release(x);
	size_t cap = 64, words = 0;
	while (cap * 3 < 4 * n)
		cap *= 2;
	for (size_t i = 0; i < n; i++)
		words += 2 + (strlen(names[i]) + 3) / 4;
	if (words > UINT32_MAX)
		return GF_TOOBIG;
	x->slot = calloc(cap, sizeof(*x->slot));
	x->pool = calloc(words ? words : 1, sizeof(*x->pool));
	if (!x->slot || !x->pool) {
		nindex_release(x);
		return GF_NOMEM;
	}
	x->cap = cap;
	size_t at = 0;
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(names[i]);
		uint64_t h = name_hash(names[i], len);
		size_t j = h & (cap - 1);
		while (x->slot[j].h)
			j = (j + 1) & (cap - 1);
		x->slot[j] = (struct nslot){ (uint32_t)(h >> 32) | 1, (uint32_t)at };
		x->pool[at] = (uint32_t)i;
		x->pool[at + 1] = (uint32_t)len;
		memcpy(x->pool + at + 2, names[i], len); /* the padding: calloc's zeros */
		at += 2 + (len + 3) / 4;
	}
	return GF_OK;
}

/* The cluster index of name (len bytes, hash h = name_hash(name, len)), or -1. */
static int32_t nindex_find(const struct nindex *x, const char *name, size_t len, uint64_t h)
{
	if (!x->cap)
		return -1;
	uint32_t hi = (uint32_t)(h >> 32) | 1;
	for (size_t j = h & (x->cap - 1); x->slot[j].h; j = (j + 1) & (x->cap - 1)) {
		const uint32_t *e = x->pool + x->slot[j].at;
		if (x->slot[j].h == hi && e[1] == len && same_bytes((const char *)(e + 2), name, len))
			return (int32_t)e[0];
	}
	return -1;
}

/*
 * nindex_find for names[0..n): in blocks of 16, the hashes first with the
 * slots they probe fetched ahead, then the entries those slots point to,
 * then the comparisons, so the cache misses of a block overlap instead of
 * following one another (a quarter less time at 5,000 shuffled names).
 */
static void nindex_find_many(const struct nindex *x, const char *const *names, const size_t *lens,
			     size_t n, int32_t *ci)
{
	enum { B = 16 };
	size_t len[B];
	uint64_t h[B];
	for (size_t b = 0; b < n; b += B) {
		size_t m = n - b < B ? n - b : B;
		for (size_t k = 0; k < m; k++) {
			len[k] = lens ? lens[b + k] : strlen(names[b + k]);
			h[k] = name_hash(names[b + k], len[k]);
			if (x->cap)
				PREFETCH(&x->slot[h[k] & (x->cap - 1)]);
		}
		for (size_t k = 0; k < m && x->cap; k++) { /* and the entries the slots point to */
			const struct nslot *sl = &x->slot[h[k] & (x->cap - 1)];
			if (sl->h)
				PREFETCH(x->pool + sl->at);
		}
		for (size_t k = 0; k < m; k++)
			ci[b + k] = nindex_find(x, names[b + k], len[k], h[k]);
	}
}

/* ---- state --------------------------------------------------------------- */

enum lstate { P_IGNORED, P_PENDING, P_ASSUMED, P_BOUND };

struct lnode {
	struct gf_k8s_node n;
	int model;		/* catalog id or -1 */
	bool present;
	int32_t cidx;		/* index in the engine cluster; -1 = not in it */
	uint32_t gen;
};

struct lpod {
	bool used;
	enum lstate st;
	bool counted;		/* bound in the engine cluster */
	bool queued, parked, invalid;
	int32_t node;		/* node slot (ASSUMED/BOUND); -1 unknown */
	uint32_t gen;
	struct gf_pod_spec eff;	/* what is bound */
	uint8_t gpus[GF_MAX_GPUS];
	uint64_t report_hash;	/* the last FailedScheduling message reported, hashed */
	double report_at;	/* and when (the caller's clock) */
	struct gf_k8s_pod p;
};

struct gf_live {
	struct gf_live_opts o;
	char name[GF_K8S_NAME_MAX];
	struct gf_catalog cat;
	struct gf_rng rng;

	struct lnode *nodes;
	size_t nnodes, capnodes;
	struct smap nmap;

	struct lpod *pods;
	size_t npods, cappods;
	uint32_t *freelist;
	size_t nfree;
	struct smap pmap;

	uint32_t *queue;
	size_t qhead, qlen, qcap;

	uint32_t gen[2];	/* sync generations: nodes, pods */

	/* The engine. */
	bool dirty;		/* node set changed: rebuild before deciding */
	bool sched_dirty;	/* target changed: new scheduler */
	gf_cluster *cluster;
	uint32_t *cnode;	/* cluster index -> node slot */
	struct gf_target target;
	bool have_target;
	size_t target_pods;	/* GPU pods the target was built from */
	size_t new_gpu_pods;	/* GPU pods seen since */
	struct gf_policy_env env;
	gf_sched *sched;
	int64_t model_mem[GF_MAX_MODELS];
	size_t nconstrained;	/* present nodes with taints or cordoned */
	uint32_t *blocked;	/* scratch: cluster indices blocked for one decision */
	uint8_t *ext_mark;	/* scratch for the extender, one per cluster node: asked about */
	uint8_t *ext_code;	/* its enum gf_why */
	int64_t *ext_score;	/* its score */
	uint32_t *ext_list;	/* the nodes to score, ascending */
	struct nindex names;	/* node name -> cluster index, for the extender */
	uint64_t epoch;		/* cluster rebuilds: cluster indices are valid within one */
	uint64_t resets;	/* make_sched() calls */
	bool freed;
	uint64_t conflicts;
};

static const char *node_key(const void *arr, uint32_t i)
{
	return ((const struct lnode *)arr)[i].n.name;
}

static const char *pod_key(const void *arr, uint32_t i)
{
	return ((const struct lpod *)arr)[i].p.uid;
}

gf_err gf_live_create(const struct gf_live_opts *o, gf_live **out)
{
	gf_live *l = calloc(1, sizeof(*l));
	if (!l)
		return GF_NOMEM;
	if (o)
		l->o = *o;
	if (!l->o.policy)
		l->o.policy = &gf_policy_fgd;
	if (!l->o.target_pct)
		l->o.target_pct = 95;
	snprintf(l->name, sizeof(l->name), "%s", l->o.scheduler_name ? l->o.scheduler_name : "gpufleet");
	l->o.scheduler_name = l->name;
	gf_rng_init(&l->rng, l->o.seed ? l->o.seed : 42);
	gf_err e = gf_catalog_init(&l->cat);
	if (e) {
		free(l);
		return e;
	}
	l->dirty = true;
	*out = l;
	return GF_OK;
}

static void drop_engine(gf_live *l)
{
	gf_sched_destroy(l->sched);
	l->sched = NULL;
	if (l->have_target)
		gf_target_release(&l->target);
	l->have_target = false;
}

void gf_live_destroy(gf_live *l)
{
	if (!l)
		return;
	drop_engine(l);
	gf_cluster_destroy(l->cluster);
	free(l->cnode);
	free(l->nodes);
	free(l->nmap.slot);
	free(l->pods);
	free(l->freelist);
	free(l->pmap.slot);
	free(l->queue);
	free(l->blocked);
	free(l->ext_mark);
	free(l->ext_code);
	free(l->ext_score);
	free(l->ext_list);
	nindex_release(&l->names);
	gf_catalog_release(&l->cat);
	free(l);
}

/* ---- helpers ----------------------------------------------------------- */

static struct lnode *node_by_name(gf_live *l, const char *name)
{
	bool f;
	size_t j = smap_find(&l->nmap, l->nodes, node_key, name, &f);
	return f ? &l->nodes[l->nmap.slot[j]] : NULL;
}

static struct lpod *pod_by_uid(const gf_live *l, const char *uid)
{
	bool f;
	size_t j = smap_find(&l->pmap, l->pods, pod_key, uid, &f);
	return f ? &l->pods[l->pmap.slot[j]] : NULL;
}

static void enqueue(gf_live *l, struct lpod *lp)
{
	if (lp->queued)
		return;
	if (l->qhead + l->qlen == l->qcap) {
		if (l->qhead) {
			memmove(l->queue, l->queue + l->qhead, l->qlen * sizeof(*l->queue));
			l->qhead = 0;
		}
		if (l->qlen == l->qcap) {
			size_t nc = l->qcap ? l->qcap * 2 : 256;
			uint32_t *q = realloc(l->queue, nc * sizeof(*q));
			if (!q)
				return; /* stays pending; requeue_parked picks it up later */
			l->queue = q;
			l->qcap = nc;
		}
	}
	l->queue[l->qhead + l->qlen++] = (uint32_t)(lp - l->pods);
	lp->queued = true;
	lp->parked = false;
}

/* Effective request of p: model constraint interned, GPU memory -> milli.
 * 0 ok; -1 invalid; -2 unschedulable (msg). */
static int effective(gf_live *l, const struct gf_k8s_pod *p, int64_t node_gpu_mem,
		     struct gf_pod_spec *eff, char *msg, size_t msglen)
{
	*eff = p->req;
	eff->spec = 0;
	if (p->invalid[0]) {
		snprintf(msg, msglen, "invalid GPU request: %s", p->invalid);
		return -1;
	}
	if (!eff->gpu_count)
		return 0;
	if (p->model[0] && gf_catalog_spec(&l->cat, p->model, strlen(p->model), &eff->spec)) {
		snprintf(msg, msglen, "invalid GPU request: model constraint '%.100s' not usable "
				      "(too long or too many distinct constraints)", p->model);
		return -1;
	}
	if (!p->req.gpu_mem_mib)
		return 0;
	int64_t mem = p->req.gpu_mem_mib, best = 0;
	if (node_gpu_mem > 0) {
		/* On a known node (accounting a bound pod): that node's GPUs. */
		best = node_gpu_mem;
	} else {
		char text[GF_SPEC_MAX];
		size_t n = 0;
		text[0] = '\0';
		for (int m = 0; m < l->cat.nmodels; m++) {
			if (l->model_mem[m] < mem || !gf_catalog_allows(&l->cat, eff->spec, m))
				continue;
			int k = snprintf(text + n, sizeof(text) - n, "%s%s", n ? "|" : "", l->cat.models[m]);
			if (k < 0 || (size_t)k >= sizeof(text) - n)
				break;
			n += (size_t)k;
			if (!best || l->model_mem[m] < best)
				best = l->model_mem[m];
		}
		if (!best) {
			snprintf(msg, msglen, "0/%zu nodes are available: no GPU model%s with %lld MiB "
					      "per GPU.", l->cluster ? gf_cluster_nnodes(l->cluster) : 0,
				 p->model[0] ? " allowed by the model constraint" : "", (long long)mem);
			return -2;
		}
		if (gf_catalog_spec(&l->cat, text, n, &eff->spec)) {
			snprintf(msg, msglen, "invalid GPU request: too many distinct model constraints");
			return -1;
		}
	}
	int64_t need = (mem * GF_MILLI_PER_GPU + best - 1) / best;
	if (need > GF_MILLI_PER_GPU)
		need = GF_MILLI_PER_GPU;
	if (!p->milli_given || need > eff->gpu_milli)
		eff->gpu_milli = (int)need;
	return 0;
}

static void unaccount(gf_live *l, struct lpod *lp)
{
	if (lp->counted && l->cluster) {
		struct lnode *nd = &l->nodes[lp->node];
		if (nd->cidx >= 0 && gf_cluster_unbind(l->cluster, (size_t)nd->cidx, &lp->eff, lp->gpus) == GF_OK)
			l->freed = true;
	}
	lp->counted = false;
}

/* Bind an ASSUMED or BOUND pod into the engine (eff/gpus computed for BOUND). */
static void account(gf_live *l, struct lpod *lp)
{
	lp->counted = false;
	if (l->dirty || !l->cluster || lp->node < 0)
		return; /* the rebuild does it */
	struct lnode *nd = &l->nodes[lp->node];
	if (!nd->present || nd->cidx < 0)
		return;
	size_t ci = (size_t)nd->cidx;
	if (lp->st == P_BOUND) {
		const struct gf_k8s_pod *p = &lp->p;
		char msg[256];
		if (effective(l, p, nd->n.spec.gpu_mem_mib, &lp->eff, msg, sizeof(msg)))
			lp->eff = p->req, lp->eff.gpu_count = 0, lp->eff.gpu_milli = 0;
		lp->eff.spec = 0; /* the node is given: no model filter when accounting */
		if (p->assigned && !strcmp(p->assigned_node, p->node)) {
			lp->eff.gpu_count = p->assigned_ngpus;
			lp->eff.gpu_milli = p->assigned_milli;
			memcpy(lp->gpus, p->assigned_gpus, sizeof(lp->gpus));
		} else if (lp->eff.gpu_count) {
			const struct gf_node *st = gf_cluster_node(l->cluster, ci);
			if (gf_gpus_ascending_fit(st, lp->eff.gpu_count, lp->eff.gpu_milli, lp->gpus) <
			    lp->eff.gpu_count) {
				l->conflicts++;
				return;
			}
		}
	}
	if (gf_cluster_bind(l->cluster, ci, &lp->eff, lp->gpus) == GF_OK)
		lp->counted = true;
	else
		l->conflicts++;
}

static gf_err build_target(gf_live *l)
{
	if (l->have_target)
		gf_target_release(&l->target);
	l->have_target = false;
	size_t n = 0;
	for (size_t i = 0; i < l->npods; i++) {
		struct lpod *lp = &l->pods[i];
		n += lp->used && lp->st != P_IGNORED && lp->p.req.gpu_count > 0;
	}
	struct gf_pod_spec *v = malloc((n ? n : 1) * sizeof(*v));
	if (!v)
		return GF_NOMEM;
	size_t k = 0;
	for (size_t i = 0; i < l->npods; i++) {
		struct lpod *lp = &l->pods[i];
		if (!lp->used || lp->st == P_IGNORED || lp->p.req.gpu_count <= 0)
			continue;
		v[k] = (lp->st == P_PENDING) ? lp->p.req : lp->eff;
		if (lp->st == P_PENDING) {
			char msg[8];
			struct gf_pod_spec e;
			if (!effective(l, &lp->p, 0, &e, msg, sizeof(msg)))
				v[k] = e;
			else
				continue;
		}
		if (v[k].gpu_count > 0 && v[k].gpu_milli > 0)
			k++;
	}
	if (!k) {
		memset(&v[0], 0, sizeof(v[0]));
		v[0].gpu_count = 1;
		v[0].gpu_milli = GF_MILLI_PER_GPU;
		k = 1;
	}
	gf_err e = gf_target_build(v, k, &l->cat, l->o.target_pct, &l->target);
	free(v);
	if (!e) {
		l->have_target = true;
		l->target_pods = k;
		l->new_gpu_pods = 0;
	}
	return e;
}

static gf_err make_sched(gf_live *l)
{
	l->resets++;
	drop_engine(l);
	if (!l->cluster)
		return GF_OK;
	gf_err e = build_target(l);
	if (e)
		return e;
	l->env.cluster = l->cluster;
	l->env.cat = &l->cat;
	l->env.target = &l->target;
	l->env.features = gf_features_default();
	if ((e = gf_sched_create(l->o.policy, &l->env, &l->sched)))
		return e;
	l->sched_dirty = false;
	return GF_OK;
}

/* A taint or a cordon: decisions must check who the node admits. */
static bool node_constrained(const struct gf_k8s_node *n)
{
	return n->ntaints > 0 || n->unschedulable;
}

static gf_err rebuild(gf_live *l)
{
	drop_engine(l);
	gf_cluster_destroy(l->cluster);
	l->cluster = NULL;
	free(l->cnode);
	l->cnode = NULL;
	size_t k = 0;
	for (size_t i = 0; i < l->nnodes; i++)
		k += l->nodes[i].present;
	for (int m = 0; m < GF_MAX_MODELS; m++)
		l->model_mem[m] = 0;
	l->nconstrained = 0;
	for (size_t i = 0; i < l->npods; i++)
		l->pods[i].counted = false;
	struct gf_node_spec *specs = malloc((k ? k : 1) * sizeof(*specs));
	l->cnode = malloc((k ? k : 1) * sizeof(*l->cnode));
	if (!specs || !l->cnode) {
		free(specs);
		return GF_NOMEM;
	}
	k = 0;
	for (size_t i = 0; i < l->nnodes; i++) {
		struct lnode *nd = &l->nodes[i];
		nd->cidx = -1;
		if (!nd->present)
			continue;
		specs[k] = nd->n.spec;
		specs[k].model = nd->model;
		if (nd->model >= 0 && nd->n.spec.gpu_mem_mib > 0 &&
		    (!l->model_mem[nd->model] || nd->n.spec.gpu_mem_mib < l->model_mem[nd->model]))
			l->model_mem[nd->model] = nd->n.spec.gpu_mem_mib;
		nd->cidx = (int32_t)k;
		l->cnode[k++] = (uint32_t)i;
		l->nconstrained += node_constrained(&nd->n);
	}
	free(l->blocked);
	free(l->ext_mark);
	free(l->ext_code);
	free(l->ext_score);
	free(l->ext_list);
	l->blocked = malloc((k ? k : 1) * sizeof(*l->blocked));
	l->ext_mark = calloc(k ? k : 1, sizeof(*l->ext_mark));
	l->ext_code = malloc((k ? k : 1) * sizeof(*l->ext_code));
	l->ext_score = malloc((k ? k : 1) * sizeof(*l->ext_score));
	l->ext_list = malloc((k ? k : 1) * sizeof(*l->ext_list));
	if (!l->blocked || !l->ext_mark || !l->ext_code || !l->ext_score || !l->ext_list) {
		free(specs);
		return GF_NOMEM;
	}
	gf_err e = GF_OK;
	if (k)
		e = gf_cluster_create(specs, k, &l->cluster);
	free(specs);
	if (e)
		return e;
	/* the extender's name index: the cluster's nodes by name, in cluster order */
	const char **cn = malloc((k ? k : 1) * sizeof(*cn));
	if (!cn)
		return GF_NOMEM;
	for (size_t i = 0; i < k; i++)
		cn[i] = l->nodes[l->cnode[i]].n.name;
	e = nindex_build(&l->names, cn, k);
	free(cn);
	if (e)
		return e;
	l->epoch++;
	l->dirty = false;
	/* Assumed pods first: they were decided against the state before. */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < l->npods; i++) {
			struct lpod *lp = &l->pods[i];
			if (lp->used && lp->st == (pass ? P_BOUND : P_ASSUMED))
				account(l, lp);
		}
	return make_sched(l);
}

static gf_err ensure(gf_live *l)
{
	if (l->dirty)
		return rebuild(l);
	if (l->sched_dirty)
		return make_sched(l);
	return GF_OK;
}

/* ---- feeding ------------------------------------------------------------ */

/* What the engine's cluster holds of a node: a change means a rebuild. */
static bool same_engine_spec(const struct gf_k8s_node *a, const struct gf_k8s_node *b)
{
	return a->spec.cpu_milli == b->spec.cpu_milli && a->spec.mem_mib == b->spec.mem_mib &&
	       a->spec.ngpus == b->spec.ngpus && a->spec.gpu_mem_mib == b->spec.gpu_mem_mib &&
	       !memcmp(a->spec.topo, b->spec.topo, sizeof(a->spec.topo)) && !strcmp(a->model, b->model);
}

/* The rest: who it admits (labels, taints, cordon, pod count) and the GPUs' UUIDs. */
static bool same_admission(const struct gf_k8s_node *a, const struct gf_k8s_node *b)
{
	return a->nuuids == b->nuuids && !memcmp(a->uuids, b->uuids, sizeof(a->uuids)) &&
	       a->unschedulable == b->unschedulable && a->max_pods == b->max_pods &&
	       a->ntaints == b->ntaints && !memcmp(a->taints, b->taints, sizeof(a->taints)) &&
	       a->labels_len == b->labels_len && !memcmp(a->labels, b->labels, a->labels_len);
}

void gf_live_node_set(gf_live *l, const struct gf_k8s_node *n)
{
	bool f;
	if (l->nmap.used * 2 >= l->nmap.cap && smap_grow(&l->nmap, l->nodes, node_key))
		return;
	size_t j = smap_find(&l->nmap, l->nodes, node_key, n->name, &f);
	struct lnode *nd;
	if (f) {
		nd = &l->nodes[l->nmap.slot[j]];
		nd->gen = l->gen[0];
		if (nd->present && same_engine_spec(&nd->n, n)) {
			/*
			 * Readiness, resourceVersion, or who the node admits (a taint,
			 * a label, a cordon: read from here at each decision): no
			 * rebuild of the engine, which at 5,000 nodes costs
			 * milliseconds and every cached score.
			 */
			if (!same_admission(&nd->n, n)) {
				l->nconstrained += (size_t)node_constrained(n);
				l->nconstrained -= (size_t)node_constrained(&nd->n);
				l->freed = true; /* parked pods get another look */
			}
			nd->n = *n;
			return;
		}
	} else {
		if (l->nnodes == l->capnodes) {
			size_t nc = l->capnodes ? l->capnodes * 2 : 64;
			struct lnode *v = realloc(l->nodes, nc * sizeof(*v));
			if (!v)
				return;
			l->nodes = v;
			l->capnodes = nc;
		}
		nd = &l->nodes[l->nnodes];
		memset(nd, 0, sizeof(*nd));
		if (l->nmap.slot[j] == EMPTY)
			l->nmap.used++;
		l->nmap.slot[j] = (uint32_t)l->nnodes++;
		nd->gen = l->gen[0];
	}
	nd->n = *n;
	nd->model = -1;
	if (n->model[0] && n->spec.ngpus > 0 &&
	    gf_catalog_model(&l->cat, n->model, strlen(n->model), &nd->model))
		nd->model = -1;
	nd->present = true;
	nd->cidx = -1;
	l->dirty = true;
	l->freed = true;
	/* Pods bound to this node before it was known are accounted at the rebuild. */
	for (size_t i = 0; i < l->npods; i++) {
		struct lpod *lp = &l->pods[i];
		if (lp->used && lp->st == P_BOUND && lp->node < 0 && !strcmp(lp->p.node, n->name))
			lp->node = (int32_t)(nd - l->nodes);
	}
}

void gf_live_node_delete(gf_live *l, const char *name)
{
	struct lnode *nd = node_by_name(l, name);
	if (!nd || !nd->present)
		return;
	nd->present = false;
	l->dirty = true;
}

static void pod_free(gf_live *l, struct lpod *lp)
{
	unaccount(l, lp);
	bool f;
	size_t j = smap_find(&l->pmap, l->pods, pod_key, lp->p.uid, &f);
	if (f)
		l->pmap.slot[j] = TOMB;
	lp->used = false;
	lp->queued = false;
	uint32_t *fl = realloc(l->freelist, (l->nfree + 1) * sizeof(*fl));
	if (fl) {
		l->freelist = fl;
		l->freelist[l->nfree++] = (uint32_t)(lp - l->pods);
	}
}

void gf_live_pod_set(gf_live *l, const struct gf_k8s_pod *p)
{
	if (!p->uid[0])
		return;
	if (l->pmap.used * 2 >= l->pmap.cap && smap_grow(&l->pmap, l->pods, pod_key))
		return;
	bool f;
	size_t j = smap_find(&l->pmap, l->pods, pod_key, p->uid, &f);
	struct lpod *lp;
	if (f) {
		lp = &l->pods[l->pmap.slot[j]];
	} else {
		uint32_t idx;
		if (l->nfree) {
			idx = l->freelist[--l->nfree];
		} else {
			if (l->npods == l->cappods) {
				size_t nc = l->cappods ? l->cappods * 2 : 256;
				struct lpod *v = realloc(l->pods, nc * sizeof(*v));
				if (!v)
					return;
				l->pods = v;
				l->cappods = nc;
			}
			idx = (uint32_t)l->npods++;
		}
		lp = &l->pods[idx];
		memset(lp, 0, sizeof(*lp));
		lp->used = true;
		lp->node = -1;
		lp->st = P_IGNORED;
		if (l->pmap.slot[j] == EMPTY)
			l->pmap.used++;
		l->pmap.slot[j] = idx;
		/* The target follows the population: rebuilt when it has doubled. */
		if (p->req.gpu_count > 0 && ++l->new_gpu_pods >= (l->target_pods > 64 ? l->target_pods : 64))
			l->sched_dirty = true;
	}
	lp->gen = l->gen[1];
	bool terminal = p->phase == GF_PHASE_SUCCEEDED || p->phase == GF_PHASE_FAILED;
	if (terminal) {
		unaccount(l, lp);
		lp->p = *p;
		lp->st = P_IGNORED;
		lp->queued = lp->parked = false;
		return;
	}
	if (p->node[0]) {
		struct lnode *nd = node_by_name(l, p->node);
		int32_t ni = nd ? (int32_t)(nd - l->nodes) : -1;
		if (lp->st == P_ASSUMED && lp->node == ni && ni >= 0 &&
		    (!p->assigned || (p->assigned_ngpus == lp->eff.gpu_count &&
				      !memcmp(p->assigned_gpus, lp->gpus, (size_t)lp->eff.gpu_count)))) {
			lp->p = *p; /* the binding we made: confirmed */
			lp->st = P_BOUND;
			return;
		}
		if (lp->st == P_BOUND && lp->node == ni && !strcmp(lp->p.node, p->node) &&
		    lp->p.assigned == p->assigned && (!p->assigned ||
		    (lp->p.assigned_ngpus == p->assigned_ngpus && lp->p.assigned_milli == p->assigned_milli &&
		     !memcmp(lp->p.assigned_gpus, p->assigned_gpus, sizeof(p->assigned_gpus))))) {
			lp->p = *p;
			return;
		}
		unaccount(l, lp);
		lp->p = *p;
		lp->st = P_BOUND;
		lp->node = ni;
		lp->queued = lp->parked = false;
		account(l, lp);
		return;
	}
	/* Not bound. */
	if (lp->st == P_BOUND && lp->p.node[0])
		return; /* spec.nodeName is never unset: an unbound copy is older (a watch behind a list) */
	if (lp->st == P_ASSUMED) {
		lp->p = *p; /* binding in flight */
		return;
	}
	if (lp->st == P_BOUND)
		unaccount(l, lp);
	bool ours = !strcmp(p->scheduler, l->name) && !p->deleting;
	/* Only a change of the request retries a parked pod: our own status
	 * updates (the PodScheduled condition) must not. */
	bool changed = memcmp(&lp->p.req, &p->req, sizeof(p->req)) != 0 ||
		       strcmp(lp->p.model, p->model) || strcmp(lp->p.invalid, p->invalid) ||
		       lp->p.milli_given != p->milli_given;
	lp->p = *p;
	if (!ours) {
		lp->st = P_IGNORED;
		lp->queued = lp->parked = false;
		return;
	}
	if (lp->st != P_PENDING) {
		lp->st = P_PENDING;
		lp->invalid = false;
		enqueue(l, lp);
	} else if (changed && lp->parked) {
		lp->invalid = false;
		enqueue(l, lp); /* the pod changed: try again */
	}
}

void gf_live_pod_delete(gf_live *l, const char *uid)
{
	struct lpod *lp = pod_by_uid(l, uid);
	if (lp)
		pod_free(l, lp);
}

void gf_live_sync_begin(gf_live *l, bool pods)
{
	l->gen[pods]++;
}

void gf_live_sync_end(gf_live *l, bool pods)
{
	uint32_t g = l->gen[pods];
	if (pods) {
		for (size_t i = 0; i < l->npods; i++)
			if (l->pods[i].used && l->pods[i].gen != g && l->pods[i].st != P_ASSUMED)
				pod_free(l, &l->pods[i]);
	} else {
		for (size_t i = 0; i < l->nnodes; i++)
			if (l->nodes[i].present && l->nodes[i].gen != g) {
				l->nodes[i].present = false;
				l->dirty = true;
			}
	}
}

/* ---- deciding ----------------------------------------------------------- */

static bool has_topology(const struct gf_node_spec *s)
{
	for (int g = 0; g < s->ngpus; g++)
		if (s->topo[g].numa >= 0 || s->topo[g].nvlink_island >= 0)
			return true;
	return false;
}

static void fill_placed(gf_live *l, struct lpod *lp, size_t ci, struct gf_live_decision *d)
{
	struct lnode *nd = &l->nodes[l->cnode[ci]];
	d->result = GF_LIVE_PLACED;
	snprintf(d->node, sizeof(d->node), "%s", nd->n.name);
	d->ngpus = lp->eff.gpu_count;
	memcpy(d->gpus, lp->gpus, sizeof(d->gpus));
	d->milli = lp->eff.gpu_milli;
	d->mem_mib = lp->p.req.gpu_mem_mib;
	d->uuids[0] = '\0';
	if (nd->n.nuuids) {
		size_t n = 0;
		for (int k = 0; k < d->ngpus && d->gpus[k] < nd->n.nuuids; k++) {
			int w = snprintf(d->uuids + n, sizeof(d->uuids) - n, "%s%s", k ? "," : "",
					 nd->n.uuids[d->gpus[k]]);
			if (w < 0 || (size_t)w >= sizeof(d->uuids) - n)
				break;
			n += (size_t)w;
		}
	}
	lp->node = (int32_t)l->cnode[ci];
}

/* ---- constraints the engine does not model ------------------------------ */

static bool tolerates(const struct gf_k8s_pod *p, const char *key, const char *value, uint8_t effect)
{
	for (int i = 0; i < p->ntols; i++) {
		const struct gf_k8s_toleration *t = &p->tols[i];
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

static bool expr_holds(const struct gf_k8s_node *n, const struct gf_k8s_expr *x)
{
	const char *v = gf_k8s_node_label(n, x->key);
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

/* May pod p go to node n at all (cordon, taints, selector, affinity)?  As kube-scheduler's
 * NodeUnschedulable, TaintToleration and NodeAffinity filters. */
static enum gf_why admits(const struct gf_k8s_node *n, const struct gf_k8s_pod *p)
{
	if (n->unschedulable &&
	    !tolerates(p, "node.kubernetes.io/unschedulable", "", GF_EFFECT_NO_SCHEDULE))
		return GF_WHY_UNSCHEDULABLE;
	for (int i = 0; i < n->ntaints; i++)
		if (!tolerates(p, n->taints[i].key, n->taints[i].value, n->taints[i].effect))
			return GF_WHY_TAINT;
	for (size_t i = 0; i < p->selector_len;) {
		const char *k = p->selector + i, *v = k + strlen(k) + 1;
		const char *have = gf_k8s_node_label(n, k);
		if (!have || strcmp(have, v))
			return GF_WHY_AFFINITY;
		i = (size_t)(v + strlen(v) + 1 - p->selector);
	}
	if (p->nterms) {
		bool any = false;
		for (int t = 0; t < p->nterms && !any; t++) {
			bool all = p->terms[t].nexprs > 0;
			for (int x = 0; x < p->terms[t].nexprs && all; x++)
				all = expr_holds(n, &p->terms[t].e[x]);
			any = all;
		}
		if (!any)
			return GF_WHY_AFFINITY;
	}
	return GF_WHY_FITS;
}

static bool pod_constrained(const struct gf_k8s_pod *p)
{
	return p->selector_len || p->nterms;
}

/*
 * Make node ci unusable for one decision: bind "blocker" pods that take its
 * free CPU, memory and every GPU's free share, so the engine's filter rejects
 * it; unblock() unbinds them in reverse.  Each changes the node's version, so
 * cached scores of blocked nodes are recomputed (only theirs).  A pod asking
 * no CPU, memory or GPU would still pass: such pods are not GPU pods.
 */
static void block(gf_live *l, size_t ci)
{
	const struct gf_node *nd = gf_cluster_node(l->cluster, ci);
	struct gf_pod_spec b;
	memset(&b, 0, sizeof(b));
	b.cpu_milli = nd->cpu_free;
	b.mem_mib = nd->mem_free;
	uint16_t f[GF_MAX_GPUS];
	int ng = nd->ngpus;
	memcpy(f, nd->gpu_free, sizeof(f));
	(void)gf_cluster_bind(l->cluster, ci, &b, NULL);
	for (int g = 0; g < ng; g++)
		if (f[g]) {
			struct gf_pod_spec gb;
			memset(&gb, 0, sizeof(gb));
			gb.gpu_count = 1;
			gb.gpu_milli = f[g];
			uint8_t idx = (uint8_t)g;
			(void)gf_cluster_bind(l->cluster, ci, &gb, &idx);
		}
}

/* Block every node pod p may not use; returns how many; fills reasons if counts != NULL. */
static size_t block_all(gf_live *l, const struct gf_k8s_pod *p, size_t *counts)
{
	size_t n = 0;
	bool constrained = l->nconstrained || pod_constrained(p);
	size_t k = gf_cluster_nnodes(l->cluster);
	for (size_t ci = 0; ci < k; ci++) {
		const struct gf_k8s_node *kn = &l->nodes[l->cnode[ci]].n;
		enum gf_why w = GF_WHY_FITS;
		if (kn->max_pods && gf_cluster_node(l->cluster, ci)->npods >= (uint64_t)kn->max_pods)
			w = GF_WHY_PODS;
		else if (constrained)
			w = admits(kn, p);
		if (w == GF_WHY_FITS)
			continue;
		if (counts)
			counts[w]++;
		l->blocked[n++] = (uint32_t)ci;
	}
	return n;
}

/* Snapshot of a node's free amounts, to undo blockers exactly. */
struct snap {
	int64_t cpu, mem;
	uint16_t g[GF_MAX_GPUS];
};

static void unblock(gf_live *l, size_t ci, const struct snap *s)
{
	const struct gf_node *nd = gf_cluster_node(l->cluster, ci);
	for (int g = 0; g < nd->ngpus; g++)
		if (s->g[g]) {
			struct gf_pod_spec gb;
			memset(&gb, 0, sizeof(gb));
			gb.gpu_count = 1;
			gb.gpu_milli = s->g[g];
			uint8_t idx = (uint8_t)g;
			(void)gf_cluster_unbind(l->cluster, ci, &gb, &idx);
		}
	struct gf_pod_spec b;
	memset(&b, 0, sizeof(b));
	b.cpu_milli = s->cpu;
	b.mem_mib = s->mem;
	(void)gf_cluster_unbind(l->cluster, ci, &b, NULL);
}

/* Why-not summary over every node of the engine. */
static void why_summary(gf_live *l, const struct gf_k8s_pod *p, const struct gf_pod_spec *eff,
			char *msg, size_t msglen)
{
	size_t counts[GF_WHY_COUNT_] = { 0 };
	size_t n = l->cluster ? gf_cluster_nnodes(l->cluster) : 0;
	for (size_t i = 0; i < n; i++) {
		const struct gf_k8s_node *kn = &l->nodes[l->cnode[i]].n;
		enum gf_why w = kn->max_pods && gf_cluster_node(l->cluster, i)->npods >= (uint64_t)kn->max_pods
					? GF_WHY_PODS : admits(kn, p);
		if (w == GF_WHY_FITS)
			w = gf_cluster_why_not(l->cluster, &l->cat, i, eff);
		counts[w]++;
	}
	gf_why_summary(counts, n, msg, msglen);
}

static void decide(gf_live *l, struct lpod *lp, struct gf_live_decision *d)
{
	memset(d, 0, sizeof(*d));
	int r = effective(l, &lp->p, 0, &lp->eff, d->message, sizeof(d->message));
	if (r) {
		d->result = r == -1 ? GF_LIVE_INVALID : GF_LIVE_UNSCHEDULABLE;
		return;
	}
	if (!l->cluster || !l->sched) {
		d->result = GF_LIVE_UNSCHEDULABLE;
		snprintf(d->message, sizeof(d->message), "0/0 nodes are available.");
		return;
	}
	struct gf_placement pl;
	size_t nb = block_all(l, &lp->p, NULL);
	struct snap *snaps = NULL;
	if (nb) {
		snaps = malloc(nb * sizeof(*snaps));
		if (!snaps) {
			d->result = GF_LIVE_UNSCHEDULABLE;
			snprintf(d->message, sizeof(d->message), "internal error: out of memory");
			return;
		}
		for (size_t i = 0; i < nb; i++) {
			const struct gf_node *nd = gf_cluster_node(l->cluster, l->blocked[i]);
			snaps[i].cpu = nd->cpu_free;
			snaps[i].mem = nd->mem_free;
			memcpy(snaps[i].g, nd->gpu_free, sizeof(snaps[i].g));
			block(l, l->blocked[i]);
		}
	}
	enum gf_outcome oc = gf_sched_place(l->sched, &lp->eff, &l->rng, &pl);
	for (size_t i = nb; i-- > 0;)
		unblock(l, l->blocked[i], &snaps[i]);
	free(snaps);
	if (oc != GF_PLACED) {
		d->result = GF_LIVE_UNSCHEDULABLE;
		why_summary(l, &lp->p, &lp->eff, d->message, sizeof(d->message));
		return;
	}
	d->nfeasible = pl.nfeasible;
	memcpy(lp->gpus, pl.gpus, sizeof(lp->gpus));
	struct lnode *nd = &l->nodes[l->cnode[pl.node]];
	if (lp->eff.gpu_count >= 2 && has_topology(&nd->n.spec)) {
		uint8_t g[GF_MAX_GPUS];
		enum gf_topo_fit fit;
		if (gf_topo_pick(gf_cluster_node(l->cluster, pl.node), &nd->n.spec, lp->eff.gpu_count,
				 lp->eff.gpu_milli, g, &fit) == lp->eff.gpu_count) {
			memcpy(lp->gpus, g, (size_t)lp->eff.gpu_count);
			d->fit = fit;
		}
	}
	lp->eff.spec = 0;
	fill_placed(l, lp, pl.node, d);
}

bool gf_live_schedule_next(gf_live *l, struct gf_k8s_pod *pod, struct gf_live_decision *d)
{
	while (l->qlen) {
		struct lpod *lp = &l->pods[l->queue[l->qhead]];
		l->qhead++;
		l->qlen--;
		if (!lp->used || !lp->queued || lp->st != P_PENDING)
			continue;
		lp->queued = false;
		if (ensure(l)) {
			memset(d, 0, sizeof(*d));
			d->result = GF_LIVE_UNSCHEDULABLE;
			snprintf(d->message, sizeof(d->message), "internal error: out of memory");
			lp->parked = true;
			*pod = lp->p;
			return true;
		}
		decide(l, lp, d);
		*pod = lp->p;
		if (d->result == GF_LIVE_PLACED) {
			lp->st = P_ASSUMED;
			size_t ci = (size_t)l->nodes[lp->node].cidx;
			if (gf_cluster_bind(l->cluster, ci, &lp->eff, lp->gpus) == GF_OK) {
				lp->counted = true;
			} else { /* cannot happen: the engine chose it */
				lp->st = P_PENDING;
				d->result = GF_LIVE_UNSCHEDULABLE;
				snprintf(d->message, sizeof(d->message), "internal error: bind refused");
				lp->parked = true;
			}
		} else {
			lp->parked = true;
			lp->invalid = d->result == GF_LIVE_INVALID;
		}
		return true;
	}
	l->qhead = 0;
	return false;
}

void gf_live_forget(gf_live *l, const char *uid, bool requeue)
{
	struct lpod *lp = pod_by_uid(l, uid);
	if (!lp || lp->st != P_ASSUMED)
		return;
	unaccount(l, lp);
	lp->node = -1;
	bool ours = !strcmp(lp->p.scheduler, l->name) && !lp->p.deleting;
	lp->st = ours ? P_PENDING : P_IGNORED;
	if (ours && requeue)
		enqueue(l, lp);
	else if (ours)
		lp->parked = true;
}

bool gf_live_take_freed(gf_live *l)
{
	bool f = l->freed;
	l->freed = false;
	return f;
}

size_t gf_live_requeue_parked(gf_live *l)
{
	size_t n = 0;
	for (size_t i = 0; i < l->npods; i++) {
		struct lpod *lp = &l->pods[i];
		if (lp->used && lp->st == P_PENDING && lp->parked && !lp->invalid) {
			enqueue(l, lp);
			n++;
		}
	}
	return n;
}

bool gf_live_should_report(gf_live *l, const char *uid, const char *msg, double now, double every)
{
	struct lpod *lp = pod_by_uid(l, uid);
	if (!lp)
		return true;
	uint64_t h = fnv(msg) | 1;
	if (h == lp->report_hash && now - lp->report_at < every)
		return false;
	lp->report_hash = h;
	lp->report_at = now;
	return true;
}

bool gf_live_pod_get(const gf_live *l, const char *uid, struct gf_k8s_pod *out)
{
	struct lpod *lp = pod_by_uid(l, uid);
	if (!lp)
		return false;
	*out = lp->p;
	return true;
}

/* ---- extender ------------------------------------------------------------ */

gf_err gf_live_epoch(gf_live *l, uint64_t *epoch)
{
	gf_err e = ensure(l);
	*epoch = l->epoch;
	return e;
}

gf_err gf_live_resolve(gf_live *l, const char *const *names, const size_t *lens, size_t n,
			int32_t *ci, uint64_t *epoch)
{
	gf_err e = ensure(l);
	if (e)
		return e;
	nindex_find_many(&l->names, names, lens, n, ci);
	*epoch = l->epoch;
	return GF_OK;
}

/*
 * The extender asks about thousands of nodes in an order of its own; the
 * engine's node state is read fastest in index order.  So: mark the nodes
 * asked about, sweep the marks in index order doing the work into per-node
 * scratch (ext_code, ext_score), then gather the answers in the asked order
 * and clear the marks (unmark()).
 */
static void mark(gf_live *l, const int32_t *ci, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (ci[i] >= 0)
			l->ext_mark[ci[i]] = 1;
}

static void unmark(gf_live *l, const int32_t *ci, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (ci[i] >= 0)
			l->ext_mark[ci[i]] = 0;
}

gf_err gf_live_filter_at(gf_live *l, const struct gf_k8s_pod *p, uint64_t epoch, const int32_t *ci,
			 size_t n, const char **reasons, char *msg, size_t msglen)
{
	gf_err e = ensure(l);
	if (e)
		return e;
	if (epoch != l->epoch)
		return GF_STATE;
	struct gf_pod_spec eff;
	int r = effective(l, p, 0, &eff, msg, msglen);
	if (r == -1)
		return GF_INVAL;
	size_t nn = l->cluster ? gf_cluster_nnodes(l->cluster) : 0;
	if (!r) {
		mark(l, ci, n);
		for (size_t c = 0; c < nn; c++)
			if (l->ext_mark[c])
				l->ext_code[c] = (uint8_t)gf_cluster_why_not(l->cluster, &l->cat, c, &eff);
		unmark(l, ci, n);
	}
	for (size_t i = 0; i < n; i++) {
		if (ci[i] < 0)
			reasons[i] = "node not known to gpufleet";
		else if (r == -2)
			reasons[i] = "no GPU with that much memory";
		else
			reasons[i] = l->ext_code[ci[i]] == GF_WHY_FITS ? NULL : gf_why_text(l->ext_code[ci[i]]);
	}
	return GF_OK;
}

uint64_t gf_live_state(const gf_live *l)
{
	/* a rebuilt cluster counts its binds from 0 again: the epoch keeps states apart */
	return l->cluster ? (l->epoch << 40) + gf_cluster_changes(l->cluster) + 1 : 0;
}

gf_err gf_live_prioritize_at(gf_live *l, const struct gf_k8s_pod *p, uint64_t epoch,
			     const int32_t *ci, size_t n, uint64_t fit_state, int64_t *scores)
{
	gf_err e = ensure(l);
	if (e)
		return e;
	if (epoch != l->epoch)
		return GF_STATE;
	struct gf_pod_spec eff;
	char msg[256];
	int r = effective(l, p, 0, &eff, msg, sizeof(msg));
	size_t nn = l->cluster ? gf_cluster_nnodes(l->cluster) : 0, k = 0;
	for (size_t i = 0; i < n; i++)
		scores[i] = 0;
	if (r)
		return GF_OK;
	/* the asked nodes where p fits, in index order; their scores in one pass of the engine's cache */
	bool fit = fit_state && fit_state == gf_live_state(l); /* filter just said so */
	mark(l, ci, n);
	for (size_t c = 0; c < nn; c++) {
		l->ext_code[c] = 0;
		if (l->ext_mark[c] && (fit || gf_cluster_fits(l->cluster, &l->cat, c, &eff))) {
			l->ext_code[c] = 1;
			l->ext_list[k++] = (uint32_t)c;
		}
	}
	unmark(l, ci, n);
	if (k)
		gf_sched_score_nodes(l->sched, &eff, l->ext_list, k, l->ext_score);
	for (size_t j = 0; j < k; j++) /* ext_score by node index */
		l->ext_score[l->ext_list[k - 1 - j]] = l->ext_score[k - 1 - j];
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	for (size_t i = 0; i < n; i++)
		if (ci[i] >= 0 && l->ext_code[ci[i]]) {
			int64_t v = l->ext_score[ci[i]];
			lo = v < lo ? v : lo;
			hi = v > hi ? v : hi;
		}
	for (size_t i = 0; i < n; i++)
		if (ci[i] >= 0 && l->ext_code[ci[i]])
			scores[i] = hi == lo ? 10 : (l->ext_score[ci[i]] - lo) * 10 / (hi - lo);
	return GF_OK;
}

gf_err gf_live_judge_begin(gf_live *l, const struct gf_k8s_pod *p, struct gf_live_judge *j, char *msg,
			   size_t msglen)
{
	gf_err e = ensure(l);
	if (e)
		return e;
	j->epoch = l->epoch;
	j->r = effective(l, p, 0, &j->eff, msg, msglen);
	return j->r == -1 ? GF_INVAL : GF_OK;
}

void gf_live_judge_names(const gf_live *l, const struct gf_live_judge *j, const char *const *names,
			 const size_t *lens, size_t n, int32_t *ci, const char **reasons)
{
	nindex_find_many(&l->names, names, lens, n, ci);
	for (size_t i = 0; i < n; i++) {
		if (ci[i] < 0) {
			reasons[i] = "node not known to gpufleet";
		} else if (j->r == -2) {
			reasons[i] = "no GPU with that much memory";
		} else {
			enum gf_why w = gf_cluster_why_not(l->cluster, &l->cat, (size_t)ci[i], &j->eff);
			reasons[i] = w == GF_WHY_FITS ? NULL : gf_why_text(w);
		}
	}
}

gf_err gf_live_assume_on(gf_live *l, const struct gf_k8s_pod *p, const char *node,
			 struct gf_live_decision *d)
{
	memset(d, 0, sizeof(*d));
	gf_err e = ensure(l);
	if (e)
		return e;
	gf_live_pod_set(l, p);
	struct lpod *lp = pod_by_uid(l, p->uid);
	struct lnode *nd = node_by_name(l, node);
	if (!lp) {
		snprintf(d->message, sizeof(d->message), "pod %.60s/%.100s has no uid", p->ns, p->name);
		return GF_INVAL;
	}
	if (lp->st == P_ASSUMED || lp->st == P_BOUND) {
		snprintf(d->message, sizeof(d->message), "pod %.60s/%.100s is already bound or being bound",
			 p->ns, p->name);
		return GF_EXISTS;
	}
	if (!nd || !nd->present || nd->cidx < 0 || !l->cluster) {
		snprintf(d->message, sizeof(d->message), "node %.200s not known to gpufleet", node);
		return GF_NOENT;
	}
	int r = effective(l, &lp->p, 0, &lp->eff, d->message, sizeof(d->message));
	if (r)
		return GF_INVAL;
	size_t ci = (size_t)nd->cidx;
	enum gf_why w = gf_cluster_why_not(l->cluster, &l->cat, ci, &lp->eff);
	if (w != GF_WHY_FITS) {
		snprintf(d->message, sizeof(d->message), "pod %.60s/%.100s does not fit on %.100s: %s", p->ns,
			 p->name, node, gf_why_text(w));
		return GF_RANGE;
	}
	const struct gf_node *st = gf_cluster_node(l->cluster, ci);
	int hint = -1;
	if (lp->eff.gpu_count == 1 && lp->eff.gpu_milli < GF_MILLI_PER_GPU && l->o.policy->score)
		(void)gf_sched_score(l->sched, &lp->eff, ci, &hint);
	if (hint >= 0 && hint < st->ngpus && st->gpu_free[hint] >= lp->eff.gpu_milli)
		lp->gpus[0] = (uint8_t)hint;
	else if (lp->eff.gpu_count &&
		 gf_topo_pick(st, &nd->n.spec, lp->eff.gpu_count, lp->eff.gpu_milli, lp->gpus, &d->fit) <
			 lp->eff.gpu_count)
		return GF_RANGE;
	lp->eff.spec = 0;
	if ((e = gf_cluster_bind(l->cluster, ci, &lp->eff, lp->gpus)))
		return e;
	lp->counted = true;
	lp->st = P_ASSUMED;
	lp->queued = lp->parked = false;
	fill_placed(l, lp, ci, d);
	return GF_OK;
}

/* ---- observing ------------------------------------------------------------ */

void gf_live_stats(gf_live *l, struct gf_live_stats *s)
{
	memset(s, 0, sizeof(*s));
	(void)ensure(l);
	for (size_t i = 0; i < l->npods; i++) {
		const struct lpod *lp = &l->pods[i];
		if (!lp->used)
			continue;
		s->pods_bound += lp->st == P_BOUND;
		s->pods_assumed += lp->st == P_ASSUMED;
		s->pods_queued += lp->st == P_PENDING && lp->queued;
		s->pods_parked += lp->st == P_PENDING && lp->parked;
	}
	s->conflicts = l->conflicts;
	s->rebuilds = l->epoch;
	s->resets = l->resets;
	if (!l->cluster)
		return;
	size_t n = gf_cluster_nnodes(l->cluster);
	s->nodes = n;
	s->gpus = gf_cluster_ngpus(l->cluster);
	s->gpu_capacity_milli = gf_cluster_gpu_capacity(l->cluster);
	s->gpu_used_milli = gf_cluster_gpu_used(l->cluster);
	if (l->have_target)
		for (size_t i = 0; i < n; i++) {
			const struct gf_node *nd = gf_cluster_node(l->cluster, i);
			s->frag_milli += gf_frag_node(&l->target, nd->model, nd->cpu_free, nd->gpu_free,
						      nd->ngpus);
		}
}

void gf_live_each_allocation(gf_live *l, void (*share)(void *ud, const struct gf_live_share *s),
			     void (*gpu)(void *ud, const struct gf_live_gpu *g), void *ud)
{
	(void)ensure(l);
	for (size_t i = 0; gpu && i < l->nnodes; i++) {
		const struct lnode *nd = &l->nodes[i];
		if (!nd->present || nd->cidx < 0)
			continue;
		for (int g = 0; g < nd->n.spec.ngpus; g++)
			gpu(ud, &(struct gf_live_gpu){ nd->n.name, nd->n.model,
						       g < nd->n.nuuids ? nd->n.uuids[g] : "", g, &nd->n });
	}
	for (size_t i = 0; share && i < l->npods; i++) {
		const struct lpod *lp = &l->pods[i];
		if (!lp->used || !lp->counted || lp->node < 0 || (lp->st != P_BOUND && lp->st != P_ASSUMED))
			continue;
		const struct lnode *nd = &l->nodes[lp->node];
		for (int k = 0; k < lp->eff.gpu_count && k < GF_MAX_GPUS; k++) {
			int g = lp->gpus[k];
			share(ud, &(struct gf_live_share){ lp->p.ns, lp->p.name, nd->n.name, nd->n.model,
							   g < nd->n.nuuids ? nd->n.uuids[g] : "", g,
							   lp->eff.gpu_milli });
		}
	}
}

gf_err gf_live_check(gf_live *l, char *why, size_t whylen)
{
	gf_err e = ensure(l);
	if (e)
		return e;
	return l->cluster ? gf_cluster_check(l->cluster, why, whylen) : GF_OK;
}
