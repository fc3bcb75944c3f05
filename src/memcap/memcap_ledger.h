/*
 * memcap/memcap_ledger.h - per-container GPU-memory accounting shared by
 * every process of the container through one memory-mapped file.
 *
 * Layout (fixed size, native endianness; all processes of a container run on
 * the same machine): a header, one atomic byte counter per device ordinal, and
 * GF_MEMCAP_LEDGER_SLOTS process slots, each with the owning pid and that
 * process's own per-device bytes.  The hot path (reserve/release) is
 * lock-free: a compare-and-swap on the device counter, then an add on the
 * process's slot.  Slot claims and the reaping of dead processes' charges
 * take an exclusive flock(2) on the file.
 *
 * Ownership: a gf_memcap_ledger is an embeddable struct; _open fills it,
 * _close unmaps it.  Thread-safe after _open.
 */
#ifndef GF_MEMCAP_LEDGER_H
#define GF_MEMCAP_LEDGER_H

#include "memcap/memcap_config.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define GF_MEMCAP_LEDGER_SLOTS 256
#define GF_MEMCAP_LEDGER_MAGIC 0x67666d63u /* "gfmc" */
#define GF_MEMCAP_LEDGER_VERSION 1u

struct gf_memcap_slot {
	_Atomic int32_t pid; /* 0 = free */
	uint32_t pad;
	_Atomic uint64_t used[GF_MEMCAP_MAX_DEVICES];
};

struct gf_memcap_ledger_file {
	uint32_t magic, version, max_devices, slots;
	_Atomic uint64_t used[GF_MEMCAP_MAX_DEVICES];
	struct gf_memcap_slot slot[GF_MEMCAP_LEDGER_SLOTS];
};

struct gf_memcap_ledger {
	struct gf_memcap_ledger_file *f; /* the mapping */
	int fd;                          /* -1 for a process-private ledger */
	struct gf_memcap_slot *mine;     /* NULL when every slot was taken */
	struct gf_memcap_slot overflow;  /* used then: counts, cannot be reaped */
	char path[4096];                 /* to reopen after fork ("" = private) */
};

/* Maps `path` (created 0666 if missing, initialised under the lock), reaps
 * the slots of dead processes and claims one for this process.  path NULL:
 * a process-private anonymous ledger.  Returns 0, or -1 with "what: why" in
 * err (path unusable, or a file of another layout). */
int gf_memcap_ledger_open(struct gf_memcap_ledger *l, const char *path, char *err, size_t err_len);
void gf_memcap_ledger_close(struct gf_memcap_ledger *l);

/* Charges `bytes` to device `dev` if the device total stays <= cap.  False
 * (nothing charged) otherwise. */
bool gf_memcap_ledger_reserve(struct gf_memcap_ledger *l, int dev, uint64_t bytes, uint64_t cap);
/* Credits `bytes` back (what a matching reserve charged). */
void gf_memcap_ledger_release(struct gf_memcap_ledger *l, int dev, uint64_t bytes);
/* Bytes charged on `dev` by every process of the container. */
uint64_t gf_memcap_ledger_used(const struct gf_memcap_ledger *l, int dev);
/* Credits back the charges of processes that no longer exist (kill(pid, 0)
 * says ESRCH); returns how many slots it freed.  Takes the file lock. */
int gf_memcap_ledger_reap(struct gf_memcap_ledger *l);
/* After fork(): the child gets a slot of its own (its parent's stays the
 * parent's). */
void gf_memcap_ledger_after_fork(struct gf_memcap_ledger *l);

#endif
