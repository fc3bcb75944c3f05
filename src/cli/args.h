/*
 * cli/args.h - option-value parsers shared by the subcommands, and the name
 * of an option getopt_long() rejected.
 */
#ifndef GF_CLI_ARGS_H
#define GF_CLI_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A decimal integer in 0..max, the whole string; false otherwise. */
bool gf_cli_parse_ulong(const char *s, unsigned long max, unsigned long *out);

/* "[HOST]:PORT" -> host (may be "", at most n-1 bytes) and port. */
bool gf_cli_parse_address(const char *a, char *host, size_t n, uint16_t *port);

/*
 * The option getopt_long() just returned '?' (unknown) or ':' (no value) for,
 * as the user wrote it: the whole "--name[=value]" argument of a long option,
 * "-x" for a short one (in buf, n bytes).  For the callers' own messages: they
 * set opterr = 0 and start optstring with ':'.  at is optind before that call.
 */
const char *gf_cli_bad_option(char **argv, int at, char *buf, size_t n);

#endif /* GF_CLI_ARGS_H */
