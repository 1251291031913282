// The separate kernels' per-point step of LossGradient (LossKernel::separate, the only one with warm
// starts): from the batch's eigendecompositions (batched_eigh) the loss terms and the rows of U and W of
// every point (docs/math.md 4.5), one thread per point; the product Y = W^H U follows
// (gradient_product.hpp).
#pragma once

#include <Kokkos_Core.hpp>

#include "qgml/common/types.hpp"
#include "qgml/ground_state/degeneracy.hpp"
#include "qgml/ground_state/ground_state_terms.hpp"
#include "qgml/train/loss_gradient_views.hpp"
#include "qgml/train/supervised_loss.hpp"

namespace qgml::detail {

// Every kernel is a named functor, no KOKKOS_LAMBDA: docs/architecture.md "Host execution spaces in a
// CUDA build".

// Loss and gradient factors of one point from its eigendecomposition (docs/math.md 4.5): the per-point path.
template <class Real, class ExecSpace, class PointsView>
struct PerPointLossGradient {
  using memory_space = typename ExecSpace::memory_space;
  using complex_type = complex_t<Real>;
  typename MatrixConfiguration<Real, ExecSpace>::matrices_type a;
  PointsView x;
  MatrixStack<Real, memory_space> v;
  RealMatrix<Real, memory_space> w, xbar, terms;
  IntVector<memory_space> info;
  ComplexMatrix<Real, memory_space> u, wv;
  SupervisedInputs<Real, memory_space> sup;
  Real weight = 0, lw = 0, eta_rel = 0, tol = 0;
  int d = 0, n = 0, count = 0;
  bool skip_degenerate = false;

  KOKKOS_INLINE_FUNCTION void operator()(const int t) const {
    const Real e0 = w(t, 0);
    // 1. y_k = A_k psi (kept in U(k, :, t)), xbar, sigma^2, d^2 (ground_state_terms.hpp).
    const auto gs =
        ground_state_terms<Real>(a, Kokkos::subview(v, t, 0, Kokkos::ALL), Kokkos::subview(x, t, Kokkos::ALL),
                                 Kokkos::subview(xbar, t, Kokkos::ALL),
                                 [&](const int k, const int i, const complex_type& y) { u(t, k * n + i) = y; });
    const Real sigma2 = gs.sigma2, dist2 = gs.distance2;
    // Supervised: B_c psi into block D + c of row t of U; y_hat(t, c) and the point's loss.
    Real loss_sup = 0, log_partition = 0;
    if (sup.enabled) {
      for (int c = 0; c < sup.outputs; ++c) {
        Real y_hat = 0;
        for (int i = 0; i < n; ++i) {
          complex_type beta(0);
          for (int j = 0; j < n; ++j) beta += sup.b(c, i, j) * v(t, 0, j);
          u(t, (d + c) * n + i) = beta;
          y_hat += v(t, 0, i).real() * beta.real() + v(t, 0, i).imag() * beta.imag();
        }
        sup.y_hat(t, c) = y_hat;
      }
      loss_sup = sup.point_loss_of(t, log_partition);
    }
    // 2. s = sum_k r_k y_k (supervised: lambda (1 - w) sum_k r_k y_k + sum_c (g_c/2) B_c psi), in row count + t
    // of W.
    for (int i = 0; i < n; ++i) {
      complex_type s(0);
      for (int k = 0; k < d; ++k) s += (xbar(t, k) - x(t, k)) * u(t, k * n + i);
      wv(count + t, i) = sup.enabled ? sup.lambda * (Real(1) - lw) * s : s;
    }
    for (int c = 0; c < (sup.enabled ? sup.outputs : 0); ++c) {
      const Real half_dl = sup.half_derivative_of(t, c, log_partition);
      for (int i = 0; i < n; ++i) wv(count + t, i) += half_dl * u(t, (d + c) * n + i);
    }
    // 3. c_n = f(E_n - E_0) <n|s>, n >= 1, kept in row count + t of U.
    const Real eta = eta_rel * spectral_scale(e0, w(t, n - 1));
    const bool degenerate = ground_state_degenerate(n, e0, n > 1 ? w(t, 1) : e0, w(t, n - 1), tol);
    for (int m = 1; m < n; ++m) {
      const Real f = regularized_inverse_gap(w(t, m) - e0, eta);
      complex_type c(0);
      for (int i = 0; i < n; ++i) c += Kokkos::conj(v(t, m, i)) * wv(count + t, i);
      u(count + t, m) = f * c;
    }
    // 4. phi = sum_{n>=1} c_n |n>, into row count + t of W; psi into row t.
    for (int i = 0; i < n; ++i) {
      complex_type p(0);
      for (int m = 1; m < n; ++m) p += u(count + t, m) * v(t, m, i);
      wv(count + t, i) = p;
      wv(t, i) = v(t, 0, i);
    }
    // 5. a_l, e_l scaled by the point's weight.
    const Real pw = (skip_degenerate && degenerate) ? Real(0) : weight;
    for (int l = 0; l < d; ++l) {
      const Real xl = x(t, l);
      const Real rl = xbar(t, l) - xl;
      for (int i = 0; i < n; ++i) {
        complex_type aphi(0);
        for (int j = 0; j < n; ++j) aphi += a(l, i, j) * wv(count + t, j);
        const complex_type psi_i = v(t, 0, i);
        const complex_type b = u(t, l * n + i) - xl * psi_i;
        const complex_type c = aphi - xl * wv(count + t, i);
        if (sup.enabled) {
          u(t, l * n + i) = pw * (sup.lambda * lw * b + sup.lambda * (Real(1) - lw) * rl * psi_i - c);
          u(count + t, l * n + i) = -pw * b;
        } else {
          u(t, l * n + i) = pw * (lw * b - (Real(1) - lw) * c + (Real(1) - lw) * rl * psi_i);
          u(count + t, l * n + i) = pw * (-(Real(1) - lw)) * b;
        }
      }
    }
    for (int c = 0; c < (sup.enabled ? sup.outputs : 0); ++c) {
      const Real half_dl = sup.half_derivative_of(t, c, log_partition);
      for (int i = 0; i < n; ++i) {
        u(t, (d + c) * n + i) = pw * half_dl * v(t, 0, i);
        u(count + t, (d + c) * n + i) = complex_type(0);
      }
    }
    const Real total = sup.enabled ? loss_sup + sup.lambda * (dist2 + lw * sigma2) : dist2 + lw * sigma2;
    const bool finite = math::isfinite(total) && math::isfinite(e0);
    terms(t, int(loss_total)) = total;
    terms(t, int(loss_reconstruction)) = dist2;
    terms(t, int(loss_fluctuation)) = sigma2;
    terms(t, int(loss_energy)) = e0;
    terms(t, int(loss_degenerate_points)) = degenerate ? Real(1) : Real(0);
    terms(t, int(loss_nonfinite_points)) = finite ? Real(0) : Real(1);
    terms(t, int(loss_eigh_failures)) = info(t) == 0 ? Real(0) : Real(1);
    terms(t, int(loss_supervised)) = loss_sup;
  }
};

template <class Real, class ExecSpace, class PointsView>
void loss_gradient_per_point(const ExecSpace& exec,
                             const LossGradientViews<Real, typename ExecSpace::memory_space>& buf,
                             const MatrixConfiguration<Real, ExecSpace>& config, const PointsView& x,
                             const LossSettings& settings, Real weight, int count,
                             const SupervisedInputs<Real, typename ExecSpace::memory_space>& sup = {}) {
  PerPointLossGradient<Real, ExecSpace, PointsView> f;
  assign_point_inputs(f, buf, config, x, settings, weight, count, sup);
  f.v = buf.v;
  f.w = buf.w;
  f.d = buf.d;
  f.n = buf.n;
  Kokkos::parallel_for("qgml::LossGradient::per_point", Kokkos::RangePolicy<ExecSpace>(exec, 0, count), f);
}

}  // namespace qgml::detail
