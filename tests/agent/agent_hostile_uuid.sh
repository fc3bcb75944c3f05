#!/bin/bash
# tests/agent/agent_hostile_uuid.sh - GPU UUIDs from NVML that are not
# letters, digits and '-' (a '/', "..", quotes, '$'), given by the FAKE NVML:
# the GPU is left out of the CDI spec (and the device plugin, which names
# folders after it), the log names the UUID escaped, and the other GPU's
# spec is still written.
. "$(dirname "$0")/lib.sh"
GOOD=GPU-1f3c2a9e-8d7b-4c6a-9e21-0a5b7c3d2e10
for bad in 'GPU-../../../etc/cron.d/x' '..' "GPU-a'b" 'GPU-$(reboot)' 'GPU-1.2' '-rf'; do
	printf 'driver 550.54.15\ngpu 0 uuid=%s mem_total_mib=1000\ngpu 1 uuid=%s mem_total_mib=1000\n' "$GOOD" "$bad" > "$T/hstate"
	rc=0
	GF_FAKE_NVML_STATE="$T/hstate" "$GPUFLEET" agent --nvml-lib "$FAKE" --cdi-spec > "$T/spec" 2> "$T/err" || rc=$?
	[ "$rc" = 0 ] || fail "UUID '$bad': --cdi-spec exited $rc: $(cat "$T/err")"
	grep -q "\"name\":	\"$GOOD\"" "$T/spec" || fail "UUID '$bad': GPU 0 missing from the spec: $(cat "$T/spec")"
	[ "$(grep -c '"name":' "$T/spec")" = 2 ] || fail "UUID '$bad': want GPU 0 and all only: $(grep '"name":' "$T/spec")"
	grep -qF "GPU 1: NVML gave the UUID \"$bad\", not letters, digits and '-'" "$T/err" ||
		fail "UUID '$bad': no log line naming it: $(cat "$T/err")"
done
pass "hostile NVML UUIDs ('/', '..', quote, \$(), '.', leading '-'): the GPU left out of the CDI spec, named in the log; the other GPU written"
