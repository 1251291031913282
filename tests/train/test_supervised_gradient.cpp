// The supervised losses and the reference gradient of the supervised objective (docs/supervised.md):
// against central finite differences, against an independent formula for grad_B, at degenerate
// spectra, and against LossGradient where only the unsupervised term is left.
#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "qgml/linalg/batched_eigh.hpp"
#include "qgml/model/hamiltonian.hpp"
#include "qgml/model/initializers.hpp"
#include "qgml/train/loss_gradient.hpp"
#include "qgml/train/supervised_loss.hpp"
#include "qgml/train/target_predictor.hpp"

#include "test_support.hpp"
#include "train/loss_gradient_on_host.hpp"
#include "train/supervised_reference.hpp"

using namespace qgml;
using namespace qgml::test;

namespace {

constexpr SupervisedLoss all_losses[] = {SupervisedLoss::mae, SupervisedLoss::mse, SupervisedLoss::huber,
                                         SupervisedLoss::logistic};

struct Problem {
  HostMatrices a;
  HostMatrix b;
  std::vector<double> x;
};

Problem random_problem(int d, int n, int count, std::uint64_t seed) {
  return Problem{gaussian_hermitian_matrices(d, n, 0.7, seed),
                 matrix_of(gaussian_hermitian_matrices(1, n, 0.7, seed + 1), 0),
                 random_points(count, d, 1.0, seed + 2)};
}

// A joint direction in (A_1..A_D, B).
struct Direction {
  HostMatrices a;
  HostMatrix b;
};

Direction random_direction(int d, int n, std::uint64_t seed, bool b_only) {
  Direction e{gaussian_hermitian_matrices(d, n, 1.0, seed),
              matrix_of(gaussian_hermitian_matrices(1, n, 1.0, seed + 50), 0)};
  if (b_only) std::fill(e.a.values.begin(), e.a.values.end(), cplx(0));
  return e;
}

// sum_l Tr(G_l E_l) + Tr(G_B E_B): the directional derivative along E.
double pair(const SupervisedReference& g, const Direction& e) {
  double s = 0;
  for (int k = 0; k < g.grad_a.D; ++k)
    for (int i = 0; i < g.grad_a.N; ++i)
      for (int j = 0; j < g.grad_a.N; ++j) s += (g.grad_a(k, i, j) * e.a(k, j, i)).real();
  for (int i = 0; i < g.grad_b.n; ++i)
    for (int j = 0; j < g.grad_b.n; ++j) s += (g.grad_b(i, j) * e.b(j, i)).real();
  return s;
}

// |analytic - finite difference| / |finite difference| along e. The finite difference is the central
// difference D(h) = (L(+h) - L(-h)) / 2h extrapolated as (4 D(h/2) - D(h)) / 3, which cancels the
// h^2 L^(3) / 6 term of D(h): at the small gaps of random configurations L^(3) reaches ~10^3 (N = 6),
// which alone makes D(1e-5) miss by ~5e-7 relative.
double relative_fd_error(const Problem& p, const std::vector<double>& y, const SupervisedObjective& objective,
                         const SupervisedReference& at, const Direction& e, double& analytic, double& fd) {
  const double h = 2e-5;
  auto loss = [&](double step) {
    return supervised_reference(axpy(p.a, step, e.a), axpy(p.b, step, e.b), p.x, y, objective).loss;
  };
  auto central = [&](double step) { return (loss(step) - loss(-step)) / (2 * step); };
  fd = (4 * central(h / 2) - central(h)) / 3;
  analytic = pair(at, e);
  return std::abs(analytic - fd) / std::abs(fd);
}

// Targets y_t that keep e_t = y_hat_t - y_t at least 0.1 away from mae's kink (0) and, for delta >= 0.5,
// huber's (+-delta), with both huber branches used; labels 0, 1 for logistic.
std::vector<double> targets(SupervisedLoss loss, const std::vector<double>& y_hat, double delta) {
  const double magnitude[] = {0.3, 0.55, 1.4, 2.1};
  std::vector<double> y(y_hat.size());
  for (std::size_t t = 0; t < y.size(); ++t) {
    if (loss == SupervisedLoss::logistic) {
      y[t] = double(t % 2);
      continue;
    }
    const double e = (t % 2 ? -1.0 : 1.0) * magnitude[t % 4] * (loss == SupervisedLoss::huber ? delta : 1.0);
    y[t] = y_hat[t] - e;
  }
  return y;
}

double max_abs(const std::vector<cplx>& v) {
  double m = 0;
  for (const cplx& z : v) m = std::max(m, std::abs(z));
  return m;
}

bool hermitian(const HostMatrix& m) {
  for (int i = 0; i < m.n; ++i)
    for (int j = 0; j < m.n; ++j)
      if (std::abs(m(i, j) - std::conj(m(j, i))) > 1e-14 * std::max(1.0, max_abs(m.a))) return false;
  return true;
}

}  // namespace

TEST_CASE("supervised losses: values, derivatives, stable logistic, names", "[supervised]") {
  using L = SupervisedLoss;
  // Closed forms.
  CHECK(supervised_loss_value(L::mse, 1.5, 1.0, 1.0) == 0.25);
  CHECK(supervised_loss_derivative(L::mse, 1.5, 1.0, 1.0) == 1.0);
  CHECK(supervised_loss_value(L::mae, 0.7, 1.0, 1.0) == std::abs(0.7 - 1.0));
  CHECK(supervised_loss_derivative(L::mae, 0.7, 1.0, 1.0) == -1.0);
  CHECK(supervised_loss_derivative(L::mae, 1.0, 1.0, 1.0) == 0.0);
  CHECK(supervised_loss_value(L::huber, 0.5, 0.0, 1.0) == 0.125);
  CHECK(supervised_loss_value(L::huber, -3.0, 0.0, 1.0) == 2.5);
  CHECK(supervised_loss_derivative(L::huber, -3.0, 0.0, 1.0) == -1.0);
  CHECK(supervised_loss_value(L::huber, 3.0, 0.0, 2.0) == 4.0);
  CHECK(supervised_loss_derivative(L::huber, 3.0, 0.0, 2.0) == 2.0);
  CHECK(std::abs(supervised_loss_value(L::logistic, 0.0, 1.0, 1.0) - std::log(2.0)) <= 1e-16);
  CHECK(supervised_loss_derivative(L::logistic, 0.0, 1.0, 1.0) == -0.5);
  // Huber is continuous with a continuous derivative at |e| = delta.
  for (double delta : {0.5, 1.0, 2.0}) {
    CHECK(std::abs(supervised_loss_value(L::huber, delta * (1 + 1e-12), 0.0, delta) -
                   supervised_loss_value(L::huber, delta, 0.0, delta)) <= 1e-11);
    CHECK(std::abs(supervised_loss_derivative(L::huber, -delta * (1 + 1e-12), 0.0, delta) + delta) <= 1e-11);
  }
  // Derivatives against central differences of the values, away from the kinks.
  for (L loss : all_losses)
    for (double y : {0.0, 1.0})
      for (double y_hat : {-2.7, -0.4, 0.35, 0.8, 1.9, 3.3}) {
        CAPTURE(to_string(loss), y, y_hat);
        const double h = 1e-6;
        const double fd =
            (supervised_loss_value(loss, y_hat + h, y, 1.0) - supervised_loss_value(loss, y_hat - h, y, 1.0)) / (2 * h);
        CHECK(std::abs(supervised_loss_derivative(loss, y_hat, y, 1.0) - fd) <= 1e-8 * std::max(1.0, std::abs(fd)));
      }
  // The logistic loss at large logits: no overflow, and the small tail to full relative precision.
  CHECK(supervised_loss_value(L::logistic, 800.0, 1.0, 1.0) == 0.0);
  CHECK(supervised_loss_derivative(L::logistic, 800.0, 1.0, 1.0) == 0.0);
  CHECK(supervised_loss_value(L::logistic, 800.0, 0.0, 1.0) == 800.0);
  CHECK(supervised_loss_derivative(L::logistic, 800.0, 0.0, 1.0) == 1.0);
  CHECK(supervised_loss_value(L::logistic, -800.0, 1.0, 1.0) == 800.0);
  CHECK(supervised_loss_derivative(L::logistic, -800.0, 1.0, 1.0) == -1.0);
  CHECK(supervised_loss_value(L::logistic, -800.0, 0.0, 1.0) == 0.0);
  CHECK(std::abs(softplus(-40.0) - std::exp(-40.0)) <= 1e-15 * std::exp(-40.0));
  CHECK(std::abs(softplus(-3.0) - std::log1p(std::exp(-3.0))) <= 1e-16);
  CHECK(std::abs(sigmoid(-40.0) - std::exp(-40.0)) <= 1e-15 * std::exp(-40.0));
  CHECK(std::abs(softplus(-40.0f) - std::exp(-40.0f)) <= 1e-6f * std::exp(-40.0f));
  // Names.
  for (L loss : all_losses) CHECK(parse_supervised_loss(to_string(loss)) == loss);
  CHECK_THROWS_AS(parse_supervised_loss("l1"), Error);
}

TEST_CASE("supervised gradient equals central finite differences for every loss, lambda, w and penalty",
          "[supervised]") {
  struct Case {
    int d, n, count;
    double delta;
  };
  const std::vector<std::pair<PenaltyKind, double>> penalties{
      {PenaltyKind::none, 0.0}, {PenaltyKind::frobenius, 0.1}, {PenaltyKind::frobenius_squared, 0.1}};
  double worst = 0;
  for (const Case c : {Case{2, 3, 6, 1.0}, Case{3, 6, 7, 0.5}}) {
    const Problem p = random_problem(c.d, c.n, c.count, 40 + c.n);
    const std::vector<double> y_hat = supervised_reference(p.a, p.b, p.x, std::vector<double>(c.count, 0.0), {}).y_hat;
    for (SupervisedLoss loss : all_losses) {
      const std::vector<double> y = targets(loss, y_hat, c.delta);
      for (double lambda : {0.0, 0.5})
        for (double w : {0.0, 0.3, 1.0})
          for (auto [kind, gamma] : penalties) {
            SupervisedObjective objective;
            objective.loss = loss;
            objective.huber_delta = c.delta;
            objective.lambda = lambda;
            objective.settings.w = w;
            objective.settings.penalty = kind;
            objective.settings.penalty_weight = gamma;
            const SupervisedReference r = supervised_reference(p.a, p.b, p.x, y, objective);
            REQUIRE(std::isfinite(r.loss));
            CHECK(r.degenerate_points == 0);
            for (int k = 0; k < c.d; ++k) CHECK(hermitian(matrix_of(r.grad_a, k)));
            CHECK(hermitian(r.grad_b));
            // The loss terms away from the kinks, as chosen.
            for (int t = 0; t < c.count && loss != SupervisedLoss::logistic; ++t) {
              const double e = std::abs(r.y_hat[t] - y[t]);
              CHECK(e >= 0.1);
              if (loss == SupervisedLoss::huber) CHECK(std::abs(e - c.delta) >= 0.1);
            }
            for (int dir = 0; dir < 8; ++dir) {
              const bool b_only = dir >= 4;  // 4 joint directions of (A_1..A_D, B), then 4 of B alone
              const Direction e = random_direction(c.d, c.n, 300 + dir, b_only);
              double analytic = 0, fd = 0;
              const double error = relative_fd_error(p, y, objective, r, e, analytic, fd);
              worst = std::max(worst, error);
              INFO("D = " << c.d << ", N = " << c.n << ", " << to_string(loss) << ", lambda = " << lambda
                          << ", w = " << w << ", penalty " << to_string(kind) << ", direction " << dir
                          << (b_only ? " (B alone)" : "") << ": analytic " << analytic << ", finite differences " << fd
                          << ", relative error " << error);
              CHECK(error <= 1e-7);
            }
          }
    }
  }
  INFO("largest relative error " << worst);
  CHECK(worst <= 1e-7);
}

TEST_CASE("grad_B is the mean of l'(y_hat) psi_0 psi_0^H (psi_0 from the batched eigensolver)", "[supervised]") {
  using Space = Kokkos::DefaultHostExecutionSpace;
  const Space exec;
  for (auto [d, n] : {std::pair{2, 3}, std::pair{3, 6}}) {
    const int count = 6;
    const Problem p = random_problem(d, n, count, 70 + n);
    // psi_0 of H = S - sum_k x_k A_k + |x|^2 / 2 by the library's batched solver.
    auto config = to_configuration<double>(p.a, exec);
    auto points = to_device_points<double, Space>(p.x, count, d);
    MatrixStack<double, Kokkos::HostSpace> h("qgml::test::H", count, n, n), v("qgml::test::V", count, n, n);
    RealMatrix<double, Kokkos::HostSpace> w("qgml::test::w", count, n);
    IntVector<Kokkos::HostSpace> info("qgml::test::info", count);
    build_hamiltonians(exec, config, points, h);
    batched_eigh(exec, h, w, v, info);
    exec.fence();
    std::vector<double> y_hat(count);
    std::vector<reference::Vector> psi(count, reference::Vector(n));
    for (int t = 0; t < count; ++t) {
      REQUIRE(info(t) == 0);
      for (int i = 0; i < n; ++i) psi[t][i] = cplx(v(t, 0, i).real(), v(t, 0, i).imag());
      y_hat[t] = reference::inner(psi[t], reference::apply(p.b, psi[t])).real();
    }
    for (SupervisedLoss loss : all_losses) {
      SupervisedObjective objective;
      objective.loss = loss;
      objective.lambda = 0.5;
      objective.settings.w = 0.3;
      const std::vector<double> y = targets(loss, y_hat, objective.huber_delta);
      const SupervisedReference r = supervised_reference(p.a, p.b, p.x, y, objective);
      HostMatrix expected(n);
      for (int t = 0; t < count; ++t) {
        CHECK(std::abs(r.y_hat[t] - y_hat[t]) <= 1e-13);
        const double dl = supervised_loss_derivative(loss, y_hat[t], y[t], objective.huber_delta);
        for (int i = 0; i < n; ++i)
          for (int j = 0; j < n; ++j) expected(i, j) += dl / count * psi[t][i] * std::conj(psi[t][j]);
      }
      CAPTURE(d, n, to_string(loss));
      CHECK(max_abs(expected.a) > 0.01);
      CHECK(max_abs_difference(r.grad_b, expected) <= 1e-13 * max_abs(expected.a));
    }
  }
}

TEST_CASE("excited-state degeneracy (E_1 = E_2 exactly) gives a finite gradient equal to finite differences",
          "[supervised]") {
  // A_1 = diag(0, 1, 1), A_2 = 0.1 (|0><1| + |1><0|), A_3 = diag(0, 0, 0.1): at x = (0.2, 0, 0),
  // H = diag(0.025, 0.325, 0.325). B couples the ground state to both states of the degenerate pair.
  HostMatrices a{3, 3, std::vector<cplx>(27)};
  a(0, 1, 1) = a(0, 2, 2) = 1;
  a(1, 0, 1) = a(1, 1, 0) = 0.1;
  a(2, 2, 2) = 0.1;
  HostMatrix b = matrix_of(gaussian_hermitian_matrices(1, 3, 0.7, 81), 0);
  b(0, 1) = cplx(0.4, 0.2);
  b(1, 0) = std::conj(b(0, 1));
  b(0, 2) = cplx(-0.3, 0.5);
  b(2, 0) = std::conj(b(0, 2));
  std::vector<double> x{0.2, 0.0, 0.0};
  {
    HostMatrix h(3);
    for (int k = 0; k < 3; ++k) {
      HostMatrix shifted = matrix_of(a, k);
      for (int i = 0; i < 3; ++i) shifted(i, i) -= x[k];
      const HostMatrix sq = multiply(shifted, shifted);
      for (std::size_t q = 0; q < h.a.size(); ++q) h.a[q] += 0.5 * sq.a[q];
    }
    const auto eig = reference::eigenpairs(h);
    REQUIRE(eig.values[1] == eig.values[2]);
    REQUIRE(eig.values[1] - eig.values[0] > 0.29);
  }
  // The degenerate point alone, then with four random points.
  for (int count : {1, 5}) {
    std::vector<double> pts = x;
    const std::vector<double> more = random_points(count - 1, 3, 1.0, 82);
    pts.insert(pts.end(), more.begin(), more.end());
    const Problem p{a, b, pts};
    const std::vector<double> y_hat = supervised_reference(a, b, pts, std::vector<double>(count, 0.0), {}).y_hat;
    for (SupervisedLoss loss : {SupervisedLoss::mse, SupervisedLoss::logistic})
      for (double lambda : {0.0, 0.5}) {
        SupervisedObjective objective;
        objective.loss = loss;
        objective.lambda = lambda;
        objective.settings.w = 0.3;
        const std::vector<double> y = targets(loss, y_hat, 1.0);
        const SupervisedReference r = supervised_reference(a, b, pts, y, objective);
        for (const cplx& z : r.grad_a.values) CHECK((std::isfinite(z.real()) && std::isfinite(z.imag())));
        for (const cplx& z : r.grad_b.a) CHECK((std::isfinite(z.real()) && std::isfinite(z.imag())));
        for (int dir = 0; dir < 4; ++dir) {
          const Direction e = random_direction(3, 3, 90 + dir, false);
          double analytic = 0, fd = 0;
          const double error = relative_fd_error(p, y, objective, r, e, analytic, fd);
          INFO(count << " points, " << to_string(loss) << ", lambda = " << lambda << ", direction " << dir
                     << ": analytic " << analytic << ", finite differences " << fd << ", relative error " << error);
          CHECK(error <= 1e-7);
        }
      }
  }
}

TEST_CASE("degenerate ground state: regularised gradient is finite, skip drops the point's gradient", "[supervised]") {
  // The spin-1 matrices (the fuzzy sphere, N = 3): H(0) = j (j + 1) / 2 I, so the ground state of x = 0 is
  // exactly threefold degenerate, and that of every x != 0 is not.
  const HostMatrices a = spin_matrices(3);
  const HostMatrix b = matrix_of(gaussian_hermitian_matrices(1, 3, 0.7, 83), 0);
  std::vector<double> others = random_points(4, 3, 1.0, 84);
  std::vector<double> pts{0.0, 0.0, 0.0};
  pts.insert(pts.end(), others.begin(), others.end());
  for (SupervisedLoss loss : all_losses) {
    CAPTURE(to_string(loss));
    SupervisedObjective objective;
    objective.loss = loss;
    objective.lambda = 0.5;
    objective.settings.w = 0.3;
    const std::vector<double> y_hat = supervised_reference(a, b, pts, std::vector<double>(5, 0.0), {}).y_hat;
    const std::vector<double> y = targets(loss, y_hat, 1.0);
    const SupervisedReference regularized = supervised_reference(a, b, pts, y, objective);
    CHECK(regularized.degenerate_points == 1);
    for (const cplx& z : regularized.grad_a.values) CHECK((std::isfinite(z.real()) && std::isfinite(z.imag())));
    for (const cplx& z : regularized.grad_b.a) CHECK((std::isfinite(z.real()) && std::isfinite(z.imag())));
    // skip: the batch gradient is that of the other 4 points, still divided by 5.
    objective.settings.degeneracy = DegeneracyPolicy::skip;
    const SupervisedReference skipped = supervised_reference(a, b, pts, y, objective);
    CHECK(skipped.degenerate_points == 1);
    CHECK(skipped.loss == regularized.loss);
    const std::vector<double> y_others(y.begin() + 1, y.end());
    const SupervisedReference without = supervised_reference(a, b, others, y_others, objective);
    CHECK(without.degenerate_points == 0);
    double diff = 0;
    for (std::size_t i = 0; i < without.grad_a.values.size(); ++i)
      diff = std::max(diff, std::abs(skipped.grad_a.values[i] - 0.8 * without.grad_a.values[i]));
    for (std::size_t i = 0; i < without.grad_b.a.size(); ++i)
      diff = std::max(diff, std::abs(skipped.grad_b.a[i] - 0.8 * without.grad_b.a[i]));
    CHECK(diff <= 1e-14 * std::max(1.0, max_abs(without.grad_a.values)));
  }
}

TEST_CASE("with the supervised term switched off the gradient is lambda times LossGradient's", "[supervised]") {
  for (auto [d, n] : {std::pair{2, 3}, std::pair{3, 6}}) {
    const Problem p = random_problem(d, n, 7, 60 + n);
    const std::vector<double> y_hat = supervised_reference(p.a, p.b, p.x, std::vector<double>(7, 0.0), {}).y_hat;
    for (double w : {0.0, 0.3, 1.0}) {
      CAPTURE(d, n, w);
      // y = y_hat exactly with mse: l' = 0, so phi, grad_A and grad_B have no supervised part.
      SupervisedObjective objective;
      objective.loss = SupervisedLoss::mse;
      objective.lambda = 0.5;
      objective.settings.w = w;
      const SupervisedReference r = supervised_reference(p.a, p.b, p.x, y_hat, objective);
      LossSettings s;
      s.w = w;
      const auto [loss, g] = loss_and_gradient<double, Kokkos::DefaultHostExecutionSpace>(p.a, p.x, s);
      const double scale = std::max(1.0, max_abs(g.values));
      CHECK(r.supervised == 0);
      CHECK(std::abs(r.loss - 0.5 * loss) <= 1e-12 * std::abs(loss));
      double diff = 0;
      for (std::size_t i = 0; i < g.values.size(); ++i)
        diff = std::max(diff, std::abs(r.grad_a.values[i] - 0.5 * g.values[i]));
      CHECK(diff <= 1e-12 * scale);
      CHECK(max_abs(r.grad_b.a) == 0);
      // B = 0, y = 0 and the penalty at lambda = 1: the [A_k, B] terms vanish, the rest is LossGradient's.
      for (auto kind : {PenaltyKind::frobenius, PenaltyKind::frobenius_squared}) {
        CAPTURE(to_string(kind));
        SupervisedObjective with_penalty = objective;
        with_penalty.lambda = 1;
        with_penalty.settings.penalty = kind;
        with_penalty.settings.penalty_weight = 0.1;
        s.penalty = kind;
        s.penalty_weight = 0.1;
        const SupervisedReference rp =
            supervised_reference(p.a, HostMatrix(n), p.x, std::vector<double>(7, 0.0), with_penalty);
        const auto [loss_p, g_p] = loss_and_gradient<double, Kokkos::DefaultHostExecutionSpace>(p.a, p.x, s);
        CHECK(rp.penalty > 0);
        CHECK(std::abs(rp.loss - loss_p) <= 1e-12 * std::abs(loss_p));
        double diff_p = 0;
        for (std::size_t i = 0; i < g_p.values.size(); ++i)
          diff_p = std::max(diff_p, std::abs(rp.grad_a.values[i] - g_p.values[i]));
        CHECK(diff_p <= 1e-12 * std::max(1.0, max_abs(g_p.values)));
      }
    }
  }
}

TEMPLATE_TEST_CASE(
    "LossGradient::compute_supervised gives the reference's loss, predictions and gradient on every kernel",
    "[supervised][gradient]", QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  using Memory = typename Space::memory_space;
  const Space exec;
  const double tol = std::is_same_v<Real, float> ? 2e-4 : 1e-11;
  // N = 3: the fused path's full spectrum; N = 6: its ground-state path. 300 points: several packs and
  // chunks of the fused path, a partial last pack. N = mixed_precision_min_n: in double the fused path's
  // reduction in single precision, refined in double (ground_state/ground_state_mixed.hpp), 19 points: a pair
  // of packs and a half pair.
  std::vector<LossKernel> kernels{LossKernel::separate, LossKernel::team};
  if constexpr (is_host_space_v<Space>) kernels.push_back(LossKernel::fused_host);
  const int mixed_n = LossGradient<Real, Space>::mixed_precision_min_n;
  for (auto [d, n, count] : {std::tuple{2, 3, 7}, std::tuple{3, 6, 300}, std::tuple{2, mixed_n, 19}}) {
    const Problem p = random_problem(d, n, count, 90 + n);
    const std::vector<double> y_hat = supervised_reference(p.a, p.b, p.x, std::vector<double>(count, 0.0), {}).y_hat;
    // (A_1..A_D, B) as one configuration for the penalty; the features alone for H.
    HostMatrices all{d + 1, n, p.a.values};
    all.values.insert(all.values.end(), p.b.a.begin(), p.b.a.end());
    const auto features = to_configuration<Real>(p.a, exec);
    const auto operators = to_configuration<Real>(all, exec);
    const Matrix<Real, Memory> b = Kokkos::subview(operators.matrices(), d, Kokkos::ALL, Kokkos::ALL);
    const auto points = to_device_points<Real, Space>(p.x, count, d);
    for (SupervisedLoss loss : all_losses) {
      const std::vector<double> y = targets(loss, y_hat, 0.5);
      const auto targets_2d = to_device_points<Real, Space>(y, count, 1);
      const auto y_device = Kokkos::subview(targets_2d, Kokkos::ALL, 0);
      for (double lambda : {0.0, 0.5})
        for (double w : {0.0, 0.3})
          for (PenaltyKind kind : {PenaltyKind::none, PenaltyKind::frobenius})
            for (LossKernel kernel : kernels) {
              CAPTURE(d, n, count, to_string(loss), lambda, w, to_string(kind), to_string(kernel));
              SupervisedObjective objective;
              objective.loss = loss;
              objective.huber_delta = 0.5;
              objective.lambda = lambda;
              objective.settings.w = w;
              objective.settings.penalty = kind;
              objective.settings.penalty_weight = kind == PenaltyKind::none ? 0.0 : 0.1;
              const SupervisedReference r = supervised_reference(p.a, p.b, p.x, y, objective);
              SupervisedSettings sup;
              sup.loss = loss;
              sup.huber_delta = 0.5;
              sup.lambda = lambda;
              LossGradient<Real, Space> engine(d, n, count, kernel, 1);
              REQUIRE(engine.kernel() == kernel);
              CHECK(engine.mixed_precision_path() == (std::is_same_v<Real, double> && n >= mixed_n));
              engine.compute_supervised(exec, features, b, points, y_device, objective.settings, sup, Real(1) / count,
                                        false);
              engine.add_penalty(exec, operators, objective.settings);
              const auto sums = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), engine.sums());
              const auto g = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), engine.gradient());
              const auto predictions = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), engine.predictions());
              REQUIRE(g.extent(0) == std::size_t(d + 1));
              CHECK(std::abs(sums(loss_total) / count + sums(loss_penalty) - r.loss) <= tol * std::max(1.0, r.loss));
              CHECK(std::abs(sums(loss_supervised) / count - r.supervised) <= tol * std::max(1.0, r.supervised));
              CHECK(std::abs(sums(loss_penalty) - r.penalty) <= tol * std::max(1.0, r.penalty));
              double prediction_error = 0;
              for (int t = 0; t < count; ++t)
                prediction_error = std::max(prediction_error, std::abs(double(predictions(t, 0)) - r.y_hat[t]));
              CHECK(prediction_error <= tol * std::max(1.0, max_abs(p.b.a)));
              const double scale = std::max({1.0, max_abs(r.grad_a.values), max_abs(r.grad_b.a)});
              double diff = 0;
              for (int k = 0; k <= d; ++k)
                for (int i = 0; i < n; ++i)
                  for (int j = 0; j < n; ++j) {
                    const cplx expected = k < d ? r.grad_a(k, i, j) : r.grad_b(i, j);
                    diff = std::max(diff, std::abs(cplx(g(k, i, j).real(), g(k, i, j).imag()) - expected));
                  }
              CHECK(diff <= tol * scale);
            }
    }
  }
}

TEST_CASE("a supervised LossGradient refuses the unsupervised calls, and an unsupervised one the supervised call",
          "[supervised][gradient]") {
  using Space = Kokkos::DefaultHostExecutionSpace;
  const Space exec;
  const Problem p = random_problem(2, 3, 4, 5);
  const auto features = to_configuration<double>(p.a, exec);
  const auto points = to_device_points<double, Space>(p.x, 4, 2);
  LossGradient<double, Space> supervised(2, 3, 4, LossKernel::automatic, 1);
  CHECK(supervised.gradient().extent(0) == 3);
  CHECK_THROWS_AS(supervised.compute(exec, features, points, LossSettings{}, 0.25, false), Error);
  LossSettings penalty;
  penalty.penalty = PenaltyKind::frobenius;
  penalty.penalty_weight = 0.1;
  CHECK_THROWS_AS(supervised.add_penalty(exec, features, penalty), Error);  // needs the D + 1 operators
  LossGradient<double, Space> unsupervised(2, 3, 4);
  const Matrix<double, Space::memory_space> b("qgml::test::B", 3, 3);
  const Kokkos::View<double*, Space::memory_space> y("qgml::test::y", 4);
  CHECK_THROWS_AS(
      unsupervised.compute_supervised(exec, features, b, points, y, LossSettings{}, SupervisedSettings{}, 0.25, false),
      Error);
  CHECK_THROWS_AS((LossGradient<double, Space>(2, 3, 4, LossKernel::automatic, -1)), Error);
  // A LossGradient for 2 target operators refuses one B, and supervised settings of another C.
  LossGradient<double, Space> two(2, 3, 4, LossKernel::automatic, 2);
  CHECK(two.gradient().extent(0) == 4);
  CHECK_THROWS_AS(
      two.compute_supervised(exec, features, b, points, y, LossSettings{}, SupervisedSettings{}, 0.25, false), Error);
}

TEMPLATE_TEST_CASE("TargetPredictor predicts the reference's y_hat (packed ground-state kernel on CPUs)",
                   "[supervised][predict]", QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  using Memory = typename Space::memory_space;
  const Space exec;
  const double tol = std::is_same_v<Real, float> ? 2e-4 : 1e-11;
  // N = 2: whole spectrum; N = 3, 6, 100: Householder, E_0 and inverse iteration (N = 100: above the
  // eigensolver's automatic packed range, below the packed kernels' limit); 300 points: a partial last
  // pack; a chunk of 64 for the batched_eigh path (devices).
  for (auto [d, n, count] : {std::tuple{2, 2, 9}, std::tuple{2, 3, 7}, std::tuple{3, 6, 300}, std::tuple{2, 100, 11}}) {
    CAPTURE(d, n, count);
    const Problem p = random_problem(d, n, count, 40 + n);
    const std::vector<double> want = supervised_reference(p.a, p.b, p.x, std::vector<double>(count, 0.0), {}).y_hat;
    HostMatrices all{d + 1, n, p.a.values};
    all.values.insert(all.values.end(), p.b.a.begin(), p.b.a.end());
    const auto features = to_configuration<Real>(p.a, exec);
    const auto operators = to_configuration<Real>(all, exec);
    const Matrix<Real, Memory> b = Kokkos::subview(operators.matrices(), d, Kokkos::ALL, Kokkos::ALL);
    const auto points = to_device_points<Real, Space>(p.x, count, d);
    TargetPredictor<Real, Space> predictor(n, 64);
    CHECK(predictor.packed() == is_host_space_v<Space>);
    RealVector<Real, Memory> y_hat("y_hat", count);
    predictor.predict(exec, features, b, points, y_hat);
    const auto got = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y_hat);
    double error = 0;
    for (int t = 0; t < count; ++t) error = std::max(error, std::abs(double(got(t)) - want[t]));
    CHECK(error <= tol * std::max(1.0, max_abs(p.b.a)));
  }
}
