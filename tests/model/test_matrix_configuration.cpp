#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_floating_point.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>

#include "qgml/model/initializers.hpp"
#include "qgml/model/matrix_configuration.hpp"

#include "test_support.hpp"

using namespace qgml;
using namespace qgml::test;

TEMPLATE_TEST_CASE("QR initialisation gives seeded Hermitian matrices with spectrum in [-1, 1]", "[configuration]",
                   QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const Space exec;
  for (int n : {1, 2, 5, 16}) {
    auto config = qr_configuration<Real>(3, n, 42, exec);
    REQUIRE(config.dimension() == 3);
    REQUIRE(config.matrix_size() == n);
    CHECK(hermiticity_error(config, exec) == Real(0));
    const HostMatrices h = to_host(config, exec);
    for (int k = 0; k < 3; ++k) {
      // A = (Q + Q^H)/2 with Q unitary: A^2 <= I, so Tr A^2 = ||A||_F^2 <= N, and A != 0.
      double frob2 = 0;
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) frob2 += std::norm(h(k, i, j));
      CHECK(frob2 <= n * (1 + 1e-6));
      CHECK(frob2 > 0);
      // Eigenvalues in [-1, 1] imply Tr A^4 = ||A^2||_F^2 <= N (the spectrum itself is checked in
      // the eigensolver tests).
      const HostMatrix a = matrix_of(h, k);
      const HostMatrix a2 = multiply(a, a);
      double tr4 = 0;
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) tr4 += std::norm(a2(i, j));
      CHECK(tr4 <= n * (1 + 1e-6));
    }
    // Same seed, same matrices; another seed, other matrices.
    const HostMatrices again = to_host(qr_configuration<Real>(3, n, 42, exec), exec);
    CHECK(again.values == h.values);
    const HostMatrices other = to_host(qr_configuration<Real>(3, n, 43, exec), exec);
    CHECK(other.values != h.values);
  }
}

TEMPLATE_TEST_CASE("Gaussian-Hermitian initialisation is Hermitian, seeded and scaled", "[configuration]",
                   QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const Space exec;
  const int n = 12;
  auto config = gaussian_hermitian_configuration<Real>(4, n, 0.1, 5, exec);
  CHECK(hermiticity_error(config, exec) == Real(0));
  const HostMatrices h = to_host(config, exec);
  // E|A_ij|^2 = scale^2 off the diagonal (mean of two entries of variance 2 scale^2 each, halved).
  double sum = 0;
  int count = 0;
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j)
        if (i != j) {
          sum += std::norm(h(k, i, j));
          ++count;
        }
  CHECK_THAT(sum / count, Catch::Matchers::WithinRel(0.01, 0.2));
  CHECK(to_host(gaussian_hermitian_configuration<Real>(4, n, 0.1, 5, exec), exec).values == h.values);
}

TEMPLATE_TEST_CASE("project_hermitian gives (A + A^H)/2 and refreshes S", "[configuration]", QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const Space exec;
  const int n = 5, d = 3;
  HostMatrices raw{d, n, {}};
  raw.values.resize(std::size_t(d) * n * n);
  const CounterRng rng(3, 0);
  for (std::size_t i = 0; i < raw.values.size(); ++i) raw.values[i] = {rng.normal(2 * i), rng.normal(2 * i + 1)};
  auto config = to_configuration<Real>(raw, exec);
  CHECK(hermiticity_error(config, exec) > Real(0.1));
  config.project_hermitian(exec);
  CHECK(hermiticity_error(config, exec) == Real(0));
  const HostMatrices h = to_host(config, exec);
  for (int k = 0; k < d; ++k)
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        const cplx expected = 0.5 * (raw(k, i, j) + std::conj(raw(k, j, i)));
        CHECK(std::abs(h(k, i, j) - expected) <= tight_tolerance<Real>() * 10);
      }
  // S = 1/2 sum_k A_k^2 of the projected matrices.
  auto s = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), config.square_sum());
  HostMatrix expected(n);
  for (int k = 0; k < d; ++k) {
    const HostMatrix a = matrix_of(h, k);
    const HostMatrix a2 = multiply(a, a);
    for (int i = 0; i < n * n; ++i) expected.a[i] += 0.5 * a2.a[i];
  }
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      CHECK(std::abs(cplx(s(i, j).real(), s(i, j).imag()) - expected(i, j)) <= 10 * tight_tolerance<Real>() * 10);
}

TEMPLATE_TEST_CASE("S = 1/2 sum_k A_k^2 by the kernel and by GEMM: the same matrix, Hermitian bit for bit",
                   "[configuration]", QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const Space exec;
#if defined(QGML_HAVE_KOKKOSKERNELS)
  // On host spaces the GEMM path must be the one update_square_sum takes from configuration_gemm_min_n.
  if constexpr (is_host_space_v<Space>) REQUIRE(qgml::detail::blas_gemm_usable(exec, 1));
#endif
  for (int n : {5, qgml::detail::configuration_gemm_min_n - 1, qgml::detail::configuration_gemm_min_n, 37}) {
    CAPTURE(n);
    const bool usable = qgml::detail::blas_gemm_usable(exec, (long long)n * n);
    CHECK(qgml::detail::configuration_products_use_gemm(exec, n) ==
          (usable && n >= qgml::detail::configuration_gemm_min_n));
    // A configuration whose S comes from update_square_sum in the constructor (the automatic path).
    const auto config = gaussian_hermitian_configuration<Real>(3, n, 0.7, 11 + n, exec);
    const HostMatrices h = to_host(config, exec);
    HostMatrix expected(n);
    for (int k = 0; k < 3; ++k) {
      const HostMatrix a = matrix_of(h, k);
      const HostMatrix a2 = multiply(a, a);
      for (int i = 0; i < n * n; ++i) expected.a[i] += 0.5 * a2.a[i];
    }
    double scale = 0;
    for (const cplx& v : expected.a) scale = std::max(scale, std::abs(v));
    Matrix<Real, typename Space::memory_space> by_kernel("by_kernel", n, n), by_gemm("by_gemm", n, n);
    qgml::detail::compute_square_sum<Real>(exec, config.matrices(), by_kernel, false);
    if (usable) qgml::detail::compute_square_sum<Real>(exec, config.matrices(), by_gemm, true);
    const auto sk = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), by_kernel);
    const auto sg = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), by_gemm);
    const auto sa = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), config.square_sum());
    const bool automatic_gemm = qgml::detail::configuration_products_use_gemm(exec, n);
    int hermitian_violations = 0, automatic_differences = 0;
    double kernel_error = 0, gemm_error = 0;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        const cplx e = expected(i, j);
        kernel_error = std::max(kernel_error, std::abs(cplx(sk(i, j).real(), sk(i, j).imag()) - e));
        if (usable) gemm_error = std::max(gemm_error, std::abs(cplx(sg(i, j).real(), sg(i, j).imag()) - e));
        for (const auto* s : {&sk, &sg}) {
          if (!usable && s == &sg) continue;
          if ((*s)(j, i).real() != (*s)(i, j).real() || (*s)(j, i).imag() != -(*s)(i, j).imag()) ++hermitian_violations;
        }
        const auto& chosen = automatic_gemm ? sg : sk;
        if (sa(i, j).real() != chosen(i, j).real() || sa(i, j).imag() != chosen(i, j).imag()) ++automatic_differences;
      }
    CHECK(kernel_error <= 10 * n * tight_tolerance<Real>() * scale);
    CHECK(gemm_error <= 10 * n * tight_tolerance<Real>() * scale);
    CHECK(hermitian_violations == 0);
    CHECK(automatic_differences == 0);
  }
}

TEST_CASE("spin matrices satisfy [J_x, J_y] = i J_z (cyclic) and the Casimir j(j+1) I", "[configuration]") {
  for (int n = 1; n <= 8; ++n) {
    const HostMatrices s = spin_matrices(n);
    const double j = 0.5 * (n - 1);
    const HostMatrix jx = matrix_of(s, 0), jy = matrix_of(s, 1), jz = matrix_of(s, 2);
    const HostMatrix* J[3] = {&jx, &jy, &jz};
    for (int a = 0; a < 3; ++a) {
      const HostMatrix& x = *J[a];
      const HostMatrix& y = *J[(a + 1) % 3];
      const HostMatrix& z = *J[(a + 2) % 3];
      const HostMatrix xy = multiply(x, y), yx = multiply(y, x);
      HostMatrix comm(n), iz(n);
      for (int i = 0; i < n * n; ++i) {
        comm.a[i] = xy.a[i] - yx.a[i];
        iz.a[i] = cplx(0, 1) * z.a[i];
      }
      CHECK(max_abs_difference(comm, iz) < 1e-13);
    }
    HostMatrix casimir(n), expected(n);
    for (const HostMatrix* m : J) {
      const HostMatrix m2 = multiply(*m, *m);
      for (int i = 0; i < n * n; ++i) casimir.a[i] += m2.a[i];
    }
    for (int i = 0; i < n; ++i) expected(i, i) = j * (j + 1);
    CHECK(max_abs_difference(casimir, expected) < 1e-12);
  }
}

TEMPLATE_TEST_CASE("fuzzy_sphere_configuration scales the spin matrices", "[configuration]", QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const Space exec;
  auto config = fuzzy_sphere_configuration<Real>(4, 0.5, exec);
  const HostMatrices h = to_host(config, exec);
  const HostMatrices s = spin_matrices(4);
  for (std::size_t i = 0; i < s.values.size(); ++i) CHECK(std::abs(h.values[i] - 0.5 * s.values[i]) < 1e-7);
  // S = 1/2 c^2 j (j + 1) I.
  auto sq = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), config.square_sum());
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j)
      CHECK(std::abs(double(sq(i, j).real()) - (i == j ? 0.5 * 0.25 * 1.5 * 2.5 : 0.0)) < 1e-6);
}

TEST_CASE("invalid sizes are rejected with a message naming the argument", "[configuration]") {
  CHECK_THROWS_WITH(qr_matrices(0, 3, 1), Catch::Matchers::ContainsSubstring("D must be >= 1"));
  CHECK_THROWS_WITH(qr_matrices(3, 0, 1), Catch::Matchers::ContainsSubstring("N must be >= 1"));
  CHECK_THROWS_WITH(gaussian_hermitian_matrices(3, 3, -1.0, 1), Catch::Matchers::ContainsSubstring("scale"));
}
