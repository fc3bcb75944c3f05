/*
 * tests/agent/test_agent_watchdog.c - the watchdog's share lookup in
 * /proc/<pid>/mountinfo (agent/watchdog.h): the limit file's mount found
 * among others, its folder's name split, other shapes refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "agent/watchdog.h"

#define UUID "GPU-1f3c2a9e-8d4b-4c1e-9a7f-3b2d1c0e9f8a"
#define OTHER "1201 1190 0:22 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw\n" \
	      "1202 1190 254:1 /var/lib/kubelet/pods/x/etc-hosts /etc/hosts rw,relatime - ext4 /dev/vda1 rw\n"

static gf_err parse(const char *s, struct gf_wd_share *sh)
{
	return gf_wd_parse_mountinfo(s, strlen(s), sh);
}

static void found_among_other_mounts(void **state)
{
	(void)state;
	struct gf_wd_share sh;
	/* /var/run is /run's tmpfs on most hosts: the root is relative to it. */
	const char *t = OTHER "1210 1190 0:25 /gpufleet/memcap/" UUID "-u250-n250/limit /etc/gpufleet/memcap/limit "
			      "ro,nosuid,nodev - tmpfs tmpfs rw,size=3274672k,mode=755\n"
			      "1211 1190 0:25 /gpufleet/memcap/" UUID "-u250-n250/ledger /var/run/gpufleet/memcap "
			      "rw - tmpfs tmpfs rw\n";
	assert_int_equal(parse(t, &sh), GF_OK);
	assert_string_equal(sh.uuid, UUID);
	assert_int_equal(sh.first, 250);
	assert_int_equal(sh.units, 250);
	/* Unit 0 and a whole GPU's 1000 units; the last line without '\n'. */
	t = "1 0 0:1 /x/" UUID "-u0-n1000/limit /etc/gpufleet/memcap/limit ro - tmpfs tmpfs rw";
	assert_int_equal(parse(t, &sh), GF_OK);
	assert_int_equal(sh.first, 0);
	assert_int_equal(sh.units, 1000);
	/* MIG-style UUIDs and ones holding "-u"/"-n" themselves: split from the right. */
	t = "1 0 0:1 /MIG-a-u1-n2-u7-n3/limit /etc/gpufleet/memcap/limit ro - tmpfs tmpfs rw\n";
	assert_int_equal(parse(t, &sh), GF_OK);
	assert_string_equal(sh.uuid, "MIG-a-u1-n2");
	assert_int_equal(sh.first, 7);
	assert_int_equal(sh.units, 3);
}

static void no_share(void **state)
{
	(void)state;
	struct gf_wd_share sh;
	assert_int_equal(parse(OTHER, &sh), GF_NOENT);
	assert_int_equal(parse("", &sh), GF_NOENT);
	/* The folder mounted elsewhere is not the share's limit. */
	assert_int_equal(parse("1 0 0:1 /" UUID "-u0-n250/limit /tmp/limit ro - tmpfs tmpfs rw\n", &sh), GF_NOENT);
	/* A prefix of the mount point is not it either. */
	assert_int_equal(parse("1 0 0:1 /" UUID "-u0-n250/limit /etc/gpufleet/memcap/limit2 ro - t t rw\n", &sh),
			 GF_NOENT);
}

static void bad_shapes(void **state)
{
	(void)state;
	struct gf_wd_share sh;
	static const char *const roots[] = {
		"/limit",                        /* no folder */
		"/" UUID "/limit",               /* no units */
		"/" UUID "-u0/limit",            /* no -n */
		"/" UUID "-n250/limit",          /* no -u */
		"/" UUID "-u0-n0/limit",         /* zero units */
		"/" UUID "-u0-n1001/limit",      /* over a GPU */
		"/" UUID "-u900-n250/limit",     /* past unit 999 */
		"/" UUID "-ux-n250/limit",       /* not a number */
		"/" UUID "-u0-n25a/limit",
		"/" UUID "-u0-n250/limits",      /* not the limit file */
		"/-u0-n250/limit",               /* empty UUID */
		"/GPU-1f3c_x-u0-n250/limit",     /* not a UUID's characters */
	};
	/* Found by fuzz_agent_mountinfo: a NUL and other bytes in the UUID. */
	static const char nul[] = "1 0 0:1 \0\372pua-9e21\377-u250-n250/limit /etc/gpufleet/memcap/limit ro - t t rw\n";
	assert_int_equal(gf_wd_parse_mountinfo(nul, sizeof(nul) - 1, &sh), GF_PARSE);
	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		char line[512];
		snprintf(line, sizeof(line), "1 0 0:1 %s /etc/gpufleet/memcap/limit ro - tmpfs tmpfs rw\n", roots[i]);
		if (parse(line, &sh) != GF_PARSE)
			fail_msg("root %s: want GF_PARSE", roots[i]);
	}
}

static void share_bytes(void **state)
{
	(void)state;
	/* The device plugin's limit file: mem_total / 1000 * units. */
	assert_int_equal(gf_wd_share_bytes(80ull << 30, 250), (80ull << 30) / 1000 * 250);
	assert_int_equal(gf_wd_share_bytes(80ull << 30, 1000), (80ull << 30) / 1000 * 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(found_among_other_mounts),
		cmocka_unit_test(no_share),
		cmocka_unit_test(bad_shapes),
		cmocka_unit_test(share_bytes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
