// Samplers of p(x) ~ exp(-U(x)), U = beta E_0(x), for a trained configuration (docs/math.md section 10) (E_0: the
// ground-state energy of H(x), ground_state/ground_state_energy.hpp; grad U = beta (x - xbar(x)), Hellmann-Feynman).
// All chains advance together: every kernel runs over the chains as the batch, on the given execution-space instance,
// with no host synchronisation per step and no allocation after construction. Per iteration, with eps the (shared) step
// size and xi, p ~ N(0, I):
//  - ULA:  y = x - eps grad U(x) + sqrt(2 eps) xi, always taken (unless E_0(y) is not finite);
//  - MALA: the same proposal, accepted with probability min(1, exp(U(x) - U(y) + log q(x|y) - log q(y|x))),
//          log q(b|a) = -|b - a + eps grad U(a)|^2 / (4 eps);
//  - HMC:  p ~ N(0, I), L leapfrog steps of size eps for K(p) = |p|^2 / 2, accepted with probability
//          min(1, exp(H_0 - H_L)), H = U + K.
// During warm-up the step size adapts (sample/step_size_adaptation.hpp) on the mean acceptance
// probability of all chains, summed in a fixed order; for ULA on the probability MALA would have.
// Random numbers are counter-based (common/random.hpp): chain c draws its normals from stream 2c at
// counters iteration * D + k and its uniform from stream 2c + 1 at counter iteration, so the chains are
// the same on every backend and thread count, and a restored state continues exactly.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "qgml/common/error.hpp"
#include "qgml/common/explicit_instances.hpp"
#include "qgml/common/kokkos_compat.hpp"
#include "qgml/common/random.hpp"
#include "qgml/common/types.hpp"
#include "qgml/ground_state/ground_state_energy.hpp"
#include "qgml/model/matrix_configuration.hpp"
#include "qgml/sample/chain_kernels.hpp"
#include "qgml/sample/sampler_settings.hpp"
#include "qgml/sample/step_size_adaptation.hpp"

namespace qgml {

// A sampler's state on the host: what continues a run exactly (sample directories store it).
struct ChainSamplerState {
  long iteration = 0;
  int chains = 0, d = 0;
  std::vector<double> positions;       // chains x D
  std::vector<double> step;            // StepSizeSlot values
  std::vector<double> acceptance_sum;  // per chain: sum of Metropolis probabilities after warm-up
  std::vector<double> accepted;        // per chain: accepted proposals after warm-up
};

template <class Real, class ExecSpace>
class ChainSampler {
 public:
  using memory_space = typename ExecSpace::memory_space;
  using state_view = Kokkos::View<double*, memory_space>;

  ChainSampler(int d, int n, int chains, const SamplerSettings& settings, EnergyKernel kernel = EnergyKernel::automatic,
               const TeamShape& team_shape = {})
      : settings_(settings), d_(d), chains_(chains), energy_(d, n, kernel, team_shape) {
    validate(settings);
    QGML_REQUIRE(chains >= 1, "qgml::ChainSampler: need at least one chain");
    const auto alloc = [&](const char* label) { return RealMatrix<Real, memory_space>(std::string(label), chains, d); };
    x_ = alloc("qgml::ChainSampler::x");
    xbar_ = alloc("qgml::ChainSampler::xbar");
    y_ = alloc("qgml::ChainSampler::y");
    ybar_ = alloc("qgml::ChainSampler::ybar");
    ex_ = RealVector<Real, memory_space>("qgml::ChainSampler::energy", chains);
    ey_ = RealVector<Real, memory_space>("qgml::ChainSampler::proposal_energy", chains);
    if (settings.kind == SamplerKind::hmc) {
      p_ = alloc("qgml::ChainSampler::momentum");
      h0_ = state_view("qgml::ChainSampler::hamiltonian", chains);
    }
    dh_ = state_view("qgml::ChainSampler::energy_error", chains);
    alpha_ = state_view("qgml::ChainSampler::alpha", chains);
    acceptance_sum_ = state_view("qgml::ChainSampler::acceptance_sum", chains);
    accepted_ = state_view("qgml::ChainSampler::accepted", chains);
    partials_ =
        state_view("qgml::ChainSampler::acceptance_partials", (chains + acceptance_chunk - 1) / acceptance_chunk);
    step_ = state_view("qgml::ChainSampler::step_size", int(step_slots));
  }

  const SamplerSettings& settings() const { return settings_; }
  EnergyKernel kernel() const { return energy_.kernel(); }
  int chains() const { return chains_; }
  long iteration() const { return iteration_; }

  // Chains at x0 (chains x D, in memory_space); iteration 0, step size resolved_step_size, statistics 0.
  template <class StartView>
  void start(const ExecSpace& exec, const MatrixConfiguration<Real, ExecSpace>& config, const StartView& x0) {
    QGML_REQUIRE(int(x0.extent(0)) == chains_ && int(x0.extent(1)) == d_,
                 "qgml::ChainSampler::start: the start points must be chains x D");
    Kokkos::deep_copy(exec, x_, x0);
    Kokkos::deep_copy(exec, acceptance_sum_, 0.0);
    Kokkos::deep_copy(exec, accepted_, 0.0);
    Kokkos::deep_copy(exec, dh_, 0.0);
    Kokkos::parallel_for("qgml::ChainSampler::start_step_size", Kokkos::RangePolicy<ExecSpace>(exec, 0, 1),
                         detail::StartStepSize<state_view>{step_, resolved_step_size(settings_)});
    iteration_ = 0;
    energy_.compute(exec, config, x_, ex_, xbar_);
  }

  // Continues from a state written by state() for the same chains, D and settings.
  void restore(const ExecSpace& exec, const MatrixConfiguration<Real, ExecSpace>& config, const ChainSamplerState& s) {
    QGML_REQUIRE(s.chains == chains_ && s.d == d_ && s.positions.size() == std::size_t(chains_) * d_ &&
                     s.step.size() == std::size_t(step_slots) && s.acceptance_sum.size() == std::size_t(chains_) &&
                     s.accepted.size() == std::size_t(chains_) && s.iteration >= 0,
                 "qgml::ChainSampler::restore: the state does not match " + std::to_string(chains_) +
                     " chains in D = " + std::to_string(d_));
    auto xh = Kokkos::create_mirror_view(x_);
    for (int c = 0; c < chains_; ++c)
      for (int k = 0; k < d_; ++k) xh(c, k) = Real(s.positions[std::size_t(c) * d_ + k]);
    Kokkos::deep_copy(exec, x_, xh);
    copy_in(exec, step_, s.step);
    copy_in(exec, acceptance_sum_, s.acceptance_sum);
    copy_in(exec, accepted_, s.accepted);
    Kokkos::deep_copy(exec, dh_, 0.0);
    iteration_ = s.iteration;
    energy_.compute(exec, config, x_, ex_, xbar_);
    fence(exec, "qgml::ChainSampler::restore");
  }

  // The state on the host (fences exec).
  ChainSamplerState state(const ExecSpace& exec) const {
    ChainSamplerState s;
    s.iteration = iteration_;
    s.chains = chains_;
    s.d = d_;
    auto xh = Kokkos::create_mirror_view(x_);
    Kokkos::deep_copy(exec, xh, x_);
    s.step = copy_out(exec, step_);
    s.acceptance_sum = copy_out(exec, acceptance_sum_);
    s.accepted = copy_out(exec, accepted_);
    fence(exec, "qgml::ChainSampler::state");
    s.positions.resize(std::size_t(chains_) * d_);
    for (int c = 0; c < chains_; ++c)
      for (int k = 0; k < d_; ++k) s.positions[std::size_t(c) * d_ + k] = double(xh(c, k));
    return s;
  }

  // One iteration of every chain. Defined below the class (explicit instances:
  // common/explicit_instances.hpp).
  void step(const ExecSpace& exec, const MatrixConfiguration<Real, ExecSpace>& config);

  // draws(slot, c, k) = x_c,k: the chains' current positions as draw `slot`. Asynchronous on exec.
  template <class DrawsView>
  void record(const ExecSpace& exec, const DrawsView& draws, int slot) const {
    Kokkos::parallel_for("qgml::ChainSampler::record", Kokkos::RangePolicy<ExecSpace>(exec, 0, chains_),
                         detail::RecordDraw<Real, memory_space, DrawsView>{x_, draws, d_, slot});
  }

  const RealMatrix<Real, memory_space>& positions() const { return x_; }
  const RealMatrix<Real, memory_space>& xbar() const { return xbar_; }
  const RealVector<Real, memory_space>& energy() const { return ex_; }
  // StepSizeSlot values; step_size()(step_eps) is the step size in use.
  const state_view& step_size() const { return step_; }
  // Per chain, after warm-up: the sum of the Metropolis probabilities and the accepted proposals.
  const state_view& acceptance_sum() const { return acceptance_sum_; }
  const state_view& accepted() const { return accepted_; }
  // HMC: H_L - H_0 of each chain's last trajectory (0 for ULA and MALA).
  const state_view& energy_error() const { return dh_; }

  // The kernels of step().
  void langevin_propose(const ExecSpace& exec, long it) {
    detail::LangevinPropose<Real, memory_space> f;
    f.x = x_;
    f.xbar = xbar_;
    f.y = y_;
    f.step = step_;
    f.d = d_;
    f.beta = Real(settings_.beta);
    f.seed = settings_.seed;
    f.it = it;
    Kokkos::parallel_for("qgml::ChainSampler::langevin_propose", Kokkos::RangePolicy<ExecSpace>(exec, 0, chains_), f);
  }

  void langevin_accept(const ExecSpace& exec, long it, bool warm) {
    detail::LangevinAccept<Real, memory_space> f;
    f.x = x_;
    f.xbar = xbar_;
    f.y = y_;
    f.ybar = ybar_;
    f.ex = ex_;
    f.ey = ey_;
    f.step = step_;
    f.alpha = alpha_;
    f.sum = acceptance_sum_;
    f.accepted = accepted_;
    f.d = d_;
    f.beta = Real(settings_.beta);
    f.metropolis = settings_.kind == SamplerKind::mala;
    f.warm = warm;
    f.seed = settings_.seed;
    f.it = it;
    Kokkos::parallel_for("qgml::ChainSampler::langevin_accept", Kokkos::RangePolicy<ExecSpace>(exec, 0, chains_), f);
  }

  void hmc_start(const ExecSpace& exec, long it) {
    detail::HmcStart<Real, memory_space> f;
    f.x = x_;
    f.xbar = xbar_;
    f.y = y_;
    f.p = p_;
    f.ex = ex_;
    f.step = step_;
    f.h0 = h0_;
    f.d = d_;
    f.beta = Real(settings_.beta);
    f.seed = settings_.seed;
    f.it = it;
    Kokkos::parallel_for("qgml::ChainSampler::hmc_start", Kokkos::RangePolicy<ExecSpace>(exec, 0, chains_), f);
  }

  void hmc_move(const ExecSpace& exec) {
    Kokkos::parallel_for("qgml::ChainSampler::hmc_move", Kokkos::RangePolicy<ExecSpace>(exec, 0, chains_),
                         detail::HmcMove<Real, memory_space>{y_, ybar_, p_, step_, d_, Real(settings_.beta)});
  }

  void hmc_finish(const ExecSpace& exec, long it, bool warm) {
    detail::HmcFinish<Real, memory_space> f;
    f.x = x_;
    f.xbar = xbar_;
    f.y = y_;
    f.ybar = ybar_;
    f.p = p_;
    f.ex = ex_;
    f.ey = ey_;
    f.step = step_;
    f.h0 = h0_;
    f.dh = dh_;
    f.alpha = alpha_;
    f.sum = acceptance_sum_;
    f.accepted = accepted_;
    f.d = d_;
    f.beta = Real(settings_.beta);
    f.warm = warm;
    f.seed = settings_.seed;
    f.it = it;
    Kokkos::parallel_for("qgml::ChainSampler::hmc_finish", Kokkos::RangePolicy<ExecSpace>(exec, 0, chains_), f);
  }

  // Warm-up iteration m: the mean acceptance probability (chunks of acceptance_chunk chains summed in
  // order) drives the dual averaging.
  void adapt(const ExecSpace& exec, long m, bool last) {
    const int chunks = int(partials_.extent(0));
    Kokkos::parallel_for("qgml::ChainSampler::acceptance_chunks", Kokkos::RangePolicy<ExecSpace>(exec, 0, chunks),
                         detail::AcceptanceChunkSums<memory_space>{alpha_, partials_, chains_});
    DualAveraging da;
    da.delta = resolved_target_acceptance(settings_);
    Kokkos::parallel_for("qgml::ChainSampler::adapt_step_size", Kokkos::RangePolicy<ExecSpace>(exec, 0, 1),
                         detail::AdaptStepSize<memory_space>{partials_, step_, da, chunks, chains_, m, last});
  }

 private:
  static void copy_in(const ExecSpace& exec, const state_view& v, const std::vector<double>& values) {
    auto h = Kokkos::create_mirror_view(v);
    for (std::size_t i = 0; i < values.size(); ++i) h(i) = values[i];
    Kokkos::deep_copy(exec, v, h);
    fence(exec, "qgml::ChainSampler::copy_in");  // h is a temporary
  }
  static std::vector<double> copy_out(const ExecSpace& exec, const state_view& v) {
    auto h = Kokkos::create_mirror_view(v);
    Kokkos::deep_copy(exec, h, v);
    fence(exec, "qgml::ChainSampler::copy_out");
    return std::vector<double>(h.data(), h.data() + h.extent(0));
  }

  SamplerSettings settings_;
  int d_ = 0, chains_ = 0;
  long iteration_ = 0;
  GroundStateEnergy<Real, ExecSpace> energy_;
  RealMatrix<Real, memory_space> x_, xbar_, y_, ybar_, p_;
  RealVector<Real, memory_space> ex_, ey_;
  state_view h0_, dh_, alpha_, acceptance_sum_, accepted_, partials_, step_;
};

template <class Real, class ExecSpace>
void ChainSampler<Real, ExecSpace>::step(const ExecSpace& exec, const MatrixConfiguration<Real, ExecSpace>& config) {
  const long it = iteration_;
  const bool warm = it < settings_.warmup;
  if (settings_.kind == SamplerKind::hmc) {
    hmc_start(exec, it);
    for (int l = 1; l < settings_.leapfrog_steps; ++l) {
      energy_.compute(exec, config, y_, ey_, ybar_);
      hmc_move(exec);
    }
    energy_.compute(exec, config, y_, ey_, ybar_);
    hmc_finish(exec, it, warm);
  } else {
    langevin_propose(exec, it);
    energy_.compute(exec, config, y_, ey_, ybar_);
    langevin_accept(exec, it, warm);
  }
  if (warm && settings_.adapt) adapt(exec, it + 1, it + 1 == settings_.warmup);
  ++iteration_;
}

#define QGML_CHAIN_SAMPLER_INSTANCE(E, Real, Space, H) \
  E template void ChainSampler<Real, Space>::step(const Space&, const MatrixConfiguration<Real, Space>&);
QGML_FOR_EACH_INSTANCE(QGML_CHAIN_SAMPLER_INSTANCE, extern)

// Start points drawn from N(center, scale^2 I) (center: D values on the host), from the counter-based
// stream `seed` (chain c: stream c, counters k): the same on every backend.
namespace detail {

// Chain c's start point x(c, k) = mu(k) + scale z_k, z ~ N(0, I) from stream c of `key`.
template <class Real, class MemorySpace>
struct GaussianChainStart {
  RealMatrix<Real, MemorySpace> x;
  Kokkos::View<double*, MemorySpace> mu;
  double scale = 0;
  std::uint64_t key = 0;
  int d = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const int c) const {
    const CounterRng rng(key, std::uint64_t(c));
    for (int k = 0; k < d; ++k) x(c, k) = Real(mu(k) + scale * rng.normal(std::uint64_t(k)));
  }
};

}  // namespace detail

template <class Real, class ExecSpace>
RealMatrix<Real, typename ExecSpace::memory_space> gaussian_chain_start(const ExecSpace& exec, int chains,
                                                                        const std::vector<double>& center, double scale,
                                                                        std::uint64_t seed) {
  const int d = int(center.size());
  RealMatrix<Real, typename ExecSpace::memory_space> x("qgml::gaussian_chain_start", chains, d);
  Kokkos::View<double*, typename ExecSpace::memory_space> mu("qgml::gaussian_chain_start::center", d);
  auto mh = Kokkos::create_mirror_view(mu);
  for (int k = 0; k < d; ++k) mh(k) = center[std::size_t(k)];
  Kokkos::deep_copy(exec, mu, mh);
  const std::uint64_t key = mix64(seed ^ 0x5eed5eed5eed5eedULL);
  Kokkos::parallel_for("qgml::gaussian_chain_start", Kokkos::RangePolicy<ExecSpace>(exec, 0, chains),
                       detail::GaussianChainStart<Real, typename ExecSpace::memory_space>{x, mu, scale, key, d});
  fence(exec, "qgml::gaussian_chain_start");
  return x;
}

// Start points on the data: chain c starts at point floor(u_c T) of the T points, u_c uniform from a
// counter-based stream keyed by `seed` (the same on every backend).
namespace detail {

// Chain c's start point: x(c, .) = points(t, .), t = min(floor(u_c count), count - 1), u_c uniform.
template <class Real, class MemorySpace, class PointsView>
struct DataChainStart {
  RealMatrix<Real, MemorySpace> x;
  PointsView points;
  CounterRng rng;
  int count = 0, d = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const int c) const {
    int t = int(rng.uniform(std::uint64_t(c)) * count);
    t = t < count ? t : count - 1;
    for (int k = 0; k < d; ++k) x(c, k) = Real(points(t, k));
  }
};

}  // namespace detail

template <class Real, class ExecSpace, class PointsView>
RealMatrix<Real, typename ExecSpace::memory_space> data_chain_start(const ExecSpace& exec, int chains,
                                                                    const PointsView& points, std::uint64_t seed) {
  const int count = static_cast<int>(points.extent(0));
  const int d = static_cast<int>(points.extent(1));
  QGML_REQUIRE(count >= 1, "qgml::data_chain_start: no points");
  RealMatrix<Real, typename ExecSpace::memory_space> x("qgml::data_chain_start", chains, d);
  const CounterRng rng(mix64(seed ^ 0xda7a57a27ULL), 0);
  Kokkos::parallel_for(
      "qgml::data_chain_start", Kokkos::RangePolicy<ExecSpace>(exec, 0, chains),
      detail::DataChainStart<Real, typename ExecSpace::memory_space, PointsView>{x, points, rng, count, d});
  fence(exec, "qgml::data_chain_start");
  return x;
}

}  // namespace qgml
