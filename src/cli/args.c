/*
 * cli/args.c - option-value parsers shared by the subcommands: strict
 * decimal integers (no sign, no trailing junk, range-checked) and
 * HOST:PORT addresses.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"

bool gf_cli_parse_ulong(const char *s, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v > max)
		return false;
	*out = v;
	return true;
}

bool gf_cli_parse_address(const char *a, char *host, size_t n, uint16_t *port)
{
	const char *c = strrchr(a, ':');
	unsigned long p;

	if (!c || (size_t)(c - a) >= n || !gf_cli_parse_ulong(c + 1, 65535, &p))
		return false;
	memcpy(host, a, (size_t)(c - a));
	host[c - a] = '\0';
	*port = (uint16_t)p;
	return true;
}
