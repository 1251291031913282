// The ground state of one pack of W points on CPUs, lanes innermost (the layout of
// linalg/hermitian_eigensolver_packed.hpp): H(x) = S - sum_k x_k A_k + |x|^2 / 2 (docs/math.md 2.1) built
// straight into the packed eigensolver's arrays, then either
//  - the whole eigendecomposition (ground_state = false): psi_0 = the eigenvector of the smallest
//    eigenvalue (the first one on ties, as the sorted solver), or
//  - the ground-state path (ground_state = true): H = Q T Q^H by Householder, E_0, E_max and the
//    degeneracy of E_0 from T by Laguerre's iteration and a Sturm count (E_0 alone for
//    tridiagonal_lowest), z_0 by inverse iteration on T and psi_0 = Q z_0: O(N^2) per point after the
//    reduction (ground_state/tridiagonal_ground_state.hpp).
// Shared by the fused loss-gradient kernel (train/loss_gradient_packed.hpp) and the energy kernel of the
// samplers (ground_state/ground_state_energy.hpp), so both see the same bits.
#pragma once

#include <Kokkos_Core.hpp>

#include "qgml/common/kokkos_compat.hpp"
#include "qgml/common/types.hpp"
#include "qgml/ground_state/degeneracy.hpp"
#include "qgml/ground_state/tridiagonal_ground_state.hpp"
#include "qgml/ground_state/tridiagonal_lowest_eigenvalue.hpp"
#include "qgml/linalg/hermitian_eigensolver_packed.hpp"
#include "qgml/linalg/lanes.hpp"
#include "qgml/plan/kernel_kinds.hpp"

namespace qgml::detail {

// PackedGroundStateMethod: plan/kernel_kinds.hpp.

// x <- Q x (adjoint: x <- Q^H x) for the Q = H_0 ... H_{n-2} of linalg::packed_tridiagonalize, x complex
// (xr, xi, lane innermost): O(n^2) per lane.
template <int W, class Real>
KOKKOS_INLINE_FUNCTION void packed_apply_q(const linalg::PackedEighArrays<W, Real>& p, Real* xr, Real* xi,
                                           const bool adjoint) {
  const int n = p.n;
  for (int step = 0; step < n - 1; ++step) {
    const int k = adjoint ? step : n - 2 - step;  // Q x: H_{n-2} first; Q^H x: H_0^H first
    const int b = k + 1;
    const Real* tkr = p.tr + k * W;
    const Real* tki = p.ti + k * W;
    Real dr[W], di[W];
    linalg::packed_conj_dot<W>(b, n, p.at(p.ar, 0, k), p.at(p.ai, 0, k), n * W, xr, xi, W, dr, di);  // v^H x
    const Real sign = adjoint ? Real(-1) : Real(1);                                                  // tau or conj(tau)
    QGML_LANES(q, W) {
      const Real x = dr[q], y = di[q], ti = sign * tki[q];
      dr[q] = tkr[q] * x - ti * y;
      di[q] = tkr[q] * y + ti * x;
    }
    for (int i = b; i < n; ++i) {  // x -= (tau v^H x) v
      const Real* vr = p.at(p.ar, i, k);
      const Real* vi = p.at(p.ai, i, k);
      Real* x_r = xr + i * W;
      Real* x_i = xi + i * W;
      QGML_LANES(q, W) {
        x_r[q] -= dr[q] * vr[q] - di[q] * vi[q];
        x_i[q] -= dr[q] * vi[q] + di[q] * vr[q];
      }
    }
  }
}

// z_0 of T by inverse iteration (linalg::packed_ground_vector) and psi_0 = Q z_0 into (psr, psi).
template <int W, class Real>
KOKKOS_INLINE_FUNCTION void packed_ground_vector_and_state(const linalg::PackedEighArrays<W, Real>& p, const int n,
                                                           const Real* td, const Real* te, const Real* e0,
                                                           const Real* emax, Real* fdr, Real* flr, Real* z0, Real* psr,
                                                           Real* psi) {
  linalg::packed_ground_vector<W>(n, td, te, e0, emax, fdr, flr, z0);
  for (int j = 0; j < n; ++j) QGML_LANES(q, W) {
      psr[j * W + q] = z0[j * W + q];
      psi[j * W + q] = Real(0);
    }
  packed_apply_q<W>(p, psr, psi, false);
}

// Reals of packed_ground_state's arrays for one pack (PackedGroundStateScratch): the eigensolver's
// arrays, psi (2 N), T, z_0 and the inverse iteration's factors (5 N), x_k (D), all per lane.
KOKKOS_INLINE_FUNCTION constexpr std::size_t packed_ground_state_scratch_reals(int n, int d, int width) {
  return std::size_t(width) * (std::size_t(linalg::packed_eigh_scratch_reals(n, 1)) + 7 * std::size_t(n) + d);
}

// packed_ground_state's arrays carved from `base` (packed_ground_state_scratch_reals reals), for the
// kernels that need psi_0 alone (the energy kernel, the predictions of supervised models); `end` is
// the first Real after them.
template <int W, class Real>
struct PackedGroundStateScratch {
  linalg::PackedEighArrays<W, Real> p;
  Real *psr, *psi, *td, *te, *z0, *fd, *fl, *xk, *end;
  KOKKOS_INLINE_FUNCTION PackedGroundStateScratch(int n, int d, Real* base) : p(n, base) {
    psr = base + std::size_t(W) * linalg::packed_eigh_scratch_reals(n, 1);
    psi = psr + n * W;
    td = psi + n * W;
    te = td + n * W;
    z0 = te + n * W;
    fd = z0 + n * W;
    fl = fd + n * W;
    xk = fl + n * W;
    end = xk + d * W;
  }
};

// H(x) = S - sum_k x_k A_k + |x|^2 / 2 (docs/math.md 2.1) of points t0 .. t0 + lanes - 1 (lanes <= W; padding
// lanes at x = 0), its lower triangle into (hr, hi) (element (i, j) of lane q at (i * n + j) * W + q), x_k
// into xk[k * W + q]. code[q] = linalg::eigh_success, or eigh_non_finite_input for a padding lane (q >=
// lanes) or where H has an entry that is not finite; such a lane's H is zero.
template <int W, class Real, class AView, class SView, class XView>
KOKKOS_INLINE_FUNCTION void packed_build_hamiltonian(const AView& a, const SView& sq, const XView& x, const int t0,
                                                     const int lanes, Real* xk, Real* hr_base, Real* hi_base,
                                                     int* code) {
  const int d = static_cast<int>(a.extent(0));
  const int n = static_cast<int>(a.extent(1));
  Real x2[W], fin[W];
  for (int k = 0; k < d; ++k)
    for (int q = 0; q < W; ++q) xk[k * W + q] = q < lanes ? Real(x(t0 + q, k)) : Real(0);
  QGML_LANES(q, W) {
    x2[q] = Real(0);
    fin[q] = Real(0);
  }
  for (int k = 0; k < d; ++k) {
    const Real* xq = xk + k * W;
    QGML_LANES(q, W) x2[q] += xq[q] * xq[q];
  }
  for (int i = 0; i < n; ++i)
    for (int j = 0; j <= i; ++j) {
      // Accumulated in locals (registers), stored once: through hr, hi the compiler must assume they may
      // alias xk and keeps a store-to-load chain per k (a measurable share of a sampler iteration:
      // perf/NOTES.md, "Measurements moved out of code comments (2026-12-03)").
      Real accr[W], acci[W];
      const Real s_r = sq(i, j).real(), s_i = sq(i, j).imag();
      QGML_LANES(q, W) {
        accr[q] = s_r;
        acci[q] = s_i;
      }
      for (int k = 0; k < d; ++k) {
        const Real a_r = a(k, i, j).real(), a_i = a(k, i, j).imag();
        const Real* xq = xk + k * W;
        QGML_LANES(q, W) {
          accr[q] -= xq[q] * a_r;
          acci[q] -= xq[q] * a_i;
        }
      }
      if (i == j) QGML_LANES(q, W) accr[q] += Real(0.5) * x2[q];
      Real* hr = hr_base + (i * n + j) * W;
      Real* hi = hi_base + (i * n + j) * W;
      QGML_LANES(q, W) {
        hr[q] = accr[q];
        hi[q] = acci[q];
        fin[q] += (accr[q] - accr[q]) + (acci[q] - acci[q]);  // NaN once any entry is not finite
      }
    }
  for (int q = 0; q < W; ++q) {
    code[q] = (q < lanes && fin[q] == Real(0)) ? linalg::eigh_success : linalg::eigh_non_finite_input;
    if (code[q] != linalg::eigh_success)  // solved as a zero matrix: no sweeps, no contamination
      for (int i = 0; i < n; ++i)
        for (int j = 0; j <= i; ++j) hr_base[(i * n + j) * W + q] = hi_base[(i * n + j) * W + q] = Real(0);
  }
}

// The ground state of points t0 .. t0 + lanes - 1 (lanes <= W; padding lanes at x = 0). Out, per lane q:
// xk[k * W + q] = x_k, psi_0 in (psr, psi) at j * W + q, code[q] (linalg::EighInfo: non-finite H or no
// convergence), e0, emax (the Gershgorin bound for tridiagonal_lowest) (NaN where code != 0), and
// degenerate[q] = 1 where E_1 - E_0 <= tol max(E_max - E_0, 1) (ground_state/degeneracy.hpp), else 0 (always 0
// for tridiagonal_lowest and where code != 0). The tridiagonal methods also leave T in (td, te), z_0 and
// the inverse iteration's factors (fdr, flr), and the Householder vectors in p, for the reduced-resolvent
// solve of the gradient.
template <int W, class Real, class AView, class SView, class XView>
KOKKOS_INLINE_FUNCTION void packed_ground_state(const AView& a, const SView& sq, const XView& x, const int t0,
                                                const int lanes, const PackedGroundStateMethod method,
                                                const linalg::PackedEighArrays<W, Real>& p, Real* xk, Real* td,
                                                Real* te, Real* z0, Real* fdr, Real* flr, Real* psr, Real* psi,
                                                const Real tol, int* code, Real* e0, Real* emax, Real* degenerate) {
  const int n = static_cast<int>(a.extent(1));
  packed_build_hamiltonian<W>(a, sq, x, t0, lanes, xk, p.ar, p.ai, code);
  const bool ground_state = method != PackedGroundStateMethod::eigendecomposition;
  const bool lowest_only = method == PackedGroundStateMethod::tridiagonal_lowest;
  int failed[W];
  for (int q = 0; q < W; ++q) failed[q] = 0;
  if (ground_state) {
    linalg::packed_tridiagonalize<W>(p);
    for (int i = 0; i < n; ++i) QGML_LANES(q, W) {
        td[i * W + q] = p.d[i * W + q];
        te[i * W + q] = p.e[i * W + q];
      }
  } else {
    linalg::packed_eigh_solve<W>(p, failed);
  }

  // --- Ground state of every lane: E_0, E_max, degeneracy; failed lanes get NaN (as the sorted path).
  const Real nan = math::sqrt(Real(-1));
  if (ground_state) {
    if (lowest_only) {
      linalg::packed_lowest_eigenvalue<W>(n, td, te, e0, emax);
      QGML_LANES(q, W) degenerate[q] = Real(0);
    } else {
      linalg::packed_ground_state_eigenvalues<W>(n, td, te, tol, e0, emax, degenerate);
    }
    for (int q = 0; q < W; ++q)
      if (q < lanes && code[q] != linalg::eigh_success) {
        e0[q] = emax[q] = nan;
        degenerate[q] = Real(0);
      }
    packed_ground_vector_and_state<W>(p, n, td, te, e0, emax, fdr, flr, z0, psr, psi);
    return;
  }
  int n0[W];
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
  Real e1[W];
  QGML_LANES(q, W) {
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
    degenerate[q] = ground_state_degenerate(n, e0[q], e1[q], emax[q], tol) ? Real(1) : Real(0);
  }
  for (int q = 0; q < W; ++q)
    for (int j = 0; j < n; ++j) {
      psr[j * W + q] = p.at(p.zr, n0[q], j)[q];
      psi[j * W + q] = p.at(p.zi, n0[q], j)[q];
    }
}

}  // namespace qgml::detail
