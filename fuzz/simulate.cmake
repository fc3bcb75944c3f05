gf_add_fuzzer(trace gfengine)
