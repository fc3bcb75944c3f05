/*
 * queue/queuedef.c - the Queue validator and the quotas made from Queues
 * (queuedef.h).
 *
 * Every rule about what a Queue may say lives here, once: the YAML decoder
 * (the replay's file) and the JSON decoder (the API server's objects) hand
 * in what they read and report what this returns, prefixed with where they
 * read it.  The order of the checks is the order of the fields in the CRD,
 * so both decoders name the same first fault for the same object.
 */
#include "core/grow.h"
#include "queue/queuedef.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static gf_err verr(struct gf_queue_verr *e, const char *path, const char *what)
{
	snprintf(e->path, sizeof(e->path), "%s", path);
	snprintf(e->what, sizeof(e->what), "%s", what);
	return GF_PARSE;
}

void gf_queue_object_str(char out[GF_QUEUE_NAME_MAX + 1], const char *s, size_t len)
{
	if (len > GF_QUEUE_NAME_MAX)
		len = GF_QUEUE_NAME_MAX;
	memcpy(out, s, len);
	out[len] = 0;
}

/* [a-z0-9]([-a-z0-9.]*[a-z0-9])?, 1..63 bytes (a DNS-label-like name). */
static gf_err name_rule(const char *s, const char *path, struct gf_queue_verr *e)
{
	size_t len = strlen(s);

	if (len == 0 || len >= GF_QUEUE_NAME_MAX)
		return verr(e, path, "expected a name of 1 to 63 characters");
	for (size_t i = 0; i < len; i++) {
		char ch = s[i];
		bool alnum = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');

		if (!alnum && !((ch == '-' || ch == '.') && i > 0 && i + 1 < len))
			return verr(e, path, "expected lower-case letters, digits, '-' and '.' (not at the ends)");
	}
	return GF_OK;
}

static gf_err range(int64_t v, int64_t lo, int64_t hi, const char *path, struct gf_queue_verr *e)
{
	char what[160];

	if (v >= lo && v <= hi)
		return GF_OK;
	if (v == INT64_MAX || v == INT64_MIN)
		snprintf(what, sizeof(what), "out of range, expected %lld..%lld", (long long)lo, (long long)hi);
	else
		snprintf(what, sizeof(what), "%lld is outside %lld..%lld", (long long)v, (long long)lo, (long long)hi);
	return verr(e, path, what);
}

/* {gpus, gpuMilli} at path into milli-GPU. */
static gf_err amount(const struct gf_queue_amount *a, const char *path, int64_t *out, struct gf_queue_verr *e)
{
	char sub[96];
	gf_err r;

	snprintf(sub, sizeof(sub), "%.80s.gpus", path);
	if ((r = range(a->gpus, 0, GF_QUEUE_GPUS_MAX, sub, e)))
		return r;
	snprintf(sub, sizeof(sub), "%.80s.gpuMilli", path);
	if ((r = range(a->gpu_milli, 0, GF_QUEUE_MILLI_MAX, sub, e)))
		return r;
	*out = a->gpus * 1000 + a->gpu_milli;
	return GF_OK;
}

gf_err gf_queue_validate(const struct gf_queue_object *o, struct gf_queue_def *out, struct gf_queue_verr *e)
{
	gf_err r;

	memset(out, 0, sizeof(*out));
	out->borrowing_limit = out->lending_limit = GF_QUOTA_UNLIMITED;
	out->weight = GF_QUEUE_WEIGHT_DEFAULT;
	out->ordering = GF_QUEUE_ORDERING_DEFAULT;
	if (!o->has_name)
		return verr(e, "metadata.name", "missing");
	if ((r = name_rule(o->name, "metadata.name", e)))
		return r;
	memcpy(out->name, o->name, strlen(o->name) + 1);
	if (!o->has_spec)
		return verr(e, "spec", "missing");
	if (o->has_cohort && o->cohort[0]) {
		if ((r = name_rule(o->cohort, "spec.cohort", e)))
			return r;
		memcpy(out->cohort, o->cohort, strlen(o->cohort) + 1);
	}
	if (o->has_weight) {
		if ((r = range(o->weight, GF_QUEUE_WEIGHT_MIN, GF_QUEUE_WEIGHT_MAX, "spec.weight", e)))
			return r;
		out->weight = (uint32_t)o->weight;
	}
	if (o->has_ordering) {
		if (!strcmp(o->ordering, "strict"))
			out->ordering = GF_ORDER_STRICT;
		else if (!strcmp(o->ordering, "skip-ahead"))
			out->ordering = GF_ORDER_SKIP_AHEAD;
		else if (!strcmp(o->ordering, "backfill"))
			out->ordering = GF_ORDER_BACKFILL;
		else
			return verr(e, "spec.ordering", "expected strict, skip-ahead or backfill");
	}
	if (o->nominal.set && (r = amount(&o->nominal, "spec.nominalQuota", &out->nominal, e)))
		return r;
	if (o->borrowing.set && (r = amount(&o->borrowing, "spec.borrowingLimit", &out->borrowing_limit, e)))
		return r;
	if (o->lending.set && (r = amount(&o->lending, "spec.lendingLimit", &out->lending_limit, e)))
		return r;
	if (o->nmodels > GF_QUEUE_MODELS_MAX) {
		char what[64];

		snprintf(what, sizeof(what), "more than %d models", GF_QUEUE_MODELS_MAX);
		return verr(e, "spec.models", what);
	}
	for (uint32_t i = 0; i < o->nmodels; i++) {
		char sub[96];
		size_t len = strlen(o->models[i].model);

		snprintf(sub, sizeof(sub), "spec.models[%u].model", i);
		if (!o->models[i].has_model)
			return verr(e, sub, "missing");
		if (len == 0 || len >= GF_QUEUE_NAME_MAX)
			return verr(e, sub, "expected a GPU model name of 1 to 63 characters");
		for (uint32_t k = 0; k < i; k++)
			if (!strcmp(o->models[k].model, o->models[i].model))
				return verr(e, sub, "the model is listed twice");
		snprintf(sub, sizeof(sub), "spec.models[%u].nominalQuota", i);
		if (o->models[i].nominal.set && (r = amount(&o->models[i].nominal, sub, &out->models[i].nominal, e)))
			return r;
		memcpy(out->models[i].model, o->models[i].model, len + 1);
	}
	out->nmodels = o->nmodels;
	if (out->lending_limit != GF_QUOTA_UNLIMITED && out->lending_limit > out->nominal)
		return verr(e, "spec.lendingLimit", "above the nominal quota");
	if (!out->cohort[0] && (out->lending_limit != GF_QUOTA_UNLIMITED || out->borrowing_limit != GF_QUOTA_UNLIMITED))
		return verr(e, out->lending_limit != GF_QUOTA_UNLIMITED ? "spec.lendingLimit" : "spec.borrowingLimit",
			    "needs spec.cohort (a queue outside a cohort neither lends nor borrows)");
	return GF_OK;
}

gf_err gf_queue_file_add(struct gf_queue_file *f, size_t *cap, const struct gf_queue_def *d,
			 struct gf_queue_verr *e)
{
	if (f->n == GF_LOOP_MAX_QUEUES) {
		char what[64];

		snprintf(what, sizeof(what), "more than %d queues", GF_LOOP_MAX_QUEUES);
		return verr(e, "kind", what);
	}
	for (size_t k = 0; k < f->n; k++)
		if (!strcmp(f->q[k].name, d->name))
			return verr(e, "metadata.name", "a second queue of this name");
	gf_err e2 = gf_grow(&f->q, cap, f->n + 1, sizeof(*f->q), 8);

	if (e2 != GF_OK)
		return e2;
	f->q[f->n++] = *d;
	return GF_OK;
}

void gf_queue_file_release(struct gf_queue_file *f)
{
	free(f->q);
	f->q = NULL;
	f->n = 0;
}

int gf_queue_file_find(const struct gf_queue_file *f, const char *name)
{
	for (size_t i = 0; i < f->n; i++)
		if (!strcasecmp(f->q[i].name, name))
			return (int)i;
	return -1;
}

gf_err gf_queues_to_quota(const struct gf_queue_file *f, const struct gf_catalog *cat, const char *file,
			  struct gf_queue_quota *out, struct gf_queues_error *err)
{
	for (size_t i = 0; i < f->n; i++) {
		const struct gf_queue_def *d = &f->q[i];
		struct gf_queue_quota *q = &out[i];

		memset(q, 0, sizeof(*q));
		q->nominal = d->nominal;
		q->borrowing_limit = d->borrowing_limit;
		q->lending_limit = d->lending_limit;
		q->weight = d->weight;
		q->ordering = d->ordering;
		q->cohort = -1;
		if (d->cohort[0]) {	/* cohorts numbered by first appearance */
			int32_t next = 0;

			for (size_t k = 0; k < i && q->cohort < 0; k++) {
				if (!strcmp(f->q[k].cohort, d->cohort))
					q->cohort = out[k].cohort;
				else if (out[k].cohort >= next)
					next = out[k].cohort + 1;
			}
			if (q->cohort < 0)
				q->cohort = next;
		}
		q->nmodels = d->nmodels;
		for (uint32_t m = 0; m < d->nmodels; m++) {
			int id = -1;

			for (int k = 0; k < cat->nmodels; k++)
				if (!strcmp(cat->models[k], d->models[m].model))
					id = k;
			if (id < 0) {
				snprintf(err->msg, sizeof(err->msg), "%s:%d: spec.models[%u].model: no node has GPU model %s",
					 file, d->models[m].line, m, d->models[m].model);
				return GF_PARSE;
			}
			q->models[m].model = id;
			q->models[m].nominal = d->models[m].nominal;
		}
	}
	return GF_OK;
}
