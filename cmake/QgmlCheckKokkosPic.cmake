# The C interface (libqgml_c.so, which Python and Fortran load) is a shared library: a static Kokkos
# must then be position-independent code. A user's static Kokkos built without
# CMAKE_POSITION_INDEPENDENT_CODE (CMake's default) otherwise fails at link time with relocation errors
# (R_X86_64_TPOFF32 ... can not be used when making a shared object). Checked once, at configure time,
# by linking a shared library against the Kokkos found (cmake/checks/kokkos_shared_link).
function(qgml_check_kokkos_pic)
  if(NOT QGML_BUILD_BINDINGS OR NOT TARGET Kokkos::kokkoscore)
    return()
  endif()
  get_target_property(_type Kokkos::kokkoscore TYPE)
  if(NOT _type STREQUAL "STATIC_LIBRARY" OR NOT Kokkos_DIR)
    return()
  endif()
  if(DEFINED CACHE{QGML_KOKKOS_SHARED_LINK_OK} AND QGML_KOKKOS_SHARED_LINK_DIR STREQUAL Kokkos_DIR)
    set(_ok ${QGML_KOKKOS_SHARED_LINK_OK})
  else()
    message(STATUS "qgml: checking that a shared library links the static Kokkos in ${Kokkos_DIR}")
    try_compile(_ok PROJECT qgml_kokkos_shared_link
      SOURCE_DIR "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/checks/kokkos_shared_link"
      BINARY_DIR "${CMAKE_BINARY_DIR}/qgml-checks/kokkos_shared_link"
      CMAKE_FLAGS "-DKokkos_DIR=${Kokkos_DIR}" "-DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER}"
                  "-DCMAKE_BUILD_TYPE=Release"
      OUTPUT_VARIABLE _output)
    set(QGML_KOKKOS_SHARED_LINK_OK ${_ok} CACHE INTERNAL "a shared library links the Kokkos in QGML_KOKKOS_SHARED_LINK_DIR")
    set(QGML_KOKKOS_SHARED_LINK_DIR "${Kokkos_DIR}" CACHE INTERNAL "")
  endif()
  if(NOT _ok)
    if(_output MATCHES "relocation|recompile with -fPIC")
      set(_why "it is a static library built without position-independent code")
    else()
      set(_why "the test link failed (see ${CMAKE_BINARY_DIR}/qgml-checks/kokkos_shared_link)")
    endif()
    unset(QGML_KOKKOS_SHARED_LINK_OK CACHE)
    message(FATAL_ERROR
      "qgml: the C interface (libqgml_c.so, used by Python and Fortran) is a shared library and cannot "
      "link the Kokkos in ${Kokkos_DIR}: ${_why}. Either rebuild Kokkos (and KokkosKernels) with "
      "-DCMAKE_POSITION_INDEPENDENT_CODE=ON (Spack: +pic) or as shared libraries (-DBUILD_SHARED_LIBS=ON), "
      "or configure qgml with -DQGML_BUILD_BINDINGS=OFF (no C, Fortran or Python interface).")
  endif()
endfunction()
