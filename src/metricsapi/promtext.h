/*
 * metricsapi/promtext.h - a reader of the Prometheus text exposition format
 * (version 0.0.4), enough for the gpufleet agents' and dcgm-exporter's
 * /metrics: '# HELP'/'# TYPE' and other comments skipped, one sample per
 * line `name{label="value",...} value [timestamp]`.
 *
 * Label values are unescaped (\\ \" \n).  Values: Go float syntax as
 * strtod reads it, plus NaN, +Inf, -Inf.  Timestamps are ignored.
 */
#ifndef GF_METRICSAPI_PROMTEXT_H
#define GF_METRICSAPI_PROMTEXT_H

#include <stddef.h>

#include "core/error.h"

#define GF_PROMTEXT_MAX_LABELS 64
#define GF_PROMTEXT_MAX_LINE 65536

struct gf_prom_label {
	const char *name;  /* NUL-terminated; valid during the callback only */
	const char *value; /* unescaped, NUL-terminated */
};

/* Called once per sample.  A non-zero return stops the parse and is returned. */
typedef gf_err (*gf_prom_sample_fn)(void *ud, const char *name, const struct gf_prom_label *labels,
				    size_t nlabels, double value);

/* Parse len bytes of text (need not be NUL-terminated).  GF_PARSE with err =
 * "line N: what was expected"; GF_TOOBIG for a line over GF_PROMTEXT_MAX_LINE
 * or more than GF_PROMTEXT_MAX_LABELS labels; GF_NOMEM; or the callback's
 * error.  Samples before an error were delivered. */
gf_err gf_promtext_parse(const char *text, size_t len, gf_prom_sample_fn fn, void *ud, char *err,
			 size_t errlen);

#endif /* GF_METRICSAPI_PROMTEXT_H */
