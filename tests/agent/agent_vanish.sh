#!/bin/bash
# tests/agent/agent_vanish.sh - a GPU falls off the bus while the agent runs:
# it is reported (gpufleet_gpu_up 0 and a log line), its samples vanish, the
# other GPU keeps being served; when it answers again it is back.
. "$(dirname "$0")/lib.sh"
start_agent --interval-ms 0
scrape > "$T/m1"
grep -q '^gpufleet_gpu_up{gpu="1".*} 1$' "$T/m1" || fail "GPU 1 not up at start"
grep -q '^DCGM_FI_DEV_GPU_UTIL{gpu="1"' "$T/m1" || fail "GPU 1 has no utilization at start"

sed 's/^gpu 1 \(.*\)$/gpu 1 \1 lost=1/' "$DATA/two_gpus.state" > "$T/state.new"
sleep 0.05; mv "$T/state.new" "$T/state"; sleep 0.05
scrape > "$T/m2"
grep -q '^gpufleet_gpu_up{gpu="1".*} 0$' "$T/m2" || fail "GPU 1 not reported down: $(grep gpu_up "$T/m2")"
! grep -q '^DCGM_FI_DEV_GPU_UTIL{gpu="1"' "$T/m2" || fail "lost GPU 1 still has samples"
grep -q '^DCGM_FI_DEV_GPU_UTIL{gpu="0".*} 87$' "$T/m2" || fail "GPU 0 not served any more"
grep -q '^gpufleet_gpu_up{gpu="0".*} 1$' "$T/m2" || fail "GPU 0 not up"
grep -q 'GPU 1 (GPU-77aa0c41-2b3e-4f55-8a10-6c9d0e4f1a22, 00000000:5E:00.0) stopped answering: GPU is lost' "$T/agent.log" ||
	fail "no log line for the lost GPU"
pass "lost GPU reported (metric + log), the other GPU still served"

sleep 0.05; cp "$DATA/two_gpus.state" "$T/state.new"; mv "$T/state.new" "$T/state"; sleep 0.05
scrape > "$T/m3"
grep -q '^gpufleet_gpu_up{gpu="1".*} 1$' "$T/m3" || fail "GPU 1 not back"
grep -q 'GPU 1 .* answers again' "$T/agent.log" || fail "no log line for the recovery"
pass "GPU back when it answers again"
stop_agent
