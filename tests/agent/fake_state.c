/*
 * tests/agent/fake_state.c - parser of the FAKE NVML's state file (format
 * in fake_state.h).  Line-oriented, one pass, no allocation: the state is
 * a fixed-size struct, every list has a cap and exceeding it is an error
 * naming the line.  Also compiled into fuzz/fuzz_fake_nvml_state.c.
 */
#include "fake_state.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TOK 64

struct ctx {
	const char *name;
	size_t line;
	char *err;
	size_t errlen;
};

static int fail(struct ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct ctx *c, const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(c->err, c->errlen, "%s:%zu: %s", c->name, c->line, msg);
	return -1;
}

/* Split line (modified in place) into tokens; "..." groups blanks (no escapes),
 * and key="a b" keeps the key: the quotes are removed. */
static int tokenize(struct ctx *c, char *s, char **tok, int *ntok)
{
	int n = 0;
	while (*s) {
		while (*s == ' ' || *s == '\t' || *s == '\r')
			s++;
		if (!*s || *s == '#')
			break;
		if (n == MAX_TOK)
			return fail(c, "more than %d tokens", MAX_TOK);
		tok[n++] = s;
		char *w = s;
		bool q = false;
		while (*s && (q || (*s != ' ' && *s != '\t' && *s != '\r'))) {
			if (*s == '"')
				q = !q;
			else
				*w++ = *s;
			s++;
		}
		if (q)
			return fail(c, "unterminated quote");
		if (*s)
			s++;
		*w = '\0';
	}
	*ntok = n;
	return 0;
}

static int num(struct ctx *c, const char *what, const char *s, long long lo, long long hi,
	       long long *out)
{
	char *end;
	*out = 0;	/* set on every path: the optimizer cannot see that fail() is never 0 */
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return fail(c, "%s: expected an integer in %lld..%lld, got '%s'", what, lo, hi, s);
	*out = v;
	return 0;
}

static int gpu_ref(struct ctx *c, struct fake_state *st, const char *s, unsigned *out)
{
	long long v;
	*out = 0;
	if (num(c, "GPU index", s, 0, FAKE_MAX_GPUS - 1, &v))
		return -1;
	if ((unsigned)v >= st->ngpus || !st->gpus[v].defined)
		return fail(c, "GPU %lld is not defined (define it with 'gpu %lld ...' first)", v, v);
	*out = (unsigned)v;
	return 0;
}

static int copy(struct ctx *c, const char *key, char *dst, size_t n, const char *v)
{
	size_t l = strlen(v);
	if (l >= n)
		return fail(c, "%s: longer than %zu characters", key, n - 1);
	memcpy(dst, v, l + 1);
	return 0;
}

static const char *const key_names[FK_COUNT] = {
#define FAKE_KEY_NAME_(k) #k,
	FAKE_NUM_KEYS(FAKE_KEY_NAME_)
#undef FAKE_KEY_NAME_
};

static int d_gpu(struct ctx *c, struct fake_state *st, char **tok, int n)
{
	long long idx;
	if (n < 2)
		return fail(c, "gpu: expected 'gpu INDEX key=value...'");
	if (num(c, "gpu index", tok[1], 0, FAKE_MAX_GPUS - 1, &idx))
		return -1;
	if ((unsigned)idx != st->ngpus)
		return fail(c, "gpu: index %lld out of order (next is %u)", idx, st->ngpus);
	struct fake_gpu *g = &st->gpus[st->ngpus];
	memset(g, 0, sizeof(*g));
	g->defined = true;
	snprintf(g->uuid, sizeof(g->uuid), "GPU-00000000-0000-0000-0000-%012lld", idx);
	snprintf(g->name, sizeof(g->name), "Fake GPU");
	snprintf(g->bus, sizeof(g->bus), "00000000:%02llX:00.0", idx + 1);
	for (int i = 2; i < n; i++) {
		char *eq = strchr(tok[i], '=');
		if (!eq)
			return fail(c, "gpu: expected key=value, got '%s'", tok[i]);
		*eq = '\0';
		const char *k = tok[i], *v = eq + 1;
		if (!strcmp(k, "uuid")) {
			if (copy(c, k, g->uuid, sizeof(g->uuid), v))
				return -1;
			continue;
		}
		if (!strcmp(k, "name")) {
			if (copy(c, k, g->name, sizeof(g->name), v))
				return -1;
			continue;
		}
		if (!strcmp(k, "bus")) {
			if (copy(c, k, g->bus, sizeof(g->bus), v))
				return -1;
			continue;
		}
		int f;
		for (f = 0; f < FK_COUNT; f++)
			if (!strcmp(k, key_names[f]))
				break;
		if (f == FK_COUNT)
			return fail(c, "gpu: unknown key '%s'", k);
		if (num(c, k, v, -1000000, (long long)1 << 52, &g->v[f]))
			return -1;
		g->set |= 1ULL << f;
	}
	st->ngpus++;
	return 0;
}

static int kv(struct ctx *c, const char *dir, char *t, const char *want, const char **val)
{
	char *eq = strchr(t, '=');
	*val = "";
	if (!eq || (size_t)(eq - t) != strlen(want) || strncmp(t, want, strlen(want)))
		return fail(c, "%s: expected %s=..., got '%s'", dir, want, t);
	*val = eq + 1;
	return 0;
}

static int d_proc(struct ctx *c, struct fake_state *st, char **tok, int n)
{
	unsigned g;
	const char *p, *m;
	const char *gs;
	long long pid, mem, gi = -1;
	if (n != 4 && n != 5)
		return fail(c, "proc: expected 'proc GPU pid=PID mem_mib=N [gi=ID]'");
	if (gpu_ref(c, st, tok[1], &g) || kv(c, "proc", tok[2], "pid", &p) ||
	    kv(c, "proc", tok[3], "mem_mib", &m) || num(c, "pid", p, 1, 4194304, &pid) ||
	    num(c, "mem_mib", m, 0, 1 << 24, &mem))
		return -1;
	if (n == 5 && (kv(c, "proc", tok[4], "gi", &gs) || num(c, "gi", gs, 0, 1000, &gi)))
		return -1;
	struct fake_gpu *gp = &st->gpus[g];
	if (gp->nprocs == FAKE_MAX_PROCS)
		return fail(c, "proc: more than %d processes on GPU %u", FAKE_MAX_PROCS, g);
	gp->procs[gp->nprocs].pid = (unsigned)pid;
	gp->procs[gp->nprocs].mem_mib = (unsigned long long)mem;
	gp->procs[gp->nprocs].gi = gi;
	gp->nprocs++;
	return 0;
}

static int d_nvlink(struct ctx *c, struct fake_state *st, char **tok, int n)
{
	unsigned a, b;
	const char *v;
	long long links;
	if (n != 4)
		return fail(c, "nvlink: expected 'nvlink GPU_A GPU_B links=N'");
	if (gpu_ref(c, st, tok[1], &a) || gpu_ref(c, st, tok[2], &b) ||
	    kv(c, "nvlink", tok[3], "links", &v) || num(c, "links", v, 0, 18, &links))
		return -1;
	if (a == b)
		return fail(c, "nvlink: a GPU cannot link to itself");
	st->gpus[a].nvlinks[b] = st->gpus[b].nvlinks[a] = (unsigned)links;
	return 0;
}

static int d_topo(struct ctx *c, struct fake_state *st, char **tok, int n)
{
	unsigned a, b;
	long long lv;
	if (n != 4)
		return fail(c, "topo: expected 'topo GPU_A GPU_B LEVEL'");
	if (gpu_ref(c, st, tok[1], &a) || gpu_ref(c, st, tok[2], &b) ||
	    num(c, "level", tok[3], 0, 50, &lv))
		return -1;
	if (lv % 10)
		return fail(c, "topo: level must be 0, 10, 20, 30, 40 or 50, got %lld", lv);
	st->gpus[a].topo[b] = st->gpus[b].topo[a] = (int)lv;
	return 0;
}

static int d_xid(struct ctx *c, struct fake_state *st, char **tok, int n)
{
	unsigned g;
	long long code;
	if (n != 3)
		return fail(c, "xid: expected 'xid GPU CODE'");
	if (gpu_ref(c, st, tok[1], &g) || num(c, "xid code", tok[2], 1, 100000, &code))
		return -1;
	if (st->nxid == FAKE_MAX_XID)
		return fail(c, "xid: more than %d events", FAKE_MAX_XID);
	st->xid_gpu[st->nxid] = g;
	st->xid_code[st->nxid++] = (unsigned long long)code;
	return 0;
}

static int d_mig(struct ctx *c, struct fake_state *st, char **tok, int n)
{
	unsigned g;
	const char *gi, *uuid, *prof, *mem;
	long long giv, memv;
	if (n != 6)
		return fail(c, "mig: expected 'mig GPU gi=ID uuid=MIG-... profile=P mem_mib=N'");
	if (gpu_ref(c, st, tok[1], &g) || kv(c, "mig", tok[2], "gi", &gi) ||
	    kv(c, "mig", tok[3], "uuid", &uuid) || kv(c, "mig", tok[4], "profile", &prof) ||
	    kv(c, "mig", tok[5], "mem_mib", &mem) || num(c, "gi", gi, 0, 1000, &giv) ||
	    num(c, "mem_mib", mem, 0, 1 << 24, &memv))
		return -1;
	struct fake_gpu *gp = &st->gpus[g];
	if (gp->nmig == FAKE_MAX_MIG)
		return fail(c, "mig: more than %d instances on GPU %u", FAKE_MAX_MIG, g);
	struct fake_mig *m = &gp->mig[gp->nmig];
	if (copy(c, "uuid", m->uuid, sizeof(m->uuid), uuid) ||
	    copy(c, "profile", m->profile, sizeof(m->profile), prof))
		return -1;
	m->gi = (unsigned)giv;
	m->mem_mib = (unsigned long long)memv;
	gp->nmig++;
	return 0;
}

int fake_state_parse(const char *text, size_t len, const char *name, struct fake_state *st,
		     char *err, size_t errlen)
{
	struct ctx c = { name, 0, err, errlen };
	memset(st, 0, sizeof(*st));
	snprintf(st->driver, sizeof(st->driver), "999.99.99-fake");
	size_t i = 0;
	char line[FAKE_MAX_LINE];
	while (i < len) {
		size_t j = i;
		while (j < len && text[j] != '\n')
			j++;
		c.line++;
		if (j - i >= sizeof(line))
			return fail(&c, "line longer than %d bytes", FAKE_MAX_LINE - 1);
		if (memchr(text + i, '\0', j - i))
			return fail(&c, "NUL byte in line");
		memcpy(line, text + i, j - i);
		line[j - i] = '\0';
		i = j + 1;
		char *tok[MAX_TOK];
		int n = 0;
		if (tokenize(&c, line, tok, &n))
			return -1;
		if (!n)
			continue;
		int r;
		if (!strcmp(tok[0], "driver")) {
			r = n == 2 ? copy(&c, "driver", st->driver, sizeof(st->driver), tok[1])
				   : fail(&c, "driver: expected 'driver VERSION'");
		} else if (!strcmp(tok[0], "init_error")) {
			long long v;
			r = n == 2 ? num(&c, "init_error", tok[1], 0, 999, &v)
				   : fail(&c, "init_error: expected 'init_error CODE'");
			if (!r)
				st->init_error = (int)v;
		} else if (!strcmp(tok[0], "gpu")) {
			r = d_gpu(&c, st, tok, n);
		} else if (!strcmp(tok[0], "proc")) {
			r = d_proc(&c, st, tok, n);
		} else if (!strcmp(tok[0], "nvlink")) {
			r = d_nvlink(&c, st, tok, n);
		} else if (!strcmp(tok[0], "topo")) {
			r = d_topo(&c, st, tok, n);
		} else if (!strcmp(tok[0], "xid")) {
			r = d_xid(&c, st, tok, n);
		} else if (!strcmp(tok[0], "mig")) {
			r = d_mig(&c, st, tok, n);
		} else {
			r = fail(&c, "unknown directive '%s' (expected driver, init_error, gpu, proc, "
				     "nvlink, topo, xid or mig)", tok[0]);
		}
		if (r)
			return -1;
	}
	return 0;
}
