/*
 * core/htmlrep.c - page frame, tables and inline-SVG charts for the HTML
 * reports of simulate, replay and replay --serving.
 *
 * Invariants: output depends only on the arguments (fixed formats, no
 * clock, no locale-dependent text beyond printf's "C" numbers), so a
 * report is byte-identical for the same input; nothing is fetched (no
 * script, font or image is referenced).
 *
 * Axis ranges.  A chart's value range [lo, hi] is the data's, widened by
 * MARGIN of its span on each side (the zoom that makes a 1-point gap
 * between two policies visible instead of a 0-100 % axis with flat lines),
 * then rounded out to multiples of a "nice" step: the smallest of
 * {1, 2, 2.5, 5} x 10^k at least span / 5, so there are 4 to 6 ticks.
 *
 * Line labels.  Each line is named beside its last point.  The labels'
 * y are sorted and pushed down so neighbours are at least LABEL_GAP
 * apart, then pushed back up from the bottom if the last one fell below
 * the plot: O(n log n) for n lines, no overlap whenever n * LABEL_GAP fits.
 *
 * Hover.  Up to hover_points evenly spaced points per line (and the last
 * point) are circles holding an SVG <title>; the browser shows it as a
 * tooltip.  CSS keeps them transparent until hovered.
 *
 * Layout.  Charts scale with the page (viewBox, width 100 %) down to a
 * minimum width under which their box scrolls sideways rather than the
 * text shrinking out of reach; tables scroll inside their own box.  The
 * page's own width never exceeds the viewport.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/htmlrep.h"

#define MARGIN 0.08
#define LABEL_GAP 15.0
#define CW 720		/* chart viewBox width */
#define CH 330		/* line chart viewBox height */

static const char *const palette[] = {
	"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
	"#7f7f7f", "#bcbd22",
};
#define NPALETTE ((int)(sizeof(palette) / sizeof(palette[0])))

const char *gf_html_colour(int i)
{
	return palette[(i < 0 ? -i : i) % NPALETTE];
}

void gf_html_text(struct gf_obuf *out, const char *s)
{
	gf_html_textn(out, s, strlen(s));
}

void gf_html_textn(struct gf_obuf *out, const char *s, size_t n)
{
	const char *run = s, *end = s + n;

	for (; s < end; s++) {
		const char *rep = *s == '<' ? "&lt;" : *s == '>' ? "&gt;" : *s == '&' ? "&amp;"
				: *s == '"' ? "&quot;" : NULL;

		if (!rep)
			continue;
		gf_obuf_append(out, run, (size_t)(s - run));
		gf_obuf_puts(out, rep);
		run = s + 1;
	}
	gf_obuf_append(out, run, (size_t)(s - run));
}

void gf_html_paragraphs(struct gf_obuf *out, const char *text, const char *cls)
{
	while (text && *text) {
		const char *nl = strchr(text, '\n');
		size_t len = nl ? (size_t)(nl - text) : strlen(text);

		if (len) {
			gf_obuf_printf(out, "<p class=\"%s\">", cls);
			gf_html_textn(out, text, len);
			gf_obuf_puts(out, "</p>\n");
		}
		text += len + (nl ? 1 : 0);
	}
}

static const char style[] =
	"<style>\n"
	"*{box-sizing:border-box}\n"
	"body{font:15px/1.45 system-ui,-apple-system,\"Segoe UI\",sans-serif;margin:0;color:#1d1d1f;"
	"background:#f7f7f8;overflow-wrap:anywhere}\n"
	"main{max-width:1100px;margin:0 auto;padding:20px 24px 40px}\n"
	"h1{font-size:1.5em;margin:.2em 0 .4em}h2{font-size:1.2em;margin:1.6em 0 .5em}"
	"h3{font-size:1.02em;margin:0 0 .2em}\n"
	"p{margin:.4em 0}.meta{color:#444}.note{color:#555;font-size:.9em}\n"
	"figure.chart{margin:14px 0;padding:12px 14px;background:#fff;border:1px solid #ddd;border-radius:6px}\n"
	"figure.chart p.s{margin:0 0 6px;color:#333}\n"
	".cw,.tw{overflow-x:auto;max-width:100%}\n"
	"svg.c{display:block;width:100%;min-width:540px;height:auto;font-family:inherit}\n"
	"svg.c text{font-size:12px;fill:#444}svg.c text.lb{font-size:12.5px;font-weight:600}\n"
	"svg.c .g{stroke:#e6e6e6}svg.c .ax{stroke:#888}\n"
	"svg.c circle.p{opacity:0}svg.c circle.p:hover{opacity:1}\n"
	".tw{background:#fff;border:1px solid #ddd;border-radius:6px;margin:10px 0}\n"
	"table{border-collapse:collapse;font-variant-numeric:tabular-nums;width:100%;font-size:.93em;overflow-wrap:normal}\n"
	"p.cap{color:#444;font-size:.92em;margin:10px 0 -4px}\n"
	"th,td{padding:5px 8px;border-top:1px solid #eee;white-space:nowrap}\n"
	"th{background:#f1f1f3;font-weight:600;text-align:left;white-space:normal;vertical-align:bottom}"
	"td.n,th.n{text-align:right}th.rh{background:#fff;vertical-align:top;white-space:nowrap}\n"
	"tbody tr:hover{background:#f6f9ff}\n"
	"@media (max-width:600px){main{padding:12px 12px 30px}body{font-size:14px}"
	"figure.chart{padding:10px 8px}}\n"
	"</style>\n";

void gf_html_begin(struct gf_obuf *out, const char *title, const char *h1)
{
	gf_obuf_puts(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
			  "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n<title>");
	gf_html_text(out, title);
	gf_obuf_puts(out, "</title>\n");
	gf_obuf_puts(out, style);
	gf_obuf_puts(out, "</head><body><main>\n<h1>");
	gf_html_text(out, h1);
	gf_obuf_puts(out, "</h1>\n");
}

void gf_html_end(struct gf_obuf *out)
{
	gf_obuf_puts(out, "</main></body></html>\n");
}

/* Table state lives in the output itself: a row is open after gf_html_tr until the next or the end. */
void gf_html_table_begin(struct gf_obuf *out, const char *caption)
{
	/* the caption above the box, not in the table, so it wraps to the page rather than the table */
	if (caption) {
		gf_obuf_puts(out, "<p class=\"cap\">");
		gf_html_text(out, caption);
		gf_obuf_puts(out, "</p>\n");
	}
	gf_obuf_puts(out, "<div class=\"tw\"><table>\n<tr>");
}

void gf_html_table_end(struct gf_obuf *out)
{
	gf_obuf_puts(out, "</tr>\n</table></div>\n");
}

void gf_html_tr(struct gf_obuf *out)
{
	gf_obuf_puts(out, "</tr>\n<tr>");
}

void gf_html_th(struct gf_obuf *out, const char *text, int colspan)
{
	if (colspan > 1)
		gf_obuf_printf(out, "<th colspan=\"%d\">", colspan);
	else
		gf_obuf_puts(out, "<th>");
	gf_html_text(out, text);
	gf_obuf_puts(out, "</th>");
}

void gf_html_td(struct gf_obuf *out, const char *text)
{
	gf_obuf_puts(out, "<td>");
	gf_html_text(out, text);
	gf_obuf_puts(out, "</td>");
}

void gf_html_td_num(struct gf_obuf *out, double v, int decimals)
{
	if (isnan(v))
		gf_obuf_puts(out, "<td class=\"n\">-</td>");
	else
		gf_obuf_printf(out, "<td class=\"n\">%.*f</td>", decimals, v);
}

/* ---- axes ---- */

struct axis {
	double lo, hi, step;
	int decimals;
};

static double nice_step(double span)
{
	static const double m[] = { 1, 2, 2.5, 5, 10 };
	double raw = span / 5, p = pow(10, floor(log10(raw)));

	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++)
		if (m[i] * p >= raw * (1 - 1e-9))
			return m[i] * p;
	return 10 * p;
}

static int step_decimals(double step)
{
	int d = 0;

	while (d < 4 && fabs(step * pow(10, d) - round(step * pow(10, d))) > 1e-6)
		d++;
	return d;
}

/* The axis for data in [lo, hi] (lo > hi: no data). */
static struct axis make_axis(double lo, double hi, bool margin, bool zero, double floor_, double ceil_)
{
	struct axis a;

	if (!(hi >= lo)) {
		lo = 0;
		hi = 1;
	}
	if (zero) {
		lo = fmin(lo, 0);
		hi = fmax(hi, 0);
	}
	double span = hi - lo;

	if (span <= 0) {
		span = fabs(hi) > 0 ? fabs(hi) * 0.1 : 1;
		lo -= span / 2;
		hi += span / 2;
	}
	if (margin) {
		if (!(zero && lo == 0))
			lo -= MARGIN * span;
		hi += MARGIN * span;
	}
	if (!isnan(floor_))
		lo = fmax(lo, floor_);
	if (!isnan(ceil_))
		hi = fmin(hi, ceil_);
	a.step = nice_step(hi - lo);
	a.lo = floor(lo / a.step + 1e-9) * a.step;
	a.hi = ceil(hi / a.step - 1e-9) * a.step;
	if (!isnan(floor_))
		a.lo = fmax(a.lo, floor_);
	if (!isnan(ceil_))
		a.hi = fmin(a.hi, ceil_);
	if (a.hi <= a.lo)
		a.hi = a.lo + a.step;
	a.decimals = step_decimals(a.step);
	return a;
}

static double scale(const struct axis *a, double v, double p0, double len)
{
	return p0 + len * (v - a->lo) / (a->hi - a->lo);
}

static void figure_begin(struct gf_obuf *out, const char *title, const char *summary, int w, int h)
{
	gf_obuf_puts(out, "<figure class=\"chart\"><figcaption><h3>");
	gf_html_text(out, title);
	gf_obuf_puts(out, "</h3>");
	if (summary) {
		gf_obuf_puts(out, "<p class=\"s\">");
		gf_html_text(out, summary);
		gf_obuf_puts(out, "</p>");
	}
	gf_obuf_printf(out, "</figcaption>\n<div class=\"cw\"><svg class=\"c\" viewBox=\"0 0 %d %d\" role=\"img\" "
			    "aria-label=\"", w, h);
	gf_html_text(out, title);
	gf_obuf_puts(out, "\">\n");
}

static void figure_end(struct gf_obuf *out)
{
	gf_obuf_puts(out, "</svg></div></figure>\n");
}

/* Width in viewBox units that a label of s takes at 12.5 px bold (a generous mean glyph width). */
static double text_width(const char *s)
{
	return 7.8 * (double)strlen(s);
}

struct endlabel {
	int line;
	double y;
};

static int by_y(const void *a, const void *b)
{
	const struct endlabel *x = a, *y = b;

	if (x->y != y->y)
		return x->y < y->y ? -1 : 1;
	return x->line - y->line;	/* stable: same bytes every time */
}

void gf_html_line_chart(struct gf_obuf *out, const struct gf_line_chart *c)
{
	double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY, mr = 40;
	const int ml = 62, mt = 12, mb = 46;

	for (int l = 0; l < c->nlines; l++) {
		const struct gf_chart_line *ln = &c->lines[l];

		for (size_t i = 0; i < ln->n; i++) {
			if (isnan(ln->y[i]))
				continue;
			xlo = fmin(xlo, ln->x[i]);
			xhi = fmax(xhi, ln->x[i]);
			ylo = fmin(ylo, ln->y[i]);
			yhi = fmax(yhi, ln->y[i]);
		}
		mr = fmax(mr, text_width(ln->label) + 16);
	}
	mr = fmin(mr, 230);
	if (!(xhi > xlo)) {
		xlo = isfinite(xlo) ? xlo : 0;
		xhi = xlo + 1;
	}
	struct axis xa = make_axis(xlo, xhi, false, false, xlo, xhi);
	struct axis ya = make_axis(ylo, yhi, true, c->y_zero, c->y_floor, c->y_ceil);
	double pw = CW - ml - mr, ph = CH - mt - mb, bottom = mt + ph;
	int hover = c->hover_points > 0 ? c->hover_points : 48;

	figure_begin(out, c->title, c->summary, CW, CH);
	/* grid and y ticks */
	for (int i = 0;; i++) {
		double v = ya.lo + ya.step * i;

		if (v > ya.hi + ya.step * 1e-6)
			break;
		double y = scale(&ya, v, bottom, -ph);

		gf_obuf_printf(out, "<line class=\"g\" x1=\"%d\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
				    "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.*f</text>\n",
			       ml, ml + pw, y, y, ml - 6, y + 4, ya.decimals, fabs(v) < 1e-12 ? 0.0 : v);
	}
	/* x ticks: multiples of the step inside the data range */
	for (double v = ceil(xa.lo / xa.step - 1e-9) * xa.step; v <= xa.hi + xa.step * 1e-6; v += xa.step) {
		double x = scale(&xa, v, ml, pw);

		gf_obuf_printf(out, "<line class=\"ax\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
				    "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%.*f</text>\n",
			       x, x, bottom, bottom + 4, x, bottom + 17, xa.decimals, fabs(v) < 1e-12 ? 0.0 : v);
	}
	gf_obuf_printf(out, "<line class=\"ax\" x1=\"%d\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>\n", ml, ml + pw,
		       bottom, bottom);
	gf_obuf_printf(out, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">", ml + pw / 2, CH - 8);
	gf_html_text(out, c->x_label);
	gf_obuf_printf(out, "</text>\n<text x=\"14\" y=\"%.1f\" text-anchor=\"middle\" transform=\"rotate(-90 14 %.1f)\">",
		       mt + ph / 2, mt + ph / 2);
	gf_html_text(out, c->y_label);
	gf_obuf_puts(out, "</text>\n");

	struct endlabel *ends = calloc((size_t)(c->nlines > 0 ? c->nlines : 1), sizeof(*ends));
	int nends = 0;

	for (int l = 0; l < c->nlines; l++) {
		const struct gf_chart_line *ln = &c->lines[l];
		const char *col = ln->colour ? ln->colour : gf_html_colour(l);
		size_t stride = ln->n > (size_t)hover ? (ln->n + (size_t)hover - 1) / (size_t)hover : 1, last = ln->n;
		bool pen = false;

		gf_obuf_puts(out, "<g><title>");
		gf_html_text(out, ln->label);
		gf_obuf_printf(out, "</title><path fill=\"none\" stroke=\"%s\" stroke-width=\"%s\"%s d=\"", col,
			       ln->thin ? "1.3" : "2.2", ln->thin ? " stroke-dasharray=\"5 3\"" : "");
		for (size_t i = 0; i < ln->n; i++) {
			if (isnan(ln->y[i])) {
				pen = false;
				continue;
			}
			gf_obuf_printf(out, "%c%.1f %.1f", pen ? 'L' : 'M', scale(&xa, ln->x[i], ml, pw),
				       scale(&ya, fmin(fmax(ln->y[i], ya.lo), ya.hi), bottom, -ph));
			pen = true;
			last = i;
		}
		gf_obuf_puts(out, "\"/>\n");
		for (size_t i = 0; i < ln->n; i++) {
			if (isnan(ln->y[i]) || (i % stride && i != last))
				continue;
			gf_obuf_printf(out, "<circle class=\"%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"%s\" fill=\"%s\"><title>",
				       i == last ? "e" : "p", scale(&xa, ln->x[i], ml, pw),
				       scale(&ya, fmin(fmax(ln->y[i], ya.lo), ya.hi), bottom, -ph),
				       i == last ? "3" : "4.5", col);
			gf_html_text(out, ln->label);
			gf_obuf_printf(out, ": %.*f%s at %.*f%s</title></circle>\n", c->y_decimals, ln->y[i],
				       c->y_unit ? c->y_unit : "", c->x_decimals, ln->x[i], c->x_unit ? c->x_unit : "");
		}
		gf_obuf_puts(out, "</g>\n");
		if (last < ln->n && ends) {
			ends[nends].line = l;
			ends[nends].y = scale(&ya, fmin(fmax(ln->y[last], ya.lo), ya.hi), bottom, -ph);
			nends++;
		}
	}
	if (ends && nends) {
		qsort(ends, (size_t)nends, sizeof(*ends), by_y);
		for (int i = 1; i < nends; i++)
			ends[i].y = fmax(ends[i].y, ends[i - 1].y + LABEL_GAP);
		if (ends[nends - 1].y > bottom + 4)
			ends[nends - 1].y = bottom + 4;
		for (int i = nends - 2; i >= 0; i--)
			ends[i].y = fmin(ends[i].y, ends[i + 1].y - LABEL_GAP);
		for (int i = 0; i < nends; i++) {
			const struct gf_chart_line *ln = &c->lines[ends[i].line];

			gf_obuf_printf(out, "<text class=\"lb\" x=\"%.1f\" y=\"%.1f\" style=\"fill:%s\">", ml + pw + 8,
				       ends[i].y + 4, ln->colour ? ln->colour : gf_html_colour(ends[i].line));
			gf_html_text(out, ln->label);
			gf_obuf_puts(out, "</text>\n");
		}
	}
	free(ends);
	figure_end(out);
}

void gf_html_dot_chart(struct gf_obuf *out, const struct gf_dot_chart *c)
{
	double lo = INFINITY, hi = -INFINITY, ml = 60;
	const int row = 28, mt = 10, mr = 76;

	for (int i = 0; i < c->nrows; i++) {
		const struct gf_dot_row *r = &c->rows[i];

		if (!isnan(r->value)) {
			lo = fmin(lo, r->value);
			hi = fmax(hi, r->value);
		}
		if (!isnan(r->mark)) {
			lo = fmin(lo, r->mark);
			hi = fmax(hi, r->mark);
		}
		ml = fmax(ml, text_width(r->label) + 18);
	}
	ml = fmin(ml, 240);
	struct axis a = make_axis(lo, hi, true, c->x_zero, c->x_floor, c->x_ceil);
	double pw = CW - ml - mr, bottom = mt + (double)row * c->nrows;
	int h = (int)bottom + 56;

	figure_begin(out, c->title, c->summary, CW, h);
	for (int i = 0;; i++) {
		double v = a.lo + a.step * i;

		if (v > a.hi + a.step * 1e-6)
			break;
		double x = scale(&a, v, ml, pw);

		gf_obuf_printf(out, "<line class=\"g\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%.1f\"/>"
				    "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%.*f</text>\n",
			       x, x, mt, bottom, x, bottom + 16, a.decimals, fabs(v) < 1e-12 ? 0.0 : v);
	}
	gf_obuf_printf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", ml + pw / 2, bottom + 34);
	gf_html_text(out, c->x_label);
	gf_obuf_puts(out, "</text>\n");
	for (int i = 0; i < c->nrows; i++) {
		const struct gf_dot_row *r = &c->rows[i];
		const char *col = r->colour ? r->colour : gf_html_colour(i);
		double y = mt + row * (i + 0.5);

		gf_obuf_printf(out, "<text class=\"lb\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" style=\"fill:%s\">",
			       ml - 8, y + 4, col);
		gf_html_text(out, r->label);
		gf_obuf_puts(out, "</text>\n");
		if (!isnan(r->value)) {
			double x = scale(&a, fmin(fmax(r->value, a.lo), a.hi), ml, pw);

			gf_obuf_printf(out, "<g><path stroke=\"%s\" stroke-width=\"3\" d=\"M%.1f %.1fL%.1f %.1f\"/>"
					    "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"6\" fill=\"%s\"><title>",
				       col, ml, y, x, y, x, y, col);
			gf_html_text(out, r->label);
			gf_obuf_printf(out, ", %s: %.*f%s</title></circle>", c->value_name, c->decimals, r->value,
				       c->unit ? c->unit : "");
			gf_obuf_printf(out, "<text x=\"%.1f\" y=\"%.1f\">%.*f%s</text></g>\n",
				       fmax(x, isnan(r->mark) ? x : scale(&a, r->mark, ml, pw)) + 10, y + 4,
				       c->decimals, r->value, c->unit ? c->unit : "");
		}
		if (c->mark_name && !isnan(r->mark)) {
			double x = scale(&a, fmin(fmax(r->mark, a.lo), a.hi), ml, pw);

			gf_obuf_printf(out, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#111\" "
					    "stroke-width=\"2.5\"><title>", x, x, y - 9, y + 9);
			gf_html_text(out, r->label);
			gf_obuf_printf(out, ", %s: %.*f%s</title></line>\n", c->mark_name, c->decimals, r->mark,
				       c->unit ? c->unit : "");
		}
	}
	/* legend */
	gf_obuf_printf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"#666\"/><text x=\"%.1f\" y=\"%.1f\">",
		       ml + 6, bottom + 47, ml + 16, bottom + 51);
	gf_html_text(out, c->value_name);
	gf_obuf_puts(out, "</text>\n");
	if (c->mark_name) {
		double x = ml + 40 + text_width(c->value_name);

		gf_obuf_printf(out, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#111\" "
				    "stroke-width=\"2.5\"/><text x=\"%.1f\" y=\"%.1f\">", x, x, bottom + 40, bottom + 54,
			       x + 8, bottom + 51);
		gf_html_text(out, c->mark_name);
		gf_obuf_puts(out, "</text>\n");
	}
	figure_end(out);
}
