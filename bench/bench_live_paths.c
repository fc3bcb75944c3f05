/*
 * bench/bench_live_paths.c - the live scheduler's per-event paths at the
 * Kubernetes scalability envelope, offline: gf_live (k8s/live.h, no I/O)
 * fed what the watches would deliver, without an API server, as
 * bench_sched_mem does, with gangs and quotas added.
 *
 *   bench_live_paths [NODES [PODS [GANG_PODS [QUEUE_POLICY [NAMESPACES [QUEUES [ROUNDS [DEADLINE]]]]]]]]
 *   (default 5000 150000 20000 backfill 1000 100 20 0)
 *
 * NODES nodes of 8 GPUs.  PODS pods of this scheduler arrive pending: the
 * first GANG_PODS are coscheduling PodGroup members in gangs of 4
 * (minMember 4, one whole GPU each), the rest in turn one whole GPU, half a
 * GPU and three CPU-only pods (bench_sched_mem's mix).  Pod i is in
 * namespace ns-(i % NAMESPACES); with QUEUES > 0 the scheduler runs with
 * quotas (--queues): QUEUES Queue objects with room for everything, each
 * namespace labelled with queue q-(ns % QUEUES), so every pod is charged to
 * one (the ns -> queue lookups of every attempt).  QUEUES 0: no quotas.
 * DEADLINE > 0: every pod has spec.activeDeadlineSeconds, DEADLINE + (a
 * number from the pod's index, the same for a gang's members) % DEADLINE,
 * so running jobs' ends are known and spread (the waiting pods' notes get
 * estimated starts); 0: none (every running job open-ended).
 *
 * Timed (CPU seconds of this process, one thread), each on its own line:
 *   - deciding every pending pod (gf_live_schedule_next until none; each
 *     placed pod echoed back bound, the daemon's path): the gang members'
 *     lookups of their gangs are in it;
 *   - a round of PodGroup status counts (gf_live_gang_count for 64 groups,
 *     the daemon's round every 2 s), mean of ROUNDS rounds;
 *   - a round of waiting-pod notes (gf_live_notes_due, at most 32, the
 *     daemon's round every 2 s): the first, and the mean of ROUNDS more
 *     (each hands out the next 32 notes due);
 *   - one allocation record (gf_live_each_allocation, the cost scrape);
 *   - an idle scheduling cycle (gf_live_schedule_next with nothing new:
 *     the loop tries its waiting jobs again, or live.c skips it), mean of
 *     ROUNDS; then the same with the caller's clock 11 s on before each
 *     (live.c runs a cycle at least every 10 s), mean of ROUNDS;
 *   - a PodGroup event (gf_live_gangs_changed: gang members parked here go
 *     back to the queue), mean of ROUNDS.
 * Figures vary with the machine's load: compare runs made one after the
 * other (before/after a change) on the same machine.
 */
#define _GNU_SOURCE 1
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "k8s/gangs.h"
#include "k8s/live.h"
#include "queue/loop.h"
#include "queue/queuedef.h"

#define GANG 4

static void node_at(size_t i, struct gf_k8s_node *n)
{
	char json[2048], err[256];
	int len = snprintf(json, sizeof(json),
			   "{\"metadata\":{\"name\":\"gpu-node-%zu\",\"resourceVersion\":\"%zu\",\"labels\":{"
			   "\"kubernetes.io/hostname\":\"gpu-node-%zu\",\"nvidia.com/gpu.present\":\"true\","
			   "\"nvidia.com/gpu.product\":\"NVIDIA-H100-80GB-HBM3\",\"nvidia.com/gpu.memory\":\"81559\","
			   "\"nvidia.com/gpu.count\":\"8\"}},"
			   "\"status\":{\"allocatable\":{\"cpu\":\"96\",\"memory\":\"1024Gi\",\"pods\":\"110\","
			   "\"nvidia.com/gpu\":\"8\"},\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}",
			   i, i + 1, i);
	if (gf_k8s_node_decode_text(json, (size_t)len, n, err, sizeof(err))) {
		fprintf(stderr, "bench: node %zu: %s\n", i, err);
		exit(2);
	}
}

/* Pod i: a gang member (i < ngang), else kind (i - ngang) % 5: 0 one GPU, 1 half a GPU, else CPU only. */
static void pod_at(size_t i, size_t ngang, size_t nns, size_t deadline, struct gf_k8s_pod *p)
{
	static const char *const limits[] = { ",\"limits\":{\"nvidia.com/gpu\":\"1\"}", "", "", "", "" };
	static const char *const ann[] = { "", ",\"annotations\":{\"gpufleet.io/gpu-milli\":\"500\"}", "", "",
					   "" };
	char json[2048], err[256], labels[128] = "", dl[64] = "";
	size_t kind = (i - ngang) % 5;
	if (deadline)
		snprintf(dl, sizeof(dl), "\"activeDeadlineSeconds\":%zu,",
			 deadline + ((i < ngang ? i / GANG : i) * 7919) % deadline);
	if (i < ngang) {
		snprintf(labels, sizeof(labels), ",\"labels\":{\"" GF_LABEL_POD_GROUP "\":\"g-%zu\"}", i / GANG);
		kind = 0;
	}
	int len = snprintf(json, sizeof(json),
			   "{\"metadata\":{\"name\":\"pod-%06zu\",\"namespace\":\"ns-%zu\","
			   "\"uid\":\"6a1f0c2e-0000-4000-8000-%012zu\",\"resourceVersion\":\"%zu\"%s%s},"
			   "\"spec\":{%s\"schedulerName\":\"gpufleet\","
			   "\"containers\":[{\"name\":\"c\",\"image\":\"registry.invalid/x:1\","
			   "\"resources\":{\"requests\":{\"cpu\":\"100m\",\"memory\":\"64Mi\"}%s}}]},"
			   "\"status\":{\"phase\":\"Pending\"}}",
			   i, (i < ngang ? i - i % GANG : i) % nns, i, 100000 + i, labels, i < ngang ? "" : ann[kind],
			   dl, limits[kind]);
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

static void on_share(void *ud, const struct gf_live_share *s)
{
	*(size_t *)ud += (size_t)s->milli;
}

int main(int argc, char **argv)
{
	size_t nnodes = argc > 1 ? strtoul(argv[1], NULL, 10) : 5000;
	size_t npods = argc > 2 ? strtoul(argv[2], NULL, 10) : 150000;
	size_t ngang = argc > 3 ? strtoul(argv[3], NULL, 10) : 20000;
	const char *qpname = argc > 4 ? argv[4] : "backfill";
	size_t nns = argc > 5 ? strtoul(argv[5], NULL, 10) : 1000;
	size_t nq = argc > 6 ? strtoul(argv[6], NULL, 10) : 100;
	size_t rounds = argc > 7 ? strtoul(argv[7], NULL, 10) : 20;
	size_t deadline = argc > 8 ? strtoul(argv[8], NULL, 10) : 0;
	struct gf_k8s_node *n = malloc(sizeof(*n));
	struct gf_k8s_pod *p = malloc(sizeof(*p));
	struct gf_live_decision *d = malloc(sizeof(*d));
	struct gf_live_note *notes = malloc(32 * sizeof(*notes));
	enum gf_queue_policy qp;
	gf_live *l;
	gf_gangs *g;
	double t;

	ngang -= ngang % GANG;
	if (!n || !p || !d || !notes || !nnodes || !npods || ngang > npods || !nns || !rounds ||
	    !gf_queue_policy_find(qpname, &qp) || qp == GF_QP_KUBE) {
		fprintf(stderr, "usage: bench_live_paths [NODES [PODS [GANG_PODS [strict-fifo|best-effort-fifo|"
				"backfill|conservative-backfill [NAMESPACES [QUEUES [ROUNDS [DEADLINE]]]]]]]]\n");
		return 2;
	}
	struct gf_live_opts o = { .queue_policy = (int)qp, .queues = nq > 0 };
	if (gf_live_create(&o, &l) || gf_gangs_create(&g)) {
		fprintf(stderr, "bench: gf_live_create failed\n");
		return 2;
	}
	gf_live_set_gangs(l, g);
	printf("bench_live_paths: %zu nodes (8 GPUs each), %zu pending pods (%zu in gangs of %d), "
	       "--queue-policy %s, %zu namespaces, %zu Queues, FGD, deadline %zu s\n",
	       nnodes, npods, ngang, GANG, qpname, nns, nq, deadline);

	for (size_t i = 0; i < nq; i++) {
		struct gf_queue_def q;
		memset(&q, 0, sizeof(q));
		snprintf(q.name, sizeof(q.name), "q-%zu", i);
		q.nominal = 1000000000;
		q.borrowing_limit = q.lending_limit = GF_QUOTA_UNLIMITED;
		q.weight = 1;
		if (gf_live_queue_set(l, &q, NULL)) {
			fprintf(stderr, "bench: queue %zu refused\n", i);
			return 2;
		}
	}
	for (size_t i = 0; nq && i < nns; i++) {
		char ns[32], q[32];
		snprintf(ns, sizeof(ns), "ns-%zu", i);
		snprintf(q, sizeof(q), "q-%zu", i % nq);
		if (gf_live_namespace_queue(l, ns, q)) {
			fprintf(stderr, "bench: namespace %zu refused\n", i);
			return 2;
		}
	}
	for (size_t i = 0; i < ngang / GANG; i++) {
		struct gf_k8s_podgroup pg;
		memset(&pg, 0, sizeof(pg));
		pg.api = GF_GANG_COSCHEDULING;
		snprintf(pg.ns, sizeof(pg.ns), "ns-%zu", (i * GANG) % nns);
		snprintf(pg.name, sizeof(pg.name), "g-%zu", i);
		pg.min_member = GANG;
		if (gf_gangs_set(g, &pg)) {
			fprintf(stderr, "bench: PodGroup %zu refused\n", i);
			return 2;
		}
	}
	for (size_t i = 0; i < nnodes; i++) {
		node_at(i, n);
		gf_live_node_set(l, n);
	}
	t = bench_cpu_seconds();
	for (size_t i = 0; i < npods; i++) {
		pod_at(i, ngang, nns, deadline, p);
		gf_live_pod_set(l, p);
	}
	printf("%-44s %10.3f s CPU\n", "pods set (pending)", bench_cpu_seconds() - t);
	fflush(stdout);

	size_t placed = 0, unsched = 0, invalid = 0;
	t = bench_cpu_seconds();
	for (size_t k = 0; k < 4 * npods && gf_live_schedule_next(l, p, d); k++) {
		if (d->result == GF_LIVE_PLACED) {
			placed++;
			bind_echo(p, d, 100000 + npods + placed);
			gf_live_pod_set(l, p);
		} else if (d->result == GF_LIVE_UNSCHEDULABLE) {
			unsched++;
		} else if (!invalid++) {
			printf("first invalid pod %s: %s\n", p->name, d->message);
		}
	}
	printf("%-44s %10.3f s CPU  (%zu placed, %zu unschedulable, %zu invalid)\n", "all pending pods decided",
	       bench_cpu_seconds() - t, placed, unsched, invalid);
	fflush(stdout);

	/* PodGroup status rounds: 64 groups each, round robin as the daemon does */
	size_t ngroups = gf_gangs_count(g), cursor = 0, members = 0, scheduled = 0;
	t = bench_cpu_seconds();
	for (size_t r = 0; ngroups && r < rounds; r++)
		for (size_t k = 0; k < 64 && k < ngroups; k++) {
			struct gf_live_gang_count gc;
			gf_live_gang_count(l, gf_gangs_at(g, cursor++ % ngroups), &gc);
			members += gc.members;
			scheduled += gc.scheduled;
		}
	printf("%-44s %10.3f ms CPU  (%zu members counted, %zu scheduled)\n", "gang count round (64 groups), mean",
	       (bench_cpu_seconds() - t) * 1e3 / (double)rounds, members, scheduled);
	fflush(stdout);

	size_t due;
	t = bench_cpu_seconds();
	due = gf_live_notes_due(l, notes, 32);
	t = bench_cpu_seconds() - t;
	size_t dated = 0;
	for (size_t k = 0; k < due; k++)
		dated += notes[k].start >= 0;
	printf("%-44s %10.3f ms CPU  (%zu notes, %zu with a start)\n", "notes round, first", t * 1e3, due, dated);
	due = 0;
	t = bench_cpu_seconds();
	for (size_t r = 0; r < rounds; r++)
		due += gf_live_notes_due(l, notes, 32);
	printf("%-44s %10.3f ms CPU  (%zu notes)\n", "notes round, later ones, mean",
	       (bench_cpu_seconds() - t) * 1e3 / (double)rounds, due);
	fflush(stdout);

	size_t milli = 0;
	t = bench_cpu_seconds();
	gf_live_each_allocation(l, on_share, NULL, &milli);
	printf("%-44s %10.3f ms CPU  (%zu milli-GPU)\n", "allocation record (each_allocation)",
	       (bench_cpu_seconds() - t) * 1e3, milli);
	fflush(stdout);

	size_t more = 0;
	t = bench_cpu_seconds();
	for (size_t r = 0; r < rounds; r++)
		more += gf_live_schedule_next(l, p, d);
	printf("%-44s %10.3f ms CPU  (%zu decisions)\n", "idle scheduling cycle, mean",
	       (bench_cpu_seconds() - t) * 1e3 / (double)rounds, more);
	more = 0;
	t = bench_cpu_seconds();
	for (size_t r = 0; r < rounds; r++) {
		gf_live_requeue_due(l, 11.0 * (double)(r + 1)); /* the clock 11 s on: a cycle runs anyway */
		more += gf_live_schedule_next(l, p, d);
	}
	printf("%-44s %10.3f ms CPU  (%zu decisions)\n", "cycle with nothing new, 11 s on, mean",
	       (bench_cpu_seconds() - t) * 1e3 / (double)rounds, more);
	/* last: it sends the gangs' parked members back to the queue */
	more = 0;
	t = bench_cpu_seconds();
	for (size_t r = 0; r < rounds; r++)
		more += gf_live_gangs_changed(l);
	printf("%-44s %10.3f ms CPU  (%zu pods requeued)\n", "a PodGroup event (gf_live_gangs_changed), mean",
	       (bench_cpu_seconds() - t) * 1e3 / (double)rounds, more);

	char why[256];
	if (gf_live_check(l, why, sizeof(why))) {
		fprintf(stderr, "bench: engine invariants broken: %s\n", why);
		return 1;
	}
	gf_live_destroy(l);
	gf_gangs_destroy(g);
	free(n);
	free(p);
	free(d);
	free(notes);
	return 0;
}
