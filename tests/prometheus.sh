# tests/prometheus.sh - sourced by the scripts that run a real Prometheus (Debian package
# `prometheus`): tests/agent/agent_prometheus.sh, tests/cost/cost-prometheus.sh,
# tests/metrics-api/lib.sh, tests/serving/ma-forecast-prometheus and bench/lib.sh.
#
# prom_start LOG [FLAG...]: prometheus with the caller's $T/prometheus.yml over $T/tsdb on a
# free loopback port, its stderr in LOG, FLAGs added to its command line.  Three ports are
# tried (another process may take a port between the pick and the bind); on each it waits
# until /-/ready answers (60 s at most) or the process exits.  Sets PP (the port) and PROM
# (the pid, also appended to $PIDS for the caller's cleanup); returns 1 with PROM empty when
# none came up (the reason is in LOG).
prom_start() {
	local log=$1
	shift
	PROM=""
	for _ in 1 2 3; do
		PP=$(prom_free_port) || return 1
		prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/tsdb" \
			--web.listen-address="127.0.0.1:$PP" --log.level=warn "$@" 2>"$log" &
		PROM=$!
		PIDS="${PIDS:-} $PROM"
		for _ in $(seq 300); do
			curl -sf "http://127.0.0.1:$PP/-/ready" >/dev/null 2>&1 && return 0
			kill -0 "$PROM" 2>/dev/null || break
			sleep 0.2
		done
		kill "$PROM" 2>/dev/null || true
		PROM=""
	done
	return 1
}

# prom_free_port: a loopback port in 30000..49999 nothing answers on (50 tries), else returns 1.
prom_free_port() {
	local p
	for _ in $(seq 50); do
		p=$(((RANDOM % 20000) + 30000))
		(echo >"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return 0; }
	done
	return 1
}
