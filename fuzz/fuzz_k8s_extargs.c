/*
 * fuzz/fuzz_k8s_extargs.c - libFuzzer harness for the extender's request decoder.
 *
 * The input is an HTTP body as kube-scheduler would POST it (ExtenderArgs).
 * gf_ext_args_parse() walks it with a hand-written JSON skipper before
 * cJSON sees anything, so it must never read past the body, crash or leak;
 * on success every name lies inside the body (fast path) or its document.
 * A second decode with the first one's names as the hint (the extender's
 * filter-then-prioritize memo) must give the same names.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "k8s/extargs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* An exact-size copy, no NUL after it: reads past the end are caught. */
	char *body = malloc(size ? size : 1);
	if (!body)
		return 0;
	memcpy(body, data, size);
	struct gf_ext_args a;
	static struct gf_k8s_pod p;
	char msg[400] = "";
	gf_err e = gf_ext_args_parse(body, size, NULL, &a, &p, msg, sizeof(msg));
	if (e != GF_OK && e != GF_PARSE && e != GF_NOMEM)
		abort();
	if (e == GF_PARSE && !msg[0])
		abort();
	if (e == GF_OK) {
		for (size_t i = 0; i < a.n; i++)
			if (!a.names[i] || a.lens[i] > size || (a.plain && (a.names[i] < body || a.names[i] + a.lens[i] > body + size)))
				abort();
		if (p.req.gpu_count < 0 || p.req.gpu_count > GF_MAX_GPUS)
			abort();
		for (size_t i = 0; a.item_text && i < a.n; i++)
			if (a.item_text[i] < body || a.item_text[i] + a.item_len[i] > body + size ||
			    a.item_text[i][0] != '{' || a.item_text[i][a.item_len[i] - 1] != '}')
				abort();
		if (a.span) {
			struct gf_ext_hint h = { a.span, a.span_len, a.names, a.lens, a.n };
			struct gf_ext_args b;
			if (gf_ext_args_parse(body, size, &h, &b, &p, msg, sizeof(msg)) != GF_OK || !b.hit ||
			    b.n != a.n)
				abort();
			for (size_t i = 0; i < a.n; i++)
				if (b.lens[i] != a.lens[i] || memcmp(b.names[i], a.names[i], a.lens[i]))
					abort();
			gf_ext_args_release(&b);
		}
	}
	gf_ext_args_release(&a);
	free(body);
	return 0;
}
