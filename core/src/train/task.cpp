#include "qgml/train/task.hpp"

#include "qgml/common/error.hpp"

namespace qgml {

Task parse_task(const std::string& s) {
  if (s == "unsupervised") return Task::unsupervised;
  if (s == "regression") return Task::regression;
  if (s == "classification") return Task::classification;
  throw Error("unknown task '" + s + "' (expected unsupervised, regression or classification)");
}

std::string to_string(Task t) {
  switch (t) {
    case Task::unsupervised:
      return "unsupervised";
    case Task::regression:
      return "regression";
    case Task::classification:
      return "classification";
  }
  return "?";
}

void check_task_loss(Task t, SupervisedLoss loss) {
  if (t == Task::classification && loss != SupervisedLoss::logistic && loss != SupervisedLoss::softmax)
    throw Error("task classification trains with the logistic loss (two classes) or softmax (two or more), not " +
                to_string(loss));
  if (t == Task::regression && (loss == SupervisedLoss::logistic || loss == SupervisedLoss::softmax))
    throw Error("task regression trains with mse, mae or huber, not " + to_string(loss) +
                " (that is a classification loss)");
}

}  // namespace qgml
