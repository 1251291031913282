#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>

#include "qgml/linalg/batched_eigh.hpp"
#include "qgml/model/hamiltonian.hpp"
#include "qgml/model/initializers.hpp"
#include "qgml/model/observables.hpp"

#include "test_support.hpp"

using namespace qgml;
using namespace qgml::test;

namespace {

// Builds H for the points, diagonalises it and computes the ground-state observables; returns them on
// the host together with the eigenvalues.
template <class Real, class Space>
struct Evaluated {
  GroundStateObservables<Real, Kokkos::HostSpace> obs;
  Kokkos::View<Real**, Kokkos::LayoutRight, Kokkos::HostSpace> w;
  Kokkos::View<int*, Kokkos::HostSpace> info;
};

template <class Real, class Space>
Evaluated<Real, Space> evaluate(const MatrixConfiguration<Real, Space>& config, const std::vector<double>& pts) {
  using Mem = typename Space::memory_space;
  const Space exec;
  const int d = config.dimension(), n = config.matrix_size();
  const int count = static_cast<int>(pts.size()) / d;
  auto points = to_device_points<Real, Space>(pts, count, d);
  MatrixStack<Real, Mem> h("qgml::test::H", count, n, n), v("qgml::test::V", count, n, n);
  RealMatrix<Real, Mem> w("qgml::test::w", count, n);
  IntVector<Mem> info("qgml::test::info", count);
  build_hamiltonians(exec, config, points, h);
  batched_eigh(exec, h, w, v, info);
  GroundStateObservables<Real, Mem> obs(count, d);
  compute_ground_state_observables(exec, config, points, w, v, obs);
  Evaluated<Real, Space> r;
  r.obs.energy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), obs.energy);
  r.obs.xbar = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), obs.xbar);
  r.obs.sigma2 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), obs.sigma2);
  r.obs.distance2 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), obs.distance2);
  r.obs.gap = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), obs.gap);
  r.obs.degenerate = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), obs.degenerate);
  r.w = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), w);
  r.info = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), info);
  return r;
}

}  // namespace

TEMPLATE_TEST_CASE("energy identity 2 E_0 = d^2 + sigma^2 on random configurations", "[observables]",
                   QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const double tol = std::is_same_v<Real, float> ? 1e-5 : 1e-12;
  for (auto [d, n] : {std::pair{3, 4}, std::pair{2, 8}, std::pair{5, 16}, std::pair{3, 1}}) {
    auto config = qr_configuration<Real>(d, n, 17, Space());
    const int count = 50;
    const auto pts = random_points(count, d, 1.5, 3);
    const auto r = evaluate(config, pts);
    for (int t = 0; t < count; ++t) {
      INFO("D = " << d << ", N = " << n << ", point " << t);
      REQUIRE(r.info(t) == 0);
      const double lhs = 2.0 * r.obs.energy(t);
      const double rhs = double(r.obs.distance2(t)) + double(r.obs.sigma2(t));
      CHECK(std::abs(lhs - rhs) <= tol * std::max(1.0, std::abs(lhs)));
      CHECK(r.obs.sigma2(t) >= -Real(tol));
      double d2 = 0;
      for (int k = 0; k < d; ++k) d2 += std::pow(double(Real(pts[t * d + k])) - double(r.obs.xbar(t, k)), 2);
      CHECK(std::abs(d2 - r.obs.distance2(t)) <= tol * std::max(1.0, d2));
      if (n > 1) {
        CHECK(r.obs.gap(t) == r.w(t, 1) - r.w(t, 0));
      }
    }
  }
}

TEMPLATE_TEST_CASE("fuzzy sphere closed forms: |xbar| = c j, sigma^2 = c^2 j, gaps c |x| (docs/math.md 7)",
                   "[observables]", QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const double tol = std::is_same_v<Real, float> ? 2e-5 : 1e-12;
  for (int n = 2; n <= 6; ++n) {
    const double j = 0.5 * (n - 1);
    for (double w : {0.0, 0.25}) {
      const double c = 1.0 / (j + w);
      auto config = fuzzy_sphere_configuration<Real>(n, c, Space());
      // Points at several radii, random directions.
      const int count = 24;
      std::vector<double> pts = random_points(count, 3, 1.0, 5 + n);
      for (int t = 0; t < count; ++t) {
        double norm = 0;
        for (int k = 0; k < 3; ++k) norm += pts[3 * t + k] * pts[3 * t + k];
        const double radius = 0.5 + 0.1 * t;
        for (int k = 0; k < 3; ++k) pts[3 * t + k] *= radius / std::sqrt(norm);
      }
      const auto r = evaluate(config, pts);
      for (int t = 0; t < count; ++t) {
        INFO("N = " << n << ", w = " << w << ", point " << t);
        const double x[3] = {double(Real(pts[3 * t])), double(Real(pts[3 * t + 1])), double(Real(pts[3 * t + 2]))};
        const double xn = std::sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
        double xbar_norm = 0;
        for (int k = 0; k < 3; ++k) {
          xbar_norm += double(r.obs.xbar(t, k)) * r.obs.xbar(t, k);
          CHECK(std::abs(r.obs.xbar(t, k) - c * j * x[k] / xn) <= tol);  // xbar = c j x / |x|
        }
        CHECK(std::abs(std::sqrt(xbar_norm) - c * j) <= tol);
        CHECK(std::abs(r.obs.sigma2(t) - c * c * j) <= tol);
        CHECK(std::abs(r.obs.distance2(t) - (xn - c * j) * (xn - c * j)) <= tol);
        for (int m = 0; m + 1 < n; ++m) CHECK(std::abs((r.w(t, m + 1) - r.w(t, m)) - c * xn) <= tol);
        CHECK(r.obs.degenerate(t) == 0);
      }
    }
  }
}

TEMPLATE_TEST_CASE("the ground state at the centre of the fuzzy sphere is flagged degenerate", "[observables]",
                   QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  auto config = fuzzy_sphere_configuration<Real>(3, 1.0, Space());
  const auto r = evaluate(config, {0.0, 0.0, 0.0, 0.0, 0.0, 0.5, 1e-12, 0.0, 0.0});
  CHECK(r.obs.degenerate(0) == 1);
  CHECK(r.obs.degenerate(1) == 0);
  CHECK(r.obs.degenerate(2) == 1);
  CHECK(r.obs.gap(0) <= 1e-5);
  CHECK(std::abs(r.obs.gap(1) - 0.5) <= 1e-5);
}
