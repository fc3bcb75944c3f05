/*
 * cli/spottrace.c - the spot availability trace decoder (spottrace.h), over
 * cJSON.
 *
 * The document is parsed whole (the CLI reads files with a cap,
 * cli/files.h); the decoder then walks two members.  A number is taken only
 * when it is a whole number within its range (cJSON keeps a double: 2.5 or
 * 1e300 is refused, not truncated).  Messages name the file and the JSON
 * path of the bad value.  O(ticks).
 */
#include "cli/spottrace.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool whole_in(const cJSON *v, double lo, double hi, int64_t *out)
{
	double d;

	if (!cJSON_IsNumber(v))
		return false;
	d = v->valuedouble;
	if (!(d >= lo && d <= hi) || floor(d) != d)
		return false;
	*out = (int64_t)d;
	return true;
}

gf_err gf_spot_trace_parse(const char *data, size_t len, const char *file, struct gf_spot_trace *out,
			   char *err, size_t errlen)
{
	cJSON *root, *meta, *gap, *arr, *v;
	gf_err e = GF_PARSE;
	size_t n, k = 0;

	memset(out, 0, sizeof(*out));
	if (errlen)
		err[0] = '\0';
	root = cJSON_ParseWithLength(data, len);
	if (!root) {
		snprintf(err, errlen, "%s: not JSON (near byte %zu)", file,
			 cJSON_GetErrorPtr() && cJSON_GetErrorPtr() >= data && cJSON_GetErrorPtr() <= data + len
				 ? (size_t)(cJSON_GetErrorPtr() - data)
				 : (size_t)0);
		return GF_PARSE;
	}
	if (!cJSON_IsObject(root)) {
		snprintf(err, errlen, "%s: $: expected an object with metadata and data", file);
		goto done;
	}
	meta = cJSON_GetObjectItemCaseSensitive(root, "metadata");
	if (!cJSON_IsObject(meta)) {
		snprintf(err, errlen, "%s: $.metadata: expected an object", file);
		goto done;
	}
	gap = cJSON_GetObjectItemCaseSensitive(meta, "gap_seconds");
	if (!whole_in(gap, 1, 86400, &out->gap)) {
		snprintf(err, errlen, "%s: $.metadata.gap_seconds: expected a whole number of seconds in [1, 86400]",
			 file);
		goto done;
	}
	arr = cJSON_GetObjectItemCaseSensitive(root, "data");
	if (!cJSON_IsArray(arr)) {
		snprintf(err, errlen, "%s: $.data: expected an array of instance counts", file);
		goto done;
	}
	n = (size_t)cJSON_GetArraySize(arr);
	if (n == 0 || n > GF_SPOT_TRACE_MAX_TICKS) {
		snprintf(err, errlen, "%s: $.data: expected 1 to %d ticks, got %zu", file, GF_SPOT_TRACE_MAX_TICKS, n);
		goto done;
	}
	if (!(out->avail = malloc(n * sizeof(*out->avail)))) {
		e = GF_NOMEM;
		snprintf(err, errlen, "%s: out of memory", file);
		goto done;
	}
	cJSON_ArrayForEach(v, arr) {
		int64_t c;

		if (!whole_in(v, 0, GF_SPOT_TRACE_MAX_NODES, &c)) {
			snprintf(err, errlen, "%s: $.data[%zu]: expected a whole number of instances in [0, %d]", file, k,
				 GF_SPOT_TRACE_MAX_NODES);
			goto done;
		}
		out->avail[k++] = (int32_t)c;
	}
	out->n = k;
	e = GF_OK;
done:
	cJSON_Delete(root);
	if (e)
		gf_spot_trace_release(out);
	return e;
}

void gf_spot_trace_release(struct gf_spot_trace *t)
{
	free(t->avail);
	memset(t, 0, sizeof(*t));
}
