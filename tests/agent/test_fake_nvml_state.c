/*
 * tests/agent/test_fake_nvml_state.c - the FAKE NVML's state-file parser:
 * a full file parses to the scripted values; each kind of bad line is
 * rejected with "<file>:<line>: <what>".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fake_state.h"

static void test_good(void **state)
{
	(void)state;
	const char *t = "# comment\n\ndriver 1.2.3\n"
			"gpu 0 uuid=GPU-x name=\"Fake H100 80GB\" util_gpu=87 mem_total_mib=81559 # tail\n"
			"gpu 1 lost_after=5\nproc 0 pid=42 mem_mib=100\nnvlink 0 1 links=4\ntopo 0 1 40\n"
			"xid 1 79\nmig 0 gi=3 uuid=MIG-1 profile=1g.10gb mem_mib=9856\n";
	struct fake_state *st = malloc(sizeof(*st));
	char err[256] = "";
	assert_int_equal(fake_state_parse(t, strlen(t), "s", st, err, sizeof(err)), 0);
	assert_string_equal(st->driver, "1.2.3");
	assert_int_equal(st->ngpus, 2);
	assert_string_equal(st->gpus[0].name, "Fake H100 80GB");
	assert_int_equal(st->gpus[0].v[FK_util_gpu], 87);
	assert_true(st->gpus[0].set >> FK_util_gpu & 1);
	assert_false(st->gpus[0].set >> FK_power_mw & 1);
	assert_int_equal(st->gpus[1].v[FK_lost_after], 5);
	assert_int_equal(st->gpus[0].procs[0].pid, 42);
	assert_int_equal(st->gpus[1].nvlinks[0], 4);
	assert_int_equal(st->gpus[1].topo[0], 40);
	assert_int_equal(st->nxid, 1);
	assert_int_equal(st->xid_code[0], 79);
	assert_string_equal(st->gpus[0].mig[0].profile, "1g.10gb");
	free(st);
}

static void test_bad(void **state)
{
	(void)state;
	struct {
		const char *text, *err;
	} bad[] = {
		{ "gpu 0\nbogus 1\n", "s:2: unknown directive 'bogus'" },
		{ "gpu 1\n", "s:1: gpu: index 1 out of order (next is 0)" },
		{ "gpu 0 color=red\n", "s:1: gpu: unknown key 'color'" },
		{ "gpu 0 util_gpu=lots\n", "s:1: util_gpu: expected an integer" },
		{ "gpu 0 util_gpu\n", "s:1: gpu: expected key=value, got 'util_gpu'" },
		{ "gpu 0 name=\"open\n", "s:1: unterminated quote" },
		{ "proc 0 pid=1 mem_mib=1\n", "s:1: GPU 0 is not defined" },
		{ "gpu 0\nproc 0 pid=0 mem_mib=1\n", "s:2: pid: expected an integer in 1..4194304" },
		{ "gpu 0\ngpu 1\ntopo 0 1 35\n", "s:3: topo: level must be 0, 10, 20, 30, 40 or 50" },
		{ "gpu 0\nnvlink 0 0 links=2\n", "s:2: nvlink: a GPU cannot link to itself" },
		{ "gpu 0\nmig 0 gi=1\n", "s:2: mig: expected" },
		{ "driver\n", "s:1: driver: expected 'driver VERSION'" },
		{ "gpu 0 uuid=0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789\n",
		  "s:1: uuid: longer than 95 characters" },
	};
	struct fake_state *st = malloc(sizeof(*st));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char err[256] = "";
		assert_int_equal(fake_state_parse(bad[i].text, strlen(bad[i].text), "s", st, err, sizeof(err)),
				 -1);
		if (!strstr(err, bad[i].err)) {
			print_message("got '%s', want '%s'\n", err, bad[i].err);
			fail();
		}
	}
	free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_bad),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
