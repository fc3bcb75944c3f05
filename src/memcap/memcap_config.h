/*
 * memcap/memcap_config.h - the GPU-memory cap's limit file.
 *
 * The agent writes one small text file per shared container and mounts it
 * read-only (default /etc/gpufleet/memcap/limit); the interposer reads it once
 * per process.  Format, one setting per line, `#` starts a comment:
 *
 *     limit_bytes = 10737418240      # every device of the container
 *     limit_bytes.1 = 5368709120     # device ordinal 1 only (overrides)
 *
 * Values are decimal byte counts (1 .. 2^62).  Anything else is an error that
 * names the line and the field.  Pure parsing: no I/O, no allocation.
 */
#ifndef GF_MEMCAP_CONFIG_H
#define GF_MEMCAP_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Device ordinals 0..GF_MEMCAP_MAX_DEVICES-1 are accounted; an allocation on
 * a higher ordinal is passed through uncapped (the header says why). */
#define GF_MEMCAP_MAX_DEVICES 16
#define GF_MEMCAP_MAX_LIMIT (UINT64_C(1) << 62)

struct gf_memcap_config {
	/* Cap per device ordinal in bytes; 0 = no cap on that device. */
	uint64_t limit[GF_MEMCAP_MAX_DEVICES];
};

/* Parses `len` bytes of `text` (need not be NUL-terminated) into `out`
 * (zeroed first).  Returns true on success; on failure false, with
 * "line N: what" in err (err_len bytes, always NUL-terminated). A file that
 * sets no limit at all is an error too (a cap file that caps nothing is a
 * mistake, not a choice). */
bool gf_memcap_config_parse(const char *text, size_t len, struct gf_memcap_config *out,
			    char *err, size_t err_len);

#endif
