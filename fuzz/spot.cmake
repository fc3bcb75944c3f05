# The spot availability trace decoder (src/cli/spottrace.c, cJSON; corpus in fuzz/corpus/spot_trace).
find_package(PkgConfig REQUIRED)
pkg_check_modules(SPOT_CJSON IMPORTED_TARGET libcjson)
if(SPOT_CJSON_FOUND)
  gf_add_fuzzer(spot_trace PkgConfig::SPOT_CJSON gfengine)
  gf_fuzz_target(spot_fuzz spot_trace)
  target_sources(${spot_fuzz} PRIVATE ${CMAKE_SOURCE_DIR}/src/cli/spottrace.c)
  target_include_directories(${spot_fuzz} PRIVATE ${CMAKE_SOURCE_DIR}/src)
endif()
