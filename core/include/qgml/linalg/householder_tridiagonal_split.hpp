// The Householder reduction of linalg/householder_tridiagonal.hpp for one thread per matrix, on a matrix
// stored as two real planes (real parts, then imaginary parts, row-major with leading dimension ld): the
// layout of the host team path (ground_state/ground_state_team.hpp with SerialLoops). Every complex
// multiply-add along a row is then four real fused multiply-adds on whole vectors, without the
// permutes that interleaved complex numbers need (perf/NOTES.md, "The host team path on split planes").
//
// The same reduction as SerialLoops' (T = Q^H A Q, H_k = I - tau_k v_k v_k^H, beta_k real, the LAPACK
// zlarfg convention; v_k below the diagonal of column k and copied into row k right of the diagonal;
// only the lower triangle of the input is read), and the same output: d, e, tau; the products' terms
// are summed in another order, so the two agree to rounding.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstddef>

#include "qgml/common/kokkos_compat.hpp"
#include "qgml/common/types.hpp"
#include "qgml/linalg/householder_tridiagonal.hpp"
#include "qgml/linalg/lanes.hpp"

namespace qgml::linalg {

// An N x N complex matrix as two real planes: entry (i, j) is (re[i ld + j], im[i ld + j]).
template <class Real>
struct SplitMatrix {
  Real* re = nullptr;
  Real* im = nullptr;
  int n = 0;
  int ld = 0;

  KOKKOS_INLINE_FUNCTION Real* row_re(int i) const { return re + std::size_t(i) * ld; }
  KOKKOS_INLINE_FUNCTION Real* row_im(int i) const { return im + std::size_t(i) * ld; }
};

namespace detail {

// Lanes of the partial sums of split_row_product (one 512-bit vector of doubles).
inline constexpr int split_lanes = 8;

// The split_lanes partial sums added pairwise: ((0 + 4) + (2 + 6)) + ((1 + 5) + (3 + 7)).
template <class Real>
KOKKOS_INLINE_FUNCTION Real lane_sum(const Real (&s)[split_lanes]) {
  return ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]));
}

// For j in [b, c): p(j) += conj(A(c, j)) v_c, and returns sum_j A(c, j) v(j): row c of the lower triangle
// gives p(c)'s dot product and its term of every p(j), j < c, in one pass over the row. The dot product
// deals its first split_lanes floor((c - b) / split_lanes) terms round-robin to split_lanes partial sums,
// added pairwise, then the remaining terms in order (a fixed order).
template <class Real>
KOKKOS_INLINE_FUNCTION complex_t<Real> split_row_product(const Real* ar, const Real* ai, const Real* vr, const Real* vi,
                                                         const Real vcr, const Real vci, Real* pr, Real* pi,
                                                         const int b, const int c) {
  constexpr int w = split_lanes;
  Real re = 0, im = 0;
  int j = b;
  if (c - b >= w) {  // rows shorter than a vector (N <= 8) have no partial sums to add
    Real sr[w] = {}, si[w] = {};
    for (; j + w <= c; j += w) {
      QGML_LANES(q, w) {
        const Real xr = ar[j + q], xi = ai[j + q], yr = vr[j + q], yi = vi[j + q];
        sr[q] += xr * yr - xi * yi;
        si[q] += xr * yi + xi * yr;
        pr[j + q] += xr * vcr + xi * vci;
        pi[j + q] += xr * vci - xi * vcr;
      }
    }
    re = lane_sum(sr);
    im = lane_sum(si);
  }
  for (; j < c; ++j) {
    const Real xr = ar[j], xi = ai[j], yr = vr[j], yi = vi[j];
    re += xr * yr - xi * yi;
    im += xr * yi + xi * yr;
    pr[j] += xr * vcr + xi * vci;
    pi[j] += xr * vci - xi * vcr;
  }
  return complex_t<Real>(re, im);
}

// sum_{j < len} x(j) y(j) (conjugate: conj(x(j)) y(j)) in a fixed order: the first split_lanes
// floor(len / split_lanes) terms dealt round-robin to split_lanes partial sums, added pairwise, then the
// remaining terms in order.
template <class Real>
KOKKOS_INLINE_FUNCTION complex_t<Real> split_dot(const Real* xr, const Real* xi, const Real* yr, const Real* yi,
                                                 const int len, const bool conjugate) {
  constexpr int w = split_lanes;
  const Real sign = conjugate ? Real(-1) : Real(1);
  Real re = 0, im = 0;
  int j = 0;
  if (len >= w) {
    Real sr[w] = {}, si[w] = {};
    for (; j + w <= len; j += w) {
      QGML_LANES(q, w) {
        const Real ar = xr[j + q], ai = sign * xi[j + q], br = yr[j + q], bi = yi[j + q];
        sr[q] += ar * br - ai * bi;
        si[q] += ar * bi + ai * br;
      }
    }
    re = lane_sum(sr);
    im = lane_sum(si);
  }
  for (; j < len; ++j) {
    const Real ar = xr[j], ai = sign * xi[j], br = yr[j], bi = yi[j];
    re += ar * br - ai * bi;
    im += ar * bi + ai * br;
  }
  return complex_t<Real>(re, im);
}

}  // namespace detail

// a: split N x N Hermitian (lower triangle read), overwritten by the reflectors and the updated trailing
// blocks; tau: N complex (out); pr, pi: N Reals each (workspace); d, e: N Reals (out).
template <class Real>
KOKKOS_INLINE_FUNCTION void hermitian_tridiagonalize(const SplitMatrix<Real>& a, complex_t<Real>* tau, Real* pr,
                                                     Real* pi, Real* d, Real* e) {
  using complex_type = complex_t<Real>;
  const int n = a.n;
  for (int k = 0; k < n - 1; ++k) {
    const int b = k + 1;
    const complex_type alpha(a.row_re(b)[k], a.row_im(b)[k]);
    Real xnorm2 = 0;
    for (int i = b + 1; i < n; ++i) xnorm2 += a.row_re(i)[k] * a.row_re(i)[k] + a.row_im(i)[k] * a.row_im(i)[k];
    // H^H (alpha, x) = (beta, 0) with beta real: beta = -sign(Re alpha) |(alpha, x)|,
    // tau = (beta - alpha) / beta, v = (1, x / (alpha - beta)).
    complex_type t(0);
    Real beta = alpha.real();
    Real* const vr = a.row_re(k);  // v_k, copied into row k
    Real* const vi = a.row_im(k);
    if (xnorm2 != Real(0) || alpha.imag() != Real(0)) {
      beta = -detail::sign_of(math::sqrt(alpha.real() * alpha.real() + alpha.imag() * alpha.imag() + xnorm2),
                              alpha.real());
      t = complex_type((beta - alpha.real()) / beta, -alpha.imag() / beta);
      const complex_type scale = Real(1) / (alpha - beta);
      for (int i = b; i < n; ++i) {
        const complex_type x(a.row_re(i)[k], a.row_im(i)[k]);
        const complex_type v = (i == b) ? complex_type(1) : x * scale;
        a.row_re(i)[k] = v.real();
        a.row_im(i)[k] = v.imag();
        vr[i] = v.real();
        vi[i] = v.imag();
      }
    }
    tau[k] = t;
    e[k] = beta;
    d[k] = a.row_re(k)[k];
    if (t.real() == Real(0) && t.imag() == Real(0)) continue;
    for (int r = b; r < n; ++r) pr[r] = pi[r] = Real(0);
    // p = A_bb v from the lower triangle: row c gives sum_{j < c} A(c, j) v(j) + Re A(c, c) v(c) (into
    // d[c], e[c]: not yet written) and conj(A(c, j)) v(c) to every p(j), j < c.
    for (int c = b; c < n; ++c) {
      const Real* const ar = a.row_re(c);
      const Real* const ai = a.row_im(c);
      const complex_type dot = detail::split_row_product(ar, ai, vr, vi, vr[c], vi[c], pr, pi, b, c);
      d[c] = dot.real() + ar[c] * vr[c];
      e[c] = dot.imag() + ar[c] * vi[c];
    }
    // p <- tau p, then p <- p - 1/2 tau (p^H v) v
    const Real tr = t.real(), ti = t.imag();
    QGML_LANES(r, n - b) {
      const Real qr = pr[b + r] + d[b + r], qi = pi[b + r] + e[b + r];
      pr[b + r] = tr * qr - ti * qi;
      pi[b + r] = tr * qi + ti * qr;
    }
    const complex_type gamma = Real(-0.5) * t * detail::split_dot(pr + b, pi + b, vr + b, vi + b, n - b, true);
    const Real gr = gamma.real(), gi = gamma.imag();
    QGML_LANES(r, n - b) {
      const Real xr = vr[b + r], xi = vi[b + r];
      pr[b + r] += gr * xr - gi * xi;
      pi[b + r] += gr * xi + gi * xr;
    }
    // A_bb <- A_bb - v p^H - p v^H on the lower triangle, row by row:
    // A(r, c) -= v(r) conj(p(c)) + p(r) conj(v(c)).
    for (int r = b; r < n; ++r) {
      Real* const ar = a.row_re(r);
      Real* const ai = a.row_im(r);
      const Real xr = vr[r], xi = vi[r], yr = pr[r], yi = pi[r];
      QGML_LANES(c, r + 1 - b) {
        const Real qr = pr[b + c], qi = pi[b + c], ur = vr[b + c], ui = vi[b + c];
        ar[b + c] = ar[b + c] - xr * qr - xi * qi - yr * ur - yi * ui;
        ai[b + c] = ai[b + c] - xi * qr + xr * qi - yi * ur + yr * ui;
      }
    }
  }
  d[n - 1] = a.row_re(n - 1)[n - 1];
  e[n - 1] = Real(0);
}

// x <- Q x (adjoint: x <- Q^H x) for the Q of the split reduction (reflectors v_k in row k, tau), x with
// separate real and imaginary parts: apply_householder_q of householder_tridiagonal.hpp on split planes.
template <class Loops, class Real>
KOKKOS_INLINE_FUNCTION void apply_householder_q(const Loops&, const SplitMatrix<Real>& a, const complex_t<Real>* tau,
                                                Real* xr, Real* xi, const bool adjoint) {
  static_assert(Loops::is_serial, "a SplitMatrix is reduced and applied by one thread");
  using complex_type = complex_t<Real>;
  const int n = a.n;
  for (int step = 0; step < n - 1; ++step) {
    const int k = adjoint ? step : n - 2 - step;
    const int b = k + 1;
    const complex_type t = adjoint ? Kokkos::conj(tau[k]) : tau[k];
    if (t.real() == Real(0) && t.imag() == Real(0)) continue;
    const Real* const vr = a.row_re(k);
    const Real* const vi = a.row_im(k);
    // v^H x (v(b) = 1 is stored)
    const complex_type c = t * detail::split_dot(vr + b, vi + b, xr + b, xi + b, n - b, true);
    const Real cr = c.real(), ci = c.imag();
    QGML_LANES(i, n - b) {
      const Real ur = vr[b + i], ui = vi[b + i];
      xr[b + i] -= cr * ur - ci * ui;
      xi[b + i] -= cr * ui + ci * ur;
    }
  }
}

}  // namespace qgml::linalg
