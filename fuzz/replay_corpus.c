/*
 * fuzz/replay_corpus.c - run a libFuzzer harness over its seed corpus without
 * libFuzzer, so the normal and sanitizer test builds (gcc or clang, ctest
 * label `fuzz`) check every kept input on every change, in a second.
 *
 * Linked with one fuzz/fuzz_NAME.c in place of libFuzzer's driver: each
 * argument is a file or a folder whose regular files (sorted by name, so the
 * order is the same everywhere) are read whole and passed, one call each, to
 * LLVMFuzzerTestOneInput (read by gf_read_file, src/cli/files.c).  A harness reports a failed check by abort(), which
 * fails the test; so does a sanitizer report in the ASan build.  An empty
 * corpus fails too: a replay of nothing proves nothing.
 *
 * Finding new inputs is still libFuzzer's job (`make test-fuzz`,
 * scripts/run-fuzzers); this only keeps what it found from coming back.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/files.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One input: read whole by the CLI's reader (its size cap and error messages), then passed
 * in memory of exactly its size, so ASan sees a read past the end. */
static int replay_file(const char *path)
{
	char *buf;
	size_t len;

	if (gf_read_file(path, &buf, &len) != 0)
		return -1;
	uint8_t *in = malloc(len ? len : 1);
	if (!in) {
		free(buf);
		return -1;
	}
	if (len)
		memcpy(in, buf, len);
	free(buf);
	LLVMFuzzerTestOneInput(in, len);
	free(in);
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Replays every regular file of folder dir; the count replayed, or -1. */
static long replay_dir(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d) {
		fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	long done = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			char **nn = realloc(names, ncap * sizeof *nn);
			if (!nn)
				goto fail;
			names = nn;
			cap = ncap;
		}
		if (!(names[n] = strdup(e->d_name)))
			goto fail;
		n++;
	}
	qsort(names, n, sizeof *names, by_name);
	for (size_t i = 0; i < n; i++) {
		char path[4096];
		struct stat st;
		if (snprintf(path, sizeof path, "%s/%s", dir, names[i]) >= (int)sizeof path)
			goto fail;
		if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		if (replay_file(path) != 0)
			goto fail;
		done++;
	}
	goto out;
fail:
	done = -1;
out:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	closedir(d);
	return done;
}

int main(int argc, char **argv)
{
	long total = 0;
	if (argc < 2) {
		fprintf(stderr, "usage: %s CORPUS_DIR_OR_FILE...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0) {
			fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
			return 1;
		}
		long k = S_ISDIR(st.st_mode) ? replay_dir(argv[i]) : (replay_file(argv[i]) == 0 ? 1 : -1);
		if (k < 0)
			return 1;
		total += k;
	}
	if (total == 0) {
		fprintf(stderr, "replay: no input in the corpus\n");
		return 1;
	}
	printf("replay: %ld inputs ran clean\n", total);
	return 0;
}
