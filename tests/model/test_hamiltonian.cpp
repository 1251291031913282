#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include "qgml/model/hamiltonian.hpp"
#include "qgml/model/initializers.hpp"

#include "test_support.hpp"

using namespace qgml;
using namespace qgml::test;

// H(x) = 1/2 sum_k (A_k - x_k I)^2, formed directly on the host in double.
static HostMatrix direct_hamiltonian(const HostMatrices& m, const double* x) {
  HostMatrix h(m.N);
  for (int k = 0; k < m.D; ++k) {
    HostMatrix b = matrix_of(m, k);
    for (int i = 0; i < m.N; ++i) b(i, i) -= x[k];
    const HostMatrix b2 = multiply(b, b);
    for (int i = 0; i < m.N * m.N; ++i) h.a[i] += 0.5 * b2.a[i];
  }
  return h;
}

TEMPLATE_TEST_CASE("batched H(x) = S - sum x_k A_k + |x|^2/2 equals 1/2 sum (A_k - x_k)^2", "[hamiltonian]",
                   QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  using Mem = typename TestType::memory_space;
  const Space exec;
  for (auto [d, n] : {std::pair{3, 3}, std::pair{2, 8}, std::pair{5, 16}, std::pair{1, 1}}) {
    const int count = 37;
    auto config = gaussian_hermitian_configuration<Real>(d, n, 1.0, 11, exec);
    const HostMatrices host = to_host(config, exec);  // the Real-rounded matrices, widened
    const std::vector<double> pts = random_points(count, d, 2.0, 5);
    auto points = to_device_points<Real, Space>(pts, count, d);
    MatrixStack<Real, Mem> h("qgml::test::H", count, n, n);
    build_hamiltonians(exec, config, points, h);
    auto hh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), h);
    double worst = 0;
    for (int t = 0; t < count; ++t) {
      std::vector<double> x(d);
      for (int k = 0; k < d; ++k) x[k] = double(Real(pts[std::size_t(t) * d + k]));
      const HostMatrix ref = direct_hamiltonian(host, x.data());
      double scale = 0;
      for (auto v : ref.a) scale = std::max(scale, std::abs(v));
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
          const cplx got(hh(t, i, j).real(), hh(t, i, j).imag());
          worst = std::max(worst, std::abs(got - ref(i, j)) / scale);
        }
    }
    INFO("D = " << d << ", N = " << n);
    CHECK(worst <= tight_tolerance<Real>());
  }
}

TEMPLATE_TEST_CASE("build_hamiltonians rejects points of the wrong dimension", "[hamiltonian]", QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  using Mem = typename TestType::memory_space;
  const Space exec;
  auto config = gaussian_hermitian_configuration<Real>(3, 4, 1.0, 1, exec);
  auto points = to_device_points<Real, Space>(random_points(2, 2, 1.0, 1), 2, 2);
  MatrixStack<Real, Mem> h("qgml::test::H", 2, 4, 4);
  CHECK_THROWS_WITH(build_hamiltonians(exec, config, points, h),
                    Catch::Matchers::ContainsSubstring("points have 2 coordinates"));
}
