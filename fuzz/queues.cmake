# The queue file parser (sim/queues.c, libyaml); corpus in fuzz/corpus/queues.
gf_add_fuzzer(queues gfengine)
