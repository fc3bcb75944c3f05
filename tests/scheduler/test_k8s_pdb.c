/* tests/scheduler/test_k8s_pdb.c - PodDisruptionBudgets (policy/v1) as the live
 * preemption reads them (k8s/pdb.h): the decoder's fields (tests/scheduler/data/pdb/:
 * train-pdb-recorded.json recorded from the 1.36.3 API server with its disruption
 * controller's status, `kubectl get pdb -o json`; train-pdb.json the same selector
 * written by hand with a count of 1), errors naming the JSON path, and which pods a
 * budget covers (namespace, matchLabels, In / NotIn / Exists / DoesNotExist, null and
 * empty selectors), on pods decoded from JSON (their packed labels, k8s/codec.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "k8s/pdb.h"

#define PDATA GF_SOURCE_DIR "/tests/scheduler/data/pdb/"

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	static char buf[65536];
	*len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[*len] = 0;
	return buf;
}

static struct gf_k8s_pdb decode(const char *doc)
{
	struct gf_k8s_pdb b;
	char err[300] = "";
	gf_err e = gf_k8s_pdb_decode_text(doc, strlen(doc), &b, err, sizeof(err));
	if (e)
		fail_msg("%s: %s", doc, err);
	return b;
}

/* A pod in namespace ns with labels given as JSON object members ("" : none). */
static struct gf_k8s_pod pod(const char *ns, const char *labels)
{
	static struct gf_k8s_pod p;
	char doc[1024], err[300] = "";
	snprintf(doc, sizeof(doc),
		 "{\"metadata\":{\"name\":\"p\",\"namespace\":\"%s\",\"uid\":\"u\",\"labels\":{%s}},"
		 "\"spec\":{\"containers\":[{\"name\":\"c\"}]}}", ns, labels);
	assert_int_equal(gf_k8s_pod_decode_text(doc, strlen(doc), &p, err, sizeof(err)), GF_OK);
	return p;
}

static void test_decode_file(void **st)
{
	(void)st;
	size_t len;
	char *t = slurp(PDATA "train-pdb.json", &len), err[300];
	struct gf_k8s_pdb b;
	assert_int_equal(gf_k8s_pdb_decode_text(t, len, &b, err, sizeof(err)), GF_OK);
	assert_string_equal(b.ns, "ml");
	assert_string_equal(b.name, "train-pdb");
	assert_true(b.selects);
	assert_int_equal(b.allowed, 1);
	assert_int_equal(b.exprs.nexprs, 2);
	assert_string_equal(b.exprs.e[0].key, "tier");
	assert_int_equal(b.exprs.e[0].op, GF_OP_IN);
	assert_int_equal(b.exprs.e[1].op, GF_OP_DOES_NOT_EXIST);
	struct gf_k8s_pod p = pod("ml", "\"app\":\"train\",\"tier\":\"gpu-large\"");
	assert_true(gf_k8s_pdb_covers(&b, &p));
	p = pod("ml", "\"app\":\"train\",\"tier\":\"gpu\",\"canary\":\"yes\""); /* DoesNotExist */
	assert_false(gf_k8s_pdb_covers(&b, &p));
	p = pod("ml", "\"app\":\"train\",\"tier\":\"cpu\""); /* In */
	assert_false(gf_k8s_pdb_covers(&b, &p));
	p = pod("ml", "\"app\":\"serve\",\"tier\":\"gpu\""); /* matchLabels */
	assert_false(gf_k8s_pdb_covers(&b, &p));
	p = pod("other", "\"app\":\"train\",\"tier\":\"gpu\""); /* its namespace only */
	assert_false(gf_k8s_pdb_covers(&b, &p));
}

/* The API server's own answer (no pod yet: disruptionsAllowed 0) selects as the hand-written one. */
static void test_decode_recorded(void **st)
{
	(void)st;
	size_t len;
	char err[300];
	struct gf_k8s_pdb rec, hand;
	char *t = slurp(PDATA "train-pdb-recorded.json", &len);
	assert_int_equal(gf_k8s_pdb_decode_text(t, len, &rec, err, sizeof(err)), GF_OK);
	t = slurp(PDATA "train-pdb.json", &len);
	assert_int_equal(gf_k8s_pdb_decode_text(t, len, &hand, err, sizeof(err)), GF_OK);
	assert_string_equal(rec.ns, "ml");
	assert_string_equal(rec.name, "train-pdb");
	assert_int_equal(rec.allowed, 0);
	assert_int_equal(rec.exprs.nexprs, 2);
	assert_true(gf_k8s_pdb_same_selector(&rec, &hand));
	struct gf_k8s_pod p = pod("ml", "\"app\":\"train\",\"tier\":\"gpu\"");
	assert_true(gf_k8s_pdb_covers(&rec, &p));
}

static void test_selectors(void **st)
{
	(void)st;
	struct gf_k8s_pdb b = decode("{\"metadata\":{\"name\":\"n\",\"namespace\":\"a\"},\"spec\":{\"selector\":"
				     "{\"matchExpressions\":[{\"key\":\"x\",\"operator\":\"NotIn\",\"values\":[\"1\",\"2\"]},"
				     "{\"key\":\"y\",\"operator\":\"Exists\"}]}}}");
	struct gf_k8s_pod p = pod("a", "\"y\":\"\"");
	assert_int_equal(b.allowed, 0); /* no status yet: nothing may go */
	assert_true(gf_k8s_pdb_covers(&b, &p));
	p = pod("a", "\"y\":\"v\",\"x\":\"3\"");
	assert_true(gf_k8s_pdb_covers(&b, &p));
	p = pod("a", "\"y\":\"v\",\"x\":\"2\""); /* NotIn */
	assert_false(gf_k8s_pdb_covers(&b, &p));
	p = pod("a", "\"x\":\"3\""); /* Exists */
	assert_false(gf_k8s_pdb_covers(&b, &p));
	/* an empty selector: every pod of its namespace; none: no pod */
	struct gf_k8s_pdb all = decode("{\"metadata\":{\"name\":\"n\",\"namespace\":\"a\"},\"spec\":{\"selector\":{}},"
				       "\"status\":{\"disruptionsAllowed\":3}}");
	struct gf_k8s_pdb none = decode("{\"metadata\":{\"name\":\"n\",\"namespace\":\"a\"},\"spec\":{}}");
	p = pod("a", "");
	assert_true(gf_k8s_pdb_covers(&all, &p));
	assert_int_equal(all.allowed, 3);
	assert_false(gf_k8s_pdb_covers(&none, &p));
	assert_true(gf_k8s_pdb_same_selector(&all, &all));
	assert_false(gf_k8s_pdb_same_selector(&all, &none));
	assert_false(gf_k8s_pdb_same_selector(&all, &b));
}

static void test_errors(void **st)
{
	(void)st;
	static const struct {
		const char *doc, *want;
	} bad[] = {
		{ "[1]", "pdb: (object): expected a PodDisruptionBudget object, got an array" },
		{ "{\"metadata\":{\"namespace\":\"a\"}}", "pdb: metadata.name: expected a name" },
		{ "{\"metadata\":{\"name\":\"n\",\"namespace\":\"a\"},\"spec\":{\"selector\":{\"matchExpressions\":"
		  "[{\"key\":\"x\",\"operator\":\"Exists\"},{\"key\":\"x\",\"operator\":\"Gt\",\"values\":[\"1\"]}]}}}",
		  "pdb a/n: spec.selector.matchExpressions[1].operator: expected In, NotIn, Exists or DoesNotExist, "
		  "got \"Gt\"" },
		{ "{\"metadata\":{\"name\":\"n\"},\"spec\":{\"selector\":{\"matchExpressions\":"
		  "[{\"key\":\"x\",\"operator\":\"In\"}]}}}",
		  "pdb default/n: spec.selector.matchExpressions[0].values: must not be empty for In" },
		{ "{\"metadata\":{\"name\":\"n\"},\"spec\":{\"selector\":{\"matchExpressions\":"
		  "[{\"key\":\"x\",\"operator\":\"Exists\",\"values\":[\"a\"]}]}}}",
		  "pdb default/n: spec.selector.matchExpressions[0].values: must be empty for Exists" },
		{ "{\"metadata\":{\"name\":\"n\"},\"spec\":{\"selector\":{\"matchLabels\":{\"a\":1}}}}",
		  "pdb default/n: spec.selector.matchLabels: a: expected a string, got a number" },
		{ "{\"metadata\":{\"name\":\"n\"},\"status\":{\"disruptionsAllowed\":-1}}",
		  "pdb default/n: status.disruptionsAllowed: expected a non-negative integer, got a number" },
		{ "{\"metadata\":{\"name\":\"n\"},\"spec\":{\"selector\":{\"matchExpressions\":[{},{},{},{},{}]}}}",
		  "pdb default/n: spec.selector.matchExpressions[0].key: expected a label key" },
		{ "not json", "pdb: not JSON" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct gf_k8s_pdb b;
		char err[300] = "";
		assert_int_equal(gf_k8s_pdb_decode_text(bad[i].doc, strlen(bad[i].doc), &b, err, sizeof(err)),
				 GF_PARSE);
		assert_string_equal(err, bad[i].want);
	}
	/* past gpufleet's limit of expressions */
	char doc[1024] = "{\"metadata\":{\"name\":\"n\"},\"spec\":{\"selector\":{\"matchExpressions\":[", err[300];
	size_t len = strlen(doc);
	for (int k = 0; k <= GF_MATCH_MAX_EXPRS; k++)
		len += (size_t)snprintf(doc + len, sizeof(doc) - len, "%s{\"key\":\"k\",\"operator\":\"Exists\"}",
					k ? "," : "");
	snprintf(doc + len, sizeof(doc) - len, "]}}}");
	struct gf_k8s_pdb b;
	assert_int_equal(gf_k8s_pdb_decode_text(doc, strlen(doc), &b, err, sizeof(err)), GF_PARSE);
	assert_non_null(strstr(err, "spec.selector.matchExpressions: more than 4 expressions"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_file),
		cmocka_unit_test(test_decode_recorded),
		cmocka_unit_test(test_selectors),
		cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
