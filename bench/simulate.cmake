add_executable(bench_simulate ${CMAKE_CURRENT_SOURCE_DIR}/bench_simulate.c)
target_link_libraries(bench_simulate PRIVATE gfengine)
target_compile_definitions(bench_simulate PRIVATE GF_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
set_target_properties(bench_simulate PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
