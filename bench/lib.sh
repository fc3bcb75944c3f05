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
