/*
 * bench/bench_scale.c - the cost of one placement decision as the cluster grows.
 *
 * For each K given: openb's cluster (data/openb, 1,213 nodes) and its default
 * pod list both replicated K times (replica r of a node or pod is a copy
 * named "<name>~r"), then one FGD replay of the openb experiment (tune 1.3,
 * seed 42, gf_openb_run); prints one line per K:
 *
 *   k=K nodes=N pods=P us_per_decision=X peak_mib=M
 *
 * P is the pods the replay attempted (after tuning), X the replay's CPU time
 * divided by P (the whole replay: decisions, binds and the loop around them),
 * best of REPS runs, and M the process's peak resident memory so far (K runs
 * in the order given, so list them ascending to read each K's own peak).
 *
 * Options (before the K values):
 *   --feature NAME=on|off  switch an engine feature, e.g. NODE_CLASSES=off for
 *                          the per-node loop (the cost before node classes)
 *   --distinct             make every node's state its own: node i gets
 *                          i milli-CPU more capacity, so no two nodes ever
 *                          share a class (the worst case for node classes)
 *   --reps N               best of N runs per K [1]
 *
 * Reproduce: make bench, or cmake --build build --target bench_scale &&
 * build/bench/bench_scale 1 2 4 8 16
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "bench_util.h"
#include "sim/openb.h"

static double peak_mib(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_maxrss / 1024.0;	/* Linux: KiB */
}

/* name becomes "<name>~r", cut to fit (a cut name only weakens the sort's order). */
static void rename_copy(char *name, int r)
{
	char suffix[16];
	int n = snprintf(suffix, sizeof(suffix), "~%d", r);
	size_t len = strnlen(name, GF_NAME_MAX - 1);

	if (len + (size_t)n > GF_NAME_MAX - 1)
		len = GF_NAME_MAX - 1 - (size_t)n;
	memcpy(name + len, suffix, (size_t)n + 1);
}

int main(int argc, char **argv)
{
	struct gf_openb_config cfg = gf_openb_config_default();
	struct bench_trace d;
	bool distinct = false;
	int reps = 1, a = 1;

	for (; a < argc && argv[a][0] == '-'; a++) {
		if (!strcmp(argv[a], "--distinct"))
			distinct = true;
		else if (!strcmp(argv[a], "--reps") && a + 1 < argc)
			reps = (int)strtol(argv[++a], NULL, 10);
		else if (!strcmp(argv[a], "--feature") && a + 1 < argc) {
			char name[64];
			const char *eq = strchr(argv[++a], '=');
			enum gf_feature f;

			if (!eq || (size_t)(eq - argv[a]) >= sizeof(name)) {
				fprintf(stderr, "bench: --feature NAME=on|off\n");
				return 2;
			}
			memcpy(name, argv[a], (size_t)(eq - argv[a]));
			name[eq - argv[a]] = '\0';
			if (!gf_feature_lookup(name, &f) || (strcmp(eq + 1, "on") && strcmp(eq + 1, "off"))) {
				fprintf(stderr, "bench: --feature %s: unknown\n", argv[a]);
				return 2;
			}
			cfg.features.on[f] = !strcmp(eq + 1, "on");
		} else {
			fprintf(stderr, "usage: bench_scale [--feature NAME=on|off] [--distinct] [--reps N] K...\n");
			return 2;
		}
	}
	if (reps < 1)
		reps = 1;
	bench_trace_load("openb_pod_list_default.csv", false, &d);
	for (; a < argc; a++) {
		int k = (int)strtol(argv[a], NULL, 10);
		size_t nn = d.nnodes * (size_t)k, np = d.npods * (size_t)k;
		struct gf_node_spec *nodes;
		struct gf_pod_spec *pods;
		gf_openb *x;
		double best = 1e30;
		int64_t attempts = 0;

		if (k < 1 || k > 1024) {
			fprintf(stderr, "bench: K must be 1..1024, got %s\n", argv[a]);
			return 2;
		}
		nodes = malloc(nn * sizeof(*nodes));
		pods = malloc(np * sizeof(*pods));
		if (!nodes || !pods)
			return 2;
		for (int r = 0; r < k; r++) {
			for (size_t i = 0; i < d.nnodes; i++) {
				struct gf_node_spec *ns = &nodes[(size_t)r * d.nnodes + i];

				*ns = d.nodes[i];
				rename_copy(ns->name, r);
				if (distinct)
					ns->cpu_milli += (int64_t)((size_t)r * d.nnodes + i);
			}
			for (size_t i = 0; i < d.npods; i++) {
				pods[(size_t)r * d.npods + i] = d.pods[i];
				rename_copy(pods[(size_t)r * d.npods + i].name, r);
			}
		}
		if (gf_openb_create(nodes, nn, pods, np, &d.cat, &x))
			return 2;
		for (int rep = 0; rep < reps; rep++) {
			struct gf_openb_result res;
			double t0 = bench_cpu_seconds();

			if (gf_openb_run(x, &gf_policy_fgd, &cfg, &res)) {
				fprintf(stderr, "bench: run failed\n");
				return 2;
			}
			double t = bench_cpu_seconds() - t0;

			if (t < best)
				best = t;
			attempts = res.attempts;
			gf_openb_result_release(&res);
		}
		printf("k=%d nodes=%zu pods=%lld us_per_decision=%.1f peak_mib=%.0f\n", k, nn,
		       (long long)attempts, best * 1e6 / (double)attempts, peak_mib());
		fflush(stdout);
		gf_openb_destroy(x);
		free(nodes);
		free(pods);
	}
	bench_trace_release(&d);
	return 0;
}
