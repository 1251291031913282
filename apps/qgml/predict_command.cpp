// qgml predict --run RUN_DIR --data X.csv|X.npy [--output FILE] [--quiet]: the predictions of a
// regression or classification run (docs/supervised.md) for new points. X holds the features (D
// columns) or the features and the target in the run's layout (data.target_column, D + 1 columns); with
// targets, the metrics are printed and a target column is written. The output, a CSV written
// atomically (default RUN_DIR/predictions.csv): regression `prediction` in the targets' units;
// classification `probability,label` (P(positive class) = sigmoid(y_hat), the label a class value).
#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "qgml/common/error.hpp"
#include "qgml/io/atomic_file.hpp"
#include "qgml/io/configuration_io.hpp"
#include "qgml/io/data_io.hpp"
#include "qgml/train/supervised_metrics.hpp"
#include "qgml/train/target_predictor.hpp"

#include "commands.hpp"
#include "format.hpp"
#include "supervised_data.hpp"

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
  HostData model = rows;
  apply_supervised_transform(tr, model, with_targets);

  using Exec = Kokkos::DefaultExecutionSpace;
  using Memory = Exec::memory_space;
  const Exec exec;
  HostMatrices features{d, operators.N, {}};
  features.values.assign(operators.values.begin(),
                         operators.values.begin() + std::size_t(d) * operators.N * operators.N);
  const auto feature_config = to_configuration<double>(features, exec);
  const auto all = to_configuration<double>(operators, exec);
  const Matrix<double, Memory> b = Kokkos::subview(all.matrices(), d, Kokkos::ALL, Kokkos::ALL);
  HostData x = model;
  if (with_targets) {
    x.cols = d;
    x.values.clear();
    for (int t = 0; t < model.rows; ++t)
      for (int k = 0; k < d; ++k) x.values.push_back(model(t, k));
  }
  const auto points = to_device_points<double>(exec, x);
  RealVector<double, Memory> y_hat("qgml::predict::y_hat", x.rows);
  TargetPredictor<double, Exec> predictor(operators.N, std::min(x.rows, 25000));
  predictor.predict(exec, feature_config, b, points, y_hat);
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y_hat);

  // Back to the targets' units: the regression prediction, or the logit for classification.
  std::vector<double> pairs;
  std::ostringstream csv;
  csv.precision(17);
  const bool classification = tr.task == Task::classification;
  csv << (classification ? "probability,label" : "prediction") << (with_targets ? ",target" : "") << "\n";
  int failed = 0;
  for (int t = 0; t < x.rows; ++t) {
    const double v = h(t);
    failed += std::isfinite(v) ? 0 : 1;
    if (classification) {
      const double p = v >= 0 ? 1 / (1 + std::exp(-v)) : std::exp(v) / (1 + std::exp(v));
      csv << p << "," << (v > 0 ? tr.positive : tr.negative);
      pairs.insert(pairs.end(), {v, with_targets ? model(t, d) : 0.0});
    } else {
      const double y = tr.target_mean + tr.target_scale * v;
      csv << y;
      pairs.insert(pairs.end(), {y, with_targets ? rows(t, d) : 0.0});
    }
    if (with_targets) csv << "," << rows(t, d);
    csv << "\n";
  }
  if (output.empty()) output = (fs::path(run_dir) / "predictions.csv").string();
  write_file_atomically(output, csv.str());
  if (!quiet) {
    std::printf("qgml predict: %d points of %s with the %s model of %s (N = %d, D = %d) -> %s\n", x.rows,
                data_path.c_str(), to_string(tr.task).c_str(), run_dir.c_str(), operators.N, d, output.c_str());
    if (failed > 0) std::printf("warning: %d points have no prediction (their eigensolve failed): nan\n", failed);
    if (with_targets) {
      const SupervisedMetrics m = supervised_metrics(tr.task, pairs.data(), pairs.data() + 1, std::size_t(x.rows), 2);
      if (classification)
        std::printf("accuracy %.6f  ROC AUC %.6f\n", m.accuracy, m.auc);
      else
        std::printf("MAE %.8g  RMSE %.8g  R^2 %.6f\n", m.mae, m.rmse, m.r2);
    }
  }
  return 0;
}

}  // namespace qgml::app
