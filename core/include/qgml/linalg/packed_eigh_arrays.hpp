// The packed eigensolver's pack (hermitian_eigensolver_packed.hpp): its width, its scratch and the working
// arrays inside it, the load of W matrices into it, and the per-lane operations its steps share (square
// roots, conjugate dot products of the lanes' complex vectors).
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
// (perf/NOTES.md, "Packed (SIMD across matrices) eigensolver").
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

}  // namespace qgml::linalg
