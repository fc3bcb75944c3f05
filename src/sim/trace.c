/*
 * sim/trace.c - CSV trace parsers.
 *
 * One pass over the buffer, one line at a time (core/csv.h's reader,
 * bounded by GF_TRACE_LINE_MAX), fields split on ',' into slices; the
 * header maps column names to positions.  Every value is checked for syntax
 * and range before it is stored; the first error stops the parse and the
 * partial output is freed, so a caller never sees half a trace.  A UTF-8
 * byte-order mark before the header (spreadsheets save one) is skipped.
 * A pod's gpu_milli follows gf_gpu_milli_parse (cluster/model.h), the rule
 * of the scheduler's annotation and extended resource, with one addition:
 * 0 means no GPU share (a CPU-only pod, num_gpu 0); num_gpu 0 with a share is
 * refused, as num_gpu > 0 without one is.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/csv.h"
#include "core/grow.h"
#include "core/text.h"
#include "sim/trace.h"

struct column {
	const char *name;
	bool required;
	int index;	/* position in the header; -1 if absent */
};

static gf_err read_header(struct gf_csv *r, struct column *cols, int ncols, const char *what)
{
	gf_err code = GF_OK;
	int got;

	r->cur += gf_utf8_bom_len(r->cur, (size_t)(r->end - r->cur));	/* spreadsheets write one */
	got = gf_csv_next(r, &code);

	if (got < 0)
		return code;
	if (got == 0) {
		r->lineno = r->lineno ? r->lineno : 1;
		return gf_csv_fail(r, GF_PARSE, "file is empty; expected a header line naming the %s columns",
				   what);
	}
	for (int c = 0; c < ncols; c++) {
		cols[c].index = gf_csv_find(r, cols[c].name);
		if (cols[c].index < 0 && cols[c].required)
			return gf_csv_fail(r, GF_PARSE, "header lacks the column \"%s\" (a %s list needs %s)",
					   cols[c].name, what, what[0] == 'n' ? "sn,cpu_milli,memory_mib,gpu,model" :
					   what[0] == 't' ? "name,cpu_milli,memory_mib,num_gpu,gpu_milli[,gpu_spec]"
							    ",creation_time,deletion_time[,scheduled_time][,qos]" :
					   "name,cpu_milli,memory_mib,num_gpu,gpu_milli[,gpu_spec]");
	}
	return GF_OK;
}

/* The field of column c on the current line; an error if the line is too short. */
static gf_err field_of(struct gf_csv *r, const struct column *c, struct gf_csv_field *out)
{
	if (c->index < 0) {
		out->p = "";
		out->len = 0;
		return GF_OK;
	}
	if (c->index >= r->nfields)
		return gf_csv_fail(r, GF_PARSE, "column %d (%s) is missing: the line has %d columns",
				   c->index + 1, c->name, r->nfields);
	*out = r->field[c->index];
	return GF_OK;
}

static gf_err get_int(struct gf_csv *r, const struct column *c, int64_t min, int64_t max,
		      int64_t *out)
{
	struct gf_csv_field s = { "", 0 };
	char buf[64], shown[64];
	gf_err err = field_of(r, c, &s);
	int64_t v = 0;

	if (err)
		return err;
	if (s.len == 0 || s.len >= sizeof(buf))
		goto bad;
	for (size_t i = 0; i < s.len; i++) {
		if (s.p[i] < '0' || s.p[i] > '9') {
			if (i == 0 && s.p[i] == '-' && s.len > 1)
				continue;
			goto bad;
		}
	}
	memcpy(buf, s.p, s.len);
	buf[s.len] = '\0';
	errno = 0;
	v = strtoll(buf, NULL, 10);
	if (errno == ERANGE || v < min || v > max)
		return gf_csv_fail(r, GF_PARSE, "column %d (%s): expected an integer in %lld..%lld, found %s",
				   c->index + 1, c->name, (long long)min, (long long)max,
				   gf_csv_quote(&s, shown, sizeof(shown)));
	*out = v;
	return GF_OK;
bad:
	return gf_csv_fail(r, GF_PARSE, "column %d (%s): expected %s integer, found %s", c->index + 1,
			   c->name, min >= 0 ? "a non-negative" : "an", gf_csv_quote(&s, shown, sizeof(shown)));
}

/*
 * gpu_milli: gf_gpu_milli_parse's rule (1..GF_MILLI_PER_GPU), 0 allowed for
 * "no share"; the errors read as get_int's for 0..GF_MILLI_PER_GPU.
 */
static gf_err get_milli(struct gf_csv *r, const struct column *c, int64_t *out)
{
	struct gf_csv_field s = { "", 0 };
	char shown[64];
	gf_err err = field_of(r, c, &s);
	int v;

	if (err)
		return err;
	err = gf_gpu_milli_parse(s.p, s.len, &v);
	if (err == GF_PARSE)
		return gf_csv_fail(r, GF_PARSE, "column %d (%s): expected a non-negative integer, found %s", c->index + 1,
				   c->name, gf_csv_quote(&s, shown, sizeof(shown)));
	if (err && v != 0)
		return gf_csv_fail(r, GF_PARSE, "column %d (%s): expected an integer in 0..%d, found %s", c->index + 1,
				   c->name, GF_MILLI_PER_GPU, gf_csv_quote(&s, shown, sizeof(shown)));
	*out = v;
	return GF_OK;
}

static gf_err get_name(struct gf_csv *r, const struct column *c, char *out, size_t outlen)
{
	struct gf_csv_field s = { "", 0 };
	gf_err err = field_of(r, c, &s);

	if (err)
		return err;
	if (s.len == 0)
		return gf_csv_fail(r, GF_PARSE, "column %d (%s): expected a name, found an empty field",
				   c->index + 1, c->name);
	if (s.len >= outlen)
		return gf_csv_fail(r, GF_TOOBIG, "column %d (%s): name is %zu bytes; the limit is %zu",
				   c->index + 1, c->name, s.len, outlen - 1);
	memcpy(out, s.p, s.len);
	out[s.len] = '\0';
	return GF_OK;
}

/* Grow *arr (of elem-size items) to hold at least n+1. */
static gf_err reserve(void **arr, size_t *cap, size_t n, size_t elem)
{
	if (n < *cap)
		return GF_OK;
	if (n >= GF_TRACE_MAX_ROWS)
		return GF_TOOBIG;
	return gf_grow(arr, cap, n + 1, elem, 1024);
}

#define CPU_MAX 1000000000LL	/* a million cores, in milli-CPU */
#define MEM_MAX 1000000000LL	/* ~950 TiB, in MiB */

enum { N_SN, N_CPU, N_MEM, N_GPU, N_MODEL, N_NCOLS };

gf_err gf_trace_parse_nodes(const char *data, size_t len, const char *file, struct gf_catalog *cat,
			    struct gf_node_spec **out, size_t *n, struct gf_trace_error *err)
{
	struct gf_csv r;
	struct column cols[N_NCOLS] = {
		[N_SN] = { "sn", true, -1 }, [N_CPU] = { "cpu_milli", true, -1 },
		[N_MEM] = { "memory_mib", true, -1 }, [N_GPU] = { "gpu", true, -1 },
		[N_MODEL] = { "model", true, -1 },
	};
	struct gf_node_spec *nodes = NULL;
	size_t count = 0, cap = 0;
	gf_err code;
	int got;

	gf_csv_init(&r, data, len, file, GF_TRACE_LINE_MAX, err->msg, sizeof(err->msg));
	*out = NULL;
	*n = 0;
	code = read_header(&r, cols, N_NCOLS, "node");
	if (code)
		return code;
	while ((got = gf_csv_next(&r, &code)) > 0) {
		struct gf_node_spec *s;
		int64_t v;
		struct gf_csv_field model = { "", 0 };

		code = reserve((void **)&nodes, &cap, count, sizeof(*nodes));
		if (code) {
			gf_csv_fail(&r, code, "cannot hold more nodes (%s)", gf_strerror(code));
			goto fail;
		}
		s = &nodes[count];
		memset(s, 0, sizeof(*s));
		s->model = -1;
		for (int g = 0; g < GF_MAX_GPUS; g++)
			s->topo[g] = (struct gf_gpu_topo){ -1, -1 };
		if ((code = get_name(&r, &cols[N_SN], s->name, sizeof(s->name))) ||
		    (code = get_int(&r, &cols[N_CPU], 0, CPU_MAX, &s->cpu_milli)) ||
		    (code = get_int(&r, &cols[N_MEM], 0, MEM_MAX, &s->mem_mib)) ||
		    (code = get_int(&r, &cols[N_GPU], 0, GF_MAX_GPUS, &v)) ||
		    (code = field_of(&r, &cols[N_MODEL], &model)))
			goto fail;
		s->ngpus = (int)v;
		if (s->ngpus > 0 && model.len > 0) {
			code = gf_catalog_model(cat, model.p, model.len, &s->model);
			if (code) {
				gf_csv_fail(&r, code, "column %d (model): %s", cols[N_MODEL].index + 1,
					    code == GF_TOOBIG ? "more distinct GPU models than the limit of 64"
							      : "GPU model name too long (limit 63 bytes)");
				goto fail;
			}
		}
		count++;
	}
	if (got < 0)
		goto fail;
	if (count == 0) {
		code = gf_csv_fail(&r, GF_PARSE, "no nodes: expected at least one line after the header");
		goto fail;
	}
	*out = nodes;
	*n = count;
	return GF_OK;
fail:
	free(nodes);
	return code ? code : GF_PARSE;
}

enum { P_NAME, P_CPU, P_MEM, P_NGPU, P_MILLI, P_SPEC, P_CREATED, P_DELETED, P_SCHEDULED, P_QOS,
       P_GANG, P_NCOLS };

#define TIME_MAX 4000000000000LL	/* ~127,000 years in seconds */

static const char *const qos_names[GF_QOS_COUNT] = {
	[GF_QOS_NONE] = "", [GF_QOS_LS] = "LS", [GF_QOS_BE] = "BE",
	[GF_QOS_BURSTABLE] = "Burstable", [GF_QOS_GUARANTEED] = "Guaranteed",
};

/*
 * The time columns of a pod: arrival creation_time, duration deletion_time
 * - scheduled_time, or deletion_time - creation_time for a pod never
 * scheduled (empty scheduled_time or no such column); for a timed list (t)
 * also *t with the qos.  A timed list must give creation_time and
 * deletion_time.  An untimed list may leave them out or empty (simulate's
 * cost section bills what is there): without a creation time the pod keeps
 * arrival 0 and duration -1, without a deletion time duration -1; its header
 * is read without scheduled_time and qos, so it bills deletion - creation.
 */
static gf_err get_times(struct gf_csv *r, const struct column *cols, struct gf_pod_spec *p,
			struct gf_pod_times *t)
{
	struct gf_csv_field s = { "", 0 };
	char shown[64];
	int64_t created = 0, deleted = 0, scheduled = -1;
	gf_err code;

	if (!t && ((code = field_of(r, &cols[P_CREATED], &s)) || !s.len))
		return code;
	if ((code = get_int(r, &cols[P_CREATED], 0, TIME_MAX, &created)))
		return code;
	p->arrival = created;
	if (!t && ((code = field_of(r, &cols[P_DELETED], &s)) || !s.len))
		return code;
	if ((code = get_int(r, &cols[P_DELETED], 0, TIME_MAX, &deleted)) ||
	    (code = field_of(r, &cols[P_SCHEDULED], &s)))
		return code;
	if (s.len > 0 && (code = get_int(r, &cols[P_SCHEDULED], 0, TIME_MAX, &scheduled)))
		return code;
	if (scheduled >= 0 && scheduled < created)
		return gf_csv_fail(r, GF_PARSE, "column %d (scheduled_time): %lld is before the creation_time %lld",
				   cols[P_SCHEDULED].index + 1, (long long)scheduled, (long long)created);
	if (deleted < (scheduled >= 0 ? scheduled : created))
		return gf_csv_fail(r, GF_PARSE, "column %d (deletion_time): %lld is before the %s %lld: a negative duration",
				   cols[P_DELETED].index + 1, (long long)deleted,
				   scheduled >= 0 ? "scheduled_time" : "creation_time",
				   (long long)(scheduled >= 0 ? scheduled : created));
	p->duration = deleted - (scheduled >= 0 ? scheduled : created);
	if (!t)
		return GF_OK;
	if ((code = field_of(r, &cols[P_QOS], &s)))
		return code;
	t->qos = GF_QOS_COUNT;
	for (int q = 0; q < GF_QOS_COUNT; q++)
		if (s.len == strlen(qos_names[q]) && !memcmp(s.p, qos_names[q], s.len))
			t->qos = (enum gf_qos)q;
	if (t->qos == GF_QOS_COUNT)
		return gf_csv_fail(r, GF_PARSE, "column %d (qos): expected LS, BE, Burstable, Guaranteed or nothing, found %s",
				   cols[P_QOS].index + 1, gf_csv_quote(&s, shown, sizeof(shown)));
	int64_t npods = 1;
	if ((code = field_of(r, &cols[P_GANG], &s)) ||
	    (s.len > 0 && (code = get_int(r, &cols[P_GANG], 1, GF_TRACE_MAX_GANG, &npods))))
		return code;
	t->npods = (uint32_t)npods;
	t->creation = created;
	t->deletion = deleted;
	t->scheduled = scheduled;
	return GF_OK;
}

static gf_err parse_pods(const char *data, size_t len, const char *file, struct gf_catalog *cat,
			 struct gf_pod_spec **out, size_t *n, struct gf_pod_times **times,
			 struct gf_trace_error *err)
{
	struct gf_csv r;
	struct column cols[P_NCOLS] = {
		[P_NAME] = { "name", true, -1 }, [P_CPU] = { "cpu_milli", true, -1 },
		[P_MEM] = { "memory_mib", true, -1 }, [P_NGPU] = { "num_gpu", true, -1 },
		[P_MILLI] = { "gpu_milli", true, -1 }, [P_SPEC] = { "gpu_spec", false, -1 },
		[P_CREATED] = { "creation_time", true, -1 }, [P_DELETED] = { "deletion_time", true, -1 },
		[P_SCHEDULED] = { "scheduled_time", false, -1 }, [P_QOS] = { "qos", false, -1 },
		[P_GANG] = { "pods", false, -1 },
	};
	struct gf_pod_spec *pods = NULL;
	struct gf_pod_times *tms = NULL;
	size_t count = 0, cap = 0, tcap = 0;
	gf_err code;
	int got;

	gf_csv_init(&r, data, len, file, GF_TRACE_LINE_MAX, err->msg, sizeof(err->msg));
	*out = NULL;
	*n = 0;
	if (!times) /* an untimed list may carry the time columns: cost reads them */
		cols[P_CREATED].required = cols[P_DELETED].required = false;
	code = read_header(&r, cols, times ? P_NCOLS : P_SCHEDULED, times ? "timed pod" : "pod");
	if (code)
		return code;
	while ((got = gf_csv_next(&r, &code)) > 0) {
		struct gf_pod_spec *p;
		int64_t ngpu, milli = 0;
		struct gf_csv_field spec = { "", 0 };

		code = reserve((void **)&pods, &cap, count, sizeof(*pods));
		if (!code && times)
			code = reserve((void **)&tms, &tcap, count, sizeof(*tms));
		if (code) {
			gf_csv_fail(&r, code, "cannot hold more pods (%s)", gf_strerror(code));
			goto fail;
		}
		p = &pods[count];
		memset(p, 0, sizeof(*p));
		p->duration = -1;
		if ((code = get_name(&r, &cols[P_NAME], p->name, sizeof(p->name))) ||
		    (code = get_int(&r, &cols[P_CPU], 0, CPU_MAX, &p->cpu_milli)) ||
		    (code = get_int(&r, &cols[P_MEM], 0, MEM_MAX, &p->mem_mib)) ||
		    (code = get_int(&r, &cols[P_NGPU], 0, GF_MAX_GPUS, &ngpu)) ||
		    (code = get_milli(&r, &cols[P_MILLI], &milli)) ||
		    (code = field_of(&r, &cols[P_SPEC], &spec)) ||
		    (code = get_times(&r, cols, p, times ? &tms[count] : NULL)))
			goto fail;
		if (ngpu == 0 && milli != 0) {
			code = gf_csv_fail(&r, GF_PARSE,
					   "column %d (gpu_milli): a pod with num_gpu 0 takes no GPU share, found %lld "
					   "(write 0, or give num_gpu)",
					   cols[P_MILLI].index + 1, (long long)milli);
			goto fail;
		}
		if (ngpu > 0) {
			if (milli == 0) {
				code = gf_csv_fail(&r, GF_PARSE,
						   "column %d (gpu_milli): a pod asking for %lld GPU(s) needs a share in 1..1000, found 0",
						   cols[P_MILLI].index + 1, (long long)ngpu);
				goto fail;
			}
			p->gpu_count = (int)ngpu;
			p->gpu_milli = (int)milli;
			code = gf_catalog_spec(cat, spec.p, spec.len, &p->spec);
			if (code) {
				gf_csv_fail(&r, code, "column %d (gpu_spec): %s", cols[P_SPEC].index + 1,
					    code == GF_NOMEM ? "out of memory"
							     : "constraint too long or too many distinct models/constraints");
				goto fail;
			}
		}
		count++;
	}
	if (got < 0)
		goto fail;
	if (count == 0) {
		code = gf_csv_fail(&r, GF_PARSE, "no pods: expected at least one line after the header");
		goto fail;
	}
	*out = pods;
	*n = count;
	if (times)
		*times = tms;
	return GF_OK;
fail:
	free(pods);
	free(tms);
	return code ? code : GF_PARSE;
}

gf_err gf_trace_parse_pods(const char *data, size_t len, const char *file, struct gf_catalog *cat,
			   struct gf_pod_spec **out, size_t *n, struct gf_trace_error *err)
{
	return parse_pods(data, len, file, cat, out, n, NULL, err);
}

gf_err gf_trace_parse_pods_timed(const char *data, size_t len, const char *file,
				 struct gf_catalog *cat, struct gf_pod_spec **out, size_t *n,
				 struct gf_pod_times **times, struct gf_trace_error *err)
{
	*times = NULL;
	return parse_pods(data, len, file, cat, out, n, times, err);
}

