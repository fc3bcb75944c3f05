# The Kubernetes Pod/Node JSON codecs (src/k8s/codec.c).
gf_add_fuzzer(k8s gfk8s gfengine)
