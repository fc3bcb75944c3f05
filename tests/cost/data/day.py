#!/usr/bin/env python3
"""tests/cost/data/day.py T0 - a scripted day of the allocation record as OpenMetrics text,
for `promtool tsdb create-blocks-from openmetrics` (fast-forwarding Prometheus by a day).

One sample a minute from T0 (a UTC midnight) for 24 h, exactly what Prometheus would have
scraped from the scheduler's /metrics (k8s/costrec.h), the agents (dcgm-exporter names) and
kube-state-metrics (kube_pod_labels):

  GPUs: n1 (on-demand, H100) G-1 and G-2; n2 (spot, A100) G-3: 3 GPUs x 24 h = 72 GPU-hours
  team-a/a1..a4  0.25 each of G-1, 00:00-08:00, label team=ml, device utilization 40 %
  team-b/b1      1.0 of G-2,         06:00-18:00, label team=infra, utilization 90 %
  team-b/b2      3/7 of G-3 (MIG 3g.40gb), 00:00-14:00, no team label, no utilization series

tests/cost/cost-prometheus.sh has the hand-computed report of this day.

With "ha" as the second argument, the allocation record (gpufleet_gpu_capacity,
gpufleet_pod_gpu_allocation) is served by the scheduler replicas of a --leader-elect pair, each
scraped as its own target (instance, job and the replica's pod name as the scrape adds them):
sched-a 00:00-13:00 (then killed: a failover), sched-b 02:00-24:00 (its standby, then the leader),
sched-c 15:00-24:00 (sched-a's replacement, standing by).  Every minute is served by one to two
of them; the report must be the same day.
"""
import sys

t0 = int(sys.argv[1])
ha = len(sys.argv) > 2 and sys.argv[2] == "ha"
MIN = 60
# (extra labels, first minute, end minute) of each replica serving the record
R = 'instance="10.0.0.%d:10260",job="gpufleet-scheduler",'
replicas = ([(R % 1, "sched-a", 0, 13 * 60), (R % 2, "sched-b", 2 * 60, 24 * 60),
             (R % 3, "sched-c", 15 * 60, 24 * 60)] if ha else [("", "", 0, 24 * 60)])
gpus = [("n1", "0", "G-1", "H100", "on-demand"), ("n1", "1", "G-2", "H100", "on-demand"),
        ("n2", "0", "G-3", "A100", "spot")]
pods = [  # ns, pod, node, gpu, uuid, model, share, start h, end h, team, util
    ("team-a", "a1", "n1", "0", "G-1", "H100", "0.250", 0, 8, "ml", 40),
    ("team-a", "a2", "n1", "0", "G-1", "H100", "0.250", 0, 8, "ml", 40),
    ("team-a", "a3", "n1", "0", "G-1", "H100", "0.250", 0, 8, "ml", 40),
    ("team-a", "a4", "n1", "0", "G-1", "H100", "0.250", 0, 8, "ml", 40),
    ("team-b", "b1", "n1", "1", "G-2", "H100", "1.000", 6, 18, "infra", 90),
    ("team-b", "b2", "n2", "0", "G-3", "A100", "0.428571", 0, 14, None, None),
]
out = sys.stdout
out.write("# TYPE gpufleet_gpu_capacity gauge\n")
for rl, rpod, rs, re in replicas:
    # the capacity series carry the scrape's pod label too (the replica's own pod)
    rp = 'pod="%s",' % rpod if rpod else ""
    for node, gpu, uuid, model, kind in gpus:
        for m in range(rs, re):
            out.write('gpufleet_gpu_capacity{%s%snode="%s",gpu="%s",uuid="%s",model="%s",capacity_type="%s"} 1 %d\n'
                      % (rl, rp, node, gpu, uuid, model, kind, t0 + m * MIN))
out.write("# TYPE gpufleet_pod_gpu_allocation gauge\n")
for rl, rpod, rs, re in replicas:
    for ns, pod, node, gpu, uuid, model, share, s, e, team, util in pods:
        for m in range(max(s * 60, rs), min(e * 60, re)):
            out.write('gpufleet_pod_gpu_allocation{%snamespace="%s",pod="%s",node="%s",gpu="%s",uuid="%s",model="%s",'
                      'share="%s"} %s %d\n' % (rl, ns, pod, node, gpu, uuid, model, share, share, t0 + m * MIN))
out.write("# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n")
for ns, pod, node, gpu, uuid, model, share, s, e, team, util in pods:
    if util is None:
        continue
    for m in range(s * 60, e * 60):
        out.write('DCGM_FI_DEV_GPU_UTIL{gpu="%s",UUID="%s",hostname="%s",namespace="%s",pod="%s",container="c"} %d %d\n'
                  % (gpu, uuid, node, ns, pod, util, t0 + m * MIN))
out.write("# TYPE kube_pod_labels gauge\n")
for ns, pod, node, gpu, uuid, model, share, s, e, team, util in pods:
    lab = ',label_team="%s"' % team if team else ""
    for m in range(s * 60, e * 60):
        out.write('kube_pod_labels{namespace="%s",pod="%s"%s} 1 %d\n' % (ns, pod, lab, t0 + m * MIN))
out.write("# EOF\n")
