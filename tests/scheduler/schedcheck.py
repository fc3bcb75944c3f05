#!/usr/bin/env python3
"""tests/scheduler/schedcheck.py - pod mixes and invariant checks for the scheduler tests.

  schedcheck.py pods SEED N START > pods.json     a seeded mix of N GPU pods (names p-START..)
  schedcheck.py topo > topology.json             the node agent's topology document for 8 GPUs
  schedcheck.py verify NODES.json PODS.json EVENTS.json METRICS.txt
      checks, from the API server's objects only:
        - every bound pod of ours carries the assignment annotations, for its own node;
        - GPU indices exist on the node, are distinct, count and milli match the request;
        - no GPU is over-committed (sum of milli <= 1000 per GPU);
        - model constraints and GPU memory requests are honoured;
        - every pod still pending truly fits nowhere (given the bound pods), and has a
          FailedScheduling event or a PodScheduled=False condition;
        - the scheduler's /metrics agrees (allocated milli, bound pods);
        - and there is something to check: nodes with GPUs, pods of ours, at least one
          bound, both metrics present (every invariant holds of an empty cluster, and
          0 milli allocated agrees with 0 bound);
      GF_SCHED_NAMES (default gpufleet): the schedulerNames whose pods are checked;
      prints a summary; exits 1 with the first violations otherwise.
"""
import json
import os
import random
import sys

MODELS = {"NVIDIA-H100-80GB-HBM3": 81559, "NVIDIA-A100-SXM4-40GB": 40960,
          "NVIDIA-L4": 23034, "Tesla-V100-SXM2-32GB": 32768}


def pod(name, ann=None, limits=None, selector=None):
    spec = {"schedulerName": "gpufleet",
            "containers": [{"name": "c", "image": "registry.invalid/x:1",
                            "resources": {"requests": {"cpu": "100m", "memory": "64Mi"},
                                          "limits": dict(limits or {})}}]}
    if selector:
        spec["nodeSelector"] = {"nvidia.com/gpu.product": selector}
    md = {"name": name, "labels": {"app": "gpufleet-test"}}
    if ann:
        md["annotations"] = ann
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec}


def gen_pods(seed, n, start):
    rnd = random.Random(seed)
    items = []
    for i in range(start, start + n):
        r = rnd.random()
        name = "p-%04d" % i
        sel = rnd.choice(list(MODELS)) if rnd.random() < 0.1 else None
        if r < 0.40:
            p = pod(name, {"gpufleet.io/gpu-milli": str(rnd.choice([100, 250, 300, 500, 700]))}, selector=sel)
        elif r < 0.48:
            p = pod(name, {"gpufleet.io/gpu-memory-mib": str(rnd.choice([8000, 16000, 30000]))}, selector=sel)
        elif r < 0.50:
            p = pod(name, limits={"gpufleet.io/gpu-milli": "200", "gpufleet.io/gpu-count": "2"})
        elif r < 0.83:
            p = pod(name, limits={"nvidia.com/gpu": "1"}, selector=sel)
        elif r < 0.93:
            p = pod(name, limits={"nvidia.com/gpu": "2"}, selector=sel)
        elif r < 0.985:
            p = pod(name, limits={"nvidia.com/gpu": "4"})
        else:
            p = pod(name, limits={"nvidia.com/gpu": "8"})
        items.append(p)
    return {"apiVersion": "v1", "kind": "List", "items": items}


def topo_doc():
    gpus = [{"index": g, "uuid": "GPU-%08d-test" % g, "numa_node": g // 4} for g in range(8)]
    links = [[(4 if (a // 4 == b // 4 and a != b) else 0) for b in range(8)] for a in range(8)]
    return {"version": 1, "gpus": gpus, "topology": {"links": links}}


def request(p):
    """(count, milli, mem_mib, model constraint set or None); None for non-GPU pods."""
    ann = p["metadata"].get("annotations") or {}
    lim = {}
    for c in p["spec"].get("containers", []):
        for k, v in ((c.get("resources") or {}).get("limits") or {}).items():
            lim[k] = lim.get(k, 0) + int(v) if k.startswith(("nvidia.com/", "gpufleet.io/")) else v
    milli = int(ann.get("gpufleet.io/gpu-milli", lim.get("gpufleet.io/gpu-milli", 0)))
    mem = int(ann.get("gpufleet.io/gpu-memory-mib", lim.get("gpufleet.io/gpu-memory-mib", 0)))
    count = int(ann.get("gpufleet.io/gpu-count", lim.get("gpufleet.io/gpu-count", 1)))
    models = None
    sel = (p["spec"].get("nodeSelector") or {}).get("nvidia.com/gpu.product")
    if sel:
        models = {sel}
    if "nvidia.com/gpu" in lim:
        return (int(lim["nvidia.com/gpu"]), 1000, 0, models)
    if milli or mem:
        return (count, milli, mem, models)
    return None


def need_milli(req, present_models):
    count, milli, mem, models = req
    if not mem:
        return milli, models
    allowed = {m for m in present_models if present_models[m] >= mem and (models is None or m in models)}
    if not allowed:
        return None, set()
    best = min(present_models[m] for m in allowed)
    need = min(1000, -(-mem * 1000 // best))
    return max(milli, need), allowed


def verify(nodes_f, pods_f, events_f, metrics_f):
    nodes = {n["metadata"]["name"]: n for n in json.load(open(nodes_f))["items"]}
    pods = json.load(open(pods_f))["items"]
    events = json.load(open(events_f))["items"]
    metrics = {}
    for line in open(metrics_f):
        if line and not line.startswith("#") and " " in line:
            k, v = line.rsplit(" ", 1)
            metrics[k] = float(v)
    errors = []
    free = {}
    model_of, gpus_of, cpu_free = {}, {}, {}
    present_models = {}
    for name, n in nodes.items():
        g = int(n["status"]["allocatable"].get("nvidia.com/gpu", "0"))
        gpus_of[name] = g
        free[name] = [1000] * g
        m = n["metadata"]["labels"].get("nvidia.com/gpu.product")
        model_of[name] = m
        mem = int(n["metadata"]["labels"].get("nvidia.com/gpu.memory", "0"))
        if m and mem and (m not in present_models or mem < present_models[m]):
            present_models[m] = mem
    bound = pending = 0
    used = 0
    names = set(os.environ.get("GF_SCHED_NAMES", "gpufleet").split(","))
    ours = [p for p in pods if p["spec"].get("schedulerName") in names]
    for p in ours:
        name = p["metadata"]["name"]
        node = p["spec"].get("nodeName")
        req = request(p)
        if not node or req is None:
            continue
        bound += 1
        ann = p["metadata"].get("annotations") or {}
        if ann.get("gpufleet.io/assigned-node") != node:
            errors.append("%s on %s: assigned-node annotation is %r" % (name, node, ann.get("gpufleet.io/assigned-node")))
            continue
        idx = [int(x) for x in ann.get("gpufleet.io/assigned-gpus", "").split(",") if x != ""]
        milli = int(ann.get("gpufleet.io/assigned-gpu-milli", "0"))
        count, rmilli, mem, models = req
        if len(idx) != count or len(set(idx)) != count:
            errors.append("%s: GPUs %s for a request of %d" % (name, idx, count))
        if rmilli and milli < rmilli:
            errors.append("%s: milli %d < asked %d" % (name, milli, rmilli))
        if mem and milli * (present_models.get(model_of[node], 0)) < mem * 1000:
            errors.append("%s: %d milli of a %s GPU is less than %d MiB" % (name, milli, model_of[node], mem))
        if models and model_of[node] not in models:
            errors.append("%s: on model %s, wants %s" % (name, model_of[node], models))
        uu = ann.get("gpufleet.io/assigned-gpu-uuids")
        if uu is not None and len(uu.split(",")) != count:
            errors.append("%s: %d UUIDs for %d GPUs" % (name, len(uu.split(",")), count))
        for g in idx:
            if g >= gpus_of[node]:
                errors.append("%s: GPU %d does not exist on %s" % (name, g, node))
                continue
            free[node][g] -= milli
            used += milli
    for node, f in free.items():
        for g, v in enumerate(f):
            if v < 0:
                errors.append("over-committed: %s GPU %d at %d milli" % (node, g, 1000 - v))
    failed_uids = {e["involvedObject"].get("uid") for e in events if e.get("reason") == "FailedScheduling"}
    for p in ours:
        if p["spec"].get("nodeName"):
            continue
        req = request(p)
        name = p["metadata"]["name"]
        pending += 1
        conds = [c for c in (p.get("status") or {}).get("conditions") or []
                 if c.get("type") == "PodScheduled" and c.get("status") == "False"]
        if p["metadata"]["uid"] not in failed_uids and not conds:
            errors.append("%s is pending without a FailedScheduling event or condition" % name)
        if req is None:
            continue
        count, milli, mem, models = req
        if count < 1 or count > 16 or (not mem and not (1 <= milli <= 1000)):
            continue  # invalid: must not be bound, and is not
        m2, allowed = need_milli(req, present_models)
        if m2 is None:
            continue
        for node, f in free.items():
            if allowed is not None and model_of[node] not in allowed:
                continue
            if sum(1 for v in f if v >= m2) >= count:
                errors.append("%s is pending but fits %s (%d x %d milli; free %s)" % (name, node, count, m2, f))
                break
    cap = sum(gpus_of.values()) * 1000
    print("verify: %d nodes, %d GPUs, %d pods of ours: %d bound, %d pending; allocated %d/%d milli (%.1f%%)"
          % (len(nodes), cap // 1000, len(ours), bound, pending, used, cap, 100.0 * used / max(cap, 1)))
    if not cap or not ours or not bound:
        errors.append("nothing to check: %d GPUs, %d pods of ours (%s), %d bound"
                      % (cap // 1000, len(ours), ",".join(sorted(names)), bound))
    for m in ("gpufleet_gpu_allocated_milli", "gpufleet_bound_pods"):
        if m not in metrics:
            errors.append("the scheduler's /metrics has no %s to agree with" % m)
    m_used = metrics.get("gpufleet_gpu_allocated_milli")
    if m_used is not None and int(m_used) != used:
        errors.append("the scheduler's gpufleet_gpu_allocated_milli %d != %d from the API server" % (m_used, used))
    m_bound = metrics.get("gpufleet_bound_pods")
    if m_bound is not None and int(m_bound) < bound:
        errors.append("the scheduler's gpufleet_bound_pods %d < %d bound pods of ours" % (m_bound, bound))
    if metrics.get("gpufleet_state_conflicts_total", 0) != 0:
        errors.append("the scheduler counted %d conflicts" % metrics["gpufleet_state_conflicts_total"])
    for e in errors[:30]:
        print("verify: FAIL: " + e, file=sys.stderr)
    if errors:
        print("verify: %d violations" % len(errors), file=sys.stderr)
        return 1
    print("verify: all invariants hold")
    return 0


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "pods":
        json.dump(gen_pods(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])), sys.stdout)
    elif cmd == "topo":
        json.dump(topo_doc(), sys.stdout, separators=(",", ":"))
    elif cmd == "verify":
        sys.exit(verify(*sys.argv[2:6]))
    else:
        sys.exit("unknown command " + cmd)
