// The samplers of p(x) ~ exp(-beta E_0(x)) (sample/chain_sampler.hpp) against closed forms:
//  - commuting diagonal matrices A_k = diag(a_1k, ..., a_Nk) give E_0(x) = min_i |x - a_i|^2 / 2, whose
//    density is known up to its normalisation (numerical quadrature gives the mass per well and the
//    moments);
//  - one well (N = 1) is the Gaussian N(a, I / beta); ULA's stationary law there is N(a, v I) with
//    v = 2 / (beta (2 - eps beta)), exactly, which MALA corrects;
//  - the fuzzy sphere A_k = J_k / j has E_0 = (|x| - 1)^2 / 2 + 1 / (2 j), a radial law known by
//    quadrature;
//  - HMC's energy error at fixed trajectory length falls as eps^2.
// The chains are independent, so their final positions are independent draws: tolerances are CLT bands
// over the chains.
#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>

#include <cmath>
#include <cstring>
#include <vector>

#include "qgml/model/initializers.hpp"
#include "qgml/sample/chain_sampler.hpp"

#include "kokkos_tools_recorder.hpp"
#include "test_support.hpp"

using namespace qgml;
using namespace qgml::test;

namespace {

// Diagonal configuration: wells[i * d + k] = a_ik.
template <class Real, class Space>
MatrixConfiguration<Real, Space> wells_configuration(const std::vector<double>& wells, int d, const Space& exec) {
  const int n = int(wells.size()) / d;
  HostMatrices m;
  m.D = d;
  m.N = n;
  m.values.assign(std::size_t(d) * n * n, 0.0);
  for (int k = 0; k < d; ++k)
    for (int i = 0; i < n; ++i) m(k, i, i) = wells[std::size_t(i) * d + k];
  return to_configuration<Real>(m, exec);
}

struct Run {
  std::vector<double> x;  // chains x D, final positions
  double acceptance = 0;  // mean Metropolis probability after warm-up
  double step = 0;
  std::vector<double> energy_error;
};

template <class Real, class Space>
Run run_chains(const MatrixConfiguration<Real, Space>& config, const SamplerSettings& s, int chains, int steps,
               const std::vector<double>& center, double spread) {
  const Space exec;
  ChainSampler<Real, Space> sampler(config.dimension(), config.matrix_size(), chains, s);
  sampler.start(exec, config, gaussian_chain_start<Real>(exec, chains, center, spread, s.seed + 100));
  for (int i = 0; i < s.warmup + steps; ++i) sampler.step(exec, config);
  const ChainSamplerState st = sampler.state(exec);
  Run r;
  r.x = st.positions;
  for (double a : st.acceptance_sum) r.acceptance += a;
  r.acceptance /= double(chains) * steps;
  r.step = st.step[step_eps];
  auto dh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sampler.energy_error());
  r.energy_error.assign(dh.data(), dh.data() + chains);
  return r;
}

struct Moments {
  double mean = 0, var = 0, m4 = 0;
};

Moments sample_moments(const std::vector<double>& v) {
  Moments m;
  for (double x : v) m.mean += x;
  m.mean /= double(v.size());
  for (double x : v) {
    const double c = (x - m.mean) * (x - m.mean);
    m.var += c;
    m.m4 += c * c;
  }
  m.var /= double(v.size());
  m.m4 /= double(v.size());
  return m;
}

// |sample mean - mu| and |sample variance - var| within z standard errors of C draws of a law with
// variance var and fourth central moment m4.
void require_moments(const std::vector<double>& v, double mu, double var, double m4, double z) {
  const Moments m = sample_moments(v);
  const double c = double(v.size());
  CAPTURE(m.mean, mu, m.var, var);
  REQUIRE(std::abs(m.mean - mu) <= z * std::sqrt(var / c));
  REQUIRE(std::abs(m.var - var) <= z * std::sqrt((m4 - var * var) / c) + 1e-12);
}

// Quadrature on [lo, hi] of the 1-D density exp(-beta min_i (x - a_i)^2 / 2): mass per well, mean,
// variance and fourth central moment.
struct Quadrature {
  std::vector<double> mass;
  double mean = 0, var = 0, m4 = 0;
};

Quadrature three_well_quadrature(const std::vector<double>& a, double beta) {
  Quadrature q;
  q.mass.assign(a.size(), 0.0);
  const double lo = -20, hi = 20, h = 1e-4;
  double z = 0, s1 = 0;
  std::vector<double> xs, ws;
  for (double x = lo; x <= hi; x += h) {
    int best = 0;
    for (std::size_t i = 1; i < a.size(); ++i)
      if (std::abs(x - a[i]) < std::abs(x - a[best])) best = int(i);
    const double w = std::exp(-beta * (x - a[best]) * (x - a[best]) / 2);
    q.mass[best] += w;
    z += w;
    s1 += w * x;
    xs.push_back(x);
    ws.push_back(w);
  }
  for (double& m : q.mass) m /= z;
  q.mean = s1 / z;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const double c = (xs[i] - q.mean) * (xs[i] - q.mean);
    q.var += ws[i] * c / z;
    q.m4 += ws[i] * c * c / z;
  }
  return q;
}

}  // namespace

TEMPLATE_TEST_CASE("samplers: three wells in one dimension, mass per well and moments from quadrature", "[sample]",
                   QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const Space exec;
  const std::vector<double> a{-2.0, 0.5, 3.0};
  const auto config = wells_configuration<Real>(a, 1, exec);
  const int chains = 4000;
  struct Case {
    SamplerKind kind;
    double beta;
    std::uint64_t seed;
  };
  for (const Case c : {Case{SamplerKind::mala, 1.0, 3}, Case{SamplerKind::mala, 2.0, 4}, Case{SamplerKind::hmc, 1.0, 5},
                       Case{SamplerKind::hmc, 2.0, 6}}) {
    const SamplerKind kind = c.kind;
    const double beta = c.beta;
    const std::uint64_t seed = c.seed;
    CAPTURE(to_string(kind), beta, seed);
    SamplerSettings s;
    s.kind = kind;
    s.beta = beta;
    s.seed = seed;
    s.warmup = 200;
    s.leapfrog_steps = 5;
    const Run r = run_chains(config, s, chains, kind == SamplerKind::hmc ? 150 : 400, {0.5}, 2.0);
    const Quadrature q = three_well_quadrature(a, beta);
    for (std::size_t i = 0; i < a.size(); ++i) {
      double share = 0;
      for (double x : r.x) {
        int best = 0;
        for (std::size_t j = 1; j < a.size(); ++j)
          if (std::abs(x - a[j]) < std::abs(x - a[best])) best = int(j);
        share += best == int(i) ? 1.0 : 0.0;
      }
      share /= chains;
      CAPTURE(i, share, q.mass[i]);
      REQUIRE(std::abs(share - q.mass[i]) <= 4.5 * std::sqrt(q.mass[i] * (1 - q.mass[i]) / chains));
    }
    require_moments(r.x, q.mean, q.var, q.m4, 4.5);
    // The adapted step size reaches the target acceptance (dual averaging, warm-up of 200).
    CAPTURE(r.acceptance, r.step);
    REQUIRE(std::abs(r.acceptance - resolved_target_acceptance(s)) < 0.1);
  }
}

TEMPLATE_TEST_CASE("samplers: ULA's stationary variance 2 / (beta (2 - eps beta)) in one well, MALA's 1 / beta",
                   "[sample]", QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const Space exec;
  const std::vector<double> a{0.3, -0.2};  // N = 1, D = 2: E_0 = |x - a|^2 / 2
  const auto config = wells_configuration<Real>(a, 2, exec);
  const int chains = 4000;
  const double beta = 2, eps = 0.2;
  for (const SamplerKind kind : {SamplerKind::ula, SamplerKind::mala}) {
    CAPTURE(to_string(kind));
    SamplerSettings s;
    s.kind = kind;
    s.beta = beta;
    s.step_size = eps;
    s.adapt = false;
    s.warmup = 0;
    const Run r = run_chains(config, s, chains, 120, a, 1.0);
    const double v = kind == SamplerKind::ula ? 2 / (beta * (2 - eps * beta)) : 1 / beta;
    for (int k = 0; k < 2; ++k) {
      std::vector<double> xk;
      for (int c = 0; c < chains; ++c) xk.push_back(r.x[std::size_t(c) * 2 + k]);
      require_moments(xk, a[std::size_t(k)], v, 3 * v * v, 4.5);
    }
    REQUIRE(r.step == eps);  // no adaptation
  }
}

TEMPLATE_TEST_CASE("samplers: HMC's energy error falls as eps^2 at fixed trajectory length", "[sample]",
                   QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  if constexpr (std::is_same_v<Real, double>) {
    const Space exec;
    const std::vector<double> a{0.3, -0.2, 0.1};
    const auto config = wells_configuration<Real>(a, 3, exec);
    std::vector<double> mean_error;
    for (const int l : {8, 16, 32}) {
      SamplerSettings s;
      s.kind = SamplerKind::hmc;
      s.step_size = 1.2 / l;
      s.leapfrog_steps = l;
      s.adapt = false;
      s.warmup = 0;
      const Run r = run_chains(config, s, 2000, 1, a, 1.0);
      double m = 0;
      for (double e : r.energy_error) m += std::abs(e);
      mean_error.push_back(m / 2000);
    }
    CAPTURE(mean_error[0], mean_error[1], mean_error[2]);
    for (int i = 0; i + 1 < 3; ++i) {
      const double ratio = mean_error[i] / mean_error[i + 1];
      REQUIRE(ratio > 3.5);
      REQUIRE(ratio < 4.5);
    }
  }
}

TEMPLATE_TEST_CASE("samplers: the fuzzy sphere's samples concentrate at |x| = 1 with the radial law", "[sample]",
                   QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const Space exec;
  const int n = 4;
  const double j = 0.5 * (n - 1);
  const auto config = fuzzy_sphere_configuration<Real>(n, 1 / j, exec);
  const double beta = 20;
  // Radial density r^2 exp(-beta (r - 1)^2 / 2) (E_0 = (r - 1)^2 / 2 + const, docs/math.md 7).
  double z = 0, s1 = 0, s2 = 0, s4 = 0;
  for (double r = 0; r < 4; r += 1e-5) {
    const double w = r * r * std::exp(-beta * (r - 1) * (r - 1) / 2);
    z += w;
    s1 += w * r;
  }
  const double mean = s1 / z;
  for (double r = 0; r < 4; r += 1e-5) {
    const double w = r * r * std::exp(-beta * (r - 1) * (r - 1) / 2);
    s2 += w * (r - mean) * (r - mean);
    s4 += w * std::pow(r - mean, 4);
  }
  SamplerSettings s;
  s.beta = beta;
  s.warmup = 300;
  s.seed = 9;
  const int chains = 3000;
  const Run r = run_chains(config, s, chains, 300, {0.0, 0.0, 0.0}, 1.0);
  std::vector<double> radius;
  std::vector<double> xs[3];
  for (int c = 0; c < chains; ++c) {
    double r2 = 0;
    for (int k = 0; k < 3; ++k) {
      r2 += r.x[std::size_t(c) * 3 + k] * r.x[std::size_t(c) * 3 + k];
      xs[k].push_back(r.x[std::size_t(c) * 3 + k]);
    }
    radius.push_back(std::sqrt(r2));
  }
  require_moments(radius, mean, s2 / z, s4 / z, 4.5);
  for (int k = 0; k < 3; ++k) {  // isotropic: mean 0, variance E[r^2] / 3
    const Moments m = sample_moments(xs[k]);
    REQUIRE(std::abs(m.mean) <= 4.5 * std::sqrt((s2 / z + mean * mean) / 3 / chains));
  }
}

TEMPLATE_TEST_CASE("samplers: a restored state continues exactly, through the end of warm-up", "[sample]",
                   QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const Space exec;
  const auto config = gaussian_hermitian_configuration<Real>(2, 6, 1.0, 21, exec);
  const int chains = 37;
  for (const SamplerKind kind : {SamplerKind::ula, SamplerKind::mala, SamplerKind::hmc}) {
    CAPTURE(to_string(kind));
    SamplerSettings s;
    s.kind = kind;
    s.warmup = 10;
    s.leapfrog_steps = 3;
    const auto x0 = gaussian_chain_start<Real>(exec, chains, {0.0, 0.0}, 1.0, 5);
    ChainSampler<Real, Space> whole(2, 6, chains, s), first(2, 6, chains, s), second(2, 6, chains, s);
    whole.start(exec, config, x0);
    first.start(exec, config, x0);
    for (int i = 0; i < 25; ++i) whole.step(exec, config);
    for (int i = 0; i < 7; ++i) first.step(exec, config);
    second.restore(exec, config, first.state(exec));
    for (int i = 7; i < 25; ++i) second.step(exec, config);
    const ChainSamplerState a = whole.state(exec), b = second.state(exec);
    REQUIRE(a.iteration == 25);
    REQUIRE(b.iteration == 25);
    REQUIRE(std::memcmp(a.positions.data(), b.positions.data(), a.positions.size() * sizeof(double)) == 0);
    REQUIRE(std::memcmp(a.step.data(), b.step.data(), a.step.size() * sizeof(double)) == 0);
    REQUIRE(a.acceptance_sum == b.acceptance_sum);
    REQUIRE(a.accepted == b.accepted);
    // The chains moved (a sampler that does nothing would pass the comparisons above).
    auto start = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x0);
    REQUIRE(a.positions[0] != double(start(0, 0)));
  }
}

TEMPLATE_TEST_CASE("samplers: steady-state steps allocate nothing and copy nothing to the host", "[sample][residency]",
                   QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const Space exec;
  const auto config = gaussian_hermitian_configuration<Real>(3, 8, 1.0, 4, exec);
  for (const SamplerKind kind : {SamplerKind::ula, SamplerKind::mala, SamplerKind::hmc})
    for (const EnergyKernel kernel : {EnergyKernel::automatic, EnergyKernel::team}) {
      CAPTURE(to_string(kind), to_string(kernel));
      SamplerSettings s;
      s.kind = kind;
      s.warmup = 3;
      s.leapfrog_steps = 3;
      ScopedCallbacks callbacks;
      recorder.reset();
      ChainSampler<Real, Space> sampler(3, 8, 100, s, kernel);
      Kokkos::View<Real***, Kokkos::LayoutRight, typename Space::memory_space> draws("qgml::test::draws", 4, 100, 3);
      for (const auto& label : recorder.allocation_labels) {
        INFO("allocation label " << label);
        CHECK(has_prefix(label));
      }
      // Kernels with scratch make the execution space allocate its scratch lazily, on first use.
      sampler.start(exec, config, gaussian_chain_start<Real>(exec, 100, {0.0, 0.0, 0.0}, 1.0, 2));
      sampler.step(exec, config);
      recorder.reset();
      for (int i = 0; i < 6; ++i) {  // through the end of warm-up and beyond
        sampler.step(exec, config);
        if (i >= 2) sampler.record(exec, draws, i - 2);
      }
      fence(exec, "qgml::test::residency");
      CHECK(recorder.allocations == 0);
      CHECK(recorder.deep_copies == 0);
      CHECK(!recorder.kernel_labels.empty());
      for (const auto& label : recorder.kernel_labels) {
        INFO("kernel label " << label);
        CHECK(has_prefix(label));
      }
      CHECK(recorder.kernel_labels.count(kind == SamplerKind::hmc ? "qgml::ChainSampler::hmc_move"
                                                                  : "qgml::ChainSampler::langevin_accept") == 1);
      CHECK(recorder.kernel_labels.count("qgml::ChainSampler::adapt_step_size") == 1);
      CHECK(recorder.kernel_labels.count(sampler.kernel() == EnergyKernel::packed
                                             ? "qgml::GroundStateEnergy::packed"
                                             : "qgml::GroundStateEnergy::team") == 1);
    }
}

#if defined(KOKKOS_ENABLE_SERIAL) && defined(KOKKOS_ENABLE_OPENMP)
TEST_CASE("samplers: the same chains on Serial and OpenMP, bit for bit", "[sample]") {
  for (const SamplerKind kind : {SamplerKind::ula, SamplerKind::mala, SamplerKind::hmc}) {
    CAPTURE(to_string(kind));
    SamplerSettings s;
    s.kind = kind;
    s.warmup = 8;
    s.leapfrog_steps = 4;
    const auto run = [&](auto space) {
      using Space = decltype(space);
      const auto config = gaussian_hermitian_configuration<double>(3, 8, 1.0, 2, space);
      ChainSampler<double, Space> sampler(3, 8, 301, s);
      sampler.start(space, config, gaussian_chain_start<double>(space, 301, {0.0, 0.0, 0.0}, 1.0, 8));
      for (int i = 0; i < 20; ++i) sampler.step(space, config);
      return sampler.state(space);
    };
    const ChainSamplerState a = run(Kokkos::Serial()), b = run(Kokkos::OpenMP());
    REQUIRE(std::memcmp(a.positions.data(), b.positions.data(), a.positions.size() * sizeof(double)) == 0);
    REQUIRE(a.step == b.step);
  }
}
#endif
