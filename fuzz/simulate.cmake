gf_add_fuzzer(trace gfengine)
gf_add_fuzzer(duration gfengine)
