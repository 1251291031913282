// Householder reduction of a complex Hermitian matrix to real symmetric tridiagonal form, and the
// application of its unitary factor, written once against the Loops interface (loops.hpp): SerialLoops
// for one thread per matrix, TeamLoops for one team per matrix (Golub & Van Loan, 4th ed., 8.3.1).
//
//   T = Q^H A Q,  Q = H_0 H_1 ... H_{N-2},  H_k = I - tau_k v_k v_k^H,
// with H_k^H mapping the subdiagonal part of column k onto beta_k e_1, beta_k real (the LAPACK zlarfg
// convention), so that every off-diagonal of T is real. v_k is stored in column k of A below the
// diagonal (v_k(k + 1) = 1); T's diagonal is d, its off-diagonal e (e[k] = T(k + 1, k), e[N - 1] = 0).
#pragma once

#include <Kokkos_Core.hpp>

#include <type_traits>

#include "qgml/common/kokkos_compat.hpp"
#include "qgml/common/types.hpp"
#include "qgml/linalg/lanes.hpp"
#include "qgml/linalg/loops.hpp"

namespace qgml::linalg {

namespace detail {

// sqrt(a^2 + b^2) without the cost of a correctly rounded hypot; falls back to it only when the
// direct formula would overflow or underflow (|a|, |b| outside roughly [1e-150, 1e150] in double).
template <class Real>
KOKKOS_INLINE_FUNCTION Real fast_hypot(Real a, Real b) {
  const Real s = a * a + b * b;
  constexpr Real lo = std::is_same_v<Real, float> ? Real(1e-30) : Real(1e-290);
  constexpr Real hi = std::is_same_v<Real, float> ? Real(1e30) : Real(1e290);
  if (s > lo && s < hi) return math::sqrt(s);
  return math::hypot(a, b);
}

template <class Real>
KOKKOS_INLINE_FUNCTION Real sign_of(Real magnitude, Real sign_source) {
  return sign_source >= Real(0) ? math::fabs(magnitude) : -math::fabs(magnitude);
}

// sum_{j < len} x(j) y(j) in a fixed order that the compiler may vectorise: the first 8 floor(len / 8)
// terms dealt round-robin to 8 partial sums (one SIMD accumulator for each of re and im; 8 measured
// faster than 16 for float at N = 64: perf/NOTES.md, "The team path on the lower triangle, its
// matrix-vector products in SIMD"), added pairwise ((0 + 4) + (2 + 6)) + ((1 + 5) + (3 + 7)), then the
// remaining terms in order.
template <class Real>
KOKKOS_INLINE_FUNCTION complex_t<Real> lane_dot(const complex_t<Real>* x, const complex_t<Real>* y, const int len) {
  constexpr int w = 8;
  const Real* const xs = reinterpret_cast<const Real*>(x);
  const Real* const ys = reinterpret_cast<const Real*>(y);
  Real sr[w] = {}, si[w] = {};
  int j = 0;
  for (; j + w <= len; j += w) {
    QGML_LANES(q, w) {
      const Real xr = xs[2 * (j + q)], xi = xs[2 * (j + q) + 1];
      const Real yr = ys[2 * (j + q)], yi = ys[2 * (j + q) + 1];
      sr[q] += xr * yr - xi * yi;
      si[q] += xr * yi + xi * yr;
    }
  }
  Real re = ((sr[0] + sr[4]) + (sr[2] + sr[6])) + ((sr[1] + sr[5]) + (sr[3] + sr[7]));
  Real im = ((si[0] + si[4]) + (si[2] + si[6])) + ((si[1] + si[5]) + (si[3] + si[7]));
  for (; j < len; ++j) {
    const Real xr = xs[2 * j], xi = xs[2 * j + 1];
    const Real yr = ys[2 * j], yi = ys[2 * j + 1];
    re += xr * yr - xi * yi;
    im += xr * yi + xi * yr;
  }
  return complex_t<Real>(re, im);
}

}  // namespace detail

// a: N x N Hermitian, overwritten by the reflectors below the diagonal and by the updated trailing blocks;
// row k right of the diagonal gets a copy of v_k, so that the product, the update and apply_householder_q
// read v_k contiguously; tau, p: N complex (p is workspace); d, e: N reals (out). Collective over the
// loops; d, e and tau are complete after the call returns on every thread.
//
// The two mappings differ in what they read and update (perf/NOTES.md, "The team Householder reduction
// vectorised on CPUs", "The team path on the lower triangle"); they agree to rounding:
//  - SerialLoops reads and updates the lower triangle only (the strict upper triangle of the input is never
//    read): p(r) = sum_{c < r} A(r, c) v(c) + Re A(r, r) v(r) + sum_{c > r} conj(A(c, r)) v(c), row c
//    giving a lane_dot for p(c) and an axpy into p(b .. c - 1), and the rank-2 update runs over c <= r:
//    2 N^2 instead of 3 N^2 complex multiply-adds per step, SIMD along the rows.
//  - TeamLoops keeps both triangles: p(r) = sum_c conj(A(c, r)) v(c), thread r over c in order, and the
//    update of the whole block, thread c down column c (a team of one thread: along the rows); in both
//    loops neighbouring threads touch neighbouring entries of a row (coalesced on GPUs).
template <int FixedN = 0, class Loops, class AView, class Real>
KOKKOS_FUNCTION void hermitian_tridiagonalize(const Loops& loops, const AView& a, complex_t<Real>* tau,
                                              complex_t<Real>* p, Real* d, Real* e) {
  using complex_type = complex_t<Real>;
  const int n = FixedN > 0 ? FixedN : static_cast<int>(a.extent(0));
  for (int k = 0; k < n - 1; ++k) {
    const int b = k + 1;  // first row of the trailing block
    const complex_type alpha = a(b, k);
    const Real xnorm2 = loops.template sum<Real>(b + 1, n, [&](const int i) {
      const complex_type x = a(i, k);
      return x.real() * x.real() + x.imag() * x.imag();
    });
    // H^H (alpha, x) = (beta, 0) with beta real: beta = -sign(Re alpha) |(alpha, x)|,
    // tau = (beta - alpha) / beta, v = (1, x / (alpha - beta)).
    complex_type t(0);
    Real beta = alpha.real();
    if (xnorm2 != Real(0) || alpha.imag() != Real(0)) {
      beta = -detail::sign_of(math::sqrt(alpha.real() * alpha.real() + alpha.imag() * alpha.imag() + xnorm2),
                              alpha.real());
      t = complex_type((beta - alpha.real()) / beta, -alpha.imag() / beta);
      const complex_type scale = Real(1) / (alpha - beta);
      loops.barrier();  // every thread has read alpha before a(b, k) is overwritten
      loops.for_each(b, n, [&](const int i) {
        const complex_type v = (i == b) ? complex_type(1) : a(i, k) * scale;
        a(i, k) = v;
        a(k, i) = v;
      });
    }
    loops.single([&]() {
      tau[k] = t;
      e[k] = beta;
      d[k] = a(k, k).real();
    });
    if (t.real() != Real(0) || t.imag() != Real(0)) {
      loops.barrier();  // v stored
      // p = tau A_bb v, v(c) = a(k, c)
      if constexpr (Loops::is_serial) {
        // From the lower triangle: p(r) = sum_{c < r} A(r, c) v(c) + Re A(r, r) v(r) + sum_{c > r}
        // conj(A(c, r)) v(c); row c gives the first two terms of p(c) (a dot product) and the last
        // term of every p(r), r < c (an axpy).
        // The dot products go to d[c], e[c] (c > k: not yet written), so that the axpys into p do not
        // wait on them.
        const complex_type* const v = &a(k, 0);
        for (int r = b; r < n; ++r) p[r] = complex_type(0);
        for (int c = b; c < n; ++c) {
          const complex_type* const row = &a(c, 0);
          const complex_type vc = v[c];
          const complex_type dot = detail::lane_dot(row + b, v + b, c - b) + row[c].real() * vc;
          d[c] = dot.real();
          e[c] = dot.imag();
          for (int r = b; r < c; ++r) p[r] += Kokkos::conj(row[r]) * vc;
        }
        for (int r = b; r < n; ++r) p[r] = t * (p[r] + complex_type(d[r], e[r]));
      } else {
        loops.for_each(b, n, [&](const int r) {
          complex_type acc(0);
          for (int c = b; c < n; ++c) acc += Kokkos::conj(a(c, r)) * a(k, c);
          p[r] = t * acc;
        });
      }
      loops.barrier();
      // p <- p - 1/2 tau (p^H v) v
      const complex_type pv =
          loops.template sum<complex_type>(b, n, [&](const int i) { return Kokkos::conj(p[i]) * a(i, k); });
      const complex_type gamma = Real(-0.5) * t * pv;
      loops.barrier();  // p read by every thread before it is updated
      loops.for_each(b, n, [&](const int i) { p[i] += gamma * a(i, k); });
      loops.barrier();
      // A_bb <- A_bb - v p^H - p v^H, the same expression for every entry. SerialLoops: the lower
      // triangle, row by row (c <= r, SIMD along the row). TeamLoops: the whole block; teams of several
      // threads go down the columns, thread c down column c, so that neighbouring threads update
      // neighbouring entries of a row (coalesced on GPUs); a team of one thread goes along the rows.
      if (Loops::is_serial || loops.team_size() == 1) {
        for (int r = b; r < n; ++r) {
          const complex_type vr = a(r, k);
          const complex_type pr = p[r];
          const int end = Loops::is_serial ? r + 1 : n;
          for (int c = b; c < end; ++c) a(r, c) -= vr * Kokkos::conj(p[c]) + pr * Kokkos::conj(a(k, c));
        }
      } else {
        loops.for_each(b, n, [&](const int c) {
          const complex_type pc = Kokkos::conj(p[c]);
          const complex_type vc = Kokkos::conj(a(k, c));
          for (int r = b; r < n; ++r) a(r, c) -= a(r, k) * pc + p[r] * vc;
        });
      }
    }
    loops.barrier();
  }
  loops.single([&]() {
    d[n - 1] = a(n - 1, n - 1).real();
    e[n - 1] = Real(0);
  });

  loops.barrier();
}

// x <- Q x (adjoint: x <- Q^H x) for the Q of hermitian_tridiagonalize (reflectors in a, tau), x complex
// with separate real and imaginary parts (xr, xi: N reals each). O(N^2); collective, 2 (N - 1) barriers.
// Q x applies H_{N-2} first; Q^H x applies H_0^H = I - conj(tau_0) v_0 v_0^H first. v_k is read from its
// copy in row k (contiguous; neighbouring threads read neighbouring entries).
template <class Loops, class AView, class Real>
KOKKOS_FUNCTION void apply_householder_q(const Loops& loops, const AView& a, const complex_t<Real>* tau, Real* xr,
                                         Real* xi, const bool adjoint) {
  using complex_type = complex_t<Real>;
  const int n = static_cast<int>(a.extent(0));
  for (int step = 0; step < n - 1; ++step) {
    const int k = adjoint ? step : n - 2 - step;
    const int b = k + 1;
    const complex_type t = adjoint ? Kokkos::conj(tau[k]) : tau[k];
    if (t.real() == Real(0) && t.imag() == Real(0)) continue;
    // v^H x (v(b) = 1 is stored)
    const complex_type vx = loops.template sum<complex_type>(b, n, [&](const int i) {
      const complex_type v = a(k, i);
      return complex_type(v.real() * xr[i] + v.imag() * xi[i], v.real() * xi[i] - v.imag() * xr[i]);
    });
    const complex_type c = t * vx;
    loops.barrier();  // every thread has read x
    loops.for_each(b, n, [&](const int i) {
      const complex_type v = a(k, i);
      xr[i] -= c.real() * v.real() - c.imag() * v.imag();
      xi[i] -= c.real() * v.imag() + c.imag() * v.real();
    });
    loops.barrier();
  }
}

}  // namespace qgml::linalg
