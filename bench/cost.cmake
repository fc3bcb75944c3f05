# Our part of a 30-day, namespace-aggregated cost query over 5,000 GPUs (decode, account, render):
#   cmake --build build --target bench_cost && ./build/bench/bench_cost [GPUS [DAYS [MEAN_HOURS]]]
# The Prometheus part: bench/cost-prom-bench.sh (real Prometheus, backfilled raw record) and
# bench/cost-prom-pools.sh (--recorded: the pooled hourly rules).
if(TARGET gfcostapi)
  add_executable(bench_cost ${CMAKE_CURRENT_SOURCE_DIR}/bench_cost.c)
  target_link_libraries(bench_cost PRIVATE gfcostapi gfengine)
  set_target_properties(bench_cost PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
endif()
