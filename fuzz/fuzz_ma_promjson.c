/*
 * fuzz/fuzz_ma_promjson.c - libFuzzer harness for the Prometheus
 * /api/v1/query response decoder and the ExternalMetricValueList renderer
 * (a Prometheus server's answer is input from the network).  Must return an
 * error or a result whose items render to JSON, never crash or leak.
 */
#include <stdint.h>
#include <stdlib.h>

#include "core/obuf.h"
#include "metricsapi/promql.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct gf_ma_result r;
	char err[256];
	gf_ma_result_init(&r);
	if (gf_promql_decode((const char *)data, size, &r, err, sizeof(err)) == GF_OK) {
		if (r.n > GF_MA_MAX_ITEMS)
			abort();
		struct gf_obuf b;
		gf_obuf_init(&b, 8u << 20);
		if (gf_ma_render_list("m", &r, &b) != GF_OK && gf_obuf_error(&b) != GF_TOOBIG)
			abort();
		gf_obuf_release(&b);
	}
	gf_ma_result_release(&r);
	return 0;
}
