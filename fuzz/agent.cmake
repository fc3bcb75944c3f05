# The node agent's fuzz harnesses (included by fuzz/CMakeLists.txt).
# gfagent and gfhttp get fuzzer coverage like gfengine does.
if(TARGET gfagent)
  gf_fuzz_instrument(gfagent gfhttp)
  gf_add_fuzzer(agent_cgroup gfagent)
  gf_add_fuzzer(dp_grpc gfagent)
  gf_add_fuzzer(dp_http2 gfagent)
  gf_add_fuzzer(dp_match gfagent)
  gf_add_fuzzer(agent_mountinfo gfagent)
  gf_add_fuzzer(mig_layout gfagent)
  gf_add_fuzzer(agent_notice gfagent)
endif()
# The FAKE NVML's state parser is test code, compiled into its harness.
gf_add_fuzzer(fake_nvml_state)
gf_fuzz_target(fake_nvml_target fake_nvml_state)
target_sources(${fake_nvml_target} PRIVATE ${CMAKE_SOURCE_DIR}/tests/agent/fake_state.c)
target_include_directories(${fake_nvml_target} PRIVATE ${CMAKE_SOURCE_DIR}/tests/agent)
