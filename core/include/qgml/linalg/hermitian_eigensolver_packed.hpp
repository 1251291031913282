// Eigendecomposition of a PACK of W complex Hermitian N x N matrices by one thread, in lockstep, with the
// matrix (lane) index innermost in every working array (structure of arrays): element (i, j) of the
// matrices of a pack is W consecutive Reals, so every inner loop runs over the W lanes and compiles to
// SIMD instructions (W = 8 doubles or 16 floats: two 256-bit vectors, the width GCC prefers with
// -march=native on current x86, or one AVX-512 vector), while the serial variant runs one scalar
// recurrence per matrix.
//
// Same algorithm and output contract as hermitian_eigh (hermitian_eigensolver.hpp): Householder
// tridiagonalisation (here updating only the lower triangle), Q formed explicitly (stored transposed),
// implicit QL with the rotations applied to rows of Q^T (N < packed_real_z_min_n) or to a real Z = I
// and then V = Z Q^T (N >= packed_real_z_min_n: half the arithmetic of the rotations), eigenpairs
// sorted ascending; row j of V(t) is eigenvector j; info codes eigh_success, eigh_non_finite_input (w,
// V NaN), eigh_not_converged (w NaN). Rounding differs from the serial variant in the order of a few
// operations (s = f * (1 / r), c = g * (1 / r): one division per rotation instead of two) and, from
// packed_real_z_min_n on, in the eigenvectors' sums; the same tolerances hold.
//
// Lockstep with per-lane control flow:
//  - Householder steps and the Q accumulation are data-independent except for the "nothing to
//    annihilate" case (tau = 0), which becomes a per-lane blend (tau = 0 and v = 0 leave a lane's
//    matrix unchanged exactly).
//  - QL: the lanes work on the same eigenvalue index l; each lane has its own deflation point m and
//    iteration count. A sweep runs over i = max(m) - 1 .. l; a lane takes part only for i < m (its
//    own sweep), elsewhere its rotation is the identity (c = 1, s = 0, applied exactly) and d, e are
//    blended back. Lanes that have converged at l wait; the number of sweeps at l is the maximum over
//    the lanes (its measured cost: perf/NOTES.md, "Packed (SIMD across matrices) eigensolver").
//  - Non-finite input and padding lanes (the last pack of a batch) run on zero matrices, which
//    converge without a sweep, so they never slow down or contaminate the other lanes.
//
// Host only: batched_eigh instantiates it for host execution spaces (on GPUs a thread per matrix
// already runs in lockstep with its warp). It is nevertheless plain portable C++ (KOKKOS_INLINE_FUNCTION,
// qgml::math), compiled by nvcc as well; the only ISA-specific lines are the optional AVX square roots
// below (the compiler will not vectorise std::sqrt while -fmath-errno is on, the default).
#pragma once

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <type_traits>

#include "qgml/common/kokkos_compat.hpp"
#include "qgml/common/types.hpp"
#include "qgml/linalg/hermitian_eigensolver.hpp"
#include "qgml/linalg/lanes.hpp"
#include "qgml/linalg/packed_eigh_arrays.hpp"
#include "qgml/linalg/packed_householder_tridiagonal.hpp"
#include "qgml/linalg/packed_tridiagonal_ql.hpp"

namespace qgml::linalg {

// Step 2: row c of p.zr, p.zi <- Q e_c (the array is "Q^T" in the comments below).
template <int W, class Real>
KOKKOS_FUNCTION void packed_form_q(const PackedEighArrays<W, Real>& p) {
  const int n = p.n;
  Real* const ar = p.ar;
  Real* const ai = p.ai;
  Real* const zr = p.zr;
  Real* const zi = p.zi;
  Real* const tr = p.tr;
  Real* const ti = p.ti;
  auto A = [&](Real* base, int i, int j) { return base + (i * n + j) * W; };

  // --- 2. Q^T: row c = H_0 ... H_{n-2} e_c, accumulated backwards.
  const int nn = n * n;
  for (int ij = 0; ij < nn; ++ij) {
    Real* xr = zr + ij * W;
    Real* xi = zi + ij * W;
    const Real one = (ij % (n + 1) == 0) ? Real(1) : Real(0);
    QGML_LANES(q, W) {
      xr[q] = one;
      xi[q] = Real(0);
    }
  }
  for (int k = n - 2; k >= 0; --k) {
    const Real* tkr = tr + k * W;
    const Real* tki = ti + k * W;
    int act[W];
    QGML_LANES(q, W) act[q] = ((tkr[q] != Real(0)) | (tki[q] != Real(0))) ? 1 : 0;
    if (!packed_detail::any_lane<W>(act)) continue;
    const int b = k + 1;
    // v_k contiguous in p (free after step 1): in place, its entries are n W Reals apart (4 KiB at N = 64
    // in double, all in one set of the L1 cache), and every row c reads all of them twice.
    for (int i = b; i < n; ++i) {
      const Real* vr = A(ar, i, k);
      const Real* vi = A(ai, i, k);
      QGML_LANES(q, W) {
        p.pr[i * W + q] = vr[q];
        p.pi[i * W + q] = vi[q];
      }
    }
    for (int c = b; c < n; ++c) {
      Real dr[W], di[W];
      QGML_LANES(q, W) dr[q] = di[q] = Real(0);
      for (int i = b; i < n; ++i) {  // dot = v^H q
        const Real* vr = p.pr + i * W;
        const Real* vi = p.pi + i * W;
        const Real* xr = A(zr, c, i);
        const Real* xi = A(zi, c, i);
        QGML_LANES(q, W) {
          dr[q] += vr[q] * xr[q] + vi[q] * xi[q];
          di[q] += vr[q] * xi[q] - vi[q] * xr[q];
        }
      }
      QGML_LANES(q, W) {  // dot *= tau
        const Real x = dr[q], y = di[q];
        dr[q] = tkr[q] * x - tki[q] * y;
        di[q] = tkr[q] * y + tki[q] * x;
      }
      for (int i = b; i < n; ++i) {  // q -= dot v
        const Real* vr = p.pr + i * W;
        const Real* vi = p.pi + i * W;
        Real* xr = A(zr, c, i);
        Real* xi = A(zi, c, i);
        // Every load before the stores: v(i) reloaded after the store to xr (the compiler must assume
        // they may alias) shares its address bits 0-11 at N = 64 and waits for it (4 KiB aliasing).
        QGML_LANES(q, W) {
          const Real v_r = vr[q], v_i = vi[q], x_r = xr[q], x_i = xi[q];
          xr[q] = x_r - (dr[q] * v_r - di[q] * v_i);
          xi[q] = x_i - (dr[q] * v_i + di[q] * v_r);
        }
      }
    }
  }
}

// Eigenvalues and eigenvectors of the pack loaded in p.ar, p.ai (only the lower triangle, diagonal
// included, is read): on return p.d holds the eigenvalues in no particular order and row j of Q^T
// (p.zr, p.zi) the eigenvector of p.d[j]; failed[q] = 1 for a lane whose QL did not converge.
template <int W, class Real>
KOKKOS_FUNCTION void packed_eigh_solve(const PackedEighArrays<W, Real>& p, int* failed) {
  packed_tridiagonalize<W>(p);
  packed_form_q<W>(p);
  packed_ql<W>(p, failed, true);
}

// Step 4: per lane, sorts ascending (selection sort, as hermitian_eigh) and writes info, w and the rows
// of V for the lanes below count.
template <int W, class WView, class VView, class InfoView, class Real>
KOKKOS_FUNCTION void store_pack(const WView& w, const VView& v, const InfoView& info, const int first, const int count,
                                const PackedEighArrays<W, Real>& p, const int* code_in, const int* failed) {
  using complex_type = complex_t<Real>;
  const int n = p.n;
  const int lanes = count - first < W ? count - first : W;
  const Real* const d = p.d;
  int* const order = p.order;
  for (int q = 0; q < lanes; ++q) {
    const int t = first + q;
    int code = code_in[q];
    if (code == eigh_success && failed[q]) code = eigh_not_converged;
    info(t) = code;
    if (code == eigh_non_finite_input) {
      const Real nan = math::sqrt(Real(-1));
      for (int i = 0; i < n; ++i) {
        w(t, i) = nan;
        for (int j = 0; j < n; ++j) v(t, i, j) = complex_type(nan, nan);
      }
      continue;
    }
    for (int i = 0; i < n; ++i) order[i] = i;
    if (code == eigh_success) {
      for (int i = 0; i < n - 1; ++i) {
        int k = i;
        for (int j = i + 1; j < n; ++j)
          if (d[order[j] * W + q] < d[order[k] * W + q]) k = j;
        const int tmp = order[i];
        order[i] = order[k];
        order[k] = tmp;
      }
    }
    const Real nan = math::sqrt(Real(-1 - code));
    for (int i = 0; i < n; ++i) {
      const int src = order[i];
      w(t, i) = code == eigh_success ? d[src * W + q] : nan;
      for (int j = 0; j < n; ++j) v(t, i, j) = complex_type(p.at(p.zr, src, j)[q], p.at(p.zi, src, j)[q]);
    }
  }
}

// Solves the matrices first .. first + W - 1 of the batch (those below count; the others are padding
// and are not written). h: T x N x N (read only), w: T x N, v: T x N x N, info: T.
// scratch: packed_eigh_scratch_reals(N, W) Reals.
template <int W, class HView, class WView, class VView, class InfoView,
          class Real = typename WView::non_const_value_type>
KOKKOS_FUNCTION void hermitian_eigh_packed(const HView& h, const WView& w, const VView& v, const InfoView& info,
                                           const int first, const int count, Real* scratch) {
  const PackedEighArrays<W, Real> p(static_cast<int>(h.extent(1)), scratch);
  int code[W], failed[W];
  load_pack<W>(h, first, count, p, code);
  packed_eigh_solve<W>(p, failed);
  store_pack<W>(w, v, info, first, count, p, code, failed);
}

}  // namespace qgml::linalg
