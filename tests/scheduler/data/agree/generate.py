#!/usr/bin/env python3
"""tests/scheduler/data/agree/generate.py - how nodes.csv and jobs.csv were made (sched-agree's scenario).

  generate.py GPUFLEET [SEED]   writes nodes.csv and jobs.csv here; with no SEED it tries
                                seeds from 1 and keeps the first scenario that qualifies
  generate.py GPUFLEET --check  says whether jobs.csv as it is qualifies

The shipped jobs.csv is seed 8547 (the first seed that met the rules below before the
last one, "a job behind it waiting then", was added) with one hand edit that meets it: j20
(a single 4-GPU pod) arrives at 86 instead of 84, after the gang j05 ends at 85 (at 84 it
would wait behind the gang j18 for that end). The search found no other seed in the time
there was; `generate.py GPUFLEET --check` passes on the file as shipped.

16 eight-GPU nodes (listed in name order: the order the live scheduler lists them in);
30 jobs: about a third gangs of 2-4 eight-GPU pods, the rest single pods of 1, 2, 4 or 8
GPUs. Times are in scenario units, run live at 0.5 s each (sched-agree's AGREE_SCALE):
arrivals at even units 2-6 apart (1-3 s), run times odd, 11-79 units (5.5-39.5 s), so a
job started on arrival ends at an odd unit, never with an arrival. A scenario qualifies
when, in `gpufleet replay --as-listed` (best-fit, backfill and best-effort-fifo):
  - no two events fall on the same unit (every arrival and every end distinct): the
    live run's ends come a few tens of milliseconds after the replay's (each start does),
    so an end and an arrival (or two ends) in one replay cycle would be ordered by chance
    live, and the order decides placements;
  - backfill gives the same starts and nodes as best-effort-fifo: today the live scheduler
    hands every bound pod back to its own ledger (gf_loop_disown), so its loop cannot plan
    a reservation behind running pods and backfill live has none (docs/scheduler.md); a
    scenario where a reservation changes a decision cannot agree until live keeps bound
    pods as running jobs;
  - no waiting gang starts when a gang ends if it could fit before that gang's last pod is
    gone (whole free nodes, plus the gang's nodes but one, less those the jobs ahead take
    then), nor when a job that arrived after it waits then too: in the replay a gang's
    pods end at once, live
    one by one (the harness deletes them in one request, by label; the API server still
    deletes and announces them one at a time), and the live scheduler runs a cycle in
    between. Measured: a gang of 2 waiting for a gang of 4 took the first node freed and
    another node already free live, two of the four in the replay; a single 8-GPU pod that
    arrived after a waiting gang of 3 took the first node a gang of 3 freed live (under
    backfill the live loop holds no reservation for the waiting gang: it knows no running
    job), where the replay gave the waiting gang all three. (Single pods waiting for a gang
    in arrival order agreed in every run: each takes a node as it is freed.)
  - at least 4 jobs wait, one of them a gang (the queue does something).
"""
import os
import random
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))


def write(seed):
    r = random.Random(seed)
    names = sorted("gpu-node-%d" % i for i in range(16))
    with open(os.path.join(here, "nodes.csv"), "w") as f:
        f.write("sn,cpu_milli,memory_mib,gpu,model\n")
        for s in names:
            f.write("%s,96000,1048576,8,NVIDIA-H100-80GB-HBM3\n" % s)
    t = 0
    with open(os.path.join(here, "jobs.csv"), "w") as f:
        f.write("name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time,deletion_time,pods\n")
        for j in range(30):
            if r.random() < 0.35:
                pods, gpus = r.choice([2, 3, 4]), 8
            else:
                pods, gpus = 1, r.choice([1, 2, 4, 8])
            run = 2 * r.randint(5, 39) + 1
            f.write("j%02d,1000,1024,%d,1000,%d,%d,%d\n" % (j, gpus, t, t + run, pods))
            t += 2 * r.choice([1, 2, 2, 3])


def replay(gf, qp):
    out = subprocess.run([gf, "replay", "--as-listed", "--nodes", os.path.join(here, "nodes.csv"),
                          "--pods", os.path.join(here, "jobs.csv"), "--queue-policy", qp, "--policy", "best-fit",
                          "--seeds", "42", "--preemption", "off", "--jobs-csv", "/dev/stdout"],
                         check=True, capture_output=True, text=True).stdout
    rows = [l.split(",") for l in out.splitlines() if l.startswith(qp + ",")]
    return [(int(x[3]), int(x[4]), int(x[5]), int(x[6]), x[7]) for x in rows]  # pods, arrival, start, end, nodes


def gang_race(bf, w):
    """Whether waiting gang w starts when a gang g ends and could fit before g's last pod is
    gone: whole free nodes just before, plus g's nodes but one, less those taken by the jobs
    ahead of w (earlier arrivals) that start then too, hold w's pods."""
    p, a, s, _, _ = bf[w]
    if p < 2 or s <= a:
        return False
    for gp, _, gs, ge, gn in bf:
        if gp < 2 or ge != s:
            continue
        gnodes = set(gn.split(";"))
        busy = set()
        for q, (_, _, qs, qe, qn) in enumerate(bf):
            if qs >= 0 and qs < s < qe:
                busy.update(qn.split(";"))
        nodes = set(l.split(",")[0] for l in open(os.path.join(here, "nodes.csv")).read().splitlines()[1:])
        free = len(nodes - busy - gnodes)
        ahead = sum(1 for q, (_, qa, qs, _, qn) in enumerate(bf) if q != w and qs == s and qa < a
                    for n in qn.split(";") if n in gnodes)
        if free + len(gnodes) - 1 - ahead >= p:
            return True
        # a job behind w, waiting then, may take the first node freed live, ahead of w
        if any(q != w and a < qa < s <= qs for q, (_, qa, qs, _, _) in enumerate(bf)):
            return True
    return False


def qualifies(gf):
    bf, be = replay(gf, "backfill"), replay(gf, "best-effort-fifo")
    if [(s, sorted(n.split(";"))) for _, _, s, _, n in bf] != [(s, sorted(n.split(";"))) for _, _, s, _, n in be]:
        return False
    times = [a for _, a, _, _, _ in bf] + [e for _, _, _, e, _ in bf]
    if len(set(times)) != len(times) or any(s < 0 for _, _, s, _, _ in bf):
        return False
    if any(gang_race(bf, w) for w in range(len(bf))):
        return False
    waits = [p for p, a, s, _, _ in bf if s > a]
    return len(waits) >= 4 and sum(1 for p in waits if p > 1) >= 1


def main():
    gf = sys.argv[1]
    if len(sys.argv) > 2 and sys.argv[2] == "--check":
        print("jobs.csv %s" % ("qualifies" if qualifies(gf) else "does NOT qualify"))
        sys.exit(0 if qualifies(gf) else 1)
    if len(sys.argv) > 2:
        write(int(sys.argv[2]))
        print("seed %s: %s" % (sys.argv[2], "qualifies" if qualifies(gf) else "does NOT qualify"))
        return
    for seed in range(int(os.environ.get("SEED_FROM", "1")), 20001):
        write(seed)
        if qualifies(gf):
            print("seed %d qualifies" % seed)
            return
    sys.exit("no seed qualifies")


if __name__ == "__main__":
    main()
