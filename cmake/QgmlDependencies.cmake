# Locates Kokkos, KokkosKernels and (for the tests) Catch2 v3 before project(), because the CUDA
# backend selects the compiler (Kokkos' nvcc_wrapper).
#
# - an enclosing project already has a Kokkos::kokkos target (qgml added with add_subdirectory or
#   FetchContent): that Kokkos is used and nothing is built or looked up.
# - Kokkos_ROOT given (a user's own Kokkos >= 3.4, from Spack or a module): Kokkos is not built;
#   KokkosKernels is looked up under KokkosKernels_ROOT or Kokkos_ROOT. The tests' Catch2 v3 is found
#   on CMAKE_PREFIX_PATH or in QGML_DEPS_CACHE, else the bootstrap builds Catch2 alone (tests/).
# - otherwise, with QGML_BOOTSTRAP_DEPS=ON (the default), cmake/bootstrap/qgml-deps.sh builds the
#   pinned versions for QGML_BACKEND into QGML_DEPS_CACHE (default ~/.cache/qgml); for cuda, for the
#   GPU architecture QGML_CUDA_ARCH (one Kokkos prefix per architecture). QGML_KOKKOS_VERSION picks
#   Kokkos 3.4.01 (Debian's trilinos source package, the default) or 4.6.01 (the release archives in
#   QGML_KOKKOS_ARCHIVES, else downloaded from the projects' release pages).
# With the cuda backend, the end of the configure step reports the GPU architecture the Kokkos in use was
# built for and warns when it is not QGML_CUDA_ARCH (a user's Kokkos decides; QGML_CUDA_ARCH only selects
# what the bootstrap builds).

set(QGML_BACKEND "openmp" CACHE STRING "Backend the dependency bootstrap builds Kokkos for: serial, openmp or cuda")
set_property(CACHE QGML_BACKEND PROPERTY STRINGS serial openmp cuda)
set(QGML_CUDA_ARCH "AMPERE80" CACHE STRING
    "Kokkos GPU architecture the bootstrap builds Kokkos for (cuda backend): AMPERE80 (A100, sm_80), HOPPER90 (H100/H200, sm_90), AMPERE86, TURING75, VOLTA70, VOLTA72")
set_property(CACHE QGML_CUDA_ARCH PROPERTY STRINGS VOLTA70 VOLTA72 TURING75 AMPERE80 AMPERE86 HOPPER90)
set(QGML_KOKKOS_VERSION "3.4.01" CACHE STRING
    "Kokkos and KokkosKernels version the bootstrap builds: 3.4.01 (from Debian's archive) or 4.6.01")
set_property(CACHE QGML_KOKKOS_VERSION PROPERTY STRINGS 3.4.01 4.6.01)
set(QGML_KOKKOS_ARCHIVES "$ENV{QGML_KOKKOS_ARCHIVES}" CACHE PATH
    "Directory with kokkos-<version>.tar.gz and kokkos-kernels-<version>.tar.gz (Kokkos 4.6.01 bootstrap); empty: download")
option(QGML_ENABLE_MPI "Build the MPI data-parallel layer (qgml::mpi) and the program with MPI" OFF)
option(QGML_BOOTSTRAP_DEPS "Build Kokkos, KokkosKernels and Catch2 into QGML_DEPS_CACHE when Kokkos_ROOT is not given" ON)
if(DEFINED ENV{QGML_DEPS_CACHE})
  set(_qgml_cache_default "$ENV{QGML_DEPS_CACHE}")
elseif(DEFINED ENV{XDG_CACHE_HOME})
  set(_qgml_cache_default "$ENV{XDG_CACHE_HOME}/qgml")
else()
  set(_qgml_cache_default "$ENV{HOME}/.cache/qgml")
endif()
set(QGML_DEPS_CACHE "${_qgml_cache_default}" CACHE PATH "Where the dependency bootstrap builds and caches its packages")

if(NOT QGML_BACKEND MATCHES "^(serial|openmp|cuda)$")
  message(FATAL_ERROR "QGML_BACKEND must be serial, openmp or cuda, got '${QGML_BACKEND}'")
endif()
if(NOT QGML_KOKKOS_VERSION MATCHES "^(3\\.4\\.01|4\\.6\\.01)$")
  message(FATAL_ERROR "QGML_KOKKOS_VERSION must be 3.4.01 or 4.6.01, got '${QGML_KOKKOS_VERSION}'")
endif()
if(NOT QGML_CUDA_ARCH MATCHES "^(VOLTA70|VOLTA72|TURING75|AMPERE80|AMPERE86|HOPPER90)$")
  message(FATAL_ERROR "QGML_CUDA_ARCH must be VOLTA70, VOLTA72, TURING75, AMPERE80, AMPERE86 or HOPPER90, "
                      "got '${QGML_CUDA_ARCH}'")
endif()

set(_qgml_user_kokkos OFF)
if(TARGET Kokkos::kokkos)
  message(STATUS "qgml: using the enclosing project's Kokkos::kokkos target; no dependency bootstrap")
  set(_qgml_user_kokkos ON)
elseif(Kokkos_ROOT OR Kokkos_DIR OR DEFINED ENV{Kokkos_ROOT})
  set(_qgml_user_kokkos ON)
endif()

set(_qgml_deps_script "${CMAKE_CURRENT_LIST_DIR}/bootstrap/qgml-deps.sh")
if(NOT _qgml_user_kokkos AND QGML_BOOTSTRAP_DEPS)
  message(STATUS "qgml: bootstrapping dependencies (Kokkos ${QGML_KOKKOS_VERSION}) for backend "
                 "'${QGML_BACKEND}' in ${QGML_DEPS_CACHE}")
  set(_qgml_deps_args --backend "${QGML_BACKEND}" --cache "${QGML_DEPS_CACHE}"
                      --kokkos-version "${QGML_KOKKOS_VERSION}")
  if(QGML_KOKKOS_ARCHIVES)
    list(APPEND _qgml_deps_args --archives "${QGML_KOKKOS_ARCHIVES}")
  endif()
  if(QGML_ENABLE_MPI)
    list(APPEND _qgml_deps_args --mpi)
  endif()
  if(QGML_BACKEND STREQUAL "cuda")
    list(APPEND _qgml_deps_args --arch "${QGML_CUDA_ARCH}")
  endif()
  execute_process(
    COMMAND bash "${_qgml_deps_script}" ${_qgml_deps_args}
    OUTPUT_VARIABLE _qgml_prefix OUTPUT_STRIP_TRAILING_WHITESPACE
    RESULT_VARIABLE _qgml_rc)
  if(NOT _qgml_rc EQUAL 0)
    message(FATAL_ERROR "qgml: the dependency bootstrap failed (exit ${_qgml_rc}); see the messages above. "
                        "To use your own Kokkos instead, pass -DKokkos_ROOT=<prefix>.")
  endif()
  set(Kokkos_ROOT "${_qgml_prefix}" CACHE PATH "Kokkos install prefix (set by the qgml bootstrap)" FORCE)
  set(KokkosKernels_ROOT "${_qgml_prefix}" CACHE PATH "KokkosKernels install prefix (set by the qgml bootstrap)" FORCE)
  list(APPEND CMAKE_PREFIX_PATH "${QGML_DEPS_CACHE}/catch2")
  if(QGML_BACKEND STREQUAL "cuda" AND NOT CMAKE_CXX_COMPILER)
    set(CMAKE_CXX_COMPILER "${_qgml_prefix}/bin/nvcc_wrapper" CACHE FILEPATH "C++ compiler (Kokkos nvcc_wrapper)" FORCE)
    set(ENV{PATH} "$ENV{PATH}:/usr/local/cuda/bin")
  endif()
elseif(NOT _qgml_user_kokkos)
  message(STATUS "qgml: QGML_BOOTSTRAP_DEPS is OFF and Kokkos_ROOT is not set; relying on find_package(Kokkos)")
endif()
if(NOT KokkosKernels_ROOT AND Kokkos_ROOT)
  set(KokkosKernels_ROOT "${Kokkos_ROOT}")
endif()

# Called at the end of the including directory, after find_package(Kokkos): which GPU architecture the
# Kokkos in use was built for (Kokkos_ARCH, set by Kokkos 3.x and 4.x), against QGML_CUDA_ARCH.
function(_qgml_report_cuda_arch)
  if(NOT Kokkos_ENABLE_CUDA)
    return()
  endif()
  set(_gpu "")
  foreach(_a IN LISTS Kokkos_ARCH)
    if(_a MATCHES "^(KEPLER|MAXWELL|PASCAL|VOLTA|TURING|AMPERE|ADA|HOPPER|BLACKWELL)[0-9]+$")
      list(APPEND _gpu "${_a}")
    endif()
  endforeach()
  if(NOT _gpu)
    set(_gpu "none given (Kokkos_ARCH: ${Kokkos_ARCH})")
  endif()
  message(STATUS "qgml: Kokkos CUDA architecture ${_gpu}; QGML_CUDA_ARCH=${QGML_CUDA_ARCH}")
  if(NOT _gpu STREQUAL QGML_CUDA_ARCH)
    message(WARNING "qgml: the Kokkos in ${Kokkos_DIR} was built for the GPU architecture ${_gpu}, not "
                    "QGML_CUDA_ARCH=${QGML_CUDA_ARCH}; that Kokkos decides the GPU code. With the bootstrap, "
                    "change the architecture in a fresh build directory (cmake --fresh -DQGML_CUDA_ARCH=...); "
                    "with your own Kokkos (Kokkos_ROOT), build it for the architecture you want.")
  endif()
endfunction()
cmake_language(DEFER CALL _qgml_report_cuda_arch)
