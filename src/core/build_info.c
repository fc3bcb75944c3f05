/*
 * core/build_info.c - the version and commit compiled in.
 *
 * The values come from a header generated at build time
 * (cmake/build-info.cmake, a custom target of src/CMakeLists.txt); a build
 * without that header (one not driven by this project's CMake) says
 * "unknown" for both rather than failing.  The metric is a constant gauge
 * in the convention of Prometheus' own *_build_info series: value 1, the
 * facts in the labels, so dashboards join on it.
 */
#include "core/build_info.h"

#if defined(__has_include)
#if __has_include("gf_build_info_generated.h")
#include "gf_build_info_generated.h"
#endif
#endif
#ifndef GF_BUILD_VERSION
#define GF_BUILD_VERSION "unknown"
#endif
#ifndef GF_BUILD_COMMIT
#define GF_BUILD_COMMIT "unknown"
#endif

const char *gf_build_version(void)
{
	return GF_BUILD_VERSION;
}

const char *gf_build_commit(void)
{
	return GF_BUILD_COMMIT;
}

void gf_build_info_render(struct gf_obuf *b)
{
	/* Both values are [0-9A-Za-z.+-] (a CMake version, a hex hash): nothing to escape. */
	gf_obuf_printf(b, "# HELP gpufleet_build_info The gpufleet version and git commit of this binary.\n"
			  "# TYPE gpufleet_build_info gauge\n"
			  "gpufleet_build_info{version=\"%s\",commit=\"%s\"} 1\n",
		       GF_BUILD_VERSION, GF_BUILD_COMMIT);
}
