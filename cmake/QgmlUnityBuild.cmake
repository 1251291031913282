# Unity builds for qgml's own multi-file targets (the test suite, the program, the C interface).
#
# Most of a translation unit's compile time is the instantiation and optimisation of the same kernel
# templates (Trainer, LossGradient, QuantumGeometry, ... for every execution space and precision),
# which every file that uses them repeats. Compiled as one unity source per target, each is instantiated
# once: three of the test files took 198 s of compile time one by one and 90 s as one source (g++ 12,
# -O3; perf/NOTES.md, "Build and test time").
# QGML_UNITY_BUILD_BATCH_SIZE (0 = every source of a target in one unity source) trades this against
# parallelism on machines with many cores. Turn QGML_UNITY_BUILD off to compile file by file, e.g. to
# find which file an error message came from.
# Off for CUDA: nvcc's front end (cudafe++) takes super-linear time in the size of a translation unit;
# the program as one unity source took longer than its files one by one.
if(Kokkos_ENABLE_CUDA)
  set(_qgml_unity_default OFF)
else()
  set(_qgml_unity_default ON)
endif()
option(QGML_UNITY_BUILD "Compile the test suite, the program and the C interface as unity sources"
       ${_qgml_unity_default})
set(QGML_UNITY_BUILD_BATCH_SIZE 0 CACHE STRING "Sources per unity source (0: all of a target's sources in one)")

function(qgml_unity_build target)
  if(QGML_UNITY_BUILD)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE ${QGML_UNITY_BUILD_BATCH_SIZE})
  endif()
endfunction()
