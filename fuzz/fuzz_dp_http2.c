/*
 * fuzz/fuzz_dp_http2.c - the device plugin's use of HTTP/2: one server
 * connection of agent/grpc.c driven from memory (gf_grpc_serve_bytes) with
 * the fuzzer's bytes after the client connection preface: frames, HPACK
 * headers, gRPC message framing, stream resets, flow control, unknown
 * paths, a unary method and a server stream.  Invariants checked: no crash,
 * no leak or overflow (ASan), the server's output always starts with its
 * SETTINGS frame (9-byte header, type 4, stream 0).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/grpc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int echo(void *ud, const uint8_t *req, size_t len, struct gf_obuf *out, char *msg, size_t msglen)
{
	(void)ud;
	if (len > 0 && req[0] == 0xff) {
		snprintf(msg, msglen, "refused");
		return GF_GRPC_INVALID_ARGUMENT;
	}
	gf_obuf_append(out, req, len);
	return GF_GRPC_OK;
}

static bool list(void *ud, const uint8_t *req, size_t len, uint64_t *version, struct gf_obuf *out)
{
	(void)ud;
	(void)req;
	if (*version)
		return false;
	*version = 1;
	gf_obuf_append(out, "list", 4);
	return len < 1000;
}

static const struct gf_grpc_method methods[] = {
	{ "/v1beta1.DevicePlugin/Allocate", echo, NULL, NULL },
	{ "/v1beta1.DevicePlugin/ListAndWatch", NULL, list, NULL },
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
	uint8_t *in = malloc(sizeof(preface) - 1 + size);
	if (!in)
		return 0;
	memcpy(in, preface, sizeof(preface) - 1);
	if (size)
		memcpy(in + sizeof(preface) - 1, data, size);
	struct gf_obuf out;
	gf_obuf_init(&out, 64u << 20);
	gf_grpc_serve_bytes(methods, 2, in, sizeof(preface) - 1 + size, &out);
	if (out.len < 9 || ((const uint8_t *)out.data)[3] != 4)
		abort();
	gf_obuf_release(&out);
	free(in);
	return 0;
}
