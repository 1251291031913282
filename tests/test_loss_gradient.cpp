#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>

#include "qgml/initializers.hpp"
#include "qgml/loss_gradient.hpp"

#include "test_support.hpp"

using namespace qgml;
using namespace qgml::test;

namespace {

// Mean loss (plus penalty) and gradient of the points, on the host in double.
template <class Real, class Space>
std::pair<double, HostMatrices> loss_and_gradient(const HostMatrices& m, const std::vector<double>& pts,
                                                  const LossSettings& s) {
  const Space exec;
  auto config = to_configuration<Real>(m, exec);
  const int count = int(pts.size()) / m.D;
  auto points = to_device_points<Real, Space>(pts, count, m.D);
  LossGradient<Real, Space> engine(m.D, m.N, count);
  engine.compute(exec, config, points, s, Real(1) / count, false);
  engine.add_penalty(exec, config, s);
  auto sums = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), engine.sums());
  auto g = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), engine.gradient());
  HostMatrices gh{m.D, m.N, std::vector<cplx>(m.values.size())};
  for (int k = 0; k < m.D; ++k)
    for (int i = 0; i < m.N; ++i)
      for (int j = 0; j < m.N; ++j) gh(k, i, j) = cplx(g(k, i, j).real(), g(k, i, j).imag());
  return {sums(loss_total) / count + sums(loss_penalty), gh};
}

HostMatrices random_direction(int d, int n, std::uint64_t seed) { return gaussian_hermitian_matrices(d, n, 1.0, seed); }

HostMatrices axpy(const HostMatrices& a, double h, const HostMatrices& e) {
  HostMatrices r = a;
  for (std::size_t i = 0; i < r.values.size(); ++i) r.values[i] += h * e.values[i];
  return r;
}

// Tr(G E) summed over the matrices: the directional derivative along the Hermitian direction E.
double pair(const HostMatrices& g, const HostMatrices& e) {
  double s = 0;
  for (int k = 0; k < g.D; ++k)
    for (int i = 0; i < g.N; ++i)
      for (int j = 0; j < g.N; ++j) s += (g(k, i, j) * e(k, j, i)).real();
  return s;
}

}  // namespace

TEST_CASE("analytic gradient equals central finite differences along random Hermitian directions", "[gradient]") {
  using Space = Kokkos::DefaultHostExecutionSpace;
  const std::vector<std::pair<PenaltyKind, double>> penalties{
      {PenaltyKind::none, 0.0}, {PenaltyKind::frobenius, 0.1}, {PenaltyKind::frobenius_squared, 0.1}};
  for (auto [d, n] : {std::pair{3, 4}, std::pair{2, 6}}) {
    const HostMatrices m = gaussian_hermitian_matrices(d, n, 0.7, 3);
    const std::vector<double> pts = random_points(7, d, 1.0, 4);
    for (double w : {0.0, 0.3, 1.0})
      for (auto [kind, lambda] : penalties) {
        LossSettings s;
        s.w = w;
        s.penalty = kind;
        s.penalty_weight = lambda;
        const auto [loss, g] = loss_and_gradient<double, Space>(m, pts, s);
        for (int dir = 0; dir < 4; ++dir) {
          const HostMatrices e = random_direction(d, n, 100 + dir);
          const double h = 1e-5;
          const double fd = (loss_and_gradient<double, Space>(axpy(m, h, e), pts, s).first -
                             loss_and_gradient<double, Space>(axpy(m, -h, e), pts, s).first) /
                            (2 * h);
          const double an = pair(g, e);
          INFO("D = " << d << ", N = " << n << ", w = " << w << ", penalty " << to_string(kind) << ", direction " << dir
                      << ": analytic " << an << ", finite differences " << fd);
          CHECK(std::abs(an - fd) <= 1e-6 * std::max(1.0, std::abs(fd)));
        }
        // The gradient is Hermitian.
        for (int k = 0; k < d; ++k)
          for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) CHECK(std::abs(g(k, i, j) - std::conj(g(k, j, i))) <= 1e-14);
      }
  }
}

TEMPLATE_TEST_CASE("excited-state degeneracy (A = diag(0,1,1), x = (0.2,0,0)) gives a finite gradient", "[gradient]",
                   QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  HostMatrices m{3, 3, std::vector<cplx>(27)};
  m(0, 1, 1) = 1;
  m(0, 2, 2) = 1;
  for (double w : {0.0, 0.5}) {
    LossSettings s;
    s.w = w;
    const auto [loss, g] = loss_and_gradient<Real, Space>(m, {0.2, 0.0, 0.0}, s);
    CHECK(std::isfinite(loss));
    CHECK(std::abs(loss - 0.04) <= 1e-6);  // xbar = 0, sigma^2 = 0: loss = d^2 = 0.04
    for (auto z : g.values) CHECK((std::isfinite(z.real()) && std::isfinite(z.imag())));
    // d loss / d (A_1)_00 = 2 (xbar_1 - x_1) = -0.4 (1 - w) + w * 2 * (0 - 0.2) * ... from {B_1, P}: 2 (0 - 0.2)
    CHECK(std::abs(g(0, 0, 0).real() - ((1 - w) * (-0.4) + w * (-0.4))) <= 1e-5);
  }
}

TEST_CASE("the fuzzy sphere c J_k, c = 1/(j + w), is a stationary point of the loss on the unit sphere", "[gradient]") {
  using Space = Kokkos::DefaultHostExecutionSpace;
  // Fibonacci lattice: nearly uniform points on the unit sphere.
  const int count = 4000;
  std::vector<double> pts(3 * count);
  const double golden = 3.141592653589793 * (3 - std::sqrt(5.0));
  for (int t = 0; t < count; ++t) {
    const double z = 1 - 2 * (t + 0.5) / count, r = std::sqrt(1 - z * z);
    pts[3 * t] = r * std::cos(golden * t);
    pts[3 * t + 1] = r * std::sin(golden * t);
    pts[3 * t + 2] = z;
  }
  for (int n : {2, 3, 4})
    for (double w : {0.0, 0.25}) {
      const double j = 0.5 * (n - 1);
      HostMatrices spin = spin_matrices(n);
      auto scaled = [&](double c) {
        HostMatrices m = spin;
        for (auto& v : m.values) v *= c;
        return m;
      };
      LossSettings s;
      s.w = w;
      const double c = 1 / (j + w);
      const auto [loss, g] = loss_and_gradient<double, Space>(scaled(c), pts, s);
      const auto [loss_off, g_off] = loss_and_gradient<double, Space>(scaled(1.2 * c), pts, s);
      double norm = 0, norm_off = 0;
      for (auto z : g.values) norm += std::norm(z);
      for (auto z : g_off.values) norm_off += std::norm(z);
      INFO("N = " << n << ", w = " << w << ": |grad| at c = " << std::sqrt(norm) << ", at 1.2 c "
                  << std::sqrt(norm_off));
      CHECK(std::sqrt(norm) <= 1e-3 * std::sqrt(norm_off));
      // Loss at the optimum: (1 - c j)^2 + w c^2 j.
      CHECK(std::abs(loss - ((1 - c * j) * (1 - c * j) + w * c * c * j)) <= 1e-9);
      CHECK(loss < loss_off);
    }
}
