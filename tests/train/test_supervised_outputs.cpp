// Several target operators (docs/supervised.md, section 11): softmax over C classes and C regression
// outputs. The per-point losses against their formulas and finite differences, the reference gradient
// against central finite differences, LossGradient on every kernel and TargetPredictor against the
// reference, the metrics per class and per output, and a softmax training that learns three classes.
#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <tuple>

#include "qgml/io/configuration_io.hpp"
#include "qgml/model/initializers.hpp"
#include "qgml/train/loss_gradient.hpp"
#include "qgml/train/supervised_loss.hpp"
#include "qgml/train/supervised_metrics.hpp"
#include "qgml/train/target_predictor.hpp"
#include "qgml/train/trainer.hpp"

#include "test_support.hpp"
#include "train/supervised_reference.hpp"

using namespace qgml;
using namespace qgml::test;

namespace {

struct OutputsProblem {
  HostMatrices a;
  std::vector<HostMatrix> b;
  std::vector<double> x;
};

OutputsProblem random_outputs_problem(int d, int n, int outputs, int count, std::uint64_t seed) {
  OutputsProblem p{gaussian_hermitian_matrices(d, n, 0.7, seed), {}, random_points(count, d, 1.0, seed + 2)};
  const HostMatrices b = gaussian_hermitian_matrices(outputs, n, 0.7, seed + 1);
  for (int c = 0; c < outputs; ++c) p.b.push_back(matrix_of(b, c));
  return p;
}

// Targets per point: softmax the class t mod C; the regression losses y_hat - e with |e| >= 0.3 (away
// from mae's kink and, at delta = 1, from huber's); logistic the labels (t + c) mod 2.
std::vector<double> output_targets(SupervisedLoss loss, int outputs, const std::vector<double>& y_hat) {
  const int count = int(y_hat.size()) / outputs;
  std::vector<double> y;
  for (int t = 0; t < count; ++t) {
    if (loss == SupervisedLoss::softmax) {
      y.push_back(double(t % outputs));
      continue;
    }
    for (int c = 0; c < outputs; ++c) {
      const double magnitude[] = {0.3, 0.6, 1.5, 2.2};
      const double e = ((t + c) % 2 ? -1.0 : 1.0) * magnitude[(t + 2 * c) % 4];
      y.push_back(loss == SupervisedLoss::logistic ? double((t + c) % 2) : y_hat[std::size_t(t) * outputs + c] - e);
    }
  }
  return y;
}

// A_1..A_D, then B_1..B_C: the configuration a supervised model holds.
HostMatrices all_operators(const OutputsProblem& p) {
  HostMatrices all{p.a.D + int(p.b.size()), p.a.N, p.a.values};
  for (const HostMatrix& b : p.b) all.values.insert(all.values.end(), b.a.begin(), b.a.end());
  return all;
}

std::vector<double> reference_outputs(const OutputsProblem& p) {
  const int count = int(p.x.size()) / p.a.D;
  std::vector<double> classes(std::size_t(count), 0.0);
  SupervisedObjective probe;
  probe.loss = SupervisedLoss::softmax;
  return supervised_reference(p.a, p.b, p.x, classes, probe).y_hat;
}

double largest_magnitude(const std::vector<cplx>& v) {
  double m = 0;
  for (const cplx& z : v) m = std::max(m, std::abs(z));
  return m;
}

// sum_l Tr(G_l E_l) + sum_c Tr(G_c E_c) along a direction of (A_1..A_D, B_1..B_C).
double output_pair(const SupervisedReference& g, const HostMatrices& ea, const HostMatrices& eb) {
  double s = 0;
  const int n = g.grad_a.N;
  for (int k = 0; k < g.grad_a.D; ++k)
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) s += (g.grad_a(k, i, j) * ea(k, j, i)).real();
  for (std::size_t c = 0; c < g.grad_bs.size(); ++c)
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) s += (g.grad_bs[c](i, j) * eb(int(c), j, i)).real();
  return s;
}

}  // namespace

TEST_CASE("losses over several outputs: softmax cross-entropy and the mean of per-output losses, with derivatives",
          "[supervised][outputs]") {
  const std::vector<double> y_hat{0.3, -1.2, 2.0};
  const PointValues<double> out{y_hat.data()};
  // Softmax: l = log sum e^{y_hat} - y_hat_k, by the direct formula.
  const double partition = std::exp(0.3) + std::exp(-1.2) + std::exp(2.0);
  for (int k = 0; k < 3; ++k) {
    const std::vector<double> label{double(k)};
    const PointValues<double> y{label.data()};
    double log_partition = 0;
    const double l = point_loss(SupervisedLoss::softmax, 3, out, y, 0.0, log_partition);
    CHECK(std::abs(l - (std::log(partition) - y_hat[std::size_t(k)])) <= 1e-14);
    CHECK(std::abs(log_partition - std::log(partition)) <= 1e-14);
    // g_c = p_c - [c = k], and the derivatives match central differences of l.
    double sum = 0;
    for (int c = 0; c < 3; ++c) {
      const double half = point_half_derivative(SupervisedLoss::softmax, 3, out, y, 0.0, log_partition, c);
      sum += half;
      CHECK(std::abs(2 * half - (std::exp(y_hat[std::size_t(c)]) / partition - (c == k ? 1 : 0))) <= 1e-14);
      const double h = 1e-6;
      std::vector<double> up = y_hat, down = y_hat;
      up[std::size_t(c)] += h;
      down[std::size_t(c)] -= h;
      double ignored = 0;
      const double fd = (point_loss(SupervisedLoss::softmax, 3, PointValues<double>{up.data()}, y, 0.0, ignored) -
                         point_loss(SupervisedLoss::softmax, 3, PointValues<double>{down.data()}, y, 0.0, ignored)) /
                        (2 * h);
      CHECK(std::abs(2 * half - fd) <= 1e-8);
    }
    CHECK(std::abs(sum) <= 1e-15);  // the probabilities sum to 1
  }
  // No overflow at large logits; a label that is no class gives NaN.
  {
    const std::vector<double> big{800.0, 799.0, -800.0}, label{1.0};
    double log_partition = 0;
    const double l = point_loss(SupervisedLoss::softmax, 3, PointValues<double>{big.data()},
                                PointValues<double>{label.data()}, 0.0, log_partition);
    CHECK(std::abs(l - (1.0 + std::log1p(std::exp(-1.0)))) <= 1e-12);
    for (const double bad : {-1.0, 3.0, 0.5}) {
      const PointValues<double> no_class{&bad};
      CHECK(std::isnan(point_loss(SupervisedLoss::softmax, 3, out, no_class, 0.0, log_partition)));
      CHECK(std::isnan(point_half_derivative(SupervisedLoss::softmax, 3, out, no_class, 0.0, log_partition, 0)));
    }
  }
  // The regression losses: the mean over the outputs, each against its own target; C = 1 is the
  // one-output loss itself.
  const std::vector<double> y{1.0, -1.0, 0.5};
  const PointValues<double> target{y.data()};
  for (SupervisedLoss loss : {SupervisedLoss::mse, SupervisedLoss::mae, SupervisedLoss::huber}) {
    double log_partition = 0, want = 0;
    for (int c = 0; c < 3; ++c) want += supervised_loss_value(loss, y_hat[std::size_t(c)], y[std::size_t(c)], 1.0) / 3;
    CHECK(std::abs(point_loss(loss, 3, out, target, 1.0, log_partition) - want) <= 1e-15);
    for (int c = 0; c < 3; ++c)
      CHECK(point_half_derivative(loss, 3, out, target, 1.0, log_partition, c) ==
            0.5 * supervised_loss_derivative(loss, y_hat[std::size_t(c)], y[std::size_t(c)], 1.0) / 3);
    CHECK(point_loss(loss, 1, out, target, 1.0, log_partition) == supervised_loss_value(loss, 0.3, 1.0, 1.0));
  }
  CHECK(target_columns(SupervisedLoss::softmax, 7) == 1);
  CHECK(target_columns(SupervisedLoss::mse, 7) == 7);
  CHECK(parse_supervised_loss("softmax") == SupervisedLoss::softmax);
  CHECK(to_string(SupervisedLoss::softmax) == "softmax");
}

TEST_CASE("the gradient with several target operators equals central finite differences", "[supervised][outputs]") {
  double worst = 0;
  for (auto [loss, outputs_of_case] : {std::tuple{SupervisedLoss::softmax, 3}, std::tuple{SupervisedLoss::softmax, 2},
                                       std::tuple{SupervisedLoss::mse, 2}, std::tuple{SupervisedLoss::huber, 3},
                                       std::tuple{SupervisedLoss::logistic, 2}}) {
    const int outputs = outputs_of_case;  // a plain variable: lambdas capture it (structured bindings: C++20)
    const int d = 2, n = 5, count = 6;
    const OutputsProblem p = random_outputs_problem(d, n, outputs, count, 70 + outputs);
    const std::vector<double> y = output_targets(loss, outputs, reference_outputs(p));
    for (double lambda : {0.0, 0.5})
      for (double w : {0.0, 0.3}) {
        SupervisedObjective objective;
        objective.loss = loss;
        objective.lambda = lambda;
        objective.settings.w = w;
        objective.settings.penalty = PenaltyKind::frobenius_squared;
        objective.settings.penalty_weight = 0.05;
        const SupervisedReference r = supervised_reference(p.a, p.b, p.x, y, objective);
        REQUIRE(std::isfinite(r.loss));
        REQUIRE(r.grad_bs.size() == std::size_t(outputs));
        for (int dir = 0; dir < 4; ++dir) {
          const bool b_only = dir >= 2;
          HostMatrices ea = gaussian_hermitian_matrices(d, n, 1.0, 500 + dir);
          if (b_only) std::fill(ea.values.begin(), ea.values.end(), cplx(0));
          const HostMatrices eb = gaussian_hermitian_matrices(outputs, n, 1.0, 600 + dir);
          const auto loss_at = [&](double step) {
            std::vector<HostMatrix> b;
            for (int c = 0; c < outputs; ++c) b.push_back(axpy(p.b[std::size_t(c)], step, matrix_of(eb, c)));
            return supervised_reference(axpy(p.a, step, ea), b, p.x, y, objective).loss;
          };
          const double h = 2e-5;
          const auto central = [&](double step) { return (loss_at(step) - loss_at(-step)) / (2 * step); };
          const double fd = (4 * central(h / 2) - central(h)) / 3;
          const double analytic = output_pair(r, ea, eb);
          const double error = std::abs(analytic - fd) / std::abs(fd);
          worst = std::max(worst, error);
          INFO(to_string(loss) << ", C = " << outputs << ", lambda = " << lambda << ", w = " << w << ", direction "
                               << dir << ": analytic " << analytic << ", finite differences " << fd);
          CHECK(error <= 1e-7);
        }
      }
  }
  INFO("largest relative error " << worst);
  CHECK(worst <= 1e-7);
}

TEMPLATE_TEST_CASE("LossGradient with several target operators gives the reference's loss, outputs and gradient",
                   "[supervised][outputs][gradient]", QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  using Memory = typename Space::memory_space;
  const Space exec;
  const double tol = std::is_same_v<Real, float> ? 3e-4 : 1e-11;
  std::vector<LossKernel> kernels{LossKernel::separate, LossKernel::team};
  if constexpr (is_host_space_v<Space>) kernels.push_back(LossKernel::fused_host);
  const int mixed_n = LossGradient<Real, Space>::mixed_precision_min_n;
  // N = 3: the fused path's full spectrum; N = 6 and 300 points: its ground-state path over several
  // packs and chunks; N = mixed_precision_min_n: its mixed-precision path in double.
  for (auto [d, n, count] : {std::tuple{2, 3, 7}, std::tuple{3, 6, 300}, std::tuple{2, mixed_n, 19}})
    for (auto [loss, outputs] : {std::tuple{SupervisedLoss::softmax, 3}, std::tuple{SupervisedLoss::mse, 2}}) {
      const OutputsProblem p = random_outputs_problem(d, n, outputs, count, 90 + n + outputs);
      const std::vector<double> y = output_targets(loss, outputs, reference_outputs(p));
      const int columns = target_columns(loss, outputs);
      const HostMatrices all = all_operators(p);
      const auto features = to_configuration<Real>(p.a, exec);
      const auto operators = to_configuration<Real>(all, exec);
      const MatrixStack<Real, Memory> b =
          Kokkos::subview(operators.matrices(), Kokkos::make_pair(d, d + outputs), Kokkos::ALL, Kokkos::ALL);
      const auto points = to_device_points<Real, Space>(p.x, count, d);
      const auto y_device = to_device_points<Real, Space>(y, count, columns);
      for (double lambda : {0.0, 0.5})
        for (LossKernel kernel : kernels) {
          CAPTURE(d, n, count, to_string(loss), outputs, lambda, to_string(kernel));
          SupervisedObjective objective;
          objective.loss = loss;
          objective.lambda = lambda;
          objective.settings.w = 0.3;
          objective.settings.penalty = PenaltyKind::frobenius;
          objective.settings.penalty_weight = 0.1;
          const SupervisedReference r = supervised_reference(p.a, p.b, p.x, y, objective);
          SupervisedSettings sup;
          sup.loss = loss;
          sup.lambda = lambda;
          sup.outputs = outputs;
          LossGradient<Real, Space> engine(d, n, count, kernel, outputs);
          REQUIRE(engine.kernel() == kernel);
          engine.compute_supervised(exec, features, b, points, y_device, objective.settings, sup, Real(1) / count,
                                    false);
          engine.add_penalty(exec, operators, objective.settings);
          const auto sums = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), engine.sums());
          const auto g = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), engine.gradient());
          const auto predictions = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), engine.predictions());
          REQUIRE(g.extent(0) == std::size_t(d + outputs));
          CHECK(std::abs(sums(loss_total) / count + sums(loss_penalty) - r.loss) <= tol * std::max(1.0, r.loss));
          CHECK(std::abs(sums(loss_supervised) / count - r.supervised) <= tol * std::max(1.0, r.supervised));
          double prediction_error = 0;
          for (int t = 0; t < count; ++t)
            for (int c = 0; c < outputs; ++c)
              prediction_error = std::max(prediction_error,
                                          std::abs(double(predictions(t, c)) - r.y_hat[std::size_t(t) * outputs + c]));
          CHECK(prediction_error <= tol * std::max(1.0, largest_magnitude(all.values)));
          double scale = std::max(1.0, largest_magnitude(r.grad_a.values)), diff = 0;
          for (const HostMatrix& gb : r.grad_bs) scale = std::max(scale, largest_magnitude(gb.a));
          for (int k = 0; k < d + outputs; ++k)
            for (int i = 0; i < n; ++i)
              for (int j = 0; j < n; ++j) {
                const cplx want = k < d ? r.grad_a(k, i, j) : r.grad_bs[std::size_t(k - d)](i, j);
                diff = std::max(diff, std::abs(cplx(g(k, i, j).real(), g(k, i, j).imag()) - want));
              }
          CHECK(diff <= tol * scale);
        }
    }
}

TEMPLATE_TEST_CASE("TargetPredictor predicts every output of several target operators", "[supervised][outputs]",
                   QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  using Memory = typename Space::memory_space;
  const Space exec;
  const double tol = std::is_same_v<Real, float> ? 2e-4 : 1e-11;
  for (auto [d, n, count] : {std::tuple{2, 2, 9}, std::tuple{3, 6, 300}, std::tuple{2, 100, 11}}) {
    CAPTURE(d, n, count);
    const int outputs = 3;
    const OutputsProblem p = random_outputs_problem(d, n, outputs, count, 20 + n);
    const std::vector<double> want = reference_outputs(p);
    const HostMatrices all = all_operators(p);
    const auto features = to_configuration<Real>(p.a, exec);
    const auto operators = to_configuration<Real>(all, exec);
    const MatrixStack<Real, Memory> b =
        Kokkos::subview(operators.matrices(), Kokkos::make_pair(d, d + outputs), Kokkos::ALL, Kokkos::ALL);
    const auto points = to_device_points<Real, Space>(p.x, count, d);
    TargetPredictor<Real, Space> predictor(n, 64);
    RealMatrix<Real, Memory> y_hat("y_hat", count, outputs);
    predictor.predict(exec, features, b, points, y_hat);
    const auto got = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y_hat);
    double error = 0;
    for (int t = 0; t < count; ++t)
      for (int c = 0; c < outputs; ++c)
        error = std::max(error, std::abs(double(got(t, c)) - want[std::size_t(t) * outputs + c]));
    CHECK(error <= tol * std::max(1.0, largest_magnitude(all.values)));
  }
}

TEST_CASE("metrics of several outputs: accuracy, macro AUC and recall per class; R^2 per output",
          "[supervised][outputs][metrics]") {
  // Softmax rows (y_hat_0, y_hat_1, y_hat_2, class).
  const std::vector<double> rows{2, 0, 0, 0,  //  predicted 0, right
                                 0, 3, 1, 1,  //  1, right
                                 0, 1, 4, 2,  //  2, right
                                 1, 0, 2, 0,  //  2, wrong
                                 0, 2, 0, 1,  //  1, right
                                 0, 0, 1, 2};
  const SupervisedMetrics m = supervised_metrics(Task::classification, SupervisedLoss::softmax, 3, rows.data(), 6);
  CHECK(m.accuracy == 5.0 / 6);
  REQUIRE(m.per_output.size() == 3);
  CHECK(m.per_output[0] == 0.5);
  CHECK(m.per_output[1] == 1.0);
  CHECK(m.per_output[2] == 1.0);
  // The macro AUC from the binary AUC of each class's probability.
  double auc = 0;
  for (int c = 0; c < 3; ++c) {
    std::vector<double> score, member;
    for (int t = 0; t < 6; ++t) {
      const double* r = &rows[std::size_t(t) * 4];
      const double z = std::exp(r[0]) + std::exp(r[1]) + std::exp(r[2]);
      score.push_back(std::exp(r[c]) / z);
      member.push_back(r[3] == c ? 1.0 : 0.0);
    }
    auc += roc_auc(score.data(), member.data(), 6) / 3;
  }
  CHECK(std::abs(m.auc - auc) <= 1e-15);
  CHECK(m.auc < 1.0);
  CHECK(std::isnan(m.mae));
  // A class without points: its recall and the macro AUC are NaN.
  const std::vector<double> two_classes{2, 0, 0, 0, 0, 3, 1, 1};
  const SupervisedMetrics missing =
      supervised_metrics(Task::classification, SupervisedLoss::softmax, 3, two_classes.data(), 2);
  CHECK(std::isnan(missing.per_output[2]));
  CHECK(std::isnan(missing.auc));
  CHECK(missing.accuracy == 1.0);
  // Two regression outputs: rows (y_hat_0, y_hat_1, y_0, y_1); R^2 per output and their mean.
  const std::vector<double> reg{1.0, 10, 1.5, 12,  //
                                2.0, 20, 2.0, 18,  //
                                3.0, 30, 2.5, 30};
  const SupervisedMetrics r = supervised_metrics(Task::regression, SupervisedLoss::mse, 2, reg.data(), 3);
  const std::vector<double> h0{1, 2, 3}, y0{1.5, 2, 2.5}, h1{10, 20, 30}, y1{12, 18, 30};
  const SupervisedMetrics r0 = supervised_metrics(Task::regression, h0.data(), y0.data(), 3);
  const SupervisedMetrics r1 = supervised_metrics(Task::regression, h1.data(), y1.data(), 3);
  REQUIRE(r.per_output.size() == 2);
  CHECK(r.per_output[0] == r0.r2);
  CHECK(r.per_output[1] == r1.r2);
  CHECK(std::abs(r.r2 - (r0.r2 + r1.r2) / 2) <= 1e-15);
  CHECK(std::abs(r.mae - (r0.mae + r1.mae) / 2) <= 1e-15);
  CHECK(std::abs(r.rmse - std::sqrt((r0.rmse * r0.rmse + r1.rmse * r1.rmse) / 2)) <= 1e-14);
  // The mean loss of the rows is that of point_loss.
  CHECK(std::abs(mean_point_loss(SupervisedLoss::mse, 2, 1.0, reg.data(), 3) -
                 ((0.25 + 4) / 2 + (0 + 4) / 2 + (0.25 + 0) / 2) / 3) <= 1e-14);
}

TEMPLATE_TEST_CASE("softmax training learns three classes, and its metrics are those of its predictions",
                   "[supervised][outputs][training]", QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  using Memory = typename Space::memory_space;
  const Space exec;
  // Three Gaussian blobs in R^2, rows (x_0, x_1, class).
  const int count = 90, d = 2, n = 4, classes = 3;
  std::mt19937_64 rng(11);
  std::normal_distribution<double> noise(0.0, 0.35);
  const double centres[3][2] = {{1, 0}, {-0.5, 0.87}, {-0.5, -0.87}};
  std::vector<double> rows;
  for (int t = 0; t < count; ++t) {
    const int k = t % classes;
    rows.insert(rows.end(), {centres[k][0] + noise(rng), centres[k][1] + noise(rng), double(k)});
  }
  const auto data = to_device_points<Real, Space>(rows, count, d + 1);
  auto config = qr_configuration<Real>(d + classes, n, 5, exec);
  TrainingSettings s;
  s.task = Task::classification;
  s.supervised.loss = SupervisedLoss::softmax;
  s.supervised.outputs = classes;
  s.epochs = 40;
  s.batch_size = 30;
  s.learning_rate = 0.05;
  s.seed = 3;
  s.loss.w = 0;
  s.early_stop_tolerance = 0;
  Trainer<Real, Space> trainer(config, data, s, exec);
  trainer.set_validation(data);
  trainer.train();
  const auto& history = trainer.history();
  REQUIRE(history.size() == 40);
  CHECK(history.back().supervised < 0.6 * history.front().supervised);
  CHECK(history.back().validation.accuracy >= 0.9);
  REQUIRE(history.back().validation.per_output.size() == std::size_t(classes));
  // The validation metrics are those of the predictions of the final operators.
  const HostMatrices host = to_host(config, exec);
  HostMatrices a{d, n, {}};
  a.values.assign(host.values.begin(), host.values.begin() + d * n * n);
  const auto features = to_configuration<Real>(a, exec);
  const MatrixStack<Real, Memory> b =
      Kokkos::subview(config.matrices(), Kokkos::make_pair(d, d + classes), Kokkos::ALL, Kokkos::ALL);
  RealMatrix<Real, Memory> y_hat("y_hat", count, classes);
  TargetPredictor<Real, Space> predictor(n, count);
  predictor.predict(exec, features, b, Kokkos::subview(data, Kokkos::ALL, Kokkos::make_pair(0, d)), y_hat);
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y_hat);
  std::vector<double> predicted;
  for (int t = 0; t < count; ++t) {
    for (int c = 0; c < classes; ++c) predicted.push_back(double(h(t, c)));
    predicted.push_back(rows[std::size_t(t) * 3 + 2]);
  }
  const SupervisedMetrics m =
      supervised_metrics(Task::classification, SupervisedLoss::softmax, classes, predicted.data(), count);
  const double tol = std::is_same_v<Real, float> ? 1e-5 : 1e-12;
  CHECK(m.accuracy == history.back().validation.accuracy);
  CHECK(std::abs(m.auc - history.back().validation.auc) <= tol);
  for (int c = 0; c < classes; ++c)
    CHECK(m.per_output[std::size_t(c)] == history.back().validation.per_output[std::size_t(c)]);
}
