# The node agent's benchmark: resident memory and CPU per scrape for
# 8 GPUs x 4 processes over the FAKE NVML (built by the test suite).
#   cmake --build build --target bench-agent
if(TARGET nvidia-ml-fake)
  add_custom_target(bench-agent
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/agent-bench.sh $<TARGET_FILE:gpufleet>
            $<TARGET_FILE:nvidia-ml-fake> 2000
    DEPENDS gpufleet nvidia-ml-fake
    USES_TERMINAL)
endif()
# The device plugin's Allocate over its socket against a grpc-go baseline in
# the same run:  cmake --build build --target bench-dp-allocate
if(TARGET nvidia-ml-fake AND TARGET gpufleet-memcap)
  add_custom_target(bench-dp-allocate
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/dp-allocate.sh $<TARGET_FILE:gpufleet>
            $<TARGET_FILE:nvidia-ml-fake> $<TARGET_FILE:gpufleet-memcap> 5000
    DEPENDS gpufleet nvidia-ml-fake gpufleet-memcap
    USES_TERMINAL)
endif()
