/*
 * cli/args.h - option-value parsers shared by the subcommands.
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

#endif /* GF_CLI_ARGS_H */
