/*
 * tests/test_queues.c - yaml/queues.c: the queue file (YAML Queue objects in
 * the CRD's shape, as `kubectl apply` takes them) into quotas: every field,
 * the CRD's defaults, a List, cohort numbering, model lookup, and one exact
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

#include "yaml/queues.h"

static const char good[] =
	"apiVersion: gpufleet.io/v1alpha1\n"
	"kind: GPUQueue\n"
	"metadata:\n"
	"  name: training\n"
	"spec:\n"
	"  nominalQuota:\n"
	"    gpus: 64\n"
	"    gpuMilli: 500\n"
	"  models:\n"
	"    - {model: V100M32, nominalQuota: {gpus: 32}}\n"
	"    - model: A100\n"
	"      nominalQuota: {gpus: 8, gpuMilli: 250}\n"
	"  borrowingLimit: {gpus: 16}\n"
	"  lendingLimit: {gpus: 8, gpuMilli: 250}\n"
	"  cohort: research\n"
	"  weight: 3\n"
	"  ordering: strict\n"
	"---\n"
	"apiVersion: gpufleet.io/v1alpha1\n"
	"kind: GPUQueue\n"
	"metadata: {name: serving}\n"
	"spec: {nominalQuota: {gpus: 8}}\n"
	"---\n"
	"apiVersion: gpufleet.io/v1alpha1\n"
	"kind: GPUQueue\n"
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
	assert_int_equal(f.q[0].models[1].nominal, 8250);
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
	assert_int_equal(f.q[1].ordering, GF_ORDER_SKIP_AHEAD);	/* the CRD's default */
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
	assert_string_equal(e.msg, "q.yaml:10: spec.models[0].model: no node has GPU model V100M32");
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

#define HEAD "apiVersion: gpufleet.io/v1alpha1\nkind: GPUQueue\nmetadata: {name: a}\n"

static void bad_input_gets_one_precise_message(void **state)
{
	static const struct {
		const char *text, *msg;
	} cases[] = {
		{ HEAD "spec: {nominalQuota: {gpus: -1}}\n",
		  "f.yaml:4: spec.nominalQuota.gpus: -1 is outside 0..1000000" },
		{ HEAD "spec: {nominalQuota: {gpus: 2.5}}\n",
		  "f.yaml:4: spec.nominalQuota.gpus: expected an integer" },
		{ HEAD "spec: {nominalQuota: {gpus: \"2\"}}\n",
		  "f.yaml:4: spec.nominalQuota.gpus: expected an integer" },
		{ HEAD "spec: {nominalQuota: {gpus: 99999999999}}\n",
		  "f.yaml:4: spec.nominalQuota.gpus: 99999999999 is outside 0..1000000" },
		{ HEAD "spec: {nominalQuota: {gpuMilli: 99999999999999999999999}}\n",
		  "f.yaml:4: spec.nominalQuota.gpuMilli: out of range, expected 0..1000000000" },
		{ HEAD "spec:\n  nominalQuota: {gpus: 1}\n  color: red\n",
		  "f.yaml:6: spec.color: unknown field" },
		{ HEAD "spec: {weight: 0}\n", "f.yaml:4: spec.weight: 0 is outside 1..1000000" },
		{ HEAD "spec: {weight: 1000001}\n", "f.yaml:4: spec.weight: 1000001 is outside 1..1000000" },
		{ HEAD "spec: {ordering: lifo}\n",
		  "f.yaml:4: spec.ordering: expected strict, skip-ahead or backfill" },
		{ HEAD "spec:\n  nominalQuota: {gpus: 1}\n  lendingLimit: {gpus: 2}\n  cohort: c\n",
		  "f.yaml:6: spec.lendingLimit: above the nominal quota" },
		{ HEAD "spec: {nominalQuota: {gpus: 1}, borrowingLimit: {gpus: 2}}\n",
		  "f.yaml:4: spec.borrowingLimit: needs spec.cohort (a queue outside a cohort neither lends nor borrows)" },
		{ HEAD "spec: {nominalQuota: {perModel: [{model: A100, gpus: 1}]}}\n",
		  "f.yaml:4: spec.nominalQuota.perModel: unknown field (per-model quotas are spec.models: [{model, "
		  "nominalQuota: {gpus, gpuMilli}}], the CRD's shape)" },
		{ HEAD "spec: {models: [{nominalQuota: {gpus: 1}}]}\n", "f.yaml:4: spec.models[0].model: missing" },
		{ HEAD "spec:\n  models:\n  - {model: A100}\n  - {model: A100}\n",
		  "f.yaml:7: spec.models[1].model: the model is listed twice" },
		{ HEAD "spec: {models: [{model: A100, lendingLimit: {gpus: 1}}]}\n",
		  "f.yaml:4: spec.models[0].lendingLimit: unknown field" },
		{ HEAD "spec: {models: {model: A100}}\n",
		  "f.yaml:4: spec.models: expected a list of {model, nominalQuota}" },
		{ HEAD "spec: {models: [{model: a}, {model: b}, {model: c}, {model: d}, {model: e}, {model: f}, "
		  "{model: g}, {model: h}, {model: i}]}\n", "f.yaml:4: spec.models: more than 8 models" },
		{ HEAD "spec: {cohort: Research}\n",
		  "f.yaml:4: spec.cohort: expected lower-case letters, digits, '-' and '.' (not at the ends)" },
		{ HEAD "\n", "f.yaml:1: spec: missing" },
		{ "apiVersion: gpufleet.io/v1alpha1\nkind: GPUQueue\nspec: {}\n", "f.yaml:1: metadata.name: missing" },
		{ "apiVersion: v1\nkind: GPUQueue\nmetadata: {name: a}\n",
		  "f.yaml:1: apiVersion: expected gpufleet.io/v1alpha1" },
		{ "apiVersion: gpufleet.io/v1alpha1\nkind: ClusterQueue\nmetadata: {name: a}\n",
		  "f.yaml:2: kind: expected GPUQueue" },
		{ "apiVersion: gpufleet.io/v1alpha1\nkind: queue\nmetadata: {name: a}\n",
		  "f.yaml:2: kind: expected GPUQueue" },
		{ HEAD "spec: {}\n---\n" HEAD "spec: {}\n", "f.yaml:6: metadata.name: a second queue of this name" },
		{ HEAD "spec: {weight: 1, weight: 2}\n", "f.yaml:4: spec.weight: given twice" },
		{ HEAD "spec: [1, 2]\n", "f.yaml:4: spec: expected a mapping" },
		{ "- a\n- b\n", "f.yaml:1: expected a mapping (a GPUQueue object)" },
		{ "kind: List\nitems: {a: 1}\n", "f.yaml:2: items: expected a list of GPUQueue objects" },
		{ "", "f.yaml:1: kind: no GPUQueue in the file" },
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

/* A List (what `kubectl get gpuqueues -o yaml` prints) and a document of one GPUQueue, in one file. */
static void a_list_and_a_queue(void **state)
{
	static const char text[] =
		"apiVersion: v1\n"
		"kind: List\n"
		"items:\n"
		"  - apiVersion: gpufleet.io/v1alpha1\n"
		"    kind: GPUQueue\n"
		"    metadata: {name: a, uid: 1234}\n"
		"    spec: {nominalQuota: {gpus: 2}, cohort: c, ordering: backfill}\n"
		"    status: {used: {gpus: 1}}\n"
		"  - apiVersion: gpufleet.io/v1alpha1\n"
		"    kind: GPUQueue\n"
		"    metadata: {name: b}\n"
		"    spec: {cohort: ~, weight: 4}\n"
		"---\n"
		"apiVersion: gpufleet.io/v1alpha1\nkind: GPUQueue\nmetadata: {name: c}\nspec: {cohort: \"\"}\n";
	struct gf_queue_file f;
	struct gf_queues_error e;

	(void)state;
	if (gf_queues_parse(text, strlen(text), "l.yaml", &f, &e))
		fail_msg("%s", e.msg);
	assert_int_equal(f.n, 3);
	assert_string_equal(f.q[0].name, "a");
	assert_int_equal(f.q[0].ordering, GF_ORDER_BACKFILL);
	assert_int_equal(f.q[0].line, 4);
	assert_string_equal(f.q[1].cohort, "");
	assert_int_equal(f.q[1].weight, 4);
	assert_string_equal(f.q[2].name, "c");
	assert_string_equal(f.q[2].cohort, "");
	assert_string_equal(e.note, "");
	gf_queue_file_release(&f);
}

/*
 * The kinds before the CRD was renamed GPUQueue (Queue, QueueList) are read
 * as before, with one note naming the first such line and the new kind;
 * GPUQueueList is a List.
 */
static void the_old_kinds_are_read_with_a_note(void **state)
{
	static const char old[] =
		"apiVersion: gpufleet.io/v1alpha1\nkind: GPUQueue\nmetadata: {name: a}\nspec: {}\n"
		"---\n"
		"apiVersion: gpufleet.io/v1alpha1\nkind: Queue\nmetadata: {name: b}\nspec: {nominalQuota: {gpus: 3}}\n"
		"---\n"
		"apiVersion: gpufleet.io/v1alpha1\nkind: Queue\nmetadata: {name: c}\nspec: {}\n";
	static const char oldlist[] =
		"apiVersion: gpufleet.io/v1alpha1\nkind: QueueList\nitems:\n"
		"  - {apiVersion: gpufleet.io/v1alpha1, kind: GPUQueue, metadata: {name: a}, spec: {}}\n";
	static const char newlist[] =
		"apiVersion: gpufleet.io/v1alpha1\nkind: GPUQueueList\nitems:\n"
		"  - {apiVersion: gpufleet.io/v1alpha1, kind: GPUQueue, metadata: {name: a}, spec: {}}\n"
		"  - {kind: GPUQueue, metadata: {name: b}, spec: {weight: 2}}\n";
	struct gf_queue_file f;
	struct gf_queues_error e;

	(void)state;
	if (gf_queues_parse(old, strlen(old), "o.yaml", &f, &e))
		fail_msg("%s", e.msg);
	assert_int_equal(f.n, 3);
	assert_string_equal(f.q[1].name, "b");
	assert_int_equal(f.q[1].nominal, 3000);
	assert_string_equal(e.note, "o.yaml:7: kind: Queue is deprecated, read as GPUQueue (the CRD is "
				    "gpuqueues.gpufleet.io): rename it");
	gf_queue_file_release(&f);

	if (gf_queues_parse(oldlist, strlen(oldlist), "l.yaml", &f, &e))
		fail_msg("%s", e.msg);
	assert_int_equal(f.n, 1);
	assert_string_equal(e.note, "l.yaml:2: kind: QueueList is deprecated, read as GPUQueueList (the CRD is "
				    "gpuqueues.gpufleet.io): rename it");
	gf_queue_file_release(&f);

	if (gf_queues_parse(newlist, strlen(newlist), "n.yaml", &f, &e))
		fail_msg("%s", e.msg);
	assert_int_equal(f.n, 2);
	assert_int_equal(f.q[1].weight, 2);
	assert_string_equal(e.note, "");
	gf_queue_file_release(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parses_every_field),
		cmocka_unit_test(the_bundled_example_parses),
		cmocka_unit_test(bad_input_gets_one_precise_message),
		cmocka_unit_test(a_list_and_a_queue),
		cmocka_unit_test(the_old_kinds_are_read_with_a_note),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
