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

#define GF_QUANTITY_MAX 32 /* bytes, with the NUL; "-9223372036854775808m" fits */

/* The canonical quantity of the milli-value m (any int64). */
void gf_quantity_format_milli(int64_t m, char out[GF_QUANTITY_MAX]);

/* The canonical quantity of v rounded to the nearest milli-unit (halves away
 * from zero).  GF_RANGE when v is NaN, infinite or |v| >= 9.2e15 (the milli
 * value would not fit in an int64); out is then "0". */
gf_err gf_quantity_format(double v, char out[GF_QUANTITY_MAX]);

#endif /* GF_METRICSAPI_QUANTITY_H */
