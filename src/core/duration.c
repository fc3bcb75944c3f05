/*
 * core/duration.c - durations as written on the command line.
 *
 * Grammar: DURATION = NUMBER | TERM+ ; TERM = NUMBER UNIT ;
 * NUMBER = DIGIT+ ["." DIGIT+] ; UNIT = "ms" | "s" | "m" | "h" | "d" | "w".
 * Each unit appears at most once, in any order ("1h30m" = "30m1h").  The
 * total is the sum of NUMBER x unit in milliseconds, computed in double
 * (exact for every integer below 2^53 ms, about 285,000 years, so exact
 * for every whole-millisecond input under the 100-year cap) and rounded
 * to the nearest millisecond.  Linear in the length of the string; no
 * allocation, no locale (the decimal point is always '.').
 */
#include <stdio.h>

#include "core/duration.h"

/* The number at *p (digits, optional fraction) into *v; false if none. Advances *p. */
static bool number(const char **p, double *v)
{
	const char *s = *p;
	double x = 0, scale = 0.1;
	int digits = 0;

	while (*s >= '0' && *s <= '9') {
		x = x * 10 + (*s++ - '0');
		if (++digits > 18) /* far beyond the cap in any unit */
			return false;
	}
	if (!digits)
		return false;
	if (*s == '.') {
		s++;
		if (!(*s >= '0' && *s <= '9'))
			return false;
		for (int f = 0; *s >= '0' && *s <= '9'; s++, f++)
			if (f < 9) { /* finer than a nanosecond of a second is noise */
				x += (*s - '0') * scale;
				scale /= 10;
			}
	}
	*p = s;
	*v = x;
	return true;
}

bool gf_duration_parse(const char *s, int64_t bare_ms, int64_t *ms)
{
	static const struct { const char *name; size_t len; int64_t ms; } units[] = {
		{ "ms", 2, 1 }, { "s", 1, GF_MS_PER_S }, { "m", 1, GF_MS_PER_MIN },
		{ "h", 1, GF_MS_PER_H }, { "d", 1, GF_MS_PER_DAY }, { "w", 1, 7 * GF_MS_PER_DAY },
	};
	const char *p = s;
	double total = 0;
	unsigned seen = 0;
	int terms = 0;

	if (!s || !*s)
		return false;
	while (*p) {
		double v;
		size_t u;

		if (!number(&p, &v))
			return false;
		if (!*p) { /* a plain number: only alone */
			if (terms || !bare_ms)
				return false;
			total = v * (double)bare_ms;
			break;
		}
		for (u = 0; u < sizeof(units) / sizeof(units[0]); u++) {
			size_t k = 0;
			while (k < units[u].len && p[k] == units[u].name[k])
				k++;
			/* "ms" must not be read as "m" then "s": try the longer name first (it is first). */
			if (k == units[u].len && !(p[k] >= 'a' && p[k] <= 'z'))
				break;
		}
		if (u == sizeof(units) / sizeof(units[0]) || (seen & (1u << u)))
			return false;
		seen |= 1u << u;
		p += units[u].len;
		total += v * (double)units[u].ms;
		terms++;
		if (total > (double)GF_DURATION_MAX_MS)
			return false;
	}
	if (!(total <= (double)GF_DURATION_MAX_MS))
		return false;
	*ms = (int64_t)(total + 0.5);
	return true;
}

char *gf_duration_format(int64_t ms, char *buf, size_t n)
{
	static const struct { const char *name; int64_t ms; } units[] = {
		{ "w", 7 * GF_MS_PER_DAY }, { "d", GF_MS_PER_DAY }, { "h", GF_MS_PER_H }, { "m", GF_MS_PER_MIN },
		{ "s", GF_MS_PER_S }, { "ms", 1 },
	};
	size_t at = 0;

	if (!n)
		return buf;
	buf[0] = '\0';
	if (ms <= 0) { /* durations are not negative; say one plainly if one comes */
		if (ms)
			snprintf(buf, n, "%lldms", (long long)ms);
		else
			snprintf(buf, n, "0s");
		return buf;
	}
	for (size_t u = 0; u < sizeof(units) / sizeof(units[0]) && ms; u++) {
		int64_t q = ms / units[u].ms;
		if (!q)
			continue;
		int w = snprintf(buf + at, n - at, "%lld%s", (long long)q, units[u].name);
		if (w < 0 || (size_t)w >= n - at)
			break;
		at += (size_t)w;
		ms -= q * units[u].ms;
	}
	return buf;
}
