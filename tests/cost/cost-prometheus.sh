#!/usr/bin/env bash
# tests/cost/cost-prometheus.sh GPUFLEET SRC - `gpufleet cost` against a real Prometheus
# (Debian package `prometheus`) holding a scripted day of the allocation record, fast-forwarded
# with `promtool tsdb create-blocks-from openmetrics` (data/day.py: the day and its story).
#
# Hand-computed report of that day (prices H100 4.00/1.80, A100 2.00/0.80 per GPU-hour):
#   team-a: four 25 % pods x 8 h = 8.000 GPU-hours (whole-GPU billing: 32), cost 32.00, eff 0.40
#   team-b: b1 1.0 x 12 h = 12 on H100 (48.00) + b2 3/7 x 14 h = 6 on spot A100 (6 x 0.80 = 4.80)
#           = 18 GPU-hours, 52.80; whole 12 x 4 + 14 x 0.80 = 59.20; used 0.9 x 12 = 10.8 -> eff 0.6
#   __idle__: G-1 24-8=16 h x 4 = 64, G-2 24-12=12 h x 4 = 48, G-3 24-6=18 h x 0.80 = 14.40
#           = 46 GPU-hours, 126.40; capacity 72 GPU-hours = 26 + 46; 211.20 = 84.80 + 126.40
#   saved by spot: b2 6 x 1.20 + idle G-3 18 x 1.20 = 28.80
# The same day read through the hourly recording rules (data/prometheus/gpufleet-cost.rules.yml,
# backfilled with `promtool tsdb create-blocks-from rules`): `gpufleet cost --recorded`.
# Then the same numbers from `gpufleet cost --serve` (HTTPS, bearer token) in OpenCost's
# /allocation shape with its field names and JSON types; bad input -> 400 and the server keeps
# serving; Prometheus down -> 503 and the server keeps serving.
# With "ha" as the third argument (ctest cost_prometheus_ha) the record of the same day is served
# by the replicas of a --leader-elect scheduler pair, each its own scrape target, with a failover
# at 13:00 (data/day.py): every figure above must hold unchanged, each GPU and share counted once.
set -euo pipefail
bin=$1
src=$2
mode=${3:-}
command -v prometheus >/dev/null || { echo "prometheus not installed (scripts/bootstrap test)"; exit 1; }
command -v jq >/dev/null || { echo "jq not installed (scripts/bootstrap test)"; exit 1; }
T=$(mktemp -d)
PIDS=""
cleanup() { for p in $PIDS; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$T"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; for f in "$T"/*.log; do [ -f "$f" ] && { echo "--- $f"; tail -20 "$f"; }; done; exit 1; }
pass() { echo "ok: $*"; }
. "$src/tests/prometheus.sh"

t0=$(( $(date +%s) / 86400 * 86400 - 2 * 86400 ))   # the day before yesterday, UTC
python3 "$src/tests/cost/data/day.py" "$t0" $mode >"$T/day.om"
promtool tsdb create-blocks-from openmetrics "$T/day.om" "$T/tsdb" >"$T/promtool.log" 2>&1 ||
	fail "promtool could not backfill"
printf 'global:\n  scrape_interval: 1m\nscrape_configs: []\n' >"$T/prometheus.yml"
# One sample a minute and no staleness markers in backfilled data: a 30 s lookback makes a
# series end with its last sample, as staleness markers do for a live scrape.
start_prometheus() { prom_start "$T/prom.log" --query.lookback-delta=30s || fail "prometheus did not start"; }
start_prometheus
pass "prometheus ready on 127.0.0.1:$PP with the scripted day backfilled"
if [ "$mode" = ha ]; then
	# the day really holds three replicas' copies of the record (else the checks below prove nothing)
	n=$(curl -sf "http://127.0.0.1:$PP/api/v1/query" --data-urlencode "time=$((t0 + 86400))" --data-urlencode \
		'query=count(count by (instance) (count_over_time(gpufleet_pod_gpu_allocation[1d])))' |
		jq -r '.data.result[0].value[1]')
	[ "$n" = 3 ] || fail "the HA day: $n replicas serving the record, want 3"
	pass "the record is served by 3 scheduler replicas (instance labels), with a failover at 13:00"
fi

printf 'model,on_demand_per_hour,spot_per_hour\nH100,4.00,1.80\nA100,2.00,0.80\n' >"$T/prices.csv"
W="$t0,$((t0 + 86400))"
cost() { "$bin" cost --prometheus-url "http://127.0.0.1:$PP" --prices "$T/prices.csv" --resolution 1m "$@"; }

# ---- the CLI table
cost --window "$W" >"$T/table.txt" 2>"$T/cli.log" || fail "gpufleet cost failed"
want_line() { grep -qE "$1" "$T/table.txt" || { cat "$T/table.txt"; fail "table: no line matching '$1'"; }; }
want_line '^team-a +8\.000 +32\.000 +32\.00 +128\.00 +40\.0$'
want_line '^team-b +18\.000 +26\.000 +52\.80 +59\.20 +60\.0$'
want_line '^__idle__ +46\.000 +46\.000 +126\.40 +126\.40 +-$'
want_line '^capacity +72\.000 GPU-hours +211\.20$'
want_line '^saved by spot +28\.80 USD$'
want_line 'reconciliation +workload \+ idle - capacity = 0\.000 GPU-hours \(within 0\.1 %\)'
pass "table equals the hand-computed day (namespace)"
cost --window "$W" --aggregate label:team >"$T/table.txt" 2>>"$T/cli.log" || fail "label:team failed"
want_line '^ml +8\.000 '
want_line '^infra +12\.000 +12\.000 +48\.00 +48\.00 +90\.0$'
want_line '^__unallocated__ +6\.000 +14\.000 +4\.80 +11\.20 +0\.0$'
pass "label:team from kube_pod_labels (b2 has no team: __unallocated__)"

# ---- the API
echo "s3cret-token" >"$T/token"
# Port 0: the kernel picks a free port, the server logs it (no race with other tests' ports).
"$bin" cost --serve --prometheus-url "http://127.0.0.1:$PP" --prices "$T/prices.csv" \
	--listen 127.0.0.1:0 --token-file "$T/token" --log-requests 2>"$T/serve.log" &
SERVE=$!
PIDS="$PIDS $SERVE"
CP=
for _ in $(seq 300); do	# up to 30 s on a loaded machine
	CP=$(sed -n 's|.*serving on https://127.0.0.1:\([0-9]*\)/.*|\1|p' "$T/serve.log")
	[ -n "$CP" ] && curl -sfk "https://127.0.0.1:$CP/healthz" >/dev/null 2>&1 && break
	kill -0 "$SERVE" 2>/dev/null || fail "cost --serve exited: $(cat "$T/serve.log")"
	CP=
	sleep 0.1
done
[ -n "$CP" ] || fail "cost --serve did not answer /healthz within 30 s"
api() { curl -sk -o "$T/body" -w '%{http_code}' -H "Authorization: Bearer s3cret-token" \
	"https://127.0.0.1:$CP/allocation?$1"; }
code=$(curl -sk -o "$T/body" -w '%{http_code}' "https://127.0.0.1:$CP/allocation?window=1d")
[ "$code" = 401 ] || fail "no token: HTTP $code, want 401"
code=$(curl -sk -o "$T/body" -w '%{http_code}' -H "Authorization: Bearer wrong" "https://127.0.0.1:$CP/allocation?window=1d")
[ "$code" = 401 ] || fail "wrong token: HTTP $code, want 401"
pass "401 without the bearer token"

code=$(api "window=$W&aggregate=namespace&includeIdle=true&resolution=1m")
[ "$code" = 200 ] || { cat "$T/body"; fail "HTTP $code"; }
cp "$T/body" "$T/alloc.json"
j() { jq -r "$1" "$T/alloc.json"; }
[ "$(j '.code')" = 200 ] || fail "code"
[ "$(j '.data | length')" = 1 ] || fail "one set expected"
[ "$(j '.data[0] | keys | join(",")')" = "__idle__,team-a,team-b" ] || fail "names: $(j '.data[0] | keys')"
near() { # near JQ_PATH WANT
	got=$(j "$1")
	awk -v g="$got" -v w="$2" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(d <= 1e-4 * (1 + (w < 0 ? -w : w))) }' ||
		fail "$1 = $got, want $2"
}
near '.data[0]["team-a"].gpuHours' 8
near '.data[0]["team-a"].gpuCost' 32
near '.data[0]["team-a"].totalCost' 32
near '.data[0]["team-a"].gpuEfficiency' 0.4
near '.data[0]["team-a"].gpuCount' 0.333333   # 8 GPU-hours over 24 h
near '.data[0]["team-a"].gpuSavedBySharing' 96
near '.data[0]["team-b"].gpuHours' 18
near '.data[0]["team-b"].gpuCost' 52.8
near '.data[0]["team-b"].gpuEfficiency' 0.6
near '.data[0]["team-b"].gpuSavedBySpot' 7.2
near '.data[0]["__idle__"].gpuHours' 46
near '.data[0]["__idle__"].totalCost' 126.4
near '.data[0]["team-a"].minutes' 1440
pass "/allocation equals the hand-computed day"
# the bounds of --serve: the completed day asked again is copied, Prometheus not asked; a window
# over --max-window (92 days) is a 400
code=$(api "window=$W&aggregate=namespace&includeIdle=true&resolution=1m")
[ "$code" = 200 ] || fail "again: HTTP $code"
cmp -s "$T/body" "$T/alloc.json" || fail "the cached answer differs"
grep -q "200 window=$W aggregate=namespace: 1 set(s), 3 allocation series, 3 GPUs, cached: prometheus not asked" \
	"$T/serve.log" || fail "the same completed day was asked of Prometheus again: $(tail -3 "$T/serve.log")"
code=$(api "window=100d")
[ "$code" = 400 ] && grep -q 'longer than the 92d allowed (--max-window)' "$T/body" || fail "100d: HTTP $code $(cat "$T/body")"
pass "--serve keeps a completed window's answer, and refuses windows over --max-window"
# OpenCost's field names and JSON types
for f in cpuCores cpuCoreHours cpuCost ramBytes ramByteHours ramCost gpuCount gpuHours gpuCost \
	gpuCostAdjustment gpuEfficiency pvCost networkCost sharedCost externalCost totalCost \
	totalEfficiency minutes; do
	[ "$(j ".data[0][\"team-b\"].$f | type")" = number ] || fail "$f is not a number"
done
for f in name start end; do
	[ "$(j ".data[0][\"team-b\"].$f | type")" = string ] || fail "$f is not a string"
done
[ "$(j '.data[0]["team-b"].window | (.start|type) + "," + (.end|type)')" = "string,string" ] || fail "window"
[ "$(j '.data[0]["team-b"].properties | type')" = object ] || fail "properties"
[ "$(j '.data[0]["team-b"].properties.namespace')" = team-b ] || fail "properties.namespace"
[ "$(j '.data[0]["team-b"].name')" = team-b ] || fail "name"
[ "$(j '.data[0]["team-b"].window.start')" = "$(date -u -d "@$t0" +%Y-%m-%dT%H:%M:%SZ)" ] || fail "window.start"
pass "the answer has OpenCost's /allocation field names and types"

code=$(api "window=$W&aggregate=namespace&step=12h&includeIdle=false&resolution=1m")
[ "$code" = 200 ] || { cat "$T/body"; fail "step: HTTP $code"; }
cp "$T/body" "$T/alloc.json"
[ "$(j '.data | length')" = 2 ] || fail "step=12h: two sets expected"
[ "$(j '.data[0] | has("__idle__")')" = false ] || fail "includeIdle=false"
near '.data[0]["team-a"].gpuHours' 8     # 00:00-08:00: all in the first half
near '.data[1]["team-b"].gpuHours' 6.857143  # b1 12:00-18:00 = 6, b2 12:00-14:00 = 3/7 x 2
near '.data[1]["team-b"].gpuCost' 24.685714  # 6 x 4.00 + 6/7 x 0.80
pass "step=12h gives two sets that split the day"

bad() { # bad QUERY WANT_IN_MESSAGE
	code=$(api "$1")
	[ "$code" = 400 ] || fail "$1: HTTP $code, want 400"
	[ "$(jq -r .code "$T/body")" = 400 ] || fail "$1: body code"
	jq -r .message "$T/body" | grep -qF "$2" || fail "$1: message $(cat "$T/body")"
}
bad "window=7x" "window '7x': expected a duration"
bad "window=1d&aggregate=team" "unknown aggregate 'team'"
bad "window=1d&includeIdle=maybe" "includeIdle: expected true or false"
bad "window=1d&step=0h" "step: duration '0h'"
bad "aggregate=namespace" "window: required"
code=$(api "window=$W&resolution=1m")
[ "$code" = 200 ] || fail "the server stopped answering after bad requests: HTTP $code"
pass "bad input: 400 with the reason, and the server keeps serving"

DP=$(prom_free_port) || fail "no free port"
"$bin" cost --serve --prometheus-url "http://127.0.0.1:$DP" --prices "$T/prices.csv" \
	--listen 127.0.0.1:0 --insecure-http 2>"$T/down.log" &
PIDS="$PIDS $!"
for _ in $(seq 100); do grep -q 'serving on' "$T/down.log" && break; sleep 0.1; done
DOWN=$(sed -n 's|.*serving on http://127.0.0.1:\([0-9]*\)/.*|\1|p' "$T/down.log")
code=$(curl -s -o "$T/body" -w '%{http_code}' "http://127.0.0.1:$DOWN/allocation?window=1d")
[ "$code" = 503 ] || fail "Prometheus down: HTTP $code, want 503"
grep -q "prometheus http://127.0.0.1:$DP" "$T/body" || fail "503 message: $(cat "$T/body")"
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$DOWN/healthz")
[ "$code" = 200 ] || fail "healthz after 503: $code"
if "$bin" cost --prometheus-url "http://127.0.0.1:$DP" --prices "$T/prices.csv" --window 1d >/dev/null 2>"$T/e"; then
	fail "the CLI succeeded with Prometheus down"
fi
grep -q "^gpufleet cost: prometheus http://127.0.0.1:$DP: Couldn't connect to server$" "$T/e" || fail "CLI: $(cat "$T/e")"
[ "$(wc -l <"$T/e")" = 1 ] || fail "CLI with Prometheus down: more than one line on stderr: $(cat "$T/e")"
pass "Prometheus down: 503 / one CLI line, and the server keeps serving"
printf 'model,on_demand_per_hour,spot_per_hour\nH100,-4,1\n' >"$T/neg.csv"
if "$bin" cost --prometheus-url "http://127.0.0.1:$PP" --prices "$T/neg.csv" --window 1d 2>"$T/e"; then fail "negative price accepted"; fi
grep -qx "gpufleet cost: $T/neg.csv:2: column 2 (on_demand_per_hour): negative price -4" "$T/e" || fail "$(cat "$T/e")"
pass "a negative price: one clear line"
cli_bad() { # cli_bad WANT_LINE_REGEX ARGS...: exit status 2 and exactly that one line on stderr
	local want=$1 rc=0
	shift
	cost "$@" >/dev/null 2>"$T/e" || rc=$?
	[ "$rc" = 2 ] || fail "gpufleet cost $*: exit $rc, want 2"
	[ "$(wc -l <"$T/e")" = 1 ] && grep -qE "$want" "$T/e" || fail "gpufleet cost $*: $(cat "$T/e")"
}
cli_bad "^gpufleet cost: .*window '7x': expected a duration" --window 7x
cli_bad "^gpufleet cost: .*unknown aggregate 'team': expected namespace" --window 1d --aggregate team
pass "a bad window or aggregate: exit 2 and one line"

# ---- the hourly recording rules
promtool tsdb create-blocks-from rules --start "$((t0 - 3600))" --end "$((t0 + 90000))" \
	--url "http://127.0.0.1:$PP" --output-dir "$T/rules" "$src/data/prometheus/gpufleet-cost.rules.yml" \
	>"$T/rules.log" 2>&1 || fail "promtool could not evaluate the rules"
kill "$PROM"
wait "$PROM" 2>/dev/null || true
mv "$T"/rules/* "$T/tsdb/"
start_prometheus
# The group's hours start at its offset within the hour: a window an hour wider on each side
# holds the whole day.
cost --window "$((t0 - 3600)),$((t0 + 90000))" --recorded --resolution "" >"$T/table.txt" 2>"$T/cli.log" ||
	fail "gpufleet cost --recorded failed: $(cat "$T/cli.log")"
want_line '^team-a +8\.000 +32\.000 +32\.00 +128\.00 +40\.0$'
want_line '^team-b +18\.000 +26\.000 +52\.80 +59\.20 +60\.0$'
want_line '^__idle__ +46\.000 +46\.000 +126\.40 +126\.40 +-$'
want_line '^saved by spot +28\.80 USD$'
want_line 'within 0\.1 %'
cost --window "$((t0 - 3600)),$((t0 + 90000))" --recorded --resolution "" --aggregate label:team >"$T/table.txt" \
	2>"$T/cli.log" || fail "gpufleet cost --recorded --aggregate label:team failed: $(cat "$T/cli.log")"
want_line '^infra +12\.000 +12\.000 +48\.00 +48\.00 +90\.0$'
want_line '^__unallocated__ +6\.000 +14\.000 +4\.80 +11\.20 +0\.0$'
# namespace above read the pools (gpufleet:pool_*: per namespace, model and capacity type);
# model and cluster do too, node reads the per-namespace-and-GPU rules: each equals the raw
# record's table row for row (only the header's window differs: the rules' hours).
for agg in model cluster node; do
	cost --window "$W" --aggregate "$agg" | tail -n +2 >"$T/raw.txt" 2>>"$T/cli.log" || fail "--aggregate $agg failed"
	cost --window "$((t0 - 3600)),$((t0 + 90000))" --recorded --resolution "" --aggregate "$agg" | tail -n +2 \
		>"$T/rec.txt" 2>>"$T/cli.log" || fail "--recorded --aggregate $agg failed"
	diff "$T/raw.txt" "$T/rec.txt" >"$T/diff.log" || { cat "$T/diff.log"; fail "--recorded --aggregate $agg differs from the raw record"; }
	# equal tables could both be empty: each must hold the hand-computed GPU-hours
	case $agg in
	model) grep -qE '^H100 +20\.000 +44\.000 ' "$T/rec.txt" && grep -qE '^A100 +6\.000 +14\.000 ' "$T/rec.txt" ;;
	cluster) grep -qE '^[^ ]+ +26\.000 +58\.000 ' "$T/rec.txt" ;;
	node) true ;;   # below
	esac || { cat "$T/rec.txt"; fail "--aggregate $agg: not the hand-computed GPU-hours"; }
done
grep -qE '^n1 +20\.000 ' "$T/rec.txt" && grep -qE '^n2 +6\.000 ' "$T/rec.txt" || { cat "$T/rec.txt"; fail "node: no row per node"; }
pass "--recorded (hourly rules: pools for namespace, model, cluster; per pod; per namespace and GPU) gives the same day"
# what the scripted day lacks: an overcommitted GPU beside an idle one, an allocation on a GPU
# without capacity, a pod with two containers' utilization (hand-computed values)
(cd "$src/tests/cost/data" && promtool test rules pool-rules.test.yml) >"$T/ruletest.log" 2>&1 ||
	{ cat "$T/ruletest.log"; fail "promtool test rules pool-rules.test.yml"; }
pass "the pooled rules: overcommit, unmatched allocations and utilization as hand-computed (promtool test rules)"
