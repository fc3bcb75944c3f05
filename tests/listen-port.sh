# tests/listen-port.sh - sourced by the test libraries (tests/agent/lib.sh,
# tests/metrics-api/lib.sh).
#
# listen_port LOG PID WHAT SCHEME PATH: wait (up to 30 s) until a gpufleet
# server started with port 0 logs "serving on SCHEME://ADDR:PORT/PATH..." in
# LOG, and print PORT.  Returns 1, with the reason on stderr, if PID exits
# first or time runs out; callers add `|| fail ...`.
listen_port() {
	local log=$1 pid=$2 what=$3 scheme=$4 path=$5 port
	for _ in $(seq 300); do
		port=$(sed -n "s|.*serving on $scheme://[0-9.]*:\([0-9]*\)$path.*|\1|p" "$log")
		if [ -n "$port" ]; then
			echo "$port"
			return 0
		fi
		if ! kill -0 "$pid" 2>/dev/null; then
			echo "$what exited during start-up: $(cat "$log")" >&2
			return 1
		fi
		sleep 0.1
	done
	echo "$what did not start in 30 s" >&2
	return 1
}
