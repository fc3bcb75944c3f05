/*
 * cli/files.c - whole-file reads and atomic writes for the CLI.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/files.h"

int gf_read_file(const char *path, char **data, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0;

	if (!f) {
		fprintf(stderr, "gpufleet: %s: %s\n", path, strerror(errno));
		return -1;
	}
	for (;;) {
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 1 << 16;
			char *p;

			if (ncap > GF_FILE_MAX + 1u)
				ncap = GF_FILE_MAX + 1u;
			if (ncap == cap) {
				fprintf(stderr, "gpufleet: %s: larger than the limit of %u bytes\n", path,
					GF_FILE_MAX);
				goto fail;
			}
			p = realloc(buf, ncap + 1);
			if (!p) {
				fprintf(stderr, "gpufleet: %s: out of memory\n", path);
				goto fail;
			}
			buf = p;
			cap = ncap;
		}
		size_t got = fread(buf + n, 1, cap - n, f);

		n += got;
		if (got == 0) {
			if (ferror(f)) {
				fprintf(stderr, "gpufleet: %s: read error: %s\n", path, strerror(errno));
				goto fail;
			}
			break;
		}
	}
	fclose(f);
	buf[n] = '\0';
	*data = buf;
	*len = n;
	return 0;
fail:
	fclose(f);
	free(buf);
	return -1;
}

int gf_write_file(const char *path, const char *data, size_t len)
{
	char tmp[4096];
	FILE *f;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp)) {
		fprintf(stderr, "gpufleet: %s: path too long\n", path);
		return -1;
	}
	f = fopen(tmp, "wb");
	if (!f) {
		fprintf(stderr, "gpufleet: %s: %s\n", tmp, strerror(errno));
		return -1;
	}
	if (fwrite(data, 1, len, f) != len || fclose(f) != 0) {
		fprintf(stderr, "gpufleet: %s: write error: %s\n", tmp, strerror(errno));
		unlink(tmp);
		return -1;
	}
	if (rename(tmp, path)) {
		fprintf(stderr, "gpufleet: %s: %s\n", path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

const char *gf_data_dir(void)
{
	const char *env = getenv("GPUFLEET_DATA");
	struct stat st;

	if (env && *env)
		return env;
#ifdef GF_SOURCE_DATA_DIR
	if (!stat(GF_SOURCE_DATA_DIR, &st) && S_ISDIR(st.st_mode))
		return GF_SOURCE_DATA_DIR;
#endif
	(void)st;
	return "data";
}
