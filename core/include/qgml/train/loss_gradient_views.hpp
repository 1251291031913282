// The buffers a LossGradient hands its kernels (LossGradientViews), the kernels that zero them, and what
// every per-point gradient kernel reads of a batch and of the loss settings (docs/math.md 4.5, 4.7).
#pragma once

#include <Kokkos_Core.hpp>

#include "qgml/common/types.hpp"
#include "qgml/ground_state/degeneracy.hpp"
#include "qgml/model/matrix_configuration.hpp"
#include "qgml/train/loss_gradient_packed.hpp"
#include "qgml/train/loss_settings.hpp"
#include "qgml/train/supervised_inputs.hpp"

namespace qgml::detail {

// Every kernel is a named functor, no KOKKOS_LAMBDA: docs/architecture.md "Host execution spaces in a
// CUDA build".

// The buffers of a LossGradient that the implementation steps of LossGradient::compute() use.
template <class Real, class MemorySpace>
struct LossGradientViews {
  int d = 0, n = 0, max_batch = 0, targets = 0;  // the gradient has d + targets blocks
  MatrixStack<Real, MemorySpace> v, g;
  RealMatrix<Real, MemorySpace> w, xbar, terms;
  IntVector<MemorySpace> info;
  ComplexMatrix<Real, MemorySpace> u, wv, y;  // 2 max_batch x D N, 2 max_batch x N, N x D N (Y = W^H U)
  Kokkos::View<double*, MemorySpace> sums;
  PackedGradientPartials<Real, MemorySpace> partials;
  Kokkos::View<complex_t<Real>***, Kokkos::LayoutRight, MemorySpace> product_partials;
  Kokkos::View<double**, Kokkos::LayoutRight, MemorySpace> term_partials;
};

// v(i) = 0.
template <class View>
struct ZeroEntries {
  View v;
  KOKKOS_INLINE_FUNCTION void operator()(const int i) const { v(i) = typename View::non_const_value_type(0); }
};

// g(l, i, j) = 0 for the flat index l N^2 + i N + j.
template <class View>
struct ZeroMatrixStack {
  View g;
  int n = 0;
  KOKKOS_INLINE_FUNCTION void operator()(const int lij) const {
    g(lij / (n * n), (lij / n) % n, lij % n) = typename View::non_const_value_type(0);
  }
};

// The loss settings every per-point gradient kernel reads (docs/math.md 4.5, 4.7): the point weight, w, the
// degeneracy regularisation and what a degenerate point contributes.
template <class Kernel, class Real>
void assign_loss_settings(Kernel& f, const LossSettings& settings, Real weight) {
  f.weight = weight;
  f.lw = Real(settings.w);
  f.eta_rel = degeneracy_eta<Real>(settings);
  f.tol = degeneracy_tolerance<Real>(settings);
  f.skip_degenerate = settings.degeneracy == DegeneracyPolicy::skip;
}

// What the per-point and team gradient kernels read of a batch: the features A, the points, the
// buffers they write (xbar, terms, info, U, W), the supervised inputs, the point count and the settings.
template <class Kernel, class Real, class ExecSpace, class PointsView>
void assign_point_inputs(Kernel& f, const LossGradientViews<Real, typename ExecSpace::memory_space>& buf,
                         const MatrixConfiguration<Real, ExecSpace>& config, const PointsView& x,
                         const LossSettings& settings, Real weight, int count,
                         const SupervisedInputs<Real, typename ExecSpace::memory_space>& sup) {
  f.a = config.matrices();
  f.x = x;
  f.xbar = buf.xbar;
  f.terms = buf.terms;
  f.info = buf.info;
  f.u = buf.u;
  f.wv = buf.wv;
  f.sup = sup;
  f.count = count;
  assign_loss_settings(f, settings, weight);
}

}  // namespace qgml::detail
