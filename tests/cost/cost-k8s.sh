#!/usr/bin/env bash
# tests/cost/cost-k8s.sh GPUFLEET SRC - the allocation record agrees with the scheduler, end to end
# (ctest cost_k8s, labels cost;k8s): the real control plane (tests/k8s/cluster-up, kwok GPU nodes),
# `gpufleet schedule` placing a scripted day of pods, a real Prometheus (Debian `prometheus`)
# scraping the scheduler's /metrics every second, and `gpufleet cost --serve`'s /allocation JSON
# compared with the hand-computed day.
#
# Fast-forwarded by scaling time: ONE HOUR OF THE DAY IS 5 REAL SECONDS (the day is 120 s). Pods
# are created and deleted at the scripted (scaled) times; the report is read for the real 120 s
# window at 1 s resolution, so every GPU-hour it reports is 5 s / 3600 s of a day-hour: its
# gpuHours and costs (prices are per real hour) x 720 are the day's GPU-hours and costs.
#
# Nodes: h100-0 (2 x NVIDIA-H100-80GB-HBM3, on-demand), spot-0 (1 x NVIDIA-A100-SXM4-40GB,
# labelled gpufleet.io/capacity-type=spot). Prices H100 4.00/1.80, A100 2.00/0.80 per GPU-hour.
# The day (hours):
#   team-a  a1..a4  gpu-milli 250 on H100                00-08   4 x 0.25 x 8 = 8 GPU-h, 32.00
#   team-b  b1      nvidia.com/gpu 1 on H100             10-22   12 GPU-h, 48.00
#   team-b  b2      gpu-memory-mib 20480 on spot A100    04-18   (20480/40960 = 0.5) x 14 = 7 GPU-h
#                                                                x 0.80 = 5.60
# Hand-computed: team-a 8 GPU-h, 32.00 (whole-GPU 32 h, 128.00, saved by sharing 96.00);
#   team-b 19 GPU-h, 53.60 (whole 26 h, 59.20), saved by spot 7 x 1.20 = 8.40;
#   capacity 3 GPUs x 24 h = 72 GPU-h (H100 48 x 4.00 + A100 24 x 0.80 = 211.20);
#   __idle__ 72 - 27 = 45 GPU-h (H100 28 x 4.00 + A100 17 x 0.80 = 125.60);
#   saved by spot in all: (7 + 17) x 1.20 = 28.80.
# Tolerance: a pod's record starts when the scheduler assigns it and ends when it sees the
# delete, and Prometheus samples each second: each pod's edges may differ from the script by
# up to 3 real s (0.6 day-hours), so a row's GPU-hours may be off by 0.6 x (pods x share) x 2
# edges (costs: x their price); capacity is checked to 0.1 %. (Runs on a loaded 2-core machine
# lost up to 2 s per pod in all.)
#
# With "ha" as the third argument (ctest cost_k8s_ha): two `gpufleet schedule --leader-elect`
# replicas (a leads, b stands by; kube-scheduler's 15 s lease), both scraped by Prometheus as
# their own targets, and a killed with SIGKILL at hour 12 (b takes over before hour 18, the next
# pod event). Every figure must hold with the same tolerances: each GPU and share counted once,
# and no gap at the takeover (capacity to 0.1 %).
set -euo pipefail
bin=$1
src=$2
mode=${3:-}
command -v prometheus >/dev/null || { echo "prometheus not installed (scripts/bootstrap test)"; exit 1; }
command -v jq >/dev/null || { echo "jq not installed (scripts/bootstrap test)"; exit 1; }
k8s=$src/tests/k8s
T=$(mktemp -d "${TMPDIR:-/tmp}/gpufleet-costk8s.XXXXXX")
state=$T/k8s
mkdir -p "$state"
PIDS=""
cleanup() {
	rc=$?
	for p in $PIDS; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	"$k8s/cluster-down" "$state" >/dev/null 2>&1 || true
	rm -rf "$T"
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM
fail() { echo "FAIL: $*"; for f in "$T"/*.log; do [ -f "$f" ] && { echo "--- $f"; tail -20 "$f"; }; done; exit 1; }
pass() { echo "ok: $*"; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

KUBECONFIG=$("$k8s/cluster-up" --state-dir "$state" --owner-pid $$ | tail -n1)
export KUBECONFIG
. "$state/env"
k() { "$GPUFLEET_K8S_KUBECTL" "$@"; }
"$k8s/add-gpu-nodes" --prefix h100- --gpus 2 >/dev/null 2>>"$T/nodes.log" 1
"$k8s/add-gpu-nodes" --prefix spot- --gpus 1 --product NVIDIA-A100-SXM4-40GB --gpu-memory 40960 \
	--label gpufleet.io/capacity-type=spot >/dev/null 2>>"$T/nodes.log" 1
k create namespace team-a >/dev/null
k create namespace team-b >/dev/null
for ns in team-a team-b; do   # pods need the namespace's default service account
	for _ in $(seq 100); do k get serviceaccount default -n $ns >/dev/null 2>&1 && break; sleep 0.2; done
done
pass "control plane with h100-0 (2 x H100) and spot-0 (1 x A100, spot)"

sched() { # sched PORT LOG [ARGS...]: a scheduler replica, healthy and listing the 3 GPUs
	local port=$1 log=$2
	shift 2
	"$bin" schedule --kubeconfig "$KUBECONFIG" --address "127.0.0.1:$port" --extender-address 127.0.0.1:0 \
		"$@" >"$log" 2>&1 &
	SPID=$!
	PIDS="$PIDS $SPID"
	for _ in $(seq 150); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break; sleep 0.2; done
	curl -sf "http://127.0.0.1:$port/healthz" >/dev/null || fail "the scheduler on :$port is not healthy"
	[ "$(curl -sf "http://127.0.0.1:$port/metrics" | grep -c '^gpufleet_gpu_capacity{')" = 3 ] ||
		fail "the scheduler on :$port does not list 3 GPUs: $(curl -sf "http://127.0.0.1:$port/metrics" | grep capacity)"
}
leads() { curl -sf "http://127.0.0.1:$1/metrics" | awk '$1 == "gpufleet_leader" { print $2 }'; }
SP=$(free_port)
if [ "$mode" = ha ]; then
	elect() { echo --leader-elect --leader-elect-namespace default --leader-elect-identity "replica-$1"; }
	# shellcheck disable=SC2046
	sched "$SP" "$T/sched.log" $(elect a)
	SPA=$SPID
	for _ in $(seq 150); do [ "$(leads "$SP")" = 1 ] && break; sleep 0.2; done
	[ "$(leads "$SP")" = 1 ] || fail "replica a does not lead after 30 s"
	SP2=$(free_port)
	# shellcheck disable=SC2046
	sched "$SP2" "$T/sched-b.log" $(elect b)
	[ "$(leads "$SP2")" = 0 ] || fail "replica b leads beside a"
	targets="'127.0.0.1:$SP', '127.0.0.1:$SP2'"
	pass "gpufleet schedule --leader-elect: a on 127.0.0.1:$SP leads, b on 127.0.0.1:$SP2 stands by; both list the 3 GPUs"
else
	sched "$SP" "$T/sched.log"
	targets="'127.0.0.1:$SP'"
	pass "gpufleet schedule on 127.0.0.1:$SP lists the 3 GPUs"
fi

PP=$(free_port)
cat >"$T/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: gpufleet-scheduler
    static_configs:
      - targets: [$targets]
EOF
prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/tsdb" \
	--web.listen-address="127.0.0.1:$PP" --log.level=warn 2>"$T/prom.log" &
PIDS="$PIDS $!"
for _ in $(seq 150); do curl -sf "http://127.0.0.1:$PP/-/ready" >/dev/null 2>&1 && break; sleep 0.2; done
up=0
for _ in $(seq 60); do
	up=$(curl -sf "http://127.0.0.1:$PP/api/v1/query?query=sum(up)" | jq -r '.data.result[0].value[1] // 0' || echo 0)
	[ "$up" = "$(echo "$targets" | tr ',' '\n' | grep -c .)" ] && break
	sleep 0.5
done
[ "$up" = "$(echo "$targets" | tr ',' '\n' | grep -c .)" ] || fail "prometheus does not scrape the scheduler ($up up of $targets)"
pass "prometheus on 127.0.0.1:$PP scrapes $targets every second"

# ---- the day: 1 hour = 5 s
H=5
pod() { # pod NS NAME NODE ANNOTATION-or-"" LIMIT-or-""
	local ann="" lim=""
	[ -n "$4" ] && ann="\"annotations\": {${4}},"
	[ -n "$5" ] && lim="\"limits\": {${5}},"
	cat <<EOF
{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "$2", "namespace": "$1", $ann "labels": {"app": "cost-test"}},
 "spec": {"schedulerName": "gpufleet", "nodeSelector": {"kubernetes.io/hostname": "$3"},
  "terminationGracePeriodSeconds": 0,
  "containers": [{"name": "c", "image": "registry.invalid/x:1",
   "resources": {$lim "requests": {"cpu": "100m", "memory": "64Mi"}}}]}}
EOF
}
for i in 1 2 3 4; do pod team-a "a$i" h100-0 '"gpufleet.io/gpu-milli": "250"' "" >"$T/a$i.json"; done
{ echo '{"apiVersion": "v1", "kind": "List", "items": ['; cat "$T/a1.json"; for i in 2 3 4; do echo ,; cat "$T/a$i.json"; done; echo ']}'; } >"$T/a.json"
pod team-b b1 h100-0 "" '"nvidia.com/gpu": "1"' >"$T/b1.json"
pod team-b b2 spot-0 '"gpufleet.io/gpu-memory-mib": "20480"' "" >"$T/b2.json"

t0=$(($(date +%s) + 2))
at() { # at HOUR: sleep until t0 + HOUR x H
	local s
	s=$(python3 -c "import time; print(max(0.0, $t0 + $1 * $H - time.time()))")
	sleep "$s"
}
act() { k "$@" >>"$T/kubectl.log" 2>&1 || fail "kubectl $*"; }
at 0;  act create -f "$T/a.json"
at 4;  act create -f "$T/b2.json"
at 8;  act delete -n team-a pod a1 a2 a3 a4 --wait=false
at 10; act create -f "$T/b1.json"
if [ "$mode" = ha ]; then
	at 12
	kill -9 "$SPA"
	wait "$SPA" 2>/dev/null || true
	tkill=$(date +%s)
fi
at 18; act delete -n team-b pod b2 --wait=false
at 22; act delete -n team-b pod b1 --wait=false
at 24
sleep 3   # the last scrapes of the window, and the staleness marker after b1
pass "the scripted day ran from $t0 (1 hour = $H s)"
if [ "$mode" = ha ]; then
	[ "$(leads "$SP2")" = 1 ] || fail "replica b does not lead after a's SIGKILL at hour 12"
	n=$(curl -sf "http://127.0.0.1:$PP/api/v1/query" --data-urlencode "time=$((t0 + 24 * H))" --data-urlencode \
		"query=count(count by (instance) (count_over_time(gpufleet_gpu_capacity[$((24 * H))s])))" |
		jq -r '.data.result[0].value[1]')
	[ "$n" = 2 ] || fail "the record was scraped from $n replicas, want 2"
	pass "replica a killed $((tkill - t0)) s into the day (hour 12), b leads; Prometheus holds the record of both replicas"
fi

printf 'model,on_demand_per_hour,spot_per_hour\nNVIDIA-H100-80GB-HBM3,4.00,1.80\nNVIDIA-A100-SXM4-40GB,2.00,0.80\n' \
	>"$T/prices.csv"
CP=$(free_port)
"$bin" cost --serve --prometheus "http://127.0.0.1:$PP" --prices "$T/prices.csv" --port "$CP" \
	--bind-address 127.0.0.1 --insecure-http 2>"$T/serve.log" &
PIDS="$PIDS $!"
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$CP/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
W="$t0,$((t0 + 24 * H))"
code=$(curl -s -o "$T/alloc.json" -w '%{http_code}' \
	"http://127.0.0.1:$CP/allocation?window=$W&aggregate=namespace&includeIdle=true&resolution=1s")
[ "$code" = 200 ] || fail "HTTP $code: $(cat "$T/alloc.json")"
j() { jq -r "$1" "$T/alloc.json"; }
[ "$(j '.data[0] | keys | join(",")')" = "__idle__,team-a,team-b" ] || fail "names: $(j '.data[0] | keys')"
S=$((3600 / H))   # the scale: reported real GPU-hours x S = day GPU-hours
report=""
near() { # near JQ_PATH WANT TOLERANCE (in day units)
	local got
	got=$(j "$1")
	got=$(awk -v g="$got" -v s="$S" 'BEGIN { printf "%.3f", g * s }')
	report="$report
  $1 = $got (hand-computed $2 +- $3)"
	awk -v g="$got" -v w="$2" -v t="$3" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(d <= t) }' ||
		fail "$1 x $S = $got, hand-computed $2 +- $3 $(cat "$T/alloc.json")"
}
# tolerances: 0.6 day-hours per pod edge x share (x price for costs)
near '.data[0]["team-a"].gpuHours' 8 1.2
near '.data[0]["team-a"].gpuCost' 32 4.8
near '.data[0]["team-a"].gpuWholeHours' 32 4.8
near '.data[0]["team-a"].gpuSavedBySharing' 96 14.4
near '.data[0]["team-b"].gpuHours' 19 1.8
near '.data[0]["team-b"].gpuCost' 53.6 5.28
near '.data[0]["team-b"].gpuWholeHours' 26 2.4
near '.data[0]["team-b"].gpuWholeCost' 59.2 5.76
near '.data[0]["team-b"].gpuSavedBySpot' 8.4 0.72
near '.data[0]["__idle__"].gpuHours' 45 3.0
near '.data[0]["__idle__"].gpuCost' 125.6 10.08
near '.data[0]["__idle__"].gpuSavedBySpot' 20.4 0.72   # 17 idle hours on the spot A100 x 1.20
# capacity: exact but for the sampling (0.1 %)
cap=$(jq '[.data[0][] | .gpuHours] | add' "$T/alloc.json")
capcost=$(jq '[.data[0][] | .totalCost] | add' "$T/alloc.json")
report="$report
  capacity = $(awk -v c="$cap" -v s="$S" 'BEGIN { printf "%.3f", c * s }') GPU-h, $(awk -v c="$capcost" -v s="$S" 'BEGIN { printf "%.2f", c * s }') (hand-computed 72, 211.20)"
awk -v c="$cap" -v s="$S" 'BEGIN { d = c * s - 72; if (d < 0) d = -d; exit !(d <= 0.072) }' ||
	fail "capacity $cap x $S, want 72"
awk -v c="$capcost" -v s="$S" 'BEGIN { d = c * s - 211.2; if (d < 0) d = -d; exit !(d <= 0.212) }' ||
	fail "capacity cost $capcost x $S, want 211.20"
[ "$(j '.data[0]["team-b"].properties.namespace')" = team-b ] || fail "properties.namespace"
[ "$(j '.data[0]["team-a"].properties.node')" = h100-0 ] || fail "team-a's node: $(j '.data[0]["team-a"].properties')"
[ "$(j '.data[0]["team-a"].properties.gpuModel')" = NVIDIA-H100-80GB-HBM3 ] || fail "team-a's model"
for f in cpuCores cpuCost ramCost gpuCount gpuHours gpuCost gpuEfficiency totalCost minutes; do
	[ "$(j ".data[0][\"team-b\"].$f | type")" = number ] || fail "$f is not a number"
done
echo "the day read back (x $S):$report"
pass "/allocation (namespace) equals the hand-computed day within the stated tolerance"

code=$(curl -s -o "$T/alloc.json" -w '%{http_code}' \
	"http://127.0.0.1:$CP/allocation?window=$W&aggregate=pod&includeIdle=false&resolution=1s")
[ "$code" = 200 ] || fail "HTTP $code: $(cat "$T/alloc.json")"
[ "$(j '.data[0] | keys | join(",")')" = "team-a/a1,team-a/a2,team-a/a3,team-a/a4,team-b/b1,team-b/b2" ] ||
	fail "pods: $(j '.data[0] | keys')"
report=""
near '.data[0]["team-a/a1"].gpuHours' 2 0.3
near '.data[0]["team-b/b1"].gpuHours' 12 1.2
near '.data[0]["team-b/b2"].gpuHours' 7 0.6
near '.data[0]["team-b/b2"].gpuWholeHours' 14 1.2
[ "$(j '.data[0]["team-b/b2"].properties.node')" = spot-0 ] || fail "b2's node"
# The shares themselves are exact: whole-GPU hours = share hours / share for every pod, to the
# JSON's six decimals (each number rounded to 5e-7 h).
ratio() { # ratio POD WANT
	jq -e --arg p "$1" --argjson w "$2" \
		'.data[0][$p] | (.gpuWholeHours - $w * .gpuHours) | fabs <= (1 + $w) * 5e-7 + 1e-12' \
		"$T/alloc.json" >/dev/null || fail "$1: whole $(jq --arg p "$1" '.data[0][$p].gpuWholeHours' "$T/alloc.json")\
 h, share $(jq --arg p "$1" '.data[0][$p].gpuHours' "$T/alloc.json") h, want whole = $2 x share"
}
for i in 1 2 3 4; do ratio "team-a/a$i" 4; done
ratio team-b/b1 1
ratio team-b/b2 2
echo "per pod (x $S):$report"
pass "/allocation (pod): each pod's share (0.25, whole, memory 0.5 on spot) exactly as the scheduler assigned it"
