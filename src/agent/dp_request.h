/*
 * agent/dp_request.h - checks on the kubelet's device-plugin requests that
 * the protobuf decoder cannot make: a string field with a NUL byte (the
 * decoded C string would end there, so "GPU-a\0junk" would read as the
 * valid "GPU-a"), and GetPreferredAllocation sizes past the devices there are.
 */
#ifndef GF_AGENT_DP_REQUEST_H
#define GF_AGENT_DP_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

#include "agent/proto/deviceplugin_v1beta1.pb-c.h"

/* Walks the encoded message buf[0..len) of type d (nested messages to depth
 * 8) before it is decoded.  False when a string field holds a NUL byte: msg
 * says "<rpc>: device ID '<value, escaped>' holds a NUL byte: not a valid
 * device ID" (the field's name in place of "device ID" for other fields).
 * Malformed encodings pass: the decoder refuses them.  O(len). */
bool gf_dp_request_strings_ok(const uint8_t *buf, size_t len, const ProtobufCMessageDescriptor *d, const char *rpc,
			      char *msg, size_t msglen);

/* Each container request of a GetPreferredAllocation: allocation_size in
 * 0..ndev, at most ndev available and must-include IDs, must-include not more
 * than allocation_size (ndev: the devices the resource advertises, GPUs or
 * share units).  False with msg naming the container request and the sizes. */
bool gf_dp_preferred_ok(const V1beta1__PreferredAllocationRequest *rq, size_t ndev, char *msg, size_t msglen);

/* Writes s[0..n) into out (outlen bytes) quoted-safe: printable ASCII as is,
 * other bytes as \xNN, cut at 64 input bytes with "...". */
void gf_dp_escape(const char *s, size_t n, char *out, size_t outlen);

#endif /* GF_AGENT_DP_REQUEST_H */
