/*
 * cli/args.c - option-value parsers shared by the subcommands: strict
 * decimal integers (no sign, no trailing junk, range-checked) and
 * HOST:PORT addresses; and the name of an option getopt_long() rejected.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
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

static const char *bad_option(char **argv, int at, char *buf, size_t n)
{
	/*
	 * getopt steps past a long option's argument even when it rejects it,
	 * so argv[optind - 1] is that (optopt is 0 or the option's val: no use
	 * for the name).  A bad short option inside a cluster ("-vx") leaves
	 * optind at the cluster, and argv[optind - 1] may then be an earlier
	 * "--name": hence the check against at.  No other argument just before
	 * optind starts with "--": getopt only skips non-options.
	 */
	if (optind > at && !strncmp(argv[optind - 1], "--", 2))
		return argv[optind - 1];
	snprintf(buf, n, "-%c", optopt);
	return buf;
}

int gf_cli_option_error(const char *cmd, int opt, char **argv, int at)
{
	char bad[8];

	if (opt == ':' || opt == '?')
		fprintf(stderr, opt == ':' ? "gpufleet %s: %s needs a value\n" : "gpufleet %s: unknown option '%s'\n",
			cmd, bad_option(argv, at, bad, sizeof(bad)));
	fprintf(stderr, "gpufleet %s: try 'gpufleet %s --help'\n", cmd, cmd);
	return 2;
}

bool gf_cli_operands(const char *cmd, int argc, char **argv)
{
	if (optind >= argc)
		return false;
	fprintf(stderr, "gpufleet %s: unexpected argument \"%s\"\n", cmd, argv[optind]);
	return true;
}

bool gf_cli_parse_list(char *s, const char **arr, size_t *n, size_t max)
{
	char *save = NULL;
	for (char *t = strtok_r(s, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (*n == max)
			return false;
		arr[(*n)++] = t;
	}
	return true;
}

int gf_cli_parse_seeds(const char *s, uint64_t *out, int max)
{
	int n = 0;
	const char *p = s;

	while (*p) {
		char *e;
		unsigned long long a, b;

		errno = 0;
		if (*p < '0' || *p > '9')
			return -1;
		a = strtoull(p, &e, 10);
		b = a;
		if (errno)
			return -1;
		if (*e == '-') {
			p = e + 1;
			if (*p < '0' || *p > '9')
				return -1;
			b = strtoull(p, &e, 10);
			if (errno || b < a)
				return -1;
		}
		for (unsigned long long v = a; v <= b; v++) {
			if (n == max)
				return -1;
			out[n++] = v;
			if (v == b)
				break;
		}
		if (*e == ',')
			e++;
		else if (*e)
			return -1;
		p = e;
	}
	return n;
}
