/*
 * cli/experiment.c - the trace files of simulate and replay, and their runs
 * on a pool of threads.
 *
 * Loading: catalog, node list, pod list (plain or timed), in that order,
 * each failure said once on stderr; the cluster must have a GPU (every
 * measure is a share of the GPUs).  The experiment built from the lists
 * (gf_openb or gf_replay) stays with each command.
 *
 * The pool: the runs of an experiment are independent and read the
 * prepared experiment only, so threads take the next index under one mutex
 * and write only their own run's result; the output is the same for any
 * thread count.  The calling thread waits on a join, or, when it reports
 * progress, polls a done counter every 100 ms first.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/experiment.h"
#include "cli/files.h"

#define MAX_THREADS 64

void gf_cli_trace_release(struct gf_cli_trace *t)
{
	free(t->nodes);
	free(t->pods);
	free(t->times);
	gf_catalog_release(&t->cat);
	memset(t, 0, sizeof(*t));
}

int gf_cli_trace_load(const char *cmd, const char *nodes_path, const char *pods_path, bool timed,
		      struct gf_cli_trace *t)
{
	struct gf_trace_error terr;
	char *data;
	size_t len;
	gf_err err;

	memset(t, 0, sizeof(*t));
	if (gf_catalog_init(&t->cat))
		return -1;
	if (gf_read_file(nodes_path, &data, &len))
		goto fail;
	err = gf_trace_parse_nodes(data, len, nodes_path, &t->cat, &t->nodes, &t->nnodes, &terr);
	free(data);
	if (err)
		goto fail_parse;
	if (gf_read_file(pods_path, &data, &len))
		goto fail;
	err = timed ? gf_trace_parse_pods_timed(data, len, pods_path, &t->cat, &t->pods, &t->npods,
						&t->times, &terr)
		    : gf_trace_parse_pods(data, len, pods_path, &t->cat, &t->pods, &t->npods, &terr);
	free(data);
	if (err)
		goto fail_parse;
	for (size_t i = 0; i < t->nnodes; i++)
		t->ngpus += t->nodes[i].ngpus;
	if (t->ngpus == 0) {
		fprintf(stderr, "gpufleet %s: %s: the cluster has no GPU; expected at least one node with gpu > 0\n",
			cmd, nodes_path);
		goto fail;
	}
	return 0;
fail_parse:
	fprintf(stderr, "gpufleet %s: %s\n", cmd, terr.msg);
fail:
	gf_cli_trace_release(t);
	return -1;
}

double gf_cli_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct pool {
	void (*run)(void *ctx, size_t i);
	void *ctx;
	size_t n, next, done;
	pthread_mutex_t lock;
};

static void *worker(void *arg)
{
	struct pool *p = arg;

	for (;;) {
		size_t i;

		pthread_mutex_lock(&p->lock);
		i = p->next++;
		pthread_mutex_unlock(&p->lock);
		if (i >= p->n)
			return NULL;
		p->run(p->ctx, i);
		pthread_mutex_lock(&p->lock);
		p->done++;
		pthread_mutex_unlock(&p->lock);
	}
}

/* Call progress every 100 ms until all of p's runs are done. */
static void watch(struct pool *p, double t0, void (*progress)(void *pctx, size_t done, double elapsed),
		  void *pctx)
{
	for (;;) {
		struct timespec ts = { 0, 100 * 1000 * 1000 };
		double t = gf_cli_seconds() - t0;
		size_t done;

		pthread_mutex_lock(&p->lock);
		done = p->done;
		pthread_mutex_unlock(&p->lock);
		if (done == p->n)
			return;
		progress(pctx, done, t);
		nanosleep(&ts, NULL);
	}
}

void gf_cli_run_parallel(size_t n, int nthreads, void (*run)(void *ctx, size_t i), void *ctx,
			 void (*progress)(void *pctx, size_t done, double elapsed), void *pctx)
{
	struct pool p = { .run = run, .ctx = ctx, .n = n };
	pthread_t tid[MAX_THREADS];
	int started = 0;
	double t0 = gf_cli_seconds();

	if (nthreads < 1)
		nthreads = 1;
	if (nthreads > MAX_THREADS)
		nthreads = MAX_THREADS;
	if ((size_t)nthreads > n)
		nthreads = (int)n;
	pthread_mutex_init(&p.lock, NULL);
	for (int i = 0; i < nthreads; i++)
		if (!pthread_create(&tid[started], NULL, worker, &p))
			started++;
	if (started == 0)
		worker(&p);
	if (progress)
		watch(&p, t0, progress, pctx);
	for (int i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	pthread_mutex_destroy(&p.lock);
}
