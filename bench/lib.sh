# bench/lib.sh - the set-up the Prometheus benchmarks share (sourced by cost-prom-bench.sh,
# cost-prom-pools.sh, cost-prom-daily.sh): a scratch folder, the window of whole days, a
# synthetic record backfilled with promtool, and a fresh Prometheus (Debian package) over it.
#
#   bench_setup DAYS    $root (the source tree), $bin ($GPUFLEET, else build/gpufleet);
#                       $T: a new temporary folder; on exit the Prometheus started here is
#                       stopped and $T removed (also on failure); $start, $end: the DAYS
#                       whole days (UTC) that end at today's midnight
#   prom_backfill DAYS  $T/record.om (OpenMetrics) into $T/tsdb as ONE block, as a Prometheus
#                       that has run for the window holds it after compaction (blocks grow to
#                       10 % of the retention, at most 31 days; promtool's default of 2-hour
#                       blocks would make a 30-day query open 360 blocks); then removes record.om
#   bench_prom SCRAPE [FLAG...]
#                       Prometheus over $T/tsdb (scrape_interval SCRAPE, e.g. 1m; no scrape
#                       targets; more flags after it) on a free loopback port: $port, $PROM;
#                       started and waited for by tests/prometheus.sh (prom_start); fails
#                       with its log's tail when it does not come up
# The scripts keep their own `set -euo pipefail`.

. "$(dirname "${BASH_SOURCE[0]}")/../tests/prometheus.sh"

bench_setup() {
	root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
	bin=${GPUFLEET:-$root/build/gpufleet}
	T=$(mktemp -d)
	PROM=""
	trap '[ -n "$PROM" ] && kill $PROM 2>/dev/null; wait 2>/dev/null; rm -rf "$T"' EXIT
	end=$(($(date +%s) / 86400 * 86400))
	start=$((end - $1 * 86400))
}

prom_backfill() {
	promtool tsdb create-blocks-from openmetrics --max-block-duration="$(($1 * 24 + 24))h" "$T/record.om" "$T/tsdb" \
		>"$T/promtool.log" 2>&1 || { tail -5 "$T/promtool.log"; echo "bench: promtool could not backfill"; return 1; }
	rm -f "$T/record.om"
}

bench_prom() {
	printf 'global:\n  scrape_interval: %s\nscrape_configs: []\n' "$1" >"$T/prometheus.yml"
	shift
	prom_start "$T/prom.log" "$@" || { tail -5 "$T/prom.log"; echo "bench: prometheus did not start"; return 1; }
	port=$PP
}

# bench_check GOT.json WANT.json - the answer of `gpufleet cost --aggregate namespace --json` (GOT)
# against the sums a bench's generator computed (WANT: {"namespaces": {NS: [gpuHours,
# gpuWholeHours]}, "idle": H, "capacity": H}): every namespace's gpuHours and gpuWholeHours and
# the idle GPU-hours equal to 1e-6, no other entries.  It cannot pass on nothing: it fails when
# the expected capacity or workload is zero, when a namespace the generator gave work to
# expects or reads 0, or when workload + idle is not the capacity.  Prints one line either way.
bench_check() {
	python3 - "$1" "$2" <<'PY'
import json, sys
got = json.load(open(sys.argv[1]))["data"][0]
want = json.load(open(sys.argv[2]))
def near(a, b):
    return abs(a - b) <= 1e-6 * max(1.0, abs(b))
bad = []
work = sum(v[0] for v in want["namespaces"].values())
if want["capacity"] <= 0 or work <= 0 or not want["namespaces"]:
    bad.append("the generator's record is empty (capacity %g, workload %g GPU-hours, %d namespaces):"
               " nothing to check" % (want["capacity"], work, len(want["namespaces"])))
if not near(work + want["idle"], want["capacity"]):
    bad.append("expected workload %.6f + idle %.6f != capacity %.6f" % (work, want["idle"], want["capacity"]))
for ns, (share_h, whole_h) in sorted(want["namespaces"].items()):
    e = got.get(ns)
    if share_h <= 0 or whole_h <= 0:
        bad.append("%s: the generator gave it work but expects %g / %g GPU-hours" % (ns, share_h, whole_h))
    if not e or e["gpuHours"] <= 0 or not near(e["gpuHours"], share_h) or not near(e["gpuWholeHours"], whole_h):
        bad.append("%s: got %s, want %.6f / %.6f" % (ns, e and (e["gpuHours"], e["gpuWholeHours"]), share_h, whole_h))
idle = got.get("__idle__", {}).get("gpuHours")
if idle is None or not near(idle, want["idle"]):
    bad.append("__idle__: got %s, want %.6f" % (idle, want["idle"]))
if len(got) != len(want["namespaces"]) + 1:
    bad.append("%d entries, want %d" % (len(got), len(want["namespaces"]) + 1))
if bad:
    print("bench: WRONG ANSWER:\n  " + "\n  ".join(bad[:20]) + ("\n  ... %d more" % (len(bad) - 20) if len(bad) > 20 else ""))
    sys.exit(1)
print("bench: the answer equals the sums computed here: %d namespaces, workload %.3f + idle %.3f = capacity %.3f GPU-hours"
      % (len(want["namespaces"]), work, want["idle"], want["capacity"]))
PY
}
