// E_0, E_max and the degeneracy of E_0 of a symmetric tridiagonal without the rest of its spectrum
// (linalg::packed_ground_state_eigenvalues, the fused training kernel's ground-state path): against
// bisection on Sturm counts, and the degeneracy decision E_1 - E_0 <= tol max(E_max - E_0, 1)
// (ground_state/degeneracy.hpp) on both sides of its threshold, lane by lane in packs of different matrices.
#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "qgml/ground_state/degeneracy.hpp"
#include "qgml/ground_state/tridiagonal_ground_state.hpp"

#include "tridiagonal_fixtures.hpp"

using namespace qgml;
using namespace qgml::test;

namespace {

struct Result {
  std::vector<double> e0, emax, degenerate;
};

// Lane q of a pack of W holds matrices[q % size] rounded to Real.
template <int W, class Real>
Result run_pack(const std::vector<Tridiagonal>& matrices, const Real tol) {
  const int n = static_cast<int>(matrices.front().d.size());
  std::vector<Real> td(n * W), te(n * W, Real(0));
  for (int q = 0; q < W; ++q) {
    const Tridiagonal& t = matrices[q % matrices.size()];
    for (int i = 0; i < n; ++i) td[i * W + q] = Real(t.d[i]);
    for (int i = 0; i + 1 < n; ++i) te[i * W + q] = Real(t.e[i]);
  }
  const std::vector<Real> td_in = td, te_in = te;
  Real e0[W], emax[W], degenerate[W];
  linalg::packed_ground_state_eigenvalues<W, Real>(n, td.data(), te.data(), tol, e0, emax, degenerate);
  CHECK(td == td_in);  // T is read only (the resolvent solve uses it afterwards)
  CHECK(te == te_in);
  Result r;
  for (int q = 0; q < W; ++q) {
    r.e0.push_back(double(e0[q]));
    r.emax.push_back(double(emax[q]));
    r.degenerate.push_back(double(degenerate[q]));
  }
  return r;
}

// The decision of ground_state/degeneracy.hpp on the bisection eigenvalues of t.
template <class Real>
bool reference_degenerate(const Tridiagonal& t, const Real tol) {
  const int n = static_cast<int>(t.d.size());
  if (n < 2) return false;
  return ground_state_degenerate<double>(n, bisection_eigenvalue<Real>(t, 0), bisection_eigenvalue<Real>(t, 1),
                                         bisection_emax<Real>(t), double(tol));
}

// A matrix whose two lowest eigenvalues are a and a + gap exactly (a decoupled 2 x 2 block
// [[a + gap / 2, gap / 2], [gap / 2, a + gap / 2]] at the top) and the rest of a Laplacian shifted above them.
Tridiagonal with_gap(int n, double a, double gap) {
  Tridiagonal t;
  t.d = {a + gap / 2, a + gap / 2};
  t.e = {gap / 2, 0.0};
  for (int i = 2; i < n; ++i) {
    t.d.push_back(a + 3.0);
    if (i + 1 < n) t.e.push_back(-1.0);
  }
  return t;
}

}  // namespace

TEMPLATE_TEST_CASE("ground-state eigenvalues of a tridiagonal: random matrices against bisection",
                   "[linalg][ground-state-eigenvalues]", double, float) {
  using Real = TestType;
  constexpr int W = pack_width<Real>();
  const double eps = double(std::numeric_limits<Real>::epsilon());
  const Real tol = default_degeneracy_tolerance<Real>();
  for (int n : {2, 3, 5, 8, 16, 31, 64}) {
    const double far = sizeof(Real) == sizeof(double) ? 1e100 : 1e12;
    for (double scale : {1.0, 1 / far, far}) {
      std::vector<Tridiagonal> ms;
      for (int q = 0; q < W; ++q) ms.push_back(random_tridiagonal(n, 104729u * n + q, scale * (1 + q)));
      const Result r = run_pack<W, Real>(ms, tol);
      for (int q = 0; q < W; ++q) {
        const double norm = double(spectral_norm_bound<Real>(ms[q]));
        INFO("n = " << n << ", scale " << scale << ", lane " << q);
        CHECK(std::fabs(r.e0[q] - bisection_e0<Real>(ms[q])) <= 8 * eps * norm);
        CHECK(std::fabs(r.emax[q] - bisection_emax<Real>(ms[q])) <= 8 * eps * norm);
        CHECK(r.degenerate[q] == (reference_degenerate<Real>(ms[q], tol) ? 1.0 : 0.0));
      }
    }
  }
}

TEMPLATE_TEST_CASE("ground-state eigenvalues of a tridiagonal: the degeneracy threshold",
                   "[linalg][ground-state-eigenvalues]", double, float) {
  using Real = TestType;
  constexpr int W = pack_width<Real>();
  const double eps = double(std::numeric_limits<Real>::epsilon());
  const Real tol = default_degeneracy_tolerance<Real>();
  for (int n : {3, 8, 32}) {
    // Spectral scale: E_max - E_0 = 3 + (the top of the shifted Laplacian) > 1, so tol scale is ~5 tol.
    std::vector<Tridiagonal> ms;
    std::vector<double> expected;
    for (double a : {0.0, -2.5, 40.0})
      for (double factor : {0.0, 0.25, 0.5, 2.0, 4.0, 1e3}) {
        Tridiagonal t = with_gap(n, a, 0.0);
        const double scale = spectral_scale(0.0, bisection_emax<Real>(t) - a);
        t = with_gap(n, a, factor * double(tol) * scale);
        ms.push_back(t);
        expected.push_back(factor <= 1.0 ? 1.0 : 0.0);
      }
    // Exact double E_0 from two decoupled equal blocks, and a diagonal with a triple E_0.
    Tridiagonal twice = laplacian(n - n % 2);
    twice.e[(n - n % 2) / 2 - 1] = 0.0;
    if (n % 2) {
      twice.d.push_back(9.0);
      twice.e.push_back(0.0);
    }
    ms.push_back(twice);
    expected.push_back(1.0);
    Tridiagonal diagonal{std::vector<double>(n, 2.0), std::vector<double>(n - 1, 0.0)};
    diagonal.d[n - 1] = 5.0;
    ms.push_back(diagonal);
    expected.push_back(1.0);
    for (std::size_t first = 0; first < ms.size(); first += W) {
      const std::vector<Tridiagonal> pack(ms.begin() + first, ms.begin() + std::min(ms.size(), first + W));
      const Result r = run_pack<W, Real>(pack, tol);
      for (std::size_t q = 0; q < pack.size(); ++q) {
        const double norm = double(spectral_norm_bound<Real>(pack[q]));
        INFO("n = " << n << ", matrix " << first + q << ": E_0 " << r.e0[q] << ", E_max " << r.emax[q]);
        CHECK(r.degenerate[q] == expected[first + q]);
        CHECK(r.degenerate[q] == (reference_degenerate<Real>(pack[q], tol) ? 1.0 : 0.0));
        CHECK(std::fabs(r.e0[q] - bisection_e0<Real>(pack[q])) <= 8 * eps * norm);
        CHECK(std::fabs(r.emax[q] - bisection_emax<Real>(pack[q])) <= 8 * eps * norm);
      }
    }
  }
}

TEMPLATE_TEST_CASE("ground-state eigenvalues of a tridiagonal: one by one and the zero matrix",
                   "[linalg][ground-state-eigenvalues]", double, float) {
  using Real = TestType;
  constexpr int W = pack_width<Real>();
  const Real tol = default_degeneracy_tolerance<Real>();
  const Result one = run_pack<W, Real>({Tridiagonal{{-1.25}, {}}}, tol);
  for (int q = 0; q < W; ++q) {
    CHECK(one.e0[q] == -1.25);
    CHECK(one.emax[q] == -1.25);
    CHECK(one.degenerate[q] == 0.0);
  }
  // The zero matrix (the padding lanes of a batch and the lanes of a non-finite H): every eigenvalue 0.
  const Result zero = run_pack<W, Real>({Tridiagonal{std::vector<double>(6, 0.0), std::vector<double>(5, 0.0)}}, tol);
  for (int q = 0; q < W; ++q) {
    CHECK(std::fabs(zero.e0[q]) <= 16 * double(min_normal<Real>()));
    CHECK(std::fabs(zero.emax[q]) <= 16 * double(min_normal<Real>()));
    CHECK(zero.degenerate[q] == 1.0);
  }
}
