#!/usr/bin/env bash
# Adjusts a Kokkos 4.6.01 source tree so that it builds with CUDA 13 (nvcc 13). Changes 2-3 are guarded
# by CUDART_VERSION >= 13000, so older toolkits see the original code.
# 1. nvcc_wrapper's default architecture sm_70 (Volta) is no longer supported by nvcc 13: sm_80.
# 2. cudaGraphAddDependencies takes an edge-data argument (nullptr: no edge data).
# 3. cudaMemPrefetchAsync takes a cudaMemLocation and a flags argument instead of a device number.
# 4. cudaMemAdvise takes a cudaMemLocation instead of a device number.
#   patch-kokkos4-cuda13.sh KOKKOS_SOURCE_DIR
set -euo pipefail
k="${1:?usage: patch-kokkos4-cuda13.sh KOKKOS_SOURCE_DIR}"
[ -f "$k/bin/nvcc_wrapper" ] || { echo "patch-kokkos4-cuda13: $k is not a Kokkos source tree" >&2; exit 1; }
[ -f "$k/.qgml-cuda13" ] && exit 0
instance="$k/core/src/Cuda/Kokkos_Cuda_Instance.hpp"

# 1.
sed -i 's/^default_arch="sm_70"/default_arch="sm_80"/' "$k/bin/nvcc_wrapper"

# 2.
perl -0pi -e 's/return cudaGraphAddDependencies\(graph, from, to, numDependencies\);/#if CUDART_VERSION >= 13000\n    return cudaGraphAddDependencies(graph, from, to, nullptr, numDependencies);\n#else\n    return cudaGraphAddDependencies(graph, from, to, numDependencies);\n#endif/' \
  "$instance"

# 3.
perl -0pi -e 's/return cudaMemPrefetchAsync\(devPtr, count, dstDevice,\s*get_input_stream\(stream\)\);/#if CUDART_VERSION >= 13000\n    cudaMemLocation location{};\n    location.type = cudaMemLocationTypeDevice;\n    location.id   = dstDevice;\n    return cudaMemPrefetchAsync(devPtr, count, location, 0,\n                                get_input_stream(stream));\n#else\n    return cudaMemPrefetchAsync(devPtr, count, dstDevice,\n                                get_input_stream(stream));\n#endif/' \
  "$instance"

# 4.
perl -0pi -e 's/return cudaMemAdvise\(devPtr, count, advice, device\);/#if CUDART_VERSION >= 13000\n    cudaMemLocation location{};\n    location.type = device == cudaCpuDeviceId ? cudaMemLocationTypeHost\n                                              : cudaMemLocationTypeDevice;\n    location.id   = device == cudaCpuDeviceId ? 0 : device;\n    return cudaMemAdvise(devPtr, count, advice, location);\n#else\n    return cudaMemAdvise(devPtr, count, advice, device);\n#endif/' \
  "$instance"

grep -q 'default_arch="sm_80"' "$k/bin/nvcc_wrapper" &&
  grep -q 'from, to, nullptr, numDependencies' "$instance" &&
  grep -q 'cudaMemPrefetchAsync(devPtr, count, location, 0' "$instance" &&
  grep -q 'cudaMemAdvise(devPtr, count, advice, location)' "$instance" ||
  { echo "patch-kokkos4-cuda13: a patch did not apply; is this Kokkos 4.6.01?" >&2; exit 1; }
touch "$k/.qgml-cuda13"
