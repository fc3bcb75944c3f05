/*
 * fuzz/fuzz_queues.c - libFuzzer harness for the queue file decoder
 * (yaml/queues.h, over libyaml) and the Queue validator behind it
 * (queue/queuedef.h).
 *
 * A parse must fail with a message naming the file, or give 1..256 queues
 * with names, non-negative quantities, weights within the CRD's range, a
 * known ordering and a lending limit
 * within the nominal quota; the quotas must then convert (models interned
 * first, so that every model is known) into what the engine accepts.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "yaml/queues.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gf_queue_file f;
	struct gf_queues_error e;
	struct gf_catalog cat;
	static struct gf_queue_quota q[GF_LOOP_MAX_QUEUES];
	gf_err err = gf_queues_parse((const char *)data, size, "fuzz", &f, &e);

	if (err) {
		if (err == GF_PARSE && strncmp(e.msg, "fuzz:", 5))
			abort();
		return 0;
	}
	if (f.n < 1 || f.n > GF_LOOP_MAX_QUEUES)
		abort();
	if (gf_catalog_init(&cat))
		abort();
	for (size_t i = 0; i < f.n; i++) {
		const struct gf_queue_def *d = &f.q[i];
		int id;

		if (!d->name[0] || d->nominal < 0 || d->weight < GF_QUEUE_WEIGHT_MIN ||
		    d->weight > GF_QUEUE_WEIGHT_MAX || d->ordering > GF_ORDER_SKIP_AHEAD || d->borrowing_limit < 0 ||
		    d->nmodels > GF_QUEUE_MODELS_MAX ||
		    (d->lending_limit != GF_QUOTA_UNLIMITED && d->lending_limit > d->nominal))
			abort();
		for (uint32_t m = 0; m < d->nmodels; m++)
			if (gf_catalog_model(&cat, d->models[m].model, strlen(d->models[m].model), &id) == GF_INVAL)
				abort();
	}
	/* more than GF_MAX_MODELS distinct models cannot all be interned: a lookup error is fine then */
	err = gf_queues_to_quota(&f, &cat, "fuzz", q, &e);
	if (err && (err != GF_PARSE || cat.nmodels < GF_MAX_MODELS))
		abort();
	for (size_t i = 0; !err && i < f.n; i++)
		if (q[i].cohort < -1 || q[i].cohort >= (int32_t)f.n)
			abort();
	gf_catalog_release(&cat);
	gf_queue_file_release(&f);
	return 0;
}
