#!/usr/bin/env bash
# tests/cost/simulate-cost.sh GPUFLEET SRC - the cost section of `gpufleet simulate`:
#  1. a trace small enough to compute by hand (tests/cost/data/small-*.csv): four 25 % pods
#     for 1 h = 1.000 GPU-hour (billed 4 whole), one whole GPU for 1 h, two GPUs for 1 h;
#     2 GPUs over 3 h = 6 GPU-hours of capacity, so idle 2; sharing saves 3 of 7 whole;
#     GPUs held at once: 1, 1, then 2 in the third hour (peak 2 at 2 h = day 0.1), mean 4/3.
#  2. the bundled openb default trace: the golden section (GPU-hours by class, idle,
#     saved by sharing) in tests/cost/data/openb-default-cost.txt.
#  3. a price sheet prices the GPU-hours at its '*' row; a negative price is one clear error.
set -euo pipefail
bin=$1
src=$2
d=$src/tests/cost/data
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
section() { sed -n '/^cost of the trace/,$p'; }

"$bin" simulate --nodes "$d/small-nodes.csv" --pods "$d/small-pods.csv" --policy fgd --seeds 1 \
	--threads 1 --quiet | section >"$out/small.txt"
diff -u "$d/small-expected.txt" "$out/small.txt"
echo "ok: small trace matches the hand-computed section"

GPUFLEET_DATA=$src/data "$bin" simulate --policy fgd --seeds 42 --threads 1 --quiet | section >"$out/openb.txt"
if [ "${GOLDEN_UPDATE:-}" = 1 ]; then cp "$out/openb.txt" "$d/openb-default-cost.txt"; fi
diff -u "$d/openb-default-cost.txt" "$out/openb.txt"
echo "ok: openb default cost section matches the golden"

printf 'model,on_demand_per_hour,spot_per_hour\n*,2.50,1.00\n' >"$out/p.csv"
"$bin" simulate --nodes "$d/small-nodes.csv" --pods "$d/small-pods.csv" --policy fgd --seeds 1 \
	--threads 1 --quiet --prices "$out/p.csv" | section >"$out/priced.txt"
grep -q '^  total                   4.0              7.0         10.0$' "$out/priced.txt" || {
	echo "priced total wrong:"; cat "$out/priced.txt"; exit 1; }
printf 'model,on_demand_per_hour,spot_per_hour\n*,-2.50,1.00\n' >"$out/bad.csv"
if "$bin" simulate --nodes "$d/small-nodes.csv" --pods "$d/small-pods.csv" --policy fgd --seeds 1 \
	--threads 1 --quiet --prices "$out/bad.csv" >"$out/o" 2>"$out/e"; then
	echo "a negative price was accepted"; exit 1; fi
grep -qx "gpufleet simulate: $out/bad.csv:2: column 2 (on_demand_per_hour): negative price -2.50" "$out/e" || {
	echo "unexpected error:"; cat "$out/e"; exit 1; }
[ ! -s "$out/o" ] || { echo "output despite the error"; exit 1; }
echo "ok: prices and the negative-price error"
