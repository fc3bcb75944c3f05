add_executable(bench_replay ${CMAKE_CURRENT_SOURCE_DIR}/bench_replay.c)
target_link_libraries(bench_replay PRIVATE gfengine)
target_compile_definitions(bench_replay PRIVATE GF_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
set_target_properties(bench_replay PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
