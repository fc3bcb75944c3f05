/*
 * tests/test_queuedef.c - the Queue validator (queue/queuedef.h) against the
 * CRD's schema (deploy/crds/queue.yaml): for every rule the schema states
 * (minimum, maximum, default, enum, pattern, lengths, maxItems, required,
 * the set of spec fields) the test reads the value from the CRD file and
 * feeds the validator the values on both sides of it.  A rule changed on one
 * side only fails here.  Then a table of bad objects per rule, each refused
 * with the field named.
 */
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <yaml.h>

#include "queue/queuedef.h"
#include "yaml/queues.h"

static yaml_document_t crd;
static yaml_node_t *spec_props;	/* openAPIV3Schema.properties.spec.properties */
static yaml_node_t *root_schema;

static yaml_node_t *get(yaml_node_t *n, const char *key)
{
	if (!n || n->type != YAML_MAPPING_NODE)
		return NULL;
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(&crd, p->key);

		if (k->type == YAML_SCALAR_NODE && !strcmp((const char *)k->data.scalar.value, key))
			return yaml_document_get_node(&crd, p->value);
	}
	return NULL;
}

/* Follow a path of keys ("properties", "weight", ...); a NULL ends it. */
static yaml_node_t *path(yaml_node_t *n, ...)
{
	va_list ap;
	const char *k;

	va_start(ap, n);
	while (n && (k = va_arg(ap, const char *)))
		n = get(n, k);
	va_end(ap);
	if (!n)
		fail_msg("the CRD lacks a field this test reads");
	return n;
}

static const char *str(yaml_node_t *n)
{
	assert_int_equal(n->type, YAML_SCALAR_NODE);
	return (const char *)n->data.scalar.value;
}

/* The first item of sequence n. */
static yaml_node_t *first(yaml_node_t *n)
{
	assert_int_equal(n->type, YAML_SEQUENCE_NODE);
	assert_true(n->data.sequence.items.top > n->data.sequence.items.start);
	return yaml_document_get_node(&crd, *n->data.sequence.items.start);
}

static int64_t num(yaml_node_t *n)
{
	return strtoll(str(n), NULL, 10);
}

static int load_crd(void **state)
{
	static char buf[1 << 16];
	char p[4096];
	FILE *fp;
	size_t n;
	yaml_parser_t parser;

	(void)state;
	snprintf(p, sizeof(p), "%s/deploy/crds/queue.yaml", GF_SOURCE_DIR);
	fp = fopen(p, "rb");
	if (!fp)
		return -1;
	n = fread(buf, 1, sizeof(buf), fp);
	fclose(fp);
	if (!yaml_parser_initialize(&parser))
		return -1;
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, n);
	if (!yaml_parser_load(&parser, &crd)) {
		yaml_parser_delete(&parser);
		return -1;
	}
	yaml_parser_delete(&parser);
	yaml_node_t *versions = get(get(yaml_document_get_root_node(&crd), "spec"), "versions");
	if (!versions || versions->type != YAML_SEQUENCE_NODE)
		return -1;
	root_schema = get(get(yaml_document_get_node(&crd, *versions->data.sequence.items.start), "schema"),
			  "openAPIV3Schema");
	spec_props = get(get(get(root_schema, "properties"), "spec"), "properties");
	return spec_props ? 0 : -1;
}

static int free_crd(void **state)
{
	(void)state;
	yaml_document_delete(&crd);
	return 0;
}

/* A string field of a gf_queue_object (or a model's) set to s. */
#define set(dst, s) gf_queue_object_str((dst), (s), strlen(s))

/* A valid object to start from: every limit allowed (a cohort, a large nominal quota). */
static struct gf_queue_object base(void)
{
	struct gf_queue_object o;

	memset(&o, 0, sizeof(o));
	o.has_name = o.has_spec = true;
	set(o.name, "q");
	o.has_cohort = true;
	set(o.cohort, "c");
	o.nominal = (struct gf_queue_amount){ true, GF_QUEUE_GPUS_MAX, GF_QUEUE_MILLI_MAX };
	return o;
}

static bool ok(const struct gf_queue_object *o)
{
	struct gf_queue_def d;
	struct gf_queue_verr e;

	return gf_queue_validate(o, &d, &e) == GF_OK;
}

/* minimum/maximum of an integer property agree with what the validator takes. */
static void check_range(yaml_node_t *prop, const char *what, int64_t *field, int64_t want_min, int64_t want_max,
			struct gf_queue_object *o)
{
	int64_t lo = num(path(prop, "minimum", NULL)), hi = num(path(prop, "maximum", NULL));

	if (lo != want_min || hi != want_max)
		fail_msg("%s: the CRD says %lld..%lld, the validator %lld..%lld", what, (long long)lo, (long long)hi,
			 (long long)want_min, (long long)want_max);
	int64_t keep = *field;
	*field = lo;
	assert_true(ok(o));
	*field = hi;
	assert_true(ok(o));
	*field = lo - 1;
	if (ok(o))
		fail_msg("%s: %lld accepted, the CRD's minimum is %lld", what, (long long)(lo - 1), (long long)lo);
	*field = hi + 1;
	if (ok(o))
		fail_msg("%s: %lld accepted, the CRD's maximum is %lld", what, (long long)(hi + 1), (long long)hi);
	*field = keep;
}

static void amount_ranges(yaml_node_t *amount, const char *what, struct gf_queue_amount *a, struct gf_queue_object *o)
{
	char w[128];

	a->set = true;
	snprintf(w, sizeof(w), "%s.gpus", what);
	check_range(path(amount, "properties", "gpus", NULL), w, &a->gpus, 0, GF_QUEUE_GPUS_MAX, o);
	snprintf(w, sizeof(w), "%s.gpuMilli", what);
	check_range(path(amount, "properties", "gpuMilli", NULL), w, &a->gpu_milli, 0, GF_QUEUE_MILLI_MAX, o);
}

static void numbers_agree_with_the_crd(void **state)
{
	struct gf_queue_object o = base();

	(void)state;
	yaml_node_t *w = path(spec_props, "weight", NULL);
	o.has_weight = true;
	check_range(w, "spec.weight", &o.weight, GF_QUEUE_WEIGHT_MIN, GF_QUEUE_WEIGHT_MAX, &o);
	assert_int_equal(num(path(w, "default", NULL)), GF_QUEUE_WEIGHT_DEFAULT);
	o.has_weight = false;
	struct gf_queue_def d;
	struct gf_queue_verr e;
	assert_int_equal(gf_queue_validate(&o, &d, &e), GF_OK);
	assert_int_equal(d.weight, GF_QUEUE_WEIGHT_DEFAULT);

	amount_ranges(path(spec_props, "nominalQuota", NULL), "spec.nominalQuota", &o.nominal, &o);
	o = base();
	amount_ranges(path(spec_props, "borrowingLimit", NULL), "spec.borrowingLimit", &o.borrowing, &o);
	o = base();
	o.lending.set = true;	/* lendingLimit's maximum is also the nominal quota's: base's is the largest */
	amount_ranges(path(spec_props, "lendingLimit", NULL), "spec.lendingLimit", &o.lending, &o);
	o = base();
	o.nmodels = 1;
	o.models[0].has_model = true;
	set(o.models[0].model, "A100");
	amount_ranges(path(spec_props, "models", "items", "properties", "nominalQuota", NULL),
		      "spec.models[].nominalQuota", &o.models[0].nominal, &o);
}

static void the_ordering_enum_and_default_agree(void **state)
{
	struct gf_queue_object o = base();
	struct gf_queue_def d;
	struct gf_queue_verr e;
	yaml_node_t *ord = path(spec_props, "ordering", NULL), *en = path(ord, "enum", NULL);
	size_t n = 0;

	(void)state;
	assert_int_equal(en->type, YAML_SEQUENCE_NODE);
	for (yaml_node_item_t *it = en->data.sequence.items.start; it < en->data.sequence.items.top; it++, n++) {
		o.has_ordering = true;
		snprintf(o.ordering, sizeof(o.ordering), "%s", str(yaml_document_get_node(&crd, *it)));
		if (!ok(&o))
			fail_msg("the CRD's ordering %s is refused", o.ordering);
	}
	assert_int_equal(n, 3);	/* and the validator knows no other: */
	set(o.ordering, "lifo");
	assert_false(ok(&o));
	set(o.ordering, "Strict");
	assert_false(ok(&o));
	/* the default: absent means the CRD's default */
	assert_string_equal(str(path(ord, "default", NULL)), GF_QUEUE_ORDERING_DEFAULT_NAME);
	o.has_ordering = true;
	set(o.ordering, GF_QUEUE_ORDERING_DEFAULT_NAME);
	assert_int_equal(gf_queue_validate(&o, &d, &e), GF_OK);
	enum gf_queue_ordering named = d.ordering;
	o.has_ordering = false;
	assert_int_equal(gf_queue_validate(&o, &d, &e), GF_OK);
	assert_int_equal(d.ordering, named);
	assert_int_equal(d.ordering, GF_QUEUE_ORDERING_DEFAULT);
}

static void names_agree_with_the_crd(void **state)
{
	yaml_node_t *cohort = path(spec_props, "cohort", NULL);
	yaml_node_t *model = path(spec_props, "models", "items", "properties", "model", NULL);
	int64_t maxlen = num(path(cohort, "maxLength", NULL));
	regex_t re;
	char long63[64], long64[65];
	const char *cands[] = { "", "a", "ab", "a.b", "a-b", "a..b", "9", "-a", "a-", ".a", "a.", "A", "a_b", "a b",
				"é", long63, long64 };

	(void)state;
	memset(long63, 'x', 63);
	long63[63] = 0;
	memset(long64, 'y', 64);
	long64[64] = 0;
	assert_int_equal(maxlen, GF_QUEUE_NAME_MAX - 1);
	assert_int_equal(regcomp(&re, str(path(cohort, "pattern", NULL)), REG_EXTENDED | REG_NOSUB), 0);
	for (size_t i = 0; i < sizeof(cands) / sizeof(cands[0]); i++) {
		struct gf_queue_object o = base();
		bool crd_ok = !regexec(&re, cands[i], 0, NULL, 0) && (int64_t)strlen(cands[i]) <= maxlen;

		gf_queue_object_str(o.cohort, cands[i], strlen(cands[i]));
		if (crd_ok != ok(&o))
			fail_msg("cohort \"%s\": the CRD %s it, the validator %s", cands[i], crd_ok ? "takes" : "refuses",
				 crd_ok ? "refuses" : "takes");
	}
	regfree(&re);
	/* a model: minLength..maxLength, any characters; the list at most maxItems, each model once */
	int64_t mmin = num(path(model, "minLength", NULL)), mmax = num(path(model, "maxLength", NULL));
	for (int64_t len = 0; len <= 64; len++) {
		struct gf_queue_object o = base();
		char m[65];

		memset(m, 'M', (size_t)len);
		m[len] = 0;
		o.nmodels = 1;
		o.models[0].has_model = true;
		gf_queue_object_str(o.models[0].model, m, (size_t)len);
		if ((len >= mmin && len <= mmax) != ok(&o))
			fail_msg("a model name of %lld characters: the CRD and the validator disagree", (long long)len);
	}
	int64_t maxitems = num(path(spec_props, "models", "maxItems", NULL));
	assert_int_equal(maxitems, GF_QUEUE_MODELS_MAX);
	struct gf_queue_object o = base();
	for (uint32_t i = 0; i < GF_QUEUE_MODELS_MAX; i++) {
		o.models[i].has_model = true;
		snprintf(o.models[i].model, sizeof(o.models[i].model), "m%u", i);
	}
	o.nmodels = (uint32_t)maxitems;
	assert_true(ok(&o));
	o.nmodels = (uint32_t)maxitems + 1;	/* a decoder counts what it does not keep */
	assert_false(ok(&o));
	o.nmodels = 2;
	set(o.models[1].model, "m0");	/* x-kubernetes-list-map-keys: [model] */
	assert_string_equal(str(first(path(spec_props, "models", "x-kubernetes-list-map-keys", NULL))), "model");
	assert_false(ok(&o));
	o.models[1].has_model = false;	/* items: required: [model] */
	set(o.models[1].model, "m1");
	assert_string_equal(str(first(path(spec_props, "models", "items", "required", NULL))), "model");
	assert_false(ok(&o));
	/* the object: required: [spec] */
	assert_string_equal(str(first(path(root_schema, "required", NULL))), "spec");
	o = base();
	o.has_spec = false;
	assert_false(ok(&o));
}

/*
 * The same objects to the CRD's field list and the YAML decoder: every spec
 * field the CRD declares is one the decoder maps, and the decoder maps no
 * other (the count).
 */
static void the_decoder_maps_every_crd_field(void **state)
{
	yaml_node_t *m = spec_props;
	size_t n = 0;

	(void)state;
	for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++, n++) {
		const char *key = str(yaml_document_get_node(&crd, p->key));
		char text[512];
		struct gf_queue_file f;
		struct gf_queues_error e;

		/* a value of the field's type; the validator may refuse it, the decoder must know the key */
		yaml_node_t *type = get(yaml_document_get_node(&crd, p->value), "type");
		const char *t = type ? str(type) : "";
		const char *v = !strcmp(t, "integer") ? "1" : !strcmp(t, "string") ? "x" : !strcmp(t, "array") ? "[]" : "{}";
		snprintf(text, sizeof(text), "apiVersion: gpufleet.io/v1alpha1\nkind: GPUQueue\nmetadata: {name: q}\n"
			 "spec: {%s: %s}\n", key, v);
		if (gf_queues_parse(text, strlen(text), "f.yaml", &f, &e) == GF_OK)
			gf_queue_file_release(&f);
		else if (strstr(e.msg, "unknown field"))
			fail_msg("the CRD's spec.%s: %s", key, e.msg);
	}
	assert_int_equal(n, 7);	/* the decoder's spec keys (yaml/queues.c, k8s/queues.c) */
}

/* One bad object per rule: refused, the field named. */
static void each_rule_refuses_with_the_field(void **state)
{
	static const struct {
		const char *path, *what;
	} cases[] = {
		{ "metadata.name", "missing" },
		{ "metadata.name", "expected lower-case letters" },
		{ "spec", "missing" },
		{ "spec.cohort", "expected lower-case letters" },
		{ "spec.weight", "0 is outside 1..1000000" },
		{ "spec.ordering", "expected strict, skip-ahead or backfill" },
		{ "spec.nominalQuota.gpus", "-1 is outside 0..1000000" },
		{ "spec.borrowingLimit.gpuMilli", "1000000001 is outside 0..1000000000" },
		{ "spec.lendingLimit", "above the nominal quota" },
		{ "spec.borrowingLimit", "needs spec.cohort" },
		{ "spec.models", "more than 8 models" },
		{ "spec.models[0].model", "missing" },
		{ "spec.models[1].model", "the model is listed twice" },
		{ "spec.models[0].nominalQuota.gpus", "-1 is outside 0..1000000" },
		{ "spec.lendingLimit.gpus", "out of range, expected 0..1000000" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct gf_queue_object o = base();
		struct gf_queue_def d;
		struct gf_queue_verr e;

		switch (i) {
		case 0: o.has_name = false; break;
		case 1: set(o.name, "Q"); break;
		case 2: o.has_spec = false; break;
		case 3: set(o.cohort, "-c"); break;
		case 4: o.has_weight = true; o.weight = 0; break;
		case 5: o.has_ordering = true; set(o.ordering, "fifo"); break;
		case 6: o.nominal.gpus = -1; break;
		case 7: o.borrowing = (struct gf_queue_amount){ true, 0, GF_QUEUE_MILLI_MAX + 1 }; break;
		case 8: o.nominal = (struct gf_queue_amount){ true, 1, 0 };
			o.lending = (struct gf_queue_amount){ true, 1, 1 }; break;
		case 9: o.has_cohort = false; o.borrowing.set = true; break;
		case 10: o.nmodels = GF_QUEUE_MODELS_MAX + 1; break;
		case 11: o.nmodels = 1; break;
		case 12: o.nmodels = 2; o.models[0].has_model = o.models[1].has_model = true;
			set(o.models[0].model, "A100"); set(o.models[1].model, "A100"); break;
		case 13: o.nmodels = 1; o.models[0].has_model = true; set(o.models[0].model, "A100");
			o.models[0].nominal = (struct gf_queue_amount){ true, -1, 0 }; break;
		case 14: o.lending = (struct gf_queue_amount){ true, INT64_MAX, 0 }; break;
		}
		assert_int_equal(gf_queue_validate(&o, &d, &e), GF_PARSE);
		if (strcmp(e.path, cases[i].path) || !strstr(e.what, cases[i].what))
			fail_msg("case %zu: got \"%s: %s\", want \"%s: %s\"", i, e.path, e.what, cases[i].path,
				 cases[i].what);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(numbers_agree_with_the_crd),
		cmocka_unit_test(the_ordering_enum_and_default_agree),
		cmocka_unit_test(names_agree_with_the_crd),
		cmocka_unit_test(the_decoder_maps_every_crd_field),
		cmocka_unit_test(each_rule_refuses_with_the_field),
	};
	return cmocka_run_group_tests(tests, load_crd, free_crd);
}
