/*
 * autoscale/serving_report.c - the serving replay's table, summary CSV and
 * HTML report.
 *
 * The HTML page draws, per scaler, demand (busy GPUs), ready replicas and
 * replicas held over time as inline SVG (the house style of sim/report.c:
 * no script, nothing loaded from the network).  Long traces are drawn at
 * most PLOT_POINTS points per line, each the max of its bucket, so a short
 * shortfall stays visible.
 */
#include <math.h>
#include <string.h>

#include "autoscale/serving.h"

#define PLOT_POINTS 1200

static const struct gf_serving_result *oracle_of(const struct gf_serving_report *r)
{
	for (size_t i = 0; i < r->nrows; i++)
		if (r->rows[i].scaler.kind == GF_SCALER_ORACLE)
			return &r->rows[i];
	return NULL;
}

static void header(const struct gf_serving_report *r, struct gf_obuf *out)
{
	const struct gf_serving_config *c = r->c;

	gf_obuf_printf(out,
		       "%s: %zu %s over %.1f h; target utilization %.0f%%, min %d replicas, cold start %s\n",
		       r->trace, r->tr->n, r->tr->kind == GF_SERVING_REQUESTS ? "requests" : "samples",
		       (double)r->d->nminutes / 60.0, c->target_util * 100, c->min_replicas, r->cold_desc);
	if (r->tr->kind == GF_SERVING_REQUESTS)
		gf_obuf_printf(out, "SLO: a request waits at most %.0f s (the median service time) for a ready replica\n\n",
			       c->slo_wait_s);
	else
		gf_obuf_puts(out, "SLO miss: share of demand (GPU-seconds) above ready capacity\n\n");
}

void gf_serving_table(const struct gf_serving_report *r, struct gf_obuf *out)
{
	const struct gf_serving_result *o = oracle_of(r);

	header(r, out);
	gf_obuf_printf(out, "%-26s %10s %9s %10s %8s %9s %8s\n", "scaler", "GPU-hours", "vs oracle",
		       "under cap", "% min", "SLO miss", "starts");
	gf_obuf_printf(out, "%-26s %10s %9s %10s %8s %9s %8s\n", "", "", "", "minutes", "", "%", "");
	for (size_t i = 0; i < r->nrows; i++) {
		const struct gf_serving_result *x = &r->rows[i];

		gf_obuf_printf(out, "%-26s %10.1f ", x->scaler.name, x->gpu_hours);
		if (o && o->gpu_hours > 0)
			gf_obuf_printf(out, "%+8.1f%%", 100.0 * (x->gpu_hours / o->gpu_hours - 1));
		else
			gf_obuf_printf(out, "%9s", "-");
		gf_obuf_printf(out, " %10lld %7.2f%% %8.2f%% %8lld\n", (long long)x->under_min,
			       x->minutes ? 100.0 * (double)x->under_min / (double)x->minutes : 0.0,
			       x->slo_miss_pct, (long long)x->starts);
	}
	if (!r->c->cache_ttl_s)
		return;
	gf_obuf_printf(out, "\nmodel cache (a removed replica's node keeps the model %d s; a start on it: %s):\n",
		       r->c->cache_ttl_s, r->warm_desc ? r->warm_desc : "a warm start");
	for (size_t i = 0; i < r->nrows; i++) {
		const struct gf_serving_result *x = &r->rows[i];

		if (x->scaler.kind == GF_SCALER_STATIC || x->scaler.kind == GF_SCALER_ORACLE)
			continue;
		gf_obuf_printf(out, "%-26s %lld of %lld starts on a node holding the model (%.1f%%), "
			       "mean cold start %.0f s\n",
			       x->scaler.name, (long long)x->cache_hits, (long long)x->starts,
			       x->starts ? 100.0 * (double)x->cache_hits / (double)x->starts : 0.0,
			       x->mean_start_s);
	}
}

void gf_serving_csv(const struct gf_serving_report *r, struct gf_obuf *out)
{
	gf_obuf_puts(out, "scaler,gpu_hours,under_capacity_min,slo_miss_pct,starts\n");
	for (size_t i = 0; i < r->nrows; i++) {
		const struct gf_serving_result *x = &r->rows[i];

		gf_obuf_printf(out, "%s,%.3f,%lld,%.4f,%lld\n", x->scaler.name, x->gpu_hours,
			       (long long)x->under_min, x->slo_miss_pct, (long long)x->starts);
	}
}

void gf_serving_timeline_csv(const struct gf_serving_report *r, struct gf_obuf *out)
{
	gf_obuf_puts(out, "t,demand");
	for (size_t i = 0; i < r->nrows; i++)
		gf_obuf_printf(out, ",%s_replicas,%s_ready", r->rows[i].scaler.name, r->rows[i].scaler.name);
	gf_obuf_puts(out, "\n");
	for (size_t k = 0; k < r->d->nsteps && !gf_obuf_error(out); k++) {
		gf_obuf_printf(out, "%lld,%.4f", (long long)(r->d->t0 + (int64_t)k * GF_SERVING_STEP_S), r->d->busy[k]);
		for (size_t i = 0; i < r->nrows; i++)
			gf_obuf_printf(out, ",%d,%d", r->rows[i].replicas[k], r->rows[i].ready[k]);
		gf_obuf_puts(out, "\n");
	}
}

static void html_text(struct gf_obuf *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '<')
			gf_obuf_puts(out, "&lt;");
		else if (*s == '>')
			gf_obuf_puts(out, "&gt;");
		else if (*s == '&')
			gf_obuf_puts(out, "&amp;");
		else if (*s == '"')
			gf_obuf_puts(out, "&quot;");
		else
			gf_obuf_append(out, s, 1);
	}
}

enum series { DEMAND, READY, HELD };

static double value(const struct gf_serving_report *r, const struct gf_serving_result *x, enum series s,
		    size_t k)
{
	switch (s) {
	case DEMAND:
		return r->d->busy[k];
	case READY:
		return x->ready[k];
	case HELD:
		return x->replicas[k];
	}
	return 0;
}

static void path(const struct gf_serving_report *r, const struct gf_serving_result *x, enum series s,
		 struct gf_obuf *out, const char *colour, double ymax, int W, int H, int L, int T)
{
	size_t n = r->d->nsteps, pts = n < PLOT_POINTS ? n : PLOT_POINTS;

	gf_obuf_printf(out, "<path fill=\"none\" stroke=\"%s\" stroke-width=\"1.2\" d=\"", colour);
	for (size_t p = 0; p < pts; p++) {
		size_t from = p * n / pts, to = (p + 1) * n / pts;
		double m = 0;

		for (size_t k = from; k < to; k++)
			if (value(r, x, s, k) > m)
				m = value(r, x, s, k);
		gf_obuf_printf(out, "%c%.1f %.1f", p ? 'L' : 'M', L + (double)W * (double)p / (double)(pts > 1 ? pts - 1 : 1),
			       T + H - H * m / ymax);
	}
	gf_obuf_puts(out, "\"/>\n");
}

static void chart(const struct gf_serving_report *r, const struct gf_serving_result *x, struct gf_obuf *out)
{
	const int W = 900, H = 220, L = 50, T = 28;
	double ymax = 1;
	double hours = (double)r->d->nminutes / 60.0;

	for (size_t k = 0; k < r->d->nsteps; k++) {
		if (r->d->busy[k] > ymax)
			ymax = r->d->busy[k];
		if (x->replicas[k] > ymax)
			ymax = x->replicas[k];
	}
	ymax = ceil(ymax * 1.05);
	gf_obuf_printf(out, "<svg viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\">\n", W + L + 20,
		       H + T + 40, W + L + 20, H + T + 40);
	gf_obuf_puts(out, "<text class=\"t\" x=\"50\" y=\"18\">");
	html_text(out, x->scaler.name);
	gf_obuf_printf(out, ": %.1f GPU-hours, %lld minutes under capacity, %lld starts</text>\n",
		       x->gpu_hours, (long long)x->under_min, (long long)x->starts);
	for (int g = 0; g <= 4; g++) {
		double y = T + H - H * g / 4.0;

		gf_obuf_printf(out, "<line class=\"g\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>", L, L + W, y, y);
		gf_obuf_printf(out, "<text class=\"a\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.0f</text>\n", L - 4,
			       y + 4, ymax * g / 4.0);
	}
	for (int g = 0; g <= 6; g++)
		gf_obuf_printf(out, "<text class=\"a\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%.1f h</text>\n",
			       L + W * g / 6.0, T + H + 16, hours * g / 6.0);
	path(r, x, HELD, out, "#999", ymax, W, H, L, T);
	path(r, x, READY, out, "#1f77b4", ymax, W, H, L, T);
	path(r, x, DEMAND, out, "#d62728", ymax, W, H, L, T);
	gf_obuf_printf(out, "<text class=\"a\" x=\"%d\" y=\"%d\"><tspan fill=\"#d62728\">demand (busy GPUs)</tspan>"
			    "  <tspan fill=\"#1f77b4\">ready replicas</tspan>  <tspan fill=\"#999\">replicas held"
			    " (ready or starting)</tspan></text>\n", L, T + H + 34);
	gf_obuf_puts(out, "</svg>\n");
}

void gf_serving_html(const struct gf_serving_report *r, struct gf_obuf *out)
{
	gf_obuf_puts(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>gpufleet replay --serving: ");
	html_text(out, r->trace);
	gf_obuf_puts(out, "</title>\n<style>body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}"
			  "svg{background:#fff;border:1px solid #ddd;margin:8px 8px 0 0}"
			  ".t{font-weight:600;font-size:14px}.a{font-size:11px;fill:#444}"
			  ".g{stroke:#eee}pre{background:#f6f6f6;padding:12px;overflow:auto}"
			  "</style></head><body>\n<h1>gpufleet replay --serving</h1>\n<pre>");
	struct gf_obuf table;
	gf_obuf_init(&table, 1 << 20);
	gf_serving_table(r, &table);
	if (table.data)
		html_text(out, table.data);
	gf_obuf_release(&table);
	gf_obuf_puts(out, "</pre>\n<p>Each line is drawn at most 1200 points wide, each point the maximum of its span.</p>\n");
	for (size_t i = 0; i < r->nrows; i++)
		chart(r, &r->rows[i], out);
	gf_obuf_puts(out, "</body></html>\n");
}
