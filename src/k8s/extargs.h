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
#include <stdint.h>

#include "core/error.h"
#include "core/obuf.h"
#include "k8s/codec.h"

struct cJSON;

/*
 * ExtenderArgs, decoded.  names[i] is lens[i] bytes and not NUL-terminated:
 * it points into the request body (the fast path) or into doc.  Release
 * with gf_ext_args_release() whatever the result; the body must outlive a.
 */
struct gf_ext_args {
	struct cJSON *doc;	/* the whole document (full parser) or the Pod only (fast path) */
	const char *const *names; /* the node names, from NodeNames or Nodes.items[].metadata.name */
	const size_t *lens;	/* and their lengths */
	size_t n;
	bool plain;		/* fast path: no name needs escaping in JSON */
	bool hit;		/* NodeNames was the hint's list: names and lens are the hint's */
	const char *span;	/* fast path: the NodeNames array as sent, '[' to ']' */
	size_t span_len;
	bool node_objects;	/* Node objects were sent (nodeCacheCapable: false) */
	const struct cJSON *items; /* full parser: Nodes.items when Node objects were sent */
	const char *const *item_text; /* fast path: each Node object as sent, item_len[i] bytes */
	const size_t *item_len;
	const char **names_buf;	/* owned */
	size_t *lens_buf;
	const char **item_buf;
	size_t *item_len_buf;
};

/*
 * A list of names seen before.  When a body's NodeNames array is byte for
 * byte span (a whole array, '[' to ']'), the decoder takes names, lens and
 * n from here instead of reading them (a memcmp instead of a scan).
 */
struct gf_ext_hint {
	const char *span;
	size_t span_len;
	const char *const *names;
	const size_t *lens;
	size_t n;
};

/*
 * Decode body (len bytes) into *a and the Pod into *p; hint may be NULL.  GF_PARSE: msg names
 * what is wrong (the JSON path of a bad Pod field), for a 400 Status;
 * GF_NOMEM.
 */
gf_err gf_ext_args_parse(const char *body, size_t len, const struct gf_ext_hint *hint,
			 struct gf_ext_args *a, struct gf_k8s_pod *p, char *msg, size_t msglen);
void gf_ext_args_release(struct gf_ext_args *a);

/*
 * Is s (len bytes) one JSON value by RFC 8259 (UTF-8, nothing but spaces
 * after it, at most 512 levels deep)?  When not, *at (if not NULL) is the
 * offset where it stopped being JSON.
 */
bool gf_json_valid(const char *s, size_t len, size_t *at);

/* Append s to o as a JSON string (quoted, escaped). */
void gf_json_put_str(struct gf_obuf *o, const char *s);

/*
 * Append pre, names[i] as a JSON string, post: one append when the name is
 * plain (a->plain, or checked here) and short enough, else escaped.
 */
void gf_ext_put_name(struct gf_obuf *o, const struct gf_ext_args *a, size_t i, const char *pre,
		     const char *post);

/* Append the names (but those with skip[i] != NULL) as JSON strings, comma-separated. */
void gf_ext_put_names(struct gf_obuf *o, const struct gf_ext_args *a, const char *const *skip);

/*
 * Append the HostPriorityList [{"Host":name,"Score":scores[i]},...], leaving
 * out the hosts scoring 0: kube-scheduler adds nothing for a host missing
 * from the list (pkg/scheduler/schedule_one.go, prioritizeNodes), so the
 * answer means the same in fewer bytes.
 */
void gf_ext_put_priorities(struct gf_obuf *o, const struct gf_ext_args *a, const int64_t *scores);

#endif /* GF_K8S_EXTARGS_H */
