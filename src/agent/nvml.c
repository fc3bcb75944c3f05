/*
 * agent/nvml.c - dlopen NVML and resolve the symbol table of nvml.h.
 *
 * The table is generated from GF_NVML_SYMBOLS: for each entry the offset of
 * its function pointer in struct gf_nvml, whether it is required, and its
 * candidate names newest first.  Resolution is O(entries x names) dlsym
 * calls, once at start-up.  RTLD_NOW | RTLD_LOCAL: the library's own
 * dependencies resolve at load time and its symbols stay out of the global
 * namespace (spec §5).
 */
#include "agent/nvml.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

struct sym {
	size_t off;
	bool required;
	const char *names[4];
};

static const struct sym symbols[] = {
#define GF_NVML_SYM_(field, ret, args, req, ...) \
	{ offsetof(struct gf_nvml, field), req, { __VA_ARGS__, NULL } },
	GF_NVML_SYMBOLS(GF_NVML_SYM_)
#undef GF_NVML_SYM_
};

#define NSYMBOLS (sizeof(symbols) / sizeof(symbols[0]))
_Static_assert(NSYMBOLS <= sizeof(((struct gf_nvml *)0)->found) / sizeof(const char *),
	       "found[] too small for the symbol table");

size_t gf_nvml_symbol_count(void)
{
	return NSYMBOLS;
}

const char *gf_nvml_symbol_name(size_t i)
{
	return i < NSYMBOLS ? symbols[i].names[0] : NULL;
}

gf_err gf_nvml_open(struct gf_nvml *n, const char *path, char *err, size_t errlen)
{
	memset(n, 0, sizeof(*n));
	if (!path || !*path)
		path = "libnvidia-ml.so.1";
	dlerror();
	n->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!n->dl) {
		const char *e = dlerror();
		snprintf(err, errlen, "cannot load NVML from %s: %s", path, e ? e : "unknown error");
		return GF_NOENT;
	}
	for (size_t i = 0; i < NSYMBOLS; i++) {
		void *p = NULL;
		const char *const *nm;
		for (nm = symbols[i].names; *nm && !p; nm++)
			p = dlsym(n->dl, *nm);
		if (p)
			n->found[i] = nm[-1];
		if (!p && symbols[i].required) {
			snprintf(err, errlen, "NVML library %s lacks the required function %s", path,
				 symbols[i].names[0]);
			gf_nvml_close(n);
			return GF_UNSUPPORTED;
		}
		/* Object pointer to function pointer: what dlsym is for (POSIX). */
		memcpy((char *)n + symbols[i].off, &p, sizeof(p));
	}
	gf_nvml_return r = n->init();
	if (r != GF_NVML_SUCCESS) {
		snprintf(err, errlen, "nvmlInit failed (%s): %s (%d)", path, gf_nvml_strerror(n, r),
			 r);
		gf_nvml_close(n);
		return GF_UNAVAILABLE;
	}
	n->initialised = true;
	return GF_OK;
}

void gf_nvml_close(struct gf_nvml *n)
{
	if (n->initialised && n->shutdown)
		n->shutdown();
	if (n->dl)
		dlclose(n->dl);
	memset(n, 0, sizeof(*n));
}

bool gf_nvml_uuid_ok(const char *s)
{
	size_t n = 0;
	if (!s[0] || s[0] == '-')
		return false;
	for (; s[n]; n++)
		if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'z') || (s[n] >= 'A' && s[n] <= 'Z') ||
		      s[n] == '-'))
			return false;
	return n < GF_NVML_UUID_LEN;
}

const char *gf_nvml_strerror(const struct gf_nvml *n, gf_nvml_return r)
{
	const char *s = n->error_string ? n->error_string(r) : NULL;
	if (s)
		return s;
	switch (r) {
	case GF_NVML_SUCCESS: return "Success";
	case GF_NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
	case GF_NVML_ERROR_NO_PERMISSION: return "Insufficient Permissions";
	case GF_NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
	case GF_NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
	case GF_NVML_ERROR_FUNCTION_NOT_FOUND: return "Function Not Found";
	default: return "Unknown Error";
	}
}
