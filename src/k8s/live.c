/*
 * k8s/live.c - nodes, pods and the engine kept in step (see live.h).
 *
 * Storage: nodes and pods live in growable arrays of slots, found by name /
 * uid through an open-addressing hash map (FNV-1a, linear probing,
 * tombstones on delete, rehash at 50 % load into a table sized for the
 * live entries, so churn does not grow it).  A deleted node is marked
 * absent (re-added by name, it gets its slot back); absent slots no pod
 * refers to are freed for new nodes at the next rebuild, or when the array
 * would grow (node_slots_reclaim), so node churn over days keeps the slots
 * at the peak node count.  Pod slots go to a free list.
 *
 * The engine cluster indexes nodes by cluster index (cnode: index ->
 * slot).  Node changes are the loop's node verbs, applied in place
 * (node_join, node_leave, node_respec): a node that joins takes the next
 * index, one that leaves becomes a tombstone (NO_SLOT, never fitting) so
 * no index moves and pending pods, running jobs and every other node's
 * cached scores stay.  A rebuild (all indices again, present nodes 0..k-1
 * in slot order, with the score cache, the target and the policy state;
 * every ASSUMED and BOUND pod bound again, so the allocation only depends
 * on the objects, never on the order events came in) remains only where it
 * cannot be avoided: the first nodes; a node whose GPU model or GPU memory
 * changes (the bound pods' requests were counted by them); a change that
 * the engine refuses (resources below what is bound); out of memory in a
 * verb; and compaction, when more than 64 tombstones outnumber the live
 * indices at a join (node churn over days).  Nothing else makes a new
 * loop: Queue and budget changes relabel the loop's jobs in place
 * (relabel_loop), a new FGD target goes to the loop in place (retarget),
 * ended jobs' records are compacted in place (compact_loop).  A bound pod that does
 * not fit (two schedulers gave out one GPU) is counted in `conflicts` and
 * left out.
 *
 * GPU memory requests become milli-GPU: among the GPU models whose memory
 * (nvidia.com/gpu.memory, the smallest seen per model) holds the request
 * and that the pod's model constraint allows, M = the smallest memory;
 * the pod asks ceil(mem * 1000 / M) milli (at least its own milli) of one
 * of those models.  A pod never gets less memory than it asked for.
 *
 * Admission (cordon, taints, selector, affinity, pod count) is the
 * engine's (cluster/admit.h): l->rules views each cluster node's objects,
 * and a decision passes the pod's allowed-node mask to
 * gf_sched_place_masked(); nothing is bound into the cluster to keep a pod
 * off a node.
 *
 * Pod states, the pending FIFO (ids: pod slots), backoff and the last
 * Event are the engine's (queue/podstate.h: struct gf_pod_rec, changed
 * through its verbs); a pod slot adds the Kubernetes object.
 *
 * Deciding is the engine loop's one scheduling cycle (queue/loop.h), the
 * replay's too: a loop on this file's cluster (gf_loop_create_on); each pod
 * the FIFO hands out is a loop job of one pod (admission: the node mask
 * loop_admit gives), gf_loop_cycle() places it (the GPUs too: the loop
 * takes the topology's choice for a multi-GPU pod), one that does not fit
 * leaves the loop and backs off here.  The kube policy, one pod a cycle
 * (run_cycle).  Cost of a decision: the engine's (filter all nodes, score
 * the feasible ones with the cache).  Under the other policies a
 * PodGroup's members are one loop job of N pods, placed all or none
 * ("gangs" below); waiting pods' notes (estimated start, reason) and
 * PodGroup counts are read out for the daemon to write, and with
 * opts.preemption the cycle's victims are evicted and their preemptors held
 * until they are gone ("preemption").  Under every policy the loop holds
 * every bound pod ("running jobs"): this file binds nothing into the
 * cluster itself.
 *
 * Files: the state (struct gf_live, lpod, lnode), the string -> index map
 * and the small helpers every part calls are in live_impl.h (private); the
 * gang key -> pods index and the PodGroups' read-outs are live_gangs.c;
 * Queue objects -> the loop's quotas are live_quota.c; the rest is here.
 */
#include "k8s/live.h"
#include "k8s/live_impl.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/admit.h"
#include "cluster/cluster.h"
#include "cluster/frag.h"
#include "cluster/request.h"
#include "core/rng.h"
#include "core/sort.h"
#include "core/zpack.h"
#include "k8s/gangs.h"
#include "policy/sched.h"
#include "policy/target.h"
#include "queue/loop.h"
#include "queue/podstate.h"
#include "queue/requeue.h"
#include "k8s/pdb.h"
#include "k8s/queues.h"
#include "queue/queuedef.h"

/* ---- string -> index map ------------------------------------------------ */

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

static const char *node_key(const void *arr, uint32_t i)
{
	return ((const struct lnode *)arr)[i].n.name;
}

static const char *pod_key(const void *arr, uint32_t i)
{
	return ((const struct lpod *)arr)[i].uid;
}

/* ---- admission (the engine's rules, cluster/admit.h) ---------------------- */

static struct gf_node_rules node_rules(const struct gf_k8s_node *n)
{
	return (struct gf_node_rules){ .labels = n->labels, .labels_len = n->labels_len,
				       .taints = n->taints, .ntaints = n->ntaints,
				       .unschedulable = n->unschedulable, .max_pods = n->max_pods };
}

static struct gf_pod_rules pod_rules(const struct gf_k8s_pod *p)
{
	return (struct gf_pod_rules){ .selector = p->selector, .selector_len = p->selector_len,
				      .tols = p->tols, .ntols = p->ntols,
				      .terms = p->terms, .nterms = p->nterms };
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
		l->o.target_pct = GF_TARGET_PCT;
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

/* The loop's placement tries, kept across loops (gf_live_stats.loop_tries). */
static void retire_loop(gf_live *l)
{
	struct gf_loop_stats st;
	if (!l->loop)
		return;
	gf_loop_stats(l->loop, &st);
	l->loop_tries += st.tries;
}

static void drop_engine(gf_live *l)
{
	retire_loop(l);
	gf_loop_destroy(l->loop);
	l->loop = NULL;
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
	free(l->nspare);
	for (size_t i = 0; i < l->npods; i++)
		free(l->pods[i].packed);
	free(l->pods);
	free(l->freelist);
	free(l->pmap.slot);
	gf_podq_release(&l->queue);
	free(l->rules);
	free(l->allowed);
	free(l->ext_mark);
	free(l->ext_code);
	free(l->ext_score);
	free(l->ext_list);
	free(l->job_pod);
	free(l->qdef);
	free(l->qerr);
	free(l->nsq);
	free(l->qmap.slot);
	free(l->nsmap.slot);
	free(l->quota);
	free(l->dec);
	free(l->dmsg);
	free(l->tried);
	free(l->gmem);
	free(l->evq);
	free(l->held);
	free(l->gidx.slot);
	free(l->mask0);
	free(l->pdb);
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

/*
 * lp's namespace and name only (the packed object's leading fields), in
 * l->scratch: the rest of it is not lp's.  Valid until the next pod_of() or
 * pod_names_of().  For the paths over every pod that read nothing else (the
 * allocation record, the notes): unpacking a whole Pod is 6.7 KB written.
 */
static const struct gf_k8s_pod *pod_names_of(gf_live *l, const struct lpod *lp)
{
	_Static_assert(offsetof(struct gf_k8s_pod, ns) == 0 &&
		       offsetof(struct gf_k8s_pod, name) < offsetof(struct gf_k8s_pod, uid),
		       "struct gf_k8s_pod starts with ns and name");
	if (!lp->packed || gf_zunpack_head(lp->packed, lp->plen, &l->scratch, offsetof(struct gf_k8s_pod, uid)))
		memset(&l->scratch, 0, offsetof(struct gf_k8s_pod, uid));
	return &l->scratch;
}

/* lp's Kubernetes object into *out. */
static void pod_copy(const struct lpod *lp, struct gf_k8s_pod *out)
{
	if (!lp->packed || gf_zunpack(lp->packed, lp->plen, out, sizeof(*out)))
		memset(out, 0, sizeof(*out));
}

/* Keep p as lp's object (packed).  Out of memory: the old object stays. */
static void pod_store(gf_live *l, struct lpod *lp, const struct gf_k8s_pod *p)
{
	uint8_t *b;
	size_t n;
	if (gf_zpack(p, sizeof(*p), &b, &n))
		return;
	free(lp->packed);
	lp->packed = b;
	lp->plen = (uint32_t)n;
	lp->ours = !strcmp(p->scheduler, l->name) && !p->deleting;
	lp->rules = p->selector_len || p->ntols || p->nterms;
	gf_live_gang_index_set(l, lp, gf_live_gang_key(p));
}

#define GANG_JOB 0x80000000u
#define NOTE_NEVER INT32_MIN

/*
 * lp, waiting in the loop as a member of a gang job, leaves it: the job
 * leaves the queue whole (gf_loop_end), so the other members go back to
 * this file's queue, to form the gang again without it.
 */
static void gang_leave(gf_live *l, struct lpod *lp)
{
	if (!l->job_pod || !(l->job_pod[lp->job] & GANG_JOB) || !l->loop)
		return;
	struct gf_job_info ji;
	gf_loop_job(l->loop, lp->job, &ji);
	uint32_t at = l->job_pod[lp->job] & ~GANG_JOB;
	for (uint32_t m = 0; m < ji.npods && at + m < l->ngmem; m++) {
		struct lpod *o = &l->pods[l->gmem[at + m]];
		if (o == lp || !o->used || o->job != lp->job)
			continue;
		o->job = NO_JOB;
		l->in_loop--;
		if (o->r.st == GF_POD_PENDING)
			enqueue(l, o);
	}
}

/* lp leaves the loop's queue (deleted, changed, bound by someone, no longer ours). */
static void leave_loop(gf_live *l, struct lpod *lp)
{
	if (lp->job == NO_JOB)
		return;
	gang_leave(l, lp);
	if (l->loop)
		(void)gf_loop_end(l->loop, lp->job, INT64_MIN); /* now: the loop's clock */
	lp->job = NO_JOB;
	l->in_loop--;
}

static struct gf_pod_rec *pod_rec(void *ud, uint32_t id)
{
	gf_live *l = ud;
	return id < l->npods && l->pods[id].used ? &l->pods[id].r : NULL;
}

/* Effective request of p: model constraint interned, GPU memory -> milli
 * (cluster/request.h).  0 ok; -1 invalid; -2 unschedulable (msg). */
static int effective(gf_live *l, const struct gf_k8s_pod *p, int64_t node_gpu_mem,
		     struct gf_pod_spec *eff, char *msg, size_t msglen)
{
	struct gf_request rq = { &p->req, p->model, p->milli_given, p->invalid };
	enum gf_request_result r = gf_request_resolve(&l->cat, l->model_mem,
						      l->cluster ? gf_cluster_nnodes(l->cluster) : 0, &rq,
						      node_gpu_mem, eff, msg, msglen);
	return r == GF_REQUEST_OK ? 0 : r == GF_REQUEST_INVALID ? -1 : -2;
}

static gf_err ensure(gf_live *l);
static void job_budgets(gf_live *l, const struct gf_k8s_pod *p, uint16_t *out);

/* ---- quotas: Queue objects -> the loop's quotas (k8s/queues.h) ----------- */

/*
 * The pods' side of the quotas: a pod's quota (pod_qindex), given to the
 * loop with each job (waiting or running: the loop charges what it holds).
 * The Queue objects, the namespaces' labels and the loop's quotas:
 * live_quota.c.
 */

/*
 * The quota index of pod p: its Queue's, or nq (unlimited) when it is
 * charged to none; -1 when it names a Queue that is missing or cannot take
 * pods (why, when given, says which and why).
 */
static int pod_qindex(const gf_live *l, const struct gf_k8s_pod *p, char *why, size_t n)
{
	const char *q = gf_k8s_pod_queue(p, gf_live_ns_queue(l, p->ns));
	if (!q)
		return (int)l->nq;
	int i = gf_live_queue_find(l, q);
	char w[256] = "";
	if (i >= 0)
		gf_live_queue_why(l, (size_t)i, w, sizeof(w));
	if (i >= 0 && !w[0])
		return i;
	if (why && i < 0)
		snprintf(why, n, "GPUQueue \"%s\" (gpufleet.io/v1alpha1, from %s) does not exist: the pod waits until it does.",
			 q, p->queue[0] ? "the pod's label " GF_LABEL_QUEUE : "its namespace's label " GF_LABEL_QUEUE);
	else if (why)
		snprintf(why, n, "GPUQueue \"%s\" cannot admit pods: %s.", q, w);
	return -1;
}

static void run_leave(gf_live *l, struct lpod *lp);
static bool run_adopt(gf_live *l, struct lpod *lp);

static void victim_gone(gf_live *l, struct lpod *lp);

/* lp's bound room is released (it ended, was deleted or rebound, its node left): its job's member ends in the loop. */
static void unaccount(gf_live *l, struct lpod *lp)
{
	victim_gone(l, lp);
	if (lp->r.counted && lp->run != NO_JOB) {
		struct lnode *nd = &l->nodes[lp->r.node];
		run_leave(l, lp);
		l->freed = true;
		if (nd->cidx >= 0)
			gf_changelog_add(&l->changes, nd->cidx);
	}
	lp->r.counted = false;
}

/*
 * A BOUND pod's request as bound on node slot ns (its node's GPU memory
 * turns memory into milli; the annotations, when they name this node, give
 * the GPUs and the share).  true: the GPUs are given (lp->r.gpus).
 */
static bool bound_request(gf_live *l, struct lpod *lp, const struct lnode *nd)
{
	const struct gf_k8s_pod *p = pod_of(l, lp);
	char msg[256];
	if (effective(l, p, nd->n.spec.gpu_mem_mib, &lp->r.eff, msg, sizeof(msg)))
		lp->r.eff = p->req, lp->r.eff.gpu_count = 0, lp->r.eff.gpu_milli = 0;
	lp->r.eff.spec = 0; /* the node is given: no model filter when accounting */
	if (!p->assigned || strcmp(p->assigned_node, p->node))
		return false;
	lp->r.eff.gpu_count = p->assigned_ngpus;
	lp->r.eff.gpu_milli = p->assigned_milli;
	memcpy(lp->r.gpus, p->assigned_gpus, sizeof(lp->r.gpus));
	return true;
}

/*
 * An ASSUMED or BOUND pod enters the loop where it is, as a running job
 * (run_adopt).  A BOUND pod's request and GPUs come from its object
 * (bound_request; no annotation: the lowest free GPUs there), unless keep
 * (its GPUs are those it held in the loop before: a new loop).  A pod that
 * does not fit there (two schedulers gave out one GPU) is a conflict.
 */
static void account_as(gf_live *l, struct lpod *lp, bool keep)
{
	lp->r.counted = false;
	if (l->dirty || !l->cluster || !l->loop || lp->r.node < 0 || lp->evicted)
		return; /* the new loop does it; an evicted pod's room is its preemptor's */
	struct lnode *nd = &l->nodes[lp->r.node];
	if (!nd->present || nd->cidx < 0)
		return;
	if (lp->r.st == GF_POD_BOUND && !keep && !bound_request(l, lp, nd) && lp->r.eff.gpu_count) {
		const struct gf_node *st = gf_cluster_node(l->cluster, (size_t)nd->cidx);
		if (gf_gpus_ascending_fit(st, lp->r.eff.gpu_count, lp->r.eff.gpu_milli, lp->r.gpus) <
		    lp->r.eff.gpu_count) {
			l->conflicts++;
			return;
		}
	}
	int32_t seen = lp->seen_s;
	if (seen < 0)
		lp->seen_s = (int32_t)l->now; /* its deadline counts from now (run_estimate) */
	if (!run_adopt(l, lp)) {
		lp->seen_s = seen;
		l->conflicts++;
	}
}

static void account(gf_live *l, struct lpod *lp)
{
	account_as(l, lp, false);
}

/*
 * FGD's target workload from every pod seen (bound, assumed, pending; CPU-only
 * pods too), each by the shape it is or would be placed with: policy/target.h's
 * rule, the simulator's.
 */
static gf_err build_target(gf_live *l)
{
	if (l->have_target)
		gf_target_release(&l->target);
	l->have_target = false;
	size_t n = 0;
	for (size_t i = 0; i < l->npods; i++) {
		struct lpod *lp = &l->pods[i];
		n += lp->used && lp->r.st != GF_POD_IGNORED;
	}
	struct gf_pod_spec *v = malloc((n ? n : 1) * sizeof(*v));
	if (!v)
		return GF_NOMEM;
	size_t k = 0;
	for (size_t i = 0; i < l->npods; i++) {
		struct lpod *lp = &l->pods[i];
		if (!lp->used || lp->r.st == GF_POD_IGNORED)
			continue;
		v[k] = lp->r.eff;
		if (lp->r.st == GF_POD_PENDING) {
			char msg[8];
			struct gf_pod_spec e;
			if (!effective(l, pod_of(l, lp), 0, &e, msg, sizeof(msg)))
				v[k] = e;
			else
				continue;
		}
		k++;
	}
	gf_err e = gf_target_from_pods(v, k, &l->cat, l->o.target_pct, &l->target, &k);
	free(v);
	if (!e) {
		l->have_target = true;
		l->target_pods = k;
		l->new_pods = 0;
	}
	return e;
}

/* The pod slot of member `member` of loop job `job` (a gang's from gmem). */
static uint32_t job_slot(const gf_live *l, uint32_t job, uint32_t member)
{
	uint32_t v = l->job_pod[job];
	return v & GANG_JOB ? l->gmem[(v & ~GANG_JOB) + member] : v;
}

/*
 * The nodes a pod without rules (no selector, toleration or affinity) may
 * use: the same for every such pod, changing only with a node's admission
 * (the change log: a cordon, a taint), its pod count (a bind or unbind: the
 * cluster's change count) or a rebuild (the epoch), so kept between those.
 * A cycle asks for it for every such job it tries: at 5,000 nodes and
 * 25,000 waiting jobs, 125 million node checks a cycle (bench_live_paths).
 * NULL: every node.
 */
static const uint64_t *plain_mask(gf_live *l)
{
	uint64_t key[3] = { l->epoch, gf_cluster_changes(l->cluster), l->changes.end };
	struct gf_pod_rules none = { 0 };
	if (l->mask0_ok && !memcmp(key, l->mask0_key, sizeof(key)))
		return l->mask0_all ? NULL : l->mask0;
	size_t words = gf_mask_words(gf_cluster_nnodes(l->cluster));
	if (words > l->mask0_cap) {
		uint64_t *v = realloc(l->mask0, words * sizeof(*v));
		if (!v) /* out of memory: this once without keeping it */
			return gf_admit_mask(l->cluster, l->rules, &none, l->allowed, NULL) ? l->allowed : NULL;
		l->mask0 = v;
		l->mask0_cap = words;
	}
	l->mask0_all = !gf_admit_mask(l->cluster, l->rules, &none, l->mask0, NULL);
	memcpy(l->mask0_key, key, sizeof(key));
	l->mask0_ok = true;
	return l->mask0_all ? NULL : l->mask0;
}

/* The nodes a loop job's pod may use (taints, cordon, selector, affinity, pod count); NULL: all.
 * A gang's: its first member's (gangs are of identical pods, gang_submit). */
static const uint64_t *loop_admit(void *ud, uint32_t job)
{
	gf_live *l = ud;
	struct lpod *lp = &l->pods[job_slot(l, job, 0)];
	if (!lp->rules)
		return plain_mask(l);
	struct gf_pod_rules pr = pod_rules(pod_of(l, lp));
	return gf_admit_mask(l->cluster, l->rules, &pr, l->allowed, NULL) ? l->allowed : NULL;
}

/*
 * The loop deciding on the engine's cluster with the queue policy of the
 * options (each pod a job of one; run_cycle), holding every bound pod.
 * kube: a job that did not fit leaves it after its cycle; the others: pods
 * wait in its queue, and a new loop (target changed, job records
 * compacted) sends them back to this file's queue.
 */
static void run_adopt_all(gf_live *l);

struct back { uint32_t job, slot; };

static int cmp_back(const void *a, const void *b)
{
	const struct back *x = a, *y = b;
	if (x->job != y->job)
		return x->job < y->job ? -1 : 1;
	return x->slot < y->slot ? -1 : x->slot > y->slot;
}

/*
 * Pods that waited in the old loop's queue go back to this file's, ahead of
 * the pods not handed to a loop yet and in the old loop's order (its job ids
 * are the order it was given them, gang members by slot): in slot order, a
 * pod that arrived last in a slot freed earlier went first (strict FIFO
 * broken by every rebuild; sched_live test_new_loop_keeps_order).  Out of
 * memory: slot order.
 */
static void requeue_in_order(gf_live *l)
{
	size_t n = 0;
	for (size_t i = 0; i < l->npods; i++)
		n += l->pods[i].used && l->pods[i].job != NO_JOB && l->pods[i].r.st == GF_POD_PENDING;
	struct back *b = n ? malloc(n * sizeof(*b)) : NULL;
	struct gf_pod_rec **r = n ? malloc(n * sizeof(*r)) : NULL;
	uint32_t *id = n ? malloc(n * sizeof(*id)) : NULL;
	bool sorted = b && r && id;
	size_t k = 0;
	for (size_t i = 0; i < l->npods; i++) {
		struct lpod *lp = &l->pods[i];
		if (!lp->used || lp->job == NO_JOB)
			continue;
		if (lp->r.st == GF_POD_PENDING && sorted)
			b[k++] = (struct back){ lp->job, (uint32_t)i };
		else if (lp->r.st == GF_POD_PENDING)
			enqueue(l, lp);
		lp->job = NO_JOB;
		l->in_loop--;
	}
	if (sorted && k) {
		gf_qsort(b, k, sizeof(*b), cmp_back);
		for (size_t i = 0; i < k; i++) {
			r[i] = &l->pods[b[i].slot].r;
			id[i] = b[i].slot;
		}
		if (gf_pod_want_first(&l->queue, r, id, k))
			for (size_t i = 0; i < k; i++)
				enqueue(l, &l->pods[b[i].slot]);
	}
	free(b);
	free(r);
	free(id);
}

static gf_err make_loop(gf_live *l)
{
	retire_loop(l);
	gf_loop_destroy(l->loop);
	l->loop = NULL;
	l->ngmem = 0;
	requeue_in_order(l);
	/* the old loop's binds go with it: the pods that held room there enter the new one where they were */
	bool any = false;
	for (size_t i = 0; i < l->npods; i++) {
		struct lpod *lp = &l->pods[i];
		lp->placed = lp->used && lp->r.counted;
		any |= lp->placed;
		lp->r.counted = false;
		lp->run = NO_JOB;
	}
	l->nrun = 0;
	if (any && l->cluster)
		gf_cluster_reset(l->cluster);
	if (!l->cluster || !gf_cluster_nnodes(l->cluster))
		return GF_OK;
	struct gf_loop_config lc = { .policy = (enum gf_queue_policy)l->o.queue_policy,
				     .seed = l->o.seed ? l->o.seed : 42,
				     .horizon = INT64_MAX, .admit = loop_admit, .admit_ud = l,
				     .preemption = l->o.preemption && l->o.queue_policy != GF_QP_KUBE };
	gf_err e = gf_live_quota_config(l, &lc);
	if (!e)
		e = gf_loop_create_on(l->cluster, l->o.policy, &l->env, &lc, &l->loop);
	l->loop_dirty = false;
	l->loops_made += !e;
	l->pdb_dirty = true; /* its budgets: before its first cycle */
	if (!e)
		run_adopt_all(l);
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
	if ((e = gf_sched_create(l->o.policy, &l->env, &l->sched)) || (e = make_loop(l)))
		return e;
	l->sched_dirty = false;
	return GF_OK;
}

static size_t node_slots_reclaim(gf_live *l);

static gf_err rebuild(gf_live *l)
{
	drop_engine(l);
	gf_cluster_destroy(l->cluster);
	l->cluster = NULL;
	free(l->cnode);
	l->cnode = NULL;
	(void)node_slots_reclaim(l); /* the node set changed: absent nodes' slots may go */
	size_t k = 0;
	for (size_t i = 0; i < l->nnodes; i++)
		k += l->nodes[i].present;
	for (int m = 0; m < GF_MAX_MODELS; m++)
		l->model_mem[m] = 0;
	for (size_t i = 0; i < l->npods; i++)
		l->pods[i].r.counted = false;
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
	}
	free(l->rules);
	free(l->allowed);
	free(l->ext_mark);
	free(l->ext_code);
	free(l->ext_score);
	free(l->ext_list);
	l->rules = malloc((k ? k : 1) * sizeof(*l->rules));
	l->allowed = malloc((gf_mask_words(k) ? gf_mask_words(k) : 1) * sizeof(*l->allowed));
	l->ext_mark = calloc(k ? k : 1, sizeof(*l->ext_mark));
	l->ext_code = malloc((k ? k : 1) * sizeof(*l->ext_code));
	l->ext_score = malloc((k ? k : 1) * sizeof(*l->ext_score));
	l->ext_list = malloc((k ? k : 1) * sizeof(*l->ext_list));
	if (!l->rules || !l->allowed || !l->ext_mark || !l->ext_code || !l->ext_score || !l->ext_list) {
		free(specs);
		return GF_NOMEM;
	}
	gf_err e = GF_OK;
	if (k)
		e = gf_cluster_create(specs, k, &l->cluster);
	free(specs);
	if (e)
		return e;
	for (size_t i = 0; i < k; i++)
		l->rules[i] = node_rules(&l->nodes[l->cnode[i]].n);
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
	l->ngone = 0;
	l->dirty = false;
	gf_changelog_add(&l->changes, GF_CHANGE_ALL);
	/* the bound pods' requests, for the target; they enter the new loop (run_adopt_all) */
	for (size_t i = 0; i < l->npods; i++) {
		struct lpod *lp = &l->pods[i];
		lp->placed = false;
		if (lp->used && lp->r.st == GF_POD_BOUND && lp->r.node >= 0 && l->nodes[lp->r.node].present)
			(void)bound_request(l, lp, &l->nodes[lp->r.node]);
	}
	return make_sched(l);
}

/*
 * Queues, namespaces' Queues or budgets' selectors changed: every loop job
 * gets its queue and budget indices again (gf_loop_job_relabel) and the
 * loop its quotas (gf_loop_set_quotas, usage recounted), in place.  A pod
 * waiting in the loop whose Queue went (or cannot take pods now) leaves it
 * and waits here, said so (refuse_queue); a gang's other members come back
 * here with it.  An error: the caller makes the engine again.
 */
static gf_err relabel_loop(gf_live *l)
{
	bool quotas = l->o.queues && l->o.queue_policy != GF_QP_KUBE;
	if (!l->loop)
		return GF_STATE;
	for (size_t i = 0; quotas && i < l->npods; i++) {
		struct lpod *lp = &l->pods[i];
		if (lp->used && lp->job != NO_JOB && pod_qindex(l, pod_of(l, lp), NULL, 0) < 0) {
			leave_loop(l, lp);
			if (lp->r.st == GF_POD_PENDING)
				enqueue(l, lp);
		}
	}
	struct gf_loop_config lc = { .policy = (enum gf_queue_policy)l->o.queue_policy };
	gf_err e = gf_live_quota_config(l, &lc);
	if (e)
		return e;
	for (size_t i = 0; i < l->npods; i++) {
		struct lpod *lp = &l->pods[i];
		uint32_t job = lp->job != NO_JOB ? lp->job : lp->run;
		if (!lp->used || job == NO_JOB)
			continue;
		int qi = quotas ? pod_qindex(l, pod_of(l, lp), NULL, 0) : 0;
		uint16_t b[GF_JOB_MAX_BUDGETS] = { 0 };
		job_budgets(l, pod_of(l, lp), b);
		if ((e = gf_loop_job_relabel(l->loop, job, (uint16_t)(qi < 0 ? (int)l->nq : qi), b)))
			return e;
	}
	if ((e = gf_loop_set_quotas(l->loop, lc.queues, lc.nqueues)))
		return e;
	l->pdb_dirty = true;
	return GF_OK;
}

/*
 * Ended jobs' records go from the loop (gf_loop_compact, in place: every
 * other job keeps its place and its decisions), and every job id held here
 * (a pod's waiting or running job, job_pod, the gangs' member lists in
 * gmem) follows.  Out of memory: not now (loop_dirty stays).
 */
static void compact_loop(gf_live *l)
{
	size_t n = gf_loop_njobs(l->loop), ng = 0;
	uint32_t *map = malloc((n ? n : 1) * sizeof(*map)), *gm = malloc((l->ngmem ? l->ngmem : 1) * sizeof(*gm));
	if (!map || !gm) {
		free(map);
		free(gm);
		return;
	}
	gf_loop_compact(l->loop, map);
	for (size_t id = 0; id < n; id++) { /* map[id] <= id: job_pod in place, ascending */
		uint32_t to = map[id], v = l->job_pod[id];
		if (to == GF_LOOP_NO_JOB)
			continue;
		if (v & GANG_JOB) {
			struct gf_job_info ji;
			gf_loop_job(l->loop, to, &ji);
			memcpy(gm + ng, l->gmem + (v & ~GANG_JOB), ji.npods * sizeof(*gm));
			v = GANG_JOB | (uint32_t)ng;
			ng += ji.npods;
		}
		l->job_pod[to] = v;
	}
	if (ng)
		memcpy(l->gmem, gm, ng * sizeof(*gm));
	l->ngmem = ng;
	for (size_t i = 0; i < l->npods; i++) {
		struct lpod *lp = &l->pods[i];
		if (!lp->used)
			continue;
		if (lp->job != NO_JOB)
			lp->job = map[lp->job];
		if (lp->run != NO_JOB)
			lp->run = map[lp->run];
		if (lp->fc_job < n)
			lp->fc_job = map[lp->fc_job];
	}
	free(map);
	free(gm);
	l->loop_dirty = false;
	l->compactions++;
}

/*
 * The FGD target follows the pods (build_target): the loop and the
 * extender's scheduler take the new one in place (gf_loop_set_target), the
 * old one is released after.  Out of memory: the engine is made again.
 */
static gf_err retarget(gf_live *l)
{
	struct gf_target old = l->target;
	bool had = l->have_target;
	gf_sched *s = NULL;
	l->have_target = false; /* build_target: keep the old one, the schedulers use it */
	gf_err e = build_target(l);
	if (!e)
		e = gf_sched_create(l->o.policy, &l->env, &s);
	if (!e)
		e = gf_loop_set_target(l->loop, &l->target);
	if (e) {
		gf_sched_destroy(s);
		if (l->have_target)
			gf_target_release(&l->target);
		l->target = old;
		l->have_target = had;
		l->dirty = true;
		return rebuild(l);
	}
	gf_sched_destroy(l->sched);
	l->sched = s;
	if (had)
		gf_target_release(&old);
	l->resets++;
	l->sched_dirty = false;
	return GF_OK;
}

static gf_err ensure(gf_live *l)
{
	if (l->dirty)
		return rebuild(l);
	if (l->sched_dirty)
		return l->loop && l->sched ? retarget(l) : make_sched(l);
	if (l->loop_dirty && l->loop)
		compact_loop(l);
	if (l->queues_dirty && l->loop && relabel_loop(l)) {
		l->dirty = true; /* out of memory, or a bug: the engine made again */
		return rebuild(l);
	}
	return GF_OK;
}

/* ensure() for live_quota.c (live_impl.h). */
gf_err gf_live_ensure(gf_live *l)
{
	return ensure(l);
}

/* ---- feeding ------------------------------------------------------------ */

/* What the engine's cluster holds of a node: a change means a rebuild. */
static bool same_engine_spec(const struct gf_k8s_node *a, const struct gf_k8s_node *b)
{
	return a->spec.cpu_milli == b->spec.cpu_milli && a->spec.mem_mib == b->spec.mem_mib &&
	       a->spec.ngpus == b->spec.ngpus && a->spec.gpu_mem_mib == b->spec.gpu_mem_mib &&
	       !memcmp(a->spec.topo, b->spec.topo, sizeof(a->spec.topo)) && !strcmp(a->model, b->model) &&
	       !memcmp(a->spec.served_seen, b->spec.served_seen, sizeof(a->spec.served_seen));
}

/* The rest: who it admits (labels, taints, cordon, pod count) and the GPUs' UUIDs. */
static bool same_admission(const struct gf_k8s_node *a, const struct gf_k8s_node *b)
{
	return a->nuuids == b->nuuids && !memcmp(a->uuids, b->uuids, sizeof(a->uuids)) &&
	       a->unschedulable == b->unschedulable && a->max_pods == b->max_pods &&
	       a->ntaints == b->ntaints && !memcmp(a->taints, b->taints, sizeof(a->taints)) &&
	       a->labels_len == b->labels_len && !memcmp(a->labels, b->labels, a->labels_len);
}

/*
 * Free the slots of absent nodes that no pod refers to (lpod.r.node): out
 * of the name map, onto nspare.  Not while a cycle's decisions are being
 * handed out (they name node slots).  O(nodes + pods).  Returns how many.
 */
static size_t node_slots_reclaim(gf_live *l)
{
	if (l->dec_at < l->ndec || !l->nnodes)
		return 0;
	size_t absent = 0, n = 0;
	for (size_t i = 0; i < l->nnodes; i++)
		absent += !l->nodes[i].present && !l->nodes[i].spare;
	if (!absent)
		return 0;
	uint8_t *ref = calloc(l->nnodes, 1);
	uint32_t *sp = realloc(l->nspare, (l->nnspare + absent) * sizeof(*sp));
	if (sp)
		l->nspare = sp;
	if (!ref || !sp) {
		free(ref);
		return 0; /* out of memory: the slots stay absent, as before */
	}
	for (size_t i = 0; i < l->npods; i++) {
		const struct lpod *lp = &l->pods[i];
		if (lp->used && lp->r.node >= 0 && (size_t)lp->r.node < l->nnodes)
			ref[lp->r.node] = 1;
	}
	for (size_t i = 0; i < l->nnodes; i++) {
		struct lnode *nd = &l->nodes[i];
		if (nd->present || nd->spare || ref[i])
			continue;
		bool f;
		size_t j = smap_find(&l->nmap, l->nodes, node_key, nd->n.name, &f);
		if (f)
			l->nmap.slot[j] = TOMB;
		nd->spare = true;
		nd->cidx = -1;
		nd->n.name[0] = '\0';
		l->nspare[l->nnspare++] = (uint32_t)i;
		n++;
	}
	free(ref);
	return n;
}

/* A slot for a new node: a spare one (the last freed first), else the array's next (reclaiming first). */
static bool node_slot_new(gf_live *l, uint32_t *at)
{
	if (!l->nnspare && l->nnodes == l->capnodes)
		(void)node_slots_reclaim(l);
	if (l->nnspare) {
		*at = l->nspare[--l->nnspare];
		return true;
	}
	if (l->nnodes == l->capnodes) {
		size_t nc = l->capnodes ? l->capnodes * 2 : 64;
		struct lnode *v = realloc(l->nodes, nc * sizeof(*v));
		if (!v)
			return false;
		l->nodes = v;
		l->capnodes = nc;
	}
	*at = (uint32_t)l->nnodes++;
	return true;
}

/*
 * Node changes in place (the loop's node verbs, queue/loop.h): a node that
 * joins, leaves or changes resources changes the engine's cluster and loop
 * where they are, so pending pods keep their place, running jobs their
 * records and every other node its cached scores.  Cluster indices never
 * move: a node that leaves is a tombstone (cnode NO_SLOT, no rules, no
 * name).  Each returns an error when it cannot (out of memory, a change
 * the engine refuses: resources below what is bound, a GPU model or
 * memory that changes how bound pods were counted); the caller then falls
 * back to a rebuild (l->dirty).
 */
#define NO_SLOT UINT32_MAX

static bool engine_live(const gf_live *l)
{
	return !l->dirty && l->cluster && l->loop && l->sched;
}

/* The per-cluster-node arrays for k nodes. */
static gf_err engine_arrays(gf_live *l, size_t k)
{
	size_t old = gf_cluster_nnodes(l->cluster);
	uint32_t *cn = realloc(l->cnode, k * sizeof(*cn));
	if (!cn)
		return GF_NOMEM;
	l->cnode = cn;
	struct gf_node_rules *r = realloc(l->rules, k * sizeof(*r));
	if (!r)
		return GF_NOMEM;
	l->rules = r;
	uint64_t *a = realloc(l->allowed, gf_mask_words(k) * sizeof(*a));
	if (!a)
		return GF_NOMEM;
	l->allowed = a;
	uint8_t *m = realloc(l->ext_mark, k);
	if (!m)
		return GF_NOMEM;
	l->ext_mark = m;
	memset(m + old, 0, k - old);
	uint8_t *c = realloc(l->ext_code, k);
	if (!c)
		return GF_NOMEM;
	l->ext_code = c;
	int64_t *sc = realloc(l->ext_score, k * sizeof(*sc));
	if (!sc)
		return GF_NOMEM;
	l->ext_score = sc;
	uint32_t *li = realloc(l->ext_list, k * sizeof(*li));
	if (!li)
		return GF_NOMEM;
	l->ext_list = li;
	return GF_OK;
}

/* After the node set changed: rules (views into nodes[], which may have moved), the name index, model memory. */
static gf_err engine_views(gf_live *l)
{
	size_t k = gf_cluster_nnodes(l->cluster);
	const char **cn = malloc(k * sizeof(*cn));
	if (!cn)
		return GF_NOMEM;
	for (int m = 0; m < GF_MAX_MODELS; m++)
		l->model_mem[m] = 0;
	for (size_t i = 0; i < k; i++) {
		if (l->cnode[i] == NO_SLOT) {
			memset(&l->rules[i], 0, sizeof(l->rules[i]));
			cn[i] = "";
			continue;
		}
		const struct lnode *nd = &l->nodes[l->cnode[i]];
		l->rules[i] = node_rules(&nd->n);
		cn[i] = nd->n.name;
		if (nd->model >= 0 && nd->n.spec.gpu_mem_mib > 0 &&
		    (!l->model_mem[nd->model] || nd->n.spec.gpu_mem_mib < l->model_mem[nd->model]))
			l->model_mem[nd->model] = nd->n.spec.gpu_mem_mib;
	}
	gf_err e = nindex_build(&l->names, cn, k);
	free(cn);
	return e;
}

/* Node nd (present, not in the engine) joins it: a new cluster index, its bound pods accounted. */
static gf_err node_join(gf_live *l, struct lnode *nd)
{
	size_t k = gf_cluster_nnodes(l->cluster) + 1;
	if (l->ngone > 64 && 2 * l->ngone > k)
		return GF_UNSUPPORTED; /* mostly tombstones: a rebuild compacts the indices */
	struct gf_node_spec spec = nd->n.spec;
	uint32_t ci, slot = (uint32_t)(nd - l->nodes);
	gf_err e = engine_arrays(l, k);
	if (e)
		return e;
	spec.model = nd->model;
	if ((e = gf_loop_node_add(l->loop, &spec, &ci)))
		return e;
	if (ci != k - 1)
		return GF_STATE;
	l->cnode[ci] = slot;
	nd->cidx = (int32_t)ci;
	gf_sched *s;
	if ((e = engine_views(l)) || (e = gf_sched_create(l->o.policy, &l->env, &s)))
		return e;
	gf_sched_destroy(l->sched); /* its per-node caches are sized by the node count */
	l->sched = s;
	l->resets++;
	gf_changelog_add(&l->changes, GF_CHANGE_ALL);
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < l->npods; i++) {
			struct lpod *lp = &l->pods[i];
			if (lp->used && lp->r.node == (int32_t)slot && !lp->r.counted &&
			    lp->r.st == (pass ? GF_POD_BOUND : GF_POD_ASSUMED))
				account(l, lp);
		}
	l->node_verbs++;
	return GF_OK;
}

/* Node nd (now absent) leaves the engine: its pods unaccounted, its index a tombstone. */
static gf_err node_leave(gf_live *l, struct lnode *nd)
{
	uint32_t ci = (uint32_t)nd->cidx, slot = (uint32_t)(nd - l->nodes);
	for (size_t i = 0; i < l->npods; i++) {
		struct lpod *lp = &l->pods[i];
		if (lp->used && lp->r.counted && lp->r.node == (int32_t)slot)
			unaccount(l, lp);
	}
	char why[256];
	gf_err e = gf_loop_node_remove(l->loop, ci, why, sizeof(why));
	if (e)
		return e;
	l->cnode[ci] = NO_SLOT;
	nd->cidx = -1;
	l->ngone++;
	gf_changelog_add(&l->changes, ci);
	if ((e = engine_views(l)))
		return e;
	l->node_verbs++;
	return GF_OK;
}

/* Node nd's resources change to n's: in place unless the GPU model or memory (how its pods count) change. */
static gf_err node_respec(gf_live *l, struct lnode *nd, const struct gf_k8s_node *n)
{
	if (strcmp(nd->n.model, n->model) || nd->n.spec.gpu_mem_mib != n->spec.gpu_mem_mib || nd->cidx < 0)
		return GF_UNSUPPORTED;
	struct gf_node_spec spec = n->spec;
	char why[256];
	spec.model = nd->model;
	gf_err e = gf_loop_node_update(l->loop, (uint32_t)nd->cidx, &spec, why, sizeof(why));
	if (e)
		return e;
	nd->n = *n;
	gf_changelog_add(&l->changes, nd->cidx);
	if ((e = engine_views(l)))
		return e;
	l->freed = true;
	l->node_verbs++;
	return GF_OK;
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
			bool admission = !same_admission(&nd->n, n);
			nd->n = *n;
			if (admission) {
				if (!l->dirty && nd->cidx >= 0) {
					l->rules[nd->cidx] = node_rules(&nd->n);
					gf_changelog_add(&l->changes, nd->cidx);
					/* the loop's jobs with a mask look at it again (their memo) */
					uint32_t ci = (uint32_t)nd->cidx;
					if (l->loop && gf_loop_nodes_freed(l->loop, &ci, 1))
						l->dirty = true; /* out of memory: the engine made again */
				}
				l->freed = true; /* parked pods get another look */
			}
			return;
		}
		if (nd->present && engine_live(l) && node_respec(l, nd, n) == GF_OK)
			return;
	} else {
		uint32_t at;
		if (!node_slot_new(l, &at))
			return;
		j = smap_find(&l->nmap, l->nodes, node_key, n->name, &f); /* a reclaim may have moved it */
		nd = &l->nodes[at];
		memset(nd, 0, sizeof(*nd));
		if (l->nmap.slot[j] == EMPTY)
			l->nmap.used++;
		l->nmap.slot[j] = at;
		nd->gen = l->gen[0];
	}
	nd->n = *n;
	nd->model = -1;
	if (n->model[0] && n->spec.ngpus > 0 &&
	    gf_catalog_model(&l->cat, n->model, strlen(n->model), &nd->model))
		nd->model = -1;
	bool joined = nd->present && nd->cidx >= 0; /* a change the engine refused in place */
	if (joined && !l->dirty)
		l->cnode[nd->cidx] = NO_SLOT; /* the rebuild makes every index again */
	nd->present = true;
	nd->cidx = -1;
	l->freed = true;
	/* Pods bound to this node before it was known are accounted when it joins. */
	for (size_t i = 0; i < l->npods; i++) {
		struct lpod *lp = &l->pods[i];
		if (lp->used && lp->r.st == GF_POD_BOUND && lp->r.node < 0 && !strcmp(pod_of(l, lp)->node, n->name))
			lp->r.node = (int32_t)(nd - l->nodes);
	}
	if (joined || !engine_live(l) || node_join(l, nd))
		l->dirty = true;
}

void gf_live_node_delete(gf_live *l, const char *name)
{
	struct lnode *nd = node_by_name(l, name);
	if (!nd || !nd->present)
		return;
	nd->present = false;
	if (!engine_live(l) || nd->cidx < 0 || node_leave(l, nd))
		l->dirty = true;
}

static void pod_free(gf_live *l, struct lpod *lp)
{
	leave_loop(l, lp);
	unaccount(l, lp);
	bool f;
	size_t j = smap_find(&l->pmap, l->pods, pod_key, lp->uid, &f);
	if (f)
		l->pmap.slot[j] = TOMB;
	gf_live_gang_index_set(l, lp, 0);
	lp->used = false;
	free(lp->packed);
	lp->packed = NULL;
	gf_pod_ignore(&lp->r); /* a queue entry left behind is skipped */
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
		lp->job = NO_JOB;
		lp->run = NO_JOB;
		lp->seen_s = -1;
		lp->note_s = NOTE_NEVER;
		snprintf(lp->uid, sizeof(lp->uid), "%s", p->uid);
		gf_pod_init(&lp->r);
		if (l->pmap.slot[j] == EMPTY)
			l->pmap.used++;
		l->pmap.slot[j] = idx;
		/* The target follows the population: rebuilt when it has doubled. */
		if (++l->new_pods >= (l->target_pods > 64 ? l->target_pods : 64))
			l->sched_dirty = true;
	}
	lp->gen = l->gen[1];
	bool terminal = p->phase == GF_PHASE_SUCCEEDED || p->phase == GF_PHASE_FAILED;
	if (terminal) {
		leave_loop(l, lp);
		unaccount(l, lp);
		pod_store(l, lp, p);
		gf_pod_ignore(&lp->r);
		return;
	}
	if (p->node[0]) {
		struct lnode *nd = node_by_name(l, p->node);
		int32_t ni = nd ? (int32_t)(nd - l->nodes) : -1;
		if (lp->r.st == GF_POD_ASSUMED && lp->r.node == ni && ni >= 0 &&
		    (!p->assigned || (p->assigned_ngpus == lp->r.eff.gpu_count &&
				      !memcmp(p->assigned_gpus, lp->r.gpus, (size_t)lp->r.eff.gpu_count)))) {
			pod_store(l, lp, p); /* the binding we made: confirmed */
			gf_pod_confirm(&lp->r);
			return;
		}
		const struct gf_k8s_pod *old = pod_of(l, lp);
		if (lp->r.st == GF_POD_BOUND && lp->r.node == ni && !strcmp(old->node, p->node) &&
		    old->assigned == p->assigned && (!p->assigned ||
		    (old->assigned_ngpus == p->assigned_ngpus && old->assigned_milli == p->assigned_milli &&
		     !memcmp(old->assigned_gpus, p->assigned_gpus, sizeof(p->assigned_gpus))))) {
			pod_store(l, lp, p);
			return;
		}
		leave_loop(l, lp);
		unaccount(l, lp);
		pod_store(l, lp, p);
		gf_pod_bind(&lp->r, ni);
		account(l, lp);
		return;
	}
	/* Not bound. */
	if (lp->r.st == GF_POD_BOUND && pod_of(l, lp)->node[0])
		return; /* spec.nodeName is never unset: an unbound copy is older (a watch behind a list) */
	if (lp->r.st == GF_POD_ASSUMED) {
		pod_store(l, lp, p); /* binding in flight */
		return;
	}
	if (lp->r.st == GF_POD_BOUND)
		unaccount(l, lp);
	bool ours = !strcmp(p->scheduler, l->name) && !p->deleting;
	/* Only a change of the request retries a parked pod: our own status
	 * updates (the PodScheduled condition) must not. */
	const struct gf_k8s_pod *old = pod_of(l, lp);
	bool changed = memcmp(&old->req, &p->req, sizeof(p->req)) != 0 ||
		       strcmp(old->model, p->model) || strcmp(old->invalid, p->invalid) ||
		       old->milli_given != p->milli_given || strcmp(old->queue, p->queue) || old->kueue != p->kueue;
	pod_store(l, lp, p);
	if (!ours || changed)
		leave_loop(l, lp); /* a changed request is submitted again */
	if (!ours)
		gf_pod_ignore(&lp->r);
	else if (lp->r.st != GF_POD_PENDING || (changed && lp->r.parked))
		enqueue(l, lp); /* new to us, or the pod changed: try (again) */
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
			if (l->pods[i].used && l->pods[i].gen != g && l->pods[i].r.st != GF_POD_ASSUMED)
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

/* d->uuids: "GPU-a,GPU-b" for d's GPUs on node n; "" when n has none. */
static void gpu_uuids(const struct gf_k8s_node *n, struct gf_live_decision *d)
{
	size_t len = 0;
	d->uuids[0] = '\0';
	for (int k = 0; n->nuuids && k < d->ngpus && d->gpus[k] < n->nuuids; k++) {
		int w = snprintf(d->uuids + len, sizeof(d->uuids) - len, "%s%s", k ? "," : "", n->uuids[d->gpus[k]]);
		if (w < 0 || (size_t)w >= sizeof(d->uuids) - len)
			break;
		len += (size_t)w;
	}
}

static void fill_placed(gf_live *l, struct lpod *lp, size_t ci, struct gf_live_decision *d)
{
	struct lnode *nd = &l->nodes[l->cnode[ci]];
	d->result = GF_LIVE_PLACED;
	snprintf(d->node, sizeof(d->node), "%s", nd->n.name);
	d->ngpus = lp->r.eff.gpu_count;
	memcpy(d->gpus, lp->r.gpus, sizeof(d->gpus));
	d->milli = lp->r.eff.gpu_milli;
	d->mem_mib = pod_of(l, lp)->req.gpu_mem_mib;
	gpu_uuids(&nd->n, d);
	lp->r.node = (int32_t)l->cnode[ci];
}

/* Why-not summary over every node of the engine: admission first, then resources.
 * Returns the Event aggregation key (the set of reasons). */
static uint64_t why_summary(gf_live *l, const struct gf_k8s_pod *p, const struct gf_pod_spec *eff,
			char *msg, size_t msglen)
{
	size_t counts[GF_WHY_COUNT_] = { 0 };
	size_t n = l->cluster ? gf_cluster_nnodes(l->cluster) : 0;
	struct gf_pod_rules pr = pod_rules(p);
	size_t gone = 0;
	for (size_t i = 0; i < n; i++) {
		if (gf_cluster_node(l->cluster, i)->flags & GF_NODE_GONE) {
			gone++; /* a node that left: not one of the cluster's */
			continue;
		}
		enum gf_why w = gf_admit_why(l->cluster, l->rules, i, &pr);
		if (w == GF_WHY_FITS)
			w = gf_cluster_why_not(l->cluster, &l->cat, i, eff);
		counts[w]++;
	}
	gf_why_summary(counts, n - gone, msg, msglen);
	return gf_report_key(counts);
}

/* Event aggregation keys beside gf_report_key()'s sets of enum gf_why (low bits). */
#define REASON_NO_MODEL (1ull << 40)
#define REASON_NO_NODES (1ull << 41)
#define REASON_TEXT (1ull << 63)

/* A pod that cannot go to the loop: invalid or unschedulable before any placement.
 * true with d filled; false: its effective request is in lp->r.eff. */
static bool refuse_early(gf_live *l, struct lpod *lp, struct gf_live_decision *d)
{
	memset(d, 0, sizeof(*d));
	lp->r.eff_ok = false;
	const struct gf_k8s_pod *p = pod_of(l, lp);
	int r = effective(l, p, 0, &lp->r.eff, d->message, sizeof(d->message));
	if (r) {
		d->result = r == -1 ? GF_LIVE_INVALID : GF_LIVE_UNSCHEDULABLE;
		/* invalid: the message is the reason; no GPU model with that memory: one reason */
		d->reason = r == -1 ? fnv(d->message) | REASON_TEXT : REASON_NO_MODEL;
		return true;
	}
	if (!l->cluster || !l->sched || !l->loop) {
		d->result = GF_LIVE_UNSCHEDULABLE;
		d->reason = REASON_NO_NODES;
		snprintf(d->message, sizeof(d->message), "0/0 nodes are available.");
		return true;
	}
	return false;
}

/* With quotas: a pod naming a missing (or refused) Queue waits, said once, nothing else disturbed. */
static bool refuse_queue(gf_live *l, struct lpod *lp, struct gf_live_decision *d)
{
	if (!l->quota || !l->o.queues || pod_qindex(l, pod_of(l, lp), d->message, sizeof(d->message)) >= 0)
		return false;
	d->result = GF_LIVE_UNSCHEDULABLE;
	d->reason = fnv(d->message) | REASON_TEXT;
	return true;
}

/* Keep msg in the cycle's message arena; its offset, NO_MSG for "", or false (out of memory). */
static bool keep_message(gf_live *l, const char *msg, uint32_t *off)
{
	size_t n = strlen(msg) + 1;
	*off = NO_MSG;
	if (n == 1)
		return true;
	if (l->ndmsg && !strcmp(l->dmsg + l->dmsg_last, msg)) {
		*off = (uint32_t)l->dmsg_last;
		return true;
	}
	if (l->ndmsg + n > l->dmsg_cap) {
		size_t nc = l->dmsg_cap ? l->dmsg_cap * 2 : 4096;
		while (nc < l->ndmsg + n)
			nc *= 2;
		char *v = nc < NO_MSG ? realloc(l->dmsg, nc) : NULL;
		if (!v)
			return false;
		l->dmsg = v;
		l->dmsg_cap = nc;
	}
	memcpy(l->dmsg + l->ndmsg, msg, n);
	l->dmsg_last = l->ndmsg;
	*off = (uint32_t)l->ndmsg;
	l->ndmsg += n;
	return true;
}

static void add_decision(gf_live *l, struct lpod *lp, const struct gf_live_decision *d)
{
	uint32_t msg;
	if (l->ndec == l->dec_cap) {
		size_t nc = l->dec_cap ? l->dec_cap * 2 : 16;
		struct ldec *v = realloc(l->dec, nc * sizeof(*v));
		if (!v) {
			gf_pod_skip(&lp->r); /* out of memory: no decision now, tried again later */
			return;
		}
		l->dec = v;
		l->dec_cap = nc;
	}
	if (!keep_message(l, d->message, &msg)) {
		gf_pod_skip(&lp->r);
		return;
	}
	struct ldec *e = &l->dec[l->ndec++];
	e->slot = (uint32_t)(lp - l->pods);
	snprintf(e->uid, sizeof(e->uid), "%s", lp->uid);
	e->msg = msg;
	e->result = (uint8_t)d->result;
	e->fit = (uint8_t)d->fit;
	e->reason = d->reason;
	e->node = d->result == GF_LIVE_PLACED || d->result == GF_LIVE_NOMINATED ? lp->r.node : -1;
	e->ngpus = (uint8_t)d->ngpus;
	memcpy(e->gpus, d->gpus, sizeof(e->gpus));
	e->milli = d->milli;
	e->mem_mib = d->mem_mib;
}

/* The decision e kept, whole: its node's name and GPU UUIDs as they are now. */
static void dec_expand(gf_live *l, const struct ldec *e, struct gf_live_decision *d)
{
	memset(d, 0, sizeof(*d));
	d->result = (enum gf_live_result)e->result;
	d->fit = (enum gf_topo_fit)e->fit;
	d->reason = e->reason;
	if (e->msg != NO_MSG)
		snprintf(d->message, sizeof(d->message), "%s", l->dmsg + e->msg);
	d->ngpus = e->ngpus;
	memcpy(d->gpus, e->gpus, sizeof(d->gpus));
	d->milli = e->milli;
	d->mem_mib = e->mem_mib;
	if (e->node >= 0) {
		const struct gf_k8s_node *n = &l->nodes[e->node].n;
		snprintf(d->node, sizeof(d->node), "%s", n->name);
		gpu_uuids(n, d);
	}
}

static void internal_error(gf_live *l, struct lpod *lp, const char *what)
{
	struct gf_live_decision d;
	memset(&d, 0, sizeof(d));
	d.result = GF_LIVE_UNSCHEDULABLE;
	snprintf(d.message, sizeof(d.message), "internal error: %s", what);
	gf_pod_skip(&lp->r);
	add_decision(l, lp, &d);
}

/* An engine call failed deciding lp: "internal error: <what>: <the error> (<its name>)". */
static void engine_error(gf_live *l, struct lpod *lp, gf_err e, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void engine_error(gf_live *l, struct lpod *lp, gf_err e, const char *fmt, ...)
{
	char what[400];
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (k >= 0 && (size_t)k < sizeof(what))
		snprintf(what + k, sizeof(what) - (size_t)k, ": %s (%s)", gf_strerror(e), gf_err_name(e));
	internal_error(l, lp, what);
}

/* What ensure() is about to do, for its error message. */
static void ensure_what(const gf_live *l, char *buf, size_t n)
{
	size_t present = 0;
	for (size_t i = 0; l->dirty && i < l->nnodes; i++)
		present += l->nodes[i].present;
	if (l->dirty)
		snprintf(buf, n, "rebuilding the engine from %zu nodes and their bound pods", present);
	else if (l->sched_dirty)
		snprintf(buf, n, "starting the placement state afresh (policy %s)", l->o.policy->name);
	else
		snprintf(buf, n, "relabelling the scheduling loop's jobs for changed Queues (%zu Queues)", l->nq);
}

/*
 * The loop's estimate for a job of pods m[0..n): their longest
 * spec.activeDeadlineSeconds (the kubelet ends a pod by then, so it is a
 * bound, never short), in loop time (milliseconds); 0 when one of them has
 * none: the loop then expects the job to outlast every reservation.
 */
static int64_t deadline_estimate(gf_live *l, struct lpod *const *m, size_t n)
{
	int64_t most = 0;
	for (size_t i = 0; i < n; i++) {
		int64_t s = pod_of(l, m[i])->deadline_s;
		if (s <= 0 || s >= GF_LOOP_UNKNOWN_EST / 1000)
			return 0;
		most = s > most ? s : most;
	}
	return most * 1000;
}

/* Submit lp to the loop as a job of one pod at loop time t; false if it could not be (decided then). */
static bool submit_pod(gf_live *l, struct lpod *lp, int64_t t)
{
	struct gf_job_spec js = { .pod = lp->r.eff, .npods = 1, .priority = pod_of(l, lp)->req.priority,
				  .never_preempt = pod_of(l, lp)->preempt_never,
				  .arrival = t, .duration = GF_LOOP_OPEN, .estimate = deadline_estimate(l, &lp, 1),
				  .queue = (uint16_t)(l->quota ? pod_qindex(l, pod_of(l, lp), NULL, 0) : 0) };
	job_budgets(l, pod_of(l, lp), js.budgets);
	uint32_t job;
	gf_err e = gf_loop_submit(l->loop, &js, &job);
	if (!e && job >= l->job_cap) {
		size_t nc = l->job_cap ? l->job_cap * 2 : 256;
		while (nc <= job)
			nc *= 2;
		uint32_t *v = realloc(l->job_pod, nc * sizeof(*v));
		if (v) {
			l->job_pod = v;
			l->job_cap = nc;
		} else {
			(void)gf_loop_end(l->loop, job, t);
			e = GF_NOMEM;
		}
	}
	if (!e && l->ntried == l->tried_cap) {
		size_t nc = l->tried_cap ? l->tried_cap * 2 : 64;
		struct ltry *v = realloc(l->tried, nc * sizeof(*v));
		if (v) {
			l->tried = v;
			l->tried_cap = nc;
		} else {
			(void)gf_loop_end(l->loop, job, t);
			e = GF_NOMEM;
		}
	}
	if (e) {
		engine_error(l, lp, e, "submitting the pod to the scheduling loop");
		return false;
	}
	l->job_pod[job] = (uint32_t)(lp - l->pods);
	l->tried[l->ntried++] = (struct ltry){ (uint32_t)(lp - l->pods), job };
	return true;
}

/*
 * How the GPUs g[0..n) of node spec sp are grouped: the loop gives a
 * multi-GPU pod on a node that publishes its topology gf_topo_pick()'s
 * choice (queue/loop.c), so this is the fit it found.
 */
static enum gf_topo_fit topo_fit(const struct gf_node_spec *sp, const uint8_t *g, int n)
{
	if (n < 2)
		return GF_TOPO_NONE;
	bool island = sp->topo[g[0]].nvlink_island >= 0, numa = sp->topo[g[0]].numa >= 0;
	for (int k = 1; k < n; k++) {
		island &= sp->topo[g[k]].nvlink_island == sp->topo[g[0]].nvlink_island;
		numa &= sp->topo[g[k]].numa == sp->topo[g[0]].numa;
	}
	return island ? GF_TOPO_NVLINK : numa ? GF_TOPO_NUMA : GF_TOPO_NONE;
}

/* After the cycle: lp (member b->member of loop job `job`) was bound there: ASSUMED, a running job of the loop. */
static void take_bound(gf_live *l, struct lpod *lp, uint32_t job, const struct gf_loop_bind *b,
		       struct gf_live_decision *d)
{
	memcpy(lp->r.gpus, b->gpus, sizeof(lp->r.gpus));
	lp->r.counted = true;
	lp->seen_s = (int32_t)l->now;
	lp->run = job;
	l->nrun++;
	lp->r.eff.spec = 0;
	fill_placed(l, lp, b->node, d);
	d->fit = topo_fit(&l->nodes[lp->r.node].n.spec, lp->r.gpus, lp->r.eff.gpu_count);
	gf_pod_assume(&lp->r, lp->r.node, l->now, l->changes.end);
}

/* Could a logged change since lp's last attempt let it fit (queue/requeue.h)? */
static bool worth_trying(gf_live *l, struct lpod *lp)
{
	if (!l->cluster)
		return true;
	struct gf_pod_rules pr = lp->rules ? pod_rules(pod_of(l, lp)) : (struct gf_pod_rules){ 0 };
	return gf_requeue_worth_trying(&l->changes, &lp->r.retry, l->cluster, &l->cat, l->rules, &pr,
				       lp->r.eff_ok ? &lp->r.eff : NULL);
}

#define LIVE_BATCH 1
#define REASON_QUEUE (1ull << 42)
#define REASON_GANG (1ull << 43)

/* Not kube: a pod waiting in the loop's queue; its first decision says why (once). */
static void queue_wait(gf_live *l, struct lpod *lp, uint32_t job, struct gf_live_decision *d)
{
	struct gf_job_info ji;
	gf_loop_job(l->loop, job, &ji);
	if (ji.npods > 1 && (ji.why == GF_LOOP_WHY_NO_ROOM || ji.why == GF_LOOP_WHY_NONE)) {
		d->reason = REASON_QUEUE | REASON_GANG | ji.npods;
		snprintf(d->message, sizeof(d->message), "gang of %u pods: no room for all of them together "
			 "(placed all or none).", ji.npods);
		return;
	}
	if (ji.why == GF_LOOP_WHY_NO_ROOM || ji.why == GF_LOOP_WHY_NONE) {
		d->reason = why_summary(l, pod_of(l, lp), &lp->r.eff, d->message, sizeof(d->message));
		lp->r.eff_ok = true;
		return;
	}
	d->reason = REASON_QUEUE | (uint64_t)ji.why;
	snprintf(d->message, sizeof(d->message), "waiting in gpufleet's queue (%s): %s.",
		 gf_queue_policy_name((enum gf_queue_policy)l->o.queue_policy), gf_loop_why_name(ji.why));
}

/* ---- running jobs --------------------------------------------------------- */

/*
 * Every bound pod (ASSUMED or BOUND) is a running job of the loop, under
 * every queue policy, so the loop is the one ledger of the cluster's room:
 * it plans reservations and backfill against a job's expected end
 * (spec.activeDeadlineSeconds, else unknown) in every later cycle,
 * forecasts waiting pods' starts from it, and can choose it as a
 * preemption victim:
 *   - a pod the loop placed keeps its job (take_bound); a gang stays one
 *     job of all its members;
 *   - a pod bound by someone else, or found bound at start, after a restart
 *     or when a new loop is made (target changed, job records compacted),
 *     enters through gf_loop_place_at where its annotations (or the lowest
 *     free GPUs) put it: a job of one pod, or one job per gang of the bound
 *     members asking the same (run_adopt_all), running from the loop's
 *     clock, its deadline counted from when the scheduler saw it (the
 *     pod's start is not read: a later end, never an earlier one);
 *   - a pod that ends, is deleted, rebound, or whose binding failed leaves
 *     at once (run_leave: gf_loop_end_member, its room free before the
 *     next cycle); the rest of its gang goes on as one running job.
 * lp->run is its job (NO_JOB: none) and lp->r.counted says it holds room.
 * Job records of ended jobs (and, in kube mode, of every attempt that did
 * not fit) stay in the loop until compacted in place (compact_loop): when
 * they are twice the pods the loop holds (and over 4,096), O(jobs + pods)
 * amortised over as many ends.
 */
static void records_check(gf_live *l)
{
	size_t nj = gf_loop_njobs(l->loop);
	if (nj > 4096 && nj > 2 * (l->in_loop + l->nrun))
		l->loop_dirty = true;
}

static bool gmem_room(gf_live *l, size_t n);
static bool same_request(const struct gf_pod_spec *a, const struct gf_pod_spec *b);

/* Room in job_pod for the loop's next job id. */
static bool job_pod_room(gf_live *l)
{
	size_t need = gf_loop_njobs(l->loop) + 1;
	if (need <= l->job_cap)
		return true;
	size_t nc = l->job_cap ? l->job_cap * 2 : 256;
	while (nc < need)
		nc *= 2;
	uint32_t *v = realloc(l->job_pod, nc * sizeof(*v));
	if (!v)
		return false;
	l->job_pod = v;
	l->job_cap = nc;
	return true;
}

/*
 * The expected rest of bound pods m[0..n)'s run from the loop's clock: the
 * latest of their starts (seen_s, the caller's clock) plus
 * spec.activeDeadlineSeconds, at least 1 ms; 0 (unknown) when one has no
 * deadline.
 */
static int64_t run_estimate(gf_live *l, struct lpod *const *m, size_t n)
{
	if (!deadline_estimate(l, m, n))
		return 0;
	struct gf_loop_stats st;
	gf_loop_stats(l->loop, &st);
	int64_t end = 0;
	for (size_t k = 0; k < n; k++) {
		int64_t e = ((int64_t)(m[k]->seen_s > 0 ? m[k]->seen_s : 0) + pod_of(l, m[k])->deadline_s) * 1000;
		end = e > end ? e : end;
	}
	return end - st.now > 1 ? end - st.now : 1;
}

/* The job bound pods m[0..n) (the same request) run as: open, their deadline, m[0]'s queue and budgets. */
static struct gf_job_spec run_spec(gf_live *l, struct lpod *const *m, uint32_t n)
{
	int qi = l->quota ? pod_qindex(l, pod_of(l, m[0]), NULL, 0) : 0;
	struct gf_job_spec js = { .pod = m[0]->r.eff, .npods = n, .priority = pod_of(l, m[0])->req.priority,
				  .duration = GF_LOOP_OPEN, .estimate = run_estimate(l, m, n),
				  .queue = (uint16_t)(qi < 0 ? (int)l->nq : qi) };
	js.pod.spec = 0; /* the node is given: no model filter */
	job_budgets(l, pod_of(l, m[0]), js.budgets);
	return js;
}

/*
 * Bound pods m[0..n) (not in the loop, the same request) become one running
 * job where they are (lp->r.node, lp->r.gpus).  false: not placed (out of
 * memory, or it does not fit there: nothing changed).
 */
static bool run_adopt_many(gf_live *l, struct lpod **m, uint32_t n)
{
	if (!n || !l->loop || !l->cluster || n > GF_LOOP_MAX_GANG || !job_pod_room(l) || (n > 1 && !gmem_room(l, n)))
		return false;
	struct gf_loop_bind *where = calloc(n, sizeof(*where));
	if (!where)
		return false;
	for (uint32_t k = 0; k < n; k++) {
		const struct gf_pod_rec *r = &m[k]->r;
		if (!m[k]->used || m[k]->run != NO_JOB || r->node < 0 || l->nodes[r->node].cidx < 0) {
			free(where);
			return false;
		}
		where[k].node = (uint32_t)l->nodes[r->node].cidx;
		memcpy(where[k].gpus, r->gpus, sizeof(where[k].gpus));
	}
	struct lpod *lp = m[0];
	struct gf_job_spec js = run_spec(l, m, n);
	uint32_t job;
	gf_err e = gf_loop_place_at(l->loop, &js, where, &job);
	free(where);
	if (e)
		return false;
	if (n == 1) {
		l->job_pod[job] = (uint32_t)(lp - l->pods);
	} else {
		l->job_pod[job] = GANG_JOB | (uint32_t)l->ngmem;
		for (uint32_t k = 0; k < n; k++)
			l->gmem[l->ngmem++] = (uint32_t)(m[k] - l->pods);
	}
	for (uint32_t k = 0; k < n; k++) {
		m[k]->run = job;
		m[k]->r.counted = true;
	}
	l->nrun += n;
	return true;
}

static bool run_adopt(gf_live *l, struct lpod *lp)
{
	return run_adopt_many(l, &lp, 1);
}

static int cmp_gkey_slot(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;
	return x[0] != y[0] ? (x[0] < y[0] ? -1 : 1) : (x[1] > y[1]) - (x[1] < y[1]);
}

/*
 * A new loop: every ASSUMED pod, then every BOUND one, enters it where it
 * is (account_as; a pod that held room in the old loop keeps its GPUs),
 * each a job of one; then a gang's bound members asking the same become
 * one job (their jobs of one end, the gang's starts in the same room).
 */
static void run_adopt_all(gf_live *l)
{
	if (!l->loop)
		return;
	size_t ng = 0;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < l->npods; i++) {
			struct lpod *lp = &l->pods[i];
			if (!lp->used || lp->r.st != (pass ? GF_POD_BOUND : GF_POD_ASSUMED))
				continue;
			account_as(l, lp, lp->placed);
			ng += lp->r.counted && lp->gkey;
		}
	for (size_t i = 0; i < l->npods; i++)
		l->pods[i].placed = false;
	uint64_t (*v)[2] = ng ? malloc(ng * sizeof(*v)) : NULL;
	struct lpod **m = ng ? malloc((ng < GF_LOOP_MAX_GANG ? ng : GF_LOOP_MAX_GANG) * sizeof(*m)) : NULL;
	if (!v || !m) { /* none, or out of memory: each alone */
		free(v);
		free(m);
		return;
	}
	size_t k = 0;
	for (size_t i = 0; i < l->npods; i++)
		if (l->pods[i].used && l->pods[i].r.counted && l->pods[i].gkey)
			v[k][0] = l->pods[i].gkey, v[k++][1] = i;
	qsort(v, ng, sizeof(*v), cmp_gkey_slot);
	for (size_t i = 0; i < ng;) {
		uint32_t n = 0;
		struct lpod *first = &l->pods[v[i][1]];
		while (i < ng && v[i][0] == first->gkey && n < GF_LOOP_MAX_GANG &&
		       same_request(&l->pods[v[i][1]].r.eff, &first->r.eff))
			m[n++] = &l->pods[v[i++][1]];
		if (n < 2 || !job_pod_room(l) || !gmem_room(l, n))
			continue;
		for (uint32_t j = 0; j < n; j++) {
			uint32_t rest;
			(void)gf_loop_end_member(l->loop, m[j]->run, 0, &rest); /* a job of one: none left */
			m[j]->run = NO_JOB;
			m[j]->r.counted = false;
		}
		l->nrun -= n;
		if (!run_adopt_many(l, m, n)) /* cannot happen: the room they just left */
			for (uint32_t j = 0; j < n; j++)
				if (!run_adopt(l, m[j]))
					l->conflicts++;
	}
	free(v);
	free(m);
}

/*
 * lp's bind ends (the pod finished, was deleted, rebound, or its binding
 * failed): its member of its job ends in the loop at once
 * (gf_loop_end_member: its room is free now); the other members of its
 * gang go on as the job the loop makes of them.
 */
static void run_leave(gf_live *l, struct lpod *lp)
{
	uint32_t job = lp->run, slot = (uint32_t)(lp - l->pods), member = 0, rest = GF_LOOP_NO_JOB;
	if (job == NO_JOB)
		return;
	lp->run = NO_JOB;
	l->nrun--;
	if (!l->loop)
		return;
	struct gf_job_info ji;
	gf_loop_job(l->loop, job, &ji);
	bool gang = l->job_pod[job] & GANG_JOB;
	uint32_t at = l->job_pod[job] & ~GANG_JOB;
	while (gang && member < ji.npods && l->gmem[at + member] != slot)
		member++;
	bool room = job_pod_room(l) && (ji.npods <= 2 || gmem_room(l, ji.npods - 1));
	if (gf_loop_end_member(l->loop, job, member < ji.npods ? member : 0, &rest) || !room) {
		l->dirty = true; /* cannot happen, or out of memory: the engine made again takes every pod */
		for (uint32_t k = 0; gang && k < ji.npods; k++) {
			struct lpod *o = &l->pods[l->gmem[at + k]];
			if (o != lp && o->used && o->run == job)
				o->run = NO_JOB, l->nrun--;
		}
		return;
	}
	if (rest != GF_LOOP_NO_JOB) { /* the others, in their order: job rest's members */
		uint32_t n = 0, first = (uint32_t)l->ngmem;
		for (uint32_t k = 0; k < ji.npods; k++) {
			uint32_t o = l->gmem[at + k];
			if (o == slot)
				continue;
			l->pods[o].run = rest;
			if (ji.npods > 2)
				l->gmem[l->ngmem++] = o;
			else
				l->job_pod[rest] = o;
			n++;
		}
		if (n > 1)
			l->job_pod[rest] = GANG_JOB | first;
	}
	records_check(l);
}

/* ---- preemption (opts.preemption; not kube) -------------------------------- */

/*
 * The loop chooses victims among its running jobs (queue/loop.h,
 * "Preemption": the cheapest per node, gangs whole, only lower priorities,
 * or borrowers of a reclaiming Queue's cohort) and, in the same cycle,
 * binds the preemptor in their room.  Here:
 *   - each evicted job's pods leave the loop (their job is withdrawn: the
 *     pods are being deleted) and the cluster (the loop unbound them), are
 *     marked evicted and counted on their node (lnode.victims), and queued
 *     for gf_live_evictions() (the daemon: DisruptionTarget, graceful
 *     delete, Event);
 *   - a pod the cycle bound on a node with evicted pods not yet gone is
 *     held: ASSUMED (its room is its own in the cluster, so no other pod
 *     can take it), decision NOMINATED (the daemon writes
 *     status.nominatedNodeName, no binding), and PLACED (bound) only when
 *     every evicted pod on that node is gone (deleted, or finished);
 *   - held longer than opts.preempt_wait_s: every pod held on that node is
 *     released (gf_live_forget, back to the queue, UNSCHEDULABLE with why)
 *     and the evicted pods still there are accounted again, so nothing is
 *     double-booked while they linger.
 * So no pod is bound in an evicted pod's room before it is gone, and no
 * other pod takes that room meanwhile.  A held preemptor chosen as a victim
 * by a later, higher-priority one is released (back to the queue), never
 * deleted: it was not bound.  What remains possible: a held pod deleted (or
 * its wait running out) after its victims were asked to go; a pod whose
 * binding is in flight chosen as a victim is deleted like a bound one.
 */
#define PREEMPT_WAIT_S 120.0

static struct gf_live_eviction *evq_push(gf_live *l)
{
	if (l->nevq == l->evq_cap) {
		size_t nc = l->evq_cap ? l->evq_cap * 2 : 16;
		struct gf_live_eviction *v = realloc(l->evq, nc * sizeof(*v));
		if (!v)
			return NULL;
		l->evq = v;
		l->evq_cap = nc;
	}
	struct gf_live_eviction *e = &l->evq[l->nevq++];
	memset(e, 0, sizeof(*e));
	return e;
}

/* The cycle evicted out->evicted[]: their pods go (see above). */
static void victims_take(gf_live *l, const struct gf_loop_decisions *out, int64_t t)
{
	for (size_t i = 0; i < out->nevicted; i++) {
		uint32_t job = out->evicted[i];
		struct gf_job_info ji;
		gf_loop_job(l->loop, job, &ji);
		for (uint32_t m = 0; m < ji.npods; m++) {
			struct lpod *lp = &l->pods[job_slot(l, job, m)];
			if (!lp->used || lp->run != job)
				continue;
			lp->run = NO_JOB;
			l->nrun--;
			lp->r.counted = false; /* the loop unbound it */
			if (lp->held) { /* a preemptor not bound yet: released, never deleted */
				lp->held = false;
				gf_live_forget(l, lp->uid, true);
				continue;
			}
			lp->evicted = true;
			l->nodes[lp->r.node].victims++;
			struct gf_live_eviction *e = evq_push(l);
			if (!e)
				continue; /* out of memory: not asked to go; its preemptor waits, then is released */
			const struct gf_k8s_pod *p = pod_of(l, lp);
			snprintf(e->ns, sizeof(e->ns), "%s", p->ns);
			snprintf(e->name, sizeof(e->name), "%s", p->name);
			snprintf(e->uid, sizeof(e->uid), "%s", lp->uid);
			snprintf(e->node, sizeof(e->node), "%s", l->nodes[lp->r.node].n.name);
			e->priority = p->req.priority;
		}
		(void)gf_loop_end(l->loop, job, t); /* back in the loop's queue: withdrawn, its pods go */
	}
}

/* lp was just bound by the cycle (d PLACED): held NOMINATED while evicted pods are on its node. */
static void victims_hold(gf_live *l, struct lpod *lp, struct gf_live_decision *d)
{
	struct lnode *nd = &l->nodes[lp->r.node];
	if (!nd->victims || d->result != GF_LIVE_PLACED)
		return;
	uint32_t *v = l->nheld == l->held_cap ? realloc(l->held, (l->held_cap ? l->held_cap * 2 : 16) * sizeof(*v))
					      : l->held;
	if (!v) { /* out of memory: not bound now, tried again */
		gf_live_forget(l, lp->uid, true);
		d->result = GF_LIVE_UNSCHEDULABLE;
		snprintf(d->message, sizeof(d->message), "internal error: out of memory");
		return;
	}
	if (l->nheld == l->held_cap)
		l->held_cap = l->held_cap ? l->held_cap * 2 : 16;
	l->held = v;
	l->held[l->nheld++] = (uint32_t)(lp - l->pods);
	lp->held = true;
	d->result = GF_LIVE_NOMINATED;
	snprintf(d->message, sizeof(d->message), "preempting %u pod%s on node %s: bound once they are gone",
		 nd->victims, nd->victims == 1 ? "" : "s", nd->n.name);
	const struct gf_k8s_pod *p = pod_of(l, lp);
	for (size_t i = 0; i < l->nevq; i++) {
		struct gf_live_eviction *e = &l->evq[i];
		if (!e->by_uid[0] && !strcmp(e->node, nd->n.name)) {
			snprintf(e->by_ns, sizeof(e->by_ns), "%s", p->ns);
			snprintf(e->by_name, sizeof(e->by_name), "%s", p->name);
			snprintf(e->by_uid, sizeof(e->by_uid), "%s", lp->uid);
			e->by_priority = p->req.priority;
		}
	}
}

/* An evicted pod is gone (deleted, finished) or accounted again. */
static void victim_gone(gf_live *l, struct lpod *lp)
{
	if (!lp->evicted)
		return;
	lp->evicted = false;
	if (l->nodes[lp->r.node].victims)
		l->nodes[lp->r.node].victims--;
}

/* Node slot ns's held pods waited too long: released; its evicted pods still there accounted again. */
static void held_expire(gf_live *l, int32_t ns)
{
	for (size_t i = 0; i < l->nheld; i++) {
		struct lpod *lp = &l->pods[l->held[i]];
		if (!lp->used || !lp->held || lp->r.node != ns)
			continue;
		lp->held = false;
		struct gf_live_decision d;
		memset(&d, 0, sizeof(d));
		d.result = GF_LIVE_UNSCHEDULABLE;
		d.reason = REASON_TEXT | 1;
		snprintf(d.message, sizeof(d.message), "preemption: the pods evicted on node %s for it were still "
			 "there after %.0f s; its room there is released and it is tried again.",
			 l->nodes[ns].n.name, l->o.preempt_wait_s > 0 ? l->o.preempt_wait_s : PREEMPT_WAIT_S);
		gf_live_forget(l, lp->uid, true);
		add_decision(l, lp, &d);
	}
	for (size_t i = 0; i < l->npods; i++) {
		struct lpod *o = &l->pods[i];
		if (o->used && o->evicted && o->r.node == ns && o->r.st == GF_POD_BOUND) {
			victim_gone(l, o);
			account(l, o);
		}
	}
}

/* Held pods whose node has no evicted pod left: PLACED; waited too long: released.  true: decisions added. */
static bool held_release(gf_live *l)
{
	if (!l->nheld)
		return false;
	l->ndec = l->dec_at = l->ndmsg = 0;
	double wait = l->o.preempt_wait_s > 0 ? l->o.preempt_wait_s : PREEMPT_WAIT_S;
	for (size_t i = 0; i < l->nheld; i++) {
		struct lpod *lp = &l->pods[l->held[i]];
		if (!lp->used || !lp->held || lp->r.st != GF_POD_ASSUMED)
			continue;
		struct lnode *nd = &l->nodes[lp->r.node];
		if (nd->victims && l->now - lp->seen_s > wait)
			held_expire(l, lp->r.node);
		if (nd->victims || !lp->held)
			continue;
		lp->held = false;
		if (nd->cidx < 0 || !nd->present) { /* the node went meanwhile */
			gf_live_forget(l, lp->uid, true);
			continue;
		}
		struct gf_live_decision d;
		memset(&d, 0, sizeof(d));
		fill_placed(l, lp, (size_t)nd->cidx, &d);
		add_decision(l, lp, &d);
	}
	size_t w = 0;
	for (size_t i = 0; i < l->nheld; i++)
		if (l->pods[l->held[i]].used && l->pods[l->held[i]].held)
			l->held[w++] = l->held[i];
	l->nheld = w;
	return l->ndec > 0;
}

size_t gf_live_evictions(gf_live *l, struct gf_live_eviction *out, size_t max)
{
	size_t n = l->nevq < max ? l->nevq : max;
	if (!n)
		return 0;
	memcpy(out, l->evq, n * sizeof(*out));
	memmove(l->evq, l->evq + n, (l->nevq - n) * sizeof(*l->evq));
	l->nevq -= n;
	return n;
}

/* ---- gangs (not kube) ----------------------------------------------------- */

/*
 * A gang (a PodGroup of either API, gangs.h) is one loop job of N identical
 * pods, N = minMember less the members already placed (ASSUMED or BOUND): the
 * loop places all N in one cycle or none (queue/loop.h), so a gang never
 * holds GPUs while it waits, and the cycle's N decisions are handed out one
 * after another, all of them decided before the first binding is issued.
 * The job is submitted once minMember members exist (before that each waits,
 * "gang incomplete: k of N pods"); the first N by name form it.  Members
 * beyond minMember, once minMember are placed, are placed one by one (as the
 * coscheduling plugin lets them pass); until then they wait.  A member whose
 * binding fails comes back (gf_live_forget) to a gang that now lacks one:
 * it is re-placed alone, as a job of one, in the next cycle, ahead of every
 * other job (priority INT32_MAX: the rest of its gang already holds GPUs).  A member
 * deleted or changed while its gang waits takes the job out of the loop; the
 * others go back to this file's queue.
 *
 * Cost: a member's attempt walks its gang's pods (the gang index, live_gangs.c:
 * O(members), each compared by the hashed key, then by its gang).
 */

/* The resources two pods ask for (not their names, priorities or times). */
static bool same_request(const struct gf_pod_spec *a, const struct gf_pod_spec *b)
{
	return a->cpu_milli == b->cpu_milli && a->mem_mib == b->mem_mib && a->gpu_count == b->gpu_count &&
	       a->gpu_milli == b->gpu_milli && a->spec == b->spec && a->gpu_mem_mib == b->gpu_mem_mib &&
	       a->served_model == b->served_model;
}

static int cmp_member(gf_live *l, const struct lpod *a, const struct lpod *b)
{
	char an[GF_K8S_NAME_MAX];
	snprintf(an, sizeof(an), "%s", pod_of(l, a)->name);
	int c = strcmp(an, pod_of(l, b)->name);
	return c ? c : strcmp(a->uid, b->uid);
}

/* lp waits for its gang: an unschedulable decision saying why, parked with its backoff. */
static void gang_wait(gf_live *l, struct lpod *lp, uint64_t key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void gang_wait(gf_live *l, struct lpod *lp, uint64_t key, const char *fmt, ...)
{
	struct gf_live_decision d;
	memset(&d, 0, sizeof(d));
	d.result = GF_LIVE_UNSCHEDULABLE;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(d.message, sizeof(d.message), fmt, ap);
	va_end(ap);
	d.reason = REASON_GANG | key;
	gf_pod_failed(&lp->r, false, l->now, l->changes.end);
	add_decision(l, lp, &d);
}

/* Grow gmem for n more members. */
static bool gmem_room(gf_live *l, size_t n)
{
	if (l->ngmem + n <= l->gmem_cap)
		return true;
	size_t nc = l->gmem_cap ? l->gmem_cap * 2 : 64;
	while (nc < l->ngmem + n)
		nc *= 2;
	if (nc > GANG_JOB)
		return false;
	uint32_t *v = realloc(l->gmem, nc * sizeof(*v));
	if (!v)
		return false;
	l->gmem = v;
	l->gmem_cap = nc;
	return true;
}

/* Submit members m[0..n) (identical requests: lp's effective one) as one loop job at t. */
static void gang_submit(gf_live *l, struct lpod *lp, struct lpod **m, uint32_t n, int64_t t, bool finish)
{
	struct gf_job_spec js = { .pod = lp->r.eff, .npods = n, .priority = pod_of(l, lp)->req.priority,
				  .never_preempt = pod_of(l, lp)->preempt_never,
				  .arrival = t, .duration = GF_LOOP_OPEN, .estimate = deadline_estimate(l, m, n),
				  .queue = (uint16_t)(l->quota ? pod_qindex(l, pod_of(l, lp), NULL, 0) : 0) };
	if (finish)
		js.priority = INT32_MAX; /* the rest of its gang holds its GPUs already: ahead of all */
	job_budgets(l, pod_of(l, lp), js.budgets);
	uint32_t job = 0;
	gf_err e = gmem_room(l, n) ? gf_loop_submit(l->loop, &js, &job) : GF_NOMEM;
	bool submitted = !e;
	if (!e && job >= l->job_cap) {
		size_t nc = l->job_cap ? l->job_cap * 2 : 256;
		while (nc <= job)
			nc *= 2;
		uint32_t *v = realloc(l->job_pod, nc * sizeof(*v));
		if (v)
			l->job_pod = v, l->job_cap = nc;
		else
			e = GF_NOMEM;
	}
	if (!e && l->ntried + n > l->tried_cap) {
		size_t nc = l->tried_cap ? l->tried_cap * 2 : 64;
		while (nc < l->ntried + n)
			nc *= 2;
		struct ltry *v = realloc(l->tried, nc * sizeof(*v));
		if (v)
			l->tried = v, l->tried_cap = nc;
		else
			e = GF_NOMEM;
	}
	if (e) {
		if (submitted)
			(void)gf_loop_end(l->loop, job, t);
		engine_error(l, lp, e, "submitting its gang (%u pods) to the scheduling loop", n);
		return;
	}
	l->job_pod[job] = GANG_JOB | (uint32_t)l->ngmem;
	for (uint32_t k = 0; k < n; k++) {
		l->gmem[l->ngmem++] = (uint32_t)(m[k] - l->pods);
		m[k]->job = job;
		m[k]->r.eff = lp->r.eff;
		l->in_loop++;
		gf_pod_skip(&m[k]->r); /* parked here while the loop holds the gang */
		l->tried[l->ntried++] = (struct ltry){ (uint32_t)(m[k] - l->pods), job };
	}
}

/*
 * The cycle bound gangs: their members still waiting here (the ones beyond
 * minMember, parked with a backoff no node change ends) are tried again.
 */
static void gang_wake(gf_live *l, const struct gf_loop_decisions *out)
{
	for (size_t i = 0; i < out->nbinds; i++) {
		const struct gf_loop_bind *b = &out->binds[i];
		if (b->member || !(l->job_pod[b->job] & GANG_JOB))
			continue;
		uint64_t key = l->pods[job_slot(l, b->job, 0)].gkey;
		for (uint32_t k = gf_live_gang_first(l, key); k != NO_SLOT; k = gf_live_gang_next(l, k, key)) {
			struct lpod *o = &l->pods[k];
			if (o->used && o->gkey == key && o->r.st == GF_POD_PENDING && o->r.parked &&
			    o->job == NO_JOB && !o->r.invalid) {
				o->r.hinted = false;
				enqueue(l, o);
			}
		}
	}
}

/*
 * lp (ours, its effective request in lp->r.eff) belongs to a gang: it waits,
 * or its gang goes to the loop.  false: place it as a pod of its own (no gang
 * constraint left: minMember <= 1, or minMember members placed already).
 */
static bool gang_take(gf_live *l, struct lpod *lp, int64_t t)
{
	struct gf_gang_ref ref;
	if (!gf_gangs_of_pod(l->gangs, pod_of(l, lp), &ref))
		return false;
	if (!ref.known) {
		gang_wait(l, lp, lp->gkey & 0xffffffffffull, "waiting for its PodGroup %s/%s (%s): not found",
			  ref.ns, ref.name, ref.api == GF_GANG_WORKLOAD ? "scheduling.k8s.io" : "scheduling.x-k8s.io");
		return true;
	}
	uint32_t min = ref.min_member > 0 ? (uint32_t)ref.min_member : 1;
	if (min <= 1)
		return false;
	if (min > GF_LOOP_MAX_GANG) {
		gang_wait(l, lp, 1, "gang %s/%s: minMember %u is more than gpufleet places together (%d)",
			  ref.ns, ref.name, min, GF_LOOP_MAX_GANG);
		return true;
	}
	struct lpod **m = malloc(min * sizeof(*m));
	if (!m) {
		engine_error(l, lp, GF_NOMEM, "listing the members of gang %s/%s", ref.ns, ref.name);
		return true;
	}
	uint32_t placed = 0, npend = 0;
	bool in_loop = false, differ = false;
	for (uint32_t i = gf_live_gang_first(l, lp->gkey); i != NO_SLOT; i = gf_live_gang_next(l, i, lp->gkey)) {
		struct lpod *o = &l->pods[i];
		if (!o->used || o->gkey != lp->gkey || (o != lp && !gf_live_same_gang(l, o, &ref)))
			continue;
		if (o->r.st == GF_POD_ASSUMED || o->r.st == GF_POD_BOUND) {
			placed++;
			continue;
		}
		if (o->r.st != GF_POD_PENDING || !o->ours || o->r.invalid)
			continue;
		if (o->job != NO_JOB) {
			in_loop = true;
			continue;
		}
		npend++;
		/* keep the min first members by name (insertion into a sorted array) */
		uint32_t k = npend <= min ? npend - 1 : min;
		while (k > 0 && cmp_member(l, o, m[k - 1]) < 0) {
			if (k < min)
				m[k] = m[k - 1];
			k--;
		}
		if (k < min)
			m[k] = o;
	}
	bool done = true;
	if (placed >= min) {
		done = false; /* the gang stands: lp is an extra member, placed alone */
	} else if (in_loop) {
		gang_wait(l, lp, 2, "gang %s/%s: waiting for its first %u pods to be placed together",
			  ref.ns, ref.name, min);
	} else if (placed + npend < min) {
		gang_wait(l, lp, ((uint64_t)(placed + npend) << 20) | min, "gang incomplete: %u of %u pods",
			  placed + npend, min);
	} else {
		uint32_t need = min - placed;
		for (uint32_t k = 0; k < need && !differ; k++) {
			struct gf_pod_spec e;
			char msg[8];
			differ = m[k] != lp && (effective(l, pod_of(l, m[k]), 0, &e, msg, sizeof(msg)) ||
						!same_request(&e, &lp->r.eff));
		}
		bool has_lp = false;
		for (uint32_t k = 0; k < need; k++)
			has_lp |= m[k] == lp;
		if (differ) {
			gang_wait(l, lp, 3, "gang %s/%s: its pods ask for different resources; gpufleet places "
				  "a gang as one job of identical pods", ref.ns, ref.name);
		} else {
			gang_submit(l, lp, m, need, t, placed > 0);
			if (!has_lp) /* an extra member: after the first ones (by name) */
				gang_wait(l, lp, 2, "gang %s/%s: waiting for its first %u pods to be placed "
					  "together", ref.ns, ref.name, min);
		}
	}
	free(m);
	return done;
}

/*
 * Idle cycles (not kube).  A cycle tries every job waiting in the loop
 * again (150,000 pending pods, 25,000 of them waiting at 5,000 nodes: about
 * 1 s of CPU, bench_live_paths), and the daemon asks for one every 100 ms
 * when nothing is handed out.  A cycle with nothing submitted decides what
 * the one before it did unless something outside changed what it decides
 * from: the loop (jobs, events applied or due, starts, evictions), the
 * cluster (binds, unbinds, rebuilds), a node's admission or freed room (the
 * change log), the pods waiting in it.  So such a cycle is skipped while
 * all of these read as they did after the last cycle, for at most
 * IDLE_CYCLE_MS of the caller's clock (then one runs anyway: whatever time
 * alone changes).
 */
#define IDLE_CYCLE_MS 10000

static void idle_state(const gf_live *l, uint64_t v[10])
{
	struct gf_loop_stats st;
	gf_loop_stats(l->loop, &st);
	v[0] = (uint64_t)(uintptr_t)l->loop;
	v[1] = l->epoch;
	v[2] = l->resets;
	v[3] = gf_loop_njobs(l->loop);
	v[4] = st.events;
	v[5] = st.starts;
	v[6] = st.preemptions;
	v[7] = l->cluster ? gf_cluster_changes(l->cluster) : 0;
	v[8] = l->changes.end;
	v[9] = l->in_loop;
}

/* Nothing submitted and nothing changed since the last cycle, less than IDLE_CYCLE_MS ago (t: loop time). */
static bool idle_skip(gf_live *l, int64_t t)
{
	uint64_t v[10];
	int64_t ev;
	if (l->ntried || !l->loop || l->idle_at <= 0 || t - l->idle_at >= IDLE_CYCLE_MS ||
	    (gf_loop_next_event(l->loop, &ev) && ev <= t)) /* an end or arrival reported, due now */
		return false;
	idle_state(l, v);
	if (memcmp(v, l->idle_seen, sizeof(v)))
		return false;
	l->idle_skips++;
	return true;
}

/* A cycle ran at t: what it decided from, for idle_skip. */
static void idle_note(gf_live *l, int64_t t)
{
	if (!l->loop)
		return;
	idle_state(l, l->idle_seen);
	l->idle_at = t > 0 ? t : 1;
}

/* The loop's cycle at loop time t failed with e: d says so, with what the cycle had before it. */
static void cycle_failed(gf_live *l, gf_err e, int64_t t, struct gf_live_decision *d)
{
	snprintf(d->message, sizeof(d->message), "internal error: the scheduling cycle at %lld ms (%zu pods "
		 "submitted, %zu waiting in the loop) failed: %s (%s)", (long long)t, l->ntried, l->in_loop,
		 gf_strerror(e), gf_err_name(e));
	d->reason = fnv(d->message) | REASON_TEXT;
}

/*
 * One scheduling cycle of the engine's loop.  kube: the pod the queue hands
 * out (unless no change can help it) goes to the loop as a job, one
 * gf_loop_cycle() decides, and it is bound (ASSUMED here) or, with the
 * why-not over every node, unschedulable: it leaves the loop and backs off
 * in this file's queue.  Other policies: every pod handed out joins the
 * loop's queue and stays there (parked here) until the loop binds it or it
 * is deleted or changes; a cycle runs whenever the daemon asks, and each pod
 * gets one unschedulable decision, its first.  false: nothing to hand out.
 */
/* ---- disruption budgets (opts.preemption; not kube) ---------------------- */

/*
 * PodDisruptionBudgets (k8s/pdb.h, gf_live_pdb_set) are the loop's
 * disruption budgets (queue/loop.h: best effort, as kube-scheduler's
 * DefaultPreemption): budget b + 1 is l->pdb[b].  A job counts against the
 * budgets that cover its pod (a gang: its first member's), at most
 * GF_JOB_MAX_BUDGETS, as it is submitted or adopted.  A budget added,
 * deleted or with a new selector makes a new loop (as a Queue change: its
 * running jobs are adopted again with their budgets); a new count
 * (status.disruptionsAllowed) goes to the loop before the next cycle,
 * replacing what the loop's own evictions took from the old one; until
 * then those evictions count down the loop's copy.
 */
static void job_budgets(gf_live *l, const struct gf_k8s_pod *p, uint16_t *out)
{
	int n = 0;
	for (size_t b = 0; b < l->npdb && n < GF_JOB_MAX_BUDGETS; b++)
		if (gf_k8s_pdb_covers(&l->pdb[b], p))
			out[n++] = (uint16_t)(b + 1);
}

/* The budgets' counts into the loop when they changed. */
static void budgets_feed(gf_live *l)
{
	if (!l->pdb_dirty || !l->loop)
		return;
	int32_t *a = malloc((l->npdb + 1) * sizeof(*a));
	if (!a)
		return; /* stays dirty: the next cycle tries again */
	for (size_t b = 0; b < l->npdb; b++)
		a[b] = l->pdb[b].allowed;
	if (!gf_loop_set_budgets(l->loop, a, l->npdb))
		l->pdb_dirty = false;
	free(a);
}

static size_t pdb_find(const gf_live *l, const char *ns, const char *name)
{
	size_t b = 0;
	while (b < l->npdb && (strcmp(l->pdb[b].ns, ns) || strcmp(l->pdb[b].name, name)))
		b++;
	return b;
}

gf_err gf_live_pdb_set(gf_live *l, const struct gf_k8s_pdb *p)
{
	size_t b = pdb_find(l, p->ns, p->name);
	if (b == l->npdb) {
		if (l->npdb >= GF_LOOP_MAX_BUDGETS)
			return GF_RANGE;
		if (l->npdb == l->pdb_cap) {
			size_t nc = l->pdb_cap ? l->pdb_cap * 2 : 16;
			struct gf_k8s_pdb *v = realloc(l->pdb, nc * sizeof(*v));
			if (!v)
				return GF_NOMEM;
			l->pdb = v;
			l->pdb_cap = nc;
		}
		l->npdb++;
		l->queues_dirty = true; /* jobs' budgets: relabelled (relabel_loop) */
	} else if (!gf_k8s_pdb_same_selector(&l->pdb[b], p)) {
		l->queues_dirty = true;
	}
	l->pdb[b] = *p;
	l->pdb_dirty = true;
	return GF_OK;
}

void gf_live_pdb_delete(gf_live *l, const char *ns, const char *name)
{
	size_t b = pdb_find(l, ns, name);
	if (b == l->npdb)
		return;
	l->pdb[b] = l->pdb[--l->npdb]; /* indices move: jobs relabelled */
	l->queues_dirty = true;
	l->pdb_dirty = true;
}

size_t gf_live_pdb_count(const gf_live *l)
{
	return l->npdb;
}

/* kube: pod lp's job after the cycle: bound, or the attempt failed (the job leaves the loop, lp parked). */
static void kube_settle(gf_live *l, struct lpod *lp, uint32_t job, const struct gf_loop_decisions *out, gf_err e,
			int64_t t)
{
	const struct gf_loop_bind *b = NULL;
	for (size_t i = 0; !e && i < out->nbinds && !b; i++)
		b = out->binds[i].job == job ? &out->binds[i] : NULL;
	struct gf_live_decision d;
	memset(&d, 0, sizeof(d));
	bool tried = b || e;
	for (size_t i = 0; !tried && i < out->nfailed; i++)
		tried = out->failed[i] == job;
	if (!tried && lp->refused && lp->r.retry.not_before * 1000.0 > (double)t) {
		/* a refused binding's backoff (gf_live_forget): it waits at its place, no decision */
		lp->job = job;
		l->in_loop++;
		return;
	}
	lp->refused = false;
	if (b) {
		take_bound(l, lp, job, b, &d);
	} else {
		(void)gf_loop_end(l->loop, job, t); /* leaves the loop's queue */
		d.result = GF_LIVE_UNSCHEDULABLE;
		if (e) {
			cycle_failed(l, e, t, &d);
		} else {
			d.reason = why_summary(l, pod_of(l, lp), &lp->r.eff, d.message, sizeof(d.message));
			lp->r.eff_ok = true;
		}
		gf_pod_failed(&lp->r, false, l->now, l->changes.end);
	}
	add_decision(l, lp, &d);
}

static bool run_cycle(gf_live *l)
{
	uint32_t id;
	bool took = false, kube = l->o.queue_policy == GF_QP_KUBE;
	l->ndec = l->dec_at = l->ntried = l->ndmsg = 0;
	char doing[160];
	ensure_what(l, doing, sizeof(doing));
	gf_err ee = ensure(l);
	if (ee) {
		if (gf_podq_take(&l->queue, pod_rec, l, &id)) {
			engine_error(l, &l->pods[id], ee, "%s", doing);
			return true;
		}
		return false;
	}
	struct gf_loop_stats st = { 0 };
	if (l->loop)
		gf_loop_stats(l->loop, &st);
	int64_t t = (int64_t)(l->now * 1000.0); /* milliseconds of the caller's clock */
	if (t < st.now)
		t = st.now;
	/*
	 * kube: one pod a cycle, as kube-scheduler's scheduling cycle: the next
	 * pod's requeue hint (worth_trying) then sees this one's placement, and
	 * a node change is seen by the next decision.  A batch of 32 made the
	 * taint storm (sched_storm) try 11,650 times instead of 2,505: every pod
	 * of a batch that a freshly untainted node could take was tried on it.
	 * The other policies: every pod handed out joins the loop's queue.
	 */
	while ((!kube || l->ndec + l->ntried < LIVE_BATCH) && gf_podq_take(&l->queue, pod_rec, l, &id)) {
		struct lpod *lp = &l->pods[id];
		took = true;
		if (lp->job != NO_JOB) {
			gf_pod_skip(&lp->r); /* already waiting in the loop's queue */
			continue;
		}
		if (lp->r.hinted && !worth_trying(l, lp)) {
			gf_pod_skip(&lp->r); /* would fail again: no attempt, no Event, same backoff */
			l->skipped++;
			continue;
		}
		struct gf_live_decision d;
		if (refuse_early(l, lp, &d) || refuse_queue(l, lp, &d)) {
			gf_pod_failed(&lp->r, d.result == GF_LIVE_INVALID, l->now, l->changes.end);
			add_decision(l, lp, &d);
			continue;
		}
		if (!kube && lp->gkey && l->gangs && gang_take(l, lp, t))
			continue;
		if (submit_pod(l, lp, t) && !kube) {
			lp->job = l->tried[l->ntried - 1].job;
			l->in_loop++;
			gf_pod_skip(&lp->r); /* parked here while the loop holds it */
		}
	}
	if (!l->ntried && (!l->in_loop || !l->loop))
		return took;
	if (!kube && idle_skip(l, t))
		return took; /* it would decide what the last cycle did */
	struct gf_loop_decisions out = { 0 };
	budgets_feed(l);
	gf_err e = gf_loop_cycle(l->loop, t, &out);
	if (!e && out.nevicted)
		victims_take(l, &out, t);
	l->cycles++;
	if (!kube) {
		for (size_t i = 0; !e && i < out.nbinds; i++) {
			struct lpod *lp = &l->pods[job_slot(l, out.binds[i].job, out.binds[i].member)];
			if (!lp->used || lp->job != out.binds[i].job)
				continue; /* cannot happen: a job leaves the loop with its pod */
			struct gf_live_decision d;
			memset(&d, 0, sizeof(d));
			take_bound(l, lp, lp->job, &out.binds[i], &d);
			lp->job = NO_JOB;
			l->in_loop--;
			victims_hold(l, lp, &d);
			add_decision(l, lp, &d);
		}
		for (size_t k = 0; k < l->ntried; k++) {
			struct lpod *lp = &l->pods[l->tried[k].slot];
			if (lp->job != l->tried[k].job)
				continue; /* bound above */
			struct gf_live_decision d;
			memset(&d, 0, sizeof(d));
			d.result = GF_LIVE_UNSCHEDULABLE;
			if (e)
				cycle_failed(l, e, t, &d);
			else
				queue_wait(l, lp, lp->job, &d);
			add_decision(l, lp, &d);
		}
		if (!e)
			gang_wake(l, &out);
		if (!e)
			idle_note(l, t);
		return took || l->ndec > 0;
	}
	/* kube: a pod whose binding failed waits in the loop's queue at its place (gf_live_forget) */
	for (size_t i = 0; l->in_loop && i < l->npods; i++) {
		struct lpod *lp = &l->pods[i];
		if (!lp->used || lp->job == NO_JOB)
			continue;
		uint32_t job = lp->job;
		lp->job = NO_JOB;
		l->in_loop--;
		kube_settle(l, lp, job, &out, e, t);
	}
	for (size_t k = 0; k < l->ntried; k++)
		kube_settle(l, &l->pods[l->tried[k].slot], l->tried[k].job, &out, e, t);
	records_check(l); /* every job of the cycle runs, left the loop or backs off in it */
	return took || l->ndec > 0;
}

bool gf_live_schedule_next(gf_live *l, struct gf_k8s_pod *pod, struct gf_live_decision *d)
{
	for (;;) {
		while (l->dec_at < l->ndec) {
			const struct ldec *e = &l->dec[l->dec_at++];
			struct lpod *lp = &l->pods[e->slot];
			if (!lp->used || strcmp(lp->uid, e->uid))
				continue; /* deleted since the cycle */
			dec_expand(l, e, d);
			pod_copy(lp, pod);
			return true;
		}
		if (!held_release(l) && !run_cycle(l))
			return false;
	}
}

void gf_live_forget(gf_live *l, const char *uid, bool requeue)
{
	struct lpod *lp = pod_by_uid(l, uid);
	if (!lp || lp->r.st != GF_POD_ASSUMED)
		return;
	bool ours = lp->ours;
	uint32_t job = lp->run;
	if (ours && job != NO_JOB && l->loop && !(l->job_pod[job] & GANG_JOB) && gf_loop_unbind(l->loop, job) == GF_OK) {
		/* a job of one: back in the loop's queue at its place (its room free now), parked here */
		lp->run = NO_JOB;
		l->nrun--;
		lp->r.counted = false;
		l->freed = true;
		if (l->nodes[lp->r.node].cidx >= 0)
			gf_changelog_add(&l->changes, l->nodes[lp->r.node].cidx);
		lp->job = job;
		l->in_loop++;
		lp->note_s = NOTE_NEVER;
		gf_pod_forget(&l->queue, &lp->r, (uint32_t)(lp - l->pods), ours, false, l->now,
			      l->changes.end ? l->changes.end - 1 : 0);
		/* refused (not to be retried at once): the loop waits out the pod's backoff too, or
		 * every cycle would bind it again; the FIFO's wake-up at its end runs the cycle */
		if (!requeue)
			lp->refused = gf_loop_hold(l->loop, job, (int64_t)(lp->r.retry.not_before * 1000.0)) == GF_OK;
		return;
	}
	unaccount(l, lp);
	/* not requeued: back after its backoff, on the change its own release logged */
	gf_pod_forget(&l->queue, &lp->r, (uint32_t)(lp - l->pods), ours, requeue, l->now,
		      l->changes.end ? l->changes.end - 1 : 0);
}

/*
 * The notes of pods waiting in the loop's queue: the reason from the job's
 * why (a gang's own phrase), the estimated start from gf_loop_forecast (loop
 * time is the caller's clock in milliseconds).  Due when never noted, the
 * reason changed, the estimate appeared or went, or it moved by more than
 * GF_LIVE_NOTE_MOVE_S.  O(jobs + pods) for the forecast and the scan.
 */
/*
 * The forecast behind the notes: gf_loop_forecast places every waiting job
 * in order (with running jobs' ends known, about 0.8-2 s of CPU at 5,000
 * nodes and 25,000 waiting: bench_live_paths), and the notes are asked for
 * every 2 s.  So it stops at the first job whose start is past any note's
 * (NOTES_HORIZON_MS: behind a job without a known end) and after the first
 * NOTES_FORECAST_JOBS waiting jobs in queue order (each a placement over
 * every node; the answers are those of the whole forecast, the jobs after
 * them get none: their start is no earlier than the last one's, and that
 * far back in the queue an in-order estimate says little), about 50 ms
 * there; and it is made again only when what it is made from changed
 * (idle_state and the loop's clock: unchanged, it would give the same) and
 * at most every NOTES_FORECAST_S of the caller's clock; each waiting pod
 * keeps its start from the last one (fc_s, with the job it was then), and a
 * pod that joined the loop since waits for the next one for its note.
 * false: none made (out of memory, the loop's error).
 */
#define NOTES_FORECAST_S 10.0
/* Past this a start is no note (beyond any clock this process has, below): the forecast stops there. */
#define NOTES_HORIZON_MS ((int64_t)INT32_MAX * 1000 + 999)
/* Waiting jobs that get an estimate: the first ones in queue order (the rest none). */
#define NOTES_FORECAST_JOBS 1000

static bool notes_forecast(gf_live *l, size_t nj)
{
	uint64_t v[10];
	struct gf_loop_stats st;
	idle_state(l, v);
	gf_loop_stats(l->loop, &st);
	if (l->fc_gen && ((st.now == l->fc_now && !memcmp(v, l->fc_seen, sizeof(v))) ||
			  l->now - l->fc_at < NOTES_FORECAST_S))
		return true;
	int64_t *start = malloc((nj ? nj : 1) * sizeof(*start));
	if (!start || gf_loop_forecast_upto(l->loop, start, NOTES_HORIZON_MS, NOTES_FORECAST_JOBS)) {
		free(start);
		return false;
	}
	l->forecasts++;
	l->fc_gen++;
	for (size_t i = 0; i < l->npods; i++) {
		struct lpod *lp = &l->pods[i];
		if (!lp->used || lp->job == NO_JOB || lp->job >= nj)
			continue;
		int64_t s = start[lp->job] >= 0 ? start[lp->job] / 1000 : -1;
		lp->fc_s = s > INT32_MAX ? -1 : (int32_t)s; /* beyond any clock this process has: no estimate */
		lp->fc_job = lp->job;
		lp->fc_gen = l->fc_gen;
	}
	free(start);
	memcpy(l->fc_seen, v, sizeof(v));
	l->fc_now = st.now;
	l->fc_at = l->now;
	return true;
}

size_t gf_live_notes_due(gf_live *l, struct gf_live_note *out, size_t max)
{
	if (!l->loop || !l->in_loop || !max || l->o.queue_policy == GF_QP_KUBE)
		return 0;
	size_t nj = gf_loop_njobs(l->loop), n = 0;
	if (!notes_forecast(l, nj))
		return 0;
	const char *qp = gf_queue_policy_name((enum gf_queue_policy)l->o.queue_policy);
	for (size_t i = 0; i < l->npods && n < max; i++) {
		struct lpod *lp = &l->pods[i];
		if (!lp->used || lp->job == NO_JOB || lp->job >= nj)
			continue;
		if (lp->fc_gen != l->fc_gen || lp->fc_job != lp->job)
			continue; /* not in the last forecast: its note comes with the next */
		struct gf_job_info ji;
		gf_loop_job(l->loop, lp->job, &ji);
		struct gf_live_note *o = &out[n];
		if (ji.npods > 1 && (ji.why == GF_LOOP_WHY_NO_ROOM || ji.why == GF_LOOP_WHY_NONE))
			snprintf(o->reason, sizeof(o->reason), "gang of %u pods: no room for all of them together",
				 ji.npods);
		else
			snprintf(o->reason, sizeof(o->reason), "waiting in gpufleet's queue (%s): %s", qp,
				 ji.why == GF_LOOP_WHY_NONE ? "not tried yet" : gf_loop_why_name(ji.why));
		int64_t st = lp->fc_s;
		uint32_t why = (uint32_t)fnv(o->reason);
		bool due = lp->note_s == NOTE_NEVER || why != lp->note_why || (st < 0) != (lp->note_s < 0) ||
			   (st >= 0 && (st - lp->note_s > GF_LIVE_NOTE_MOVE_S || lp->note_s - st > GF_LIVE_NOTE_MOVE_S));
		if (!due)
			continue;
		lp->note_s = (int32_t)st;
		lp->note_why = why;
		const struct gf_k8s_pod *p = pod_names_of(l, lp);
		snprintf(o->uid, sizeof(o->uid), "%s", lp->uid);
		snprintf(o->ns, sizeof(o->ns), "%s", p->ns);
		snprintf(o->name, sizeof(o->name), "%s", p->name);
		o->start = st >= 0 ? (double)st : -1;
		n++;
	}
	return n;
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
		if (lp->used && lp->r.st == GF_POD_PENDING && lp->r.parked && !lp->r.invalid) {
			enqueue(l, lp);
			n++;
		}
	}
	return n;
}

size_t gf_live_requeue_due(gf_live *l, double now)
{
	l->now = now;
	if (now < l->next_scan && (l->changes.end == l->scanned || now - l->last_scan < GF_LIVE_SCAN_S))
		return 0;
	l->scanned = l->changes.end;
	l->last_scan = now;
	l->next_scan = now + GF_LIVE_SWEEP_S;
	size_t n = 0;
	for (size_t i = 0; i < l->npods; i++) {
		struct lpod *lp = &l->pods[i];
		if (!lp->used || lp->r.st != GF_POD_PENDING || !lp->r.parked || lp->r.invalid)
			continue;
		enum gf_pod_due due = gf_pod_due(&lp->r, &l->changes, now, GF_LIVE_SWEEP_S, &l->next_scan);
		if (due == GF_DUE_NO)
			continue;
		enqueue(l, lp);
		lp->r.hinted = due == GF_DUE_CHANGE;
		n++;
	}
	return n;
}

bool gf_live_report_due(gf_live *l, const char *uid, uint64_t reason, double now, double every)
{
	struct lpod *lp = pod_by_uid(l, uid);
	return !lp || gf_report_due(&lp->r.report, reason ? reason : 1, now, every);
}

bool gf_live_should_report(gf_live *l, const char *uid, const char *msg, double now, double every)
{
	return gf_live_report_due(l, uid, fnv(msg) | REASON_TEXT, now, every);
}

bool gf_live_pod_get(const gf_live *l, const char *uid, struct gf_k8s_pod *out)
{
	struct lpod *lp = pod_by_uid(l, uid);
	if (!lp)
		return false;
	pod_copy(lp, out);
	return true;
}

/* ---- extender ------------------------------------------------------------ */

gf_err gf_live_epoch(gf_live *l, uint64_t *epoch)
{
	gf_err e = ensure(l);
	*epoch = l->epoch;
	return e;
}

/* Cluster index c names a node of the cluster: resolved, and not a tombstone of one that left
 * (its name stays in the index, and the extender's epoch, until the next rebuild). */
static bool known_index(const gf_live *l, int32_t c)
{
	return c >= 0 && l->cnode[c] != NO_SLOT;
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
		if (!known_index(l, ci[i]))
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
		if (!known_index(l, ci[i])) {
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
	if (lp->r.st == GF_POD_ASSUMED || lp->r.st == GF_POD_BOUND) {
		snprintf(d->message, sizeof(d->message), "pod %.60s/%.100s is already bound or being bound",
			 p->ns, p->name);
		return GF_EXISTS;
	}
	if (!nd || !nd->present || nd->cidx < 0 || !l->cluster) {
		snprintf(d->message, sizeof(d->message), "node %.200s not known to gpufleet", node);
		return GF_NOENT;
	}
	if (nd->victims) { /* their room is not free yet: nothing is bound there before they are gone */
		snprintf(d->message, sizeof(d->message), "node %.200s: %u pods evicted by a preemption are still "
			 "terminating there", node, nd->victims);
		return GF_RANGE;
	}
	int r = effective(l, pod_of(l, lp), 0, &lp->r.eff, d->message, sizeof(d->message));
	if (r)
		return GF_INVAL;
	size_t ci = (size_t)nd->cidx;
	enum gf_why w = gf_cluster_why_not(l->cluster, &l->cat, ci, &lp->r.eff);
	if (w != GF_WHY_FITS) {
		snprintf(d->message, sizeof(d->message), "pod %.60s/%.100s does not fit on %.100s: %s", p->ns,
			 p->name, node, gf_why_text(w));
		return GF_RANGE;
	}
	/* a running job of the loop there, on the GPUs the loop chooses */
	int32_t seen = lp->seen_s;
	uint32_t job;
	lp->seen_s = (int32_t)l->now; /* its deadline counts from now (run_spec) */
	struct gf_job_spec js = run_spec(l, &lp, 1);
	js.pod.spec = lp->r.eff.spec; /* the policy's GPU hint reads the pod as asked */
	e = job_pod_room(l) ? gf_loop_place_on(l->loop, &js, (uint32_t)ci, lp->r.gpus, &job) : GF_NOMEM;
	if (e) {
		lp->seen_s = seen;
		return e == GF_EXISTS ? GF_RANGE : e;
	}
	leave_loop(l, lp); /* waiting in the loop's queue (not kube): bound here instead, one job only */
	l->job_pod[job] = (uint32_t)(lp - l->pods);
	lp->run = job;
	lp->r.counted = true;
	l->nrun++;
	lp->r.eff.spec = 0;
	gf_pod_assume(&lp->r, (int32_t)l->cnode[ci], l->now, l->changes.end);
	fill_placed(l, lp, ci, d);
	d->fit = topo_fit(&nd->n.spec, lp->r.gpus, lp->r.eff.gpu_count);
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
		s->pods_bound += lp->r.st == GF_POD_BOUND;
		s->pods_assumed += lp->r.st == GF_POD_ASSUMED;
		s->pods_queued += lp->r.st == GF_POD_PENDING && lp->r.queued;
		s->pods_parked += lp->r.st == GF_POD_PENDING && lp->r.parked;
		s->pod_bytes += sizeof(*lp) + lp->plen;
		s->pod_records++;
	}
	s->conflicts = l->conflicts;
	s->requeue_skips = l->skipped;
	s->loop_tries = l->loop_tries;
	s->loop_jobs = l->loop ? gf_loop_njobs(l->loop) : 0;
	s->running_pods = l->nrun;
	if (l->loop) {
		struct gf_loop_stats st;
		gf_loop_stats(l->loop, &st);
		s->loop_tries += st.tries;
	}
	s->rebuilds = l->epoch;
	s->node_verbs = l->node_verbs;
	s->loops_made = l->loops_made;
	s->resets = l->resets;
	s->node_slots = l->nnodes;
	s->index_slots = l->nmap.cap + l->pmap.cap + l->gidx.cap;
	s->idle_skips = l->idle_skips;
	s->forecasts = l->forecasts;
	s->cycles = l->cycles;
	if (!l->cluster)
		return;
	size_t n = gf_cluster_nnodes(l->cluster);
	s->nodes = n - l->ngone; /* tombstones of nodes that left are none of the cluster's */
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
		const struct gf_pod_rec *r = &lp->r;
		if (!lp->used || !r->counted || r->node < 0 || (r->st != GF_POD_BOUND && r->st != GF_POD_ASSUMED) ||
		    r->eff.gpu_count <= 0)
			continue; /* a CPU-only pod has no share: not unpacked */
		const struct lnode *nd = &l->nodes[r->node];
		const struct gf_k8s_pod *p = pod_names_of(l, lp); /* ns and name, until the next one */
		for (int k = 0; k < r->eff.gpu_count && k < GF_MAX_GPUS; k++) {
			int g = r->gpus[k];
			share(ud, &(struct gf_live_share){ p->ns, p->name, nd->n.name, nd->n.model,
							   g < nd->n.nuuids ? nd->n.uuids[g] : "", g,
							   r->eff.gpu_milli });
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
