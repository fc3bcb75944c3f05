#!/usr/bin/env python3
"""tests/scheduler/agree.py - one scenario run live, compared with `gpufleet replay --as-listed`.

  agree.py STATE_DIR APISERVER JOBS.csv REPLAY.csv [options]
    STATE_DIR   the control plane's state directory (pki/ca.crt, pki/admin.{crt,key})
    APISERVER   https://127.0.0.1:PORT
    JOBS.csv    the scenario: gpufleet replay's timed pod list, one job a row
                (name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time,deletion_time,pods):
                arrival creation_time, run time deletion_time - creation_time, a gang of `pods`
    REPLAY.csv  `gpufleet replay --as-listed --jobs-csv` of the same scenario (one queue
                policy, one seed)
    --namespace NS (default agree), --scheduler-name N (gpufleet), --scale S (wall seconds
    per scenario second, 1), --tolerance T (scenario seconds a live start may differ from
    the replay's, 1), --out FILE (the live table as CSV, in REPLAY.csv's layout)

The live run: at t0 + arrival x scale it creates the job's pods (a gang: a coscheduling
PodGroup with minMember = pods, created before t0, and its member pods labelled
scheduling.x-k8s.io/pod-group), each asking num_gpu whole GPUs, cpu_milli and memory_mib,
with spec.activeDeadlineSeconds = the run time in wall seconds, rounded up (the scheduler's
estimate, as the replay's exact one). It polls the namespace's pods (every 50 ms); a pod's bind time is its
gpufleet.io/assigned-at annotation (written by the scheduler with the binding), a job's
start is the bind time of its last member, and at start + run x scale the harness deletes
its pods (grace period 0, one DELETE of the collection by the job's label, so a gang's pods
go within milliseconds of each other), as the replay ends the job run time after its start.

Then it prints both tables and, per job: the replay's start and nodes, the live ones, the
difference in start (scenario seconds), and whether the node sets (sorted, a multiset:
one node per pod) are equal. Exit status 1 on any disagreement: a job started on one side
only, different nodes, or a start further apart than the tolerance.
"""
import argparse
import csv
import datetime
import http.client
import json
import math
import ssl
import sys
import time
import urllib.parse


def parse_args():
    a = argparse.ArgumentParser()
    a.add_argument("state")
    a.add_argument("server")
    a.add_argument("jobs")
    a.add_argument("replay")
    a.add_argument("--namespace", default="agree")
    a.add_argument("--scheduler-name", default="gpufleet")
    a.add_argument("--scale", type=float, default=1.0)
    a.add_argument("--tolerance", type=float, default=1.0)
    a.add_argument("--out")
    return a.parse_args()


class Api:
    def __init__(self, state, server):
        ctx = ssl.create_default_context(cafile=state + "/pki/ca.crt")
        ctx.load_cert_chain(state + "/pki/admin.crt", state + "/pki/admin.key")
        u = urllib.parse.urlparse(server)
        self.c = http.client.HTTPSConnection(u.hostname, u.port, context=ctx, timeout=30)

    def call(self, method, path, body=None, ok=(200, 201, 202)):
        data = json.dumps(body).encode() if body is not None else None
        hdr = {"Content-Type": "application/json"} if data else {}
        self.c.request(method, path, body=data, headers=hdr)
        r = self.c.getresponse()
        raw = r.read()
        if r.status not in ok:
            sys.exit("agree: %s %s: HTTP %d: %s" % (method, path, r.status, raw[:300].decode(errors="replace")))
        return json.loads(raw) if raw else None


def read_jobs(path):
    jobs = []
    with open(path) as f:
        for row in csv.DictReader(f):
            jobs.append({"name": row["name"], "cpu": int(row["cpu_milli"]), "mem": int(row["memory_mib"]),
                         "gpus": int(row["num_gpu"]), "arrival": int(row["creation_time"]),
                         "run": int(row["deletion_time"]) - int(row["creation_time"]),
                         "pods": int(row.get("pods") or 1)})
    return jobs


def read_replay(path):
    out = {}
    with open(path) as f:
        for row in csv.DictReader(f):
            start = int(row["start_s"])
            out[row["job"]] = {"start": start if start >= 0 else None,
                               "nodes": sorted(row["nodes"].split(";")) if row["nodes"] else []}
    return out


def pod_body(ns, sched, job, k, scale):
    md = {"name": "%s-%d" % (job["name"], k), "namespace": ns, "labels": {"agree-job": job["name"]}}
    if job["pods"] > 1:
        md["labels"]["scheduling.x-k8s.io/pod-group"] = job["name"]
    res = {"requests": {"cpu": "%dm" % job["cpu"], "memory": "%dMi" % job["mem"]}}
    if job["gpus"]:
        res["limits"] = {"nvidia.com/gpu": str(job["gpus"])}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md,
            "spec": {"schedulerName": sched, "terminationGracePeriodSeconds": 0,
                     "activeDeadlineSeconds": max(1, math.ceil(job["run"] * scale)),
                     "containers": [{"name": "c", "image": "registry.invalid/x:1", "resources": res}]}}


def bind_time(pod):
    at = (pod["metadata"].get("annotations") or {}).get("gpufleet.io/assigned-at")
    if not at:
        return None
    return datetime.datetime.strptime(at, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=datetime.timezone.utc).timestamp()


def main():
    o = parse_args()
    jobs = read_jobs(o.jobs)
    replay = read_replay(o.replay)
    api = Api(o.state, o.server)
    ns = o.namespace
    for j in jobs:
        if j["pods"] > 1:
            api.call("POST", "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/%s/podgroups" % ns,
                     {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
                      "metadata": {"name": j["name"], "namespace": ns}, "spec": {"minMember": j["pods"]}})
    by_name = {j["name"]: j for j in jobs}
    pending = sorted(jobs, key=lambda j: j["arrival"])  # stable: file order within a second
    live = {j["name"]: {"start": None, "nodes": [], "created": None, "deleted": False} for j in jobs}
    last_end = max((r["start"] or 0) + by_name[n]["run"] for n, r in replay.items() if n in by_name)
    t0 = time.time() + 1.0
    deadline = t0 + (last_end + 60) * o.scale
    dels = []  # (wall time, job name)
    list_path = "/api/v1/namespaces/%s/pods" % ns
    while True:
        now = time.time()
        while pending and now >= t0 + pending[0]["arrival"] * o.scale:
            j = pending.pop(0)
            live[j["name"]]["created"] = time.time()
            for k in range(j["pods"]):
                api.call("POST", list_path, pod_body(ns, o.scheduler_name, j, k, o.scale))
        for w, name in [d for d in dels if d[0] <= time.time()]:
            dels.remove((w, name))
            # one request for all of a job's pods (a gang ends at once in the replay)
            api.call("DELETE", "%s?labelSelector=agree-job%%3D%s" % (list_path, name), {"gracePeriodSeconds": 0})
            live[name]["deleted"] = True
        pods = api.call("GET", list_path)["items"]
        bound = {}
        for p in pods:
            name = p["metadata"].get("labels", {}).get("agree-job")
            if name in live and p["spec"].get("nodeName") and bind_time(p) is not None:
                bound.setdefault(name, []).append((bind_time(p), p["spec"]["nodeName"]))
        for name, b in bound.items():
            lj = live[name]
            if lj["start"] is None and len(b) == by_name[name]["pods"]:
                lj["start"] = max(t for t, _ in b)
                lj["nodes"] = sorted(n for _, n in b)
                dels.append((lj["start"] + by_name[name]["run"] * o.scale, name))
        if not pending and all(lj["deleted"] for lj in live.values()):
            break
        if time.time() > deadline:
            print("agree: deadline passed (%.0f s of scenario): %d jobs never started live" %
                  (last_end + 60, sum(1 for lj in live.values() if lj["start"] is None)))
            break
        time.sleep(0.05)

    def row(name, start, nodes, arrival):
        j = by_name[name]
        if start is None:
            return "%-6s %4d %8d %8s %8s %6s  %s" % (name, j["pods"], arrival, "-", "-", "-", "never started")
        return "%-6s %4d %8d %8.2f %8.2f %6.2f  %s" % (name, j["pods"], arrival, start, start + j["run"],
                                                       start - arrival, ",".join(nodes))

    hdr = "%-6s %4s %8s %8s %8s %6s  %s" % ("job", "pods", "arrival", "start", "end", "wait", "nodes (sorted)")
    print("agree: replay (gpufleet replay --as-listed), scenario units")
    print(hdr)
    for j in jobs:
        r = replay.get(j["name"], {"start": None, "nodes": []})
        print(row(j["name"], r["start"], r["nodes"], j["arrival"]))
    print("agree: live (gpufleet schedule on the control plane; start = last member's "
          "gpufleet.io/assigned-at - t0, / scale %g)" % o.scale)
    print(hdr)
    lstart = {}
    for j in jobs:
        s = live[j["name"]]["start"]
        lstart[j["name"]] = None if s is None else (s - t0) / o.scale
        print(row(j["name"], lstart[j["name"]], live[j["name"]]["nodes"], j["arrival"]))
    if o.out:
        with open(o.out, "w") as f:
            f.write("job,pods,arrival_s,start_s,nodes\n")
            for j in jobs:
                s = lstart[j["name"]]
                f.write("%s,%d,%d,%s,%s\n" % (j["name"], j["pods"], j["arrival"],
                                             "-1" if s is None else "%.3f" % s, ";".join(live[j["name"]]["nodes"])))
    bad, worst, gangs_same = [], 0.0, 0
    for j in jobs:
        n = j["name"]
        r, ls, ln = replay.get(n, {"start": None, "nodes": []}), lstart[n], live[n]["nodes"]
        if (r["start"] is None) != (ls is None):
            bad.append("%s: started %s in the replay, %s live" % (n, "yes" if r["start"] is not None else "no",
                                                               "yes" if ls is not None else "no"))
            continue
        if ls is None:
            continue
        d = ls - r["start"]
        worst = max(worst, abs(d))
        if abs(d) > o.tolerance:
            bad.append("%s: start %d in the replay, %.2f live (%+.2f units, tolerance %g)" % (n, r["start"], ls, d,
                                                                                       o.tolerance))
        if r["nodes"] != ln:
            bad.append("%s: nodes %s in the replay, %s live" % (n, ",".join(r["nodes"]), ",".join(ln)))
        elif j["pods"] > 1:
            gangs_same += 1
    ngangs = sum(1 for j in jobs if j["pods"] > 1)
    print("agree: %d jobs (%d gangs): %d gangs on the same node sets; largest start difference %.2f units "
          "(tolerance %g); %d disagreements" % (len(jobs), ngangs, gangs_same, worst, o.tolerance, len(bad)))
    for b in bad:
        print("agree: DIFFERENCE " + b)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
