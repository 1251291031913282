// supervised.json of a supervised run: the task, D, the outputs and the transform (SupervisedTransform),
// written by qgml train and read back by qgml predict.
#pragma once

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "qgml/common/error.hpp"
#include "qgml/train/task.hpp"

#include "common/format.hpp"
#include "common/json_file.hpp"
#include "data/supervised_transform.hpp"

namespace qgml::app {

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
