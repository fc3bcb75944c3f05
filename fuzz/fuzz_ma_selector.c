/*
 * fuzz/fuzz_ma_selector.c - libFuzzer harness for the label selector parser
 * (the labelSelector of the external metrics API, attacker-controlled text
 * relayed by the aggregator).  A successful parse must hold only legal keys
 * and values, format back to text that parses to the same requirements, and
 * match against a fixed label set without crashing.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzzutil.h"
#include "metricsapi/selector.h"

static const char *lookup(void *ud, const char *key)
{
	(void)ud;
	return !strcmp(key, "app") ? "llama-7b" : !strcmp(key, "n") ? "12" : NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct gf_selector a, b;
	char *s = gf_fuzz_cstr(data, size);
	if (!s)
		return 0;
	char err[256];
	if (gf_selector_parse(s, &a, err, sizeof(err)) == GF_OK) {
		(void)gf_selector_match(&a, lookup, NULL);
		char text[GF_SEL_MAX_REQS * 1200];
		size_t off = 0;
		for (unsigned i = 0; i < a.nreqs; i++) {
			if (i)
				text[off++] = ',';
			if (gf_sel_req_format(&a.reqs[i], text + off, sizeof(text) - off - 1))
				abort();
			off += strlen(text + off);
		}
		text[off] = '\0';
		if (gf_selector_parse(text, &b, err, sizeof(err)) != GF_OK || b.nreqs != a.nreqs)
			abort();
		for (unsigned i = 0; i < a.nreqs; i++) {
			if (strcmp(a.reqs[i].key, b.reqs[i].key) || a.reqs[i].op != b.reqs[i].op ||
			    a.reqs[i].nvalues != b.reqs[i].nvalues)
				abort();
			for (unsigned j = 0; j < a.reqs[i].nvalues; j++)
				if (strcmp(a.reqs[i].values[j], b.reqs[i].values[j]))
					abort();
			if (a.reqs[i].op != GF_SEL_GT && a.reqs[i].op != GF_SEL_LT)
				for (unsigned j = 0; j < a.reqs[i].nvalues; j++)
					if (!gf_label_value_valid(a.reqs[i].values[j]))
						abort();
		}
	}
	free(s);
	return 0;
}
