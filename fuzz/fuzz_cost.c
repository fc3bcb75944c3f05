/*
 * fuzz/fuzz_cost.c - libFuzzer harness for the cost inputs users type or
 * send: the price sheet, windows, durations, aggregates (cost/cost.h), and
 * Prometheus' answers to the cost queries (costapi/promsrc.h).
 *
 * The first byte chooses the parser; the rest is the input.  Each must
 * return an error or a well-formed value: prices finite and >= 0, windows
 * non-empty, decoded uses within their GPU's share (a Prometheus answer is read
 * both per GPU and as the pools' answer); a decoded record is then
 * priced and rendered (the accounting must not fail on what decoding gave).
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cost/cost.h"
#include "costapi/promsrc.h"
#include "fuzzutil.h"

static void prom(const char *text, size_t len, bool pooled)
{
	/* The same bytes answer every query: allocation, capacity, utilization, labels; pooled:
	 * the pools' answers of a recorded namespace report (costapi/promsrc.h). */
	struct gf_cost_aggregate agg;
	char err[512];
	if (gf_cost_parse_aggregate(pooled ? "namespace" : "namespace,label:team", &agg, err, sizeof(err)))
		abort();
	const char *answers[GF_COSTQ_LABELS + 2] = { text, text, text, NULL, text };
	size_t lens[GF_COSTQ_LABELS + 2] = { len, len, len, 0, len };
	struct gf_cost_data d;
	if (gf_cost_data_decode(answers, lens, pooled ? GF_COST_RES_RECORDED : 60, &agg, &d, err, sizeof(err)))
		return;
	if (pooled != gf_cost_pooled(GF_COST_RES_RECORDED, &agg))
		abort();
	for (size_t i = 0; i < d.ngpus; i++)
		if (!(d.gpus[i].overcommit_seconds >= 0) || !(d.gpus[i].seconds >= 0))
			abort();
	for (size_t i = 0; i < d.nuses; i++)
		if (!(d.uses[i].share_seconds >= 0) || d.uses[i].share_seconds > d.uses[i].seconds * (1 + 1e-9) + 1e-9)
			abort();
	struct gf_cost_price star = { .model = "*", .on_demand = 2, .spot = 1 };
	struct gf_cost_prices p = { .v = &star, .n = 1, .currency = "USD" };
	struct gf_cost_input in = { .start = 0, .end = 3600, .uses = d.uses, .nuses = d.nuses, .gpus = d.gpus,
				    .ngpus = d.ngpus, .prices = &p, .agg = agg, .include_idle = true };
	struct gf_cost_report r;
	if (gf_cost_compute(&in, &r, err, sizeof(err)))
		abort();
	struct gf_obuf o;
	gf_obuf_init(&o, 64u << 20);
	gf_cost_render_set(&r, &o);
	gf_cost_render_table(&r, "USD", &o);
	gf_obuf_release(&o);
	gf_cost_report_release(&r);
	gf_cost_data_release(&d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	const char *text = (const char *)data + 1;
	size_t len = size - 1;
	char err[512], *s = gf_fuzz_cstr(text, len);
	if (!s)
		return 0;
	switch (data[0] % 5) {
	case 0: {
		struct gf_cost_prices p;
		if (!gf_cost_prices_parse(text, len, "fuzz", &p, err, sizeof(err))) {
			for (size_t i = 0; i < p.n; i++)
				if (!isfinite(p.v[i].on_demand) || p.v[i].on_demand < 0 || !isfinite(p.v[i].spot) ||
				    p.v[i].spot < 0 || !p.v[i].model[0])
					abort();
			gf_cost_prices_release(&p);
		}
		break;
	}
	case 1: {
		int64_t a, b;
		if (!gf_cost_parse_window(s, 1796137462, &a, &b, err, sizeof(err)) && a >= b)
			abort();
		break;
	}
	case 2: {
		int64_t d;
		if (!gf_cost_parse_duration(s, &d, err, sizeof(err)) && d <= 0)
			abort();
		struct gf_cost_aggregate agg;
		if (!gf_cost_parse_aggregate(s, &agg, err, sizeof(err)) &&
		    (agg.nkeys < 1 || agg.nkeys > GF_COST_MAX_KEYS))
			abort();
		break;
	}
	case 3:
		(void)gf_cost_mig_fraction(s);
		break;
	default:
		prom(text, len, false);
		prom(text, len, true);
		break;
	}
	free(s);
	return 0;
}
