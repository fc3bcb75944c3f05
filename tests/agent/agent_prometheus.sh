#!/bin/bash
# tests/agent/agent_prometheus.sh - end to end with the real Prometheus server
# (Debian package `prometheus`): it scrapes the agent running over the FAKE
# NVML and a fake node tree; we query Prometheus' HTTP API and find the
# scripted values under dcgm-exporter's names, types and labels, with the
# pod/namespace/container attribution.  Prometheus runs on its own loopback
# port with its own config and storage under $T, and is killed at the end.
. "$(dirname "$0")/lib.sh"
command -v prometheus >/dev/null || fail "prometheus not installed (scripts/bootstrap test)"

start_agent --interval-ms 500


cat > "$T/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: gpufleet-agent
    static_configs:
      - targets: ["127.0.0.1:$PORT"]
YML

. "$HERE/../prometheus.sh"
prom_start "$T/prom.log" || { cat "$T/prom.log" >&2; fail "prometheus did not start"; }
pass "prometheus $(prometheus --version 2>&1 | head -1 | awk '{print $3}') ready on 127.0.0.1:$PP"

# query PROMQL -> result array (JSON)
query() { curl -sS --max-time 5 -G "http://127.0.0.1:$PP/api/v1/query" --data-urlencode "query=$1" | jq -c '.data.result'; }

for _ in $(seq 60); do
	[ "$(query 'up{job="gpufleet-agent"}' | jq -r '.[0].value[1] // empty')" = 1 ] &&
		[ "$(query 'count(DCGM_FI_DEV_GPU_UTIL)' | jq -r '.[0].value[1] // empty')" != "" ] && break
	sleep 0.5
done
[ "$(query 'up{job="gpufleet-agent"}' | jq -r '.[0].value[1]')" = 1 ] ||
	fail "target not up: $(curl -s "http://127.0.0.1:$PP/api/v1/targets" | jq -c '.data.activeTargets[0].lastError')"
pass "Prometheus scrapes the agent (up == 1)"

# expect PROMQL LABEL=VALUE... VALUE: exactly one series, with these labels and value.
expect() {
	local q=$1; shift
	local want=${!#}
	local r
	r=$(query "$q")
	[ "$(echo "$r" | jq length)" = 1 ] || fail "$q: want 1 series, got $r"
	[ "$(echo "$r" | jq -r '.[0].value[1]')" = "$want" ] || fail "$q: want $want, got $r"
	while [ $# -gt 1 ]; do
		local k=${1%%=*} v=${1#*=}
		[ "$(echo "$r" | jq -r --arg k "$k" '.[0].metric[$k]')" = "$v" ] || fail "$q: label $k want '$v', got $r"
		shift
	done
	pass "$q = $want"
}

U0=GPU-1f3c2a9e-8d7b-4c6a-9e21-0a5b7c3d2e10
expect 'DCGM_FI_DEV_GPU_UTIL{gpu="0"}' UUID=$U0 pci_bus_id=00000000:3B:00.0 device=nvidia0 \
	"modelName=NVIDIA H100 80GB HBM3" hostname=node-a DCGM_FI_DRIVER_VERSION=550.54.15 \
	pod=llm-7d9f-abcde namespace=ml container=server 87
expect 'DCGM_FI_DEV_MEM_COPY_UTIL{gpu="0"}' 41
expect 'DCGM_FI_DEV_FB_USED{gpu="0"}' pod=llm-7d9f-abcde 61234
expect 'DCGM_FI_DEV_FB_FREE{gpu="0"}' 19813
expect 'DCGM_FI_DEV_SM_CLOCK{gpu="0"}' 1980
expect 'DCGM_FI_DEV_MEM_CLOCK{gpu="1",pod="trainer-0"}' 2619
expect 'DCGM_FI_DEV_POWER_USAGE{gpu="0"}' 412.318
expect 'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu="1",pod="notebook-x"}' 987654321
expect 'DCGM_FI_DEV_GPU_TEMP{gpu="0"}' 64
expect 'DCGM_FI_DEV_MEMORY_TEMP{gpu="0"}' 71
expect 'DCGM_FI_DEV_PCIE_REPLAY_COUNTER{gpu="0"}' 2
expect 'DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL{gpu="0"}' 300
expect 'DCGM_FI_DEV_XID_ERRORS{gpu="0"}' err_code=79 "err_msg=GPU has fallen off the bus" 79
expect 'DCGM_FI_DEV_ECC_SBE_VOL_TOTAL{gpu="0"}' 1
expect 'DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS{gpu="0"}' 3
# The shared GPU: each pod its own process memory, not the device's 30000 MiB.
expect 'DCGM_FI_DEV_FB_USED{gpu="1",pod="trainer-0"}' namespace=research container=main 10000
expect 'DCGM_FI_DEV_FB_USED{gpu="1",pod="notebook-x"}' namespace=team-b container=jupyter 12000
expect 'count(DCGM_FI_DEV_FB_USED{gpu="1"})' 2
[ "$(query 'DCGM_FI_DEV_ENC_UTIL{gpu="1"}')" = "[]" ] || fail "unsupported ENC_UTIL on GPU 1 was published"
pass "unsupported reading omitted for GPU 1"
expect 'sum(gpufleet_gpu_up)' 2

# Types as dcgm-exporter declares them (Prometheus' metadata API).
meta() { curl -sS -G "http://127.0.0.1:$PP/api/v1/metadata" --data-urlencode "metric=$1" | jq -r ".data[\"$1\"][0].type"; }
for _ in $(seq 20); do [ "$(meta DCGM_FI_DEV_GPU_UTIL)" = gauge ] && break; sleep 0.5; done
[ "$(meta DCGM_FI_DEV_GPU_UTIL)" = gauge ] || fail "GPU_UTIL type $(meta DCGM_FI_DEV_GPU_UTIL)"
[ "$(meta DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION)" = counter ] || fail "energy type"
[ "$(meta DCGM_FI_DEV_XID_ERRORS)" = gauge ] || fail "xid type"
pass "metric types: gauge / counter as in dcgm-exporter"
stop_agent
