#!/usr/bin/env bash
# bench/cost-prom-daily.sh [GPUS [DAYS]] - the Prometheus part of a namespace-aggregated 30-day
# cost query if the record were summed PER DAY instead of per hour (docs/cost.md, "Long windows"):
# what the per-namespace rules would hold, one sample per series and day (the seconds of that
# day), for GPUS GPUs on 8-GPU nodes, each GPU's day split among 1-4 of its node's 4 namespaces
# (seed 42), plus one capacity series per GPU - backfilled with promtool into one block of a
# fresh Prometheus (Debian package), then the three queries `gpufleet cost --recorded --aggregate
# namespace` sends (the *_1h names replaced by *_1d, ranges of DAYS days) are timed with curl,
# each 3 times, one after the other, then 3 times all three at once (as gpufleet sends them).  `gpufleet cost` does NOT read daily series yet: this
# measures only what Prometheus would take.  Every answer is checked against the generator: as
# many series as it wrote, and their values' sum equal to its sum (to 1e-9): the bench fails on
# an empty record or an answer that misses it.  Defaults: 5000 GPUs, 30 days.
set -euo pipefail
GPUS=${1:-5000}
DAYS=${2:-30}
. "$(dirname "$0")/lib.sh"
bench_setup "$DAYS"
python3 - "$GPUS" "$start" "$end" "$T/expected.txt" >"$T/record.om" <<'PY'
import random, sys
gpus, start, end = (int(a) for a in sys.argv[1:4])
random.seed(42)
models = ["NVIDIA-H100-80GB-HBM3", "NVIDIA-A100-SXM4-80GB", "NVIDIA-L40S", "NVIDIA-L4"]
w = sys.stdout.write
days = range(start + 86400, end + 1, 86400)   # each sample: the day before it
w("# TYPE gpufleet:gpu_capacity:seconds_1d gauge\n")
alloc, util = [], []
for g in range(gpus):
    node, idx = g // 8, g % 8
    lab = 'node="node-%05d",gpu="%d",uuid="GPU-%08d",model="%s",capacity_type="%s"' % (
        node, idx, g, models[node % 4], "spot" if node % 5 == 0 else "on-demand")
    w("".join("gpufleet:gpu_capacity:seconds_1d{%s} 86400 %d\n" % (lab, t) for t in days))
    share = "0.500" if g % 2 else "1.000"
    for ns in random.sample(range(4), random.randint(1, 4)):
        nsn = "team-%02d" % ((node % 10) * 4 + ns)
        vals = [(random.randint(0, 43200) * float(share), t) for t in days]
        alloc.append(('namespace="%s",node="node-%05d",gpu="%d",uuid="GPU-%08d",model="%s",share="%s"' % (
            nsn, node, idx, g, models[node % 4], share), vals))
        util.append(('namespace="%s",UUID="GPU-%08d",gpu="%d",hostname="node-%05d"' % (nsn, g, idx, node),
                     [(v * 40, t) for v, t in vals]))
w("# TYPE gpufleet:namespace_gpu_allocation:share_seconds_1d gauge\n")
for lab, vals in alloc:
    w("".join("gpufleet:namespace_gpu_allocation:share_seconds_1d{%s} %g %d\n" % (lab, v, t) for v, t in vals))
w("# TYPE gpufleet:namespace_gpu_util:busy_percent_seconds_1d gauge\n")
for lab, vals in util:
    w("".join("gpufleet:namespace_gpu_util:busy_percent_seconds_1d{%s} %g %d\n" % (lab, v, t) for v, t in vals))
w("# EOF\n")
# what each query must answer (allocation, capacity, utilization): its series and their sum
with open(sys.argv[4], "w") as f:
    f.write("%d %.17g\n" % (len(alloc), sum(v for _, vals in alloc for v, _ in vals)))
    f.write("%d %.17g\n" % (gpus, gpus * 86400.0 * len(days)))
    f.write("%d %.17g\n" % (len(util), sum(v for _, vals in util for v, _ in vals)))
sys.stderr.write("bench: %d GPUs x %d days, %d allocation series per day-namespace-GPU\n"
                 % (gpus, (end - start) // 86400, len(alloc)))
PY
echo "bench: $(wc -l <"$T/record.om") samples, $(du -m "$T/record.om" | cut -f1) MB of OpenMetrics"
prom_backfill "$DAYS"
bench_prom 1m
wr=$((DAYS * 86400 - 43200))   # the samples end - W + 1d, ..., end
qs=("sum by (node,gpu,uuid,model,share,namespace) (sum_over_time(gpufleet:namespace_gpu_allocation:share_seconds_1d[${wr}s]))"
	"sum_over_time(gpufleet:gpu_capacity:seconds_1d[${wr}s])"
	"sum by (UUID,gpu,hostname,Hostname,namespace) (sum_over_time(gpufleet:namespace_gpu_util:busy_percent_seconds_1d[${wr}s]))")
mapfile -t want <"$T/expected.txt"
# check BODY I: the answer to query I has the generator's series and sum (both non-zero)
check() {
	local got
	got=$(jq -r '"\(.data.result | length) \([.data.result[].value[1] | tonumber] | add // 0)"' "$1")
	awk -v g="$got" -v w="${want[$2]}" 'BEGIN { split(g, a, " "); split(w, b, " ")
		d = a[2] - b[2]; if (d < 0) d = -d
		exit !(b[1] > 0 && b[2] > 0 && a[1] == b[1] && d <= 1e-9 * b[2]) }' ||
		{ echo "bench: WRONG ANSWER to query $2 (${qs[$2]}): $got (series, sum), want ${want[$2]} (both non-zero)"; exit 1; }
}
for run in 1 2 3; do
	line="" total=0 i=0
	for q in "${qs[@]}"; do
		r=$(curl -s -o "$T/body" -w '%{time_total} %{size_download}' --data-urlencode "query=$q" \
			--data-urlencode "time=$end" "http://127.0.0.1:$port/api/v1/query")
		[ "$(jq -r .status "$T/body")" = success ] || { cat "$T/body"; exit 1; }
		check "$T/body" "$i"
		i=$((i + 1))
		n=$(jq '.data.result | length' "$T/body")
		line="$line ${r% *} s ($n series, $((${r#* } / 1000)) kB);"
		total=$(echo "$total + ${r% *}" | bc)
	done
	echo "bench: run $run: allocation, capacity, utilization:$line total $total s"
done
# As `gpufleet cost` sends them: the three at once; the wall time until the last answer.
for run in 1 2 3; do
	t0=$(date +%s.%N)
	i=0 cpids=()
	for q in "${qs[@]}"; do
		curl -s -o "$T/body$i" --data-urlencode "query=$q" --data-urlencode "time=$end" \
			"http://127.0.0.1:$port/api/v1/query" &
		cpids+=($!)
		i=$((i + 1))
	done
	wait "${cpids[@]}"
	t1=$(date +%s.%N)
	for i in 0 1 2; do
		[ "$(jq -r .status "$T/body$i")" = success ] || { cat "$T/body$i"; exit 1; }
		check "$T/body$i" "$i"
	done
	echo "bench: run $run: the three queries at once: $(echo "$t1 - $t0" | bc) s"
done
echo "bench: every answer equals the generator's series and sums: allocation ${want[0]% *} series, sum ${want[0]#* };" \
	"capacity ${want[1]% *}, ${want[1]#* }; utilization ${want[2]% *}, ${want[2]#* }"
