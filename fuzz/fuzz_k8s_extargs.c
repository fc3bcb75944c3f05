/*
 * fuzz/fuzz_k8s_extargs.c - libFuzzer harness for the extender's request decoder.
 *
 * The input is an HTTP body as kube-scheduler would POST it (ExtenderArgs).
 * gf_ext_args_parse() walks it with a hand-written JSON skipper before
 * cJSON sees anything, so it must never read past the body, crash or leak;
 * on success every name lies inside the body (fast path) or its document.
 * A second decode with the first one's names as the hint (the extender's
 * filter-then-prioritize memo) must give the same names.
 *
 * Differential check against cJSON (the full parser): whatever the decoder
 * accepts, cJSON accepts too (the whole body, nothing after it) and
 * gf_json_valid() calls JSON; on the fast path the names are cJSON's, byte
 * for byte, and what the extender may echo (the NodeNames array as sent,
 * each Node object as sent) is valid JSON equal to cJSON's reading of it.
 *
 * tests/scheduler/test_k8s_security.c links this file and runs it over the
 * corpus and seeded mutations of it in every ctest run.
 */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "k8s/extargs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* cJSON over the whole body: NULL unless it parses and only spaces follow. */
static cJSON *reference(const char *body, size_t size)
{
	const char *end = NULL;
	cJSON *d = cJSON_ParseWithLengthOpts(body, size, &end, 0);
	if (!d)
		return NULL;
	while (end < body + size && (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r'))
		end++;
	if (end != body + size) {
		cJSON_Delete(d);
		return NULL;
	}
	return d;
}

/* text (len bytes) is valid JSON equal to want (cJSON's reading). */
static void same_json(const char *text, size_t len, const cJSON *want)
{
	if (!gf_json_valid(text, len, NULL))
		abort(); /* the extender would echo invalid JSON */
	cJSON *got = cJSON_ParseWithLength(text, len);
	if (!got || !want || !cJSON_Compare(got, want, 1))
		abort();
	cJSON_Delete(got);
}

/* The fast path's reading against cJSON's. */
static void check_fast(const struct gf_ext_args *a, const cJSON *ref)
{
	const cJSON *nn = cJSON_GetObjectItem(ref, "NodeNames");
	const cJSON *items = cJSON_GetObjectItem(cJSON_GetObjectItem(ref, "Nodes"), "items");
	const cJSON *src = cJSON_IsArray(nn) ? nn : items;
	if ((size_t)cJSON_GetArraySize(src) != a->n)
		abort();
	size_t i = 0;
	const cJSON *it;
	cJSON_ArrayForEach(it, src)
	{
		const char *s = src == nn ? cJSON_GetStringValue(it)
					  : cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(it, "metadata"), "name"));
		if (!s || strlen(s) != a->lens[i] || memcmp(s, a->names[i], a->lens[i]))
			abort();
		if (a->item_text)
			same_json(a->item_text[i], a->item_len[i], it);
		i++;
	}
	if (a->span)
		same_json(a->span, a->span_len, nn);
}

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
		cJSON *ref = reference(body, size);
		if (!ref || !gf_json_valid(body, size, NULL))
			abort(); /* accepted what the full parser rejects */
		if (a.plain)
			check_fast(&a, ref);
		cJSON_Delete(ref);
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
