// Step 1 of the packed eigensolver (hermitian_eigensolver_packed.hpp): the Householder reduction of a pack
// of W Hermitian matrices to real symmetric tridiagonal form, A = Q T Q^H, in lockstep over the lanes,
// with from n = packed_staggered_min_n the reflectors and p_k at staggered offsets of
// Q^T's storage.
#pragma once

#include <Kokkos_Core.hpp>

#include "qgml/linalg/lanes.hpp"
#include "qgml/linalg/packed_eigh_arrays.hpp"

namespace qgml::linalg {

// From n = packed_staggered_min_n, packed_tridiagonalize keeps p_k, p_{k + 1} and contiguous copies of
// v_k, v_{k + 1} in Q^T's storage (free until packed_form_q), each array at a chosen offset within a
// 4 KiB page. When n is a multiple of 32, a row of A (n W Reals, 64 n bytes) and every array of the
// scratch start at one or two offsets in a page, and the fused pass (householder_update_product) lost
// most of its time to two effects of that: the entries of a column of A fall into one or two sets of
// the 8-way L1 cache, so its four column reads missed L1 for every element; and a load whose address
// matches a store still in flight in bits 0-11 waits for it (4 KiB aliasing), which y(c) did after the
// stores of A(r, c). Offsets in elements (W Reals, 64 bytes) modulo 64: A's rows 0 or 32, p and y real
// 8 and imaginary 40, the copies 10, 44, 12, 42; no load of the pass then shares the page offset of a
// store made fewer than 16 elements before it. perf/NOTES.md, "4 KiB aliasing".
inline constexpr int packed_staggered_min_n = 32;

namespace packed_detail {

// Step k's reflector from column k below the diagonal (A(i, k), i >= b = k + 1, as updated by the
// steps before): H^H (alpha, x) = (beta, 0) with beta = -sign(Re alpha) |(alpha, x)|, tau = (beta -
// alpha) / beta, v = (1, x / (alpha - beta)); nothing to do (tau = 0, beta = alpha) when x = 0 and alpha
// is real. Stores tau_k (p.tr, p.ti), e_k = beta, d_k = A(k, k) and v_k in column k. Returns 1 if some
// lane has something to annihilate.
template <int W, class Real>
KOKKOS_FORCEINLINE_FUNCTION int householder_reflector(const PackedEighArrays<W, Real>& p, const int k) {
  const int n = p.n, b = k + 1;
  Real xn[W], alr[W], ali[W], nrm[W], s_r[W], s_i[W];
  QGML_LANES(q, W) {
    xn[q] = Real(0);
    alr[q] = p.at(p.ar, b, k)[q];
    ali[q] = p.at(p.ai, b, k)[q];
  }
  for (int i = b + 1; i < n; ++i) {
    const Real* xr = p.at(p.ar, i, k);
    const Real* xi = p.at(p.ai, i, k);
    QGML_LANES(q, W) xn[q] += xr[q] * xr[q] + xi[q] * xi[q];
  }
  QGML_LANES(q, W) nrm[q] = alr[q] * alr[q] + ali[q] * ali[q] + xn[q];
  sqrt_lanes<W>(nrm, nrm);
  int act[W];
  Real* const dk = p.d + k * W;
  Real* const ek = p.e + k * W;
  Real* const tkr = p.tr + k * W;
  Real* const tki = p.ti + k * W;
  const Real* const akk = p.at(p.ar, k, k);
  QGML_LANES(q, W) {
    const bool active = (xn[q] != Real(0)) | (ali[q] != Real(0));
    const Real beta = active ? (alr[q] >= Real(0) ? -nrm[q] : nrm[q]) : alr[q];
    const Real bsafe = active ? beta : Real(1);
    tkr[q] = active ? (beta - alr[q]) / bsafe : Real(0);
    tki[q] = active ? -ali[q] / bsafe : Real(0);
    const Real dr = alr[q] - beta;
    const Real den = active ? dr * dr + ali[q] * ali[q] : Real(1);
    s_r[q] = active ? dr / den : Real(0);  // 1 / (alpha - beta)
    s_i[q] = active ? -ali[q] / den : Real(0);
    ek[q] = beta;
    dk[q] = akk[q];
    act[q] = active ? 1 : 0;
  }
  {
    Real* vr = p.at(p.ar, b, k);
    Real* vi = p.at(p.ai, b, k);
    QGML_LANES(q, W) {
      vr[q] = Real(1);
      vi[q] = Real(0);
    }
  }
  for (int i = b + 1; i < n; ++i) {
    Real* vr = p.at(p.ar, i, k);
    Real* vi = p.at(p.ai, i, k);
    QGML_LANES(q, W) {
      const Real xr = vr[q], xi = vi[q];
      vr[q] = xr * s_r[q] - xi * s_i[q];
      vi[q] = xr * s_i[q] + xi * s_r[q];
    }
  }
  return any_lane<W>(act);
}

// With y = A_bb v on entry (b = k + 1, v = v_k, tau = tau_k): p <- tau y, then p <- p - 1/2 tau (p^H v) v,
// so that A_bb - v p^H - p v^H = H_k^H A_bb H_k.
template <int W, class Real>
KOKKOS_FORCEINLINE_FUNCTION void householder_finish_p(const PackedEighArrays<W, Real>& p, const int k, Real* pr,
                                                      Real* pi) {
  const int n = p.n, b = k + 1;
  const Real* const t_r = p.tr + k * W;
  const Real* const t_i = p.ti + k * W;
  for (int r = b; r < n; ++r) {
    Real* p_r = pr + r * W;
    Real* p_i = pi + r * W;
    QGML_LANES(q, W) {
      const Real sr = p_r[q], si = p_i[q];
      p_r[q] = t_r[q] * sr - t_i[q] * si;
      p_i[q] = t_r[q] * si + t_i[q] * sr;
    }
  }
  Real gr[W], gi[W];
  packed_conj_dot<W>(b, n, pr, pi, W, p.at(p.ar, 0, k), p.at(p.ai, 0, k), n * W, gr, gi);  // p^H v
  QGML_LANES(q, W) {
    const Real pvr = gr[q], pvi = gi[q];
    gr[q] = Real(-0.5) * (t_r[q] * pvr - t_i[q] * pvi);
    gi[q] = Real(-0.5) * (t_r[q] * pvi + t_i[q] * pvr);
  }
  for (int i = b; i < n; ++i) {
    const Real* vr = p.at(p.ar, i, k);
    const Real* vi = p.at(p.ai, i, k);
    Real* p_r = pr + i * W;
    Real* p_i = pi + i * W;
    QGML_LANES(q, W) {
      p_r[q] += gr[q] * vr[q] - gi[q] * vi[q];
      p_i[q] += gr[q] * vi[q] + gi[q] * vr[q];
    }
  }
}

// Column b = k + 1 of step k's rank-2 update, A(r, b) -= v(r) conj(p(b)) + p(r) conj(v(b)) for r >= b
// (v = v_k, p = p_k): what step k + 1's reflector reads.
template <int W, class Real>
KOKKOS_FORCEINLINE_FUNCTION void householder_update_column(const PackedEighArrays<W, Real>& p, const int k,
                                                           const Real* pr, const Real* pi) {
  const int n = p.n, b = k + 1;
  Real vcr[W], vci[W], pcr[W], pci[W];
  QGML_LANES(q, W) {
    vcr[q] = p.at(p.ar, b, k)[q];
    vci[q] = p.at(p.ai, b, k)[q];
    pcr[q] = pr[b * W + q];
    pci[q] = pi[b * W + q];
  }
  for (int r = b; r < n; ++r) {
    const Real* vrr = p.at(p.ar, r, k);
    const Real* vri = p.at(p.ai, r, k);
    const Real* prr = pr + r * W;
    const Real* pri = pi + r * W;
    Real* xr = p.at(p.ar, r, b);
    Real* xi = p.at(p.ai, r, b);
    QGML_LANES(q, W) {
      xr[q] -= vrr[q] * pcr[q] + vri[q] * pci[q] + prr[q] * vcr[q] + pri[q] * vci[q];
      xi[q] -= vri[q] * pcr[q] - vrr[q] * pci[q] + pri[q] * vcr[q] - prr[q] * vci[q];
    }
  }
}

// v_k (vr, vi) and v_{k + 1} (ur, ui) of householder_update_product, entry i at i * stride Reals.
template <class Real>
struct PackedReflectorColumns {
  const Real *vr, *vi, *ur, *ui;
  int stride;
};

// Array j (0 .. 7) of packed_staggered_min_n's layout, its entry 0 at `offset` elements into its region of
// 64 (ceil(n / 64) + 1) elements; 8 regions fit into Q^T's 2 n^2 elements for n >= 32.
template <int W, class Real>
KOKKOS_FORCEINLINE_FUNCTION Real* staggered_array(const PackedEighArrays<W, Real>& p, const int j, const int offset) {
  const int region = 64 * ((p.n + 63) / 64 + 1);
  return p.zr + (j * region + offset) * W;
}

// v_k and v_{k + 1} (columns k and k + 1 of A, rows k + 2 ..) for the pass of step k (k = -1: the
// prologue, v_0 only): copied into (vr, vi, ur, ui) when given, else read in place.
template <int W, class Real>
KOKKOS_FORCEINLINE_FUNCTION PackedReflectorColumns<Real> reflector_columns(const PackedEighArrays<W, Real>& p,
                                                                           const int k, Real* vr, Real* vi, Real* ur,
                                                                           Real* ui) {
  const int n = p.n, ku = k < 0 ? 0 : k, km = k + 1;
  if (!vr) return {p.at(p.ar, 0, ku), p.at(p.ai, 0, ku), p.at(p.ar, 0, km), p.at(p.ai, 0, km), n * W};
  for (int i = k + 2; i < n; ++i) QGML_LANES(q, W) {
      vr[i * W + q] = p.at(p.ar, i, ku)[q];
      vi[i * W + q] = p.at(p.ai, i, ku)[q];
      ur[i * W + q] = p.at(p.ar, i, km)[q];
      ui[i * W + q] = p.at(p.ai, i, km)[q];
    }
  return {vr, vi, ur, ui, W};
}

// One pass over the lower triangle of A(lo.., lo..), lo = k + 2, row by row; per element, first step k's
// rank-2 update A(r, c) -= v(r) conj(p(c)) + p(r) conj(v(c)) (Update; v = v_k, p = p_k), then the
// element's share of y = A_lo,lo u with u = v_{k + 1} (Matvec; into y, each element read once: A(r, c),
// c < r, adds A(r, c) u(c) to y(r) and conj(A(r, c)) u(r) to y(c); y(r) is complete after row r and the
// rows below it). Fusing the two halves the passes over the trailing matrix (one instead of two per
// step), with the same arithmetic per element as the update followed by the product.
template <bool Update, bool Matvec, int W, class Real>
KOKKOS_FORCEINLINE_FUNCTION void householder_update_product(const PackedEighArrays<W, Real>& p, const int k,
                                                            const PackedReflectorColumns<Real>& v, const Real* pr,
                                                            const Real* pi, Real* yr, Real* yi) {
  const int n = p.n, lo = k + 2;
  if (Matvec)
    for (int r = lo; r < n; ++r) QGML_LANES(q, W) yr[r * W + q] = yi[r * W + q] = Real(0);
  for (int r = lo; r < n; ++r) {
    // Row r's vectors in locals: read through pointers, the compiler reloads them after every store
    // to A (they might alias it).
    Real vrr[W], vri[W], prr[W], pri[W], urr[W], uri[W], rr[W], ii[W], ri[W], ir[W];
    Real* const arow = p.at(p.ar, r, 0);
    Real* const irow = p.at(p.ai, r, 0);
    QGML_LANES(q, W) {
      Real xr = arow[r * W + q], xi = irow[r * W + q];
      if (Update) {
        vrr[q] = v.vr[r * v.stride + q];
        vri[q] = v.vi[r * v.stride + q];
        prr[q] = pr[r * W + q];
        pri[q] = pi[r * W + q];
        xr -= vrr[q] * prr[q] + vri[q] * pri[q] + prr[q] * vrr[q] + pri[q] * vri[q];
        xi -= vri[q] * prr[q] - vrr[q] * pri[q] + pri[q] * vrr[q] - prr[q] * vri[q];
        arow[r * W + q] = xr;
        irow[r * W + q] = xi;
      }
      if (Matvec) {
        urr[q] = v.ur[r * v.stride + q];
        uri[q] = v.ui[r * v.stride + q];
        rr[q] = xr * urr[q];
        ii[q] = xi * uri[q];
        ri[q] = xr * uri[q];
        ir[q] = xi * urr[q];
      }
    }
    for (int c = lo; c < r; ++c) {
      Real* xr = arow + c * W;
      Real* xi = irow + c * W;
      const Real* vcr = v.vr + c * v.stride;
      const Real* vci = v.vi + c * v.stride;
      const Real* pcr = pr + c * W;
      const Real* pci = pi + c * W;
      const Real* ur = v.ur + c * v.stride;
      const Real* ui = v.ui + c * v.stride;
      Real* y_r = yr + c * W;
      Real* y_i = yi + c * W;
      // One loop body: the updated element stays in registers for the product (two loops would
      // reload it after the stores, which the compiler must assume may alias it).
      QGML_LANES(q, W) {
        Real x_r = xr[q], x_i = xi[q];
        if (Update) {
          x_r -= vrr[q] * pcr[q] + vri[q] * pci[q] + prr[q] * vcr[q] + pri[q] * vci[q];
          x_i -= vri[q] * pcr[q] - vrr[q] * pci[q] + pri[q] * vcr[q] - prr[q] * vci[q];
          xr[q] = x_r;
          xi[q] = x_i;
        }
        if (Matvec) {
          rr[q] += x_r * ur[q];
          ii[q] += x_i * ui[q];
          ri[q] += x_r * ui[q];
          ir[q] += x_i * ur[q];
          y_r[q] += x_r * urr[q] + x_i * uri[q];
          y_i[q] += x_r * uri[q] - x_i * urr[q];
        }
      }
    }
    if (Matvec) {
      Real* y_r = yr + r * W;
      Real* y_i = yi + r * W;
      QGML_LANES(q, W) {
        y_r[q] += rr[q] - ii[q];
        y_i[q] += ri[q] + ir[q];
      }
    }
  }
}

}  // namespace packed_detail

// Step 1 on the pack loaded in p.ar, p.ai (only the lower triangle, diagonal included, is read):
// A = Q T Q^H with T real symmetric tridiagonal (diagonal p.d, off-diagonal p.e[0 .. n - 2], p.e[n - 1]
// = 0) and Q = H_0 ... H_{n-2}, H_k = I - tau_k v_k v_k^H, tau_k in p.tr, p.ti, v_k(k + 1) = 1 and
// v_k(i) = A(i, k) for i > k + 1 (in p.ar, p.ai).
//
// Step k (see hermitian_eigh): the reflector from column k, y = A_bb v_k (b = k + 1), p_k from y
// (householder_finish_p), and A_bb <- A_bb - v_k p_k^H - p_k v_k^H. The update of step k and the
// product of step k + 1 share one pass over the trailing matrix (householder_update_product): column
// b is updated first, step k + 1's reflector is formed from it, then the rest of A_bb is updated and
// multiplied by v_{k + 1} element by element. p_{k + 1} lives in Q^T's storage (p.zr), which
// packed_form_q fills only afterwards.
template <int W, class Real>
KOKKOS_FUNCTION void packed_tridiagonalize(const PackedEighArrays<W, Real>& p) {
  using namespace packed_detail;
  const int n = p.n;
  const bool staggered = n >= packed_staggered_min_n;
  Real *pk_r = p.pr, *pk_i = p.pi;          // p_k
  Real *pn_r = p.zr, *pn_i = p.zr + n * W;  // p_{k + 1}
  Real *cvr = nullptr, *cvi = nullptr, *cur = nullptr, *cui = nullptr;
  if (staggered) {
    pk_r = staggered_array(p, 0, 8);
    pk_i = staggered_array(p, 1, 40);
    pn_r = staggered_array(p, 2, 8);
    pn_i = staggered_array(p, 3, 40);
    cvr = staggered_array(p, 4, 10);
    cvi = staggered_array(p, 5, 44);
    cur = staggered_array(p, 6, 12);
    cui = staggered_array(p, 7, 42);
  }
  int active = n > 1 ? householder_reflector<W>(p, 0) : 0;
  if (active)
    householder_update_product<false, true, W>(p, -1, reflector_columns(p, -1, cvr, cvi, cur, cui), pk_r, pk_i, pk_r,
                                               pk_i);
  for (int k = 0; k < n - 1; ++k) {
    if (active) {
      householder_finish_p<W>(p, k, pk_r, pk_i);
      householder_update_column<W>(p, k, pk_r, pk_i);
    }
    if (k + 1 == n - 1) break;
    const int next = householder_reflector<W>(p, k + 1);
    if (active || next) {
      const PackedReflectorColumns<Real> v = reflector_columns(p, k, cvr, cvi, cur, cui);
      if (active && next)
        householder_update_product<true, true, W>(p, k, v, pk_r, pk_i, pn_r, pn_i);
      else if (active)
        householder_update_product<true, false, W>(p, k, v, pk_r, pk_i, pn_r, pn_i);
      else
        householder_update_product<false, true, W>(p, k, v, pk_r, pk_i, pn_r, pn_i);
    }
    Real* t = pk_r;
    pk_r = pn_r;
    pn_r = t;
    t = pk_i;
    pk_i = pn_i;
    pn_i = t;
    active = next;
  }
  {
    const Real* ann = p.at(p.ar, n - 1, n - 1);
    QGML_LANES(q, W) {
      p.d[(n - 1) * W + q] = ann[q];
      p.e[(n - 1) * W + q] = Real(0);
    }
  }
}

}  // namespace qgml::linalg
