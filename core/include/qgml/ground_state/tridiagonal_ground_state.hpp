// The ground-state work on the real symmetric tridiagonal T = Q^H H Q (householder_tridiagonal.hpp) that
// the ground-state paths share (docs/math.md 4.6, 4.7; perf/NOTES.md "Fused loss and gradient on CPUs, and
// the ground-state path"): E_0, E_max and the degeneracy of E_0 by Laguerre's iteration and a Sturm count
// (the fused kernel), selected eigenvalues by bisection on Sturm counts (the team kernels), z_0 by inverse
// iteration, and the regularised reduced resolvent R_T = sum_{n != 0} f(E_n - E_0) z_n z_n^T applied by a
// complex tridiagonal solve.
// T is given by its diagonal td and off-diagonal te (te[i] couples i and i + 1).
//
// The inverse iteration and the resolvent are written for W lanes (value i of lane q at i * W + q: the
// packed layout of hermitian_eigensolver_packed.hpp); W = 1 is one point (the team paths).
#pragma once

#include <Kokkos_Core.hpp>

#include "qgml/common/kokkos_compat.hpp"
#include "qgml/common/types.hpp"
#include "qgml/ground_state/degeneracy.hpp"
#include "qgml/ground_state/tridiagonal_lowest_eigenvalue.hpp"
#include "qgml/linalg/hermitian_eigensolver_packed.hpp"
#include "qgml/linalg/lanes.hpp"

namespace qgml::linalg {

// Number of eigenvalues of T smaller than x (the negative pivots of the LDL^T factorisation of T - x,
// each pivot kept at least pivmin away from zero).
template <class Real>
KOKKOS_INLINE_FUNCTION int sturm_count(const int n, const Real* td, const Real* te, const Real x, const Real pivmin) {
  int count = 0;
  Real q = td[0] - x;
  for (int i = 0;;) {
    if (math::fabs(q) < pivmin) q = -pivmin;
    if (q < Real(0)) ++count;
    if (++i == n) break;
    q = td[i] - x - te[i - 1] * te[i - 1] / q;
  }
  return count;
}

// The k-th smallest eigenvalue of T (k = 0 .. n - 1) by bisection of its Gershgorin interval until the
// interval is a few ulps wide (absolute accuracy ~ eps ||T||, that of QL). Deterministic: a fixed
// sequence of midpoints for given T, so every thread and backend gets the same bits. NaN in T gives NaN.
template <class Real>
KOKKOS_INLINE_FUNCTION Real tridiagonal_eigenvalue(const int n, const Real* td, const Real* te, const int k) {
  constexpr Real eps = epsilon<Real>();
  Real lo = td[0], hi = td[0], emax2 = 0;
  bool finite = true;
  for (int i = 0; i < n; ++i) {
    const Real left = i > 0 ? math::fabs(te[i - 1]) : Real(0);
    const Real right = i + 1 < n ? math::fabs(te[i]) : Real(0);
    lo = td[i] - left - right < lo ? td[i] - left - right : lo;
    hi = td[i] + left + right > hi ? td[i] + left + right : hi;
    emax2 = right * right > emax2 ? right * right : emax2;
    finite = finite && math::isfinite(td[i]) && math::isfinite(right);
  }
  if (!finite) return math::sqrt(Real(-1));
  const Real norm = math::fabs(lo) > math::fabs(hi) ? math::fabs(lo) : math::fabs(hi);
  const Real pivmin = sturm_pivmin(emax2);
  const Real pad = Real(2) * eps * norm + Real(2) * pivmin;
  lo -= pad;
  hi += pad;
  const Real tol = Real(2) * eps * norm + pivmin;
  for (int it = 0; it < 2 * int(sizeof(Real)) * 8 + 16; ++it) {
    const Real mid = Real(0.5) * (lo + hi);
    if (hi - lo <= tol || mid <= lo || mid >= hi) break;
    if (sturm_count(n, td, te, mid, pivmin) > k)
      hi = mid;
    else
      lo = mid;
  }
  return Real(0.5) * (lo + hi);
}

// What the ground-state gradient needs of the spectrum of T, for W lanes, without the rest of it:
// E_0, E_max, and whether E_0 is degenerate, E_1 - E_0 <= tol max(E_max - E_0, 1) (ground_state/degeneracy.hpp).
//   E_0 by Laguerre's iteration on T, E_max = -(the lowest eigenvalue of -T) by the same iteration, both
//   in one loop (packed_lowest_eigenvalues with P = 2: the two pivot recurrences overlap), each to
//   ~eps ||T|| as QL's;
//   degenerate <=> E_1 <= E_0 + tol scale <=> at least two eigenvalues of T below E_0 + tol scale
//   (strictly: the Sturm count counts eigenvalues < x), one Sturm count of n divisions.
// Against QL's whole spectrum (~2 n rotations, each a square root and a division, per eigenvalue) this is
// 2 x (3 to 6) + 1 recurrences of n divisions. degenerate[q] is 1 or 0 (0 for n = 1). Every lane must
// hold finite values. Returns the largest number of Laguerre iterations.
template <int W, class Real>
KOKKOS_INLINE_FUNCTION int packed_ground_state_eigenvalues(const int n, const Real* td, const Real* te, const Real tol,
                                                           Real* e0, Real* emax, Real* degenerate) {
  Real lowest[2 * W], bound[2 * W];
  const Real sign[2] = {Real(1), Real(-1)};
  const int it = packed_lowest_eigenvalues<W, 2>(n, td, te, sign, lowest, bound);  // T and -T together
  Real* const top = lowest + W;
  QGML_LANES(q, W) e0[q] = lowest[q];
  Real x[W], pivmin[W], count[W], v[W];
  QGML_LANES(q, W) {
    emax[q] = -top[q];
    x[q] = e0[q] + tol * spectral_scale(e0[q], emax[q]);
    pivmin[q] = Real(0);
  }
  for (int i = 0; i + 1 < n; ++i) QGML_LANES(q, W) {
      const Real e2 = te[i * W + q] * te[i * W + q];
      pivmin[q] = e2 > pivmin[q] ? e2 : pivmin[q];
    }
  QGML_LANES(q, W) {
    pivmin[q] = sturm_pivmin(pivmin[q]);
    v[q] = td[q] - x[q];
    v[q] = math::fabs(v[q]) < pivmin[q] ? -pivmin[q] : v[q];
    count[q] = v[q] < Real(0) ? Real(1) : Real(0);
  }
  for (int i = 1; i < n; ++i) QGML_LANES(q, W) {
      const Real e = te[(i - 1) * W + q];
      Real u = td[i * W + q] - x[q] - e * e / v[q];
      u = math::fabs(u) < pivmin[q] ? -pivmin[q] : u;
      count[q] += u < Real(0) ? Real(1) : Real(0);
      v[q] = u;
    }
  QGML_LANES(q, W) degenerate[q] = (n > 1 && count[q] >= Real(2)) ? Real(1) : Real(0);
  return it;
}

// E_0, E_max and the degeneracy of E_0 (E_1 - E_0 <= tol max(E_max - E_0, 1), ground_state/degeneracy.hpp) of T:
// out[0] = E_0, out[1] = 1 if degenerate else 0, out[2] = E_max. Collective over loops. With teams of 2
// or more threads (GPUs), one bisection per eigenvalue E_0, E_1, E_max on its own thread
// (tridiagonal_eigenvalue); with one thread (CPUs), the fused kernel's arithmetic on one lane
// (packed_ground_state_eigenvalues: Laguerre's iteration for E_0 and E_max, one Sturm count for the
// degeneracy). Both give the eigenvalues to ~eps ||T||, and the same bits for the same team size. T must
// be finite.
// lowest_only (the samplers' energy): E_0 alone by Laguerre's iteration on one thread, out[2] = the
// Gershgorin upper bound on E_max (the spectral scale of the inverse iteration), out[1] = 0.
template <class Loops, class Real>
KOKKOS_FUNCTION void ground_state_eigenvalues(const Loops& loops, const int team_size, const int n, const Real* td,
                                              const Real* te, const Real tol, Real* out,
                                              const bool lowest_only = false) {
  if (lowest_only) {
    loops.single([&]() {
      packed_lowest_eigenvalue<1>(n, td, te, out, out + 2);
      out[1] = Real(0);
    });
  } else if (team_size >= 2) {
    loops.for_each(0, 3, [&](const int which) {
      const int index = which == 0 ? 0 : (which == 1 ? (n > 1 ? 1 : 0) : n - 1);
      out[which] = tridiagonal_eigenvalue(n, td, te, index);
    });
    loops.barrier();
    loops.single([&]() { out[1] = ground_state_degenerate(n, out[0], out[1], out[2], tol) ? Real(1) : Real(0); });
  } else {
    loops.single([&]() { packed_ground_state_eigenvalues<1>(n, td, te, tol, out, out + 2, out + 1); });
  }
  loops.barrier();
}

// z_0: the unit eigenvector of the tridiagonal T (diagonal td, off-diagonal te) for its smallest
// eigenvalue e0, by inverse iteration with the shift e0 - delta, delta = 64 eps max(E_max - E_0, 1), on
// T - e0 + delta (positive definite: LDL^T without pivoting). Each iteration shrinks the other
// components by delta / (E_n - E_0 + delta); four iterations. dd, ll: n reals per lane of work.
template <int W, class Real>
KOKKOS_INLINE_FUNCTION void packed_ground_vector(const int n, const Real* td, const Real* te, const Real* e0,
                                                 const Real* emax, Real* dd, Real* ll, Real* z) {
  constexpr Real eps = epsilon<Real>();
  Real shift[W], tiny[W];
  QGML_LANES(q, W) {
    const Real scale = spectral_scale(e0[q], emax[q]);
    shift[q] = e0[q] - Real(64) * eps * scale;
    tiny[q] = eps * eps * scale;
  }
  // T - shift = L D L^T; dd holds 1 / D_i, ll holds L_i (row i + 1, column i).
  for (int i = 0; i < n; ++i) {
    const Real* t = td + i * W;
    Real* di = dd + i * W;
    QGML_LANES(q, W) {
      Real dv = t[q] - shift[q];
      if (i > 0) dv -= ll[(i - 1) * W + q] * te[(i - 1) * W + q];
      dv = math::fabs(dv) < tiny[q] ? tiny[q] : dv;
      di[q] = Real(1) / dv;
      if (i + 1 < n) ll[i * W + q] = te[i * W + q] * di[q];
    }
  }
  for (int i = 0; i < n; ++i) {  // a start with components along every eigenvector of an unreduced T
    const Real v = Real(1) + Real(0.5) * Real(i % 7) / Real(7) - Real(0.25) * Real(i % 3);
    QGML_LANES(q, W) z[i * W + q] = v;
  }
  // z <- L^{-T} D^{-1} L^{-1} z, normalised. The running value of each substitution is carried in
  // locals: through z the compiler must assume it aliases ll, dd and keeps the recurrence in memory (a
  // store-to-load round trip per step, a measurable share of a sampler iteration: perf/NOTES.md,
  // "Measurements moved out of code comments (2026-12-03)"). The same operations in the same order as the
  // three separate sweeps, so the same bits.
  for (int it = 0; it < 4; ++it) {
    Real run[W];
    QGML_LANES(q, W) {
      run[q] = z[q];
      z[q] = run[q] * dd[q];
    }
    for (int i = 1; i < n; ++i) QGML_LANES(q, W) {
        run[q] = z[i * W + q] - ll[(i - 1) * W + q] * run[q];
        z[i * W + q] = run[q] * dd[i * W + q];
      }
    QGML_LANES(q, W) run[q] = z[(n - 1) * W + q];
    for (int i = n - 2; i >= 0; --i) QGML_LANES(q, W) {
        run[q] = z[i * W + q] - ll[i * W + q] * run[q];
        z[i * W + q] = run[q];
      }
    Real norm[W];
    QGML_LANES(q, W) norm[q] = Real(0);
    for (int i = 0; i < n; ++i) QGML_LANES(q, W) norm[q] += z[i * W + q] * z[i * W + q];
    packed_detail::sqrt_lanes<W>(norm, norm);
    QGML_LANES(q, W) norm[q] = Real(1) / norm[q];
    for (int i = 0; i < n; ++i) QGML_LANES(q, W) z[i * W + q] *= norm[q];
  }
}

// One step of a bidiagonal solve for two complex right-hand sides: (ur, ui) <- (ar, ai) - l (ur, ui) and
// (vr, vi) <- (br, bi) - l (vr, vi), l = (lr, li).
template <class Real>
KOKKOS_FORCEINLINE_FUNCTION void eliminate(const Real lr, const Real li, const Real ar, const Real ai, const Real br,
                                           const Real bi, Real& ur, Real& ui, Real& vr, Real& vi) {
  const Real nur = ar - (lr * ur - li * ui), nui = ai - (lr * ui + li * ur);
  const Real nvr = br - (lr * vr - li * vi), nvi = bi - (lr * vi + li * vr);
  ur = nur;
  ui = nui;
  vr = nvr;
  vi = nvi;
}

// (xr, xi) <- R_T (xr, xi) for the real operator R_T = sum_{n != 0} f(E_n - E_0) z_n z_n^T
// (docs/math.md 4.6, 4.7), f(g) = g / (g^2 + eta^2) = Re 1 / (g - i eta): Re (T - E_0 - i eta)^{-1} applied
// to the real and imaginary parts (complex LDL^T without pivoting: T - E_0 is positive semidefinite and the shift
// -i eta keeps every pivot away from zero). The computed E_0 is off by some rounding r, which would
// weigh z_0 with r / (r^2 + eta^2) (up to 1 / (2 eta)) instead of f(0) = 0, so the component along z_0
// is removed before and after the solve (either removal alone suffices; the tests fail without both).
// eta is at least eps max(|E_0|, 1). fdr, fdi, flr, fli: n reals per lane of work.
template <int W, class Real>
KOKKOS_INLINE_FUNCTION void packed_reduced_resolvent(const int n, const Real* td, const Real* te, const Real* e0,
                                                     const Real* eta, const Real* z0, Real* fdr, Real* fdi, Real* flr,
                                                     Real* fli, Real* xr, Real* xi) {
  auto project_out = [&]() {
    Real cr[W], ci[W];
    QGML_LANES(q, W) cr[q] = ci[q] = Real(0);
    for (int i = 0; i < n; ++i) QGML_LANES(q, W) {
        cr[q] += z0[i * W + q] * xr[i * W + q];
        ci[q] += z0[i * W + q] * xi[i * W + q];
      }
    for (int i = 0; i < n; ++i) QGML_LANES(q, W) {
        xr[i * W + q] -= cr[q] * z0[i * W + q];
        xi[i * W + q] -= ci[q] * z0[i * W + q];
      }
  };
  project_out();
  constexpr Real eps = epsilon<Real>();
  // T - E_0 - i eta = L D L^T (complex symmetric): fd = 1 / D_i, fl = L_i.
  for (int i = 0; i < n; ++i) {
    QGML_LANES(q, W) {
      const Real floor = eps * (math::fabs(e0[q]) > Real(1) ? math::fabs(e0[q]) : Real(1));
      Real dr = td[i * W + q] - e0[q];
      Real di = -(eta[q] > floor ? eta[q] : floor);
      if (i > 0) {
        const Real t = te[(i - 1) * W + q];
        dr -= flr[(i - 1) * W + q] * t;
        di -= fli[(i - 1) * W + q] * t;
      }
      const Real m2 = dr * dr + di * di;
      const Real ir = dr / m2, ii = -di / m2;
      fdr[i * W + q] = ir;
      fdi[i * W + q] = ii;
      if (i + 1 < n) {
        const Real t = te[i * W + q];
        flr[i * W + q] = t * ir;
        fli[i * W + q] = t * ii;
      }
    }
  }
  // Two real right-hand sides (xr and xi), complex solutions u and v, of which Re u and Re v are kept.
  // Forward L y = b, then z = D^{-1} y: Re z over x, Im z over fdr / fdi (1 / D_i is read just before).
  Real ur_prev[W], ui_prev[W], vr_prev[W], vi_prev[W];
  QGML_LANES(q, W) ur_prev[q] = ui_prev[q] = vr_prev[q] = vi_prev[q] = Real(0);
  for (int i = 0; i < n; ++i) {
    const int below = i > 0 ? i - 1 : 0;  // L_{i-1}; zero for i = 0 (the previous values are zero too)
    QGML_LANES(q, W) {
      const Real lr = i > 0 ? flr[below * W + q] : Real(0), li = i > 0 ? fli[below * W + q] : Real(0);
      eliminate(lr, li, xr[i * W + q], Real(0), xi[i * W + q], Real(0), ur_prev[q], ui_prev[q], vr_prev[q], vi_prev[q]);
    }
    QGML_LANES(q, W) {
      const Real dr = fdr[i * W + q], di = fdi[i * W + q];
      const Real wr = ur_prev[q] * dr - ui_prev[q] * di, wi = ur_prev[q] * di + ui_prev[q] * dr;
      const Real yr = vr_prev[q] * dr - vi_prev[q] * di, yi = vr_prev[q] * di + vi_prev[q] * dr;
      xr[i * W + q] = wr;
      xi[i * W + q] = yr;
      fdr[i * W + q] = wi;
      fdi[i * W + q] = yi;
    }
  }
  // Backward L^T u = z: u_i = z_i - L_i u_{i+1}.
  QGML_LANES(q, W) ur_prev[q] = ui_prev[q] = vr_prev[q] = vi_prev[q] = Real(0);
  for (int i = n - 1; i >= 0; --i) {
    QGML_LANES(q, W) {
      const Real lr = i + 1 < n ? flr[i * W + q] : Real(0), li = i + 1 < n ? fli[i * W + q] : Real(0);
      eliminate(lr, li, xr[i * W + q], fdr[i * W + q], xi[i * W + q], fdi[i * W + q], ur_prev[q], ui_prev[q],
                vr_prev[q], vi_prev[q]);
      xr[i * W + q] = ur_prev[q];  // Re u
      xi[i * W + q] = vr_prev[q];  // Re v
    }
  }
  project_out();
}

}  // namespace qgml::linalg
