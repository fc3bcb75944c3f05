# The external metrics API's parsers and request handler: label selectors, Prometheus query
# responses, agents' /metrics text, path + selector (corpora in fuzz/corpus/ma_*).
if(TARGET gfmetricsapi)
  gf_add_fuzzer(ma_selector gfmetricsapi)
  gf_add_fuzzer(ma_promjson gfmetricsapi)
  gf_add_fuzzer(ma_promtext gfmetricsapi)
  gf_add_fuzzer(ma_serve gfmetricsapi)
endif()
