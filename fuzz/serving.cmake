# The serving replay's CSV parsers (request/sample traces, latency lists); corpus in fuzz/corpus/serving.
gf_add_fuzzer(serving gfengine)
