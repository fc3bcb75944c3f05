# The queue file decoder (src/yaml/queues.c, libyaml) and the Queue
# validator behind it (src/queue/queuedef.c); corpus in fuzz/corpus/queues.
gf_add_fuzzer(queues gfyaml gfengine)
