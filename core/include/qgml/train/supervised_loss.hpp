// Per-point losses of supervised training (docs/supervised.md, section 2; spec 5.3). The model predicts
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
#pragma once

#include <Kokkos_Core.hpp>

#include <string>

#include "qgml/common/error.hpp"
#include "qgml/common/kokkos_compat.hpp"

namespace qgml {

enum class SupervisedLoss { mae, mse, huber, logistic };

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
      return sigmoid(y_hat) - y;
  }
  return Real(0);
}

// The supervised part of the objective L = mean_t l(y_hat_t, y_t) + lambda mean_t [d_t^2 + w sigma_t^2]
// + gamma P(A_1..A_D, B) (docs/supervised.md, section 3): the loss, its Huber threshold and lambda.
struct SupervisedSettings {
  SupervisedLoss loss = SupervisedLoss::mse;
  double huber_delta = default_huber_delta;
  double lambda = 0;  // weight of the unsupervised loss
};

// The names of the losses in settings files: mae, mse, huber, logistic.
inline SupervisedLoss parse_supervised_loss(const std::string& s) {
  if (s == "mae") return SupervisedLoss::mae;
  if (s == "mse") return SupervisedLoss::mse;
  if (s == "huber") return SupervisedLoss::huber;
  if (s == "logistic") return SupervisedLoss::logistic;
  throw Error("unknown supervised loss '" + s + "' (expected mae, mse, huber or logistic)");
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
  }
  return "?";
}

}  // namespace qgml
