/*
 * yaml/queues.h - the queue file (`gpufleet replay --queues FILE`): GPUQueue
 * objects in YAML exactly as `kubectl apply` takes them, into validated
 * Queue definitions (queue/queuedef.h: the shape, the rules, the defaults).
 *
 * A file holds one or more YAML documents (separated by ---), each a
 * GPUQueue or a List of them (kind: List or GPUQueueList, items: [...]).
 * The kinds before the CRD's rename (Queue, QueueList) are still read, with
 * a note in err->note.  This is a
 * syntax mapper only: keys to fields, type errors and unknown keys here,
 * every other rule in gf_queue_validate().  Messages name the file, the
 * line and the field.  Parsing is libyaml's (Debian libyaml-dev) over a
 * memory buffer: no I/O here.  Linked by the CLI, not by the engine.
 */
#ifndef GF_YAML_QUEUES_H
#define GF_YAML_QUEUES_H

#include <stddef.h>

#include "core/error.h"
#include "queue/queuedef.h"

/*
 * Parse text[0..len) (file names it in messages) into *out (caller releases
 * with gf_queue_file_release).  Errors: GF_PARSE (err->msg says "FILE:LINE:
 * FIELD: what"), GF_NOMEM.  On GF_OK err->note is "" or a deprecation
 * ("FILE:LINE: kind: Queue is deprecated, ...") for the caller to print.
 */
gf_err gf_queues_parse(const char *text, size_t len, const char *file, struct gf_queue_file *out,
		       struct gf_queues_error *err);

#endif /* GF_YAML_QUEUES_H */
