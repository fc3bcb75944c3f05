/*
 * fuzz/fuzz_dp_grpc.c - what the device plugin decodes from the kubelet's
 * bytes: the gRPC message framing (gf_grpc_unframe), the protobuf decoding
 * of every request type the plugin accepts (protobuf-c code generated from
 * the upstream api.proto) and of the kubelet's pod-resources List answer,
 * and the share-unit device IDs
 * (gf_dp_parse_unit_id) in what decodes.  Invariants checked: no crash, no
 * leak (ASan), an unframed message lies inside the input and has the
 * prefix's length, a parsed unit is 0..999 with a non-empty UUID; the
 * NUL-in-a-string check (agent/dp_request.h) and the preferred-size bounds
 * run on what decodes, a refusal always with its message.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/deviceplugin.h"
#include "agent/dp_request.h"
#include "agent/grpc.h"
#include "agent/proto/deviceplugin_v1beta1.pb-c.h"
#include "agent/proto/podresources_v1.pb-c.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_id(const char *id)
{
	char uuid[96];
	unsigned unit;
	if (gf_dp_parse_unit_id(id, uuid, sizeof(uuid), &unit) && (unit >= GF_DP_MILLI_PER_GPU || !uuid[0]))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *msg;
	size_t mlen;
	char why[256];
	if (gf_grpc_unframe(data, size, &msg, &mlen, why, sizeof(why)) == GF_GRPC_OK) {
		if (msg != data + 5 || mlen != size - 5)
			abort();
	} else if (strncmp(why, "gRPC message framing: ", 22) != 0) {
		abort();
	}
	/* The NUL check on the encoded requests, and the size bounds. */
	char m[512] = "";
	if (!gf_dp_request_strings_ok(data, size, &v1beta1__allocate_request__descriptor, "Allocate", m, sizeof(m)) &&
	    !strstr(m, "holds a NUL byte"))
		abort();
	m[0] = '\0';
	if (!gf_dp_request_strings_ok(data, size, &v1beta1__preferred_allocation_request__descriptor, "Preferred", m,
				      sizeof(m)) &&
	    !strstr(m, "holds a NUL byte"))
		abort();
	/* The request messages, decoded from the whole input. */
	V1beta1__AllocateRequest *a = v1beta1__allocate_request__unpack(NULL, size, data);
	if (a) {
		for (size_t i = 0; i < a->n_container_requests; i++)
			for (size_t j = 0; j < a->container_requests[i]->n_devices_ids; j++)
				check_id(a->container_requests[i]->devices_ids[j]);
		v1beta1__allocate_request__free_unpacked(a, NULL);
	}
	V1beta1__PreferredAllocationRequest *p = v1beta1__preferred_allocation_request__unpack(NULL, size, data);
	if (p) {
		m[0] = '\0';
		if (!gf_dp_preferred_ok(p, 8, m, sizeof(m)) && !m[0])
			abort();
		for (size_t i = 0; i < p->n_container_requests; i++)
			for (size_t j = 0; j < p->container_requests[i]->n_available_deviceids; j++)
				check_id(p->container_requests[i]->available_deviceids[j]);
		v1beta1__preferred_allocation_request__free_unpacked(p, NULL);
	}
	V1beta1__RegisterRequest *r = v1beta1__register_request__unpack(NULL, size, data);
	if (r)
		v1beta1__register_request__free_unpacked(r, NULL);
	V1beta1__ListAndWatchResponse *l = v1beta1__list_and_watch_response__unpack(NULL, size, data);
	if (l)
		v1beta1__list_and_watch_response__free_unpacked(l, NULL);
	/* The kubelet's pod-resources List answer (reconciliation). */
	V1__ListPodResourcesResponse *pr = v1__list_pod_resources_response__unpack(NULL, size, data);
	if (pr) {
		for (size_t i = 0; i < pr->n_pod_resources; i++)
			for (size_t c = 0; c < pr->pod_resources[i]->n_containers; c++)
				for (size_t d = 0; d < pr->pod_resources[i]->containers[c]->n_devices; d++) {
					const V1__ContainerDevices *cd = pr->pod_resources[i]->containers[c]->devices[d];
					for (size_t k = 0; k < cd->n_device_ids; k++)
						check_id(cd->device_ids[k]);
				}
		v1__list_pod_resources_response__free_unpacked(pr, NULL);
	}
	/* The input as an ID. */
	char id[128];
	size_t n = size < sizeof(id) - 1 ? size : sizeof(id) - 1;
	memcpy(id, data, n);
	id[n] = '\0';
	check_id(id);
	return 0;
}
