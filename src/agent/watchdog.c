/*
 * agent/watchdog.c - parsing for the per-process watchdog (watchdog.h).
 */
#include "agent/watchdog.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Field k (0-based, space-separated) of line [s, e): *f, *fl.  false if absent. */
static bool field(const char *s, const char *e, int k, const char **f, size_t *fl)
{
	for (int i = 0; s < e; i++) {
		const char *sp = memchr(s, ' ', (size_t)(e - s));
		const char *end = sp ? sp : e;
		if (i == k) {
			*f = s;
			*fl = (size_t)(end - s);
			return true;
		}
		if (!sp)
			break;
		s = sp + 1;
	}
	return false;
}

/* Decimal 0..max from [s, s+n), all of it. */
static bool num(const char *s, size_t n, unsigned max, unsigned *out)
{
	unsigned long v = 0;
	if (n == 0 || n > 4)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	if (v > max)
		return false;
	*out = (unsigned)v;
	return true;
}

/* "<UUID>-u<first>-n<units>" in [s, s+n). */
static gf_err parse_dir(const char *s, size_t n, struct gf_wd_share *out)
{
	const char *nu = NULL, *u = NULL;
	for (size_t i = n; i-- > 1;)
		if (s[i - 1] == '-' && s[i] == 'n' && !nu)
			nu = s + i;
	for (const char *p = nu ? nu - 1 : s; nu && p-- > s + 1;)
		if (p[-1] == '-' && p[0] == 'u') {
			u = p;
			break;
		}
	if (!nu || !u)
		return GF_PARSE;
	size_t ulen = (size_t)(u - 1 - s);
	if (ulen == 0 || ulen >= sizeof(out->uuid))
		return GF_PARSE;
	for (size_t i = 0; i < ulen; i++) /* NVML UUIDs: GPU-<hex>-..., MIG-... */
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      s[i] == '-'))
			return GF_PARSE;
	if (!num(u + 1, (size_t)(nu - 1 - (u + 1)), 999, &out->first) ||
	    !num(nu + 1, (size_t)(s + n - (nu + 1)), 1000, &out->units) || out->units == 0 ||
	    out->first + out->units > 1000)
		return GF_PARSE;
	memcpy(out->uuid, s, ulen);
	out->uuid[ulen] = '\0';
	return GF_OK;
}

gf_err gf_wd_parse_mountinfo(const char *text, size_t len, struct gf_wd_share *out)
{
	static const char mp[] = GF_WD_LIMIT_MOUNT, tail[] = "/limit";
	const char *s = text, *end = text + len;
	memset(out, 0, sizeof(*out));
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		const char *e = nl ? nl : end;
		const char *root, *point;
		size_t rl, pl;
		if (field(s, e, 4, &point, &pl) && pl == sizeof(mp) - 1 && !memcmp(point, mp, pl) &&
		    field(s, e, 3, &root, &rl)) {
			/* root: ".../<dir>/limit" */
			if (rl <= sizeof(tail) - 1 || memcmp(root + rl - (sizeof(tail) - 1), tail, sizeof(tail) - 1))
				return GF_PARSE;
			const char *d_end = root + rl - (sizeof(tail) - 1), *d = d_end;
			while (d > root && d[-1] != '/')
				d--;
			return parse_dir(d, (size_t)(d_end - d), out);
		}
		s = e + 1;
	}
	return GF_NOENT;
}

unsigned long long gf_wd_share_bytes(unsigned long long mem_total, unsigned units)
{
	return mem_total / 1000 * units;
}
