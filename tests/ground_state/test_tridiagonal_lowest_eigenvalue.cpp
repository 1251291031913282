// E_0 of a symmetric tridiagonal alone (ground_state/tridiagonal_lowest_eigenvalue.hpp): against closed forms
// and against bisection on Sturm counts, lane by lane in packs where every lane holds another matrix.
#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>

#include <cmath>
#include <vector>

#include "qgml/ground_state/tridiagonal_lowest_eigenvalue.hpp"

#include "tridiagonal_fixtures.hpp"

using namespace qgml;

namespace {

using namespace qgml::test;

struct PackResult {
  std::vector<double> e0, emax_bound;
  int iterations = 0;
};

// Lane q of a pack of W holds matrices[q % size] rounded to Real.
template <int W, class Real>
PackResult run_pack(const std::vector<Tridiagonal>& matrices) {
  const int n = static_cast<int>(matrices.front().d.size());
  std::vector<Real> td(n * W), te(n * W, Real(0));
  for (int q = 0; q < W; ++q) {
    const Tridiagonal& t = matrices[q % matrices.size()];
    for (int i = 0; i < n; ++i) td[i * W + q] = Real(t.d[i]);
    for (int i = 0; i + 1 < n; ++i) te[i * W + q] = Real(t.e[i]);
  }
  Real e0[W], emax[W];
  PackResult r;
  r.iterations = linalg::packed_lowest_eigenvalue<W, Real>(n, td.data(), te.data(), e0, emax);
  for (int q = 0; q < W; ++q) {
    r.e0.push_back(double(e0[q]));
    r.emax_bound.push_back(double(emax[q]));
  }
  return r;
}

}  // namespace

TEMPLATE_TEST_CASE("lowest eigenvalue of a tridiagonal: closed form of the 1D Laplacian", "[linalg][lowest]", double,
                   float) {
  using Real = TestType;
  constexpr int W = pack_width<Real>();
  const double eps = double(std::numeric_limits<Real>::epsilon());
  for (int n : {1, 2, 3, 5, 8, 16, 33, 64}) {
    const PackResult r = run_pack<W, Real>({laplacian(n)});
    const double exact = 2.0 - 2.0 * std::cos(M_PI / (n + 1));
    for (int q = 0; q < W; ++q) {
      INFO("n = " << n << ", lane " << q << ": " << r.e0[q] << " against " << exact);
      CHECK(std::fabs(r.e0[q] - exact) <= 16 * eps * 4.0);
      CHECK(r.emax_bound[q] >= 2.0 + 2.0 * std::cos(M_PI / (n + 1)) - 4 * eps);
    }
    // Cubic convergence from the Gershgorin bound: a handful of steps, not a bisection.
    CHECK(r.iterations <= 8);
  }
}

TEMPLATE_TEST_CASE("lowest eigenvalue of a tridiagonal: random matrices against bisection, lanes independent",
                   "[linalg][lowest]", double, float) {
  using Real = TestType;
  constexpr int W = pack_width<Real>();
  const double eps = double(std::numeric_limits<Real>::epsilon());
  int most = 0;
  for (int n : {2, 3, 4, 7, 8, 16, 31, 64}) {
    const double far = sizeof(Real) == sizeof(double) ? 1e100 : 1e12;  // e^2 stays finite
    for (double scale : {1.0, 1 / far, far}) {
      std::vector<Tridiagonal> ms;
      for (int q = 0; q < W; ++q) ms.push_back(random_tridiagonal(n, 7919u * n + q, scale * (1 + q)));
      const PackResult r = run_pack<W, Real>(ms);
      most = r.iterations > most ? r.iterations : most;
      for (int q = 0; q < W; ++q) {
        const double ref = bisection_e0<Real>(ms[q]);
        const double norm = double(spectral_norm_bound<Real>(ms[q]));
        INFO("n = " << n << ", scale " << scale << ", lane " << q << ": " << r.e0[q] << " against " << ref);
        CHECK(std::fabs(r.e0[q] - ref) <= 8 * eps * norm);
        CHECK(r.emax_bound[q] >= bisection_emax<Real>(ms[q]) - 4 * eps * norm);
      }
    }
  }
  CHECK(most <= 12);
}

TEMPLATE_TEST_CASE("lowest eigenvalue of a tridiagonal: degenerate and decoupled spectra", "[linalg][lowest]", double,
                   float) {
  using Real = TestType;
  constexpr int W = pack_width<Real>();
  const double eps = double(std::numeric_limits<Real>::epsilon());
  const int n = 8;
  std::vector<Tridiagonal> ms;
  // Diagonal (Gershgorin bound = E_0 exactly), eight-fold degenerate.
  ms.push_back({std::vector<double>(n, 1.5), std::vector<double>(n - 1, 0.0)});
  // Two decoupled copies of a 4 x 4 Laplacian: a double E_0 (Laguerre's linear case).
  Tridiagonal twice = laplacian(n);
  twice.e[3] = 0.0;
  ms.push_back(twice);
  // The zero matrix (the padding lanes of a batch).
  ms.push_back({std::vector<double>(n, 0.0), std::vector<double>(n - 1, 0.0)});
  // A nearly double E_0: the coupling of the two copies at 1e-9.
  Tridiagonal nearly = twice;
  nearly.e[3] = 1e-9;
  ms.push_back(nearly);
  // Graded diagonal over 12 orders with small couplings.
  Tridiagonal graded;
  for (int i = 0; i < n; ++i) graded.d.push_back(std::pow(10.0, -1.5 * i));
  for (int i = 0; i + 1 < n; ++i) graded.e.push_back(1e-3 * std::pow(10.0, -1.5 * i));
  ms.push_back(graded);
  // A 1 x 1 block split off at the top, the smallest eigenvalue inside the lower block.
  Tridiagonal split = random_tridiagonal(n, 11);
  split.e[0] = 0.0;
  ms.push_back(split);
  const PackResult r = run_pack<W, Real>(ms);
  for (int q = 0; q < W; ++q) {
    const Tridiagonal& t = ms[q % ms.size()];
    const double ref = bisection_e0<Real>(t);
    const double norm = double(spectral_norm_bound<Real>(t));
    INFO("matrix " << q % ms.size() << ": " << r.e0[q] << " against " << ref);
    CHECK(std::fabs(r.e0[q] - ref) <= 8 * eps * norm + 16 * double(min_normal<Real>()));
  }
  CHECK(r.e0[0] == Real(1.5));
  CHECK(std::fabs(r.e0[2]) <= 16 * double(min_normal<Real>()));
  CHECK(r.iterations < linalg::lowest_eigenvalue_max_iterations<Real>);
}

TEMPLATE_TEST_CASE("lowest eigenvalue of a tridiagonal: T and -T in one loop give the bits of two separate runs",
                   "[linalg][lowest]", double, float) {
  using Real = TestType;
  constexpr int W = pack_width<Real>();
  for (int n : {1, 2, 5, 8, 33}) {
    std::vector<Real> td(n * W), te(n * W, Real(0)), neg(n * W);
    for (int q = 0; q < W; ++q) {
      // Lanes of different scales and one zero matrix, so that the lanes and the two problems converge
      // after different numbers of iterations.
      const Tridiagonal t = q == 3 ? Tridiagonal{std::vector<double>(n, 0.0), std::vector<double>(n - 1, 0.0)}
                                   : random_tridiagonal(n, 104729u * n + q, std::pow(10.0, q % 4 - 1));
      for (int i = 0; i < n; ++i) td[i * W + q] = Real(t.d[i]);
      for (int i = 0; i + 1 < n; ++i) te[i * W + q] = Real(t.e[i]);
    }
    for (int i = 0; i < n * W; ++i) neg[i] = -td[i];
    Real low[W], high[W], low_bound[W], high_bound[W], pair[2 * W], pair_bound[2 * W];
    const int it0 = linalg::packed_lowest_eigenvalue<W>(n, td.data(), te.data(), low, low_bound);
    const int it1 = linalg::packed_lowest_eigenvalue<W>(n, neg.data(), te.data(), high, high_bound);
    const Real sign[2] = {Real(1), Real(-1)};
    const int it = linalg::packed_lowest_eigenvalues<W, 2>(n, td.data(), te.data(), sign, pair, pair_bound);
    CHECK(it == (it0 > it1 ? it0 : it1));
    for (int q = 0; q < W; ++q) {
      INFO("n = " << n << ", lane " << q);
      CHECK(pair[q] == low[q]);
      CHECK(pair[W + q] == high[q]);
      CHECK(pair_bound[q] == low_bound[q]);
      CHECK(pair_bound[W + q] == high_bound[q]);
    }
  }
}
