#!/usr/bin/env bash
# Adjusts a Kokkos 3.4.01 source tree so that it builds with CUDA 13 (nvcc 13) and runs on Hopper.
# Changes 1-4 are guarded by CUDART_VERSION >= 13000, so older toolkits see the original code.
# 5. Kokkos 3.4.01 knows no Hopper: adds the architecture option Kokkos_ARCH_HOPPER90 (-arch=sm_90,
#    macros KOKKOS_ARCH_HOPPER90 and KOKKOS_ARCH_HOPPER), as Kokkos >= 4.0 spells it.
# 6. Kokkos 3.4.01 aborts at initialisation when the device's major compute capability differs from
#    the compiled one, which forbids running an sm_80 build on sm_90 through the PTX that
#    -arch=sm_80 embeds. It now aborts only when the compiled capability exceeds the device's
#    (and warns, as before, on any mismatch).
#   patch-kokkos-cuda13.sh KOKKOS_SOURCE_DIR
set -euo pipefail
k="${1:?usage: patch-kokkos-cuda13.sh KOKKOS_SOURCE_DIR}"
[ -f "$k/bin/nvcc_wrapper" ] || { echo "patch-kokkos-cuda13: $k is not a Kokkos source tree" >&2; exit 1; }
[ -f "$k/.qgml-cuda13" ] && exit 0

# 1. nvcc 13 rejects nvcc_wrapper's default sm_35.
sed -i 's/^default_arch="sm_35"/default_arch="sm_80"/' "$k/bin/nvcc_wrapper"

# 2. __half2double is gone and the __half2*_rz conversions need a real __half argument.
perl -0pi -e 's/return __half2double\(val\);/#if CUDART_VERSION >= 13000\n  return static_cast<double>(__half2float(static_cast<__half>(val)));\n#else\n  return __half2double(val);\n#endif/g' \
  "$k/core/src/Cuda/Kokkos_Cuda_Half.hpp"
perl -0pi -e 's/return (__half2(?:short|ushort|int|uint|ll|ull|float)(?:_rz)?)\(val\);/#if CUDART_VERSION >= 13000\n  return $1(static_cast<__half>(val));\n#else\n  return $1(val);\n#endif/g' \
  "$k/core/src/Cuda/Kokkos_Cuda_Half.hpp"

# 3. cudaMemPrefetchAsync takes a cudaMemLocation and a flags argument.
perl -0pi -e 's/CUDA_SAFE_CALL\(cudaMemPrefetchAsync\(ptr, bytes, space.cuda_device\(\),\s*space.cuda_stream\(\)\)\);/#if CUDART_VERSION >= 13000\n    cudaMemLocation loc{};\n    loc.type = cudaMemLocationTypeDevice;\n    loc.id   = space.cuda_device();\n    CUDA_SAFE_CALL(cudaMemPrefetchAsync(ptr, bytes, loc, 0, space.cuda_stream()));\n#else\n    CUDA_SAFE_CALL(cudaMemPrefetchAsync(ptr, bytes, space.cuda_device(),\n                                        space.cuda_stream()));\n#endif/' \
  "$k/core/src/Cuda/Kokkos_CudaSpace.cpp"

# 4. cudaGraphAddDependencies takes an edge-data argument.
perl -0pi -e 's/CUDA_SAFE_CALL\(\s*cudaGraphAddDependencies\(m_graph, &pred_cuda_node, &cuda_node, 1\)\);/#if CUDART_VERSION >= 13000\n    CUDA_SAFE_CALL(cudaGraphAddDependencies(m_graph, &pred_cuda_node, &cuda_node,\n                                            nullptr, 1));\n#else\n    CUDA_SAFE_CALL(\n        cudaGraphAddDependencies(m_graph, &pred_cuda_node, &cuda_node, 1));\n#endif/' \
  "$k/core/src/Cuda/Kokkos_Cuda_Graph_Impl.hpp"

# 5. HOPPER90.
perl -0pi -e 's/(KOKKOS_ARCH_OPTION\(AMPERE86[^\n]*\n)/$1KOKKOS_ARCH_OPTION(HOPPER90        GPU  "NVIDIA Hopper generation CC 9.0")\n/;
              s/(CHECK_CUDA_ARCH\(AMPERE86  sm_86\)\n)/$1CHECK_CUDA_ARCH(HOPPER90  sm_90)\n/;
              s/(  IF \(KOKKOS_ARCH_AMPERE80 OR KOKKOS_ARCH_AMPERE86\)\n    SET\(KOKKOS_ARCH_AMPERE ON\)\n  ENDIF\(\)\n)/$1\n  IF (KOKKOS_ARCH_HOPPER90)\n    SET(KOKKOS_ARCH_HOPPER ON)\n  ENDIF()\n/' \
  "$k/cmake/kokkos_arch.cmake"
perl -0pi -e 's/(#cmakedefine KOKKOS_ARCH_AMPERE86\n)/$1#cmakedefine KOKKOS_ARCH_HOPPER\n#cmakedefine KOKKOS_ARCH_HOPPER90\n/' \
  "$k/cmake/KokkosCore_config.h.in"

# 6. Older-architecture builds run on newer devices (PTX JIT).
perl -0pi -e 's/if \(compiled_major != cudaProp\.major \|\| compiled_minor > cudaProp\.minor\) \{/if (compiled_major > cudaProp.major ||\n        (compiled_major == cudaProp.major \&\& compiled_minor > cudaProp.minor)) {/' \
  "$k/core/src/Cuda/Kokkos_Cuda_Instance.cpp"

grep -q 'cudaMemLocation loc' "$k/core/src/Cuda/Kokkos_CudaSpace.cpp" &&
  grep -q 'nullptr, 1' "$k/core/src/Cuda/Kokkos_Cuda_Graph_Impl.hpp" &&
  grep -q 'default_arch="sm_80"' "$k/bin/nvcc_wrapper" &&
  grep -q 'CHECK_CUDA_ARCH(HOPPER90  sm_90)' "$k/cmake/kokkos_arch.cmake" &&
  grep -q 'SET(KOKKOS_ARCH_HOPPER ON)' "$k/cmake/kokkos_arch.cmake" &&
  grep -q 'KOKKOS_ARCH_OPTION(HOPPER90' "$k/cmake/kokkos_arch.cmake" &&
  grep -q 'cmakedefine KOKKOS_ARCH_HOPPER90' "$k/cmake/KokkosCore_config.h.in" &&
  grep -q 'compiled_major > cudaProp.major' "$k/core/src/Cuda/Kokkos_Cuda_Instance.cpp" ||
  { echo "patch-kokkos-cuda13: a patch did not apply; is this Kokkos 3.4.01?" >&2; exit 1; }
touch "$k/.qgml-cuda13"
