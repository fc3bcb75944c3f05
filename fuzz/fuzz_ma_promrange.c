/*
 * fuzz/fuzz_ma_promrange.c - libFuzzer harness for the Prometheus
 * query_range decoder (metricsapi/promrange.h), a network input.
 *
 * The input is the response body; the grid is fixed (start 1000, step 60,
 * 50 points).  A decode must fail with a message or give at most
 * GF_MA_RANGE_MAX_SERIES series of exactly 50 points each.
 */
#include <stdint.h>
#include <stdlib.h>

#include "metricsapi/promrange.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gf_ma_range r;
	char err[256];
	gf_err e = gf_promrange_decode((const char *)data, size, 1000, 60, 50, &r, err, sizeof(err));

	if (e) {
		if ((e == GF_PARSE || e == GF_TOOBIG) && !err[0])
			abort();
		if (r.n)
			abort();
		return 0;
	}
	if (r.n > GF_MA_RANGE_MAX_SERIES || r.npoints != 50)
		abort();
	for (size_t i = 0; i < r.n; i++)
		if (!r.s[i].labels || !r.s[i].v)
			abort();
	gf_ma_range_release(&r);
	return 0;
}
