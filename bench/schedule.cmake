# The scheduler's benchmark: pods scheduled per second by `gpufleet schedule`
# and by the real kube-scheduler on the same API server in the same run, at
# 1,000 and 5,000 fake nodes, and the extender's filter+prioritize round trip
# at 5,000 nodes (bench_extender).
#   cmake --build build --target bench-schedule
# or: bench/sched-bench.sh build/gpufleet build/bench/bench_extender [NODES...]
# The extender alone (no control plane, a stand-in API server):
#   cmake --build build --target bench-schedule-extender
pkg_check_modules(GF_BENCH_CURL IMPORTED_TARGET libcurl)
if(GF_BENCH_CURL_FOUND)
  add_executable(bench_extender ${CMAKE_CURRENT_SOURCE_DIR}/bench_extender.c)
  target_link_libraries(bench_extender PRIVATE PkgConfig::GF_BENCH_CURL)
  set_target_properties(bench_extender PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
  # The floor of that round trip: the same HTTP server answering canned bodies.
  add_executable(bench_http_floor ${CMAKE_CURRENT_SOURCE_DIR}/bench_http_floor.c)
  target_link_libraries(bench_http_floor PRIVATE gfhttp gfengine)
  set_target_properties(bench_http_floor PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
  add_custom_target(bench-schedule
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/sched-bench.sh $<TARGET_FILE:gpufleet>
            $<TARGET_FILE:bench_extender> 1000 5000
    DEPENDS gpufleet bench_extender
    USES_TERMINAL)
  # The extender alone, against a read-only API server stand-in (no control plane).
  add_custom_target(bench-schedule-extender
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/sched-extender-bench.sh $<TARGET_FILE:gpufleet>
            $<TARGET_FILE:bench_extender> 5000 2000
    DEPENDS gpufleet bench_extender bench_http_floor
    USES_TERMINAL)
endif()
# The scheduler's own memory at 5,000 nodes and 150,000 pods, offline (gf_live
# fed without an API server):  cmake --build build --target bench-schedule-mem
add_executable(bench_sched_mem ${CMAKE_CURRENT_SOURCE_DIR}/bench_sched_mem.c)
target_link_libraries(bench_sched_mem PRIVATE gfk8s)
target_compile_definitions(bench_sched_mem PRIVATE GF_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
set_target_properties(bench_sched_mem PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
add_custom_target(bench-schedule-mem
  COMMAND bench_sched_mem 5000 150000 kube
  COMMAND bench_sched_mem 5000 150000 backfill
  DEPENDS bench_sched_mem
  USES_TERMINAL)
