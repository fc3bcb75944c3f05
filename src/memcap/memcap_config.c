/*
 * memcap/memcap_config.c - parser of the memory cap's limit file.
 *
 * One pass over the bytes, line by line; each line is `key = value` with
 * optional blanks and an optional `# comment`.  Keys: `limit_bytes` (every
 * device) and `limit_bytes.N` (ordinal N < GF_MEMCAP_MAX_DEVICES).  A
 * per-device key overrides the all-devices key whatever their order.
 * O(len), no allocation; errors name the 1-based line and the field.
 */
#include "memcap/memcap_config.h"

#include <stdio.h>
#include <string.h>

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* Trims [*b, *e) of blanks on both sides. */
static void trim(const char **b, const char **e)
{
	while (*b < *e && is_blank(**b))
		(*b)++;
	while (*e > *b && is_blank((*e)[-1]))
		(*e)--;
}

/* Decimal digits only, 1..GF_MEMCAP_MAX_LIMIT. */
static bool parse_bytes(const char *b, const char *e, uint64_t *out)
{
	uint64_t v = 0;
	if (b == e)
		return false;
	for (const char *p = b; p < e; p++) {
		if (*p < '0' || *p > '9')
			return false;
		v = v * 10 + (uint64_t)(*p - '0');
		if (v > GF_MEMCAP_MAX_LIMIT)
			return false;
	}
	if (v == 0)
		return false;
	*out = v;
	return true;
}

/* "limit_bytes" -> -1 (all devices), "limit_bytes.N" -> N, else -2. */
static int parse_key(const char *b, const char *e)
{
	static const char base[] = "limit_bytes";
	size_t n = sizeof(base) - 1;
	if ((size_t)(e - b) < n || memcmp(b, base, n) != 0)
		return -2;
	if ((size_t)(e - b) == n)
		return -1;
	if (b[n] != '.' || (size_t)(e - b) == n + 1 || (size_t)(e - b) > n + 3)
		return -2;
	int dev = 0;
	for (const char *p = b + n + 1; p < e; p++) {
		if (*p < '0' || *p > '9')
			return -2;
		dev = dev * 10 + (*p - '0');
	}
	return dev < GF_MEMCAP_MAX_DEVICES ? dev : -2;
}

bool gf_memcap_config_parse(const char *text, size_t len, struct gf_memcap_config *out,
			    char *err, size_t err_len)
{
	uint64_t all = 0;
	bool set[GF_MEMCAP_MAX_DEVICES] = { false };
	bool any = false;
	const char *p = text, *end = text + len;
	unsigned line = 0;

	memset(out, 0, sizeof(*out));
	if (err_len)
		err[0] = '\0';
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *le = eol ? eol : end;
		const char *hash = memchr(p, '#', (size_t)(le - p));
		const char *b = p, *e = hash ? hash : le;
		line++;
		p = eol ? eol + 1 : end;
		if (memchr(b, '\0', (size_t)(le - b))) {
			snprintf(err, err_len, "line %u: NUL byte", line);
			return false;
		}
		trim(&b, &e);
		if (b == e)
			continue;
		const char *eq = memchr(b, '=', (size_t)(e - b));
		if (!eq) {
			snprintf(err, err_len, "line %u: expected `limit_bytes = BYTES`", line);
			return false;
		}
		const char *kb = b, *ke = eq, *vb = eq + 1, *ve = e;
		trim(&kb, &ke);
		trim(&vb, &ve);
		int dev = parse_key(kb, ke);
		if (dev == -2) {
			snprintf(err, err_len,
				 "line %u: unknown key `%.*s` (expected limit_bytes or limit_bytes.N, N < %d)",
				 line, (int)(ke - kb > 64 ? 64 : ke - kb), kb, GF_MEMCAP_MAX_DEVICES);
			return false;
		}
		uint64_t v;
		if (!parse_bytes(vb, ve, &v)) {
			snprintf(err, err_len,
				 "line %u: field `%.*s`: expected a byte count 1..2^62 in decimal, got `%.*s`",
				 line, (int)(ke - kb > 64 ? 64 : ke - kb), kb, (int)(ve - vb > 64 ? 64 : ve - vb), vb);
			return false;
		}
		any = true;
		if (dev == -1) {
			all = v;
		} else {
			out->limit[dev] = v;
			set[dev] = true;
		}
	}
	if (!any) {
		snprintf(err, err_len, "line %u: no limit_bytes setting in the file", line);
		return false;
	}
	for (int d = 0; d < GF_MEMCAP_MAX_DEVICES; d++)
		if (!set[d])
			out->limit[d] = all;
	return true;
}
