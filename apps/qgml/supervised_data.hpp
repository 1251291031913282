// The data of a supervised run (task regression or classification, docs/supervised.md): features and
// one target per point from data.file (data.target_column) or data.target_file, or from points handed
// over in memory; the validation points from data.validation_file or a seeded split
// (data.validation_fraction, data.seed); the features z-scored per column with the training points'
// statistics (data.standardize true or auto), the regression targets standardised, the two classes of a
// classification mapped to 0 and 1. All on the host, in double; every rank reads the whole (small) file.
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
// feature_scale[k]; the model's target is (y - target_mean) / target_scale (regression) or [y ==
// positive] (classification, labels negative and positive). Written to the run's supervised.json and
// read back by qgml predict.
struct SupervisedTransform {
  Task task = Task::regression;
  int target_column = -1;  // in the data file; -1 with a target file
  std::vector<double> feature_mean, feature_scale;
  double target_mean = 0, target_scale = 1;
  double negative = 0, positive = 1;
};

struct SupervisedData {
  HostData train, validation;  // rows (features, model target)
  int d = 0;
  SupervisedTransform transform;
  std::string source;                  // where the targets and the validation points came from, for the log
  std::vector<std::string> automatic;  // automatic choices, for the log
};

namespace detail {

// The column of `cols` that data.target_column names (negative: from the end).
inline int target_column_index(const Config& c, int cols, const std::string& file) {
  const long k = c.integer("data.target_column");
  const long index = k < 0 ? cols + k : k;
  if (cols < 2)
    throw Error("data file '" + file + "' has " + std::to_string(cols) +
                " column: a supervised task needs the features and a target column (or data.target_file)");
  if (index < 0 || index >= cols)
    throw Error("data.target_column = " + std::to_string(k) + ": data file '" + file + "' has " + std::to_string(cols) +
                " columns (0 .. " + std::to_string(cols - 1) + ", or -1 .. -" + std::to_string(cols) +
                " from the end)");
  return int(index);
}

// rows (features..., target) of `raw`, the target taken from column `target` (or from `targets`).
inline HostData features_then_target(const HostData& raw, int target, const HostData* targets) {
  HostData out;
  out.rows = raw.rows;
  out.cols = targets ? raw.cols + 1 : raw.cols;
  out.values.reserve(std::size_t(out.rows) * out.cols);
  for (int t = 0; t < raw.rows; ++t) {
    for (int k = 0; k < raw.cols; ++k)
      if (targets || k != target) out.values.push_back(raw(t, k));
    out.values.push_back(targets ? (*targets)(t, 0) : raw(t, target));
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

// The model's rows of `rows` (features then the target, as in the data file): the transform applied.
inline void apply_supervised_transform(const SupervisedTransform& tr, HostData& rows, bool has_target = true) {
  const int d = int(tr.feature_mean.size());
  for (int t = 0; t < rows.rows; ++t) {
    for (int k = 0; k < d; ++k) rows(t, k) = standardized(rows(t, k), tr.feature_mean[k], tr.feature_scale[k]);
    if (!has_target) continue;
    double& y = rows(t, d);
    y = tr.task == Task::classification ? (y == tr.positive ? 1.0 : 0.0)
                                        : standardized(y, tr.target_mean, tr.target_scale);
  }
}

// Throws naming the file when a classification target is neither label.
inline void check_labels(const SupervisedTransform& tr, const HostData& rows, const std::string& file) {
  if (tr.task != Task::classification) return;
  const int d = int(tr.feature_mean.size());
  for (int t = 0; t < rows.rows; ++t)
    if (rows(t, d) != tr.negative && rows(t, d) != tr.positive)
      throw Error(
          format("'%s': point %d has the target %.17g, which is neither class of the training data (%.17g, "
                 "%.17g)",
                 file.c_str(), t + 1, rows(t, d), tr.negative, tr.positive));
}

inline SupervisedData load_supervised_data(const Config& c, const PointsInMemory* memory) {
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
  int target = -1;
  if (!target_file.empty()) {
    // The targets come from one place: a target column named beside a target file would be ignored.
    if (c.integer("data.target_column") != -1)
      throw Error("data.target_column = " + c.text("data.target_column") + " and data.target_file '" + target_file +
                  "': the targets come either from a column of the data (data.target_column) or from a file "
                  "(data.target_file, every column of the data a feature); set one of them");
    targets = read_points(target_file);
    if (targets.cols != 1 || targets.rows != raw.rows)
      throw Error(
          format("data.target_file '%s': %d x %d values, expected one column of %d targets (one per point "
                 "of %s)",
                 target_file.c_str(), targets.rows, targets.cols, raw.rows, name.c_str()));
    out.source = format("targets from %s", target_file.c_str());
  } else {
    target = detail::target_column_index(c, raw.cols, name);
    out.source = format("targets from column %d of %s", target, name.c_str());
  }
  if (memory && !c.text("data.array").empty()) check_finite(*memory, c.text("data.array"), target);
  HostData all = detail::features_then_target(raw, target, target_file.empty() ? nullptr : &targets);
  const int d = all.cols - 1;
  out.d = d;
  SupervisedTransform& tr = out.transform;
  tr.task = task;
  tr.target_column = target;
  // The validation points.
  const std::string validation_file = c.text("data.validation_file");
  if (!validation_file.empty()) {
    const HostData v = read_points(validation_file);
    const int expected = target_file.empty() ? raw.cols : raw.cols + 1;
    if (v.cols != expected)
      throw Error(format("data.validation_file '%s' has %d columns, expected %d (%s)", validation_file.c_str(), v.cols,
                         expected, target_file.empty() ? "those of data.file" : "the features, then the target"));
    out.validation = detail::features_then_target(v, target_file.empty() ? target : v.cols - 1, nullptr);
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
  // Classes: the two values of the training targets.
  if (task == Task::classification) {
    std::set<double> labels;
    for (int t = 0; t < out.train.rows && labels.size() <= 2; ++t) labels.insert(out.train(t, d));
    if (labels.size() != 2) {
      std::string seen;
      for (double l : labels) seen += format(" %.17g", l);
      throw Error(format("task classification needs two classes in the targets of %s, found %s%s", name.c_str(),
                         labels.size() > 2 ? "more than two:" : "only", seen.c_str()));
    }
    tr.negative = *labels.begin();
    tr.positive = *labels.rbegin();
    out.automatic.push_back(
        format("classes: %.17g -> 0, %.17g -> 1 (the larger value is the positive class)", tr.negative, tr.positive));
  } else {
    // Overflow-safe: targets of any magnitude a double holds give a finite mean and scale (a scale that
    // overflowed would be written to supervised.json as null, which qgml predict cannot use).
    const detail::ColumnStatistics st = detail::column_statistics(
        out.train, d, "the regression targets of " + (target_file.empty() ? name : target_file));
    tr.target_mean = st.mean;
    tr.target_scale = st.sd > 0 ? st.sd : 1.0;
    out.automatic.push_back(
        format("regression targets standardised: (y - %.6g) / %.6g on the training points "
               "(metrics and predictions in the targets' units)",
               tr.target_mean, tr.target_scale));
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

// supervised.json of a run: the task, D and the transform (atomically).
// kept_epoch: the epoch whose operators final_matrices.npy holds (training.patience: the best one).
inline void write_supervised_transform(const std::string& path, const SupervisedTransform& tr, int d, int kept_epoch) {
  Json j = {{"task", to_string(tr.task)},
            {"epoch", kept_epoch},
            {"D", d},
            {"target_column", tr.target_column},
            {"feature_mean", tr.feature_mean},
            {"feature_scale", tr.feature_scale},
            {"note",
             "final_matrices.npy holds A_1..A_D and then the target operator B after epoch `epoch`; the "
             "model's feature k is (x_k - feature_mean[k]) / feature_scale[k]"}};
  if (tr.task == Task::regression) {
    j["target_mean"] = tr.target_mean;
    j["target_scale"] = tr.target_scale;
  } else {
    j["negative_class"] = tr.negative;
    j["positive_class"] = tr.positive;
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
  tr.target_column = int(number("target_column"));
  for (const char* key : {"feature_mean", "feature_scale"}) {
    const Json& v = field(key);
    if (!v.is_array() || int(v.size()) != d)
      throw Error("'" + path + "': the field '" + key + "' is not a list of D = " + std::to_string(d) + " numbers");
    std::vector<double>& out = std::string(key) == "feature_mean" ? tr.feature_mean : tr.feature_scale;
    for (const Json& x : v) {
      if (!x.is_number()) throw Error("'" + path + "': the field '" + key + "' holds a value that is not a number");
      out.push_back(x.get<double>());
    }
  }
  for (int k = 0; k < d; ++k)
    if (!std::isfinite(tr.feature_mean[k]) || !(tr.feature_scale[k] > 0) || !std::isfinite(tr.feature_scale[k]))
      throw Error(
          format("'%s': feature %d has mean %.17g and scale %.17g (expected a finite mean and a finite "
                 "scale > 0)",
                 path.c_str(), k, tr.feature_mean[k], tr.feature_scale[k]));
  if (tr.task == Task::regression) {
    tr.target_mean = number("target_mean");
    tr.target_scale = number("target_scale");
    if (!std::isfinite(tr.target_mean) || !(tr.target_scale > 0) || !std::isfinite(tr.target_scale))
      throw Error("'" + path + "': target_mean and target_scale must be finite, target_scale > 0");
  } else {
    tr.negative = number("negative_class");
    tr.positive = number("positive_class");
  }
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
