/*
 * sim/report.c - table, curves CSV and HTML report of a simulate run.
 *
 * The HTML report (core/htmlrep) draws its charts as inline SVG: one line
 * per policy of the mean (over seeds) allocation and fragmentation against
 * the arrived load, on axes zoomed to the data, and a dot per policy of the
 * final allocation with the paper's figure as a tick; each chart has a
 * sentence computed from the same means (who leads, by how much).  The
 * table is an HTML table of the same figures as the text table.  Nothing
 * is loaded from the network; the page works offline.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/htmlrep.h"
#include "sim/report.h"

static const double *curve_of(const struct gf_openb_result *r, enum gf_curve c)
{
	switch (c) {
	case GF_CURVE_ALLOC:
		return r->alloc;
	case GF_CURVE_FRAG:
		return r->frag;
	case GF_CURVE_FRAG_RATIO:
		return r->frag_ratio;
	}
	return r->alloc;
}

double gf_report_mean(const struct gf_report_series *s, enum gf_curve c, int x)
{
	double sum = 0;
	int n = 0;

	for (int i = 0; i < s->nruns; i++) {
		double v = gf_openb_at(&s->runs[i], curve_of(&s->runs[i], c), x);

		if (!isnan(v)) {
			sum += v;
			n++;
		}
	}
	return n ? sum / n : NAN;
}

static int max_x(const struct gf_report *r)
{
	int m = 0;

	for (int k = 0; k < r->nseries; k++)
		for (int i = 0; i < r->series[k].nruns; i++)
			if (r->series[k].runs[i].nbuckets - 1 > m)
				m = r->series[k].runs[i].nbuckets - 1;
	return m;
}

static void cell(struct gf_obuf *out, double v, int width)
{
	if (isnan(v))
		gf_obuf_printf(out, " %*s", width, "-");
	else
		gf_obuf_printf(out, " %*.2f", width, v);
}

gf_err gf_report_table(const struct gf_report *r, struct gf_obuf *out)
{
	gf_obuf_printf(out, "workload %s on %s (%zu nodes, %lld GPUs), tune %.2f, seeds %s\n\n",
		      r->workload, r->cluster, r->nnodes, (long long)r->ngpus, r->tune, r->seeds);
	gf_obuf_printf(out, "%-20s %19s %19s %19s %19s\n", "", "GPU alloc % @100", "GPU alloc % @130",
		      "frag % @100", "frag % @130");
	gf_obuf_printf(out, "%-20s", "policy");
	for (int k = 0; k < 4; k++)
		gf_obuf_printf(out, " %9s %9s", "ours", "paper");
	gf_obuf_puts(out, "\n");
	for (int k = 0; k < r->nseries; k++) {
		const struct gf_report_series *s = &r->series[k];

		int pad = 20 - (int)strlen(s->label);

		gf_obuf_printf(out, "%s%-*s", s->label, pad > 0 ? pad : 0, s->ours ? " (ours)" : "");
		cell(out, gf_report_mean(s, GF_CURVE_ALLOC, 100), 9);
		cell(out, s->paper.alloc100, 9);
		cell(out, gf_report_mean(s, GF_CURVE_ALLOC, 130), 9);
		cell(out, s->paper.alloc130, 9);
		cell(out, gf_report_mean(s, GF_CURVE_FRAG, 100), 9);
		cell(out, s->paper.frag100, 9);
		cell(out, gf_report_mean(s, GF_CURVE_FRAG, 130), 9);
		cell(out, s->paper.frag130, 9);
		gf_obuf_puts(out, "\n");
	}
	gf_obuf_printf(out, "\nalloc: allocated GPU share, %% of the cluster's GPU capacity, at 100%% and 130%% "
			   "arrived load\nfrag: fragmented idle GPU capacity (FGD measure), %% of capacity; "
			   "mean over %d seed(s); paper: FGD, USENIX ATC'23\n",
		      r->nseries ? r->series[0].nruns : 0);
	for (int k = 0; k < r->nseries; k++)
		if (r->series[k].ours)
			gf_obuf_printf(out, "(ours): %s is gpufleet's own policy, not in the paper\n",
				       r->series[k].label);
	return gf_obuf_error(out);
}

/*
 * A CSV field as RFC 4180 wants it: as is, or in double quotes (inner quotes
 * doubled) when it holds a comma, a quote, CR or LF.  A leading space is
 * kept either way.
 */
static void csv_field(struct gf_obuf *out, const char *s)
{
	if (!s[strcspn(s, ",\"\r\n")]) {
		gf_obuf_puts(out, s);
		return;
	}
	gf_obuf_puts(out, "\"");
	for (const char *q; (q = strchr(s, '"')); s = q + 1) {
		gf_obuf_append(out, s, (size_t)(q - s) + 1);
		gf_obuf_puts(out, "\"");
	}
	gf_obuf_puts(out, s);
	gf_obuf_puts(out, "\"");
}

gf_err gf_report_curves_csv(const struct gf_report *r, struct gf_obuf *out)
{
	int mx = max_x(r);

	gf_obuf_puts(out, "workload,sc_policy,tune,seed,total_gpus");
	for (int x = 0; x <= mx; x++)
		gf_obuf_printf(out, ",%d", x);
	gf_obuf_puts(out, "\n");
	for (int k = 0; k < r->nseries; k++) {
		const struct gf_report_series *s = &r->series[k];

		for (int i = 0; i < s->nruns; i++) {
			const struct gf_openb_result *run = &s->runs[i];

			csv_field(out, r->workload);
			gf_obuf_puts(out, ",");
			csv_field(out, s->label);
			gf_obuf_printf(out, ",%g,%llu,%lld", r->tune, (unsigned long long)s->seeds[i],
				      (long long)run->total_gpus);
			for (int x = 0; x <= mx; x++) {
				double v = gf_openb_at(run, run->alloc, x);

				if (isnan(v))
					gf_obuf_puts(out, ",");
				else
					gf_obuf_printf(out, ",%.2f", v);
			}
			gf_obuf_puts(out, "\n");
		}
	}
	return gf_obuf_error(out);
}

/* The series with the highest (want_max) or lowest mean of curve c at x; -1 if none has a value. */
static int extreme(const struct gf_report *r, enum gf_curve c, int x, bool want_max)
{
	int best = -1;
	double bv = 0;

	for (int k = 0; k < r->nseries; k++) {
		double v = gf_report_mean(&r->series[k], c, x);

		if (!isnan(v) && (best < 0 || (want_max ? v > bv : v < bv))) {
			best = k;
			bv = v;
		}
	}
	return best;
}

/*
 * A line chart of curve c, mean over seeds, for every series.  low_good:
 * the sentence names the lowest line at the end (fragmentation), else the
 * highest (allocation).
 */
static void html_lines(const struct gf_report *r, struct gf_obuf *out, enum gf_curve c, const char *title,
		       const char *what, const char *ylabel, bool low_good)
{
	int mx = max_x(r), n = mx + 1, from = 0;
	struct gf_chart_line *lines = calloc((size_t)(r->nseries ? r->nseries : 1), sizeof(*lines));
	double *xs = malloc((size_t)n * sizeof(*xs));
	double *ys = malloc((size_t)n * (size_t)(r->nseries ? r->nseries : 1) * sizeof(*ys));
	char summary[512] = "";

	if (!lines || !xs || !ys) {
		out->err = out->err ? out->err : GF_NOMEM;
		goto out;
	}
	for (int x = 0; x < n; x++)
		xs[x] = x;
	for (int k = 0; k < r->nseries; k++) {
		for (int x = 0; x < n; x++)
			ys[(size_t)k * (size_t)n + (size_t)x] = gf_report_mean(&r->series[k], c, x);
	}
	int lead = extreme(r, c, mx, !low_good), tail = extreme(r, c, mx, low_good);

	/*
	 * Allocation follows the arrived load (the diagonal) for every policy
	 * until the cluster saturates; the chart starts 10 points before the
	 * leading policy first falls 2 points below the diagonal, so the end,
	 * where the policies differ, fills the plot.
	 */
	for (int x = 0; c == GF_CURVE_ALLOC && lead >= 0 && x < n; x++) {
		double v = gf_report_mean(&r->series[lead], c, x);

		if (!isnan(v) && v < x - 2.0) {
			from = x - 10 > 0 ? (x - 10) / 10 * 10 : 0;
			break;
		}
	}
	if (lead >= 0 && tail >= 0 && lead != tail) {
		double a = gf_report_mean(&r->series[lead], c, mx), b = gf_report_mean(&r->series[tail], c, mx);
		int len = snprintf(summary, sizeof(summary), "%s keeps %s %s, %.1f %% at %d %% arrived load, %.1f "
							      "points %s %s.",
				   r->series[lead].label, what, low_good ? "lowest" : "highest", a, mx, fabs(a - b),
				   low_good ? "below" : "above", r->series[tail].label);

		if (from > 0 && len > 0 && (size_t)len < sizeof(summary))
			snprintf(summary + len, sizeof(summary) - (size_t)len,
				 " The x axis starts at %d %%, 10 points before %s first falls behind the arrived "
				 "load (the full curves: --curves-csv).", from, r->series[lead].label);
	} else if (lead >= 0) {
		snprintf(summary, sizeof(summary), "%s: %s %.1f %% at %d %% arrived load.", r->series[lead].label,
			 what, gf_report_mean(&r->series[lead], c, mx), mx);
	}
	for (int k = 0; k < r->nseries; k++)
		lines[k] = (struct gf_chart_line){ .label = r->series[k].label, .n = (size_t)(n - from),
						   .x = xs + from, .y = ys + (size_t)k * (size_t)n + from };
	struct gf_line_chart ch = {
		.title = title, .summary = summary[0] ? summary : NULL,
		.x_label = "arrived GPU request, % of the cluster's GPU capacity", .y_label = ylabel,
		.x_unit = " % arrived", .y_unit = " %", .x_decimals = 0, .y_decimals = 2,
		.y_floor = 0, .y_ceil = 100, .hover_points = 27, .nlines = r->nseries, .lines = lines,
	};

	gf_html_line_chart(out, &ch);
out:
	free(lines);
	free(xs);
	free(ys);
}

/* A dot per policy of the allocation at x = at, the paper's figure as a tick. */
static void html_dots(const struct gf_report *r, struct gf_obuf *out, int at)
{
	struct gf_dot_row *rows = calloc((size_t)(r->nseries ? r->nseries : 1), sizeof(*rows));
	char title[128], summary[512] = "";
	double dsum = 0;
	int dn = 0;

	if (!rows) {
		out->err = out->err ? out->err : GF_NOMEM;
		return;
	}
	for (int k = 0; k < r->nseries; k++) {
		const struct gf_report_series *s = &r->series[k];
		double paper = at == 100 ? s->paper.alloc100 : at == 130 ? s->paper.alloc130 : NAN;

		rows[k] = (struct gf_dot_row){ .label = s->label, .value = gf_report_mean(s, GF_CURVE_ALLOC, at),
					       .mark = paper };
		if (!isnan(paper) && !isnan(rows[k].value)) {
			dsum += fabs(rows[k].value - paper);
			dn++;
		}
	}
	int lead = extreme(r, GF_CURVE_ALLOC, at, true), tail = extreme(r, GF_CURVE_ALLOC, at, false);
	int len = 0;

	if (lead >= 0 && tail >= 0 && lead != tail)
		len = snprintf(summary, sizeof(summary), "At %d %% arrived load %s allocates most, %.1f %%, and %s "
							 "least, %.1f %%",
			       at, r->series[lead].label, gf_report_mean(&r->series[lead], GF_CURVE_ALLOC, at),
			       r->series[tail].label, gf_report_mean(&r->series[tail], GF_CURVE_ALLOC, at));
	if (len > 0 && dn && (size_t)len < sizeof(summary))
		snprintf(summary + len, sizeof(summary) - (size_t)len,
			 "; gpufleet's figures are %.2f points from the paper's on average (%d policies).", dsum / dn,
			 dn);
	else if (len > 0 && (size_t)len + 1 < sizeof(summary))
		snprintf(summary + len, sizeof(summary) - (size_t)len, ".");
	snprintf(title, sizeof(title), "GPU allocation at %d %% arrived load", at);
	struct gf_dot_chart ch = {
		.title = title, .summary = summary[0] ? summary : NULL,
		.x_label = "allocated GPU, % of the cluster's GPU capacity", .unit = " %",
		.value_name = "gpufleet (mean over seeds)", .mark_name = dn ? "paper (FGD, ATC'23)" : NULL,
		.decimals = 2, .x_floor = 0, .x_ceil = 100, .nrows = r->nseries, .rows = rows,
	};

	gf_html_dot_chart(out, &ch);
	free(rows);
}

static void html_table(const struct gf_report *r, struct gf_obuf *out)
{
	static const char *const heads[] = { "GPU alloc % @100", "GPU alloc % @130", "frag % @100", "frag % @130" };

	gf_html_table_begin(out, "Means over the seeds; paper: the FGD paper's figure (USENIX ATC'23), - where it has none.");
	gf_obuf_puts(out, "<th rowspan=\"2\">policy</th>");
	for (int k = 0; k < 4; k++)
		gf_obuf_printf(out, "<th colspan=\"2\" class=\"n\">%s</th>", heads[k]);
	gf_html_tr(out);
	for (int k = 0; k < 4; k++)
		gf_obuf_puts(out, "<th class=\"n\">ours</th><th class=\"n\">paper</th>");
	for (int k = 0; k < r->nseries; k++) {
		const struct gf_report_series *s = &r->series[k];

		gf_html_tr(out);
		gf_obuf_puts(out, "<td>");
		gf_html_text(out, s->label);
		gf_obuf_puts(out, s->ours ? " <i>(ours)</i></td>" : "</td>");
		gf_html_td_num(out, gf_report_mean(s, GF_CURVE_ALLOC, 100), 2);
		gf_html_td_num(out, s->paper.alloc100, 2);
		gf_html_td_num(out, gf_report_mean(s, GF_CURVE_ALLOC, 130), 2);
		gf_html_td_num(out, s->paper.alloc130, 2);
		gf_html_td_num(out, gf_report_mean(s, GF_CURVE_FRAG, 100), 2);
		gf_html_td_num(out, s->paper.frag100, 2);
		gf_html_td_num(out, gf_report_mean(s, GF_CURVE_FRAG, 130), 2);
		gf_html_td_num(out, s->paper.frag130, 2);
	}
	gf_html_table_end(out);
}

gf_err gf_report_html(const struct gf_report *r, struct gf_obuf *out)
{
	int mx = max_x(r);
	char title[256];

	snprintf(title, sizeof(title), "gpufleet simulate: %s", r->workload);
	gf_html_begin(out, title, "gpufleet simulate");
	gf_obuf_puts(out, "<p class=\"meta\">Workload <b>");
	gf_html_text(out, r->workload);
	gf_obuf_puts(out, "</b> on cluster <b>");
	gf_html_text(out, r->cluster);
	gf_obuf_printf(out, "</b> (%zu nodes, %lld GPUs), tune %.2f, seeds ", r->nnodes, (long long)r->ngpus,
		       r->tune);
	gf_html_text(out, r->seeds);
	gf_obuf_printf(out, " (%d per policy). Curves are means over the seeds; the x axis is the GPU request "
			    "that has arrived so far, in %% of the cluster's GPU capacity. Axes are zoomed to the "
			    "data; hover a line for its values.</p>\n",
		       r->nseries ? r->series[0].nruns : 0);
	gf_obuf_puts(out, "<h2>Summary</h2>\n");
	html_table(r, out);
	gf_obuf_puts(out, "<p class=\"note\">alloc: allocated GPU share, % of the cluster's GPU capacity, at 100 % "
			  "and 130 % arrived load. frag: fragmented idle GPU capacity (FGD measure), % of "
			  "capacity.");
	for (int k = 0; k < r->nseries; k++)
		if (r->series[k].ours) {
			gf_obuf_puts(out, " (ours): ");
			gf_html_text(out, r->series[k].label);
			gf_obuf_puts(out, " is gpufleet's own policy, not in the paper.");
		}
	gf_obuf_puts(out, "</p>\n<h2>Charts</h2>\n");
	html_lines(r, out, GF_CURVE_ALLOC, "GPU allocation vs arrived load", "allocation",
		   "allocated GPU, % of capacity", false);
	html_lines(r, out, GF_CURVE_FRAG, "GPU fragmentation vs arrived load", "fragmentation",
		   "fragmented GPU, % of capacity", true);
	html_dots(r, out, mx >= 130 ? 130 : mx);
	gf_obuf_puts(out, "<p class=\"note\">Traces: Alibaba cluster-trace-gpu-v2023 (CC BY 4.0). Paper: "
			  "Weng et al., \"Beware of Fragmentation: Scheduling GPU-Sharing Workloads with "
			  "Fragmentation Gradient Descent\", USENIX ATC'23.</p>\n");
	gf_html_end(out);
	return gf_obuf_error(out);
}
