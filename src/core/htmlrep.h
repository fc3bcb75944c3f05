/*
 * core/htmlrep.h - the pieces of gpufleet's self-contained HTML reports:
 * page frame and style, escaped text, tables, and inline-SVG charts.
 *
 * Everything renders into a capped gf_obuf (errors are sticky there: check
 * gf_obuf_error() once at the end).  No scripts, no fonts, nothing loaded
 * from the network; the same input gives the same bytes.  Pages are
 * responsive: charts scale to the page width, a wide table scrolls inside
 * its own box, the page itself never scrolls sideways.
 */
#ifndef GF_CORE_HTMLREP_H
#define GF_CORE_HTMLREP_H

#include <stdbool.h>
#include <stddef.h>

#include "core/obuf.h"

/* The i-th colour of the reports' palette (cycles). */
const char *gf_html_colour(int i);

/* s with < > & " escaped. */
void gf_html_text(struct gf_obuf *out, const char *s);
/* The same for the n bytes at s (no NUL needed). */
void gf_html_textn(struct gf_obuf *out, const char *s, size_t n);
/* Each non-empty line of text (lines end in '\n') as <p class="cls">, escaped. */
void gf_html_paragraphs(struct gf_obuf *out, const char *text, const char *cls);

/* <!DOCTYPE html> ... <body><main><h1>h1</h1>; title and h1 are escaped. */
void gf_html_begin(struct gf_obuf *out, const char *title, const char *h1);
/* </main></body></html> */
void gf_html_end(struct gf_obuf *out);

/*
 * A table: gf_html_table_begin writes caption (NULL: none) as a paragraph
 * above, then opens the scrolling box and the table,
 * then rows of cells.  A numeric cell (gf_html_td_num) is right-aligned;
 * NAN prints "-".  Cell text is escaped.
 */
void gf_html_table_begin(struct gf_obuf *out, const char *caption);
void gf_html_table_end(struct gf_obuf *out);
void gf_html_tr(struct gf_obuf *out);	/* closes the previous row if open */
void gf_html_th(struct gf_obuf *out, const char *text, int colspan);
void gf_html_td(struct gf_obuf *out, const char *text);
void gf_html_td_num(struct gf_obuf *out, double v, int decimals);

/* One line of a line chart: n points (x[i], y[i]); a NAN y leaves a gap. */
struct gf_chart_line {
	const char *label;
	const char *colour;	/* NULL: the palette's colour for its index */
	size_t n;
	const double *x, *y;
	bool thin;		/* drawn thinner and dashed (a context line) */
};

/*
 * A line chart.  The y range is the data's, with a margin of 8 % of the
 * span each side, rounded out to "nice" ticks (1, 2, 2.5, 5 x 10^k), so
 * the differences between the lines fill the plot; y_zero forces 0 in,
 * y_floor/y_ceil (NAN for none) clip the range (e.g. 0 and 100 for a
 * percentage).  Each line's label sits beside its last point (labels
 * pushed apart so they do not overlap); up to hover_points points per
 * line carry an SVG <title> with the value (shown on hover).
 */
struct gf_line_chart {
	const char *title;	/* the chart's heading */
	const char *summary;	/* one sentence under the heading, may be NULL */
	const char *x_label, *y_label;	/* axis titles, with units */
	const char *x_unit, *y_unit;	/* appended to values in hovers, e.g. " h", " %" */
	int x_decimals, y_decimals;	/* of hover values */
	bool y_zero;
	double y_floor, y_ceil;
	int hover_points;	/* 0: 48 */
	int nlines;
	const struct gf_chart_line *lines;
};
void gf_html_line_chart(struct gf_obuf *out, const struct gf_line_chart *c);

/* One row of a dot chart: a dot at value, a tick at mark (NAN: none). */
struct gf_dot_row {
	const char *label;
	const char *colour;	/* NULL: the palette's colour for its index */
	double value, mark;
};

/*
 * A dot chart: one row per item, a line from the axis start to a dot at
 * its value, the value written beside it, an optional black tick (mark).
 * The x range is zoomed to the data like a line chart's y range.
 */
struct gf_dot_chart {
	const char *title, *summary;
	const char *x_label;	/* with units */
	const char *unit;	/* appended to values, e.g. " %" */
	const char *value_name, *mark_name;	/* legend: what the dot and the tick are; mark_name NULL: no tick */
	int decimals;
	bool x_zero;
	double x_floor, x_ceil;
	int nrows;
	const struct gf_dot_row *rows;
};
void gf_html_dot_chart(struct gf_obuf *out, const struct gf_dot_chart *c);

#endif /* GF_CORE_HTMLREP_H */
