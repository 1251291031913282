// When a ground state counts as degenerate, and the regularised reduced resolvent (docs/math.md 4.7).
// One definition shared by the observables, the gradient and the metric.
#pragma once

#include <Kokkos_Core.hpp>

#include <type_traits>

namespace qgml {

// Default relative tolerance for "degenerate" and relative regulariser eta: 1e-8 in double, 1e-4 in
// float (docs/math.md 4.7).
template <class Real>
constexpr Real default_degeneracy_tolerance() {
  return std::is_same_v<Real, float> ? Real(1e-4) : Real(1e-8);
}

// Energy scale of a spectrum E_0 <= ... <= E_{N-1}: max(E_{N-1} - E_0, 1).
template <class Real>
KOKKOS_INLINE_FUNCTION Real spectral_scale(Real e0, Real e_max) {
  const Real spread = e_max - e0;
  return spread > Real(1) ? spread : Real(1);
}

// E_1 - E_0 <= tol * spectral_scale (never for N = 1).
template <class Real>
KOKKOS_INLINE_FUNCTION bool ground_state_degenerate(int n, Real e0, Real e1, Real e_max, Real tol) {
  return n > 1 && (e1 - e0) <= tol * spectral_scale(e0, e_max);
}

// The regularised 1 / g of the reduced resolvent: g / (g^2 + eta^2), and 0 where both vanish.
template <class Real>
KOKKOS_INLINE_FUNCTION Real regularized_inverse_gap(Real g, Real eta) {
  const Real denominator = g * g + eta * eta;
  return denominator > Real(0) ? g / denominator : Real(0);
}

// The relative regulariser and the degeneracy tolerance of settings (LossSettings, GeometrySettings) in
// precision Real: their defaults when negative.
template <class Real, class Settings>
Real degeneracy_eta(const Settings& s) {
  return Real(s.degeneracy_eta >= 0 ? s.degeneracy_eta : default_degeneracy_tolerance<Real>());
}
template <class Real, class Settings>
Real degeneracy_tolerance(const Settings& s) {
  return Real(s.degeneracy_tolerance >= 0 ? s.degeneracy_tolerance : default_degeneracy_tolerance<Real>());
}

}  // namespace qgml
