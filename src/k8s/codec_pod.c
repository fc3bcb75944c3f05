/*
 * k8s/codec_pod.c - a Pod's JSON to struct gf_k8s_pod (codec.h says what is
 * read and what makes a pod invalid for the scheduler).
 *
 * One walk over the object with the path stack (codec_impl.h): metadata,
 * the scheduler's annotations, every container's and init container's
 * requests and limits (the pod's request is max(sum of containers, largest
 * init container), as the kubelet computes it), tolerations, affinity, the
 * scheduling group, preemption policy and deadline, status.  Wrong JSON
 * types are GF_PARSE naming the path; values gpufleet cannot represent set
 * p->invalid with the reason and are no error.  Linear in the object's size.
 */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "k8s/codec.h"
#include "k8s/codec_impl.h"

/* ---- pods -------------------------------------------------------------- */

struct req {
	int64_t cpu, mem_bytes_milli, gpu, milli, gmem, count;
	bool has_gpu, has_milli, has_gmem, has_count;
	const char *milli_text; /* milli as written (in the pod's JSON), for messages */
};

static bool our_namespace(const char *k)
{
	return !strncmp(k, "gpufleet.io/", 12) || !strncmp(k, "nvidia.com/", 11);
}

/*
 * gpufleet.io/gpu-milli's text, as a resource or an annotation: the one rule
 * (gf_gpu_milli_parse).  Junk is a decode error here; digits outside
 * 1..1000 come back as the value, for the pod's `invalid` message.
 */
static gf_err milli_text(struct dec *d, const char *key, const char *s, int64_t *v)
{
	int m;
	if (gf_gpu_milli_parse(s, strlen(s), &m) == GF_PARSE) {
		size_t o = gf_kdec_push_key(d, key);
		gf_err e = gf_kdec_fail(d, "expected a whole number of milli-GPU in digits, 1..1000, got \"%.40s\"", s);
		gf_kdec_pop(d, o);
		return e;
	}
	*v = m;
	return GF_OK;
}

static gf_err resource_map(struct dec *d, const cJSON *map, struct req *r, struct gf_k8s_pod *p)
{
	gf_err e = gf_kdec_check_str_map(d, map);
	if (e)
		return e;
	bool f;
	int64_t v;
	const cJSON *it;
	cJSON_ArrayForEach(it, map)
	{
		const char *k = it->string;
		if (!strcmp(k, GF_RES_MILLI)) { /* not a quantity: the one rule for milli */
			if ((e = milli_text(d, k, it->valuestring, &v)))
				return e;
			r->milli = v, r->has_milli = true, r->milli_text = it->valuestring;
			continue;
		}
		if ((e = gf_kdec_quantity(d, map, k, &v, &f)))
			return e;
		if (!strcmp(k, "cpu")) {
			r->cpu = v;
		} else if (!strcmp(k, "memory")) {
			r->mem_bytes_milli = v;
		} else if (!strcmp(k, GF_RES_GPU) || !strcmp(k, GF_RES_GPU_MEM) || !strcmp(k, GF_RES_COUNT)) {
			if (v % 1000) {
				size_t o = gf_kdec_push_key(d, k);
				e = gf_kdec_fail(d, "expected a whole number, got \"%.40s\"", it->valuestring);
				gf_kdec_pop(d, o);
				return e;
			}
			v /= 1000;
			if (!strcmp(k, GF_RES_GPU))
				r->gpu = v, r->has_gpu = true;
			else if (!strcmp(k, GF_RES_GPU_MEM))
				r->gmem = v, r->has_gmem = true;
			else
				r->count = v, r->has_count = true;
		} else if (our_namespace(k) && !p->invalid[0]) {
			snprintf(p->invalid, sizeof(p->invalid),
				 "unknown resource %.60s (known: " GF_RES_GPU ", " GF_RES_MILLI ", "
				 GF_RES_GPU_MEM ", " GF_RES_COUNT ")", k);
		}
	}
	return GF_OK;
}

/* One container's request: requests, with limits filling what requests lack. */
static gf_err container(struct dec *d, const cJSON *c, struct req *r, struct gf_k8s_pod *p)
{
	memset(r, 0, sizeof(*r));
	if (!cJSON_IsObject(c))
		return gf_kdec_fail(d, "expected an object, got %s", gf_kdec_type_name(c));
	const cJSON *res, *lim, *rq;
	gf_err e = gf_kdec_member(d, c, "resources", cJSON_Object, &res);
	if (e || !res)
		return e;
	size_t o = gf_kdec_push(d, ".resources");
	if ((e = gf_kdec_member(d, res, "limits", cJSON_Object, &lim)) ||
	    (e = gf_kdec_member(d, res, "requests", cJSON_Object, &rq)))
		goto out;
	struct req rl = { 0 };
	if (lim) {
		size_t o2 = gf_kdec_push(d, ".limits");
		e = resource_map(d, lim, &rl, p);
		gf_kdec_pop(d, o2);
		if (e)
			goto out;
	}
	if (rq) {
		size_t o2 = gf_kdec_push(d, ".requests");
		e = resource_map(d, rq, r, p);
		gf_kdec_pop(d, o2);
		if (e)
			goto out;
	}
	const cJSON *x;
	if (!r->cpu && lim && (x = cJSON_GetObjectItemCaseSensitive(lim, "cpu")))
		r->cpu = rl.cpu;
	if (!r->mem_bytes_milli && lim && (x = cJSON_GetObjectItemCaseSensitive(lim, "memory")))
		r->mem_bytes_milli = rl.mem_bytes_milli;
	/* Extended resources: limits are the truth (requests default to them). */
	if (rl.has_gpu)
		r->gpu = rl.gpu, r->has_gpu = true;
	if (rl.has_milli)
		r->milli = rl.milli, r->has_milli = true, r->milli_text = rl.milli_text;
	if (rl.has_gmem)
		r->gmem = rl.gmem, r->has_gmem = true;
	if (rl.has_count)
		r->count = rl.count, r->has_count = true;
out:
	gf_kdec_pop(d, o);
	return e;
}

static gf_err containers(struct dec *d, const cJSON *spec, const char *key, bool init,
			 struct req *total, struct gf_k8s_pod *p)
{
	const cJSON *arr;
	gf_err e = gf_kdec_member(d, spec, key, cJSON_Array, &arr);
	if (e || !arr)
		return e;
	int i = 0;
	const cJSON *c;
	cJSON_ArrayForEach(c, arr)
	{
		struct req r;
		size_t o = gf_kdec_push(d, ".%s[%d]", key, i++);
		e = container(d, c, &r, p);
		gf_kdec_pop(d, o);
		if (e)
			return e;
		if (init) {
			/* Init containers run one at a time: the max counts. */
			if (r.cpu > total->cpu) total->cpu = r.cpu;
			if (r.mem_bytes_milli > total->mem_bytes_milli) total->mem_bytes_milli = r.mem_bytes_milli;
			if (r.gpu > total->gpu) total->gpu = r.gpu;
		} else {
			total->cpu += r.cpu;
			total->mem_bytes_milli += r.mem_bytes_milli;
			total->gpu += r.gpu;
		}
		total->has_gpu |= r.has_gpu;
		if (r.has_milli && (!total->has_milli || r.milli > total->milli))
			total->milli = r.milli, total->has_milli = true, total->milli_text = r.milli_text;
		if (r.has_gmem && (!total->has_gmem || r.gmem > total->gmem))
			total->gmem = r.gmem, total->has_gmem = true;
		if (r.has_count && (!total->has_count || r.count > total->count))
			total->count = r.count, total->has_count = true;
	}
	return GF_OK;
}

/* An annotation holding a whole number; *found false if absent. */
static gf_err ann_int(struct dec *d, const cJSON *ann, const char *key, int64_t *v, bool *found)
{
	const char *s;
	*found = false;
	gf_err e = gf_kdec_map_str(d, ann, key, &s);
	if (e || !s)
		return e;
	char *end;
	long long x = strtoll(s, &end, 10);
	if (end == s || *end) {
		size_t o = gf_kdec_push_key(d, key);
		e = gf_kdec_fail(d, "expected a whole number, got \"%.40s\"", s);
		gf_kdec_pop(d, o);
		return e;
	}
	*v = x;
	*found = true;
	return GF_OK;
}

/* The model constraint from node affinity: required terms, key product, operator In. */
static gf_err affinity_model(struct dec *d, const cJSON *spec, char *out, size_t cap)
{
	const cJSON *aff = cJSON_GetObjectItemCaseSensitive(spec, "affinity");
	const cJSON *na = cJSON_GetObjectItemCaseSensitive(aff, "nodeAffinity");
	const cJSON *req = cJSON_GetObjectItemCaseSensitive(
		na, "requiredDuringSchedulingIgnoredDuringExecution");
	const cJSON *terms = cJSON_GetObjectItemCaseSensitive(req, "nodeSelectorTerms");
	const cJSON *t;
	(void)d;
	if (!cJSON_IsArray(terms))
		return GF_OK;
	cJSON_ArrayForEach(t, terms)
	{
		const cJSON *exprs = cJSON_GetObjectItemCaseSensitive(t, "matchExpressions"), *x;
		if (!cJSON_IsArray(exprs))
			continue;
		cJSON_ArrayForEach(x, exprs)
		{
			const char *key = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(x, "key"));
			const char *op = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(x, "operator"));
			const cJSON *vals = cJSON_GetObjectItemCaseSensitive(x, "values"), *v;
			if (!key || !op || strcmp(key, GF_LABEL_PRODUCT) || strcmp(op, "In") ||
			    !cJSON_IsArray(vals))
				continue;
			size_t n = 0;
			out[0] = '\0';
			cJSON_ArrayForEach(v, vals)
			{
				if (!cJSON_IsString(v))
					continue;
				int k = snprintf(out + n, cap - n, "%s%s", n ? "|" : "", v->valuestring);
				if (k < 0 || (size_t)k >= cap - n)
					break;
				n += (size_t)k;
			}
			return GF_OK; /* the first matching expression decides */
		}
	}
	return GF_OK;
}

/* "0,3,5" -> gpus; false if malformed. */
static bool parse_gpu_list(const char *s, uint8_t *gpus, int *n)
{
	*n = 0;
	uint32_t seen = 0;
	while (*s) {
		if (!isdigit((unsigned char)*s))
			return false;
		char *end;
		long g = strtol(s, &end, 10);
		if (g < 0 || g >= GF_MAX_GPUS || (seen >> g) & 1 || *n >= GF_MAX_GPUS)
			return false;
		seen |= 1u << g;
		gpus[(*n)++] = (uint8_t)g;
		s = end;
		if (*s == ',')
			s++;
		else if (*s)
			return false;
	}
	return *n > 0;
}

size_t gf_k8s_served_identity(const cJSON *pod, char *out, size_t n)
{
	const cJSON *md = cJSON_GetObjectItemCaseSensitive(pod, "metadata");
	const cJSON *spec = cJSON_GetObjectItemCaseSensitive(pod, "spec");
	const char *id = cJSON_GetStringValue(
		cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(md, "labels"),
						 GF_LABEL_SERVED_MODEL));
	if (!id || !*id) {
		const cJSON *cs = cJSON_GetObjectItemCaseSensitive(spec, "containers");
		id = cJSON_IsArray(cs) ? gf_kdec_obj_str(cJSON_GetArrayItem(cs, 0), "image") : "";
	}
	size_t len = strlen(id);
	if (!n || len >= n || strchr(id, ',')) {
		if (n)
			out[0] = '\0';
		return 0;
	}
	memcpy(out, id, len + 1);
	return len;
}

/* spec.schedulingGroup.podGroupName (the Workload API's group), under "spec". */
static gf_err sched_group(struct dec *d, const cJSON *spec, struct gf_k8s_pod *p)
{
	const cJSON *sg;
	gf_err e = gf_kdec_member(d, spec, "schedulingGroup", cJSON_Object, &sg);
	if (e || !sg)
		return e;
	size_t o = gf_kdec_push(d, ".schedulingGroup");
	e = gf_kdec_str_member(d, sg, "podGroupName", p->sched_group, sizeof(p->sched_group));
	gf_kdec_pop(d, o);
	return e;
}

/* spec.preemptionPolicy (filled from the PriorityClass by the API server's admission). */
static gf_err preemption_policy(struct dec *d, const cJSON *spec, struct gf_k8s_pod *p)
{
	const cJSON *v;
	gf_err e = gf_kdec_member(d, spec, "preemptionPolicy", cJSON_String, &v);
	if (e || !v)
		return e;
	if (!strcmp(v->valuestring, "Never"))
		p->preempt_never = true;
	else if (strcmp(v->valuestring, "PreemptLowerPriority")) {
		size_t o = gf_kdec_push_key(d, "preemptionPolicy");
		e = gf_kdec_fail(d, "expected Never or PreemptLowerPriority");
		gf_kdec_pop(d, o);
	}
	return e;
}

/* spec.activeDeadlineSeconds: a whole number of seconds >= 1 (the API server's rule), up to 2^53. */
static gf_err active_deadline(struct dec *d, const cJSON *spec, struct gf_k8s_pod *p)
{
	const cJSON *v;
	gf_err e = gf_kdec_member(d, spec, "activeDeadlineSeconds", cJSON_Number, &v);
	if (e || !v)
		return e;
	double x = v->valuedouble;
	if (!(x >= 1 && x <= 9007199254740992.0) || x != (double)(int64_t)x) {
		size_t o = gf_kdec_push_key(d, "activeDeadlineSeconds");
		e = gf_kdec_fail(d, "expected a whole number of seconds 1..9007199254740992, got %g", x);
		gf_kdec_pop(d, o);
		return e;
	}
	p->deadline_s = (int64_t)x;
	return GF_OK;
}

static gf_err pod_decode(struct dec *d, const cJSON *obj, struct gf_k8s_pod *p)
{
	memset(p, 0, sizeof(*p));
	p->req.duration = -1;
	if (!cJSON_IsObject(obj))
		return gf_kdec_fail(d, "expected a Pod object, got %s", gf_kdec_type_name(obj));
	const cJSON *md, *spec, *status, *ann = NULL, *labels = NULL, *x;
	gf_err e;
	if ((e = gf_kdec_member(d, obj, "metadata", cJSON_Object, &md)) ||
	    (e = gf_kdec_member(d, obj, "spec", cJSON_Object, &spec)) ||
	    (e = gf_kdec_member(d, obj, "status", cJSON_Object, &status)))
		return e;
	if (!md)
		return gf_kdec_fail(d, "a Pod needs metadata");
	size_t o = gf_kdec_push(d, "metadata");
	if ((e = gf_kdec_str_member(d, md, "namespace", p->ns, sizeof(p->ns))) ||
	    (e = gf_kdec_str_member(d, md, "name", p->name, sizeof(p->name))) ||
	    (e = gf_kdec_str_member(d, md, "uid", p->uid, sizeof(p->uid))) ||
	    (e = gf_kdec_str_member(d, md, "resourceVersion", p->rv, sizeof(p->rv))) ||
	    (e = gf_kdec_member(d, md, "annotations", cJSON_Object, &ann)) ||
	    (e = gf_kdec_member(d, md, "labels", cJSON_Object, &labels)) ||
	    (e = gf_kdec_member(d, md, "deletionTimestamp", cJSON_String, &x)))
		goto out;
	p->deleting = x != NULL;
	if (labels) {
		size_t o2 = gf_kdec_push(d, ".labels");
		e = gf_kdec_str_member(d, labels, GF_LABEL_POD_GROUP, p->pod_group, sizeof(p->pod_group));
		if (!e)
			e = gf_kdec_str_member(d, labels, GF_LABEL_QUEUE, p->queue, sizeof(p->queue));
		if (!e)
			e = gf_kdec_member(d, labels, GF_LABEL_KUEUE_QUEUE, cJSON_String, &x);
		p->kueue = !e && x != NULL;
		gf_kdec_pop(d, o2);
		if (e)
			goto out;
	}
	if (!p->name[0]) {
		e = gf_kdec_fail(d, "a Pod needs metadata.name");
		goto out;
	}
	if (!p->ns[0])
		snprintf(p->ns, sizeof(p->ns), "default");
	if (ann) {
		size_t o2 = gf_kdec_push(d, ".annotations");
		e = gf_kdec_check_str_map(d, ann);
		gf_kdec_pop(d, o2);
		if (e)
			goto out;
	}
	if (labels) {
		size_t o2 = gf_kdec_push(d, ".labels");
		e = gf_kdec_check_str_map(d, labels);
		gf_kdec_pop(d, o2);
		if (e)
			goto out;
		const cJSON *kv;
		cJSON_ArrayForEach(kv, labels)
		{
			if (!gf_kdec_pack_kv(p->labels, sizeof(p->labels), &p->labels_len, kv->string, kv->valuestring))
				p->labels_truncated = true;
		}
	}
	gf_kdec_pop(d, o);
	snprintf(p->req.name, sizeof(p->req.name), "%.20s/%.40s", p->ns, p->name);
	snprintf(p->scheduler, sizeof(p->scheduler), "default-scheduler");

	struct req tot = { 0 };
	if (spec) {
		o = gf_kdec_push(d, "spec");
		if ((e = gf_kdec_str_member(d, spec, "nodeName", p->node, sizeof(p->node))) ||
		    (e = gf_kdec_str_member(d, spec, "schedulerName", p->scheduler, sizeof(p->scheduler))) ||
		    (e = sched_group(d, spec, p)) ||
		    /* filled from the PriorityClass by the API server's admission */
		    (e = gf_kdec_int32_member(d, spec, "priority", INT32_MIN, &p->req.priority)) ||
		    (e = containers(d, spec, "containers", false, &tot, p)))
			goto out;
		struct req init = { 0 };
		if ((e = containers(d, spec, "initContainers", true, &init, p)))
			goto out;
		if ((e = preemption_policy(d, spec, p)) || (e = active_deadline(d, spec, p)))
			goto out;
		if (init.cpu > tot.cpu) tot.cpu = init.cpu;
		if (init.mem_bytes_milli > tot.mem_bytes_milli) tot.mem_bytes_milli = init.mem_bytes_milli;
		if (init.gpu > tot.gpu) tot.gpu = init.gpu;
		tot.has_gpu |= init.has_gpu;
#define TAKE_MAX(f) if (init.has_##f && (!tot.has_##f || init.f > tot.f)) tot.f = init.f, tot.has_##f = true
		TAKE_MAX(milli);
		TAKE_MAX(gmem);
		TAKE_MAX(count);
#undef TAKE_MAX
		const cJSON *sel;
		if ((e = gf_kdec_member(d, spec, "nodeSelector", cJSON_Object, &sel)))
			goto out;
		if (sel) {
			size_t o2 = gf_kdec_push(d, ".nodeSelector");
			const char *m;
			e = gf_kdec_map_str(d, sel, GF_LABEL_PRODUCT, &m);
			if (!e)
				e = gf_kdec_check_str_map(d, sel);
			gf_kdec_pop(d, o2);
			if (e)
				goto out;
			if (m)
				snprintf(p->model, sizeof(p->model), "%s", m);
			const cJSON *kv;
			cJSON_ArrayForEach(kv, sel)
			{
				if (!gf_kdec_pack_kv(p->selector, sizeof(p->selector), &p->selector_len, kv->string,
					     kv->valuestring) && !p->invalid[0])
					snprintf(p->invalid, sizeof(p->invalid),
						 "spec.nodeSelector: more than %zu bytes are not supported by gpufleet",
						 sizeof(p->selector));
			}
		}
		if ((e = gf_kdec_pod_tolerations(d, spec, p)))
			goto out;
		gf_kdec_pod_affinity(spec, p);
		if (!p->model[0] && (e = affinity_model(d, spec, p->model, sizeof(p->model))))
			goto out;
		gf_kdec_pop(d, o);
	}
	if (status) {
		o = gf_kdec_push(d, "status");
		char phase[32] = "";
		if ((e = gf_kdec_str_member(d, status, "phase", phase, sizeof(phase))))
			goto out;
		gf_kdec_pop(d, o);
		p->phase = !strcmp(phase, "Running") ? GF_PHASE_RUNNING
			   : !strcmp(phase, "Succeeded") ? GF_PHASE_SUCCEEDED
			   : !strcmp(phase, "Failed") ? GF_PHASE_FAILED
			   : !strcmp(phase, "Unknown") ? GF_PHASE_UNKNOWN : GF_PHASE_PENDING;
	}

	{
		char id[GF_K8S_SERVED_MAX];
		size_t len = gf_k8s_served_identity(obj, id, sizeof(id));
		p->req.served_model = gf_served_model_key(id, len);
	}

	/* Annotations may carry the GPU request too (they win over resources). */
	if (ann) {
		o = gf_kdec_push(d, "metadata.annotations");
		bool f;
		int64_t v;
		const char *ms;
		if ((e = gf_kdec_map_str(d, ann, GF_RES_MILLI, &ms)) || (ms && (e = milli_text(d, GF_RES_MILLI, ms, &v))))
			goto out;
		if (ms)
			tot.milli = v, tot.has_milli = true, tot.milli_text = ms;
		if ((e = ann_int(d, ann, GF_RES_GPU_MEM, &v, &f)))
			goto out;
		if (f)
			tot.gmem = v, tot.has_gmem = true;
		if ((e = ann_int(d, ann, GF_RES_COUNT, &v, &f)))
			goto out;
		if (f)
			tot.count = v, tot.has_count = true;
		const char *m;
		if ((e = gf_kdec_map_str(d, ann, GF_ANN_MODEL, &m)))
			goto out;
		if (m)
			snprintf(p->model, sizeof(p->model), "%s", m);
		gf_kdec_pop(d, o);

		/* The assignment (malformed = absent: the pod is then re-read as unassigned). */
		const char *an = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ann, GF_ANN_NODE));
		const char *ag = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ann, GF_ANN_GPUS));
		const char *am = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ann, GF_ANN_AMILLI));
		const char *amem = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ann, GF_ANN_AMEM));
		int mm;
		if (an && ag && am && strlen(an) < sizeof(p->assigned_node)) {
			if (gf_gpu_milli_parse(am, strlen(am), &mm) == GF_OK &&
			    parse_gpu_list(ag, p->assigned_gpus, &p->assigned_ngpus)) {
				p->assigned = true;
				p->assigned_milli = mm;
				snprintf(p->assigned_node, sizeof(p->assigned_node), "%s", an);
				p->assigned_mem_mib = amem ? strtoll(amem, NULL, 10) : 0;
			}
		}
	}

	/* The request. */
	p->req.cpu_milli = tot.cpu;
	p->req.mem_mib = (tot.mem_bytes_milli + 1048576000LL - 1) / 1048576000LL;
	bool share = tot.has_milli || tot.has_gmem;
	if (tot.has_gpu && share && !p->invalid[0])
		snprintf(p->invalid, sizeof(p->invalid),
			 "asks both whole GPUs (" GF_RES_GPU ") and a GPU share (" GF_RES_MILLI
			 " or " GF_RES_GPU_MEM "); ask one");
	if (tot.has_gpu) {
		p->req.gpu_count = (int)(tot.gpu > 1000000 ? 1000000 : tot.gpu < -1 ? -1 : tot.gpu);
		p->req.gpu_milli = GF_MILLI_PER_GPU;
	} else if (share) {
		p->req.gpu_count = tot.has_count ? (int)(tot.count > 1000000 ? 1000000 : tot.count < -1 ? -1 : tot.count) : 1;
		p->req.gpu_milli = tot.has_milli ? (int)(tot.milli > 1000000 ? 1000000 : tot.milli < -1 ? -1 : tot.milli) : 0;
		p->milli_given = tot.has_milli;
		p->req.gpu_mem_mib = tot.has_gmem ? tot.gmem : 0;
		if (!p->invalid[0] && tot.has_milli && (tot.milli < 1 || tot.milli > GF_MILLI_PER_GPU))
			snprintf(p->invalid, sizeof(p->invalid),
				 GF_RES_MILLI " must be 1..1000 (thousandths of one GPU), got \"%.24s%s\"",
				 tot.milli_text ? tot.milli_text : "?",
				 tot.milli_text && strlen(tot.milli_text) > 24 ? "..." : "");
		if (!p->invalid[0] && tot.has_gmem && tot.gmem < 1)
			snprintf(p->invalid, sizeof(p->invalid),
				 GF_RES_GPU_MEM " must be >= 1 (MiB per GPU), got %lld", (long long)tot.gmem);
		if (!p->invalid[0] && !tot.has_milli)
			p->req.gpu_milli = GF_MILLI_PER_GPU; /* memory-only: the caller converts */
	}
	if (!p->invalid[0] && (p->req.gpu_count < 0 || (share && p->req.gpu_count < 1)))
		snprintf(p->invalid, sizeof(p->invalid), "GPU count must be >= %d, got %d",
			 share ? 1 : 0, p->req.gpu_count);
	if (!p->invalid[0] && p->req.gpu_count > GF_MAX_GPUS)
		snprintf(p->invalid, sizeof(p->invalid),
			 "asks %d GPUs; no node can have more than %d", p->req.gpu_count, GF_MAX_GPUS);
	if (!p->invalid[0] && (p->req.cpu_milli < 0 || p->req.mem_mib < 0))
		snprintf(p->invalid, sizeof(p->invalid), "negative CPU or memory request");
	if (p->invalid[0]) {
		p->req.gpu_count = 0;
		p->req.gpu_milli = 0;
		p->req.gpu_mem_mib = 0;
	}
	if (p->req.gpu_count == 0)
		p->req.gpu_milli = 0;
	return GF_OK;
out:
	return e;
}

gf_err gf_k8s_pod_decode(const cJSON *obj, struct gf_k8s_pod *out, char *err, size_t errlen)
{
	struct dec d = { .err = err, .errlen = errlen };
	return pod_decode(&d, obj, out);
}
