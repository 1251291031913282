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

}  // namespace detail

// a: N x N Hermitian (both triangles read, overwritten by the reflectors below the diagonal and by
// the updated trailing blocks; row k right of the diagonal gets a copy of v_k, so that the product and
// the update read v_k contiguously); tau, p: N complex (p is workspace); d, e: N reals (out).
// Collective over the loops; d, e and tau are complete after the call returns on every thread.
//
// The product p = A_bb v is formed from the columns of A_bb, p(r) = sum_c conj(A(c, r)) v(c) (A_bb is
// Hermitian): with SerialLoops as one axpy per row c of the matrix, contiguous in r; with TeamLoops thread
// r runs over c, and neighbouring threads read neighbouring entries of a row. Both add the terms of p(r)
// in the order c = b, b + 1, ... (perf/NOTES.md, "The team Householder reduction vectorised on CPUs").
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
        for (int r = b; r < n; ++r) p[r] = complex_type(0);
        for (int c = b; c < n; ++c) {
          const complex_type vc = a(k, c);
          for (int r = b; r < n; ++r) p[r] += Kokkos::conj(a(c, r)) * vc;
        }
        for (int r = b; r < n; ++r) p[r] = t * p[r];
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
      // A_bb <- A_bb - v p^H - p v^H
      loops.for_each(b, n, [&](const int r) {
        const complex_type vr = a(r, k);
        const complex_type pr = p[r];
        for (int c = b; c < n; ++c) a(r, c) -= vr * Kokkos::conj(p[c]) + pr * Kokkos::conj(a(k, c));
      });
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
// Q x applies H_{N-2} first; Q^H x applies H_0^H = I - conj(tau_0) v_0 v_0^H first.
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
      const complex_type v = a(i, k);
      return complex_type(v.real() * xr[i] + v.imag() * xi[i], v.real() * xi[i] - v.imag() * xr[i]);
    });
    const complex_type c = t * vx;
    loops.barrier();  // every thread has read x
    loops.for_each(b, n, [&](const int i) {
      const complex_type v = a(i, k);
      xr[i] -= c.real() * v.real() - c.imag() * v.imag();
      xi[i] -= c.real() * v.imag() + c.imag() * v.real();
    });
    loops.barrier();
  }
}

}  // namespace qgml::linalg
