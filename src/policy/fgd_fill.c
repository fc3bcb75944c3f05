/*
 * policy/fgd_fill.c - FGD-Fill: FGD whose measure also counts the GPUs a
 * node's CPU cannot fill, plus three filling rules where FGD is indifferent
 * (gpufleet's own policy; not in the FGD paper).
 *
 * The node score is FGD's quantised score (policy/fgd.c, spec 4.6.3) in the
 * high bits, computed on FGD's fragmentation plus the stranded GPU share
 * below; rules 1 to 3 only order what that score ties.  The quantisation
 * and the fixed node-priority order stay: FGD owes most of its packing to
 * them (spec 7.2), and finer primary keys measured worse.
 *
 * 0. Stranded GPU share.  A node out of CPU strands its free GPUs, and FGD
 *    sees it only one pod ahead (a class is blocked when its own CPU no
 *    longer fits).  With r the CPU the target's GPU pods ask per GPU share,
 *      r   = sum_{GPU classes} p_k cpu_k / sum_{GPU classes} p_k m_k c_k
 *      S_n = max(0, G_n - cpu_free_n / r)
 *    is the free GPU share the node's free CPU cannot feed at that ratio;
 *    the score is FGD's on F_n + S_n (before and after placing the pod).  A
 *    pod that eats CPU beyond its GPUs' share (a CPU-only pod, or a GPU pod
 *    asking more CPU per GPU than r) then goes where CPU is in surplus, such
 *    as nodes with few GPUs and much CPU, instead of onto a node whose GPUs
 *    will need that CPU.  No parameter: r comes from the target workload, S
 *    is in F's unit (milli-GPU) and weighs 1.
 *
  * 1. CPU-only pods: among the nodes with FGD's best score (usually 50: the
 *    pod changes no fragmentation), the node with the least free GPU share.
 *    A CPU-only pod then lands where the GPUs are already spent, and the CPU
 *    of nodes with free GPUs stays for the GPU pods that need it; FGD's
 *    priority order instead drops it on any node, and a GPU node that runs
 *    out of CPU strands its free GPUs.
 *      score = fgd * 2^32 + (2^31 - 1 - G_n)
 *
 * 2. GPU-sharing pods, the GPU inside the node: among the GPUs with FGD's
 *    best score, the one whose expected eventual waste grows least.  The
 *    expected eventual waste W(g) of a GPU with g milli free is what is left
 *    when pods drawn from the target workload keep arriving and each one
 *    that fits (per-GPU share <= what is free) is placed on it:
 *      W(g) = g                                 if no GPU class fits in g
 *      W(g) = sum_{k fits} p_k W(g - m_k) / sum_{k fits} p_k   otherwise
 *    (m_k the class's per-GPU share, p_k its probability; one table of 1001
 *    entries per target workload).  FGD looks one pod ahead; W looks until
 *    the GPU is full.  Model constraints and CPU are left out of W: FGD's
 *    score already carries them.  Ties: the lowest index.
 *
 * 3. GPU-sharing pods, the node: among the nodes with FGD's best score, the
 *    one whose chosen GPU (rule 2) is left with the least expected eventual
 *    waste W(g - m), the "complement" rule: the pod goes where what it leaves
 *    is most likely to be filled by the pods the target workload sends (an
 *    exact fit, W(0) = 0, first), instead of to the first node in FGD's
 *    priority order.  The level W(g - m), not rule 2's growth W(g - m) -
 *    W(g): the growth as the node key measured worse (docs/simulate.md).
 *    Where W ties, the least share left, g - m: W counts a remainder as
 *    filled whenever some class of the target fits in it, however rare that
 *    class is, so two remainders with equal W differ in how much of W is a
 *    hope.  On the default trace W(190) = W(30) = 30 (only the 160 class,
 *    0.9 % of the pods, fits in 190, and leaves 30): an 810-milli pod then
 *    takes a GPU with 840 free (30 left now) before a fresh one (190 left,
 *    30 only if a 160 pod comes), and a 160-milli pod an exact fit before a
 *    GPU with 320 free (W(0) = W(160) = 0).
 *      score = fgd * 2^32 + (10^6 - round(1000 W(g - m))) * 1024 + (1000 - (g - m))
 *
 * Whole-GPU pods get rule 0 only.
 *
 * Cost: FGD's (its cache and scores, shared through policy/fgd.h), plus a
 * sum over the node's GPUs per measure (S_n), and two table reads per GPU
 * tried for sharing pods (the free GPU share of rule 1 is a field of the
 * node), and one more table read per node for rule 3; the score is a pure
 * function of the node's state and the pod's shape, so the framework's score
 * cache applies.  Measured: bench_simulate prints both replay times.
 */
#include <math.h>
#include <stdlib.h>

#include "policy/fgd.h"

#define PRIMARY ((int64_t)1 << 32)	/* FGD's score, multiplied */
#define SECONDARY_TOP ((int64_t)INT32_MAX)
#define KEY_SCALE ((int64_t)1000000)	/* rule 3's key: 1000 milli-GPU x 1000 */
#define REST_SPAN ((int64_t)1024)	/* rule 3's tie-break below it: 1000 - rest */

struct fill_state {
	struct gf_fgd_cache fgd;	/* FGD's F_before per node version */
	double waste[GF_MILLI_PER_GPU + 1];	/* W(g), g = 0..1000 */
};

/* r for target t (see the design comment); 0 if t has no GPU class. */
double gf_fill_strand_ratio(const struct gf_target *t)
{
	double cpu = 0, gpu = 0;

	for (int k = 0; k < t->nclasses; k++) {
		const struct gf_frag_class *c = &t->cls[k];

		if (c->gpu_milli == 0)
			continue;
		cpu += c->p * (double)c->cpu_milli;
		gpu += c->p * c->gpu_milli * c->gpu_count;
	}
	return gpu > 0 ? cpu / gpu : 0;
}

/* W(g) for the GPU classes of target t (see the design comment). */
void gf_fill_waste_table(const struct gf_target *t, double *w)
{
	for (int g = 0; g <= GF_MILLI_PER_GPU; g++) {
		double pw = 0, e = 0;

		for (int k = 0; k < t->nclasses; k++) {
			const struct gf_frag_class *c = &t->cls[k];

			if (c->gpu_milli == 0 || c->gpu_milli > g)
				continue;
			pw += c->p;
			e += c->p * w[g - c->gpu_milli];
		}
		w[g] = pw > 0 ? e / pw : g;
	}
}

static gf_err fill_create(const struct gf_policy_env *env, void **out)
{
	struct fill_state *st = malloc(sizeof(*st));
	gf_err e;

	if (!st)
		return GF_NOMEM;
	e = gf_fgd_cache_init(&st->fgd, env);
	if (e != GF_OK) {
		free(st);
		return e;
	}
	st->fgd.strand_r = gf_fill_strand_ratio(env->target);
	gf_fill_waste_table(env->target, st->waste);
	*out = st;
	return GF_OK;
}

static void fill_destroy(void *state)
{
	struct fill_state *st = state;

	gf_fgd_cache_release(&st->fgd);
	free(st);
}

/*
 * Rule 3's key: higher for less expected eventual waste W(rest) on the GPU the
 * pod takes (rest = its free share after the pod), in thousandths of a
 * milli-GPU, then for less rest; W <= 1000 and rest <= 1000, so the key stays
 * in 0..10^6 x 1024 + 1000 < 2^31, below FGD's score bits.
 */
static int64_t remainder_key(const struct fill_state *st, int rest)
{
	int64_t level = KEY_SCALE - (int64_t)llround(st->waste[rest] * 1000.0);

	return level * REST_SPAN + (GF_MILLI_PER_GPU - rest);
}

static int64_t fill_score(void *state, const struct gf_policy_env *env, size_t node,
			  const struct gf_pod_spec *p, int *hint)
{
	struct fill_state *st = state;
	const struct gf_node *nd = gf_cluster_node(env->cluster, node);
	double before = gf_fgd_cache_before(&st->fgd, env->target, node, nd);

	if (p->gpu_count == 1 && p->gpu_milli < GF_MILLI_PER_GPU) {	/* rules 2 and 3 */
		int64_t fgd = gf_fgd_sharing_score(&st->fgd, env->target, nd, p, before, st->waste,
						   hint);

		if (*hint < 0)
			return fgd * PRIMARY;
		return fgd * PRIMARY + remainder_key(st, nd->gpu_free[*hint] - p->gpu_milli);
	}
	int64_t fgd = gf_fgd_placed_score(&st->fgd, env->target, nd, p, before);

	if (p->gpu_count == 0)	/* rule 1 */
		return fgd * PRIMARY + (SECONDARY_TOP - nd->gpu_free_total);
	return fgd * PRIMARY;
}

const struct gf_policy_ops gf_policy_fgd_fill = {
	.name = "fgd-fill",
	.label = "FGD-Fill",
	.summary = "FGD that also counts the GPUs a node's CPU cannot feed; CPU-only pods onto "
		   "nodes whose GPUs are spent, sharing pods onto the GPU and node that waste least "
		   "(gpufleet's own, not in the paper)",
	.in_paper = false,
	.ours = true,
	.needs_target = true,
	.gpu_select = GF_GPUSEL_POLICY,
	.tie_break = GF_TIE_PRIORITY,
	.cacheable = true,
	.create = fill_create,
	.destroy = fill_destroy,
	.score = fill_score,
};
