# tests/agent/lib.sh - shared by the agent's script tests (sourced).
# Arguments of every script: GPUFLEET FAKE_NVML FAKE_NVML_OLD DATA_DIR.
# Provides: $T (temp dir, removed on exit), fail, start_agent, scrape,
# stop_agent; every process started here is killed on exit, also on failure.
set -eu
GPUFLEET=$1 FAKE=$2 FAKE_OLD=$3 DATA=$4
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../listen-port.sh"
T=$(mktemp -d /tmp/gf-agent-sh-XXXXXX)
PIDS=""
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null || true; done
	for p in $PIDS; do wait "$p" 2>/dev/null || true; done
	rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; [ -f "$T/agent.log" ] && { echo "--- agent log:" >&2; tail -20 "$T/agent.log" >&2; }; exit 1; }
pass() { echo "ok: $*"; }

"$HERE/make-fake-node" "$DATA/two_gpus.node" "$T"
cp "$DATA/two_gpus.state" "$T/state"
export GF_FAKE_NVML_STATE="$T/state"

# start_agent [extra args...]: run the agent on a free loopback port; sets AGENT_PID, PORT.
start_agent() {
	: > "$T/agent.log"
	"$GPUFLEET" agent --address 127.0.0.1:0 --nvml-lib "$FAKE" --proc-root "$T/proc" \
		--log-root "$T/log" --node-name node-a "$@" 2>"$T/agent.log" &
	AGENT_PID=$!
	PIDS="$PIDS $AGENT_PID"
	PORT=$(listen_port "$T/agent.log" "$AGENT_PID" agent http /metrics) || fail "agent did not start"
}

scrape() { curl -sS --max-time 10 "http://127.0.0.1:$PORT${1:-/metrics}"; }

stop_agent() {
	kill -TERM "$AGENT_PID"
	wait "$AGENT_PID" || fail "agent exited with $? on SIGTERM"
	grep -q "gpufleet agent: stopping" "$T/agent.log" || fail "no graceful stop message"
}
