/*
 * autoscale/hpa.c - the HPA replica rule (see hpa.h and the spec).
 *
 * Proposal (External Value):  r = usage / target; if |r - 1| <= tol keep
 * current, else ceil(r x ready).
 * Stabilisation: upRec = min(desired, recs in the up window), downRec =
 * max(desired, recs in the down window); result = current raised to upRec or
 * lowered to downRec.
 * Rate limits, per policy over its period P: periodStart = current - added
 * in P + removed in P; up: Pods -> start + v, Percent -> ceil(start x (1 +
 * v/100)); down: Pods -> start - v, Percent -> trunc(start x (1 - v/100));
 * Max picks the biggest allowed change, Min the smallest, Disabled none.
 * Everything O(history); no allocation.
 */
#include "autoscale/hpa.h"

#include <math.h>

struct gf_hpa_behavior gf_hpa_behavior_default(int32_t down_window_s)
{
	struct gf_hpa_behavior b = {
		.up = { .window_s = 0, .select = GF_HPA_SELECT_MAX, .npolicies = 2,
			.policies = { { GF_HPA_PODS, 4, 15 }, { GF_HPA_PERCENT, 100, 15 } } },
		.down = { .window_s = down_window_s, .select = GF_HPA_SELECT_MAX, .npolicies = 1,
			  .policies = { { GF_HPA_PERCENT, 100, 15 } } },
	};
	return b;
}

static int32_t ceil_cap(double x)
{
	double c = ceil(x);
	if (!(c < 2147483647.0))
		return INT32_MAX;
	return c < 0 ? 0 : (int32_t)c;
}

int32_t gf_hpa_external_value(double usage_m, double target_m, int32_t current, int32_t ready,
			      double tolerance)
{
	if (target_m <= 0)
		return current;
	double ratio = usage_m / target_m;
	if (current == 0)
		return ceil_cap(ratio);
	if (ratio >= 1 - tolerance && ratio <= 1 + tolerance)
		return current;
	return ceil_cap(ratio * ready);
}

int32_t gf_hpa_external_average(double usage_m, double target_avg_m, int32_t replicas,
				double tolerance)
{
	if (target_avg_m <= 0 || replicas <= 0)
		return ceil_cap(target_avg_m > 0 ? usage_m / target_avg_m : 0);
	double ratio = usage_m / (target_avg_m * replicas);
	if (ratio >= 1 - tolerance && ratio <= 1 + tolerance)
		return replicas;
	return ceil_cap(usage_m / target_avg_m);
}

static int32_t longest(const struct gf_hpa_behavior *b)
{
	int32_t m = b->up.window_s > b->down.window_s ? b->up.window_s : b->down.window_s;
	for (unsigned i = 0; i < b->up.npolicies; i++)
		if (b->up.policies[i].period_s > m)
			m = b->up.policies[i].period_s;
	for (unsigned i = 0; i < b->down.npolicies; i++)
		if (b->down.policies[i].period_s > m)
			m = b->down.policies[i].period_s;
	return m;
}

/* Replicas added (sign +1) or removed (-1) by the events within period_s of now. */
static int32_t changed(const struct gf_hpa_state *st, int64_t now, int32_t period_s, int sign)
{
	int32_t n = 0;
	for (unsigned i = 0; i < st->nevents; i++)
		if (st->events[i].t > now - period_s && st->events[i].delta * sign > 0)
			n += st->events[i].delta * sign;
	return n;
}

static int32_t up_limit(const struct gf_hpa_state *st, const struct gf_hpa_rules *r, int32_t current,
			int64_t now)
{
	if (r->select == GF_HPA_SELECT_DISABLED || !r->npolicies)
		return current;
	int32_t best = r->select == GF_HPA_SELECT_MAX ? INT32_MIN : INT32_MAX;
	for (unsigned i = 0; i < r->npolicies; i++) {
		const struct gf_hpa_policy *p = &r->policies[i];
		int32_t start = current - changed(st, now, p->period_s, +1) +
				changed(st, now, p->period_s, -1);
		int32_t lim = p->type == GF_HPA_PODS ? start + p->value
						     : ceil_cap(start * (1.0 + p->value / 100.0));
		if (r->select == GF_HPA_SELECT_MAX ? lim > best : lim < best)
			best = lim;
	}
	return best < current ? current : best;
}

static int32_t down_limit(const struct gf_hpa_state *st, const struct gf_hpa_rules *r,
			  int32_t current, int64_t now)
{
	if (r->select == GF_HPA_SELECT_DISABLED || !r->npolicies)
		return current;
	int32_t best = r->select == GF_HPA_SELECT_MAX ? INT32_MAX : INT32_MIN;
	for (unsigned i = 0; i < r->npolicies; i++) {
		const struct gf_hpa_policy *p = &r->policies[i];
		int32_t start = current - changed(st, now, p->period_s, +1) +
				changed(st, now, p->period_s, -1);
		int32_t lim = p->type == GF_HPA_PODS ? start - p->value
						     : (int32_t)(start * (1.0 - p->value / 100.0));
		/* Max: the biggest change, i.e. the smallest result. */
		if (r->select == GF_HPA_SELECT_MAX ? lim < best : lim > best)
			best = lim;
	}
	return best > current ? current : best;
}

int32_t gf_hpa_normalize(struct gf_hpa_state *st, const struct gf_hpa_behavior *b, int32_t min,
			 int32_t max, int32_t current, int32_t desired, int64_t now)
{
	/* 1. stabilisation over the stored recommendations */
	int32_t up_rec = desired, down_rec = desired;
	for (unsigned i = 0; i < st->nrecs; i++) {
		if (st->recs[i].t > now - b->up.window_s && st->recs[i].replicas < up_rec)
			up_rec = st->recs[i].replicas;
		if (st->recs[i].t > now - b->down.window_s && st->recs[i].replicas > down_rec)
			down_rec = st->recs[i].replicas;
	}
	int32_t stabilized = current;
	if (stabilized < up_rec)
		stabilized = up_rec;
	if (stabilized > down_rec)
		stabilized = down_rec;

	/* forget what no window or period can see any more, then record desired */
	int32_t horizon = longest(b);
	unsigned k = 0;
	for (unsigned i = 0; i < st->nrecs; i++)
		if (st->recs[i].t > now - horizon)
			st->recs[k++] = st->recs[i];
	st->nrecs = k;
	if (st->nrecs == GF_HPA_MAX_HISTORY) { /* drop the oldest */
		for (unsigned i = 1; i < st->nrecs; i++)
			st->recs[i - 1] = st->recs[i];
		st->nrecs--;
	}
	st->recs[st->nrecs].t = now;
	st->recs[st->nrecs].replicas = desired;
	st->nrecs++;
	k = 0;
	for (unsigned i = 0; i < st->nevents; i++)
		if (st->events[i].t > now - horizon)
			st->events[k++] = st->events[i];
	st->nevents = k;

	/* 2. rate limits and bounds */
	int32_t result = stabilized;
	if (stabilized > current) {
		int32_t lim = up_limit(st, &b->up, current, now);
		int32_t allowed_max = lim < max ? lim : max;
		result = stabilized < allowed_max ? stabilized : allowed_max;
	} else if (stabilized < current) {
		int32_t lim = down_limit(st, &b->down, current, now);
		int32_t allowed_min = lim > min ? lim : min;
		result = stabilized > allowed_min ? stabilized : allowed_min;
	}
	if (result < min)
		result = min;
	if (result > max)
		result = max;

	/* 3. the controller records its own scale events */
	if (result != current) {
		if (st->nevents == GF_HPA_MAX_HISTORY) {
			for (unsigned i = 1; i < st->nevents; i++)
				st->events[i - 1] = st->events[i];
			st->nevents--;
		}
		st->events[st->nevents].t = now;
		st->events[st->nevents].delta = result - current;
		st->nevents++;
	}
	return result;
}
