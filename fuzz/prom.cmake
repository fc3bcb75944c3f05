# The Prometheus answer envelope shared by the metrics API and the cost API (prom/promjson.h;
# corpus fuzz/corpus/prom_answer).
if(TARGET gfprom)
  gf_add_fuzzer(prom_answer gfprom)
endif()
