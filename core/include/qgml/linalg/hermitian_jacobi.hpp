// Warm-started eigendecomposition of one complex Hermitian matrix by cyclic Jacobi rotations
// (Golub & Van Loan, 4th ed., section 8.5), on one thread.
//
// Given an orthonormal basis u_0 .. u_{N-1} (the rows of V on input; e.g. the eigenvectors of the
// same point at the previous training step), B = U^* H U^T (B_ij = u_i^H H u_j) is nearly diagonal;
// cyclic Jacobi diagonalises it, B = Z diag(w) Z^H, in a few sweeps (convergence is quadratic), and
// the eigenvectors of H are v_j = sum_i Z_ij u_i. Each complex rotation J zeroes one b_pq
// (jacobi_rotation.hpp): B <- J^H B J, Z <- Z J.
// Same output contract as hermitian_eigh (ascending w, row j of V = eigenvector j, info codes).
#pragma once

#include <Kokkos_Core.hpp>

#include "qgml/common/kokkos_compat.hpp"
#include "qgml/common/types.hpp"
#include "qgml/linalg/hermitian_eigensolver.hpp"
#include "qgml/linalg/jacobi_rotation.hpp"

namespace qgml::linalg {

inline constexpr int jacobi_max_sweeps = 30;

// Extra scratch of the warm start, in Reals: one N x N complex matrix.
KOKKOS_INLINE_FUNCTION constexpr int jacobi_scratch_reals(int n) { return 2 * n * n; }

// a: H (overwritten). v: on input the starting basis (rows), on output the eigenvectors. w: out.
// scratch: jacobi_scratch_reals(n) Reals. sweeps (out): Jacobi sweeps used. Returns an EighInfo code;
// eigh_not_converged when the sweeps ran out (the caller may then solve cold).
template <class AView, class WView, class VView, class Real = typename WView::non_const_value_type>
KOKKOS_FUNCTION int hermitian_eigh_warm(const AView& a, const WView& w, const VView& v, Real* scratch, int& sweeps) {
  using complex_type = complex_t<Real>;
  const int n = static_cast<int>(a.extent(0));
  complex_type* z = reinterpret_cast<complex_type*>(scratch);  // n x n, row-major
  sweeps = 0;
  for (int i = 0; i < n * n; ++i) {
    const complex_type x = a(i / n, i % n);
    if (!math::isfinite(x.real()) || !math::isfinite(x.imag())) {
      const Real nan = math::sqrt(Real(-1));
      for (int j = 0; j < n; ++j) w(j) = nan;
      return eigh_non_finite_input;
    }
  }
  // z = H U^T (z_kj = sum_l H_kl u_j(l)), then B = U^* z into a.
  for (int k = 0; k < n; ++k)
    for (int j = 0; j < n; ++j) {
      complex_type s(0);
      for (int l = 0; l < n; ++l) s += a(k, l) * v(j, l);
      z[k * n + j] = s;
    }
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      complex_type s(0);
      for (int k = 0; k < n; ++k) s += Kokkos::conj(v(i, k)) * z[k * n + j];
      a(i, j) = s;
    }
  for (int i = 0; i < n; ++i) {
    a(i, i) = complex_type(a(i, i).real(), Real(0));
    for (int j = i + 1; j < n; ++j) {  // exactly Hermitian
      const complex_type m = Real(0.5) * (a(i, j) + Kokkos::conj(a(j, i)));
      a(i, j) = m;
      a(j, i) = Kokkos::conj(m);
    }
  }
  for (int i = 0; i < n * n; ++i) z[i] = complex_type((i / n) == (i % n) ? Real(1) : Real(0));
  const Real eps = epsilon<Real>();
  bool converged = false;
  for (; sweeps < jacobi_max_sweeps; ++sweeps) {
    Real off = 0, diag = 0;
    for (int i = 0; i < n; ++i) {
      diag += a(i, i).real() * a(i, i).real();
      for (int j = i + 1; j < n; ++j)
        off += Real(2) * (a(i, j).real() * a(i, j).real() + a(i, j).imag() * a(i, j).imag());
    }
    if (off <= eps * eps * (diag + off)) {
      converged = true;
      break;
    }
    for (int p = 0; p < n; ++p)
      for (int q = p + 1; q < n; ++q) {
        if (a(p, q) == complex_type(0)) continue;
        const auto rot = jacobi_rotation(a(p, p).real(), a(q, q).real(), complex_type(a(p, q)));
        jacobi_rotate(a, n, p, q, rot);                                           // B <- J^H B J
        for (int k = 0; k < n; ++k) rot.apply_right(z[k * n + p], z[k * n + q]);  // Z <- Z J
      }
  }
  if (!converged) return eigh_not_converged;
  // Eigenvalues ascending with their columns of Z; then v_j = sum_i Z_ij u_i, built in a.
  for (int i = 0; i < n; ++i) w(i) = a(i, i).real();
  for (int i = 0; i < n - 1; ++i) {
    int m = i;
    for (int j = i + 1; j < n; ++j)
      if (w(j) < w(m)) m = j;
    if (m != i) {
      const Real tw = w(i);
      w(i) = w(m);
      w(m) = tw;
      for (int k = 0; k < n; ++k) {
        const complex_type tz = z[k * n + i];
        z[k * n + i] = z[k * n + m];
        z[k * n + m] = tz;
      }
    }
  }
  for (int j = 0; j < n; ++j)
    for (int l = 0; l < n; ++l) {
      complex_type s(0);
      for (int i = 0; i < n; ++i) s += z[i * n + j] * v(i, l);
      a(j, l) = s;
    }
  for (int j = 0; j < n; ++j)
    for (int l = 0; l < n; ++l) v(j, l) = a(j, l);
  return eigh_success;
}

}  // namespace qgml::linalg
