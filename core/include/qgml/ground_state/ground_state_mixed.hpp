// The ground state and the reduced-resolvent solve of the fused training kernel in double precision from
// a Householder reduction in single precision (perf/NOTES.md, "The reduction in single precision, the
// ground state refined in double"). The reduction to tridiagonal form, (16/3) N^3 real flops per point
// against O(N^2) for everything after it, bounds the epoch from N = 64; in float a 512-bit vector holds
// 16 lanes instead of 8, and the reduction of a pack of 16 matrices takes the time of a pack of 8 in
// double.//
// For two packs of W = 8 points (halves A and B of one float pack of 16 lanes):
//  1. H(x) in double (ground_state/ground_state_packed.hpp), kept; its float copy reduced, H + E = Q T Q^H with
//     ||E|| ~ n eps_f ||H||; E_0, E_max and the degeneracy test of T (tolerance mixed_gap_tolerance);
//     psi_f = Q z_0 (all in float, the packed code with W = 16).
//  2. psi refined in double by Newton steps on the eigenproblem: theta = <v|H v>, r = H v - theta v,
//     v <- v - P (M r) normalised, with P = 1 - |v><v| and M = Q R_T Q^H the float reduced resolvent
//     (linalg::packed_reduced_resolvent on T, Q from a contiguous copy of the reflectors). Each step
//     shrinks the error by ~||E|| / (E_1 - E_0): two steps, more (at most four) while a residual is above
//     the tolerance.
//  3. phi = R s by iterative refinement of (H - E_0) phi = P s on the complement of psi: phi = P M P s,
//     then phi += P M P (s - (H - E_0) phi), with the same step counts.
// Every step's residual is formed in double from the double H, so psi, E_0 and phi are double-accurate
// (the tests compare with the double path to 1e-12) while the O(N^3) work is in float.
//
// Certificates, per point: the float spectrum has E_1 - E_0 > mixed_gap_tolerance * scale (scale =
// max(E_max - E_0, 1)), far above its error ~n eps_f ||H||, so the eigenvalue refined is E_0 and the point
// is not degenerate (the double path's tolerance is 1e-8 * scale); after the steps, ||H psi - E_0 psi|| <=
// mixed_residual_tolerance * scale and the resolvent's residual <= mixed_residual_tolerance ||P s||. A
// half with a point that fails any of these, or with a non-finite H, is solved by the double path
// instead (the caller's fallback), so the mixed path never changes what a point's result means. The
// double path's regulariser eta (docs/math.md 4.7; 1e-8 * scale by default) multiplies each term of R by
// 1 / (1 + eta^2 / (E_n - E_0)^2): below 1e-10 relative for gaps above mixed_regularised_gap * scale,
// applied to first order below it (mixed_reduced_resolvent).
#pragma once

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>

#include "qgml/common/types.hpp"
#include "qgml/ground_state/degeneracy.hpp"
#include "qgml/ground_state/ground_state_packed.hpp"
#include "qgml/ground_state/mixed_ground_state_arrays.hpp"
#include "qgml/ground_state/packed_vector_operations.hpp"
#include "qgml/ground_state/tridiagonal_ground_state.hpp"
#include "qgml/linalg/hermitian_eigensolver_packed.hpp"
#include "qgml/linalg/lanes.hpp"

namespace qgml::detail {

// x <- Q x (adjoint: Q^H x) for the float pack's Q = H_0 ... H_{n-2}, as packed_apply_q but from the
// reflectors' contiguous copy, the dot products in two partial sums.
KOKKOS_INLINE_FUNCTION void mixed_apply_q(const MixedGroundStateArrays& m, float* xr, float* xi, const bool adjoint) {
  constexpr int W = mixed_float_width;
  const int n = m.n;
  for (int step = 0; step < n - 1; ++step) {
    const int k = adjoint ? step : n - 2 - step;
    const int b = k + 1, len = n - 1 - k;
    const std::size_t off = std::size_t(k) * (n - 1) - std::size_t(k) * (k - 1) / 2;
    const float* vr = m.qr + off * W;
    const float* vi = m.qi + off * W;
    float* x_r = xr + b * W;
    float* x_i = xi + b * W;
    float d0r[W], d0i[W], d1r[W], d1i[W];
    QGML_LANES(q, W) d0r[q] = d0i[q] = d1r[q] = d1i[q] = 0.0f;
    int i = 0;
    for (; i + 1 < len; i += 2) QGML_LANES(q, W) {
        d0r[q] += vr[i * W + q] * x_r[i * W + q] + vi[i * W + q] * x_i[i * W + q];
        d0i[q] += vr[i * W + q] * x_i[i * W + q] - vi[i * W + q] * x_r[i * W + q];
        d1r[q] += vr[(i + 1) * W + q] * x_r[(i + 1) * W + q] + vi[(i + 1) * W + q] * x_i[(i + 1) * W + q];
        d1i[q] += vr[(i + 1) * W + q] * x_i[(i + 1) * W + q] - vi[(i + 1) * W + q] * x_r[(i + 1) * W + q];
      }
    if (i < len) QGML_LANES(q, W) {
        d0r[q] += vr[i * W + q] * x_r[i * W + q] + vi[i * W + q] * x_i[i * W + q];
        d0i[q] += vr[i * W + q] * x_i[i * W + q] - vi[i * W + q] * x_r[i * W + q];
      }
    const float* tkr = m.pf.tr + k * W;
    const float* tki = m.pf.ti + k * W;
    const float sign = adjoint ? -1.0f : 1.0f;  // tau or conj(tau)
    QGML_LANES(q, W) {
      const float x = d0r[q] + d1r[q], y = d0i[q] + d1i[q], ti = sign * tki[q];
      d0r[q] = tkr[q] * x - ti * y;
      d0i[q] = tkr[q] * y + ti * x;
    }
    for (int j = 0; j < len; ++j) QGML_LANES(q, W) {
        x_r[j * W + q] -= d0r[q] * vr[j * W + q] - d0i[q] * vi[j * W + q];
        x_i[j * W + q] -= d0r[q] * vi[j * W + q] + d0i[q] * vr[j * W + q];
      }
  }
}

// The float reduced resolvent M = Q R_T Q^H applied to the double vectors of the halves in `halves`
// (bit 0: A in lanes 0-7, bit 1: B in lanes 8-15; a half not listed is zero there): (xr_h, xi_h) <- M x_h.
KOKKOS_INLINE_FUNCTION void mixed_apply_resolvent(const MixedGroundStateArrays& m, const int halves, double* xr_a,
                                                  double* xi_a, double* xr_b, double* xi_b) {
  constexpr int FW = mixed_float_width, HW = mixed_half_width;
  const int n = m.n;
  for (int i = 0; i < n; ++i) {
    float* vr = m.vr + i * FW;
    float* vi = m.vi + i * FW;
    QGML_LANES(q, HW) {
      vr[q] = (halves & 1) ? float(xr_a[i * HW + q]) : 0.0f;
      vi[q] = (halves & 1) ? float(xi_a[i * HW + q]) : 0.0f;
      vr[HW + q] = (halves & 2) ? float(xr_b[i * HW + q]) : 0.0f;
      vi[HW + q] = (halves & 2) ? float(xi_b[i * HW + q]) : 0.0f;
    }
  }
  float eta[FW];
  for (int q = 0; q < FW; ++q) eta[q] = 0.0f;  // the floor eps max(|E_0|, 1) of packed_reduced_resolvent
  mixed_apply_q(m, m.vr, m.vi, true);
  linalg::packed_reduced_resolvent<FW>(n, m.td, m.te, m.e0, eta, m.z0, m.fdr, m.fdi, m.flr, m.fli, m.vr, m.vi);
  mixed_apply_q(m, m.vr, m.vi, false);
  for (int i = 0; i < n; ++i) {
    const float* vr = m.vr + i * FW;
    const float* vi = m.vi + i * FW;
    if (halves & 1) QGML_LANES(q, HW) {
        xr_a[i * HW + q] = double(vr[q]);
        xi_a[i * HW + q] = double(vi[q]);
      }
    if (halves & 2) QGML_LANES(q, HW) {
        xr_b[i * HW + q] = double(vr[HW + q]);
        xi_b[i * HW + q] = double(vi[HW + q]);
      }
  }
}

// The ground states of points t0 .. t0 + 15 (below count): half A, lanes_a points from t0, and half B,
// lanes_b points from t0 + 8 (lanes_b = 0: none). H_A and H_B (lower triangles) go to (ha_r, ha_i) and
// (hb_r, hb_i) and stay there for mixed_reduced_resolvent. Out: x_k of A in xk_a and of B in m.xk_b; psi_0
// of A in (psr_a, psi_a) and of B in (m.psr_b, m.psi_b); per lane (A in 0-7, B in 8-15) code, E_0 (the
// double Rayleigh quotient) and E_max (float T's); fallback[h] = 1 where half h has a point for the
// double path (see the file's comment).
template <class AView, class SView, class XView>
KOKKOS_INLINE_FUNCTION void mixed_ground_state_pair(const AView& a, const SView& sq, const XView& x, const int t0,
                                                    const int lanes_a, const int lanes_b, double* ha_r, double* ha_i,
                                                    double* hb_r, double* hb_i, const MixedGroundStateArrays& m,
                                                    double* xk_a, double* psr_a, double* psi_a, int* code, double* e0,
                                                    double* emax, int* fallback) {
  constexpr int FW = mixed_float_width, HW = mixed_half_width;
  const int n = m.n;
  packed_build_hamiltonian<HW>(a, sq, x, t0, lanes_a, xk_a, ha_r, ha_i, code);
  packed_build_hamiltonian<HW>(a, sq, x, t0 + HW, lanes_b, m.xk_b, hb_r, hb_i, code + HW);
  // The float copy; a lane with an entry beyond mixed_float_range (whose squares the float reduction
  // could overflow) is zero there and goes to the double path.
  double big[FW];
  for (int q = 0; q < FW; ++q) big[q] = 0.0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j <= i; ++j) {
      const std::size_t e = std::size_t(i) * n + j;
      float* fr = m.pf.ar + e * FW;
      float* fi = m.pf.ai + e * FW;
      QGML_LANES(q, HW) {
        const double ar = ha_r[e * HW + q], ai = ha_i[e * HW + q], br = hb_r[e * HW + q], bi = hb_i[e * HW + q];
        fr[q] = float(ar);
        fi[q] = float(ai);
        fr[HW + q] = float(br);
        fi[HW + q] = float(bi);
        const double a = math::fabs(ar) > math::fabs(ai) ? math::fabs(ar) : math::fabs(ai);
        const double b = math::fabs(br) > math::fabs(bi) ? math::fabs(br) : math::fabs(bi);
        big[q] = a > big[q] ? a : big[q];
        big[HW + q] = b > big[HW + q] ? b : big[HW + q];
      }
    }
  bool in_range[FW];
  for (int q = 0; q < FW; ++q) {
    in_range[q] = big[q] <= mixed_float_range;
    if (!in_range[q])
      for (int i = 0; i < n; ++i)
        for (int j = 0; j <= i; ++j) m.pf.at(m.pf.ar, i, j)[q] = m.pf.at(m.pf.ai, i, j)[q] = 0.0f;
  }
  // --- Float: H + E = Q T Q^H, E_0, E_max, the gap test, z_0 and psi_f = Q z_0.
  linalg::packed_tridiagonalize<FW>(m.pf);
  for (int i = 0; i < n * FW; ++i) {
    m.td[i] = m.pf.d[i];
    m.te[i] = m.pf.e[i];
  }
  for (int k = 0, off = 0; k + 1 < n; off += n - 1 - k, ++k)
    for (int i = k + 1; i < n; ++i) {
      const float* ar = m.pf.at(m.pf.ar, i, k);
      const float* ai = m.pf.at(m.pf.ai, i, k);
      float* qr = m.qr + std::size_t(off + i - k - 1) * FW;
      float* qi = m.qi + std::size_t(off + i - k - 1) * FW;
      QGML_LANES(q, FW) {
        qr[q] = ar[q];
        qi[q] = ai[q];
      }
    }
  float narrow[FW];
  linalg::packed_ground_state_eigenvalues<FW>(n, m.td, m.te, float(mixed_gap_tolerance), m.e0, m.emax, narrow);
  {  // near[q] = 1 where T has two eigenvalues below E_0 + mixed_regularised_gap scale (one Sturm count)
    float x[FW], pivmin[FW], count[FW], v[FW];
    QGML_LANES(q, FW) {
      x[q] = m.e0[q] + float(mixed_regularised_gap) * spectral_scale(m.e0[q], m.emax[q]);
      pivmin[q] = 0.0f;
    }
    for (int i = 0; i + 1 < n; ++i) QGML_LANES(q, FW) {
        const float e2 = m.te[i * FW + q] * m.te[i * FW + q];
        pivmin[q] = e2 > pivmin[q] ? e2 : pivmin[q];
      }
    QGML_LANES(q, FW) {
      pivmin[q] = linalg::sturm_pivmin(pivmin[q]);
      v[q] = m.td[q] - x[q];
      v[q] = math::fabs(v[q]) < pivmin[q] ? -pivmin[q] : v[q];
      count[q] = v[q] < 0.0f ? 1.0f : 0.0f;
    }
    for (int i = 1; i < n; ++i) QGML_LANES(q, FW) {
        const float e = m.te[(i - 1) * FW + q];
        float u = m.td[i * FW + q] - x[q] - e * e / v[q];
        u = math::fabs(u) < pivmin[q] ? -pivmin[q] : u;
        count[q] += u < 0.0f ? 1.0f : 0.0f;
        v[q] = u;
      }
    QGML_LANES(q, FW) m.near[q] = count[q] >= 2.0f ? 1.0f : 0.0f;
  }
  linalg::packed_ground_vector<FW>(n, m.td, m.te, m.e0, m.emax, m.fdr, m.flr, m.z0);
  for (int j = 0; j < n * FW; ++j) {
    m.vr[j] = m.z0[j];
    m.vi[j] = 0.0f;
  }
  mixed_apply_q(m, m.vr, m.vi, false);

  // --- Double: psi from psi_f, two Newton steps, then E_0 and the residual.
  double* const pr[2] = {psr_a, m.psr_b};
  double* const pi[2] = {psi_a, m.psi_b};
  double* const hr[2] = {ha_r, hb_r};
  double* const hi[2] = {ha_i, hb_i};
  double* const rr[2] = {m.wr, m.ur};
  double* const ri[2] = {m.wi, m.ui};
  const int lanes[2] = {lanes_a, lanes_b};
  bool active[2][HW];
  for (int h = 0; h < 2; ++h) {
    for (int q = 0; q < HW; ++q)
      active[h][q] = q < lanes[h] && code[h * HW + q] == linalg::eigh_success && in_range[h * HW + q];
    for (int i = 0; i < n; ++i) QGML_LANES(q, HW) {
        pr[h][i * HW + q] = double(m.vr[i * FW + h * HW + q]);
        pi[h][i * HW + q] = double(m.vi[i * FW + h * HW + q]);
      }
  }
  // Newton steps (mixed_min_steps .. mixed_max_steps, until every active lane's residual is below the
  // tolerance): the step count depends on the data alone.
  double theta[2][HW], res[2][HW];
  for (int step = 0;; ++step) {
    bool converged = true;
    for (int h = 0; h < 2; ++h) {
      double nrm[HW], ci[HW];
      if (step == 0) {  // normalise psi_f in double
        packed_norm<HW>(n, pr[h], pi[h], nrm);
        for (int i = 0; i < n; ++i) QGML_LANES(q, HW) {
            pr[h][i * HW + q] /= nrm[q];
            pi[h][i * HW + q] /= nrm[q];
          }
      }
      packed_hermitian_matvec<HW>(n, hr[h], hi[h], pr[h], pi[h], rr[h], ri[h]);
      packed_inner<HW>(n, pr[h], pi[h], rr[h], ri[h], theta[h], ci);
      for (int i = 0; i < n; ++i) QGML_LANES(q, HW) {
          rr[h][i * HW + q] -= theta[h][q] * pr[h][i * HW + q];
          ri[h][i * HW + q] -= theta[h][q] * pi[h][i * HW + q];
        }
      packed_norm<HW>(n, rr[h], ri[h], res[h]);
      for (int q = 0; q < HW; ++q)
        if (active[h][q] &&
            !(res[h][q] <= mixed_residual_tolerance * spectral_scale(theta[h][q], double(m.emax[h * HW + q]))))
          converged = false;
    }
    if ((converged && step >= mixed_min_steps) || step == mixed_max_steps) break;
    mixed_apply_resolvent(m, lanes_b > 0 ? 3 : 1, m.wr, m.wi, m.ur, m.ui);
    for (int h = 0; h < 2; ++h) {
      packed_project_out<HW>(n, pr[h], pi[h], rr[h], ri[h]);
      for (int i = 0; i < n; ++i) QGML_LANES(q, HW) {
          rr[h][i * HW + q] = pr[h][i * HW + q] - rr[h][i * HW + q];
          ri[h][i * HW + q] = pi[h][i * HW + q] - ri[h][i * HW + q];
        }
      double nrm[HW];
      packed_norm<HW>(n, rr[h], ri[h], nrm);
      for (int i = 0; i < n; ++i)
        for (int q = 0; q < HW; ++q)
          if (active[h][q]) {
            pr[h][i * HW + q] = rr[h][i * HW + q] / nrm[q];
            pi[h][i * HW + q] = ri[h][i * HW + q] / nrm[q];
          }
    }
  }
  for (int h = 0; h < 2; ++h) {
    fallback[h] = 0;
    for (int q = 0; q < HW; ++q) {
      const int l = h * HW + q;
      e0[l] = theta[h][q];
      emax[l] = double(m.emax[l]);
      const double scale = spectral_scale(e0[l], emax[l]);
      const bool certified = narrow[l] == 0.0f && res[h][q] <= mixed_residual_tolerance * scale;
      if (q < lanes[h] && !(active[h][q] && certified)) fallback[h] = 1;
    }
  }
}

// phi = R s for half h (0: A, 1: B) of the last mixed_ground_state_pair: (fr, fi) <- R (sr, si), with
// (hr, hi) its H, (pr, pi) its psi_0 and e0 its E_0 (8 lanes). ok[q] = 0 where the final residual of
// (H - E_0) phi = P s exceeds mixed_residual_tolerance ||P s||. Where a lane's gap is below
// mixed_regularised_gap, the double path's regulariser eta (per lane) is applied to first order (lanes:
// the half's points; the steps stop when they have all converged):
// R_eta = (B^2 + eta^2)^{-1} B = R - eta^2 R^2 R + O(eta^4 / gap^4) with B = H - E_0 on the complement, the
// correction eta^2 R (R phi) by the float M (its 1e-5 relative error on a term below 1e-8 of phi). Uses
// m's work vectors.
KOKKOS_INLINE_FUNCTION void mixed_reduced_resolvent(const MixedGroundStateArrays& m, const int h, const double* hr,
                                                    const double* hi, const double* pr, const double* pi,
                                                    const double* e0, const double* eta, const double* sr,
                                                    const double* si, const int lanes, double* fr, double* fi,
                                                    int* ok) {
  constexpr int HW = mixed_half_width;
  const int n = m.n;
  double* const br = m.ur;  // P s
  double* const bi = m.ui;
  double* const wr = m.wr;
  double* const wi = m.wi;
  for (int i = 0; i < n * HW; ++i) {
    br[i] = sr[i];
    bi[i] = si[i];
  }
  packed_project_out<HW>(n, pr, pi, br, bi);
  for (int i = 0; i < n * HW; ++i) {
    fr[i] = br[i];
    fi[i] = bi[i];
  }
  double bn[HW];  // ||P s||, the scale of the residual test
  packed_norm<HW>(n, br, bi, bn);
  const int bit = h == 0 ? 1 : 2;
  mixed_apply_resolvent(m, bit, fr, fi, fr, fi);
  packed_project_out<HW>(n, pr, pi, fr, fi);
  for (int step = 0;; ++step) {
    packed_hermitian_matvec<HW>(n, hr, hi, fr, fi, wr, wi);
    for (int i = 0; i < n; ++i) QGML_LANES(q, HW) {
        wr[i * HW + q] = br[i * HW + q] - (wr[i * HW + q] - e0[q] * fr[i * HW + q]);
        wi[i * HW + q] = bi[i * HW + q] - (wi[i * HW + q] - e0[q] * fi[i * HW + q]);
      }
    packed_project_out<HW>(n, pr, pi, wr, wi);
    double res[HW];
    packed_norm<HW>(n, wr, wi, res);
    bool converged = true;
    for (int q = 0; q < HW; ++q) {
      ok[q] = res[q] <= mixed_residual_tolerance * bn[q] ? 1 : 0;
      if (q < lanes && !ok[q]) converged = false;
    }
    if ((converged && step >= mixed_min_steps) || step == mixed_max_steps) break;
    mixed_apply_resolvent(m, bit, wr, wi, wr, wi);
    packed_project_out<HW>(n, pr, pi, wr, wi);
    for (int i = 0; i < n * HW; ++i) {
      fr[i] += wr[i];
      fi[i] += wi[i];
    }
  }
  bool near = false;
  for (int q = 0; q < lanes; ++q) near = near || m.near[h * HW + q] != 0.0f;
  if (near) {  // w = R (R phi), phi -= eta^2 w in the near lanes
    for (int i = 0; i < n * HW; ++i) {
      wr[i] = fr[i];
      wi[i] = fi[i];
    }
    for (int pass = 0; pass < 2; ++pass) {
      mixed_apply_resolvent(m, bit, wr, wi, wr, wi);
      packed_project_out<HW>(n, pr, pi, wr, wi);
    }
    for (int i = 0; i < n; ++i)
      for (int q = 0; q < HW; ++q)
        if (m.near[h * HW + q] != 0.0f) {
          fr[i * HW + q] -= eta[q] * eta[q] * wr[i * HW + q];
          fi[i * HW + q] -= eta[q] * eta[q] * wi[i * HW + q];
        }
  }
}

}  // namespace qgml::detail
