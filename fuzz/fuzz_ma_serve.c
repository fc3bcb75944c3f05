/*
 * fuzz/fuzz_ma_serve.c - libFuzzer harness for the external metrics API's
 * request handler: path and labelSelector are what the aggregator relays
 * from any client with RBAC on external.metrics.k8s.io.  Input: PATH, a
 * newline, then the selector (absent without the newline); the first byte's
 * low bit picks --all-namespaces.  Every answer must be one of the API's
 * status codes with a JSON body (Status or a resource); nothing may crash.
 */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fuzzutil.h"
#include "metricsapi/agents.h"
#include "metricsapi/metricsapi.h"

static const char text[] =
	"DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-a0\",modelName=\"NVIDIA H100 80GB HBM3\",hostname=\"n\","
	"namespace=\"ml\",pod=\"llm-0\",container=\"c\"} 87\n"
	"DCGM_FI_DEV_GPU_UTIL{gpu=\"1\",UUID=\"GPU-a1\",modelName=\"NVIDIA H100 80GB HBM3\",hostname=\"n\"} 3\n"
	"DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-a0\",hostname=\"n\",namespace=\"ml\",pod=\"llm-0\"} 1000\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static gf_ma_agents *agents;
	static gf_metrics_api *api[2];
	if (!agents) {
		const char *urls[] = { "http://fuzz/metrics" };
		struct gf_ma_agents_config c = { .urls = urls, .nurls = 1, .no_thread = true };
		char err[256];
		if (gf_ma_agents_create(&c, &agents) ||
		    gf_ma_agents_ingest(agents, 0, text, sizeof(text) - 1, (int64_t)time(NULL), err,
					sizeof(err)))
			abort();
		for (int i = 0; i < 2; i++) {
			struct gf_metrics_api_config mc = { .source = GF_MA_SOURCE_AGENTS, .agents = agents,
							    .all_namespaces = i };
			if (gf_metrics_api_create(&mc, &api[i]))
				abort();
		}
	}
	if (!size)
		return 0;
	char *buf = gf_fuzz_cstr(data + 1, size - 1);
	if (!buf)
		return 0;
	char *nl = strchr(buf, '\n');
	const char *sel = NULL;
	if (nl) {
		*nl = '\0';
		sel = nl + 1;
	}
	struct gf_http_response resp = { .status = 200 };
	gf_obuf_init(&resp.body, 1 << 20);
	struct gf_ma_request r = { "GET", buf, sel, false, "", NULL };
	gf_metrics_api_serve(api[data[0] & 1], &r, &resp);
	unsigned s = resp.status;
	if (s != 200 && s != 400 && s != 404 && s != 500 && s != 503)
		abort();
	if (!strncmp(buf, "/apis", 5) || s != 200) {
		cJSON *doc = resp.body.data ? cJSON_Parse(resp.body.data) : NULL;
		if (!doc)
			abort();
		cJSON_Delete(doc);
	}
	gf_obuf_release(&resp.body);
	free(buf);
	return 0;
}
