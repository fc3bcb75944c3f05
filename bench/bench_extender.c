/*
 * bench/bench_extender.c - the extender's filter+prioritize round trip, as kube-scheduler makes it.
 *
 *   bench_extender URL_PREFIX NODES [ITERATIONS] [NODE_PREFIX]
 *
 * POSTs ExtenderArgs (nodeCacheCapable: true, NodeNames = NODE_PREFIX0..NODES-1,
 * a pod asking one whole GPU) to URL_PREFIX/filter and then URL_PREFIX/prioritize
 * over one keep-alive connection, ITERATIONS (default 1000) times after 50 warm-up
 * rounds, and prints the round trip's p50, p99 and max in milliseconds.  The
 * pods are never bound, so the state is the same for every round.
 *
 * The names come in a different order every round (32 seeded shuffles,
 * built before the clock starts, taken in turn): kube-scheduler filters
 * nodes in parallel and hands the extender the feasible ones in the order
 * its workers finished, from a start that rotates between pods, so the
 * server cannot count on one order.
 */
#include <curl/curl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static size_t sink(char *p, size_t sz, size_t n, void *ud)
{
	(void)p;
	*(size_t *)ud += sz * n;
	return sz * n;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: bench_extender URL_PREFIX NODES [ITERATIONS] [NODE_PREFIX]\n");
		return 2;
	}
	const char *prefix = argv[1];
	long nodes = strtol(argv[2], NULL, 10);
	long iters = argc > 3 ? strtol(argv[3], NULL, 10) : 1000;
	const char *np = argc > 4 ? argv[4] : "gpu-node-";
	if (nodes <= 0 || iters <= 0)
		return 2;
	/* BODIES request bodies, each with its own order, built before the clock starts */
	enum { BODIES = 32 };
	size_t cap = (size_t)nodes * (strlen(np) + 24) + 1024;
	char *body[BODIES];
	size_t blen[BODIES];
	long *order = malloc((size_t)nodes * sizeof(*order));
	if (!order)
		return 1;
	for (long i = 0; i < nodes; i++)
		order[i] = i;
	uint64_t seed = 42;
	for (int b = 0; b < BODIES; b++) {
		for (long k = nodes - 1; k > 0; k--) { /* Fisher-Yates, xorshift64 */
			seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
			long j = (long)(seed % (uint64_t)(k + 1)), t = order[k];
			order[k] = order[j], order[j] = t;
		}
		if (!(body[b] = malloc(cap)))
			return 1;
		size_t n = (size_t)snprintf(body[b], cap,
			"{\"Pod\":{\"metadata\":{\"name\":\"bench\",\"namespace\":\"default\",\"uid\":\"bench-uid\"},"
			"\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"1\"},"
			"\"requests\":{\"cpu\":\"100m\"}}}]}},\"Nodes\":null,\"NodeNames\":[");
		for (long k = 0; k < nodes; k++)
			n += (size_t)snprintf(body[b] + n, cap - n, "%s\"%s%ld\"", k ? "," : "", np, order[k]);
		n += (size_t)snprintf(body[b] + n, cap - n, "]}");
		blen[b] = n;
	}
	char fu[512], pu[512];
	snprintf(fu, sizeof(fu), "%s/filter", prefix);
	snprintf(pu, sizeof(pu), "%s/prioritize", prefix);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	CURL *h = curl_easy_init();
	struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink);
	size_t got = 0;
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &got);
	curl_easy_setopt(h, CURLOPT_BUFFERSIZE, 512L * 1024);
	double *rt = malloc((size_t)iters * sizeof(*rt));
	if (!rt)
		return 1;
	for (long i = -50; i < iters; i++) {
		int b = (int)((i + 50) % BODIES);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body[b]);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)blen[b]);
		double t0 = now_ms();
		long st1 = 0, st2 = 0;
		curl_easy_setopt(h, CURLOPT_URL, fu);
		if (curl_easy_perform(h) != CURLE_OK)
			return fprintf(stderr, "bench_extender: filter failed\n"), 1;
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &st1);
		curl_easy_setopt(h, CURLOPT_URL, pu);
		if (curl_easy_perform(h) != CURLE_OK)
			return fprintf(stderr, "bench_extender: prioritize failed\n"), 1;
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &st2);
		if (st1 != 200 || st2 != 200)
			return fprintf(stderr, "bench_extender: HTTP %ld / %ld\n", st1, st2), 1;
		if (i >= 0)
			rt[i] = now_ms() - t0;
	}
	qsort(rt, (size_t)iters, sizeof(*rt), cmp);
	printf("extender filter+prioritize round trip, %ld nodes, %ld rounds: p50 %.3f ms  p99 %.3f ms  max %.3f ms"
	       "  (%zu response bytes per round)\n",
	       nodes, iters, rt[iters / 2], rt[(iters * 99) / 100], rt[iters - 1], got / (size_t)(iters + 50));
	curl_slist_free_all(hdr);
	curl_easy_cleanup(h);
	curl_global_cleanup();
	free(rt);
	free(order);
	for (int b = 0; b < BODIES; b++)
		free(body[b]);
	return 0;
}
