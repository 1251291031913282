// The per-point ground-state terms (docs/math.md 2.2, 2.3), the one place they are computed: for the
// configuration A (D x N x N), a ground state psi = psi_0 of H(x) and the point x,
//   y_k = A_k psi,   xbar_k = <psi|A_k|psi> = Re <psi|y_k>,
//   sigma^2 = sum_k (<psi|A_k^2|psi> - xbar_k^2) = sum_k (|y_k|^2 - xbar_k^2),
//   r_k = xbar_k - x_k,   d^2 = |r|^2.
// Two forms with the same arithmetic in the same order:
//  - ground_state_terms: one point (any device kernel; psi, x and xbar indexed with [], so Views,
//    subviews and pointers all work; y_k handed to a sink, which may store or contract it);
//  - ground_state_terms_lanes: one pack of W points whose values are interleaved, value v of lane q at
//    v * W + q (the layout of linalg/hermitian_eigensolver_packed.hpp and train/loss_gradient_packed.hpp),
//    every loop over i, j, k a SIMD loop over the lanes.
#pragma once

#include <Kokkos_Core.hpp>

#include "qgml/common/types.hpp"
#include "qgml/linalg/lanes.hpp"

namespace qgml {

template <class Real>
struct GroundStateTerms {
  Real sigma2 = 0;     // sigma^2
  Real distance2 = 0;  // d^2 = |x - xbar|^2
};

// Discards y_k (callers that need only xbar, sigma^2 and d^2).
struct IgnoreProducts {
  template <class Complex>
  KOKKOS_INLINE_FUNCTION void operator()(int, int, const Complex&) const {}
};

// a(k, i, j): the matrices; psi[j]: the ground state (complex); x[k]: the point; xbar[k] <- xbar_k;
// y_sink(k, i, y) receives y = (A_k psi)_i once for every k, i.
template <class Real, class AView, class PsiView, class XView, class XbarView, class YSink>
KOKKOS_INLINE_FUNCTION GroundStateTerms<Real> ground_state_terms(const AView& a, const PsiView& psi, const XView& x,
                                                                 const XbarView& xbar, const YSink& y_sink) {
  using complex_type = complex_t<Real>;
  const int d = static_cast<int>(a.extent(0));
  const int n = static_cast<int>(a.extent(1));
  GroundStateTerms<Real> out;
  for (int k = 0; k < d; ++k) {
    Real xb = 0, square = 0;  // <psi|A_k|psi>, |A_k psi|^2
    for (int i = 0; i < n; ++i) {
      complex_type y(0);
      for (int j = 0; j < n; ++j) y += a(k, i, j) * psi[j];
      y_sink(k, i, y);
      const complex_type p = psi[i];
      xb += p.real() * y.real() + p.imag() * y.imag();
      square += y.real() * y.real() + y.imag() * y.imag();
    }
    xbar[k] = xb;
    out.sigma2 += square - xb * xb;
    const Real r = xb - Real(x[k]);
    out.distance2 += r * r;
  }
  return out;
}

namespace detail {

// The expectation of one Hermitian operator B (N x N, shared by the lanes) in the lane states psi:
// (b_r, b_i) at i * W + q <- (B psi)_i, value[q] <- <psi|B psi> = sum_i Re(conj(psi_i) (B psi)_i).
template <int W, class Real, class BView>
KOKKOS_INLINE_FUNCTION void packed_operator_expectation(const BView& b, const int n, const Real* psi_r,
                                                        const Real* psi_i, Real* b_r, Real* b_i, Real* value) {
  QGML_LANES(q, W) value[q] = Real(0);
  for (int i = 0; i < n; ++i) {
    Real* out_r = b_r + i * W;
    Real* out_i = b_i + i * W;
    QGML_LANES(q, W) out_r[q] = out_i[q] = Real(0);
    for (int j = 0; j < n; ++j) {
      const Real bij_r = b(i, j).real(), bij_i = b(i, j).imag();
      const Real* p_r = psi_r + j * W;
      const Real* p_i = psi_i + j * W;
      QGML_LANES(q, W) {
        out_r[q] += bij_r * p_r[q] - bij_i * p_i[q];
        out_i[q] += bij_r * p_i[q] + bij_i * p_r[q];
      }
    }
    const Real* p_r = psi_r + i * W;
    const Real* p_i = psi_i + i * W;
    QGML_LANES(q, W) value[q] += p_r[q] * out_r[q] + p_i[q] * out_i[q];
  }
}

// (out_r, out_i)[q] = row i of A_k x (lane q), A_k = a(k, :, :) shared by the lanes, x complex (xr, xi).
template <int W, class Real, class AView>
KOKKOS_INLINE_FUNCTION void packed_matrix_row_times(const AView& a, const int k, const int i, const int n,
                                                    const Real* xr, const Real* xi, Real* out_r, Real* out_i) {
  QGML_LANES(q, W) out_r[q] = out_i[q] = Real(0);
  for (int j = 0; j < n; ++j) {
    const Real a_r = a(k, i, j).real(), a_i = a(k, i, j).imag();
    const Real* x_r = xr + j * W;
    const Real* x_i = xi + j * W;
    QGML_LANES(q, W) {
      out_r[q] += a_r * x_r[q] - a_i * x_i[q];
      out_i[q] += a_r * x_i[q] + a_i * x_r[q];
    }
  }
}

}  // namespace detail

// The lane form for W points: psi (psi_r, psi_i) at j * W + q, x and r at k * W + q, y_k(i)
// (y_r, y_i) at (k * n + i) * W + q; sigma2[q], distance2[q]; xbar_sink(k, xb) receives the W values
// xbar_k of the lanes (xb[q]).
template <int W, class Real, class AView, class XbarSink>
KOKKOS_INLINE_FUNCTION void ground_state_terms_lanes(const AView& a, const Real* psi_r, const Real* psi_i,
                                                     const Real* x, Real* y_r, Real* y_i, Real* r, Real* sigma2,
                                                     Real* distance2, const XbarSink& xbar_sink) {
  const int d = static_cast<int>(a.extent(0));
  const int n = static_cast<int>(a.extent(1));
  QGML_LANES(q, W) sigma2[q] = distance2[q] = Real(0);
  for (int k = 0; k < d; ++k) {
    Real xb[W], square[W];
    QGML_LANES(q, W) xb[q] = square[q] = Real(0);
    for (int i = 0; i < n; ++i) {
      Real yr_[W], yi_[W];
      detail::packed_matrix_row_times<W>(a, k, i, n, psi_r, psi_i, yr_, yi_);
      Real* yr_k = y_r + (k * n + i) * W;
      Real* yi_k = y_i + (k * n + i) * W;
      const Real* pr = psi_r + i * W;
      const Real* pi = psi_i + i * W;
      QGML_LANES(q, W) {
        yr_k[q] = yr_[q];
        yi_k[q] = yi_[q];
        xb[q] += pr[q] * yr_[q] + pi[q] * yi_[q];
        square[q] += yr_[q] * yr_[q] + yi_[q] * yi_[q];
      }
    }
    const Real* xq = x + k * W;
    Real* rq = r + k * W;
    QGML_LANES(q, W) {
      sigma2[q] += square[q] - xb[q] * xb[q];
      rq[q] = xb[q] - xq[q];
      distance2[q] += rq[q] * rq[q];
    }
    xbar_sink(k, static_cast<const Real*>(xb));
  }
}

}  // namespace qgml
