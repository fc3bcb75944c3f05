#!/usr/bin/env bash
# bench/sched-extender-bench.sh - the extender's round trip without a control plane.
#
#   bench/sched-extender-bench.sh GPUFLEET BENCH_EXTENDER [NODES] [ROUNDS]
#
# Serves NODES (5000) fake 8-GPU nodes and no pods from a minimal read-only
# API server stand-in (python3: LIST answers, watches that stay open), runs
# `gpufleet schedule` against it, and times filter+prioritize with every node
# name and with the sample kube-scheduler sends by default at that size
# (max(100, pct% of NODES), pct = max(5, 50 - NODES/125)).  Only the extender
# path is measured: nothing is bound.  bench/sched-bench.sh measures the same
# on the real control plane, next to the scheduling throughput.
#
# The baseline in the same run: bench_http_floor (next to BENCH_EXTENDER), the
# same HTTP server answering the same bytes, canned, and doing no
# work - the round trip's floor on this machine (client, loopback, server).
set -euo pipefail
gf=${1:?usage: sched-extender-bench.sh GPUFLEET BENCH_EXTENDER [NODES] [ROUNDS]}
bx=${2:?usage: sched-extender-bench.sh GPUFLEET BENCH_EXTENDER [NODES] [ROUNDS]}
n=${3:-5000}
rounds=${4:-2000}
work=$(mktemp -d "${TMPDIR:-/tmp}/gpufleet-extbench.XXXXXX")
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT
freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
ap=$(freeport)
gp=$(freeport)
cat >"$work/api.py" <<'PY'
import json, sys, time
from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler
n = int(sys.argv[2])
q = {"cpu": "96", "memory": "1Ti", "nvidia.com/gpu": "8"}
nodes = json.dumps({"metadata": {"resourceVersion": "100"}, "items": [
    {"metadata": {"name": "gpu-node-%d" % i, "resourceVersion": "5",
                  "labels": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "nvidia.com/gpu.memory": "81559"}},
     "status": {"allocatable": q, "capacity": q}} for i in range(n)]}).encode()
pods = json.dumps({"metadata": {"resourceVersion": "100"}, "items": []}).encode()
class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def do_GET(self):
        if "watch=1" in self.path:  # a watch that stays open and quiet
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            time.sleep(3600)
            return
        b = nodes if self.path.startswith("/api/v1/nodes") else pods
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)
ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
PY
python3 "$work/api.py" "$ap" "$n" >"$work/api.log" 2>&1 &
pids+=($!)
cat >"$work/kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters:
- name: stand-in
  cluster:
    server: http://127.0.0.1:$ap
users:
- name: nobody
  user: {}
contexts:
- name: c
  context: {cluster: stand-in, user: nobody}
current-context: c
KC
sleep 0.5
ge=$(freeport) # the extender's own listener
"$gf" schedule --kubeconfig "$work/kubeconfig" --address "127.0.0.1:$gp" --extender-address "127.0.0.1:$ge" \
	--no-standalone >"$work/gf.log" 2>&1 &
pids+=($!)
deadline=$(($(date +%s) + 60))
until curl -sf "http://127.0.0.1:$gp/healthz" >/dev/null; do
	[ "$(date +%s)" -lt "$deadline" ] || { cat "$work/gf.log" >&2; exit 1; }
	sleep 0.2
done
sample=$(python3 -c "n=$n; print(max(100, n * max(5, 50 - n // 125) // 100))")
echo "gpufleet schedule, every node name:"
"$bx" "http://127.0.0.1:$ge/gpusched" "$n" "$rounds" | tee "$work/all.txt"
floor=$(dirname "$bx")/bench_http_floor
if [ -x "$floor" ]; then
	"$floor" "$n" >"$work/floor.port" &
	pids+=($!)
	until [ -s "$work/floor.port" ]; do sleep 0.1; done
	echo "floor: the same HTTP server answering the same bytes (canned), no work:"
	"$bx" "http://127.0.0.1:$(cat "$work/floor.port")/gpusched" "$n" "$rounds" | tee "$work/floor.txt"
	python3 - "$work/all.txt" "$work/floor.txt" <<'PY'
import re, sys
def p(f):
    t = open(f).read()
    return [float(re.search(k + r" ([0-9.]+) ms", t).group(1)) for k in ("p50", "p99")]
a, f = p(sys.argv[1]), p(sys.argv[2])
print("gpufleet's own work in the round trip: p50 +%.3f ms, p99 +%.3f ms over the floor" % (a[0] - f[0], a[1] - f[1]))
PY
fi
echo "gpufleet schedule, kube-scheduler's default sample of $sample names:"
"$bx" "http://127.0.0.1:$ge/gpusched" "$sample" "$rounds"
