// The data of a supervised run (task regression or classification, docs/supervised.md): features and
// targets from data.file (data.target_column, or data.target_columns for several outputs) or
// data.target_file, or from points handed over in memory; the validation points from
// data.validation_file or a seeded split (data.validation_fraction, data.seed); the features z-scored per
// column with the training points' statistics (data.standardize true or auto), each regression target
// standardised, the classes of a classification mapped to 0 and 1 (two classes, logistic loss) or to
// their indices 0..K-1 (softmax, section 11). All on the host, in double; every rank reads the whole
// (small) file.
// The transform (supervised_transform.hpp) and the run's supervised.json (supervised_json.hpp) come with
// this header.
#pragma once

#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "qgml/common/error.hpp"
#include "qgml/data/permutation.hpp"
#include "qgml/io/data_io.hpp"
#include "qgml/train/task.hpp"

#include "common/format.hpp"
#include "data/data_source.hpp"
#include "data/supervised_json.hpp"
#include "data/supervised_table.hpp"
#include "data/supervised_transform.hpp"
#include "settings/run_settings.hpp"

namespace qgml::app {

struct SupervisedData {
  HostData train, validation;  // rows (features, model target)
  int d = 0;
  SupervisedTransform transform;
  std::string source;                  // where the targets and the validation points came from, for the log
  std::vector<std::string> automatic;  // automatic choices, for the log
};

// Settles the classification loss and model.outputs for the classes of the training targets (two:
// logistic, one operator, unless training.loss = softmax; more: softmax, one operator per class), and
// model.outputs for the regression outputs; each automatic choice is made in s with its reason and
// reported in `automatic`.
inline void settle_outputs(RunSettings& s, SupervisedTransform& tr, std::vector<std::string>& automatic) {
  if (tr.task == Task::classification) {
    const std::string loss = s.training.loss;
    const int classes = int(tr.classes.size());
    if (loss == "logistic" && classes > 2)
      throw Error(
          format("training.loss = logistic takes two classes; the targets have %d (%s): use "
                 "training.loss softmax (or auto)",
                 classes, class_list(tr.classes).c_str()));
    tr.softmax = loss == "softmax" || classes > 2;
    if (loss == "auto" && tr.softmax) {
      s.training.loss = "softmax";
      s.choose("training.loss", "softmax", "automatic: more than two classes");
      automatic.push_back(
          format("automatic: training.loss = softmax (%d classes: one target operator per class, "
                 "docs/supervised.md section 11)",
                 classes));
    }
  }
  const int outputs = tr.outputs();
  if (!s.model.outputs) {
    s.model.outputs = outputs;
    s.choose("model.outputs", std::to_string(outputs), "automatic: the targets of the data");
    if (outputs > 1)
      automatic.push_back(format("automatic: model.outputs = %d target operators (%s)", outputs,
                                 tr.task == Task::regression ? "one per target column" : "one per class"));
  } else if (*s.model.outputs != outputs) {
    throw Error(format(
        "model.outputs = %d, but the data have %d %s: leave model.outputs out (auto)", *s.model.outputs,
        tr.task == Task::regression ? tr.target_count() : outputs,
        tr.task == Task::regression ? "target column(s)" : (tr.softmax ? "classes" : "classes (one logistic output)")));
  }
}

inline SupervisedData load_supervised_data(RunSettings& s, const PointsInMemory* memory) {
  SupervisedData out;
  const DataSection& data = s.data;
  const Task task = s.task;
  const std::string &file = data.file, &target_file = data.target_file;
  HostData raw;
  std::string name = file;
  if (memory && !data.array.empty()) {
    raw.rows = int(memory->rows);
    raw.cols = memory->columns;
    raw.values.resize(std::size_t(raw.rows) * raw.cols);
    for (int t = 0; t < raw.rows; ++t)
      for (int k = 0; k < raw.cols; ++k) raw(t, k) = (*memory)(t, k);
    name = "data.array " + data.array;
  } else if (!file.empty()) {
    raw = read_points(file);
  } else {
    throw Error("task " + to_string(task) +
                " needs data with targets: data.file (features and a target column, data.target_column) or the "
                "arrays of the Python, C or Fortran interface; the generators (data.generator) have no targets");
  }
  HostData targets;
  std::vector<int> target;
  if (!target_file.empty()) {
    // The targets come from one place: a target column named beside a target file would be ignored.
    if (data.target_column != -1 || !data.target_columns.empty())
      throw Error((data.target_column != -1 ? "data.target_column = " + std::to_string(data.target_column)
                                            : "data.target_columns = '" + data.target_columns + "'") +
                  " and data.target_file '" + target_file +
                  "': the targets come either from columns of the data (data.target_column, data.target_columns) "
                  "or from a file (data.target_file, every column of the data a feature); set one of them");
    targets = read_points(target_file);
    if (targets.rows != raw.rows || (task == Task::classification && targets.cols != 1))
      throw Error(format("data.target_file '%s': %d x %d values, expected %s of %d targets (one per point of %s)",
                         target_file.c_str(), targets.rows, targets.cols,
                         task == Task::classification ? "one column" : "one column per output", raw.rows,
                         name.c_str()));
    out.source = format("targets from %s", target_file.c_str());
  } else {
    target = detail::target_column_indices(data, raw.cols, name);
    if (task == Task::classification && target.size() > 1)
      throw Error("data.target_columns = '" + data.target_columns +
                  "': a classification has one target column, the class labels");
    std::string list;
    for (int k : target) list += (list.empty() ? "" : ", ") + std::to_string(k);
    out.source = format("targets from column%s %s of %s", target.size() > 1 ? "s" : "", list.c_str(), name.c_str());
  }
  const int target_count = target_file.empty() ? int(target.size()) : targets.cols;
  if (memory && !data.array.empty()) check_finite(*memory, data.array, target);
  HostData all = detail::features_then_targets(raw, target, target_file.empty() ? nullptr : &targets);
  const int d = all.cols - target_count;
  out.d = d;
  SupervisedTransform& tr = out.transform;
  tr.task = task;
  tr.target_columns = target;
  // The validation points.
  const std::string& validation_file = data.validation_file;
  if (!validation_file.empty()) {
    const HostData v = read_points(validation_file);
    const int expected = target_file.empty() ? raw.cols : raw.cols + target_count;
    if (v.cols != expected)
      throw Error(format("data.validation_file '%s' has %d columns, expected %d (%s)", validation_file.c_str(), v.cols,
                         expected, target_file.empty() ? "those of data.file" : "the features, then the targets"));
    std::vector<int> columns = target;
    if (!target_file.empty())
      for (int j = 0; j < target_count; ++j) columns.push_back(raw.cols + j);
    out.validation = detail::features_then_targets(v, columns, nullptr);
    out.train = all;
    out.source += format("; %d validation points from %s", v.rows, validation_file.c_str());
  } else {
    const double f = data.validation_fraction;
    const int held = int(std::lround(f * all.rows));
    if (all.rows - held < 1)
      throw Error(format("data.validation_fraction = %g leaves no training point of %d", f, all.rows));
    const KeyedPermutation p(std::uint64_t(all.rows), data.seed, 0x76616c);
    std::vector<char> is_validation(std::size_t(all.rows), 0);
    for (int i = 0; i < held; ++i) is_validation[std::size_t(p(std::uint64_t(i)))] = 1;
    std::vector<int> train_rows, validation_rows;
    for (int t = 0; t < all.rows; ++t) (is_validation[std::size_t(t)] ? validation_rows : train_rows).push_back(t);
    out.train = detail::select_rows(all, train_rows);
    out.validation = detail::select_rows(all, validation_rows);
    out.source += held > 0 ? format(
                                 "; %d of %d points held out for validation (data.validation_fraction %g, a "
                                 "random split by data.seed)",
                                 held, all.rows, f)
                           : std::string("; no validation points (data.validation_fraction 0)");
  }
  if (task == Task::classification) {
    // Classes: the values of the training targets, ascending.
    std::set<double> labels;
    for (int t = 0; t < out.train.rows && labels.size() <= 4096; ++t) {
      const double y = out.train(t, d);
      if (!std::isfinite(y))
        throw Error(format("task classification: point %d of %s has the target %g (expected a class label)", t + 1,
                           name.c_str(), y));
      labels.insert(y);
    }
    if (labels.size() < 2)
      throw Error(format("task classification needs at least two classes in the targets of %s, found only %s",
                         name.c_str(), labels.empty() ? "none" : format("%.17g", *labels.begin()).c_str()));
    if (labels.size() > 4096)
      throw Error(
          format("task classification: the targets of %s hold more than 4096 classes (a regression?)", name.c_str()));
    tr.classes.assign(labels.begin(), labels.end());
    settle_outputs(s, tr, out.automatic);
    out.automatic.push_back(
        tr.softmax ? format("classes: %s -> 0 .. %d (softmax over %d target operators)", class_list(tr.classes).c_str(),
                            int(tr.classes.size()) - 1, int(tr.classes.size()))
                   : format("classes: %.17g -> 0, %.17g -> 1 (the larger value is the positive class)", tr.classes[0],
                            tr.classes[1]));
  } else {
    // Overflow-safe: targets of any magnitude a double holds give a finite mean and scale (a scale that
    // overflowed would be written to supervised.json as null, which qgml predict cannot use).
    for (int j = 0; j < target_count; ++j) {
      const detail::ColumnStatistics st = detail::column_statistics(
          out.train, d + j,
          format("the regression targets%s of %s", target_count > 1 ? format(" (output %d)", j).c_str() : "",
                 (target_file.empty() ? name : target_file).c_str()));
      tr.target_mean.push_back(st.mean);
      tr.target_scale.push_back(st.sd > 0 ? st.sd : 1.0);
      out.automatic.push_back(format(
          "regression targets%s standardised: (y - %.6g) / %.6g on the training points "
          "(metrics and predictions in the targets' units)",
          target_count > 1 ? format(" of output %d", j).c_str() : "", tr.target_mean.back(), tr.target_scale.back()));
    }
    settle_outputs(s, tr, out.automatic);
  }
  // Features: z-scores per column with the training points' statistics.
  const bool automatic = !data.standardize;
  const bool standardize = automatic || *data.standardize;
  tr.feature_mean.assign(std::size_t(d), 0.0);
  tr.feature_scale.assign(std::size_t(d), 1.0);
  if (standardize)
    for (int k = 0; k < d; ++k) {
      const detail::ColumnStatistics st =
          detail::column_statistics(out.train, k, format("feature %d of %s", k, name.c_str()));
      tr.feature_mean[k] = st.mean;
      tr.feature_scale[k] = st.sd > 0 ? st.sd : 1.0;
    }
  if (automatic)
    out.automatic.push_back(
        "automatic: data.standardize = true (supervised tasks z-score each feature with the "
        "training points' mean and standard deviation)");
  check_labels(tr, out.validation, validation_file.empty() ? name : validation_file);
  apply_supervised_transform(tr, out.train);
  apply_supervised_transform(tr, out.validation);
  return out;
}

}  // namespace qgml::app
