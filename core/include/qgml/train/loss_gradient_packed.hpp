// Loss terms and gradient of a batch on CPUs in one pass per pack of W points (the "fused host path" of
// LossGradient, perf/NOTES.md "Fused loss and gradient on CPUs, and the ground-state path"): for every
// pack, H(x) (docs/math.md 2.1) is built straight into the packed eigensolver's arrays and its ground state
// found (ground_state/ground_state_packed.hpp), and every per-point term of docs/math.md 4.5-4.7 is formed with
// the W lanes innermost, so that every loop over i, j, k is a SIMD loop over the points of the pack.
//
// Per point (loss_gradient.hpp has the same formulas): psi = psi_0, y_k = A_k psi,
// xbar_k = <psi|y_k>, r = xbar - x, s = sum_k r_k y_k, phi = R s with R = sum_{n != 0} f(E_n - E_0) |n><n|,
// a_l = w b_l - (1 - w) c_l + (1 - w) r_l psi, e_l = -(1 - w) b_l, b_l = y_l - x_l psi,
// c_l = (A_l - x_l) phi; supervised (docs/supervised.md, sections 5 and 11), y_hat_c = <psi|B_c psi>
// first, s = lambda (1 - w) sum_k r_k y_k + sum_c (g_c/2) B_c psi, the coefficients of
// supervised_inputs.hpp, and the blocks of the B_c, X_c += (g_c/2) |psi><psi|. The spectral work, per pack:
//  - full spectrum: the whole eigendecomposition; the sum over n runs over all eigenpairs in the
//    solver's order (the ground state's own term is f(0) = 0 exactly, so no sorting is needed, only the
//    index of the smallest eigenvalue, the first one on ties as in the sorted solver);
//  - ground state (default from N = 5): A = Q T Q^H by Householder, E_0, E_max and the degeneracy of E_0
//    from T (Laguerre's iteration and a Sturm count, packed_ground_state_eigenvalues), psi = Q z_0 with
//    z_0 from inverse iteration on T, and phi = Q R_T Q^H s with R_T applied by a complex tridiagonal
//    solve (packed_reduced_resolvent): O(N^2) per point after the reduction.
//
// The batch gradient X_l = sum_t |a_l(t)><psi(t)| + |e_l(t)><phi(t)| is summed per pack over its lanes
// in a fixed order (rank-1 steps along rows, j vectorised: packed_outer_row) into the chunk's sum, kept
// in place in the chunk's rows of the partials (PackedGradientPartials) across its packs; a second
// kernel sums the partials of the chunks in order and forms G_l = X_l + X_l^H. The part of a_l in
// A_l phi is not formed per point: c_l = A_l phi - x_l phi, and the coefficient of c_l is the same for
// every point, so sum_t c_coef |A_l phi(t)><psi(t)| = c_coef A_l M with M = sum_t |phi(t)><psi(t)|
// (weighted), the last block of the partials (packed_gradient_blocks), applied once per batch after the
// chunk sum (loss_gradient_reduce_chunks): per point, one rank-1 update of M (8 N^2 flops) instead of the
// D products A_l phi (8 D N^2). The chunks depend only on the number of points, N and D
// (packed_gradient_chunk_packs), never on the thread count, so Serial and OpenMP runs give identical
// results.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstddef>

#include "qgml/common/types.hpp"
#include "qgml/ground_state/degeneracy.hpp"
#include "qgml/ground_state/ground_state_mixed.hpp"
#include "qgml/ground_state/ground_state_packed.hpp"
#include "qgml/ground_state/ground_state_terms.hpp"
#include "qgml/ground_state/tridiagonal_ground_state.hpp"
#include "qgml/linalg/hermitian_eigensolver_packed.hpp"
#include "qgml/linalg/lanes.hpp"
#include "qgml/train/loss_settings.hpp"
#include "qgml/train/supervised_inputs.hpp"

namespace qgml::detail {

// Row length of the chunk's gradient sum and of the transposed psi and phi: n rounded up to `vector`
// (linalg::packed_eigh_width<Real>, the Reals of a 64-byte vector), so that every j loop runs over whole
// SIMD vectors (the padding columns hold zeros). The same for narrow and wide packs.
KOKKOS_INLINE_FUNCTION constexpr int packed_gradient_row(int n, int vector) {
  return (n + vector - 1) / vector * vector;
}

// Lanes per pack of the fused kernel: narrow packs hold one 64-byte vector of points
// (linalg::packed_eigh_width<Real>: 8 doubles, 16 floats), wide packs two (16 doubles). With two vectors
// per lane operation the chains of divisions and dependent multiply-adds of the ground-state work
// (Laguerre's iteration, the Sturm count, the inverse iteration, the tridiagonal solves, the reflectors'
// norms) run two at a time: a faster epoch at every N measured (3-48) in double on Zen 5 (perf/NOTES.md
// "Packs of 16 doubles, and full batch without a shuffle"); in float, 32 lanes gained little at small N
// and lost at N = 32, so float stays at 16. Wide packs are consecutive pairs of narrow ones, so the
// chunks (which then hold an even number of narrow packs) and the partial sums keep their layout.
template <class Real>
inline constexpr int packed_wide_width = 2 * linalg::packed_eigh_width<Real>;

// Blocks of a chunk's partial: X_l for the D features, X_c of the C target operators when supervised
// (targets = C), then M = sum_t |phi(t)><psi(t)| (weighted), the factor of the A_l phi terms.
KOKKOS_INLINE_FUNCTION constexpr int packed_gradient_blocks(int d, int targets) { return d + targets + 1; }

// Reals of one chunk's scratch for packs of `width` lanes: the eigensolver's arrays, psi, phi, s, c
// (complex, n per lane; c holds the B_c psi first when supervised), the ground-state path's T, z_0 and factors
// (8 n per lane), y_k then a_l and e_l (complex, D n per lane), x_k and r_k (D per lane), psi^T and phi^T
// (complex, a row of packed_gradient_row(n, vector) per lane).
KOKKOS_INLINE_FUNCTION constexpr std::size_t packed_gradient_scratch_reals(int n, int d, int width, int vector) {
  return std::size_t(width) *
         (std::size_t(linalg::packed_eigh_scratch_reals(n, 1)) + 16 * std::size_t(n) + 4 * std::size_t(d) * n +
          2 * std::size_t(d) + 4 * std::size_t(packed_gradient_row(n, vector)));
}

// The chunks' partial sums: partial(c, 0, l * n + i, j) = Re X_l(i, j) of chunk c, partial(c, 1, ...) its
// imaginary part, rows padded to packed_gradient_row(n, W) (zeros beyond n); l over the blocks of
// packed_gradient_blocks. The kernel accumulates into its chunk's rows in place.
template <class Real, class MemorySpace>
using PackedGradientPartials = Kokkos::View<Real****, Kokkos::LayoutRight, MemorySpace>;

// Row i of X += sum_q a(i, q) conj(u_q)^T + b(i, q) conj(v_q)^T over the W lanes q of a pack: the lane
// reduction of the rank-2W update as W (or 2W) rank-1 steps along j, j vectorised in blocks of V (row is
// a multiple of V). a, b: lane q at [q]; u^T, v^T: lane q's vector at q * row (zero beyond n); x: the row
// (re, im), row reals. With phi = false the b v terms are absent (the target operator's block:
// a = (l'/2) psi, no phi term).
template <int W, int V, bool phi, class Real>
KOKKOS_FORCEINLINE_FUNCTION void packed_outer_row(const int row, const Real* a_r, const Real* a_i, const Real* b_r,
                                                  const Real* b_i, const Real* ut_r, const Real* ut_i, const Real* vt_r,
                                                  const Real* vt_i, Real* x_r, Real* x_i) {
  for (int j0 = 0; j0 < row; j0 += V) {
    Real sr[V], si[V];
    QGML_LANES(jj, V) sr[jj] = si[jj] = Real(0);
    for (int q = 0; q < W; ++q) {
      const Real ar = a_r[q], ai = a_i[q];
      const Real* u_r = ut_r + q * row + j0;
      const Real* u_i = ut_i + q * row + j0;
      QGML_LANES(jj, V) {
        sr[jj] += ar * u_r[jj] + ai * u_i[jj];
        si[jj] += ai * u_r[jj] - ar * u_i[jj];
      }
      if (phi) {
        const Real br = b_r[q], bi = b_i[q];
        const Real* v_r = vt_r + q * row + j0;
        const Real* v_i = vt_i + q * row + j0;
        QGML_LANES(jj, V) {
          sr[jj] += br * v_r[jj] + bi * v_i[jj];
          si[jj] += bi * v_r[jj] - br * v_i[jj];
        }
      }
    }
    QGML_LANES(jj, V) {
      x_r[j0 + jj] += sr[jj];
      x_i[j0 + jj] += si[jj];
    }
  }
}

// Number of chunks the partials have room for: as many as fit ~8 MiB (one d x N x (padded N) complex
// stack per chunk, d the gradient's blocks), between 16 and 2048. Allocated once whatever the batch size, so that the
// memory of the batch buffers stays an affine function of the batch size (qgml tune relies on it).
template <class Real>
int packed_gradient_max_chunks(int n, int d) {
  const long long row = packed_gradient_row(n, linalg::packed_eigh_width<Real>);
  const long long bytes_per_chunk = 2LL * d * n * row * (long long)sizeof(Real);
  const long long chunks = (8LL << 20) / (bytes_per_chunk > 0 ? bytes_per_chunk : 1);
  return int(chunks < 16 ? 16 : (chunks > 2048 ? 2048 : chunks));
}

// Packs (narrow, of linalg::packed_eigh_width<Real> points) per chunk below which a chunk's partial
// (zeroed, written, summed: ~d N^2) costs as much as its packs' work (~W N^3 each): min(4, max(1, 64 / N));
// 4 at N <= 16 made the epoch faster than one pack per chunk at N = 8 and 16, and 8 was no better
// (perf/NOTES.md, "One pass per Householder step, A_l phi out of the per-point loop, partials in place
// (issues 15, 17)"). The mixed-precision ground state (ground_state/ground_state_mixed.hpp) and the wide packs take
// narrow packs in pairs (`paired`): then at least 2, and even.
KOKKOS_INLINE_FUNCTION constexpr int packed_gradient_min_chunk_packs(int n, bool paired = false) {
  const int least = n >= 64 ? 1 : (64 / n > 4 ? 4 : 64 / n);
  return paired ? (least < 2 ? 2 : (least + 1) / 2 * 2) : least;
}

// Narrow packs per chunk for `count` points: packed_gradient_min_chunk_packs(n, paired), or more where
// that makes more than packed_gradient_max_chunks chunks (rounded up to even when paired). A function of
// (count, n, d, paired) only, never of the thread count.
template <class Real>
int packed_gradient_chunk_packs(int count, int n, int d, bool paired = false) {
  const int width = linalg::packed_eigh_width<Real>;
  const int packs = (count + width - 1) / width;
  const int max_chunks = packed_gradient_max_chunks<Real>(n, d);
  const int per = (packs + max_chunks - 1) / max_chunks;
  const int least = packed_gradient_min_chunk_packs(n, paired);
  const int chosen = per < least ? least : per;
  return paired && chosen % 2 ? chosen + 1 : chosen;
}

template <class Real>
int packed_gradient_chunks(int count, int n, int d, bool paired = false) {
  const int width = linalg::packed_eigh_width<Real>;
  const int packs = (count + width - 1) / width;
  const int per = packed_gradient_chunk_packs<Real>(count, n, d, paired);
  return (packs + per - 1) / per;
}

// Loss terms of the points first .. first + packs * W - 1 (below count), summed into their chunk's rows
// of `partial` (PackedGradientPartials; the last block is M). a: D x N x N configuration, s: its
// S = 1/2 sum A_k^2, x: count x D points, xbar: count x D, terms: count x loss_penalty, info: count
// (eigh codes). weight: each point's weight (0 for skipped degenerate points and padding lanes). sup: the
// target operators, targets and loss (SupervisedInputs; sup.enabled adds blocks D .. D + C - 1 of the
// partial, the B_c's, and writes sup.y_hat).
template <int W, class Real, class AView, class SView, class XView, class XbarView, class TermsView, class InfoView,
          class PartialView, class Supervised>
KOKKOS_FUNCTION void packed_loss_gradient_chunk(const AView& a, const SView& sq, const XView& x, const XbarView& xbar,
                                                const TermsView& terms, const InfoView& info,
                                                const PartialView& partial, const int chunk, const int first,
                                                const int packs, const int count, const Real weight, const Real lw,
                                                const Real eta_rel, const Real tol, const bool skip_degenerate,
                                                const bool ground_state, const bool mixed, const Supervised& sup,
                                                Real* scratch, double* mixed_scratch) {
  (void)mixed;  // used by the double instantiation only
  (void)mixed_scratch;
  const int d = static_cast<int>(a.extent(0));
  const int n = static_cast<int>(a.extent(1));
  const int blocks = packed_gradient_blocks(d, sup.enabled ? sup.outputs : 0);
  const int outputs = sup.enabled ? sup.outputs : 0;
  const GradientCoefficients<Real> co = gradient_coefficients(sup, lw);
  const linalg::PackedEighArrays<W, Real> p(n, scratch);
  Real* const psr = scratch + std::size_t(W) * linalg::packed_eigh_scratch_reals(n, 1);  // psi
  Real* const psi = psr + n * W;
  Real* const phr = psi + n * W;  // phi
  Real* const phi = phr + n * W;
  Real* const svr = phi + n * W;  // s, then c_n
  Real* const svi = svr + n * W;
  Real* const cvr = svi + n * W;
  Real* const cvi = cvr + n * W;
  Real* const td = cvi + n * W;  // ground-state path: T (diagonal, off-diagonal), z_0, LDL^T factors
  Real* const te = td + n * W;
  Real* const z0 = te + n * W;
  Real* const fdr = z0 + n * W;  // 1 / D_i (complex)
  Real* const fdi = fdr + n * W;
  Real* const flr = fdi + n * W;  // L_i (complex)
  Real* const fli = flr + n * W;
  Real* const yr = fli + 2 * n * W;  // y_k(i) at (k * n + i) * W, then a_l(i)
  Real* const yi = yr + d * n * W;
  Real* const er = yi + d * n * W;  // e_l(i)
  Real* const ei = er + d * n * W;
  Real* const xk = ei + d * n * W;  // x_k at k * W
  Real* const rk = xk + d * W;      // r_k
  constexpr int V = linalg::packed_eigh_width<Real>;
  const int row = packed_gradient_row(n, V);
  Real* const ptr = rk + d * W;  // psi^T: lane q's psi(j) at q * row + j, zero for j >= n
  Real* const pti = ptr + W * row;
  Real* const ftr = pti + W * row;  // phi^T
  Real* const fti = ftr + W * row;
  Real* const gr = &partial(chunk, 0, 0, 0);  // the chunk's X_l(i, j) at (l * n + i) * row + j
  Real* const gi = &partial(chunk, 1, 0, 0);
  for (std::size_t k = 0; k < std::size_t(blocks) * n * row; ++k) gr[k] = gi[k] = Real(0);
  for (int k = 0; k < 4 * W * row; ++k) ptr[k] = Real(0);

  // The rest of a pack once its ground state is known: psi_0 in (psr_, psi_), x_k in xk_, per lane code,
  // E_0, E_max and the degeneracy. phi by the whole spectrum (p's eigenvectors), by the tridiagonal solve
  // (p's reflectors, T), or by the mixed path's refinement (phi_source 2 + h for half h of the last
  // mixed_ground_state_pair, H in (h_r, h_i)). Returns false, having added nothing to the partials, where
  // the mixed refinement of phi did not reach its tolerance in a point of the pack.
  enum { phi_spectrum = 0, phi_tridiagonal = 1, phi_mixed = 2 };
  auto finish_pack = [&](const int t0, const int lanes, const Real* psr_, const Real* psi_, const Real* xk_,
                         const int* code, const Real* e0, const Real* emax, const Real* degenerate,
                         const int phi_source, const Real* h_r, const Real* h_i, const void* mixed_arrays) -> bool {
    Real pw[W];
    // --- y_k = A_k psi, xbar_k, sigma^2, d^2 (ground_state/ground_state_terms.hpp).
    Real sigma2[W], dist2[W];
    ground_state_terms_lanes<W>(a, psr_, psi_, xk_, yr, yi, rk, sigma2, dist2, [&](const int k, const Real* xb) {
      for (int q = 0; q < lanes; ++q) xbar(t0 + q, k) = xb[q];
    });
    // --- Supervised: y_hat(t, c) = <psi|B_c psi> (B_c psi into c), the loss and log-partition per lane (0 on
    // padding lanes).
    Real loss_sup[W], log_partition[W];
    QGML_LANES(q, W) loss_sup[q] = log_partition[q] = Real(0);
    for (int c = 0; c < outputs; ++c) {
      Real y_hat[W];
      packed_operator_expectation<W>(Kokkos::subview(sup.b, c, Kokkos::ALL, Kokkos::ALL), n, psr_, psi_, cvr, cvi,
                                     y_hat);
      for (int q = 0; q < lanes; ++q) sup.y_hat(t0 + q, c) = y_hat[q];
    }
    for (int q = 0; q < lanes && outputs > 0; ++q) loss_sup[q] = sup.point_loss_of(t0 + q, log_partition[q]);
    // --- s = sum_k r_k y_k (supervised: lambda (1 - w) sum_k r_k y_k + sum_c (g_c/2) B_c psi).
    const Real s_scale = sup.enabled ? co.s_scale : Real(1);
    for (int i = 0; i < n; ++i) {
      Real* s_r = svr + i * W;
      Real* s_i = svi + i * W;
      QGML_LANES(q, W) s_r[q] = s_i[q] = Real(0);
      for (int k = 0; k < d; ++k) {
        const Real* r = rk + k * W;
        const Real* y_r = yr + (k * n + i) * W;
        const Real* y_i = yi + (k * n + i) * W;
        QGML_LANES(q, W) {
          s_r[q] += r[q] * y_r[q];
          s_i[q] += r[q] * y_i[q];
        }
      }
      QGML_LANES(q, W) {
        s_r[q] *= s_scale;
        s_i[q] *= s_scale;
      }
    }
    // The last B_c psi is still in c; the others are formed again, from the last down.
    for (int c = outputs - 1; c >= 0; --c) {
      if (c < outputs - 1) {
        Real unused[W];
        packed_operator_expectation<W>(Kokkos::subview(sup.b, c, Kokkos::ALL, Kokkos::ALL), n, psr_, psi_, cvr, cvi,
                                       unused);
      }
      Real h[W];
      QGML_LANES(q, W) h[q] = Real(0);
      for (int q = 0; q < lanes; ++q) h[q] = sup.half_derivative_of(t0 + q, c, log_partition[q]);
      for (int i = 0; i < n; ++i) {
        const Real* b_r = cvr + i * W;
        const Real* b_i = cvi + i * W;
        Real* s_r = svr + i * W;
        Real* s_i = svi + i * W;
        QGML_LANES(q, W) {
          s_r[q] += h[q] * b_r[q];
          s_i[q] += h[q] * b_i[q];
        }
      }
    }
    // --- c_m = f(E_m - E_0) <m|s> (0 for the ground state itself), phi = sum_m c_m |m>.
    Real eta[W];
    QGML_LANES(q, W) eta[q] = eta_rel * spectral_scale(e0[q], emax[q]);
    if (phi_source == phi_tridiagonal) {
      // phi = Q R_T Q^H s with R_T = Re (T - E_0 - i eta)^{-1} on the complement of z_0 (docs/math.md 4.6, 4.7).
      for (int i = 0; i < n; ++i) QGML_LANES(q, W) {
          phr[i * W + q] = svr[i * W + q];
          phi[i * W + q] = svi[i * W + q];
        }
      packed_apply_q<W>(p, phr, phi, true);
      linalg::packed_reduced_resolvent<W>(n, td, te, e0, eta, z0, fdr, fdi, flr, fli, phr, phi);
      packed_apply_q<W>(p, phr, phi, false);
    }
    if constexpr (std::is_same_v<Real, double> && W == mixed_half_width) {
      if (phi_source >= phi_mixed) {
        int ok[W];
        mixed_reduced_resolvent(*static_cast<const MixedGroundStateArrays*>(mixed_arrays), phi_source - phi_mixed, h_r,
                                h_i, psr_, psi_, e0, eta, svr, svi, lanes, phr, phi, ok);
        for (int q = 0; q < lanes; ++q)
          if (!ok[q]) return false;
      }
    }
    for (int m = 0; m < n && phi_source == phi_spectrum; ++m) {
      Real cr[W], ci[W];
      linalg::packed_conj_dot<W>(0, n, p.at(p.zr, m, 0), p.at(p.zi, m, 0), W, svr, svi, W, cr, ci);  // <m|s>
      const Real* dm = p.d + m * W;
      Real* c_r = cvr + m * W;
      Real* c_i = cvi + m * W;
      QGML_LANES(q, W) {
        const Real f = regularized_inverse_gap(dm[q] - e0[q], eta[q]);
        c_r[q] = f * cr[q];
        c_i[q] = f * ci[q];
      }
    }
    for (int i = 0; i < n && phi_source == phi_spectrum; ++i) {
      Real* f_r = phr + i * W;
      Real* f_i = phi + i * W;
      QGML_LANES(q, W) f_r[q] = f_i[q] = Real(0);
      for (int m = 0; m < n; ++m) {
        const Real* z_r = p.at(p.zr, m, i);
        const Real* z_i = p.at(p.zi, m, i);
        const Real* c_r = cvr + m * W;
        const Real* c_i = cvi + m * W;
        QGML_LANES(q, W) {
          f_r[q] += c_r[q] * z_r[q] - c_i[q] * z_i[q];
          f_i[q] += c_r[q] * z_i[q] + c_i[q] * z_r[q];
        }
      }
    }
    // --- a_l (over y_l) and e_l, scaled by the point's weight.
    QGML_LANES(q, W) pw[q] = (q < lanes && !(skip_degenerate && degenerate[q] != Real(0))) ? weight : Real(0);
    for (int l = 0; l < d; ++l) {
      const Real* xl = xk_ + l * W;
      const Real* rl = rk + l * W;
      for (int i = 0; i < n; ++i) {
        Real* y_r = yr + (l * n + i) * W;
        Real* y_i = yi + (l * n + i) * W;
        Real* e_r = er + (l * n + i) * W;
        Real* e_i = ei + (l * n + i) * W;
        const Real* p_r = psr_ + i * W;
        const Real* p_i = psi_ + i * W;
        const Real* f_r = phr + i * W;
        const Real* f_i = phi + i * W;
        QGML_LANES(q, W) {
          const Real b_r = y_r[q] - xl[q] * p_r[q], b_i = y_i[q] - xl[q] * p_i[q];
          const Real c_r = -xl[q] * f_r[q], c_i = -xl[q] * f_i[q];  // c_l without A_l phi (in M)
          y_r[q] = pw[q] * (co.b_coef * b_r + co.c_coef * c_r + co.r_coef * rl[q] * p_r[q]);
          y_i[q] = pw[q] * (co.b_coef * b_i + co.c_coef * c_i + co.r_coef * rl[q] * p_i[q]);
          e_r[q] = pw[q] * co.e_coef * b_r;
          e_i[q] = pw[q] * co.e_coef * b_i;
        }
      }
    }
    // --- X_l(i, j) += sum_q a_l(i, q) conj(psi(j, q)) + e_l(i, q) conj(phi(j, q)) over the lanes q.
    for (int q = 0; q < W; ++q)
      for (int j = 0; j < n; ++j) {
        ptr[q * row + j] = psr_[j * W + q];
        pti[q * row + j] = psi_[j * W + q];
        ftr[q * row + j] = phr[j * W + q];
        fti[q * row + j] = phi[j * W + q];
      }
    for (int l = 0; l < d; ++l)
      for (int i = 0; i < n; ++i) {
        const std::size_t li = std::size_t(l * n + i);
        packed_outer_row<W, V, true>(row, yr + li * W, yi + li * W, er + li * W, ei + li * W, ptr, pti, ftr, fti,
                                     gr + li * row, gi + li * row);
      }
    // --- M(i, j) += sum_q w_q phi(i, q) conj(psi(j, q)).
    {
      Real hr[W], hi[W];
      for (int i = 0; i < n; ++i) {
        QGML_LANES(q, W) {
          hr[q] = pw[q] * phr[i * W + q];
          hi[q] = pw[q] * phi[i * W + q];
        }
        const std::size_t li = std::size_t((blocks - 1) * n + i);
        packed_outer_row<W, V, false>(row, hr, hi, hr, hi, ptr, pti, ptr, pti, gr + li * row, gi + li * row);
      }
    }
    // --- Supervised: X_c(i, j) += sum_q (g_c/2)_q psi(i, q) conj(psi(j, q)) (a_c = (g_c/2) psi, e_c = 0).
    for (int c = 0; c < outputs; ++c) {
      Real half_dl[W];
      QGML_LANES(q, W) half_dl[q] = Real(0);
      for (int q = 0; q < lanes; ++q) half_dl[q] = sup.half_derivative_of(t0 + q, c, log_partition[q]);
      Real hr[W], hi[W];
      for (int i = 0; i < n; ++i) {
        QGML_LANES(q, W) {
          const Real h = pw[q] * half_dl[q];
          hr[q] = h * psr_[i * W + q];
          hi[q] = h * psi_[i * W + q];
        }
        const std::size_t li = std::size_t((d + c) * n + i);
        packed_outer_row<W, V, false>(row, hr, hi, hr, hi, ptr, pti, ptr, pti, gr + li * row, gi + li * row);
      }
    }
    // --- Per-point terms (unweighted).
    for (int q = 0; q < lanes; ++q) {
      const int t = t0 + q;
      const Real unsupervised = dist2[q] + lw * sigma2[q];
      const Real total = sup.enabled ? loss_sup[q] + sup.lambda * unsupervised : unsupervised;
      const bool finite = math::isfinite(total) && math::isfinite(e0[q]);
      terms(t, int(loss_total)) = total;
      terms(t, int(loss_reconstruction)) = dist2[q];
      terms(t, int(loss_fluctuation)) = sigma2[q];
      terms(t, int(loss_energy)) = e0[q];
      terms(t, int(loss_degenerate_points)) = degenerate[q];
      terms(t, int(loss_nonfinite_points)) = finite ? Real(0) : Real(1);
      terms(t, int(loss_eigh_failures)) = code[q] == linalg::eigh_success ? Real(0) : Real(1);
      terms(t, int(loss_supervised)) = loss_sup[q];
      info(t) = code[q];
    }
    return true;
  };

  auto double_path = [&](const int t0, const int lanes) {
    int code[W];
    Real e0[W], emax[W], degenerate[W];
    packed_ground_state<W>(
        a, sq, x, t0, lanes,
        ground_state ? PackedGroundStateMethod::tridiagonal : PackedGroundStateMethod::eigendecomposition, p, xk, td,
        te, z0, fdr, flr, psr, psi, tol, code, e0, emax, degenerate);
    finish_pack(t0, lanes, psr, psi, xk, code, e0, emax, degenerate, ground_state ? phi_tridiagonal : phi_spectrum,
                nullptr, nullptr, nullptr);
  };

  if constexpr (std::is_same_v<Real, double> && W == mixed_half_width) {
    if (mixed) {
      // Two packs at a time: their ground states from one float reduction (ground_state/ground_state_mixed.hpp),
      // H_A in p.ar / p.ai and H_B in p.zr / p.zi; the halves that need it then take the double path, after
      // the others (it overwrites both H).
      const MixedGroundStateArrays m(n, d, mixed_scratch);
      for (int pk = 0; pk < packs; pk += 2) {
        const int t0 = first + pk * W;
        const int lanes_a = count - t0 < W ? count - t0 : W;
        const int rest = count - t0 - W;
        const int lanes_b = pk + 1 < packs ? (rest < W ? rest : W) : 0;
        int code[2 * W], fallback[2];
        Real e0[2 * W], emax[2 * W], degenerate[2 * W];
        for (int q = 0; q < 2 * W; ++q) degenerate[q] = Real(0);
        mixed_ground_state_pair(a, sq, x, t0, lanes_a, lanes_b, p.ar, p.ai, p.zr, p.zi, m, xk, psr, psi, code, e0, emax,
                                fallback);
        const int halves = lanes_b > 0 ? 2 : 1;
        const int lanes_h[2] = {lanes_a, lanes_b};
        const Real* const hr[2] = {p.ar, p.zr};
        const Real* const hi[2] = {p.ai, p.zi};
        const Real* const pr[2] = {psr, m.psr_b};
        const Real* const pi[2] = {psi, m.psi_b};
        const Real* const xh[2] = {xk, m.xk_b};
        for (int h = 0; h < halves; ++h)
          if (!fallback[h] && !finish_pack(t0 + h * W, lanes_h[h], pr[h], pi[h], xh[h], code + h * W, e0 + h * W,
                                           emax + h * W, degenerate + h * W, phi_mixed + h, hr[h], hi[h], &m))
            fallback[h] = 1;
        for (int h = 0; h < halves; ++h)
          if (fallback[h]) double_path(t0 + h * W, lanes_h[h]);
      }
      return;
    }
  }
  for (int pk = 0; pk < packs; ++pk) {
    const int t0 = first + pk * W;
    double_path(t0, count - t0 < W ? count - t0 : W);
  }
}

}  // namespace qgml::detail
