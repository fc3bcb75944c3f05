/*
 * memcap/memcap_ledger.h - per-container GPU-memory accounting shared by
 * every process of the container through one memory-mapped file.
 *
 * Layout (fixed size, native endianness; all processes of a container run on
 * the same machine): a header and GF_MEMCAP_LEDGER_SLOTS process slots, each
 * with a state word, the owner's pid (informational only) and that
 * process's own per-device bytes.  There is no shared total: a device's
 * usage is the sum of the claimed slots' counts.
 *
 * Liveness is an open-file-description lock (fcntl F_OFD_SETLK) on one byte
 * per slot, held by the process that claimed it: the kernel drops it when
 * the process dies, whatever its PID namespace.  A claimed slot whose lock
 * can be taken belongs to no live process; its charges are dropped (reaped)
 * and the slot is reused.  A charge is lock-free (add to its own slot, then
 * sum); a byte lock of its own serialises claims, reaps and the retry of a
 * refused charge between processes (a mutex between the threads of one).
 *
 * Opening is done relative to the folder's descriptor, never following a
 * symbolic link; the folder and the file must belong to root or to this
 * process's effective user, the folder must not be writable by others
 * unless sticky, the file must be a regular file with one link.
 *
 * Ownership: a gf_memcap_ledger is an embeddable struct; _open fills it,
 * _close unmaps it.  Thread-safe after _open.
 */
#ifndef GF_MEMCAP_LEDGER_H
#define GF_MEMCAP_LEDGER_H

#include "memcap/memcap_config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define GF_MEMCAP_LEDGER_SLOTS 256
#define GF_MEMCAP_LEDGER_MAGIC 0x67666d63u /* "gfmc" */
#define GF_MEMCAP_LEDGER_VERSION 3u

struct gf_memcap_slot {
	_Atomic uint32_t state; /* 0 = free, 1 = claimed (alive while its lock is held) */
	int32_t pid;            /* the claimer's pid in its own namespace: diagnostics only */
	_Atomic uint64_t used[GF_MEMCAP_MAX_DEVICES];
};

struct gf_memcap_ledger_file {
	uint32_t magic, version, max_devices, slots;
	_Atomic uint32_t hwm; /* slots below it may be claimed (never lowered by a claim) */
	uint32_t pad;
	struct gf_memcap_slot slot[GF_MEMCAP_LEDGER_SLOTS];
};

struct gf_memcap_ledger {
	struct gf_memcap_ledger_file *f; /* the mapping */
	int fd;                          /* this process's open file description */
	int dirfd;                       /* the folder, to reopen after fork */
	dev_t dev;                       /* the file, to check a reopen */
	ino_t ino;
	struct gf_memcap_slot *mine; /* NULL when every slot was taken: nothing is granted */
	int mine_idx;
	pthread_mutex_t mu; /* the threads of this process (OFD locks do not) */
	char name[256];     /* the file's name in the folder */
};

/* Opens `path` (the folder's descriptor first, then the file relative to it
 * with O_NOFOLLOW; created 0666 if missing), checks owner, type and mode,
 * initialises it when it is new or holds no live slot and another layout,
 * and claims a slot for this process (one held by a dead process is
 * reused).  Returns 0, or -1 with "what: why" in err; the caller must then
 * refuse what it would have charged (fail closed). */
int gf_memcap_ledger_open(struct gf_memcap_ledger *l, const char *path, char *err, size_t err_len);
/* Credits this process's charges back, frees its slot, unmaps. */
void gf_memcap_ledger_close(struct gf_memcap_ledger *l);
/* At a normal exit: credits this process's charges back (the slot itself is
 * free once the process is gone).  Later charges by other threads are
 * reaped after the process has ended. */
void gf_memcap_ledger_exit(struct gf_memcap_ledger *l);

/* Charges `bytes` to device `dev` if the device total stays <= cap (dead
 * processes' charges are reaped first when it would not).  False (nothing
 * charged) otherwise, and always when this process holds no slot. */
bool gf_memcap_ledger_reserve(struct gf_memcap_ledger *l, int dev, uint64_t bytes, uint64_t cap);
/* Credits `bytes` back (what a matching reserve charged; never below 0). */
void gf_memcap_ledger_release(struct gf_memcap_ledger *l, int dev, uint64_t bytes);
/* Bytes charged on `dev` by the claimed slots (saturating; a dead process's
 * charges count until they are reaped). */
uint64_t gf_memcap_ledger_used(const struct gf_memcap_ledger *l, int dev);
/* Drops the charges of slots no live process holds; returns how many slots
 * it freed. */
int gf_memcap_ledger_reap(struct gf_memcap_ledger *l);
/* After fork(): the child gets a descriptor and a slot of its own (its
 * parent's stay the parent's). */
void gf_memcap_ledger_after_fork(struct gf_memcap_ledger *l);

#endif
