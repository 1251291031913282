// Eigenvalues (and eigenvectors) of a real symmetric n x n matrix on the device, for matrices too large
// for cyclic Jacobi (symmetric_eigenvalues.hpp: about 2 n^3 per sweep, 4 n^3 with the vectors, and 6 to
// 10 sweeps): Householder reduction to tridiagonal form,
// T = Q^T A Q with Q = H_0 ... H_{n-3}, H_k = I - beta_k v_k v_k^T (Golub & Van Loan, 4th ed., 8.3.1;
// 4/3 n^3), then the eigenvalues of T by the implicit QL iteration with Wilkinson's shift (8.3.5, in its
// QL form: the chase runs from the bottom of the unreduced block up; O(n^2); absolute accuracy
// ~ eps ||A||).
// With the vectors: Q formed by backward accumulation (4/3 n^3) and every QL rotation of (i, i + 1)
// applied to columns i, i + 1 of Q (8.3.5). Used per point for the local covariances of the data
// (eigenvalues) and the eigenvectors of the metric (docs/dimension.md, "The spread check", "The local
// covariance").
#pragma once

#include <Kokkos_Core.hpp>

#include <type_traits>

#include "qgml/common/kokkos_compat.hpp"
#include "qgml/linalg/householder_tridiagonal.hpp"

namespace qgml::linalg {

// Reduces the leading n x n block of a (symmetric; its lower triangle is read and overwritten) to T:
// diagonal td[0 .. n), off-diagonal te[0 .. n - 1) (te[i] couples i and i + 1). w: n reals of work.
// beta (optional, n reals): beta_k of H_k = I - beta_k v_k v_k^T, v_k in a(k + 1 .. n, k) (0: H_k = I).
template <class Real, class AView>
KOKKOS_FUNCTION void symmetric_tridiagonalize(const AView& a, const int n, Real* td, Real* te, Real* w,
                                              Real* beta_out = nullptr) {
  for (int k = 0; k < n; ++k)
    if (beta_out) beta_out[k] = 0;
  for (int k = 0; k + 2 < n; ++k) {
    // v = x - alpha e_1 for x = a(k+1 .. n, k), alpha = -sign(x_0) |x|, so that H x = alpha e_1.
    Real norm2 = 0;
    for (int i = k + 1; i < n; ++i) norm2 += Real(a(i, k)) * Real(a(i, k));
    const Real x0 = Real(a(k + 1, k));
    td[k] = Real(a(k, k));
    if (norm2 == Real(0)) {
      te[k] = 0;
      continue;
    }
    const Real norm = math::sqrt(norm2);
    const Real alpha = x0 >= Real(0) ? -norm : norm;
    const Real v0 = x0 - alpha;
    const Real vnorm2 = norm2 - x0 * x0 + v0 * v0;
    te[k] = alpha;
    if (vnorm2 == Real(0)) continue;
    const Real beta = Real(2) / vnorm2;
    if (beta_out) beta_out[k] = beta;
    a(k + 1, k) = v0;  // v, in place of x
    // p = beta A22 v (A22 from its lower triangle), w = p - (beta / 2) (p . v) v; A22 <- A22 - v w^T - w v^T.
    for (int i = k + 1; i < n; ++i) w[i] = 0;
    for (int i = k + 1; i < n; ++i) {
      const Real vi = Real(a(i, k));
      Real s = 0;
      for (int j = k + 1; j < i; ++j) {
        const Real aij = Real(a(i, j));
        s += aij * Real(a(j, k));
        w[j] += aij * vi;
      }
      w[i] += s + Real(a(i, i)) * vi;
    }
    Real pv = 0;
    for (int i = k + 1; i < n; ++i) {
      w[i] *= beta;
      pv += w[i] * Real(a(i, k));
    }
    const Real half = Real(0.5) * beta * pv;
    for (int i = k + 1; i < n; ++i) w[i] -= half * Real(a(i, k));
    for (int i = k + 1; i < n; ++i) {
      const Real vi = Real(a(i, k)), wi = w[i];
      for (int j = k + 1; j <= i; ++j) a(i, j) = Real(a(i, j)) - vi * w[j] - wi * Real(a(j, k));
    }
  }
  if (n >= 2) {
    td[n - 2] = Real(a(n - 2, n - 2));
    te[n - 2] = Real(a(n - 1, n - 2));
  }
  if (n >= 1) td[n - 1] = Real(a(n - 1, n - 1));
}

inline constexpr int tridiagonal_ql_max_iterations = 60;

// The eigenvalues of T (diagonal td, off-diagonal te[0 .. n - 1), both overwritten; td ends up holding
// them, unsorted). Returns false when a block did not converge in tridiagonal_ql_max_iterations.
// With z (an n x n matrix; may be a null view when Vectors = void*): every rotation applied to its
// columns, so that z <- z Z for T = Z diag(td) Z^T.
template <class Real, class Vectors = void*>
KOKKOS_FUNCTION bool tridiagonal_eigenvalues_ql(const int n, Real* td, Real* te, const Vectors& z = nullptr) {
  if (n > 0) te[n - 1] = 0;
  for (int l = 0; l < n; ++l) {
    for (int iteration = 0;; ++iteration) {
      int m = l;
      for (; m + 1 < n; ++m) {
        const Real scale = math::fabs(td[m]) + math::fabs(td[m + 1]);
        if (math::fabs(te[m]) <= epsilon<Real>() * scale) break;
      }
      if (m == l) break;
      if (iteration == tridiagonal_ql_max_iterations) return false;
      // The shift: the eigenvalue of the leading 2 x 2 block nearer td[l].
      Real g = (td[l + 1] - td[l]) / (Real(2) * te[l]);
      Real r = detail::fast_hypot(g, Real(1));
      g = td[m] - td[l] + te[l] / (g + detail::sign_of(r, g));
      Real s = 1, c = 1, p = 0;
      bool split = false;
      for (int i = m - 1; i >= l; --i) {  // a rotation of (i, i + 1), chasing the bulge up
        const Real f = s * te[i], b = c * te[i];
        r = detail::fast_hypot(f, g);
        te[i + 1] = r;
        if (r == Real(0)) {  // T splits at i + 1
          td[i + 1] -= p;
          te[m] = 0;
          split = true;
          break;
        }
        s = f / r;
        c = g / r;
        g = td[i + 1] - p;
        r = (td[i] - g) * s + Real(2) * c * b;
        p = s * r;
        td[i + 1] = g + p;
        g = c * r - b;
        if constexpr (!std::is_same_v<Vectors, void*>)
          for (int row = 0; row < n; ++row) {
            const Real zi = Real(z(row, i)), zn = Real(z(row, i + 1));
            z(row, i + 1) = s * zi + c * zn;
            z(row, i) = c * zi - s * zn;
          }
      }
      if (split) continue;
      td[l] -= p;
      te[l] = g;
      te[m] = 0;
    }
  }
  return true;
}

// The eigenvalues of the leading n x n block of a (symmetric; overwritten), descending, in e[0 .. n).
// work: 3 n reals. Returns false when QL did not converge (e then holds the diagonal reached).
template <class Real, class AView>
KOKKOS_FUNCTION bool symmetric_eigenvalues_tridiagonal_descending(const AView& a, const int n, Real* e, Real* work) {
  if (n <= 0) return true;
  Real* td = work;
  Real* te = work + n;
  Real* w = work + 2 * n;
  symmetric_tridiagonalize(a, n, td, te, w);
  const bool converged = tridiagonal_eigenvalues_ql(n, td, te);
  for (int i = 0; i < n; ++i) {  // insertion sort, descending
    const Real v = td[i];
    int j = i;
    for (; j > 0 && e[j - 1] < v; --j) e[j] = e[j - 1];
    e[j] = v;
  }
  return converged;
}

// The eigenpairs of the leading n x n block of a (symmetric; overwritten): e descending, column j of v
// the eigenvector of e[j] (v: n x n, overwritten). work: 4 n reals. Returns false when QL did not
// converge.
template <class Real, class AView, class VView>
KOKKOS_FUNCTION bool symmetric_eigensystem_tridiagonal_descending(const AView& a, const VView& v, const int n, Real* e,
                                                                  Real* work) {
  if (n <= 0) return true;
  Real* td = e;
  Real* te = work;
  Real* w = work + n;
  Real* beta = work + 2 * n;
  symmetric_tridiagonalize(a, n, td, te, w, beta);
  // Q = H_0 ... H_{n-3} by backward accumulation: Q <- H_k Q from k = n - 3 down.
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) v(i, j) = i == j ? Real(1) : Real(0);
  for (int k = n - 3; k >= 0; --k) {
    if (beta[k] == Real(0)) continue;
    for (int j = k + 1; j < n; ++j) {
      Real dot = 0;
      for (int i = k + 1; i < n; ++i) dot += Real(a(i, k)) * Real(v(i, j));
      dot *= beta[k];
      for (int i = k + 1; i < n; ++i) v(i, j) = Real(v(i, j)) - dot * Real(a(i, k));
    }
  }
  const bool converged = tridiagonal_eigenvalues_ql(n, td, te, v);
  for (int i = 0; i < n; ++i) {  // selection sort, descending, with the columns
    int best = i;
    for (int j = i + 1; j < n; ++j)
      if (e[j] > e[best]) best = j;
    if (best == i) continue;
    const Real t = e[i];
    e[i] = e[best];
    e[best] = t;
    for (int row = 0; row < n; ++row) {
      const Real x = Real(v(row, i));
      v(row, i) = v(row, best);
      v(row, best) = x;
    }
  }
  return converged;
}

}  // namespace qgml::linalg
