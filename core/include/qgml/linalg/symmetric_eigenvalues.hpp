// Eigenvalues of a small real symmetric D x D matrix on the device: cyclic Jacobi rotations
// (Golub & Van Loan, 4th ed., algorithm 8.5.3) with the stable rotation of section 8.5.2, in place.
// Used per point for the D x D quantum metric; D is small (the data dimension), so O(D^3) per sweep
// and a handful of sweeps is cheap.
#pragma once

#include <Kokkos_Core.hpp>

#include "qgml/common/kokkos_compat.hpp"

namespace qgml::linalg {

// a: D x D symmetric (overwritten; its diagonal ends up holding the eigenvalues), e: D (out),
// sorted descending. Returns the number of sweeps used (or max_sweeps + 1 if not converged).
template <class AView, class EView>
KOKKOS_FUNCTION int symmetric_eigenvalues_descending(const AView& a, const EView& e, int max_sweeps = 50) {
  using Real = typename EView::non_const_value_type;
  const int d = static_cast<int>(a.extent(0));
  int sweep = 0;
  for (; sweep < max_sweeps; ++sweep) {
    Real off = 0, total = 0;
    for (int i = 0; i < d; ++i)
      for (int j = 0; j < d; ++j) {
        const Real x = a(i, j) * a(i, j);
        total += x;
        if (i != j) off += x;
      }
    // Converged when the off-diagonal mass is at rounding level: (eps |A|)^2 cannot be undercut, so
    // float stops at 1e-13 (eps^2 ~ 1.4e-14); a smaller bound would run every sweep to max_sweeps.
    const Real tolerance = sizeof(Real) == sizeof(float) ? Real(1e-13) : Real(1e-30);
    if (off <= tolerance * total || off == Real(0)) break;
    for (int p = 0; p < d; ++p)
      for (int q = p + 1; q < d; ++q) {
        const Real apq = a(p, q);
        if (apq == Real(0)) continue;
        // Zero a(p, q): tan(theta) = t solves t^2 + 2 tau t - 1 = 0, tau = (a_qq - a_pp) / (2 a_pq).
        const Real tau = (a(q, q) - a(p, p)) / (Real(2) * apq);
        const Real t = (tau >= Real(0) ? Real(1) : Real(-1)) / (math::fabs(tau) + math::sqrt(Real(1) + tau * tau));
        const Real c = Real(1) / math::sqrt(Real(1) + t * t), s = t * c;
        for (int k = 0; k < d; ++k) {
          const Real akp = a(k, p), akq = a(k, q);
          a(k, p) = c * akp - s * akq;
          a(k, q) = s * akp + c * akq;
        }
        for (int k = 0; k < d; ++k) {
          const Real apk = a(p, k), aqk = a(q, k);
          a(p, k) = c * apk - s * aqk;
          a(q, k) = s * apk + c * aqk;
        }
      }
  }
  for (int i = 0; i < d; ++i) e(i) = a(i, i);
  for (int i = 1; i < d; ++i) {  // insertion sort, descending
    const Real x = e(i);
    int j = i - 1;
    while (j >= 0 && e(j) < x) {
      e(j + 1) = e(j);
      --j;
    }
    e(j + 1) = x;
  }
  return sweep;
}

}  // namespace qgml::linalg
