# tests/k8s/lib.sh - shared by the control-plane scripts in tests/k8s (sourced).
# Versions, the binary cache and the Go toolchain used to build the components.

GF_K8S_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# The released versions built (they must match go.mod and kwok/go.mod).
GF_K8S_VERSION=v1.36.3
GF_ETCD_VERSION=v3.6.8
GF_KWOK_VERSION=v0.8.0
# Oldest Go that builds them (the `go` line of go.mod).
GF_GO_MIN=1.26.0

# Go's own caches (GOCACHE, GOMODCACHE) default under $HOME: make sure it is set.
if [ -z "${HOME:-}" ]; then
	HOME=$(getent passwd "$(id -u)" | cut -d: -f6)
	export HOME
fi

# Binaries are built once per machine into this cache, outside the repo.
GF_K8S_CACHE=${GPUFLEET_K8S_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gpufleet/k8s}
GF_K8S_BIN=$GF_K8S_CACHE/$GF_K8S_VERSION/bin
GF_K8S_STAGES=$GF_K8S_CACHE/$GF_K8S_VERSION/kwok-stages
# A Go toolchain that tests/k8s/ensure-go fetched from the Go module proxy.
GF_GO_FETCHED=$GF_K8S_CACHE/go$GF_GO_MIN

gf_log() { echo "k8s: $*" >&2; }

# gf_slot: the control-plane slot ctest gave this test (RESOURCE_GROUPS k8s:1
# with a resource spec file, as `make test` runs it: tests/k8s/slots), else
# empty. ctest hands it over as CTEST_RESOURCE_GROUP_0_K8S=id:N,slots:1.
gf_slot() {
	local g=${CTEST_RESOURCE_GROUP_0_K8S:-} id
	id=${g#id:}
	id=${id%%,*}
	case $id in '' | *[!0-9]*) return 0 ;; esac
	echo "$id"
}

# gf_free_port: sets GF_PORT to a loopback TCP port nothing listens on, below
# the kernel's ephemeral range (so no port-0 listener can take it meanwhile).
# Call it in the shell itself (not in $(...)), so it remembers what it gave.
# Slot N (gf_slot) draws from 20000+1000*(N mod 12) .. +999 only, so control
# planes of different slots, running at the same time, never pick the same
# port; without a slot, from 20000..31999. A port already given to this shell
# (GF_PORTS_TAKEN) is not given again.
GF_PORTS_TAKEN=" "
gf_free_port() {
	local p i slot lo=20000 span=12000
	slot=$(gf_slot)
	if [ -n "$slot" ]; then
		lo=$((20000 + 1000 * (slot % 12)))
		span=1000
	fi
	for i in $(seq 1 200); do
		p=$((lo + RANDOM % span))
		case $GF_PORTS_TAKEN in *" $p "*) continue ;; esac
		if [ -z "$(ss -Htan "( sport = :$p )" 2>/dev/null)" ]; then
			GF_PORTS_TAKEN+="$p "
			GF_PORT=$p
			return 0
		fi
	done
	return 1
}
gf_die() { echo "k8s: error: $*" >&2; exit 1; }

# gf_version_ge A B: true when Go version A (1.26.0, 1.22rc1, ...) >= B.
gf_version_ge() {
	local a=${1%%[a-z]*} b=${2%%[a-z]*}
	[ "$(printf '%s\n%s\n' "$b" "$a" | sort -V | head -n1)" = "$b" ]
}

# gf_go_version GO: prints the version of the Go toolchain GO would run
# (without the "go" prefix), honouring GOTOOLCHAIN.
gf_go_version() {
	local v
	v=$("$1" env GOVERSION 2>/dev/null) || return 1
	v=${v#go}
	echo "${v%% *}"
}

# gf_find_go: sets GF_GO to a go command new enough for GF_GO_MIN and exports
# GOTOOLCHAIN when the toolchain must come from the Go module proxy.
# Order: $GO, /usr/local/go/bin/go, go on PATH, Debian's /usr/lib/go-1.*/bin/go,
# the toolchain ensure-go fetched into the cache.
# A Go >= 1.21 that is too old switches itself to go$GF_GO_MIN, downloaded as a
# module (golang.org/toolchain) through GOPROXY.
gf_find_go() {
	local cands=() c v
	[ -n "${GO:-}" ] && cands+=("$GO")
	cands+=(/usr/local/go/bin/go)
	c=$(command -v go 2>/dev/null) && cands+=("$c")
	for c in /usr/lib/go-1.*/bin/go "$GF_GO_FETCHED/bin/go"; do [ -x "$c" ] && cands+=("$c"); done
	GF_GO=
	local fallback=
	for c in "${cands[@]}"; do
		[ -x "$c" ] || continue
		v=$(GOTOOLCHAIN=local gf_go_version "$c") || continue
		if gf_version_ge "$v" "$GF_GO_MIN"; then
			GF_GO=$c
			export GOTOOLCHAIN=local
			return 0
		fi
		if [ -z "$fallback" ] && gf_version_ge "$v" 1.21; then fallback=$c; fi
	done
	if [ -n "$fallback" ]; then
		export GOTOOLCHAIN=go$GF_GO_MIN
		if v=$(gf_go_version "$fallback") && gf_version_ge "$v" "$GF_GO_MIN"; then
			GF_GO=$fallback
			return 0
		fi
		unset GOTOOLCHAIN
	fi
	return 1
}

gf_go_help() {
	cat >&2 <<MSG
k8s: no Go >= $GF_GO_MIN found (tried \$GO, /usr/local/go/bin/go, go on PATH,
k8s: /usr/lib/go-1.*/bin/go, $GF_GO_FETCHED). The Kubernetes control-plane tests build
k8s.io/kubernetes $GF_K8S_VERSION from source and need it. Either
k8s:   - put Go >= $GF_GO_MIN at /usr/local/go or on PATH, or point GO=/path/to/go at it;
k8s:   - or install a Debian Go >= 1.21 (e.g. golang-1.21/1.22 from bookworm-backports)
k8s:     and let it fetch go$GF_GO_MIN from the Go module proxy (GOTOOLCHAIN);
k8s:   - or run tests/k8s/ensure-go with any Go (Debian's golang-go): it fetches
k8s:     go$GF_GO_MIN as the module golang.org/toolchain from the Go module proxy.
MSG
}
