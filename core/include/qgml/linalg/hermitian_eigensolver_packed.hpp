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
//    the lanes (measured cost of this in perf/NOTES.md).
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

#if defined(__AVX__) && !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
#include <immintrin.h>
#define QGML_PACKED_AVX 1
#endif

namespace qgml::linalg {

// Lanes per pack: 64 bytes (8 doubles, 16 floats). 4 and 16 doubles per pack measured slower
// (perf/NOTES.md).
template <class Real>
inline constexpr int packed_eigh_width = 64 / int(sizeof(Real));

// Scratch of one pack, in Reals: A and Q^T (n x n complex per lane, real and imaginary parts
// separate), d, e, tau (complex), p (complex), one spare n (sorting), per lane.
KOKKOS_INLINE_FUNCTION constexpr int packed_eigh_scratch_reals(int n, int width) { return width * (4 * n * n + 7 * n); }

namespace packed_detail {

// out[q] = sqrt(in[q]) for the W lanes.
template <int W, class Real>
KOKKOS_FORCEINLINE_FUNCTION void sqrt_lanes(const Real* in, Real* out) {
#if defined(QGML_PACKED_AVX)
  if constexpr (std::is_same_v<Real, double> && W % 4 == 0) {
    for (int q = 0; q < W; q += 4) _mm256_storeu_pd(out + q, _mm256_sqrt_pd(_mm256_loadu_pd(in + q)));
    return;
  } else if constexpr (std::is_same_v<Real, float> && W % 8 == 0) {
    for (int q = 0; q < W; q += 8) _mm256_storeu_ps(out + q, _mm256_sqrt_ps(_mm256_loadu_ps(in + q)));
    return;
  }
#endif
  for (int q = 0; q < W; ++q) out[q] = math::sqrt(in[q]);
}

// 1 if flag[q] != 0 for some lane.
template <int W>
KOKKOS_FORCEINLINE_FUNCTION int any_lane(const int* flag) {
  int any = 0;
  for (int q = 0; q < W; ++q) any |= flag[q];
  return any;
}

// 1 if sqrt(s), s = a^2 + b^2, may not give hypot(a, b) to rounding: s outside the range of
// detail::fast_hypot (overflow, underflow, or a == b == 0, the only case where hypot is 0).
template <class Real>
KOKKOS_FORCEINLINE_FUNCTION int hypot_outside(Real s) {
  constexpr Real lo = std::is_same_v<Real, float> ? Real(1e-30) : Real(1e-290);
  constexpr Real hi = std::is_same_v<Real, float> ? Real(1e30) : Real(1e290);
  return int(!((s > lo) & (s < hi)));
}

// r[q] = hypot(a[q], b[q]) for the lanes flagged by hypot_outside (rare). Out of line: inlined, the
// branchy loop keeps GCC 12 from vectorising the loops around the call site.
template <int W, class Real>
QGML_NOINLINE KOKKOS_INLINE_FUNCTION void fix_hypot(const int* outside, const Real* a, const Real* b, Real* r) {
  for (int q = 0; q < W; ++q)
    if (outside[q]) r[q] = math::hypot(a[q], b[q]);
}

// r[q] = hypot(a[q], b[q]) as detail::fast_hypot: sqrt(a^2 + b^2), and hypot for the lanes outside
// its range.
template <int W, class Real>
KOKKOS_FORCEINLINE_FUNCTION void hypot_lanes(const Real* a, const Real* b, Real* r) {
  Real s[W];
  int outside[W];
  QGML_LANES(q, W) {
    s[q] = a[q] * a[q] + b[q] * b[q];
    outside[q] = hypot_outside(s[q]);
  }
  sqrt_lanes<W>(s, r);
  if (any_lane<W>(outside)) fix_hypot<W>(outside, a, b, r);
}

}  // namespace packed_detail

// The working arrays of a pack inside its scratch (packed_eigh_scratch_reals(n, W) Reals), lane q of
// element (i, j) at (i * n + j) * W + q and of entry i at i * W + q.
template <int W, class Real>
struct PackedEighArrays {
  int n;
  Real *ar, *ai;  // A (lower triangle), then the Householder vectors; then Z (ar, packed_ql)
  Real *zr, *zi;  // Q^T, then the eigenvectors (row j = eigenvector j)
  Real *d, *e;    // tridiagonal, then the eigenvalues (d, unsorted)
  Real *tr, *ti;  // tau
  Real *pr, *pi;  // p; then v_k (packed_form_q); then a column of Q^T (packed_ql)
  int* order;     // n ints (sorting), in the last n Reals

  KOKKOS_INLINE_FUNCTION PackedEighArrays(int n_, Real* scratch) : n(n_) {
    const int nn = n * n;
    ar = scratch;
    ai = ar + nn * W;
    zr = ai + nn * W;
    zi = zr + nn * W;
    d = zi + nn * W;
    e = d + n * W;
    tr = e + n * W;
    ti = tr + n * W;
    pr = ti + n * W;
    pi = pr + n * W;
    order = reinterpret_cast<int*>(pi + n * W);
  }
  KOKKOS_INLINE_FUNCTION Real* at(Real* base, int i, int j) const { return base + (i * n + j) * W; }
};

// (out_r, out_i)[q] = sum_{i = first}^{last - 1} conj(a_i) b_i in each lane q, a_i at (ar, ai) + i * a_stride and
// b_i at (br, bi) + i * b_stride (complex vectors of a pack, lane innermost; strides in Reals).
template <int W, class Real>
KOKKOS_FORCEINLINE_FUNCTION void packed_conj_dot(const int first, const int last, const Real* ar, const Real* ai,
                                                 const int a_stride, const Real* br, const Real* bi, const int b_stride,
                                                 Real* out_r, Real* out_i) {
  QGML_LANES(q, W) out_r[q] = out_i[q] = Real(0);
  for (int i = first; i < last; ++i) {
    const Real* a_r = ar + i * a_stride;
    const Real* a_i = ai + i * a_stride;
    const Real* b_r = br + i * b_stride;
    const Real* b_i = bi + i * b_stride;
    QGML_LANES(q, W) {
      out_r[q] += a_r[q] * b_r[q] + a_i[q] * b_i[q];
      out_i[q] += a_r[q] * b_i[q] - a_i[q] * b_r[q];
    }
  }
}

// Loads the matrices first .. first + W - 1 of h (those below count) into the pack's A; NaN / Inf lanes
// and padding lanes become zero matrices. code[q]: eigh_success or eigh_non_finite_input.
template <int W, class HView, class Real>
KOKKOS_FUNCTION void load_pack(const HView& h, const int first, const int count, const PackedEighArrays<W, Real>& p,
                               int* code) {
  using complex_type = complex_t<Real>;
  const int n = p.n, nn = n * n;
  const int lanes = count - first < W ? count - first : W;
  for (int q = 0; q < W; ++q) {
    code[q] = eigh_success;
    bool finite = q < lanes;
    if (finite) {
      const int t = first + q;
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
          const complex_type z = h(t, i, j);
          p.at(p.ar, i, j)[q] = z.real();
          p.at(p.ai, i, j)[q] = z.imag();
          finite = finite && math::isfinite(z.real()) && math::isfinite(z.imag());
        }
      if (!finite) code[q] = eigh_non_finite_input;
    }
    if (!finite)
      for (int ij = 0; ij < nn; ++ij) p.ar[ij * W + q] = p.ai[ij * W + q] = Real(0);
  }
}

// From n = packed_staggered_min_n, packed_tridiagonalize keeps p_k, p_{k + 1} and contiguous copies of
// v_k, v_{k + 1} in Q^T's storage (free until packed_form_q), each array at a chosen offset within a
// 4 KiB page. When n is a multiple of 32, a row of A (n W Reals, 64 n bytes) and every array of the
// scratch start at one or two offsets in a page, and the fused pass (householder_update_product) lost
// most of its time to two effects of that: the entries of a column of A fall into one or two sets of
// the 8-way L1 cache, so its four column reads missed L1 for every element; and a load whose address
// matches a store still in flight in bits 0-11 waits for it (4 KiB aliasing), which y(c) did after the
// stores of A(r, c). Offsets in elements (W Reals, 64 bytes) modulo 64: A's rows 0 or 32, p and y real
// 8 and imaginary 40, the copies 10, 44, 12, 42; no load of the pass then shares the page offset of a
// store made fewer than 16 elements before it. perf/NOTES.md, "4 KiB aliasing".
inline constexpr int packed_staggered_min_n = 32;

namespace packed_detail {

// Step k's reflector from column k below the diagonal (A(i, k), i >= b = k + 1, as updated by the
// steps before): H^H (alpha, x) = (beta, 0) with beta = -sign(Re alpha) |(alpha, x)|, tau = (beta -
// alpha) / beta, v = (1, x / (alpha - beta)); nothing to do (tau = 0, beta = alpha) when x = 0 and alpha
// is real. Stores tau_k (p.tr, p.ti), e_k = beta, d_k = A(k, k) and v_k in column k. Returns 1 if some
// lane has something to annihilate.
template <int W, class Real>
KOKKOS_FORCEINLINE_FUNCTION int householder_reflector(const PackedEighArrays<W, Real>& p, const int k) {
  const int n = p.n, b = k + 1;
  Real xn[W], alr[W], ali[W], nrm[W], s_r[W], s_i[W];
  QGML_LANES(q, W) {
    xn[q] = Real(0);
    alr[q] = p.at(p.ar, b, k)[q];
    ali[q] = p.at(p.ai, b, k)[q];
  }
  for (int i = b + 1; i < n; ++i) {
    const Real* xr = p.at(p.ar, i, k);
    const Real* xi = p.at(p.ai, i, k);
    QGML_LANES(q, W) xn[q] += xr[q] * xr[q] + xi[q] * xi[q];
  }
  QGML_LANES(q, W) nrm[q] = alr[q] * alr[q] + ali[q] * ali[q] + xn[q];
  sqrt_lanes<W>(nrm, nrm);
  int act[W];
  Real* const dk = p.d + k * W;
  Real* const ek = p.e + k * W;
  Real* const tkr = p.tr + k * W;
  Real* const tki = p.ti + k * W;
  const Real* const akk = p.at(p.ar, k, k);
  QGML_LANES(q, W) {
    const bool active = (xn[q] != Real(0)) | (ali[q] != Real(0));
    const Real beta = active ? (alr[q] >= Real(0) ? -nrm[q] : nrm[q]) : alr[q];
    const Real bsafe = active ? beta : Real(1);
    tkr[q] = active ? (beta - alr[q]) / bsafe : Real(0);
    tki[q] = active ? -ali[q] / bsafe : Real(0);
    const Real dr = alr[q] - beta;
    const Real den = active ? dr * dr + ali[q] * ali[q] : Real(1);
    s_r[q] = active ? dr / den : Real(0);  // 1 / (alpha - beta)
    s_i[q] = active ? -ali[q] / den : Real(0);
    ek[q] = beta;
    dk[q] = akk[q];
    act[q] = active ? 1 : 0;
  }
  {
    Real* vr = p.at(p.ar, b, k);
    Real* vi = p.at(p.ai, b, k);
    QGML_LANES(q, W) {
      vr[q] = Real(1);
      vi[q] = Real(0);
    }
  }
  for (int i = b + 1; i < n; ++i) {
    Real* vr = p.at(p.ar, i, k);
    Real* vi = p.at(p.ai, i, k);
    QGML_LANES(q, W) {
      const Real xr = vr[q], xi = vi[q];
      vr[q] = xr * s_r[q] - xi * s_i[q];
      vi[q] = xr * s_i[q] + xi * s_r[q];
    }
  }
  return any_lane<W>(act);
}

// With y = A_bb v on entry (b = k + 1, v = v_k, tau = tau_k): p <- tau y, then p <- p - 1/2 tau (p^H v) v,
// so that A_bb - v p^H - p v^H = H_k^H A_bb H_k.
template <int W, class Real>
KOKKOS_FORCEINLINE_FUNCTION void householder_finish_p(const PackedEighArrays<W, Real>& p, const int k, Real* pr,
                                                      Real* pi) {
  const int n = p.n, b = k + 1;
  const Real* const t_r = p.tr + k * W;
  const Real* const t_i = p.ti + k * W;
  for (int r = b; r < n; ++r) {
    Real* p_r = pr + r * W;
    Real* p_i = pi + r * W;
    QGML_LANES(q, W) {
      const Real sr = p_r[q], si = p_i[q];
      p_r[q] = t_r[q] * sr - t_i[q] * si;
      p_i[q] = t_r[q] * si + t_i[q] * sr;
    }
  }
  Real gr[W], gi[W];
  packed_conj_dot<W>(b, n, pr, pi, W, p.at(p.ar, 0, k), p.at(p.ai, 0, k), n * W, gr, gi);  // p^H v
  QGML_LANES(q, W) {
    const Real pvr = gr[q], pvi = gi[q];
    gr[q] = Real(-0.5) * (t_r[q] * pvr - t_i[q] * pvi);
    gi[q] = Real(-0.5) * (t_r[q] * pvi + t_i[q] * pvr);
  }
  for (int i = b; i < n; ++i) {
    const Real* vr = p.at(p.ar, i, k);
    const Real* vi = p.at(p.ai, i, k);
    Real* p_r = pr + i * W;
    Real* p_i = pi + i * W;
    QGML_LANES(q, W) {
      p_r[q] += gr[q] * vr[q] - gi[q] * vi[q];
      p_i[q] += gr[q] * vi[q] + gi[q] * vr[q];
    }
  }
}

// Column b = k + 1 of step k's rank-2 update, A(r, b) -= v(r) conj(p(b)) + p(r) conj(v(b)) for r >= b
// (v = v_k, p = p_k): what step k + 1's reflector reads.
template <int W, class Real>
KOKKOS_FORCEINLINE_FUNCTION void householder_update_column(const PackedEighArrays<W, Real>& p, const int k,
                                                           const Real* pr, const Real* pi) {
  const int n = p.n, b = k + 1;
  Real vcr[W], vci[W], pcr[W], pci[W];
  QGML_LANES(q, W) {
    vcr[q] = p.at(p.ar, b, k)[q];
    vci[q] = p.at(p.ai, b, k)[q];
    pcr[q] = pr[b * W + q];
    pci[q] = pi[b * W + q];
  }
  for (int r = b; r < n; ++r) {
    const Real* vrr = p.at(p.ar, r, k);
    const Real* vri = p.at(p.ai, r, k);
    const Real* prr = pr + r * W;
    const Real* pri = pi + r * W;
    Real* xr = p.at(p.ar, r, b);
    Real* xi = p.at(p.ai, r, b);
    QGML_LANES(q, W) {
      xr[q] -= vrr[q] * pcr[q] + vri[q] * pci[q] + prr[q] * vcr[q] + pri[q] * vci[q];
      xi[q] -= vri[q] * pcr[q] - vrr[q] * pci[q] + pri[q] * vcr[q] - prr[q] * vci[q];
    }
  }
}

// v_k (vr, vi) and v_{k + 1} (ur, ui) of householder_update_product, entry i at i * stride Reals.
template <class Real>
struct PackedReflectorColumns {
  const Real *vr, *vi, *ur, *ui;
  int stride;
};

// Array j (0 .. 7) of packed_staggered_min_n's layout, its entry 0 at `offset` elements into its region of
// 64 (ceil(n / 64) + 1) elements; 8 regions fit into Q^T's 2 n^2 elements for n >= 32.
template <int W, class Real>
KOKKOS_FORCEINLINE_FUNCTION Real* staggered_array(const PackedEighArrays<W, Real>& p, const int j, const int offset) {
  const int region = 64 * ((p.n + 63) / 64 + 1);
  return p.zr + (j * region + offset) * W;
}

// v_k and v_{k + 1} (columns k and k + 1 of A, rows k + 2 ..) for the pass of step k (k = -1: the
// prologue, v_0 only): copied into (vr, vi, ur, ui) when given, else read in place.
template <int W, class Real>
KOKKOS_FORCEINLINE_FUNCTION PackedReflectorColumns<Real> reflector_columns(const PackedEighArrays<W, Real>& p,
                                                                           const int k, Real* vr, Real* vi, Real* ur,
                                                                           Real* ui) {
  const int n = p.n, ku = k < 0 ? 0 : k, km = k + 1;
  if (!vr) return {p.at(p.ar, 0, ku), p.at(p.ai, 0, ku), p.at(p.ar, 0, km), p.at(p.ai, 0, km), n * W};
  for (int i = k + 2; i < n; ++i) QGML_LANES(q, W) {
      vr[i * W + q] = p.at(p.ar, i, ku)[q];
      vi[i * W + q] = p.at(p.ai, i, ku)[q];
      ur[i * W + q] = p.at(p.ar, i, km)[q];
      ui[i * W + q] = p.at(p.ai, i, km)[q];
    }
  return {vr, vi, ur, ui, W};
}

// One pass over the lower triangle of A(lo.., lo..), lo = k + 2, row by row; per element, first step k's
// rank-2 update A(r, c) -= v(r) conj(p(c)) + p(r) conj(v(c)) (Update; v = v_k, p = p_k), then the
// element's share of y = A_lo,lo u with u = v_{k + 1} (Matvec; into y, each element read once: A(r, c),
// c < r, adds A(r, c) u(c) to y(r) and conj(A(r, c)) u(r) to y(c); y(r) is complete after row r and the
// rows below it). Fusing the two halves the passes over the trailing matrix (one instead of two per
// step), with the same arithmetic per element as the update followed by the product.
template <bool Update, bool Matvec, int W, class Real>
KOKKOS_FORCEINLINE_FUNCTION void householder_update_product(const PackedEighArrays<W, Real>& p, const int k,
                                                            const PackedReflectorColumns<Real>& v, const Real* pr,
                                                            const Real* pi, Real* yr, Real* yi) {
  const int n = p.n, lo = k + 2;
  if (Matvec)
    for (int r = lo; r < n; ++r) QGML_LANES(q, W) yr[r * W + q] = yi[r * W + q] = Real(0);
  for (int r = lo; r < n; ++r) {
    // Row r's vectors in locals: read through pointers, the compiler reloads them after every store
    // to A (they might alias it).
    Real vrr[W], vri[W], prr[W], pri[W], urr[W], uri[W], rr[W], ii[W], ri[W], ir[W];
    Real* const arow = p.at(p.ar, r, 0);
    Real* const irow = p.at(p.ai, r, 0);
    QGML_LANES(q, W) {
      Real xr = arow[r * W + q], xi = irow[r * W + q];
      if (Update) {
        vrr[q] = v.vr[r * v.stride + q];
        vri[q] = v.vi[r * v.stride + q];
        prr[q] = pr[r * W + q];
        pri[q] = pi[r * W + q];
        xr -= vrr[q] * prr[q] + vri[q] * pri[q] + prr[q] * vrr[q] + pri[q] * vri[q];
        xi -= vri[q] * prr[q] - vrr[q] * pri[q] + pri[q] * vrr[q] - prr[q] * vri[q];
        arow[r * W + q] = xr;
        irow[r * W + q] = xi;
      }
      if (Matvec) {
        urr[q] = v.ur[r * v.stride + q];
        uri[q] = v.ui[r * v.stride + q];
        rr[q] = xr * urr[q];
        ii[q] = xi * uri[q];
        ri[q] = xr * uri[q];
        ir[q] = xi * urr[q];
      }
    }
    for (int c = lo; c < r; ++c) {
      Real* xr = arow + c * W;
      Real* xi = irow + c * W;
      const Real* vcr = v.vr + c * v.stride;
      const Real* vci = v.vi + c * v.stride;
      const Real* pcr = pr + c * W;
      const Real* pci = pi + c * W;
      const Real* ur = v.ur + c * v.stride;
      const Real* ui = v.ui + c * v.stride;
      Real* y_r = yr + c * W;
      Real* y_i = yi + c * W;
      // One loop body: the updated element stays in registers for the product (two loops would
      // reload it after the stores, which the compiler must assume may alias it).
      QGML_LANES(q, W) {
        Real x_r = xr[q], x_i = xi[q];
        if (Update) {
          x_r -= vrr[q] * pcr[q] + vri[q] * pci[q] + prr[q] * vcr[q] + pri[q] * vci[q];
          x_i -= vri[q] * pcr[q] - vrr[q] * pci[q] + pri[q] * vcr[q] - prr[q] * vci[q];
          xr[q] = x_r;
          xi[q] = x_i;
        }
        if (Matvec) {
          rr[q] += x_r * ur[q];
          ii[q] += x_i * ui[q];
          ri[q] += x_r * ui[q];
          ir[q] += x_i * ur[q];
          y_r[q] += x_r * urr[q] + x_i * uri[q];
          y_i[q] += x_r * uri[q] - x_i * urr[q];
        }
      }
    }
    if (Matvec) {
      Real* y_r = yr + r * W;
      Real* y_i = yi + r * W;
      QGML_LANES(q, W) {
        y_r[q] += rr[q] - ii[q];
        y_i[q] += ri[q] + ir[q];
      }
    }
  }
}

}  // namespace packed_detail

// Step 1 on the pack loaded in p.ar, p.ai (only the lower triangle, diagonal included, is read):
// A = Q T Q^H with T real symmetric tridiagonal (diagonal p.d, off-diagonal p.e[0 .. n - 2], p.e[n - 1]
// = 0) and Q = H_0 ... H_{n-2}, H_k = I - tau_k v_k v_k^H, tau_k in p.tr, p.ti, v_k(k + 1) = 1 and
// v_k(i) = A(i, k) for i > k + 1 (in p.ar, p.ai).
//
// Step k (see hermitian_eigh): the reflector from column k, y = A_bb v_k (b = k + 1), p_k from y
// (householder_finish_p), and A_bb <- A_bb - v_k p_k^H - p_k v_k^H. The update of step k and the
// product of step k + 1 share one pass over the trailing matrix (householder_update_product): column
// b is updated first, step k + 1's reflector is formed from it, then the rest of A_bb is updated and
// multiplied by v_{k + 1} element by element. p_{k + 1} lives in Q^T's storage (p.zr), which
// packed_form_q fills only afterwards.
template <int W, class Real>
KOKKOS_FUNCTION void packed_tridiagonalize(const PackedEighArrays<W, Real>& p) {
  using namespace packed_detail;
  const int n = p.n;
  const bool staggered = n >= packed_staggered_min_n;
  Real *pk_r = p.pr, *pk_i = p.pi;          // p_k
  Real *pn_r = p.zr, *pn_i = p.zr + n * W;  // p_{k + 1}
  Real *cvr = nullptr, *cvi = nullptr, *cur = nullptr, *cui = nullptr;
  if (staggered) {
    pk_r = staggered_array(p, 0, 8);
    pk_i = staggered_array(p, 1, 40);
    pn_r = staggered_array(p, 2, 8);
    pn_i = staggered_array(p, 3, 40);
    cvr = staggered_array(p, 4, 10);
    cvi = staggered_array(p, 5, 44);
    cur = staggered_array(p, 6, 12);
    cui = staggered_array(p, 7, 42);
  }
  int active = n > 1 ? householder_reflector<W>(p, 0) : 0;
  if (active)
    householder_update_product<false, true, W>(p, -1, reflector_columns(p, -1, cvr, cvi, cur, cui), pk_r, pk_i, pk_r,
                                               pk_i);
  for (int k = 0; k < n - 1; ++k) {
    if (active) {
      householder_finish_p<W>(p, k, pk_r, pk_i);
      householder_update_column<W>(p, k, pk_r, pk_i);
    }
    if (k + 1 == n - 1) break;
    const int next = householder_reflector<W>(p, k + 1);
    if (active || next) {
      const PackedReflectorColumns<Real> v = reflector_columns(p, k, cvr, cvi, cur, cui);
      if (active && next)
        householder_update_product<true, true, W>(p, k, v, pk_r, pk_i, pn_r, pn_i);
      else if (active)
        householder_update_product<true, false, W>(p, k, v, pk_r, pk_i, pn_r, pn_i);
      else
        householder_update_product<false, true, W>(p, k, v, pk_r, pk_i, pn_r, pn_i);
    }
    Real* t = pk_r;
    pk_r = pn_r;
    pn_r = t;
    t = pk_i;
    pk_i = pn_i;
    pn_i = t;
    active = next;
  }
  {
    const Real* ann = p.at(p.ar, n - 1, n - 1);
    QGML_LANES(q, W) {
      p.d[(n - 1) * W + q] = ann[q];
      p.e[(n - 1) * W + q] = Real(0);
    }
  }
}

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

// The smallest N whose eigenvector rotations in packed_ql go to a real Z (see there). Measured
// (qgml_bench_eigh, one thread, double): N = 8 1.3x slower with Z, N = 16 the same, N = 24 1.0-1.3x
// faster, N = 64 1.6x together with the contiguous v_k of packed_form_q.
inline constexpr int packed_real_z_min_n = 24;

// Step 3: the eigenvalues of T into p.d (no particular order); with vectors, the rotations are applied to
// the rows of p.zr, p.zi (Q^T), or from N = packed_real_z_min_n to a real Z that multiplies Q^T at the
// end, after which p.zr, p.zi hold the eigenvectors (row j of the eigenvalue p.d[j]). failed[q] = 1
// for a lane whose QL did not converge.
template <int W, class Real>
KOKKOS_FUNCTION void packed_ql(const PackedEighArrays<W, Real>& p, int* failed, const bool vectors) {
  const int n = p.n;
  Real* const zr = p.zr;
  Real* const zi = p.zi;
  Real* const d = p.d;
  Real* const e = p.e;
  auto A = [&](Real* base, int i, int j) { return base + (i * n + j) * W; };
  // From N = packed_real_z_min_n the rotations go to a real Z = I (in p.ar, free after step 2) and the
  // eigenvectors are Z Q^T at the end (2 n^3 multiply-adds per lane against the ~4 n^2 n saved by
  // rotating real rows); below it the rows of Q^T are rotated directly.
  const bool real_z = vectors && n >= packed_real_z_min_n;
  Real* const zz = p.ar;
  if (real_z)
    for (int ij = 0; ij < n * n; ++ij) {
      const Real one = (ij % (n + 1) == 0) ? Real(1) : Real(0);
      QGML_LANES(q, W) p.ar[ij * W + q] = one;
    }

  // --- 3. Implicit QL on (d, e), lanes in lockstep on the eigenvalue index l.
  for (int q = 0; q < W; ++q) failed[q] = 0;
  for (int l = 0; l < n; ++l) {
    int iterations[W];
    for (int q = 0; q < W; ++q) iterations[q] = 0;
    for (;;) {
      // Deflation point of every lane: the first m >= l with a negligible e[m] (e[n - 1] = 0). The scan
      // always runs to n - 1 (an early exit when all lanes have found m stops GCC vectorising it).
      int m[W], found[W];
      QGML_LANES(q, W) {
        m[q] = n - 1;
        found[q] = 0;
      }
      for (int mm = l; mm < n - 1; ++mm) {
        const Real* d0 = d + mm * W;
        const Real* d1 = d0 + W;
        const Real* em = e + mm * W;
        QGML_LANES(q, W) {
          const Real dd = math::fabs(d0[q]) + math::fabs(d1[q]);
          const int small = (math::fabs(em[q]) + dd == dd) ? 1 : 0;
          const int take = small & (1 - found[q]);
          m[q] = take ? mm : m[q];
          found[q] |= small;
        }
      }
      int top = l;  // largest m of the lanes that sweep
      for (int q = 0; q < W; ++q) {
        if (failed[q]) m[q] = l;
        if (m[q] == l) continue;
        if (++iterations[q] > eigh_max_iterations_per_eigenvalue) {
          failed[q] = 1;
          m[q] = l;
          continue;
        }
        top = m[q] > top ? m[q] : top;
      }
      if (top == l) break;
      // Shift from the leading 2 x 2 block; the sweep state (s, c, p, g) of every lane. run: the lane
      // sweeps at l and has not deflated by underflow (r == 0) during this sweep.
      Real g[W], sh[W], s[W], c[W], pp[W], one[W];
      int run[W];
      const Real* dl = d + l * W;
      const Real* el = e + l * W;
      QGML_LANES(q, W) {
        run[q] = m[q] > l ? 1 : 0;
        const Real e0 = run[q] ? el[q] : Real(1);
        g[q] = run[q] ? (dl[q + W] - dl[q]) / (Real(2) * e0) : Real(0);
        one[q] = Real(1);
      }
      packed_detail::hypot_lanes<W>(g, one, sh);
      QGML_LANES(q, W) {
        const Real e0 = run[q] ? el[q] : Real(1);
        sh[q] = e0 / (g[q] + (g[q] >= Real(0) ? math::fabs(sh[q]) : -math::fabs(sh[q])));
        s[q] = c[q] = Real(1);
        pp[q] = g[q] = Real(0);
      }
      for (int i = top - 1; i >= l; --i) {
        Real f[W], gg[W], bb[W], r[W], cr[W], sr[W];
        int part[W], outside[W];
        Real* const di0 = d + i * W;
        Real* const di1 = di0 + W;
        Real* const ei0 = e + i * W;
        Real* const ei1 = ei0 + W;
        QGML_LANES(q, W) {
          part[q] = run[q] & int(i < m[q]);
          // start of this lane's sweep: g = d[m] - d[l] + e[l] / (g + sign(r, g))
          g[q] = (i + 1 == m[q]) ? (di1[q] - dl[q]) + sh[q] : g[q];
          const Real fq = s[q] * ei0[q];
          bb[q] = c[q] * ei0[q];
          f[q] = part[q] ? fq : Real(0);
          gg[q] = part[q] ? g[q] : Real(1);
        }
        QGML_LANES(q, W) {  // a separate loop: merged into the one above, GCC 12 does not vectorise it
          r[q] = f[q] * f[q] + gg[q] * gg[q];  // r = hypot(f, g) as detail::fast_hypot
          outside[q] = packed_detail::hypot_outside(r[q]);
        }
        packed_detail::sqrt_lanes<W>(r, r);
        if (packed_detail::any_lane<W>(outside)) packed_detail::fix_hypot<W>(outside, f, gg, r);
        QGML_LANES(q, W) {
          const int zero = r[q] == Real(0) ? 1 : 0;
          const int ok = part[q] & (1 - zero);
          const int brk = part[q] & zero;  // underflow: deflate, end this lane's sweep
          const Real inv = Real(1) / (ok ? r[q] : Real(1));
          const Real sn = f[q] * inv;
          const Real cn = gg[q] * inv;
          const Real d1 = di1[q];
          const Real g2 = d1 - pp[q];
          const Real r2 = (di0[q] - g2) * sn + Real(2) * cn * bb[q];
          const Real pn = sn * r2;
          const Real e1 = ei1[q];
          ei1[q] = part[q] ? r[q] : e1;
          const Real dnew = ok ? g2 + pn : g2;
          di1[q] = part[q] ? dnew : d1;
          g[q] = ok ? cn * r2 - bb[q] : g[q];
          s[q] = ok ? sn : s[q];
          c[q] = ok ? cn : c[q];
          pp[q] = ok ? pn : pp[q];
          cr[q] = ok ? cn : Real(1);
          sr[q] = ok ? sn : Real(0);
          run[q] = run[q] & (1 - brk);
        }
        if (!vectors) continue;
        if (real_z) {  // rows i, i + 1 of Z: two contiguous rows, all lanes (identity where c = 1, s = 0)
          Real* x0 = A(zz, i, 0);
          Real* x1 = A(zz, i + 1, 0);
          for (int col = 0; col < n; ++col) {
            QGML_LANES(q, W) {
              const Real f1 = x1[col * W + q], z0 = x0[col * W + q];
              x1[col * W + q] = sr[q] * z0 + cr[q] * f1;
              x0[col * W + q] = cr[q] * z0 - sr[q] * f1;
            }
          }
          continue;
        }
        // Rows i, i + 1 of Q^T: two contiguous rows, all lanes. At small N this loop overlaps with the
        // latency of the recurrence above, and rotating a real Z would not pay for Z Q^T.
        Real* x0r = A(zr, i, 0);
        Real* x0i = A(zi, i, 0);
        Real* x1r = A(zr, i + 1, 0);
        Real* x1i = A(zi, i + 1, 0);
        for (int col = 0; col < n; ++col) {
          QGML_LANES(q, W) {
            const Real fr = x1r[col * W + q], fi = x1i[col * W + q];
            const Real zr0 = x0r[col * W + q], zi0 = x0i[col * W + q];
            x1r[col * W + q] = sr[q] * zr0 + cr[q] * fr;
            x1i[col * W + q] = sr[q] * zi0 + cr[q] * fi;
            x0r[col * W + q] = cr[q] * zr0 - sr[q] * fr;
            x0i[col * W + q] = cr[q] * zi0 - sr[q] * fi;
          }
        }
      }
      // End of the sweep: d[l] -= p, e[l] = g for the lanes that finished it; e[m] = 0 for all that swept.
      Real* dlw = d + l * W;
      Real* elw = e + l * W;
      QGML_LANES(q, W) {
        dlw[q] = run[q] ? dlw[q] - pp[q] : dlw[q];
        elw[q] = run[q] ? g[q] : elw[q];
      }
      for (int q = 0; q < W; ++q)
        if (m[q] > l) e[m[q] * W + q] = Real(0);
    }
  }
  if (!real_z) return;
  // Rows of Q^T <- Z Q^T, column by column: column col of Q^T copied to p.pr, p.pi (free after step 1),
  // then (Z Q^T)(j, col) = sum_i Z(j, i) Q^T(i, col) over the contiguous row j of Z.
  for (int col = 0; col < n; ++col) {
    for (int i = 0; i < n; ++i) QGML_LANES(q, W) {
        p.pr[i * W + q] = A(zr, i, col)[q];
        p.pi[i * W + q] = A(zi, i, col)[q];
      }
    for (int j = 0; j < n; j += 2) {  // two rows of Z at a time: four independent sums
      const int j1 = j + 1 < n ? j + 1 : j;
      const Real* z0 = A(zz, j, 0);
      const Real* z1 = A(zz, j1, 0);
      Real r0[W], i0[W], r1[W], i1[W];
      QGML_LANES(q, W) r0[q] = i0[q] = r1[q] = i1[q] = Real(0);
      for (int i = 0; i < n; ++i) QGML_LANES(q, W) {
          const Real br = p.pr[i * W + q], bi = p.pi[i * W + q];
          r0[q] += z0[i * W + q] * br;
          i0[q] += z0[i * W + q] * bi;
          r1[q] += z1[i * W + q] * br;
          i1[q] += z1[i * W + q] * bi;
        }
      QGML_LANES(q, W) {
        A(zr, j1, col)[q] = r1[q];
        A(zi, j1, col)[q] = i1[q];
        A(zr, j, col)[q] = r0[q];
        A(zi, j, col)[q] = i0[q];
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
