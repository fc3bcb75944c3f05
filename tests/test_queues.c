/*
 * tests/test_queues.c - sim/queues.c: the queue file (YAML Queue objects)
 * into quotas: every field, cohort numbering, model lookup, and one exact
 * message per kind of bad input (file, line, field, what).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sim/queues.h"

static const char good[] =
	"apiVersion: gpufleet.io/v1alpha1\n"
	"kind: Queue\n"
	"metadata:\n"
	"  name: training\n"
	"spec:\n"
	"  nominalQuota:\n"
	"    gpus: 64\n"
	"    gpuMilli: 500\n"
	"    perModel:\n"
	"      - {model: V100M32, gpus: 32}\n"
	"      - model: A100\n"
	"        gpus: 8\n"
	"  borrowingLimit: {gpus: 16}\n"
	"  lendingLimit: {gpus: 8, gpuMilli: 250}\n"
	"  cohort: research\n"
	"  weight: 3\n"
	"  ordering: strict\n"
	"---\n"
	"apiVersion: gpufleet.io/v1alpha1\n"
	"kind: Queue\n"
	"metadata: {name: serving}\n"
	"spec: {nominalQuota: {gpus: 8}}\n"
	"---\n"
	"apiVersion: gpufleet.io/v1alpha1\n"
	"kind: Queue\n"
	"metadata: {name: batch}\n"
	"spec: {nominalQuota: {gpuMilli: 1500}, cohort: research}\n";

static void parses_every_field(void **state)
{
	struct gf_queue_file f;
	struct gf_queues_error e;

	(void)state;
	assert_int_equal(gf_queues_parse(good, strlen(good), "q.yaml", &f, &e), GF_OK);
	assert_int_equal(f.n, 3);
	assert_string_equal(f.q[0].name, "training");
	assert_int_equal(f.q[0].nominal, 64500);
	assert_int_equal(f.q[0].nmodels, 2);
	assert_string_equal(f.q[0].models[0].model, "V100M32");
	assert_int_equal(f.q[0].models[0].nominal, 32000);
	assert_string_equal(f.q[0].models[1].model, "A100");
	assert_int_equal(f.q[0].models[1].line, 11);
	assert_int_equal(f.q[0].borrowing_limit, 16000);
	assert_int_equal(f.q[0].lending_limit, 8250);
	assert_string_equal(f.q[0].cohort, "research");
	assert_int_equal(f.q[0].weight, 3);
	assert_int_equal(f.q[0].ordering, GF_ORDER_STRICT);
	/* defaults */
	assert_int_equal(f.q[1].nominal, 8000);
	assert_int_equal(f.q[1].borrowing_limit, GF_QUOTA_UNLIMITED);
	assert_int_equal(f.q[1].lending_limit, GF_QUOTA_UNLIMITED);
	assert_string_equal(f.q[1].cohort, "");
	assert_int_equal(f.q[1].weight, 1);
	assert_int_equal(f.q[1].ordering, GF_ORDER_BACKFILL);
	assert_int_equal(f.q[1].line, 19);
	assert_int_equal(gf_queue_file_find(&f, "BATCH"), 2);
	assert_int_equal(gf_queue_file_find(&f, "nope"), -1);

	struct gf_catalog cat;
	struct gf_queue_quota q[3];
	int v100, a100;

	gf_catalog_init(&cat);
	assert_int_equal(gf_catalog_model(&cat, "A100", 4, &a100), GF_OK);
	assert_int_equal(gf_catalog_model(&cat, "V100M32", 7, &v100), GF_OK);
	assert_int_equal(gf_queues_to_quota(&f, &cat, "q.yaml", q, &e), GF_OK);
	assert_int_equal(q[0].cohort, 0);
	assert_int_equal(q[1].cohort, -1);
	assert_int_equal(q[2].cohort, 0);
	assert_int_equal(q[0].models[0].model, v100);
	assert_int_equal(q[0].models[1].model, a100);
	assert_int_equal(q[2].nominal, 1500);
	gf_catalog_release(&cat);

	/* a model no node has */
	gf_catalog_init(&cat);
	assert_int_equal(gf_queues_to_quota(&f, &cat, "q.yaml", q, &e), GF_PARSE);
	assert_string_equal(e.msg, "q.yaml:10: spec.nominalQuota.perModel[0].model: no node has GPU model V100M32");
	gf_catalog_release(&cat);
	gf_queue_file_release(&f);
}

static void the_bundled_example_parses(void **state)
{
	char path[4096];
	FILE *fp;
	static char buf[1 << 16];
	size_t n;
	struct gf_queue_file f;
	struct gf_queues_error e;

	(void)state;
	snprintf(path, sizeof(path), "%s/data/queues/example.yaml", GF_SOURCE_DIR);
	fp = fopen(path, "rb");
	assert_non_null(fp);
	n = fread(buf, 1, sizeof(buf), fp);
	fclose(fp);
	assert_int_equal(gf_queues_parse(buf, n, "example.yaml", &f, &e), GF_OK);
	assert_int_equal(f.n, 3);
	assert_true(gf_queue_file_find(&f, "burst") >= 0 && gf_queue_file_find(&f, "LS") >= 0 &&
		    gf_queue_file_find(&f, "BE") >= 0);
	gf_queue_file_release(&f);
}

#define HEAD "apiVersion: gpufleet.io/v1alpha1\nkind: Queue\nmetadata: {name: a}\n"

static void bad_input_gets_one_precise_message(void **state)
{
	static const struct {
		const char *text, *msg;
	} cases[] = {
		{ HEAD "spec: {nominalQuota: {gpus: -1}}\n",
		  "f.yaml:4: spec.nominalQuota.gpus: expected a non-negative integer" },
		{ HEAD "spec: {nominalQuota: {gpus: 2.5}}\n",
		  "f.yaml:4: spec.nominalQuota.gpus: expected a non-negative integer" },
		{ HEAD "spec: {nominalQuota: {gpus: 99999999999}}\n",
		  "f.yaml:4: spec.nominalQuota.gpus: 99999999999 is above the limit 1000000" },
		{ HEAD "spec:\n  nominalQuota: {gpus: 1}\n  color: red\n",
		  "f.yaml:6: spec.color: unknown field" },
		{ HEAD "spec: {weight: 0}\n", "f.yaml:4: spec.weight: expected a weight of 1 or more" },
		{ HEAD "spec: {ordering: lifo}\n",
		  "f.yaml:4: spec.ordering: expected strict, skip-ahead or backfill" },
		{ HEAD "spec: {nominalQuota: {gpus: 1}, lendingLimit: {gpus: 2}, cohort: c}\n",
		  "f.yaml:1: spec.lendingLimit: above the nominal quota" },
		{ HEAD "spec: {nominalQuota: {gpus: 1}, borrowingLimit: {gpus: 2}}\n",
		  "f.yaml:1: spec.borrowingLimit: needs spec.cohort (a queue outside a cohort neither lends nor borrows)" },
		{ HEAD "spec: {nominalQuota: {perModel: [{model: A100}]}}\n",
		  "f.yaml:4: spec.nominalQuota.perModel[0]: gpus is missing" },
		{ HEAD "spec: {nominalQuota: {perModel: {model: A100}}}\n",
		  "f.yaml:4: spec.nominalQuota.perModel: expected a list of {model, gpus}" },
		{ HEAD "spec: {cohort: Research}\n",
		  "f.yaml:4: spec.cohort: expected lower-case letters, digits, '-' and '.' (not at the ends)" },
		{ "apiVersion: gpufleet.io/v1alpha1\nkind: Queue\nspec: {}\n", "f.yaml:1: metadata.name: missing" },
		{ "apiVersion: v1\nkind: Queue\nmetadata: {name: a}\n",
		  "f.yaml:1: apiVersion: expected gpufleet.io/v1alpha1" },
		{ "apiVersion: gpufleet.io/v1alpha1\nkind: ClusterQueue\nmetadata: {name: a}\n",
		  "f.yaml:2: kind: expected Queue" },
		{ HEAD "---\n" HEAD, "f.yaml:5: metadata.name: a second queue of this name" },
		{ HEAD "spec: {weight: 1, weight: 2}\n", "f.yaml:4: spec.weight: given twice" },
		{ HEAD "spec: [1, 2]\n", "f.yaml:4: spec: expected a mapping" },
		{ "- a\n- b\n", "f.yaml:1: expected a mapping (a Queue object)" },
		{ "", "f.yaml:1: kind: no Queue in the file" },
		{ HEAD "spec: {nominalQuota: {gpus: 1}\n", "f.yaml:5: YAML: did not find expected ',' or '}'" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct gf_queue_file f;
		struct gf_queues_error e;

		assert_int_equal(gf_queues_parse(cases[i].text, strlen(cases[i].text), "f.yaml", &f, &e), GF_PARSE);
		if (strcmp(e.msg, cases[i].msg))
			fail_msg("case %zu: got \"%s\", want \"%s\"", i, e.msg, cases[i].msg);
		assert_null(f.q);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parses_every_field),
		cmocka_unit_test(the_bundled_example_parses),
		cmocka_unit_test(bad_input_gets_one_precise_message),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
