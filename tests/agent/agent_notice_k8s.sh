#!/bin/bash
# tests/agent/agent_notice_k8s.sh - `gpufleet agent --spot-notice aws` on a
# real control plane (tests/k8s/cluster-up), the cloud played by a FAKE
# metadata server of ours on loopback (tests/agent/fake-metadata-server:
# IMDSv2 with tokens, the shapes AWS documents; not AWS):
#  1. the agent runs as the chart's ServiceAccount with the chart's RBAC for
#     agent.spotNotice.cloud=aws (helm template), proving it is enough;
#  2. no notice: the Node is left alone;
#  3. the fake announces an interruption: the Node gets the annotation
#     gpufleet.io/notice = the action's time and the taint
#     gpufleet.io/notice=aws-spot-itn:NoSchedule (a taint set before is
#     kept), and one SpotNotice Event; polls after that write nothing more;
#  4. the rebalance recommendation: gpufleet.io/rebalance, no second taint.
# Prints the time from the notice appearing in the metadata to the annotation
# on the Node.
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
"$K8S/add-gpu-nodes" --label karpenter.sh/capacity-type=spot 1 >/dev/null || fail "add-gpu-nodes failed"
kubectl taint node gpu-node-0 team=ml:NoSchedule >/dev/null || fail "kubectl taint"
pass "control plane up, spot node gpu-node-0 registered (tainted team=ml:NoSchedule)"

# 1. The chart's RBAC for spot notices, through a ServiceAccount token.
helm=${HELM:-$("$K8S/build-helm" | tail -n1)} || fail "tests/k8s/build-helm failed"
export HELM_CACHE_HOME=$T/helm/cache HELM_CONFIG_HOME=$T/helm/config HELM_DATA_HOME=$T/helm/data
kubectl create namespace gpufleet-system >/dev/null || fail "create namespace"
"$helm" template gpufleet "$ROOT/deploy/helm/gpufleet" --namespace gpufleet-system \
	--set agent.spotNotice.cloud=aws --show-only templates/agent/rbac.yaml > "$T/rbac.yaml" || fail "helm template"
kubectl apply -n gpufleet-system -f "$T/rbac.yaml" >/dev/null || fail "apply rbac"
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

# 2. The FAKE metadata server, no notice yet.
mkdir -p "$T/md"
"$HERE/fake-metadata-server" "$T/md" 2>"$T/md.log" &
PIDS="$PIDS $!"
for _ in $(seq 100); do [ -f "$T/md/port" ] && break; sleep 0.1; done
[ -f "$T/md/port" ] || fail "the fake metadata server did not start: $(cat "$T/md.log")"
MD="http://127.0.0.1:$(cat "$T/md/port")"
start_agent --spot-notice aws --metadata-url "$MD" --notice-interval 500ms \
	--kubeconfig "$T/sa.kubeconfig" --node-name gpu-node-0
sleep 2
node() { kubectl get node gpu-node-0 -o json > "$T/node.json"; }
ann() { jq -r --arg k "$1" '.metadata.annotations[$k] // ""' "$T/node.json"; }
node
[ -z "$(ann gpufleet.io/notice)" ] || fail "a notice without one: $(ann gpufleet.io/notice)"
grep -q "spot notice: .*refused\|HTTP 4\|HTTP 5" "$T/agent.log" && fail "errors while idle: $(cat "$T/agent.log")"
pass "no notice in the metadata: the Node is left alone"

# 3. The interruption notice.
deadline=$(date -u -d '+120 seconds' +%Y-%m-%dT%H:%M:%SZ)
t0=$(date +%s%N)
printf '{"action": "terminate", "time": "%s"}' "$deadline" > "$T/md/instance-action.tmp"
mv "$T/md/instance-action.tmp" "$T/md/instance-action"
for _ in $(seq 100); do node; [ -n "$(ann gpufleet.io/notice)" ] && break; sleep 0.1; done
t1=$(date +%s%N)
[ "$(ann gpufleet.io/notice)" = "$deadline" ] || fail "gpufleet.io/notice: '$(ann gpufleet.io/notice)', want $deadline"
jq -e '[.spec.taints[] | select(.key == "gpufleet.io/notice" and .value == "aws-spot-itn" and .effect == "NoSchedule")] | length == 1' \
	"$T/node.json" >/dev/null || fail "taint: $(jq -c .spec.taints "$T/node.json")"
jq -e '[.spec.taints[] | select(.key == "team" and .value == "ml")] | length == 1' "$T/node.json" >/dev/null ||
	fail "the taint set before was lost: $(jq -c .spec.taints "$T/node.json")"
echo "figure: notice in the metadata -> annotation and taint on the Node: $(( (t1 - t0) / 1000000 )) ms (polls every 500 ms)"
sleep 2 # four more polls
events() { kubectl get events -n default --field-selector "involvedObject.name=gpu-node-0,reason=$1" -o json | jq '.items | length'; }
[ "$(events SpotNotice)" = 1 ] || fail "SpotNotice Events: $(events SpotNotice), want 1"
grep -c "the node leaves at" "$T/agent.log" | grep -qx 1 || fail "written more than once: $(cat "$T/agent.log")"
pass "notice: gpufleet.io/notice=$deadline, taint aws-spot-itn:NoSchedule, team=ml kept, one SpotNotice Event"

# 4. The rebalance recommendation.
noticed=$(date -u +%Y-%m-%dT%H:%M:%SZ)
printf '{"noticeTime": "%s"}' "$noticed" > "$T/md/rebalance"
for _ in $(seq 50); do node; [ -n "$(ann gpufleet.io/rebalance)" ] && break; sleep 0.1; done
[ "$(ann gpufleet.io/rebalance)" = "$noticed" ] || fail "gpufleet.io/rebalance: '$(ann gpufleet.io/rebalance)'"
jq -e '[.spec.taints[] | select(.key == "gpufleet.io/notice")] | length == 1' "$T/node.json" >/dev/null || fail "taints: $(jq -c .spec.taints "$T/node.json")"
for _ in $(seq 30); do [ "$(events RebalanceRecommendation)" = 1 ] && break; sleep 0.2; done
[ "$(events RebalanceRecommendation)" = 1 ] || fail "RebalanceRecommendation Events: $(events RebalanceRecommendation)"
scrape | grep -q '^DCGM_FI_DEV_GPU_UTIL{gpu="0"' || fail "not serving metrics"
stop_agent
pass "rebalance: gpufleet.io/rebalance=$noticed, one Event; the agent served metrics throughout"
