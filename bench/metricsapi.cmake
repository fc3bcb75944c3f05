# The external metrics API's latency per request with 1,000 GPUs behind it
# (in-process handler and HTTPS with the front-proxy client certificate):
#   cmake --build build --target bench_metricsapi && ./build/bench/bench_metricsapi [N]
if(TARGET gfmetricsapi)
  pkg_check_modules(CURL REQUIRED IMPORTED_TARGET libcurl)
  add_executable(bench_metricsapi ${CMAKE_CURRENT_SOURCE_DIR}/bench_metricsapi.c)
  target_link_libraries(bench_metricsapi PRIVATE gfmetricsapi gfhttp gfengine PkgConfig::CURL)
  target_compile_definitions(bench_metricsapi PRIVATE GF_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
  set_target_properties(bench_metricsapi PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
endif()
