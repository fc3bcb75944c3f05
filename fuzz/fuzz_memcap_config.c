/*
 * fuzz/fuzz_memcap_config.c - the GPU-memory cap's limit-file parser
 * (gf_memcap_config_parse).  Invariants checked: no crash; on success every
 * limit is 0 (uncapped) or 1..2^62 and at least one is set; on failure the
 * error names its line; the error is always NUL-terminated.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "memcap/memcap_config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gf_memcap_config c;
	char err[256];
	if (gf_memcap_config_parse((const char *)data, size, &c, err, sizeof(err))) {
		bool any = false;
		for (int d = 0; d < GF_MEMCAP_MAX_DEVICES; d++) {
			if (c.limit[d] > GF_MEMCAP_MAX_LIMIT)
				abort();
			any |= c.limit[d] != 0;
		}
		if (!any)
			abort();
	} else if (strncmp(err, "line ", 5) != 0 || !memchr(err, '\0', sizeof(err))) {
		abort();
	}
	return 0;
}
