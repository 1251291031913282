// Loss terms and gradient of a batch on CPUs in one pass per pack of W points (the "fused host path" of
// LossGradient, perf/NOTES.md "Fused loss and gradient on CPUs"): for every pack, H(x) (spec 1.1) is
// built straight into the packed eigensolver's arrays, solved there
// (linalg/hermitian_eigensolver_packed.hpp), and the per-point terms of spec 2.5 / 2.6 are formed with
// the W lanes innermost, so that every loop over i, j, k is a SIMD loop over the points of the pack.
//
// Per point (loss_gradient.hpp has the same formulas): psi = psi_0, y_k = A_k psi,
// xbar_k = <psi|y_k>, r = xbar - x, s = sum_k r_k y_k, phi = R s with R = sum_n f(E_n - E_0) |n><n|,
// a_l = w b_l - (1 - w) c_l + (1 - w) r_l psi, e_l = -(1 - w) b_l, b_l = y_l - x_l psi,
// c_l = (A_l - x_l) phi. The sum over n runs over all eigenpairs in the solver's order: the ground
// state's own term is f(0) = 0 exactly, so no sorting is needed, only the index of the smallest
// eigenvalue (the first one on ties, as the sorted solver) and E_1, E_max for the degeneracy test.
//
// The batch gradient X_l = sum_t |a_l(t)><psi(t)| + |e_l(t)><phi(t)| is accumulated per lane over the
// packs of a chunk, then summed over the lanes in a fixed order into the chunk's partial; a second
// kernel sums the partials of the chunks in order and forms G_l = X_l + X_l^H. The chunks depend only
// on the number of points, N and D (packed_gradient_chunk_packs), never on the thread count, so Serial
// and OpenMP runs give identical results.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstddef>

#include "qgml/degeneracy.hpp"
#include "qgml/linalg/hermitian_eigensolver_packed.hpp"
#include "qgml/loss.hpp"
#include "qgml/types.hpp"

#if defined(_OPENMP) && !defined(__CUDACC__)
#define QGML_GRAD_LANES(q, W) _Pragma("omp simd") for (int q = 0; q < (W); ++q)
#elif defined(__GNUC__) && !defined(__CUDACC__) && !defined(__clang__) && !defined(__INTEL_COMPILER)
#define QGML_GRAD_LANES(q, W) _Pragma("GCC ivdep") for (int q = 0; q < (W); ++q)
#else
#define QGML_GRAD_LANES(q, W) for (int q = 0; q < (W); ++q)
#endif

namespace qgml::detail {

// Reals of one chunk's scratch: the eigensolver's arrays, psi, phi, s, c (complex, n per lane), y_k then
// a_l and e_l (complex, D n per lane), x_k and r_k (D per lane), and the per-lane partial gradient
// (complex, D n^2 per lane).
KOKKOS_INLINE_FUNCTION constexpr std::size_t packed_gradient_scratch_reals(int n, int d, int width) {
  return std::size_t(width) * (std::size_t(linalg::packed_eigh_scratch_reals(n, 1)) + 8 * std::size_t(n) +
                               4 * std::size_t(d) * n + 2 * std::size_t(d) + 2 * std::size_t(d) * n * n);
}

// Number of chunks the partials have room for: as many as fit ~8 MiB (one D x N x N complex matrix per
// chunk), between 16 and 2048. Allocated once whatever the batch size, so that the memory of the
// batch buffers stays an affine function of the batch size (qgml tune relies on it).
template <class Real>
int packed_gradient_max_chunks(int n, int d) {
  const long long bytes_per_chunk = 2LL * d * n * n * (long long)sizeof(Real);
  const long long chunks = (8LL << 20) / (bytes_per_chunk > 0 ? bytes_per_chunk : 1);
  return int(chunks < 16 ? 16 : (chunks > 2048 ? 2048 : chunks));
}

// Packs per chunk for `count` points: one, unless that makes more than packed_gradient_max_chunks
// chunks. A function of (count, n, d) only.
template <class Real>
int packed_gradient_chunk_packs(int count, int n, int d) {
  const int width = linalg::packed_eigh_width<Real>;
  const int packs = (count + width - 1) / width;
  const int max_chunks = packed_gradient_max_chunks<Real>(n, d);
  const int per = (packs + max_chunks - 1) / max_chunks;
  return per < 1 ? 1 : per;
}

template <class Real>
int packed_gradient_chunks(int count, int n, int d) {
  const int width = linalg::packed_eigh_width<Real>;
  const int packs = (count + width - 1) / width;
  const int per = packed_gradient_chunk_packs<Real>(count, n, d);
  return (packs + per - 1) / per;
}

// Loss terms of the points first .. first + packs * W - 1 (below count) and their chunk's partial
// X (partial(chunk, l, i, j)). a: D x N x N configuration, s: its S = 1/2 sum A_k^2, x: count x D points,
// xbar: count x D, terms: count x loss_penalty, info: count (eigh codes). weight: each point's weight
// (0 for skipped degenerate points and padding lanes).
template <int W, class Real, class AView, class SView, class XView, class XbarView, class TermsView, class InfoView,
          class PartialView>
KOKKOS_FUNCTION void packed_loss_gradient_chunk(const AView& a, const SView& sq, const XView& x, const XbarView& xbar,
                                                const TermsView& terms, const InfoView& info,
                                                const PartialView& partial, const int chunk, const int first,
                                                const int packs, const int count, const Real weight, const Real lw,
                                                const Real eta_rel, const Real tol, const bool skip_degenerate,
                                                Real* scratch) {
  const int d = static_cast<int>(a.extent(0));
  const int n = static_cast<int>(a.extent(1));
  const linalg::PackedEighArrays<W, Real> p(n, scratch);
  Real* const psr = scratch + std::size_t(W) * linalg::packed_eigh_scratch_reals(n, 1);  // psi
  Real* const psi = psr + n * W;
  Real* const phr = psi + n * W;  // phi
  Real* const phi = phr + n * W;
  Real* const svr = phi + n * W;  // s, then c_n
  Real* const svi = svr + n * W;
  Real* const cvr = svi + n * W;
  Real* const cvi = cvr + n * W;
  Real* const yr = cvi + n * W;  // y_k(i) at (k * n + i) * W, then a_l(i)
  Real* const yi = yr + d * n * W;
  Real* const er = yi + d * n * W;  // e_l(i)
  Real* const ei = er + d * n * W;
  Real* const xk = ei + d * n * W;  // x_k at k * W
  Real* const rk = xk + d * W;      // r_k
  Real* const gr = rk + d * W;      // per-lane partial X_l(i, j) at ((l * n + i) * n + j) * W
  Real* const gi = gr + std::size_t(d) * n * n * W;
  const Real one_minus_w = Real(1) - lw;

  for (int pk = 0; pk < packs; ++pk) {
    const int t0 = first + pk * W;
    const int lanes = count - t0 < W ? count - t0 : W;
    // --- H(x) = S - sum_k x_k A_k + |x|^2 / 2 (lower triangle), padding lanes at x = 0.
    Real x2[W], fin[W];
    for (int k = 0; k < d; ++k)
      for (int q = 0; q < W; ++q) xk[k * W + q] = q < lanes ? Real(x(t0 + q, k)) : Real(0);
    QGML_GRAD_LANES(q, W) {
      x2[q] = Real(0);
      fin[q] = Real(0);
    }
    for (int k = 0; k < d; ++k) {
      const Real* xq = xk + k * W;
      QGML_GRAD_LANES(q, W) x2[q] += xq[q] * xq[q];
    }
    for (int i = 0; i < n; ++i)
      for (int j = 0; j <= i; ++j) {
        Real* hr = p.at(p.ar, i, j);
        Real* hi = p.at(p.ai, i, j);
        const Real s_r = sq(i, j).real(), s_i = sq(i, j).imag();
        QGML_GRAD_LANES(q, W) {
          hr[q] = s_r;
          hi[q] = s_i;
        }
        for (int k = 0; k < d; ++k) {
          const Real a_r = a(k, i, j).real(), a_i = a(k, i, j).imag();
          const Real* xq = xk + k * W;
          QGML_GRAD_LANES(q, W) {
            hr[q] -= xq[q] * a_r;
            hi[q] -= xq[q] * a_i;
          }
        }
        if (i == j) QGML_GRAD_LANES(q, W) hr[q] += Real(0.5) * x2[q];
        QGML_GRAD_LANES(q, W) fin[q] += (hr[q] - hr[q]) + (hi[q] - hi[q]);  // NaN once any entry is not finite
      }
    int code[W], failed[W];
    for (int q = 0; q < W; ++q) {
      code[q] = (q < lanes && fin[q] == Real(0)) ? linalg::eigh_success : linalg::eigh_non_finite_input;
      if (code[q] != linalg::eigh_success)  // solved as a zero matrix: no sweeps, no contamination
        for (int i = 0; i < n; ++i)
          for (int j = 0; j <= i; ++j) p.at(p.ar, i, j)[q] = p.at(p.ai, i, j)[q] = Real(0);
    }
    linalg::packed_eigh_solve<W>(p, failed);

    // --- Ground state of every lane: index, E_0, E_1, E_max; failed lanes get NaN (as the sorted path).
    const Real nan = math::sqrt(Real(-1));
    int n0[W];
    Real e0[W], e1[W], emax[W], pw[W];
    for (int q = 0; q < W; ++q) {
      if (q < lanes && code[q] == linalg::eigh_success && failed[q]) code[q] = linalg::eigh_not_converged;
      if (q < lanes && code[q] != linalg::eigh_success) {
        for (int i = 0; i < n; ++i) p.d[i * W + q] = nan;
        if (code[q] == linalg::eigh_non_finite_input)
          for (int ij = 0; ij < n * n; ++ij) p.zr[ij * W + q] = p.zi[ij * W + q] = nan;
      }
      int m = 0;
      for (int i = 1; i < n; ++i)
        if (p.d[i * W + q] < p.d[m * W + q]) m = i;
      n0[q] = m;
    }
    QGML_GRAD_LANES(q, W) {
      e0[q] = p.d[n0[q] * W + q];
      emax[q] = e0[q];
      e1[q] = e0[q];
    }
    if (n > 1)
      for (int q = 0; q < W; ++q) {
        Real second = p.d[(n0[q] == 0 ? 1 : 0) * W + q], top = e0[q];
        for (int i = 0; i < n; ++i) {
          const Real v = p.d[i * W + q];
          if (i != n0[q] && v < second) second = v;
          top = v > top ? v : top;
        }
        e1[q] = second;
        emax[q] = top;
      }
    for (int q = 0; q < W; ++q) {
      if (q < lanes && code[q] != linalg::eigh_success) e0[q] = nan;
      for (int j = 0; j < n; ++j) {
        psr[j * W + q] = p.at(p.zr, n0[q], j)[q];
        psi[j * W + q] = p.at(p.zi, n0[q], j)[q];
      }
    }

    // --- y_k = A_k psi, xbar_k, sigma^2, d^2.
    Real sigma2[W], dist2[W];
    QGML_GRAD_LANES(q, W) sigma2[q] = dist2[q] = Real(0);
    for (int k = 0; k < d; ++k) {
      Real xb[W], qq[W];
      QGML_GRAD_LANES(q, W) xb[q] = qq[q] = Real(0);
      for (int i = 0; i < n; ++i) {
        Real ar_[W], ai_[W];
        QGML_GRAD_LANES(q, W) ar_[q] = ai_[q] = Real(0);
        for (int j = 0; j < n; ++j) {
          const Real a_r = a(k, i, j).real(), a_i = a(k, i, j).imag();
          const Real* pr_ = psr + j * W;
          const Real* pi_ = psi + j * W;
          QGML_GRAD_LANES(q, W) {
            ar_[q] += a_r * pr_[q] - a_i * pi_[q];
            ai_[q] += a_r * pi_[q] + a_i * pr_[q];
          }
        }
        Real* y_r = yr + (k * n + i) * W;
        Real* y_i = yi + (k * n + i) * W;
        const Real* pr_ = psr + i * W;
        const Real* pi_ = psi + i * W;
        QGML_GRAD_LANES(q, W) {
          y_r[q] = ar_[q];
          y_i[q] = ai_[q];
          xb[q] += pr_[q] * ar_[q] + pi_[q] * ai_[q];
          qq[q] += ar_[q] * ar_[q] + ai_[q] * ai_[q];
        }
      }
      const Real* xq = xk + k * W;
      Real* r = rk + k * W;
      QGML_GRAD_LANES(q, W) {
        sigma2[q] += qq[q] - xb[q] * xb[q];
        r[q] = xb[q] - xq[q];
        dist2[q] += r[q] * r[q];
      }
      for (int q = 0; q < lanes; ++q) xbar(t0 + q, k) = xb[q];
    }
    // --- s = sum_k r_k y_k.
    for (int i = 0; i < n; ++i) {
      Real* s_r = svr + i * W;
      Real* s_i = svi + i * W;
      QGML_GRAD_LANES(q, W) s_r[q] = s_i[q] = Real(0);
      for (int k = 0; k < d; ++k) {
        const Real* r = rk + k * W;
        const Real* y_r = yr + (k * n + i) * W;
        const Real* y_i = yi + (k * n + i) * W;
        QGML_GRAD_LANES(q, W) {
          s_r[q] += r[q] * y_r[q];
          s_i[q] += r[q] * y_i[q];
        }
      }
    }
    // --- c_m = f(E_m - E_0) <m|s> (0 for the ground state itself), phi = sum_m c_m |m>.
    Real eta[W], degenerate[W];
    QGML_GRAD_LANES(q, W) {
      eta[q] = eta_rel * spectral_scale(e0[q], emax[q]);
      degenerate[q] = ground_state_degenerate(n, e0[q], e1[q], emax[q], tol) ? Real(1) : Real(0);
    }
    for (int m = 0; m < n; ++m) {
      Real cr[W], ci[W];
      QGML_GRAD_LANES(q, W) cr[q] = ci[q] = Real(0);
      for (int i = 0; i < n; ++i) {
        const Real* z_r = p.at(p.zr, m, i);
        const Real* z_i = p.at(p.zi, m, i);
        const Real* s_r = svr + i * W;
        const Real* s_i = svi + i * W;
        QGML_GRAD_LANES(q, W) {
          cr[q] += z_r[q] * s_r[q] + z_i[q] * s_i[q];
          ci[q] += z_r[q] * s_i[q] - z_i[q] * s_r[q];
        }
      }
      const Real* dm = p.d + m * W;
      Real* c_r = cvr + m * W;
      Real* c_i = cvi + m * W;
      QGML_GRAD_LANES(q, W) {
        const Real f = regularized_inverse_gap(dm[q] - e0[q], eta[q]);
        c_r[q] = f * cr[q];
        c_i[q] = f * ci[q];
      }
    }
    for (int i = 0; i < n; ++i) {
      Real* f_r = phr + i * W;
      Real* f_i = phi + i * W;
      QGML_GRAD_LANES(q, W) f_r[q] = f_i[q] = Real(0);
      for (int m = 0; m < n; ++m) {
        const Real* z_r = p.at(p.zr, m, i);
        const Real* z_i = p.at(p.zi, m, i);
        const Real* c_r = cvr + m * W;
        const Real* c_i = cvi + m * W;
        QGML_GRAD_LANES(q, W) {
          f_r[q] += c_r[q] * z_r[q] - c_i[q] * z_i[q];
          f_i[q] += c_r[q] * z_i[q] + c_i[q] * z_r[q];
        }
      }
    }
    // --- a_l (over y_l) and e_l, scaled by the point's weight.
    QGML_GRAD_LANES(q, W) pw[q] = (q < lanes && !(skip_degenerate && degenerate[q] != Real(0))) ? weight : Real(0);
    for (int l = 0; l < d; ++l) {
      const Real* xl = xk + l * W;
      const Real* rl = rk + l * W;
      for (int i = 0; i < n; ++i) {
        Real ar_[W], ai_[W];
        QGML_GRAD_LANES(q, W) ar_[q] = ai_[q] = Real(0);
        for (int j = 0; j < n; ++j) {
          const Real a_r = a(l, i, j).real(), a_i = a(l, i, j).imag();
          const Real* f_r = phr + j * W;
          const Real* f_i = phi + j * W;
          QGML_GRAD_LANES(q, W) {
            ar_[q] += a_r * f_r[q] - a_i * f_i[q];
            ai_[q] += a_r * f_i[q] + a_i * f_r[q];
          }
        }
        Real* y_r = yr + (l * n + i) * W;
        Real* y_i = yi + (l * n + i) * W;
        Real* e_r = er + (l * n + i) * W;
        Real* e_i = ei + (l * n + i) * W;
        const Real* p_r = psr + i * W;
        const Real* p_i = psi + i * W;
        const Real* f_r = phr + i * W;
        const Real* f_i = phi + i * W;
        QGML_GRAD_LANES(q, W) {
          const Real b_r = y_r[q] - xl[q] * p_r[q], b_i = y_i[q] - xl[q] * p_i[q];
          const Real c_r = ar_[q] - xl[q] * f_r[q], c_i = ai_[q] - xl[q] * f_i[q];
          y_r[q] = pw[q] * (lw * b_r - one_minus_w * c_r + one_minus_w * rl[q] * p_r[q]);
          y_i[q] = pw[q] * (lw * b_i - one_minus_w * c_i + one_minus_w * rl[q] * p_i[q]);
          e_r[q] = pw[q] * (-one_minus_w) * b_r;
          e_i[q] = pw[q] * (-one_minus_w) * b_i;
        }
      }
    }
    // --- X_l(i, j) += a_l(i) conj(psi(j)) + e_l(i) conj(phi(j)), per lane (assigned by the first pack).
    const bool assign = pk == 0;
    for (int l = 0; l < d; ++l)
      for (int i = 0; i < n; ++i) {
        const Real* a_r = yr + (l * n + i) * W;
        const Real* a_i = yi + (l * n + i) * W;
        const Real* e_r = er + (l * n + i) * W;
        const Real* e_i = ei + (l * n + i) * W;
        for (int j = 0; j < n; ++j) {
          Real* g_r = gr + (std::size_t(l * n + i) * n + j) * W;
          Real* g_i = gi + (std::size_t(l * n + i) * n + j) * W;
          const Real* p_r = psr + j * W;
          const Real* p_i = psi + j * W;
          const Real* f_r = phr + j * W;
          const Real* f_i = phi + j * W;
          QGML_GRAD_LANES(q, W) {
            const Real vr = a_r[q] * p_r[q] + a_i[q] * p_i[q] + e_r[q] * f_r[q] + e_i[q] * f_i[q];
            const Real vi = a_i[q] * p_r[q] - a_r[q] * p_i[q] + e_i[q] * f_r[q] - e_r[q] * f_i[q];
            g_r[q] = assign ? vr : g_r[q] + vr;
            g_i[q] = assign ? vi : g_i[q] + vi;
          }
        }
      }
    // --- Per-point terms (unweighted).
    for (int q = 0; q < lanes; ++q) {
      const int t = t0 + q;
      const Real total = dist2[q] + lw * sigma2[q];
      const bool finite = math::isfinite(total) && math::isfinite(e0[q]);
      terms(t, int(loss_total)) = total;
      terms(t, int(loss_reconstruction)) = dist2[q];
      terms(t, int(loss_fluctuation)) = sigma2[q];
      terms(t, int(loss_energy)) = e0[q];
      terms(t, int(loss_degenerate_points)) = degenerate[q];
      terms(t, int(loss_nonfinite_points)) = finite ? Real(0) : Real(1);
      terms(t, int(loss_eigh_failures)) = code[q] == linalg::eigh_success ? Real(0) : Real(1);
      info(t) = code[q];
    }
  }
  // --- The chunk's partial: the lanes summed in order.
  for (int l = 0; l < d; ++l)
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        const Real* g_r = gr + (std::size_t(l * n + i) * n + j) * W;
        const Real* g_i = gi + (std::size_t(l * n + i) * n + j) * W;
        Real sr = 0, si = 0;
        for (int q = 0; q < W; ++q) {
          sr += g_r[q];
          si += g_i[q];
        }
        partial(chunk, l, i, j) = complex_t<Real>(sr, si);
      }
}

}  // namespace qgml::detail

#undef QGML_GRAD_LANES
