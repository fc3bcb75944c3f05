/*
 * core/kstatus.h - the Kubernetes `Status` body (a failed API call's answer).
 *
 * {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
 *  "message":<msg>,"reason":<reason>,"code":<code>} - the shape the API
 * server, aggregated APIs and scheduler extenders answer errors with, and
 * the bytes cJSON_PrintUnformatted writes for that object (same key order,
 * same escaping), so every HTTP adapter answers errors identically.
 */
#ifndef GF_CORE_KSTATUS_H
#define GF_CORE_KSTATUS_H

#include "core/obuf.h"

/* Append the Status body to o (reason: e.g. "BadRequest"; code: the HTTP
 * status).  Errors are o's (sticky: gf_obuf_error). */
void gf_kstatus_render(struct gf_obuf *o, unsigned code, const char *reason, const char *msg);

#endif
