// How much memory a run may use: the available memory of the execution space's memory (free device
// memory on CUDA; on hosts MemAvailable, or the remaining cgroup or address-space limit where one is
// lower). The one budget that qgml train's pre-flight check and qgml tune both use.
#pragma once

#include <Kokkos_Core.hpp>

#ifdef KOKKOS_ENABLE_CUDA
#include <cuda_runtime_api.h>
#endif

#include <cstddef>
#include <string>
#include <type_traits>

#include "qgml/common/error.hpp"

namespace qgml {

struct MemoryBudget {
  double available = -1;  // bytes; < 0: unknown
  double bytes = -1;      // memory_budget_share of available; < 0: unknown
  std::string source;     // where `available` came from, for messages
  bool known() const { return available >= 0; }
};

// Bytes Kokkos allocates for a View of `count` elements of `size` bytes: the span rounded up to a
// multiple of 8 bytes.
constexpr std::size_t view_allocation_bytes(std::size_t count, std::size_t size) { return (count * size + 7) / 8 * 8; }

// The share of the available memory a run may fill.
inline constexpr double memory_budget_share = 0.9;

// Host memory: MemAvailable (/proc/meminfo; else the free pages), lowered to the remaining cgroup
// memory limit (v2, else v1) and to the remaining address-space limit (RLIMIT_AS) when smaller.
MemoryBudget host_memory_budget();

// The budget of ExecSpace's memory: free device memory on CUDA, host_memory_budget() elsewhere.
template <class ExecSpace>
MemoryBudget memory_budget(const ExecSpace&) {
#ifdef KOKKOS_ENABLE_CUDA
  if constexpr (std::is_same_v<ExecSpace, Kokkos::Cuda>) {
    std::size_t free = 0, total = 0;
    const cudaError_t e = cudaMemGetInfo(&free, &total);
    if (e != cudaSuccess) return MemoryBudget{-1, -1, std::string("cudaMemGetInfo failed: ") + cudaGetErrorString(e)};
    MemoryBudget b;
    b.available = double(free);
    b.bytes = memory_budget_share * b.available;
    b.source = "free device memory of " + std::to_string(total >> 20) + " MiB";
    return b;
  }
#endif
  return host_memory_budget();
}

}  // namespace qgml
