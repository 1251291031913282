// Quantum geometry of the ground state from the ground state alone (QuantumGeometry's team path): one
// team per point, no eigenvectors of excited states. With H = Q T Q^H (team Householder reduction),
// psi = Q z_0, y_mu = A_mu psi and y'_mu = Q^H y_mu, and R_T the regularised reduced resolvent of T
// (ground_state/tridiagonal_ground_state.hpp; R = Q R_T Q^H = sum_{n >= 1} f(E_n - E_0) |n><n|), the
// sum-over-states forms of quantum_geometry.hpp become one tridiagonal solve per coordinate direction,
// phi'_mu = R_T y'_mu (docs/math.md 5.1-5.3):
//   quantum metric      g_{mu,nu} = 2 Re sum_n conj(W_{n,mu}) W_{n,nu} f(g_n) = 2 Re <y'_mu|phi'_nu>,
//   covariance metric   g_{mu,nu} = 2 Re (<y'_mu|y'_nu> - <y'_mu|z_0><z_0|y'_nu>),
//   geometric tensor    Q_{mu,nu} = sum_n conj(W_{n,mu}) W_{n,nu} f(g_n)^2 = <phi'_mu|phi'_nu>,
// with W_{n,mu} = <n|A_mu|psi_0>; f is the regularised 1/g of degeneracy.hpp in both paths.
// O(N^3) for the reduction and O(D N^2) after it, against the whole eigendecomposition (and O(D N^2)
// projections) of the spectral path.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstddef>

#include "qgml/common/kokkos_compat.hpp"
#include "qgml/common/types.hpp"
#include "qgml/ground_state/degeneracy.hpp"
#include "qgml/ground_state/ground_state_team.hpp"
#include "qgml/ground_state/tridiagonal_ground_state.hpp"
#include "qgml/linalg/householder_tridiagonal.hpp"
#include "qgml/linalg/loops.hpp"
#include "qgml/linalg/team_shape.hpp"

namespace qgml::detail {

// Reals of one team's scratch: team_ground_state's head (H, tau, p, T, z_0), the inverse iteration's
// workspace (2 N), x (D), y'_mu and phi'_mu (complex, 4 D N), the resolvent's workspace per direction
// (4 D N), team_ground_state's shared scalars.
KOKKOS_INLINE_FUNCTION constexpr std::size_t ground_state_geometry_scratch_reals(int n, int d) {
  return team_ground_state_head_reals(n) + 2 * std::size_t(n) + std::size_t(d) + 8 * std::size_t(d) * n +
         team_ground_state_shared;
}

// kind: int(MetricKind) (0 quantum, 1 covariance, 2 fubini_study); tensor: also fill fs and berry.
template <class Real, class ExecSpace, class PointsView>
struct GroundStateGeometry {
  using complex_type = complex_t<Real>;
  using memory_space = typename ExecSpace::memory_space;
  using member_type = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using tensor_type = Kokkos::View<Real***, Kokkos::LayoutRight, memory_space>;

  MatrixStack<Real, memory_space> a;
  Matrix<Real, memory_space> sq;
  PointsView x;
  RealMatrix<Real, memory_space> xbar;
  RealVector<Real, memory_space> energy, sigma2;
  IntVector<memory_space> info;
  tensor_type metric, fs, berry;
  int kind = 0, count = 0, level = 0, lanes = 0;  // lanes, stride, level: the TeamLaunch's
  bool tensor = false;
  std::size_t stride = 0;
  Real eta_rel = 0;

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
    Real* const dd = g.rest;
    Real* const ll = dd + n;
    Real* const xs = ll + n;
    Real* const yr = xs + d;  // y'_mu(i) at mu * n + i
    Real* const yi = yr + d * n;
    Real* const fr = yi + d * n;  // phi'_mu
    Real* const fi = fr + d * n;
    Real* const work = fi + d * n;  // 4 n per direction
    Real* const shared = work + 4 * d * n;
    const Real nan = math::sqrt(Real(-1));

    // --- H(x), T, E_0, E_max, z_0, psi = Q z_0 into fr / fi (free until the solves); then y_mu = A_mu psi
    // and y'_mu = Q^H y_mu.
    const TeamGroundState<Real> gs =
        team_ground_state<Real>(loops, a, sq, x, t, h, tau, g.p, td, te, z0, dd, ll, xs, shared, fr, fi, Real(0));
    const int code = gs.code;
    const Real e0 = gs.e0, emax = gs.emax;
    loops.for_each(0, d * n, [&](const int ki) {
      const int k = ki / n, i = ki % n;
      Real r = 0, im = 0;
      for (int j = 0; j < n; ++j) {
        const complex_type akij = a(k, i, j);
        r += akij.real() * fr[j] - akij.imag() * fi[j];
        im += akij.real() * fi[j] + akij.imag() * fr[j];
      }
      yr[ki] = r;
      yi[ki] = im;
    });
    loops.barrier();
    // xbar, sigma^2 (the order of ground_state_terms), E_0.
    loops.single([&]() {
      Real s2 = 0;
      for (int k = 0; k < d; ++k) {
        Real xb = 0, square = 0;
        for (int i = 0; i < n; ++i) {
          xb += fr[i] * yr[k * n + i] + fi[i] * yi[k * n + i];
          square += yr[k * n + i] * yr[k * n + i] + yi[k * n + i] * yi[k * n + i];
        }
        xbar(t, k) = xb;
        s2 += square - xb * xb;
      }
      sigma2(t) = s2;
      energy(t) = e0;
      info(t) = code;
    });
    loops.barrier();
    // y'_mu = Q^H y_mu and phi'_mu = R_T y'_mu, one direction per thread.
    const Real eta = eta_rel * spectral_scale(e0, emax);
    const bool quantum = kind == 0, covariance = kind == 1, fubini_study = kind == 2;
    const bool solve = !covariance || tensor;
    loops.for_each(0, d, [&](const int mu) {
      Real* const ur = yr + mu * n;
      Real* const ui = yi + mu * n;
      linalg::apply_householder_q(linalg::SerialLoops{}, team_reduced_matrix<Loops>(h), tau, ur, ui, true);
      if (solve) {
        Real* const vr = fr + mu * n;
        Real* const vi = fi + mu * n;
        for (int i = 0; i < n; ++i) {
          vr[i] = ur[i];
          vi[i] = ui[i];
        }
        Real* const w = work + 4 * mu * n;
        linalg::packed_reduced_resolvent<1>(n, td, te, &e0, &eta, z0, w, w + n, w + 2 * n, w + 3 * n, vr, vi);
      }
    });
    loops.barrier();
    // The D x D tensors, one (mu, nu) pair per thread.
    loops.for_each(0, d * d, [&](const int munu) {
      const int mu = munu / d, nu = munu % d;
      if (nu < mu) return;
      const Real* const ar = yr + mu * n;
      const Real* const ai = yi + mu * n;
      const Real* const br = (quantum ? fr : yr) + nu * n;
      const Real* const bi = (quantum ? fi : yi) + nu * n;
      Real g = 0;
      if (!fubini_study) {
        for (int i = 0; i < n; ++i) g += ar[i] * br[i] + ai[i] * bi[i];  // Re <a|b>
        if (covariance) {
          Real amr = 0, ami = 0, bmr = 0, bmi = 0;  // <z_0|y'_mu>, <z_0|y'_nu>
          for (int i = 0; i < n; ++i) {
            amr += z0[i] * ar[i];
            ami += z0[i] * ai[i];
            bmr += z0[i] * br[i];
            bmi += z0[i] * bi[i];
          }
          g -= amr * bmr + ami * bmi;
        }
        g *= Real(2);
      }
      Real qr = 0, qi = 0;  // <phi'_mu|phi'_nu>
      if (tensor || fubini_study) {
        const Real* const pr = fr + mu * n;
        const Real* const pi = fi + mu * n;
        const Real* const sr = fr + nu * n;
        const Real* const si = fi + nu * n;
        for (int i = 0; i < n; ++i) {
          qr += pr[i] * sr[i] + pi[i] * si[i];
          qi += pr[i] * si[i] - pi[i] * sr[i];
        }
      }
      if (fubini_study) g = qr;
      if (code != 0) g = nan;
      metric(t, mu, nu) = g;
      metric(t, nu, mu) = g;
      if (tensor) {
        fs(t, mu, nu) = qr;
        fs(t, nu, mu) = qr;
        berry(t, mu, nu) = Real(-2) * qi;
        berry(t, nu, mu) = Real(2) * qi;
      }
    });
  }
};

}  // namespace qgml::detail
