/*
 * memcap/memcap_ledger.c - the shared accounting file (see the header).
 *
 * Invariant: file->used[d] == sum over slots s of s.used[d] (+ the
 * overflow counts of processes that found no slot), except transiently
 * between the two atomic steps of one reserve/release.  reserve keeps
 * used[d] <= cap with a CAS loop: no lock on the allocation path, O(1)
 * expected.  A process that dies without freeing leaves its slot charged;
 * the next open (process start) or a reserve that fails reaps it: under the
 * file's flock, for each slot whose pid is gone, subtract its counts and
 * free it.  Reaping is O(slots x devices).
 */
#define _DEFAULT_SOURCE 1
#include "memcap/memcap_ledger.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

_Static_assert(sizeof(_Atomic uint64_t) == 8, "64-bit atomics expected");

static struct gf_memcap_slot *slot_of(struct gf_memcap_ledger *l)
{
	return l->mine ? l->mine : &l->overflow;
}

static void lock_file(const struct gf_memcap_ledger *l)
{
	if (l->fd >= 0)
		while (flock(l->fd, LOCK_EX) != 0 && errno == EINTR)
			;
}

static void unlock_file(const struct gf_memcap_ledger *l)
{
	if (l->fd >= 0)
		flock(l->fd, LOCK_UN);
}

static bool pid_gone(int32_t pid)
{
	return pid > 0 && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* With the lock held. */
static int reap_locked(struct gf_memcap_ledger *l)
{
	int freed = 0;
	for (int i = 0; i < GF_MEMCAP_LEDGER_SLOTS; i++) {
		struct gf_memcap_slot *s = &l->f->slot[i];
		if (s == l->mine || !pid_gone(atomic_load(&s->pid)))
			continue;
		for (int d = 0; d < GF_MEMCAP_MAX_DEVICES; d++) {
			uint64_t b = atomic_exchange(&s->used[d], 0);
			if (b)
				atomic_fetch_sub(&l->f->used[d], b);
		}
		atomic_store(&s->pid, 0);
		freed++;
	}
	return freed;
}

/* With the lock held. */
static void claim_locked(struct gf_memcap_ledger *l)
{
	int32_t me = (int32_t)getpid();
	l->mine = NULL;
	memset(&l->overflow, 0, sizeof(l->overflow));
	for (int i = 0; i < GF_MEMCAP_LEDGER_SLOTS; i++) {
		struct gf_memcap_slot *s = &l->f->slot[i];
		if (atomic_load(&s->pid) == 0) {
			for (int d = 0; d < GF_MEMCAP_MAX_DEVICES; d++)
				atomic_store(&s->used[d], 0);
			atomic_store(&s->pid, me);
			l->mine = s;
			return;
		}
	}
}

static int open_private(struct gf_memcap_ledger *l, char *err, size_t err_len)
{
	void *m = mmap(NULL, sizeof(*l->f), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		snprintf(err, err_len, "private ledger: mmap: %s", strerror(errno));
		return -1;
	}
	l->f = m;
	l->fd = -1;
	l->f->magic = GF_MEMCAP_LEDGER_MAGIC;
	l->f->version = GF_MEMCAP_LEDGER_VERSION;
	l->f->max_devices = GF_MEMCAP_MAX_DEVICES;
	l->f->slots = GF_MEMCAP_LEDGER_SLOTS;
	claim_locked(l);
	return 0;
}

int gf_memcap_ledger_open(struct gf_memcap_ledger *l, const char *path, char *err, size_t err_len)
{
	memset(l, 0, sizeof(*l));
	l->fd = -1;
	if (!path)
		return open_private(l, err, err_len);

	if (strlen(path) >= sizeof(l->path)) {
		snprintf(err, err_len, "ledger path longer than %zu bytes", sizeof(l->path) - 1);
		return -1;
	}
	memcpy(l->path, path, strlen(path) + 1);
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
	if (fd < 0) {
		snprintf(err, err_len, "%s: open: %s", path, strerror(errno));
		return -1;
	}
	l->fd = fd;
	lock_file(l);
	struct stat st;
	if (fstat(fd, &st) != 0) {
		snprintf(err, err_len, "%s: fstat: %s", path, strerror(errno));
		goto fail_unlock;
	}
	bool fresh = st.st_size == 0;
	if (fresh && ftruncate(fd, (off_t)sizeof(*l->f)) != 0) {
		snprintf(err, err_len, "%s: ftruncate: %s", path, strerror(errno));
		goto fail_unlock;
	}
	if (!fresh && st.st_size != (off_t)sizeof(*l->f)) {
		snprintf(err, err_len, "%s: %lld bytes, a ledger of this version has %zu", path,
			 (long long)st.st_size, sizeof(*l->f));
		goto fail_unlock;
	}
	void *m = mmap(NULL, sizeof(*l->f), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		snprintf(err, err_len, "%s: mmap: %s", path, strerror(errno));
		goto fail_unlock;
	}
	l->f = m;
	if (fresh) {
		l->f->magic = GF_MEMCAP_LEDGER_MAGIC;
		l->f->version = GF_MEMCAP_LEDGER_VERSION;
		l->f->max_devices = GF_MEMCAP_MAX_DEVICES;
		l->f->slots = GF_MEMCAP_LEDGER_SLOTS;
	} else if (l->f->magic != GF_MEMCAP_LEDGER_MAGIC || l->f->version != GF_MEMCAP_LEDGER_VERSION ||
		   l->f->max_devices != GF_MEMCAP_MAX_DEVICES || l->f->slots != GF_MEMCAP_LEDGER_SLOTS) {
		snprintf(err, err_len, "%s: not a gpufleet memcap ledger of version %u", path,
			 GF_MEMCAP_LEDGER_VERSION);
		munmap(m, sizeof(*l->f));
		l->f = NULL;
		goto fail_unlock;
	}
	reap_locked(l);
	claim_locked(l);
	unlock_file(l);
	return 0;

fail_unlock:
	unlock_file(l);
	close(fd);
	l->fd = -1;
	return -1;
}

void gf_memcap_ledger_close(struct gf_memcap_ledger *l)
{
	if (!l->f)
		return;
	if (l->mine) {
		lock_file(l);
		for (int d = 0; d < GF_MEMCAP_MAX_DEVICES; d++) {
			uint64_t b = atomic_exchange(&l->mine->used[d], 0);
			if (b)
				atomic_fetch_sub(&l->f->used[d], b);
		}
		atomic_store(&l->mine->pid, 0);
		unlock_file(l);
	}
	munmap(l->f, sizeof(*l->f));
	if (l->fd >= 0)
		close(l->fd);
	memset(l, 0, sizeof(*l));
	l->fd = -1;
}

static bool try_reserve(struct gf_memcap_ledger *l, int dev, uint64_t bytes, uint64_t cap)
{
	_Atomic uint64_t *u = &l->f->used[dev];
	uint64_t cur = atomic_load_explicit(u, memory_order_relaxed);
	do {
		if (bytes > cap || cur > cap - bytes)
			return false;
	} while (!atomic_compare_exchange_weak_explicit(u, &cur, cur + bytes, memory_order_acq_rel,
							memory_order_relaxed));
	atomic_fetch_add_explicit(&slot_of(l)->used[dev], bytes, memory_order_relaxed);
	return true;
}

bool gf_memcap_ledger_reserve(struct gf_memcap_ledger *l, int dev, uint64_t bytes, uint64_t cap)
{
	if (try_reserve(l, dev, bytes, cap))
		return true;
	/* Full: dead processes' charges may be what fills it. */
	return gf_memcap_ledger_reap(l) > 0 && try_reserve(l, dev, bytes, cap);
}

void gf_memcap_ledger_release(struct gf_memcap_ledger *l, int dev, uint64_t bytes)
{
	atomic_fetch_sub_explicit(&slot_of(l)->used[dev], bytes, memory_order_relaxed);
	atomic_fetch_sub_explicit(&l->f->used[dev], bytes, memory_order_acq_rel);
}

uint64_t gf_memcap_ledger_used(const struct gf_memcap_ledger *l, int dev)
{
	return atomic_load(&l->f->used[dev]);
}

int gf_memcap_ledger_reap(struct gf_memcap_ledger *l)
{
	if (l->fd < 0)
		return 0;
	lock_file(l);
	int n = reap_locked(l);
	unlock_file(l);
	return n;
}

void gf_memcap_ledger_after_fork(struct gf_memcap_ledger *l)
{
	if (!l->f)
		return;
	if (l->fd < 0) {
		/* Private (MAP_PRIVATE) ledger: the child's copy is its own. */
		return;
	}
	/* flock belongs to the open file description, which the child shares
	 * with its parent: a lock of its own needs a descriptor of its own. */
	int fd = open(l->path, O_RDWR | O_CLOEXEC);
	close(l->fd);
	l->fd = fd;
	if (fd < 0) {
		l->mine = NULL; /* counts go to the overflow slot */
		memset(&l->overflow, 0, sizeof(l->overflow));
		return;
	}
	lock_file(l);
	claim_locked(l);
	unlock_file(l);
}
