/*
 * fuzz/fuzz_prom_answer.c - libFuzzer harness for the Prometheus answer
 * decoder every Prometheus reader uses (prom/promjson.h): the envelope,
 * samples and labels of a network input.
 *
 * The first byte chooses the accepted result types (1..7); the rest is the
 * answer.  A decode must fail with a message and hold nothing, or give a
 * result of an accepted type (an array unless scalar); every sample of it
 * must decode or be refused with a reason, and labels never carry __name__.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "prom/promjson.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_sample(const cJSON *pair)
{
	double t, v;
	enum gf_prom_sample_check c = gf_prom_sample(pair, &t, &v);
	if (c != GF_PROM_SAMPLE_OK && !gf_prom_sample_error(c)[0])
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	unsigned want = (data[0] % 7) + 1;
	struct gf_prom_answer a;
	char err[256];
	gf_err e = gf_prom_answer_parse((const char *)data + 1, size - 1, want, "fuzz answer", &a, err, sizeof(err));
	if (e) {
		if (a.doc || a.result || (e == GF_PARSE && strncmp(err, "prometheus fuzz answer: ", 24)))
			abort();
		return 0;
	}
	if (!(a.type & want) || !a.result || (a.type != GF_PROM_SCALAR && !cJSON_IsArray(a.result)))
		abort();
	if (a.type == GF_PROM_SCALAR) {
		check_sample(a.result);
	} else {
		const cJSON *it;
		cJSON_ArrayForEach(it, a.result)
		{
			bool nomem;
			cJSON *l = gf_prom_labels(cJSON_GetObjectItemCaseSensitive(it, "metric"), &nomem);
			if (l && cJSON_GetObjectItemCaseSensitive(l, "__name__"))
				abort();
			cJSON_Delete(l);
			check_sample(cJSON_GetObjectItemCaseSensitive(it, "value"));
			const cJSON *p;
			cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(it, "values"))
				check_sample(p);
		}
	}
	cJSON *doc = gf_prom_answer_detach(&a);
	if (a.doc || !doc)
		abort();
	cJSON_Delete(doc);
	return 0;
}
