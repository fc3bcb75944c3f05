/*
 * fuzz/fuzz_k8s_wl_podgroup.c - libFuzzer harness for the Workload API
 * PodGroup decoder (scheduling.k8s.io/v1alpha2, k8s/codec.c) and the gang
 * store (k8s/gangs.c) with both APIs in it.
 *
 * The input is a PodGroup as a watch would deliver it.  The decoder must
 * return GF_OK or GF_PARSE with a message naming where; a decoded group is
 * a Workload API group with a name and a minimum of at least 1 (basic: 1).
 * Stored beside a coscheduling group of the same namespace and name, it is
 * found for a pod whose spec.schedulingGroup names it (the Workload API
 * wins over the label), the label-only pod finds the other one, and
 * forgetting it leaves the other.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzzutil.h"
#include "k8s/codec.h"
#include "k8s/gangs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct gf_k8s_podgroup g, co;
	char err[300] = "";
	if (!gf_fuzz_decoded(gf_k8s_wl_podgroup_decode_text((const char *)data, size, &g, err, sizeof(err)), err))
		return 0;
	if (g.api != GF_GANG_WORKLOAD || !g.name[0] || !g.ns[0] || g.min_member < 1 || (g.basic && g.min_member != 1))
		abort();
	gf_gangs *s;
	if (gf_gangs_create(&s))
		return 0;
	co = g;
	co.api = GF_GANG_COSCHEDULING;
	co.min_member = g.min_member == INT32_MAX ? 1 : g.min_member + 1;
	if (!gf_gangs_set(s, &g) && !gf_gangs_set(s, &co)) {
		if (gf_gangs_count(s) != 2 || gf_gangs_count_api(s, GF_GANG_WORKLOAD) != 1)
			abort();
		static struct gf_k8s_pod p;
		memset(&p, 0, sizeof(p));
		memcpy(p.ns, g.ns, sizeof(p.ns));
		memcpy(p.sched_group, g.name, sizeof(p.sched_group));
		size_t n = strlen(g.name);
		if (n < GF_K8S_LABEL_VALUE_MAX)
			memcpy(p.pod_group, g.name, n + 1);
		struct gf_gang_ref r;
		if (!gf_gangs_of_pod(s, &p, &r) || !r.known || r.api != GF_GANG_WORKLOAD || r.min_member != g.min_member)
			abort();
		if (n < GF_K8S_LABEL_VALUE_MAX) {
			p.sched_group[0] = '\0';
			if (!gf_gangs_of_pod(s, &p, &r) || !r.known || r.api != GF_GANG_COSCHEDULING ||
			    r.min_member != co.min_member)
				abort();
		}
		gf_gangs_unset(s, &g);
		if (gf_gangs_count(s) != 1 || gf_gangs_get(s, GF_GANG_WORKLOAD, g.ns, g.name) ||
		    !gf_gangs_get(s, GF_GANG_COSCHEDULING, g.ns, g.name))
			abort();
	}
	gf_gangs_destroy(s);
	return 0;
}
