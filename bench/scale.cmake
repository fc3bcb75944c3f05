add_executable(bench_scale ${CMAKE_CURRENT_SOURCE_DIR}/bench_scale.c)
target_link_libraries(bench_scale PRIVATE gfengine)
target_compile_definitions(bench_scale PRIVATE GF_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
set_target_properties(bench_scale PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
