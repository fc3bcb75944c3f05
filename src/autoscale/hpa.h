/*
 * autoscale/hpa.h - the HorizontalPodAutoscaler's replica rule as pure
 * functions (../shared/specs/k8s-hpa-algorithm.md; kube-controller-manager's
 * podautoscaler in the 1.2x/1.3x line), so the simulator and tests can
 * predict what a stock HPA does with the external metrics gpufleet serves.
 *
 * No I/O, no clock: time is the caller's `now` (seconds), and the
 * controller's per-HPA memory (recommendations, its own scale events) is a
 * value the caller keeps (struct gf_hpa_state: embeddable, no allocation,
 * copy it to run what-ifs).
 *
 * Units: metric values in milli-units as the HPA uses them (a quantity of
 * "70" is 70000).
 */
#ifndef GF_AUTOSCALE_HPA_H
#define GF_AUTOSCALE_HPA_H

#include <stdint.h>

enum gf_hpa_policy_type { GF_HPA_PODS, GF_HPA_PERCENT };
enum gf_hpa_select { GF_HPA_SELECT_MAX, GF_HPA_SELECT_MIN, GF_HPA_SELECT_DISABLED };

#define GF_HPA_MAX_POLICIES 8

struct gf_hpa_policy {
	enum gf_hpa_policy_type type;
	int32_t value;    /* pods, or percent */
	int32_t period_s; /* 1..1800 */
};

/* One direction of spec.behavior (scaleUp or scaleDown). */
struct gf_hpa_rules {
	int32_t window_s; /* stabilizationWindowSeconds */
	enum gf_hpa_select select;
	unsigned npolicies;
	struct gf_hpa_policy policies[GF_HPA_MAX_POLICIES];
};

struct gf_hpa_behavior {
	struct gf_hpa_rules up, down;
};

/* The API server's defaults once spec.behavior is present:
 * up: window 0, Max of {Pods 4 / 15 s, Percent 100 / 15 s};
 * down: window down_window_s (the controller flag, 300 by default), Percent 100 / 15 s. */
struct gf_hpa_behavior gf_hpa_behavior_default(int32_t down_window_s);

/* §3.1 External metric, target type Value: usage and target in milli-units,
 * current = scale.spec.replicas, ready = Running and Ready pods.  Within the
 * tolerance band (1 - tol .. 1 + tol of the ratio) the answer is current;
 * else ceil(ratio x ready), capped at INT32_MAX. */
int32_t gf_hpa_external_value(double usage_m, double target_m, int32_t current, int32_t ready,
			      double tolerance);

/* §3.2 target type AverageValue: replicas = scale.status.replicas; readiness
 * is not used.  ceil(usage / target_avg) outside the tolerance, else replicas. */
int32_t gf_hpa_external_average(double usage_m, double target_avg_m, int32_t replicas,
				double tolerance);

#define GF_HPA_MAX_HISTORY 128

/* The controller's memory of one HPA (lost on a controller restart). */
struct gf_hpa_state {
	unsigned nrecs, nevents;
	struct {
		int64_t t;
		int32_t replicas;
	} recs[GF_HPA_MAX_HISTORY];       /* un-normalised proposals */
	struct {
		int64_t t;
		int32_t delta;            /* + added, - removed */
	} events[GF_HPA_MAX_HISTORY];     /* scale changes the controller made */
};

/* §6.2: stabilise desired over the recommendation history, limit the change
 * by the behavior's policies and the scale events of their periods, clamp to
 * [min, max]; record desired and, when the result differs from current, the
 * scale event.  Returns the replica count to write.  Entries older than
 * every window and period are forgotten (history is bounded). */
int32_t gf_hpa_normalize(struct gf_hpa_state *st, const struct gf_hpa_behavior *b, int32_t min,
			 int32_t max, int32_t current, int32_t desired, int64_t now);

#endif /* GF_AUTOSCALE_HPA_H */
