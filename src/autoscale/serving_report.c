/*
 * autoscale/serving_report.c - the serving replay's table, summary CSV and
 * HTML report.
 *
 * The HTML page (core/htmlrep: no script, nothing loaded from the network)
 * holds the table as an HTML table, a dot chart of each scaler's GPU-hours,
 * and per scaler demand (busy GPUs), ready replicas and replicas held over
 * time, each chart with a sentence computed from the same figures.  Long
 * traces are drawn at most PLOT_POINTS points per line, each the max of
 * its bucket, so a short shortfall stays visible.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autoscale/serving.h"
#include "core/htmlrep.h"

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

/* pts points of series s, each the max over its span of steps; x in hours since the start. */
static void sample(const struct gf_serving_report *r, const struct gf_serving_result *x, enum series s,
		   size_t pts, double *xs, double *ys)
{
	size_t n = r->d->nsteps;
	double hours = (double)r->d->nminutes / 60.0;

	for (size_t p = 0; p < pts; p++) {
		size_t from = p * n / pts, to = (p + 1) * n / pts;
		double m = 0;

		for (size_t k = from; k < to; k++)
			if (value(r, x, s, k) > m)
				m = value(r, x, s, k);
		xs[p] = hours * (double)p / (double)(pts > 1 ? pts - 1 : 1);
		ys[p] = m;
	}
}

static void chart(const struct gf_serving_report *r, const struct gf_serving_result *x, struct gf_obuf *out)
{
	size_t n = r->d->nsteps, pts = n < PLOT_POINTS ? n : PLOT_POINTS;
	double *buf = malloc(6 * (pts ? pts : 1) * sizeof(*buf));
	const struct gf_serving_result *o = oracle_of(r);
	char title[256], summary[512];
	int len;

	if (!buf) {
		out->err = out->err ? out->err : GF_NOMEM;
		return;
	}
	sample(r, x, HELD, pts, buf, buf + pts);
	sample(r, x, READY, pts, buf + 2 * pts, buf + 3 * pts);
	sample(r, x, DEMAND, pts, buf + 4 * pts, buf + 5 * pts);
	struct gf_chart_line lines[3] = {
		{ .label = "held (ready or starting)", .colour = "#888888", .n = pts, .x = buf, .y = buf + pts,
		  .thin = true },
		{ .label = "ready replicas", .colour = "#1f77b4", .n = pts, .x = buf + 2 * pts, .y = buf + 3 * pts },
		{ .label = "demand (busy GPUs)", .colour = "#d62728", .n = pts, .x = buf + 4 * pts, .y = buf + 5 * pts },
	};

	snprintf(title, sizeof(title), "%s: demand, ready and held replicas over time", x->scaler.name);
	len = snprintf(summary, sizeof(summary), "%s holds %.1f GPU-hours", x->scaler.name, x->gpu_hours);
	if (o && o != x && o->gpu_hours > 0 && len > 0 && (size_t)len < sizeof(summary))
		len += snprintf(summary + len, sizeof(summary) - (size_t)len, ", %.1f %% %s than the oracle",
				fabs(100.0 * (x->gpu_hours / o->gpu_hours - 1)),
				x->gpu_hours >= o->gpu_hours ? "more" : "fewer");
	if (len > 0 && (size_t)len < sizeof(summary))
		snprintf(summary + len, sizeof(summary) - (size_t)len,
			 "; ready replicas were below demand %lld minutes (%.2f %% of the time), with %lld starts.",
			 (long long)x->under_min,
			 x->minutes ? 100.0 * (double)x->under_min / (double)x->minutes : 0.0, (long long)x->starts);
	struct gf_line_chart ch = {
		.title = title, .summary = summary, .x_label = "time since the trace's start, hours",
		.y_label = "GPUs (replicas)", .x_unit = " h", .y_unit = " GPUs", .x_decimals = 2, .y_decimals = 1,
		.y_zero = true, .y_floor = 0, .y_ceil = NAN, .hover_points = 60, .nlines = 3, .lines = lines,
	};

	gf_html_line_chart(out, &ch);
	free(buf);
}

/* Whether row i is a scaler that reacts to demand (not static, not the oracle's perfect foresight). */
static bool reacts(const struct gf_serving_report *r, size_t i)
{
	return r->rows[i].scaler.kind != GF_SCALER_STATIC && r->rows[i].scaler.kind != GF_SCALER_ORACLE;
}

/*
 * A dot per scaler at its GPU-hours.  The sentence names, among the
 * scalers that react, the one holding the fewest GPU-hours and the one
 * missing the SLO least (ties: fewer GPU-hours), with the oracle as the
 * floor when it ran.
 */
static void cost_chart(const struct gf_serving_report *r, struct gf_obuf *out)
{
	struct gf_dot_row *rows = calloc(r->nrows ? r->nrows : 1, sizeof(*rows));
	const struct gf_serving_result *o = oracle_of(r);
	ptrdiff_t cheap = -1, safe = -1;
	char summary[768] = "";
	int len = 0;

	if (!rows) {
		out->err = out->err ? out->err : GF_NOMEM;
		return;
	}
	for (size_t i = 0; i < r->nrows; i++) {
		const struct gf_serving_result *x = &r->rows[i];

		rows[i] = (struct gf_dot_row){ .label = x->scaler.name, .value = x->gpu_hours, .mark = NAN };
		if (!reacts(r, i))
			continue;
		if (cheap < 0 || x->gpu_hours < r->rows[cheap].gpu_hours)
			cheap = (ptrdiff_t)i;
		if (safe < 0 || x->slo_miss_pct < r->rows[safe].slo_miss_pct ||
		    (x->slo_miss_pct == r->rows[safe].slo_miss_pct && x->gpu_hours < r->rows[safe].gpu_hours))
			safe = (ptrdiff_t)i;
	}
	if (o)
		len = snprintf(summary, sizeof(summary), "The oracle (perfect foresight) sets the floor at %.1f "
							 "GPU-hours. ", o->gpu_hours);
	if (cheap >= 0 && len >= 0 && (size_t)len < sizeof(summary)) {
		const struct gf_serving_result *c = &r->rows[cheap], *f = &r->rows[safe];

		len += snprintf(summary + len, sizeof(summary) - (size_t)len,
				"Of the scalers that react, %s holds the fewest GPU-hours, %.1f (SLO miss %.2f %%)",
				c->scaler.name, c->gpu_hours, c->slo_miss_pct);
		if (safe != cheap && len > 0 && (size_t)len < sizeof(summary))
			len += snprintf(summary + len, sizeof(summary) - (size_t)len,
					", and %s misses the SLO least, %.2f %%, holding %.1f GPU-hours",
					f->scaler.name, f->slo_miss_pct, f->gpu_hours);
		if (len > 0 && (size_t)len + 1 < sizeof(summary))
			snprintf(summary + len, sizeof(summary) - (size_t)len, ".");
	}
	struct gf_dot_chart ch = {
		.title = "GPU-hours held per scaler", .summary = summary[0] ? summary : NULL,
		.x_label = "GPU-hours held (ready or starting replicas)", .unit = " GPU-h",
		.value_name = "GPU-hours", .decimals = 1, .x_floor = 0, .x_ceil = NAN,
		.nrows = (int)r->nrows, .rows = rows,
	};

	gf_html_dot_chart(out, &ch);
	free(rows);
}

static void html_table(const struct gf_serving_report *r, struct gf_obuf *out)
{
	const struct gf_serving_result *o = oracle_of(r);

	gf_html_table_begin(out, NULL);
	gf_obuf_puts(out, "<th>scaler</th><th class=\"n\">GPU-hours</th><th class=\"n\">vs oracle</th>"
			  "<th class=\"n\">under capacity, minutes</th><th class=\"n\">% of minutes</th>"
			  "<th class=\"n\">SLO miss %</th><th class=\"n\">starts</th>");
	for (size_t i = 0; i < r->nrows; i++) {
		const struct gf_serving_result *x = &r->rows[i];

		gf_html_tr(out);
		gf_html_td(out, x->scaler.name);
		gf_html_td_num(out, x->gpu_hours, 1);
		if (o && o->gpu_hours > 0)
			gf_obuf_printf(out, "<td class=\"n\">%+.1f %%</td>", 100.0 * (x->gpu_hours / o->gpu_hours - 1));
		else
			gf_html_td(out, "-");
		gf_obuf_printf(out, "<td class=\"n\">%lld</td>", (long long)x->under_min);
		gf_html_td_num(out, x->minutes ? 100.0 * (double)x->under_min / (double)x->minutes : 0.0, 2);
		gf_html_td_num(out, x->slo_miss_pct, 2);
		gf_obuf_printf(out, "<td class=\"n\">%lld</td>", (long long)x->starts);
	}
	gf_html_table_end(out);
	if (!r->c->cache_ttl_s)
		return;
	gf_obuf_printf(out, "<p class=\"note\">Model cache: a removed replica's node keeps the model %d s; a start "
			    "on it: ", r->c->cache_ttl_s);
	gf_html_text(out, r->warm_desc ? r->warm_desc : "a warm start");
	gf_obuf_puts(out, ".</p>\n");
	gf_html_table_begin(out, NULL);
	gf_obuf_puts(out, "<th>scaler</th><th class=\"n\">starts on a node holding the model</th>"
			  "<th class=\"n\">of starts</th><th class=\"n\">%</th><th class=\"n\">mean cold start (s)</th>");
	for (size_t i = 0; i < r->nrows; i++) {
		const struct gf_serving_result *x = &r->rows[i];

		if (x->scaler.kind == GF_SCALER_STATIC || x->scaler.kind == GF_SCALER_ORACLE)
			continue;
		gf_html_tr(out);
		gf_html_td(out, x->scaler.name);
		gf_obuf_printf(out, "<td class=\"n\">%lld</td><td class=\"n\">%lld</td>", (long long)x->cache_hits,
			       (long long)x->starts);
		gf_html_td_num(out, x->starts ? 100.0 * (double)x->cache_hits / (double)x->starts : 0.0, 1);
		gf_html_td_num(out, x->mean_start_s, 0);
	}
	gf_html_table_end(out);
}

void gf_serving_html(const struct gf_serving_report *r, struct gf_obuf *out)
{
	char title[512];
	struct gf_obuf head;

	snprintf(title, sizeof(title), "gpufleet replay --serving: %s", r->trace);
	gf_html_begin(out, title, "gpufleet replay --serving");
	gf_obuf_init(&head, 1 << 16);
	header(r, &head);
	gf_html_paragraphs(out, head.data, "meta");
	gf_obuf_release(&head);
	gf_obuf_puts(out, "<h2>Summary</h2>\n");
	html_table(r, out);
	gf_obuf_printf(out, "<h2>Charts</h2>\n<p class=\"note\">Each line is drawn at most %d points wide, each "
			    "point the maximum of its span, so a short shortfall stays visible; hover a line for "
			    "its values.</p>\n", PLOT_POINTS);
	cost_chart(r, out);
	for (size_t i = 0; i < r->nrows; i++)
		chart(r, &r->rows[i], out);
	gf_html_end(out);
}
