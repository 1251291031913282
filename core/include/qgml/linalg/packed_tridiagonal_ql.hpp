// Step 3 of the packed eigensolver (hermitian_eigensolver_packed.hpp): the eigenvalues of the tridiagonal
// T of every lane by the implicit QL iteration, with vectors the rotations applied to Q^T's rows or to a
// real Z (from N = packed_real_z_min_n).
#pragma once

#include <Kokkos_Core.hpp>

#include "qgml/linalg/lanes.hpp"
#include "qgml/linalg/packed_eigh_arrays.hpp"

namespace qgml::linalg {

// The smallest N whose eigenvector rotations in packed_ql go to a real Z (see there). Below it the final
// product Z Q^T costs more than rotating real rows saves; from it on the real Z is faster, and the more so
// with N together with the contiguous v_k of packed_form_q (qgml_bench_eigh, one thread, double;
// perf/NOTES.md, "Eigenvectors from N = 24: v_k contiguous in Q's formation, QL's rotations on a real Z").
inline constexpr int packed_real_z_min_n = 24;

// Step 3: the eigenvalues of T into p.d (no particular order); with vectors, the rotations are applied to
// the rows of p.zr, p.zi (Q^T), or from N = packed_real_z_min_n to a real Z that multiplies Q^T at the
// end, after which p.zr, p.zi hold the eigenvectors (row j of the eigenvalue p.d[j]). failed[q] = 1
// for a lane whose QL did not converge.
template <int W, class Real>
KOKKOS_FUNCTION void packed_ql(const PackedEighArrays<W, Real>& p, int* failed, const bool vectors) {
  const int n = p.n;
  Real* const zr = p.zr;
  Real* const zi = p.zi;
  Real* const d = p.d;
  Real* const e = p.e;
  auto A = [&](Real* base, int i, int j) { return base + (i * n + j) * W; };
  // From N = packed_real_z_min_n the rotations go to a real Z = I (in p.ar, free after step 2) and the
  // eigenvectors are Z Q^T at the end (2 n^3 multiply-adds per lane against the ~4 n^2 n saved by
  // rotating real rows); below it the rows of Q^T are rotated directly.
  const bool real_z = vectors && n >= packed_real_z_min_n;
  Real* const zz = p.ar;
  if (real_z)
    for (int ij = 0; ij < n * n; ++ij) {
      const Real one = (ij % (n + 1) == 0) ? Real(1) : Real(0);
      QGML_LANES(q, W) p.ar[ij * W + q] = one;
    }

  // --- 3. Implicit QL on (d, e), lanes in lockstep on the eigenvalue index l.
  for (int q = 0; q < W; ++q) failed[q] = 0;
  for (int l = 0; l < n; ++l) {
    int iterations[W];
    for (int q = 0; q < W; ++q) iterations[q] = 0;
    for (;;) {
      // Deflation point of every lane: the first m >= l with a negligible e[m] (e[n - 1] = 0). The scan
      // always runs to n - 1 (an early exit when all lanes have found m stops GCC vectorising it).
      int m[W], found[W];
      QGML_LANES(q, W) {
        m[q] = n - 1;
        found[q] = 0;
      }
      for (int mm = l; mm < n - 1; ++mm) {
        const Real* d0 = d + mm * W;
        const Real* d1 = d0 + W;
        const Real* em = e + mm * W;
        QGML_LANES(q, W) {
          const Real dd = math::fabs(d0[q]) + math::fabs(d1[q]);
          const int small = (math::fabs(em[q]) + dd == dd) ? 1 : 0;
          const int take = small & (1 - found[q]);
          m[q] = take ? mm : m[q];
          found[q] |= small;
        }
      }
      int top = l;  // largest m of the lanes that sweep
      for (int q = 0; q < W; ++q) {
        if (failed[q]) m[q] = l;
        if (m[q] == l) continue;
        if (++iterations[q] > eigh_max_iterations_per_eigenvalue) {
          failed[q] = 1;
          m[q] = l;
          continue;
        }
        top = m[q] > top ? m[q] : top;
      }
      if (top == l) break;
      // Shift from the leading 2 x 2 block; the sweep state (s, c, p, g) of every lane. run: the lane
      // sweeps at l and has not deflated by underflow (r == 0) during this sweep.
      Real g[W], sh[W], s[W], c[W], pp[W], one[W];
      int run[W];
      const Real* dl = d + l * W;
      const Real* el = e + l * W;
      QGML_LANES(q, W) {
        run[q] = m[q] > l ? 1 : 0;
        const Real e0 = run[q] ? el[q] : Real(1);
        g[q] = run[q] ? (dl[q + W] - dl[q]) / (Real(2) * e0) : Real(0);
        one[q] = Real(1);
      }
      packed_detail::hypot_lanes<W>(g, one, sh);
      QGML_LANES(q, W) {
        const Real e0 = run[q] ? el[q] : Real(1);
        sh[q] = e0 / (g[q] + (g[q] >= Real(0) ? math::fabs(sh[q]) : -math::fabs(sh[q])));
        s[q] = c[q] = Real(1);
        pp[q] = g[q] = Real(0);
      }
      for (int i = top - 1; i >= l; --i) {
        Real f[W], gg[W], bb[W], r[W], cr[W], sr[W];
        int part[W], outside[W];
        Real* const di0 = d + i * W;
        Real* const di1 = di0 + W;
        Real* const ei0 = e + i * W;
        Real* const ei1 = ei0 + W;
        QGML_LANES(q, W) {
          part[q] = run[q] & int(i < m[q]);
          // start of this lane's sweep: g = d[m] - d[l] + e[l] / (g + sign(r, g))
          g[q] = (i + 1 == m[q]) ? (di1[q] - dl[q]) + sh[q] : g[q];
          const Real fq = s[q] * ei0[q];
          bb[q] = c[q] * ei0[q];
          f[q] = part[q] ? fq : Real(0);
          gg[q] = part[q] ? g[q] : Real(1);
        }
        QGML_LANES(q, W) {  // a separate loop: merged into the one above, GCC 12 does not vectorise it
          r[q] = f[q] * f[q] + gg[q] * gg[q];  // r = hypot(f, g) as detail::fast_hypot
          outside[q] = packed_detail::hypot_outside(r[q]);
        }
        packed_detail::sqrt_lanes<W>(r, r);
        if (packed_detail::any_lane<W>(outside)) packed_detail::fix_hypot<W>(outside, f, gg, r);
        QGML_LANES(q, W) {
          const int zero = r[q] == Real(0) ? 1 : 0;
          const int ok = part[q] & (1 - zero);
          const int brk = part[q] & zero;  // underflow: deflate, end this lane's sweep
          const Real inv = Real(1) / (ok ? r[q] : Real(1));
          const Real sn = f[q] * inv;
          const Real cn = gg[q] * inv;
          const Real d1 = di1[q];
          const Real g2 = d1 - pp[q];
          const Real r2 = (di0[q] - g2) * sn + Real(2) * cn * bb[q];
          const Real pn = sn * r2;
          const Real e1 = ei1[q];
          ei1[q] = part[q] ? r[q] : e1;
          const Real dnew = ok ? g2 + pn : g2;
          di1[q] = part[q] ? dnew : d1;
          g[q] = ok ? cn * r2 - bb[q] : g[q];
          s[q] = ok ? sn : s[q];
          c[q] = ok ? cn : c[q];
          pp[q] = ok ? pn : pp[q];
          cr[q] = ok ? cn : Real(1);
          sr[q] = ok ? sn : Real(0);
          run[q] = run[q] & (1 - brk);
        }
        if (!vectors) continue;
        if (real_z) {  // rows i, i + 1 of Z: two contiguous rows, all lanes (identity where c = 1, s = 0)
          Real* x0 = A(zz, i, 0);
          Real* x1 = A(zz, i + 1, 0);
          for (int col = 0; col < n; ++col) {
            QGML_LANES(q, W) {
              const Real f1 = x1[col * W + q], z0 = x0[col * W + q];
              x1[col * W + q] = sr[q] * z0 + cr[q] * f1;
              x0[col * W + q] = cr[q] * z0 - sr[q] * f1;
            }
          }
          continue;
        }
        // Rows i, i + 1 of Q^T: two contiguous rows, all lanes. At small N this loop overlaps with the
        // latency of the recurrence above, and rotating a real Z would not pay for Z Q^T.
        Real* x0r = A(zr, i, 0);
        Real* x0i = A(zi, i, 0);
        Real* x1r = A(zr, i + 1, 0);
        Real* x1i = A(zi, i + 1, 0);
        for (int col = 0; col < n; ++col) {
          QGML_LANES(q, W) {
            const Real fr = x1r[col * W + q], fi = x1i[col * W + q];
            const Real zr0 = x0r[col * W + q], zi0 = x0i[col * W + q];
            x1r[col * W + q] = sr[q] * zr0 + cr[q] * fr;
            x1i[col * W + q] = sr[q] * zi0 + cr[q] * fi;
            x0r[col * W + q] = cr[q] * zr0 - sr[q] * fr;
            x0i[col * W + q] = cr[q] * zi0 - sr[q] * fi;
          }
        }
      }
      // End of the sweep: d[l] -= p, e[l] = g for the lanes that finished it; e[m] = 0 for all that swept.
      Real* dlw = d + l * W;
      Real* elw = e + l * W;
      QGML_LANES(q, W) {
        dlw[q] = run[q] ? dlw[q] - pp[q] : dlw[q];
        elw[q] = run[q] ? g[q] : elw[q];
      }
      for (int q = 0; q < W; ++q)
        if (m[q] > l) e[m[q] * W + q] = Real(0);
    }
  }
  if (!real_z) return;
  // Rows of Q^T <- Z Q^T, column by column: column col of Q^T copied to p.pr, p.pi (free after step 1),
  // then (Z Q^T)(j, col) = sum_i Z(j, i) Q^T(i, col) over the contiguous row j of Z.
  for (int col = 0; col < n; ++col) {
    for (int i = 0; i < n; ++i) QGML_LANES(q, W) {
        p.pr[i * W + q] = A(zr, i, col)[q];
        p.pi[i * W + q] = A(zi, i, col)[q];
      }
    for (int j = 0; j < n; j += 2) {  // two rows of Z at a time: four independent sums
      const int j1 = j + 1 < n ? j + 1 : j;
      const Real* z0 = A(zz, j, 0);
      const Real* z1 = A(zz, j1, 0);
      Real r0[W], i0[W], r1[W], i1[W];
      QGML_LANES(q, W) r0[q] = i0[q] = r1[q] = i1[q] = Real(0);
      for (int i = 0; i < n; ++i) QGML_LANES(q, W) {
          const Real br = p.pr[i * W + q], bi = p.pi[i * W + q];
          r0[q] += z0[i * W + q] * br;
          i0[q] += z0[i * W + q] * bi;
          r1[q] += z1[i * W + q] * br;
          i1[q] += z1[i * W + q] * bi;
        }
      QGML_LANES(q, W) {
        A(zr, j1, col)[q] = r1[q];
        A(zi, j1, col)[q] = i1[q];
        A(zr, j, col)[q] = r0[q];
        A(zi, j, col)[q] = i0[q];
      }
    }
  }
}

}  // namespace qgml::linalg
