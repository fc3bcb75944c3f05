/*
 * cli/files.h - the CLI's file I/O: whole-file reads with a cap, atomic writes,
 * and where the bundled data lives.
 */
#ifndef GF_CLI_FILES_H
#define GF_CLI_FILES_H

#include <stddef.h>

#define GF_FILE_MAX (1u << 30)	/* largest input file read whole: 1 GiB */

/*
 * Read a whole file into *data (malloc'ed, NUL-terminated, caller frees).
 * Returns 0, or -1 after printing "gpufleet: PATH: reason" to stderr.
 */
int gf_read_file(const char *path, char **data, size_t *len);

/* Write len bytes to path (through PATH.tmp and rename); 0 or -1 with a message. */
int gf_write_file(const char *path, const char *data, size_t len);

/* $GPUFLEET_DATA, else the source tree's data/ (compiled in), else "data". */
const char *gf_data_dir(void);

#endif /* GF_CLI_FILES_H */
