# The cost inputs: price sheet, window, duration, aggregate, Prometheus answers (corpus fuzz/corpus/cost).
if(TARGET gfcostapi)
  gf_add_fuzzer(cost gfcostapi)
endif()
