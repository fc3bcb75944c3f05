# tests/metrics-api/lib.sh - shared by the metrics-api control-plane tests (sourced).
# Arguments of every script: GPUFLEET FAKE_NVML AGENT_DATA_DIR [more...].
# Provides: $T (temp dir), fail/pass, k (kubectl), until_ok, start_cluster,
# start_agent (over the FAKE NVML and a fake node tree), start_metrics_api,
# register_apiservice, start_prometheus; every process started here and the
# cluster are stopped on exit, also on failure (then the logs' tails are shown).
set -euo pipefail
GPUFLEET=$1 FAKE=$2 AGENT_DATA=$3
shift 3
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
. "$SRC/tests/listen-port.sh"
. "$SRC/tests/prometheus.sh"
K8S=$SRC/tests/k8s
T=$(mktemp -d /tmp/gf-ma-XXXXXX)
STATE=$T/cluster
PIDS=""
NAME=$(basename "$0" .sh)
t0=$(date +%s)
cleanup() {
	local rc=$?
	for p in $PIDS; do kill "$p" 2>/dev/null || true; done
	for p in $PIDS; do wait "$p" 2>/dev/null || true; done
	if [ $rc -ne 0 ]; then
		for f in "$T"/*.log "$STATE"/logs/kube-controller-manager.log "$STATE"/logs/kube-apiserver.log; do
			[ -f "$f" ] || continue
			echo "----- $(basename "$f") (last 25 lines)" >&2
			tail -n 25 "$f" >&2 || true
		done
	fi
	[ -d "$STATE" ] && "$K8S/cluster-down" "$STATE" >/dev/null 2>&1 || true
	rm -rf "$T"
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM
set -E
trap 'echo "$NAME: FAIL - line $LINENO: $BASH_COMMAND exited with $?" >&2' ERR
fail() { echo "$NAME: FAIL - $*" >&2; exit 1; }
pass() { echo "$NAME: ok - $* ($(($(date +%s) - t0))s)"; }
# until_ok SECONDS WHAT CMD...: poll CMD every second until it succeeds.
until_ok() {
	local secs=$1 what=$2 deadline
	shift 2
	deadline=$(($(date +%s) + secs))
	until "$@" >/dev/null 2>&1; do
		[ "$(date +%s)" -lt "$deadline" ] || fail "$what (waited ${secs}s)"
		sleep 1
	done
}

start_cluster() {
	mkdir -p "$STATE"
	KUBECONFIG=$("$K8S/cluster-up" --state-dir "$STATE" --owner-pid $$ "$@" | tail -n1)
	export KUBECONFIG
	. "$STATE/env"
	pass "control plane up at $GPUFLEET_K8S_APISERVER"
}
k() { "$GPUFLEET_K8S_KUBECTL" "$@"; }

# start_agent SPEC STATE: the agent over the FAKE NVML (state file STATE,
# copied to $T/nvml.state) and a fake node tree built from SPEC
# (tests/agent/make-fake-node); sets AGENT_PORT.
start_agent() {
	"$SRC/tests/agent/make-fake-node" "$1" "$T/node"
	cp "$2" "$T/nvml.state"
	GF_FAKE_NVML_STATE="$T/nvml.state" "$GPUFLEET" agent --address 127.0.0.1:0 --nvml-lib "$FAKE" \
		--proc-root "$T/node/proc" --log-root "$T/node/log" --node-name gpu-node-0 \
		--interval-ms 500 2>"$T/agent.log" &
	PIDS="$PIDS $!"
	AGENT_PORT=$(listen_port "$T/agent.log" $! agent http /metrics) || fail "agent did not start"
}

# set_util PCT: every fake GPU reports PCT% utilization (the fake re-reads its state).
set_util() {
	sed "s/util_gpu=[0-9]*/util_gpu=$1/" "$T/nvml.state" > "$T/nvml.state.new"
	sleep 0.05
	mv "$T/nvml.state.new" "$T/nvml.state"
}

# Serving certificate signed by the cluster CA for the name the aggregator
# verifies: <service>.<namespace>.svc.
make_serving_cert() {
	openssl genrsa -out "$T/tls.key" 2048 2>"$T/openssl.log"
	openssl req -new -key "$T/tls.key" -subj /CN=gpufleet-metrics-api -out "$T/tls.csr" 2>>"$T/openssl.log"
	printf 'subjectAltName=DNS:gpufleet-metrics-api.default.svc,DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >"$T/tls.ext"
	openssl x509 -req -in "$T/tls.csr" -CA "$GPUFLEET_K8S_CA" -CAkey "$GPUFLEET_K8S_CA_KEY" \
		-CAcreateserial -CAserial "$T/ca.srl" -days 2 -extfile "$T/tls.ext" -out "$T/tls.crt" 2>>"$T/openssl.log"
}

# start_metrics_api LOGNAME ARGS...: HTTPS with the front-proxy CA; sets MA_PORT, MA_PID.
start_metrics_api() {
	local log=$T/$1.log
	shift
	[ -f "$T/tls.crt" ] || make_serving_cert
	"$GPUFLEET" metrics-api --secure-port 0 --bind-address 127.0.0.1 \
		--tls-cert-file "$T/tls.crt" --tls-private-key-file "$T/tls.key" \
		--requestheader-client-ca-file "$GPUFLEET_K8S_FRONT_PROXY_CA" \
		--requestheader-allowed-names front-proxy-client --kubeconfig "$KUBECONFIG" \
		--log-requests "$@" 2>"$log" &
	MA_PID=$!
	PIDS="$PIDS $MA_PID"
	MA_PORT=$(listen_port "$log" "$MA_PID" metrics-api https /apis) || fail "metrics-api did not start"
}

# start_metrics_api_auto LOGNAME ARGS...: HTTPS with a self-signed certificate and
# the front-proxy CA read from kube-system/extension-apiserver-authentication.
start_metrics_api_auto() {
	local log=$T/$1.log
	shift
	"$GPUFLEET" metrics-api --secure-port 0 --bind-address 127.0.0.1 --kubeconfig "$KUBECONFIG" \
		--tls-san gpufleet-metrics-api.default.svc --log-requests "$@" 2>"$log" &
	MA_PID=$!
	PIDS="$PIDS $MA_PID"
	MA_PORT=$(listen_port "$log" "$MA_PID" metrics-api https /apis) || fail "metrics-api did not start"
}

# register_apiservice [insecure]: the ExternalName Service (docs/testing.md: no
# kube-proxy, aggregator routing off) and the APIService pointing at $MA_PORT
# (caBundle = the cluster CA, or insecureSkipTLSVerify), then wait until it is
# Available.
register_apiservice() {
	local ca tls
	ca=$(base64 -w0 <"$GPUFLEET_K8S_CA")
	tls="caBundle: $ca"
	[ "${1:-}" = insecure ] && tls="insecureSkipTLSVerify: true"
	k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Service
metadata: {name: gpufleet-metrics-api, namespace: default}
spec: {type: ExternalName, externalName: localhost}
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1beta1.external.metrics.k8s.io}
spec:
  group: external.metrics.k8s.io
  version: v1beta1
  groupPriorityMinimum: 100
  versionPriority: 100
  service: {namespace: default, name: gpufleet-metrics-api, port: $MA_PORT}
  $tls
YAML
	apiservice_available() {
		[ "$(k get apiservice v1beta1.external.metrics.k8s.io -o jsonpath='{.status.conditions[?(@.type=="Available")].status}')" = True ] &&
		[ "$(k get apiservice v1beta1.external.metrics.k8s.io -o jsonpath='{.spec.service.port}')" = "$MA_PORT" ]
	}
	until_ok 90 "APIService v1beta1.external.metrics.k8s.io not Available: $(k get apiservice v1beta1.external.metrics.k8s.io -o jsonpath='{.status.conditions[0].message}' 2>&1)" apiservice_available
	pass "APIService v1beta1.external.metrics.k8s.io Available (backend https://127.0.0.1:$MA_PORT)"
}

free_port() {
	local p
	for _ in $(seq 50); do
		p=$(( (RANDOM % 20000) + 30000 ))
		[ -z "$(ss -Htan "( sport = :$p )" 2>/dev/null)" ] && { echo "$p"; return; }
	done
	fail "no free port"
}

# start_prometheus: the real Prometheus scraping the agent every second; sets PROM_URL.
start_prometheus() {
	command -v prometheus >/dev/null || fail "prometheus not installed (scripts/bootstrap test)"
	cat > "$T/prometheus.yml" <<YML
global: {scrape_interval: 1s, scrape_timeout: 1s}
scrape_configs:
  - job_name: gpufleet-agent
    static_configs: [{targets: ["127.0.0.1:$AGENT_PORT"]}]
YML
	prom_start "$T/prometheus.log" || fail "prometheus did not start"
	PROM_URL=http://127.0.0.1:$PP
}

# raw PATH: kubectl get --raw through the aggregator (stdout+stderr).
raw() { k get --raw "$1" 2>&1; }
# value_of JSON: the first item's value
value_of() { echo "$1" | jq -r '.items[0].value // "none"'; }
