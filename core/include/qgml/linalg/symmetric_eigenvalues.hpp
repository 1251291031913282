// Eigenvalues of a small real symmetric D x D matrix on the device: cyclic Jacobi rotations
// (Golub & Van Loan, 4th ed., algorithm 8.5.3) with the stable rotation of section 8.5.2
// (jacobi_rotation.hpp), in place.
// Used per point for the D x D quantum metric; D is small (the data dimension), so O(D^3) per sweep
// and a handful of sweeps is cheap.
#pragma once

#include <Kokkos_Core.hpp>

#include "qgml/linalg/jacobi_rotation.hpp"

namespace qgml::linalg {

inline constexpr int symmetric_eigenvalues_max_sweeps = 50;

// Converged when the off-diagonal mass sum_{i != j} a_ij^2 is at most this times sum_ij a_ij^2, i.e. at
// rounding level: (eps |A|)^2 cannot be undercut, so float stops at 1e-13 (eps^2 ~ 1.4e-14); a smaller
// bound would run every sweep to max_sweeps.
template <class Real>
inline constexpr Real symmetric_eigenvalues_tolerance = sizeof(Real) == sizeof(float) ? Real(1e-13) : Real(1e-30);

namespace detail {

// No accumulation of the rotations (eigenvalues only).
struct NoRotationRecord {
  template <class Rotation>
  KOKKOS_INLINE_FUNCTION void operator()(int, int, const Rotation&) const {}
};

}  // namespace detail

// The cyclic Jacobi sweeps on a (D x D symmetric, overwritten; its diagonal ends up holding the
// eigenvalues), each rotation J of (p, q) also handed to record(p, q, J). Returns the number of sweeps
// used, 0 .. max_sweeps, when the off-diagonal part reached rounding level, and max_sweeps + 1 when it
// did not within max_sweeps sweeps.
template <class Real, class AView, class Record>
KOKKOS_FUNCTION int symmetric_jacobi_sweeps(const AView& a, const Record& record, int max_sweeps) {
  const int d = static_cast<int>(a.extent(0));
  int sweep = 0;
  for (;; ++sweep) {
    Real off = 0, total = 0;
    for (int i = 0; i < d; ++i)
      for (int j = 0; j < d; ++j) {
        const Real x = a(i, j) * a(i, j);
        total += x;
        if (i != j) off += x;
      }
    if (off <= symmetric_eigenvalues_tolerance<Real> * total || off == Real(0)) break;
    if (sweep == max_sweeps) return max_sweeps + 1;
    for (int p = 0; p < d; ++p)
      for (int q = p + 1; q < d; ++q)
        if (a(p, q) != Real(0)) {
          const auto rot = jacobi_rotation(a(p, p), a(q, q), Real(a(p, q)));
          jacobi_rotate(a, d, p, q, rot);
          record(p, q, rot);
        }
  }
  return sweep;
}

// a: D x D symmetric (overwritten; its diagonal ends up holding the eigenvalues), e: D (out),
// sorted descending. Returns what symmetric_jacobi_sweeps returns (on max_sweeps + 1, e holds the
// diagonal after the last sweep, not the eigenvalues).
template <class AView, class EView>
KOKKOS_FUNCTION int symmetric_eigenvalues_descending(const AView& a, const EView& e,
                                                     int max_sweeps = symmetric_eigenvalues_max_sweeps) {
  using Real = typename EView::non_const_value_type;
  const int d = static_cast<int>(a.extent(0));
  const int sweep = symmetric_jacobi_sweeps<Real>(a, detail::NoRotationRecord{}, max_sweeps);
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
