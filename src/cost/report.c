/*
 * cost/report.c - a cost report as a text table and as one allocation set
 * of OpenCost's /allocation answer (cost/cost.h).
 *
 * JSON numbers: finite values with up to 6 decimals ("%.6f", then trailing
 * zeros dropped), so equal inputs give equal bytes.  Strings are escaped as
 * JSON requires (quote, backslash, control characters as \u00XX).
 */
#include "cost/cost.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static void json_str(struct gf_obuf *o, const char *s)
{
	gf_obuf_puts(o, "\"");
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		if (*p == '"' || *p == '\\')
			gf_obuf_printf(o, "\\%c", *p);
		else if (*p < 0x20)
			gf_obuf_printf(o, "\\u%04x", *p);
		else
			gf_obuf_append(o, p, 1);
	}
	gf_obuf_puts(o, "\"");
}

static void json_num(struct gf_obuf *o, const char *name, double v, bool comma)
{
	char buf[64];
	if (!isfinite(v))
		v = 0;
	snprintf(buf, sizeof(buf), "%.6f", v);
	char *dot = strchr(buf, '.');
	if (dot) {
		char *e = buf + strlen(buf) - 1;
		while (e > dot && *e == '0')
			*e-- = '\0';
		if (e == dot)
			*e = '\0';
	}
	if (!strcmp(buf, "-0"))
		snprintf(buf, sizeof(buf), "0");
	gf_obuf_printf(o, "\"%s\":%s%s", name, buf, comma ? "," : "");
}

static void props(struct gf_obuf *o, const struct gf_cost_row *r)
{
	const char *names[] = { "namespace", "pod", "node", "gpuModel" };
	const char *vals[] = { r->ns, r->pod, r->node, r->model };
	bool first = true;
	gf_obuf_puts(o, "\"properties\":{");
	if (!r->idle) {
		for (int i = 0; i < 4; i++) {
			if (!vals[i] || !*vals[i])
				continue;
			gf_obuf_printf(o, "%s\"%s\":", first ? "" : ",", names[i]);
			json_str(o, vals[i]);
			first = false;
		}
	}
	gf_obuf_puts(o, "},");
}

gf_err gf_cost_render_set(const struct gf_cost_report *r, struct gf_obuf *o)
{
	char s[21], e[21];
	gf_rfc3339(r->start, s);
	gf_rfc3339(r->end, e);
	double hours = (double)(r->end - r->start) / 3600;
	gf_obuf_puts(o, "{");
	for (size_t i = 0; i < r->nrows; i++) {
		const struct gf_cost_row *w = &r->rows[i];
		if (i)
			gf_obuf_puts(o, ",");
		json_str(o, w->name);
		gf_obuf_puts(o, ":{\"name\":");
		json_str(o, w->name);
		gf_obuf_puts(o, ",");
		props(o, w);
		gf_obuf_printf(o, "\"window\":{\"start\":\"%s\",\"end\":\"%s\"},\"start\":\"%s\",\"end\":\"%s\",",
			       s, e, s, e);
		json_num(o, "minutes", hours * 60, true);
		static const char *const zeros[] = { "cpuCores", "cpuCoreRequestAverage", "cpuCoreUsageAverage",
						     "cpuCoreHours", "cpuCost", "cpuCostAdjustment", "cpuEfficiency",
						     "ramBytes", "ramByteRequestAverage", "ramByteUsageAverage",
						     "ramByteHours", "ramCost", "ramCostAdjustment", "ramEfficiency",
						     "pvCost", "pvCostAdjustment", "networkCost", "networkCostAdjustment",
						     "loadBalancerCost", "loadBalancerCostAdjustment", "sharedCost",
						     "externalCost" };
		for (size_t z = 0; z < sizeof(zeros) / sizeof(zeros[0]); z++)
			gf_obuf_printf(o, "\"%s\":0,", zeros[z]);
		double eff = gf_cost_row_efficiency(w);
		json_num(o, "gpuCount", hours > 0 ? w->gpu_hours / hours : 0, true);
		json_num(o, "gpuHours", w->gpu_hours, true);
		json_num(o, "gpuCost", w->cost, true);
		json_num(o, "gpuCostAdjustment", 0, true);
		json_num(o, "gpuEfficiency", eff, true);
		json_num(o, "totalCost", w->cost, true);
		json_num(o, "totalEfficiency", eff, true);
		json_num(o, "gpuWholeHours", w->whole_gpu_hours, true);
		json_num(o, "gpuWholeCost", w->whole_cost, true);
		json_num(o, "gpuSavedBySharing", w->whole_cost - w->cost, true);
		json_num(o, "gpuSavedBySpot", w->on_demand_cost - w->cost, false);
		gf_obuf_puts(o, "}");
	}
	gf_obuf_puts(o, "}");
	return gf_obuf_error(o);
}

gf_err gf_cost_render_table(const struct gf_cost_report *r, const char *currency,
			    struct gf_obuf *o)
{
	char s[21], e[21];
	gf_rfc3339(r->start, s);
	gf_rfc3339(r->end, e);
	size_t w = 24;
	for (size_t i = 0; i < r->nrows; i++)
		if (strlen(r->rows[i].name) > w)
			w = strlen(r->rows[i].name) > 64 ? 64 : strlen(r->rows[i].name);
	gf_obuf_printf(o, "GPU cost %s .. %s (%s)\n\n", s, e, currency);
	gf_obuf_printf(o, "%-*s %12s %12s %14s %14s %6s\n", (int)w, "name", "GPU-hours", "whole-GPU-h",
		       "cost", "whole-GPU cost", "eff %");
	double tot_h = 0, tot_c = 0, tot_wh = 0, tot_wc = 0;
	for (size_t i = 0; i < r->nrows; i++) {
		const struct gf_cost_row *x = &r->rows[i];
		char eff[16];
		if (x->known_hours > 0)
			snprintf(eff, sizeof(eff), "%.1f", 100 * gf_cost_row_efficiency(x));
		else
			snprintf(eff, sizeof(eff), "-");
		gf_obuf_printf(o, "%-*.*s %12.3f %12.3f %14.2f %14.2f %6s\n", (int)w, (int)w, x->name,
			       x->gpu_hours, x->whole_gpu_hours, x->cost, x->whole_cost, eff);
		tot_h += x->gpu_hours;
		tot_c += x->cost;
		tot_wh += x->whole_gpu_hours;
		tot_wc += x->whole_cost;
	}
	gf_obuf_printf(o, "%-*s %12.3f %12.3f %14.2f %14.2f\n\n", (int)w, "total", tot_h, tot_wh, tot_c,
		       tot_wc);
	gf_obuf_printf(o, "capacity          %12.3f GPU-hours %14.2f\n", r->capacity_hours, r->capacity_cost);
	gf_obuf_printf(o, "workload          %12.3f GPU-hours %14.2f\n", r->workload_hours, r->workload_cost);
	gf_obuf_printf(o, "idle (__idle__)   %12.3f GPU-hours %14.2f\n", r->idle_hours, r->idle_cost);
	if (r->known_hours > 0)
		gf_obuf_printf(o, "efficiency        %12.1f %% (used / allocated, %.3f of %.3f GPU-hours known)\n",
			       100 * r->used_hours / r->known_hours, r->used_hours, r->known_hours);
	double whole = r->whole_cost;
	gf_obuf_printf(o, "saved by sharing  %12.2f %s (%.1f %% of whole-GPU billing %.2f)\n",
		       r->saved_by_sharing, currency, whole > 0 ? 100 * r->saved_by_sharing / whole : 0, whole);
	gf_obuf_printf(o, "saved by spot     %12.2f %s\n", r->saved_by_spot, currency);
	double diff = r->workload_hours + r->idle_hours - r->capacity_hours;
	gf_obuf_printf(o, "reconciliation    workload + idle - capacity = %.3f GPU-hours (%s)",
		       diff,
		       r->capacity_hours == 0 && r->workload_hours == 0 && r->idle_hours == 0
			       ? "nothing recorded in this window: no capacity, no workload"
		       : r->reconciled ? "within 0.1 %"
				       : "NOT within 0.1 %");
	if (r->unmatched_hours > 0)
		gf_obuf_printf(o, "; %.3f GPU-hours on GPUs without a capacity record", r->unmatched_hours);
	if (r->overcommit_hours > 0)
		gf_obuf_printf(o, "; %.3f GPU-hours over some GPU's capacity", r->overcommit_hours);
	gf_obuf_puts(o, "\n");
	return gf_obuf_error(o);
}
