// HermitianAdam (train/adam.hpp) against a host Adam on the N^2 real Hermitian coordinates: a_ii with
// gradient G_ii, Re a_ij and Im a_ij (i < j) with gradients 2 Re G_ij and 2 Im G_ij; moments
// m <- b1 m + (1 - b1) g, v <- b2 v + (1 - b2) g^2, step a <- a - lr (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps),
// t counting the steps taken (a skipped step changes nothing, t included).
#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>

#include <cmath>
#include <vector>

#include "qgml/model/initializers.hpp"
#include "qgml/train/adam.hpp"

#include "test_support.hpp"

using namespace qgml;
using namespace qgml::test;

namespace {

// One coordinate's Adam state on the host.
struct HostAdamCoordinate {
  double value = 0, m = 0, v = 0;
  void step(double g, double lr, int t, const AdamSettings& s) {
    m = s.beta1 * m + (1 - s.beta1) * g;
    v = s.beta2 * v + (1 - s.beta2) * g * g;
    const double c1 = 1 / (1 - std::pow(s.beta1, t)), c2 = 1 / (1 - std::pow(s.beta2, t));
    value -= lr * (m * c1) / (std::sqrt(v * c2) + s.eps);
  }
};

}  // namespace

TEMPLATE_TEST_CASE("HermitianAdam: the host Adam on the real Hermitian coordinates, skipped steps included",
                   "[train][adam]", QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  using memory_space = typename Space::memory_space;
  const Space exec;
  const int d = 2, n = 3, steps = 7;
  const double lr = 0.01;
  const AdamSettings settings;
  const HostMatrices start = gaussian_hermitian_matrices(d, n, 1.0, 11);
  auto config = to_configuration<Real>(start, exec);
  HermitianAdam<Real, Space> adam(d, n, settings);
  MatrixStack<Real, memory_space> gradient("qgml::test::gradient", d, n, n);
  Kokkos::View<int, memory_space> skip("qgml::test::skip");
  auto skip_host = Kokkos::create_mirror_view(skip);

  // The host state: per (k, i <= j) the diagonal, or Re and Im.
  std::vector<HostAdamCoordinate> re(std::size_t(d) * n * n), im(std::size_t(d) * n * n);
  for (int k = 0; k < d; ++k)
    for (int i = 0; i < n; ++i)
      for (int j = i; j < n; ++j) {
        re[std::size_t((k * n + i) * n + j)].value = start(k, i, j).real();
        im[std::size_t((k * n + i) * n + j)].value = start(k, i, j).imag();
      }
  int taken = 0;
  for (int s = 0; s < steps; ++s) {
    const bool skipped = s == 3;  // e.g. a batch with a non-finite gradient
    // A Hermitian gradient that changes from step to step.
    HostMatrices g = gaussian_hermitian_matrices(d, n, 0.5 + 0.25 * s, 100 + std::uint64_t(s));
    host_to_stack(g, gradient, exec);
    skip_host() = skipped ? 1 : 0;
    Kokkos::deep_copy(exec, skip, skip_host);
    adam.step(exec, config, gradient, lr, skip);
    if (!skipped) {
      ++taken;
      for (int k = 0; k < d; ++k)
        for (int i = 0; i < n; ++i)
          for (int j = i; j < n; ++j) {
            const std::size_t c = std::size_t((k * n + i) * n + j);
            if (i == j) {
              re[c].step(g(k, i, i).real(), lr, taken, settings);
            } else {
              re[c].step(2 * g(k, i, j).real(), lr, taken, settings);
              im[c].step(2 * g(k, i, j).imag(), lr, taken, settings);
            }
          }
    }
  }
  auto count = Kokkos::create_mirror_view(adam.step_count());
  Kokkos::deep_copy(exec, count, adam.step_count());
  const HostMatrices a = to_host(config, exec);
  CHECK(count() == steps - 1);
  const double tol = std::is_same_v<Real, float> ? 1e-5 : 1e-13;
  double worst = 0;
  for (int k = 0; k < d; ++k)
    for (int i = 0; i < n; ++i)
      for (int j = i; j < n; ++j) {
        const std::size_t c = std::size_t((k * n + i) * n + j);
        const double expected_re = re[c].value, expected_im = i == j ? 0.0 : im[c].value;
        worst = std::max(worst, std::abs(a(k, i, j).real() - expected_re) / (1 + std::abs(expected_re)));
        worst = std::max(worst, std::abs(a(k, i, j).imag() - expected_im) / (1 + std::abs(expected_im)));
        // Hermitian after every step.
        CHECK(a(k, j, i).real() == a(k, i, j).real());
        CHECK(a(k, j, i).imag() == -a(k, i, j).imag());
      }
  CHECK(worst <= tol);
  // The steps moved the matrices (lr times about one per coordinate per step).
  double moved = 0;
  for (std::size_t c = 0; c < a.values.size(); ++c) moved = std::max(moved, std::abs(a.values[c] - start.values[c]));
  CHECK(moved > 0.5 * lr);
}
