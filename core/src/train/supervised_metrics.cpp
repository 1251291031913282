#include "qgml/train/supervised_metrics.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "qgml/common/error.hpp"

namespace qgml {

double roc_auc(const double* score, const double* label, std::size_t n, std::size_t stride) {
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t(0));
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return score[a * stride] < score[b * stride]; });
  // Sum of the mid-ranks (1-based) of the positives: U = R_+ - n_+ (n_+ + 1) / 2, AUC = U / (n_+ n_-).
  double rank_sum = 0, positives = 0;
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i;
    while (j < n && score[order[j] * stride] == score[order[i] * stride]) ++j;
    const double mid = 0.5 * double(i + 1 + j);  // mean of ranks i + 1 .. j
    for (std::size_t k = i; k < j; ++k)
      if (label[order[k] * stride] == 1.0) {
        rank_sum += mid;
        positives += 1;
      }
    i = j;
  }
  const double negatives = double(n) - positives;
  if (positives == 0 || negatives == 0) return std::numeric_limits<double>::quiet_NaN();
  return (rank_sum - positives * (positives + 1) / 2) / (positives * negatives);
}

SupervisedMetrics supervised_metrics(Task task, const double* y_hat, const double* y, std::size_t n,
                                     std::size_t stride) {
  SupervisedMetrics m;
  if (n == 0 || task == Task::unsupervised) return m;
  if (task == Task::classification) {
    std::size_t right = 0;
    for (std::size_t i = 0; i < n; ++i) right += (y_hat[i * stride] > 0) == (y[i * stride] == 1.0) ? 1 : 0;
    m.accuracy = double(right) / double(n);
    m.auc = roc_auc(y_hat, y, n, stride);
    return m;
  }
  // The sums run on the values divided by 2^shift, a power of two at least their largest finite magnitude
  // (exact: ordinary values keep their bits), so that targets near 1e200 give finite metrics, not inf.
  double largest = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (const double v : {y_hat[i * stride], y[i * stride]})
      if (std::isfinite(v)) largest = std::max(largest, std::fabs(v));
  int shift = 0;
  if (largest > 0) std::frexp(largest, &shift);
  const double down1 = std::ldexp(1.0, -shift / 2), down2 = std::ldexp(1.0, -(shift - shift / 2));
  double abs_sum = 0, sq_sum = 0, mean = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double e = y_hat[i * stride] * down1 * down2 - y[i * stride] * down1 * down2;
    abs_sum += std::fabs(e);
    sq_sum += e * e;
    mean += y[i * stride] * down1 * down2;
  }
  mean /= double(n);
  double spread = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double c = y[i * stride] * down1 * down2 - mean;
    spread += c * c;
  }
  m.mae = std::ldexp(abs_sum / double(n), shift);
  m.rmse = std::ldexp(std::sqrt(sq_sum / double(n)), shift);
  m.r2 = spread > 0 ? 1 - sq_sum / spread : std::numeric_limits<double>::quiet_NaN();
  return m;
}

}  // namespace qgml
