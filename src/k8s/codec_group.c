/*
 * k8s/codec_group.c - PodGroups of both APIs to struct gf_k8s_podgroup:
 * coscheduling's scheduling.x-k8s.io/v1alpha1 (spec.minMember) and the
 * Workload API's scheduling.k8s.io/v1alpha2 (a gang policy's minCount,
 * the template it was made from, its status).  Read only: the scheduler
 * places members all or nothing and reports status (sched_writes.c).
 * Errors name the path (codec_impl.h); linear in the object's size.
 */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "k8s/codec.h"
#include "k8s/codec_impl.h"

/* ---- pod groups ------------------------------------------------------- */


/* metadata of a group: ns (default "default"), name (required), uid, rv. */
static gf_err group_meta(struct dec *d, const cJSON *md, struct gf_k8s_podgroup *g)
{
	if (!md)
		return gf_kdec_fail(d, "a PodGroup needs metadata");
	size_t o = gf_kdec_push(d, "metadata");
	gf_err e;
	if ((e = gf_kdec_str_member(d, md, "namespace", g->ns, sizeof(g->ns))) ||
	    (e = gf_kdec_str_member(d, md, "name", g->name, sizeof(g->name))) ||
	    (e = gf_kdec_str_member(d, md, "uid", g->uid, sizeof(g->uid))) ||
	    (e = gf_kdec_str_member(d, md, "resourceVersion", g->rv, sizeof(g->rv))))
		return e;
	if (!g->name[0])
		return gf_kdec_fail(d, "a PodGroup needs metadata.name");
	gf_kdec_pop(d, o);
	if (!g->ns[0])
		snprintf(g->ns, sizeof(g->ns), "default");
	return GF_OK;
}

static gf_err podgroup_decode(struct dec *d, const cJSON *obj, struct gf_k8s_podgroup *g)
{
	memset(g, 0, sizeof(*g));
	if (!cJSON_IsObject(obj))
		return gf_kdec_fail(d, "expected a PodGroup object, got %s", gf_kdec_type_name(obj));
	const cJSON *md, *spec, *status;
	gf_err e;
	if ((e = gf_kdec_member(d, obj, "metadata", cJSON_Object, &md)) ||
	    (e = gf_kdec_member(d, obj, "spec", cJSON_Object, &spec)) ||
	    (e = gf_kdec_member(d, obj, "status", cJSON_Object, &status)) || (e = group_meta(d, md, g)))
		return e;
	size_t o;
	if (spec) {
		o = gf_kdec_push(d, "spec");
		if ((e = gf_kdec_int32_member(d, spec, "minMember", 1, &g->min_member)) ||
		    (e = gf_kdec_int32_member(d, spec, "scheduleTimeoutSeconds", 1, &g->timeout_s)))
			return e;
		gf_kdec_pop(d, o);
	}
	if (status) {
		o = gf_kdec_push(d, "status");
		if ((e = gf_kdec_str_member(d, status, "phase", g->phase, sizeof(g->phase))))
			return e;
		gf_kdec_pop(d, o);
	}
	return GF_OK;
}

gf_err gf_k8s_podgroup_decode(const cJSON *obj, struct gf_k8s_podgroup *out, char *err, size_t errlen)
{
	struct dec d = { .err = err, .errlen = errlen };
	return podgroup_decode(&d, obj, out);
}


/* ---- Workload API PodGroups (scheduling.k8s.io/v1alpha2) ---------------- */

/* spec.schedulingPolicy: exactly one of gang {minCount >= 1} and basic {}. */
static gf_err wl_policy(struct dec *d, const cJSON *spec, struct gf_k8s_podgroup *g)
{
	const cJSON *pol, *gang, *basic;
	gf_err e;
	if ((e = gf_kdec_member(d, spec, "schedulingPolicy", cJSON_Object, &pol)))
		return e;
	if (!pol)
		return gf_kdec_fail(d, "needs schedulingPolicy (gang or basic)");
	size_t o = gf_kdec_push(d, ".schedulingPolicy");
	if ((e = gf_kdec_member(d, pol, "gang", cJSON_Object, &gang)) || (e = gf_kdec_member(d, pol, "basic", cJSON_Object, &basic)))
		return e;
	if (!gang == !basic)
		return gf_kdec_fail(d, "expected exactly one of gang and basic");
	if (basic) {
		g->basic = true;
		g->min_member = 1;
	} else {
		size_t o2 = gf_kdec_push(d, ".gang");
		if ((e = gf_kdec_int32_member(d, gang, "minCount", 1, &g->min_member)))
			return e;
		if (!g->min_member)
			return gf_kdec_fail(d, "needs minCount");
		gf_kdec_pop(d, o2);
	}
	gf_kdec_pop(d, o);
	return GF_OK;
}

/* spec.podGroupTemplateRef.workload {workloadName, podGroupTemplateName}, optional. */
static gf_err wl_template_ref(struct dec *d, const cJSON *spec, struct gf_k8s_podgroup *g)
{
	const cJSON *ref, *wl;
	gf_err e;
	if ((e = gf_kdec_member(d, spec, "podGroupTemplateRef", cJSON_Object, &ref)) || !ref)
		return e;
	size_t o = gf_kdec_push(d, ".podGroupTemplateRef");
	if ((e = gf_kdec_member(d, ref, "workload", cJSON_Object, &wl)))
		return e;
	if (wl) {
		size_t o2 = gf_kdec_push(d, ".workload");
		if ((e = gf_kdec_str_member(d, wl, "workloadName", g->workload, sizeof(g->workload))) ||
		    (e = gf_kdec_str_member(d, wl, "podGroupTemplateName", g->template_name, sizeof(g->template_name))))
			return e;
		gf_kdec_pop(d, o2);
	}
	gf_kdec_pop(d, o);
	return GF_OK;
}

/* status.conditions[type=PodGroupScheduled]: "Scheduled" if True, else its reason. */
static gf_err wl_status(struct dec *d, const cJSON *status, struct gf_k8s_podgroup *g)
{
	const cJSON *conds, *c;
	gf_err e;
	if ((e = gf_kdec_member(d, status, "conditions", cJSON_Array, &conds)) || !conds)
		return e;
	int i = 0;
	cJSON_ArrayForEach(c, conds)
	{
		size_t o = gf_kdec_push(d, ".conditions[%d]", i++);
		if (!cJSON_IsObject(c))
			return gf_kdec_fail(d, "expected an object, got %s", gf_kdec_type_name(c));
		char type[64] = "", st[16] = "", reason[sizeof(g->phase)] = "";
		if ((e = gf_kdec_str_member(d, c, "type", type, sizeof(type))) ||
		    (e = gf_kdec_str_member(d, c, "status", st, sizeof(st))) ||
		    (e = gf_kdec_str_member(d, c, "reason", reason, sizeof(reason))))
			return e;
		gf_kdec_pop(d, o);
		if (strcmp(type, "PodGroupScheduled"))
			continue;
		snprintf(g->phase, sizeof(g->phase), "%s",
			 !strcmp(st, "True") ? "Scheduled" : reason[0] ? reason : "NotScheduled");
	}
	return GF_OK;
}

static gf_err wl_podgroup_decode(struct dec *d, const cJSON *obj, struct gf_k8s_podgroup *g)
{
	memset(g, 0, sizeof(*g));
	g->api = GF_GANG_WORKLOAD;
	if (!cJSON_IsObject(obj))
		return gf_kdec_fail(d, "expected a PodGroup object, got %s", gf_kdec_type_name(obj));
	const cJSON *md, *spec, *status;
	gf_err e;
	if ((e = gf_kdec_member(d, obj, "metadata", cJSON_Object, &md)) ||
	    (e = gf_kdec_member(d, obj, "spec", cJSON_Object, &spec)) ||
	    (e = gf_kdec_member(d, obj, "status", cJSON_Object, &status)) || (e = group_meta(d, md, g)))
		return e;
	if (!spec)
		return gf_kdec_fail(d, "a PodGroup needs spec.schedulingPolicy");
	size_t o = gf_kdec_push(d, "spec");
	if ((e = wl_policy(d, spec, g)) || (e = wl_template_ref(d, spec, g)))
		return e;
	gf_kdec_pop(d, o);
	if (status) {
		o = gf_kdec_push(d, "status");
		if ((e = wl_status(d, status, g)))
			return e;
		gf_kdec_pop(d, o);
	}
	return GF_OK;
}

gf_err gf_k8s_wl_podgroup_decode(const cJSON *obj, struct gf_k8s_podgroup *out, char *err, size_t errlen)
{
	struct dec d = { .err = err, .errlen = errlen };
	return wl_podgroup_decode(&d, obj, out);
}
