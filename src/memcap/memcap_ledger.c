/*
 * memcap/memcap_ledger.c - the shared accounting file (see the header).
 *
 * Invariant: a device's usage is the saturating sum of used[d] over the
 * slots whose state is "claimed"; nothing else in the file is counted, so a
 * byte written anywhere outside a live process's slot (a stale total, a free
 * slot's counts, a forged claim) changes nothing once reaped.  A claimed
 * slot is live exactly while some open file description holds the OFD write
 * lock on byte 1 + index; the claimer takes it and keeps it until it exits
 * (the descriptor is close-on-exec; a forked child reopens the file and
 * claims a slot of its own).  Byte 0's lock serialises claim, reap and
 * the retry of a refused charge across processes; l->mu across the threads
 * of one.
 *
 * reserve, without a lock: add the bytes to this process's slot, then sum
 * the claimed slots below the high-water mark (all sequentially consistent
 * atomics); a sum <= cap grants, otherwise the bytes are taken back.  Of
 * two processes charging at once, whichever sums last sees both adds (each
 * adds before it sums: the store-buffer pattern cannot hide both under
 * seq_cst), so granted bytes never pass the cap; a charge taken back may
 * make another refuse spuriously, near the cap only.  The high-water mark
 * is raised under the lock before a slot is first used, so a slot not yet
 * counted by a sum belongs to a process whose own later sum counts the
 * summer.  O(hwm) per charge: the highest slot index in use, i.e. about
 * the most processes alive at once (claims take the lowest free slot).
 * A refused charge takes the lock and reaps: for each other claimed slot,
 * try its lock without waiting: taken means no live process holds it, so
 * its counts are zeroed and it is freed (O(slots) fcntl calls, only on a
 * refusal), then tries once more.  release subtracts from this process's
 * slot (never below zero).  claim takes the first slot whose lock it can
 * get, free or dead, and zeroes it: at most 256 live processes hold slots
 * and a dead one never keeps one.
 */
#define _GNU_SOURCE 1
#include "memcap/memcap_ledger.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

_Static_assert(sizeof(_Atomic uint64_t) == 8, "64-bit atomics expected");

#define CLAIMED 1u

/* fcntl OFD byte-range lock; wait: block until granted.  0 or -1 (errno). */
static int ofd_lock(int fd, short type, off_t start, bool wait)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = 1, .l_pid = 0 };
	int r;
	while ((r = fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &fl)) != 0 && errno == EINTR)
		;
	return r;
}

static bool lock_ledger(struct gf_memcap_ledger *l)
{
	pthread_mutex_lock(&l->mu);
	if (l->fd >= 0 && ofd_lock(l->fd, F_WRLCK, 0, true) == 0)
		return true;
	pthread_mutex_unlock(&l->mu);
	return false;
}

static void unlock_ledger(struct gf_memcap_ledger *l)
{
	ofd_lock(l->fd, F_UNLCK, 0, false);
	pthread_mutex_unlock(&l->mu);
}

/* With the lock held. */
static int reap_locked(struct gf_memcap_ledger *l)
{
	int freed = 0;
	for (int i = 0; i < GF_MEMCAP_LEDGER_SLOTS; i++) {
		struct gf_memcap_slot *s = &l->f->slot[i];
		if (i == l->mine_idx || atomic_load(&s->state) != CLAIMED)
			continue;
		if (ofd_lock(l->fd, F_WRLCK, 1 + i, false) != 0)
			continue; /* a live process holds it */
		for (int d = 0; d < GF_MEMCAP_MAX_DEVICES; d++)
			atomic_store(&s->used[d], 0);
		atomic_store(&s->state, 0);
		ofd_lock(l->fd, F_UNLCK, 1 + i, false);
		freed++;
	}
	return freed;
}

/* With the lock held. */
static void claim_locked(struct gf_memcap_ledger *l)
{
	l->mine = NULL;
	l->mine_idx = -1;
	for (int i = 0; i < GF_MEMCAP_LEDGER_SLOTS; i++) {
		if (ofd_lock(l->fd, F_WRLCK, 1 + i, false) != 0)
			continue;
		struct gf_memcap_slot *s = &l->f->slot[i];
		for (int d = 0; d < GF_MEMCAP_MAX_DEVICES; d++)
			atomic_store(&s->used[d], 0);
		s->pid = (int32_t)getpid();
		atomic_store(&s->state, CLAIMED);
		if (atomic_load(&l->f->hwm) < (uint32_t)i + 1)
			atomic_store(&l->f->hwm, (uint32_t)i + 1);
		l->mine = s;
		l->mine_idx = i;
		return;
	}
}

/* True when some other open file description holds a slot's lock. */
static bool any_live(int fd)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 1,
			    .l_len = GF_MEMCAP_LEDGER_SLOTS, .l_pid = 0 };
	if (fcntl(fd, F_OFD_GETLK, &fl) != 0)
		return true; /* cannot tell: assume so */
	return fl.l_type != F_UNLCK;
}

static bool trusted_owner(const struct stat *st)
{
	return st->st_uid == 0 || st->st_uid == geteuid();
}

/* The folder's descriptor and the file's name; "" err on success. */
static int open_dir(const char *path, char *name, size_t name_len, char *err, size_t err_len)
{
	char dir[4096];
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	size_t dlen = slash ? (size_t)(slash - path) : 0;
	if (!*base || strlen(base) >= name_len || dlen >= sizeof(dir)) {
		snprintf(err, err_len, "%s: not a usable ledger path", path);
		return -1;
	}
	memcpy(name, base, strlen(base) + 1);
	if (slash && dlen == 0)
		memcpy(dir, "/", 2);
	else if (!slash)
		memcpy(dir, ".", 2);
	else {
		memcpy(dir, path, dlen);
		dir[dlen] = '\0';
	}
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		snprintf(err, err_len, "%s: open: %s", dir, strerror(errno));
		return -1;
	}
	struct stat st;
	if (fstat(dfd, &st) != 0) {
		snprintf(err, err_len, "%s: fstat: %s", dir, strerror(errno));
		goto fail;
	}
	if (!trusted_owner(&st)) {
		snprintf(err, err_len, "%s: owned by uid %u, neither root nor this process's user", dir,
			 (unsigned)st.st_uid);
		goto fail;
	}
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX)) {
		snprintf(err, err_len, "%s: mode %04o: writable by others and not sticky", dir,
			 (unsigned)(st.st_mode & 07777));
		goto fail;
	}
	return dfd;
fail:
	close(dfd);
	return -1;
}

/* The file, opened without following a link; checked. */
static int open_file(int dfd, const char *path, const char *name, struct stat *st, char *err, size_t err_len)
{
	int fd = -1;
	for (int tries = 0; fd < 0 && tries < 2; tries++) {
		fd = openat(dfd, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 && errno == ENOENT) {
			fd = openat(dfd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
			/* Every user of the container maps it, whatever the umask. */
			if (fd >= 0)
				fchmod(fd, 0666);
		}
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		snprintf(err, err_len, "%s: open: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, st) != 0) {
		snprintf(err, err_len, "%s: fstat: %s", path, strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st->st_mode) || st->st_nlink != 1) {
		snprintf(err, err_len, "%s: not a regular file with one link", path);
		goto fail;
	}
	if (!trusted_owner(st)) {
		snprintf(err, err_len, "%s: owned by uid %u, neither root nor this process's user", path,
			 (unsigned)st->st_uid);
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return -1;
}

int gf_memcap_ledger_open(struct gf_memcap_ledger *l, const char *path, char *err, size_t err_len)
{
	struct stat st;
	memset(l, 0, sizeof(*l));
	l->fd = l->dirfd = -1;
	l->mine_idx = -1;
	pthread_mutex_init(&l->mu, NULL);
	if (!path) {
		snprintf(err, err_len, "no ledger path");
		return -1;
	}
	l->dirfd = open_dir(path, l->name, sizeof(l->name), err, err_len);
	if (l->dirfd < 0)
		return -1;
	l->fd = open_file(l->dirfd, path, l->name, &st, err, err_len);
	if (l->fd < 0)
		goto fail;
	l->dev = st.st_dev;
	l->ino = st.st_ino;
	if (!lock_ledger(l)) {
		snprintf(err, err_len, "%s: lock: %s", path, strerror(errno));
		goto fail;
	}
	if (fstat(l->fd, &st) != 0) {
		snprintf(err, err_len, "%s: fstat: %s", path, strerror(errno));
		goto fail_unlock;
	}
	bool sized = st.st_size == (off_t)sizeof(*l->f);
	if (!sized && any_live(l->fd)) {
		snprintf(err, err_len, "%s: %lld bytes (this version has %zu) and held by live processes", path,
			 (long long)st.st_size, sizeof(*l->f));
		goto fail_unlock;
	}
	if (!sized && ftruncate(l->fd, (off_t)sizeof(*l->f)) != 0) {
		snprintf(err, err_len, "%s: ftruncate: %s", path, strerror(errno));
		goto fail_unlock;
	}
	void *m = mmap(NULL, sizeof(*l->f), PROT_READ | PROT_WRITE, MAP_SHARED, l->fd, 0);
	if (m == MAP_FAILED) {
		snprintf(err, err_len, "%s: mmap: %s", path, strerror(errno));
		goto fail_unlock;
	}
	l->f = m;
	bool ours = l->f->magic == GF_MEMCAP_LEDGER_MAGIC && l->f->version == GF_MEMCAP_LEDGER_VERSION &&
		    l->f->max_devices == GF_MEMCAP_MAX_DEVICES && l->f->slots == GF_MEMCAP_LEDGER_SLOTS;
	if (!sized || !ours) {
		/* New, or no live process's: whatever it holds counts for nothing. */
		if (sized && any_live(l->fd)) {
			snprintf(err, err_len, "%s: not a gpufleet memcap ledger of version %u, held by live processes",
				 path, GF_MEMCAP_LEDGER_VERSION);
			goto fail_unmap;
		}
		memset(l->f, 0, sizeof(*l->f));
		l->f->magic = GF_MEMCAP_LEDGER_MAGIC;
		l->f->version = GF_MEMCAP_LEDGER_VERSION;
		l->f->max_devices = GF_MEMCAP_MAX_DEVICES;
		l->f->slots = GF_MEMCAP_LEDGER_SLOTS;
	}
	claim_locked(l);
	unlock_ledger(l);
	if (!l->mine) {
		snprintf(err, err_len, "%s: all %d slots are held by live processes", path, GF_MEMCAP_LEDGER_SLOTS);
		gf_memcap_ledger_close(l);
		return -1;
	}
	return 0;

fail_unmap:
	munmap(l->f, sizeof(*l->f));
	l->f = NULL;
fail_unlock:
	unlock_ledger(l);
fail:
	if (l->fd >= 0)
		close(l->fd);
	close(l->dirfd);
	l->fd = l->dirfd = -1;
	return -1;
}

void gf_memcap_ledger_close(struct gf_memcap_ledger *l)
{
	if (!l->f)
		return;
	if (l->mine && lock_ledger(l)) {
		for (int d = 0; d < GF_MEMCAP_MAX_DEVICES; d++)
			atomic_store(&l->mine->used[d], 0);
		atomic_store(&l->mine->state, 0);
		ofd_lock(l->fd, F_UNLCK, 1 + l->mine_idx, false);
		unlock_ledger(l);
	}
	munmap(l->f, sizeof(*l->f));
	if (l->fd >= 0)
		close(l->fd);
	if (l->dirfd >= 0)
		close(l->dirfd);
	pthread_mutex_destroy(&l->mu);
	memset(l, 0, sizeof(*l));
	l->fd = l->dirfd = -1;
	l->mine_idx = -1;
}

void gf_memcap_ledger_exit(struct gf_memcap_ledger *l)
{
	if (!l->f || !l->mine)
		return;
	for (int d = 0; d < GF_MEMCAP_MAX_DEVICES; d++)
		atomic_store(&l->mine->used[d], 0);
}

/* Saturating: a forged huge count refuses (until reaped), never wraps.
 * Slots from the high-water mark on are counted too when this process's
 * is among them (a forged lower mark). */
static uint64_t sum_claimed(const struct gf_memcap_ledger *l, int dev)
{
	uint64_t t = 0;
	uint32_t n = atomic_load(&l->f->hwm);
	if (n > GF_MEMCAP_LEDGER_SLOTS)
		n = GF_MEMCAP_LEDGER_SLOTS;
	if (l->mine_idx >= 0 && n < (uint32_t)l->mine_idx + 1)
		n = (uint32_t)l->mine_idx + 1;
	for (uint32_t i = 0; i < n; i++) {
		const struct gf_memcap_slot *s = &l->f->slot[i];
		if (atomic_load(&s->state) != CLAIMED)
			continue;
		uint64_t u = atomic_load(&s->used[dev]);
		if (u > UINT64_MAX - t)
			return UINT64_MAX;
		t += u;
	}
	return t;
}

static void take_back(struct gf_memcap_slot *s, int dev, uint64_t bytes)
{
	_Atomic uint64_t *u = &s->used[dev];
	uint64_t cur = atomic_load_explicit(u, memory_order_relaxed);
	while (!atomic_compare_exchange_weak(u, &cur, cur > bytes ? cur - bytes : 0))
		;
}

/* Add, then sum: see the design comment. */
static bool try_charge(struct gf_memcap_ledger *l, int dev, uint64_t bytes, uint64_t cap)
{
	atomic_fetch_add(&l->mine->used[dev], bytes);
	if (sum_claimed(l, dev) <= cap)
		return true;
	take_back(l->mine, dev, bytes);
	return false;
}

bool gf_memcap_ledger_reserve(struct gf_memcap_ledger *l, int dev, uint64_t bytes, uint64_t cap)
{
	if (!l->f || !l->mine || bytes > cap)
		return false;
	if (try_charge(l, dev, bytes, cap))
		return true;
	/* Full: dead processes' charges may be what fills it, or another
	 * process's charge it is taking back. */
	if (!lock_ledger(l))
		return false;
	reap_locked(l);
	bool ok = try_charge(l, dev, bytes, cap);
	unlock_ledger(l);
	return ok;
}

void gf_memcap_ledger_release(struct gf_memcap_ledger *l, int dev, uint64_t bytes)
{
	if (l->mine)
		take_back(l->mine, dev, bytes);
}

uint64_t gf_memcap_ledger_used(const struct gf_memcap_ledger *l, int dev)
{
	return l->f ? sum_claimed(l, dev) : 0;
}

int gf_memcap_ledger_reap(struct gf_memcap_ledger *l)
{
	if (!l->f || !lock_ledger(l))
		return 0;
	int n = reap_locked(l);
	unlock_ledger(l);
	return n;
}

void gf_memcap_ledger_after_fork(struct gf_memcap_ledger *l)
{
	if (!l->f)
		return;
	/* Another thread may have held the mutex at the fork. */
	pthread_mutex_init(&l->mu, NULL);
	/* The inherited descriptor shares the parent's open file description,
	 * and with it the parent's slot lock: closing it leaves the parent's
	 * lock in place; the child needs a description of its own. */
	int fd = l->dirfd >= 0 ? openat(l->dirfd, l->name, O_RDWR | O_NOFOLLOW | O_CLOEXEC) : -1;
	struct stat st;
	if (fd >= 0 && (fstat(fd, &st) != 0 || st.st_dev != l->dev || st.st_ino != l->ino)) {
		close(fd);
		fd = -1;
	}
	if (l->fd >= 0)
		close(l->fd);
	l->fd = fd;
	l->mine = NULL; /* nothing is granted without a slot */
	l->mine_idx = -1;
	if (fd >= 0 && lock_ledger(l)) {
		claim_locked(l);
		unlock_ledger(l);
	}
}
