#!/bin/bash
# tests/metrics-api/ma_hpa_e2e.sh GPUFLEET FAKE_NVML AGENT_DATA
#
# End to end on the real control plane: the stock HPA controller of
# kube-controller-manager scales a Deployment on GPU utilization served by
# gpufleet metrics-api (agents source) from the agent over the FAKE NVML.
#   1. Deployment llama-7b (2 replicas, 1 GPU each) on two kwok GPU nodes;
#      the fake node tree attributes one fake GPU to each of its two pods.
#   2. HPA: External metric dcgm_gpu_utilization, selector app=llama-7b (the
#      server resolves the pods through the API server), target Value 70,
#      min 2, max 6, scaleDown stabilizationWindowSeconds 30 (shortened for
#      the test; docs/metrics-api.md has production values).
#   3. The fake GPUs report 95%: the Deployment's replicas (read from the API
#      server) must grow above 2.
#   4. They report 10%: the replicas must come back to 2, not before the
#      stabilization window has passed.
. "$(dirname "$0")/lib.sh"

start_cluster
"$K8S/add-gpu-nodes" 2 >/dev/null
pass "2 kwok GPU nodes Ready"

k create namespace ml >/dev/null
k apply -f - >/dev/null <<'YAML'
# The HPA controller's identity (kube-controller-manager runs with
# --use-service-account-credentials) may read external metrics.
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: gpufleet-external-metrics-reader}
rules:
- apiGroups: [external.metrics.k8s.io]
  resources: ["*"]
  verbs: [get, list]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: gpufleet-external-metrics-reader-hpa}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: gpufleet-external-metrics-reader}
subjects:
- {kind: ServiceAccount, name: horizontal-pod-autoscaler, namespace: kube-system}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: llama-7b, namespace: ml}
spec:
  replicas: 2
  selector: {matchLabels: {app: llama-7b}}
  template:
    metadata: {labels: {app: llama-7b}}
    spec:
      containers:
      - name: server
        image: registry.invalid/llama-7b:1
        resources: {limits: {nvidia.com/gpu: 1}}
YAML
running_pods() { k get pods -n ml -l app=llama-7b --field-selector status.phase=Running -o name | wc -l; }
two_running() { [ "$(running_pods)" = 2 ]; }
until_ok 90 "the Deployment's 2 pods are not Running" two_running
pass "Deployment ml/llama-7b: 2 pods Running"

# One fake GPU per pod: the fake node tree gives each pod a process on its GPU.
: >"$T/e2e.node"
: >"$T/e2e.state"
echo "driver 550.54.15" >>"$T/e2e.state"
i=0
for p in $(k get pods -n ml -l app=llama-7b -o jsonpath='{range .items[*]}{.metadata.name}/{.metadata.uid}{" "}{end}'); do
	name=${p%%/*} uid=${p#*/}
	cid=$(printf '%064x' $((i + 0xabc)))
	echo "pod ml $name $uid server $cid $((4000 + i)) v2-systemd-containerd" >>"$T/e2e.node"
	echo "gpu $i uuid=GPU-e2e0000-0000-0000-0000-00000000000$i name=\"NVIDIA H100 80GB HBM3\" bus=00000000:$((30 + i)):00.0 mem_total_mib=81559 mem_used_mib=40000 util_gpu=95 util_mem=30" >>"$T/e2e.state"
	echo "proc $i pid=$((4000 + i)) mem_mib=40000" >>"$T/e2e.state"
	i=$((i + 1))
done
start_agent "$T/e2e.node" "$T/e2e.state"
start_metrics_api ma --source agents --agents "http://127.0.0.1:$AGENT_PORT/metrics" --scrape-interval-ms 1000
register_apiservice
GV=/apis/external.metrics.k8s.io/v1beta1
metric() { value_of "$(raw "$GV/namespaces/ml/dcgm_gpu_utilization?labelSelector=app%3Dllama-7b")"; }
is95() { [ "$(metric)" = 95 ]; }
until_ok 30 "metric app=llama-7b is not 95: $(metric)" is95
pass "dcgm_gpu_utilization{app=llama-7b} = 95 through the aggregator"

k apply -f - >/dev/null <<'YAML'
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: llama-7b, namespace: ml}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: llama-7b}
  minReplicas: 2
  maxReplicas: 6
  metrics:
  - type: External
    external:
      metric:
        name: dcgm_gpu_utilization
        selector: {matchLabels: {app: llama-7b}}
      target: {type: Value, value: "70"}
  behavior:
    scaleUp:
      stabilizationWindowSeconds: 0
      policies: [{type: Pods, value: 4, periodSeconds: 15}]
    scaleDown:
      stabilizationWindowSeconds: 30
      policies: [{type: Percent, value: 100, periodSeconds: 15}]
YAML
replicas() { k get deployment llama-7b -n ml -o jsonpath='{.spec.replicas}'; }
hpa() { k get hpa llama-7b -n ml -o jsonpath='{.status.currentMetrics[0].external.current.value} ScalingActive={.status.conditions[?(@.type=="ScalingActive")].status}/{.status.conditions[?(@.type=="ScalingActive")].reason}'; }

# ---- 95%: scale up -------------------------------------------------------------------
ts=$(date +%s)
up=0
while [ $(($(date +%s) - ts)) -lt 120 ]; do
	r=$(replicas)
	if [ "$r" -gt 2 ]; then up=$r; break; fi
	sleep 2
done
[ "$up" -gt 2 ] || fail "replicas still $(replicas) after 120 s at 95% (HPA: $(hpa); $(k describe hpa llama-7b -n ml | tail -5))"
pass "95% GPU utilization: the HPA scaled ml/llama-7b from 2 to $up replicas in $(($(date +%s) - ts)) s (HPA: $(hpa))"
# Let it settle at the maximum: ceil(95/70 x ready) grows until maxReplicas.
at_max() { [ "$(replicas)" = 6 ]; }
until_ok 120 "replicas did not reach maxReplicas 6 (now $(replicas); HPA: $(hpa))" at_max
pass "replicas reached maxReplicas 6 in $(($(date +%s) - ts)) s"

# ---- 10%: back down after the stabilization window ---------------------------------------
set_util 10
td=$(date +%s)
is10() { [ "$(metric)" = 10 ]; }
until_ok 30 "metric did not drop to 10: $(metric)" is10
pass "the fake GPUs report 10%: dcgm_gpu_utilization{app=llama-7b} = 10"
down=
while [ $(($(date +%s) - td)) -lt 180 ]; do
	r=$(replicas)
	if [ "$r" = 2 ]; then down=$(($(date +%s) - td)); break; fi
	if [ "$r" -lt 6 ] && [ $(($(date +%s) - td)) -lt 20 ]; then
		fail "scaled down to $r only $(($(date +%s) - td)) s after the drop: the 30 s stabilization window was not honoured"
	fi
	sleep 2
done
[ -n "$down" ] || fail "replicas still $(replicas) 180 s after the drop to 10% (HPA: $(hpa))"
[ "$down" -ge 25 ] || fail "back to 2 after only ${down}s: the 30 s stabilization window was not honoured"
pass "10% GPU utilization: back to minReplicas 2 after ${down}s (scaleDown stabilizationWindowSeconds 30; HPA: $(hpa))"
k get events -n ml --field-selector involvedObject.kind=HorizontalPodAutoscaler -o jsonpath='{range .items[*]}{.reason}: {.message}{"\n"}{end}' | grep SuccessfulRescale || fail "no SuccessfulRescale events"
pass "all checks passed"
