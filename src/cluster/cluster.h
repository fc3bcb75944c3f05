/*
 * cluster/cluster.h - the cluster: nodes, their GPUs, and what is allocated.
 *
 * gf_cluster is an opaque handle owning a copy of the node descriptions and
 * the live allocation state of every node and GPU.  Policies read the state
 * through const struct gf_node pointers (a consistent snapshot: nothing
 * changes while a placement decision runs); only gf_cluster_bind(),
 * gf_cluster_unbind() and the node verbs below change it.
 *
 * Node verbs: the node set is not fixed at creation.  A node is appended
 * (gf_cluster_add_node), removed when nothing is bound to it
 * (gf_cluster_remove_node: its slot stays as a tombstone, so every index
 * stays valid and tie-breaks by index stay deterministic), given a new
 * description (gf_cluster_update_node: refused when what is bound would no
 * longer fit), cordoned (a flag bit: gf_cluster_fits() refuses it, pods
 * already bound stay) or given a notice (it leaves at time T: refused for new
 * placements from the notice on, T kept for whoever plans around it).
 *
 * Every change bumps the node's `version`, so callers can cache anything
 * derived from one node's state (scores, fragmentation) and know when it is
 * stale without comparing the state itself.
 *
 * Invariants (checked after every change in debug builds, and on demand by
 * gf_cluster_check()): 0 <= gpu_free[i] <= 1000; cpu and memory free within
 * [0, capacity]; the derived fields (gpu_free_total, nfull, max_free, tags)
 * agree with gpu_free[] and the bound pods.
 */
#ifndef GF_CLUSTER_CLUSTER_H
#define GF_CLUSTER_CLUSTER_H

#include "cluster/model.h"

/* GpuClustering's affinity tags: index 0 = GPU-sharing pod, k = k whole GPUs. */
#define GF_TAG_SHARE 0
#define GF_TAG_COUNT (GF_MAX_GPUS + 1)

/* Live state of one node.  Read-only outside cluster.c. */
struct gf_node {
	int64_t cpu_free;
	int64_t mem_free;
	int32_t gpu_free_total;		/* G_n: sum of gpu_free[] */
	uint16_t gpu_free[GF_MAX_GPUS];	/* free milli per GPU, 0..1000 */
	uint16_t max_free;		/* max of gpu_free[] (0 without GPUs) */
	uint8_t ngpus;
	uint8_t nfull;			/* GPUs with gpu_free == 1000 */
	int16_t model;			/* catalog model id; -1 = none */
	uint8_t ntags;			/* distinct tags with tag_pods > 0 */
	uint8_t flags;			/* GF_NODE_*: set, it takes no new pod */
	uint32_t npods;
	uint32_t version;		/* bumped by every bind/unbind; starts at 1 */
	uint16_t tag_pods[GF_TAG_COUNT];/* GPU pods bound here, per tag */
};

/* gf_node.flags: why a node takes no new pod (gf_cluster_fits() is false). */
#define GF_NODE_CORDONED 1u	/* cordoned (Kubernetes' unschedulable, a NoSchedule taint) */
#define GF_NODE_LEAVING 2u	/* under notice: it leaves at gf_cluster_leave_at() */
#define GF_NODE_GONE 4u		/* removed: a tombstone of zero capacity */
#define GF_NODE_FLAGS (GF_NODE_CORDONED | GF_NODE_LEAVING | GF_NODE_GONE)

typedef struct gf_cluster gf_cluster;

/*
 * Create a cluster of n nodes described by specs[] (copied).  All resources
 * start free.  Errors: GF_INVAL (n == 0, a node with ngpus out of range,
 * negative capacity), GF_NOMEM.  On error *out is untouched.
 */
gf_err gf_cluster_create(const struct gf_node_spec *specs, size_t n, gf_cluster **out);
void gf_cluster_destroy(gf_cluster *c);

/* Free everything again, as after create.  Versions keep increasing. */
void gf_cluster_reset(gf_cluster *c);

size_t gf_cluster_nnodes(const gf_cluster *c);
const struct gf_node_spec *gf_cluster_spec(const gf_cluster *c, size_t i);
const struct gf_node *gf_cluster_node(const gf_cluster *c, size_t i);

/* Cluster totals, in milli-GPU: capacity (GPUs x 1000) and allocated. */
int64_t gf_cluster_gpu_capacity(const gf_cluster *c);
int64_t gf_cluster_gpu_used(const gf_cluster *c);
int64_t gf_cluster_ngpus(const gf_cluster *c);

/* The pod's affinity tag for GpuClustering; -1 for CPU-only pods. */
int gf_pod_tag(const struct gf_pod_spec *p);

/* Binds, unbinds, node copies and node verbs since creation. */
uint64_t gf_cluster_changes(const gf_cluster *c);

/*
 * The change journal, for readers that keep something per node and want to
 * catch up on the nodes that changed.  Entries are numbered 1, 2, ...: one per
 * bind, unbind and node copy, and one per reset (a change of every node).
 * gf_cluster_journal_seq() is the number of the last entry (0 = none).
 */
#define GF_CLUSTER_JOURNAL 4096	/* entries the journal remembers */
uint64_t gf_cluster_journal_seq(const gf_cluster *c);

/*
 * The node that journal entry k changed, or SIZE_MAX when the journal cannot
 * say (k more than GF_CLUSTER_JOURNAL entries ago, out of range, or at or
 * before the last reset): the caller then rereads every node.
 */
size_t gf_cluster_changed_node(const gf_cluster *c, uint64_t k);

/*
 * Append a node described by *spec (copied), all free; *index is its index
 * (the previous node count).  Readers that keep arrays per node see a reset
 * in the journal (gf_cluster_changed_node answers SIZE_MAX) and must grow
 * them (gf_cluster_nnodes).  Errors: GF_INVAL (a spec create() refuses),
 * GF_RANGE (2^32 - 1 nodes), GF_NOMEM; the cluster is then unchanged.
 */
gf_err gf_cluster_add_node(gf_cluster *c, const struct gf_node_spec *spec, size_t *index);

/* Room for n nodes in all, so that adds up to n cannot fail for memory.  GF_NOMEM. */
gf_err gf_cluster_reserve(gf_cluster *c, size_t n);

/*
 * Remove node i: it must hold no pod.  Its slot stays, a tombstone: its
 * description zeroed but for the name, flags GF_NODE_GONE, never fitting;
 * indices of the other nodes do not move.  Removing a removed node is
 * GF_OK.  Errors: GF_RANGE (no node i), GF_STATE (pods are bound to it:
 * why names how many and what they hold); the cluster is then unchanged.
 */
gf_err gf_cluster_remove_node(gf_cluster *c, size_t i, char *why, size_t whylen);

/*
 * Give node i a new description (capacity, GPUs, model, labels carried in
 * the spec; copied) keeping what is bound to it.  Refused, never recorded
 * as over-committed, when the bound pods would not fit: less CPU or memory
 * than they hold, fewer GPUs than the highest GPU in use, or a different
 * model while GPU pods are bound.  Errors: GF_RANGE (no node i, or removed),
 * GF_INVAL (a spec create() refuses), GF_STATE (what is bound does not fit:
 * why says what); the cluster is then unchanged.
 */
gf_err gf_cluster_update_node(gf_cluster *c, size_t i, const struct gf_node_spec *spec, char *why,
			      size_t whylen);

/*
 * Set (on) or clear the GF_NODE_CORDONED bit of node i.  Errors: GF_RANGE
 * (no node i, or removed).
 */
gf_err gf_cluster_cordon(gf_cluster *c, size_t i, bool on);

/*
 * Notice: node i leaves at time t (seconds, the caller's clock): from now on
 * it takes no new pod (GF_NODE_LEAVING); what is bound stays.  A second
 * notice replaces t.  Errors: GF_RANGE (no node i, or removed).
 */
gf_err gf_cluster_notice(gf_cluster *c, size_t i, int64_t t);

/* The time node i leaves (its notice), or INT64_MAX without a notice. */
int64_t gf_cluster_leave_at(const gf_cluster *c, size_t i);

/*
 * The feasibility filter every policy shares: no flag (cordon, notice,
 * removed), CPU, memory, GPU model (via the
 * catalog) and GPU capacity.  A pod of count GPUs x milli needs `count`
 * distinct GPUs with at least milli free each.
 */
bool gf_cluster_fits(const gf_cluster *c, const struct gf_catalog *cat, size_t i,
		     const struct gf_pod_spec *p);

/*
 * Bind pod p to node i on GPUs gpus[0..p->gpu_count-1] (distinct indices;
 * ignored for CPU-only pods).  Errors: GF_RANGE if any resource would go
 * negative or an index is invalid or repeated; the state is then unchanged.
 */
gf_err gf_cluster_bind(gf_cluster *c, size_t i, const struct gf_pod_spec *p, const uint8_t *gpus);

/*
 * Undo a bind with the same arguments.  Errors: GF_RANGE if the node does not
 * hold that much (the state is then unchanged).
 */
gf_err gf_cluster_unbind(gf_cluster *c, size_t i, const struct gf_pod_spec *p, const uint8_t *gpus);

/*
 * Make node i of dst hold exactly the state of node i of src (the queue's
 * planner keeps a scratch copy of the cluster this way, node by node).  The
 * two clusters must have been created from the same node list.  dst's node
 * version becomes larger than both versions, so caches keyed by dst's
 * versions never mistake the copy for an older state.  Errors: GF_RANGE (i
 * out of range or the node specs differ); dst is then unchanged.
 * gf_cluster_copy_spec first makes dst's description of node i src's (its
 * state then as gf_cluster_copy_node leaves it, the notice time too): the
 * planner's copies follow a node verb this way.
 */
gf_err gf_cluster_copy_spec(gf_cluster *dst, const gf_cluster *src, size_t i);
gf_err gf_cluster_copy_node(gf_cluster *dst, const gf_cluster *src, size_t i);

/* Check every invariant; returns GF_OK or GF_STATE and names the first broken one in why. */
gf_err gf_cluster_check(const gf_cluster *c, char *why, size_t whylen);

#endif /* GF_CLUSTER_CLUSTER_H */
