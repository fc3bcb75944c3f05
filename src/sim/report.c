/*
 * sim/report.c - table, curves CSV and HTML report of a simulate run.
 *
 * The HTML report draws its charts as inline SVG computed here: one line per
 * policy of the mean (over seeds) allocation and fragmentation against the
 * arrived load, and bars of the final allocation with the paper's figure as
 * a tick.  Nothing is loaded from the network; the page works offline.
 */
#include <math.h>
#include <string.h>

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

static const char *const palette[] = {
	"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#9c755f",
	"#ff9da7", "#bab0ac",
};
#define NPALETTE (sizeof(palette) / sizeof(palette[0]))

static void html_escape(struct gf_obuf *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': gf_obuf_puts(out, "&lt;"); break;
		case '>': gf_obuf_puts(out, "&gt;"); break;
		case '&': gf_obuf_puts(out, "&amp;"); break;
		case '"': gf_obuf_puts(out, "&quot;"); break;
		default: gf_obuf_append(out, s, 1);
		}
	}
}

#define W 640
#define H 360
#define ML 56
#define MR 150
#define MT 30
#define MB 44

/* A line chart of curve c (mean over seeds) for every series. */
static void svg_lines(const struct gf_report *r, struct gf_obuf *out, enum gf_curve c,
		      const char *title, const char *ylabel)
{
	int mx = max_x(r);
	double lo = INFINITY, hi = -INFINITY;

	for (int k = 0; k < r->nseries; k++) {
		for (int x = 0; x <= mx; x++) {
			double v = gf_report_mean(&r->series[k], c, x);

			if (!isnan(v)) {
				lo = fmin(lo, v);
				hi = fmax(hi, v);
			}
		}
	}
	if (!(hi >= lo)) {
		lo = 0;
		hi = 1;
	}
	lo = floor(fmin(lo, 0) / 10) * 10;
	hi = ceil(hi / 10) * 10;
	if (hi <= lo)
		hi = lo + 10;
	double pw = W - ML - MR, ph = H - MT - MB;

	gf_obuf_printf(out, "<svg viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\">\n", W, H, W, H);
	gf_obuf_printf(out, "<text x=\"%d\" y=\"18\" class=\"t\">", ML);
	html_escape(out, title);
	gf_obuf_puts(out, "</text>\n");
	for (int i = 0; i <= 5; i++) {
		double v = lo + (hi - lo) * i / 5, y = MT + ph - ph * i / 5;

		gf_obuf_printf(out, "<line x1=\"%d\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" class=\"g\"/>"
				   "<text x=\"%d\" y=\"%.1f\" class=\"a\" text-anchor=\"end\">%.0f</text>\n",
			      ML, ML + pw, y, y, ML - 6, y + 4, v);
	}
	for (int x = 0; x <= mx; x += 10) {
		double px = ML + pw * x / (mx ? mx : 1);

		gf_obuf_printf(out, "<text x=\"%.1f\" y=\"%d\" class=\"a\" text-anchor=\"middle\">%d</text>\n",
			      px, MT + (int)ph + 16, x);
	}
	gf_obuf_printf(out, "<text x=\"%.1f\" y=\"%d\" class=\"a\" text-anchor=\"middle\">arrived GPU request, %% of capacity</text>\n",
		      ML + pw / 2, H - 6);
	gf_obuf_printf(out, "<text x=\"14\" y=\"%.1f\" class=\"a\" transform=\"rotate(-90 14 %.1f)\" text-anchor=\"middle\">",
		      MT + ph / 2, MT + ph / 2);
	html_escape(out, ylabel);
	gf_obuf_puts(out, "</text>\n");
	for (int k = 0; k < r->nseries; k++) {
		const char *col = palette[k % NPALETTE];
		bool pen = false;

		gf_obuf_printf(out, "<path fill=\"none\" stroke=\"%s\" stroke-width=\"1.8\" d=\"", col);
		for (int x = 0; x <= mx; x++) {
			double v = gf_report_mean(&r->series[k], c, x);

			if (isnan(v)) {
				pen = false;
				continue;
			}
			gf_obuf_printf(out, "%s%.1f %.1f ", pen ? "L" : "M", ML + pw * x / (mx ? mx : 1),
				      MT + ph - ph * (v - lo) / (hi - lo));
			pen = true;
		}
		gf_obuf_puts(out, "\"/>\n");
		gf_obuf_printf(out, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"3\" fill=\"%s\"/>"
				   "<text x=\"%d\" y=\"%d\" class=\"a\">",
			      W - MR + 12, MT + 6 + k * 18, col, W - MR + 30, MT + 11 + k * 18);
		html_escape(out, r->series[k].label);
		gf_obuf_puts(out, "</text>\n");
	}
	gf_obuf_puts(out, "</svg>\n");
}

/* Bars of the allocation at the last column (130 in the paper's setting), paper's figure as a tick. */
static void svg_bars(const struct gf_report *r, struct gf_obuf *out, int at)
{
	double pw = W - ML - MR, ph = H - MT - MB;
	double lo = 100, hi = 100;

	for (int k = 0; k < r->nseries; k++) {
		double v = gf_report_mean(&r->series[k], GF_CURVE_ALLOC, at);

		if (!isnan(v))
			lo = fmin(lo, v);
	}
	lo = fmax(0, floor(lo / 10) * 10 - 10);
	/* 60 px more at the bottom for the slanted policy names */
	gf_obuf_printf(out, "<svg viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\">\n", W, H + 60,
		      W, H + 60);
	gf_obuf_printf(out, "<text x=\"%d\" y=\"18\" class=\"t\">GPU allocation at %d%% arrived load "
			   "(bar: gpufleet, tick: paper)</text>\n", ML, at);
	for (int i = 0; i <= 5; i++) {
		double v = lo + (hi - lo) * i / 5, y = MT + ph - ph * i / 5;

		gf_obuf_printf(out, "<line x1=\"%d\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" class=\"g\"/>"
				   "<text x=\"%d\" y=\"%.1f\" class=\"a\" text-anchor=\"end\">%.0f</text>\n",
			      ML, ML + pw, y, y, ML - 6, y + 4, v);
	}
	double slot = pw / (r->nseries ? r->nseries : 1);

	for (int k = 0; k < r->nseries; k++) {
		double v = gf_report_mean(&r->series[k], GF_CURVE_ALLOC, at);
		double x0 = ML + slot * k + slot * 0.15, bw = slot * 0.7;
		double paper = at == 100 ? r->series[k].paper.alloc100 : at == 130 ? r->series[k].paper.alloc130 : NAN;

		if (!isnan(v)) {
			double y = MT + ph - ph * (fmax(v, lo) - lo) / (hi - lo);

			gf_obuf_printf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>"
					   "<text x=\"%.1f\" y=\"%.1f\" class=\"a\" text-anchor=\"middle\">%.2f</text>\n",
				      x0, y, bw, MT + ph - y, palette[k % NPALETTE], x0 + bw / 2, y - 4, v);
		}
		if (!isnan(paper)) {
			double y = MT + ph - ph * (fmax(paper, lo) - lo) / (hi - lo);

			gf_obuf_printf(out, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#000\" stroke-width=\"2\"/>\n",
				      x0 - 3, x0 + bw + 3, y, y);
		}
		gf_obuf_printf(out, "<text x=\"%.1f\" y=\"%.1f\" class=\"a\" text-anchor=\"end\" transform=\"rotate(-40 %.1f %.1f)\">",
			      x0 + bw / 2, MT + ph + 14, x0 + bw / 2, MT + ph + 14);
		html_escape(out, r->series[k].label);
		gf_obuf_puts(out, "</text>\n");
	}
	gf_obuf_puts(out, "</svg>\n");
}

gf_err gf_report_html(const struct gf_report *r, struct gf_obuf *out)
{
	struct gf_obuf table;
	int mx = max_x(r);

	gf_obuf_puts(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
			 "<title>gpufleet simulate: ");
	html_escape(out, r->workload);
	gf_obuf_puts(out, "</title>\n<style>body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}"
			 "svg{background:#fff;border:1px solid #ddd;margin:8px 8px 0 0}"
			 ".t{font-weight:600;font-size:14px}.a{font-size:11px;fill:#444}"
			 ".g{stroke:#eee}pre{background:#f6f6f6;padding:12px;overflow:auto}"
			 "</style></head><body>\n<h1>gpufleet simulate</h1>\n<p>Workload <b>");
	html_escape(out, r->workload);
	gf_obuf_puts(out, "</b> on cluster <b>");
	html_escape(out, r->cluster);
	gf_obuf_printf(out, "</b> (%zu nodes, %lld GPUs), tune %.2f, seeds ", r->nnodes,
		      (long long)r->ngpus, r->tune);
	html_escape(out, r->seeds);
	gf_obuf_puts(out, ". Curves are means over the seeds; the x axis is the GPU request that has "
			 "arrived so far, in % of the cluster's GPU capacity.</p>\n");
	svg_lines(r, out, GF_CURVE_ALLOC, "GPU allocation vs arrived load", "allocated GPU, % of capacity");
	svg_lines(r, out, GF_CURVE_FRAG, "GPU fragmentation vs arrived load", "fragmented GPU, % of capacity");
	svg_bars(r, out, mx >= 130 ? 130 : mx);
	gf_obuf_init(&table, 1 << 20);
	gf_report_table(r, &table);
	gf_obuf_puts(out, "<h2>Summary</h2>\n<pre>");
	if (table.data)
		html_escape(out, table.data);
	gf_obuf_release(&table);
	gf_obuf_puts(out, "</pre>\n<p>Traces: Alibaba cluster-trace-gpu-v2023 (CC BY 4.0). Paper: "
			 "Weng et al., \"Beware of Fragmentation: Scheduling GPU-Sharing Workloads with "
			 "Fragmentation Gradient Descent\", USENIX ATC'23.</p>\n</body></html>\n");
	return gf_obuf_error(out);
}
