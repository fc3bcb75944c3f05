#!/usr/bin/env bash
# bench/cost-prom-pools.sh [GPUS [DAYS [RUNS [NAMESPACES]]]] - the 30-day, namespace-aggregated `gpufleet cost`
# query over GPUS GPUs as it runs with the pooled recording rules (data/prometheus/gpufleet-cost.rules.yml,
# "Pools"; docs/cost.md), both parts measured: Prometheus (the rules-offset query and the three
# queries, sent at once, until the last answer) and ours (decode, prices, idle, render).
#
# The record is the synthetic one of bench/cost-prom-bench.sh (GPUS GPUs on 8-GPU nodes, models by
# node, one node in 5 spot, half the GPUs shared by two 0.5 pods, allocations of 6-18 h from 4 of
# 40 namespaces per node, utilization 40 %; seed 42).  What the pooled rules would record of it -
# per (namespace, model, capacity type) and hour the share-seconds, seconds held and used seconds,
# per (model, capacity type) the GPU-seconds - is computed here exactly and backfilled with
# promtool as one block into a fresh Prometheus (Debian package); the raw record itself (GPUS x
# DAYS x 1440 one-minute samples per series) is far too large to generate and evaluate on this
# machine.  That the rules compute these sums from a raw record is tested by cost_prometheus
# (tests/cost/cost-prometheus.sh: the pools give the raw record's tables exactly).
#
# Then `gpufleet cost --recorded --aggregate namespace --json --log-requests` runs RUNS times
# (default 5); each run's stderr line gives both times.  The answer is checked against the sums
# computed here (bench_check in bench/lib.sh: every namespace's gpuHours and gpuWholeHours, the
# idle GPU-hours, to 1e-6): the bench fails if they differ, if the record is empty or if a
# namespace the generator gave work to reads 0.  Defaults: 5000 GPUs, 30 days.  Needs python3,
# jq, prometheus, promtool and build/gpufleet.
set -euo pipefail
GPUS=${1:-5000}
DAYS=${2:-30}
RUNS=${3:-5}
NS=${4:-0}
. "$(dirname "$0")/lib.sh"
bench_setup "$DAYS"
t0=$(date +%s.%N)
python3 - "$GPUS" "$start" "$end" "$T/expected.json" "$NS" >"$T/record.om" <<'PY'
import json, random, sys
gpus, start, end = (int(a) for a in sys.argv[1:4])
nspaces = int(sys.argv[5])
random.seed(42)
models = ["NVIDIA-H100-80GB-HBM3", "NVIDIA-A100-SXM4-80GB", "NVIDIA-L40S", "NVIDIA-L4"]
w = sys.stdout.write
H = 3600
hours = (end - start) // H
pools = {}   # (ns, model, type) -> [share[h], whole[h], used[h]]
cap = {}     # (model, type) -> GPUs
nallocs = 0
for g in range(gpus):
    node = g // 8
    model, typ = models[node % 4], "spot" if node % 5 == 0 else "on-demand"
    cap[(model, typ)] = cap.get((model, typ), 0) + 1
    share = 0.5 if g % 2 else 1.0
    for lane in range(2 if g % 2 else 1):
        t = start
        while t < end:
            n = random.randint(6 * 3600, 18 * 3600)
            t1 = min(t + n, end)
            ns = "team-%02d" % ((node % 10) * 4 + random.randrange(4) if not nspaces else random.randrange(nspaces))
            p = pools.get((ns, model, typ))
            if p is None:
                p = pools[(ns, model, typ)] = [[0.0] * hours, [0.0] * hours, [0.0] * hours]
            for h in range((t - start) // H, (t1 - 1 - start) // H + 1):   # the hours it touches
                sec = min(t1, start + (h + 1) * H) - max(t, start + h * H)
                p[0][h] += share * sec
                p[1][h] += sec
                p[2][h] += 0.4 * share * sec
            nallocs += 1
            t = t1 + n // 10
ts = [start + (h + 1) * H for h in range(hours)]   # each sample: the hour before it
def series(name, lab, vals):
    w("".join("%s{%s} %.17g %d\n" % (name, lab, v, t) for v, t in zip(vals, ts) if v > 0))
w("# TYPE gpufleet:pool_gpu_allocation:seconds_1h gauge\n")
for (ns, model, typ), p in sorted(pools.items()):
    for kind, vals in (("share", p[0]), ("whole", p[1])):
        series("gpufleet:pool_gpu_allocation:seconds_1h",
               'namespace="%s",model="%s",capacity_type="%s",kind="%s"' % (ns, model, typ, kind), vals)
w("# TYPE gpufleet:pool_gpu_used:seconds_1h gauge\n")
for (ns, model, typ), p in sorted(pools.items()):
    series("gpufleet:pool_gpu_used:seconds_1h", 'namespace="%s",model="%s",capacity_type="%s"' % (ns, model, typ), p[2])
w("# TYPE gpufleet:pool_gpu_capacity:seconds_1h gauge\n")
for (model, typ), n in sorted(cap.items()):
    series("gpufleet:pool_gpu_capacity:seconds_1h", 'model="%s",capacity_type="%s",kind="capacity"' % (model, typ),
           [n * H] * hours)
w("# TYPE gpufleet:cost_rules:evaluated_1h gauge\n")
w("".join("gpufleet:cost_rules:evaluated_1h 1 %d\n" % t for t in ts))
w("# EOF\n")
per_ns = {}
for (ns, model, typ), p in pools.items():
    e = per_ns.setdefault(ns, [0.0, 0.0])
    e[0] += sum(p[0]) / H
    e[1] += sum(p[1]) / H
capacity = gpus * hours
idle = capacity - sum(v[0] for v in per_ns.values())
json.dump({"namespaces": per_ns, "idle": idle, "capacity": capacity}, open(sys.argv[4], "w"))
sys.stderr.write("bench: %d GPUs x %d days: %d allocations in %d pools (namespace, model, capacity type)\n"
                 % (gpus, hours // 24, nallocs, len(pools)))
PY
echo "bench: generated in $(echo "$(date +%s.%N) - $t0" | bc) s: $(wc -l <"$T/record.om") samples, $(du -k "$T/record.om" | cut -f1) kB of OpenMetrics"
prom_backfill "$DAYS"
bench_prom 1m --storage.tsdb.retention.time=400d
echo "bench: load average $(cut -d' ' -f1-3 /proc/loadavg) before the runs"
for run in $(seq "$RUNS"); do
	w0=$(date +%s.%N)
	"$bin" cost --prometheus "http://127.0.0.1:$port" --window "$start,$end" --aggregate namespace --recorded \
		--json --log-requests >"$T/out.json" 2>"$T/err.txt" || { cat "$T/err.txt"; exit 1; }
	w1=$(date +%s.%N)
	echo "bench: run $run: $(grep -o 'prometheus [0-9.]* s, accounting [0-9.]* s.*' "$T/err.txt"); whole command $(echo "$w1 - $w0" | bc) s"
done
echo "bench: load average $(cut -d' ' -f1-3 /proc/loadavg) after the runs"
bench_check "$T/out.json" "$T/expected.json"   # bench/lib.sh: exact sums; fails on an empty record
