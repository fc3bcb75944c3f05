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

/*
 * The value s of duration option opt (named as the user wrote it, e.g.
 * "--interval-ms"), in the one syntax of core/duration.h ("30s", "5m",
 * "1h30m", "250ms"; a plain number counts bare_ms milliseconds: 1000 for
 * seconds, 1 for the "-ms" options), into *ms when it lies in
 * [min_ms, max_ms].  Otherwise says so on stderr ("gpufleet CMD: OPT: 'S'
 * is not a duration from MIN to MAX ...") and returns false; the caller
 * exits 2.
 */
bool gf_cli_duration(const char *cmd, const char *opt, const char *s, int64_t bare_ms, int64_t min_ms,
		     int64_t max_ms, int64_t *ms);

/* gf_cli_duration for whole seconds (a plain number is seconds); "1500ms" is refused, naming why. */
bool gf_cli_whole_seconds(const char *cmd, const char *opt, const char *s, int64_t min_s, int64_t max_s, int64_t *sec);

/*
 * One line on stderr: "gpufleet CMD: OLD is deprecated; use USE".  Old
 * spellings keep working (each is an alias of its new name); this is all
 * they cost.
 */
void gf_cli_deprecated(const char *cmd, const char *old, const char *use);

/*
 * An on|off switch option declared optional_argument: "--NAME" alone is on,
 * "--NAME=on" / "--NAME=off" say which, and the older two-word form
 * "--NAME on" / "--NAME off" is read too: a next word not starting with '-'
 * is the value (optind advances past it; only for commands that take no
 * operands).  arg is getopt's optarg.  False (said on stderr) for a value
 * other than on or off.
 */
bool gf_cli_onoff(const char *cmd, const char *opt, const char *arg, int argc, char **argv, bool *on);

/*
 * A single seed for a command that runs one (--seed N, or --seeds N with one
 * value: both spellings everywhere); false (said on stderr) for a list or a
 * malformed value.
 */
bool gf_cli_one_seed(const char *cmd, const char *opt, const char *s, uint64_t *seed);

/* "gpufleet VERSION (commit HASH)" and a newline on stdout: what --version prints for every command. */
void gf_cli_print_version(void);

/* True when argv[1..argc) has "--version" before any "--": main() answers it for every command. */
bool gf_cli_wants_version(int argc, char **argv);
