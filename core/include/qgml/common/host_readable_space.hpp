// host_readable_space_t: the memory space of data sets larger than device memory (Trainer's DataSpace).
#pragma once

#include <Kokkos_Core.hpp>

#include <type_traits>

namespace qgml {

// Host memory an execution space can read directly: pinned host memory for CUDA (kernels read it over
// the host link), the space's own memory on CPUs. The DataSpace for data sets larger than device memory.
#ifdef KOKKOS_ENABLE_CUDA
template <class ExecSpace>
using host_readable_space_t = std::conditional_t<std::is_same_v<ExecSpace, Kokkos::Cuda>, Kokkos::CudaHostPinnedSpace,
                                                 typename ExecSpace::memory_space>;
#else
template <class ExecSpace>
using host_readable_space_t = typename ExecSpace::memory_space;
#endif

}  // namespace qgml
