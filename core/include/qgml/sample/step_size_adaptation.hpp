// Dual averaging of the step size during warm-up (Nesterov 2009, in the form of Hoffman and Gelman 2014,
// "The No-U-Turn Sampler", Algorithm 5), driven by the mean Metropolis acceptance probability abar_m of
// all chains at warm-up iteration m = 1, 2, ...:
//   Hbar_m = (1 - 1/(m + t0)) Hbar_{m-1} + (delta - abar_m) / (m + t0),
//   log eps_m = mu - sqrt(m) / gamma Hbar_m,   mu = log(10 eps_0),
//   log epsbar_m = m^-kappa log eps_m + (1 - m^-kappa) log epsbar_{m-1},
// with gamma = 0.05, t0 = 10, kappa = 0.75; after warm-up the step size is epsbar. All chains share one
// step size, so they stay exchangeable and the diagnostics compare like with like.
#pragma once

#include <Kokkos_Core.hpp>

#include "qgml/common/kokkos_compat.hpp"

namespace qgml {

// The adaptation's state (device-resident as a View of these doubles).
enum StepSizeSlot : int { step_eps = 0, step_log_eps_bar, step_hbar, step_mu, step_slots };

struct DualAveraging {
  double delta = 0.574;  // target acceptance
  double gamma = 0.05, t0 = 10, kappa = 0.75;

  // state[step_eps] = eps_0, state[step_mu] = log(10 eps_0), state[step_log_eps_bar] = state[step_hbar] = 0.
  template <class StateView>
  KOKKOS_INLINE_FUNCTION static void start(const StateView& state, double eps0) {
    state(step_eps) = eps0;
    state(step_log_eps_bar) = 0;
    state(step_hbar) = 0;
    state(step_mu) = math::log(10 * eps0);
  }

  // Iteration m >= 1 with mean acceptance abar (a NaN counts as 0: a step that breaks every chain is too
  // long). last: the final warm-up iteration, after which eps = epsbar.
  template <class StateView>
  KOKKOS_INLINE_FUNCTION void update(const StateView& state, long m, double abar, bool last) const {
    const double a = abar == abar ? abar : 0.0;
    const double w = 1.0 / (double(m) + t0);
    const double hbar = (1 - w) * state(step_hbar) + w * (delta - a);
    const double log_eps = state(step_mu) - math::sqrt(double(m)) / gamma * hbar;
    const double k = math::exp(-kappa * math::log(double(m)));  // m^-kappa
    const double log_eps_bar = k * log_eps + (1 - k) * state(step_log_eps_bar);
    state(step_hbar) = hbar;
    state(step_log_eps_bar) = log_eps_bar;
    state(step_eps) = math::exp(last ? log_eps_bar : log_eps);
  }
};

}  // namespace qgml
