/*
 * core/duration.h - the one spelling of a length of time on gpufleet's
 * command line: "30s", "5m", "12h", "250ms", "2d", "1w", combinations such as
 * "1h30m", and a plain number in a unit the caller names (seconds for most
 * options, milliseconds for the older "-ms" options).
 */
#ifndef GF_CORE_DURATION_H
#define GF_CORE_DURATION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Milliseconds in each unit. */
#define GF_MS_PER_S 1000LL
#define GF_MS_PER_MIN (60 * GF_MS_PER_S)
#define GF_MS_PER_H (60 * GF_MS_PER_MIN)
#define GF_MS_PER_DAY (24 * GF_MS_PER_H)

/* The longest duration parsed: 100 years, far inside int64_t milliseconds. */
#define GF_DURATION_MAX_MS (100LL * 365 * GF_MS_PER_DAY)

/*
 * s: one or more terms NUMBER UNIT, UNIT one of ms, s, m, h, d, w, NUMBER
 * digits with an optional ".digits" ("1.5h", "1h30m", "90s", "250ms"), no
 * sign, no spaces, each unit at most once; or a plain NUMBER, counted in
 * units of bare_ms milliseconds (1000: seconds; 1: milliseconds; 0: a plain
 * number is refused).  *ms gets the total rounded to the millisecond.
 * Returns false (and leaves *ms alone) when s is empty, malformed, or longer
 * than GF_DURATION_MAX_MS.  Pure: no I/O, no locale.
 */
bool gf_duration_parse(const char *s, int64_t bare_ms, int64_t *ms);

/*
 * ms as the parser's shortest spelling ("1h30m", "500ms", "0s") into buf of
 * n bytes (truncated, always terminated when n > 0); returns buf.
 */
char *gf_duration_format(int64_t ms, char *buf, size_t n);

#endif /* GF_CORE_DURATION_H */
