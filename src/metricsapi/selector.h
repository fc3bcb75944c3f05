/*
 * metricsapi/selector.h - Kubernetes label selectors (the labelSelector
 * query parameter of the external metrics API).
 *
 * Syntax (apimachinery labels.Parse): requirements joined by ',':
 *   k=v  k==v  k!=v  k in (a,b)  k notin (a,b)  k  !k  k>5  k<5
 * Keys: optional DNS-subdomain prefix (<= 253) + '/' + name (<= 63,
 * [A-Za-z0-9._-], alphanumeric at both ends).  Values: <= 63 of the same
 * set, may be empty.  '>'/'<' take an integer.  "" selects everything.
 *
 * Matching: EQ/IN need the label present with that value; NE/NOTIN match
 * when it is absent or different; GT/LT need it present and an integer.
 *
 * Value type: struct gf_selector is a plain struct (about 26 KiB) holding
 * copies of every key and value; no allocation, nothing to release.
 */
#ifndef GF_METRICSAPI_SELECTOR_H
#define GF_METRICSAPI_SELECTOR_H

#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"

#define GF_SEL_MAX_REQS 16
#define GF_SEL_MAX_VALUES 16
#define GF_SEL_KEY_MAX 320  /* 253 + '/' + 63, NUL */
#define GF_SEL_VALUE_MAX 64 /* 63, NUL */

enum gf_sel_op {
	GF_SEL_EQ,
	GF_SEL_NE,
	GF_SEL_IN,
	GF_SEL_NOTIN,
	GF_SEL_EXISTS,
	GF_SEL_NOTEXISTS,
	GF_SEL_GT,
	GF_SEL_LT,
};

struct gf_sel_req {
	char key[GF_SEL_KEY_MAX];
	enum gf_sel_op op;
	unsigned nvalues; /* EQ/NE/GT/LT: 1; IN/NOTIN: >= 1; EXISTS/NOTEXISTS: 0 */
	char values[GF_SEL_MAX_VALUES][GF_SEL_VALUE_MAX];
	long long num; /* GT/LT: the integer */
};

struct gf_selector {
	unsigned nreqs;
	struct gf_sel_req reqs[GF_SEL_MAX_REQS];
};

/* Parse s (NULL or "" = no requirement).  GF_PARSE with err naming the
 * position and what was expected ("labelSelector: at 4: expected a value");
 * GF_TOOBIG past GF_SEL_MAX_REQS requirements or GF_SEL_MAX_VALUES values. */
gf_err gf_selector_parse(const char *s, struct gf_selector *out, char *err, size_t errlen);

/* Does value (NULL = the label is absent) satisfy r? */
bool gf_sel_req_match(const struct gf_sel_req *r, const char *value);

/* A label lookup for gf_selector_match: the value of key or NULL. */
typedef const char *(*gf_sel_lookup_fn)(void *ud, const char *key);

/* Do the labels that fn reports satisfy every requirement of s? */
bool gf_selector_match(const struct gf_selector *s, gf_sel_lookup_fn fn, void *ud);

/* Write r in selector syntax (what gf_selector_parse reads back) into out.
 * GF_TOOBIG when n is too small (out is then "").  */
gf_err gf_sel_req_format(const struct gf_sel_req *r, char *out, size_t n);

/* Is s a valid label value (<= 63, [A-Za-z0-9._-], alphanumeric ends, or "")? */
bool gf_label_value_valid(const char *s);

#endif /* GF_METRICSAPI_SELECTOR_H */
