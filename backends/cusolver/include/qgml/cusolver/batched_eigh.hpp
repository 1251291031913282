// cuSOLVER backend of the batched Hermitian eigensolver: the same contract as qgml::batched_eigh and
// qgml::lapacke::batched_eigh (eigenvalues ascending, row j of V the eigenvector of w_j, EighInfo
// codes), computed by cuSOLVER's batched Jacobi (zheevjBatched / cheevjBatched) for N <= 32 and by
// divide and conquer (zheevd / cheevd), one call per matrix spread over streams, above; or, on request,
// by the 64-bit batched solver cusolverDnXsyevBatched (CUDA >= 12.6) for every N it accepts. The vendor
// baseline the GPU benchmarks compare with (the faster of its methods).
#pragma once

#include <Kokkos_Core.hpp>

#if !defined(KOKKOS_ENABLE_CUDA)
#error "qgml/cusolver/batched_eigh.hpp needs Kokkos with CUDA enabled"
#endif

#include <cstddef>
#include <memory>
#include <string>
#include <type_traits>

#include "qgml/common/error.hpp"
#include "qgml/common/kokkos_compat.hpp"
#include "qgml/common/types.hpp"
#include "qgml/linalg/hermitian_eigensolver.hpp"

namespace qgml::cusolver {

// Largest N cuSOLVER's batched Jacobi accepts.
inline constexpr int jacobi_batched_max_n = 32;

enum class EighMethod {
  automatic,       // jacobi_batched for N <= jacobi_batched_max_n, heevd above
  jacobi_batched,  // cusolverDn{Z,C}heevjBatched: one call per batch (N <= jacobi_batched_max_n)
  heevd,           // cusolverDn{Z,C}heevd: one call per matrix, round-robin over `streams` streams
  syev_batched,    // cusolverDnXsyevBatched: one call per batch, any N cuSOLVER accepts (CUDA >= 12.6)
};

// Whether this build's cuSOLVER has cusolverDnXsyevBatched (CUDA >= 12.6).
bool syev_batched_available();

struct EighOptions {
  EighMethod method = EighMethod::automatic;
  // heevd: matrices in flight at once, each stream with its own handle and workspace; 1 runs every call
  // on the caller's stream.
  int streams = 4;
  // jacobi_batched: convergence tolerance and sweep limit; 0 keeps cuSOLVER's defaults (machine
  // accuracy, 100 sweeps). cuSOLVER does not report a matrix the sweep limit left unconverged (its info
  // stays 0; seen on an H100, CUDA 13.0), so a limit below the default trades accuracy silently.
  double tolerance = 0;
  int max_sweeps = 0;
  // syev_batched: the largest device workspace one cusolverDnXsyevBatched call may use; a batch that
  // asks for more is solved in slices that fit (its workspace grows with the batch: 37 GB for N = 32
  // and 25000 matrices on an H200, CUDA 13.0).
  std::size_t syev_workspace_bytes = std::size_t(2) << 30;
};

// The method `requested` resolves to for N (automatic: by N; jacobi_batched above its limit: an error).
EighMethod resolve_method(EighMethod requested, int n);

// Owns the cusolverDn handles, the Jacobi parameters (syevjInfo_t), the streams and events of the heevd
// path and the device workspace, all created once for (N, max_batch). solve() allocates nothing,
// launches on the given execution-space instance and never synchronizes the host; batches larger than
// max_batch are solved in slices of max_batch. The destructor waits for the work it launched.
template <class Real>
class BatchedEigh {
  static_assert(is_supported_real_v<Real>, "qgml::cusolver::BatchedEigh: Real must be double or float");

 public:
  BatchedEigh(int n, int max_batch, const EighOptions& options = {});
  ~BatchedEigh();
  BatchedEigh(BatchedEigh&&) noexcept;
  BatchedEigh& operator=(BatchedEigh&&) noexcept;
  BatchedEigh(const BatchedEigh&) = delete;
  BatchedEigh& operator=(const BatchedEigh&) = delete;

  int n() const;
  int max_batch() const;
  EighMethod method() const;  // resolved: jacobi_batched, heevd or syev_batched
  int streams() const;        // streams the heevd path uses (1: the caller's)
  std::size_t workspace_bytes() const;

  // h: T x N x N Hermitian (read only), w: T x N, V: T x N x N with V(t, j, i) = component i of the
  // eigenvector of w(t, j), info: T (linalg::EighInfo codes; eigh_non_finite_input sets w and V to NaN,
  // eigh_not_converged leaves them invalid). Rows contiguous (LayoutRight), in memory CUDA kernels
  // reach. Launches on exec's stream and does not fence.
  template <class HView, class WView, class VView, class InfoView>
  void solve(const Kokkos::Cuda& exec, const HView& h, const WView& w, const VView& v, const InfoView& info) {
    static_assert(HView::rank == 3 && VView::rank == 3 && WView::rank == 2 && InfoView::rank == 1,
                  "qgml::cusolver: expected H (T x N x N), w (T x N), V (T x N x N), info (T)");
    static_assert(std::is_same_v<typename HView::non_const_value_type, complex_t<Real>> &&
                      std::is_same_v<typename VView::value_type, complex_t<Real>> &&
                      std::is_same_v<typename WView::value_type, Real> &&
                      std::is_same_v<typename InfoView::value_type, int>,
                  "qgml::cusolver: H and V must hold Kokkos::complex<Real>, w Real and info int (V, w and "
                  "info writable)");
    static_assert(Kokkos::SpaceAccessibility<Kokkos::Cuda, typename HView::memory_space>::accessible &&
                      Kokkos::SpaceAccessibility<Kokkos::Cuda, typename WView::memory_space>::accessible &&
                      Kokkos::SpaceAccessibility<Kokkos::Cuda, typename VView::memory_space>::accessible &&
                      Kokkos::SpaceAccessibility<Kokkos::Cuda, typename InfoView::memory_space>::accessible,
                  "qgml::cusolver: H, w, V and info must be in memory CUDA kernels can access");
    const int count = static_cast<int>(h.extent(0));
    const int nn = n();
    const std::string shape = " for H of " + std::to_string(count) + " x " + std::to_string(h.extent(1)) + " x " +
                              std::to_string(h.extent(2)) + " and a solver for N = " + std::to_string(nn);
    QGML_REQUIRE(int(h.extent(1)) == nn && int(h.extent(2)) == nn && int(w.extent(0)) >= count &&
                     int(w.extent(1)) == nn && int(v.extent(0)) >= count && int(v.extent(1)) == nn &&
                     int(v.extent(2)) == nn && int(info.extent(0)) >= count,
                 "qgml::cusolver::BatchedEigh: expected H (T x N x N), w (T x N), V (T x N x N) and info (T)" + shape);
    const std::size_t nsq = std::size_t(nn) * nn;
    QGML_REQUIRE(h.stride(2) == 1 && std::size_t(h.stride(1)) == std::size_t(nn) && std::size_t(h.stride(0)) == nsq &&
                     v.stride(2) == 1 && std::size_t(v.stride(1)) == std::size_t(nn) &&
                     std::size_t(v.stride(0)) == nsq && w.stride(1) == 1 &&
                     std::size_t(w.stride(0)) == std::size_t(nn) && info.stride(0) == 1,
                 "qgml::cusolver::BatchedEigh: H, w, V and info must be contiguous (LayoutRight)" + shape);
    if (count == 0) return;
    launch(exec, count, h.data(), w.data(), v.data(), info.data());
  }

 private:
  void launch(const Kokkos::Cuda& exec, int count, const complex_t<Real>* h, Real* w, complex_t<Real>* v, int* info);

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

extern template class BatchedEigh<double>;
extern template class BatchedEigh<float>;

// One call: a solver for (N, T) is created, solves, and is released after exec is fenced (keep a
// BatchedEigh to solve repeatedly without allocating).
template <class HView, class WView, class VView, class InfoView>
void batched_eigh(const Kokkos::Cuda& exec, const HView& h, const WView& w, const VView& v, const InfoView& info,
                  const EighOptions& options = {}) {
  using Real = typename WView::non_const_value_type;
  if (h.extent(0) == 0) return;
  BatchedEigh<Real> solver(static_cast<int>(h.extent(1)), static_cast<int>(h.extent(0)), options);
  solver.solve(exec, h, w, v, info);
  qgml::fence(exec, "qgml::cusolver::batched_eigh: the workspace is released on return");
}

}  // namespace qgml::cusolver
