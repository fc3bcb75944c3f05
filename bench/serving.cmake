# The forecaster's cost per series per sync with 30 days of minute history, against one pass
# over that history in the same run:
#   cmake --build build --target bench_forecast && ./build/bench/bench_forecast [N]
add_executable(bench_forecast ${CMAKE_CURRENT_SOURCE_DIR}/bench_forecast.c)
target_link_libraries(bench_forecast PRIVATE gfengine)
set_target_properties(bench_forecast PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
