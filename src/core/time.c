/*
 * core/time.c - calendar arithmetic and RFC 3339 (see time.h).
 *
 * days_from_civil / civil_from_days: the era-based conversion (400-year
 * eras of 146,097 days, years starting in March so that the leap day is
 * the last of the year), O(1), exact for every int64 year that does not
 * overflow.  Formatting is snprintf of the civil fields; parsing checks
 * each digit and the day of the month (February 29 only in leap years).
 */
#include "core/time.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm, re-derived). */
int64_t gf_days_from_civil(int64_t y, int m, int d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

void gf_civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
	z += 719468;
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	int64_t doe = z - era * 146097;
	int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	int64_t mp = (5 * doy + 2) / 153;
	*d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

int64_t gf_floor_div(int64_t a, int64_t b)
{
	return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

void gf_rfc3339(int64_t t, char out[GF_RFC3339_LEN])
{
	int64_t days = gf_floor_div(t, 86400), s = t - days * 86400, y;
	int m, d;
	gf_civil_from_days(days, &y, &m, &d);
	if (y < 0 || y > 9999) {
		snprintf(out, 21, "%s", y < 0 ? "0000-01-01T00:00:00Z" : "9999-12-31T23:59:59Z");
		return;
	}
	char buf[64];
	snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02dZ", (int)y, m, d, (int)(s / 3600),
		 (int)(s / 60 % 60), (int)(s % 60));
	memcpy(out, buf, 21);
}

void gf_rfc3339_us(int64_t us, char out[GF_RFC3339_US_LEN])
{
	int64_t sec = gf_floor_div(us, 1000000);
	char s[GF_RFC3339_LEN];
	gf_rfc3339(sec, s);
	snprintf(out, GF_RFC3339_US_LEN, "%.19s.%06dZ", s, (int)(us - sec * 1000000));
}

/* n digits at s as a number; false if any is not a digit. */
static bool digits(const char *s, int n, int *out)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return false;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return true;
}

bool gf_rfc3339_parse(const char *s, int64_t *t)
{
	int y, mo, d, h, mi, se;
	if (strlen(s) < 20 || !digits(s, 4, &y) || s[4] != '-' || !digits(s + 5, 2, &mo) ||
	    s[7] != '-' || !digits(s + 8, 2, &d) || (s[10] != 'T' && s[10] != 't') ||
	    !digits(s + 11, 2, &h) || s[13] != ':' || !digits(s + 14, 2, &mi) || s[16] != ':' ||
	    !digits(s + 17, 2, &se))
		return false;
	const char *p = s + 19;
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return false;
		while (isdigit((unsigned char)*p))
			p++;
	}
	if (strcmp(p, "Z") && strcmp(p, "z") && strcmp(p, "+00:00"))
		return false;
	static const int mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || h > 23 || mi > 59 || se > 60)
		return false;
	bool leap = (y % 4 == 0 && y % 100) || y % 400 == 0;
	if (mo == 2 && d == 29 && !leap)
		return false;
	*t = gf_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + (se == 60 ? 59 : se);
	return true;
}

