#!/bin/bash
# tests/agent/agent_watchdog_kill.sh - the NVML per-process watchdog behind
# the memory cap, on the running agent over the FAKE NVML: real processes
# (sleep) stand for CUDA processes; the FAKE NVML reports them on the GPUs
# with scripted memory, and the fake /proc tree gives each its share's mount
# (as the device plugin's limit-file mount shows in /proc/<pid>/mountinfo).
#   GPU 1 (81559 MiB, share of 250 units = 20389 MiB cap):
#     share A (units 0..249):   P1 10000 MiB                 under its cap
#     share B (units 250..499): P2 14000 MiB + P3 12000 MiB  26000 > 20389 + 2 x 512 slack
#   GPU 0: P4 1000 MiB holding a share of GPU 1: cap 0 here, over the slack
#   GPU 1 also: the host process 7171 (no share, not real): never touched
#   share D (units 750..999): P5 18000 MiB in trainer-0, under its cap; P6 4000 MiB in
#     notebook-x whose mounts name D too (a user namespace and chroot can arrange that):
#     judged apart (a share is one container's), so neither is over; judged together
#     (22000 MiB) P5, the owner, was killed
# --watchdog reports P2, P3, P4 and kills nothing; --watchdog-kill kills P2
# (largest of B; P3 alone fits) and P4, and leaves P1, P3 alone.
. "$(dirname "$0")/lib.sh"
G0=GPU-1f3c2a9e-8d7b-4c6a-9e21-0a5b7c3d2e10
G1=GPU-77aa0c41-2b3e-4f55-8a10-6c9d0e4f1a22
P=()
for i in 1 2 3 4 5 6; do
	sleep 600 &
	P[i]=$!
	PIDS="$PIDS ${P[i]}"
done
share() { # share PID DIRNAME [CGROUP-PID]: the fake /proc/PID with that share's limit mount, in trainer-0's cgroup
	mkdir -p "$T/proc/$1"
	cp "$T/proc/${3:-5151}/cgroup" "$T/proc/$1/cgroup"
	cat > "$T/proc/$1/mountinfo" <<MI
1201 1190 0:22 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw
1210 1190 0:25 /gpufleet/memcap/$2/limit /etc/gpufleet/memcap/limit ro,nosuid,nodev - tmpfs tmpfs rw
1211 1190 0:25 /gpufleet/memcap/$2/ledger /var/run/gpufleet/memcap rw,nosuid,nodev - tmpfs tmpfs rw
MI
}
share "${P[1]}" "$G1-u0-n250"
share "${P[2]}" "$G1-u250-n250"
share "${P[3]}" "$G1-u250-n250"
share "${P[4]}" "$G1-u500-n250"
share "${P[5]}" "$G1-u750-n250"
share "${P[6]}" "$G1-u750-n250" 6161
state() { # state PROC-LINES...: two_gpus.state's GPUs with these processes
	grep -v '^proc ' "$DATA/two_gpus.state" > "$T/state.new"
	printf '%s\n' "$@" >> "$T/state.new"
	sleep 0.05; mv "$T/state.new" "$T/state"; sleep 0.05
}
state "proc 1 pid=${P[1]} mem_mib=10000" "proc 1 pid=${P[2]} mem_mib=14000" "proc 1 pid=${P[3]} mem_mib=12000" \
	"proc 0 pid=${P[4]} mem_mib=1000" "proc 1 pid=7171 mem_mib=30000" \
	"proc 1 pid=${P[5]} mem_mib=18000" "proc 1 pid=${P[6]} mem_mib=4000"
alive() { for i in "$@"; do kill -0 "${P[i]}" 2>/dev/null || fail "P$i (${P[i]}) is gone"; done; }
over() { # over FILE: the over-share PIDs, sorted
	sed -n 's/^gpufleet_watchdog_over_share_process_memory_bytes{.*pid="\([0-9]*\)".*/\1/p' "$1" | sort -n | tr '\n' ' '
}
want_over=$(printf '%s\n' "${P[2]}" "${P[3]}" "${P[4]}" | sort -n | tr '\n' ' ')

# ---- report only --------------------------------------------------------------------------
start_agent --interval-ms 0 --watchdog
scrape > "$T/m1"
[ "$(over "$T/m1")" = "$want_over" ] || fail "over-share PIDs '$(over "$T/m1")', want '$want_over': $(grep watchdog "$T/m1")"
grep -q '^gpufleet_watchdog_over_share_processes 3$' "$T/m1" || fail "over-share count: $(grep processes "$T/m1")"
grep -q "^gpufleet_watchdog_over_share_process_memory_bytes{gpu=\"1\",UUID=\"$G1\",.*,pid=\"${P[2]}\",share_milli=\"250\",container=\"main\",namespace=\"research\",pod=\"trainer-0\"} 14680064000\$" "$T/m1" ||
	fail "P2's series (GPU, share, pod labels, bytes): $(grep "pid=\"${P[2]}\"" "$T/m1")"
grep -q "^gpufleet_watchdog_over_share_process_memory_bytes{gpu=\"0\",.*pid=\"${P[4]}\",share_milli=\"250\"" "$T/m1" || fail "P4 (share of another GPU) not reported on GPU 0"
grep -q '^gpufleet_watchdog_kills_total{result="ok"} 0$' "$T/m1" || fail "kills without --watchdog-kill"
sleep 0.2
alive 1 2 3 4 5 6
stop_agent
pass "--watchdog: the 3 processes of over-cap shares reported with GPU, share and pod labels; an under-cap share, a host process: not; nothing killed"

# A larger slack covers share B (26000 <= 20389 + 2 x 3000); P4's 1000 MiB too.
start_agent --interval-ms 0 --watchdog --watchdog-slack-mib 3000
scrape > "$T/m2"
grep -q '^gpufleet_watchdog_over_share_processes 0$' "$T/m2" || fail "slack 3000 MiB: $(grep watchdog_over "$T/m2")"
stop_agent
pass "--watchdog-slack-mib 3000: no share over"

# ---- kill ---------------------------------------------------------------------------------
start_agent --interval-ms 0 --watchdog-kill
scrape > "$T/m3"
grep -q '^gpufleet_watchdog_kills_total{result="ok"} 2$' "$T/m3" || fail "kills: $(grep kills_total "$T/m3")"
for i in 2 4; do
	rc=0; wait "${P[i]}" || rc=$?
	[ "$rc" = 137 ] || fail "P$i exited with $rc, want 137 (SIGKILL)"
done
alive 1 3
grep -q "watchdog: killed PID ${P[2]} on GPU 1 ($G1): its container's share 250/1000" "$T/agent.log" || fail "no log line for P2's kill"
grep -q "watchdog: killed PID ${P[4]} on GPU 0 ($G0)" "$T/agent.log" || fail "no log line for P4's kill"
# NVML stops listing them; the rest fits: nothing more is killed.
state "proc 1 pid=${P[1]} mem_mib=10000" "proc 1 pid=${P[3]} mem_mib=12000" "proc 1 pid=7171 mem_mib=30000" \
	"proc 1 pid=${P[5]} mem_mib=18000" "proc 1 pid=${P[6]} mem_mib=4000"
scrape > "$T/m4"
grep -q '^gpufleet_watchdog_over_share_processes 0$' "$T/m4" || fail "after the kills: $(grep watchdog_over "$T/m4")"
grep -q '^gpufleet_watchdog_kills_total{result="ok"} 2$' "$T/m4" || fail "more kills: $(grep kills_total "$T/m4")"
alive 1 3 5 6
stop_agent
pass "--watchdog-kill: a process of another pod whose mounts name a share is judged apart from the share's owner: the owner (P5) alive"
pass "--watchdog-kill: SIGKILL to the largest process of the over-cap share (the rest fits) and to the one holding another GPU's share; the others alive; logged"
