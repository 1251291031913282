// linalg::hermitian_matvecs (linalg/hermitian_matvec.hpp), y_m = A_m x for a stack of Hermitian matrices,
// in both loop mappings: SerialLoops (the axpy form, SIMD on CPUs) and TeamLoops with teams of one thread
// and of two (32 on GPUs), against a host product in double over the rows of A_m.
#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <cmath>
#include <complex>
#include <vector>

#include "qgml/common/types.hpp"
#include "qgml/linalg/hermitian_matvec.hpp"
#include "qgml/linalg/loops.hpp"

#include "eigh_fixtures.hpp"
#include "test_support.hpp"

using namespace qgml;
using namespace qgml::test;

TEMPLATE_TEST_CASE("hermitian_matvecs: y_m = A_m x in both loop mappings", "[linalg][matvec]", QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  using complex_type = complex_t<Real>;
  using stack_type = Kokkos::View<complex_type***, Kokkos::LayoutRight, typename Space::memory_space>;
  using policy_type = Kokkos::TeamPolicy<Space>;
  using member_type = typename policy_type::member_type;
  const Space exec;
  const int wide = is_host_space_v<Space> ? (exec.concurrency() >= 2 ? 2 : 1) : 32;
  const double tol = tight_tolerance<Real>();
  const int count = 3;
  for (const int n : {1, 2, 7, 8, 9, 17, 40}) {
    INFO("N = " << n);
    stack_type a("qgml::test::a", count, n, n);
    Kokkos::View<Real*, typename Space::memory_space> xr("qgml::test::xr", n), xi("qgml::test::xi", n);
    const auto ah = Kokkos::create_mirror_view(a);
    const auto xrh = Kokkos::create_mirror_view(xr);
    const auto xih = Kokkos::create_mirror_view(xi);
    double scale = 1;
    for (int m = 0; m < count; ++m) {
      const HostMatrix h = make_matrix(m == 2 ? MatrixKind::fuzzy_sphere : MatrixKind::random, n, 300 + 10 * n + m);
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
          ah(m, i, j) = complex_type(Real(h(i, j).real()), Real(h(i, j).imag()));
          scale = std::max(scale, std::abs(h(i, j)));
        }
    }
    for (int j = 0; j < n; ++j) {
      xrh(j) = Real(std::cos(0.7 * j + 0.1));
      xih(j) = Real(std::sin(1.3 * j - 0.4));
    }
    Kokkos::deep_copy(a, ah);
    Kokkos::deep_copy(xr, xrh);
    Kokkos::deep_copy(xi, xih);

    // Reference: the rows of A_m, in double.
    std::vector<std::complex<double>> ref(std::size_t(count) * n);
    for (int m = 0; m < count; ++m)
      for (int i = 0; i < n; ++i) {
        std::complex<double> s = 0;
        for (int j = 0; j < n; ++j)
          s += std::complex<double>(ah(m, i, j).real(), ah(m, i, j).imag()) * std::complex<double>(xrh(j), xih(j));
        ref[std::size_t(m) * n + i] = s;
      }
    const auto max_error = [&](const auto& yh) {
      double err = 0;
      for (int mi = 0; mi < count * n; ++mi)
        err = std::max(err, std::abs(std::complex<double>(yh(mi).real(), yh(mi).imag()) - ref[mi]));
      return err;
    };

    // SerialLoops, on the host.
    {
      Kokkos::View<complex_type*, Kokkos::HostSpace> y("qgml::test::y", count * n);
      linalg::hermitian_matvecs(linalg::SerialLoops{}, ah, count, n, xrh.data(), xih.data(), y.data());
      CHECK(max_error(y) <= 10 * n * tol * scale);
    }
    // TeamLoops in Space.
    for (const int team : {1, wide}) {
      INFO("team of " << team);
      Kokkos::View<complex_type*, typename Space::memory_space> y("qgml::test::y", count * n);
      Kokkos::parallel_for(
          "qgml::test::hermitian_matvecs_team", policy_type(exec, 1, team), KOKKOS_LAMBDA(const member_type& member) {
            linalg::hermitian_matvecs(linalg::TeamLoops<member_type>{member}, a, count, n, xr.data(), xi.data(),
                                      y.data());
          });
      const auto yh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
      CHECK(max_error(yh) <= 10 * n * tol * scale);
    }
  }
}
