/*
 * sim/queues.h - the queue file (`gpufleet replay --queues FILE`): Queue
 * objects in YAML, the same a user applies to the cluster, into the
 * engine's quotas (queue/loop.h).
 *
 * A file holds one or more YAML documents (separated by ---), each:
 *
 *   apiVersion: gpufleet.io/v1alpha1
 *   kind: Queue
 *   metadata:
 *     name: training                # [a-z0-9]([-a-z0-9.]*[a-z0-9])?, <= 63
 *   spec:
 *     nominalQuota:                 # milli-GPU = gpus x 1000 + gpuMilli
 *       gpus: 64
 *       gpuMilli: 500
 *       perModel:                   # optional: quota per GPU model (Kueue flavors)
 *         - {model: V100M32, gpus: 32}
 *     borrowingLimit: {gpus: 16}    # optional; absent: no limit
 *     lendingLimit: {gpus: 8}       # optional; absent: all of the nominal quota
 *     cohort: research              # optional; absent: borrows and lends nothing
 *     weight: 2                     # optional, 1..1000000 [1]
 *     ordering: backfill            # optional: strict | skip-ahead | backfill [backfill]
 *
 * Unknown fields are refused.  Parsing is libyaml's (Debian libyaml-dev)
 * over a memory buffer: no I/O here.
 */
#ifndef GF_SIM_QUEUES_H
#define GF_SIM_QUEUES_H

#include "queue/loop.h"

#define GF_QUEUE_NAME_MAX 64

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
		int line;
	} models[GF_QUOTA_MAX_MODELS];
	int line;			/* 1-based line of its document */
};

struct gf_queue_file {
	struct gf_queue_def *q;
	size_t n;
};

struct gf_queues_error {
	char msg[512];		/* "FILE:LINE: FIELD: what" */
};

/*
 * Parse text[0..len) (file names it in messages) into *out (caller releases).
 * Errors: GF_PARSE (err says file, line, field and what), GF_NOMEM.
 */
gf_err gf_queues_parse(const char *text, size_t len, const char *file, struct gf_queue_file *out,
		       struct gf_queues_error *err);
void gf_queue_file_release(struct gf_queue_file *f);

/* Index of the queue named name (case-insensitive), or -1. */
int gf_queue_file_find(const struct gf_queue_file *f, const char *name);

/*
 * The engine's quotas: out[i] for f->q[i]; cohorts numbered by first
 * appearance; model names looked up in cat.  Errors: GF_PARSE (a model no
 * node has: err names the file and line), as gf_queues_parse.
 */
gf_err gf_queues_to_quota(const struct gf_queue_file *f, const struct gf_catalog *cat, const char *file,
			  struct gf_queue_quota *out, struct gf_queues_error *err);

#endif /* GF_SIM_QUEUES_H */
