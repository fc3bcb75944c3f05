/*
 * bench/bench_sched_mem.c - the scheduler's own memory at the Kubernetes
 * scalability envelope (issue 12: 5,000 nodes, 150,000 pods, target under
 * 300 MiB resident), measured offline: gf_live (k8s/live.h, which does no
 * I/O) fed what the watches would deliver, without an API server.
 *
 *   bench_sched_mem [NODES [PODS [QUEUE_POLICY [WAVE]]]]   (default 5000 150000 kube PODS)
 *
 * NODES nodes of 8 GPUs (96 CPUs, 1 TiB, 110 pods, the labels
 * bench/sched-bench.sh gives its nodes), then PODS pods of this scheduler
 * arrive pending, decoded from Pod JSON like the watch's (gf_k8s_pod_decode_text):
 * in turn one whole GPU, half a GPU (gpufleet.io/gpu-milli 500), and three
 * CPU-only pods (100m CPU, 64 MiB) - 30,000 whole + 30,000 half GPU asked of
 * 40,000 GPUs at the defaults, so a part stays pending.  They arrive in
 * waves of WAVE pods (default: all at once, the worst case: every pod
 * pending together); after each wave the loop decides (gf_live_schedule_next)
 * until it has nothing more to decide, and every placed pod comes back bound
 * as the API server would echo it (spec.nodeName and the assignment
 * annotations), the daemon's path.  A cycle under a queue policy other than
 * kube hands out a decision for every pod it took at once, so the decisions
 * held then grow with the wave (a compact record each since wip/mem5, expanded
 * into a struct gf_live_decision, whose size is printed, when handed out).
 *
 * Prints, per phase, the process's VmHWM and VmRSS (/proc/self/status),
 * their growth over the process before gf_live was created (the bench's own
 * floor), gf_live's own count of its pod records (gf_live_stats pod_bytes),
 * the pods bound / queued / parked, and the CPU seconds of the phase.
 * What this leaves out of the daemon's resident memory: the watch and HTTP
 * buffers, the binder threads' stacks, the extender's listener
 * (bench/sched-bench.sh reads the daemon's VmHWM on the real control plane).
 */
#define _GNU_SOURCE 1
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "k8s/live.h"
#include "queue/loop.h"

/* "VmHWM VmRSS" of this process, KiB. */
static void mem_kib(long *hwm, long *rss)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];

	*hwm = *rss = -1;
	if (!f) {
		fprintf(stderr, "bench: cannot read /proc/self/status\n");
		exit(2);
	}
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "VmHWM:", 6))
			*hwm = strtol(line + 6, NULL, 10);
		else if (!strncmp(line, "VmRSS:", 6))
			*rss = strtol(line + 6, NULL, 10);
	}
	fclose(f);
	if (*hwm < 0 || *rss < 0) {
		fprintf(stderr, "bench: no VmHWM/VmRSS in /proc/self/status\n");
		exit(2);
	}
}

static long base_hwm, base_rss;

static void report(gf_live *l, const char *phase, double cpu_s)
{
	struct gf_live_stats s;
	long hwm, rss;

	gf_live_stats(l, &s);
	mem_kib(&hwm, &rss);
	printf("%-38s VmHWM %7.1f MiB (+%7.1f)  VmRSS %7.1f MiB (+%7.1f)  pod records %6.1f MiB  "
	       "nodes %zu bound %zu queued %zu parked %zu  %.2f s CPU\n",
	       phase, hwm / 1024.0, (hwm - base_hwm) / 1024.0, rss / 1024.0, (rss - base_rss) / 1024.0,
	       s.pod_bytes / 1048576.0, s.nodes, s.pods_bound, s.pods_queued, s.pods_parked, cpu_s);
	fflush(stdout);
}

static void node_at(size_t i, struct gf_k8s_node *n)
{
	char json[2048], err[256];
	int len = snprintf(json, sizeof(json),
			   "{\"metadata\":{\"name\":\"gpu-node-%zu\",\"resourceVersion\":\"%zu\",\"labels\":{"
			   "\"kubernetes.io/hostname\":\"gpu-node-%zu\",\"kubernetes.io/os\":\"linux\","
			   "\"nvidia.com/gpu.present\":\"true\",\"nvidia.com/gpu.product\":\"NVIDIA-H100-80GB-HBM3\","
			   "\"nvidia.com/gpu.memory\":\"81559\",\"nvidia.com/gpu.count\":\"8\"}},"
			   "\"status\":{\"allocatable\":{\"cpu\":\"96\",\"memory\":\"1024Gi\",\"pods\":\"110\","
			   "\"nvidia.com/gpu\":\"8\"},\"capacity\":{\"cpu\":\"96\",\"memory\":\"1024Gi\","
			   "\"pods\":\"110\",\"nvidia.com/gpu\":\"8\"},"
			   "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}",
			   i, i + 1, i);
	if (gf_k8s_node_decode_text(json, (size_t)len, n, err, sizeof(err))) {
		fprintf(stderr, "bench: node %zu: %s\n", i, err);
		exit(2);
	}
}

/* Pod i, pending: kind i % 5 = 0 one GPU, 1 half a GPU, else CPU only. */
static void pod_at(size_t i, struct gf_k8s_pod *p)
{
	static const char *const limits[] = { ",\"limits\":{\"nvidia.com/gpu\":\"1\"}", "", "", "", "" };
	static const char *const ann[] = { "", ",\"annotations\":{\"gpufleet.io/gpu-milli\":\"500\"}", "", "",
					   "" };
	char json[2048], err[256];
	int len = snprintf(json, sizeof(json),
			   "{\"metadata\":{\"name\":\"pod-%06zu\",\"namespace\":\"bench\","
			   "\"uid\":\"6a1f0c2e-0000-4000-8000-%012zu\",\"resourceVersion\":\"%zu\"%s},"
			   "\"spec\":{\"schedulerName\":\"gpufleet\",\"tolerations\":[{\"operator\":\"Exists\"}],"
			   "\"containers\":[{\"name\":\"c\",\"image\":\"registry.invalid/x:1\","
			   "\"resources\":{\"requests\":{\"cpu\":\"100m\",\"memory\":\"64Mi\"}%s}}]},"
			   "\"status\":{\"phase\":\"Pending\"}}",
			   i, i, 100000 + i, ann[i % 5], limits[i % 5]);
	if (gf_k8s_pod_decode_text(json, (size_t)len, p, err, sizeof(err))) {
		fprintf(stderr, "bench: pod %zu: %s\n", i, err);
		exit(2);
	}
}

/* The pod as the API server echoes it after the binding. */
static void bind_echo(struct gf_k8s_pod *p, const struct gf_live_decision *d, size_t rv)
{
	snprintf(p->node, sizeof(p->node), "%s", d->node);
	p->assigned = true;
	snprintf(p->assigned_node, sizeof(p->assigned_node), "%s", d->node);
	p->assigned_ngpus = d->ngpus;
	memcpy(p->assigned_gpus, d->gpus, sizeof(p->assigned_gpus));
	p->assigned_milli = d->milli;
	p->assigned_mem_mib = d->mem_mib;
	snprintf(p->rv, sizeof(p->rv), "%zu", rv);
}

int main(int argc, char **argv)
{
	size_t nnodes = argc > 1 ? strtoul(argv[1], NULL, 10) : 5000;
	size_t npods = argc > 2 ? strtoul(argv[2], NULL, 10) : 150000;
	const char *qpname = argc > 3 ? argv[3] : "kube";
	struct gf_live_opts o = { 0 };
	enum gf_queue_policy qp;
	/* Large (tolerations, affinity terms): off the stack. */
	struct gf_k8s_node *n = malloc(sizeof(*n));
	struct gf_k8s_pod *p = malloc(sizeof(*p));
	struct gf_live_decision *d = malloc(sizeof(*d));
	size_t wave = argc > 4 ? strtoul(argv[4], NULL, 10) : npods;
	size_t placed = 0, unsched = 0, invalid = 0;
	gf_live *l;
	double t;

	if (!n || !p || !d || !nnodes || !npods || !wave || !gf_queue_policy_find(qpname, &qp)) {
		fprintf(stderr, "usage: bench_sched_mem [NODES [PODS [kube|strict-fifo|best-effort-fifo|"
				"backfill|conservative-backfill [WAVE]]]]\n");
		return 2;
	}
	o.queue_policy = (int)qp;
	mem_kib(&base_hwm, &base_rss);
	printf("bench_sched_mem: %zu nodes (8 GPUs each), %zu pods (1 GPU / 0.5 GPU / 3 CPU-only in turn), "
	       "--queue-policy %s, FGD, arriving in waves of %zu; a decision is %zu bytes\n",
	       nnodes, npods, qpname, wave, sizeof(struct gf_live_decision));
	printf("%-38s VmHWM %7.1f MiB            VmRSS %7.1f MiB\n", "before gf_live", base_hwm / 1024.0,
	       base_rss / 1024.0);
	if (gf_live_create(&o, &l)) {
		fprintf(stderr, "bench: gf_live_create failed\n");
		return 2;
	}

	t = bench_cpu_seconds();
	for (size_t i = 0; i < nnodes; i++) {
		node_at(i, n);
		gf_live_node_set(l, n);
	}
	report(l, "nodes set", bench_cpu_seconds() - t);

	for (size_t w = 0; w < npods; w += wave) {
		size_t end = npods - w < wave ? npods : w + wave;
		bool shown = w == 0 || end == npods; /* the first and the last wave */
		char phase[64];

		t = bench_cpu_seconds();
		for (size_t i = w; i < end; i++) {
			pod_at(i, p);
			gf_live_pod_set(l, p);
		}
		snprintf(phase, sizeof(phase), "pods %zu-%zu set (pending)", w, end - 1);
		if (shown)
			report(l, phase, bench_cpu_seconds() - t);
		/* Decide until the loop has nothing more; a bound on the
		 * attempts in case a policy retries waiting pods in every cycle. */
		t = bench_cpu_seconds();
		for (size_t k = 0; k < 4 * (end - w) && gf_live_schedule_next(l, p, d); k++) {
			if (d->result == GF_LIVE_PLACED) {
				placed++;
				bind_echo(p, d, 100000 + npods + placed);
				gf_live_pod_set(l, p);
			} else if (d->result == GF_LIVE_UNSCHEDULABLE) {
				unsched++;
			} else {
				if (!invalid++)
					printf("first invalid pod %s: %s\n", p->name, d->message);
			}
		}
		snprintf(phase, sizeof(phase), "pods %zu-%zu decided, placed bound", w, end - 1);
		if (shown)
			report(l, phase, bench_cpu_seconds() - t);
	}
	printf("decisions: %zu placed, %zu unschedulable, %zu invalid\n", placed, unsched, invalid);

	/* A node joins: the engine is rebuilt, every bound pod accounted again
	 * (and, under the policies other than kube, entered into the new loop as
	 * a running job, issue 12). */
	t = bench_cpu_seconds();
	node_at(nnodes, n);
	gf_live_node_set(l, n);
	char why[256];
	if (gf_live_check(l, why, sizeof(why))) {
		fprintf(stderr, "bench: engine invariants broken: %s\n", why);
		return 1;
	}
	report(l, "a node added: engine rebuilt", bench_cpu_seconds() - t);

	if (gf_live_check(l, why, sizeof(why))) {
		fprintf(stderr, "bench: engine invariants broken: %s\n", why);
		return 1;
	}
	gf_live_destroy(l);
	free(n);
	free(p);
	free(d);
	return 0;
}
