#!/bin/bash
# tests/agent/gpu_script_selftest.sh - the real-GPU comparison script
# (tests/gpu/compare-nvidia-smi) checked here without a GPU: a FAKE
# nvidia-smi on PATH and the FAKE NVML (through GF_NVML_LIB, the agent's
# real dlopen path).  Agreeing values -> exit 0; a temperature off by 25 C
# -> exit 1 with MISMATCH; no nvidia-smi -> exit 77 (skip).
. "$(dirname "$0")/lib.sh"
SCRIPT=$HERE/../gpu/compare-nvidia-smi
mkdir -p "$T/bin"
smi() { # TEMP0
	cat > "$T/bin/nvidia-smi" <<SMI
#!/bin/sh
case "\$*" in
-L) echo "GPU 0: NVIDIA H100 80GB HBM3";;
*query-gpu*)
  echo "0, GPU-1f3c2a9e-8d7b-4c6a-9e21-0a5b7c3d2e10, NVIDIA H100 80GB HBM3, 00000000:3B:00.0, 550.54.15, 61300, 19800, 80, 41, $1, 405.12, 1980, 2619"
  echo "1, GPU-77aa0c41-2b3e-4f55-8a10-6c9d0e4f1a22, NVIDIA H100 80GB HBM3, 00000000:5E:00.0, 550.54.15, 30000, 51047, 55, 20, 58, 250.50, 1755, 2619";;
esac
SMI
	chmod +x "$T/bin/nvidia-smi"
}
export GF_NVML_LIB=$FAKE
smi 65
PATH="$T/bin:$PATH" "$SCRIPT" "$GPUFLEET" > "$T/out" 2>&1 || fail "agreeing values: $(cat "$T/out")"
grep -q "all values agree" "$T/out" || fail "no verdict"
pass "agreeing values -> exit 0"
smi 89
rc=0; PATH="$T/bin:$PATH" "$SCRIPT" "$GPUFLEET" > "$T/out" 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "mismatch: exit $rc"
grep -q "DCGM_FI_DEV_GPU_TEMP .*gpu 0 .*MISMATCH" "$T/out" || fail "mismatch not named: $(cat "$T/out")"
pass "a temperature 25 C off -> exit 1 naming the metric"
rc=0; PATH=/usr/bin:/bin "$SCRIPT" "$GPUFLEET" > /dev/null 2>&1 || rc=$?
[ "$rc" = 77 ] || fail "no nvidia-smi: exit $rc, want 77"
pass "no nvidia-smi -> skipped (77)"
