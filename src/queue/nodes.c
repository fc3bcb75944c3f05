/*
 * queue/nodes.c - the loop's node verbs: add, remove, update, cordon,
 * notice (loop.h); and a new target workload (gf_loop_set_target), which
 * remakes the two schedulers as add does.
 *
 * The loop holds four kinds of copies of its node set: the real cluster,
 * the planner's scratch copy, the empty cluster (is a shape resolvable at
 * all?) and each reservation's shadow; plus per-node arrays (the scratch
 * sync's versions, the planner's slot counts, the node masks) and two
 * placement schedulers (gf_sched) with per-node caches and node classes.
 * A verb changes the real cluster through the cluster's own verb, then
 * brings every copy along: a cluster-level verb on the empty cluster (it
 * keeps no cordons or notices: resolvable means "in the nodes that exist"),
 * gf_cluster_copy_spec into the scratch copy and the shadows (their state
 * is replanned anyway), and the schedulers follow the cluster's journal
 * (the node's version moved; its flags are in the class key).
 *
 * Only add changes the node count: every per-node array grows first (a
 * reserve, so that the adds themselves cannot fail part way), then every
 * copy gets the node, then the two schedulers are made anew over the grown
 * cluster (their caches and classes are sized by the node count; the
 * policy's state, FGD's included, is made anew with them).  Their score
 * counters are carried over.
 *
 * What a verb means for the queue (the memos in loop.c's "Park and
 * requeue"): room lost (remove, cordon, notice) keeps every "no room" memo
 * true, so nothing is retried; room gained (add, a grown or uncordoned
 * node) is a freed node, so parked shapes look there.  Reservations were
 * planned on the old node set: dropped, to be planned again by the next
 * cycle; where room was lost, the "never later" plans that used the node go
 * too (they could bind a pod where no pod may go).
 */
#include <stdlib.h>
#include <string.h>

#include "queue/loop_impl.h"

size_t gf_loop_nnodes(const gf_loop *L)
{
	return L->nnodes;
}

/* Forget the dropped plans that put a member on node i. */
static void forget_prev_on(gf_loop *L, uint32_t i)
{
	for (size_t k = 0; k < MAX_RES; k++) {
		uint32_t h = L->prev[k].holder;

		if (h == NONE)
			continue;
		for (uint32_t m = 0; m < L->jobs[h].npods; m++)
			if (L->prev[k].members[m].node == i) {
				L->prev[k].holder = NONE;
				break;
			}
	}
}

/* Bring the scratch copy, the shadows and the shadow spec list to node i of the real cluster. */
static gf_err follow(gf_loop *L, uint32_t i)
{
	if (gf_cluster_copy_spec(L->scratch, L->real, i))
		return GF_STATE;
	L->real_ver[i] = gf_cluster_node(L->real, i)->version;
	L->scratch_ver[i] = gf_cluster_node(L->scratch, i)->version;
	for (size_t r = 0; r < MAX_RES; r++)
		if (L->res[r].shadow && gf_cluster_copy_spec(L->res[r].shadow, L->real, i))
			return GF_STATE;
	L->specs[i] = *gf_cluster_spec(L->real, i);
	L->slots_ver[i] = 0;
	L->stats.gpu_capacity = gf_cluster_gpu_capacity(L->real);
	return GF_OK;
}

/* Room was lost on node i: reservations go, and the dropped plans on it. */
static gf_err room_lost(gf_loop *L, uint32_t i)
{
	gf_err err = gf_loop_drop_reservations(L, 0);

	forget_prev_on(L, i);
	L->plan_dirty = true;
	return err;
}

static gf_err grow_u32(uint32_t **a, size_t n)
{
	uint32_t *v = realloc(*a, n * sizeof(**a));

	if (!v)
		return GF_NOMEM;
	*a = v;
	v[n - 1] = 0;
	return GF_OK;
}

static gf_err grow_mask(uint64_t **a, size_t words)
{
	uint64_t *v = realloc(*a, words * sizeof(**a));

	if (!v)
		return GF_NOMEM;
	*a = v;
	v[words - 1] = 0;
	return GF_OK;
}

/* Make the two schedulers anew over the grown clusters; the old ones stay on failure. */
static gf_err remake_scheds(gf_loop *L)
{
	struct gf_policy_env e = L->env;
	gf_sched *s = NULL, *pl = NULL;
	uint64_t computed, cached;
	gf_err err;

	e.cluster = L->real;
	if ((err = gf_sched_create(L->ops, &e, &s)))
		return err;
	e.cluster = L->scratch;
	if ((err = gf_sched_create(L->ops, &e, &pl))) {
		gf_sched_destroy(s);
		return err;
	}
	if (L->prio) {
		gf_sched_set_priorities(s, L->prio);
		gf_sched_set_priorities(pl, L->prio);
	}
	gf_sched_stats(L->sched, &computed, &cached);
	L->sched_computed += computed;
	L->sched_cached += cached;
	gf_sched_destroy(L->sched);
	gf_sched_destroy(L->planner);
	L->sched = s;
	L->planner = pl;
	return GF_OK;
}

gf_err gf_loop_set_target(gf_loop *L, const struct gf_target *target)
{
	const struct gf_target *was = L->env.target;
	gf_err err;

	L->env.target = target;
	if ((err = remake_scheds(L))) {
		L->env.target = was;
		return err;
	}
	L->plan_dirty = true;
	return gf_loop_drop_reservations(L, 0);	/* planned where the old scores put them */
}

gf_err gf_loop_node_add(gf_loop *L, const struct gf_node_spec *spec, uint32_t *index)
{
	size_t n = L->nnodes + 1, words = (n + 63) / 64, at;
	struct gf_node_spec *sp;
	gf_err err;

	if (spec->ngpus < 0 || spec->ngpus > GF_MAX_GPUS || spec->cpu_milli < 0 || spec->mem_mib < 0 ||
	    spec->model < -1 || spec->model >= GF_MAX_MODELS)
		return GF_INVAL;
	if (n >= UINT32_MAX)
		return GF_RANGE;
	/* grow everything first: past this point nothing fails for memory but the schedulers */
	if ((err = gf_cluster_reserve(L->real, n)) || (err = gf_cluster_reserve(L->scratch, n)) ||
	    (err = gf_cluster_reserve(L->empty, n)))
		return err;
	for (size_t r = 0; r < MAX_RES; r++)
		if (L->res[r].shadow && (err = gf_cluster_reserve(L->res[r].shadow, n)))
			return err;
	if ((err = grow_u32(&L->real_ver, n)) || (err = grow_u32(&L->scratch_ver, n)) ||
	    (err = grow_u32(&L->node_slots, n)) || (err = grow_u32(&L->slots_ver, n)) ||
	    (L->prio && (err = grow_u32(&L->prio, n))))
		return err;
	if (words > L->mask_words &&
	    ((err = grow_mask(&L->mask, words)) || (err = grow_mask(&L->admit_mask, words))))
		return err;
	if (!(sp = realloc(L->specs, n * sizeof(*sp))))
		return GF_NOMEM;
	L->specs = sp;
	if (gf_grow(&L->freed, &L->freed_cap, L->nfreed + 1, sizeof(*L->freed), 64))
		return GF_NOMEM;

	if (gf_cluster_add_node(L->real, spec, &at) || at != L->nnodes)
		return GF_STATE;	/* the caller's cluster has nodes the loop does not know */
	(void)gf_cluster_add_node(L->scratch, spec, &at);
	(void)gf_cluster_add_node(L->empty, spec, &at);
	for (size_t r = 0; r < MAX_RES; r++)
		if (L->res[r].shadow)
			(void)gf_cluster_add_node(L->res[r].shadow, spec, &at);
	L->specs[at] = *spec;
	L->real_ver[at] = gf_cluster_node(L->real, at)->version;
	L->scratch_ver[at] = gf_cluster_node(L->scratch, at)->version;
	if (L->prio)
		L->prio[at] = (uint32_t)at;
	L->nnodes = n;
	L->mask_words = words > L->mask_words ? words : L->mask_words;
	L->stats.gpu_capacity = gf_cluster_gpu_capacity(L->real);
	if ((err = remake_scheds(L))) {
		/* the old schedulers see only the old nodes: the new one must take nothing */
		char why[8];

		(void)gf_loop_node_remove(L, (uint32_t)at, why, sizeof(why));
		return err;
	}
	*index = (uint32_t)at;
	L->freed[L->nfreed++] = (uint32_t)at;	/* room: parked shapes look there */
	if ((err = gf_loop_drop_reservations(L, 0)))
		return err;
	L->plan_dirty = true;
	return gf_loop_requeue_unresolvable(L);
}

gf_err gf_loop_node_remove(gf_loop *L, uint32_t i, char *why, size_t whylen)
{
	gf_err err;

	if (i >= L->nnodes)
		return GF_RANGE;
	if (gf_cluster_node(L->real, i)->flags & GF_NODE_GONE)
		return GF_OK;
	if ((err = gf_cluster_remove_node(L->real, i, why, whylen)))
		return err;
	(void)gf_cluster_remove_node(L->empty, i, why, whylen);
	for (size_t k = 0; k < L->nshapes; k++)
		L->shapes[k].resolvable = -1;	/* later arrivals: asked again */
	if ((err = follow(L, i)))
		return err;
	return room_lost(L, i);
}

gf_err gf_loop_node_update(gf_loop *L, uint32_t i, const struct gf_node_spec *spec, char *why, size_t whylen)
{
	gf_err err;

	if (i >= L->nnodes)
		return GF_RANGE;
	if ((err = gf_cluster_update_node(L->real, i, spec, why, whylen)))
		return err;
	if (gf_cluster_update_node(L->empty, i, spec, why, whylen) || (err = follow(L, i)))
		return err ? err : GF_STATE;
	for (size_t k = 0; k < L->nshapes; k++)
		L->shapes[k].resolvable = -1;
	if ((err = room_lost(L, i)) || (err = gf_loop_nodes_freed(L, &i, 1)))
		return err;
	return gf_loop_requeue_unresolvable(L);
}

gf_err gf_loop_node_cordon(gf_loop *L, uint32_t i, bool on)
{
	gf_err err;

	if (i >= L->nnodes)
		return GF_RANGE;
	if (!!(gf_cluster_node(L->real, i)->flags & GF_NODE_CORDONED) == on)
		return gf_cluster_cordon(L->real, i, on);	/* nothing to do, or GF_RANGE */
	if ((err = gf_cluster_cordon(L->real, i, on)) || (err = follow(L, i)))
		return err;
	if (on)
		return room_lost(L, i);
	return gf_loop_nodes_freed(L, &i, 1);
}

gf_err gf_loop_node_notice(gf_loop *L, uint32_t i, int64_t t)
{
	gf_err err;

	if (i >= L->nnodes)
		return GF_RANGE;
	if ((err = gf_cluster_notice(L->real, i, t)) || (err = follow(L, i)))
		return err;
	return room_lost(L, i);
}
