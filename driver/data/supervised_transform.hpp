// How the model's inputs of a supervised run come from the data's values (SupervisedTransform): the
// features z-scored, each regression target standardised, the classes mapped to the model's targets;
// and the transform applied to rows of the data.
#pragma once

#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "qgml/common/error.hpp"
#include "qgml/io/data_io.hpp"
#include "qgml/train/task.hpp"

#include "common/format.hpp"

namespace qgml::app {

// How the model's inputs come from the data's values: feature k is (x_k - feature_mean[k]) /
// feature_scale[k]; the model's target c is (y_c - target_mean[c]) / target_scale[c] (regression, one per
// output), [y == classes[1]] (classification with the logistic loss, two classes) or the index of y in
// classes (softmax). Written to the run's supervised.json and read back by qgml predict.
struct SupervisedTransform {
  Task task = Task::regression;
  std::vector<int> target_columns;  // in the data file, in output order; empty with a target file
  std::vector<double> feature_mean, feature_scale;
  std::vector<double> target_mean, target_scale;  // regression: one per output
  std::vector<double> classes;                    // classification: the class values, ascending
  bool softmax = false;                           // classification: softmax over the classes (else logistic)

  // C, the target operators: the regression outputs, 1 for the logistic loss, the classes for softmax.
  int outputs() const {
    if (task == Task::regression) return int(target_mean.size());
    return softmax ? int(classes.size()) : 1;
  }
  // Target values per point in the data: one per regression output, one class label.
  int target_count() const { return task == Task::regression ? int(target_mean.size()) : 1; }
  // The model's target of a class label (the logistic 0/1 or the softmax index); -1 for no class.
  double class_target(double y) const {
    for (std::size_t k = 0; k < classes.size(); ++k)
      if (classes[k] == y) return softmax ? double(k) : (k == 1 ? 1.0 : 0.0);
    return -1;
  }
};

// (x - mean) / scale; x / scale - mean / scale where x - mean could overflow (mean or scale near the
// largest double), so that ordinary values keep their bits.
inline double standardized(double x, double mean, double scale) {
  return std::fabs(mean) > 1e300 || scale > 1e300 ? x / scale - mean / scale : (x - mean) / scale;
}

// The model's rows of `rows` (features then the targets): the transform applied.
inline void apply_supervised_transform(const SupervisedTransform& tr, HostData& rows, bool has_target = true) {
  const int d = int(tr.feature_mean.size());
  for (int t = 0; t < rows.rows; ++t) {
    for (int k = 0; k < d; ++k) rows(t, k) = standardized(rows(t, k), tr.feature_mean[k], tr.feature_scale[k]);
    if (!has_target) continue;
    if (tr.task == Task::classification) {
      rows(t, d) = tr.class_target(rows(t, d));
      continue;
    }
    for (int c = 0; c < tr.target_count(); ++c)
      rows(t, d + c) = standardized(rows(t, d + c), tr.target_mean[std::size_t(c)], tr.target_scale[std::size_t(c)]);
  }
}

// The class values as text: "0, 1, 2".
inline std::string class_list(const std::vector<double>& classes) {
  std::string out;
  for (double v : classes) out += (out.empty() ? "" : ", ") + format("%.17g", v);
  return out;
}

// Throws naming the file when a classification target is none of the training data's classes.
inline void check_labels(const SupervisedTransform& tr, const HostData& rows, const std::string& file) {
  if (tr.task != Task::classification) return;
  const int d = int(tr.feature_mean.size());
  for (int t = 0; t < rows.rows; ++t)
    if (tr.class_target(rows(t, d)) < 0)
      throw Error(format("'%s': point %d has the target %.17g, which is no class of the training data (%s)",
                         file.c_str(), t + 1, rows(t, d), class_list(tr.classes).c_str()));
}

}  // namespace qgml::app
