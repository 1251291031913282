// Quantum geometry of the ground state for one SIMD pack of W points on CPUs (QuantumGeometry's packed
// kernel): the formulas of ground_state_geometry.hpp (docs/math.md 5.1-5.3) with the lanes innermost, as the
// fused training kernel (train/loss_gradient_packed.hpp). Per pack: H(x) into the packed arrays,
// H = Q T Q^H by Householder, E_0 and E_max of T, z_0 by inverse iteration and psi = Q z_0
// (ground_state/ground_state_packed.hpp); y_mu = A_mu psi with xbar and sigma^2 (ground_state/ground_state_terms.hpp);
// y'_mu = Q^H y_mu and phi'_mu = R_T y'_mu, one regularised reduced-resolvent solve per direction
// (ground_state/tridiagonal_ground_state.hpp); then
//   quantum metric      g_{mu,nu} = 2 Re <y'_mu|phi'_nu>,
//   covariance metric   g_{mu,nu} = 2 Re (<y'_mu|y'_nu> - <y'_mu|z_0><z_0|y'_nu>),
//   geometric tensor    Q_{mu,nu} = <phi'_mu|phi'_nu>  (Fubini-Study Re Q, Berry curvature -2 Im Q);
// and the metric's eigenvalues (Jacobi, one lane per point: linalg/symmetric_eigenvalues_packed.hpp)
// with the dimension estimate (dimension_estimate.hpp), so the pass needs no second kernel.
// O(N^3) per point for the reduction, O(D N^2) after it, every loop a SIMD loop over the pack's points.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstddef>

#include "qgml/common/line_aligned_scratch.hpp"
#include "qgml/common/types.hpp"
#include "qgml/geometry/dimension_estimate.hpp"
#include "qgml/ground_state/degeneracy.hpp"
#include "qgml/ground_state/ground_state_packed.hpp"
#include "qgml/ground_state/ground_state_terms.hpp"
#include "qgml/ground_state/tridiagonal_ground_state.hpp"
#include "qgml/linalg/hermitian_eigensolver_packed.hpp"
#include "qgml/linalg/lanes.hpp"
#include "qgml/linalg/symmetric_eigenvalues_packed.hpp"

namespace qgml::detail {

// Reals of one pack's scratch: packed_ground_state's arrays, the resolvent's imaginary factors (2 N),
// y'_mu and phi'_mu (complex, 4 D N), r_k (D), the metric and its eigenvalues (D^2 + D), all per lane.
KOKKOS_INLINE_FUNCTION constexpr std::size_t packed_geometry_scratch_reals(int n, int d, int width) {
  return packed_ground_state_scratch_reals(n, d, width) +
         std::size_t(width) * (2 * std::size_t(n) + 4 * std::size_t(d) * n + std::size_t(d) * (d + 2));
}

// kind: int(MetricKind) (0 quantum, 1 covariance, 2 fubini_study); tensor: also fill fs and berry.
// One team of one thread per pack of W = linalg::packed_eigh_width<Real> points.
template <class Real, class ExecSpace, class PointsView>
struct PackedGroundStateGeometry {
  static constexpr int W = linalg::packed_eigh_width<Real>;
  using memory_space = typename ExecSpace::memory_space;
  using member_type = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using scratch_view = Kokkos::View<Real*, typename ExecSpace::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  using tensor_type = Kokkos::View<Real***, Kokkos::LayoutRight, memory_space>;

  MatrixStack<Real, memory_space> a;
  Matrix<Real, memory_space> sq;
  PointsView x;
  RealMatrix<Real, memory_space> xbar;
  RealVector<Real, memory_space> energy, sigma2;
  IntVector<memory_space> info;
  tensor_type metric, fs, berry;
  RealMatrix<Real, memory_space> eigenvalues;  // T x D, descending
  IntVector<memory_space> dimension;
  DimensionRule<Real> rule;
  int kind = 0, level = 0, count = 0;
  bool tensor = false;
  LineAlignedScratch<scratch_view> scratch;
  Real eta_rel = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& member) const {
    const int d = static_cast<int>(a.extent(0));
    const int n = static_cast<int>(a.extent(1));
    const int t0 = member.league_rank() * W;
    const int lanes = count - t0 < W ? count - t0 : W;
    const PackedGroundStateScratch<W, Real> g(n, d, scratch.data(member, level));
    Real* const fdi = g.end;
    Real* const fli = fdi + n * W;
    Real* const yr = fli + n * W;  // y_mu(i), then y'_mu(i), at (mu * n + i) * W + q
    Real* const yi = yr + d * n * W;
    Real* const fr = yi + d * n * W;  // phi'_mu
    Real* const fi = fr + d * n * W;
    Real* const rk = fi + d * n * W;
    Real* const gm = rk + d * W;      // the metric, (mu * d + nu) * W + q
    Real* const ge = gm + d * d * W;  // its eigenvalues, i * W + q
    const Real nan = math::sqrt(Real(-1));

    int code[W];
    Real e0[W], emax[W], degenerate[W];
    packed_ground_state<W>(a, sq, x, t0, lanes, PackedGroundStateMethod::tridiagonal, g.p, g.xk, g.td, g.te, g.z0, g.fd,
                           g.fl, g.psr, g.psi, Real(0), code, e0, emax, degenerate);
    Real s2[W], dist2[W];
    ground_state_terms_lanes<W>(a, g.psr, g.psi, g.xk, yr, yi, rk, s2, dist2, [&](const int k, const Real* xb) {
      for (int q = 0; q < lanes; ++q) xbar(t0 + q, k) = xb[q];
    });
    for (int q = 0; q < lanes; ++q) {
      sigma2(t0 + q) = s2[q];
      energy(t0 + q) = e0[q];
      info(t0 + q) = code[q];
    }

    // y'_mu = Q^H y_mu; phi'_mu = R_T y'_mu (R_T: the regularised reduced resolvent of T).
    Real eta[W];
    QGML_LANES(q, W) eta[q] = eta_rel * spectral_scale(e0[q], emax[q]);
    const bool quantum = kind == 0, covariance = kind == 1, fubini_study = kind == 2;
    const bool solve = !covariance || tensor;
    for (int mu = 0; mu < d; ++mu) {
      Real* const ur = yr + mu * n * W;
      Real* const ui = yi + mu * n * W;
      packed_apply_q<W>(g.p, ur, ui, true);
      if (!solve) continue;
      Real* const vr = fr + mu * n * W;
      Real* const vi = fi + mu * n * W;
      for (int i = 0; i < n * W; ++i) {
        vr[i] = ur[i];
        vi[i] = ui[i];
      }
      linalg::packed_reduced_resolvent<W>(n, g.td, g.te, e0, eta, g.z0, g.fd, fdi, g.fl, fli, vr, vi);
    }

    // The D x D tensors.
    for (int mu = 0; mu < d; ++mu)
      for (int nu = mu; nu < d; ++nu) {
        const Real* const ar = yr + mu * n * W;
        const Real* const ai = yi + mu * n * W;
        const Real* const br = (quantum ? fr : yr) + nu * n * W;
        const Real* const bi = (quantum ? fi : yi) + nu * n * W;
        Real gv[W], qr[W], qi[W];
        QGML_LANES(q, W) gv[q] = qr[q] = qi[q] = Real(0);
        if (!fubini_study) {
          for (int i = 0; i < n; ++i)
            QGML_LANES(q, W) gv[q] += ar[i * W + q] * br[i * W + q] + ai[i * W + q] * bi[i * W + q];
          if (covariance) {
            Real amr[W], ami[W], bmr[W], bmi[W];  // <z_0|y'_mu>, <z_0|y'_nu>
            QGML_LANES(q, W) amr[q] = ami[q] = bmr[q] = bmi[q] = Real(0);
            for (int i = 0; i < n; ++i) QGML_LANES(q, W) {
                const Real z = g.z0[i * W + q];
                amr[q] += z * ar[i * W + q];
                ami[q] += z * ai[i * W + q];
                bmr[q] += z * br[i * W + q];
                bmi[q] += z * bi[i * W + q];
              }
            QGML_LANES(q, W) gv[q] -= amr[q] * bmr[q] + ami[q] * bmi[q];
          }
          QGML_LANES(q, W) gv[q] *= Real(2);
        }
        if (tensor || fubini_study) {
          const Real* const pr = fr + mu * n * W;
          const Real* const pi = fi + mu * n * W;
          const Real* const sr = fr + nu * n * W;
          const Real* const si = fi + nu * n * W;
          for (int i = 0; i < n; ++i) QGML_LANES(q, W) {
              qr[q] += pr[i * W + q] * sr[i * W + q] + pi[i * W + q] * si[i * W + q];
              qi[q] += pr[i * W + q] * si[i * W + q] - pi[i * W + q] * sr[i * W + q];
            }
        }
        QGML_LANES(q, W) gm[(mu * d + nu) * W + q] = gm[(nu * d + mu) * W + q] = fubini_study ? qr[q] : gv[q];
        for (int q = 0; q < lanes; ++q) {
          const int t = t0 + q;
          const Real v = code[q] != 0 ? nan : (fubini_study ? qr[q] : gv[q]);
          metric(t, mu, nu) = v;
          metric(t, nu, mu) = v;
          if (tensor) {
            fs(t, mu, nu) = qr[q];
            fs(t, nu, mu) = qr[q];
            berry(t, mu, nu) = Real(-2) * qi[q];
            berry(t, nu, mu) = Real(2) * qi[q];
          }
        }
      }

    // The metric's eigenvalues and the estimate (-1 where the ground state failed or Jacobi did not
    // converge); lanes without a point, or without a ground state, are not rotated.
    bool skip[W];
    int sweeps[W];
    for (int q = 0; q < W; ++q) skip[q] = q >= lanes || code[q] != 0;
    linalg::packed_symmetric_eigenvalues_descending<W>(d, gm, ge, skip, sweeps);
    for (int q = 0; q < lanes; ++q) {
      const int t = t0 + q;
      for (int i = 0; i < d; ++i) eigenvalues(t, i) = code[q] != 0 ? nan : ge[i * W + q];
      dimension(t) =
          code[q] == 0 && sweeps[q] <= linalg::symmetric_eigenvalues_max_sweeps ? rule(&eigenvalues(t, 0), d) : -1;
    }
  }
};

}  // namespace qgml::detail
