// The data of a supervised run (task regression or classification, docs/supervised.md): features and
// targets from data.file (data.target_column, or data.target_columns for several outputs) or
// data.target_file, or from points handed over in memory; the validation points from
// data.validation_file or a seeded split (data.validation_fraction, data.seed); the features z-scored per
// column with the training points' statistics (data.standardize true or auto), each regression target
// standardised, the classes of a classification mapped to 0 and 1 (two classes, logistic loss) or to
// their indices 0..K-1 (softmax, section 11). All on the host, in double; every rank reads the whole
// (small) file.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "qgml/common/error.hpp"
#include "qgml/data/permutation.hpp"
#include "qgml/io/data_io.hpp"
#include "qgml/train/task.hpp"

#include "config.hpp"
#include "data_source.hpp"
#include "format.hpp"
#include "json_file.hpp"

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

struct SupervisedData {
  HostData train, validation;  // rows (features, model target)
  int d = 0;
  SupervisedTransform transform;
  std::string source;                  // where the targets and the validation points came from, for the log
  std::vector<std::string> automatic;  // automatic choices, for the log
};

namespace detail {

// The columns of `cols` that hold the targets: data.target_columns (a comma-separated list, in output
// order) or data.target_column (one), each negative from the end. Errors name the setting and the file.
inline std::vector<int> target_column_indices(const Config& c, int cols, const std::string& file) {
  const std::string list = c.text("data.target_columns");
  const bool several = !list.empty();
  if (several && c.integer("data.target_column") != -1)
    throw Error("data.target_column = " + c.text("data.target_column") + " and data.target_columns = '" + list +
                "': set one of them (data.target_columns names every target column)");
  std::vector<long> given;
  if (several) {
    std::size_t start = 0;
    while (start <= list.size()) {
      const std::size_t comma = std::min(list.find(',', start), list.size());
      std::string item = list.substr(start, comma - start);
      item.erase(0, item.find_first_not_of(" \t"));
      item.erase(item.find_last_not_of(" \t") + 1);
      char* end = nullptr;
      const long k = std::strtol(item.c_str(), &end, 10);
      if (item.empty() || *end != '\0')
        throw Error("data.target_columns = '" + list + "': '" + item +
                    "' is not a column index (expected integers separated by commas, e.g. -2,-1)");
      given.push_back(k);
      start = comma + 1;
    }
  } else {
    given.push_back(c.integer("data.target_column"));
  }
  const char* setting = several ? "data.target_columns" : "data.target_column";
  if (cols < int(given.size()) + 1)
    throw Error(
        format("data file '%s' has %d column(s): a supervised task needs the features and %d target "
               "column(s) (%s, or data.target_file)",
               file.c_str(), cols, int(given.size()), setting));
  std::vector<int> out;
  for (long k : given) {
    const long index = k < 0 ? cols + k : k;
    const std::string named =
        several ? format("data.target_columns = '%s': column %ld", list.c_str(), k) : format("%s = %ld", setting, k);
    if (index < 0 || index >= cols)
      throw Error(format("%s: data file '%s' has %d columns (0 .. %d, or -1 .. -%d from the end)", named.c_str(),
                         file.c_str(), cols, cols - 1, cols));
    if (std::find(out.begin(), out.end(), int(index)) != out.end())
      throw Error(format("%s names column %ld again", named.c_str(), index));
    out.push_back(int(index));
  }
  return out;
}

// rows (features..., targets...) of `raw`: the targets from the columns `target` in that order (or from
// every column of `targets`), the other columns the features in their order.
inline HostData features_then_targets(const HostData& raw, const std::vector<int>& target, const HostData* targets) {
  HostData out;
  const int count = targets ? targets->cols : int(target.size());
  out.rows = raw.rows;
  out.cols = targets ? raw.cols + count : raw.cols;
  out.values.reserve(std::size_t(out.rows) * out.cols);
  for (int t = 0; t < raw.rows; ++t) {
    for (int k = 0; k < raw.cols; ++k)
      if (targets || std::find(target.begin(), target.end(), k) == target.end()) out.values.push_back(raw(t, k));
    for (int j = 0; j < count; ++j) out.values.push_back(targets ? (*targets)(t, j) : raw(t, target[std::size_t(j)]));
  }
  return out;
}

// The mean and the standard deviation (1/T) of column k of the T rows of `h`, the sums run on the values
// divided by a power of two at least their largest magnitude (exact, as in data_statistics,
// qgml/data/standardize.hpp): values of any magnitude a double holds, 1e200 or 1e-200, give finite
// statistics. Throws naming `what` for a value that is not finite, or a spread beyond a double's range.
struct ColumnStatistics {
  double mean = 0, sd = 0;
};

inline ColumnStatistics column_statistics(const HostData& h, int k, const std::string& what) {
  ColumnStatistics out;
  if (h.rows == 0) return out;
  double largest = 0;
  for (int t = 0; t < h.rows; ++t) {
    const double v = h(t, k);
    if (!std::isfinite(v)) throw Error(format("%s: a value is not finite (%g)", what.c_str(), v));
    largest = std::max(largest, std::fabs(v));
  }
  if (largest == 0) return out;
  int shift = 0;
  std::frexp(largest, &shift);
  const double down1 = std::ldexp(1.0, -shift / 2), down2 = std::ldexp(1.0, -(shift - shift / 2));
  double mean = 0, var = 0;
  for (int t = 0; t < h.rows; ++t) mean += h(t, k) * down1 * down2;
  mean /= h.rows;
  for (int t = 0; t < h.rows; ++t) {
    const double y = h(t, k) * down1 * down2 - mean;
    var += y * y;
  }
  out.mean = std::ldexp(mean, shift);
  out.sd = std::ldexp(std::sqrt(var / h.rows), shift);
  if (!std::isfinite(out.sd) || !std::isfinite(out.mean))
    throw Error(what + ": the spread of the values is beyond the range of a double");
  return out;
}

inline HostData select_rows(const HostData& h, const std::vector<int>& rows) {
  HostData out;
  out.rows = int(rows.size());
  out.cols = h.cols;
  for (int r : rows)
    out.values.insert(out.values.end(), h.values.begin() + std::size_t(r) * h.cols,
                      h.values.begin() + std::size_t(r + 1) * h.cols);
  return out;
}

}  // namespace detail

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

// Settles the classification loss and model.outputs for the classes of the training targets (two:
// logistic, one operator, unless training.loss = softmax; more: softmax, one operator per class), and
// model.outputs for the regression outputs; each automatic choice is set in c with its reason and
// reported in `automatic`.
inline void settle_outputs(Config& c, SupervisedTransform& tr, std::vector<std::string>& automatic) {
  if (tr.task == Task::classification) {
    const std::string loss = c.text("training.loss");
    const int classes = int(tr.classes.size());
    if (loss == "logistic" && classes > 2)
      throw Error(
          format("training.loss = logistic takes two classes; the targets have %d (%s): use "
                 "training.loss softmax (or auto)",
                 classes, class_list(tr.classes).c_str()));
    tr.softmax = loss == "softmax" || classes > 2;
    if (loss == "auto" && tr.softmax) {
      c.set("training.loss", "softmax", "automatic: more than two classes");
      automatic.push_back(
          format("automatic: training.loss = softmax (%d classes: one target operator per class, "
                 "docs/supervised.md section 11)",
                 classes));
    }
  }
  const int outputs = tr.outputs();
  if (c.is_auto("model.outputs")) {
    c.set("model.outputs", std::to_string(outputs), "automatic: the targets of the data");
    if (outputs > 1)
      automatic.push_back(format("automatic: model.outputs = %d target operators (%s)", outputs,
                                 tr.task == Task::regression ? "one per target column" : "one per class"));
  } else if (c.integer("model.outputs") != outputs) {
    throw Error(format(
        "model.outputs = %s, but the data have %d %s: leave model.outputs out (auto)", c.text("model.outputs").c_str(),
        tr.task == Task::regression ? tr.target_count() : outputs,
        tr.task == Task::regression ? "target column(s)" : (tr.softmax ? "classes" : "classes (one logistic output)")));
  }
}

inline SupervisedData load_supervised_data(Config& c, const PointsInMemory* memory) {
  SupervisedData out;
  const Task task = parse_task(c.text("task"));
  const std::string file = c.text("data.file"), target_file = c.text("data.target_file");
  HostData raw;
  std::string name = file;
  if (memory && !c.text("data.array").empty()) {
    raw.rows = int(memory->rows);
    raw.cols = memory->columns;
    raw.values.resize(std::size_t(raw.rows) * raw.cols);
    for (int t = 0; t < raw.rows; ++t)
      for (int k = 0; k < raw.cols; ++k) raw(t, k) = (*memory)(t, k);
    name = "data.array " + c.text("data.array");
  } else if (!file.empty()) {
    raw = read_points(file);
  } else {
    throw Error("task " + c.text("task") +
                " needs data with targets: data.file (features and a target column, data.target_column) or the "
                "arrays of the Python, C or Fortran interface; the generators (data.generator) have no targets");
  }
  HostData targets;
  std::vector<int> target;
  if (!target_file.empty()) {
    // The targets come from one place: a target column named beside a target file would be ignored.
    if (c.integer("data.target_column") != -1 || !c.text("data.target_columns").empty())
      throw Error((c.integer("data.target_column") != -1
                       ? "data.target_column = " + c.text("data.target_column")
                       : "data.target_columns = '" + c.text("data.target_columns") + "'") +
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
    target = detail::target_column_indices(c, raw.cols, name);
    if (task == Task::classification && target.size() > 1)
      throw Error("data.target_columns = '" + c.text("data.target_columns") +
                  "': a classification has one target column, the class labels");
    std::string list;
    for (int k : target) list += (list.empty() ? "" : ", ") + std::to_string(k);
    out.source = format("targets from column%s %s of %s", target.size() > 1 ? "s" : "", list.c_str(), name.c_str());
  }
  const int target_count = target_file.empty() ? int(target.size()) : targets.cols;
  if (memory && !c.text("data.array").empty()) check_finite(*memory, c.text("data.array"), target);
  HostData all = detail::features_then_targets(raw, target, target_file.empty() ? nullptr : &targets);
  const int d = all.cols - target_count;
  out.d = d;
  SupervisedTransform& tr = out.transform;
  tr.task = task;
  tr.target_columns = target;
  // The validation points.
  const std::string validation_file = c.text("data.validation_file");
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
    const double f = c.real("data.validation_fraction");
    const int held = int(std::lround(f * all.rows));
    if (all.rows - held < 1)
      throw Error(format("data.validation_fraction = %g leaves no training point of %d", f, all.rows));
    const KeyedPermutation p(std::uint64_t(all.rows), std::uint64_t(c.integer("data.seed")), 0x76616c);
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
    settle_outputs(c, tr, out.automatic);
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
    settle_outputs(c, tr, out.automatic);
  }
  // Features: z-scores per column with the training points' statistics.
  const bool automatic = c.is_auto("data.standardize");
  const bool standardize = automatic || c.boolean("data.standardize");
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

// supervised.json of a run: the task, D, the outputs and the transform (atomically).
// kept_epoch: the epoch whose operators final_matrices.npy holds (training.patience: the best one).
// One regression output keeps target_mean and target_scale as numbers, two classes with the logistic
// loss keep negative_class and positive_class (the fields of runs before several outputs).
inline void write_supervised_transform(const std::string& path, const SupervisedTransform& tr, int d, int kept_epoch) {
  const int outputs = tr.outputs();
  Json j = {{"task", to_string(tr.task)},
            {"epoch", kept_epoch},
            {"D", d},
            {"outputs", outputs},
            {"target_columns", tr.target_columns},
            {"target_column", tr.target_columns.size() == 1 ? tr.target_columns[0] : -1},
            {"feature_mean", tr.feature_mean},
            {"feature_scale", tr.feature_scale},
            {"note",
             "final_matrices.npy holds A_1..A_D and then the target operators B_1..B_C (C = outputs) after "
             "epoch `epoch`; the model's feature k is (x_k - feature_mean[k]) / feature_scale[k]"}};
  if (tr.task == Task::regression) {
    if (outputs == 1) {
      j["target_mean"] = tr.target_mean[0];
      j["target_scale"] = tr.target_scale[0];
    } else {
      j["target_mean"] = tr.target_mean;
      j["target_scale"] = tr.target_scale;
    }
  } else {
    j["loss"] = tr.softmax ? "softmax" : "logistic";
    j["classes"] = tr.classes;
    if (!tr.softmax) {
      j["negative_class"] = tr.classes[0];
      j["positive_class"] = tr.classes[1];
    }
  }
  write_json_file(path, j);
}

// Parses what write_supervised_transform wrote (the text of a supervised.json); errors name `path` (the
// file, or what the text came from) and the field.
inline SupervisedTransform parse_supervised_transform(const std::string& text, const std::string& path, int& d) {
  const Json j = Json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw Error("'" + path + "': not a JSON object");
  const auto field = [&](const char* key) -> const Json& {
    if (!j.contains(key)) throw Error("'" + path + "': the field '" + key + "' is missing");
    return j.at(key);
  };
  const auto number = [&](const char* key) {
    const Json& v = field(key);
    if (!v.is_number()) throw Error("'" + path + "': the field '" + key + "' is not a number");
    return v.get<double>();
  };
  // A list of numbers (or one number, read as a list of one), of `size` entries where size >= 0.
  const auto numbers = [&](const char* key, int size) {
    const Json& v = field(key);
    std::vector<double> out;
    if (v.is_number()) out.push_back(v.get<double>());
    if (v.is_array())
      for (const Json& x : v) {
        if (!x.is_number()) throw Error("'" + path + "': the field '" + key + "' holds a value that is not a number");
        out.push_back(x.get<double>());
      }
    if ((!v.is_number() && !v.is_array()) || (size >= 0 && int(out.size()) != size))
      throw Error(format("'%s': the field '%s' is not a list of %d numbers", path.c_str(), key, size));
    return out;
  };
  SupervisedTransform tr;
  const Json& task = field("task");
  if (!task.is_string()) throw Error("'" + path + "': the field 'task' is not text");
  tr.task = parse_task(task.get<std::string>());
  if (!is_supervised(tr.task)) throw Error("'" + path + "': task " + task.get<std::string>() + " has no targets");
  const double features = number("D");
  if (!(features >= 1 && features <= 1e6) || features != std::floor(features))
    throw Error(format("'%s': the field 'D' is %.17g (expected the number of features, an integer >= 1)", path.c_str(),
                       features));
  d = int(features);
  double outputs = 1;
  if (j.contains("outputs")) {
    outputs = number("outputs");
    if (!(outputs >= 1 && outputs <= 4096) || outputs != std::floor(outputs))
      throw Error(
          format("'%s': the field 'outputs' is %.17g (expected the number of target operators, an integer "
                 ">= 1)",
                 path.c_str(), outputs));
  }
  if (j.contains("target_columns")) {
    for (double k : numbers("target_columns", -1)) tr.target_columns.push_back(int(k));
  } else if (const double k = number("target_column"); k >= 0) {
    tr.target_columns.push_back(int(k));
  }
  tr.feature_mean = numbers("feature_mean", d);
  tr.feature_scale = numbers("feature_scale", d);
  for (int k = 0; k < d; ++k)
    if (!std::isfinite(tr.feature_mean[k]) || !(tr.feature_scale[k] > 0) || !std::isfinite(tr.feature_scale[k]))
      throw Error(
          format("'%s': feature %d has mean %.17g and scale %.17g (expected a finite mean and a finite "
                 "scale > 0)",
                 path.c_str(), k, tr.feature_mean[k], tr.feature_scale[k]));
  if (tr.task == Task::regression) {
    tr.target_mean = numbers("target_mean", int(outputs));
    tr.target_scale = numbers("target_scale", int(outputs));
    for (int c = 0; c < int(outputs); ++c)
      if (!std::isfinite(tr.target_mean[c]) || !(tr.target_scale[c] > 0) || !std::isfinite(tr.target_scale[c]))
        throw Error("'" + path + "': target_mean and target_scale must be finite, target_scale > 0");
  } else {
    if (j.contains("classes")) {
      tr.classes = numbers("classes", -1);
    } else {
      tr.classes = {number("negative_class"), number("positive_class")};
    }
    if (j.contains("loss")) {
      const Json& loss = field("loss");
      if (!loss.is_string() || (loss.get<std::string>() != "softmax" && loss.get<std::string>() != "logistic"))
        throw Error("'" + path + "': the field 'loss' is neither softmax nor logistic");
      tr.softmax = loss.get<std::string>() == "softmax";
    }
    if (tr.classes.size() < 2 || !std::is_sorted(tr.classes.begin(), tr.classes.end()) ||
        std::adjacent_find(tr.classes.begin(), tr.classes.end()) != tr.classes.end() ||
        (!tr.softmax && tr.classes.size() != 2))
      throw Error("'" + path + "': the field 'classes' is not a list of two or more distinct class values, ascending " +
                  "(two with the logistic loss)");
  }
  if (tr.outputs() != int(outputs))
    throw Error(format("'%s': the field 'outputs' is %d, but the targets give %d target operators", path.c_str(),
                       int(outputs), tr.outputs()));
  return tr;
}

// Reads what write_supervised_transform wrote; errors name the file and the field.
inline SupervisedTransform read_supervised_transform(const std::string& path, int& d) {
  std::ifstream in(path);
  if (!in) throw Error("'" + path + "': cannot open (not the run directory of a regression or classification run?)");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return parse_supervised_transform(text, path, d);
}

}  // namespace qgml::app
