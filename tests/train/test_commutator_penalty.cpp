#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <cmath>

#include "qgml/model/initializers.hpp"
#include "qgml/train/commutator_penalty.hpp"

#include "test_support.hpp"

using namespace qgml;
using namespace qgml::test;

namespace {

// P = sum_{i<j} ||[A_i, A_j]||_F (squared: its square per pair), docs/math.md 4.8, in double on the host.
double host_penalty(const HostMatrices& m, bool squared) {
  double total = 0;
  for (int i = 0; i < m.D; ++i)
    for (int j = i + 1; j < m.D; ++j) {
      const HostMatrix ai = matrix_of(m, i), aj = matrix_of(m, j);
      const HostMatrix x = multiply(ai, aj), y = multiply(aj, ai);
      double s2 = 0;
      for (std::size_t e = 0; e < x.a.size(); ++e) s2 += std::norm(x.a[e] - y.a[e]);
      total += squared ? s2 : std::sqrt(s2);
    }
  return total;
}

struct PenaltyResult {
  double value = 0;
  HostMatrices gradient;
};

// value and gradient of weight * P added to `start` (the gradient buffer's previous content) on exec.
template <class Real, class Space>
PenaltyResult run_penalty(const Space& exec, const MatrixConfiguration<Real, Space>& config, PenaltyKind kind,
                          double weight, const HostMatrices& start, bool use_gemm) {
  using memory_space = typename Space::memory_space;
  const int d = config.dimension(), n = config.matrix_size();
  auto gradient = to_configuration<Real>(start, exec).matrices();
  Kokkos::View<double, memory_space> value("value");
  CommutatorPenalty<Real, Space>(d, n).add(exec, config, kind, Real(weight), gradient, value, use_gemm);
  PenaltyResult r;
  r.gradient = stack_to_host(gradient, exec);
  auto v = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), value);
  r.value = v();
  return r;
}

}  // namespace

TEMPLATE_TEST_CASE("commutator penalty: the kernels and the GEMM products give its value and gradient", "[penalty]",
                   QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const Space exec;
#if defined(QGML_HAVE_KOKKOSKERNELS)
  // Training on host spaces takes the GEMM path from configuration_gemm_min_n: it must be tested here.
  if constexpr (is_host_space_v<Space>) REQUIRE(qgml::detail::blas_gemm_usable(exec, 1));
#endif
  const double tol = tight_tolerance<Real>();
  for (auto [d, n] : {std::pair{3, 5}, std::pair{3, qgml::detail::configuration_gemm_min_n}, std::pair{4, 21}}) {
    const HostMatrices m = gaussian_hermitian_matrices(d, n, 0.7, 5 + n);
    const HostMatrices start = gaussian_hermitian_matrices(d, n, 0.3, 9 + n);
    const auto config = to_configuration<Real>(m, exec);
    const bool usable = qgml::detail::blas_gemm_usable(exec, (long long)n * n);
    CHECK(qgml::detail::configuration_products_use_gemm(exec, n) ==
          (usable && n >= qgml::detail::configuration_gemm_min_n));
    for (PenaltyKind kind : {PenaltyKind::frobenius, PenaltyKind::frobenius_squared}) {
      const bool squared = kind == PenaltyKind::frobenius_squared;
      const double weight = 0.25;
      CAPTURE(d, n, to_string(kind));
      const double expected = weight * host_penalty(m, squared);
      // Directional derivatives of weight * P along random Hermitian E by central differences, against
      // Tr((G - start) E).
      std::vector<double> fd;
      std::vector<HostMatrices> directions;
      for (int dir = 0; dir < 3; ++dir) {
        directions.push_back(gaussian_hermitian_matrices(d, n, 1.0, 100 + dir));
        const double h = 1e-5;
        fd.push_back(weight *
                     (host_penalty(axpy(m, h, directions.back()), squared) -
                      host_penalty(axpy(m, -h, directions.back()), squared)) /
                     (2 * h));
      }
      for (bool use_gemm : {false, true}) {
        if (use_gemm && !usable) continue;
        CAPTURE(use_gemm);
        const PenaltyResult r = run_penalty<Real>(exec, config, kind, weight, start, use_gemm);
        CHECK(std::abs(r.value - expected) <= 10 * n * tol * expected);
        HostMatrices g = r.gradient;
        double gnorm = 0, anti_hermitian = 0;
        for (std::size_t e = 0; e < g.values.size(); ++e) {
          g.values[e] -= start.values[e];
          gnorm = std::max(gnorm, std::abs(g.values[e]));
        }
        for (int k = 0; k < d; ++k)
          for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j)
              anti_hermitian = std::max(anti_hermitian, std::abs(g(k, i, j) - std::conj(g(k, j, i))));
        CHECK(gnorm > 0);
        CHECK(anti_hermitian <= 10 * n * tol * gnorm);
        for (std::size_t dir = 0; dir < directions.size(); ++dir) {
          double an = 0;
          for (int k = 0; k < d; ++k)
            for (int i = 0; i < n; ++i)
              for (int j = 0; j < n; ++j) an += (g(k, i, j) * directions[dir](k, j, i)).real();
          // Float: the gradient to its precision; double: the differences' truncation error.
          CHECK(std::abs(an - fd[dir]) <=
                (std::is_same_v<Real, float> ? 1e-3 : 1e-6) * std::max(1.0, std::abs(fd[dir])));
        }
      }
    }
  }
}

TEST_CASE("commutator penalty: commuting matrices give 0 and a zero gradient on both paths", "[penalty]") {
  using Space = Kokkos::DefaultHostExecutionSpace;
  const Space exec;
  const int d = 3, n = qgml::detail::configuration_gemm_min_n + 2;
  // Diagonal matrices commute: P = 0, and the P1 gradient is 0 by convention (docs/math.md 4.8, PyTorch's).
  // Small integers, so that every product is exact and C = 0 holds bit for bit.
  HostMatrices m{d, n, std::vector<cplx>(std::size_t(d) * n * n)};
  for (int k = 0; k < d; ++k)
    for (int i = 0; i < n; ++i) m(k, i, i) = double(1 + (k + i) % 4);
  const HostMatrices zero{d, n, std::vector<cplx>(std::size_t(d) * n * n)};
  const auto config = to_configuration<double>(m, exec);
  for (PenaltyKind kind : {PenaltyKind::frobenius, PenaltyKind::frobenius_squared})
    for (bool use_gemm : {false, true}) {
      if (use_gemm && !qgml::detail::blas_gemm_usable(exec, (long long)n * n)) continue;
      CAPTURE(to_string(kind), use_gemm);
      const PenaltyResult r = run_penalty<double>(exec, config, kind, 0.5, zero, use_gemm);
      CHECK(r.value == 0.0);
      int nonzero = 0, non_finite = 0;
      for (const cplx& v : r.gradient.values) {
        if (v != cplx(0)) ++nonzero;
        if (!std::isfinite(v.real()) || !std::isfinite(v.imag())) ++non_finite;
      }
      CHECK(nonzero == 0);
      CHECK(non_finite == 0);
    }
}
