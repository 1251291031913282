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

// Laguerre's iteration on P problems of W lanes at once: problem k is the tridiagonal (sign[k] td, te),
// sign[k] = 1 or -1 (T or -T), its results at e0[k * W + q], emax_bound[k * W + q]. The P recurrences are
// independent, so the divisions of one overlap those of the others: a pivot recurrence is a chain of n
// divisions (each waits for the last), and one chain leaves the divider idle most of its latency. Each
// lane's arithmetic is that of P = 1 (a lane that has converged keeps its iterate while the others
// continue), so the results are the same bits. Returns the most iterations over all lanes.
template <int W, int P, class Real>
KOKKOS_INLINE_FUNCTION int packed_lowest_eigenvalues(const int n, const Real* td, const Real* te, const Real* sign,
                                                     Real* e0, Real* emax_bound) {
  constexpr Real eps = epsilon<Real>();
  Real lo[P][W], hi[P][W], s[P][W], tol[P][W], pivmin[P][W];
  Real done[P][W];
  for (int k = 0; k < P; ++k) QGML_LANES(q, W) {
      const Real d0 = sign[k] * td[q];
      lo[k][q] = d0;
      hi[k][q] = d0;
      s[k][q] = d0;  // min_i d_i: a Rayleigh quotient, so >= E_0
      pivmin[k][q] = Real(0);
    }
  for (int i = 0; i < n; ++i) {
    const Real* d = td + i * W;
    for (int k = 0; k < P; ++k) QGML_LANES(q, W) {
        const Real left = i > 0 ? math::fabs(te[(i - 1) * W + q]) : Real(0);
        const Real right = i + 1 < n ? math::fabs(te[i * W + q]) : Real(0);
        const Real di = sign[k] * d[q];
        const Real low = di - left - right, high = di + left + right;
        lo[k][q] = low < lo[k][q] ? low : lo[k][q];
        hi[k][q] = high > hi[k][q] ? high : hi[k][q];
        s[k][q] = di < s[k][q] ? di : s[k][q];
        pivmin[k][q] = right * right > pivmin[k][q] ? right * right : pivmin[k][q];
      }
  }
  for (int k = 0; k < P; ++k) QGML_LANES(q, W) {
      const Real norm = math::fabs(lo[k][q]) > math::fabs(hi[k][q]) ? math::fabs(lo[k][q]) : math::fabs(hi[k][q]);
      pivmin[k][q] = sturm_pivmin(pivmin[k][q]);
      const Real pad = Real(2) * eps * norm + Real(2) * pivmin[k][q];
      emax_bound[k * W + q] = hi[k][q];
      hi[k][q] = s[k][q] + pad;
      lo[k][q] -= pad;
      s[k][q] = lo[k][q];
      tol[k][q] = Real(4) * eps * norm + pivmin[k][q];
      done[k][q] = Real(0);
    }
  const Real degree = Real(n);
  int it = 0;
  while (it < lowest_eigenvalue_max_iterations<Real>) {
    ++it;
    // The pivots at s and the logarithmic derivatives G, H of p, lane by lane.
    Real r[P][W], dq[P][W], ddq[P][W], g[P][W], h[P][W];
    Real count[P][W];  // negative pivots (a Real: integer flags in these loops keep GCC from vectorising)
    for (int k = 0; k < P; ++k) QGML_LANES(q, W) {
        Real v = sign[k] * td[q] - s[k][q];
        v = math::fabs(v) < pivmin[k][q] ? -pivmin[k][q] : v;
        count[k][q] = v < Real(0) ? Real(1) : Real(0);
        r[k][q] = Real(1) / v;
        dq[k][q] = Real(-1);
        ddq[k][q] = Real(0);
        g[k][q] = -r[k][q];
        h[k][q] = r[k][q] * r[k][q];
      }
    for (int i = 1; i < n; ++i) {
      const Real* d = td + i * W;
      const Real* e = te + (i - 1) * W;
      for (int k = 0; k < P; ++k) QGML_LANES(q, W) {
          const Real e2 = e[q] * e[q];
          const Real e2r = e2 * r[k][q];
          const Real e2r2 = e2r * r[k][q];
          const Real dq1 = Real(-1) + e2r2 * dq[k][q];
          const Real ddq1 = e2r2 * (ddq[k][q] - Real(2) * dq[k][q] * dq[k][q] * r[k][q]);
          Real v = sign[k] * d[q] - s[k][q] - e2r;
          v = math::fabs(v) < pivmin[k][q] ? -pivmin[k][q] : v;
          count[k][q] += v < Real(0) ? Real(1) : Real(0);
          r[k][q] = Real(1) / v;
          const Real u = dq1 * r[k][q];
          g[k][q] += u;
          h[k][q] += u * u - ddq1 * r[k][q];
          dq[k][q] = dq1;
          ddq[k][q] = ddq1;
        }
    }
    Real root[P][W];
    for (int k = 0; k < P; ++k) {
      QGML_LANES(q, W) {
        const Real disc = (degree - Real(1)) * (degree * h[k][q] - g[k][q] * g[k][q]);
        root[k][q] = disc > Real(0) ? disc : Real(0);
      }
      packed_detail::sqrt_lanes<W>(root[k], root[k]);
    }
    for (int k = 0; k < P; ++k) QGML_LANES(q, W) {
        const Real gk = g[k][q], sk = s[k][q], tk = tol[k][q], ck = count[k][q];
        const Real step = degree / (gk + (gk < Real(0) ? -root[k][q] : root[k][q]));
        const Real laguerre = sk - step;
        const bool below = ck == Real(0);
        const Real newlo = below ? sk : lo[k][q];
        const Real newhi = below ? hi[k][q] : sk;
        const bool inside = (laguerre > newlo) & (laguerre < newhi);
        // Ends of a lane: (a) below E_0, a Laguerre step under tol (the step is at least (E_0 - s) / n, so
        // E_0 - s <= n tol before it; cubic after it); (b) |G| >= 1 / tol: some eigenvalue lies within
        // n / |G| <= n tol of s (|G| <= n / min_j |s - E_j|), and it is E_0 when none is below s, or when
        // only E_0 is and G > 0 (then s - 1 / G is below E_0 and closer: G < 1 / (s - E_0)); this catches
        // the iterates that rounding puts at E_0, where the computed step is noise (or H overflows);
        // (c) a bracket under 2 tol. Otherwise a step inside the bracket is taken, else bisection.
        // The conditions combine with & and |, not && and ||: GCC 12 compiled the short-circuit forms to
        // per-lane branches and scalar divisions, and this block to scalar code.
        const bool near = !(math::fabs(gk) * tk < Real(1));
        const bool step_small = !(math::fabs(step) > tk);
        const bool end_below = below & (near | step_small);
        const bool end_above = (ck == Real(1)) & (gk > Real(0)) & near;
        const Real mid = Real(0.5) * (newlo + newhi);
        const Real back = sk - Real(1) / gk;
        Real next = inside ? laguerre : mid;
        next = end_below ? (inside ? laguerre : sk) : next;
        next = end_above ? (back > newlo ? back : newlo) : next;
        const bool converged = end_below | end_above | (newhi - newlo <= Real(2) * tk);
        const bool active = done[k][q] == Real(0);
        lo[k][q] = active ? newlo : lo[k][q];
        hi[k][q] = active ? newhi : hi[k][q];
        s[k][q] = active ? next : sk;
        done[k][q] = converged ? Real(1) : done[k][q];
      }
    bool all_done = true;
    for (int k = 0; k < P; ++k)
      for (int q = 0; q < W; ++q) all_done = all_done && done[k][q] != Real(0);
    if (all_done) break;
  }
  for (int k = 0; k < P; ++k) QGML_LANES(q, W) e0[k * W + q] = s[k][q];
  return it;
}

// e0[q] = E_0 of lane q, emax_bound[q] = the Gershgorin upper bound on its largest eigenvalue (>= E_max,
// for the spectral scale). Every lane must hold finite values (callers zero non-finite lanes); n >= 1.
// Deterministic: the same bits for the same T on every backend that rounds as IEEE double / float.
// Returns the number of iterations run (the largest over the lanes).
template <int W, class Real>
KOKKOS_INLINE_FUNCTION int packed_lowest_eigenvalue(const int n, const Real* td, const Real* te, Real* e0,
                                                    Real* emax_bound) {
  const Real sign[1] = {Real(1)};
  return packed_lowest_eigenvalues<W, 1>(n, td, te, sign, e0, emax_bound);
}

}  // namespace qgml::linalg
