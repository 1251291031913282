# Compile settings for qgml's own targets (library, program, tests, benchmarks), not for dependencies.
#
# QGML_HOST_ARCH_FLAGS (default -march=native on GCC/Clang for CPU backends): the per-point kernels are
# small dense loops that only vectorise with the machine's full instruction set (AVX2/AVX-512). The flag
# is private to our targets; an installed qgml does not impose it on downstream projects.
set(_qgml_arch_default "")
if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang" AND NOT Kokkos_ENABLE_CUDA)
  set(_qgml_arch_default "-march=native")
endif()
set(QGML_HOST_ARCH_FLAGS "${_qgml_arch_default}" CACHE STRING "Architecture flags for qgml's own CPU code (empty: none)")

function(qgml_set_warnings target)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE -Wall -Wextra)
    if(QGML_WARNINGS_AS_ERRORS)
      target_compile_options(${target} PRIVATE -Werror)
    endif()
  endif()
  if(QGML_HOST_ARCH_FLAGS)
    separate_arguments(_flags UNIX_COMMAND "${QGML_HOST_ARCH_FLAGS}")
    target_compile_options(${target} PRIVATE ${_flags})
  endif()
endfunction()
