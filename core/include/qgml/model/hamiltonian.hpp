// Batched error Hamiltonians H(x) = 1/2 sum_k (A_k - x_k I)^2 = S - sum_k x_k A_k + 1/2 |x|^2 I (docs/math.md 2.1).
#pragma once

#include <cstddef>
#include <string>
#include <type_traits>

#include "qgml/common/error.hpp"
#include "qgml/model/matrix_configuration.hpp"

namespace qgml {

namespace detail {

// Kernels are named functors, not device lambdas: docs/architecture.md "Host execution spaces in a CUDA build".
// H(t) = S - sum_k x_k A_k + 1/2 |x|^2 I: one point t per iteration on CPUs (PerPoint), one entry (t, i, j)
// per thread on GPUs (PerEntry).
template <class Real, class ExecSpace, class PointsView, class HamiltonianView>
struct BuildHamiltonians {
  struct PerPoint {};
  struct PerEntry {};
  using complex_type = complex_t<Real>;
  PointsView points;
  typename MatrixConfiguration<Real, ExecSpace>::matrices_type a;
  typename MatrixConfiguration<Real, ExecSpace>::matrix_type s;
  HamiltonianView h;
  int d = 0, n = 0;

  KOKKOS_INLINE_FUNCTION void operator()(PerPoint, const int t) const {
    Real x2 = 0;
    for (int k = 0; k < d; ++k) x2 += points(t, k) * points(t, k);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        complex_type v = s(i, j);
        for (int k = 0; k < d; ++k) v -= points(t, k) * a(k, i, j);
        h(t, i, j) = v;
      }
    for (int i = 0; i < n; ++i) h(t, i, i) += Real(0.5) * x2;
  }

  KOKKOS_INLINE_FUNCTION void operator()(PerEntry, const std::size_t tij) const {
    const int t = static_cast<int>(tij / (std::size_t(n) * n));
    const int i = static_cast<int>((tij / n) % n);
    const int j = static_cast<int>(tij % n);
    complex_type v = s(i, j);
    Real x2 = 0;
    for (int k = 0; k < d; ++k) {
      const Real xk = points(t, k);
      v -= xk * a(k, i, j);
      x2 += xk * xk;
    }
    if (i == j) v += Real(0.5) * x2;
    h(t, i, j) = v;
  }
};

}  // namespace detail

// H(t, :, :) = H(points(t, :)) for t < points.extent(0). points is T x D, H is at least T x N x N.
// Uses S from the configuration's last update_square_sum(). O(D N^2) per point.
template <class Real, class ExecSpace, class PointsView, class HamiltonianView>
void build_hamiltonians(const ExecSpace& exec, const MatrixConfiguration<Real, ExecSpace>& config,
                        const PointsView& points, const HamiltonianView& h) {
  static_assert(Kokkos::is_view<PointsView>::value && PointsView::rank == 2, "points must be a rank-2 View (T x D)");
  static_assert(Kokkos::is_view<HamiltonianView>::value && HamiltonianView::rank == 3,
                "H must be a rank-3 View (T x N x N)");
  const int d = config.dimension();
  const int n = config.matrix_size();
  const int t_count = static_cast<int>(points.extent(0));
  QGML_REQUIRE(int(points.extent(1)) == d, "qgml::build_hamiltonians: points have " + std::to_string(points.extent(1)) +
                                               " coordinates but the configuration has D = " + std::to_string(d));
  QGML_REQUIRE(int(h.extent(0)) >= t_count && int(h.extent(1)) == n && int(h.extent(2)) == n,
               "qgml::build_hamiltonians: H must be at least T x N x N");
  using kernel_type = detail::BuildHamiltonians<Real, ExecSpace, PointsView, HamiltonianView>;
  const kernel_type f{points, config.matrices(), config.square_sum(), h, d, n};
  if constexpr (std::is_same_v<typename ExecSpace::memory_space, Kokkos::HostSpace>) {
    // CPUs: one point per iteration, the N x N loop contiguous and free of index arithmetic.
    using policy_type = Kokkos::RangePolicy<ExecSpace, typename kernel_type::PerPoint>;
    Kokkos::parallel_for("qgml::build_hamiltonians", policy_type(exec, 0, t_count), f);
  } else {
    // GPUs: one entry per thread, coalesced over (i, j).
    using policy_type = Kokkos::RangePolicy<ExecSpace, typename kernel_type::PerEntry>;
    Kokkos::parallel_for("qgml::build_hamiltonians", policy_type(exec, 0, std::size_t(t_count) * n * n), f);
  }
}

}  // namespace qgml
