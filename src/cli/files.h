/*
 * cli/files.h - the CLI's file I/O: whole-file reads with a cap, output files
 * written safely and together, and where the bundled data lives.
 */
#ifndef GF_CLI_FILES_H
#define GF_CLI_FILES_H

#include <stddef.h>

struct gf_obuf;

#define GF_FILE_MAX (1u << 30)	/* largest input file read whole: 1 GiB */

/*
 * Read a whole file into *data (malloc'ed, NUL-terminated, caller frees).
 * Returns 0, or -1 after printing "gpufleet: PATH: reason" to stderr.
 */
int gf_read_file(const char *path, char **data, size_t *len);

/* One output file: its path and the bytes it will hold. */
struct gf_out_file {
	const char *path;
	const char *data;
	size_t len;
};

/*
 * Write the n outputs together: either every one is written or (as far as
 * the system allows) none is.  Returns 0, or -1 after printing
 * "gpufleet: PATH: reason" to stderr.
 *
 * Where each one goes, decided by what is at its path:
 *   - nothing, or a regular file: a temporary created exclusively (mkstemp:
 *     O_CREAT|O_EXCL, so nothing planted there is followed) in the same
 *     directory, written, fsync'ed, then renamed over the path.  A replaced
 *     file keeps its permission bits (and, as root, its owner); a new one
 *     gets 0666 minus the umask, as the shell's '>' would.
 *   - a symbolic link: the file it leads to is written as above (also when
 *     the link dangles: the target is created); the link stays a link.
 *   - anything else that can be opened for writing (a device such as
 *     /dev/null or /dev/stdout, a FIFO): written in place, never replaced.
 *   - a directory, a socket: an error.
 * Order: every destination is opened or its temporary written first (the
 * first failure removes the temporaries and writes nothing); then the
 * in-place outputs are written (a failure there still removes the
 * temporaries: no regular file is replaced); then the temporaries are
 * renamed.  Only a rename failing after an earlier rename succeeded (which
 * takes a disk error or a race with another process) leaves a part written.
 */
int gf_write_files(const struct gf_out_file *files, size_t n);

/* gf_write_files() of one file. */
int gf_write_file(const char *path, const char *data, size_t len);

/*
 * 0 if b rendered (no error on the buffer), else -1 after printing
 * "gpufleet CMD: cannot render PATH: reason" to stderr.
 */
int gf_rendered(const char *cmd, const char *path, const struct gf_obuf *b);

/* gf_rendered(), then gf_write_file() of the buffer. */
int gf_write_rendered(const char *cmd, const char *path, const struct gf_obuf *b);

/* The name of a trace file for titles: its base name without ".csv", cut to
 * outlen - 1 bytes on a UTF-8 character boundary. */
void gf_trace_file_name(const char *path, char *out, size_t outlen);

/* $GPUFLEET_DATA, else the source tree's data/ (compiled in), else "data". */
const char *gf_data_dir(void);

#endif /* GF_CLI_FILES_H */
