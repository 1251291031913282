// The smallest eigenvalue E_0 of a real symmetric tridiagonal T (diagonal td, off-diagonal te, te[i]
// coupling i and i + 1) alone, for W lanes in lockstep (value i of lane q at i * W + q, the packed layout
// of hermitian_eigensolver_packed.hpp; W = 1 is one matrix), when the rest of the spectrum is not needed
// (the energy of the samplers, docs/math.md 10).
//
// Laguerre's iteration on the characteristic polynomial p(s) = det(T - s) = prod_i q_i, whose factors are
// the pivots of the LDL^T factorisation of T - s (the Sturm sequence):
//   q_0 = d_0 - s,  q_i = d_i - s - e_{i-1}^2 / q_{i-1},
// differentiated twice in s along the recurrence, so that
//   G = p'/p = sum_j 1 / (s - E_j) = sum_i q_i' / q_i,
//   H = -G'  = sum_j 1 / (s - E_j)^2 = sum_i ((q_i' / q_i)^2 - q_i'' / q_i),
//   s <- s - n / (G - sqrt((n - 1) (n H - G^2))).
// p has only real roots, so from any s below E_0 the iterates increase monotonically to E_0, cubically
// for a simple E_0 (Wilkinson, The Algebraic Eigenvalue Problem, 7.9; Kahan's proof of global
// convergence). It starts at the Gershgorin lower bound: about 3 to 6 iterations of n divisions each,
// against the ~2 n rotations (each with a square root and a division) per eigenvalue of QL, which
// computes all n eigenvalues.
//
// Safeguard: the number of negative pivots is the number of eigenvalues below s. Each lane keeps a
// bracket [lo, hi] with no eigenvalue below lo and at least one below hi (Gershgorin bound and min_i d_i
// to start), shrunk at every iterate; a Laguerre step that leaves it is replaced by bisection. Rounding
// near E_0 can put an iterate just above E_0 (by ~eps ||T||): the Laguerre step from there (the sign of
// the square root following G) steps back. Accuracy: E_0 to about eps ||T||, as QL (the step that
// ends the iteration is below 4 eps ||T||, and the error after it is of the order of its cube).
#pragma once

#include <Kokkos_Core.hpp>

#include "qgml/common/kokkos_compat.hpp"
#include "qgml/common/types.hpp"
#include "qgml/linalg/hermitian_eigensolver_packed.hpp"
#include "qgml/linalg/lanes.hpp"

namespace qgml::linalg {

// The smallest pivot magnitude of a Sturm count on T, from the largest squared off-diagonal element
// (LAPACK dstebz's pivmin): keeps the recurrence q_i = d_i - s - e_{i-1}^2 / q_{i-1} finite.
template <class Real>
KOKKOS_INLINE_FUNCTION Real sturm_pivmin(const Real max_offdiagonal2) {
  return Real(4) * min_normal<Real>() * (max_offdiagonal2 > Real(1) ? max_offdiagonal2 : Real(1));
}

// Upper bound on the iterations of a lane: enough for a bisection of the Gershgorin interval to
// eps ||T|| even where every Laguerre step were rejected; typical is 3 to 6.
template <class Real>
inline constexpr int lowest_eigenvalue_max_iterations = 2 * int(sizeof(Real)) * 8 + 16;

// e0[q] = E_0 of lane q, emax_bound[q] = the Gershgorin upper bound on its largest eigenvalue (>= E_max,
// for the spectral scale). Every lane must hold finite values (callers zero non-finite lanes); n >= 1.
// Deterministic: the same bits for the same T on every backend that rounds as IEEE double / float.
// Returns the number of iterations run (the largest over the lanes).
template <int W, class Real>
KOKKOS_INLINE_FUNCTION int packed_lowest_eigenvalue(const int n, const Real* td, const Real* te, Real* e0,
                                                    Real* emax_bound) {
  constexpr Real eps = epsilon<Real>();
  Real lo[W], hi[W], s[W], tol[W], pivmin[W];
  Real done[W];
  QGML_LANES(q, W) {
    lo[q] = td[q];
    hi[q] = td[q];
    s[q] = td[q];  // min_i d_i: a Rayleigh quotient, so >= E_0
    pivmin[q] = Real(0);
  }
  for (int i = 0; i < n; ++i) {
    const Real* d = td + i * W;
    QGML_LANES(q, W) {
      const Real left = i > 0 ? math::fabs(te[(i - 1) * W + q]) : Real(0);
      const Real right = i + 1 < n ? math::fabs(te[i * W + q]) : Real(0);
      const Real low = d[q] - left - right, high = d[q] + left + right;
      lo[q] = low < lo[q] ? low : lo[q];
      hi[q] = high > hi[q] ? high : hi[q];
      s[q] = d[q] < s[q] ? d[q] : s[q];
      pivmin[q] = right * right > pivmin[q] ? right * right : pivmin[q];
    }
  }
  QGML_LANES(q, W) {
    const Real norm = math::fabs(lo[q]) > math::fabs(hi[q]) ? math::fabs(lo[q]) : math::fabs(hi[q]);
    pivmin[q] = sturm_pivmin(pivmin[q]);
    const Real pad = Real(2) * eps * norm + Real(2) * pivmin[q];
    emax_bound[q] = hi[q];
    hi[q] = s[q] + pad;
    lo[q] -= pad;
    s[q] = lo[q];
    tol[q] = Real(4) * eps * norm + pivmin[q];
    done[q] = Real(0);
  }
  const Real degree = Real(n);
  int it = 0;
  while (it < lowest_eigenvalue_max_iterations<Real>) {
    ++it;
    // The pivots at s and the logarithmic derivatives G, H of p, lane by lane.
    Real r[W], dq[W], ddq[W], g[W], h[W];
    Real count[W];  // negative pivots (a Real: integer flags in these loops keep GCC from vectorising)
    QGML_LANES(q, W) {
      Real v = td[q] - s[q];
      v = math::fabs(v) < pivmin[q] ? -pivmin[q] : v;
      count[q] = v < Real(0) ? Real(1) : Real(0);
      r[q] = Real(1) / v;
      dq[q] = Real(-1);
      ddq[q] = Real(0);
      g[q] = -r[q];
      h[q] = r[q] * r[q];
    }
    for (int i = 1; i < n; ++i) {
      const Real* d = td + i * W;
      const Real* e = te + (i - 1) * W;
      QGML_LANES(q, W) {
        const Real e2 = e[q] * e[q];
        const Real e2r = e2 * r[q];
        const Real e2r2 = e2r * r[q];
        const Real dq1 = Real(-1) + e2r2 * dq[q];
        const Real ddq1 = e2r2 * (ddq[q] - Real(2) * dq[q] * dq[q] * r[q]);
        Real v = d[q] - s[q] - e2r;
        v = math::fabs(v) < pivmin[q] ? -pivmin[q] : v;
        count[q] += v < Real(0) ? Real(1) : Real(0);
        r[q] = Real(1) / v;
        const Real u = dq1 * r[q];
        g[q] += u;
        h[q] += u * u - ddq1 * r[q];
        dq[q] = dq1;
        ddq[q] = ddq1;
      }
    }
    Real root[W];
    QGML_LANES(q, W) {
      const Real disc = (degree - Real(1)) * (degree * h[q] - g[q] * g[q]);
      root[q] = disc > Real(0) ? disc : Real(0);
    }
    packed_detail::sqrt_lanes<W>(root, root);
    QGML_LANES(q, W) {
      const Real step = degree / (g[q] + (g[q] < Real(0) ? -root[q] : root[q]));
      const Real laguerre = s[q] - step;
      const bool below = count[q] == Real(0);
      const Real newlo = below ? s[q] : lo[q];
      const Real newhi = below ? hi[q] : s[q];
      const bool inside = (laguerre > newlo) && (laguerre < newhi);
      // Ends of a lane: (a) below E_0, a Laguerre step under tol (the step is at least (E_0 - s) / n, so
      // E_0 - s <= n tol before it; cubic after it); (b) |G| >= 1 / tol: some eigenvalue lies within
      // n / |G| <= n tol of s (|G| <= n / min_j |s - E_j|), and it is E_0 when none is below s, or when
      // only E_0 is and G > 0 (then s - 1 / G is below E_0 and closer: G < 1 / (s - E_0)); this catches
      // the iterates that rounding puts at E_0, where the computed step is noise (or H overflows);
      // (c) a bracket under 2 tol. Otherwise a step inside the bracket is taken, else bisection.
      const bool near = !(math::fabs(g[q]) * tol[q] < Real(1));
      const bool step_small = !(math::fabs(step) > tol[q]);
      const bool end_below = below && (near || step_small);
      const bool end_above = count[q] == Real(1) && g[q] > Real(0) && near;
      const Real mid = Real(0.5) * (newlo + newhi);
      const Real back = s[q] - Real(1) / g[q];
      Real next = inside ? laguerre : mid;
      next = end_below ? (inside ? laguerre : s[q]) : next;
      next = end_above ? (back > newlo ? back : newlo) : next;
      const bool converged = end_below || end_above || newhi - newlo <= Real(2) * tol[q];
      const bool active = done[q] == Real(0);
      lo[q] = active ? newlo : lo[q];
      hi[q] = active ? newhi : hi[q];
      s[q] = active ? next : s[q];
      done[q] = converged ? Real(1) : done[q];
    }
    bool all_done = true;
    for (int q = 0; q < W; ++q) all_done = all_done && done[q] != Real(0);
    if (all_done) break;
  }
  QGML_LANES(q, W) e0[q] = s[q];
  return it;
}

}  // namespace qgml::linalg
