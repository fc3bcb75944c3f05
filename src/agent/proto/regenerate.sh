#!/bin/sh
# src/agent/proto/regenerate.sh - regenerate the protobuf-c code of the
# kubelet APIs the agent speaks from the upstream files, kept unchanged in
# this folder:
#   deviceplugin_v1beta1.proto = k8s.io/kubelet@v0.36.3 pkg/apis/deviceplugin/v1beta1/api.proto
#   podresources_v1.proto      = k8s.io/kubelet@v0.36.3 pkg/apis/podresources/v1/api.proto
# Needs protoc-c (Debian: protobuf-c-compiler).  Run from anywhere:
#   src/agent/proto/regenerate.sh
# Two mechanical edits, made on a copy before protoc-c sees it:
#  1. the `service` blocks are dropped: protoc-c would turn the RPC
#     `Register` into a C function named `register`, a C keyword, and our
#     gRPC layer is hand-written (agent/grpc.c on libnghttp2), so it needs
#     the messages only;
#  2. proto3 `optional` is dropped (protoc-c 1.4 refuses it; only
#     ClaimResource.share_id of the pod-resources API has it): the wire
#     format is the same, presence is lost (empty means unset).
set -eu
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in deviceplugin_v1beta1 podresources_v1; do
	awk '/^service [A-Za-z]+ *\{/ { skip = 1 } !skip { print } skip && /^\}/ { skip = 0 }' "$f.proto" |
		sed 's/^\([[:space:]]*\)optional /\1/' > "$tmp/$f.proto"
	(cd "$tmp" && protoc-c --c_out=. "$f.proto")
	cp "$tmp/$f.pb-c.c" "$tmp/$f.pb-c.h" .
	echo "regenerated $(pwd)/$f.pb-c.[ch] with $(protoc-c --version | head -n1)"
done
