/*
 * fuzz/fuzz_agent_mountinfo.c - the watchdog's share lookup in the contents
 * of /proc/<pid>/mountinfo (gf_wd_parse_mountinfo).  Invariants checked: no
 * crash; a found share has a non-empty NUL-terminated UUID and units
 * 1..1000 within one GPU (first + units <= 1000).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/watchdog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gf_wd_share sh;
	gf_err e = gf_wd_parse_mountinfo((const char *)data, size, &sh);
	if (e == GF_OK) {
		size_t n = strnlen(sh.uuid, sizeof(sh.uuid));
		if (n == 0 || n == sizeof(sh.uuid) || sh.units == 0 || sh.units > 1000 || sh.first + sh.units > 1000)
			abort();
	} else if (e != GF_NOENT && e != GF_PARSE) {
		abort();
	}
	return 0;
}
