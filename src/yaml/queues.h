/*
 * yaml/queues.h - the queue file (`gpufleet replay --queues FILE`): Queue
 * objects in YAML exactly as `kubectl apply` takes them, into validated
 * Queue definitions (queue/queuedef.h: the shape, the rules, the defaults).
 *
 * A file holds one or more YAML documents (separated by ---), each a Queue
 * or a List of them (kind: List or QueueList, items: [...]).  This is a
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
 * with gf_queue_file_release).  Errors: GF_PARSE (err says "FILE:LINE:
 * FIELD: what"), GF_NOMEM.
 */
gf_err gf_queues_parse(const char *text, size_t len, const char *file, struct gf_queue_file *out,
		       struct gf_queues_error *err);

#endif /* GF_YAML_QUEUES_H */
