// Eigendecomposition of one complex Hermitian N x N matrix, callable on the device:
//   A v_j = w_j v_j with v_j = row j of V (v_j(i) = V(j, i)), w ascending, the v_j orthonormal;
//   equivalently A = V^T diag(w) conj(V).
//
// Algorithm (Golub & Van Loan, 4th ed., sections 8.3.1 and 8.3.5):
//  1. Householder reduction to real symmetric tridiagonal form, T = Q^H A Q with
//     Q = H_0 H_1 ... H_{N-2}, H_k = I - tau_k v_k v_k^H chosen so that H_k^H maps the subdiagonal part
//     of column k onto beta_k e_1 with beta_k real (the LAPACK zlarfg convention); this makes every
//     off-diagonal of T real, including the last one.
//  2. Q formed explicitly by backward accumulation and stored transposed (row c = column c of Q).
//  3. Implicit QL with Wilkinson-type shifts on T; every plane rotation G acting on columns (i, i+1)
//     of Z (T = Z diag(w) Z^T) is applied to rows (i, i+1) of the stored Q^T, which turns them into the
//     eigenvectors of A. Deflation by the test |e_m| + (|d_m| + |d_m+1|) == |d_m| + |d_m+1|.
//  4. Eigenpairs sorted ascending.
// Exactly degenerate and clustered spectra need no special treatment: the QL iteration deflates them
// and the eigenvectors stay orthonormal because they are products of unitary transformations.
//
// The routine is written once against the Loops interface (loops.hpp): SerialLoops gives the Serial
// variant (one thread per matrix), TeamLoops the Team variant (one team per matrix).
#pragma once

#include <Kokkos_Core.hpp>

#include "qgml/common/kokkos_compat.hpp"
#include "qgml/common/types.hpp"
#include "qgml/linalg/householder_tridiagonal.hpp"
#include "qgml/linalg/loops.hpp"

namespace qgml::linalg {

// Result codes of hermitian_eigh (also stored per point by batched_eigh).
enum EighInfo : int {
  eigh_success = 0,
  eigh_non_finite_input = 1,  // NaN or Inf in the matrix: w and V are set to NaN
  eigh_not_converged = 2,     // the QL iteration limit was reached: w and V are not valid
};

// Maximum QL iterations per eigenvalue; typical is 1.5-2.
inline constexpr int eigh_max_iterations_per_eigenvalue = 60;

// Scratch needed by one solve, in units of Real: tau and p (n complex each), d and e (n real each),
// and 8 Reals that carry integers broadcast from single() to the team.
KOKKOS_INLINE_FUNCTION constexpr int eigh_scratch_reals(int n) { return 6 * n + 8; }

// a: N x N Hermitian (both triangles read; overwritten). w: N (out). v: N x N (out, row j = eigenvector j).
// Returns an EighInfo code (the same on every thread of a team).
// FixedN > 0 promises a.extent(0) == FixedN: the loop bounds become compile-time constants, which
// lets the compiler unroll and keep small matrices in registers (batched_eigh dispatches small N).
// QInA: v is a itself (the same storage): Q^T is formed over the reflectors (step 2 below), so that one
// N x N array holds the whole solve (batched_eigh's EighStaging::scratch, in shared memory on GPUs).
template <int FixedN = 0, bool QInA = false, class Loops, class AView, class WView, class VView,
          class Real = typename WView::non_const_value_type>
KOKKOS_FUNCTION int hermitian_eigh(const Loops& loops, const AView& a, const WView& w, const VView& v, Real* scratch) {
  using complex_type = complex_t<Real>;
  const int n = FixedN > 0 ? FixedN : static_cast<int>(a.extent(0));
  complex_type* tau = reinterpret_cast<complex_type*>(scratch);
  complex_type* p = reinterpret_cast<complex_type*>(scratch + 2 * n);
  Real* d = scratch + 4 * n;
  Real* e = scratch + 5 * n;
  int* shared = reinterpret_cast<int*>(scratch + 6 * n);

  // --- 0. NaN / Inf anywhere: report, never iterate on garbage.
  const int bad = loops.template sum<int>(0, n * n, [&](const int ij) {
    const complex_type z = a(ij / n, ij % n);
    return (math::isfinite(z.real()) && math::isfinite(z.imag())) ? 0 : 1;
  });
  if (bad != 0) {
    const Real nan = math::sqrt(Real(-bad));
    loops.for_each(0, n * n, [&](const int ij) {
      v(ij / n, ij % n) = complex_type(nan, nan);
      if (ij < n) w(ij) = nan;
    });
    return eigh_non_finite_input;
  }
  if (n == 1) {
    loops.single([&]() {
      w(0) = a(0, 0).real();
      v(0, 0) = complex_type(1);
    });
    loops.barrier();
    return eigh_success;
  }

  // --- 1. Householder tridiagonalisation (householder_tridiagonal.hpp).
  hermitian_tridiagonalize<FixedN>(loops, a, tau, p, d, e);

  // --- 2. Q^T into v: row c of v = column c of Q = H_0 ... H_{n-2} e_c, accumulated backwards.
  // H_k acts on indices > k only, so before step k only the block of rows and columns > k of Q^T
  // differs from the identity, and step k reads its reflector from column k. In place (QInA, LAPACK's
  // zung2l idea), that block lives over the consumed reflectors: step k first makes row and column
  // k + 1 (reflector k + 1, used by the previous step) those of the identity.
  if constexpr (!QInA) {
    loops.for_each(0, n, [&](const int c) {
      for (int i = 0; i < n; ++i) v(c, i) = complex_type(c == i ? Real(1) : Real(0));
    });
    loops.barrier();
  }
  for (int k = n - 2; k >= 0; --k) {
    const int b = k + 1;
    if constexpr (QInA) {
      loops.for_each(b, n, [&](const int c) {
        v(b, c) = complex_type(c == b ? Real(1) : Real(0));
        if (c > b) v(c, b) = complex_type(0);
      });
      loops.barrier();
    }
    const complex_type t = tau[k];
    if (t.real() == Real(0) && t.imag() == Real(0)) continue;
    // column c of Q <- H_k column c:  q <- q - tau v (v^H q), for the columns c >= b touched so far.
    loops.for_each(b, n, [&](const int c) {
      complex_type dot(0);
      for (int i = b; i < n; ++i) dot += Kokkos::conj(a(i, k)) * v(c, i);
      dot *= t;
      for (int i = b; i < n; ++i) v(c, i) -= dot * a(i, k);
    });
    loops.barrier();
  }
  if constexpr (QInA) {
    loops.for_each(0, n, [&](const int c) {
      v(0, c) = complex_type(c == 0 ? Real(1) : Real(0));
      if (c > 0) v(c, 0) = complex_type(0);
    });
    loops.barrier();
  }

  // --- 3. Implicit QL on (d, e). One thread computes the rotations of a sweep, stored as (c, s) pairs
  // in tau's storage (free now); then the team applies them to rows of v.
  Real* cos_sin = reinterpret_cast<Real*>(tau);
  int info = eigh_success;
  for (int l = 0; l < n; ++l) {
    int iterations = 0;
    for (;;) {
      int m = l;
      for (; m < n - 1; ++m) {
        const Real dd = math::fabs(d[m]) + math::fabs(d[m + 1]);
        if (math::fabs(e[m]) + dd == dd) break;
      }
      if (m == l) break;
      if (++iterations > eigh_max_iterations_per_eigenvalue) {
        info = eigh_not_converged;
        break;
      }
      loops.barrier();  // every thread has read d, e before single() changes them
      loops.single([&]() {
        Real g = (d[l + 1] - d[l]) / (Real(2) * e[l]);
        Real r = detail::fast_hypot(g, Real(1));
        g = d[m] - d[l] + e[l] / (g + detail::sign_of(r, g));
        Real s = 1, c = 1, pp = 0;
        int i = m - 1;
        for (; i >= l; --i) {
          const Real f = s * e[i];
          const Real bb = c * e[i];
          r = detail::fast_hypot(f, g);
          e[i + 1] = r;
          if (r == Real(0)) {  // underflow: deflate and restart this eigenvalue
            d[i + 1] -= pp;
            e[m] = 0;
            break;
          }
          s = f / r;
          c = g / r;
          g = d[i + 1] - pp;
          r = (d[i] - g) * s + Real(2) * c * bb;
          pp = s * r;
          d[i + 1] = g + pp;
          g = c * r - bb;
          cos_sin[2 * i] = c;
          cos_sin[2 * i + 1] = s;
        }
        if (i < l) {
          d[l] -= pp;
          e[l] = g;
          e[m] = 0;
        }
        shared[0] = i + 1;  // rotations i + 1 .. m - 1 were computed
        shared[1] = m;
      });
      loops.barrier();
      const int first = shared[0];
      const int last = shared[1] - 1;
      if constexpr (Loops::is_serial) {
        // Rotation by rotation: two contiguous rows per rotation, vectorised across the row.
        for (int i = last; i >= first; --i) {
          const Real c = cos_sin[2 * i];
          const Real s = cos_sin[2 * i + 1];
          Real* zi = reinterpret_cast<Real*>(&v(i, 0));
          Real* zj = reinterpret_cast<Real*>(&v(i + 1, 0));
          for (int col = 0; col < 2 * n; ++col) {
            const Real f = zj[col];
            const Real z = zi[col];
            zj[col] = s * z + c * f;
            zi[col] = c * z - s * f;
          }
        }
      } else {
        // Each thread owns components: the whole sweep without a barrier. Row i + 1's entry after
        // rotation i is final; row i's is carried in a register into rotation i - 1, so that no
        // rotation reads back what the previous one stored (a round trip through global memory on GPUs).
        if (first <= last)
          loops.for_each(0, n, [&](const int col) {
            complex_type f = v(last + 1, col);
            for (int i = last; i >= first; --i) {
              const Real c = cos_sin[2 * i];
              const Real s = cos_sin[2 * i + 1];
              const complex_type z = v(i, col);
              v(i + 1, col) = s * z + c * f;
              f = c * z - s * f;
            }
            v(first, col) = f;
          });
      }
    }
    if (info != eigh_success) break;
  }
  loops.barrier();
  if (info != eigh_success) {
    const Real nan = math::sqrt(Real(-1 - info));
    loops.for_each(0, n, [&](const int i) { w(i) = nan; });
    return info;
  }

  // --- 4. Sort ascending (selection sort: at most n - 1 row swaps).
  for (int i = 0; i < n - 1; ++i) {
    int k = i;
    for (int j = i + 1; j < n; ++j)
      if (d[j] < d[k]) k = j;
    if (k != i) {
      loops.for_each(0, n, [&](const int col) {
        const complex_type tmp = v(i, col);
        v(i, col) = v(k, col);
        v(k, col) = tmp;
      });
      loops.barrier();
      loops.single([&]() {
        const Real tmp = d[i];
        d[i] = d[k];
        d[k] = tmp;
      });
      loops.barrier();
    }
  }
  loops.for_each(0, n, [&](const int i) { w(i) = d[i]; });
  return eigh_success;
}

}  // namespace qgml::linalg
