/*
 * sim/queues.c - the queue file: YAML Queue objects into quotas.
 *
 * libyaml loads each document into its node graph; we walk the few known
 * keys (depth <= 4, so aliases cannot make the walk blow up) and refuse
 * anything else with one message naming the file, the line and the field
 * (spec.nominalQuota.gpus ...).  Quantities are plain decimal integers:
 * gpus (0..1000000) and gpuMilli (0..1000000000), summed into milli-GPU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "sim/queues.h"
#include "core/grow.h"

#define MAX_GPUS 1000000LL
#define MAX_MILLI 1000000000LL

struct ctx {
	yaml_document_t *doc;
	const char *file;
	struct gf_queues_error *err;
};

static int line_of(const yaml_node_t *n)
{
	return (int)n->start_mark.line + 1;
}

static gf_err fail(struct ctx *c, const yaml_node_t *n, const char *field, const char *what)
{
	if (*field)
		snprintf(c->err->msg, sizeof(c->err->msg), "%s:%d: %s: %s", c->file, n ? line_of(n) : 1, field, what);
	else	/* the document itself */
		snprintf(c->err->msg, sizeof(c->err->msg), "%s:%d: %s (a Queue object)", c->file,
			 n ? line_of(n) : 1, what);
	return GF_PARSE;
}

static const char *scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static bool scalar_is(const yaml_node_t *n, const char *s)
{
	return n->type == YAML_SCALAR_NODE && n->data.scalar.length == strlen(s) &&
	       !memcmp(n->data.scalar.value, s, n->data.scalar.length);
}

/* A plain decimal integer in [0, max]. */
static gf_err integer(struct ctx *c, const yaml_node_t *n, const char *field, int64_t max, int64_t *out)
{
	const char *s = scalar(n);
	int64_t v = 0;

	if (!s || !*s || n->data.scalar.length != strlen(s))
		return fail(c, n, field, "expected a non-negative integer");
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return fail(c, n, field, "expected a non-negative integer");
		v = v * 10 + (*p - '0');
		if (v > max) {
			char what[96];

			snprintf(what, sizeof(what), "%s is above the limit %lld", s, (long long)max);
			return fail(c, n, field, what);
		}
	}
	*out = v;
	return GF_OK;
}

/* A DNS-label-like name: [a-z0-9]([-a-z0-9.]*[a-z0-9])?, at most 63 bytes. */
static gf_err name(struct ctx *c, const yaml_node_t *n, const char *field, char *out)
{
	const char *s = scalar(n);
	size_t len = s ? strlen(s) : 0;

	if (!s || len == 0 || len >= GF_QUEUE_NAME_MAX || len != n->data.scalar.length)
		return fail(c, n, field, "expected a name of 1 to 63 characters");
	for (size_t i = 0; i < len; i++) {
		char ch = s[i];
		bool alnum = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');

		if (!alnum && !((ch == '-' || ch == '.') && i > 0 && i + 1 < len))
			return fail(c, n, field, "expected lower-case letters, digits, '-' and '.' (not at the ends)");
	}
	memcpy(out, s, len + 1);
	return GF_OK;
}

typedef gf_err (*field_fn)(struct ctx *c, const char *path, const yaml_node_t *v, void *arg);

struct field {
	const char *key;
	field_fn fn;
};

/* Walk mapping n: each key must be one of fields[]; a key twice is refused. */
static gf_err walk_map(struct ctx *c, const yaml_node_t *n, const char *path, const struct field *fields,
		       size_t nfields, void *arg)
{
	uint32_t seen = 0;
	char sub[192];

	if (!n || n->type != YAML_MAPPING_NODE)
		return fail(c, n, path, "expected a mapping");
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(c->doc, p->value);
		size_t f;
		gf_err err;

		for (f = 0; f < nfields && !(k && scalar_is(k, fields[f].key)); f++)
			;
		if (f == nfields) {
			const char *ks = scalar(k);

			snprintf(sub, sizeof(sub), "%.120s%s%.60s", path, *path ? "." : "", ks ? ks : "?");
			return fail(c, k, sub, "unknown field");
		}
		snprintf(sub, sizeof(sub), "%.120s%s%.40s", path, *path ? "." : "", fields[f].key);
		if (seen & (1u << f))
			return fail(c, k, sub, "given twice");
		seen |= 1u << f;
		if (!v)
			return fail(c, k, sub, "no value");
		if ((err = fields[f].fn(c, sub, v, arg)))
			return err;
	}
	return GF_OK;
}

/* ---- quantities: {gpus, gpuMilli} ---- */

struct qty {
	int64_t gpus, milli;
	bool set;
};

static gf_err f_gpus(struct ctx *c, const char *path, const yaml_node_t *v, void *arg)
{
	return integer(c, v, path, MAX_GPUS, &((struct qty *)arg)->gpus);
}

static gf_err f_gpu_milli(struct ctx *c, const char *path, const yaml_node_t *v, void *arg)
{
	return integer(c, v, path, MAX_MILLI, &((struct qty *)arg)->milli);
}

static gf_err quantity(struct ctx *c, const char *path, const yaml_node_t *v, int64_t *out)
{
	static const struct field f[] = { { "gpus", f_gpus }, { "gpuMilli", f_gpu_milli } };
	struct qty q = { 0 };
	gf_err err;

	if ((err = walk_map(c, v, path, f, 2, &q)))
		return err;
	*out = q.gpus * 1000 + q.milli;
	return GF_OK;
}

/* ---- perModel: [{model, gpus}] ---- */

struct model_arg {
	struct gf_queue_def *q;
	bool has_model, has_gpus;
};

static gf_err f_model(struct ctx *c, const char *path, const yaml_node_t *v, void *arg)
{
	struct model_arg *m = arg;
	const char *s = scalar(v);
	size_t len = s ? strlen(s) : 0;

	if (!s || len == 0 || len >= GF_QUEUE_NAME_MAX || len != v->data.scalar.length)
		return fail(c, v, path, "expected a GPU model name of 1 to 63 characters");
	memcpy(m->q->models[m->q->nmodels].model, s, len + 1);
	m->q->models[m->q->nmodels].line = line_of(v);
	m->has_model = true;
	return GF_OK;
}

static gf_err f_model_gpus(struct ctx *c, const char *path, const yaml_node_t *v, void *arg)
{
	struct model_arg *m = arg;
	int64_t g;
	gf_err err;

	if ((err = integer(c, v, path, MAX_GPUS, &g)))
		return err;
	m->q->models[m->q->nmodels].nominal = g * 1000;
	m->has_gpus = true;
	return GF_OK;
}

static gf_err f_per_model(struct ctx *c, const char *path, const yaml_node_t *v, void *arg)
{
	static const struct field f[] = { { "model", f_model }, { "gpus", f_model_gpus } };
	struct gf_queue_def *q = arg;
	char sub[192];

	if (v->type != YAML_SEQUENCE_NODE)
		return fail(c, v, path, "expected a list of {model, gpus}");
	for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
		yaml_node_t *e = yaml_document_get_node(c->doc, *it);
		struct model_arg m = { q, false, false };
		gf_err err;

		snprintf(sub, sizeof(sub), "%.120s[%u]", path, q->nmodels);
		if (q->nmodels == GF_QUOTA_MAX_MODELS)
			return fail(c, e, sub, "more than 8 models");
		if ((err = walk_map(c, e, sub, f, 2, &m)))
			return err;
		if (!m.has_model || !m.has_gpus)
			return fail(c, e, sub, m.has_model ? "gpus is missing" : "model is missing");
		for (uint32_t k = 0; k < q->nmodels; k++)
			if (!strcmp(q->models[k].model, q->models[q->nmodels].model))
				return fail(c, e, sub, "the model is listed twice");
		q->nmodels++;
	}
	return GF_OK;
}

/* ---- spec ---- */

static gf_err f_nominal(struct ctx *c, const char *path, const yaml_node_t *v, void *arg)
{
	static const struct field f[] = { { "gpus", f_gpus }, { "gpuMilli", f_gpu_milli }, { "perModel", NULL } };
	struct gf_queue_def *q = arg;
	struct qty t = { 0 };
	char sub[192];

	/* perModel fills q, the rest t: walk by hand to give each its argument */
	if (v->type != YAML_MAPPING_NODE)
		return fail(c, v, path, "expected a mapping");
	uint32_t seen = 0;

	for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
		yaml_node_t *val = yaml_document_get_node(c->doc, p->value);
		size_t i;
		gf_err err;

		for (i = 0; i < 3 && !(k && scalar_is(k, f[i].key)); i++)
			;
		if (i == 3) {
			const char *ks = scalar(k);

			snprintf(sub, sizeof(sub), "%.120s.%.60s", path, ks ? ks : "?");
			return fail(c, k, sub, "unknown field");
		}
		snprintf(sub, sizeof(sub), "%.120s.%.40s", path, f[i].key);
		if (seen & (1u << i))
			return fail(c, k, sub, "given twice");
		seen |= 1u << i;
		if (!val)
			return fail(c, k, sub, "no value");
		err = i == 2 ? f_per_model(c, sub, val, q) : f[i].fn(c, sub, val, &t);
		if (err)
			return err;
	}
	q->nominal = t.gpus * 1000 + t.milli;
	return GF_OK;
}

static gf_err f_borrowing(struct ctx *c, const char *path, const yaml_node_t *v, void *arg)
{
	return quantity(c, path, v, &((struct gf_queue_def *)arg)->borrowing_limit);
}

static gf_err f_lending(struct ctx *c, const char *path, const yaml_node_t *v, void *arg)
{
	return quantity(c, path, v, &((struct gf_queue_def *)arg)->lending_limit);
}

static gf_err f_cohort(struct ctx *c, const char *path, const yaml_node_t *v, void *arg)
{
	return name(c, v, path, ((struct gf_queue_def *)arg)->cohort);
}

static gf_err f_weight(struct ctx *c, const char *path, const yaml_node_t *v, void *arg)
{
	int64_t w;
	gf_err err;

	if ((err = integer(c, v, path, 1000000, &w)))
		return err;
	if (w < 1)
		return fail(c, v, path, "expected a weight of 1 or more");
	((struct gf_queue_def *)arg)->weight = (uint32_t)w;
	return GF_OK;
}

static gf_err f_ordering(struct ctx *c, const char *path, const yaml_node_t *v, void *arg)
{
	struct gf_queue_def *q = arg;

	if (scalar_is(v, "backfill"))
		q->ordering = GF_ORDER_BACKFILL;
	else if (scalar_is(v, "strict"))
		q->ordering = GF_ORDER_STRICT;
	else if (scalar_is(v, "skip-ahead"))
		q->ordering = GF_ORDER_SKIP_AHEAD;
	else
		return fail(c, v, path, "expected strict, skip-ahead or backfill");
	return GF_OK;
}

static gf_err f_spec(struct ctx *c, const char *path, const yaml_node_t *v, void *arg)
{
	static const struct field f[] = {
		{ "nominalQuota", f_nominal }, { "borrowingLimit", f_borrowing }, { "lendingLimit", f_lending },
		{ "cohort", f_cohort }, { "weight", f_weight }, { "ordering", f_ordering },
	};
	return walk_map(c, v, path, f, sizeof(f) / sizeof(f[0]), arg);
}

static gf_err f_name(struct ctx *c, const char *path, const yaml_node_t *v, void *arg)
{
	return name(c, v, path, ((struct gf_queue_def *)arg)->name);
}

static gf_err f_metadata(struct ctx *c, const char *path, const yaml_node_t *v, void *arg)
{
	static const struct field f[] = { { "name", f_name } };

	return walk_map(c, v, path, f, 1, arg);
}

static gf_err f_api(struct ctx *c, const char *path, const yaml_node_t *v, void *arg)
{
	(void)arg;
	return scalar_is(v, "gpufleet.io/v1alpha1") ? GF_OK : fail(c, v, path, "expected gpufleet.io/v1alpha1");
}

static gf_err f_kind(struct ctx *c, const char *path, const yaml_node_t *v, void *arg)
{
	(void)arg;
	return scalar_is(v, "Queue") ? GF_OK : fail(c, v, path, "expected Queue");
}

/* One document: a Queue object. */
static gf_err document(struct ctx *c, const yaml_node_t *root, struct gf_queue_def *q)
{
	static const struct field f[] = {
		{ "apiVersion", f_api }, { "kind", f_kind }, { "metadata", f_metadata }, { "spec", f_spec },
	};
	gf_err err;

	memset(q, 0, sizeof(*q));
	q->borrowing_limit = q->lending_limit = GF_QUOTA_UNLIMITED;
	q->weight = 1;
	q->line = line_of(root);
	if ((err = walk_map(c, root, "", f, 4, q)))
		return err;
	if (!q->name[0])
		return fail(c, root, "metadata.name", "missing");
	if (q->lending_limit != GF_QUOTA_UNLIMITED && q->lending_limit > q->nominal)
		return fail(c, root, "spec.lendingLimit", "above the nominal quota");
	if (!q->cohort[0] && (q->lending_limit != GF_QUOTA_UNLIMITED || q->borrowing_limit != GF_QUOTA_UNLIMITED))
		return fail(c, root, q->lending_limit != GF_QUOTA_UNLIMITED ? "spec.lendingLimit" : "spec.borrowingLimit",
			    "needs spec.cohort (a queue outside a cohort neither lends nor borrows)");
	return GF_OK;
}

gf_err gf_queues_parse(const char *text, size_t len, const char *file, struct gf_queue_file *out,
		       struct gf_queues_error *err)
{
	yaml_parser_t parser;
	struct ctx c = { .file = file, .err = err };
	size_t cap = 0;
	gf_err e = GF_OK;

	memset(out, 0, sizeof(*out));
	if (!yaml_parser_initialize(&parser))
		return GF_NOMEM;
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	for (;;) {
		yaml_document_t doc;
		yaml_node_t *root;

		if (!yaml_parser_load(&parser, &doc)) {
			snprintf(err->msg, sizeof(err->msg), "%s:%zu: YAML: %s", file,
				 parser.problem_mark.line + 1, parser.problem ? parser.problem : "cannot parse");
			e = parser.error == YAML_MEMORY_ERROR ? GF_NOMEM : GF_PARSE;
			break;
		}
		root = yaml_document_get_root_node(&doc);
		if (!root) {
			yaml_document_delete(&doc);
			break;	/* end of the stream */
		}
		c.doc = &doc;
		if (out->n == GF_LOOP_MAX_QUEUES) {
			e = fail(&c, root, "kind", "more than 256 queues");
		} else if (gf_grow(&out->q, &cap, out->n + 1, sizeof(*out->q), 8)) {
			e = GF_NOMEM;
		}
		if (!e && !(e = document(&c, root, &out->q[out->n]))) {
			for (size_t k = 0; k < out->n && !e; k++)
				if (!strcmp(out->q[k].name, out->q[out->n].name))
					e = fail(&c, root, "metadata.name", "a second queue of this name");
			out->n += !e;
		}
		yaml_document_delete(&doc);
		if (e)
			break;
	}
	yaml_parser_delete(&parser);
	if (!e && out->n == 0) {
		snprintf(err->msg, sizeof(err->msg), "%s:1: kind: no Queue in the file", file);
		e = GF_PARSE;
	}
	if (e)
		gf_queue_file_release(out);
	return e;
}

void gf_queue_file_release(struct gf_queue_file *f)
{
	free(f->q);
	f->q = NULL;
	f->n = 0;
}

int gf_queue_file_find(const struct gf_queue_file *f, const char *name)
{
	for (size_t i = 0; i < f->n; i++)
		if (!strcasecmp(f->q[i].name, name))
			return (int)i;
	return -1;
}

gf_err gf_queues_to_quota(const struct gf_queue_file *f, const struct gf_catalog *cat, const char *file,
			  struct gf_queue_quota *out, struct gf_queues_error *err)
{
	for (size_t i = 0; i < f->n; i++) {
		const struct gf_queue_def *d = &f->q[i];
		struct gf_queue_quota *q = &out[i];

		memset(q, 0, sizeof(*q));
		q->nominal = d->nominal;
		q->borrowing_limit = d->borrowing_limit;
		q->lending_limit = d->lending_limit;
		q->weight = d->weight;
		q->ordering = d->ordering;
		q->cohort = -1;
		if (d->cohort[0]) {	/* cohorts numbered by first appearance */
			int32_t next = 0;

			for (size_t k = 0; k < i && q->cohort < 0; k++) {
				if (!strcmp(f->q[k].cohort, d->cohort))
					q->cohort = out[k].cohort;
				else if (out[k].cohort >= next)
					next = out[k].cohort + 1;
			}
			if (q->cohort < 0)
				q->cohort = next;
		}
		q->nmodels = d->nmodels;
		for (uint32_t m = 0; m < d->nmodels; m++) {
			int id = -1;

			for (int k = 0; k < cat->nmodels; k++)
				if (!strcmp(cat->models[k], d->models[m].model))
					id = k;
			if (id < 0) {
				snprintf(err->msg, sizeof(err->msg),
					 "%s:%d: spec.nominalQuota.perModel[%u].model: no node has GPU model %s", file,
					 d->models[m].line, m, d->models[m].model);
				return GF_PARSE;
			}
			q->models[m].model = id;
			q->models[m].nominal = d->models[m].nominal;
		}
	}
	return GF_OK;
}
