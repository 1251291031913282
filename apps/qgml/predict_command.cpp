// qgml predict --run RUN_DIR --data X.csv|X.npy [--output FILE] [--quiet]: the predictions of a
// regression or classification run (docs/supervised.md) for new points. X holds the features (D
// columns) or the features and the targets in the run's layout (data.target_column(s), D + the target
// columns); with targets, the metrics are printed and the target columns are written. The output, a CSV
// written atomically (default RUN_DIR/predictions.csv): regression `prediction` (several outputs
// `prediction_0,prediction_1,...`) in the targets' units; classification `probability,label` (two
// classes: P(positive class) = sigmoid(y_hat)) or `probability_<class>,...,label` (softmax: P of each
// class), the label a class value.

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "qgml/common/error.hpp"
#include "qgml/io/atomic_file.hpp"
#include "qgml/io/configuration_io.hpp"
#include "qgml/io/data_io.hpp"
#include "qgml/train/supervised_metrics.hpp"

#include "commands.hpp"
#include "common/format.hpp"
#include "data/supervised_data.hpp"
#include "data/supervised_prediction.hpp"

namespace qgml::app {

namespace fs = std::filesystem;

int predict_command(const std::vector<std::string>& args) {
  std::string run_dir, data_path, output;
  bool quiet = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const auto value = [&](const char* option) {
      if (i + 1 >= args.size()) throw Error(std::string(option) + " needs a value");
      return args[++i];
    };
    if (a == "--run")
      run_dir = value("--run");
    else if (a == "--data")
      data_path = value("--data");
    else if (a == "--output" || a == "-o")
      output = value("--output");
    else if (a == "--quiet" || a == "-q")
      quiet = true;
    else
      throw Error("qgml predict: unexpected argument '" + a +
                  "' (qgml predict --run RUN_DIR --data X.csv [--output FILE])");
  }
  if (run_dir.empty() || data_path.empty())
    throw Error("qgml predict needs --run RUN_DIR (a regression or classification run) and --data X.csv|X.npy");
  int d = 0;
  const SupervisedTransform tr = read_supervised_transform((fs::path(run_dir) / "supervised.json").string(), d);
  const std::string matrices_path = (fs::path(run_dir) / "final_matrices.npy").string();
  const HostMatrices operators = load_matrices(matrices_path);
  const int outputs = tr.outputs(), targets = tr.target_count();
  const HostData raw = read_points(data_path);
  if (raw.cols != d && raw.cols != d + targets)
    throw Error(
        format("'%s' has %d columns; the run learned D = %d features: give %d columns (features) or %d "
               "(features and the target%s, as in the training data)",
               data_path.c_str(), raw.cols, d, d, d + targets, targets > 1 ? "s" : ""));
  const bool with_targets = raw.cols == d + targets;
  std::vector<int> columns = tr.target_columns;
  if (columns.empty())
    for (int j = 0; j < targets; ++j) columns.push_back(d + j);
  const HostData rows = with_targets ? detail::features_then_targets(raw, columns, nullptr) : raw;
  if (with_targets) check_labels(tr, rows, data_path);
  HostData features = rows;
  if (with_targets) {
    features.cols = d;
    features.values.clear();
    for (int t = 0; t < rows.rows; ++t)
      for (int k = 0; k < d; ++k) features.values.push_back(rows(t, k));
  }
  const SupervisedPrediction p = predict_supervised(tr, operators, features, matrices_path);

  // The metrics compare in the model's units for classification (the logits against the 0/1 target or
  // the class index) and in the targets' units for regression: rows of the C outputs, then the targets.
  std::vector<double> metric_rows;
  std::ostringstream csv;
  csv.precision(17);
  const bool classification = tr.task == Task::classification;
  const auto header = [&](const char* name, int count) {
    std::string h;
    for (int c = 0; c < count; ++c)
      h += (c ? "," : "") + std::string(name) + (count > 1 ? "_" + std::to_string(c) : "");
    return h;
  };
  if (classification && tr.softmax) {
    for (double v : tr.classes) csv << "probability_" << format("%.17g", v) << ",";
    csv << "label";
  } else {
    csv << (classification ? "probability,label" : header("prediction", outputs));
  }
  csv << (with_targets ? "," + header("target", targets) : "") << "\n";
  const std::size_t c_count = std::size_t(outputs);
  for (int t = 0; t < features.rows; ++t) {
    const std::size_t i = std::size_t(t);
    if (classification) {
      if (tr.softmax)
        for (std::size_t c = 0; c < c_count; ++c) csv << p.probability[i * c_count + c] << ",";
      else
        csv << p.probability[i] << ",";
      csv << p.value[i];
      for (std::size_t c = 0; c < c_count; ++c) metric_rows.push_back(p.model_output[i * c_count + c]);
      if (with_targets) metric_rows.push_back(tr.class_target(rows(t, d)));
    } else {
      for (std::size_t c = 0; c < c_count; ++c) {
        csv << (c ? "," : "") << p.value[i * c_count + c];
        metric_rows.push_back(p.value[i * c_count + c]);
      }
      for (int j = 0; j < targets && with_targets; ++j) metric_rows.push_back(rows(t, d + j));
    }
    for (int j = 0; j < targets && with_targets; ++j) csv << "," << rows(t, d + j);
    csv << "\n";
  }
  const int failed = int(p.failed);
  if (output.empty()) output = (fs::path(run_dir) / "predictions.csv").string();
  write_file_atomically(output, csv.str());
  if (!quiet) {
    std::printf("qgml predict: %d points of %s with the %s model of %s (N = %d, D = %d%s) -> %s\n", features.rows,
                data_path.c_str(), to_string(tr.task).c_str(), run_dir.c_str(), operators.N, d,
                outputs > 1 ? format(", %d target operators", outputs).c_str() : "", output.c_str());
    if (failed > 0) std::printf("warning: %d points have no prediction (their eigensolve failed): nan\n", failed);
    if (with_targets) {
      const SupervisedLoss loss = !classification ? SupervisedLoss::mse
                                  : tr.softmax    ? SupervisedLoss::softmax
                                                  : SupervisedLoss::logistic;
      const SupervisedMetrics m =
          supervised_metrics(tr.task, loss, outputs, metric_rows.data(), std::size_t(features.rows));
      if (classification)
        std::printf("accuracy %.6f  ROC AUC %.6f\n", m.accuracy, m.auc);
      else
        std::printf("MAE %.8g  RMSE %.8g  R^2 %.6f\n", m.mae, m.rmse, m.r2);
      if (!m.per_output.empty()) {
        std::printf("%s", classification ? "recall per class:" : "R^2 per output:");
        for (std::size_t c = 0; c < m.per_output.size(); ++c)
          std::printf(" %s %.4f", classification ? format("%.17g", tr.classes[c]).c_str() : std::to_string(c).c_str(),
                      m.per_output[c]);
        std::printf("\n");
      }
    }
  }
  return 0;
}

}  // namespace qgml::app
