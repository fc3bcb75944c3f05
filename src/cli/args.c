/*
 * cli/args.c - option-value parsers shared by the subcommands: strict
 * decimal integers (no sign, no trailing junk, range-checked), HOST:PORT
 * addresses, durations (one syntax, core/duration.h), on|off switches,
 * seeds; the name of an option getopt_long() rejected; the deprecation note
 * of an old option name; --version.  docs/cli.md is the vocabulary these
 * implement, written once for every command.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "core/build_info.h"
#include "core/duration.h"

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

bool gf_cli_duration(const char *cmd, const char *opt, const char *s, int64_t bare_ms, int64_t min_ms,
		     int64_t max_ms, int64_t *ms)
{
	int64_t v;
	char lo[32], hi[32];

	if (gf_duration_parse(s, bare_ms, &v) && v >= min_ms && v <= max_ms) {
		*ms = v;
		return true;
	}
	fprintf(stderr, "gpufleet %s: %s: '%s' is not a duration from %s to %s (e.g. 30s, 5m, 1h30m, 250ms%s)\n",
		cmd, opt, s, gf_duration_format(min_ms, lo, sizeof(lo)), gf_duration_format(max_ms, hi, sizeof(hi)),
		bare_ms == 1 ? "; a plain number counts milliseconds"
		: bare_ms == GF_MS_PER_S ? "; a plain number counts seconds" : "");
	return false;
}

bool gf_cli_whole_seconds(const char *cmd, const char *opt, const char *s, int64_t min_s, int64_t max_s, int64_t *sec)
{
	int64_t ms;

	if (!gf_cli_duration(cmd, opt, s, GF_MS_PER_S, min_s * GF_MS_PER_S, max_s * GF_MS_PER_S, &ms))
		return false;
	if (ms % GF_MS_PER_S) {
		fprintf(stderr, "gpufleet %s: %s: '%s' is not a whole number of seconds\n", cmd, opt, s);
		return false;
	}
	*sec = ms / GF_MS_PER_S;
	return true;
}

void gf_cli_deprecated(const char *cmd, const char *old, const char *use)
{
	fprintf(stderr, "gpufleet %s: %s is deprecated; use %s\n", cmd, old, use);
}

bool gf_cli_onoff(const char *cmd, const char *opt, const char *arg, int argc, char **argv, bool *on)
{
	/* The commands with on|off switches take no operands: a word after the switch is its value. */
	if (!arg && optind < argc && argv[optind][0] != '-')
		arg = argv[optind++];
	if (!arg || !strcmp(arg, "on")) {
		*on = true;
		return true;
	}
	if (!strcmp(arg, "off")) {
		*on = false;
		return true;
	}
	fprintf(stderr, "gpufleet %s: %s: expected on or off, found \"%s\"\n", cmd, opt, arg);
	return false;
}

bool gf_cli_one_seed(const char *cmd, const char *opt, const char *s, uint64_t *seed)
{
	uint64_t v[2];

	if (gf_cli_parse_seeds(s, v, 2) == 1) {
		*seed = v[0];
		return true;
	}
	fprintf(stderr, "gpufleet %s: %s: expected one seed (an integer), found \"%s\"\n", cmd, opt, s);
	return false;
}

void gf_cli_print_version(void)
{
	printf("gpufleet %s (commit %s)\n", gf_build_version(), gf_build_commit());
}

bool gf_cli_wants_version(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--version"))
			return true;
	return false;
}
