// The supervised inputs of LossGradient's kernels (docs/supervised.md, sections 5 and 11): the C target
// operators B_c, the targets of the points, the loss and its parameters, and where the predictions
// y_hat_tc = <psi_0|B_c|psi_0> go. `enabled` false: unsupervised training (the other members are then
// unused).
#pragma once

#include <Kokkos_Core.hpp>

#include "qgml/common/types.hpp"
#include "qgml/train/supervised_loss.hpp"

namespace qgml::detail {

template <class Real, class MemorySpace>
struct SupervisedInputs {
  bool enabled = false;
  SupervisedLoss loss = SupervisedLoss::mse;
  Real delta = Real(default_huber_delta), lambda = Real(0);
  int outputs = 0;                                                  // C
  MatrixStack<Real, MemorySpace> b;                                 // B_c, C x N x N
  Kokkos::View<const Real**, Kokkos::LayoutStride, MemorySpace> y;  // point t's targets y(t, :)
  RealMatrix<Real, MemorySpace> y_hat;                              // <- y_hat(t, c) = <psi_t|B_c|psi_t>

  // The loss of point t from y_hat(t, :) (train/supervised_loss.hpp, point_loss).
  KOKKOS_INLINE_FUNCTION Real point_loss_of(const int t, Real& log_partition) const {
    return point_loss(loss, outputs, Row<decltype(y_hat)>{y_hat, t}, Row<decltype(y)>{y, t}, delta, log_partition);
  }
  // g_c / 2 of point t (point_half_derivative).
  KOKKOS_INLINE_FUNCTION Real half_derivative_of(const int t, const int c, const Real log_partition) const {
    return point_half_derivative(loss, outputs, Row<decltype(y_hat)>{y_hat, t}, Row<decltype(y)>{y, t}, delta,
                                 log_partition, c);
  }

  // Row t of a matrix View as point_loss reads it (a host-device callable, not a lambda).
  template <class View>
  struct Row {
    View v;
    int t = 0;
    KOKKOS_INLINE_FUNCTION Real operator()(const int j) const { return v(t, j); }
  };
};

// The coefficients of the per-point gradient vectors (loss_gradient.hpp):
//   s = s_scale sum_k r_k y_k (+ sum_c (g_c/2) B_c psi),
//   a_l = b_coef b_l + c_coef c_l + r_coef r_l psi,   e_l = e_coef b_l.
// Unsupervised: 1, w, -(1 - w), 1 - w, -(1 - w); supervised: lambda (1 - w), lambda w, -1,
// lambda (1 - w), -1 (the factor (1 - w) of the phi terms moves into s; docs/supervised.md, section 5).
template <class Real>
struct GradientCoefficients {
  Real s_scale, b_coef, c_coef, r_coef, e_coef;
};

template <class Real, class MemorySpace>
KOKKOS_INLINE_FUNCTION GradientCoefficients<Real> gradient_coefficients(const SupervisedInputs<Real, MemorySpace>& sup,
                                                                        Real w) {
  const Real one_minus_w = Real(1) - w;
  if (!sup.enabled) return {Real(1), w, -one_minus_w, one_minus_w, -one_minus_w};
  return {sup.lambda * one_minus_w, sup.lambda * w, Real(-1), sup.lambda * one_minus_w, Real(-1)};
}

}  // namespace qgml::detail
