# The serving replay's CSV parsers (request/sample traces, latency lists); corpus in fuzz/corpus/serving.
gf_add_fuzzer(serving gfengine)
# The forecast metric's Prometheus query_range decoder (corpus in fuzz/corpus/ma_promrange).
if(TARGET gfmetricsapi)
  gf_add_fuzzer(ma_promrange gfmetricsapi)
endif()
