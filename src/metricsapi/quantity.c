/*
 * metricsapi/quantity.c - canonical DecimalSI quantity strings.
 *
 * Math (spec k8s-external-metrics-api.md §7): with m = mantissa x 10^e,
 * e = -3, move trailing zeros of the mantissa into e (e += 1 each), then
 * lower e to the multiple of 3 at or below it (mantissa x 10^r, r = e mod 3).
 * Because r never exceeds the number of zeros removed, the final mantissa is
 * at most |m|: no overflow.  The magnitude is handled as uint64 so INT64_MIN
 * works.  O(digits).
 *
 * Large values (|v| >= 9.2e15): the digits are the shortest of %.14e,
 * %.15e, %.16e (15 to 17 significant digits) that strtod reads back as v
 * (17 always do), so 1.1e20 is "110E", not the 17 digits of its binary
 * value; then the same canonical steps on (digits, exponent) as text.  The
 * suffixes stop at E (10^18): past it apimachinery's own DecimalSI
 * printer has no suffix (it would print 1e21 as "1"), so we write its
 * DecimalExponent form "<mantissa>e<exp>", which ParseQuantity reads back
 * exactly.  At most 17 digits + 2 zeros + "e308" + sign: fits in 32.
 */
#include "metricsapi/quantity.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* |v| >= 9.2e15, finite: shortest round-trip digits, canonical form. */
static void format_large(double v, char out[GF_QUANTITY_MAX])
{
	char sci[40];
	for (int prec = 14; prec <= 16; prec++) {
		snprintf(sci, sizeof(sci), "%.*e", prec, fabs(v));
		if (strtod(sci, NULL) == fabs(v))
			break;
	}
	/* sci = "d.ddddde+XX": digits without the point, exponent of the last digit. */
	char digits[20]; /* 17 digits, 2 zeros, NUL */
	size_t n = 0;
	for (const char *p = sci; *p && *p != 'e'; p++)
		if (*p != '.')
			digits[n++] = *p;
	/* e >= 0: |v| >= 9.2e15 is an integer of 16+ digits, which 16 significant
	 * digits (%.15e) already print exactly. */
	int e = (int)strtol(strchr(sci, 'e') + 1, NULL, 10) - (int)(n - 1);
	while (n > 1 && digits[n - 1] == '0') {
		n--;
		e++;
	}
	while (((e % 3) + 3) % 3) {
		digits[n++] = '0';
		e--;
	}
	digits[n] = '\0';
	static const char *const suffix[] = { "", "k", "M", "G", "T", "P", "E" };
	if (e <= 18)
		snprintf(out, GF_QUANTITY_MAX, "%s%s%s", v < 0 ? "-" : "", digits, suffix[e / 3]);
	else
		snprintf(out, GF_QUANTITY_MAX, "%s%se%d", v < 0 ? "-" : "", digits, e);
}

gf_err gf_quantity_format(double v, char out[GF_QUANTITY_MAX])
{
	if (!isfinite(v)) {
		out[0] = '0';
		out[1] = '\0';
		return GF_RANGE;
	}
	if (fabs(v) >= 9.2e15)
		format_large(v, out);
	else
		gf_quantity_format_milli((int64_t)llround(v * 1000.0), out);
	return GF_OK;
}
