// Eigenvalues of W small real symmetric D x D matrices at once, one per SIMD lane: the cyclic Jacobi
// method of symmetric_eigenvalues.hpp (Golub & Van Loan, 4th ed., algorithm 8.5.3, the rotation of
// section 8.5.2 as in jacobi_rotation.hpp) with the lanes innermost. Every lane runs its own sweeps and
// stops at its own convergence test: a lane that has converged (or is skipped) gets the identity
// rotation, so its result is the one the single-matrix routine gives. Used for the D x D quantum metric
// of the points of one pack (geometry/ground_state_geometry_packed.hpp).
#pragma once

#include <Kokkos_Core.hpp>

#include "qgml/common/kokkos_compat.hpp"
#include "qgml/linalg/hermitian_eigensolver_packed.hpp"
#include "qgml/linalg/lanes.hpp"
#include "qgml/linalg/symmetric_eigenvalues.hpp"

namespace qgml::linalg {

namespace detail {

// (x, y) <- (c x - s y, s x + c y) lane by lane: one real Jacobi rotation applied to a pair of entries.
template <int W, class Real>
KOKKOS_FORCEINLINE_FUNCTION void rotate_lanes(Real* x, Real* y, const Real* c, const Real* s) {
  QGML_LANES(q, W) {
    const Real u = x[q], v = y[q];
    x[q] = c[q] * u - s[q] * v;
    y[q] = s[q] * u + c[q] * v;
  }
}

}  // namespace detail

// a: the matrices, element (i, j) of lane q at (i * d + j) * W + q (overwritten: rotated toward its
// eigenvalues); e: the eigenvalues, descending, eigenvalue i of lane q at i * W + q (out);
// skip[q]: leave lane q unrotated (e then holds its diagonal, sorted; sweeps[q] = 0), for lanes
// without a matrix or with a non-finite one; sweeps[q] (out): the contract of
// symmetric_eigenvalues_descending, 0 .. max_sweeps when converged, max_sweeps + 1 when not.
template <int W, class Real>
KOKKOS_INLINE_FUNCTION void packed_symmetric_eigenvalues_descending(int d, Real* a, Real* e, const bool* skip,
                                                                    int* sweeps,
                                                                    int max_sweeps = symmetric_eigenvalues_max_sweeps) {
  const Real tolerance = symmetric_eigenvalues_tolerance<Real>;
  bool done[W];
  for (int q = 0; q < W; ++q) {
    done[q] = skip[q];
    sweeps[q] = 0;
  }
  for (int sweep = 0;; ++sweep) {
    Real off[W], total[W];
    QGML_LANES(q, W) off[q] = total[q] = Real(0);
    for (int i = 0; i < d; ++i)
      for (int j = 0; j < d; ++j) {
        const Real* const aij = a + (i * d + j) * W;
        if (i == j) {
          QGML_LANES(q, W) total[q] += aij[q] * aij[q];
        } else {
          QGML_LANES(q, W) {
            const Real x = aij[q] * aij[q];
            total[q] += x;
            off[q] += x;
          }
        }
      }
    int active = 0;
    for (int q = 0; q < W; ++q) {
      if (done[q]) continue;
      if (off[q] <= tolerance * total[q] || off[q] == Real(0)) {
        done[q] = true;
        sweeps[q] = sweep;
      } else if (sweep == max_sweeps) {
        done[q] = true;
        sweeps[q] = max_sweeps + 1;
      } else {
        ++active;
      }
    }
    if (active == 0) break;
    for (int p = 0; p < d; ++p)
      for (int r = p + 1; r < d; ++r) {
        // J on (p, r) per lane: tau = (a_rr - a_pp) / (2 |a_pr|), t = sign(tau) / (|tau| + sqrt(1 + tau^2)),
        // c = 1 / sqrt(1 + t^2), s = sign(a_pr) t c; the identity where a_pr = 0 or the lane is done.
        Real c[W], s[W], tau[W], root[W];
        const Real* const app = a + (p * d + p) * W;
        const Real* const arr = a + (r * d + r) * W;
        const Real* const apr = a + (p * d + r) * W;
        QGML_LANES(q, W) {
          const Real mag = math::fabs(apr[q]);
          tau[q] = (arr[q] - app[q]) / (Real(2) * (mag != Real(0) ? mag : Real(1)));
          root[q] = Real(1) + tau[q] * tau[q];
        }
        packed_detail::sqrt_lanes<W>(root, root);
        QGML_LANES(q, W) {
          c[q] = (tau[q] >= Real(0) ? Real(1) : Real(-1)) / (math::fabs(tau[q]) + root[q]);  // t
          root[q] = Real(1) + c[q] * c[q];
        }
        packed_detail::sqrt_lanes<W>(root, root);
        QGML_LANES(q, W) {
          const bool rotate = !done[q] && apr[q] != Real(0);
          const Real cq = Real(1) / root[q];
          const Real sq = (apr[q] >= Real(0) ? Real(1) : Real(-1)) * (c[q] * cq);
          c[q] = rotate ? cq : Real(1);
          s[q] = rotate ? sq : Real(0);
        }
        for (int k = 0; k < d; ++k)  // columns p, r of A J
          detail::rotate_lanes<W>(a + (k * d + p) * W, a + (k * d + r) * W, c, s);
        for (int k = 0; k < d; ++k)  // rows p, r of J^T (A J)
          detail::rotate_lanes<W>(a + (p * d + k) * W, a + (r * d + k) * W, c, s);
      }
  }
  for (int i = 0; i < d; ++i) QGML_LANES(q, W) e[i * W + q] = a[(i * d + i) * W + q];
  for (int q = 0; q < W; ++q)
    for (int i = 1; i < d; ++i) {  // insertion sort, descending
      const Real x = e[i * W + q];
      int j = i - 1;
      while (j >= 0 && e[j * W + q] < x) {
        e[(j + 1) * W + q] = e[j * W + q];
        --j;
      }
      e[(j + 1) * W + q] = x;
    }
}

}  // namespace qgml::linalg
