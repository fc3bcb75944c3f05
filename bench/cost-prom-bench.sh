#!/usr/bin/env bash
# bench/cost-prom-bench.sh [GPUS [DAYS [SCRAPE_S|recorded]]] - the Prometheus part of a namespace-aggregated
# `gpufleet cost` query: a synthetic allocation record (GPUS GPUs on 8-GPU nodes, one node in 5
# spot, half the GPUs shared by two 0.5 pods, allocations of 6-18 h from 4 namespaces per node,
# a utilization series per allocation; seed 42) scraped every SCRAPE_S seconds for DAYS days is
# backfilled with promtool into a fresh Prometheus (Debian package), then
#   gpufleet cost --window <the DAYS> --aggregate namespace --resolution 5m --log-requests
# runs 3 times; its stderr line splits the time between Prometheus (queries and transfer) and
# accounting (decode, prices, idle, render).  Prints the generation/backfill sizes and both times.
# With `recorded` instead of SCRAPE_S, the record is what the hourly recording rules
# (data/prometheus/gpufleet-cost.rules.yml) make of it - one sample per series and hour, the
# seconds of that hour - and the query runs with --recorded.
# Defaults: 5000 GPUs, 1 day, 300 s.  Needs python3, prometheus, promtool, and build/gpufleet.
set -euo pipefail
GPUS=${1:-5000}
DAYS=${2:-1}
SCRAPE=${3:-300}
. "$(dirname "$0")/lib.sh"
bench_setup "$DAYS"
MODE=scrape
if [ "$SCRAPE" = recorded ]; then MODE=recorded; SCRAPE=3600; fi
python3 - "$GPUS" "$start" "$end" "$SCRAPE" "$MODE" >"$T/record.om" <<'PY'
import random, sys
gpus, start, end, scrape = (int(a) for a in sys.argv[1:5])
recorded = sys.argv[5] == "recorded"
random.seed(42)
models = ["NVIDIA-H100-80GB-HBM3", "NVIDIA-A100-SXM4-80GB", "NVIDIA-L40S", "NVIDIA-L4"]
w = sys.stdout.write
allocs = []  # (ns, pod, node, gpu, uuid, model, share, t0, t1)
cap_name = "gpufleet:gpu_capacity:seconds_1h" if recorded else "gpufleet_gpu_capacity"
cap_value = "3600" if recorded else "1"
w("# TYPE %s gauge\n" % cap_name)
for g in range(gpus):
    node, idx = g // 8, g % 8
    lab = 'node="node-%05d",gpu="%d",uuid="GPU-%08d",model="%s",capacity_type="%s"' % (
        node, idx, g, models[node % 4], "spot" if node % 5 == 0 else "on-demand")
    if recorded:  # the hour before each sample: samples at start + 1h, ..., end
        w("".join("%s{%s} 3600 %d\n" % (cap_name, lab, t) for t in range(start + 3600, end + 1, 3600)))
    else:
        w("".join("%s{%s} 1 %d\n" % (cap_name, lab, t) for t in range(start, end, scrape)))
    for lane in range(2 if g % 2 else 1):
        t = start
        while t < end:
            n = random.randint(6 * 3600, 18 * 3600)
            t1 = min(t + n, end)
            ns = "team-%02d" % ((node % 10) * 4 + random.randrange(4))
            allocs.append((ns, "p-%d-%d-%d" % (g, lane, t), node, idx, g, models[node % 4],
                           "0.500" if g % 2 else "1.000", t, t1))
            t = t1 + n // 10
def samples(t0, t1, value):
    """(value, time) of the series alive in [t0, t1): each scrape, or per hour the seconds of it."""
    if not recorded:
        first = t0 + (-(t0 - start)) % scrape
        return [(value, t) for t in range(first, t1, scrape)]
    out = []
    for h in range(start + 3600, end + 1, 3600):
        sec = min(t1, h) - max(t0, h - 3600)
        if sec > 0:
            out.append((value * sec, h))
    return out
alloc_name = "gpufleet:pod_gpu_allocation:share_seconds_1h" if recorded else "gpufleet_pod_gpu_allocation"
w("# TYPE %s gauge\n" % alloc_name)
for ns, pod, node, idx, g, model, share, t0, t1 in allocs:
    lab = 'namespace="%s",pod="%s",node="node-%05d",gpu="%d",uuid="GPU-%08d",model="%s",share="%s"' % (
        ns, pod, node, idx, g, model, share)
    w("".join("%s{%s} %g %d\n" % (alloc_name, lab, v, t) for v, t in samples(t0, t1, float(share))))
util_name = "gpufleet:gpu_util:busy_percent_seconds_1h" if recorded else "DCGM_FI_DEV_GPU_UTIL"
w("# TYPE %s gauge\n" % util_name)
for ns, pod, node, idx, g, model, share, t0, t1 in allocs:
    lab = 'gpu="%d",UUID="GPU-%08d",hostname="node-%05d",namespace="%s",pod="%s"' % (idx, g, node, ns, pod)
    w("".join("%s{%s} %g %d\n" % (util_name, lab, v, t) for v, t in samples(t0, t1, 40)))
if recorded:  # the per-namespace rules: sums per (namespace, GPU, share) and hour
    per_ns = {}
    for ns, pod, node, idx, g, model, share, t0, t1 in allocs:
        for v, t in samples(t0, t1, 1.0):
            k = (ns, node, idx, g, model, share)
            per_ns.setdefault(k, {})
            per_ns[k][t] = per_ns[k].get(t, 0) + v
    w("# TYPE gpufleet:namespace_gpu_allocation:share_seconds_1h gauge\n")
    for (ns, node, idx, g, model, share), by_t in per_ns.items():
        lab = 'namespace="%s",node="node-%05d",gpu="%d",uuid="GPU-%08d",model="%s",share="%s"' % (
            ns, node, idx, g, model, share)
        w("".join("gpufleet:namespace_gpu_allocation:share_seconds_1h{%s} %g %d\n" % (lab, float(share) * v, t)
                  for t, v in sorted(by_t.items())))
    w("# TYPE gpufleet:namespace_gpu_util:busy_percent_seconds_1h gauge\n")
    for (ns, node, idx, g, model, share), by_t in per_ns.items():
        lab = 'namespace="%s",UUID="GPU-%08d",gpu="%d",hostname="node-%05d"' % (ns, g, idx, node)
        w("".join("gpufleet:namespace_gpu_util:busy_percent_seconds_1h{%s} %g %d\n" % (lab, 40 * v, t)
                  for t, v in sorted(by_t.items())))
    w("# TYPE gpufleet:cost_rules:evaluated_1h gauge\n")
    w("".join("gpufleet:cost_rules:evaluated_1h 1 %d\n" % t for t in range(start + 3600, end + 1, 3600)))
w("# EOF\n")
sys.stderr.write("record: %d GPUs, %d allocations\n" % (gpus, len(allocs)))
PY
lines=$(wc -l <"$T/record.om")
echo "bench: $GPUS GPUs x $DAYS day(s), $MODE, one sample per ${SCRAPE}s: $lines samples, $(du -m "$T/record.om" | cut -f1) MB of OpenMetrics"
t0=$(date +%s.%N)
prom_backfill "$DAYS"   # one block for the whole record (bench/lib.sh)
echo "bench: promtool backfill $(echo "$(date +%s.%N) - $t0" | bc) s"
lookback=$(( SCRAPE / 2 ))s   # backfilled scrapes carry no staleness markers
[ "$MODE" = recorded ] && lookback=5m
bench_prom "${SCRAPE}s" --query.lookback-delta="$lookback"
if [ "$MODE" = recorded ]; then how=(--recorded); else how=(--resolution 5m); fi
for run in 1 2 3; do
	"$bin" cost --prometheus "http://127.0.0.1:$port" --window "$start,$end" --aggregate namespace \
		"${how[@]}" --timeout-ms 600000 --log-requests >"$T/out.txt" 2>"$T/err.txt" || { cat "$T/err.txt"; exit 1; }
	echo "bench: run $run: $(grep -o 'prometheus [0-9.]* s, accounting [0-9.]* s.*' "$T/err.txt")"
done
grep -E '^(capacity|workload|idle|reconciliation)' "$T/out.txt"
