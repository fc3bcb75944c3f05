/*
 * fuzz/fuzz_serving.c - libFuzzer harness for the serving replay's CSV
 * parsers (autoscale/serving.h).
 *
 * The first byte chooses the parser (trace or latency list); the rest is the
 * file.  A parse must fail with a message or give rows in time order with
 * finite non-negative values; a small trace that parsed is also turned into
 * demand and replayed by the HPA so the model's loops see odd traces.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "autoscale/serving.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void replay(const struct gf_serving_trace *tr)
{
	struct gf_serving_demand d;
	struct gf_serving_config c = gf_serving_config_default();
	struct gf_serving_result r;
	struct gf_scaler s;

	if (tr->t[tr->n - 1] - tr->t[0] > 86400 || gf_serving_demand_build(tr, &d))
		return;
	if (!gf_scaler_parse("predictive", &s) && !gf_serving_run(tr, &d, &c, &s, &r)) {
		if (!(r.gpu_hours >= 0) || r.under_min > r.minutes || !(r.slo_miss_pct >= 0 && r.slo_miss_pct <= 100))
			abort();
		gf_serving_result_release(&r);
	}
	gf_serving_demand_release(&d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gf_serving_error err;
	const char *text = (const char *)data + 1;
	size_t len = size ? size - 1 : 0;

	if (!size)
		return 0;
	if (data[0] & 1) {
		double *v;
		size_t n;

		if (!gf_serving_parse_latencies(text, len, "fuzz", &v, &n, &err)) {
			for (size_t i = 0; i < n; i++)
				if (!(v[i] >= 0) || !isfinite(v[i]))
					abort();
			free(v);
		} else if (!err.msg[0]) {
			abort();
		}
		return 0;
	}
	struct gf_serving_trace tr;
	gf_err e = gf_serving_parse(text, len, "fuzz", &tr, &err);

	if (e) {
		if (e != GF_NOMEM && !err.msg[0])
			abort();
		return 0;
	}
	for (size_t i = 0; i < tr.n; i++)
		if (!(tr.v[i] >= 0) || !isfinite(tr.v[i]) || (i && tr.t[i] < tr.t[i - 1]))
			abort();
	replay(&tr);
	gf_serving_trace_release(&tr);
	return 0;
}
