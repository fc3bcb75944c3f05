/*
 * sim/trace_cost.c - a pod trace's GPU-hours by class and tenant, idle and
 * saved-by-sharing (sim/trace_cost.h), through cost/cost.c's rules.
 *
 * Every timed GPU pod becomes one gf_cost_use on a single pseudo-GPU
 * "cluster" whose capacity is ngpus x span, so idle = capacity - workload
 * and the reconciliation are cost.c's; the use's seconds are
 * gpu_count x duration (whole-GPU billing) and its share-seconds
 * gpu_count x gpu_milli/1000 x duration.  O(n log n).
 */
#include "sim/trace_cost.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sort.h"

struct step { int64_t t; int64_t milli; };	/* GPUs held change by milli at t */

static int cmp_step(const void *a, const void *b)
{
	const struct step *x = a, *y = b;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return (x->milli > y->milli) - (x->milli < y->milli); /* ends (negative) before starts */
}

/* The most milli-GPU held at once by the timed GPU pods, and when. */
static gf_err peak(const struct gf_pod_spec *pods, size_t n, double *gpus, int64_t *at)
{
	struct step *s = malloc((n ? 2 * n : 1) * sizeof(*s));
	if (!s)
		return GF_NOMEM;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		const struct gf_pod_spec *p = &pods[i];
		if (!p->gpu_count || p->duration < 0)
			continue;
		int64_t m = (int64_t)p->gpu_count * p->gpu_milli;
		s[k++] = (struct step){ p->arrival, m };
		s[k++] = (struct step){ p->arrival + p->duration, -m };
	}
	gf_qsort(s, k, sizeof(*s), cmp_step);
	int64_t cur = 0, best = 0, when = k ? s[0].t : 0;
	for (size_t i = 0; i < k; i++) {
		cur += s[i].milli;
		if (cur > best)
			best = cur, when = s[i].t;
	}
	free(s);
	*gpus = (double)best / GF_MILLI_PER_GPU;
	*at = when;
	return GF_OK;
}

static const char *class_of(const struct gf_pod_spec *p)
{
	if (p->gpu_milli < GF_MILLI_PER_GPU)
		return "shared";
	return p->gpu_count > 1 ? "multi-GPU" : "whole";
}

static gf_err run(const struct gf_cost_use *u, size_t n, const struct gf_cost_gpu *cap,
		  const struct gf_cost_prices *pr, const char *agg, bool idle, int64_t s, int64_t e,
		  struct gf_cost_report *out)
{
	struct gf_cost_input in = { .start = s, .end = e, .uses = u, .nuses = n, .gpus = cap,
				    .ngpus = 1, .prices = pr, .include_idle = idle };
	char err[256];
	gf_err code = gf_cost_parse_aggregate(agg, &in.agg, err, sizeof(err));
	return code ? code : gf_cost_compute(&in, out, err, sizeof(err));
}

gf_err gf_trace_cost(const struct gf_pod_spec *pods, size_t n, int64_t ngpus,
		     const struct gf_cost_prices *prices, struct gf_trace_cost *out)
{
	memset(out, 0, sizeof(*out));
	out->ngpus = ngpus;
	struct gf_cost_price flat = { .model = "*", .on_demand = 1, .spot = 1 };
	struct gf_cost_prices flat_sheet = { .v = &flat, .n = 1, .currency = "GPU-h" };
	const struct gf_cost_prices *pr = prices ? prices : &flat_sheet;
	struct gf_cost_use *u = calloc(n ? n : 1, sizeof(*u));
	struct gf_cost_label *lab = calloc(n ? 2 * n : 1, sizeof(*lab));
	char (*tenant)[24] = calloc(n ? n : 1, sizeof(*tenant));
	gf_err e = GF_OK;
	size_t k = 0;
	bool tenants = false;
	if (!u || !lab || !tenant) {
		e = GF_NOMEM;
		goto out;
	}
	out->start = INT64_MAX;
	out->end = INT64_MIN;
	for (size_t i = 0; i < n; i++) {
		const struct gf_pod_spec *p = &pods[i];
		if (!p->gpu_count) {
			out->pods_cpu++;
			continue;
		}
		if (p->duration < 0) {
			out->pods_untimed++;
			continue;
		}
		if (p->arrival < out->start)
			out->start = p->arrival;
		if (p->arrival + p->duration > out->end)
			out->end = p->arrival + p->duration;
		snprintf(tenant[k], sizeof(tenant[k]), "tenant-%u", (unsigned)p->tenant);
		tenants |= p->tenant != 0;
		lab[2 * k] = (struct gf_cost_label){ "class", class_of(p) };
		lab[2 * k + 1] = (struct gf_cost_label){ "tenant", tenant[k] };
		double held = (double)p->gpu_count * (double)p->duration;
		u[k] = (struct gf_cost_use){ .ns = "trace", .pod = p->name, .node = "cluster", .uuid = "all",
					     .labels = &lab[2 * k], .nlabels = 2, .seconds = held,
					     .share_seconds = held * p->gpu_milli / GF_MILLI_PER_GPU,
					     .used_seconds = -1 };
		k++;
	}
	out->pods_counted = k;
	if (!k || ngpus < 1 || out->end <= out->start) {
		e = GF_INVAL;
		goto out;
	}
	struct gf_cost_gpu cap = { "cluster", "all", NULL, false,
				   (double)ngpus * (double)(out->end - out->start), 0 };
	if ((e = peak(pods, n, &out->peak_gpus, &out->peak_at)) ||
	    (e = run(u, k, &cap, pr, "label:class", true, out->start, out->end, &out->by_class)))
		goto out;
	if (tenants)
		e = run(u, k, &cap, pr, "label:tenant", false, out->start, out->end, &out->by_tenant);
out:
	free(u);
	free(lab);
	free(tenant);
	if (e)
		gf_trace_cost_release(out);
	return e;
}

void gf_trace_cost_release(struct gf_trace_cost *c)
{
	gf_cost_report_release(&c->by_class);
	gf_cost_report_release(&c->by_tenant);
}

static void rows(struct gf_obuf *o, const struct gf_cost_report *r)
{
	for (size_t i = 0; i < r->nrows; i++) {
		const struct gf_cost_row *x = &r->rows[i];
		if (x->idle)
			continue;
		gf_obuf_printf(o, "  %-12s %14.1f %16.1f %12.1f\n", x->name, x->gpu_hours, x->whole_gpu_hours,
			       x->cost);
	}
}

gf_err gf_trace_cost_render(const struct gf_trace_cost *c, struct gf_obuf *o)
{
	const struct gf_cost_report *r = &c->by_class;
	double days = (double)(c->end - c->start) / 86400;
	gf_obuf_printf(o, "cost of the trace: %zu GPU pods, each holding its GPUs from creation_time to "
			  "deletion_time, on %lld GPUs over %.1f days",
		       c->pods_counted, (long long)c->ngpus, days);
	if (c->pods_untimed)
		gf_obuf_printf(o, " (%zu GPU pods without times left out)", c->pods_untimed);
	gf_obuf_printf(o, "\n\n  %-12s %14s %16s %12s\n", "class", "GPU-hours", "whole-GPU-hours", "cost");
	rows(o, r);
	if (c->by_tenant.nrows)
		rows(o, &c->by_tenant);
	double whole_h = 0;
	for (size_t i = 0; i < r->nrows; i++)
		whole_h += r->rows[i].idle ? 0 : r->rows[i].whole_gpu_hours;
	gf_obuf_printf(o, "  %-12s %14.1f %16.1f %12.1f\n", "total", r->workload_hours, whole_h,
		       r->workload_cost);
	gf_obuf_printf(o, "  %-12s %14.1f %16s %12.1f   (capacity %.1f GPU-hours, %.2f %% allocated)\n",
		       "idle", r->idle_hours, "", r->idle_cost, r->capacity_hours,
		       r->capacity_hours > 0 ? 100 * r->workload_hours / r->capacity_hours : 0);
	double span_h = (double)(c->end - c->start) / 3600;
	gf_obuf_printf(o, "  GPUs held at once: mean %.1f, peak %.1f (day %.1f of the span) of %lld\n",
		       span_h > 0 ? r->workload_hours / span_h : 0, c->peak_gpus,
		       (double)(c->peak_at - c->start) / 86400, (long long)c->ngpus);
	if (c->ngpus > 0 && c->peak_gpus < 0.5 * (double)c->ngpus)
		gf_obuf_printf(o, "  (the trace's pods never held half the cluster at once: it lists a sample of the "
				  "cluster's pods, not all of\n   them, so \"idle\" is the capacity its listed pods "
				  "left unused, not the cluster's idle time)\n");
	double whole = r->whole_cost, share = r->workload_cost;
	gf_obuf_printf(o, "\nsaved by sharing: %.1f (%.1f %% of whole-GPU billing %.1f; whole-GPU billing "
			  "overstates share billing %.1f by %.1f %%)\n",
		       r->saved_by_sharing, whole > 0 ? 100 * r->saved_by_sharing / whole : 0, whole, share,
		       share > 0 ? 100 * r->saved_by_sharing / share : 0);
	gf_obuf_printf(o, "reconciliation: workload + idle - capacity = %.3f GPU-hours (%s)\n",
		       r->workload_hours + r->idle_hours - r->capacity_hours,
		       r->reconciled ? "within 0.1 %" : "NOT within 0.1 %");
	return gf_obuf_error(o);
}
