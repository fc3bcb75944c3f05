/*
 * fuzz/fuzz_fake_nvml_state.c - the FAKE NVML's state-file parser
 * (tests/agent/fake_state.c): no crash on any input, and every rejection
 * names the file and line ("<name>:<line>: ...").
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fake_state.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fake_state st;
	char err[512];
	if (fake_state_parse((const char *)data, size, "fuzz", &st, err, sizeof(err)) != 0) {
		if (strncmp(err, "fuzz:", 5) != 0)
			abort();
	} else if (st.ngpus > FAKE_MAX_GPUS || st.nxid > FAKE_MAX_XID) {
		abort();
	}
	return 0;
}
