/*
 * metricsapi/quantity.h - Kubernetes quantities as the external metrics API
 * writes them (apimachinery resource.Quantity, DecimalSI, canonical form).
 *
 * The canonical string of a milli-value m: strip the mantissa's trailing
 * decimal zeros into the exponent (starting at 10^-3), lower the exponent to
 * a multiple of 3 and print the integer mantissa with the SI suffix of that
 * exponent (n u m "" k M G T P E).  No decimal point, never "%".
 *   70 -> "70", 0.7 -> "700m", 1.5 -> "1500m", 2000 -> "2k", 2500000 -> "2500k".
 */
#ifndef GF_METRICSAPI_QUANTITY_H
#define GF_METRICSAPI_QUANTITY_H

#include <stdint.h>

#include "core/error.h"

#define GF_QUANTITY_MAX 32 /* bytes, with the NUL; "-9223372036854775808m" and
                           * "-179769313486231570e291" (-DBL_MAX) fit */

/* The canonical quantity of the milli-value m (any int64). */
void gf_quantity_format_milli(int64_t m, char out[GF_QUANTITY_MAX]);

/* The canonical quantity of v.  Below 9.2e15 in magnitude: v rounded to the
 * nearest milli-unit (halves away from zero), as gf_quantity_format_milli.
 * From 9.2e15 on (the milli value would not fit in an int64; a double is an
 * integer there): the shortest decimal that reads back as the same double,
 * in the same canonical form (1e16 -> "10P", 1.5e17 -> "150P",
 * 1.2345e20 -> "123450P", 2e18 -> "2E"), and past the largest suffix E
 * (10^18) in apimachinery's exponent form with an exponent that is a
 * multiple of 3 ("1e21", "-12300e21", "1e308"): every such string parses as
 * a resource.Quantity of that value.  GF_RANGE only when v is NaN or
 * infinite (no quantity can say it); out is then "0". */
gf_err gf_quantity_format(double v, char out[GF_QUANTITY_MAX]);

#endif /* GF_METRICSAPI_QUANTITY_H */
