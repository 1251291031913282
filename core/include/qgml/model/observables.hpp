// Ground-state observables per point (docs/math.md 2.2, 2.3), from a batched eigendecomposition of H(x):
//   E_0 = w_0,  psi_0 = row 0 of V,  xbar, sigma^2 and d^2 = |x - xbar|^2 as in ground_state_terms.hpp,
//   gap = E_1 - E_0,  degenerate as in degeneracy.hpp.
// Identity: 2 E_0 = d^2 + sigma^2.
#pragma once

#include <Kokkos_Core.hpp>

#include <limits>
#include <string>

#include "qgml/common/error.hpp"
#include "qgml/ground_state/degeneracy.hpp"
#include "qgml/ground_state/ground_state_terms.hpp"
#include "qgml/model/matrix_configuration.hpp"

namespace qgml {

template <class Real, class MemorySpace>
struct GroundStateObservables {
  RealVector<Real, MemorySpace> energy;     // E_0
  RealMatrix<Real, MemorySpace> xbar;       // T x D
  RealVector<Real, MemorySpace> sigma2;     // sigma^2
  RealVector<Real, MemorySpace> distance2;  // d^2
  RealVector<Real, MemorySpace> gap;        // E_1 - E_0 (the largest finite Real when N = 1)
  IntVector<MemorySpace> degenerate;        // 1 where the ground state is (nearly) degenerate

  GroundStateObservables() = default;
  GroundStateObservables(int count, int d)
      : energy("qgml::GroundStateObservables::energy", count),
        xbar("qgml::GroundStateObservables::xbar", count, d),
        sigma2("qgml::GroundStateObservables::sigma2", count),
        distance2("qgml::GroundStateObservables::distance2", count),
        gap("qgml::GroundStateObservables::gap", count),
        degenerate("qgml::GroundStateObservables::degenerate", count) {}
  int size() const { return static_cast<int>(energy.extent(0)); }
};

namespace detail {

// Kernels are named functors, not device lambdas: docs/architecture.md "Host execution spaces in a CUDA build".
// For point t: E_0 = w_0, xbar, sigma^2, d^2 from psi_0 = row 0 of V, gap = E_1 - E_0 and degenerate.
template <class Real, class MemorySpace, class PointsView, class WView, class VView>
struct GroundStateObservablesPerPoint {
  MatrixStack<Real, MemorySpace> a;
  VView v;
  PointsView points;
  GroundStateObservables<Real, MemorySpace> o;
  WView w;
  int n = 0;
  Real big = 0;
  Real degeneracy_tolerance = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const int t) const {
    const auto terms =
        ground_state_terms<Real>(a, Kokkos::subview(v, t, 0, Kokkos::ALL), Kokkos::subview(points, t, Kokkos::ALL),
                                 Kokkos::subview(o.xbar, t, Kokkos::ALL), IgnoreProducts());
    const Real e0 = w(t, 0);
    o.energy(t) = e0;
    o.sigma2(t) = terms.sigma2;
    o.distance2(t) = terms.distance2;
    const Real gap = n > 1 ? w(t, 1) - e0 : big;
    o.gap(t) = gap;
    o.degenerate(t) = ground_state_degenerate(n, e0, n > 1 ? w(t, 1) : e0, w(t, n - 1), degeneracy_tolerance) ? 1 : 0;
  }
};

}  // namespace detail

// Fills out for the first points.extent(0) points from their eigendecomposition (w, v).
template <class Real, class ExecSpace, class PointsView, class WView, class VView>
void compute_ground_state_observables(const ExecSpace& exec, const MatrixConfiguration<Real, ExecSpace>& config,
                                      const PointsView& points, const WView& w, const VView& v,
                                      const GroundStateObservables<Real, typename ExecSpace::memory_space>& out,
                                      Real degeneracy_tolerance = default_degeneracy_tolerance<Real>()) {
  const int count = static_cast<int>(points.extent(0));
  const int d = config.dimension();
  const int n = config.matrix_size();
  QGML_REQUIRE(int(points.extent(1)) == d, "qgml::compute_ground_state_observables: points have " +
                                               std::to_string(points.extent(1)) +
                                               " coordinates, D = " + std::to_string(d));
  QGML_REQUIRE(out.size() >= count && int(out.xbar.extent(1)) == d,
               "qgml::compute_ground_state_observables: output holds fewer points than the batch");
  const auto a = config.matrices();
  const auto o = out;
  const Real big = std::numeric_limits<Real>::max();
  Kokkos::parallel_for(
      "qgml::compute_ground_state_observables", Kokkos::RangePolicy<ExecSpace>(exec, 0, count),
      detail::GroundStateObservablesPerPoint<Real, typename ExecSpace::memory_space, PointsView, WView, VView>{
          a, v, points, o, w, n, big, degeneracy_tolerance});
}

}  // namespace qgml
