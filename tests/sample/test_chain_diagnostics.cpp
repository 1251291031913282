// qgml::chain_diagnostics (sample/chain_diagnostics.hpp): split R-hat and ESS against a direct
// double-loop implementation of the formulas, on chains with known behaviour, bit-identical across
// thread counts and policy chunk sizes, NaN on degenerate input.
#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <vector>

#include "qgml/common/random.hpp"
#include "qgml/common/types.hpp"
#include "qgml/sample/chain_diagnostics.hpp"

#include "test_support.hpp"

using namespace qgml;
using namespace qgml::test;

namespace {

// Draws x[(s * C + c) * D + k] on the host, in double.
struct HostDraws {
  int S = 0, C = 0, D = 0;
  std::vector<double> x;
  HostDraws(int s, int c, int d) : S(s), C(c), D(d), x(std::size_t(s) * c * d, 0.0) {}
  double& operator()(int s, int c, int k) { return x[(std::size_t(s) * C + c) * D + k]; }
  double operator()(int s, int c, int k) const { return x[(std::size_t(s) * C + c) * D + k]; }
};

// The draws rounded to Real: the values the library sees, and those the reference uses.
template <class Real>
HostDraws rounded(HostDraws h) {
  for (double& v : h.x) v = double(Real(v));
  return h;
}

template <class Real, class Space>
Kokkos::View<Real***, Kokkos::LayoutRight, typename Space::memory_space> to_device(const HostDraws& h) {
  Kokkos::View<Real***, Kokkos::LayoutRight, Kokkos::HostSpace> v("qgml::test::draws_host", h.S, h.C, h.D);
  for (int s = 0; s < h.S; ++s)
    for (int c = 0; c < h.C; ++c)
      for (int k = 0; k < h.D; ++k) v(s, c, k) = Real(h(s, c, k));
  return Kokkos::create_mirror_view_and_copy(typename Space::memory_space(), v);
}

template <class Real, class Space>
ChainDiagnostics diagnose(const HostDraws& h, int policy_chunk_size = 0) {
  const Space exec;
  return chain_diagnostics(exec, to_device<Real, Space>(h), policy_chunk_size);
}

// AR(1) chains x_{s+1} = rho x_s + sqrt(1 - rho^2) e_s started in the stationary N(0, 1); coordinate k
// uses rho[k]; chain c is shifted by shift(c, s, k).
HostDraws ar1_chains(int S, int C, const std::vector<double>& rho, std::uint64_t seed,
                     const std::function<double(int, int, int)>& shift = nullptr) {
  const int D = int(rho.size());
  HostDraws h(S, C, D);
  for (int c = 0; c < C; ++c)
    for (int k = 0; k < D; ++k) {
      const CounterRng rng(seed, std::uint64_t(c) * D + k);
      double x = rng.normal(0);
      for (int s = 0; s < S; ++s) {
        h(s, c, k) = x + (shift ? shift(c, s, k) : 0.0);
        x = rho[k] * x + std::sqrt(1 - rho[k] * rho[k]) * rng.normal(std::uint64_t(s) + 1);
      }
    }
  return h;
}

// ---- Reference: the formulas of BDA3 11.4-11.5 and Stan's ESS, one coordinate at a time, all lags by a
// double loop. split = false uses the whole chains (the plain R-hat).
struct Reference {
  double r_hat, ess, mean, sd;
};

Reference reference(const HostDraws& h, int k, bool split = true) {
  double all_mean = 0, ss = 0;
  for (int i = 0; i < h.S; ++i)
    for (int c = 0; c < h.C; ++c) all_mean += h(i, c, k) / (double(h.S) * h.C);
  for (int i = 0; i < h.S; ++i)
    for (int c = 0; c < h.C; ++c) ss += (h(i, c, k) - all_mean) * (h(i, c, k) - all_mean);
  const double sd = std::sqrt(ss / (double(h.S) * h.C - 1));
  const int n = split ? h.S / 2 : h.S;
  if (n < 2) return {std::nan(""), std::nan(""), all_mean, sd};

  std::vector<std::vector<double>> chains;
  for (int c = 0; c < h.C; ++c) {
    std::vector<double> first, second;
    for (int i = 0; i < n; ++i) first.push_back(h(i, c, k));
    chains.push_back(first);
    if (split) {
      for (int i = h.S - n; i < h.S; ++i) second.push_back(h(i, c, k));
      chains.push_back(second);
    }
  }
  const int M = int(chains.size());
  std::vector<double> mean(M, 0.0), var(M, 0.0);
  for (int m = 0; m < M; ++m) {
    for (double v : chains[m]) mean[m] += v;
    mean[m] /= n;
    for (double v : chains[m]) var[m] += (v - mean[m]) * (v - mean[m]);
    var[m] /= n - 1;
  }
  double grand = 0, B = 0, W = 0;
  for (int m = 0; m < M; ++m) grand += mean[m] / M;
  for (int m = 0; m < M; ++m) B += (mean[m] - grand) * (mean[m] - grand);
  B *= double(n) / (M - 1);
  for (int m = 0; m < M; ++m) W += var[m] / M;
  const double var_plus = (n - 1.0) / n * W + B / n;

  // rho_t = 1 - (W - mean_m acov_m(t)) / var+, acov_m(t) = 1/n sum_i (x_i - mean_m)(x_{i+t} - mean_m).
  std::vector<double> rho(n, 0.0);
  for (int t = 0; t < n; ++t) {
    double acov = 0;
    for (int m = 0; m < M; ++m) {
      double a = 0;
      for (int i = 0; i + t < n; ++i) a += (chains[m][i] - mean[m]) * (chains[m][i + t] - mean[m]);
      acov += a / n / M;
    }
    rho[t] = 1 - (W - acov) / var_plus;
  }
  rho[0] = 1;
  // Geyer's initial positive sequence (pairs until a negative pair sum, at most to lag n - 3), the
  // initial monotone sequence, Stan's tau with the last even lag as bias term, ESS capped.
  std::vector<double> r(n + 2, 0.0);
  r[0] = 1;
  r[1] = rho[1];
  double even = 1, odd = rho[1];
  int s = 1;
  while (s < n - 4 && even + odd > 0) {
    even = rho[s + 1];
    odd = rho[s + 2];
    if (even + odd >= 0) r[s + 1] = even, r[s + 2] = odd;
    s += 2;
  }
  if (even > 0) r[s + 1] = even;
  for (int t = 1; t <= s - 3; t += 2)
    if (r[t + 1] + r[t + 2] > r[t - 1] + r[t]) r[t + 1] = r[t + 2] = (r[t - 1] + r[t]) / 2;
  double tau = -1 + r[s + 1];
  for (int t = 0; t < s; ++t) tau += 2 * r[t];
  const double total = double(M) * n;

  return {std::sqrt(var_plus / W), std::min(total / tau, total * std::log10(total)), all_mean, sd};
}

bool close(double a, double b, double rel) { return std::abs(a - b) <= rel * std::max(std::abs(b), 1e-300); }

}  // namespace

TEMPLATE_TEST_CASE("chain diagnostics match a direct double-loop implementation of the formulas", "[diagnostics]",
                   QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  // Odd and even S, one chunk of chains and several (C > 32), coordinates with short and long memory,
  // negative autocorrelation (antithetic chains), and chains with different means.
  struct Case {
    int S, C;
    std::vector<double> rho;
  };
  int max_lag = 0;
  for (const Case& cs : {Case{101, 5, {0.0, 0.6, 0.95, -0.5}}, Case{200, 3, {0.3, 0.99}}, Case{1000, 2, {0.995}},
                         Case{40, 70, {0.5, -0.8}}, Case{9, 4, {0.2}}, Case{4, 2, {0.1}}}) {
    const auto h =
        rounded<Real>(ar1_chains(cs.S, cs.C, cs.rho, 11, [](int c, int, int k) { return k == 1 ? 0.05 * c : 0.0; }));
    const auto d = diagnose<Real, Space>(h);
    REQUIRE(d.draws == cs.S);
    REQUIRE(d.chains == cs.C);
    for (int k = 0; k < h.D; ++k) {
      INFO("S = " << cs.S << ", C = " << cs.C << ", k = " << k);
      const auto ref = reference(h, k);
      CHECK(close(d.r_hat[k], ref.r_hat, 1e-12));
      CHECK(close(d.ess[k], ref.ess, 1e-12));
      CHECK(close(d.mean[k], ref.mean, 1e-12));
      CHECK(close(d.sd[k], ref.sd, 1e-12));
    }
    max_lag = std::max(max_lag, *std::max_element(d.geyer_lag.begin(), d.geyer_lag.end()));
  }
  // Some sequence ran past the first lag blocks (32 and 64 lags).
  CHECK(max_lag > 96);
}

TEMPLATE_TEST_CASE("independent N(0,1) chains: R-hat near 1, ESS near the draw count", "[diagnostics]",
                   QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const int S = 2000, C = 16;
  const auto h = rounded<Real>(ar1_chains(S, C, {0.0, 0.0, 0.0}, 5));
  const auto d = diagnose<Real, Space>(h);
  for (int k = 0; k < h.D; ++k) {
    INFO("k = " << k << ", R-hat " << d.r_hat[k] << ", ESS " << d.ess[k]);
    CHECK(std::abs(d.r_hat[k] - 1) < 0.01);
    CHECK(std::abs(d.ess[k] - C * S) < 0.1 * C * S);
    CHECK(std::abs(d.mean[k]) < 0.05);
    CHECK(std::abs(d.sd[k] - 1) < 0.05);
    // Only a few lags are summed for independent draws.
    CHECK(d.geyer_lag[k] > 0);
    CHECK(d.geyer_lag[k] < 20);
  }
}

TEMPLATE_TEST_CASE("AR(1) chains with rho = 0.9: ESS = C S (1 - rho) / (1 + rho)", "[diagnostics]", QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const int S = 4000, C = 16;
  const double rho = 0.9;
  const auto h = rounded<Real>(ar1_chains(S, C, {rho, rho}, 23));
  const auto d = diagnose<Real, Space>(h);
  const double expected = double(C) * S * (1 - rho) / (1 + rho);
  for (int k = 0; k < h.D; ++k) {
    INFO("k = " << k << ", ESS " << d.ess[k] << ", expected " << expected);
    CHECK(std::abs(d.ess[k] - expected) < 0.15 * expected);
    CHECK(std::abs(d.r_hat[k] - 1) < 0.02);
    // The lags summed grow with the correlation time, far below the chain length.
    CHECK(d.geyer_lag[k] > 10);
    CHECK(d.geyer_lag[k] < S / 8);
  }
}

TEMPLATE_TEST_CASE("chains with different means: R-hat > 1.5", "[diagnostics]", QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const auto h = rounded<Real>(ar1_chains(1000, 8, {0.0, 0.5}, 31, [](int c, int, int) { return double(c); }));
  const auto d = diagnose<Real, Space>(h);
  for (int k = 0; k < h.D; ++k) {
    INFO("k = " << k << ", R-hat " << d.r_hat[k]);
    CHECK(d.r_hat[k] > 1.5);
  }
}

TEMPLATE_TEST_CASE("a drift within every chain: split R-hat > 1.1 where whole-chain R-hat is ~1", "[diagnostics]",
                   QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const int S = 2000, C = 8;
  // Every chain drifts linearly from -2 to +2: the chains agree with each other, the halves do not.
  const auto h = rounded<Real>(
      ar1_chains(S, C, {0.0, 0.3}, 37, [](int, int s, int) { return 4.0 * (double(s) / (S - 1) - 0.5); }));
  const auto d = diagnose<Real, Space>(h);
  for (int k = 0; k < h.D; ++k) {
    const double whole = reference(h, k, false).r_hat;
    INFO("k = " << k << ", split R-hat " << d.r_hat[k] << ", whole-chain R-hat " << whole);
    CHECK(d.r_hat[k] > 1.1);
    CHECK(std::abs(whole - 1) < 0.02);
  }
}

TEMPLATE_TEST_CASE("chain diagnostics are bit-identical across runs, thread counts and policy chunk sizes",
                   "[diagnostics]", QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  // 70 chains: three chunks of the chain sums.
  const auto h = ar1_chains(301, 70, {0.0, 0.9, -0.4}, 41, [](int c, int, int) { return 0.01 * c; });
  const auto first = diagnose<Real, Space>(h);
  for (int chunk : {0, 1, 3, 1000}) {
    INFO("policy chunk size " << chunk);
    const auto again = diagnose<Real, Space>(h, chunk);
    CHECK(same_bits(again.r_hat, first.r_hat));
    CHECK(same_bits(again.ess, first.ess));
    CHECK(same_bits(again.mean, first.mean));
    CHECK(same_bits(again.sd, first.sd));
  }
#if defined(KOKKOS_ENABLE_SERIAL)
  // One thread against the host space under test with its thread count (a GPU compiles the same sums
  // with fused multiply-adds, so its bits may differ from the host's).
  if constexpr (is_host_space_v<Space>) {
    const auto serial = diagnose<Real, Kokkos::Serial>(h);
    CHECK(same_bits(serial.r_hat, first.r_hat));
    CHECK(same_bits(serial.ess, first.ess));
    CHECK(same_bits(serial.mean, first.mean));
    CHECK(same_bits(serial.sd, first.sd));
  }
#endif
  for (int k = 0; k < h.D; ++k) CHECK(std::isfinite(first.ess[k]));
}

TEMPLATE_TEST_CASE("degenerate draws give NaN", "[diagnostics]", QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;

  SECTION("fewer than 4 draws: R-hat and ESS NaN, mean and sd given") {
    for (int S : {1, 2, 3}) {
      const auto h = rounded<Real>(ar1_chains(S, 4, {0.0}, 43));
      const auto d = diagnose<Real, Space>(h);
      CHECK(std::isnan(d.r_hat[0]));
      CHECK(std::isnan(d.ess[0]));
      CHECK(close(d.mean[0], reference(h, 0).mean, 1e-12));
      CHECK(std::isfinite(d.sd[0]));
    }
  }
  SECTION("no draws at all") {
    const auto d = diagnose<Real, Space>(HostDraws(0, 4, 2));
    REQUIRE(d.r_hat.size() == 2);
    CHECK(std::isnan(d.r_hat[1]));
    CHECK(std::isnan(d.ess[1]));
    CHECK(std::isnan(d.mean[1]));
  }
  SECTION("a coordinate constant over all draws") {
    // 0.1 is not exact in binary: a sum of copies divided by the count need not give it back.
    auto h = rounded<Real>(ar1_chains(100, 40, {0.0, 0.0}, 47));
    for (int s = 0; s < h.S; ++s)
      for (int c = 0; c < h.C; ++c) h(s, c, 0) = double(Real(0.1));
    const auto d = diagnose<Real, Space>(h);
    CHECK(std::isnan(d.r_hat[0]));
    CHECK(std::isnan(d.ess[0]));
    CHECK(d.mean[0] == double(Real(0.1)));
    CHECK(d.sd[0] == 0.0);
    CHECK(std::isfinite(d.r_hat[1]));
    CHECK(std::isfinite(d.ess[1]));
  }
  SECTION("chains stuck at different values: R-hat infinite, ESS NaN") {
    HostDraws h(50, 3, 1);
    for (int s = 0; s < h.S; ++s)
      for (int c = 0; c < h.C; ++c) h(s, c, 0) = c;
    const auto d = diagnose<Real, Space>(h);
    CHECK(std::isinf(d.r_hat[0]));
    CHECK(std::isnan(d.ess[0]));
  }
  SECTION("a non-finite draw") {
    for (double bad : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
      auto h = ar1_chains(100, 4, {0.0, 0.5}, 53);
      h(37, 2, 1) = bad;
      const auto d = diagnose<Real, Space>(h);
      CHECK(std::isnan(d.r_hat[1]));
      CHECK(std::isnan(d.ess[1]));
      CHECK(std::isnan(d.mean[1]));
      CHECK(std::isnan(d.sd[1]));
      CHECK(std::isfinite(d.r_hat[0]));
      CHECK(std::isfinite(d.ess[0]));
    }
  }
}
