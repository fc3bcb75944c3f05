#!/bin/bash
# tests/cdi/cdi.sh GPUFLEET FAKE_NVML - the agent's CDI spec against the
# reference CDI implementation (cdi-validate, built by ./build-validator from
# tags.cncf.io/container-device-interface): 8 GPUs of the FAKE NVML, the
# spec loads with 0 errors and lists exactly their devices; a spec with an
# unknown field is refused (the validator can fail); one device injected
# into an OCI runtime spec gets its node and not the others; a folder that
# cannot be written is one clear error.
set -eu
GPUFLEET=$1 FAKE=$2
HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d /tmp/gf-cdi-XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok: $*"; }

VALIDATE=$("$HERE/build-validator")

# 8 GPUs (the FAKE NVML's default UUIDs GPU-00000000-0000-0000-0000-00000000000N).
for i in 0 1 2 3 4 5 6 7; do echo "gpu $i"; done > "$T/state"
export GF_FAKE_NVML_STATE="$T/state"
mkdir -p "$T/cdi" "$T/dev"
ctl=0
if [ "$(id -u)" = 0 ] && mknod "$T/dev/nvidiactl" c 1 3 2>/dev/null; then ctl=1; fi

"$GPUFLEET" agent --nvml-lib "$FAKE" --no-kubernetes --cdi-spec --cdi-dir "$T/cdi" --cdi-dev-root "$T/dev" \
	2>"$T/err" || fail "agent --cdi-spec: $(cat "$T/err")"
grep -q "CDI spec for 8 GPU(s) written to $T/cdi/gpufleet.io-gpu.json" "$T/err" || fail "message: $(cat "$T/err")"
[ "$(ls -A "$T/cdi")" = gpufleet.io-gpu.json ] || fail "folder holds more than the spec: $(ls -A "$T/cdi")"
pass "agent wrote the spec (and nothing else) into the CDI folder"

"$VALIDATE" "$T/cdi" > "$T/v.out" || fail "reference CDI implementation: $(cat "$T/v.out")"
grep -qx "0 errors" "$T/v.out" || fail "validator: $(cat "$T/v.out")"
{
	for i in 0 1 2 3 4 5 6 7; do printf 'device gpufleet.io/gpu=GPU-00000000-0000-0000-0000-%012d\n' "$i"; done
	echo "device gpufleet.io/gpu=all"
	echo "0 errors"
} > "$T/want"
diff -u "$T/want" "$T/v.out" || fail "device list differs"
pass "spec loads in the reference CDI implementation with 0 errors: 8 GPUs + all"

spec=$T/cdi/gpufleet.io-gpu.json
[ "$(jq -r '.devices[3].containerEdits.deviceNodes[0] | "\(.path) \(.type) \(.major) \(.minor) \(.hostPath)"' "$spec")" = \
	"/dev/nvidia3 c 195 3 $T/dev/nvidia3" ] || fail "device node of GPU 3: $(jq -c '.devices[3]' "$spec")"
if [ $ctl = 1 ]; then
	[ "$(jq -r '.containerEdits.deviceNodes | map("\(.path) \(.major):\(.minor)") | join(",")' "$spec")" = \
		"/dev/nvidiactl 1:3" ] || fail "control nodes: $(jq -c '.containerEdits' "$spec")"
	pass "control nodes: the existing one (numbers from stat), the missing ones left out"
fi

# The validator is not a rubber stamp: an unknown field is an error.
mkdir "$T/bad"
jq '.devices[0].containerEdits.bogus = 1' "$spec" > "$T/bad/bad.json"
rc=0; "$VALIDATE" "$T/bad" > "$T/bad.out" || rc=$?
[ $rc = 1 ] && grep -q "spec error" "$T/bad.out" || fail "a spec with an unknown field passed: $(cat "$T/bad.out")"
pass "a spec with an unknown field is refused by the same validator"

# Injection into an OCI runtime spec (what a CDI-enabled runtime hands runc).
cat > "$T/config.json" <<'JSON'
{"ociVersion": "1.0.2", "process": {"args": ["/bin/sh"], "env": ["PATH=/bin"], "cwd": "/"},
 "root": {"path": "rootfs"}, "linux": {}}
JSON
dev=gpufleet.io/gpu=GPU-00000000-0000-0000-0000-000000000005
"$VALIDATE" "$T/cdi" "$T/config.json" "$dev" > "$T/inj.out" || fail "inject: $(cat "$T/inj.out")"
[ "$(jq -r '[.linux.devices[] | select(.path | startswith("/dev/nvidia")) | select(.path != "/dev/nvidiactl") | "\(.path) \(.major):\(.minor)"] | join(",")' "$T/config.json")" = \
	"/dev/nvidia5 195:5" ] || fail "injected devices: $(jq -c '.linux.devices' "$T/config.json")"
jq -e '.process.env | index("NVIDIA_VISIBLE_DEVICES=void")' "$T/config.json" >/dev/null ||
	fail "env: $(jq -c '.process.env' "$T/config.json")"
jq -e '.linux.resources.devices | map(select(.major == 195 and .minor == 5 and .allow)) | length == 1' \
	"$T/config.json" >/dev/null || fail "device cgroup rule: $(jq -c '.linux.resources' "$T/config.json")"
pass "injecting $dev into an OCI spec adds /dev/nvidia5 only, its cgroup rule and NVIDIA_VISIBLE_DEVICES=void"

# A folder that cannot be written: one clear message, exit 1.
rc=0; "$GPUFLEET" agent --nvml-lib "$FAKE" --no-kubernetes --cdi-spec --cdi-dir "$T/missing" 2>"$T/err" || rc=$?
[ $rc = 1 ] && grep -q "gpufleet agent: CDI: $T/missing/.gpufleet.io-gpu.json.*No such file or directory" "$T/err" ||
	fail "unwritable folder: exit $rc: $(cat "$T/err")"
pass "unwritable CDI folder -> exit 1 naming the path"

# Without --cdi-dir the spec goes to stdout, the same document.
"$GPUFLEET" agent --nvml-lib "$FAKE" --no-kubernetes --cdi-spec --cdi-dev-root "$T/dev" > "$T/stdout.json" 2>/dev/null
cmp -s "$T/stdout.json" "$spec" || fail "stdout spec differs from the written one"
pass "--cdi-spec without --cdi-dir prints the same spec"
