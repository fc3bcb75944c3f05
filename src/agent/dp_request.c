/*
 * agent/dp_request.c - checks on device-plugin requests (dp_request.h).
 *
 * The string check walks the protobuf wire format itself: tag varint, then
 * by wire type a varint, 8 or 4 bytes, or a length-delimited field; a
 * length-delimited field of type string is searched for a NUL, one of type
 * message is walked with its own descriptor (depth <= 8, so a crafted
 * nesting costs no stack).  Anything malformed stops the walk and is left to
 * protobuf-c's decoder, which refuses it.  O(len) per message.
 */
#include "agent/dp_request.h"

#include <stdio.h>
#include <string.h>

#define MAX_DEPTH 8

void gf_dp_escape(const char *s, size_t n, char *out, size_t outlen)
{
	size_t o = 0;
	if (!outlen)
		return;
	for (size_t i = 0; i < n && i < 64; i++) {
		unsigned char c = (unsigned char)s[i];
		char tmp[5];
		int w = c >= 0x20 && c < 0x7f && c != '\'' && c != '\\' ? snprintf(tmp, sizeof(tmp), "%c", c)
									 : snprintf(tmp, sizeof(tmp), "\\x%02x", c);
		if (o + (size_t)w + 4 >= outlen)
			break;
		memcpy(out + o, tmp, (size_t)w);
		o += (size_t)w;
	}
	if (n > 64 && o + 4 < outlen) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = '\0';
}

static bool varint(const uint8_t *p, size_t len, size_t *i, uint64_t *v)
{
	*v = 0;
	for (unsigned shift = 0; shift < 64 && *i < len; shift += 7) {
		uint8_t b = p[(*i)++];
		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

/* 1: a NUL found (msg written), 0: none or malformed. */
static int walk(const uint8_t *p, size_t len, const ProtobufCMessageDescriptor *d, int depth, const char *rpc,
		char *msg, size_t msglen)
{
	size_t i = 0;
	while (i < len) {
		uint64_t tag, l;
		if (!varint(p, len, &i, &tag))
			return 0;
		switch (tag & 7) {
		case 0:
			if (!varint(p, len, &i, &l))
				return 0;
			break;
		case 1:
			if (len - i < 8)
				return 0;
			i += 8;
			break;
		case 5:
			if (len - i < 4)
				return 0;
			i += 4;
			break;
		case 2: {
			if (!varint(p, len, &i, &l) || l > len - i)
				return 0;
			const ProtobufCFieldDescriptor *f =
				tag >> 3 <= UINT32_MAX ? protobuf_c_message_descriptor_get_field(d, (unsigned)(tag >> 3))
						       : NULL;
			if (f && f->type == PROTOBUF_C_TYPE_STRING && memchr(p + i, 0, (size_t)l)) {
				char esc[300];
				gf_dp_escape((const char *)p + i, (size_t)l, esc, sizeof(esc));
				bool id = strstr(f->name, "device") != NULL;
				snprintf(msg, msglen, "%s: %s%s '%s' holds a NUL byte: not a valid %s", rpc,
					 id ? "device ID" : "field ", id ? "" : f->name, esc, id ? "device ID" : "string");
				return 1;
			}
			if (f && f->type == PROTOBUF_C_TYPE_MESSAGE && depth < MAX_DEPTH &&
			    walk(p + i, (size_t)l, f->descriptor, depth + 1, rpc, msg, msglen))
				return 1;
			i += (size_t)l;
			break;
		}
		default:
			return 0;
		}
	}
	return 0;
}

bool gf_dp_request_strings_ok(const uint8_t *buf, size_t len, const ProtobufCMessageDescriptor *d, const char *rpc,
			      char *msg, size_t msglen)
{
	return !walk(buf, len, d, 0, rpc, msg, msglen);
}

bool gf_dp_preferred_ok(const V1beta1__PreferredAllocationRequest *rq, size_t ndev, char *msg, size_t msglen)
{
	for (size_t c = 0; c < rq->n_container_requests; c++) {
		const V1beta1__ContainerPreferredAllocationRequest *r = rq->container_requests[c];
		if (r->allocation_size < 0 || (size_t)r->allocation_size > ndev) {
			snprintf(msg, msglen,
				 "GetPreferredAllocation: container request %zu: allocation size %d, this resource has %zu "
				 "devices",
				 c, r->allocation_size, ndev);
			return false;
		}
		if (r->n_available_deviceids > ndev || r->n_must_include_deviceids > ndev) {
			snprintf(msg, msglen,
				 "GetPreferredAllocation: container request %zu: %zu available and %zu must-include "
				 "device IDs, this resource has %zu devices",
				 c, r->n_available_deviceids, r->n_must_include_deviceids, ndev);
			return false;
		}
		if (r->n_must_include_deviceids > (size_t)r->allocation_size) {
			snprintf(msg, msglen,
				 "GetPreferredAllocation: container request %zu: %zu must-include device IDs for an "
				 "allocation of %d",
				 c, r->n_must_include_deviceids, r->allocation_size);
			return false;
		}
	}
	return true;
}
