# The GPU-memory cap's cost per cuMemAlloc/cuMemFree against the FAKE driver
# (built by the test suite):  cmake --build build --target bench-memcap
if(TARGET fake-cuda AND TARGET gpufleet-memcap)
  add_executable(bench_memcap ${CMAKE_CURRENT_SOURCE_DIR}/bench_memcap.c)
  target_link_libraries(bench_memcap PRIVATE ${CMAKE_DL_LIBS})
  set_target_properties(bench_memcap PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
  add_custom_target(bench-memcap
    COMMAND bench_memcap $<TARGET_FILE:fake-cuda> $<TARGET_FILE:gpufleet-memcap> 20000
    DEPENDS bench_memcap fake-cuda gpufleet-memcap
    USES_TERMINAL)
endif()
