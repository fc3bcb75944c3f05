/*
 * agent/watchdog.h - the NVML per-process watchdog behind the memory cap.
 *
 * The cap (src/memcap) is a soft limit inside the container; the agent
 * checks from outside what NVML says each process holds.  A process's share
 * is read from its mounts: the device plugin mounts the share's limit file
 * <memcap-dir>/<UUID>-u<first unit>-n<units>/limit at
 * /etc/gpufleet/memcap/limit, and /proc/<pid>/mountinfo (world-readable)
 * names that host folder.  No API server, no state: it survives agent
 * restarts.  The grouping and the decision live in agent.c (with the GPU's
 * process list); this is the parsing.
 */
#ifndef GF_AGENT_WATCHDOG_H
#define GF_AGENT_WATCHDOG_H

#include <stddef.h>

#include "agent/nvml.h"
#include "core/error.h"

#define GF_WD_LIMIT_MOUNT "/etc/gpufleet/memcap/limit"

/* One share allocation (one container's gpufleet.io/gpu-milli units). */
struct gf_wd_share {
	char uuid[GF_NVML_UUID_LEN];
	unsigned first, units; /* units 1..1000 */
};

/* Find the share in the contents of /proc/<pid>/mountinfo (len bytes, need
 * not be NUL-terminated): the mount whose mount point is GF_WD_LIMIT_MOUNT
 * and whose root ends in "/<UUID>-u<first>-n<units>/limit".  GF_OK: found.
 * GF_NOENT: no such mount (not a capped share).  GF_PARSE: that mount is
 * there but its root has another shape. */
gf_err gf_wd_parse_mountinfo(const char *text, size_t len, struct gf_wd_share *out);

/* The cap the device plugin writes for units of a GPU of mem_total bytes
 * (the same arithmetic as its limit file). */
unsigned long long gf_wd_share_bytes(unsigned long long mem_total, unsigned units);

#endif /* GF_AGENT_WATCHDOG_H */
