// The sizes, tolerances and scratch arrays of the mixed-precision ground state (ground_state_mixed.hpp):
// the float pack of 16 lanes as two double halves of 8, and the constants of its certificates.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstddef>

#include "qgml/linalg/hermitian_eigensolver_packed.hpp"

namespace qgml::detail {

// Lanes of the float pack; each half is a double pack of mixed_half_width lanes.
inline constexpr int mixed_float_width = 16;
inline constexpr int mixed_half_width = 8;
// E_1 - E_0 of the float T below which a point goes to the double path (relative to the spectral scale):
// far above the float eigenvalues' error (~n eps_f, 1.5e-5 at N = 256), so that the eigenvalue refined
// is E_0.
inline constexpr double mixed_gap_tolerance = 1e-4;
// Below this gap (relative) the resolvent gets the first-order correction of the double path's
// regulariser eta (see mixed_reduced_resolvent); above it the two differ by less than (eta / gap)^2 =
// 1e-10 relative at the default eta of 1e-8.
inline constexpr double mixed_regularised_gap = 1e-3;
// Largest accepted residual of the refined psi (relative to the scale) and of phi (relative to ||s||).
inline constexpr double mixed_residual_tolerance = 1e-12;
// Largest |entry| of H the float copy takes: its squares and products stay far inside float's range.
inline constexpr double mixed_float_range = 1e15;
// Refinement steps of psi_0 and of phi: at least two (from the float solution's ~1e-7 to the double
// floor at the measured contraction of 1e-4 to 1e-5 per step), more while a point's residual is above
// mixed_residual_tolerance (small gaps contract more slowly), at most four.
inline constexpr int mixed_min_steps = 2;
inline constexpr int mixed_max_steps = 4;

// Reals (double) of the mixed path's arrays beyond the double path's: the float pack's A, the
// reduction's staggered arrays, d, e, tau and p (6 n), float T, z_0, the resolvent's factors and a vector (9 n per
// lane), E_0 and E_max of T (2 per lane), psi of half B, two complex work vectors and x_k of half B (6 n + D per half
// lane), and the alignment of the doubles to 64 bytes. Elements (lanes of one entry) of the reduction's staggered
// arrays in Q^T's storage (linalg::packed_staggered_min_n): 8 regions of 64 ((n + 63) / 64 + 1) elements.
KOKKOS_INLINE_FUNCTION constexpr int mixed_staggered_elements(int n) { return 8 * 64 * ((n + 63) / 64 + 1); }
// Elements of the reflectors v_k (rows k + 1 .. n - 1 of column k of the reduced A, k = 0 .. n - 2) copied
// one after the other, so that the 8 to 16 applications of Q per pair read them contiguously (a column
// of A is n elements of 64 bytes apart: one page and one L1 set per element from n = 64).
KOKKOS_INLINE_FUNCTION constexpr std::size_t mixed_reflector_elements(int n) { return std::size_t(n) * (n - 1) / 2; }
KOKKOS_INLINE_FUNCTION constexpr std::size_t mixed_float_reals(int n) {
  return std::size_t(mixed_float_width) * (2 * std::size_t(n) * n + std::size_t(mixed_staggered_elements(n)) +
                                           2 * mixed_reflector_elements(n) + 15 * std::size_t(n) + 3);
}
KOKKOS_INLINE_FUNCTION constexpr std::size_t mixed_ground_state_scratch_reals(int n, int d) {
  const std::size_t doubles = std::size_t(mixed_half_width) * (6 * std::size_t(n) + std::size_t(d));
  return (mixed_float_reals(n) + 1) / 2 + doubles + 8;
}

// The mixed path's arrays carved from `base` (mixed_ground_state_scratch_reals(n, d) doubles, 64-byte
// aligned).
struct MixedGroundStateArrays {
  static constexpr int FW = mixed_float_width, HW = mixed_half_width;
  int n;
  linalg::PackedEighArrays<FW, float> pf;
  float *qr, *qi, *td, *te, *z0, *fdr, *fdi, *flr, *fli, *vr, *vi, *e0, *emax, *near;
  double *psr_b, *psi_b, *xk_b, *wr, *wi, *ur, *ui;
  KOKKOS_INLINE_FUNCTION MixedGroundStateArrays(int n_, int d, double* base)
      : n(n_), pf(n_, reinterpret_cast<float*>(base)) {
    // The float pack holds A and the reflectors (ar, ai) and, in zr, only the staggered arrays of the
    // reduction (packed_tridiagonalize); Q^T and the eigenvectors are never formed.
    float* f = pf.ai + std::size_t(n) * n * FW;
    pf.zr = f;
    f += std::size_t(mixed_staggered_elements(n)) * FW;
    pf.zi = nullptr;
    pf.d = f;
    pf.e = pf.d + n * FW;
    pf.tr = pf.e + n * FW;
    pf.ti = pf.tr + n * FW;
    pf.pr = pf.ti + n * FW;
    pf.pi = pf.pr + n * FW;
    pf.order = nullptr;
    qr = pf.pi + n * FW;
    qi = qr + mixed_reflector_elements(n) * FW;
    td = qi + mixed_reflector_elements(n) * FW;
    te = td + n * FW;
    z0 = te + n * FW;
    fdr = z0 + n * FW;
    fdi = fdr + n * FW;
    flr = fdi + n * FW;
    fli = flr + n * FW;
    vr = fli + n * FW;
    vi = vr + n * FW;
    e0 = vi + n * FW;
    emax = e0 + FW;
    near = emax + FW;
    double* g = base + (mixed_float_reals(n_) + 1) / 2;
    g += (8 - (reinterpret_cast<std::uintptr_t>(g) / sizeof(double)) % 8) % 8;  // 64-byte aligned
    psr_b = g;
    psi_b = psr_b + n * HW;
    wr = psi_b + n * HW;
    wi = wr + n * HW;
    ur = wi + n * HW;
    ui = ur + n * HW;
    xk_b = ui + n * HW;
    (void)d;
  }
};

}  // namespace qgml::detail
