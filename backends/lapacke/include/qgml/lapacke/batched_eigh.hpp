// Host LAPACKE backend of the batched Hermitian eigensolver: the same contract as qgml::batched_eigh
// (eigenvalues ascending, row j of V the eigenvector of w_j, EighInfo codes), computed by LAPACK's
// divide-and-conquer zheevd / cheevd, one call per point inside the host space's parallel loop with
// OpenBLAS kept single-threaded. The reference in tests and a competitor in benchmarks.
#pragma once

#include <Kokkos_Core.hpp>

#include <complex>
#include <string>
#include <type_traits>
#include <vector>

#include "qgml/common/error.hpp"
#include "qgml/linalg/batched_eigh.hpp"

namespace qgml::lapacke {

// Workspace of one LAPACK call sequence (one per host thread), sized for N.
template <class Real>
struct LapackeEighWorkspace {
  explicit LapackeEighWorkspace(int n);
  int n;
  std::vector<std::complex<Real>> a, work;
  std::vector<Real> rwork;
  std::vector<int> iwork;
};

// One matrix: a (row-major N x N Hermitian, read only), w (N), v (row-major, row j = eigenvector j).
// Returns an EighInfo code.
template <class Real>
int lapacke_eigh(int n, const std::complex<Real>* a, Real* w, std::complex<Real>* v, LapackeEighWorkspace<Real>& ws);

// Keeps OpenBLAS from starting its own threads inside our parallel loop (oversubscription); returns
// the previous thread count, which lapacke_restore_blas_threads puts back.
int lapacke_use_single_threaded_blas();
void lapacke_restore_blas_threads(int threads);

template <class ExecSpace, class HView, class WView, class VView, class InfoView>
void batched_eigh(const ExecSpace& exec, const HView& h, const WView& w, const VView& v, const InfoView& info) {
  using Real = typename WView::non_const_value_type;
  static_assert(is_host_space_v<ExecSpace>, "qgml::lapacke::batched_eigh runs on host execution spaces only");
  static_assert(std::is_same_v<typename HView::array_layout, Kokkos::LayoutRight> &&
                    std::is_same_v<typename VView::array_layout, Kokkos::LayoutRight>,
                "qgml::lapacke::batched_eigh: H and V must be LayoutRight");
  const int count = static_cast<int>(h.extent(0));
  const int n = static_cast<int>(h.extent(1));
  QGML_REQUIRE(int(h.extent(2)) == n && int(w.extent(1)) == n && int(v.extent(1)) == n && int(v.extent(2)) == n &&
                   int(w.extent(0)) >= count && int(v.extent(0)) >= count && int(info.extent(0)) >= count,
               "qgml::lapacke::batched_eigh: expected H (T x N x N), w (T x N), V (T x N x N), info (T)");
  if (count == 0) return;
  const int blas_threads = lapacke_use_single_threaded_blas();
  const int chunks = std::min(count, std::max(1, int(exec.concurrency())));
  std::vector<LapackeEighWorkspace<Real>> workspaces;
  workspaces.reserve(chunks);
  for (int c = 0; c < chunks; ++c) workspaces.emplace_back(n);
  auto* ws = workspaces.data();
  Kokkos::parallel_for(
      "qgml::lapacke::batched_eigh", Kokkos::RangePolicy<ExecSpace>(exec, 0, chunks), [=](const int c) {
        const int begin = int(std::int64_t(count) * c / chunks);
        const int end = int(std::int64_t(count) * (c + 1) / chunks);
        for (int t = begin; t < end; ++t) {
          info(t) = lapacke_eigh<Real>(n, reinterpret_cast<const std::complex<Real>*>(&h(t, 0, 0)), &w(t, 0),
                                       reinterpret_cast<std::complex<Real>*>(&v(t, 0, 0)), ws[c]);
        }
      });
  qgml::fence(exec, "qgml::lapacke::batched_eigh: workspaces are released on return");
  lapacke_restore_blas_threads(blas_threads);
}

}  // namespace qgml::lapacke
