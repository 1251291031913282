// What a run learns (spec 5.3): the unsupervised matrix configuration of the points, or a supervised
// model whose target operator B predicts y_hat(x) = <psi_0(x)|B|psi_0(x)> (docs/supervised.md):
// regression (loss mse, mae or huber on y_hat - y) or binary classification (y_hat the logit of
// P(y = 1), logistic loss).
#pragma once

#include <string>

#include "qgml/train/supervised_loss.hpp"

namespace qgml {

enum class Task { unsupervised, regression, classification };

Task parse_task(const std::string& s);  // unsupervised, regression, classification
std::string to_string(Task t);

inline bool is_supervised(Task t) { return t != Task::unsupervised; }

// The loss a task trains with when none is chosen: mse for regression, logistic for classification.
inline SupervisedLoss default_supervised_loss(Task t) {
  return t == Task::classification ? SupervisedLoss::logistic : SupervisedLoss::mse;
}

// The weight lambda of the unsupervised loss when none is chosen: 0.1 for classification, where it
// regularises (perf/results/supervised-tuning-classification-20261129.md: +0.6 to +2.5 points of mean
// accuracy over four synthetic sets in each of the 8 other settings of the grid), 0 for regression, where
// it costs R^2 (perf/results/supervised-tuning-regression-20261129.md).
inline double default_unsupervised_weight(Task t) { return t == Task::classification ? 0.1 : 0.0; }

// Throws unless `loss` fits the task: logistic is the classification loss, the others are regression's.
void check_task_loss(Task t, SupervisedLoss loss);

}  // namespace qgml
