// The supervised inputs of LossGradient's kernels (docs/supervised.md, section 5): the target operator B,
// the targets y_t, the loss and its parameters, and where the predictions y_hat_t = <psi_0|B|psi_0> go.
// `enabled` false: unsupervised training (the other members are then unused).
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
  Matrix<Real, MemorySpace> b;                                     // B, N x N
  Kokkos::View<const Real*, Kokkos::LayoutStride, MemorySpace> y;  // y_t
  RealVector<Real, MemorySpace> y_hat;                             // <- <psi_t|B|psi_t>
};

// The coefficients of the per-point gradient vectors (loss_gradient.hpp):
//   s = s_scale sum_k r_k y_k (+ (l'/2) B psi),
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
