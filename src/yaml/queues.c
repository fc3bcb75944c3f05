/*
 * yaml/queues.c - YAML GPUQueue objects into Queue definitions (queues.h).
 *
 * libyaml loads each document into its node graph; we walk the few known
 * keys (a fixed depth, so aliases cannot make the walk blow up), copy what
 * is written into a struct gf_queue_object and hand it to the one validator
 * (queue/queuedef.c).  Types are YAML's: an integer is a plain scalar of
 * decimal digits with an optional '-', a string any other non-null scalar;
 * a null (~, null, empty) is an absent field, as the API server reads it.
 * Each field's line is remembered, so that the validator's verdict, which
 * names a field, is reported at the line that field is on.
 */
#include "yaml/queues.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define MAX_LINES 64

struct ctx {
	yaml_document_t *doc;
	const char *file;
	struct gf_queues_error *err;
	int doc_line;
	int nlines;
	struct {
		char path[96];
		int line;
	} lines[MAX_LINES];
};

static int line_of(const yaml_node_t *n)
{
	return (int)n->start_mark.line + 1;
}

static void remember(struct ctx *c, const char *path, const yaml_node_t *n)
{
	if (c->nlines < MAX_LINES) {
		snprintf(c->lines[c->nlines].path, sizeof(c->lines[0].path), "%s", path);
		c->lines[c->nlines++].line = line_of(n);
	}
}

/* The line of the longest remembered field that path is, or is inside of. */
static int line_for(const struct ctx *c, const char *path)
{
	int line = c->doc_line;
	size_t best = 0;

	for (int i = 0; i < c->nlines; i++) {
		size_t l = strlen(c->lines[i].path);

		if (l > best && !strncmp(path, c->lines[i].path, l) &&
		    (path[l] == 0 || path[l] == '.' || path[l] == '[')) {
			best = l;
			line = c->lines[i].line;
		}
	}
	return line;
}

static gf_err fail_at(struct ctx *c, int line, const char *field, const char *what)
{
	if (*field)
		snprintf(c->err->msg, sizeof(c->err->msg), "%s:%d: %s: %s", c->file, line, field, what);
	else	/* the document itself */
		snprintf(c->err->msg, sizeof(c->err->msg), "%s:%d: %s (a GPUQueue object)", c->file, line, what);
	return GF_PARSE;
}

static gf_err fail(struct ctx *c, const yaml_node_t *n, const char *field, const char *what)
{
	return fail_at(c, n ? line_of(n) : c->doc_line, field, what);
}

/*
 * The kinds of the CRD before it was renamed (Queue, QueueList): still read,
 * with one note for the file (its first such line) for the caller to print.
 */
static void deprecated(struct ctx *c, const yaml_node_t *n, const char *old, const char *now)
{
	if (!c->err->note[0])
		snprintf(c->err->note, sizeof(c->err->note),
			 "%s:%d: kind: %s is deprecated, read as %s (the CRD is gpuqueues.gpufleet.io): rename it", c->file,
			 line_of(n), old, now);
}

static bool is_null(const yaml_node_t *n)
{
	const char *s;

	if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	s = (const char *)n->data.scalar.value;
	return (!*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL"));
}

static bool scalar_is(const yaml_node_t *n, const char *s)
{
	return n->type == YAML_SCALAR_NODE && n->data.scalar.length == strlen(s) &&
	       !memcmp(n->data.scalar.value, s, n->data.scalar.length);
}

/* A YAML integer (plain, -?[0-9]+), clamped to int64_t. */
static gf_err integer(struct ctx *c, const yaml_node_t *n, const char *path, int64_t *out)
{
	const char *s;
	bool neg = false;
	int64_t v = 0;

	if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return fail(c, n, path, "expected an integer");
	s = (const char *)n->data.scalar.value;
	if (*s == '-')
		neg = true, s++;
	if (!*s || strlen(s) != n->data.scalar.length - neg)
		return fail(c, n, path, "expected an integer");
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return fail(c, n, path, "expected an integer");
		v = v > (INT64_MAX - 9) / 10 ? INT64_MAX : v * 10 + (*s - '0');
	}
	*out = neg ? (v == INT64_MAX ? INT64_MIN : -v) : v;
	remember(c, path, n);
	return GF_OK;
}

/* A string into out (cut at GF_QUEUE_NAME_MAX bytes: the validator refuses it then). */
static gf_err string(struct ctx *c, const yaml_node_t *n, const char *path, char out[GF_QUEUE_NAME_MAX + 1])
{
	const char *s;

	if (n->type != YAML_SCALAR_NODE)
		return fail(c, n, path, "expected a string");
	s = (const char *)n->data.scalar.value;
	if (strlen(s) != n->data.scalar.length)
		return fail(c, n, path, "a string with a NUL byte");
	gf_queue_object_str(out, s, n->data.scalar.length);
	remember(c, path, n);
	return GF_OK;
}

/*
 * Mapping n at path: vals[i] the value of keys[i] (NULL: absent or null).
 * Unknown keys and a key given twice are refused; hint, when set, is added
 * to the message for an unknown key of that name.
 */
static gf_err fields(struct ctx *c, const yaml_node_t *n, const char *path, const char *const *keys, size_t nkeys,
		     yaml_node_t **vals, const char *hint_key, const char *hint)
{
	char sub[192];

	if (n->type != YAML_MAPPING_NODE)
		return fail(c, n, path, "expected a mapping");
	for (size_t f = 0; f < nkeys; f++)
		vals[f] = NULL;
	remember(c, path, n);
	uint32_t seen = 0;

	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(c->doc, p->value);
		const char *ks = k && k->type == YAML_SCALAR_NODE ? (const char *)k->data.scalar.value : "?";
		size_t f;

		for (f = 0; f < nkeys && !(k && scalar_is(k, keys[f])); f++)
			;
		snprintf(sub, sizeof(sub), "%.120s%s%.60s", path, *path ? "." : "", f < nkeys ? keys[f] : ks);
		if (f == nkeys) {
			char what[200];

			snprintf(what, sizeof(what), "unknown field%s%s", hint_key && !strcmp(ks, hint_key) ? " " : "",
				 hint_key && !strcmp(ks, hint_key) ? hint : "");
			return fail(c, k, sub, what);
		}
		if (seen & (1u << f))
			return fail(c, k, sub, "given twice");
		seen |= 1u << f;
		vals[f] = v && !is_null(v) ? v : NULL;
	}
	return GF_OK;
}

static gf_err amount(struct ctx *c, const yaml_node_t *n, const char *path, struct gf_queue_amount *a,
		     const char *hint_key, const char *hint)
{
	static const char *const keys[] = { "gpus", "gpuMilli" };
	yaml_node_t *v[2];
	char sub[160];
	gf_err e;

	if ((e = fields(c, n, path, keys, 2, v, hint_key, hint)))
		return e;
	a->set = true;
	snprintf(sub, sizeof(sub), "%.120s.gpus", path);
	if (v[0] && (e = integer(c, v[0], sub, &a->gpus)))
		return e;
	snprintf(sub, sizeof(sub), "%.120s.gpuMilli", path);
	if (v[1] && (e = integer(c, v[1], sub, &a->gpu_milli)))
		return e;
	return GF_OK;
}

static gf_err models(struct ctx *c, const yaml_node_t *n, struct gf_queue_object *o)
{
	static const char *const keys[] = { "model", "nominalQuota" };
	char sub[96], sub2[128];
	gf_err e;

	if (n->type != YAML_SEQUENCE_NODE)
		return fail(c, n, "spec.models", "expected a list of {model, nominalQuota}");
	remember(c, "spec.models", n);
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		yaml_node_t *item = yaml_document_get_node(c->doc, *it), *v[2];
		uint32_t i = o->nmodels++;

		if (i >= GF_QUEUE_MODELS_MAX)
			continue;	/* counted: the validator refuses the list */
		snprintf(sub, sizeof(sub), "spec.models[%u]", i);
		if ((e = fields(c, item, sub, keys, 2, v, NULL, NULL)))
			return e;
		snprintf(sub2, sizeof(sub2), "%s.model", sub);
		if (v[0]) {
			if ((e = string(c, v[0], sub2, o->models[i].model)))
				return e;
			o->models[i].has_model = true;
		}
		snprintf(sub2, sizeof(sub2), "%s.nominalQuota", sub);
		if (v[1] && (e = amount(c, v[1], sub2, &o->models[i].nominal, NULL, NULL)))
			return e;
	}
	return GF_OK;
}

static gf_err spec(struct ctx *c, const yaml_node_t *n, struct gf_queue_object *o)
{
	static const char *const keys[] = { "nominalQuota", "borrowingLimit", "lendingLimit", "cohort",
					    "weight", "ordering", "models" };
	yaml_node_t *v[7];
	gf_err e;

	if ((e = fields(c, n, "spec", keys, 7, v, NULL, NULL)))
		return e;
	o->has_spec = true;
	if (v[0] && (e = amount(c, v[0], "spec.nominalQuota", &o->nominal, "perModel",
				"(per-model quotas are spec.models: [{model, nominalQuota: {gpus, gpuMilli}}], "
				"the CRD's shape)")))
		return e;
	if (v[1] && (e = amount(c, v[1], "spec.borrowingLimit", &o->borrowing, NULL, NULL)))
		return e;
	if (v[2] && (e = amount(c, v[2], "spec.lendingLimit", &o->lending, NULL, NULL)))
		return e;
	if (v[3]) {
		if ((e = string(c, v[3], "spec.cohort", o->cohort)))
			return e;
		o->has_cohort = true;
	}
	if (v[4]) {
		if ((e = integer(c, v[4], "spec.weight", &o->weight)))
			return e;
		o->has_weight = true;
	}
	if (v[5]) {
		if ((e = string(c, v[5], "spec.ordering", o->ordering)))
			return e;
		o->has_ordering = true;
	}
	if (v[6] && (e = models(c, v[6], o)))
		return e;
	return GF_OK;
}

/* The value of key in mapping n, or NULL. */
static yaml_node_t *lookup(yaml_document_t *doc, const yaml_node_t *n, const char *key)
{
	if (n->type != YAML_MAPPING_NODE)
		return NULL;
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(doc, p->key);

		if (k && scalar_is(k, key))
			return yaml_document_get_node(doc, p->value);
	}
	return NULL;
}

/* One GPUQueue object (a document, or an item of a List). */
static gf_err queue(struct ctx *c, const yaml_node_t *root, struct gf_queue_def *q)
{
	static const char *const keys[] = { "apiVersion", "kind", "metadata", "spec", "status" };
	struct gf_queue_object o;
	struct gf_queue_verr ve;
	yaml_node_t *v[5], *mv;
	gf_err e;

	memset(&o, 0, sizeof(o));
	c->nlines = 0;
	c->doc_line = line_of(root);
	if (root->type != YAML_MAPPING_NODE)
		return fail(c, root, "", "expected a mapping");
	if ((e = fields(c, root, "", keys, 5, v, NULL, NULL)))
		return e;
	if (v[0] && !scalar_is(v[0], "gpufleet.io/v1alpha1"))
		return fail(c, v[0], "apiVersion", "expected gpufleet.io/v1alpha1");
	if (v[1] && !scalar_is(v[1], "GPUQueue")) {
		if (!scalar_is(v[1], "Queue"))
			return fail(c, v[1], "kind", "expected GPUQueue");
		deprecated(c, v[1], "Queue", "GPUQueue");
	}
	if (v[2]) {	/* metadata beyond the name is the API server's: read over */
		if (v[2]->type != YAML_MAPPING_NODE)
			return fail(c, v[2], "metadata", "expected a mapping");
		remember(c, "metadata", v[2]);
		if ((mv = lookup(c->doc, v[2], "name")) && !is_null(mv)) {
			if ((e = string(c, mv, "metadata.name", o.name)))
				return e;
			o.has_name = true;
		}
	}
	if (v[3] && (e = spec(c, v[3], &o)))
		return e;
	/* status is the scheduler's: read over, as the API server's decoder does */
	if ((e = gf_queue_validate(&o, q, &ve)))
		return fail_at(c, line_for(c, ve.path), ve.path, ve.what);
	q->line = c->doc_line;
	for (uint32_t m = 0; m < q->nmodels; m++) {
		char p[64];

		snprintf(p, sizeof(p), "spec.models[%u].model", m);
		q->models[m].line = line_for(c, p);
	}
	return GF_OK;
}

static gf_err add(struct ctx *c, const yaml_node_t *n, struct gf_queue_file *out, size_t *cap)
{
	struct gf_queue_def d;
	struct gf_queue_verr ve;
	gf_err e;

	if ((e = queue(c, n, &d)))
		return e;
	if ((e = gf_queue_file_add(out, cap, &d, &ve)) == GF_PARSE)
		return fail(c, n, ve.path, ve.what);
	return e;
}

/* A document: a GPUQueue, or a List of them (what `kubectl get gpuqueues -o yaml` prints). */
static gf_err document(struct ctx *c, const yaml_node_t *root, struct gf_queue_file *out, size_t *cap)
{
	yaml_node_t *kind = lookup(c->doc, root, "kind");

	if (kind && (scalar_is(kind, "List") || scalar_is(kind, "GPUQueueList") || scalar_is(kind, "QueueList"))) {
		yaml_node_t *items = lookup(c->doc, root, "items");

		if (scalar_is(kind, "QueueList"))
			deprecated(c, kind, "QueueList", "GPUQueueList");
		c->doc_line = line_of(root);
		if (!items || items->type != YAML_SEQUENCE_NODE)
			return fail(c, items ? items : root, "items", "expected a list of GPUQueue objects");
		for (yaml_node_item_t *it = items->data.sequence.items.start; it < items->data.sequence.items.top; it++) {
			gf_err e = add(c, yaml_document_get_node(c->doc, *it), out, cap);

			if (e)
				return e;
		}
		return GF_OK;
	}
	return add(c, root, out, cap);
}

gf_err gf_queues_parse(const char *text, size_t len, const char *file, struct gf_queue_file *out,
		       struct gf_queues_error *err)
{
	yaml_parser_t parser;
	struct ctx *c = calloc(1, sizeof(*c));
	size_t cap = 0;
	gf_err e = GF_OK;

	memset(out, 0, sizeof(*out));
	err->msg[0] = err->note[0] = '\0';
	if (!c)
		return GF_NOMEM;
	c->file = file;
	c->err = err;
	if (!yaml_parser_initialize(&parser)) {
		free(c);
		return GF_NOMEM;
	}
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
		c->doc = &doc;
		e = document(c, root, out, &cap);
		yaml_document_delete(&doc);
		if (e)
			break;
	}
	yaml_parser_delete(&parser);
	free(c);
	if (!e && out->n == 0) {
		snprintf(err->msg, sizeof(err->msg), "%s:1: kind: no GPUQueue in the file", file);
		e = GF_PARSE;
	}
	if (e)
		gf_queue_file_release(out);
	return e;
}
