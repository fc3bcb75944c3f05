/*
 * metricsapi/quantity.c - canonical DecimalSI quantity strings.
 *
 * Math (spec k8s-external-metrics-api.md §7): with m = mantissa x 10^e,
 * e = -3, move trailing zeros of the mantissa into e (e += 1 each), then
 * lower e to the multiple of 3 at or below it (mantissa x 10^r, r = e mod 3).
 * Because r never exceeds the number of zeros removed, the final mantissa is
 * at most |m|: no overflow.  The magnitude is handled as uint64 so INT64_MIN
 * works.  O(digits).
 */
#include "metricsapi/quantity.h"

#include <math.h>
#include <stdio.h>

void gf_quantity_format_milli(int64_t m, char out[GF_QUANTITY_MAX])
{
	if (m == 0) {
		out[0] = '0';
		out[1] = '\0';
		return;
	}
	uint64_t mag = m < 0 ? (uint64_t)0 - (uint64_t)m : (uint64_t)m;
	int e = -3;
	while (mag % 10 == 0) {
		mag /= 10;
		e++;
	}
	int r = ((e % 3) + 3) % 3;
	for (int i = 0; i < r; i++)
		mag *= 10;
	e -= r;
	static const char *const suffix[] = { "m", "", "k", "M", "G", "T", "P", "E" };
	int idx = (e + 3) / 3; /* e in -3..18 */
	snprintf(out, GF_QUANTITY_MAX, "%s%llu%s", m < 0 ? "-" : "", (unsigned long long)mag,
		 suffix[idx]);
}

gf_err gf_quantity_format(double v, char out[GF_QUANTITY_MAX])
{
	if (!isfinite(v) || fabs(v) >= 9.2e15) {
		out[0] = '0';
		out[1] = '\0';
		return GF_RANGE;
	}
	gf_quantity_format_milli((int64_t)llround(v * 1000.0), out);
	return GF_OK;
}
