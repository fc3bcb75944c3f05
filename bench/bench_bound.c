/*
 * bench/bench_bound.c - how far from the best possible: FGD, FGD-Fill and an
 * offline upper bound on GPU allocation, for every bundled openb workload.
 *
 * For each workload and seed (42.., tune 1.3) it replays FGD and FGD-Fill
 * (alloc@130) and bounds the GPU share ANY placement of the same attempted
 * pods could allocate, with pods reordered or left out at will (so also any
 * online policy in the arrival order: placement there is one such choice).
 * The bound is a linear-programming relaxation solved by GLPK's glpsol (a
 * bench tool's dependency, not the product's: Debian glpk-utils).
 *
 * The model, per seed.  Node classes i: nodes with equal (CPU, memory, GPU
 * count, model), M_i of them.  Pod types j: attempted pods with equal (CPU,
 * memory, GPU count, per-GPU share, model constraint), N_j of them.  x_ij >= 0
 * pods of type j on class i (only where one such pod fits one such node and
 * the model is allowed).  GPUs are packed through patterns: a pattern is a
 * maximal multiset of the sharing shares (< 1000) that fits in one GPU;
 * z_mp >= 0 GPUs of model m packed as pattern p, w_m >= 0 GPUs of model m
 * given whole.
 *   maximise  sum_ij share_j * count_j * x_ij
 *   pods:     sum_i x_ij <= N_j
 *   CPU, memory, GPU share per class:  sum_j r_j x_ij <= M_i * capacity_i
 *   whole GPUs per class:  sum_{j whole} count_j x_ij <= M_i * gpus_i
 *   per model m:  sum_p z_mp + w_m <= GPUs of model m
 *                 sum_{j whole, i of m} count_j x_ij <= w_m
 *                 sum_{j sharing s, i of m} x_ij <= sum_p n_p(s) z_mp  (each share s)
 * What it ignores (each makes it looser, never wrong): integrality; CPU and
 * memory are pooled per node class (a real node can strand CPU); GPUs are
 * pooled per model (a pattern's GPU may sit on any node of the model);
 * multi-GPU pods need GPUs of one node only through the class filter and the
 * class's whole-GPU count; arrival order (pods may be dropped or reordered).
 *
 * Reproduce: build/bench/bench_bound [SEEDS]   (SEEDS: how many from 42; 10)
 * Needs glpsol on PATH (apt-get install glpk-utils); GLPSOL=path overrides.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/openb.h"
#include "sim/trace.h"

#define MAX_SHARES 128
#define MAX_PATTERNS 200000

struct pod_type {
	struct gf_pod_spec p;
	long n;
	long lo;	/* of them in the prefix that must be placed */
};

struct node_class {
	struct gf_node_spec s;
	long m;
};

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		fprintf(stderr, "bench_bound: cannot read %s\n", path);
		exit(2);
	}
	buf = malloc((size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "bench_bound: cannot read %s\n", path);
		exit(2);
	}
	fclose(f);
	buf[n] = '\0';
	*len = (size_t)n;
	return buf;
}

static bool same_type(const struct gf_pod_spec *a, const struct gf_pod_spec *b)
{
	return a->cpu_milli == b->cpu_milli && a->mem_mib == b->mem_mib &&
	       a->gpu_count == b->gpu_count && a->gpu_milli == b->gpu_milli && a->spec == b->spec;
}

/* Group pods[0..n) into types (linear search: a few hundred types); pods[0..prefix) count in lo. */
static struct pod_type *pod_types(const struct gf_pod_spec *pods, size_t n, size_t prefix, size_t *nt)
{
	struct pod_type *t = calloc(n, sizeof(*t));
	size_t k = 0;

	if (!t)
		exit(2);
	for (size_t i = 0; i < n; i++) {
		size_t j = 0;

		while (j < k && !same_type(&t[j].p, &pods[i]))
			j++;
		if (j == k)
			t[k++].p = pods[i];
		t[j].n++;
		t[j].lo += i < prefix;
	}
	*nt = k;
	return t;
}

static struct node_class *node_classes(const struct gf_node_spec *nodes, size_t n, size_t *nc)
{
	struct node_class *c = calloc(n, sizeof(*c));
	size_t k = 0;

	if (!c)
		exit(2);
	for (size_t i = 0; i < n; i++) {
		const struct gf_node_spec *s = &nodes[i];
		size_t j = 0;

		while (j < k && !(c[j].s.cpu_milli == s->cpu_milli && c[j].s.mem_mib == s->mem_mib &&
				  c[j].s.ngpus == s->ngpus && c[j].s.model == s->model))
			j++;
		if (j == k)
			c[k++].s = *s;
		c[j].m++;
	}
	*nc = k;
	return c;
}

/* Maximal multisets of shares[] (descending) with sum <= 1000: counts into pat[np][nsh]. */
struct patterns {
	int nsh;
	int shares[MAX_SHARES];
	int np;
	unsigned char *count;	/* np x nsh */
	bool overflow;
};

static void enumerate(struct patterns *ps, unsigned char *cur, int k, int room)
{
	if (ps->overflow)
		return;
	if (k == ps->nsh) {
		if (room >= ps->shares[ps->nsh - 1])
			return;	/* not maximal: the smallest share still fits */
		if (ps->np == MAX_PATTERNS) {
			ps->overflow = true;
			return;
		}
		memcpy(&ps->count[(size_t)ps->np * (size_t)ps->nsh], cur, (size_t)ps->nsh);
		ps->np++;
		return;
	}
	for (int c = room / ps->shares[k]; c >= 0; c--) {
		cur[k] = (unsigned char)c;
		enumerate(ps, cur, k + 1, room - c * ps->shares[k]);
	}
	cur[k] = 0;
}

static int cmp_desc(const void *a, const void *b)
{
	return *(const int *)b - *(const int *)a;
}

/* Writes one LP term, breaking lines now and then (LP readers limit line length). */
static void term(FILE *f, int *col, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void term(FILE *f, int *col, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	*col += vfprintf(f, fmt, ap);
	va_end(ap);
	if (*col > 200) {
		fputs("\n  ", f);
		*col = 0;
	}
}

static bool fits(const struct gf_catalog *cat, const struct node_class *c, const struct gf_pod_spec *p)
{
	if (p->cpu_milli > c->s.cpu_milli || p->mem_mib > c->s.mem_mib)
		return false;
	if (p->gpu_count == 0)
		return true;
	return p->gpu_count <= c->s.ngpus && gf_catalog_allows(cat, p->spec, c->s.model);
}

/* Writes the LP for these pods on these nodes; returns false if the patterns overflow. */
static bool write_lp(FILE *f, const struct gf_catalog *cat, const struct node_class *nc, size_t ncl,
		     const struct pod_type *pt, size_t npt, bool forced)
{
	struct patterns ps = { 0 };
	unsigned char cur[MAX_SHARES] = { 0 };
	int col = 0;

	for (size_t j = 0; j < npt; j++) {
		int s = pt[j].p.gpu_milli;
		bool seen = false;

		if (pt[j].p.gpu_count != 1 || s >= GF_MILLI_PER_GPU)
			continue;
		for (int k = 0; k < ps.nsh; k++)
			seen |= ps.shares[k] == s;
		if (!seen && ps.nsh < MAX_SHARES)
			ps.shares[ps.nsh++] = s;
	}
	qsort(ps.shares, (size_t)ps.nsh, sizeof(int), cmp_desc);
	if (ps.nsh) {
		ps.count = malloc((size_t)MAX_PATTERNS * (size_t)ps.nsh);
		if (!ps.count)
			exit(2);
		enumerate(&ps, cur, 0, GF_MILLI_PER_GPU);
		if (ps.overflow) {
			free(ps.count);
			return false;
		}
	}

	fputs("Maximize\n obj: ", f);
	for (size_t i = 0; i < ncl; i++)
		for (size_t j = 0; j < npt; j++)
			if (fits(cat, &nc[i], &pt[j].p) && pt[j].p.gpu_count)
				term(f, &col, " + %lld x%zu_%zu",
				     (long long)gf_pod_gpu_request(&pt[j].p), i, j);
	fputs("\nSubject To\n", f);
	for (size_t j = 0; j < npt; j++) {
		col = 0;
		fprintf(f, " pods%zu: 0 x_dummy", j);
		for (size_t i = 0; i < ncl; i++)
			if (fits(cat, &nc[i], &pt[j].p))
				term(f, &col, " + x%zu_%zu", i, j);
		fprintf(f, " <= %ld\n", pt[j].n);
		if (!forced || !pt[j].lo)
			continue;
		col = 0;
		fprintf(f, " placed%zu: 0 x_dummy", j);
		for (size_t i = 0; i < ncl; i++)
			if (fits(cat, &nc[i], &pt[j].p))
				term(f, &col, " + x%zu_%zu", i, j);
		fprintf(f, " >= %ld\n", pt[j].lo);
	}
	for (size_t i = 0; i < ncl; i++) {
		const char *what[4] = { "cpu", "mem", "gpu", "whole" };

		for (int r = 0; r < 4; r++) {
			double cap = r == 0 ? (double)nc[i].s.cpu_milli : r == 1 ? (double)nc[i].s.mem_mib
				   : r == 2 ? (double)nc[i].s.ngpus * GF_MILLI_PER_GPU : (double)nc[i].s.ngpus;

			col = 0;
			fprintf(f, " %s%zu: 0 x_dummy", what[r], i);
			for (size_t j = 0; j < npt; j++) {
				const struct gf_pod_spec *p = &pt[j].p;
				long long coef = r == 0 ? p->cpu_milli : r == 1 ? p->mem_mib
					       : r == 2 ? gf_pod_gpu_request(p)
					       : (p->gpu_milli == GF_MILLI_PER_GPU ? p->gpu_count : 0);

				if (coef && fits(cat, &nc[i], p))
					term(f, &col, " + %lld x%zu_%zu", coef, i, j);
			}
			fprintf(f, " <= %.0f\n", cap * (double)nc[i].m);
		}
	}
	for (int m = -1; m < GF_MAX_MODELS; m++) {
		long gpus = 0;

		for (size_t i = 0; i < ncl; i++)
			if (nc[i].s.model == m)
				gpus += nc[i].m * nc[i].s.ngpus;
		if (gpus == 0)
			continue;
		int mi = m + 1;

		col = 0;
		fprintf(f, " gpus_m%d: w%d", mi, mi);
		for (int p = 0; p < ps.np; p++)
			term(f, &col, " + z%d_%d", mi, p);
		fprintf(f, " <= %ld\n", gpus);
		col = 0;
		fprintf(f, " wholem%d: - w%d", mi, mi);
		for (size_t i = 0; i < ncl; i++)
			for (size_t j = 0; j < npt; j++)
				if (nc[i].s.model == m && pt[j].p.gpu_milli == GF_MILLI_PER_GPU &&
				    fits(cat, &nc[i], &pt[j].p))
					term(f, &col, " + %d x%zu_%zu", pt[j].p.gpu_count, i, j);
		fputs(" <= 0\n", f);
		for (int s = 0; s < ps.nsh; s++) {
			col = 0;
			fprintf(f, " share_m%d_%d: 0 x_dummy", mi, ps.shares[s]);
			for (size_t i = 0; i < ncl; i++)
				for (size_t j = 0; j < npt; j++)
					if (nc[i].s.model == m && pt[j].p.gpu_count == 1 &&
					    pt[j].p.gpu_milli == ps.shares[s] && fits(cat, &nc[i], &pt[j].p))
						term(f, &col, " + x%zu_%zu", i, j);
			for (int p = 0; p < ps.np; p++) {
				int c = ps.count[(size_t)p * (size_t)ps.nsh + (size_t)s];

				if (c)
					term(f, &col, " - %d z%d_%d", c, mi, p);
			}
			fputs(" <= 0\n", f);
		}
	}
	fputs("Bounds\n x_dummy = 0\nEnd\n", f);
	free(ps.count);
	return true;
}

/* Solve the LP in path with glpsol; returns the objective, NAN on failure. */
static double solve(const char *path)
{
	const char *glpsol = getenv("GLPSOL") ? getenv("GLPSOL") : "glpsol";
	char cmd[1024], out[600], line[512];
	double obj = NAN;

	snprintf(out, sizeof(out), "%s.out", path);
	snprintf(cmd, sizeof(cmd), "%s --lp '%s' --tmlim 300 -o '%s' >/dev/null 2>&1", glpsol, path, out);
	if (system(cmd) != 0)
		return NAN;
	FILE *f = fopen(out, "r");

	if (!f)
		return NAN;
	while (fgets(line, sizeof(line), f)) {
		const char *s = strstr(line, "obj = ");

		if (!strncmp(line, "Status:", 7) && !strstr(line, "OPTIMAL"))
			break;
		if (!strncmp(line, "Objective:", 10) && s) {
			obj = strtod(s + 6, NULL);
			break;
		}
	}
	fclose(f);
	remove(out);
	return obj;
}

int main(int argc, char **argv)
{
	static const char *workloads[] = { "default", "cpu050", "gpushare20", "gpushare40",
					   "gpushare80", "multigpu20", "gpuspec10" };
	char *end = NULL;
	long nseeds = argc > 1 ? strtol(argv[1], &end, 10) : 10;
	char lp[] = "/tmp/gf-bound-XXXXXX";
	int fd;

	if (argc > 2 || (end && *end) || nseeds < 1 || nseeds > 1000) {
		fprintf(stderr, "usage: bench_bound [SEEDS]   (1..1000 seeds from 42; default 10)\n");
		return 2;
	}
	fd = mkstemp(lp);
	if (fd < 0) {
		fprintf(stderr, "bench_bound: cannot create a temporary file\n");
		return 2;
	}
	close(fd);
	printf("GPU allocation, %% of capacity, tune 1.3, mean over seeds 42-%d: FGD and FGD-Fill at 130%%\n"
	       "arrived, and two LP upper bounds (bench_bound.c):\n"
	       "  any:    any subset of the same attempted pods, in any order (any policy)\n"
	       "  prefix: the same, but every pod attempted before the first failure of FGD or of\n"
	       "          FGD-Fill (whichever comes first) is placed: a bound for every policy that\n"
	       "          places those pods, as FGD and FGD-Fill do\n\n",
	       41 + (int)nseeds);
	printf("%-12s %8s %9s %7s %8s %8s %8s  %s\n", "workload", "FGD", "FGD-Fill", "diff", "any",
	       "prefix", "gap", "diff per seed   prefix (arrived %)");
	for (size_t w = 0; w < sizeof(workloads) / sizeof(workloads[0]); w++) {
		struct gf_catalog cat;
		struct gf_trace_error terr;
		struct gf_node_spec *nodes;
		struct gf_pod_spec *pods;
		size_t nn, np, len;
		gf_openb *x;
		char path[512];
		char *data;
		double sf = 0, sn = 0, sb = 0, sp = 0, sarr = 0, dmin = INFINITY, dmax = -INFINITY;

		gf_catalog_init(&cat);
		data = slurp(GF_SOURCE_DIR "/data/openb/openb_node_list_gpu_node.csv", &len);
		if (gf_trace_parse_nodes(data, len, "nodes", &cat, &nodes, &nn, &terr)) {
			fprintf(stderr, "bench_bound: %s\n", terr.msg);
			return 2;
		}
		free(data);
		snprintf(path, sizeof(path), "%s/data/openb/openb_pod_list_%s.csv", GF_SOURCE_DIR,
			 workloads[w]);
		data = slurp(path, &len);
		if (gf_trace_parse_pods(data, len, "pods", &cat, &pods, &np, &terr)) {
			fprintf(stderr, "bench_bound: %s\n", terr.msg);
			return 2;
		}
		free(data);
		if (gf_openb_create(nodes, nn, pods, np, &cat, &x))
			return 2;
		size_t ncl;
		struct node_class *nc = node_classes(nodes, nn, &ncl);

		for (int k = 0; k < nseeds; k++) {
			struct gf_openb_config cfg = gf_openb_config_default();
			struct gf_openb_result rf, rn;
			struct gf_pod_spec *att;
			size_t natt, npt;

			cfg.seed = 42 + (uint64_t)k;
			if (gf_openb_run(x, &gf_policy_fgd, &cfg, &rf) ||
			    gf_openb_run(x, &gf_policy_fgd_fill, &cfg, &rn) ||
			    gf_openb_attempts(x, &cfg, &att, &natt))
				return 2;
			size_t prefix = natt;
			double cap = (double)gf_openb_ngpus(x) * GF_MILLI_PER_GPU, arrived = 0;

			if (rf.first_failed >= 0 && (size_t)rf.first_failed < prefix)
				prefix = (size_t)rf.first_failed;
			if (rn.first_failed >= 0 && (size_t)rn.first_failed < prefix)
				prefix = (size_t)rn.first_failed;
			for (size_t i = 0; i < prefix; i++)
				arrived += (double)gf_pod_gpu_request(&att[i]);
			struct pod_type *pt = pod_types(att, natt, prefix, &npt);
			double obj[2];

			for (int forced = 0; forced < 2; forced++) {
				FILE *f = fopen(lp, "w");

				if (!f || !write_lp(f, &cat, nc, ncl, pt, npt, forced)) {
					fprintf(stderr, "bench_bound: cannot write the model (%s)\n",
						f ? "too many patterns" : lp);
					return 2;
				}
				fclose(f);
				obj[forced] = solve(lp);
				if (isnan(obj[forced])) {
					fprintf(stderr, "bench_bound: glpsol failed on %s seed %d "
						"(is glpk-utils installed?)\n", workloads[w], 42 + k);
					return 2;
				}
			}
			double d = rn.alloc[130] - rf.alloc[130];

			sf += rf.alloc[130];
			sn += rn.alloc[130];
			sb += 100.0 * obj[0] / cap;
			sp += 100.0 * obj[1] / cap;
			sarr += 100.0 * arrived / cap;
			dmin = fmin(dmin, d);
			dmax = fmax(dmax, d);
			gf_openb_result_release(&rf);
			gf_openb_result_release(&rn);
			free(pt);
			free(att);
		}
		sf /= nseeds;
		sn /= nseeds;
		sb /= nseeds;
		sp /= nseeds;
		sarr /= nseeds;
		printf("%-12s %8.2f %9.2f %+7.2f %8.2f %8.2f %8.2f  %+.2f..%+.2f  %.2f\n", workloads[w], sf,
		       sn, sn - sf, sb, sp, sp - sn, dmin, dmax, sarr);
		fflush(stdout);
		free(nc);
		gf_openb_destroy(x);
		free(nodes);
		free(pods);
		gf_catalog_release(&cat);
	}
	remove(lp);
	return 0;
}
