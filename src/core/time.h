/*
 * core/time.h - calendar arithmetic and RFC 3339 timestamps, UTC only.
 *
 * Pure functions of the seconds they are given: the engine reads no
 * clock, and adapters pass time(NULL) themselves.  Dates are proleptic
 * Gregorian; Unix seconds ignore leap seconds (a parsed :60 counts as :59).
 */
#ifndef GF_CORE_TIME_H
#define GF_CORE_TIME_H

#include <stdbool.h>
#include <stdint.h>

/* "YYYY-MM-DDTHH:MM:SSZ" plus the NUL. */
#define GF_RFC3339_LEN 21

/* Days since 1970-01-01 of the date y-m-d (m 1..12, d 1..31). */
int64_t gf_days_from_civil(int64_t y, int m, int d);

/* The date of day z (days since 1970-01-01). */
void gf_civil_from_days(int64_t z, int64_t *y, int *m, int *d);

/* a / b rounded towards minus infinity (b != 0). */
int64_t gf_floor_div(int64_t a, int64_t b);

/* "YYYY-MM-DDTHH:MM:SSZ" of Unix seconds t; years outside 0..9999 are clamped
 * to "0000-01-01T00:00:00Z" / "9999-12-31T23:59:59Z". */
void gf_rfc3339(int64_t t, char out[GF_RFC3339_LEN]);

/* "YYYY-MM-DDTHH:MM:SS.uuuuuuZ" (Kubernetes' MicroTime) plus the NUL. */
#define GF_RFC3339_US_LEN 28

/* MicroTime of us microseconds since the epoch (the seconds as gf_rfc3339). */
void gf_rfc3339_us(int64_t us, char out[GF_RFC3339_US_LEN]);

/* RFC 3339 UTC "YYYY-MM-DDTHH:MM:SS[.frac]Z" (or 'z', or +00:00) to Unix
 * seconds (the fraction dropped); false if s is not one (*t untouched). */
bool gf_rfc3339_parse(const char *s, int64_t *t);

#endif
