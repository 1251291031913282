// One Jacobi rotation (Golub & Van Loan, 4th ed., section 8.5.2), for real symmetric and complex
// Hermitian matrices alike; every cyclic Jacobi code uses it (hermitian_jacobi.hpp,
// symmetric_eigenvalues.hpp), and symmetric_eigenvalues_packed.hpp evaluates the same c and s lane by
// lane (its square roots vectorised).
//
// For B = B^H and an off-diagonal element b_pq = |b_pq| e^{i phi} != 0:
//   tau = (b_qq - b_pp) / (2 |b_pq|),   t = sign(tau) / (|tau| + sqrt(1 + tau^2))
//   (the root of t^2 + 2 tau t - 1 = 0 of smaller magnitude, so the rotation angle is at most pi/4),
//   c = 1 / sqrt(1 + t^2),   s = t c,
//   J = [[c, s e^{i phi}], [-s e^{-i phi}, c]] on the coordinates (p, q),
// and J^H B J has a zero at (p, q). For real B, e^{i phi} = sign(b_pq) and J is the real rotation of
// section 8.5.2.
#pragma once

#include <Kokkos_Core.hpp>

#include "qgml/common/kokkos_compat.hpp"

namespace qgml::linalg {

namespace detail {

// The real type of T (Real or Kokkos::complex<Real>).
template <class T>
struct jacobi_real {
  using type = T;
};
template <class Real>
struct jacobi_real<Kokkos::complex<Real>> {
  using type = Real;
};

template <class Real>
KOKKOS_INLINE_FUNCTION Real jacobi_magnitude(Real x) {
  return math::fabs(x);
}
template <class Real>
KOKKOS_INLINE_FUNCTION Real jacobi_magnitude(const Kokkos::complex<Real>& x) {
  return Kokkos::abs(x);
}
template <class Real>
KOKKOS_INLINE_FUNCTION Real jacobi_conj(Real x) {
  return x;
}
template <class Real>
KOKKOS_INLINE_FUNCTION Kokkos::complex<Real> jacobi_conj(const Kokkos::complex<Real>& x) {
  return Kokkos::conj(x);
}

}  // namespace detail

// J for elements of type T (Real or Kokkos::complex<Real>).
template <class Real, class T>
struct JacobiRotation {
  Real c;
  T s_phase;       // s e^{i phi}
  T s_phase_conj;  // s e^{-i phi}

  // (x, y) <- (x, y) J: the entries k of columns p, q of B J (or of an accumulated product Z J).
  KOKKOS_INLINE_FUNCTION void apply_right(T& x, T& y) const {
    const T a = x, b = y;
    x = c * a - s_phase_conj * b;
    y = s_phase * a + c * b;
  }
  // (x, y) <- J^H (x, y): the entries k of rows p, q of J^H B.
  KOKKOS_INLINE_FUNCTION void apply_left(T& x, T& y) const {
    const T a = x, b = y;
    x = c * a - s_phase * b;
    y = s_phase_conj * a + c * b;
  }
};

// The rotation that zeroes b_pq (!= 0) of B = B^H, from b_pp, b_qq and b_pq; the element type T
// alone sets the precision.
template <class T>
KOKKOS_INLINE_FUNCTION JacobiRotation<typename detail::jacobi_real<T>::type, T> jacobi_rotation(
    const typename detail::jacobi_real<T>::type bpp, const typename detail::jacobi_real<T>::type bqq, const T& bpq) {
  using Real = typename detail::jacobi_real<T>::type;
  const Real r = detail::jacobi_magnitude(bpq);
  const T phase = bpq / r;
  const Real tau = (bqq - bpp) / (Real(2) * r);
  const Real t = (tau >= Real(0) ? Real(1) : Real(-1)) / (math::fabs(tau) + math::sqrt(Real(1) + tau * tau));
  const Real c = Real(1) / math::sqrt(Real(1) + t * t), s = t * c;
  return {c, s * phase, s * detail::jacobi_conj(phase)};
}

// B <- J^H B J for the n x n matrix b (b(i, j) assignable): columns p, q, then rows p, q.
template <class BView, class Real, class T>
KOKKOS_INLINE_FUNCTION void jacobi_rotate(const BView& b, int n, int p, int q, const JacobiRotation<Real, T>& rot) {
  for (int k = 0; k < n; ++k) rot.apply_right(b(k, p), b(k, q));
  for (int k = 0; k < n; ++k) rot.apply_left(b(p, k), b(q, k));
}

}  // namespace qgml::linalg
