// Per-point losses of supervised training (docs/supervised.md, section 2). The model predicts
// y_hat = <psi_0|B|psi_0>; a regression loss is a function of the error e = y_hat - y:
//   mae       l = |e|                                     dl/dy_hat = sign(e), 0 at e = 0
//   mse       l = e^2                                     dl/dy_hat = 2 e
//   huber     l = e^2 / 2             for |e| <= delta    dl/dy_hat = e
//             l = delta (|e| - delta / 2)  otherwise      dl/dy_hat = delta sign(e)
// and the binary-classification loss takes y_hat as the logit of P(y = 1), labels y in {0, 1}:
//   logistic  l = softplus(y_hat) - y y_hat,  softplus(z) = log(1 + e^z)
//             dl/dy_hat = sigmoid(y_hat) - y,  sigmoid(z) = 1 / (1 + e^-z)
// (the cross-entropy of sigmoid(y_hat) against y), evaluated without overflow for any finite y_hat.
// The gradient of the objective needs only dl/dy_hat per point (docs/supervised.md, section 4).
//
// With C target operators B_1..B_C a point has C outputs y_hat_c = <psi_0|B_c|psi_0> (docs/supervised.md,
// section 11). The regression losses and logistic take the mean over the outputs, each against its own
// target column: l = (1/C) sum_c l(y_hat_c, y_c), g_c = dl/dy_hat_c = l'(y_hat_c, y_c) / C. softmax
// takes the outputs as the logits of C classes and one target, the class index k in 0..C-1:
//   softmax   l = log sum_c e^{y_hat_c} - y_hat_k,   g_c = p_c - [c = k],   p_c = e^{y_hat_c} / sum_c' e^{y_hat_c'}
// (the cross-entropy of the softmax against the label; the log-sum-exp shifted by max_c y_hat_c). A label
// that is not a class index gives a NaN loss and NaN derivatives.
#pragma once

#include <Kokkos_Core.hpp>

#include <string>

#include "qgml/common/error.hpp"
#include "qgml/common/kokkos_compat.hpp"

namespace qgml {

enum class SupervisedLoss { mae, mse, huber, logistic, softmax };

// The Huber threshold delta when none is given.
inline constexpr double default_huber_delta = 1.0;

namespace detail {

// log(1 + u) for 0 <= u <= 1 to full relative precision also where 1 + u rounds: with v = fl(1 + u),
// log(v) * u / (v - 1) (Goldberg's correction; v - 1 is exact for v in [1, 2]), and u itself where v = 1.
template <class Real>
KOKKOS_INLINE_FUNCTION Real log_one_plus(Real u) {
  const Real v = Real(1) + u;
  return v == Real(1) ? u : math::log(v) * u / (v - Real(1));
}

// A quiet NaN in host and device code (sqrt of -1 under IEEE arithmetic).
template <class Real>
KOKKOS_INLINE_FUNCTION Real not_a_number() {
  return math::sqrt(Real(-1));
}

}  // namespace detail

// softplus(z) = log(1 + e^z) = max(z, 0) + log(1 + e^-|z|): the exponential never overflows.
template <class Real>
KOKKOS_INLINE_FUNCTION Real softplus(Real z) {
  const Real positive = z > Real(0) ? z : Real(0);
  return positive + detail::log_one_plus(math::exp(z > Real(0) ? -z : z));
}

// sigmoid(z) = 1 / (1 + e^-z), as e^z / (1 + e^z) for z < 0: the exponential never overflows.
template <class Real>
KOKKOS_INLINE_FUNCTION Real sigmoid(Real z) {
  if (z >= Real(0)) return Real(1) / (Real(1) + math::exp(-z));
  const Real t = math::exp(z);
  return t / (Real(1) + t);
}

// l(y_hat, y) of the table above; delta is used by huber only.
template <class Real>
KOKKOS_INLINE_FUNCTION Real supervised_loss_value(SupervisedLoss loss, Real y_hat, Real y, Real delta) {
  const Real e = y_hat - y;
  const Real a = e < Real(0) ? -e : e;
  switch (loss) {
    case SupervisedLoss::mae:
      return a;
    case SupervisedLoss::mse:
      return e * e;
    case SupervisedLoss::huber:
      return a <= delta ? Real(0.5) * e * e : delta * (a - Real(0.5) * delta);
    case SupervisedLoss::logistic:
      return softplus(y_hat) - y * y_hat;
    case SupervisedLoss::softmax:  // one class of two logits (0, y_hat): point_loss is the general form
      return softplus(y_hat) - y * y_hat;
  }
  return Real(0);
}

// dl/dy_hat of the table above.
template <class Real>
KOKKOS_INLINE_FUNCTION Real supervised_loss_derivative(SupervisedLoss loss, Real y_hat, Real y, Real delta) {
  const Real e = y_hat - y;
  const Real sign = e > Real(0) ? Real(1) : (e < Real(0) ? Real(-1) : Real(0));
  switch (loss) {
    case SupervisedLoss::mae:
      return sign;
    case SupervisedLoss::mse:
      return Real(2) * e;
    case SupervisedLoss::huber:
      return (e <= delta && e >= -delta) ? e : delta * sign;
    case SupervisedLoss::logistic:
    case SupervisedLoss::softmax:
      return sigmoid(y_hat) - y;
  }
  return Real(0);
}

// Values p[0], p[1], ... of one point's outputs or targets in host or device memory, for point_loss
// (a callable both sides can call: nvcc refuses a host lambda in a host-device template).
template <class Real>
struct PointValues {
  const Real* p = nullptr;
  KOKKOS_INLINE_FUNCTION Real operator()(const int i) const { return p[i]; }
};

// Targets of a point per model output: one class index (softmax) or one value per output.
inline int target_columns(SupervisedLoss loss, int outputs) { return loss == SupervisedLoss::softmax ? 1 : outputs; }

// The loss of one point over its C outputs (the table above). y_hat(c) and y(j) read the outputs and
// the targets; log_partition receives softmax's log sum_c e^{y_hat_c} (point_half_derivative needs it).
template <class Real, class YHat, class Y>
KOKKOS_INLINE_FUNCTION Real point_loss(SupervisedLoss loss, int outputs, const YHat& y_hat, const Y& y, Real delta,
                                       Real& log_partition) {
  log_partition = Real(0);
  if (loss == SupervisedLoss::softmax) {
    Real top = y_hat(0);
    for (int c = 1; c < outputs; ++c) top = y_hat(c) > top ? y_hat(c) : top;
    Real sum = 0;
    for (int c = 0; c < outputs; ++c) sum += math::exp(y_hat(c) - top);
    log_partition = top + math::log(sum);
    const Real label = y(0);
    const int k = int(label);
    if (!(label >= Real(0)) || k >= outputs || Real(k) != label) return detail::not_a_number<Real>();
    return log_partition - y_hat(k);
  }
  Real sum = 0;
  for (int c = 0; c < outputs; ++c) sum += supervised_loss_value(loss, y_hat(c), y(c), delta);
  return outputs == 1 ? sum : sum / Real(outputs);
}

// g_c / 2 = (dl/dy_hat_c) / 2 of point_loss, log_partition as point_loss gave it.
template <class Real, class YHat, class Y>
KOKKOS_INLINE_FUNCTION Real point_half_derivative(SupervisedLoss loss, int outputs, const YHat& y_hat, const Y& y,
                                                  Real delta, Real log_partition, int c) {
  if (loss == SupervisedLoss::softmax) {
    const Real label = y(0);
    const int k = int(label);
    if (!(label >= Real(0)) || k >= outputs || Real(k) != label) return detail::not_a_number<Real>();
    return Real(0.5) * (math::exp(y_hat(c) - log_partition) - (c == k ? Real(1) : Real(0)));
  }
  const Real g = supervised_loss_derivative(loss, y_hat(c), y(c), delta);
  return Real(0.5) * (outputs == 1 ? g : g / Real(outputs));
}

// The supervised part of the objective L = mean_t l(y_hat_t, y_t) + lambda mean_t [d_t^2 + w sigma_t^2]
// + gamma P(A_1..A_D, B) (docs/supervised.md, section 3): the loss, its Huber threshold and lambda.
struct SupervisedSettings {
  SupervisedLoss loss = SupervisedLoss::mse;
  double huber_delta = default_huber_delta;
  double lambda = 0;  // weight of the unsupervised loss
  // C, the target operators B_1..B_C: the outputs of a regression (one target column each), the classes of
  // softmax (one target column, the class index); 1 for logistic.
  int outputs = 1;
};

// The names of the losses in settings files: mae, mse, huber, logistic, softmax.
inline SupervisedLoss parse_supervised_loss(const std::string& s) {
  if (s == "mae") return SupervisedLoss::mae;
  if (s == "mse") return SupervisedLoss::mse;
  if (s == "huber") return SupervisedLoss::huber;
  if (s == "logistic") return SupervisedLoss::logistic;
  if (s == "softmax") return SupervisedLoss::softmax;
  throw Error("unknown supervised loss '" + s + "' (expected mae, mse, huber, logistic or softmax)");
}

inline std::string to_string(SupervisedLoss loss) {
  switch (loss) {
    case SupervisedLoss::mae:
      return "mae";
    case SupervisedLoss::mse:
      return "mse";
    case SupervisedLoss::huber:
      return "huber";
    case SupervisedLoss::logistic:
      return "logistic";
    case SupervisedLoss::softmax:
      return "softmax";
  }
  return "?";
}

}  // namespace qgml
