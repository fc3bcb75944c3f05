/*
 * fuzz/fuzz_k8s.c - libFuzzer harness for the Kubernetes Pod/Node JSON codecs.
 *
 * The first byte chooses the decoder (pod, node, topology annotation,
 * quantity); the rest is the document.  Decoders must return GF_OK or
 * GF_PARSE with a message, never crash or read out of bounds; a decoded
 * object is checked for the invariants the scheduler relies on.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzzutil.h"
#include "k8s/codec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	const char *text = (const char *)data + 1;
	size_t len = size - 1;
	char err[256] = "";
	switch (data[0] % 4) {
	case 0: {
		struct gf_k8s_pod p;
		if (gf_fuzz_decoded(gf_k8s_pod_decode_text(text, len, &p, err, sizeof(err)), err)) {
			if (p.req.gpu_count < 0 || p.req.gpu_count > GF_MAX_GPUS)
				abort();
			if (p.req.gpu_count && (p.req.gpu_milli < 1 || p.req.gpu_milli > 1000))
				abort();
			if (p.invalid[0] && p.req.gpu_count)
				abort();
			if (p.assigned && (p.assigned_ngpus < 1 || p.assigned_ngpus > GF_MAX_GPUS))
				abort();
			if (!p.name[0] || !memchr(p.name, 0, sizeof(p.name)))
				abort();
		}
		break;
	}
	case 1: {
		struct gf_k8s_node n;
		if (gf_fuzz_decoded(gf_k8s_node_decode_text(text, len, &n, err, sizeof(err)), err) &&
		    (n.spec.ngpus < 0 || n.spec.ngpus > GF_MAX_GPUS || n.spec.cpu_milli < 0 || n.nuuids > n.spec.ngpus))
			abort();
		break;
	}
	case 2: {
		char *s = gf_fuzz_cstr(text, len);
		if (!s)
			return 0;
		struct gf_k8s_node n;
		memset(&n, 0, sizeof(n));
		n.spec.ngpus = 8;
		gf_err e = gf_k8s_topology_decode(s, &n, err, sizeof(err));
		if (e != GF_OK && e != GF_PARSE)
			abort();
		for (int g = 0; g < GF_MAX_GPUS; g++)
			if (n.spec.topo[g].nvlink_island >= GF_MAX_GPUS)
				abort();
		free(s);
		break;
	}
	default: {
		char q[64];
		size_t n = len < sizeof(q) - 1 ? len : sizeof(q) - 1;
		memcpy(q, text, n);
		q[n] = '\0';
		int64_t v;
		gf_err e = gf_k8s_quantity_milli(q, &v);
		if (e != GF_OK && e != GF_PARSE && e != GF_RANGE)
			abort();
		break;
	}
	}
	return 0;
}
