// The team path of LossGradient (LossKernel::team): a group of threads per point on the ground-state
// path, the GPU-shaped kernel, written against the Loops interface so that it runs in every TeamShape on
// every backend: on GPUs several points per team, each on a fraction of a warp (the lanes mapping), or
// one point per team; on CPUs one thread per point, where CI tests every shape against the fused host
// path.
//
// Per point x (docs/math.md 2.1, 4.5-4.7; the formulas of loss_gradient.hpp):
//   H(x) = S - sum_k x_k A_k + |x|^2 / 2 in team scratch (S = 1/2 sum_k A_k^2),
//   H = Q T Q^H by the team Householder reduction (linalg/householder_tridiagonal.hpp),
//   E_0, E_max and the degeneracy of E_0 from T (linalg::ground_state_eigenvalues: bisection, one
//   thread per eigenvalue, on GPUs; the fused kernel's Laguerre iteration and Sturm count on CPUs),
//   psi = Q z_0 with z_0 from inverse iteration on T,
//   y_k = A_k psi, xbar, sigma^2, d^2, r = xbar - x, s = sum_k r_k y_k,
//   phi = Q R_T Q^H s (the regularised reduced resolvent, a complex tridiagonal solve),
//   a_l = w b_l - (1 - w) c_l + (1 - w) r_l psi,  e_l = -(1 - w) b_l,  b_l = y_l - x_l psi,
//   c_l = (A_l - x_l) phi,
// supervised (docs/supervised.md, sections 5 and 11): B_c psi into block D + c of row t of U,
// y_hat_c = <psi|B_c psi>, s = lambda (1 - w) sum_k r_k y_k + sum_c (g_c/2) B_c psi, the coefficients of
// supervised_inputs.hpp, and the blocks of the B_c, a_c = (g_c/2) psi, e_c = 0;
// written once per point as rows of U (row t: the a_l, row count + t: the e_l, each D x N) and W
// (row t: psi, row count + t: phi). The batch gradient is then X_l = sum_rows u_l w^H, i.e.
// Y = W^H U (N x D N, one GEMM over 2 count rows) with X_l(i, j) = Y(j, l N + i), and
// G_l = X_l + X_l^H (gradient_product.hpp; shared with the separate kernels).
#pragma once

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <type_traits>

#include "qgml/common/kokkos_compat.hpp"
#include "qgml/common/types.hpp"
#include "qgml/ground_state/degeneracy.hpp"
#include "qgml/ground_state/ground_state_team.hpp"
#include "qgml/ground_state/tridiagonal_ground_state.hpp"
#include "qgml/linalg/batched_eigh.hpp"
#include "qgml/linalg/hermitian_matvec.hpp"
#include "qgml/linalg/householder_tridiagonal.hpp"
#include "qgml/linalg/loops.hpp"
#include "qgml/linalg/team_shape.hpp"
#include "qgml/train/gradient_product.hpp"
#include "qgml/train/loss_settings.hpp"
#include "qgml/train/supervised_inputs.hpp"

namespace qgml::detail {

// Slots of the shared scalars: team_ground_state's first, then the gradient's.
enum TeamGradientShared : int {
  shared_sigma2 = team_ground_state_shared,
  shared_dist2,
  shared_loss_sup,       // supervised: the point's loss
  shared_log_partition,  // supervised, softmax: log sum_c e^{y_hat_c}
  team_gradient_shared
};

// Reals of one team's scratch: team_ground_state's head (H, tau, p, T, z_0), the factorisations (4 N),
// psi, phi / s (complex: 4 N), x and r (2 D), the shared scalars.
KOKKOS_INLINE_FUNCTION constexpr std::size_t team_gradient_scratch_reals(int n, int d) {
  return team_ground_state_head_reals(n) + 8 * std::size_t(n) + 2 * std::size_t(d) + team_gradient_shared;
}

template <class Real, class ExecSpace, class PointsView>
struct TeamLossGradient {
  using complex_type = complex_t<Real>;
  using memory_space = typename ExecSpace::memory_space;
  using member_type = typename Kokkos::TeamPolicy<ExecSpace>::member_type;

  MatrixStack<Real, memory_space> a;
  Matrix<Real, memory_space> sq;
  PointsView x;
  RealMatrix<Real, memory_space> xbar, terms;
  IntVector<memory_space> info;
  ComplexMatrix<Real, memory_space> u, wv;  // 2 max_batch x (D + C) N, 2 max_batch x N
  int count = 0, level = 0, lanes = 0;      // lanes, stride, level: the TeamLaunch's (for_team_problems)
  std::size_t stride = 0;
  Real weight = 0, lw = 0, eta_rel = 0, tol = 0;
  bool skip_degenerate = false;
  SupervisedInputs<Real, memory_space> sup;

  template <class Mapping>
  KOKKOS_INLINE_FUNCTION void operator()(Mapping, const member_type& member) const {
    for_team_problems<Real>(Mapping{}, member, lanes, stride, level, count,
                            [&](const auto& loops, const int t, Real* base) { solve(loops, t, base); });
  }

  template <class Loops>
  KOKKOS_INLINE_FUNCTION void solve(const Loops& loops, const int t, Real* const base) const {
    const int d = static_cast<int>(a.extent(0));
    const int n = static_cast<int>(a.extent(1));
    const TeamGroundStateScratch<Real, typename ExecSpace::scratch_memory_space> g(base, n);
    const auto& h = g.h;
    complex_type* const tau = g.tau;
    Real* const td = g.td;
    Real* const te = g.te;
    Real* const z0 = g.z0;
    Real* const fdr = g.rest;  // 1 / D_i of the factorisations (complex for the resolvent)
    Real* const fdi = fdr + n;
    Real* const flr = fdi + n;  // L_i
    Real* const fli = flr + n;
    Real* const psr = fli + n;  // psi
    Real* const psi = psr + n;
    Real* const phr = psi + n;  // s, then phi
    Real* const phi = phr + n;
    Real* const xs = phi + n;  // x_k
    Real* const rs = xs + d;   // r_k
    Real* const shared = rs + d;

    // --- H(x), T, E_0, E_max, degeneracy, z_0, psi = Q z_0.
    const TeamGroundState<Real> gs =
        team_ground_state<Real>(loops, a, sq, x, t, h, tau, g.p, td, te, z0, fdr, flr, xs, shared, psr, psi, tol);
    const int code = gs.code;
    const Real e0 = gs.e0, emax = gs.emax;

    // --- y_k = A_k psi (into row t of U), xbar, sigma^2, d^2 (the order of ground_state_terms).
    linalg::hermitian_matvecs(loops, a, d, n, psr, psi, &u(t, 0));
    loops.barrier();
    loops.single([&]() {
      Real sigma2 = 0, dist2 = 0;
      for (int k = 0; k < d; ++k) {
        Real xb = 0, square = 0;
        for (int i = 0; i < n; ++i) {
          const complex_type y = u(t, k * n + i);
          xb += psr[i] * y.real() + psi[i] * y.imag();
          square += y.real() * y.real() + y.imag() * y.imag();
        }
        xbar(t, k) = xb;
        sigma2 += square - xb * xb;
        rs[k] = xb - xs[k];
        dist2 += rs[k] * rs[k];
      }
      shared[shared_sigma2] = sigma2;
      shared[shared_dist2] = dist2;
    });
    loops.barrier();

    // --- Supervised: B_c psi (block D + c of row t of U), y_hat(t, c), the point's loss and log-partition.
    const int outputs = sup.enabled ? sup.outputs : 0;
    if (sup.enabled) {
      loops.for_each(0, outputs * n, [&](const int ci) {
        const int c = ci / n, i = ci % n;
        Real br = 0, bi = 0;
        for (int j = 0; j < n; ++j) {
          const complex_type bij = sup.b(c, i, j);
          br += bij.real() * psr[j] - bij.imag() * psi[j];
          bi += bij.real() * psi[j] + bij.imag() * psr[j];
        }
        u(t, (d + c) * n + i) = complex_type(br, bi);
      });
      loops.barrier();
      loops.single([&]() {
        for (int c = 0; c < outputs; ++c) {
          Real y_hat = 0;
          for (int i = 0; i < n; ++i) {
            const complex_type b = u(t, (d + c) * n + i);
            y_hat += psr[i] * b.real() + psi[i] * b.imag();
          }
          sup.y_hat(t, c) = y_hat;
        }
        Real log_partition = 0;
        shared[shared_loss_sup] = sup.point_loss_of(t, log_partition);
        shared[shared_log_partition] = log_partition;
      });
      loops.barrier();
    }
    const GradientCoefficients<Real> co = gradient_coefficients(sup, lw);
    const Real log_partition = sup.enabled ? shared[shared_log_partition] : Real(0);

    // --- s = sum_k r_k y_k (supervised: s_scale sum_k r_k y_k + sum_c (g_c/2) B_c psi); phi = Q R_T Q^H s.
    loops.for_each(0, n, [&](const int i) {
      Real sr = 0, si = 0;
      for (int k = 0; k < d; ++k) {
        const complex_type y = u(t, k * n + i);
        sr += rs[k] * y.real();
        si += rs[k] * y.imag();
      }
      if (sup.enabled) {
        phr[i] = co.s_scale * sr;
        phi[i] = co.s_scale * si;
        for (int c = 0; c < outputs; ++c) {
          const Real half_dl = sup.half_derivative_of(t, c, log_partition);
          const complex_type b = u(t, (d + c) * n + i);
          phr[i] += half_dl * b.real();
          phi[i] += half_dl * b.imag();
        }
      } else {
        phr[i] = sr;
        phi[i] = si;
      }
    });
    loops.barrier();
    linalg::apply_householder_q(loops, team_reduced_matrix<Loops>(h), tau, phr, phi, true);
    const Real eta = eta_rel * spectral_scale(e0, emax);
    loops.single(
        [&]() { linalg::packed_reduced_resolvent<1>(n, td, te, &e0, &eta, z0, fdr, fdi, flr, fli, phr, phi); });
    loops.barrier();
    linalg::apply_householder_q(loops, team_reduced_matrix<Loops>(h), tau, phr, phi, false);

    // --- a_l, e_l (weighted) into rows t and count + t of U; psi, phi into the same rows of W.
    const bool degenerate = gs.degenerate;
    const Real pw = (skip_degenerate && degenerate) ? Real(0) : weight;
    // A_l phi into row count + t of U, then read back where e_l replaces it.
    linalg::hermitian_matvecs(loops, a, d, n, phr, phi, &u(count + t, 0));
    loops.barrier();
    loops.for_each(0, d * n, [&](const int li) {
      const int l = li / n, i = li % n;
      const complex_type c = u(count + t, li);
      const Real xl = xs[l], rl = rs[l];
      const complex_type y = u(t, li);
      const Real b_r = y.real() - xl * psr[i], b_i = y.imag() - xl * psi[i];
      const Real c_r = c.real() - xl * phr[i], c_i = c.imag() - xl * phi[i];
      u(t, li) = complex_type(pw * (co.b_coef * b_r + co.c_coef * c_r + co.r_coef * rl * psr[i]),
                              pw * (co.b_coef * b_i + co.c_coef * c_i + co.r_coef * rl * psi[i]));
      u(count + t, li) = complex_type(pw * co.e_coef * b_r, pw * co.e_coef * b_i);
    });
    loops.for_each(0, n, [&](const int i) {
      wv(t, i) = complex_type(psr[i], psi[i]);
      wv(count + t, i) = complex_type(phr[i], phi[i]);
    });
    loops.for_each(0, outputs * n, [&](const int ci) {
      const int c = ci / n, i = ci % n;
      const Real h = pw * sup.half_derivative_of(t, c, log_partition);
      u(t, (d + c) * n + i) = complex_type(h * psr[i], h * psi[i]);
      u(count + t, (d + c) * n + i) = complex_type(0);
    });

    // --- Per-point terms (unweighted).
    loops.single([&]() {
      const Real sigma2 = shared[shared_sigma2], dist2 = shared[shared_dist2];
      const Real loss_sup = sup.enabled ? shared[shared_loss_sup] : Real(0);
      const Real total = sup.enabled ? loss_sup + sup.lambda * (dist2 + lw * sigma2) : dist2 + lw * sigma2;
      const bool ok = math::isfinite(total) && math::isfinite(e0);
      terms(t, int(loss_total)) = total;
      terms(t, int(loss_reconstruction)) = dist2;
      terms(t, int(loss_fluctuation)) = sigma2;
      terms(t, int(loss_energy)) = e0;
      terms(t, int(loss_degenerate_points)) = degenerate ? Real(1) : Real(0);
      terms(t, int(loss_nonfinite_points)) = ok ? Real(0) : Real(1);
      terms(t, int(loss_eigh_failures)) = code == 0 ? Real(0) : Real(1);
      terms(t, int(loss_supervised)) = loss_sup;
      info(t) = code;
    });
  }
};

}  // namespace qgml::detail
