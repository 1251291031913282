// Quality of supervised predictions (docs/supervised.md, section 9), from the predictions y_hat and the
// targets y of n points, in double precision on the host:
//   regression:      MAE = mean |e|,  RMSE = sqrt(mean e^2),  R^2 = 1 - sum e^2 / sum (y - mean y)^2
//                    (e = y_hat - y; R^2 is NaN when all y are equal);
//   classification: accuracy = fraction of points with (y_hat > 0) == (y == 1) (y_hat is a logit),
//                    ROC AUC = P(y_hat of a positive > y_hat of a negative) + P(equal) / 2 (the
//                    Mann-Whitney statistic with mid-ranks for ties; NaN without both classes).
// Metrics that do not apply to the task are NaN.
#pragma once

#include <cstddef>
#include <limits>

#include "qgml/train/task.hpp"

namespace qgml {

struct SupervisedMetrics {
  double mae = std::numeric_limits<double>::quiet_NaN();
  double rmse = std::numeric_limits<double>::quiet_NaN();
  double r2 = std::numeric_limits<double>::quiet_NaN();
  double accuracy = std::numeric_limits<double>::quiet_NaN();
  double auc = std::numeric_limits<double>::quiet_NaN();
};

// y_hat and y: n values each (any stride: element i at [i * stride]). NaN metrics for n = 0.
SupervisedMetrics supervised_metrics(Task task, const double* y_hat, const double* y, std::size_t n,
                                     std::size_t stride = 1);

// The ROC AUC of scores against labels in {0, 1} (see above).
double roc_auc(const double* score, const double* label, std::size_t n, std::size_t stride = 1);

}  // namespace qgml
