/*
 * cli/args.h - option-value parsers shared by the subcommands, and the error
 * for an option getopt_long() rejected.
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
 * A comma-separated list (a repeatable option): s is split in place, the
 * non-empty items appended to arr (*n of them, at most max); false when
 * there would be more than max.
 */
bool gf_cli_parse_list(char *s, const char **arr, size_t *n, size_t max);

/*
 * For what getopt_long() returned and the caller does not handle: ':' (an
 * option without its value) or '?' (an unknown option), named as the user
 * wrote it ("--name[=value]", or "-x" also inside a cluster like "-vx"), then
 * a pointer to --help; returns 2, the exit status.  The callers set
 * opterr = 0 and start their optstring with ':'; at is optind before that
 * getopt_long() call.
 */
int gf_cli_option_error(const char *cmd, int opt, char **argv, int at);

/* After getopt_long(): true (and said on stderr) if arguments other than options are left. */
bool gf_cli_operands(const char *cmd, int argc, char **argv);

/* A seed list "42-51", "42", "1,5,7-9" into out[0..max); the count, or -1 if malformed or too long. */
int gf_cli_parse_seeds(const char *s, uint64_t *out, int max);

#endif /* GF_CLI_ARGS_H */
