// Eigenvalues and eigenvectors of a small real symmetric D x D matrix on the device: the cyclic Jacobi
// rotations of symmetric_eigenvalues.hpp (Golub & Van Loan, 4th ed., algorithm 8.5.3) with the
// rotations accumulated, V <- V J, so that A = V diag(e) V^T.
// Used per point for the eigenvectors of the D x D quantum metric (geometry/tangent_spread.hpp).
#pragma once

#include <Kokkos_Core.hpp>

#include "qgml/linalg/jacobi_rotation.hpp"
#include "qgml/linalg/symmetric_eigenvalues.hpp"

namespace qgml::linalg {

namespace detail {

// V <- V J for each rotation of the sweeps.
template <class VView>
struct RotationAccumulator {
  VView v;
  int d;
  template <class Rotation>
  KOKKOS_INLINE_FUNCTION void operator()(int p, int q, const Rotation& rot) const {
    for (int k = 0; k < d; ++k) rot.apply_right(v(k, p), v(k, q));
  }
};

}  // namespace detail

// a: D x D symmetric (overwritten), v: D x D (out: column j the eigenvector of e(j)), e: D (out),
// order: D ints (work); eigenpairs sorted by descending eigenvalue. Returns the sweeps used as
// symmetric_eigenvalues_descending does (max_sweeps + 1 when the off-diagonal part did not reach
// rounding level; e and v then hold the last sweep's diagonal and rotations).
template <class AView, class VView, class EView, class OrderView>
KOKKOS_FUNCTION int symmetric_eigensystem_descending(const AView& a, const VView& v, const EView& e,
                                                     const OrderView& order,
                                                     int max_sweeps = symmetric_eigenvalues_max_sweeps) {
  using Real = typename EView::non_const_value_type;
  const int d = static_cast<int>(a.extent(0));
  for (int i = 0; i < d; ++i)
    for (int j = 0; j < d; ++j) v(i, j) = i == j ? Real(1) : Real(0);
  const int sweep = symmetric_jacobi_sweeps<Real>(a, detail::RotationAccumulator<VView>{v, d}, max_sweeps);
  // Descending order of the diagonal (insertion sort of indices), then the columns of V in that order,
  // built in a (no longer needed).
  for (int i = 0; i < d; ++i) order(i) = i;
  for (int i = 1; i < d; ++i) {
    const int x = order(i);
    int j = i - 1;
    while (j >= 0 && a(order(j), order(j)) < a(x, x)) {
      order(j + 1) = order(j);
      --j;
    }
    order(j + 1) = x;
  }
  for (int j = 0; j < d; ++j) e(j) = a(order(j), order(j));
  for (int k = 0; k < d; ++k)
    for (int j = 0; j < d; ++j) a(k, j) = v(k, order(j));
  for (int k = 0; k < d; ++k)
    for (int j = 0; j < d; ++j) v(k, j) = a(k, j);
  return sweep;
}

}  // namespace qgml::linalg
