/*
 * core/build_info.h - which gpufleet this is: the project version (CMake's
 * project(VERSION)) and the git commit it was built from.
 */
#ifndef GF_CORE_BUILD_INFO_H
#define GF_CORE_BUILD_INFO_H

#include "core/obuf.h"

/* "0.1.0": static storage, never NULL. */
const char *gf_build_version(void);

/*
 * The commit's abbreviated hash, with "-dirty" when tracked files differed
 * from it at build time; "unknown" when built outside a git checkout.
 * Static storage, never NULL.
 */
const char *gf_build_commit(void);

/*
 * Appends the Prometheus text of the gpufleet_build_info gauge (HELP, TYPE and
 * the one sample, value 1, labels version and commit) to b, as every gpufleet
 * server's /metrics carries it.
 */
void gf_build_info_render(struct gf_obuf *b);

#endif /* GF_CORE_BUILD_INFO_H */
