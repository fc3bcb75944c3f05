# The fast tier, ctest label `check` (`make check`): every test that needs no
# Kubernetes control plane, no image build, no kubelet and no GPU, and is not
# labelled `slow`.  It is derived from what each test already declares (a
# control-plane slot, RESOURCE_GROUPS k8s:N, or the older RESOURCE_LOCK
# k8s-control-plane, and its labels), so a new test joins the right tier
# without anyone remembering to label it.  See docs/testing.md.
#
# A test with a control-plane slot (or that lock) is also labelled
# `control-plane`: `make test` runs the sanitizer pass's control-plane tests
# beside the normal build's suite, and its other tests after it.
#
# Every folder that defines tests calls gf_check_tier_defer() once, anywhere:
# the labelling then runs when CMake has finished that folder, after every
# set_tests_properties there (CMake 3.25 cannot read another folder's tests).
# The tests that take minutes, with their seconds as measured in a normal
# build on 2 cores: their COST, so that a parallel ctest starts the longest
# first instead of last, when a long test starting late would stretch the
# whole run (ctest orders by COST, highest first; a test without one gets the
# time it took last time in that build directory, 0 in a new one).
set(GF_TEST_COSTS
  serving_hpa_agreement=393 sched_ha=266 kubelet_device_plugin=189 cost_k8s_ha=147
  cost_k8s=146 sched_agree=108 sched_gang_live=91 serving_hpa_forecast_ahead=63
  ma_hpa_e2e=62 sched_preemption=60 demo=51 sched_standalone=43)

function(gf_check_tier_here)
  get_property(tests DIRECTORY PROPERTY TESTS)
  foreach(t ${tests})
    get_test_property(${t} RESOURCE_LOCK lock)
    get_test_property(${t} RESOURCE_GROUPS groups)
    get_test_property(${t} LABELS labels)
    set(fast ON)
    set(cp OFF)
    if(lock AND "k8s-control-plane" IN_LIST lock)
      set(cp ON)
    endif()
    if(groups AND "${groups}" MATCHES "(^|[;,])k8s:")
      set(cp ON)
    endif()
    if(cp)
      set(fast OFF)
      set_property(TEST ${t} APPEND PROPERTY LABELS control-plane)
    endif()
    if(labels)
      foreach(heavy slow deploy kubelet gpu k8s)
        if(heavy IN_LIST labels)
          set(fast OFF)
        endif()
      endforeach()
    endif()
    if(fast)
      set_property(TEST ${t} APPEND PROPERTY LABELS check)
    endif()
    foreach(c ${GF_TEST_COSTS})
      if(c MATCHES "^${t}=(.*)$")
        set_tests_properties(${t} PROPERTIES COST ${CMAKE_MATCH_1})
      endif()
    endforeach()
  endforeach()
endfunction()

macro(gf_check_tier_defer)
  cmake_language(DEFER CALL gf_check_tier_here)
endmacro()
