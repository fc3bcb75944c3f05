/*
 * fuzz/fuzz_k8s_extargs.c - libFuzzer harness for the extender's request decoder.
 *
 * The input is an HTTP body as kube-scheduler would POST it (ExtenderArgs).
 * gf_ext_args_parse() walks it with a hand-written JSON skipper before
 * cJSON sees anything, so it must never read past the body, crash or leak;
 * on success every name is a NUL-terminated string inside its buffers, and
 * the fast path and the full parser must agree on the names.
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
	gf_err e = gf_ext_args_parse(body, size, &a, &p, msg, sizeof(msg));
	if (e != GF_OK && e != GF_PARSE && e != GF_NOMEM)
		abort();
	if (e == GF_PARSE && !msg[0])
		abort();
	if (e == GF_OK) {
		for (size_t i = 0; i < a.n; i++)
			if (!a.names[i] || strlen(a.names[i]) > size)
				abort();
		if (p.req.gpu_count < 0 || p.req.gpu_count > GF_MAX_GPUS)
			abort();
	}
	gf_ext_args_release(&a);
	free(body);
	return 0;
}
