/* tests/testutil.h - small builders shared by the engine's unit tests (include after cmocka.h). */
#ifndef GF_TESTS_TESTUTIL_H
#define GF_TESTS_TESTUTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/model.h"

static inline struct gf_node_spec tu_node(const char *name, int64_t cpu, int64_t mem, int ngpus, int model)
{
	struct gf_node_spec s;

	memset(&s, 0, sizeof(s));
	snprintf(s.name, sizeof(s.name), "%s", name);
	s.cpu_milli = cpu;
	s.mem_mib = mem;
	s.ngpus = ngpus;
	s.model = model;
	for (int g = 0; g < GF_MAX_GPUS; g++)
		s.topo[g] = (struct gf_gpu_topo){ -1, -1 };
	return s;
}

static inline struct gf_pod_spec tu_pod(const char *name, int64_t cpu, int64_t mem, int count, int milli, int spec)
{
	struct gf_pod_spec p;

	memset(&p, 0, sizeof(p));
	snprintf(p.name, sizeof(p.name), "%s", name);
	p.cpu_milli = cpu;
	p.mem_mib = mem;
	p.gpu_count = count;
	p.gpu_milli = count ? milli : 0;
	p.spec = count ? spec : 0;
	p.duration = -1;
	return p;
}

/* A whole file, NUL-terminated (caller frees); fails the test if unreadable. */
static inline char *tu_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n >= 0);
	assert_int_equal(fseek(f, 0, SEEK_SET), 0);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	buf[n] = '\0';
	*len = (size_t)n;
	return buf;
}

#endif
