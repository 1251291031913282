// Quality of supervised predictions (docs/supervised.md, section 9), from the predictions y_hat and the
// targets y of n points, in double precision on the host:
//   regression:      MAE = mean |e|,  RMSE = sqrt(mean e^2),  R^2 = 1 - sum e^2 / sum (y - mean y)^2
//                    (e = y_hat - y; R^2 is NaN when all y are equal);
//   classification: accuracy = fraction of points with (y_hat > 0) == (y == 1) (y_hat is a logit),
//                    ROC AUC = P(y_hat of a positive > y_hat of a negative) + P(equal) / 2 (the
//                    Mann-Whitney statistic with mid-ranks for ties; NaN without both classes).
// Metrics that do not apply to the task are NaN.
// With C target operators (docs/supervised.md, section 11):
//   several outputs:  MAE and RMSE over all C n errors, R^2 the mean of the outputs' R^2, per_output the
//                     R^2 of each output;
//   softmax classes:  accuracy = fraction of points whose largest y_hat_c is their class, ROC AUC the mean
//                     over the classes of the AUC of p_c = softmax(y_hat)_c for that class against the
//                     rest (NaN for a class absent from the points), per_output the recall of each class
//                     (the fraction of its points predicted as it; NaN where it has none).
#pragma once

#include <cstddef>
#include <limits>
#include <vector>

#include "qgml/train/supervised_loss.hpp"
#include "qgml/train/task.hpp"

namespace qgml {

struct SupervisedMetrics {
  double mae = std::numeric_limits<double>::quiet_NaN();
  double rmse = std::numeric_limits<double>::quiet_NaN();
  double r2 = std::numeric_limits<double>::quiet_NaN();
  double accuracy = std::numeric_limits<double>::quiet_NaN();
  double auc = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> per_output;  // C > 1: R^2 per output, or recall per class (softmax); else empty
};

// y_hat and y: n values each (any stride: element i at [i * stride]). NaN metrics for n = 0.
SupervisedMetrics supervised_metrics(Task task, const double* y_hat, const double* y, std::size_t n,
                                     std::size_t stride = 1);

// The metrics of n rows of C + target_columns(loss, C) values: the outputs y_hat_1..y_hat_C, then the
// targets (one per output, or softmax's class index). C = 1 is the function above.
SupervisedMetrics supervised_metrics(Task task, SupervisedLoss loss, int outputs, const double* rows, std::size_t n);

// The mean loss of those rows (point_loss, train/supervised_loss.hpp).
double mean_point_loss(SupervisedLoss loss, int outputs, double huber_delta, const double* rows, std::size_t n);

// The ROC AUC of scores against labels in {0, 1} (see above).
double roc_auc(const double* score, const double* label, std::size_t n, std::size_t stride = 1);

}  // namespace qgml
