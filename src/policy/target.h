/*
 * policy/target.h - which pods FGD's target workload is built from: one rule
 * for the simulator, the replay and the live scheduler.
 *
 * FGD (policy/fgd.c) scores a placement by the fragmentation it adds with
 * respect to a target workload T, the popularity of pod shapes
 * (cluster/frag.h).  T is built from every pod the run has seen - placed,
 * pending, CPU-only - each counted once, by the shape it is placed with or
 * would be placed with (a GPU-memory request resolved to a share by
 * cluster/request.h; the simulator's traces give shares directly).  So the
 * simulator, which sees the whole trace, and the live scheduler, which sees
 * the pods so far, build T by the same rule from what each has seen:
 *
 *   - a GPU pod whose share is not known (gpu_milli 0) is left out;
 *   - with no pod left, T is one pod of one whole GPU (no CPU, any model):
 *     FGD then keeps whole GPUs free, as it would for a workload of them;
 *   - the kept shapes are the most popular ones covering threshold_pct % of
 *     the pods (GF_TARGET_PCT unless the user says otherwise).
 */
#ifndef GF_POLICY_TARGET_H
#define GF_POLICY_TARGET_H

#include <stddef.h>

#include "cluster/frag.h"

/* The share of the pods the kept shapes cover, in %: FGD's paper and the simulator's. */
#define GF_TARGET_PCT 95

/*
 * Build *out from the shapes of the pods seen, pods[0..n) (any order; n may
 * be 0, pods then unread), by the rule above.  counted (may be NULL): the
 * pods T was built from (0 when it is the whole-GPU default).  The caller
 * releases *out with gf_target_release().  Errors: GF_INVAL (threshold
 * outside (0, 100]), GF_NOMEM; *out is then empty.
 */
gf_err gf_target_from_pods(const struct gf_pod_spec *pods, size_t n, const struct gf_catalog *cat,
			   int threshold_pct, struct gf_target *out, size_t *counted);

#endif /* GF_POLICY_TARGET_H */
