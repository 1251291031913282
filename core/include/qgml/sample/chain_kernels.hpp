// The kernels of ChainSampler (chain_sampler.hpp; docs/math.md 10.2, 10.3), one thread per chain: the
// Langevin proposal and its Metropolis test (ULA, MALA), the HMC trajectory's start, leapfrog moves and
// finish, the recorded draws, the acceptance sums and the step size's adaptation.
#pragma once

#include <Kokkos_Core.hpp>

#include "qgml/common/kokkos_compat.hpp"
#include "qgml/common/random.hpp"
#include "qgml/common/types.hpp"
#include "qgml/sample/sampler_settings.hpp"
#include "qgml/sample/step_size_adaptation.hpp"

namespace qgml {

namespace detail {

// Chain c moves to its proposal (y, ybar, ey) when `take`; alpha(c) = a, the Metropolis probability;
// after warm-up, sum and accepted count it.
template <class PointsView, class EnergyView, class StatsView>
KOKKOS_INLINE_FUNCTION void settle_proposal(const int c, const int d, const bool take, const double a, const bool warm,
                                            const PointsView& x, const PointsView& xbar, const EnergyView& ex,
                                            const PointsView& y, const PointsView& ybar, const EnergyView& ey,
                                            const StatsView& alpha, const StatsView& sum, const StatsView& accepted) {
  alpha(c) = a;
  if (take) {
    for (int k = 0; k < d; ++k) {
      x(c, k) = y(c, k);
      xbar(c, k) = ybar(c, k);
    }
    ex(c) = ey(c);
  }
  if (!warm) {
    sum(c) += a;
    accepted(c) += take ? 1.0 : 0.0;
  }
}

}  // namespace detail

// Chains per partial sum of the acceptance reduction: fixed, so that the order of the sum depends only
// on the number of chains.
inline constexpr int acceptance_chunk = 512;

namespace detail {

// Kernels are named functors, not KOKKOS_LAMBDAs: docs/architecture.md "Host execution spaces in a CUDA build".
// The dual-averaging state at step size eps0 (DualAveraging::start).
template <class StateView>
struct StartStepSize {
  StateView step;
  double eps0 = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const int) const { DualAveraging::start(step, eps0); }
};

// draws(slot, c, k) = x(c, k) for chain c.
template <class Real, class MemorySpace, class DrawsView>
struct RecordDraw {
  RealMatrix<Real, MemorySpace> x;
  DrawsView draws;
  int d = 0, slot = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const int c) const {
    for (int k = 0; k < d; ++k) draws(slot, c, k) = x(c, k);
  }
};

// Langevin proposal of chain c: y = x - eps beta (x - xbar) + sqrt(2 eps) xi, xi ~ N(0, I).
template <class Real, class MemorySpace>
struct LangevinPropose {
  RealMatrix<Real, MemorySpace> x, xbar, y;
  Kokkos::View<double*, MemorySpace> step;
  int d = 0;
  Real beta = 0;
  std::uint64_t seed = 0;
  long it = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const int c) const {
    const Real eps = Real(step(step_eps));
    const Real noise = math::sqrt(2 * eps);
    const CounterRng rng(seed, 2 * std::uint64_t(c));
    for (int k = 0; k < d; ++k)
      y(c, k) = x(c, k) - eps * beta * (x(c, k) - xbar(c, k)) + noise * Real(rng.normal(std::uint64_t(it) * d + k));
  }
};

// Chain c takes its Langevin proposal: with the MALA probability min(1, exp(U(x) - U(y) + log q(x|y) -
// log q(y|x))) when metropolis, else whenever it is finite (ULA).
template <class Real, class MemorySpace>
struct LangevinAccept {
  RealMatrix<Real, MemorySpace> x, xbar, y, ybar;
  RealVector<Real, MemorySpace> ex, ey;
  Kokkos::View<double*, MemorySpace> step, alpha, sum, accepted;
  int d = 0;
  Real beta = 0;
  bool metropolis = false, warm = false;
  std::uint64_t seed = 0;
  long it = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const int c) const {
    const Real eps = Real(step(step_eps));
    // log q(x|y) - log q(y|x), q(b|a) the Langevin proposal density from a.
    Real forward = 0, backward = 0;
    for (int k = 0; k < d; ++k) {
      const Real gx = beta * (x(c, k) - xbar(c, k)), gy = beta * (y(c, k) - ybar(c, k));
      const Real f = y(c, k) - x(c, k) + eps * gx, b = x(c, k) - y(c, k) + eps * gy;
      forward += f * f;
      backward += b * b;
    }
    const double log_ratio =
        double(beta) * (double(ex(c)) - double(ey(c))) + double(forward - backward) / (4 * double(eps));
    const bool finite = math::isfinite(ey(c)) && math::isfinite(log_ratio);
    const double a = !finite ? 0.0 : (log_ratio >= 0 ? 1.0 : math::exp(log_ratio));
    const bool take = metropolis ? CounterRng(seed, 2 * std::uint64_t(c) + 1).uniform(std::uint64_t(it)) < a : finite;
    detail::settle_proposal(c, d, take, a, warm, x, xbar, ex, y, ybar, ey, alpha, sum, accepted);
  }
};

// HMC start of chain c: momentum p ~ N(0, I), H_0 = beta E_0(x) + |p|^2 / 2, then the first half kick
// p - eps/2 grad U(x) and drift y = x + eps p.
template <class Real, class MemorySpace>
struct HmcStart {
  RealMatrix<Real, MemorySpace> x, xbar, y, p;
  RealVector<Real, MemorySpace> ex;
  Kokkos::View<double*, MemorySpace> step, h0;
  int d = 0;
  Real beta = 0;
  std::uint64_t seed = 0;
  long it = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const int c) const {
    const Real eps = Real(step(step_eps));
    const CounterRng rng(seed, 2 * std::uint64_t(c));
    double kinetic = 0;
    for (int k = 0; k < d; ++k) {
      const Real pk = Real(rng.normal(std::uint64_t(it) * d + k));
      kinetic += double(pk) * double(pk);
      const Real half = pk - Real(0.5) * eps * beta * (x(c, k) - xbar(c, k));
      p(c, k) = half;
      y(c, k) = x(c, k) + eps * half;
    }
    h0(c) = double(beta) * double(ex(c)) + 0.5 * kinetic;
  }
};

// One inner leapfrog step of chain c: full kick p -= eps grad U(y), then drift y += eps p.
template <class Real, class MemorySpace>
struct HmcMove {
  RealMatrix<Real, MemorySpace> y, ybar, p;
  Kokkos::View<double*, MemorySpace> step;
  int d = 0;
  Real beta = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const int c) const {
    const Real eps = Real(step(step_eps));
    for (int k = 0; k < d; ++k) {
      p(c, k) -= eps * beta * (y(c, k) - ybar(c, k));
      y(c, k) += eps * p(c, k);
    }
  }
};

// HMC end of chain c: final half kick, H_L - H_0, and the proposal taken with probability
// min(1, exp(H_0 - H_L)).
template <class Real, class MemorySpace>
struct HmcFinish {
  RealMatrix<Real, MemorySpace> x, xbar, y, ybar, p;
  RealVector<Real, MemorySpace> ex, ey;
  Kokkos::View<double*, MemorySpace> step, h0, dh, alpha, sum, accepted;
  int d = 0;
  Real beta = 0;
  bool warm = false;
  std::uint64_t seed = 0;
  long it = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const int c) const {
    const Real eps = Real(step(step_eps));
    double kinetic = 0;
    for (int k = 0; k < d; ++k) {
      const Real pk = p(c, k) - Real(0.5) * eps * beta * (y(c, k) - ybar(c, k));
      kinetic += double(pk) * double(pk);
    }
    const double error = double(beta) * double(ey(c)) + 0.5 * kinetic - h0(c);  // H_L - H_0
    const bool finite = math::isfinite(error);
    const double a = !finite ? 0.0 : (error <= 0 ? 1.0 : math::exp(-error));
    const bool take = CounterRng(seed, 2 * std::uint64_t(c) + 1).uniform(std::uint64_t(it)) < a;
    dh(c) = error;
    detail::settle_proposal(c, d, take, a, warm, x, xbar, ex, y, ybar, ey, alpha, sum, accepted);
  }
};

// partials(q) = sum of alpha(c) over chunk q of acceptance_chunk chains, in chain order.
template <class MemorySpace>
struct AcceptanceChunkSums {
  Kokkos::View<double*, MemorySpace> alpha, partials;
  int chains = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const int q) const {
    const int end = (q + 1) * acceptance_chunk < chains ? (q + 1) * acceptance_chunk : chains;
    double s = 0;
    for (int c = q * acceptance_chunk; c < end; ++c) s += alpha(c);
    partials(q) = s;
  }
};

// Dual-averaging update of the step size at warm-up iteration m on the mean acceptance probability
// (the chunk partial sums added in order, over the chains).
template <class MemorySpace>
struct AdaptStepSize {
  Kokkos::View<double*, MemorySpace> partials, step;
  DualAveraging da;
  int chunks = 0, chains = 0;
  long m = 0;
  bool last = false;

  KOKKOS_INLINE_FUNCTION void operator()(const int) const {
    double s = 0;
    for (int q = 0; q < chunks; ++q) s += partials(q);
    da.update(step, m, s / chains, last);
  }
};

}  // namespace detail

}  // namespace qgml
