// Complex vectors of a pack of W points (entry i of lane q at i * W + q): H x for a Hermitian H stored
// by its lower triangle, inner products, projections and norms, in every lane at once.
#pragma once

#include <Kokkos_Core.hpp>

#include "qgml/linalg/hermitian_eigensolver_packed.hpp"
#include "qgml/linalg/lanes.hpp"

namespace qgml::detail {

// y = H x in every lane, H Hermitian from its lower triangle (element (i, j) at (i * n + j) * W): each
// stored element once, H(i, j) x(j) into y(i) and conj(H(i, j)) x(i) into y(j).
template <int W, class Real>
KOKKOS_INLINE_FUNCTION void packed_hermitian_matvec(const int n, const Real* hr, const Real* hi, const Real* xr,
                                                    const Real* xi, Real* yr, Real* yi) {
  for (int i = 0; i < n * W; ++i) yr[i] = yi[i] = Real(0);
  for (int i = 0; i < n; ++i) {
    const Real* rowr = hr + i * n * W;
    const Real* rowi = hi + i * n * W;
    const Real* x_r = xr + i * W;
    const Real* x_i = xi + i * W;
    Real sr[W], si[W];
    QGML_LANES(q, W) {
      sr[q] = rowr[i * W + q] * x_r[q];  // the diagonal is real
      si[q] = rowr[i * W + q] * x_i[q];
    }
    for (int j = 0; j < i; ++j) {
      const Real* h_r = rowr + j * W;
      const Real* h_i = rowi + j * W;
      const Real* v_r = xr + j * W;
      const Real* v_i = xi + j * W;
      Real* y_r = yr + j * W;
      Real* y_i = yi + j * W;
      QGML_LANES(q, W) {
        sr[q] += h_r[q] * v_r[q];
        sr[q] -= h_i[q] * v_i[q];
        si[q] += h_r[q] * v_i[q];
        si[q] += h_i[q] * v_r[q];
        y_r[q] += h_r[q] * x_r[q];
        y_r[q] += h_i[q] * x_i[q];
        y_i[q] += h_r[q] * x_i[q];
        y_i[q] -= h_i[q] * x_r[q];
      }
    }
    QGML_LANES(q, W) {
      yr[i * W + q] += sr[q];
      yi[i * W + q] += si[q];
    }
  }
}

// (cr, ci)[q] = <u|x> in every lane (complex vectors of a pack, entry i at i * W).
template <int W, class Real>
KOKKOS_INLINE_FUNCTION void packed_inner(const int n, const Real* ur, const Real* ui, const Real* xr, const Real* xi,
                                         Real* cr, Real* ci) {
  linalg::packed_conj_dot<W>(0, n, ur, ui, W, xr, xi, W, cr, ci);
}

// x <- x - <u|x> u in every lane (u of unit norm).
template <int W, class Real>
KOKKOS_INLINE_FUNCTION void packed_project_out(const int n, const Real* ur, const Real* ui, Real* xr, Real* xi) {
  Real cr[W], ci[W];
  packed_inner<W>(n, ur, ui, xr, xi, cr, ci);
  for (int i = 0; i < n; ++i) QGML_LANES(q, W) {
      const Real a = ur[i * W + q], b = ui[i * W + q];
      xr[i * W + q] -= cr[q] * a - ci[q] * b;
      xi[i * W + q] -= cr[q] * b + ci[q] * a;
    }
}

// ||x|| per lane into nrm (W lanes).
template <int W>
KOKKOS_INLINE_FUNCTION void packed_norm(const int n, const double* xr, const double* xi, double* nrm) {
  QGML_LANES(q, W) nrm[q] = 0.0;
  for (int i = 0; i < n; ++i) QGML_LANES(q, W) nrm[q] += xr[i * W + q] * xr[i * W + q] + xi[i * W + q] * xi[i * W + q];
  linalg::packed_detail::sqrt_lanes<W>(nrm, nrm);
}

}  // namespace qgml::detail
