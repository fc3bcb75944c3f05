#!/bin/bash
# tests/metrics-api/ma_k8s_raw.sh GPUFLEET FAKE_NVML AGENT_DATA agents|prometheus
#
# On the real control plane (tests/k8s): the agent runs over the FAKE NVML
# (tests/agent/data/two_gpus.*: GPU 0 87% used by ml/llm-7d9f-abcde, GPU 1
# 55% shared by research/trainer-0 and team-b/notebook-x); gpufleet
# metrics-api serves it (directly from the agent, or through the real
# Prometheus scraping the agent) behind the APIService, over TLS with the
# aggregator's front-proxy client certificate checked.  Checks: the
# APIService becomes Available; `kubectl get --raw` on the external metrics
# paths returns the agent's values (per namespace, per pod, per node and GPU
# model, and by the pod's labels through the API server); unknown metrics,
# bad selectors and clients without the front-proxy certificate get Status
# errors with the right codes.
. "$(dirname "$0")/lib.sh"
SOURCE=${1:?agents or prometheus}
NAME="$NAME[$SOURCE]"
GV=/apis/external.metrics.k8s.io/v1beta1

start_cluster
start_agent "$AGENT_DATA/two_gpus.node" "$AGENT_DATA/two_gpus.state"
pass "agent on 127.0.0.1:$AGENT_PORT over the FAKE NVML"
if [ "$SOURCE" = prometheus ]; then
	start_prometheus
	prom_has() { curl -sf -G "$PROM_URL/api/v1/query" --data-urlencode 'query=DCGM_FI_DEV_GPU_UTIL{pod="llm-7d9f-abcde"}' | jq -e '.data.result[0].value[1] == "87"'; }
	until_ok 60 "Prometheus has no sample of the agent" prom_has
	pass "Prometheus $PROM_URL scrapes the agent"
	start_metrics_api ma --source prometheus --prometheus-url "$PROM_URL"
else
	start_metrics_api ma --source agents --agents "http://127.0.0.1:$AGENT_PORT/metrics" --scrape-interval-ms 500
fi
register_apiservice

# ---- discovery through the aggregator ----------------------------------------------
out=$(raw $GV) || fail "discovery: $out"
echo "$out" | jq -e '.kind == "APIResourceList" and ([.resources[].name] | index("dcgm_gpu_utilization") != null)
	and ([.resources[] | select(.name == "dcgm_gpu_utilization")][0] | .namespaced == true and .kind == "ExternalMetricValueList" and .verbs == ["get"])' >/dev/null ||
	fail "APIResourceList: $out"
# kubectl reads the aggregated discovery document, which the API server
# refreshes on its own schedule after the APIService turns Available: wait for it.
listed=no
for _ in $(seq 30); do
	if k api-resources --api-group=external.metrics.k8s.io 2>&1 | grep -q dcgm_gpu_utilization; then
		listed=yes
		break
	fi
	sleep 1
done
[ $listed = yes ] || fail "kubectl api-resources does not list dcgm_gpu_utilization (30 s after the APIService was Available)"
pass "discovery: APIResourceList through the aggregator, kubectl api-resources lists the metrics"

# ---- values: kubectl get --raw ----------------------------------------------------------
# expect NS METRIC SELECTOR(url-encoded or "") VALUE
expect() {
	local path=$GV/namespaces/$1/$2 out v
	[ -n "$3" ] && path="$path?labelSelector=$3"
	for _ in $(seq 30); do
		out=$(raw "$path") && v=$(value_of "$out") && [ "$v" = "$4" ] && break
		sleep 1
	done
	[ "$v" = "$4" ] || fail "kubectl get --raw $path: want value $4, got: $out"
	echo "$out" | jq -e '.kind == "ExternalMetricValueList" and .apiVersion == "external.metrics.k8s.io/v1beta1"
		and (.items | length) == 1 and .items[0].metricName == "'"$2"'"
		and (.items[0].timestamp | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$"))' >/dev/null ||
		fail "$path: not a one-item ExternalMetricValueList: $out"
	pass "kubectl get --raw $path -> $4"
}
expect ml dcgm_gpu_utilization "" 87
expect ml DCGM_FI_DEV_GPU_UTIL "pod%3Dllm-7d9f-abcde" 87
expect ml dcgm_gpu_utilization "gpu%3DNVIDIA-H100-80GB-HBM3%2Cnode%3Dgpu-node-0" 87
expect ml dcgm_gpu_utilization "gpu_index+in+%280%2C1%29" 87
expect research dcgm_gpu_utilization "" 55
expect team-b DCGM_FI_DEV_FB_USED "container%3Djupyter" 12k
expect ml DCGM_FI_DEV_POWER_USAGE "" 412318m

# Selecting by the pod's labels: the server lists the pods through the API server.
k create namespace ml >/dev/null
k apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: llm-7d9f-abcde, namespace: ml, labels: {app: llm, tier: serving}}
spec: {containers: [{name: server, image: registry.invalid/llm:1}]}
YAML
expect ml dcgm_gpu_utilization "app%3Dllm" 87
expect ml dcgm_gpu_utilization "app+in+%28llm%2Cother%29%2Ctier%21%3Dbatch" 87
out=$(raw "$GV/namespaces/ml/dcgm_gpu_utilization?labelSelector=app%3Dnothing-here") || fail "$out"
[ "$(echo "$out" | jq '.items | length')" = 0 ] || fail "selector matching no pod: want no item, got $out"
pass "workload selector app=llm -> 87 via the pod list; app=nothing-here -> no item"

# ---- deploy/ manifests and the docs' HPA are accepted by the API server -----------------
if [ "$SOURCE" = agents ]; then
	k apply -f "$SRC/deploy/agent/namespace.yaml" >/dev/null
	out=$(k apply --dry-run=server -f "$SRC/deploy/metrics-api/" 2>&1) || fail "deploy/metrics-api rejected: $out"
	for kind in serviceaccount/gpufleet-metrics-api clusterrole.rbac.authorization.k8s.io/gpufleet-metrics-api \
		rolebinding.rbac.authorization.k8s.io/gpufleet-metrics-api-auth-reader deployment.apps/gpufleet-metrics-api \
		service/gpufleet-metrics-api apiservice.apiregistration.k8s.io/v1beta1.external.metrics.k8s.io \
		horizontalpodautoscaler.autoscaling/llama-7b; do
		echo "$out" | grep -q "^$kind .*(server dry run)" || fail "deploy/metrics-api: $kind not accepted: $out"
	done
	bad=$(sed 's/value: "70"/value: "70%"/' "$SRC/deploy/metrics-api/hpa-example.yaml")
	out=$(echo "$bad" | k apply --dry-run=server -f - 2>&1) && fail "an HPA with value \"70%\" was accepted: $out"
	echo "$out" | grep -qi "quantities must match the regular expression" || fail "70% rejected for another reason: $out"
	pass "deploy/metrics-api/*.yaml accepted (server dry run); the docs' HPA with \"70\" accepted, with \"70%\" rejected"
fi

# ---- Status errors, with their HTTP codes (curl with the admin certificate) ------------
pki=$STATE/pki
code_of() { # PATH -> "CODE BODY"
	curl -sS --max-time 10 --cacert "$GPUFLEET_K8S_CA" --cert "$pki/admin.crt" --key "$pki/admin.key" \
		-w '\n%{http_code}' "$GPUFLEET_K8S_APISERVER$1"
}
status_is() { # PATH CODE REASON MESSAGE-PART
	local out code body
	out=$(code_of "$1")
	code=$(echo "$out" | tail -n1)
	body=$(echo "$out" | sed '$d')
	[ "$code" = "$2" ] || fail "$1: HTTP $code, want $2: $body"
	echo "$body" | jq -e --arg r "$3" --argjson c "$2" --arg m "$4" \
		'.kind == "Status" and .status == "Failure" and .reason == $r and .code == $c and (.message | contains($m))' >/dev/null ||
		fail "$1: want Status $2 $3 '$4', got $body"
	pass "$1 -> $2 $3"
}
status_is "$GV/namespaces/ml/no_such_metric" 404 NotFound "could not find the metric no_such_metric"
status_is "$GV/namespaces/ml/dcgm_gpu_utilization?labelSelector=app%3D%3D%3Dx" 400 BadRequest "labelSelector"
status_is "$GV/namespaces/ml/dcgm_gpu_utilization?labelSelector=gpu%3D70%25" 400 BadRequest "invalid label value"
err=$(k get --raw "$GV/namespaces/ml/no_such_metric" 2>&1) && fail "kubectl get --raw of an unknown metric succeeded: $err"
echo "$err" | grep -q "NotFound" || fail "kubectl: $err"
pass "kubectl get --raw of an unknown metric: $err"

# ---- only the aggregator gets in ---------------------------------------------------------
out=$(curl -sS -k --max-time 10 -w '\n%{http_code}' -H 'X-Remote-User: system:admin' "https://127.0.0.1:$MA_PORT$GV/namespaces/ml/dcgm_gpu_utilization")
[ "$(echo "$out" | tail -n1)" = 401 ] || fail "direct request without the front-proxy certificate: $out"
echo "$out" | sed '$d' | jq -e '.reason == "Unauthorized"' >/dev/null || fail "401 body: $out"
out=$(curl -sS -k --max-time 10 -w '\n%{http_code}' --cert "$pki/admin.crt" --key "$pki/admin.key" "https://127.0.0.1:$MA_PORT$GV")
[ "$(echo "$out" | tail -n1)" = 401 ] || fail "request with a certificate of another CA: $out"
out=$(curl -sS -k --max-time 10 --cert "$pki/front-proxy-client.crt" --key "$pki/front-proxy-client.key" \
	"https://127.0.0.1:$MA_PORT$GV/namespaces/ml/dcgm_gpu_utilization")
[ "$(value_of "$out")" = 87 ] || fail "request with the front-proxy certificate: $out"
grep -q "user=gpufleet-admin" "$T/ma.log" || fail "X-Remote-User of kubectl's requests not seen: $(tail -3 "$T/ma.log")"
pass "direct requests: no client certificate -> 401, another CA -> 401, front-proxy certificate -> 200; X-Remote-User logged"

kill -TERM "$MA_PID"
wait "$MA_PID" || fail "metrics-api exited with $? on SIGTERM"
grep -q "stopping" "$T/ma.log" || fail "no graceful stop"
pass "graceful stop on SIGTERM"

# ---- no certificate files: self-signed serving certificate, front-proxy CA and
# ---- allowed names read from kube-system/extension-apiserver-authentication -----
if [ "$SOURCE" = agents ]; then
	# the agents found through DNS (in a cluster: their headless Service)
	start_metrics_api_auto ma-auto --source agents --agents-dns "localhost:$AGENT_PORT" --scrape-interval-ms 500
	grep -q "1 allowed name(s) from kube-system/extension-apiserver-authentication" "$T/ma-auto.log" ||
		fail "front-proxy trust not read from the ConfigMap: $(cat "$T/ma-auto.log")"
	register_apiservice insecure
	expect ml dcgm_gpu_utilization "pod%3Dllm-7d9f-abcde" 87
	out=$(curl -sS -k --max-time 10 -w '\n%{http_code}' "https://127.0.0.1:$MA_PORT$GV/namespaces/ml/dcgm_gpu_utilization")
	[ "$(echo "$out" | tail -n1)" = 401 ] || fail "auto-configured server let a client without certificate in: $out"
	grep -q "localhost resolves to [1-9][0-9]* agents" "$T/ma-auto.log" || fail "no agents from DNS: $(cat "$T/ma-auto.log")"
	pass "self-signed certificate + trust from the ConfigMap + agents from DNS: Available, values through the aggregator, 401 without the front-proxy certificate"
fi
pass "all checks passed"
