// What a run learns: the unsupervised matrix configuration of the points, or a supervised
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

// Throws unless `loss` fits the task: logistic is the classification loss, the others are regression's.
void check_task_loss(Task t, SupervisedLoss loss);

}  // namespace qgml
