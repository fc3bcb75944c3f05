/*
 * tests/metrics-api/test_ma_selector.c - label selector syntax (every
 * operator, blanks, empty values, prefixed keys), errors with positions,
 * limits, matching semantics and the format round trip.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "metricsapi/selector.h"

static struct gf_selector sel;
static char err[256];

static void ok(const char *s, unsigned nreqs)
{
	gf_err e = gf_selector_parse(s, &sel, err, sizeof(err));
	if (e)
		fail_msg("parse '%s': %s (%s)", s ? s : "(null)", err, gf_err_name(e));
	assert_int_equal(sel.nreqs, nreqs);
}

static void bad(const char *s, const char *msg_part)
{
	gf_err e = gf_selector_parse(s, &sel, err, sizeof(err));
	if (e != GF_PARSE && e != GF_TOOBIG)
		fail_msg("'%s' parsed (%s) but should not", s, gf_err_name(e));
	if (msg_part && !strstr(err, msg_part))
		fail_msg("'%s': error '%s' lacks '%s'", s, err, msg_part);
}

static void test_forms(void **st)
{
	(void)st;
	ok(NULL, 0);
	ok("", 0);
	ok("   ", 0);
	ok("app=llama-7b", 1);
	assert_string_equal(sel.reqs[0].key, "app");
	assert_int_equal(sel.reqs[0].op, GF_SEL_EQ);
	assert_string_equal(sel.reqs[0].values[0], "llama-7b");
	ok("app==x", 1);
	assert_int_equal(sel.reqs[0].op, GF_SEL_EQ);
	ok("app!=x", 1);
	assert_int_equal(sel.reqs[0].op, GF_SEL_NE);
	ok("deployment=llm,gpu in (0,1)", 2);
	assert_int_equal(sel.reqs[1].op, GF_SEL_IN);
	assert_int_equal(sel.reqs[1].nvalues, 2);
	assert_string_equal(sel.reqs[1].values[1], "1");
	ok("tier notin (a, b ,c)", 1);
	assert_int_equal(sel.reqs[0].op, GF_SEL_NOTIN);
	assert_int_equal(sel.reqs[0].nvalues, 3);
	assert_string_equal(sel.reqs[0].values[2], "c");
	ok("gpu", 1);
	assert_int_equal(sel.reqs[0].op, GF_SEL_EXISTS);
	ok("!gpu", 1);
	assert_int_equal(sel.reqs[0].op, GF_SEL_NOTEXISTS);
	ok("replicas>5,replicas<10", 2);
	assert_int_equal(sel.reqs[0].op, GF_SEL_GT);
	assert_int_equal(sel.reqs[0].num, 5);
	assert_int_equal(sel.reqs[1].op, GF_SEL_LT);
	ok("k=", 1);
	assert_string_equal(sel.reqs[0].values[0], "");
	ok("k in (a,)", 1);
	assert_int_equal(sel.reqs[0].nvalues, 2);
	ok("app.kubernetes.io/name=gpufleet , x", 2);
	assert_string_equal(sel.reqs[0].key, "app.kubernetes.io/name");
	ok(" a = b , ! c ", 2);
	assert_int_equal(sel.reqs[1].op, GF_SEL_NOTEXISTS);
	assert_string_equal(sel.reqs[1].key, "c");
}

static void test_errors(void **st)
{
	(void)st;
	bad("=x", "expected a label key");
	bad("a=b=c", "expected ','");
	bad("a in b", "expected '('");
	bad("a in (b", "expected ',' or ')'");
	bad("a b", "expected an operator");
	bad("a=b,", "expected a label key");
	bad(",", "expected a label key");
	bad("a>x", "integer");
	bad("a>", "expected a value");
	bad("!a=b", "after !key");
	bad("a=-x", "invalid label value");
	bad("a=70%", "invalid label value");
	bad("-a=b", "invalid label key");
	bad("Bad.Prefix/x=y", "invalid label key");
	bad("a=0123456789012345678901234567890123456789012345678901234567890123", "invalid label value");
	bad("a=\"quoted\"", "invalid label value");
	bad("a=b)", "at 4");
	/* Control bytes are not blanks (apimachinery's lexer skips only space,
	 * tab, CR, LF): "\v" was read as an empty selector, i.e. everything. */
	bad("\v", "invalid label key");
	bad("\f", "invalid label key");
	bad("\x01", "invalid label key");
	bad("app\v=x", "invalid label key");
	bad("app=\x7f", "invalid label value");
	char many[512] = "k";
	for (int i = 1; i < GF_SEL_MAX_REQS + 1; i++)
		memcpy(many + 2 * i - 1, ",k", 3);
	assert_int_equal(gf_selector_parse(many, &sel, err, sizeof(err)), GF_TOOBIG);
	assert_int_equal(gf_selector_parse("k in (1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17)", &sel, err,
					   sizeof(err)),
			 GF_TOOBIG);
}

struct labels {
	const char *k[4], *v[4];
};

static const char *lookup(void *ud, const char *key)
{
	struct labels *l = ud;
	for (int i = 0; i < 4 && l->k[i]; i++)
		if (!strcmp(l->k[i], key))
			return l->v[i];
	return NULL;
}

static bool matches(const char *s, struct labels *l)
{
	assert_int_equal(gf_selector_parse(s, &sel, err, sizeof(err)), GF_OK);
	return gf_selector_match(&sel, lookup, l);
}

static void test_match(void **st)
{
	(void)st;
	struct labels l = { { "app", "gpu", "n" }, { "llama-7b", "0", "12" } };
	assert_true(matches("", &l));
	assert_true(matches("app=llama-7b", &l));
	assert_false(matches("app=llama-70b", &l));
	assert_true(matches("app!=llama-70b", &l));
	assert_true(matches("missing!=x", &l)); /* absent satisfies != */
	assert_false(matches("missing=x", &l));
	assert_true(matches("gpu in (0,1)", &l));
	assert_false(matches("gpu notin (0,1)", &l));
	assert_true(matches("missing notin (0,1)", &l));
	assert_true(matches("gpu", &l));
	assert_false(matches("!gpu", &l));
	assert_true(matches("!missing", &l));
	assert_true(matches("n>5,n<13", &l));
	assert_false(matches("n>12", &l));
	assert_false(matches("app>1", &l)); /* not an integer */
	assert_false(matches("missing>1", &l));
	assert_false(matches("app=llama-7b,gpu=1", &l));
}

static void test_format_roundtrip(void **st)
{
	(void)st;
	const char *in[] = { "a=b", "a!=b", "a in (x,y)", "a notin (x)", "a", "!a", "a>3", "a<-3",
			     "x.io/y=", "k in (,v)" };
	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		assert_int_equal(gf_selector_parse(in[i], &sel, err, sizeof(err)), GF_OK);
		char out[512];
		assert_int_equal(gf_sel_req_format(&sel.reqs[0], out, sizeof(out)), GF_OK);
		assert_string_equal(out, in[i]);
	}
	char small[4];
	assert_int_equal(gf_selector_parse("abcdef=g", &sel, err, sizeof(err)), GF_OK);
	assert_int_equal(gf_sel_req_format(&sel.reqs[0], small, sizeof(small)), GF_TOOBIG);
	assert_string_equal(small, "");
	assert_true(gf_label_value_valid("NVIDIA-H100-80GB-HBM3"));
	assert_false(gf_label_value_valid("NVIDIA H100"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forms),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_match),
		cmocka_unit_test(test_format_roundtrip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
