# tests/deploy/lib.sh - shared by the image and chart tests (sourced).
# Provides: $SRC, $T (temp dir, removed on exit with every container and
# image this test made), fail, pass, build_test_image, prun (podman run).
set -euo pipefail
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
T=$(mktemp -d /tmp/gf-deploy-XXXXXX)
chmod 755 "$T"   # the image's user (65532) reads what the tests mount from here
IMAGE=localhost/gpufleet-test:deploy-$$
CONTAINERS=()
CLEANUPS=()
cleanup() {
	local c
	for c in "${CLEANUPS[@]}"; do eval "$c" || true; done
	for c in "${CONTAINERS[@]}"; do podman rm -f "$c" >/dev/null 2>&1 || true; done
	podman rmi -f "$IMAGE" >/dev/null 2>&1 || true
	rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok: $*"; }

for tool in podman buildah runc curl; do
	command -v $tool >/dev/null || fail "$tool not found (scripts/bootstrap test installs buildah, podman and runc)"
done
[ "$(id -u)" = 0 ] || fail "the image tests run podman as root (CI runs as root); run as root or skip label deploy"

# build_test_image BINARY: scripts/build-image into $IMAGE; sets IMAGE_SECONDS.
build_test_image() {
	local t0 t1
	t0=$(date +%s.%N)
	"$SRC/scripts/build-image" --binary "$1" --tag "$IMAGE" >"$T/build-image.out" 2>"$T/build-image.err" ||
		fail "scripts/build-image: $(cat "$T/build-image.err")"
	t1=$(date +%s.%N)
	IMAGE_SECONDS=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
}

# prun ARGS...: podman run with what works on a plain root machine without
# systemd: runc (crun refuses the hybrid cgroup v1/v2 layout such machines
# have), cgroupfs, the host network (no CNI/netavark setup needed), and
# resource limits at or below the caller's (podman's defaults exceed the hard
# limits of a container-in-VM, and raising them needs CAP_SYS_RESOURCE); and
# a read-only root filesystem with no tmpfs anywhere, as the chart runs it
# (readOnlyRootFilesystem), so every run checks gpufleet writes no file there.
prun() {
	podman --runtime runc --cgroup-manager cgroupfs run --network host --read-only --read-only-tmpfs=false \
		--ulimit "nofile=$(ulimit -Sn):$(ulimit -Sn)" --ulimit "nproc=1024:1024" "$@"
}
