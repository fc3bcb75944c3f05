#!/bin/sh
# src/agent/proto/regenerate.sh - regenerate the protobuf-c code of the
# kubelet device-plugin API (deviceplugin_v1beta1.pb-c.[ch]) from the
# upstream file, unchanged in this folder:
#   deviceplugin_v1beta1.proto = k8s.io/kubelet@v0.36.3 pkg/apis/deviceplugin/v1beta1/api.proto
# Needs protoc-c (Debian: protobuf-c-compiler).  Run from anywhere:
#   src/agent/proto/regenerate.sh
# The one mechanical edit: the `service` blocks are dropped before protoc-c
# sees the file.  protoc-c would turn the RPC `Register` into a C function
# named `register`, a C keyword, and our server is hand-written (gRPC over
# libnghttp2, agent/grpc.c), so it needs the messages only.  (The other
# known edit, dropping proto3 `optional`, is not needed: this file has none.)
set -eu
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
awk '/^service [A-Za-z]+ *\{/ { skip = 1 } !skip { print } skip && /^\}/ { skip = 0 }' \
	deviceplugin_v1beta1.proto > "$tmp/deviceplugin_v1beta1.proto"
if grep -q '^[[:space:]]*optional ' "$tmp/deviceplugin_v1beta1.proto"; then
	echo "regenerate.sh: proto3 'optional' found: protoc-c 1.4 refuses it; drop it too" >&2
	exit 1
fi
(cd "$tmp" && protoc-c --c_out=. deviceplugin_v1beta1.proto)
cp "$tmp/deviceplugin_v1beta1.pb-c.c" "$tmp/deviceplugin_v1beta1.pb-c.h" .
echo "regenerated $(pwd)/deviceplugin_v1beta1.pb-c.[ch] with $(protoc-c --version | head -n1)"
