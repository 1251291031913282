#include "qgml/geometry/dimension_interval.hpp"

#include <algorithm>
#include <cmath>

#include "qgml/common/error.hpp"
#include "qgml/common/random.hpp"

namespace qgml {

namespace {

// The most frequent value of estimates[t] over the drawn points; ties go to the smaller value.
int mode_of(const std::vector<int>& counts) {
  int best = 0;
  for (std::size_t d = 1; d < counts.size(); ++d)
    if (counts[d] > counts[std::size_t(best)]) best = int(d);
  return best;
}

double percentile(std::vector<int> v, double q) {
  std::sort(v.begin(), v.end());
  const std::size_t k = std::size_t(std::floor(q * double(v.size() - 1) + 0.5));
  return v[std::min(k, v.size() - 1)];
}

double std_dev(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  double mean = 0, sq = 0;
  for (double x : v) mean += x;
  mean /= double(v.size());
  for (double x : v) sq += (x - mean) * (x - mean);
  return std::sqrt(sq / double(v.size() - 1));
}

}  // namespace

DimensionInterval dimension_interval(const std::vector<double>& eigenvalues, const std::vector<bool>& valid,
                                     int ambient_dimension, const DimensionEstimatorSettings& settings, int resamples,
                                     std::uint64_t seed, const std::vector<int>& checked) {
  const int d = ambient_dimension;
  QGML_REQUIRE(d >= 1 && eigenvalues.size() == valid.size() * std::size_t(d),
               "qgml::dimension_interval: " + std::to_string(eigenvalues.size()) + " eigenvalues for " +
                   std::to_string(valid.size()) + " points of D = " + std::to_string(d));
  QGML_REQUIRE(resamples >= 1, "qgml::dimension_interval: resamples must be positive");
  QGML_REQUIRE(checked.empty() || checked.size() == valid.size(),
               "qgml::dimension_interval: " + std::to_string(checked.size()) + " checked estimates for " +
                   std::to_string(valid.size()) + " points");
  std::vector<std::size_t> points;
  for (std::size_t t = 0; t < valid.size(); ++t)
    if (valid[t]) points.push_back(t);
  DimensionInterval r;
  if (points.empty()) return r;
  const std::size_t count = points.size();

  // Per-point estimates of the nine neighbouring rules, rule 4 being the chosen one.
  constexpr int rules = 9;
  std::vector<std::vector<int>> estimate(rules, std::vector<int>(count));
  for (int k = 0; k < rules; ++k) {
    DimensionEstimatorSettings s = settings;
    s.first_gap_exponent = std::clamp(settings.first_gap_exponent + 0.1 * (k / 3 - 1), 0.0, 1.0);
    s.noise_floor = settings.noise_floor * std::pow(3.0, k % 3 - 1);
    const double floor = effective_noise_floor<double>(s);
    for (std::size_t i = 0; i < count; ++i)
      estimate[std::size_t(k)][i] = estimate_dimension_from_descending(&eigenvalues[points[i] * std::size_t(d)], d,
                                                                       s.min_gap_ratio, floor, s.first_gap_exponent);
  }
  if (!checked.empty()) {
    const std::vector<int> chosen = estimate[rules / 2];
    for (int k = 0; k < rules; ++k)
      for (std::size_t i = 0; i < count; ++i)
        estimate[std::size_t(k)][i] = std::clamp(estimate[std::size_t(k)][i] + checked[points[i]] - chosen[i], 0, d);
  }

  const CounterRng rng(seed, 0x64696d);
  const std::size_t r_count = std::size_t(resamples);
  std::vector<int> modes(r_count), counts(std::size_t(d) + 1);
  std::vector<double> means(r_count);
  std::uint64_t counter = 0;
  for (int b = 0; b < resamples; ++b) {
    const int k = int(rng.uniform(counter++) * rules) % rules;
    std::fill(counts.begin(), counts.end(), 0);
    double sum = 0;
    for (std::size_t i = 0; i < count; ++i) {
      const std::size_t pick = std::min(count - 1, std::size_t(rng.uniform(counter++) * double(count)));
      ++counts[std::size_t(estimate[std::size_t(k)][pick])];
      sum += estimate[rules / 2][pick];
    }
    modes[std::size_t(b)] = mode_of(counts);
    means[std::size_t(b)] = sum / double(count);
  }
  r.low = int(percentile(modes, 0.05));
  r.high = int(percentile(modes, 0.95));
  r.error = std_dev(std::vector<double>(modes.begin(), modes.end()));
  r.mean_error = std_dev(means);
  r.resamples = resamples;
  return r;
}

}  // namespace qgml
