# The GPU-memory cap's limit-file parser (included by fuzz/CMakeLists.txt).
if(TARGET gfmemcapcfg)
  gf_add_fuzzer(memcap_config gfmemcapcfg)
endif()
