#!/bin/bash
# tests/deviceplugin/match.sh GPUFLEET FAKE_NVML - the device plugin's pod
# matching against the test control plane (tests/k8s, no kwok): three
# Pending pods bound to node dp-node carrying the scheduler's assignment
# annotations; dp-harness -match (the kubelet's v1beta1 client library)
# checks that GetPreferredAllocation steers to the assigned GPUs of the
# oldest pod and that Allocate admits only assigned GPUs, once per pod;
# then the reconciliation with a pod-resources API served by the harness.
set -eu
GPUFLEET=$1 FAKE=$2
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
. "$HERE/lib.sh"
dp_on_exit() { "$ROOT/tests/k8s/cluster-down" "$T/k8s" >/dev/null 2>&1 || true; }
dp_setup gf-dpm
export KUBECONFIG=$("$ROOT/tests/k8s/cluster-up" --state-dir "$T/k8s" --owner-pid $$ --no-kwok | tail -n1)
. "$T/k8s/env"
K=$GPUFLEET_K8S_KUBECTL
u() { printf 'GPU-00000000-0000-0000-0000-%012d' "$1"; }
pod() { # NAME UUIDS MILLI RESOURCE QTY
	cat <<YAML | "$K" apply -f - >/dev/null
apiVersion: v1
kind: Pod
metadata:
  name: $1
  namespace: default
  annotations: {gpufleet.io/assigned-node: dp-node, gpufleet.io/assigned-gpu-uuids: "$2", gpufleet.io/assigned-gpu-milli: "$3"}
spec:
  nodeName: dp-node
  containers: [{name: c, image: busybox, resources: {limits: {"$4": "$5"}}}]
YAML
}
pod p-share-a "$(u 2)" 250 gpufleet.io/gpu-milli 250
sleep 1.1 # creationTimestamp has whole seconds: keep the order unambiguous
pod p-share-b "$(u 5)" 250 gpufleet.io/gpu-milli 250
pod p-whole "$(u 0),$(u 1)" 1000,1000 nvidia.com/gpu 2
echo "ok: 3 pending pods on dp-node with assignment annotations"

dp_harness -match -gpus 8
GF_FAKE_NVML_STATE="$T/state" "$GPUFLEET" agent --nvml-lib "$FAKE" --no-kubernetes --address 127.0.0.1:0 \
	--device-plugin --device-plugin-dir "$T/dp" --match-pods --kubeconfig "$KUBECONFIG" --node-name dp-node \
	--pod-resources-socket "$T/dp/podres.sock" 2>"$T/agent.log" &
PIDS="$PIDS $!"

# Reconciliation with the kubelet's pod-resources API (served by the
# harness once its checks are done): one container listed under another pod
# than the one admitted, one never admitted, counted in /metrics.
for _ in $(seq 300); do grep -q "pod-resources ready" "$T/harness.out" 2>/dev/null && break; sleep 0.1; done
port=$(sed -n 's|.*serving on http://127.0.0.1:\([0-9]*\)/metrics|\1|p' "$T/agent.log")
got=""
for _ in $(seq 150); do
	got=$(curl -sf "http://127.0.0.1:$port/metrics" | grep '^gpufleet_deviceplugin_' || true)
	echo "$got" | grep -q 'reconciliations_total{result="ok"} [1-9]' && break
	sleep 0.1
done
touch "$T/dp/done"
echo "$got" | grep -qx "gpufleet_deviceplugin_mismatched_containers 1" &&
	echo "$got" | grep -qx "gpufleet_deviceplugin_unattributed_containers 1" ||
	{ echo "FAIL: reconciliation metrics: $got"; tail -5 "$T/agent.log"; exit 1; }
grep -q "the kubelet lists devices (gpufleet.io/gpu-milli GPU-00000000-0000-0000-0000-000000000005::0...) under pod default/intruder; they were admitted for default/p-share-b" "$T/agent.log" ||
	{ echo "FAIL: no mismatch line in the agent log: $(tail -5 "$T/agent.log")"; exit 1; }
echo "ok: reconciliation: 1 container under another pod and 1 never admitted, in /metrics and the log"
rc=0
wait "$HPID" || rc=$?
cat "$T/harness.out"
[ $rc = 0 ] || { echo "--- agent log:"; tail -20 "$T/agent.log"; exit 1; }
