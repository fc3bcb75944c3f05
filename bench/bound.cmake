# The offline bound beside FGD and FGD-Fill (needs glpsol at run time: glpk-utils).
add_executable(bench_bound ${CMAKE_CURRENT_SOURCE_DIR}/bench_bound.c)
target_link_libraries(bench_bound PRIVATE gfengine)
target_compile_definitions(bench_bound PRIVATE GF_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
set_target_properties(bench_bound PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
