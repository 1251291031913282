// Supervised training (docs/supervised.md): the trainer's epoch records against predictions computed
// independently (TargetPredictor, the metrics on the host), bit-identical resume, the metrics
// themselves, and the supervised history file.
#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <unistd.h>

#include "qgml/io/configuration_io.hpp"
#include "qgml/model/initializers.hpp"
#include "qgml/train/supervised_metrics.hpp"
#include "qgml/train/target_predictor.hpp"
#include "qgml/train/trainer.hpp"

#include "temp_dir.hpp"
#include "test_support.hpp"

using namespace qgml;
using namespace qgml::test;
namespace fs = std::filesystem;

namespace {

constexpr int features = 2, matrix_n = 4;

// T points of R^2 in [-1, 1]^2 with the target y = x_0 x_1 + x_0 / 2 (regression) or the label
// [x_0 x_1 + x_0 / 2 > 0] (classification), as rows (x_0, x_1, y).
std::vector<double> target_points(int count, Task task, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> p;
  for (int t = 0; t < count; ++t) {
    const double x0 = u(rng), x1 = u(rng), f = x0 * x1 + 0.5 * x0;
    p.insert(p.end(), {x0, x1, task == Task::classification ? (f > 0 ? 1.0 : 0.0) : f});
  }
  return p;
}

TrainingSettings supervised_settings(Task task, int epochs, int batch) {
  TrainingSettings s;
  s.task = task;
  s.supervised.loss = default_supervised_loss(task);
  s.epochs = epochs;
  s.batch_size = batch;
  s.learning_rate = 0.05;
  s.seed = 3;
  s.loss.w = 0;
  s.early_stop_tolerance = 0;
  return s;
}

// (y_hat, y) of the points with the operators of `operators` (features then B), on the host.
template <class Real, class Space>
std::vector<double> predicted_pairs(const Space& exec, const MatrixConfiguration<Real, Space>& operators,
                                    const std::vector<double>& rows, int count) {
  using Memory = typename Space::memory_space;
  const HostMatrices all = to_host(operators, exec);
  HostMatrices a{features, matrix_n, {}};
  a.values.assign(all.values.begin(), all.values.begin() + features * matrix_n * matrix_n);
  const auto feature_config = to_configuration<Real>(a, exec);
  const Matrix<Real, Memory> b = Kokkos::subview(operators.matrices(), features, Kokkos::ALL, Kokkos::ALL);
  const auto points = to_device_points<Real, Space>(rows, count, features + 1);
  RealVector<Real, Memory> y_hat("y_hat", count);
  TargetPredictor<Real, Space> predictor(matrix_n, 7);  // several chunks
  predictor.predict(exec, feature_config, b, Kokkos::subview(points, Kokkos::ALL, Kokkos::make_pair(0, features)),
                    y_hat);
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y_hat);
  std::vector<double> pairs;
  for (int t = 0; t < count; ++t) pairs.insert(pairs.end(), {double(h(t)), rows[std::size_t(t) * 3 + 2]});
  return pairs;
}

void check_metrics(const SupervisedMetrics& got, const SupervisedMetrics& want, double tol) {
  const auto same = [tol](double x, double y) {
    return (std::isnan(x) && std::isnan(y)) || std::abs(x - y) <= tol * std::max(1.0, std::abs(y));
  };
  CHECK(same(got.mae, want.mae));
  CHECK(same(got.rmse, want.rmse));
  CHECK(same(got.r2, want.r2));
  CHECK(same(got.accuracy, want.accuracy));
  CHECK(same(got.auc, want.auc));
}

}  // namespace

TEST_CASE("supervised metrics: MAE, RMSE, R^2, accuracy and ROC AUC", "[supervised][metrics]") {
  const std::vector<double> y_hat{1.0, 2.5, 2.0, 5.0}, y{1.0, 2.0, 3.0, 4.0};
  const SupervisedMetrics r = supervised_metrics(Task::regression, y_hat.data(), y.data(), 4);
  CHECK(r.mae == 2.5 / 4);                                // |0| + 0.5 + 1 + 1
  CHECK(std::abs(r.rmse - std::sqrt(2.25 / 4)) < 1e-15);  // 0 + 0.25 + 1 + 1
  CHECK(std::abs(r.r2 - (1 - 2.25 / 5.0)) < 1e-15);       // sum (y - 2.5)^2 = 5
  CHECK(std::isnan(r.accuracy));
  CHECK(std::isnan(supervised_metrics(Task::regression, y_hat.data(), std::vector<double>(4, 1.0).data(), 4).r2));
  // AUC against the count over all (positive, negative) pairs, ties counting one half.
  std::mt19937_64 rng(5);
  std::uniform_int_distribution<int> score(0, 6), label(0, 1);
  std::vector<double> s(301), l(301);
  for (std::size_t i = 0; i < s.size(); ++i) {
    s[i] = score(rng) - 3.0;
    l[i] = label(rng);
  }
  double pairs = 0, wins = 0;
  std::size_t right = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    right += (s[i] > 0) == (l[i] == 1.0) ? 1 : 0;
    for (std::size_t j = 0; j < s.size(); ++j)
      if (l[i] == 1.0 && l[j] == 0.0) {
        pairs += 1;
        wins += s[i] > s[j] ? 1.0 : (s[i] == s[j] ? 0.5 : 0.0);
      }
  }
  const SupervisedMetrics c = supervised_metrics(Task::classification, s.data(), l.data(), s.size());
  CHECK(std::abs(c.auc - wins / pairs) < 1e-14);
  CHECK(c.accuracy == double(right) / double(s.size()));
  CHECK(std::isnan(c.mae));
  const std::vector<double> one_class(4, 1.0);
  CHECK(std::isnan(roc_auc(y_hat.data(), one_class.data(), 4)));
  // Strided pairs (prediction, target) read like two arrays.
  const std::vector<double> interleaved{1.0, 1.0, 2.5, 2.0, 2.0, 3.0, 5.0, 4.0};
  CHECK(supervised_metrics(Task::regression, interleaved.data(), interleaved.data() + 1, 4, 2).mae == r.mae);
  // Targets near 1e200: the metrics scale with them, finite rather than inf or nan; the
  // ordinary ones keep their bits.
  std::vector<double> big_hat, big;
  for (const double v : y_hat) big_hat.push_back(v * 1e200);
  for (const double v : y) big.push_back(v * 1e200);
  const SupervisedMetrics b = supervised_metrics(Task::regression, big_hat.data(), big.data(), 4);
  CHECK(std::abs(b.mae / 1e200 - r.mae) < 1e-14);
  CHECK(std::abs(b.rmse / 1e200 - r.rmse) < 1e-14);
  CHECK(std::abs(b.r2 - r.r2) < 1e-14);
}

TEMPLATE_TEST_CASE("supervised training: an epoch's loss and metrics are those of its predictions, and it learns",
                   "[supervised][training]", QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const Space exec;
  const double tol = std::is_same_v<Real, float> ? 2e-4 : 1e-10;
  for (Task task : {Task::regression, Task::classification}) {
    CAPTURE(to_string(task));
    const int count = 120, validation_count = 50;
    const std::vector<double> rows = target_points(count, task, 11),
                              validation = target_points(validation_count, task, 12);
    const auto data = to_device_points<Real, Space>(rows, count, features + 1);
    auto config = qr_configuration<Real>(features + 1, matrix_n, 1, exec);
    const std::vector<double> initial = predicted_pairs(exec, config, rows, count);
    // Full batch: epoch 1 predicts every point with the initial operators.
    TrainingSettings s = supervised_settings(task, 40, 0);
    Trainer<Real, Space> trainer(config, data, s, exec);
    trainer.set_validation(to_device_points<Real, Space>(validation, validation_count, features + 1));
    const auto history = trainer.train();
    REQUIRE(history.size() == 40);
    const EpochRecord& first = history.front();
    CHECK(first.has_targets);
    double loss = 0;
    for (int t = 0; t < count; ++t)
      loss += supervised_loss_value(s.supervised.loss, initial[2 * t], initial[2 * t + 1], 1.0);
    CHECK(std::abs(first.supervised - loss / count) <= tol * std::max(1.0, loss / count));
    CHECK(std::abs(first.total - loss / count) <= tol * std::max(1.0, loss / count));  // lambda = 0, no penalty
    check_metrics(first.train, supervised_metrics(task, initial.data(), initial.data() + 1, count, 2), tol);
    // Validation: the operators at the end of the last epoch.
    const std::vector<double> last = predicted_pairs(exec, config, validation, validation_count);
    check_metrics(history.back().validation,
                  supervised_metrics(task, last.data(), last.data() + 1, validation_count, 2), tol);
    CHECK(history.back().supervised < 0.8 * first.supervised);
    // S = 1/2 sum_k A_k^2 of the whole stack (features and B) is valid after training (the optimizer
    // leaves it to the end of each epoch in supervised training).
    {
      auto trained = Kokkos::create_mirror(config.square_sum());
      Kokkos::deep_copy(trained, config.square_sum());
      config.update_square_sum(exec);
      auto fresh = Kokkos::create_mirror(config.square_sum());
      Kokkos::deep_copy(fresh, config.square_sum());
      for (int i = 0; i < matrix_n; ++i)
        for (int j = 0; j < matrix_n; ++j) REQUIRE(trained(i, j) == fresh(i, j));
    }
    if (task == Task::regression)
      CHECK(history.back().validation.r2 > 0.5);
    else
      CHECK(history.back().validation.accuracy > 0.8);
  }
}

TEMPLATE_TEST_CASE("supervised training resumes from a checkpoint bit-identically", "[supervised][training]",
                   QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const Space exec;
  TempDir dir;
  const int count = 90;
  const auto data = to_device_points<Real, Space>(target_points(count, Task::regression, 21), count, features + 1);
  TrainingSettings s = supervised_settings(Task::regression, 6, 40);  // 3 batches, the last partial
  s.supervised.lambda = 0.3;
  s.loss.w = 0.2;
  s.loss.penalty = PenaltyKind::frobenius;
  s.loss.penalty_weight = 0.01;
  s.validation_patience = 100;  // tracks the best epoch, which the checkpoint must carry
  const auto validation = to_device_points<Real, Space>(target_points(30, Task::regression, 22), 30, features + 1);
  auto full_config = qr_configuration<Real>(features + 1, matrix_n, 1, exec);
  Trainer<Real, Space> full(full_config, data, s, exec);
  full.set_validation(validation);
  const auto want = full.train();
  {
    TrainingSettings c = s;
    c.checkpoint_dir = dir.path.string();
    c.checkpoint_every = 3;
    auto config = qr_configuration<Real>(features + 1, matrix_n, 1, exec);
    Trainer<Real, Space> first(config, data, c, exec);
    first.set_validation(validation);
    first.train([](const EpochRecord& r) { return r.epoch < 3; });
    REQUIRE(first.epoch() == 3);
  }
  auto config = qr_configuration<Real>(features + 1, matrix_n, 999, exec);
  Trainer<Real, Space> resumed(config, data, s, exec);
  resumed.set_validation(validation);
  resumed.load_checkpoint(dir.path.string());
  const auto got = resumed.train();
  REQUIRE(got.size() == 6);
  CHECK(resumed.best_epoch() == full.best_epoch());
  CHECK(resumed.best_validation_loss() == full.best_validation_loss());
  for (int e = 0; e < 6; ++e) {
    CHECK(got[e].total == want[e].total);
    CHECK(got[e].supervised == want[e].supervised);
    CHECK(got[e].train.rmse == want[e].train.rmse);
    CHECK(got[e].penalty == want[e].penalty);
  }
  const HostMatrices a = to_host(config, exec), b = to_host(full_config, exec);
  REQUIRE(a.values.size() == b.values.size());
  CHECK(std::memcmp(a.values.data(), b.values.data(), a.values.size() * sizeof(a.values[0])) == 0);
  REQUIRE(full.restore_best() == resumed.restore_best());
  const HostMatrices best_a = to_host(config, exec), best_b = to_host(full_config, exec);
  CHECK(std::memcmp(best_a.values.data(), best_b.values.data(), best_a.values.size() * sizeof(best_a.values[0])) == 0);
}

TEMPLATE_TEST_CASE("validation patience stops after the best epoch and restore_best returns its operators",
                   "[supervised][training]", QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const Space exec;
  // Targets that are noise: fitting them makes the validation loss rise after its early minimum.
  std::mt19937_64 rng(17);
  std::normal_distribution<double> normal;
  const auto noise_points = [&](int count) {
    std::vector<double> p;
    for (int t = 0; t < 3 * count; ++t) p.push_back(normal(rng));
    return p;
  };
  const int count = 24, validation_count = 40;
  const std::vector<double> rows = noise_points(count), validation = noise_points(validation_count);
  const auto data = to_device_points<Real, Space>(rows, count, features + 1);
  auto config = qr_configuration<Real>(features + 1, matrix_n, 2, exec);
  TrainingSettings s = supervised_settings(Task::regression, 500, 8);
  s.validation_patience = 5;
  Trainer<Real, Space> trainer(config, data, s, exec);
  trainer.set_validation(to_device_points<Real, Space>(validation, validation_count, features + 1));
  const auto history = trainer.train();
  // mse in the units trained on (set_target_units not called): the validation loss is RMSE^2.
  int best = 1;
  for (int e = 1; e <= int(history.size()); ++e)
    if (history[e - 1].validation.rmse < history[best - 1].validation.rmse) best = e;
  CHECK(trainer.stopped_early());
  CHECK(trainer.best_epoch() == best);
  CHECK(int(history.size()) == best + 5);
  const double tol = std::is_same_v<Real, float> ? 1e-5 : 1e-12;
  const double rmse = history[best - 1].validation.rmse;
  CHECK(std::abs(trainer.best_validation_loss() - rmse * rmse) <= tol * rmse * rmse);
  CHECK(trainer.restore_best() == best);
  const std::vector<double> kept = predicted_pairs(exec, config, validation, validation_count);
  check_metrics(supervised_metrics(Task::regression, kept.data(), kept.data() + 1, validation_count, 2),
                history[best - 1].validation, tol);
}

TEMPLATE_TEST_CASE("supervised training runs alike on the fused host, team and separate kernels",
                   "[supervised][training]", QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const Space exec;
  const double tol = std::is_same_v<Real, float> ? 2e-3 : 1e-9;
  std::vector<LossKernel> kernels{LossKernel::team, LossKernel::separate};
  if constexpr (is_host_space_v<Space>) kernels.push_back(LossKernel::fused_host);
  for (Task task : {Task::regression, Task::classification}) {
    const int count = 90;
    const auto data = to_device_points<Real, Space>(target_points(count, task, 31), count, features + 1);
    TrainingSettings s = supervised_settings(task, 8, 40);  // 3 batches, the last partial
    s.supervised.lambda = 0.3;
    s.loss.w = 0.2;
    s.loss.penalty = PenaltyKind::frobenius;
    s.loss.penalty_weight = 0.01;
    std::vector<std::vector<EpochRecord>> histories;
    std::vector<HostMatrices> finals;
    for (LossKernel kernel : kernels) {
      s.kernel = kernel;
      auto config = qr_configuration<Real>(features + 1, matrix_n, 1, exec);
      Trainer<Real, Space> trainer(config, data, s, exec);
      histories.push_back(trainer.train());
      finals.push_back(to_host(config, exec));
    }
    for (std::size_t k = 1; k < kernels.size(); ++k) {
      CAPTURE(to_string(task), to_string(kernels[k]));
      REQUIRE(histories[k].size() == histories[0].size());
      for (std::size_t e = 0; e < histories[0].size(); ++e) {
        const EpochRecord &got = histories[k][e], &want = histories[0][e];
        CHECK(std::abs(got.total - want.total) <= tol * std::abs(want.total));
        CHECK(std::abs(got.supervised - want.supervised) <= tol * std::abs(want.supervised));
        CHECK(std::abs(got.reconstruction - want.reconstruction) <= tol * std::abs(want.reconstruction));
        if (task == Task::regression) CHECK(std::abs(got.train.rmse - want.train.rmse) <= tol * want.train.rmse);
      }
      double diff = 0, scale = 0;
      for (std::size_t i = 0; i < finals[0].values.size(); ++i) {
        diff = std::max(diff, std::abs(finals[k].values[i] - finals[0].values[i]));
        scale = std::max(scale, std::abs(finals[0].values[i]));
      }
      CHECK(diff <= tol * scale);
    }
  }
}

TEST_CASE("supervised training refuses a loss that does not fit the task, too few operators, too few targets",
          "[supervised][training]") {
  using Space = Kokkos::DefaultHostExecutionSpace;
  const Space exec;
  const auto data = to_device_points<double, Space>(target_points(10, Task::classification, 1), 10, features + 1);
  auto config = qr_configuration<double>(features + 1, matrix_n, 1, exec);
  TrainingSettings s = supervised_settings(Task::classification, 1, 0);
  s.supervised.loss = SupervisedLoss::mse;
  CHECK_THROWS_WITH((Trainer<double, Space>(config, data, s, exec)),
                    Catch::Matchers::ContainsSubstring("classification trains with the logistic loss"));
  s = supervised_settings(Task::regression, 1, 0);
  s.supervised.loss = SupervisedLoss::logistic;
  CHECK_THROWS_WITH((Trainer<double, Space>(config, data, s, exec)),
                    Catch::Matchers::ContainsSubstring("regression trains with mse, mae or huber"));
  auto one = qr_configuration<double>(1, matrix_n, 1, exec);
  const auto one_column = to_device_points<double, Space>(std::vector<double>(10, 0.5), 10, 1);
  CHECK_THROWS_WITH((Trainer<double, Space>(one, one_column, supervised_settings(Task::regression, 1, 0), exec)),
                    Catch::Matchers::ContainsSubstring("the 1 target operator(s)"));
  // Softmax over 3 classes needs 3 target operators after the features, and logistic takes one output.
  s = supervised_settings(Task::classification, 1, 0);
  s.supervised.loss = SupervisedLoss::softmax;
  s.supervised.outputs = 3;
  CHECK_THROWS_WITH((Trainer<double, Space>(config, data, s, exec)),
                    Catch::Matchers::ContainsSubstring("the 3 target operator(s) in the configuration, got 3"));
  s.supervised.loss = SupervisedLoss::logistic;
  CHECK_THROWS_WITH((Trainer<double, Space>(config, data, s, exec)),
                    Catch::Matchers::ContainsSubstring("1 for the logistic loss"));
  // Two outputs of a regression: the points need two target columns.
  auto four = qr_configuration<double>(features + 2, matrix_n, 1, exec);
  s = supervised_settings(Task::regression, 1, 0);
  s.supervised.outputs = 2;
  CHECK_THROWS_WITH((Trainer<double, Space>(four, data, s, exec)),
                    Catch::Matchers::ContainsSubstring("expected 4 (the D = 2 coordinates, then 2 target column(s))"));
}

TEST_CASE("a supervised history round-trips through history.csv with its metric columns", "[supervised][training]") {
  TempDir dir;
  std::vector<EpochRecord> h(2);
  for (int e = 0; e < 2; ++e) {
    h[e].epoch = e + 1;
    h[e].total = 0.5 / (e + 1);
    h[e].has_targets = true;
    h[e].supervised = 0.25 / (e + 1);
    h[e].train.mae = 0.1 + e;
    h[e].train.rmse = 0.2 + e;
    h[e].train.r2 = 0.3 + e;
    h[e].validation.rmse = 0.7 + e;
  }
  const std::string path = (dir.path / "history.csv").string();
  write_history_csv(path, h);
  std::ifstream in(path);
  std::string header;
  std::getline(in, header);
  CHECK_THAT(header, Catch::Matchers::EndsWith(",validation_accuracy,validation_auc"));
  const auto back = read_history_csv(path);
  REQUIRE(back.size() == 2);
  for (int e = 0; e < 2; ++e) {
    CHECK(back[e].has_targets);
    CHECK(back[e].supervised == h[e].supervised);
    CHECK(back[e].train.r2 == h[e].train.r2);
    CHECK(back[e].validation.rmse == h[e].validation.rmse);
    CHECK(std::isnan(back[e].validation.auc));
  }
  // An unsupervised history keeps its twelve columns.
  for (auto& r : h) r.has_targets = false;
  write_history_csv(path, h);
  CHECK_FALSE(read_history_csv(path).front().has_targets);
}
