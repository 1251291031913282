// Where qgml hands a dense product to KokkosBlas::gemm (KokkosKernels: OpenBLAS on host spaces, cuBLAS
// on CUDA where those TPLs are on) instead of its own fixed-order kernel. Both users (the batch
// gradient's Y = W^H U in train/loss_gradient_team.hpp, the square sum S = 1/2 sum_k A_k^2 in
// model/matrix_configuration.hpp) need the product to repeat bit for bit on one backend and to run on
// the caller's execution-space instance.
#pragma once

#include <Kokkos_Core.hpp>

#include <type_traits>

#include "qgml/common/types.hpp"

#if defined(QGML_HAVE_KOKKOSKERNELS)
#include <KokkosBlas3_gemm.hpp>
#endif

namespace qgml::detail {

// KokkosKernels' cuBLAS gemm computes C = A^H B with fewer than this many entries in a LayoutRight C by
// its dot-product kernel, which adds partial dots with atomics: not reproducible bit for bit.
constexpr long long kokkoskernels_dot_gemm_entries = 100;

// Whether KokkosBlas::gemm may compute a product with `entries` entries in C on exec: with KokkosKernels,
// on host spaces (OpenBLAS where its TPL is on; its threads split C's rows and columns, never the inner
// dimension, so the result does not depend on their number), and on devices when exec is the default
// instance (KokkosKernels 3.x's gemm takes no execution-space instance and runs on the default one) and
// the product is large enough for cuBLAS itself (kokkoskernels_dot_gemm_entries).
template <class ExecSpace>
bool blas_gemm_usable(const ExecSpace& exec, long long entries) {
#if defined(QGML_HAVE_KOKKOSKERNELS)
  if constexpr (is_host_space_v<ExecSpace>) {
    (void)exec;
    (void)entries;
    return true;
  } else {
#if defined(KOKKOS_ENABLE_CUDA)
    if constexpr (std::is_same_v<ExecSpace, Kokkos::Cuda>)
      return entries >= kokkoskernels_dot_gemm_entries && exec.cuda_stream() == ExecSpace().cuda_stream();
#endif
    (void)exec;
    (void)entries;
    return false;
  }
#else
  (void)exec;
  (void)entries;
  return false;
#endif
}

// From this N on, the products of a configuration's N x N matrices formed once per optimiser step (the
// square sum S = 1/2 sum_k A_k^2 in model/matrix_configuration.hpp, the commutators and their gradient in
// train/commutator_penalty.hpp) go to KokkosBlas::gemm where blas_gemm_usable; below it qgml's kernels
// (one thread per entry) are faster, the GEMM calls' overhead being most of the time; near N = 8 the two
// are close, and above it GEMM's lead grows with N, in float as in double (`qgml_bench_products`, D = 3;
// perf/NOTES.md, "Per-step matrix products by GEMM: the square sum and the commutator penalty", and the
// medians per call in "Measurements moved out of code comments (2026-12-03)").
constexpr int configuration_gemm_min_n = 8;

// Whether the per-step products of N x N configuration matrices run through KokkosBlas::gemm on exec.
template <class ExecSpace>
bool configuration_products_use_gemm(const ExecSpace& exec, int n) {
  return n >= configuration_gemm_min_n && blas_gemm_usable(exec, (long long)n * n);
}

}  // namespace qgml::detail
