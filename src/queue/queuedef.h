/*
 * queue/queuedef.h - the GPUQueue (gpufleet.io/v1alpha1): one definition, one
 * validator, and the engine's quotas made from it.
 *
 * A GPUQueue has one shape, the CustomResourceDefinition's
 * (deploy/crds/queue.yaml, gpuqueues.gpufleet.io), whether a user `kubectl
 * apply`s it or hands it to `gpufleet replay --queues`:
 *
 *   apiVersion: gpufleet.io/v1alpha1
 *   kind: GPUQueue
 *   metadata:
 *     name: training                # [a-z0-9]([-a-z0-9.]*[a-z0-9])?, <= 63
 *   spec:                           # required
 *     nominalQuota: {gpus: 64, gpuMilli: 500}   # milli-GPU = gpus x 1000 + gpuMilli
 *     borrowingLimit: {gpus: 16}    # optional; absent: no limit
 *     lendingLimit: {gpus: 8}       # optional; absent: all of the nominal quota
 *     cohort: research              # optional; absent or "": borrows and lends nothing
 *     weight: 2                     # optional, 1..1000000 [1]
 *     ordering: backfill            # optional: strict | skip-ahead | backfill [skip-ahead]
 *     models:                       # optional, at most 8: quota per GPU model
 *       - {model: V100M32, nominalQuota: {gpus: 32}}
 *
 * The decoders (YAML for the replay's file, JSON for the API server's
 * objects) only map syntax into a struct gf_queue_object: which keys were
 * given, integers and strings as written, type errors and unknown keys.
 * gf_queue_validate() alone decides what is allowed and fills the defaults;
 * the GF_QUEUE_* limits below are the CRD schema's minimums, maximums, enum
 * and defaults (tests/test_queuedef.c reads the CRD and checks each).
 *
 * Pure: no I/O, no clock.
 */
#ifndef GF_QUEUE_QUEUEDEF_H
#define GF_QUEUE_QUEUEDEF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "queue/loop.h"

#define GF_QUEUE_NAME_MAX 64			/* bytes with the NUL: names of 1..63 */
#define GF_QUEUE_GPUS_MAX 1000000LL		/* gpus: 0..this */
#define GF_QUEUE_MILLI_MAX 1000000000LL		/* gpuMilli: 0..this */
#define GF_QUEUE_WEIGHT_MIN 1
#define GF_QUEUE_WEIGHT_MAX 1000000
#define GF_QUEUE_WEIGHT_DEFAULT 1
#define GF_QUEUE_MODELS_MAX GF_QUOTA_MAX_MODELS	/* spec.models: at most this many */
#define GF_QUEUE_ORDERING_DEFAULT GF_ORDER_SKIP_AHEAD
#define GF_QUEUE_ORDERING_DEFAULT_NAME "skip-ahead"

/* {gpus, gpuMilli} as written (any integer: the validator checks the range). */
struct gf_queue_amount {
	bool set;		/* the object was given */
	int64_t gpus, gpu_milli;
};

/*
 * One Queue object as a decoder maps it, before validation.  Strings are
 * copied up to GF_QUEUE_NAME_MAX bytes (a longer one is then refused for its
 * length); integers a decoder cannot hold are clamped to INT64_MIN/MAX.
 */
struct gf_queue_object {
	bool has_name, has_spec, has_cohort, has_weight, has_ordering;
	char name[GF_QUEUE_NAME_MAX + 1];
	char cohort[GF_QUEUE_NAME_MAX + 1];
	char ordering[GF_QUEUE_NAME_MAX + 1];
	int64_t weight;
	struct gf_queue_amount nominal, borrowing, lending;
	uint32_t nmodels;	/* items given in spec.models (only the first GF_QUEUE_MODELS_MAX kept) */
	struct {
		bool has_model;
		char model[GF_QUEUE_NAME_MAX + 1];
		struct gf_queue_amount nominal;
	} models[GF_QUEUE_MODELS_MAX];
};

/* Copy s[0..len) into a gf_queue_object string field (cut at GF_QUEUE_NAME_MAX bytes). */
void gf_queue_object_str(char out[GF_QUEUE_NAME_MAX + 1], const char *s, size_t len);

/* A validated Queue: what the engine and the adapters use. */
struct gf_queue_def {
	char name[GF_QUEUE_NAME_MAX];
	char cohort[GF_QUEUE_NAME_MAX];	/* "" = none */
	int64_t nominal;		/* milli-GPU */
	int64_t borrowing_limit;	/* milli-GPU or GF_QUOTA_UNLIMITED */
	int64_t lending_limit;		/* milli-GPU or GF_QUOTA_UNLIMITED */
	uint32_t weight;
	enum gf_queue_ordering ordering;
	uint32_t nmodels;
	struct {
		char model[GF_QUEUE_NAME_MAX];
		int64_t nominal;	/* milli-GPU */
		int line;		/* set by the YAML decoder for messages; 0 elsewhere */
	} models[GF_QUOTA_MAX_MODELS];
	int line;			/* 1-based line of its YAML document; 0 elsewhere */
};

/* What is wrong: the field's path ("spec.weight", "spec.models[2].model") and what. */
struct gf_queue_verr {
	char path[96];
	char what[160];
};

/*
 * The one validator: o into *out (defaults filled), or GF_PARSE with *e
 * naming the first field at fault.  Rules (each the CRD schema's where the
 * schema can say it): a name (metadata.name, spec.cohort; cohort "" = none);
 * spec present; gpus 0..GF_QUEUE_GPUS_MAX, gpuMilli 0..GF_QUEUE_MILLI_MAX;
 * weight GF_QUEUE_WEIGHT_MIN..MAX; ordering one of strict, skip-ahead,
 * backfill; at most GF_QUEUE_MODELS_MAX models, each named (1..63 bytes) once.
 * Beyond the schema: lendingLimit <= nominalQuota, and limits only with a
 * cohort.
 */
gf_err gf_queue_validate(const struct gf_queue_object *o, struct gf_queue_def *out, struct gf_queue_verr *e);

/* Queues, in the order given (the replay's file; the live scheduler's set). */
struct gf_queue_file {
	struct gf_queue_def *q;
	size_t n;
};

/*
 * Append d to f (cap: its capacity, 0 at first).  GF_PARSE with *e when a
 * queue of the same name is already there or f holds GF_LOOP_MAX_QUEUES;
 * GF_NOMEM.
 */
gf_err gf_queue_file_add(struct gf_queue_file *f, size_t *cap, const struct gf_queue_def *d,
			 struct gf_queue_verr *e);
void gf_queue_file_release(struct gf_queue_file *f);

/* Index of the queue named name (case-insensitive), or -1. */
int gf_queue_file_find(const struct gf_queue_file *f, const char *name);

struct gf_queues_error {
	char msg[512];		/* "FILE:LINE: FIELD: what" */
	char note[512];		/* on success, a deprecation to tell the user ("" when none) */
};

/*
 * The engine's quotas: out[i] for f->q[i]; cohorts numbered by first
 * appearance; model names looked up in cat.  Errors: GF_PARSE (a model no
 * node has: err names file, the model's line when known, and the field).
 */
gf_err gf_queues_to_quota(const struct gf_queue_file *f, const struct gf_catalog *cat, const char *file,
			  struct gf_queue_quota *out, struct gf_queues_error *err);

#endif /* GF_QUEUE_QUEUEDEF_H */
