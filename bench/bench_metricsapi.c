/*
 * bench/bench_metricsapi.c - latency of the external metrics API per request
 * with 1,000 GPUs behind it.
 *
 * Setup (fixed seed 42): 125 agents x 8 GPUs = 1,000 GPUs in the agents
 * source, fed with dcgm-exporter text as the agents render it (every GPU
 * with ~12 series, 80% of the GPUs attributed to pods of 50 Deployments in 4 of 5
 * namespaces).  Then, for each query shape, N requests (default 2,000)
 * are timed two ways:
 *   handler  gf_metrics_api_serve() in-process (parse, select, aggregate, JSON)
 *   https    the same through gfhttp over TLS with the front-proxy client
 *            certificate, one keep-alive libcurl connection (what the
 *            aggregator does), measured client-side
 * and p50/p99/max are printed.  Query shapes: one namespace (no selector),
 * one pod, one node, a GPU model across all namespaces.
 *
 * Reproduce: cmake --build build --target bench_metricsapi &&
 *            ./build/bench/bench_metricsapi [N]
 */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/rng.h"
#include "http/server.h"
#include "metricsapi/agents.h"
#include "metricsapi/metricsapi.h"

#define NAGENTS 125
#define GPUS_PER_NODE 8
#define GV "/apis/external.metrics.k8s.io/v1beta1"

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void report(const char *what, const char *shape, double *v, size_t n)
{
	qsort(v, n, sizeof(double), cmp_d);
	printf("%-8s %-44s n=%zu  p50=%8.1f us  p99=%8.1f us  max=%8.1f us\n", what, shape, n,
	       v[n / 2], v[(n * 99) / 100], v[n - 1]);
}

static const char *metrics_names[] = { "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_MEM_COPY_UTIL",
				       "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE",
				       "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_GPU_TEMP",
				       "DCGM_FI_DEV_MEMORY_TEMP", "DCGM_FI_DEV_SM_CLOCK",
				       "DCGM_FI_DEV_MEM_CLOCK", "DCGM_FI_DEV_ENC_UTIL",
				       "DCGM_FI_DEV_DEC_UTIL", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION" };

static size_t on_data(char *p, size_t sz, size_t n, void *ud)
{
	(void)p;
	size_t *len = ud;
	*len += sz * n;
	return sz * n;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 2000;
	if (n < 100)
		n = 100;
	curl_global_init(CURL_GLOBAL_DEFAULT);
	struct gf_rng rng;
	gf_rng_init(&rng, 42);
	const char *urls[NAGENTS];
	char urlbuf[NAGENTS][64];
	for (int i = 0; i < NAGENTS; i++) {
		snprintf(urlbuf[i], sizeof(urlbuf[i]), "http://node-%03d:9400/metrics", i);
		urls[i] = urlbuf[i];
	}
	struct gf_ma_agents_config ac = { .urls = urls, .nurls = NAGENTS, .no_thread = true };
	gf_ma_agents *agents;
	if (gf_ma_agents_create(&ac, &agents))
		return 1;
	/* Render each node's text and ingest it. */
	size_t total = 0, series = 0;
	char *text = malloc(1 << 20);
	for (int a = 0; a < NAGENTS; a++) {
		size_t k = 0;
		for (size_t m = 0; m < sizeof(metrics_names) / sizeof(metrics_names[0]); m++) {
			k += (size_t)snprintf(text + k, (1 << 20) - k, "# HELP %s x\n# TYPE %s gauge\n",
					      metrics_names[m], metrics_names[m]);
			for (int g = 0; g < GPUS_PER_NODE; g++) {
				unsigned dep = (unsigned)(a * GPUS_PER_NODE + g) % 50;
				bool assigned = (a * GPUS_PER_NODE + g) % 5 != 0;
				char pod[128] = "";
				if (assigned)
					snprintf(pod, sizeof(pod),
						 ",container=\"server\",namespace=\"ns-%u\",pod=\"model-%u-%03d%d\"",
						 dep % 5, dep, a, g);
				k += (size_t)snprintf(
					text + k, (1 << 20) - k,
					"%s{gpu=\"%d\",UUID=\"GPU-%08x-0000-0000-0000-%012d\",pci_bus_id=\"00000000:%02X:00.0\","
					"device=\"nvidia%d\",modelName=\"%s\",hostname=\"node-%03d\","
					"DCGM_FI_DRIVER_VERSION=\"550.54.15\"%s} %u\n",
					metrics_names[m], g, (unsigned)a, g, 0x10 + g, g,
					a % 3 ? "NVIDIA H100 80GB HBM3" : "NVIDIA A100-SXM4-80GB", a, pod,
					(unsigned)gf_rng_below(&rng, 101));
				series++;
			}
		}
		char err[256];
		if (gf_ma_agents_ingest(agents, (size_t)a, text, k, (int64_t)time(NULL), err, sizeof(err))) {
			fprintf(stderr, "ingest: %s\n", err);
			return 1;
		}
		total += k;
	}
	free(text);
	printf("bench_metricsapi: %d agents x %d GPUs = %d GPUs, %zu series, %.1f MiB of /metrics text, seed 42\n",
	       NAGENTS, GPUS_PER_NODE, NAGENTS * GPUS_PER_NODE, series, (double)total / (1 << 20));

	const char *names[] = { "front-proxy-client" };
	struct gf_metrics_api_config mc = { .source = GF_MA_SOURCE_AGENTS, .agents = agents,
					    .authenticate = true, .allowed_names = names, .nallowed = 1 };
	struct gf_metrics_api_config mca = mc;
	mca.all_namespaces = true;
	gf_metrics_api *api, *api_all;
	if (gf_metrics_api_create(&mc, &api) || gf_metrics_api_create(&mca, &api_all))
		return 1;
	struct {
		const char *shape, *path, *sel, *query;
		gf_metrics_api **api;
	} shapes[] = {
		{ "namespace ns-3, no selector (200 GPUs)", GV "/namespaces/ns-3/dcgm_gpu_utilization", NULL, "", &api },
		{ "pod=model-13-0015 (1 GPU)", GV "/namespaces/ns-3/dcgm_gpu_utilization", "pod=model-13-0015",
		  "?labelSelector=pod%3Dmodel-13-0015", &api },
		{ "node=node-042, all namespaces (8 GPUs)", GV "/namespaces/default/dcgm_gpu_utilization", "node=node-042",
		  "?labelSelector=node%3Dnode-042", &api_all },
		{ "gpu=NVIDIA-A100-SXM4-80GB, all ns (336 GPUs)", GV "/namespaces/default/dcgm_gpu_utilization",
		  "gpu=NVIDIA-A100-SXM4-80GB", "?labelSelector=gpu%3DNVIDIA-A100-SXM4-80GB", &api_all },
	};
	double *lat = malloc((size_t)n * sizeof(double));
	char *first = NULL;
	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		for (long i = 0; i < n; i++) {
			struct gf_http_response resp = { .status = 200 };
			gf_obuf_init(&resp.body, 1 << 20);
			struct gf_ma_request r = { "GET", shapes[s].path, shapes[s].sel, true,
						   "front-proxy-client", "bench" };
			double t = now_us();
			gf_metrics_api_serve(*shapes[s].api, &r, &resp);
			lat[i] = now_us() - t;
			if (resp.status != 200) {
				fprintf(stderr, "%s: status %u: %s\n", shapes[s].shape, resp.status, resp.body.data);
				return 1;
			}
			if (i == 0 && s == 0)
				first = strdup(resp.body.data);
			gf_obuf_release(&resp.body);
		}
		report("handler", shapes[s].shape, lat, (size_t)n);
	}
	printf("  (answer for ns-3: %s)\n", first);
	free(first);

	/* Over HTTPS with the front-proxy client certificate, one keep-alive connection per shape. */
	char *pem[3];
	const char *files[3] = { "server.crt", "server.key", "ca.crt" };
	for (int i = 0; i < 3; i++) {
		char path[512];
		snprintf(path, sizeof(path), "%s/tests/metrics-api/data/%s", GF_SOURCE_DIR, files[i]);
		FILE *f = fopen(path, "rb");
		if (!f) {
			perror(path);
			return 1;
		}
		pem[i] = calloc(1, 16384);
		size_t got = fread(pem[i], 1, 16383, f);
		(void)got;
		fclose(f);
	}
	for (int which = 0; which < 2; which++) {
		gf_metrics_api *target = which ? api_all : api;
		struct gf_http_route routes[8];
		size_t nr = gf_metrics_api_routes(target, routes, 8);
		struct gf_http_config hc = { .bind_addr = "127.0.0.1", .routes = routes, .nroutes = nr,
					     .threads = 4, .tls_cert_pem = pem[0], .tls_key_pem = pem[1],
					     .tls_client_ca_pem = pem[2] };
		gf_http_server *srv;
		if (gf_http_server_create(&hc, &srv))
			return 1;
		for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
			if (*shapes[s].api != target)
				continue;
			CURL *h = curl_easy_init();
			char url[512], ca[512], cert[512], key[512];
			snprintf(url, sizeof(url), "https://localhost:%u%s%s", gf_http_server_port(srv),
				 shapes[s].path, shapes[s].query);
			snprintf(ca, sizeof(ca), "%s/tests/metrics-api/data/ca.crt", GF_SOURCE_DIR);
			snprintf(cert, sizeof(cert), "%s/tests/metrics-api/data/front-proxy-client.crt", GF_SOURCE_DIR);
			snprintf(key, sizeof(key), "%s/tests/metrics-api/data/front-proxy-client.key", GF_SOURCE_DIR);
			size_t len = 0;
			curl_easy_setopt(h, CURLOPT_URL, url);
			curl_easy_setopt(h, CURLOPT_CAINFO, ca);
			curl_easy_setopt(h, CURLOPT_SSLCERT, cert);
			curl_easy_setopt(h, CURLOPT_SSLKEY, key);
			curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
			curl_easy_setopt(h, CURLOPT_WRITEDATA, &len);
			for (long i = 0; i < n; i++) {
				double t = now_us();
				CURLcode c = curl_easy_perform(h);
				lat[i] = now_us() - t;
				long code = 0;
				curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
				if (c != CURLE_OK || code != 200) {
					fprintf(stderr, "%s: curl %d status %ld\n", shapes[s].shape, c, code);
					return 1;
				}
			}
			report("https", shapes[s].shape, lat, (size_t)n);
			curl_easy_cleanup(h);
		}
		gf_http_server_destroy(srv);
	}
	for (int i = 0; i < 3; i++)
		free(pem[i]);
	free(lat);
	gf_metrics_api_destroy(api);
	gf_metrics_api_destroy(api_all);
	gf_ma_agents_destroy(agents);
	curl_global_cleanup();
	return 0;
}
