/*
 * core/rfc3339.h - RFC 3339 UTC timestamps ("2026-01-02T03:04:05Z") to and
 * from Unix seconds, for the adapters that read and write Kubernetes and
 * Prometheus times.  Pure: no clock, no locale.
 */
#ifndef GF_CORE_RFC3339_H
#define GF_CORE_RFC3339_H

#include <stdbool.h>
#include <stdint.h>

/* "YYYY-MM-DDTHH:MM:SSZ" of t (UTC), 21 bytes with the NUL; clamped to years 0000..9999. */
void gf_rfc3339(int64_t t, char out[21]);

/* "YYYY-MM-DDTHH:MM:SS[.frac]Z" (or +00:00) to Unix seconds; false if not one. */
bool gf_rfc3339_parse(const char *s, int64_t *t);

/* Days since 1970-01-01 of the proleptic Gregorian date y-m-d, and back. */
int64_t gf_days_from_civil(int64_t y, int m, int d);
void gf_civil_from_days(int64_t z, int64_t *y, int *m, int *d);

/* a / b rounded toward minus infinity (b > 0). */
int64_t gf_floor_div(int64_t a, int64_t b);

#endif /* GF_CORE_RFC3339_H */
