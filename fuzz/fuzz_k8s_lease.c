/*
 * fuzz/fuzz_k8s_lease.c - libFuzzer harness for the Lease decoder (k8s/lease.c).
 *
 * The input is a Lease as the API server would return it.  The decoder
 * must return GF_OK or GF_PARSE with a message, never crash or overflow its
 * fixed fields; a decoded record encodes and decodes back to itself, and
 * the elector's plan on it never names anyone but us as the new holder.
 */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzzutil.h"
#include "k8s/lease.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gf_lease_record r, r2, w;
	char rv[GF_K8S_RV_MAX], rv2[GF_K8S_RV_MAX], err[300] = "";
	if (!gf_fuzz_decoded(gf_lease_decode_text((const char *)data, size, &r, rv, sizeof(rv), err, sizeof(err)), err))
		return 0;
	cJSON *o = gf_lease_encode("ns", "name", rv, &r);
	if (!o)
		return 0;
	if (gf_lease_decode(o, &r2, rv2, sizeof(rv2), err, sizeof(err)) || memcmp(&r, &r2, sizeof(r)) ||
	    strcmp(rv, rv2))
		abort();
	cJSON_Delete(o);
	struct gf_lease_elector el;
	gf_lease_elector_init(&el, "fuzz-me", 15, 10, 2);
	enum gf_lease_step s = gf_lease_plan(&el, &r, rv, 1.0, "T", &w);
	if (s != GF_LEASE_WAIT && strcmp(w.holder, "fuzz-me"))
		abort();
	return 0;
}
