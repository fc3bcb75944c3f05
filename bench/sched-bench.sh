#!/usr/bin/env bash
# bench/sched-bench.sh - pods scheduled per second: gpufleet schedule vs the real kube-scheduler.
#
#   bench/sched-bench.sh GPUFLEET BENCH_EXTENDER [NODES...]     (default: 1000 5000)
#   env: PODS (default 1000) pods per scheduler and size; ROUNDS (1000) extender rounds;
#        GF_SCHED_ARGS extra options for gpufleet schedule (e.g. "--binders 32");
#        GF_POLICIES the --queue-policy values gpufleet runs with, each in turn
#        (default "kube backfill": the default loop and the gang-aware one); an entry
#        QP:POLICY also names the placement policy (e.g. "backfill:fgd-fill kube:fgd");
#        GF_POLICY the placement policy of entries without one (default fgd, gpufleet's);
#        KS_PERCENTAGE percentageOfNodesToScore for kube-scheduler (default: its adaptive one);
#        NO_EXTENDER=1 skips the extender round trips at the largest size.
#
# For each cluster size: a fresh control plane (tests/k8s/cluster-up --no-kwok,
# nodes kept Ready by a 1 h node-monitor grace period, no TTL controller),
# NODES fake nodes with 8 GPUs each, then for each scheduler in turn PODS pods
# asking one whole GPU (tolerating every taint: without kwok the nodes are
# NotReady-tainted) are created first, under a schedulerName nobody serves yet;
# then the scheduler is started and a poller (50 Hz, fieldSelector, Table rows
# without objects) times the window from the first bound pod to the last.  Same API server, same run:
#   - kube-scheduler: a second kube-scheduler process, default plugins and its
#     default percentageOfNodesToScore (adaptive), client QPS/burst raised to
#     5000 so its client rate limiter is not the bottleneck;
#   - gpufleet schedule: placement policy GF_POLICY (default FGD) or the entry's,
#     scores every feasible node, once per GF_POLICIES entry (--queue-policy
#     [--policy]; its own schedulerName, fresh pods),
#     each process's resident memory (VmHWM, VmRSS from /proc) and CPU seconds read after its
#     last pod is bound (the live count then: NODES nodes and the pods created
#     so far in the run, all bound).
# Every figure is printed with the 1-minute load average read right after it
# (the machine is shared: a busy neighbour shows there).
# At the largest size it then runs BENCH_EXTENDER against gpufleet's extender
# (filter+prioritize with all node names, and with the sample of names
# kube-scheduler sends by default at that size; p50/p99).  Prints one table.
set -euo pipefail
gf=${1:?usage: sched-bench.sh GPUFLEET BENCH_EXTENDER [NODES...]}
bx=${2:?usage: sched-bench.sh GPUFLEET BENCH_EXTENDER [NODES...]}
shift 2
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1000 5000)
pods=${PODS:-1000}
rounds=${ROUNDS:-1000}
here=$(cd "$(dirname "$0")" && pwd)
k8s=$(cd "$here/../tests/k8s" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/gpufleet-bench.XXXXXX")
state=
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	[ -n "$state" ] && "$k8s/cluster-down" "$state" >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
log() { echo "bench: $*" >&2; }
freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

mkpods() { # mkpods SCHEDULER_NAME N > list.json
	python3 - "$1" "$2" <<'PY'
import json, sys
name, n = sys.argv[1], int(sys.argv[2])
items = [{"apiVersion": "v1", "kind": "Pod",
          "metadata": {"name": "%s-%05d" % (name, i)},
          "spec": {"schedulerName": name, "tolerations": [{"operator": "Exists"}],
                   "containers": [{"name": "c", "image": "registry.invalid/x:1",
                                   "resources": {"requests": {"cpu": "100m", "memory": "64Mi"},
                                                 "limits": {"nvidia.com/gpu": "1"}}}]}}
         for i in range(n)]
json.dump({"apiVersion": "v1", "kind": "List", "items": items}, sys.stdout)
PY
}

# poll SCHEDULER_NAME N: waits until N pods of that scheduler are bound; prints
# "SECONDS RATE" for the window first bound -> last bound.
poll() {
	python3 - "$state" "$GPUFLEET_K8S_APISERVER" "$1" "$2" <<'PY'
import http.client, json, ssl, sys, time, urllib.parse
state, server, name, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
ctx = ssl.create_default_context(cafile=state + "/pki/ca.crt")
ctx.load_cert_chain(state + "/pki/admin.crt", state + "/pki/admin.key")
host = urllib.parse.urlparse(server)
c = http.client.HTTPSConnection(host.hostname, host.port, context=ctx)
# remainingItemCount is not given with selectors: ask for a Table without objects
# (one small row per bound pod).
q = "/api/v1/namespaces/default/pods?includeObject=None&fieldSelector=" + urllib.parse.quote(
    "spec.schedulerName=%s,spec.nodeName!=" % name)
hdr = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}
first = None
deadline = time.time() + 900
while True:
    c.request("GET", q, headers=hdr)
    d = json.loads(c.getresponse().read())
    got = len(d.get("rows") or [])
    t = time.monotonic()
    if got and first is None:
        first = (t, got)
    if got >= n:
        dt = t - first[0]
        print("%.3f %.1f" % (dt, (n - first[1]) / dt if dt > 0 else float("inf")))
        break
    if time.time() > deadline:
        sys.exit("poll: only %d of %d bound" % (got, n))
    time.sleep(0.02)
PY
}

read -r -a policies <<<"${GF_POLICIES:-kube backfill}"
loadavg() { cut -d' ' -f1 /proc/loadavg; }
# cpus PID: the process's CPU seconds so far (user + system, from its start:
# its informers' initial lists included), a figure the machine's load does not scale
cpus() { awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%.2f", ($12 + $13) / hz }' "/proc/$1/stat"; }
# memkib PID: "VmHWM VmRSS" in KiB
memkib() { awk '/^VmHWM/ { h = $2 } /^VmRSS/ { r = $2 } END { print h + 0, r + 0 }' "/proc/$1/status"; }
rows=()
for n in "${sizes[@]}"; do
	state=$work/k8s-$n
	mkdir -p "$state"
	t0=$(date +%s)
	# Keep the control plane from rewriting every node during the bench: without
	# kwok nothing renews the nodes' leases (the node controller would mark them
	# NotReady after 40 s), and the TTL controller re-annotates every node as
	# the cluster grows past its size steps (at kube-controller-manager's 20
	# writes a second, minutes of updates at 5,000 nodes).
	KUBECONFIG=$(GPUFLEET_K8S_KCM_ARGS="--node-monitor-grace-period=1h --controllers=-ttl ${GPUFLEET_K8S_KCM_ARGS:-}" \
		"$k8s/cluster-up" --no-kwok --state-dir "$state" --owner-pid $$ 2>"$work/up.log" | tail -n1)
	export KUBECONFIG
	. "$state/env"
	k() { "$GPUFLEET_K8S_KUBECTL" "$@"; }
	python3 - "$n" >"$work/nodes.json" <<'PY'
import json, sys
n = int(sys.argv[1])
q = {"cpu": "96", "memory": "1024Gi", "pods": "110", "nvidia.com/gpu": "8"}
items = [{"apiVersion": "v1", "kind": "Node",
          "metadata": {"name": "gpu-node-%d" % i,
                       "labels": {"kubernetes.io/hostname": "gpu-node-%d" % i, "kubernetes.io/os": "linux",
                                  "nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
                                  "nvidia.com/gpu.memory": "81559", "nvidia.com/gpu.count": "8"}},
          "status": {"allocatable": q, "capacity": q}} for i in range(n)]
json.dump({"apiVersion": "v1", "kind": "List", "items": items}, sys.stdout)
PY
	k create -f "$work/nodes.json" >/dev/null
	log "$n nodes registered in $(($(date +%s) - t0))s"

	# kube-scheduler
	mkpods ks-bench "$pods" >"$work/pods-ks.json"
	k create -f "$work/pods-ks.json" >/dev/null
	sp=$(freeport)
	cat >"$work/ks.yaml" <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: $KUBECONFIG
  qps: 5000
  burst: 5000
leaderElection:
  leaderElect: false
profiles:
- schedulerName: ks-bench
YAML
	[ -n "${KS_PERCENTAGE:-}" ] && echo "percentageOfNodesToScore: $KS_PERCENTAGE" >>"$work/ks.yaml"
	"$GPUFLEET_K8S_BIN/kube-scheduler" --config "$work/ks.yaml" --bind-address 127.0.0.1 --secure-port "$sp" \
		--authentication-kubeconfig "$KUBECONFIG" --authorization-kubeconfig "$KUBECONFIG" >"$work/ks.log" 2>&1 &
	kpid=$!
	pids+=($kpid)
	read -r ks_s ks_rate < <(poll ks-bench "$pods")
	ks_load=$(loadavg)
	read -r ks_hwm ks_rss < <(memkib "$kpid")
	ks_cpu=$(cpus "$kpid")
	kill "$kpid"
	log "$n nodes: kube-scheduler bound $pods pods in ${ks_s}s ($ks_rate pods/s, load $ks_load, VmHWM ${ks_hwm} KiB, ${ks_cpu} s CPU)"
	rows+=("$(printf '%-6s %-28s %-9s %-8s %-6s %-9s %-9s %-7s %s' "$n" kube-scheduler "$ks_rate" "-" "$ks_load" \
		"$((ks_hwm / 1024))" "$((ks_rss / 1024))" "$ks_cpu" "-")")

	# gpufleet, once per queue policy (a process each, its own pods)
	gpid=
	for entry in "${policies[@]}"; do
		[ -n "$gpid" ] && { kill "$gpid"; wait "$gpid" 2>/dev/null || true; }
		qp=${entry%%:*} pl=${GF_POLICY:-fgd}
		[ "$entry" != "$qp" ] && pl=${entry#*:}
		sn=gf-$qp-$pl
		mkpods "$sn" "$pods" >"$work/pods-gf.json"
		k create -f "$work/pods-gf.json" >/dev/null
		gp=$(freeport) ge=$(freeport) # /metrics; the extender's own listener
		"$gf" schedule --kubeconfig "$KUBECONFIG" --scheduler-name "$sn" --address "127.0.0.1:$gp" \
			--extender-address "127.0.0.1:$ge" --queue-policy "$qp" --policy "$pl" ${GF_SCHED_ARGS:-} >"$work/$sn.log" 2>&1 &
		gpid=$!
		pids+=($gpid)
		read -r gf_s gf_rate < <(poll "$sn" "$pods")
		gf_load=$(loadavg)
		read -r gf_hwm gf_rss < <(memkib "$gpid")
		gf_cpu=$(cpus "$gpid")
		ratio=$(python3 -c "print('%.2f' % ($gf_rate / $ks_rate))")
		cpur=$(python3 -c "print('%.2f' % ($gf_cpu / $ks_cpu) if $ks_cpu > 0 else '-')")
		log "$n nodes: gpufleet --queue-policy $qp --policy $pl bound $pods pods in ${gf_s}s ($gf_rate pods/s, ratio $ratio, load $gf_load, VmHWM ${gf_hwm} KiB, ${gf_cpu} s CPU, $cpur of kube-scheduler's)"
		rows+=("$(printf '%-6s %-28s %-9s %-8s %-6s %-9s %-9s %-7s %s' "$n" "gpufleet $qp $pl" "$gf_rate" "$ratio" "$gf_load" \
			"$((gf_hwm / 1024))" "$((gf_rss / 1024))" "$gf_cpu" "$cpur")")
	done
	if [ "$n" = "${sizes[-1]}" ] && [ -z "${NO_EXTENDER:-}" ]; then
		# Every node's name (the worst case), and the sample kube-scheduler sends by
		# default at this size: it stops filtering after max(100, pct% of nodes)
		# feasible nodes, pct = max(5, 50 - nodes/125).
		sample=$(python3 -c "n=$n; print(max(100, n * max(5, 50 - n // 125) // 100))")
		# Measure with the control plane quiet: wait until gpufleet has seen no
		# node update for 5 s (at most 60 s; the nodes are kept Ready above).
		nodeev() { curl -sf "http://127.0.0.1:$gp/metrics" | awk '$1 == "gpufleet_watch_events_total{resource=\"nodes\"}" { print $2 + 0 }'; }
		q0=$(date +%s) last=$(nodeev) still=0
		while [ "$still" -lt 5 ] && [ $(($(date +%s) - q0)) -lt 60 ]; do
			sleep 1
			now=$(nodeev)
			if [ "$now" = "$last" ]; then still=$((still + 1)); else still=0 last=$now; fi
		done
		log "$n nodes: waited $(($(date +%s) - q0))s for the node updates to stop ($last node events seen)"
		engine() { curl -sf "http://127.0.0.1:$gp/metrics" | awk '$1 == "gpufleet_engine_rebuilds_total" { r = $2 } $1 == "gpufleet_engine_score_resets_total" { s = $2 } END { print r + 0, s + 0 }'; }
		read -r rb0 rs0 < <(engine)
		ext=$("$bx" "http://127.0.0.1:$ge/gpusched" "$n" "$rounds")
		log "$ext"
		ext2=$("$bx" "http://127.0.0.1:$ge/gpusched" "$sample" "$rounds")
		log "$ext2"
		read -r rb1 rs1 < <(engine)
		ext="$ext"$'\n'"$ext2"$'\n'"(engine rebuilds during these rounds: $((rb1 - rb0)), score cache resets: $((rs1 - rs0)))"
		# The floor on this machine at this moment: the same HTTP server answering
		# the same answers canned, doing no work (bench_http_floor).
		floor=$(dirname "$bx")/bench_http_floor
		if [ -x "$floor" ]; then
			"$floor" "$n" >"$work/floor.port" &
			pids+=($!)
			until [ -s "$work/floor.port" ]; do sleep 0.1; done
			ext3=$("$bx" "http://127.0.0.1:$(cat "$work/floor.port")/gpusched" "$n" "$rounds")
			log "floor: $ext3"
			ext="$ext"$'\n'"floor (same HTTP server, the same answers canned, no work): $ext3"
		fi
	fi
	kill "$gpid"
	"$k8s/cluster-down" "$state" >/dev/null 2>&1 || true
	state=
done

echo
echo "gpufleet schedule vs kube-scheduler: $pods pods (1 whole GPU each) per scheduler bound per second, same API server, same run"
echo "(kube-scheduler percentageOfNodesToScore: ${KS_PERCENTAGE:-adaptive default}; gpufleet: queue policy and placement policy"
echo " named in the row, scores every feasible node; ratio = gpufleet / kube-scheduler pods/s of the same size;"
echo " load = 1-min load average after the figure; MiB = VmHWM VmRSS; CPU s = the scheduler process's CPU seconds"
echo " from its start to its last pod bound; CPU ratio = gpufleet's CPU s / kube-scheduler's, same size)"
printf '%-6s %-28s %-9s %-8s %-6s %-9s %-9s %-7s %s\n' nodes scheduler "pods/s" ratio load "HWM MiB" "RSS MiB" "CPU s" "CPU ratio"
for r in "${rows[@]}"; do echo "$r"; done
if [ -n "${ext:-}" ]; then echo "$ext"; fi
