// The ground state of one point by one group of threads (the GPU-shaped per-point kernels: the team
// loss-gradient, the ground-state geometry and the samplers' energy, in any TeamShape of
// linalg/team_shape.hpp), written against the Loops interface of linalg/loops.hpp so that it runs on
// every backend:
//   H(x) = S - sum_k x_k A_k + |x|^2 / 2 in team scratch (S = 1/2 sum_k A_k^2, docs/math.md 2.1),
//   H = Q T Q^H by the team Householder reduction (linalg/householder_tridiagonal.hpp; one thread: on
//   the real and imaginary planes of H, linalg/householder_tridiagonal_split.hpp),
//   E_0, E_max and the degeneracy of E_0 from T (linalg::ground_state_eigenvalues: bisection, one
//   eigenvalue per thread or lane, or for one thread the fused kernel's Laguerre iteration and Sturm
//   count),
//   psi_0 = Q z_0 with z_0 from inverse iteration on T.
// A point with a non-finite entry of H is solved as the zero matrix and flagged (code 1, linalg::EighInfo's
// eigh_non_finite_input), as the fused path does; E_0 and E_max are then NaN.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstddef>

#include "qgml/common/kokkos_compat.hpp"
#include "qgml/common/types.hpp"
#include "qgml/ground_state/tridiagonal_ground_state.hpp"
#include "qgml/linalg/householder_tridiagonal.hpp"
#include "qgml/linalg/householder_tridiagonal_split.hpp"
#include "qgml/linalg/lanes.hpp"
#include "qgml/linalg/loops.hpp"

namespace qgml::detail {

// Reals of the head of a team's scratch that team_ground_state uses (TeamGroundStateScratch): 2 N^2 (H)
// + 4 N (tau, p) + 3 N (T, z_0).
KOKKOS_INLINE_FUNCTION constexpr std::size_t team_ground_state_head_reals(int n) {
  return 2 * std::size_t(n) * n + 7 * std::size_t(n);
}

// That head: H (complex N x N), tau and p (complex N), T (td, te) and z_0, at the start of `base`; `rest`
// is the first Real after them.
template <class Real, class ScratchSpace>
struct TeamGroundStateScratch {
  using complex_type = complex_t<Real>;
  Kokkos::View<complex_type**, Kokkos::LayoutRight, ScratchSpace, Kokkos::MemoryUnmanaged> h;
  complex_type* tau;
  complex_type* p;
  Real* td;
  Real* te;
  Real* z0;
  Real* rest;

  KOKKOS_INLINE_FUNCTION static constexpr std::size_t reals(int n) { return team_ground_state_head_reals(n); }
  KOKKOS_INLINE_FUNCTION TeamGroundStateScratch(Real* base, int n)
      : h(reinterpret_cast<complex_type*>(base), n, n),
        tau(reinterpret_cast<complex_type*>(base + 2 * n * n)),
        p(tau + n),
        td(base + 2 * n * n + 4 * n),
        te(td + n),
        z0(te + n),
        rest(z0 + n) {}
};

// The reduced H in the scratch of h as team_ground_state leaves it for Loops: SerialLoops on split planes
// (real parts, then imaginary parts, in the same 2 N^2 Reals), the other mappings the complex view h.
// apply_householder_q takes either.
template <class Loops, class HView>
KOKKOS_INLINE_FUNCTION auto team_reduced_matrix(const HView& h) {
  using real_type = typename HView::value_type::value_type;
  if constexpr (Loops::is_serial) {
    const int n = static_cast<int>(h.extent(0));
    real_type* const re = reinterpret_cast<real_type*>(h.data());
    return linalg::SplitMatrix<real_type>{re, re + std::size_t(n) * n, n, n};
  } else {
    return h;
  }
}

// Shared scalars team_ground_state uses at the head of its `shared` array: E_0, degenerate, E_max
// (linalg::ground_state_eigenvalues' out).
inline constexpr int team_ground_state_shared = 3;

template <class Real>
struct TeamGroundState {
  int code = 0;  // 0, or 1: H(x) not finite (E_0, E_max NaN)
  Real e0 = 0, emax = 0;
  bool degenerate = false;  // E_1 - E_0 <= tol max(E_max - E_0, 1) (ground_state/degeneracy.hpp)
};

// Scratch, all of the team: h (N x N complex view), tau and p (N complex), td and te (T), z0, vec_d and
// vec_l (N each, inverse iteration's factors, kept for later resolvent solves), xs (D: x), shared
// (team_ground_state_shared scalars). psi_0 is written to (psr, psi). Ends with a barrier.
// lowest_only: E_0 alone by Laguerre's iteration (ground_state/tridiagonal_lowest_eigenvalue.hpp), E_max its
// Gershgorin bound, degenerate false (the energy of the samplers); otherwise E_0, E_max and the
// degeneracy at tolerance tol as linalg::ground_state_eigenvalues.
template <class Real, class Loops, class AView, class SView, class XView, class HView>
KOKKOS_INLINE_FUNCTION TeamGroundState<Real> team_ground_state(const Loops& loops, const AView& a, const SView& sq,
                                                               const XView& x, const int t, const HView& h,
                                                               complex_t<Real>* tau, complex_t<Real>* p, Real* td,
                                                               Real* te, Real* z0, Real* vec_d, Real* vec_l, Real* xs,
                                                               Real* shared, Real* psr, Real* psi, const Real tol,
                                                               const bool lowest_only = false) {
  using complex_type = complex_t<Real>;
  const int d = static_cast<int>(a.extent(0));
  const int n = static_cast<int>(a.extent(1));
  loops.for_each(0, d, [&](const int k) { xs[k] = Real(x(t, k)); });
  loops.barrier();
  Real x2 = 0;
  for (int k = 0; k < d; ++k) x2 += xs[k] * xs[k];
  // H(i, j) = (S(i, j) - x_0 A_0(i, j)) - x_1 A_1(i, j) - ..., then + |x|^2 / 2 on the diagonal: the same
  // operations in both mappings; not_finite counts the entries with a non-finite part.
  int not_finite = 0;
  if constexpr (Loops::is_serial) {
    // Into the split planes of team_reduced_matrix.
    const auto hs = team_reduced_matrix<Loops>(h);
    for (int i = 0; i < n; ++i) {
      Real* const hr = hs.row_re(i);
      Real* const hi = hs.row_im(i);
      const Real* const srow = reinterpret_cast<const Real*>(&sq(i, 0));
      QGML_LANES(j, n) {
        hr[j] = srow[2 * j];
        hi[j] = srow[2 * j + 1];
      }
      for (int k = 0; k < d; ++k) {
        const Real* const arow = reinterpret_cast<const Real*>(&a(k, i, 0));
        const Real xk = xs[k];
        QGML_LANES(j, n) {
          hr[j] -= xk * arow[2 * j];
          hi[j] -= xk * arow[2 * j + 1];
        }
      }
      hr[i] += Real(0.5) * x2;
      for (int j = 0; j < n; ++j) not_finite += (hr[j] - hr[j] == Real(0) && hi[j] - hi[j] == Real(0)) ? 0 : 1;
    }
  } else {
    not_finite = loops.template sum<int>(0, n * n, [&](const int ij) {
      const int i = ij / n, j = ij % n;
      Real hr = sq(i, j).real(), hi = sq(i, j).imag();
      for (int k = 0; k < d; ++k) {
        hr -= xs[k] * a(k, i, j).real();
        hi -= xs[k] * a(k, i, j).imag();
      }
      if (i == j) hr += Real(0.5) * x2;
      h(i, j) = complex_type(hr, hi);
      return int(!(hr - hr == Real(0))) + int(!(hi - hi == Real(0)));
    });
  }
  const bool finite = not_finite == 0;
  if (!finite) {
    loops.barrier();
    loops.for_each(0, n * n, [&](const int ij) { h(ij / n, ij % n) = complex_type(0); });
  }
  loops.barrier();

  if constexpr (Loops::is_serial) {
    Real* const pr = reinterpret_cast<Real*>(p);
    linalg::hermitian_tridiagonalize(team_reduced_matrix<Loops>(h), tau, pr, pr + n, td, te);
  } else {
    linalg::hermitian_tridiagonalize(loops, h, tau, p, td, te);
  }
  linalg::ground_state_eigenvalues(loops, loops.team_size(), n, td, te, tol, shared, lowest_only);
  TeamGroundState<Real> out;
  const Real nan = math::sqrt(Real(-1));
  out.code = finite ? 0 : 1;
  out.e0 = out.code ? nan : shared[0];
  out.emax = out.code ? nan : shared[2];
  out.degenerate = out.code == 0 && shared[1] != Real(0);
  loops.barrier();  // every thread has read the shared scalars
  const Real e0 = out.e0, emax = out.emax;
  loops.single([&]() { linalg::packed_ground_vector<1>(n, td, te, &e0, &emax, vec_d, vec_l, z0); });
  loops.barrier();
  loops.for_each(0, n, [&](const int i) {
    psr[i] = z0[i];
    psi[i] = Real(0);
  });
  loops.barrier();
  linalg::apply_householder_q(loops, team_reduced_matrix<Loops>(h), tau, psr, psi, false);
  return out;
}

}  // namespace qgml::detail
