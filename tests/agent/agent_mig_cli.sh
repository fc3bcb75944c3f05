#!/bin/bash
# tests/agent/agent_mig_cli.sh - `gpufleet agent --mig-layout` on the FAKE NVML's
# MIG driver, through the real binary: the layout applied (instances with
# MIG- UUIDs in --mig-state, dcgm-exporter's GPU_I_PROFILE/GPU_I_ID series
# in --once), a second agent process (a restart) finds every instance and
# changes nothing, an instance with a process is kept against a new layout
# (logged, "unwanted" in the state), a wrong slot is refused with its legal
# starts, and an invalid layout file stops the agent with the JSON path.
. "$(dirname "$0")/lib.sh"
H100=GPU-1f3c2a9e-8d7b-4c6a-9e21-0a5b7c3d2e10
printf 'driver 550.54.15\ngpu 0 uuid=%s name="NVIDIA H100 80GB HBM3" mem_total_mib=81559 mem_used_mib=0\n' "$H100" > "$T/mstate"
export GF_FAKE_NVML_STATE="$T/mstate"
agent() { "$GPUFLEET" agent --nvml-lib "$FAKE" --no-kubernetes --node-name node-a "$@"; }
printf '{"%s":[{"profile":"1g.10gb","start":0},{"profile":"1g.10gb","start":1},{"profile":"2g.20gb","start":2},{"profile":"3g.40gb","start":4}]}' "$H100" > "$T/balanced.json"

agent --mig-layout "$T/balanced.json" --mig-state > "$T/s1" 2> "$T/e1" || fail "apply: $(cat "$T/e1")"
grep -q "4 created, 0 destroyed, 0 kept in use, 0 failed" "$T/e1" || fail "first apply: $(cat "$T/e1")"
[ "$(grep -o '"uuid":"MIG-[0-9a-f-]*"' "$T/s1" | sort -u | wc -l)" = 4 ] || fail "want 4 MIG UUIDs: $(cat "$T/s1")"
pass "balanced layout applied: 4 instances with MIG- UUIDs"

agent --mig-layout "$T/balanced.json" --once > "$T/m" 2> "$T/e2" || fail "once: $(cat "$T/e2")"
grep -q "0 created, 0 destroyed" "$T/e2" || fail "restart changed the layout: $(cat "$T/e2")"
for p in '1g.10gb' '2g.20gb' '3g.40gb'; do
	grep -q "^DCGM_FI_DEV_FB_FREE{gpu=\"0\",UUID=\"$H100\".*,GPU_I_PROFILE=\"$p\",GPU_I_ID=\"[0-9]*\"} " "$T/m" ||
		fail "no FB_FREE series for $p: $(grep FB_FREE "$T/m")"
done
agent --mig-state > "$T/s2" 2>/dev/null
cmp -s "$T/s1" "$T/s2" || fail "state after a restart differs: $(cat "$T/s1") vs $(cat "$T/s2")"
pass "agent restart: the same instances and UUIDs, nothing created or destroyed; GPU_I_PROFILE/GPU_I_ID per instance"

gi=$(grep -o '"profile":"3g.40gb","start":4,"gi":[0-9]*' "$T/s1" | grep -o '[0-9]*$')
printf 'proc 0 pid=4242 mem_mib=512 gi=%s\n' "$gi" >> "$T/mstate"
printf '{"%s":[{"profile":"7g.80gb","start":0}]}' "$H100" > "$T/whole.json"
agent --mig-layout "$T/whole.json" --mig-state > "$T/s3" 2> "$T/e3" || fail "apply whole: $(cat "$T/e3")"
grep -q "keeping 3g.40gb at slot 4 (GPU instance $gi, MIG-.*): not in the layout, but a container uses it" "$T/e3" ||
	fail "no log line for the kept instance: $(cat "$T/e3")"
grep -q '"profile":"3g.40gb","start":4,"gi":[0-9]*,"uuid":"MIG-[0-9a-f-]*","inUse":true,"unwanted":true' "$T/s3" ||
	fail "state does not show the kept instance: $(cat "$T/s3")"
grep -q '"profile":"7g.80gb","start":0,"error":"its slices overlap' "$T/s3" || fail "7g not reported: $(cat "$T/s3")"
pass "an instance in use is never destroyed: kept, logged, unwanted+inUse in the state"

printf '{"%s":[{"profile":"3g.40gb","start":2}]}' "$H100" > "$T/wrong.json"
agent --mig-layout "$T/wrong.json" --mig-state > "$T/s4" 2> "$T/e4" || fail "apply wrong: $(cat "$T/e4")"
grep -q '3g.40gb cannot start at slot 2 (legal starts: 0,4)' "$T/e4" || fail "wrong slot not refused: $(cat "$T/e4")"
pass "a wrong slot is refused with the legal starts"

printf '{"%s":[{"profile":"3g.40gb","start":9}]}' "$H100" > "$T/bad.json"
rc=0
agent --mig-layout "$T/bad.json" --once > /dev/null 2> "$T/e5" || rc=$?
[ "$rc" = 2 ] || fail "invalid layout: exit $rc, want 2"
grep -qF "[0].start: expected an integer 0..7" "$T/e5" || fail "no JSON path in: $(cat "$T/e5")"
pass "an invalid layout file stops the agent (exit 2) naming the JSON path"
