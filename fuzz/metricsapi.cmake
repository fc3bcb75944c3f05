# The external metrics API's parsers: label selectors, Prometheus query
# responses, agents' /metrics text (corpora in fuzz/corpus/ma_*).
if(TARGET gfmetricsapi)
  gf_add_fuzzer(ma_selector gfmetricsapi)
  gf_add_fuzzer(ma_promjson gfmetricsapi)
  gf_add_fuzzer(ma_promtext gfmetricsapi)
endif()
