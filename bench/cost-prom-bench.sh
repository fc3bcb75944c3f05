#!/usr/bin/env bash
# bench/cost-prom-bench.sh [GPUS [DAYS [SCRAPE_S]]] - the Prometheus part of a namespace-aggregated
# `gpufleet cost` query over the raw record: a synthetic allocation record (GPUS GPUs on 8-GPU
# nodes, one node in 5 spot, half the GPUs shared by two 0.5 pods, allocations of 6-18 h from 4
# namespaces per node, a utilization series per allocation; seed 42) scraped every SCRAPE_S
# seconds for DAYS days is backfilled with promtool into a fresh Prometheus (Debian package), then
#   gpufleet cost --window <the DAYS> --aggregate namespace --resolution 5m --json --log-requests
# runs 3 times; its stderr line splits the time between Prometheus (queries and transfer) and
# accounting (decode, prices, idle, render).  Prints the generation/backfill sizes and both times.
# The answer is then checked against the sums computed here (bench_check in bench/lib.sh: every
# namespace's gpuHours and gpuWholeHours and the idle GPU-hours, to 1e-6; it fails on an empty
# record or a namespace that reads 0): SCRAPE_S divides 300, so each 5-minute step reads exactly
# the scrape at its time, and an allocation alive at the step counts for its 300 s.
# The hourly recording rules (`--recorded`) are measured by bench/cost-prom-pools.sh: a namespace
# report reads the pooled rules, which this record does not hold (the `recorded` mode this script
# had read them as zeros, and was removed).
# Defaults: 5000 GPUs, 1 day, 300 s.  Needs python3, prometheus, promtool, and build/gpufleet.
set -euo pipefail
GPUS=${1:-5000}
DAYS=${2:-1}
SCRAPE=${3:-300}
if [ "$SCRAPE" = recorded ]; then
	echo "bench: the recorded mode was removed: \`gpufleet cost --recorded --aggregate namespace\` reads the" \
		"pooled rules (gpufleet:pool_*); measure it with bench/cost-prom-pools.sh GPUS DAYS" >&2
	exit 2
fi
case $SCRAPE in '' | *[!0-9]* | 0*) echo "bench: SCRAPE_S '$SCRAPE': a whole number of seconds that divides 300" >&2; exit 2 ;; esac
[ $((300 % SCRAPE)) = 0 ] || { echo "bench: SCRAPE_S $SCRAPE does not divide 300 (the resolution): the check would not be exact" >&2; exit 2; }
. "$(dirname "$0")/lib.sh"
bench_setup "$DAYS"
python3 - "$GPUS" "$start" "$end" "$SCRAPE" "$T/expected.json" >"$T/record.om" <<'PY'
import json, random, sys
gpus, start, end, scrape = (int(a) for a in sys.argv[1:5])
R = 300   # --resolution 5m
random.seed(42)
models = ["NVIDIA-H100-80GB-HBM3", "NVIDIA-A100-SXM4-80GB", "NVIDIA-L40S", "NVIDIA-L4"]
w = sys.stdout.write
allocs = []  # (ns, pod, node, gpu, uuid, model, share, t0, t1)
w("# TYPE gpufleet_gpu_capacity gauge\n")
for g in range(gpus):
    node, idx = g // 8, g % 8
    lab = 'node="node-%05d",gpu="%d",uuid="GPU-%08d",model="%s",capacity_type="%s"' % (
        node, idx, g, models[node % 4], "spot" if node % 5 == 0 else "on-demand")
    w("".join("gpufleet_gpu_capacity{%s} 1 %d\n" % (lab, t) for t in range(start, end, scrape)))
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
    """(value, time) of the series alive in [t0, t1): each scrape."""
    first = t0 + (-(t0 - start)) % scrape
    return [(value, t) for t in range(first, t1, scrape)]
w("# TYPE gpufleet_pod_gpu_allocation gauge\n")
for ns, pod, node, idx, g, model, share, t0, t1 in allocs:
    lab = 'namespace="%s",pod="%s",node="node-%05d",gpu="%d",uuid="GPU-%08d",model="%s",share="%s"' % (
        ns, pod, node, idx, g, model, share)
    w("".join("gpufleet_pod_gpu_allocation{%s} %g %d\n" % (lab, v, t) for v, t in samples(t0, t1, float(share))))
w("# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n")
for ns, pod, node, idx, g, model, share, t0, t1 in allocs:
    lab = 'gpu="%d",UUID="GPU-%08d",hostname="node-%05d",namespace="%s",pod="%s"' % (idx, g, node, ns, pod)
    w("".join("DCGM_FI_DEV_GPU_UTIL{%s} %g %d\n" % (lab, v, t) for v, t in samples(t0, t1, 40)))
w("# EOF\n")
# What the query must give: the steps start, start + R, ..., end - R each read the scrape at their
# time (SCRAPE divides R; the lookback of SCRAPE/2 reaches no earlier scrape), so an allocation
# counts R seconds for every step in [t0, t1).
per_ns = {}
for ns, pod, node, idx, g, model, share, t0, t1 in allocs:
    steps = len(range(t0 + (-(t0 - start)) % R, t1, R))
    e = per_ns.setdefault(ns, [0.0, 0.0])
    e[0] += float(share) * steps * R / 3600
    e[1] += steps * R / 3600
capacity = gpus * ((end - start) // R) * R / 3600
idle = capacity - sum(v[0] for v in per_ns.values())
json.dump({"namespaces": per_ns, "idle": idle, "capacity": capacity}, open(sys.argv[5], "w"))
sys.stderr.write("record: %d GPUs, %d allocations\n" % (gpus, len(allocs)))
PY
lines=$(wc -l <"$T/record.om")
echo "bench: $GPUS GPUs x $DAYS day(s), one sample per ${SCRAPE}s: $lines samples, $(du -m "$T/record.om" | cut -f1) MB of OpenMetrics"
t0=$(date +%s.%N)
prom_backfill "$DAYS"   # one block for the whole record (bench/lib.sh)
echo "bench: promtool backfill $(echo "$(date +%s.%N) - $t0" | bc) s"
bench_prom "${SCRAPE}s" --query.lookback-delta="$((SCRAPE / 2))s"   # backfilled scrapes carry no staleness markers
for run in 1 2 3; do
	"$bin" cost --prometheus "http://127.0.0.1:$port" --window "$start,$end" --aggregate namespace \
		--resolution 5m --json --timeout-ms 600000 --log-requests >"$T/out.json" 2>"$T/err.txt" || { cat "$T/err.txt"; exit 1; }
	echo "bench: run $run: $(grep -o 'prometheus [0-9.]* s, accounting [0-9.]* s.*' "$T/err.txt")"
done
bench_check "$T/out.json" "$T/expected.json"
