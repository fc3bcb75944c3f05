# The node agent's fuzz harnesses (included by fuzz/CMakeLists.txt).
# gfagent and gfhttp get fuzzer coverage like gfengine does.
if(TARGET gfagent)
  target_compile_options(gfagent PRIVATE -fsanitize=fuzzer-no-link,address,undefined)
  target_compile_options(gfhttp PRIVATE -fsanitize=fuzzer-no-link,address,undefined)
  gf_add_fuzzer(agent_cgroup gfagent)
  gf_add_fuzzer(dp_grpc gfagent)
  gf_add_fuzzer(dp_http2 gfagent)
  gf_add_fuzzer(dp_match gfagent)
  gf_add_fuzzer(agent_mountinfo gfagent)
endif()
# The FAKE NVML's state parser is test code, compiled into its harness.
gf_add_fuzzer(fake_nvml_state)
target_sources(fuzz_fake_nvml_state PRIVATE ${CMAKE_SOURCE_DIR}/tests/agent/fake_state.c)
target_include_directories(fuzz_fake_nvml_state PRIVATE ${CMAKE_SOURCE_DIR}/tests/agent)
