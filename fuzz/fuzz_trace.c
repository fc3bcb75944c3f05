/*
 * fuzz/fuzz_trace.c - libFuzzer harness for the trace parsers.
 *
 * The first byte chooses the parser (node list, pod list, reference results,
 * timed pod list);
 * the rest is the file.  Parsers must return an error or a well-formed list,
 * never crash, leak or read out of bounds; a successful parse is checked for
 * the invariants the engine relies on (and a pod list that starts with a UTF-8
 * byte-order mark must parse as the same list without it).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/text.h"
#include "sim/reference.h"
#include "sim/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gf_catalog cat;
	struct gf_trace_error err;
	const char *text = (const char *)data + 1;
	size_t len = size ? size - 1 : 0;

	if (size == 0 || gf_catalog_init(&cat))
		return 0;
	switch (data[0] % 4) {
	case 0: {
		struct gf_node_spec *nodes;
		size_t n;

		if (!gf_trace_parse_nodes(text, len, "fuzz", &cat, &nodes, &n, &err)) {
			for (size_t i = 0; i < n; i++)
				if (nodes[i].ngpus < 0 || nodes[i].ngpus > GF_MAX_GPUS || nodes[i].cpu_milli < 0 ||
				    nodes[i].model >= cat.nmodels)
					abort();
			free(nodes);
		}
		break;
	}
	case 1: {
		struct gf_pod_spec *pods;
		size_t n;

		if (!gf_trace_parse_pods(text, len, "fuzz", &cat, &pods, &n, &err)) {
			for (size_t i = 0; i < n; i++)
				if (pods[i].gpu_count < 0 || pods[i].gpu_count > GF_MAX_GPUS ||
				    (pods[i].gpu_count > 0) != (pods[i].gpu_milli > 0) ||
				    pods[i].gpu_milli > GF_MILLI_PER_GPU || pods[i].spec >= cat.nspecs)
					abort();
			free(pods);
			/* A byte-order mark changes nothing: without it the same pods come back. */
			size_t bom = gf_utf8_bom_len(text, len);
			size_t n2;

			if (bom) {
				if (gf_trace_parse_pods(text + bom, len - bom, "fuzz", &cat, &pods, &n2, &err) || n2 != n)
					abort();
				free(pods);
			}
		}
		break;
	}
	case 3: {
		struct gf_pod_spec *pods;
		struct gf_pod_times *times;
		size_t n;

		if (!gf_trace_parse_pods_timed(text, len, "fuzz", &cat, &pods, &n, &times, &err)) {
			for (size_t i = 0; i < n; i++)
				if (pods[i].duration < 0 || pods[i].arrival != times[i].creation ||
				    times[i].deletion < times[i].creation || times[i].qos >= GF_QOS_COUNT ||
				    pods[i].gpu_milli > GF_MILLI_PER_GPU)
					abort();
			free(pods);
			free(times);
		}
		break;
	}
	default: {
		struct gf_reference ref;

		if (!gf_reference_parse(text, len, "fuzz", &ref, &err))
			gf_reference_release(&ref);
		break;
	}
	}
	gf_catalog_release(&cat);
	return 0;
}
