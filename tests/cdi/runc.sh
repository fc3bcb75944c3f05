#!/bin/bash
# tests/cdi/runc.sh GPUFLEET FAKE_NVML - the agent's CDI spec injected into a
# real OCI runtime: Debian's runc runs a busybox rootfs whose config.json got
# one GPU's CDI edits from the reference CDI implementation (cdi-validate,
# ./build-validator), the way a CDI-enabled runtime (containerd, CRI-O) does
# for a container the device plugin's Allocate named `gpufleet.io/gpu=<UUID>`.
# The container prints its environment and /dev and tries to open the GPU
# nodes: it must see /dev/nvidia5 (and the control node), no other GPU's node
# in /dev, and the device cgroup must let it open its own node and refuse
# another GPU's (bound in from the host for the purpose).
#
# Device nodes: the FAKE NVML's 8 GPUs get nodes under a test folder (never
# /dev), made with NVIDIA's numbers (char 195:N, control 195:255).  No NVIDIA
# driver is loaded here, so opening one fails with ENXIO ("No such device or
# address") when the device cgroup allows it and EPERM ("Operation not
# permitted") when it does not: that difference is what the test reads.
#
# Root only (runc creates the container's mount namespace and its cgroups):
# exit 77 (skipped) otherwise, or without runc / a static busybox.  runc puts
# the container in its own cgroup, cgroupsPath /gpufleet-test-<pid>; the
# script checks that `runc run` removed it in every hierarchy (and removes a
# leftover on any exit).
set -eu
GPUFLEET=$1 FAKE=$2
HERE=$(cd "$(dirname "$0")" && pwd)
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (runc)"
RUNC=$(command -v runc) || skip "no runc (Debian package runc; scripts/bootstrap test)"
BUSYBOX=
for b in /bin/busybox /usr/bin/busybox; do # static: ldd fails ("not a dynamic executable")
	[ -x "$b" ] && ! ldd "$b" >/dev/null 2>&1 && BUSYBOX=$b && break
done
[ -n "$BUSYBOX" ] || skip "no static busybox (Debian package busybox-static; scripts/bootstrap test)"

T=$(mktemp -d /tmp/gf-cdi-runc-XXXXXX)
CG=gpufleet-test-$$
ID=gf-cdi-$$
cleanup() {
	"$RUNC" --root "$T/runc" delete --force "$ID" >/dev/null 2>&1 || true
	for d in /sys/fs/cgroup/*/"$CG" /sys/fs/cgroup/"$CG"; do [ -d "$d" ] && rmdir "$d" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok: $*"; }

VALIDATE=$("$HERE/build-validator")

# The spec, over the FAKE NVML's 8 GPUs (UUIDs GPU-00000000-0000-0000-0000-00000000000N).
for i in 0 1 2 3 4 5 6 7; do echo "gpu $i"; done > "$T/state"
mkdir -p "$T/cdi" "$T/dev"
for i in 0 1 2 3 4 5 6 7; do mknod "$T/dev/nvidia$i" c 195 "$i"; done
mknod "$T/dev/nvidiactl" c 195 255
GF_FAKE_NVML_STATE="$T/state" "$GPUFLEET" agent --nvml-lib "$FAKE" --no-kubernetes --cdi-spec --cdi-dir "$T/cdi" \
	--cdi-dev-root "$T/dev" 2>"$T/err" || fail "agent --cdi-spec: $(cat "$T/err")"

# The bundle: busybox alone in a read-only rootfs; the process environment as
# the kubelet passes the device plugin's Allocate answer for one whole GPU
# (NVIDIA_VISIBLE_DEVICES=<UUID>, the fallback for runtimes without CDI).
UUID=GPU-00000000-0000-0000-0000-000000000005
mkdir -p "$T/bundle/rootfs/bin" "$T/bundle/rootfs/dev" "$T/bundle/rootfs/proc" "$T/runc"
cp "$BUSYBOX" "$T/bundle/rootfs/bin/busybox"
ln -s busybox "$T/bundle/rootfs/bin/sh"
(cd "$T/bundle" && "$RUNC" spec)
cat > "$T/probe" <<'SH'
env | sort
echo "--- /dev"
for f in /dev/*; do [ -c "$f" ] && echo "$f $(stat -c '%t:%T' "$f")"; done
echo "--- cgroup"
cat /proc/self/cgroup
echo "--- open"
for f in /dev/nvidia5 /dev/nvidiactl /mnt/nvidia3; do
	if (: < "$f") 2>"/tmp/e"; then echo "$f opened"; else echo "$f $(sed 's/.*: //' /tmp/e)"; fi
done
SH
jq --arg cg "/$CG" --arg uuid "$UUID" --arg other "$T/dev/nvidia3" --rawfile probe "$T/probe" '
	.process.terminal = false | .process.args = ["/bin/busybox", "sh", "-c", $probe] |
	.process.env = ["PATH=/bin", ("NVIDIA_VISIBLE_DEVICES=" + $uuid)] |
	.mounts += [{"destination": "/tmp", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "nodev"]},
		    {"destination": "/mnt/nvidia3", "type": "bind", "source": $other, "options": ["bind", "ro"]}] |
	.root.readonly = true | .hostname = "gf-cdi" | .linux.cgroupsPath = $cg' \
	"$T/bundle/config.json" > "$T/c.json" && mv "$T/c.json" "$T/bundle/config.json"
# The busybox applets the probe runs, found through PATH=/bin.
for a in cat env sort stat sed; do ln -s busybox "$T/bundle/rootfs/bin/$a"; done

"$VALIDATE" "$T/cdi" "$T/bundle/config.json" "gpufleet.io/gpu=$UUID" > "$T/inj.out" ||
	fail "CDI injection: $(cat "$T/inj.out")"
pass "the reference CDI implementation injected gpufleet.io/gpu=$UUID into the bundle's config.json"

rc=0
timeout 60 "$RUNC" --root "$T/runc" run --bundle "$T/bundle" "$ID" > "$T/out" 2> "$T/runc.err" || rc=$?
[ $rc = 0 ] || fail "runc run: exit $rc: $(cat "$T/runc.err") $(cat "$T/out")"
echo "--- the container's output"
cat "$T/out"
echo "---"

# The environment: what the device plugin set, then the CDI edit on top (a
# CDI runtime applies the spec's env after the CRI's: NVIDIA_VISIBLE_DEVICES
# becomes void, so an nvidia-container-runtime hook adds nothing more).
grep -qx "NVIDIA_VISIBLE_DEVICES=void" "$T/out" || fail "env: NVIDIA_VISIBLE_DEVICES is not the CDI spec's 'void'"
[ "$(grep -c '^NVIDIA_VISIBLE_DEVICES=' "$T/out")" = 1 ] || fail "env: NVIDIA_VISIBLE_DEVICES more than once"
pass "the container's env: NVIDIA_VISIBLE_DEVICES=void (the CDI spec's edit over the plugin's $UUID)"

# /dev: exactly the GPU's node and the control node among NVIDIA's.
got=$(sed -n '/^--- \/dev/,/^--- open/p' "$T/out" | grep '^/dev/nvidia' | sort | tr '\n' ' ')
[ "$got" = "/dev/nvidia5 c3:5 /dev/nvidiactl c3:ff " ] || fail "NVIDIA nodes in the container: '$got'"
pass "the container sees /dev/nvidia5 (195:5) and /dev/nvidiactl, no other GPU's node"

# The device cgroup: its own nodes open as far as the (absent) driver
# allows; another GPU's node, bind-mounted in at /mnt/nvidia3 (a mount is
# not the device cgroup's business, an open is), is refused.
grep -qx "/dev/nvidia5 No such device or address" "$T/out" || fail "open /dev/nvidia5: $(grep '^/dev/nvidia5 ' "$T/out")"
grep -qx "/dev/nvidiactl No such device or address" "$T/out" || fail "open /dev/nvidiactl: $(grep '^/dev/nvidiactl ' "$T/out")"
grep -qx "/mnt/nvidia3 Operation not permitted" "$T/out" || fail "open /mnt/nvidia3: $(grep '^/mnt/nvidia3 ' "$T/out")"
pass "device cgroup: /dev/nvidia5 and /dev/nvidiactl allowed (ENXIO: no driver here), another GPU's node refused (EPERM)"

grep -q "^[0-9]*:devices:/$CG\$" "$T/out" || fail "the container is not in the devices cgroup /$CG"
left=$(ls -d /sys/fs/cgroup/*/"$CG" /sys/fs/cgroup/"$CG" 2>/dev/null || true)
[ -z "$left" ] || fail "runc left its cgroup behind: $left"
[ -z "$("$RUNC" --root "$T/runc" list -q)" ] || fail "runc still lists the container"
pass "the container ran in cgroup /$CG; runc removed the container and that cgroup in every hierarchy"
