// In-process Kokkos Tools callbacks that record allocations, deep copies, kernel and region labels:
// the residency contracts (no allocation and no host copy in a steady-state loop, every label with the
// "qgml::" prefix) are checked through them.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <set>
#include <string>

namespace qgml::test {

struct Recorder {
  int allocations = 0;
  std::uint64_t allocated_bytes = 0;
  int deep_copies = 0;
  std::set<std::string> allocation_labels, kernel_labels, region_labels;
  void reset() { *this = Recorder{}; }
};
inline Recorder recorder;

inline void on_allocate(Kokkos::Profiling::SpaceHandle, const char* label, const void*, std::uint64_t size) {
  ++recorder.allocations;
  recorder.allocated_bytes += size;
  recorder.allocation_labels.insert(label);
}
inline void on_deep_copy(Kokkos::Profiling::SpaceHandle, const char*, const void*, Kokkos::Profiling::SpaceHandle,
                         const char*, const void*, std::uint64_t) {
  ++recorder.deep_copies;
}
inline void on_kernel(const char* name, std::uint32_t, std::uint64_t* id) {
  recorder.kernel_labels.insert(name);
  *id = 0;
}
inline void on_region(const char* name) { recorder.region_labels.insert(name); }

// Installs the callbacks for the lifetime of the object.
struct ScopedCallbacks {
  ScopedCallbacks() {
    namespace T = Kokkos::Tools::Experimental;
    T::set_allocate_data_callback(on_allocate);
    T::set_begin_deep_copy_callback(on_deep_copy);
    T::set_begin_parallel_for_callback(on_kernel);
    T::set_begin_parallel_reduce_callback(on_kernel);
    T::set_begin_parallel_scan_callback(on_kernel);
    T::set_push_region_callback(on_region);
  }
  ~ScopedCallbacks() {
    namespace T = Kokkos::Tools::Experimental;
    T::set_allocate_data_callback(nullptr);
    T::set_begin_deep_copy_callback(nullptr);
    T::set_begin_parallel_for_callback(nullptr);
    T::set_begin_parallel_reduce_callback(nullptr);
    T::set_begin_parallel_scan_callback(nullptr);
    T::set_push_region_callback(nullptr);
  }
};

inline bool has_prefix(const std::string& s) { return s.rfind("qgml::", 0) == 0; }
// Ours, or KokkosKernels' own label of the GEMM we call inside the qgml::reduction region
// (KokkosBlas::gemm names its profiling region and, without a BLAS TPL, its kernels; on CUDA a product
// with a small C and a long inner dimension, Y = W^H U, runs KokkosKernels' dot-product-based GEMM).
inline bool ours_or_gemm(const std::string& s) {
  return has_prefix(s) || s.rfind("KokkosBlas::gemm", 0) == 0 || s == "Initialize C for Dot Product Based GEMM" ||
         s == "Perform Dot Product Based GEMM";
}

}  // namespace qgml::test
