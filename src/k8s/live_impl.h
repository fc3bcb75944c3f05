/*
 * k8s/live_impl.h - internals shared by k8s/live.c (state, feeding,
 * deciding, running jobs, preemption, the extender, observing),
 * k8s/live_gangs.c (the gang key -> pods index, the PodGroups' read-outs)
 * and k8s/live_quota.c (Queue objects -> the loop's quotas).  Not a public
 * header: k8s/live.h is the API.
 *
 * Functions called across these files are gf_live_*; the small helpers
 * each of them calls (the string -> index map, pod_of, enqueue) are static
 * inline here, under the names live.c has always called them by.
 */
#ifndef GF_K8S_LIVE_IMPL_H
#define GF_K8S_LIVE_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/admit.h"
#include "cluster/cluster.h"
#include "core/rng.h"
#include "core/zpack.h"
#include "k8s/gangs.h"
#include "k8s/live.h"
#include "k8s/queues.h"
#include "policy/sched.h"
#include "queue/loop.h"
#include "queue/podstate.h"
#include "queue/requeue.h"
#include "queue/queuedef.h"

/* ---- string -> index map ------------------------------------------------ */

#define TOMB ((uint32_t)-2)
#define EMPTY ((uint32_t)-1)
#define NO_JOB UINT32_MAX
#define NO_MSG UINT32_MAX	/* struct ldec: no message */
#define NO_SLOT UINT32_MAX	/* no pod slot (the gang index's lists) */

struct smap {
	uint32_t *slot;	/* index into the owner's array, EMPTY or TOMB */
	size_t cap, used; /* used counts live + tombstones */
};

static inline uint64_t fnv(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

typedef const char *(*key_fn)(const void *arr, uint32_t i);

static inline gf_err smap_grow(struct smap *m, const void *arr, key_fn key)
{
	/* sized for the live entries (4 x: the next rehash is cap/4 inserts away), tombstones dropped */
	size_t live = 0, ncap = 64;
	for (size_t i = 0; i < m->cap; i++)
		live += m->slot[i] != EMPTY && m->slot[i] != TOMB;
	while (ncap < 4 * (live + 1))
		ncap *= 2;
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
static inline size_t smap_find(const struct smap *m, const void *arr, key_fn key, const char *k, bool *found)
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

/* Map k (the key of arr[idx]) to idx, replacing what k mapped to.  GF_NOMEM: nothing changed. */
static inline gf_err smap_put(struct smap *m, const void *arr, key_fn key, const char *k, uint32_t idx)
{
	bool f;
	if (m->used * 2 >= m->cap && smap_grow(m, arr, key))
		return GF_NOMEM;
	size_t j = smap_find(m, arr, key, k, &f);
	if (m->slot[j] == EMPTY)
		m->used++;
	m->slot[j] = idx;
	return GF_OK;
}

/* ---- state --------------------------------------------------------------- */

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

struct lnode {
	struct gf_k8s_node n;
	int model;		/* catalog id or -1 */
	bool present;
	bool spare;		/* a free slot (node_slots_reclaim): in no map, not present */
	int32_t cidx;		/* index in the engine cluster; -1 = not in it */
	uint32_t gen;
	uint32_t victims;	/* its pods evicted by preemption, not gone yet ("preemption") */
};

/*
 * A pod: the engine's record (queue/podstate.h; its node is a node slot) and
 * the Kubernetes object, zero-run packed (core/zpack.h: a decoded Pod is
 * 6.7 KB of mostly empty fixed buffers) and unpacked when needed (pod_of()).
 */
struct lpod {
	bool used;
	bool ours;		/* schedulerName is ours and not being deleted */
	bool rules;		/* the pod has a node selector, tolerations or affinity */
	bool evicted;		/* preemption chose it: being deleted, not accounted ("preemption") */
	bool held;		/* a preemptor waiting for its node's evicted pods to go */
	bool refused;		/* its binding was refused: it backs off in the loop's queue (gf_live_forget) */
	bool placed;		/* a new loop is made: it held room in the old one, at r.gpus */
	uint32_t gen;
	uint32_t plen;		/* packed bytes */
	uint32_t job;		/* its job in the loop's queue (not kube); NO_JOB: none */
	uint32_t run;		/* bound (ASSUMED or BOUND, r.counted): its running job in the loop; NO_JOB: none */
	int32_t seen_s;		/* the caller's second it was first seen placed (its run's start); -1 */
	uint64_t gkey;		/* its gang (api, namespace, name) hashed; 0: none */
	uint32_t gnext, gprev;	/* gkey != 0: its gang's other pods (struct gindex); NO_SLOT: none */
	int32_t note_s;		/* estimated start last noted (caller's seconds); -1 none; NOTE_NEVER */
	uint32_t note_why;	/* the waiting reason last noted, hashed */
	int32_t fc_s;		/* its start in forecast fc_gen (as note_s), when it was job fc_job */
	uint32_t fc_job, fc_gen;
	uint8_t *packed;
	struct gf_pod_rec r;
	char uid[GF_K8S_UID_MAX];
};

struct gf_live {
	struct gf_live_opts o;
	char name[GF_K8S_NAME_MAX];
	struct gf_catalog cat;
	struct gf_rng rng;

	struct lnode *nodes;
	size_t nnodes, capnodes;
	struct smap nmap;
	uint32_t *nspare;	/* free node slots (node_slots_reclaim), reused first */
	size_t nnspare;

	struct lpod *pods;
	size_t npods, cappods;
	uint32_t *freelist;
	size_t nfree;
	struct smap pmap;

	struct gf_podq queue;	/* pending pods (ids: pod slots) */

	uint32_t gen[2];	/* sync generations: nodes, pods */

	/* The engine. */
	bool dirty;		/* node set changed: rebuild before deciding */
	bool sched_dirty;	/* target changed: new scheduler */
	gf_cluster *cluster;
	uint32_t *cnode;	/* cluster index -> node slot */
	struct gf_target target;
	bool have_target;
	size_t target_pods;	/* pods the target was built from */
	size_t new_pods;	/* pods seen since */
	struct gf_policy_env env;
	gf_sched *sched;
	int64_t model_mem[GF_MAX_MODELS];
	struct gf_node_rules *rules; /* per cluster node: who it admits (views into nodes[]) */
	uint64_t *allowed;	/* scratch: one decision's allowed-node mask */
	uint8_t *ext_mark;	/* scratch for the extender, one per cluster node: asked about */
	uint8_t *ext_code;	/* its enum gf_why */
	int64_t *ext_score;	/* its score */
	uint32_t *ext_list;	/* the nodes to score, ascending */
	struct nindex names;	/* node name -> cluster index, for the extender */
	uint64_t epoch;		/* cluster rebuilds: cluster indices are valid within one */
	uint64_t node_verbs;	/* node changes applied in place (gf_loop_node_*) */
	size_t ngone;		/* cluster indices of nodes that left in place (tombstones) */
	uint64_t resets;	/* make_sched() calls */
	bool freed;
	uint64_t conflicts;
	struct gf_k8s_pod scratch; /* one pod unpacked (pod_of()) */
	/* The engine's loop (queue/loop.h) on the cluster: one scheduling cycle decides. */
	gf_loop *loop;
	uint32_t *job_pod;	/* loop job -> pod slot */
	size_t job_cap;
	/*
	 * A cycle's decisions, handed out one by one, compact: a struct
	 * gf_live_decision is 1.6 KB (its message, 16 UUIDs) and a cycle under
	 * a queue policy other than kube decides every pending pod at once
	 * (issue 12: 150,000 of them held 230 MiB).  A decision keeps its node
	 * slot, GPUs and sizes; the node's name and the GPUs' UUIDs are read
	 * when it is handed out (dec_expand), its message lies in the cycle's
	 * message arena (a text the same as the one before it shares it).
	 */
	struct ldec {
		uint32_t slot;
		uint32_t msg;		/* offset in dmsg; NO_MSG: "" */
		int32_t node;		/* PLACED: node slot */
		uint8_t result, fit, ngpus;
		uint8_t gpus[GF_MAX_GPUS];
		int32_t milli;
		int64_t mem_mib;
		uint64_t reason;
		char uid[GF_K8S_UID_MAX];
	} *dec;
	size_t ndec, dec_cap, dec_at;
	char *dmsg;		/* the cycle's messages, NUL-terminated */
	size_t ndmsg, dmsg_cap, dmsg_last;
	struct ltry { uint32_t slot, job; } *tried;	/* a cycle's submitted pods, in queue order */
	size_t ntried, tried_cap;
	size_t in_loop;		/* pods waiting in the loop's queue (not kube) */
	/* Gangs (not kube): the PodGroup store (the caller's) and the members of
	 * the gang jobs in the loop: job_pod[job] = GANG_JOB | index of member 0 here. */
	const gf_gangs *gangs;
	uint32_t *gmem;
	size_t ngmem, gmem_cap;
	struct gindex {		/* gang key -> its pods (live_gangs.c) */
		struct gslot { uint64_t key; uint32_t head, tail; } *slot; /* key 0: empty */
		size_t cap, used;
		bool lost;	/* out of memory once: lookups scan every pod until rebuilt */
	} gidx;
	/* Idle cycles (not kube; idle_skip): what the loop decided from at the last cycle, and when. */
	uint64_t idle_seen[10];
	int64_t idle_at;
	uint64_t idle_skips, cycles;
	/* The notes' forecast (notes_forecast): its number, the loop's state and the time it was made at. */
	uint32_t fc_gen;
	uint64_t fc_seen[10], forecasts;
	int64_t fc_now;
	double fc_at;
	/* The admission mask of pods without rules (plain_mask) and the state it was made in. */
	uint64_t *mask0;
	size_t mask0_cap;
	uint64_t mask0_key[3];
	bool mask0_ok, mask0_all;
	/* Requeueing (queue/requeue.h). */
	double now;		/* the caller's clock at the last gf_live_requeue_due() */
	struct gf_changelog changes; /* nodes changed (cluster indices) */
	uint64_t scanned;	/* changes.end at the last scan */
	double next_scan;	/* a backoff or the sweep ends then */
	double last_scan;	/* changes are looked at most every GF_LIVE_SCAN_S */
	uint64_t skipped;	/* attempts skipped: no logged change lets the pod fit */
	/* Quotas (opts.queues; gf_live_queue_set): the Queue objects, their
	 * errors ("" valid), the namespaces' queue labels, the loop's quotas. */
	struct gf_queue_def *qdef;
	char (*qerr)[256];
	size_t nq, capq;
	struct lnsq { char ns[GF_K8S_NAME_MAX]; char q[GF_K8S_LABEL_VALUE_MAX]; } *nsq;
	size_t nnsq, capnsq;
	struct smap qmap, nsmap;	/* Queue name -> qdef index; namespace -> nsq index */
	struct gf_queue_quota *quota;	/* nq + 1: the last one, unlimited, for pods of no Queue */
	bool queues_dirty;		/* a Queue, namespace label or budget's selector changed: jobs relabelled in place */
	bool loop_dirty;		/* job records to compact (compact_loop) */
	uint64_t loops_made;		/* loops made (each re-adopts every pod): rebuilds */
	uint64_t compactions;		/* job records compacted in place */
	uint64_t loop_tries;	/* placements tried by loops since destroyed (gf_live_stats) */
	size_t nrun;		/* pods in the loop's running jobs ("running jobs") */
	struct gf_live_eviction *evq;	/* evictions not handed out yet ("preemption") */
	size_t nevq, evq_cap;
	uint32_t *held;		/* pod slots of held preemptors */
	size_t nheld, held_cap;
	/* PodDisruptionBudgets (gf_live_pdb_set; "disruption budgets") */
	struct gf_k8s_pdb *pdb;
	size_t npdb, pdb_cap;
	bool pdb_dirty;		/* counts changed (or a new loop): hand them to the loop */
};

/* ---- helpers ----------------------------------------------------------- */

/* lp's Kubernetes object, unpacked into l->scratch: valid until the next pod_of(). */
static inline const struct gf_k8s_pod *pod_of(gf_live *l, const struct lpod *lp)
{
	if (!lp->packed || gf_zunpack(lp->packed, lp->plen, &l->scratch, sizeof(l->scratch)))
		memset(&l->scratch, 0, sizeof(l->scratch)); /* never packed */
	return &l->scratch;
}

/* PENDING and queued (podstate.h); out of memory: parked, the next sweep retries it. */
static inline void enqueue(gf_live *l, struct lpod *lp)
{
	(void)gf_pod_want(&l->queue, &lp->r, (uint32_t)(lp - l->pods));
}

/* ---- live.c ------------------------------------------------------------ */

/* The engine in step with the objects: rebuilt, or a new scheduler or loop, when due. */
gf_err gf_live_ensure(gf_live *l);

/* ---- live_gangs.c ----------------------------------------------------- */

/* p's gang (gangs.h: spec.schedulingGroup, else the coscheduling label); 0: none. */
uint64_t gf_live_gang_key(const struct gf_k8s_pod *p);
/* lp's gang key becomes key (0: none), in the index too: the one place a pod's gkey changes. */
void gf_live_gang_index_set(gf_live *l, struct lpod *lp, uint64_t key);
/* The first pod slot of gang key `key` (NO_SLOT: none); the next with gf_live_gang_next(). */
uint32_t gf_live_gang_first(const gf_live *l, uint64_t key);
uint32_t gf_live_gang_next(const gf_live *l, uint32_t i, uint64_t key);
/* Is o a pod of gang ref (its API, namespace and name)? */
bool gf_live_same_gang(gf_live *l, const struct lpod *o, const struct gf_gang_ref *ref);

/* ---- live_quota.c ----------------------------------------------------- */

/* Queue name's index in l->qdef, or -1. */
int gf_live_queue_find(const gf_live *l, const char *name);
/* Namespace ns's queue label, or NULL: none known. */
const char *gf_live_ns_queue(const gf_live *l, const char *ns);
/* Why Queue i cannot take pods now ("" it can). */
void gf_live_queue_why(const gf_live *l, size_t i, char *why, size_t n);
/* lc's quotas for a new loop (none without opts.queues or in kube mode); clears queues_dirty. */
gf_err gf_live_quota_config(gf_live *l, struct gf_loop_config *lc);

#endif
