// Host side of qgml::chain_diagnostics: split R-hat from the chain-summed moments of one coordinate,
// and Geyer's initial monotone sequence estimator (formulas at the top of sample/chain_diagnostics.hpp).
#include "qgml/sample/chain_diagnostics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace qgml::detail::chain_diagnostics {

CoordinateMoments combine_moments(const CoordinateSums& sums, int S, int C) {
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  CoordinateMoments r{nan, nan, nan, nan, nan, false};
  if (sums.non_finite_draws > 0) return r;
  const double count = double(S) * C;
  if (sums.lowest == sums.highest) {
    // All draws equal: the value itself, not a rounded sum of copies divided by their count.
    r.mean = sums.lowest;
    if (count > 1) r.sd = 0;
    return r;
  }
  r.mean = sums.sum_full_means / C;
  if (count > 1) r.sd = std::sqrt(sums.total_ss / (count - 1));
  if (S < 4) return r;

  const int n = S / 2, M = 2 * C;
  const double B = n / double(M - 1) * sums.between;
  r.W = sums.within / (double(M) * (n - 1));
  r.var_plus = (n - 1.0) / n * r.W + B / n;
  if (sums.varying_halves == 0) {
    // Every split chain constant, not all at the same value: the chains have not mixed at all.
    r.r_hat = std::numeric_limits<double>::infinity();
    return r;
  }
  r.r_hat = std::sqrt(r.var_plus / r.W);
  r.needs_ess = true;
  return r;
}

// Stan's compute_effective_sample_size, step by step, on rho_t of the split chains (n draws each):
// Geyer's initial positive sequence over the pairs (rho_{2j}, rho_{2j+1}) until a pair sum is negative
// or the lag reaches n - 3 (the last pair is left as a bias term that reduces the variance for
// antithetic chains), then the initial monotone sequence, then tau.
bool geyer_tau(const std::vector<double>& rho, int n, double& tau, int& stop_lag) {
  const int known = int(rho.size());
  if (known < 2) return false;
  std::vector<double> seq(4, 0.0);  // accepted rho_t, grown as pairs are accepted
  double even = 1.0, odd = rho[1];
  seq[0] = even;
  seq[1] = odd;
  int s = 1;
  while (s < n - 4 && even + odd > 0) {
    if (s + 2 >= known) return false;
    even = rho[s + 1];
    odd = rho[s + 2];
    if (int(seq.size()) < s + 4) seq.resize(2 * (s + 4), 0.0);
    if (even + odd >= 0) {
      seq[s + 1] = even;
      seq[s + 2] = odd;
    }
    s += 2;
  }
  const int max_s = s;
  if (int(seq.size()) < max_s + 2) seq.resize(max_s + 2, 0.0);
  if (even > 0) seq[max_s + 1] = even;
  for (int t = 1; t <= max_s - 3; t += 2) {
    if (seq[t + 1] + seq[t + 2] > seq[t - 1] + seq[t]) {
      seq[t + 1] = (seq[t - 1] + seq[t]) / 2;
      seq[t + 2] = seq[t + 1];
    }
  }
  double sum = 0;
  for (int t = 0; t < max_s; ++t) sum += seq[t];
  tau = -1.0 + 2.0 * sum + seq[max_s + 1];
  stop_lag = max_s;
  return true;
}

double effective_sample_size(double tau, int M, int n) {
  const double total = double(M) * n;
  return total / std::max(tau, 1.0 / std::log10(total));
}

}  // namespace qgml::detail::chain_diagnostics
