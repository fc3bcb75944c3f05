#!/bin/bash
# tests/agent/agent_k8s.sh - the agent publishes its inventory on a real Node
# of a real control plane (tests/k8s/cluster-up: etcd, kube-apiserver, ...):
#  1. with the admin kubeconfig (client certificate as *-data fields);
#  2. with the deploy/agent RBAC: a ServiceAccount token bound to the
#     ClusterRole in deploy/agent/rbac.yaml (get/patch nodes) - proves the
#     shipped RBAC is enough;
# then reads the Node back with kubectl and checks labels and the topology
# annotation.  The DaemonSet manifest is validated with a server dry run.
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$HERE/../.." && pwd)
K8S=$ROOT/tests/k8s
STATE="$T/k8s"
cluster_down() { "$K8S/cluster-down" "$STATE" >/dev/null 2>&1 || true; cleanup; }
trap cluster_down EXIT
KUBECONFIG=$("$K8S/cluster-up" --state-dir "$STATE" --owner-pid $$ | tail -n1) || fail "cluster-up failed"
export KUBECONFIG
. "$STATE/env"
kubectl() { "$GPUFLEET_K8S_KUBECTL" "$@"; }
"$K8S/add-gpu-nodes" 1 >/dev/null || fail "add-gpu-nodes failed"
pass "control plane up, node gpu-node-0 registered"

# 1. Admin kubeconfig (client-certificate-data / client-key-data / CA data).
start_agent --publish-node --kubeconfig "$KUBECONFIG" --node-name gpu-node-0
for _ in $(seq 50); do grep -q "published GPU labels and topology on node gpu-node-0" "$T/agent.log" && break; sleep 0.2; done
grep -q "published GPU labels and topology on node gpu-node-0" "$T/agent.log" || fail "no publish: $(cat "$T/agent.log")"
stop_agent
kubectl get node gpu-node-0 -o json > "$T/node.json"
lbl() { jq -r --arg k "$1" '.metadata.labels[$k]' "$T/node.json"; }
[ "$(lbl gpufleet.io/gpu.count)" = 2 ] || fail "gpu.count label: $(lbl gpufleet.io/gpu.count)"
[ "$(lbl gpufleet.io/gpu.product)" = NVIDIA-H100-80GB-HBM3 ] || fail "gpu.product label"
[ "$(lbl gpufleet.io/gpu.nvlink)" = true ] || fail "gpu.nvlink label"
[ "$(lbl gpufleet.io/gpu.healthy-count)" = 2 ] || fail "healthy-count label"
[ "$(lbl nvidia.com/gpu.present)" = true ] || fail "the merge patch removed an existing label"
jq -r '.metadata.annotations["gpufleet.io/gpu-topology"]' "$T/node.json" > "$T/topo.json"
jq -e '.version == 1 and .node == "gpu-node-0" and (.gpus | length) == 2 and
       .gpus[1].uuid == "GPU-77aa0c41-2b3e-4f55-8a10-6c9d0e4f1a22" and
       .topology.matrix[0][1] == "NV18"' "$T/topo.json" >/dev/null || fail "topology annotation: $(cat "$T/topo.json")"
pass "admin kubeconfig: labels and gpufleet.io/gpu-topology on the Node"

# 2. The shipped RBAC, through a ServiceAccount token.
kubectl apply -f "$ROOT/deploy/agent/namespace.yaml" -f "$ROOT/deploy/agent/rbac.yaml" >/dev/null || fail "apply rbac"
kubectl apply --dry-run=server -f "$ROOT/deploy/agent/daemonset.yaml" >/dev/null || fail "DaemonSet manifest rejected"
token=$(kubectl -n gpufleet-system create token gpufleet-agent) || fail "create token"
cat > "$T/sa.kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters:
- cluster:
    server: $GPUFLEET_K8S_APISERVER
    certificate-authority: $GPUFLEET_K8S_CA
  name: test
contexts:
- context:
    cluster: test
    user: agent
  name: test
current-context: test
users:
- name: agent
  user:
    token: $token
KC
# The fake node's GPU 0 runs pod ml/llm-7d9f-abcde: the API's copy says which model it serves.
kubectl create namespace ml >/dev/null || fail "create namespace ml"
kubectl -n ml apply -f - >/dev/null <<'POD' || fail "create pod llm-7d9f-abcde"
apiVersion: v1
kind: Pod
metadata: {name: llm-7d9f-abcde, labels: {gpufleet.io/model: llama-7b}}
spec: {nodeName: no-node, containers: [{name: server, image: registry.example/vllm:0.6}]}
POD
sed 's/util_gpu=87/util_gpu=88/; s/^gpu 1 \(.*\)$/gpu 1 \1 lost=1/' "$DATA/two_gpus.state" > "$T/state"
start_agent --publish-node --kubeconfig "$T/sa.kubeconfig" --node-name gpu-node-0
for _ in $(seq 50); do grep -q "published GPU labels" "$T/agent.log" && break; grep -q "publishing on node" "$T/agent.log" && break; sleep 0.2; done
grep -q "published GPU labels and topology on node gpu-node-0" "$T/agent.log" || fail "SA publish: $(cat "$T/agent.log")"
stop_agent
kubectl get node gpu-node-0 -o json > "$T/node.json"
[ "$(lbl gpufleet.io/gpu.healthy-count)" = 1 ] || fail "healthy-count after GPU 1 was lost: $(lbl gpufleet.io/gpu.healthy-count)"
pass "deploy/agent/rbac.yaml is enough: the ServiceAccount patches its Node"
seen=$(jq -r '.metadata.annotations["gpufleet.io/models-seen"]' "$T/node.json")
[ "$seen" = llama-7b ] || fail "gpufleet.io/models-seen: '$seen' (want llama-7b, the label of the pod on GPU 0)"
pass "the ServiceAccount reads the pod on its GPU: gpufleet.io/models-seen=llama-7b on the Node"

# A node it may not touch does not exist -> a clear error, the agent keeps serving.
start_agent --publish-node --kubeconfig "$T/sa.kubeconfig" --node-name no-such-node
for _ in $(seq 50); do grep -q "publishing on node no-such-node failed" "$T/agent.log" && break; sleep 0.2; done
grep -q "publishing on node no-such-node failed: PATCH .*HTTP 404" "$T/agent.log" || fail "no clear error: $(cat "$T/agent.log")"
scrape | grep -q '^DCGM_FI_DEV_GPU_UTIL{gpu="0"' || fail "not serving after a failed publish"
stop_agent
pass "publish failure is logged with the API status, metrics still served"
