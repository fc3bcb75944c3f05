# The fast tier, ctest label `check` (`make check`): every test that needs no
# Kubernetes control plane, no image build, no kubelet and no GPU, and is not
# labelled `slow`.  It is derived from what each test already declares (its
# RESOURCE_LOCK and labels), so a new test joins the right tier without anyone
# remembering to label it.  See docs/testing.md.
#
# Every folder that defines tests calls gf_check_tier_defer() once, anywhere:
# the labelling then runs when CMake has finished that folder, after every
# set_tests_properties there (CMake 3.25 cannot read another folder's tests).
function(gf_check_tier_here)
  get_property(tests DIRECTORY PROPERTY TESTS)
  foreach(t ${tests})
    get_test_property(${t} RESOURCE_LOCK lock)
    get_test_property(${t} LABELS labels)
    set(fast ON)
    if(lock AND "k8s-control-plane" IN_LIST lock)
      set(fast OFF)
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
  endforeach()
endfunction()

macro(gf_check_tier_defer)
  cmake_language(DEFER CALL gf_check_tier_here)
endmacro()
