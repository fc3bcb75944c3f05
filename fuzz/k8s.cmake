# The Kubernetes Pod/Node JSON codecs (src/k8s/codec.c) and the extender's
# request decoder (src/k8s/extargs.c), the names that reach API paths
# (src/k8s/client.c: gf_kube_path), the Lease decoder (src/k8s/lease.c),
# the PodGroup decoders (coscheduling; the Workload API's) and gang store
# (src/k8s/codec.c, gangs.c), `gpufleet queue`'s view of API objects
# (src/k8s/queueview.c).
gf_add_fuzzer(k8s gfk8s gfengine)
gf_add_fuzzer(k8s_extargs gfk8s gfhttp gfengine)
gf_add_fuzzer(k8s_names gfk8s gfhttp gfengine)
gf_add_fuzzer(k8s_lease gfk8s gfengine)
gf_add_fuzzer(k8s_podgroup gfk8s gfengine)
gf_add_fuzzer(k8s_wl_podgroup gfk8s gfengine)
gf_add_fuzzer(k8s_queueview gfk8s gfengine)
# Queue objects (src/k8s/queues.c).
gf_add_fuzzer(k8s_queue gfk8s gfengine)
# PodDisruptionBudgets (src/k8s/pdb.c), the live preemption's budgets.
gf_add_fuzzer(k8s_pdb gfk8s gfengine)
