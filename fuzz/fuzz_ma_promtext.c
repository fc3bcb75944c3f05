/*
 * fuzz/fuzz_ma_promtext.c - libFuzzer harness for the agents' /metrics text
 * as the metrics API ingests it (Prometheus text reader, series store, one
 * query over it).  Input from any agent URL: must be taken or refused with
 * an error, never crash, leak or read out of bounds.
 */
#include <stdint.h>
#include <stdlib.h>

#include "metricsapi/agents.h"
#include "metricsapi/promtext.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static gf_err count(void *ud, const char *name, const struct gf_prom_label *labels, size_t nl,
		    double v)
{
	(void)name;
	(void)v;
	size_t *n = ud;
	for (size_t i = 0; i < nl; i++)
		if (!labels[i].name[0] && !labels[i].value)
			abort();
	(*n)++;
	return GF_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static gf_ma_agents *a;
	if (!a) {
		const char *urls[] = { "http://fuzz/metrics" };
		struct gf_ma_agents_config c = { .urls = urls, .nurls = 1, .no_thread = true };
		if (gf_ma_agents_create(&c, &a))
			abort();
	}
	char err[256];
	size_t n = 0;
	(void)gf_promtext_parse((const char *)data, size, count, &n, err, sizeof(err));
	if (gf_ma_agents_ingest(a, 0, (const char *)data, size, 1000, err, sizeof(err)) == GF_OK) {
		size_t nc;
		const struct gf_ma_metric *cat = gf_ma_catalog(&nc);
		struct gf_ma_query q = { .ns = NULL, .metric = &cat[0] };
		struct gf_ma_result r;
		gf_ma_result_init(&r);
		(void)gf_ma_agents_query(a, &q, 1000, &r, err, sizeof(err));
		gf_ma_result_release(&r);
	}
	return 0;
}
