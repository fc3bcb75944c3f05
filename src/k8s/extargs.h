/*
 * k8s/extargs.h - decode kube-scheduler's ExtenderArgs (filter, prioritize).
 *
 * See shared/specs/k8s-scheduler-extender.md 5: {"Pod", "Nodes" (a NodeList
 * or null), "NodeNames" (an array or null)}, keys in any case.
 */
#ifndef GF_K8S_EXTARGS_H
#define GF_K8S_EXTARGS_H

#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"
#include "core/obuf.h"
#include "k8s/codec.h"

struct cJSON;

/* ExtenderArgs, decoded.  Release with gf_ext_args_release() whatever the result. */
struct gf_ext_args {
	struct cJSON *doc;	/* the whole document (full parser) or the Pod only (fast path) */
	char *copy;		/* fast path: the body, names point into it */
	const char **names;	/* the node names, from NodeNames or Nodes.items[].metadata.name */
	size_t n;
	const struct cJSON *items; /* Nodes.items when Node objects were sent, else NULL */
};

/*
 * Decode body (len bytes) into *a and the Pod into *p.  GF_PARSE: msg names
 * what is wrong (the JSON path of a bad Pod field), for a 400 Status;
 * GF_NOMEM.
 */
gf_err gf_ext_args_parse(const char *body, size_t len, struct gf_ext_args *a, struct gf_k8s_pod *p,
			 char *msg, size_t msglen);
void gf_ext_args_release(struct gf_ext_args *a);

/* Does s[0..n) need no escaping inside a JSON string? */
bool gf_json_plain(const char *s, size_t n);

/* Append s to o as a JSON string (quoted, escaped). */
void gf_json_put_str(struct gf_obuf *o, const char *s);

#endif /* GF_K8S_EXTARGS_H */
