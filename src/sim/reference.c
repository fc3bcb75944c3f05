/*
 * sim/reference.c - parser for the paper's reference results (small CSV).
 *
 * Fixed column order, checked against the header (a UTF-8 byte-order mark
 * before it is skipped); numbers with strtod and full-field validation.  The file is a few dozen lines, so a linear lookup
 * is all it needs.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "core/text.h"
#include "sim/reference.h"

static const char header[] =
	"workload,policy,seeds,alloc_at_100,alloc_at_130,alloc_min_130,alloc_max_130,frag_at_100,frag_at_130";

#define NCOLS 9

static gf_err perr(struct gf_trace_error *err, const char *file, long line, const char *what)
{
	snprintf(err->msg, sizeof(err->msg), "%s:%ld: %s", file, line, what);
	return GF_PARSE;
}

gf_err gf_reference_parse(const char *data, size_t len, const char *file, struct gf_reference *out,
			  struct gf_trace_error *err)
{
	const char *cur = data + gf_utf8_bom_len(data, len), *end = data + len;
	long lineno = 0;
	size_t cap = 0;
	char what[160];

	memset(out, 0, sizeof(*out));
	while (cur < end) {
		const char *nl = memchr(cur, '\n', (size_t)(end - cur));
		size_t l = nl ? (size_t)(nl - cur) : (size_t)(end - cur);
		char line[1024], *field[NCOLS];
		int nf = 0;

		lineno++;
		if (l > 0 && cur[l - 1] == '\r')
			l--;
		if (l >= sizeof(line)) {
			gf_reference_release(out);
			return perr(err, file, lineno, "line too long (limit 1023 bytes)");
		}
		memcpy(line, cur, l);
		line[l] = '\0';
		cur = nl ? nl + 1 : end;
		if (l == 0)
			continue;
		if (lineno == 1) {
			if (strcmp(line, header)) {
				snprintf(what, sizeof(what), "expected the header \"%.100s...\"", header);
				return perr(err, file, lineno, what);
			}
			continue;
		}
		for (char *p = line; nf < NCOLS;) {
			field[nf++] = p;
			p = strchr(p, ',');
			if (!p)
				break;
			*p++ = '\0';
		}
		if (nf != NCOLS || strchr(field[NCOLS - 1], ',')) {
			gf_reference_release(out);
			return perr(err, file, lineno, "expected 9 comma-separated columns");
		}
		if (gf_grow(&out->rows, &cap, out->n + 1, sizeof(*out->rows), 64)) {
			gf_reference_release(out);
			return GF_NOMEM;
		}
		struct gf_reference_row *row = &out->rows[out->n];
		double *num[] = { NULL, NULL, NULL, &row->alloc100, &row->alloc130, &row->alloc_min130,
				  &row->alloc_max130, &row->frag100, &row->frag130 };

		if (!field[0][0] || strlen(field[0]) >= GF_NAME_MAX || !field[1][0] ||
		    strlen(field[1]) >= GF_NAME_MAX) {
			gf_reference_release(out);
			return perr(err, file, lineno, "column 1 (workload) and 2 (policy): expected names of 1..63 bytes");
		}
		memcpy(row->workload, field[0], strlen(field[0]) + 1);	/* lengths checked above */
		memcpy(row->policy, field[1], strlen(field[1]) + 1);
		char *e;
		long seeds;

		errno = 0;
		seeds = strtol(field[2], &e, 10);
		if (errno || e == field[2] || *e || seeds <= 0 || seeds > 1000000) {
			gf_reference_release(out);
			return perr(err, file, lineno, "column 3 (seeds): expected a positive integer");
		}
		row->seeds = (int)seeds;
		for (int c = 3; c < NCOLS; c++) {
			errno = 0;
			*num[c] = strtod(field[c], &e);
			if (errno || e == field[c] || *e || !isfinite(*num[c]) || *num[c] < 0 || *num[c] > 100) {
				snprintf(what, sizeof(what), "column %d: expected a percentage 0..100, found \"%.32s\"",
					 c + 1, field[c]);
				gf_reference_release(out);
				return perr(err, file, lineno, what);
			}
		}
		out->n++;
	}
	if (lineno == 0)
		return perr(err, file, 1, "file is empty; expected the header line");
	return GF_OK;
}

void gf_reference_release(struct gf_reference *ref)
{
	free(ref->rows);
	memset(ref, 0, sizeof(*ref));
}

const struct gf_reference_row *gf_reference_find(const struct gf_reference *ref,
						 const char *workload, const char *policy)
{
	for (size_t i = 0; i < ref->n; i++)
		if (!strcmp(ref->rows[i].workload, workload) && !strcmp(ref->rows[i].policy, policy))
			return &ref->rows[i];
	return NULL;
}

struct gf_paper_figures gf_reference_figures(const struct gf_reference_row *row)
{
	struct gf_paper_figures f = { NAN, NAN, NAN, NAN };

	if (row) {
		f.alloc100 = row->alloc100;
		f.alloc130 = row->alloc130;
		f.frag100 = row->frag100;
		f.frag130 = row->frag130;
	}
	return f;
}
