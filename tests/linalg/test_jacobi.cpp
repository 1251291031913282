// The Jacobi rotation shared by every cyclic Jacobi code (linalg/jacobi_rotation.hpp) and the sweep
// count contract of linalg/symmetric_eigenvalues.hpp, and its lane-packed form
// (linalg/symmetric_eigenvalues_packed.hpp) against it lane by lane.
#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <type_traits>
#include <vector>

#include "qgml/linalg/jacobi_rotation.hpp"
#include "qgml/linalg/symmetric_eigenvalues.hpp"
#include "qgml/linalg/symmetric_eigenvalues_packed.hpp"

#include "test_support.hpp"

using namespace qgml;
using namespace qgml::test;

namespace {

template <class T>
std::complex<double> as_std(const T& x) {
  if constexpr (std::is_arithmetic_v<T>)
    return {double(x), 0.0};
  else
    return {double(x.real()), double(x.imag())};
}

// B <- J^H B J with jacobi_rotate on a 4 x 4 B = B^H; checks that b_pq (and b_qp) vanish, that the
// Frobenius norm and the trace are kept (J is unitary) and that B stays Hermitian.
template <class Real, class T>
void check_rotation(const Kokkos::View<T**, Kokkos::HostSpace>& b, int p, int q) {
  const int n = int(b.extent(0));
  double norm0 = 0, trace0 = 0;
  for (int i = 0; i < n; ++i) {
    trace0 += std::real(as_std(b(i, i)));
    for (int j = 0; j < n; ++j) norm0 += std::norm(as_std(b(i, j)));
  }
  const auto rot =
      linalg::jacobi_rotation(Real(std::real(as_std(b(p, p)))), Real(std::real(as_std(b(q, q)))), T(b(p, q)));
  CHECK(std::abs(double(rot.c) * rot.c + std::norm(as_std(rot.s_phase)) - 1) <= 10 * epsilon<Real>());
  CHECK(rot.c >= Real(std::sqrt(0.5)) * (1 - 10 * epsilon<Real>()));  // |angle| <= pi / 4
  linalg::jacobi_rotate(b, n, p, q, rot);
  double norm1 = 0, trace1 = 0, asym = 0;
  for (int i = 0; i < n; ++i) {
    trace1 += std::real(as_std(b(i, i)));
    for (int j = 0; j < n; ++j) {
      norm1 += std::norm(as_std(b(i, j)));
      asym = std::max(asym, std::abs(as_std(b(i, j)) - std::conj(as_std(b(j, i)))));
    }
  }
  const double tol = 20 * epsilon<Real>() * std::sqrt(norm0);
  CHECK(std::abs(as_std(b(p, q))) <= tol);
  CHECK(std::abs(as_std(b(q, p))) <= tol);
  CHECK(std::abs(std::sqrt(norm1) - std::sqrt(norm0)) <= tol);
  CHECK(std::abs(trace1 - trace0) <= tol);
  CHECK(asym <= tol);
}

}  // namespace

TEMPLATE_TEST_CASE("one Jacobi rotation zeroes b_pq of a real symmetric and of a complex Hermitian matrix", "[jacobi]",
                   float, double) {
  using Real = TestType;
  using C = Kokkos::complex<Real>;
  const int n = 4;
  for (int p = 0; p < n; ++p)
    for (int q = p + 1; q < n; ++q) {
      CAPTURE(p, q);
      Kokkos::View<Real**, Kokkos::HostSpace> a("qgml::test::a", n, n);
      Kokkos::View<C**, Kokkos::HostSpace> h("qgml::test::h", n, n);
      for (int i = 0; i < n; ++i)
        for (int j = 0; j <= i; ++j) {
          const double x = std::sin(1.0 + 3.0 * i + 7.0 * j) + (i == j ? 0.5 * i : 0.0);
          const double y = i == j ? 0.0 : std::cos(2.0 + i - 5.0 * j);
          a(i, j) = a(j, i) = Real(x);
          h(i, j) = C(Real(x), Real(y));
          h(j, i) = C(Real(x), Real(-y));
        }
      a(p, q) = a(q, p) = Real(-std::abs(double(a(p, q))));  // a negative b_pq: e^{i phi} = -1
      check_rotation<Real>(a, p, q);
      check_rotation<Real>(h, p, q);
    }
  // b_pp == b_qq: the rotation by pi / 4.
  Kokkos::View<Real**, Kokkos::HostSpace> a("qgml::test::a", 2, 2);
  a(0, 0) = a(1, 1) = Real(1);
  a(0, 1) = a(1, 0) = Real(2);
  check_rotation<Real>(a, 0, 1);
  CHECK(std::abs(std::abs(double(a(0, 0)) - double(a(1, 1))) - 4.0) <= 40 * epsilon<Real>());  // eigenvalues 3, -1
}

TEMPLATE_TEST_CASE("symmetric_eigenvalues_descending returns the sweeps used, max_sweeps + 1 when not converged",
                   "[jacobi][geometry]", float, double) {
  using Real = TestType;
  const int d = 4;
  Kokkos::View<Real**, Kokkos::HostSpace> a0("qgml::test::a0", d, d), a("qgml::test::a", d, d);
  Kokkos::View<Real*, Kokkos::HostSpace> e("qgml::test::e", d), e_ref("qgml::test::e_ref", d);
  for (int i = 0; i < d; ++i)
    for (int j = 0; j <= i; ++j) a0(i, j) = a0(j, i) = Real(std::sin(1.0 + 3.0 * i + 7.0 * j) + (i == j ? 1.0 : 0.0));
  Kokkos::deep_copy(a, a0);
  const int used = linalg::symmetric_eigenvalues_descending(a, e_ref);
  INFO(used << " sweeps with the default limit");
  REQUIRE(used >= 2);  // a dense 4 x 4 matrix does not converge in one sweep
  REQUIRE(used <= linalg::symmetric_eigenvalues_max_sweeps);

  // A limit that suffices exactly: converged on the last allowed sweep, the same eigenvalues.
  Kokkos::deep_copy(a, a0);
  CHECK(linalg::symmetric_eigenvalues_descending(a, e, used) == used);
  for (int i = 0; i < d; ++i) CHECK(e(i) == e_ref(i));
  // One sweep fewer, and a single sweep: not converged, reported as max_sweeps + 1.
  for (int limit : {used - 1, 1}) {
    CAPTURE(limit);
    Kokkos::deep_copy(a, a0);
    CHECK(linalg::symmetric_eigenvalues_descending(a, e, limit) == limit + 1);
  }
  // A diagonal matrix needs no sweep, even with a limit of 0.
  Kokkos::View<Real**, Kokkos::HostSpace> diag("qgml::test::diag", d, d);
  for (int i = 0; i < d; ++i) diag(i, i) = Real(i);
  CHECK(linalg::symmetric_eigenvalues_descending(diag, e, 0) == 0);
  CHECK(e(0) == Real(d - 1));
}

TEMPLATE_TEST_CASE("packed_symmetric_eigenvalues_descending gives each lane the single-matrix result",
                   "[jacobi][geometry]", float, double) {
  using Real = TestType;
  constexpr int W = 8;
  for (const int d : {1, 2, 3, 5}) {
    CAPTURE(d);
    // Lanes of different difficulty: dense matrices (several sweeps), a diagonal one (none), a zero
    // one, one with a repeated eigenvalue, and two skipped lanes (the last holds NaN).
    std::vector<Real> a(std::size_t(d) * d * W), e(std::size_t(d) * W);
    auto at = [&](int i, int j, int q) -> Real& { return a[std::size_t((i * d + j) * W + q)]; };
    for (int q = 0; q < W; ++q)
      for (int i = 0; i < d; ++i)
        for (int j = 0; j <= i; ++j) {
          Real v = Real(std::sin(1.0 + 3.0 * i + 7.0 * j + 0.9 * q) + (i == j ? 0.5 * q : 0.0));
          if (q == 1) v = i == j ? Real(i) : Real(0);
          if (q == 2) v = Real(0);
          if (q == 3) v = i == j ? Real(1) : Real(0.25);  // eigenvalues 1 + 0.25 (d - 1), 0.75 (d - 1 times)
          if (q == W - 1) v = std::numeric_limits<Real>::quiet_NaN();
          at(i, j, q) = at(j, i, q) = v;
        }
    const std::vector<Real> a0 = a;
    bool skip[W] = {};
    skip[W - 2] = skip[W - 1] = true;
    for (const int max_sweeps : {linalg::symmetric_eigenvalues_max_sweeps, 1}) {
      CAPTURE(max_sweeps);
      a = a0;
      int sweeps[W];
      linalg::packed_symmetric_eigenvalues_descending<W>(d, a.data(), e.data(), skip, sweeps, max_sweeps);
      int most = 0;
      for (int q = 0; q < W; ++q) {
        CAPTURE(q);
        if (skip[q]) {
          CHECK(sweeps[q] == 0);
          for (int i = 0; i < d; ++i)
            for (int j = 0; j < d; ++j) {
              const Real before = a0[std::size_t((i * d + j) * W + q)];
              CHECK((std::isnan(before) ? std::isnan(at(i, j, q)) : at(i, j, q) == before));
            }
          continue;
        }
        Kokkos::View<Real**, Kokkos::HostSpace> m("qgml::test::m", d, d);
        Kokkos::View<Real*, Kokkos::HostSpace> e_ref("qgml::test::e_ref", d);
        for (int i = 0; i < d; ++i)
          for (int j = 0; j < d; ++j) m(i, j) = a0[std::size_t((i * d + j) * W + q)];
        const int used = linalg::symmetric_eigenvalues_descending(m, e_ref, max_sweeps);
        CHECK(sweeps[q] == used);
        most = std::max(most, used);
        for (int i = 0; i < d; ++i)
          CHECK(std::abs(double(e[std::size_t(i * W + q)]) - double(e_ref(i))) <=
                8 * epsilon<Real>() * (1 + std::abs(double(e_ref(0)))));
        for (int i = 1; i < d; ++i) CHECK(e[std::size_t(i * W + q)] <= e[std::size_t((i - 1) * W + q)]);
      }
      if (d >= 3 && max_sweeps > 1) CHECK(most >= 2);        // the dense lanes needed more than one sweep
      if (d >= 3 && max_sweeps == 1) CHECK(sweeps[0] == 2);  // not converged in one: max_sweeps + 1
      if (d == 3 && max_sweeps > 1) {                        // the repeated eigenvalue, and the diagonal lane sorted
        CHECK(std::abs(double(e[3]) - 1.5) <= 8 * epsilon<Real>());
        CHECK(std::abs(double(e[W + 3]) - 0.75) <= 8 * epsilon<Real>());
        CHECK(e[1] == Real(2));
        CHECK(e[2 * W + 1] == Real(0));
      }
    }
  }
}
