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

SupervisedMetrics supervised_metrics(Task task, SupervisedLoss loss, int outputs, const double* rows, std::size_t n) {
  const std::size_t stride = std::size_t(outputs + target_columns(loss, outputs));
  if (outputs == 1) return supervised_metrics(task, rows, rows + 1, n, stride);
  SupervisedMetrics m;
  if (n == 0 || task == Task::unsupervised) return m;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (loss == SupervisedLoss::softmax) {
    std::vector<double> p(n * std::size_t(outputs)), member(n);
    std::vector<double> right(std::size_t(outputs), 0), count(std::size_t(outputs), 0);
    std::size_t correct = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double* r = rows + i * stride;
      int best = 0;
      double top = r[0];
      for (int c = 1; c < outputs; ++c)
        if (r[c] > top) top = r[c], best = c;
      double sum = 0;
      for (int c = 0; c < outputs; ++c) sum += std::exp(r[c] - top);
      for (int c = 0; c < outputs; ++c) p[i * outputs + c] = std::exp(r[c] - top) / sum;
      const double label = r[outputs];
      const bool valid = label >= 0 && label < outputs && label == std::floor(label);
      if (valid) {
        count[std::size_t(label)] += 1;
        if (best == int(label)) {
          ++correct;
          right[std::size_t(label)] += 1;
        }
      }
    }
    m.accuracy = double(correct) / double(n);
    // The macro average is NaN when a class has no point (or every point), as the binary AUC is.
    double auc_sum = 0;
    std::vector<double> score(n);
    for (int c = 0; c < outputs; ++c) {
      for (std::size_t i = 0; i < n; ++i) {
        score[i] = p[i * std::size_t(outputs) + std::size_t(c)];
        member[i] = rows[i * stride + std::size_t(outputs)] == double(c) ? 1.0 : 0.0;
      }
      auc_sum += roc_auc(score.data(), member.data(), n);
    }
    m.auc = auc_sum / outputs;
    for (int c = 0; c < outputs; ++c)
      m.per_output.push_back(count[std::size_t(c)] > 0 ? right[std::size_t(c)] / count[std::size_t(c)] : nan);
    return m;
  }
  double abs_sum = 0, sq_sum = 0, r2_sum = 0;
  for (int c = 0; c < outputs; ++c) {
    const SupervisedMetrics one = supervised_metrics(task, rows + c, rows + outputs + c, n, stride);
    abs_sum += one.mae;
    sq_sum += one.rmse * one.rmse;
    r2_sum += one.r2;
    m.per_output.push_back(one.r2);
  }
  m.mae = abs_sum / outputs;
  m.rmse = std::sqrt(sq_sum / outputs);
  m.r2 = r2_sum / outputs;
  return m;
}

double mean_point_loss(SupervisedLoss loss, int outputs, double huber_delta, const double* rows, std::size_t n) {
  const std::size_t stride = std::size_t(outputs + target_columns(loss, outputs));
  double sum = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double* r = rows + i * stride;
    double log_partition = 0;
    sum +=
        point_loss(loss, outputs, PointValues<double>{r}, PointValues<double>{r + outputs}, huber_delta, log_partition);
  }
  return n > 0 ? sum / double(n) : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace qgml
