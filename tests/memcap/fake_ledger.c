/*
 * tests/memcap/fake_ledger.c - the FAKE driver's shared usage file (see
 * fake_cuda.h).  Mapped once per process; both fakes compile it in.
 */
#define _DEFAULT_SOURCE 1
#include "fake_cuda.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

static struct fake_cuda_ledger *ledger;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void map_it(void)
{
	const char *path = getenv("FAKE_CUDA_LEDGER");
	void *m = MAP_FAILED;
	if (path && *path) {
		int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (fd >= 0 && ftruncate(fd, sizeof(struct fake_cuda_ledger)) == 0)
			m = mmap(NULL, sizeof(struct fake_cuda_ledger), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (fd >= 0)
			close(fd);
	}
	if (m == MAP_FAILED)
		m = mmap(NULL, sizeof(struct fake_cuda_ledger), PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		abort();
	ledger = m;
}

struct fake_cuda_ledger *fake_cuda_ledger(void)
{
	pthread_once(&once, map_it);
	return ledger;
}

uint64_t fake_cuda_total(void)
{
	const char *t = getenv("FAKE_CUDA_TOTAL");
	if (t && *t) {
		char *end;
		unsigned long long v = strtoull(t, &end, 10);
		if (*end == '\0' && v)
			return v;
	}
	return UINT64_C(80) << 30;
}
