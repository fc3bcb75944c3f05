#!/bin/bash
# bench/http-hostile.sh - the shared HTTP server (src/http/server.c) under
# hostile clients, measured on the real `gpufleet schedule` (the server with
# the largest bodies: 64 MiB, and 256 connections).  Not a test: it prints
# figures.  Run it on two binaries (e.g. before and after a change) to compare.
#
#   bench/http-hostile.sh [GPUFLEET]        (default build/gpufleet)
#
# The scheduler is pointed at an API server that is not there (it serves
# HTTP anyway; /healthz then answers 503 "no LIST yet", which is an answer:
# what is measured is whether and when it answers).  Three runs, each on a
# fresh scheduler:
#   uploads: 20 clients each send 60 MiB of a 64 MiB filter body and hold
#            it unfinished: the server's peak resident memory (VmHWM);
#   trickle: 300 connections from 10 client addresses (127.0.0.2-11), one
#            header byte a second each: how long /healthz takes;
#   one-ip:  the same 300 from one address.
# Needs python3.  Uses 127.0.0.0/8 source addresses (Linux: all loopback).
set -eu
GPUFLEET=${1:-build/gpufleet}
T=$(mktemp -d /tmp/gf-http-hostile-XXXXXX)
P=""
cleanup() { [ -n "$P" ] && kill "$P" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT

cat > "$T/kc.yaml" <<'EOF'
apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: https://127.0.0.1:9
    insecure-skip-tls-verify: true
users:
- name: u
  user:
    token: x
contexts:
- name: c
  context:
    cluster: c
    user: u
current-context: c
EOF

cat > "$T/load.py" <<'EOF'
import socket, sys, threading, time, urllib.request
mode, port, pid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def healthz():
    t = time.time()
    try:
        code = urllib.request.urlopen("http://127.0.0.1:%d/healthz" % port, timeout=25).status
    except urllib.error.HTTPError as e:
        code = e.code
    except Exception as e:
        code = "no answer (%s)" % e
    return code, time.time() - t
def hwm():
    for l in open("/proc/%d/status" % pid):
        if l.startswith("VmHWM"):
            return int(l.split()[1]) // 1024
if mode == "uploads":
    n, mib = 20, 60
    def up():
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(b"POST /gpusched/filter HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Content-Length: %d\r\n\r\n" % (64 * 1024 * 1024 - 1))
        try:
            for _ in range(mib):
                s.sendall(b"x" * (1 << 20))
        except OSError:
            pass
        held.append(s)
    held = []
    th = [threading.Thread(target=up) for _ in range(n)]
    [t.start() for t in th]; [t.join() for t in th]
    time.sleep(1)
    code, secs = healthz()
    print("uploads: %d clients x %d MiB held: server peak RSS %d MiB; /healthz %s after %.2f s"
          % (n, mib, hwm(), code, secs))
else:
    nips, per = (10, 30) if mode == "trickle" else (1, 300)
    socks = []
    for i in range(nips):
        for _ in range(per):
            s = socket.socket(); s.bind(("127.0.0.%d" % (i + 2), 0))
            try:
                s.connect(("127.0.0.1", port)); socks.append(s)
            except OSError:
                pass
    line = b"GET /healthz HTTP/1.1\r\nX-Slow: "
    stop = False
    def trickle():
        k = 0
        while not stop:
            for s in socks:
                try: s.send(line[k:k + 1] if k < len(line) else b"a")
                except OSError: pass
            k += 1; time.sleep(1)
    threading.Thread(target=trickle, daemon=True).start()
    time.sleep(2)
    code, secs = healthz()
    stop = True
    print("%s: %d connections from %d address(es), a byte a second each: /healthz %s after %.1f s"
          % (mode, len(socks), nips, code, secs))
EOF

for mode in uploads trickle one-ip; do
	port=$((20000 + RANDOM % 20000))
	"$GPUFLEET" schedule --kubeconfig "$T/kc.yaml" -a "127.0.0.1:$port" >"$T/sched.log" 2>&1 &
	P=$!
	for _ in $(seq 50); do grep -q "serving" "$T/sched.log" && break; sleep 0.1; done
	python3 "$T/load.py" "$mode" "$port" "$P"
	kill "$P"; wait "$P" 2>/dev/null || true
	P=""
done
