/*
 * k8s/codec_impl.h - what the JSON decoders (codec.c, codec_pod.c,
 * codec_node.c, codec_group.c) share.  Not a public header: codec.h is the
 * API.
 *
 * A decode keeps the JSON path it is at (".spec.containers[2].resources")
 * in struct dec: push appends a step and returns the old length, pop goes
 * back to it, and fail writes "<path>: <message>" into the caller's err.
 */
#ifndef GF_K8S_CODEC_IMPL_H
#define GF_K8S_CODEC_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "k8s/codec.h"

struct cJSON;

struct dec {
	char path[512];
	size_t len;
	char *err;
	size_t errlen;
};

size_t gf_kdec_push(struct dec *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void gf_kdec_pop(struct dec *d, size_t old);
size_t gf_kdec_push_key(struct dec *d, const char *key);
/* GF_PARSE, with err "<path>: <message>". */
gf_err gf_kdec_fail(struct dec *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "a string", "a number", ... for messages. */
const char *gf_kdec_type_name(const struct cJSON *v);
/* An optional member of the given kind (cJSON type bits; null counts as absent). */
gf_err gf_kdec_member(struct dec *d, const struct cJSON *obj, const char *key, int kind, const struct cJSON **out);
gf_err gf_kdec_str_member(struct dec *d, const struct cJSON *obj, const char *key, char *out, size_t cap);
gf_err gf_kdec_map_str(struct dec *d, const struct cJSON *map, const char *key, const char **out);
gf_err gf_kdec_check_str_map(struct dec *d, const struct cJSON *map);
gf_err gf_kdec_quantity(struct dec *d, const struct cJSON *map, const char *key, int64_t *milli, bool *found);
/* An optional int32 member in lo..INT32_MAX (0 when absent). */
gf_err gf_kdec_int32_member(struct dec *d, const struct cJSON *obj, const char *key, int32_t lo, int32_t *out);
bool gf_kdec_pack_kv(char *buf, size_t cap, size_t *len, const char *k, const char *v);
bool gf_kdec_effect_of(const char *s, uint8_t *out);
/* o's string member k, "" when absent. */
const char *gf_kdec_obj_str(const struct cJSON *o, const char *k);
gf_err gf_kdec_pod_tolerations(struct dec *d, const struct cJSON *spec, struct gf_k8s_pod *p);
void gf_kdec_pod_affinity(const struct cJSON *spec, struct gf_k8s_pod *p);

#endif
