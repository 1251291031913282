// qgml predict --run RUN_DIR --data X.csv|X.npy [--output FILE] [--quiet]: the predictions of a
// regression or classification run (docs/supervised.md) for new points. X holds the features (D
// columns) or the features and the target in the run's layout (data.target_column, D + 1 columns); with
// targets, the metrics are printed and a target column is written. The output, a CSV written
// atomically (default RUN_DIR/predictions.csv): regression `prediction` in the targets' units;
// classification `probability,label` (P(positive class) = sigmoid(y_hat), the label a class value).

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
#include "format.hpp"
#include "supervised_data.hpp"
#include "supervised_prediction.hpp"

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
  if (operators.D != d + 1)
    throw Error(
        format("'%s' holds %d matrices; the run's supervised.json says D = %d features (expected D + 1 = %d: "
               "the feature matrices, then the target operator B)",
               matrices_path.c_str(), operators.D, d, d + 1));
  const HostData raw = read_points(data_path);
  if (raw.cols != d && raw.cols != d + 1)
    throw Error(
        format("'%s' has %d columns; the run learned D = %d features: give %d columns (features) or %d "
               "(features and the target, as in the training data)",
               data_path.c_str(), raw.cols, d, d, d + 1));
  const bool with_targets = raw.cols == d + 1;
  HostData rows = raw.cols == d + 1 && tr.target_column >= 0
                      ? detail::features_then_target(raw, tr.target_column < 0 ? d : tr.target_column, nullptr)
                      : raw;
  if (with_targets) check_labels(tr, rows, data_path);
  HostData features = rows;
  if (with_targets) {
    features.cols = d;
    features.values.clear();
    for (int t = 0; t < rows.rows; ++t)
      for (int k = 0; k < d; ++k) features.values.push_back(rows(t, k));
  }
  const SupervisedPrediction p = predict_supervised(tr, operators, features, matrices_path);

  // The metrics compare in the model's units for classification (the logit against the 0/1 target) and
  // in the targets' units for regression.
  std::vector<double> pairs;
  std::ostringstream csv;
  csv.precision(17);
  const bool classification = tr.task == Task::classification;
  csv << (classification ? "probability,label" : "prediction") << (with_targets ? ",target" : "") << "\n";
  for (int t = 0; t < features.rows; ++t) {
    const double y = with_targets ? rows(t, d) : 0.0;
    if (classification) {
      csv << p.probability[t] << "," << p.value[t];
      pairs.insert(pairs.end(), {p.model_output[t], y == tr.positive ? 1.0 : 0.0});
    } else {
      csv << p.value[t];
      pairs.insert(pairs.end(), {p.value[t], y});
    }
    if (with_targets) csv << "," << y;
    csv << "\n";
  }
  const int failed = int(p.failed);
  if (output.empty()) output = (fs::path(run_dir) / "predictions.csv").string();
  write_file_atomically(output, csv.str());
  if (!quiet) {
    std::printf("qgml predict: %d points of %s with the %s model of %s (N = %d, D = %d) -> %s\n", features.rows,
                data_path.c_str(), to_string(tr.task).c_str(), run_dir.c_str(), operators.N, d, output.c_str());
    if (failed > 0) std::printf("warning: %d points have no prediction (their eigensolve failed): nan\n", failed);
    if (with_targets) {
      const SupervisedMetrics m =
          supervised_metrics(tr.task, pairs.data(), pairs.data() + 1, std::size_t(features.rows), 2);
      if (classification)
        std::printf("accuracy %.6f  ROC AUC %.6f\n", m.accuracy, m.auc);
      else
        std::printf("MAE %.8g  RMSE %.8g  R^2 %.6f\n", m.mae, m.rmse, m.r2);
    }
  }
  return 0;
}

}  // namespace qgml::app
