// Convergence diagnostics of MCMC output, per coordinate: split R-hat and the effective sample size.
//
// The draws are a View draws(s, c, k): s = draw (0..S-1, after warm-up and thinning), c = chain
// (0..C-1), k = coordinate (0..D-1), float or double; every result is double.
//
// Split chains (BDA3 section 11.4; Vehtari et al. 2021, the classic non-rank-normalised version): each
// chain is cut into its first n = floor(S/2) and its last n draws (the middle draw is dropped when S is
// odd), M = 2C chains of n draws. With the split-chain means mean_m, their mean, and variances var_m
// (denominator n - 1):
//   B = n/(M-1) sum_m (mean_m - mean)^2,   W = 1/M sum_m var_m,   var+ = (n-1)/n W + B/n,
//   R-hat = sqrt(var+ / W).
//
// Effective sample size (BDA3 section 11.5, Stan reference manual "Effective sample size", Stan's
// compute_split_effective_sample_size): autocovariances of the SPLIT chains,
//   acov_m(t) = 1/n sum_{i=0}^{n-1-t} (x_{m,i} - mean_m)(x_{m,i+t} - mean_m),
//   rho_t = 1 - (W - 1/M sum_m acov_m(t)) / var+   (rho_0 = 1),
// Geyer's initial positive sequence on the pair sums P_j = rho_{2j} + rho_{2j+1} (stopping at the first
// negative pair sum or at lag n - 3), made monotone (a pair sum larger than the one before is replaced
// by it), then Stan's antithetic-bias term: tau = -1 + 2 sum_{t < T} rho_t + rho_even, with T the lag
// where the sequence stopped and rho_even the even-lag autocorrelation of the last pair looked at when it
// is positive, and
//   ESS = M n / max(tau, 1 / log10(M n))   (so ESS is capped at M n log10(M n), as Stan does).
// Autocovariances are summed directly, lag block after lag block (32, 64, 128, ... lags) until every
// coordinate's sequence has stopped: O(S x lags used) work, no FFT.
//
// mean and sd are the mean and the standard deviation (denominator SC - 1) of all S C draws, the middle
// draw included.
//
// Degenerate input, per coordinate:
//   - S < 4: R-hat and ESS NaN (mean and sd still given);
//   - a coordinate that is constant across all draws of all chains: R-hat and ESS NaN;
//   - every split chain constant but not all equal (W = 0 < B, stuck chains): R-hat +inf, ESS NaN;
//   - any non-finite draw of the coordinate: R-hat, ESS, mean and sd NaN.
//
// Parallel work and determinism: one kernel over (chain, coordinate) pairs computes the per-chain
// moments; sums over chains run in fixed chunks of 32 chains (one thread per chunk and coordinate, or
// per chunk, lag and coordinate for the autocovariances, chains in order), then over the chunks in
// order, so the results are bit-identical for any thread count, backend schedule and policy chunk size.
// The host only combines the chain-summed numbers of each coordinate (one set per lag block) and runs
// Geyer's sequence. Everything runs on `exec`, which is the only instance fenced.
#pragma once

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "qgml/common/kokkos_compat.hpp"

namespace qgml {

struct ChainDiagnostics {
  std::vector<double> r_hat;   // split R-hat per coordinate
  std::vector<double> ess;     // effective sample size per coordinate (of M n = 2C floor(S/2) draws)
  std::vector<double> mean;    // mean of all draws per coordinate
  std::vector<double> sd;      // standard deviation of all draws per coordinate
  std::vector<int> geyer_lag;  // lag where Geyer's sequence stopped (0 where ESS is NaN)
  int draws = 0;               // S
  int chains = 0;              // C
};

namespace detail::chain_diagnostics {

// Chains summed sequentially by one thread; a fixed number, so the summation order is fixed.
inline constexpr int chains_per_chunk = 32;
// Largest lag block, and the most partial sums (chunks x lags x coordinates) one block may hold.
inline constexpr int max_lag_block = 1024;
inline constexpr std::int64_t max_lag_partials = std::int64_t(1) << 22;

// Per-chain statistics, chain_stats(c, k, q).
enum ChainStat : int {
  mean_first = 0,  // mean of the first half (split chain m = 2c)
  mean_second,     // mean of the second half (split chain m = 2c + 1)
  ss_first,        // sum of squared deviations from the half's mean
  ss_second,
  constant_first,  // 1 when the half's draws are all equal, else 0
  constant_second,
  full_mean,  // mean of the whole chain (middle draw included)
  full_ss,    // sum of squared deviations of the whole chain from full_mean
  full_min,
  full_max,
  non_finite,  // number of non-finite draws of the chain
  chain_stat_count
};

// Chain-summed statistics of stage one, totals(k, q).
enum FirstTotal : int {
  sum_half_means = 0,  // sum_m mean_m
  sum_full_means,      // sum_c full_mean_c
  lowest,              // min over all draws
  highest,             // max over all draws
  varying_halves,      // number of split chains that are not constant
  non_finite_draws,
  first_total_count
};

// Chain-summed statistics of stage two, totals(k, q).
enum SecondTotal : int {
  between = 0,  // sum_m (mean_m - mean)^2
  within,       // sum_m ss_m
  total_ss,     // sum_c [full_ss_c + S (full_mean_c - full mean)^2]
  second_total_count
};

inline constexpr double largest_double = 1.7976931348623157e308;

// Moments of chain c, coordinate k: two passes over its S draws.
template <class DrawsView, class StatsView>
struct ChainMoments {
  DrawsView draws;
  StatsView stats;
  int S, C, n;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i) const {
    const int c = int(i % C);
    const int k = int(i / C);
    const int begin_second = S - n;
    double sum[2] = {0, 0}, total = 0, lo[2] = {largest_double, largest_double},
           hi[2] = {-largest_double, -largest_double}, all_lo = largest_double, all_hi = -largest_double;
    int bad = 0;
    for (int s = 0; s < S; ++s) {
      const double v = double(draws(s, c, k));
      if (!math::isfinite(v)) ++bad;
      total += v;
      all_lo = v < all_lo ? v : all_lo;
      all_hi = v > all_hi ? v : all_hi;
      const int h = s < n ? 0 : (s >= begin_second ? 1 : -1);
      if (h >= 0) {
        sum[h] += v;
        lo[h] = v < lo[h] ? v : lo[h];
        hi[h] = v > hi[h] ? v : hi[h];
      }
    }
    // A constant half gets its value as mean exactly, so that its deviations are exactly zero.
    double mean[2];
    for (int h = 0; h < 2; ++h) mean[h] = n == 0 ? 0.0 : (lo[h] == hi[h] ? lo[h] : sum[h] / n);
    const double fmean = all_lo == all_hi ? all_lo : total / S;
    double ss[2] = {0, 0}, fss = 0;
    for (int s = 0; s < S; ++s) {
      const double v = double(draws(s, c, k));
      fss += (v - fmean) * (v - fmean);
      const int h = s < n ? 0 : (s >= begin_second ? 1 : -1);
      if (h >= 0) ss[h] += (v - mean[h]) * (v - mean[h]);
    }
    stats(c, k, mean_first) = mean[0];
    stats(c, k, mean_second) = mean[1];
    stats(c, k, ss_first) = ss[0];
    stats(c, k, ss_second) = ss[1];
    stats(c, k, constant_first) = n > 0 && lo[0] == hi[0] ? 1.0 : 0.0;
    stats(c, k, constant_second) = n > 0 && lo[1] == hi[1] ? 1.0 : 0.0;
    stats(c, k, full_mean) = fmean;
    stats(c, k, full_ss) = fss;
    stats(c, k, full_min) = all_lo;
    stats(c, k, full_max) = all_hi;
    stats(c, k, non_finite) = double(bad);
  }
};

// Stage one: chain sums of the means, min, max and counts, for column j = coordinate k.
template <class StatsView>
struct FirstTerms {
  static constexpr int count = first_total_count;
  StatsView stats;

  KOKKOS_INLINE_FUNCTION void init(double* acc) const {
    for (int q = 0; q < count; ++q) acc[q] = 0;
    acc[lowest] = largest_double;
    acc[highest] = -largest_double;
  }
  KOKKOS_INLINE_FUNCTION void add(const int c, const int k, double* acc) const {
    acc[sum_half_means] += stats(c, k, mean_first);
    acc[sum_half_means] += stats(c, k, mean_second);
    acc[sum_full_means] += stats(c, k, full_mean);
    const double lo = stats(c, k, full_min), hi = stats(c, k, full_max);
    acc[lowest] = lo < acc[lowest] ? lo : acc[lowest];
    acc[highest] = hi > acc[highest] ? hi : acc[highest];
    acc[varying_halves] += 2.0 - stats(c, k, constant_first) - stats(c, k, constant_second);
    acc[non_finite_draws] += stats(c, k, non_finite);
  }
  KOKKOS_INLINE_FUNCTION void join(double* acc, const double* part) const {
    acc[sum_half_means] += part[sum_half_means];
    acc[sum_full_means] += part[sum_full_means];
    acc[varying_halves] += part[varying_halves];
    acc[non_finite_draws] += part[non_finite_draws];
    acc[lowest] = part[lowest] < acc[lowest] ? part[lowest] : acc[lowest];
    acc[highest] = part[highest] > acc[highest] ? part[highest] : acc[highest];
  }
};

// Stage two: chain sums of squared deviations, given the grand means of stage one.
template <class StatsView, class TotalsView>
struct SecondTerms {
  static constexpr int count = second_total_count;
  StatsView stats;
  TotalsView first;  // stage one's totals(k, q)
  int S, C;

  KOKKOS_INLINE_FUNCTION void init(double* acc) const {
    for (int q = 0; q < count; ++q) acc[q] = 0;
  }
  KOKKOS_INLINE_FUNCTION void add(const int c, const int k, double* acc) const {
    const double half_mean = first(k, sum_half_means) / (2.0 * C);
    const double grand_mean = first(k, sum_full_means) / C;
    const double d0 = stats(c, k, mean_first) - half_mean, d1 = stats(c, k, mean_second) - half_mean;
    acc[between] += d0 * d0;
    acc[between] += d1 * d1;
    acc[within] += stats(c, k, ss_first);
    acc[within] += stats(c, k, ss_second);
    const double df = stats(c, k, full_mean) - grand_mean;
    acc[total_ss] += stats(c, k, full_ss) + S * (df * df);
  }
  KOKKOS_INLINE_FUNCTION void join(double* acc, const double* part) const {
    for (int q = 0; q < count; ++q) acc[q] += part[q];
  }
};

// Autocovariance sums n acov_m(t) of both halves of chain c for column j = (lag t0 + l, coordinate k),
// j = l D + k; coordinates whose Geyer sequence has stopped are skipped.
template <class DrawsView, class StatsView, class ActiveView>
struct LagTerms {
  static constexpr int count = 1;
  DrawsView draws;
  StatsView stats;
  ActiveView active;
  int S, D, n, t0;

  KOKKOS_INLINE_FUNCTION void init(double* acc) const { acc[0] = 0; }
  KOKKOS_INLINE_FUNCTION void add(const int c, const int j, double* acc) const {
    const int k = j % D;
    if (!active(k)) return;
    const int t = t0 + j / D;
    for (int h = 0; h < 2; ++h) {
      const int begin = h == 0 ? 0 : S - n;
      const double mu = stats(c, k, h == 0 ? mean_first : mean_second);
      double sum = 0;
      for (int i = begin; i < begin + n - t; ++i)
        sum += (double(draws(i, c, k)) - mu) * (double(draws(i + t, c, k)) - mu);
      acc[0] += sum;
    }
  }
  KOKKOS_INLINE_FUNCTION void join(double* acc, const double* part) const { acc[0] += part[0]; }
};

// partial(b, j, q) = sum over the chains of chunk b, in order, of the terms of column j.
template <class Terms, class PartialView>
struct ChunkSums {
  Terms terms;
  PartialView partial;
  int chains, columns;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i) const {
    const int b = int(i / columns);
    const int j = int(i % columns);
    double acc[Terms::count];
    terms.init(acc);
    const int end = (b + 1) * chains_per_chunk < chains ? (b + 1) * chains_per_chunk : chains;
    for (int c = b * chains_per_chunk; c < end; ++c) terms.add(c, j, acc);
    for (int q = 0; q < Terms::count; ++q) partial(b, j, q) = acc[q];
  }
};

// totals(j, q) = the chunks' partial sums of column j joined in chunk order.
template <class Terms, class PartialView, class TotalsView>
struct ChunkTotals {
  Terms terms;
  PartialView partial;
  TotalsView totals;
  int chunks;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t j) const {
    double acc[Terms::count], part[Terms::count];
    terms.init(acc);
    for (int b = 0; b < chunks; ++b) {
      for (int q = 0; q < Terms::count; ++q) part[q] = partial(b, j, q);
      terms.join(acc, part);
    }
    for (int q = 0; q < Terms::count; ++q) totals(j, q) = acc[q];
  }
};

template <class ExecSpace>
Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>> policy(const ExecSpace& exec, std::int64_t count,
                                                                       int chunk_size) {
  Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>> p(exec, 0, count);
  if (chunk_size > 0) p.set_chunk_size(chunk_size);
  return p;
}

// totals(j, q) for j < columns: the terms summed over all chains, in a fixed order.
template <class ExecSpace, class Terms, class PartialView, class TotalsView>
void sum_over_chains(const ExecSpace& exec, const std::string& label, const Terms& terms, int chains, int columns,
                     const PartialView& partial, const TotalsView& totals, int chunk_size) {
  const int chunks = (chains + chains_per_chunk - 1) / chains_per_chunk;
  Kokkos::parallel_for("qgml::chain_diagnostics::" + label + "_chunks",
                       policy(exec, std::int64_t(chunks) * columns, chunk_size),
                       ChunkSums<Terms, PartialView>{terms, partial, chains, columns});
  Kokkos::parallel_for("qgml::chain_diagnostics::" + label + "_totals", policy(exec, columns, chunk_size),
                       ChunkTotals<Terms, PartialView, TotalsView>{terms, partial, totals, chunks});
}

// The chain-summed numbers of one coordinate, combined on the host.
struct CoordinateSums {
  double sum_half_means, sum_full_means, lowest, highest, varying_halves, non_finite_draws;
  double between, within, total_ss;
};

// Split R-hat, mean, sd and the quantities ESS needs, for one coordinate.
struct CoordinateMoments {
  double r_hat, mean, sd;
  double W, var_plus;  // within-chain variance and var+ of the split chains
  bool needs_ess;      // false: ESS is NaN (degenerate coordinate)
};
CoordinateMoments combine_moments(const CoordinateSums& sums, int S, int C);

// Geyer's initial monotone sequence estimator of tau from rho_0..rho_{T-1} (rho[0] = 1) of split chains
// of n draws. Returns false when it needs a lag >= T (compute more lags and call again).
bool geyer_tau(const std::vector<double>& rho, int n, double& tau, int& stop_lag);

// ESS = M n / max(tau, 1 / log10(M n)).
double effective_sample_size(double tau, int M, int n);

}  // namespace detail::chain_diagnostics

// Split R-hat, ESS, mean and sd of every coordinate of draws(s, c, k) (see the top of this file).
// policy_chunk_size: chunk size of the kernels' RangePolicy (0: Kokkos' choice); the results do not
// depend on it.
template <class ExecSpace, class DrawsView>
ChainDiagnostics chain_diagnostics(const ExecSpace& exec, const DrawsView& draws, int policy_chunk_size = 0) {
  namespace cd = detail::chain_diagnostics;
  static_assert(Kokkos::is_view<DrawsView>::value && DrawsView::rank == 3, "draws must be a View draws(s, c, k)");
  using value_type = std::remove_const_t<typename DrawsView::value_type>;
  static_assert(std::is_same_v<value_type, double> || std::is_same_v<value_type, float>,
                "draws must hold float or double");
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, typename DrawsView::memory_space>::accessible,
                "draws must be accessible from the execution space");
  using memory_space = typename ExecSpace::memory_space;
  using Stats = Kokkos::View<double***, Kokkos::LayoutRight, memory_space>;
  using Totals = Kokkos::View<double**, Kokkos::LayoutRight, memory_space>;
  using Active = Kokkos::View<int*, memory_space>;

  const int S = int(draws.extent(0)), C = int(draws.extent(1)), D = int(draws.extent(2));
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  ChainDiagnostics result;
  result.draws = S;
  result.chains = C;
  result.r_hat.assign(D, nan);
  result.ess.assign(D, nan);
  result.mean.assign(D, nan);
  result.sd.assign(D, nan);
  result.geyer_lag.assign(D, 0);
  if (S == 0 || C == 0 || D == 0) return result;
  ScopedRegion region("qgml::chain_diagnostics");

  const int n = S / 2, M = 2 * C;
  const int chunks = (C + cd::chains_per_chunk - 1) / cd::chains_per_chunk;
  Stats stats(Kokkos::view_alloc(exec, std::string("qgml::chain_diagnostics::chain_stats")), C, D,
              int(cd::chain_stat_count));
  Stats partial(Kokkos::view_alloc(exec, std::string("qgml::chain_diagnostics::partial")), chunks, D,
                int(cd::first_total_count));
  Totals first(Kokkos::view_alloc(exec, std::string("qgml::chain_diagnostics::first_totals")), D,
               int(cd::first_total_count));
  Totals second(Kokkos::view_alloc(exec, std::string("qgml::chain_diagnostics::second_totals")), D,
                int(cd::second_total_count));

  Kokkos::parallel_for("qgml::chain_diagnostics::chain_moments",
                       cd::policy(exec, std::int64_t(C) * D, policy_chunk_size),
                       cd::ChainMoments<DrawsView, Stats>{draws, stats, S, C, n});
  cd::sum_over_chains(exec, "first", cd::FirstTerms<Stats>{stats}, C, D, partial, first, policy_chunk_size);
  cd::sum_over_chains(exec, "second", cd::SecondTerms<Stats, Totals>{stats, first, S, C}, C, D, partial, second,
                      policy_chunk_size);
  auto first_host = Kokkos::create_mirror_view(first);
  auto second_host = Kokkos::create_mirror_view(second);
  Kokkos::deep_copy(exec, first_host, first);
  Kokkos::deep_copy(exec, second_host, second);
  fence(exec, "qgml::chain_diagnostics::moments");

  std::vector<cd::CoordinateMoments> moments(D);
  auto active = Active(Kokkos::view_alloc(exec, std::string("qgml::chain_diagnostics::active")), D);
  auto active_host = Kokkos::create_mirror_view(active);
  int active_count = 0;
  for (int k = 0; k < D; ++k) {
    const cd::CoordinateSums sums{
        first_host(k, cd::sum_half_means), first_host(k, cd::sum_full_means), first_host(k, cd::lowest),
        first_host(k, cd::highest),        first_host(k, cd::varying_halves), first_host(k, cd::non_finite_draws),
        second_host(k, cd::between),       second_host(k, cd::within),        second_host(k, cd::total_ss)};
    moments[k] = cd::combine_moments(sums, S, C);
    result.r_hat[k] = moments[k].r_hat;
    result.mean[k] = moments[k].mean;
    result.sd[k] = moments[k].sd;
    active_host(k) = moments[k].needs_ess ? 1 : 0;
    active_count += active_host(k);
  }
  if (active_count == 0) return result;

  // Autocovariances in lag blocks of 32, 64, ... lags (at most max_lag_block and max_lag_partials
  // partial sums, at most up to lag n - 1) until every coordinate's Geyer sequence has stopped.
  const int block_capacity = int(std::max<std::int64_t>(
      1, std::min<std::int64_t>({cd::max_lag_block, n - 1, cd::max_lag_partials / (std::int64_t(chunks) * D)})));
  Stats lag_partial(Kokkos::view_alloc(exec, std::string("qgml::chain_diagnostics::lag_partial")), chunks,
                    std::int64_t(block_capacity) * D, 1);
  Totals lag_totals(Kokkos::view_alloc(exec, std::string("qgml::chain_diagnostics::lag_totals")),
                    std::int64_t(block_capacity) * D, 1);
  auto lag_host = Kokkos::create_mirror_view(lag_totals);
  std::vector<std::vector<double>> rho(D, std::vector<double>{1.0});
  int t0 = 1, block = std::min(32, block_capacity);
  while (active_count > 0 && t0 < n) {
    block = std::min(block, n - t0);
    Kokkos::deep_copy(exec, active, active_host);
    using Terms = cd::LagTerms<DrawsView, Stats, Active>;
    cd::sum_over_chains(exec, "autocovariance", Terms{draws, stats, active, S, D, n, t0}, C, block * D, lag_partial,
                        lag_totals, policy_chunk_size);
    Kokkos::deep_copy(exec, lag_host, lag_totals);
    fence(exec, "qgml::chain_diagnostics::autocovariance");
    for (int k = 0; k < D; ++k) {
      if (!active_host(k)) continue;
      const auto& m = moments[k];
      for (int l = 0; l < block; ++l)
        rho[k].push_back(1.0 - (m.W - lag_host(std::int64_t(l) * D + k, 0) / (double(M) * n)) / m.var_plus);
      double tau = 0;
      int stop_lag = 0;
      if (cd::geyer_tau(rho[k], n, tau, stop_lag)) {
        result.ess[k] = cd::effective_sample_size(tau, M, n);
        result.geyer_lag[k] = stop_lag;
        active_host(k) = 0;
        --active_count;
      }
    }
    t0 += block;
    block = std::min(2 * block, block_capacity);
  }
  return result;
}

}  // namespace qgml
