/*
 * cluster/cluster.h - the cluster: nodes, their GPUs, and what is allocated.
 *
 * gf_cluster is an opaque handle owning a copy of the node descriptions and
 * the live allocation state of every node and GPU.  Policies read the state
 * through const struct gf_node pointers (a consistent snapshot: nothing
 * changes while a placement decision runs); only gf_cluster_bind() and
 * gf_cluster_unbind() change it.
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
	uint32_t npods;
	uint32_t version;		/* bumped by every bind/unbind; starts at 1 */
	uint16_t tag_pods[GF_TAG_COUNT];/* GPU pods bound here, per tag */
};

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

/* Binds, unbinds and node copies since creation. */
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
 * The feasibility filter every policy shares: CPU, memory, GPU model (via the
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
 */
gf_err gf_cluster_copy_node(gf_cluster *dst, const gf_cluster *src, size_t i);

/* Check every invariant; returns GF_OK or GF_STATE and names the first broken one in why. */
gf_err gf_cluster_check(const gf_cluster *c, char *why, size_t whylen);

#endif /* GF_CLUSTER_CLUSTER_H */
