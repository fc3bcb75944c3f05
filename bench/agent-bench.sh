#!/bin/bash
# bench/agent-bench.sh GPUFLEET FAKE_NVML [SCRAPES] - the node agent's cost.
#
# Fixed input: 8 GPUs x 4 compute processes, each process in its own pod
# (so every GPU is shared by 4 pods: the largest label set), all readings
# scripted in the FAKE NVML, pod attribution through a fake /proc and
# kubelet log tree.  The agent runs with --interval-ms 0, so every scrape
# is a full collection (NVML calls, cgroup lookups) plus rendering.
#
# Prints: resident memory (VmRSS, VmHWM) after the scrapes, and CPU time
# per scrape = on-CPU time of all the agent's threads (/proc/PID/task/*/
# schedstat, ns) over SCRAPES scrapes, divided by SCRAPES.  The client
# (one curl, keep-alive) is not counted.  Reproduce: make bench-agent, or
#   cmake --build build --target bench-agent
set -euo pipefail
GPUFLEET=$1 FAKE=$2 N=${3:-2000}
T=$(mktemp -d /tmp/gf-agent-bench-XXXXXX)
AGENT=""
trap '[ -n "$AGENT" ] && kill $AGENT 2>/dev/null; rm -rf "$T"' EXIT

{
	echo "driver 550.54.15"
	for g in 0 1 2 3 4 5 6 7; do
		printf 'gpu %d uuid=GPU-%08d-0000-4000-8000-%012d name="NVIDIA H100 80GB HBM3" bus=00000000:%02X:00.0 numa=%d ' \
			$g $g $g $((0x18 + g * 16)) $((g / 4))
		printf 'mem_total_mib=81559 mem_used_mib=%d mem_reserved_mib=512 util_gpu=%d util_mem=%d enc_util=0 dec_util=0 ' \
			$((20000 + g * 1000)) $((50 + g)) $((20 + g))
		printf 'sm_clock=1980 mem_clock=2619 power_mw=%d energy_mj=%d temp=%d mem_temp=%d pcie_replay=0 ' \
			$((300000 + g * 1111)) $((1000000000 + g)) $((60 + g)) $((70 + g))
		printf 'pcie_tx_kbps=1000 pcie_rx_kbps=2000 ecc_sbe_vol=0 ecc_dbe_vol=0 ecc_sbe_agg=0 ecc_dbe_agg=0 '
		printf 'remap_corr=0 remap_unc=0 remap_failed=0 nvlink_tx_kib=%d nvlink_rx_kib=%d mig=0\n' $((g * 100)) $((g * 200))
	done
	for g in 0 1 2 3 4 5 6 7; do
		for p in 0 1 2 3; do echo "proc $g pid=$((10000 + g * 10 + p)) mem_mib=$((1000 + p * 100))"; done
	done
	for a in 0 1 2 3 4 5 6 7; do for b in 0 1 2 3 4 5 6 7; do
		[ $a -lt $b ] && echo "nvlink $a $b links=2"
	done; done
} > "$T/state"
{
	for g in 0 1 2 3 4 5 6 7; do for p in 0 1 2 3; do
		pid=$((10000 + g * 10 + p))
		printf 'pod bench job-%d-%d %08x-1111-4222-8333-%012d worker %064x %d v2-systemd-containerd\n' \
			$g $p $pid $pid $pid $pid
	done; done
} > "$T/node"
"$(dirname "$0")/../tests/agent/make-fake-node" "$T/node" "$T"

GF_FAKE_NVML_STATE=$T/state "$GPUFLEET" agent --address 127.0.0.1:0 --nvml-lib "$FAKE" \
	--proc-root "$T/proc" --log-root "$T/log" --node-name bench-node --interval-ms 0 2>"$T/log.txt" &
AGENT=$!
PORT=""
for _ in $(seq 100); do
	PORT=$(sed -n 's/.*serving on http:\/\/[0-9.]*:\([0-9]*\)\/metrics.*/\1/p' "$T/log.txt")
	[ -n "$PORT" ] && break
	sleep 0.1
done
[ -n "$PORT" ] || { cat "$T/log.txt"; exit 1; }

cpu_ns() { cat /proc/$AGENT/task/*/schedstat | awk '{s += $1} END {printf "%d", s}'; }
curl -s "http://127.0.0.1:$PORT/metrics" > "$T/one.txt"
series=$(grep -c '^[A-Za-z]' "$T/one.txt")
bytes=$(wc -c < "$T/one.txt")
grep -q 'pod="job-7-3"' "$T/one.txt" || { echo "bench: attribution missing"; exit 1; }
curl -s "http://127.0.0.1:$PORT/metrics?[1-100]" > /dev/null   # warm-up
c0=$(cpu_ns)
t0=$(date +%s%N)
curl -s "http://127.0.0.1:$PORT/metrics?[1-$N]" > /dev/null
t1=$(date +%s%N)
c1=$(cpu_ns)
rss=$(awk '/^VmRSS/ {print $2}' /proc/$AGENT/status)
hwm=$(awk '/^VmHWM/ {print $2}' /proc/$AGENT/status)
anon=$(awk '/^RssAnon/ {print $2}' /proc/$AGENT/status)
file=$(awk '/^RssFile/ {print $2}' /proc/$AGENT/status)
echo "agent bench: 8 GPUs x 4 processes (32 pods), FAKE NVML, --interval-ms 0 (collect per scrape)"
echo "  scrape: $series series, $bytes bytes"
awk -v c=$((c1 - c0)) -v n=$N -v w=$((t1 - t0)) 'BEGIN {
	printf "  CPU per scrape (agent, all threads): %.3f ms over %d scrapes (target < 1 ms)\n", c / n / 1e6, n
	printf "  wall per scrape (incl. curl, loopback): %.3f ms\n", w / n / 1e6 }'
awk -v r=$rss -v h=$hwm -v a=$anon -v f=$file 'BEGIN {
	printf "  resident memory: VmRSS %.2f MiB, VmHWM %.2f MiB (target < 10 MiB)\n", r / 1024, h / 1024
	printf "    of which anonymous (heap, stacks) %.2f MiB, file-backed (binary + shared libraries) %.2f MiB\n", a / 1024, f / 1024
	printf "  dcgm-exporter, for comparison (reported, not measured here): ~0.5 GiB\n" }'
