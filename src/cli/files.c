/*
 * cli/files.c - whole-file reads, and output files written safely and together.
 *
 * An output path names what the user wants written, which is not always a
 * regular file: /dev/null, /dev/stdout, a FIFO, a symbolic link.  Only a
 * regular file (or a new one) is replaced through a temporary and rename();
 * anything else is written in place and left as it is.  The temporary is
 * created by mkstemp() in the target's own directory (same filesystem, so the
 * rename is atomic; O_EXCL, so a link planted under a guessable name is never
 * followed).  The rules per kind are in files.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/files.h"
#include "core/grow.h"
#include "core/obuf.h"
#include "core/text.h"

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
			size_t ncap = gf_grow_cap(cap, cap + 1, 1 << 16, 0);
			char *p;

			if (!ncap || ncap > GF_FILE_MAX + 1u)
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

/* One destination being prepared: a temporary to rename, or a descriptor to write in place. */
struct dest {
	const struct gf_out_file *f;
	char *target;	/* the regular file's real path (rename destination); NULL when in place */
	char *tmp;	/* the temporary beside target, once created */
	int fd;		/* in place: the open destination; -1 otherwise */
};

static int say(const char *path, const char *what, int err)
{
	if (err)
		fprintf(stderr, "gpufleet: %s: %s: %s\n", path, what, strerror(err));
	else
		fprintf(stderr, "gpufleet: %s: %s\n", path, what);
	return -1;
}

static int write_all(int fd, const char *data, size_t len)
{
	while (len > 0) {
		ssize_t w = write(fd, data, len);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		data += w;
		len -= (size_t)w;
	}
	return 0;
}

/* "dir/" of path (with its slash; "" for a bare name) joined with rest, malloc'ed. */
static char *beside(const char *path, const char *rest)
{
	const char *slash = strrchr(path, '/');
	size_t dl = slash ? (size_t)(slash - path) + 1 : 0, rl = strlen(rest);
	char *s = malloc(dl + rl + 1);

	if (s) {
		memcpy(s, path, dl);
		memcpy(s + dl, rest, rl + 1);
	}
	return s;
}

/*
 * Where the chain of symbolic links at path ends (malloc'ed): the first name
 * that is not a link, or does not exist (a dangling link).  Followed link by
 * link, a relative target from its link's directory, 40 links at most as the
 * kernel allows.  NULL after a message, or with errno ENOMEM.
 */
static char *link_target(const char *path)
{
	char *p = strdup(path);

	for (int hops = 0; p && hops < 40; hops++) {
		struct stat st;
		char link[4096];
		ssize_t l;

		if (lstat(p, &st)) {
			if (errno == ENOENT)
				return p;
			say(p, "cannot look at", errno);
			free(p);
			errno = 0;
			return NULL;
		}
		if (!S_ISLNK(st.st_mode))
			return p;
		l = readlink(p, link, sizeof(link) - 1);
		if (l < 0 || (size_t)l >= sizeof(link) - 1) {
			say(p, "cannot read the symbolic link", l < 0 ? errno : ENAMETOOLONG);
			free(p);
			errno = 0;
			return NULL;
		}
		link[l] = '\0';
		char *next = link[0] == '/' ? strdup(link) : beside(p, link);

		free(p);
		p = next;
	}
	if (p) {
		say(path, "cannot follow the symbolic link", ELOOP);
		free(p);
		errno = 0;
	}
	return NULL;
}

/* The mode bits a new file gets: 0666 minus the umask (read by setting it back). */
static mode_t new_file_mode(void)
{
	mode_t um = umask(022);

	umask(um);
	return 0666 & ~um;
}

/* As root, give the temporary the owner of the file it replaces (best effort). */
static void keep_owner(int fd, const struct stat *st)
{
	if (geteuid() == 0) {
		int r = fchown(fd, st->st_uid, st->st_gid);

		(void)r;	/* the content matters more than the owner */
	}
}

/* The standard output or error when path leads to the same file (e.g. /dev/stdout), else -1. */
static int std_stream_of(const struct stat *st)
{
	for (int fd = STDOUT_FILENO; fd <= STDERR_FILENO; fd++) {
		struct stat s;

		if (!fstat(fd, &s) && s.st_dev == st->st_dev && s.st_ino == st->st_ino)
			return fd;
	}
	return -1;
}

/*
 * Create d->tmp beside d->target and write d->f into it; old is the file it
 * will replace (its mode and owner are kept), NULL for a new file.
 */
static int stage_temp(struct dest *d, const struct stat *old)
{
	const char *name = strrchr(d->target, '/');
	size_t blen;
	char *base;
	int fd;

	name = name ? name + 1 : d->target;
	blen = strlen(name) + sizeof(".") + sizeof(".XXXXXX");
	base = malloc(blen);
	if (!base)
		return say(d->f->path, "out of memory", 0);
	snprintf(base, blen, ".%s.XXXXXX", name);
	d->tmp = beside(d->target, base);
	free(base);
	if (!d->tmp)
		return say(d->f->path, "out of memory", 0);
	fd = mkstemp(d->tmp);	/* O_CREAT|O_EXCL: a name planted there is never followed */
	if (fd < 0) {
		int e = errno;

		free(d->tmp);
		d->tmp = NULL;
		return say(d->target, "cannot create a temporary file beside it", e);
	}
	if (old)
		keep_owner(fd, old);
	if (fchmod(fd, old ? old->st_mode & 07777 : new_file_mode()) ||
	    write_all(fd, d->f->data, d->f->len) || fsync(fd)) {
		say(d->tmp, "write error", errno);
		close(fd);
		return -1;
	}
	if (close(fd))
		return say(d->tmp, "write error", errno);
	return 0;
}

/* Decide where d->f goes; open it (in place) or write its temporary (regular file). */
static int dest_prepare(struct dest *d)
{
	const char *path = d->f->path;
	struct stat st, lst;
	bool exists = !stat(path, &st);

	if (!exists && errno != ENOENT)
		return say(path, "cannot look at", errno);
	if (exists && S_ISDIR(st.st_mode))
		return say(path, "is a directory; expected a file name", 0);
	if (exists && std_stream_of(&st) >= 0) {
		/*
		 * Our own standard output or error (/dev/stdout, even when the
		 * shell sent it to a file): write through that descriptor, so
		 * that what else goes there follows instead of overwriting.
		 */
		d->fd = dup(std_stream_of(&st));
		if (d->fd < 0)
			return say(path, "cannot write", errno);
		return 0;
	}
	if (exists && !S_ISREG(st.st_mode)) {
		/* A device, a FIFO...: write to it as it is, never create or replace anything. */
		d->fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
		if (d->fd < 0)
			return say(path, "cannot open for writing", errno);
		return 0;
	}
	/* A new or regular file, maybe behind symbolic links: replace the file, keep the links. */
	if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode))
		d->target = link_target(path);
	else
		d->target = strdup(path);
	if (!d->target)
		return errno == ENOMEM ? say(path, "out of memory", 0) : -1;	/* else said */
	return stage_temp(d, exists ? &st : NULL);
}

/* Make a rename durable: fsync the directory that holds path (best effort). */
static void sync_dir_of(const char *path)
{
	char *dir = beside(path, ".");
	int fd;

	if (!dir)
		return;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		(void)fsync(fd);
		close(fd);
	}
	free(dir);
}

int gf_write_files(const struct gf_out_file *files, size_t n)
{
	struct dest *d = calloc(n ? n : 1, sizeof(*d));
	int rc = -1;
	size_t i;

	if (!d) {
		fprintf(stderr, "gpufleet: out of memory\n");
		return -1;
	}
	for (i = 0; i < n; i++) {
		d[i].f = &files[i];
		d[i].fd = -1;
	}
	for (i = 0; i < n; i++)
		if (dest_prepare(&d[i]))
			goto out;
	for (i = 0; i < n; i++) {
		if (d[i].fd < 0)
			continue;
		if (write_all(d[i].fd, files[i].data, files[i].len)) {
			say(files[i].path, "write error", errno);
			goto out;
		}
		int fd = d[i].fd;

		d[i].fd = -1;
		if (close(fd)) {
			say(files[i].path, "write error", errno);
			goto out;
		}
	}
	for (i = 0; i < n; i++) {
		if (!d[i].tmp)
			continue;
		if (rename(d[i].tmp, d[i].target)) {
			say(d[i].target, "cannot replace", errno);
			goto out;
		}
		free(d[i].tmp);
		d[i].tmp = NULL;
		sync_dir_of(d[i].target);
	}
	rc = 0;
out:
	for (i = 0; i < n; i++) {
		if (d[i].fd >= 0)
			close(d[i].fd);
		if (d[i].tmp)
			unlink(d[i].tmp);
		free(d[i].tmp);
		free(d[i].target);
	}
	free(d);
	return rc;
}

int gf_write_file(const char *path, const char *data, size_t len)
{
	struct gf_out_file f = { path, data, len };

	return gf_write_files(&f, 1);
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

int gf_rendered(const char *cmd, const char *path, const struct gf_obuf *b)
{
	if (gf_obuf_error(b)) {
		fprintf(stderr, "gpufleet %s: cannot render %s: %s\n", cmd, path, gf_strerror(gf_obuf_error(b)));
		return -1;
	}
	return 0;
}

int gf_write_rendered(const char *cmd, const char *path, const struct gf_obuf *b)
{
	if (gf_rendered(cmd, path, b))
		return -1;
	return gf_write_file(path, b->data ? b->data : "", b->len);
}

void gf_trace_file_name(const char *path, char *out, size_t outlen)
{
	const char *b = strrchr(path, '/');
	size_t n;

	b = b ? b + 1 : path;
	n = strlen(b);
	if (n > 4 && !strcmp(b + n - 4, ".csv"))
		n -= 4;
	n = gf_utf8_cut(b, n, outlen - 1);
	memcpy(out, b, n);
	out[n] = '\0';
}
