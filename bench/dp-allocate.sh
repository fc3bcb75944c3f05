#!/bin/bash
# bench/dp-allocate.sh GPUFLEET FAKE_NVML MEMCAP_LIB [N] - the device plugin's
# Allocate latency over its unix socket (issue 13's goal: p99 < 1 ms), for a
# whole GPU and for a 250-unit share (with the memory-cap file written), each
# call alternating with the same request to a grpc-go device plugin that
# answers at once (the baseline, in the same run: the floor of a gRPC round
# trip on this machine under its current load).  The client is dp-harness
# (tests/deviceplugin: the kubelet's own client library over grpc-go), built
# once into the cache.  N calls of each kind (default 5000) after N/10 not
# counted.  Agent over the FAKE NVML, 8 GPUs, no pod matching (its API
# listing is not part of this figure).
set -eu
GPUFLEET=$1 FAKE=$2 MEMCAP=$3 N=${4:-5000}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/tests/deviceplugin/lib.sh"
dp_setup gf-dp-bench
mkdir -p "$T/memcap"
dp_harness -bench "$N"
GF_FAKE_NVML_STATE="$T/state" "$GPUFLEET" agent --nvml-lib "$FAKE" --no-kubernetes --address 127.0.0.1:0 \
	--device-plugin --device-plugin-dir "$T/dp" --memcap-lib "$MEMCAP" --memcap-dir "$T/memcap" 2>"$T/agent.log" &
PIDS="$PIDS $!"
rc=0
wait "$HPID" || rc=$?
echo "device plugin Allocate, $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
grep -v "^kubelet.sock ready\|^ok:" "$T/harness.out"
[ $rc = 0 ] || { tail -20 "$T/agent.log"; exit 1; }
