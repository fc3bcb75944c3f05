/*
 * fuzz/fuzz_spot_trace.c - libFuzzer harness for the spot availability
 * trace decoder (cli/spottrace.h, over cJSON).
 *
 * A parse must fail with GF_PARSE and a message naming the file, or give 1
 * to GF_SPOT_TRACE_MAX_TICKS counts within [0, GF_SPOT_TRACE_MAX_NODES] and
 * a gap within [1, 86400] seconds.
 */
#include "fuzzutil.h"

#include "cli/spottrace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gf_spot_trace t;
	char err[512];
	gf_err e = gf_spot_trace_parse((const char *)data, size, "fuzz", &t, err, sizeof(err));

	if (e == GF_NOMEM)
		return 0;
	if (!gf_fuzz_decoded(e, err)) {
		if (strncmp(err, "fuzz:", 5))
			abort();
		return 0;
	}
	if (t.n < 1 || t.n > GF_SPOT_TRACE_MAX_TICKS || t.gap < 1 || t.gap > 86400)
		abort();
	for (size_t k = 0; k < t.n; k++)
		if (t.avail[k] < 0 || t.avail[k] > GF_SPOT_TRACE_MAX_NODES)
			abort();
	gf_spot_trace_release(&t);
	return 0;
}
