# tests/deviceplugin/lib.sh - the set-up the device plugin's scripts share (sourced by
# deviceplugin.sh, match.sh and bench/dp-allocate.sh): dp-harness, the FAKE NVML's GPUs,
# and the cleanup of everything started.
#
#   dp_setup NAME   $T: a new folder /tmp/NAME-XXXXXX with dp/ in it; $PIDS: the processes
#                   to stop on exit (each killed, then waited for; then dp_on_exit runs if
#                   the script defines it; then $T is removed), also on failure;
#                   $HARNESS: dp-harness (tests/deviceplugin/harness, the kubelet's own
#                   client library over grpc-go), built once per machine into the cache;
#                   $T/state: 8 FAKE NVML GPUs of 81,920 MiB, none used
#   dp_harness ARG...
#                   dp-harness -dir $T/dp -state $T/state ARG... in the background (its
#                   output in $T/harness.out; $HPID, also in $PIDS), then waits up to 10 s
#                   for the kubelet.sock it serves
# The scripts keep their own `set -eu`.

dp_cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null || true; done
	for p in $PIDS; do wait "$p" 2>/dev/null || true; done
	if declare -F dp_on_exit >/dev/null; then dp_on_exit; fi
	rm -rf "$T"
}

dp_setup() {
	T=$(mktemp -d "/tmp/$1-XXXXXX")
	PIDS=""
	trap dp_cleanup EXIT
	HARNESS=$("$(dirname "${BASH_SOURCE[0]}")/build-harness")
	mkdir -p "$T/dp"
	for i in 0 1 2 3 4 5 6 7; do echo "gpu $i mem_total_mib=81920 mem_used_mib=0"; done >"$T/state"
}

dp_harness() {
	"$HARNESS" -dir "$T/dp" -state "$T/state" "$@" >"$T/harness.out" 2>&1 &
	HPID=$!
	PIDS="$PIDS $HPID"
	for _ in $(seq 100); do [ -S "$T/dp/kubelet.sock" ] && break; sleep 0.1; done
}
