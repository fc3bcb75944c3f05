#!/bin/bash
# tests/deviceplugin/deviceplugin.sh GPUFLEET FAKE_NVML MEMCAP_LIB - the
# agent's device plugin against dp-harness, which plays the kubelet with the
# kubelet's own v1beta1 client library over grpc-go (not a real kubelet):
# registration, options, ListAndWatch (8 GPUs, 8,000 share units), Allocate
# (whole and share, with the memory-cap files), bad input, GetPreferred-
# Allocation, an unhealthy GPU (FAKE NVML `lost=1`) withdrawn, re-registration
# after the kubelet's folder is cleared and after an agent restart.  Prints
# the figures measured.
set -eu
GPUFLEET=$1 FAKE=$2 MEMCAP=$3
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
dp_setup gf-dp
mkdir -p "$T/memcap"

dp_harness -gpus 8 -mem-mib 81920
start_agent() {
	GF_FAKE_NVML_STATE="$T/state" "$GPUFLEET" agent --nvml-lib "$FAKE" --no-kubernetes --address 127.0.0.1:0 \
		--interval-ms 100 --device-plugin --device-plugin-dir "$T/dp" --memcap-lib "$MEMCAP" \
		--memcap-dir "$T/memcap" 2>>"$T/agent.log" &
	APID=$!
	PIDS="$PIDS $APID"
}
start_agent
# The harness asks for one agent restart near its end.
for _ in $(seq 1200); do
	grep -q "^restart the agent" "$T/harness.out" 2>/dev/null && break
	kill -0 "$HPID" 2>/dev/null || break
	sleep 0.1
done
if grep -q "^restart the agent" "$T/harness.out"; then
	kill -TERM "$APID"
	arc=0; wait "$APID" || arc=$?
	[ $arc = 0 ] || { echo "FAIL: agent exit $arc at the restart"; tail -30 "$T/agent.log"; exit 1; }
	start_agent
fi
rc=0
wait "$HPID" || rc=$?
cat "$T/harness.out"
if [ $rc != 0 ]; then
	echo "--- agent log:"; tail -20 "$T/agent.log"
	exit 1
fi
grep -q "device plugin nvidia.com/gpu registered" "$T/agent.log" || { echo "FAIL: agent log: $(cat "$T/agent.log")"; exit 1; }
# A clean stop (SIGTERM): exit 0, sockets removed (and, under the
# sanitizers, no leak or error reported at exit).
kill -TERM "$APID"
arc=0; wait "$APID" || arc=$?
[ $arc = 0 ] || { echo "FAIL: agent exit $arc after SIGTERM"; tail -30 "$T/agent.log"; exit 1; }
[ ! -e "$T/dp/gpufleet-gpu.sock" ] && [ ! -e "$T/dp/gpufleet-gpu-milli.sock" ] ||
	{ echo "FAIL: plugin sockets left behind: $(ls "$T/dp")"; exit 1; }
echo "ok: SIGTERM: agent exits 0 and removes its plugin sockets"
