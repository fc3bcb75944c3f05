# The live scheduler's per-event paths (gang lookups, PodGroup counts, notes,
# the allocation record, an idle cycle) at 5,000 nodes and 150,000 pending
# pods, offline (gf_live fed without an API server):
#   cmake --build build --target bench-live-paths
# or: build/bench/bench_live_paths [NODES [PODS [GANG_PODS [QUEUE_POLICY [NAMESPACES [QUEUES [ROUNDS]]]]]]]
add_executable(bench_live_paths ${CMAKE_CURRENT_SOURCE_DIR}/bench_live_paths.c)
target_link_libraries(bench_live_paths PRIVATE gfk8s)
target_compile_definitions(bench_live_paths PRIVATE GF_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
set_target_properties(bench_live_paths PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
add_custom_target(bench-live-paths
  COMMAND bench_live_paths 5000 150000 20000 backfill 1000 100 20
  DEPENDS bench_live_paths
  USES_TERMINAL)
